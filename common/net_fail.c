/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net_fail.c — the calling thread's description of the last failed gt_net
 * call (the failure rule of common/gt_net.h).
 *
 * Invariants:
 *  1. gt_net_fail_seq counts this thread's gt_net_fail() calls; it is the
 *     only part read on the data path (gt_net_fail_mark), so it lives in
 *     initial-exec TLS (one load, no call).  The record itself is read only
 *     after a failure.
 *  2. A record is handed out at most once (gt_net_failure_since clears it),
 *     and only if it was written after the caller's mark: a description left
 *     by an earlier call can never be attributed to a later one.
 */
#include "common/gt_net.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__thread uint32_t gt_net_fail_seq __attribute__((tls_model("initial-exec")));
static __thread struct gt_net_failure rec;
static __thread int rec_set;

gt_result gt_net_fail(gt_result res, int reason, int err, const char *fmt, ...)
{
    rec.reason = reason;
    rec.err = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rec.text, sizeof(rec.text), fmt, ap);
    va_end(ap);
    rec_set = 1;
    gt_net_fail_seq++;
    return res;
}

int gt_net_failure_since(uint32_t mark, struct gt_net_failure *out)
{
    int mine = rec_set && gt_net_fail_seq != mark;
    if (mine) {
        *out = rec;
    } else {
        out->reason = GT_REASON_TRANSPORT_ERROR;
        out->err = 0;
        snprintf(out->text, sizeof(out->text), "the transport gave no reason");
    }
    rec_set = 0;
    return mine;
}
