/* SPDX-License-Identifier: Apache-2.0 */
/*
 * text_util.h — the reader's string utilities ("strbuf"): bounded appending,
 * natural order, and the number formats every output shares.  Knows no
 * recorder, so the library's leaves (ncclcfg.c, nccljoin.c) use it without
 * depending on the model.
 */
#ifndef GDRTRACE_TOOLS_TEXT_UTIL_H
#define GDRTRACE_TOOLS_TEXT_UTIL_H

#include <stddef.h>
#include <stdint.h>

/*! gt_appendf() : printf-appends to the NUL-terminated text in buf (n
 *  bytes), cutting at the end of buf; a full buf is left as it is.  The
 *  reader's sentences (verdict evidence, NCCL settings, the log join) are
 *  built with it. */
void gt_appendf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*! gt_natcmp() : natural order of two strings: runs of digits compare by
 *  value, so "node2" < "node10"; strings equal by value ("n02", "n2") are
 *  ordered by their bytes, so the order is total.  strcmp's sign. */
int gt_natcmp(const char *a, const char *b);

/* Formatting shared by the commands. */
const char *gt_fmt_ns(uint64_t ns, char *buf, size_t n);   /* 850ns, 12.3us, 1.20ms, 3.40s */
const char *gt_fmt_bytes(uint64_t b, char *buf, size_t n); /* 512 B, 1.5 KiB, ... */
const char *gt_fmt_ptr(int bits, char *buf, size_t n);     /* HOST|CUDA|DMABUF */

#endif
