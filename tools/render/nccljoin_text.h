/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccljoin_text.h — the text of NCCL's log joined to the recorders
 * (tools/lib/nccljoin.h): what verdict and summary print of the join.
 */
#ifndef GDRTRACE_TOOLS_RENDER_NCCLJOIN_TEXT_H
#define GDRTRACE_TOOLS_RENDER_NCCLJOIN_TEXT_H

#include <stdio.h>

#include "tools/lib/nccljoin.h"

/*! gt_nccl_join_print_next() : ind, then "next: ..." for job j: NCCL's
 *  log's step when nj (NULL: no log joined) changed the outcome, else the
 *  recorders' (gt_report_next of paths). */
void gt_nccl_join_print_next(FILE *f, const char *ind, const struct gt_nccl_join *nj,
                             const struct gt_job *j, char **paths, int npaths);

/* verdict's lines: `comm LABEL VERDICT why` for every communicator, and
 * `nccl HOST:PID VERDICT why` for every process line; the counts line. */
void gt_nccl_join_print_comms(FILE *f, const struct gt_nccl_join *nj);
void gt_nccl_join_print_procs(FILE *f, const struct gt_nccl_join *nj, int emulated);
void gt_nccl_join_print_counts(FILE *f, const struct gt_nccl_join *nj);
/* summary's section "== NCCL's log": per process what NCCL loaded and its
 * GPU Direct decisions, per communicator its ranks, hosts and channels. */
void gt_nccl_join_print_section(FILE *f, const struct gt_nccl_join *nj);

#endif /* GDRTRACE_TOOLS_RENDER_NCCLJOIN_TEXT_H */
