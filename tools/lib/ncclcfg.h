/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ncclcfg.h — what the readers make of NCCL's own settings recorded in a
 * recorder's settings section (common/nccl_cfg.h: NCCL_NET_GDR_LEVEL,
 * NCCL_DMABUF_ENABLE, NCCL_NET …): the sentences a verdict adds to say which
 * setting explains it and how one is named (summary's "nccl" lines are
 * tools/render/summary_proc.c's).
 *
 * Every function only reads the recorders it is given (an archive gives the
 * same text as the live files).  A recorder of a plugin that did not record
 * NCCL's settings yet has none of these keys: the functions then say nothing
 * and the caller keeps its general sentence.
 */
#ifndef GDRTRACE_TOOLS_NCCLCFG_H
#define GDRTRACE_TOOLS_NCCLCFG_H

#include <stddef.h>

#include "tools/lib/recfile.h"

/*! gt_ncclcfg_get() : the entry of NCCL setting `name` in r, or NULL. */
const struct gtr_setting *gt_ncclcfg_get(const struct gt_recfile *r, const char *name);

/*! gt_ncclcfg_recorded() : 1 when r records NCCL's settings at all. */
int gt_ncclcfg_recorded(const struct gt_recfile *r);

/*! gt_ncclcfg_is_set() : 1 when s says NCCL read a value (from the
 *  environment, a conf file, or, under an environment plugin, perhaps). */
int gt_ncclcfg_is_set(const struct gtr_setting *s);

/*! gt_ncclcfg_text() : "NCCL_NET_GDR_LEVEL=LOC (from environment)",
 *  "NCCL_DMABUF_ENABLE=0 (from /etc/nccl.conf)", "NCCL_NET_GDR_LEVEL unset
 *  (NCCL's default: PXB …)", "NCCL_NET_GDR_LEVEL=foo (from environment),
 *  which NCCL ignores (its default in force)". */
const char *gt_ncclcfg_text(const struct gtr_setting *s, char *buf, size_t n);

/*! gt_ncclcfg_why_host() : appends to why (a NUL-terminated text of n
 *  bytes) why NCCL registered no GPU memory though the plugin offered it:
 *  the setting that explains it, else NCCL's topology, and how to confirm
 *  from NCCL's own log.  Returns 0 (nothing appended) when no recorder of
 *  ctx records NCCL's settings. */
int gt_ncclcfg_why_host(char *why, size_t n, const struct gt_recfile *const *ctx, size_t nctx);

/*! gt_ncclcfg_why_cuda() : appends why NCCL asked regMr(NCCL_PTR_CUDA)
 *  rather than regMrDmaBuf (NCCL_DMABUF_ENABLE=0, else NCCL found DMA-BUF
 *  unusable).  Returns 0 when nothing was recorded to say it. */
int gt_ncclcfg_why_cuda(char *why, size_t n, const struct gt_recfile *const *ctx, size_t nctx);

/*! gt_ncclcfg_why_read() : appends, when NCCL_NET_GDR_READ=0 was in
 *  force, that NCCL kept its send buffers in host memory. */
void gt_ncclcfg_why_read(char *why, size_t n, const struct gt_recfile *const *ctx, size_t nctx);

#endif
