/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_coll.c — the collective recorder (shim/coll.c) on its own, as NCCL
 * drives it from two threads, and at its edges.  Checks:
 *  - an application thread starting and host-stopping operations while a
 *    "proxy thread" starts and stops their two children: every operation
 *    counted and timed, none lost (also under TSan: make tsan-check);
 *  - operations that never get a child: counted, not timed; their parked
 *    slots are reused when the table wraps (no inflight_full);
 *  - GT_COLL_INFLIGHT operations held by the host: the next one is counted,
 *    not timed (inflight_full 1), and NCCL gets a NULL handle;
 *  - a child of another process (PXN) is counted, never dereferenced; a
 *    child without a parent, and a stop of NULL, are ignored;
 *  - GDRTRACE_COLL=off: no context, an empty mask.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim/coll.h"
#include "shim/shim.h"
#include "shim/shim_internal.h"

static char g_dir[] = "/tmp/gt-test-coll.XXXXXX";

static const struct gt_coll_desc op_desc = {.kind = GT_COLL_EV_OP,
                                            .func = GTR_COLL_FUNC_ALLREDUCE,
                                            .algo = GTR_ALGO_RING,
                                            .proto = GTR_PROTO_SIMPLE,
                                            .count = 1024,
                                            .type_size = 4,
                                            .rank = 0};

static struct gtr_coll_comm *entry(uint64_t id)
{
    struct gt_recorder *r = gt_shim_recorder();
    for (uint32_t i = 0; r && i < r->ncolls; i++)
        if (__atomic_load_n(&r->colls[i].state, __ATOMIC_ACQUIRE) && r->colls[i].comm_id == id)
            return &r->colls[i];
    return NULL;
}

static struct gtr_coll_cell *cell(struct gtr_coll_comm *c)
{
    for (unsigned k = 0; k < GTR_COLL_CELLS; k++)
        if (c->cells[k].in_use == 1 && c->cells[k].func == GTR_COLL_FUNC_ALLREDUCE &&
            c->cells[k].size_log2 == 12)
            return &c->cells[k];
    return NULL;
}

static void *ctx_for(uint64_t id)
{
    int mask = -1;
    void *ctx = gt_coll_init(5, 1, id, "t", 1, 2, 0, NULL, &mask);
    assert_non_null(ctx);
    assert_int_equal(mask, 0xe);
    return ctx;
}

/* ---- two threads ---- */

#define N_OPS 20000
#define QN 256
static void *g_q[QN];
static unsigned g_head, g_tail; /* SPSC: head by the producer, tail by the consumer */

static void *proxy_thread(void *arg)
{
    void *ctx = arg;
    struct gt_coll_desc ch = {.kind = GT_COLL_EV_PROXYOP, .pid = (int)getpid()};
    for (int n = 0; n < N_OPS; n++) {
        while (__atomic_load_n(&g_head, __ATOMIC_ACQUIRE) == g_tail)
            ;
        ch.parent = g_q[g_tail % QN];
        void *a = gt_coll_start(ctx, &ch), *b = gt_coll_start(ctx, &ch);
        gt_coll_stop(a);
        gt_coll_stop(b);
        __atomic_store_n(&g_tail, g_tail + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void test_two_threads(void **state)
{
    (void)state;
    void *ctx = ctx_for(0x1001);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, proxy_thread, ctx), 0);
    for (int n = 0; n < N_OPS; n++) {
        while (g_head - __atomic_load_n(&g_tail, __ATOMIC_ACQUIRE) == QN)
            ;
        void *h = gt_coll_start(ctx, &op_desc);
        assert_non_null(h);
        g_q[g_head % QN] = h;
        /* the host stops the event before or after the children start */
        if (n & 1)
            gt_coll_stop(h);
        __atomic_store_n(&g_head, g_head + 1, __ATOMIC_RELEASE);
        if (!(n & 1))
            gt_coll_stop(h);
    }
    pthread_join(t, NULL);
    struct gtr_coll_comm *c = entry(0x1001);
    assert_non_null(c);
    struct gtr_coll_cell *x = cell(c);
    assert_non_null(x);
    assert_int_equal(x->count, N_OPS);
    assert_int_equal(x->bytes, (uint64_t)N_OPS * 4096);
    assert_int_equal(x->hist.count, N_OPS);
    assert_int_equal(x->algo_proto[GTR_ALGO_RING][GTR_PROTO_SIMPLE], N_OPS);
    assert_int_equal(c->inflight_full, 0);
    assert_true(c->busy_ns > 0);
    gt_coll_finalize(ctx);
    assert_int_equal(c->state, GTR_COMM_FINALIZED);
}

static void test_parked_and_full(void **state)
{
    (void)state;
    void *ctx = ctx_for(0x1002);
    /* no child ever: parked slots reused past the table's size */
    for (int n = 0; n < GT_COLL_INFLIGHT + 5; n++) {
        void *h = gt_coll_start(ctx, &op_desc);
        assert_non_null(h);
        gt_coll_stop(h);
    }
    struct gtr_coll_comm *c = entry(0x1002);
    struct gtr_coll_cell *x = cell(c);
    assert_int_equal(x->count, GT_COLL_INFLIGHT + 5);
    assert_int_equal(x->hist.count, 0);
    assert_int_equal(c->inflight_full, 0);
    /* a parked operation still gets its children */
    void *h = gt_coll_start(ctx, &op_desc);
    gt_coll_stop(h);
    struct gt_coll_desc ch = {.kind = GT_COLL_EV_PROXYOP, .pid = (int)getpid(), .parent = h};
    void *a = gt_coll_start(ctx, &ch);
    assert_non_null(a);
    gt_coll_stop(a);
    assert_int_equal(x->hist.count, 1);
    gt_coll_finalize(ctx);

    /* every slot held by the host: the next one is not timed */
    ctx = ctx_for(0x1003);
    void **hold = calloc(GT_COLL_INFLIGHT, sizeof(*hold));
    for (int n = 0; n < GT_COLL_INFLIGHT; n++) {
        hold[n] = gt_coll_start(ctx, &op_desc);
        assert_non_null(hold[n]);
    }
    assert_null(gt_coll_start(ctx, &op_desc));
    c = entry(0x1003);
    assert_int_equal(c->inflight_full, 1);
    assert_int_equal(cell(c)->count, GT_COLL_INFLIGHT + 1);
    for (int n = 0; n < GT_COLL_INFLIGHT; n++)
        gt_coll_stop(hold[n]);
    free(hold);
    gt_coll_finalize(ctx);
}

static void test_foreign_and_null(void **state)
{
    (void)state;
    void *ctx = ctx_for(0x1004);
    void *h = gt_coll_start(ctx, &op_desc);
    /* PXN: the parent belongs to another process; a bogus address here
     * proves it is never read */
    struct gt_coll_desc ch = {
        .kind = GT_COLL_EV_PROXYOP, .pid = (int)getpid() + 1, .parent = (void *)0x40};
    assert_null(gt_coll_start(ctx, &ch));
    ch.pid = (int)getpid();
    ch.parent = NULL;
    assert_null(gt_coll_start(ctx, &ch));
    struct gt_coll_desc other = {.kind = GT_COLL_EV_OTHER};
    assert_null(gt_coll_start(ctx, &other));
    gt_coll_stop(NULL);
    gt_coll_stop(h);
    struct gtr_coll_comm *c = entry(0x1004);
    assert_int_equal(c->foreign, 1);
    assert_int_equal(cell(c)->hist.count, 0);
    gt_coll_finalize(ctx);
}

static void test_off(void **state)
{
    (void)state;
    setenv("GDRTRACE_COLL", "off", 1);
    int mask = -1;
    assert_null(gt_coll_init(5, 1, 0x1005, "t", 1, 2, 0, NULL, &mask));
    assert_int_equal(mask, 0);
    assert_int_equal(gt_shim_recorder()->coll_status->mode, GTR_COLL_MODE_OFF);
    unsetenv("GDRTRACE_COLL");
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(g_dir))
        return -1;
    setenv("GDRTRACE_DIR", g_dir, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    struct gt_recorder *r = gt_shim_recorder();
    if (r)
        unlink(r->path);
    rmdir(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_parked_and_full),
        cmocka_unit_test(test_foreign_and_null),
        cmocka_unit_test(test_off),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
