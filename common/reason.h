/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reason.h — the one table of short names for enum gt_reason (common/gt_net.h),
 * shared by the plugin's error messages and the reader's reports, so a reason
 * reads the same in NCCL's log, in `gdrtrace summary` and in Prometheus labels.
 */
#ifndef GDRTRACE_REASON_H
#define GDRTRACE_REASON_H

/* "dmabuf-unsupported", ...; NULL for a value this build does not know
 * (a newer writer's).  Never fails otherwise; thread-safe. */
const char *gt_reason_token(int reason);

#endif
