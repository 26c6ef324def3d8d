/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abguard.h — the A/B's confounder guard: what differs between two runs
 * beyond the registration path (GDRTRACE_REG, GDRTRACE_ALLOW_PEERMEM).  Used
 * by `gdrtrace diff` (docs/diff.md, "The comparability guard").
 */
#ifndef GDRTRACE_TOOLS_ABGUARD_H
#define GDRTRACE_TOOLS_ABGUARD_H

#include "tools/lib/recfile.h"

/* The differences found, one line each. */
struct gt_abguard {
    char (*w)[512];
    int n, cap;
};

void gt_abguard_warn(struct gt_abguard *ws, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Everything but the registration path between recorders a and b (la, lb
 * name them in the lines): the node fingerprint, NCCL, plugin, ABI,
 * transport, world size, settings, NCCL's settings, other GDRTRACE_*
 * variables, devices. */
void gt_abguard_recs(struct gt_abguard *ws, const struct gt_recfile *a, const struct gt_recfile *b,
                     const char *la, const char *lb);
/* NCCL's GPU Direct decisions and GDRDMA channels of two runs' logs
 * (logs[s][0..nlog[s])); 0, or GT_EXIT_INPUT when a log could not be read. */
int gt_abguard_gdr(struct gt_abguard *ws, char **logs[2], const int nlog[2]);

#endif
