/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net_pair.h — for the cmocka tests of a gt_net_ops transport (sock, the
 * GPU-memory layer): a monotonic clock in seconds, and one connected
 * send/receive comm pair made as NCCL makes it (connect and accept
 * interleaved and retried, either may hand back NULL for a while), failing
 * the test after 10 s.  Include after <cmocka.h>.  Header-only, as
 * capture_log.h.
 */
#ifndef GDRTRACE_TESTS_NET_PAIR_H
#define GDRTRACE_TESTS_NET_PAIR_H

#include <time.h>

#include "common/gt_net.h"

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A pair on device 0 of `ops` in context `ctx`; the listen comm is closed. */
static inline void net_connect_pair(const struct gt_net_ops *ops, void *ctx, void **sc, void **rc)
{
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = NULL;
    assert_int_equal(ops->listen(ctx, 0, handle, &lc), GT_OK);
    *sc = *rc = NULL;
    double t0 = now_s();
    while (!*sc || !*rc) {
        if (!*sc)
            assert_int_equal(ops->connect(ctx, 0, handle, sc, NULL), GT_OK);
        if (!*rc)
            assert_int_equal(ops->accept(lc, rc, NULL), GT_OK);
        if (now_s() - t0 > 10)
            fail_msg("connect/accept did not complete in 10 s");
    }
    assert_int_equal(ops->close_listen(lc), GT_OK);
}

#endif
