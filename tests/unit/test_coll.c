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
 *  - GDRTRACE_COLL=off: no context, an empty mask;
 *  - a late child (its operation parked GT_COLL_INFLIGHT operations ago,
 *    its slot since reused) is counted in stale_child and never attached
 *    to the slot's new occupant, which keeps its own duration;
 *  - P2p operations of a group (a kernel plan), their children from another
 *    thread: each recorded once, with the group (also under TSan);
 *  - parked-slot reuse racing late children from another thread: every
 *    operation ends timed, stale or refused (inflight_full), none lost, no
 *    slot stuck (also under TSan).
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

static struct gtr_coll_cell *cell_at(struct gtr_coll_comm *c, unsigned log2)
{
    for (unsigned k = 0; k < GTR_COLL_CELLS; k++)
        if (c->cells[k].in_use == 1 && c->cells[k].func == GTR_COLL_FUNC_ALLREDUCE &&
            c->cells[k].size_log2 == log2)
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

/* Groups of a Send and a Recv, host on this thread, children on another. */
#define N_GROUPS 20000
static void *g_gq[QN][2];
static unsigned g_ghead, g_gtail;

static void *group_children(void *arg)
{
    void *ctx = arg;
    struct gt_coll_desc ch = {.kind = GT_COLL_EV_PROXYOP, .pid = (int)getpid()};
    for (int n = 0; n < N_GROUPS; n++) {
        while (__atomic_load_n(&g_ghead, __ATOMIC_ACQUIRE) == g_gtail)
            ;
        ch.parent = g_gq[g_gtail % QN][0];
        void *a = gt_coll_start(ctx, &ch);
        ch.parent = g_gq[g_gtail % QN][1];
        void *b = gt_coll_start(ctx, &ch);
        gt_coll_stop(n & 1 ? a : b); /* either ends first */
        gt_coll_stop(n & 1 ? b : a);
        __atomic_store_n(&g_gtail, g_gtail + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void test_groups(void **state)
{
    (void)state;
    void *ctx = ctx_for(0x1008);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, group_children, ctx), 0);
    struct gt_coll_desc grp = {.kind = GT_COLL_EV_GROUP};
    struct gt_coll_desc p2p = op_desc;
    for (int n = 0; n < N_GROUPS; n++) {
        while (g_ghead - __atomic_load_n(&g_gtail, __ATOMIC_ACQUIRE) == QN)
            ;
        void *g = gt_coll_start(ctx, &grp);
        assert_non_null(g);
        p2p.group = g;
        p2p.func = GTR_COLL_FUNC_SEND;
        void *s = gt_coll_start(ctx, &p2p);
        p2p.func = GTR_COLL_FUNC_RECV;
        void *r = gt_coll_start(ctx, &p2p);
        assert_non_null(s);
        assert_non_null(r);
        g_gq[g_ghead % QN][0] = s;
        g_gq[g_ghead % QN][1] = r;
        if (n & 1) { /* the host's stops before or after the children start */
            gt_coll_stop(s);
            gt_coll_stop(r);
            gt_coll_stop(g);
        }
        __atomic_store_n(&g_ghead, g_ghead + 1, __ATOMIC_RELEASE);
        if (!(n & 1)) {
            gt_coll_stop(s);
            gt_coll_stop(r);
            gt_coll_stop(g);
        }
    }
    pthread_join(t, NULL);
    struct gtr_coll_comm *c = entry(0x1008);
    unsigned both = 0;
    for (unsigned k = 0; k < GTR_COLL_CELLS; k++) {
        struct gtr_coll_cell *x = &c->cells[k];
        if (x->in_use == 1 && (x->func == GTR_COLL_FUNC_SEND || x->func == GTR_COLL_FUNC_RECV)) {
            assert_int_equal(x->count, N_GROUPS);
            assert_int_equal(x->hist.count, N_GROUPS);
            both++;
        }
    }
    assert_int_equal(both, 2);
    assert_int_equal(c->inflight_full, 0);
    assert_int_equal(c->stale_child, 0);
    gt_coll_finalize(ctx);
}

/* The audit's driver: one 1 MiB AllReduce parked (host stop, no child yet),
 * GT_COLL_INFLIGHT 4-byte ones, the last of which takes its slot; then the
 * first one's child.  Before generations it attached to the 4-byte one. */
static void test_stale_child(void **state)
{
    (void)state;
    void *ctx = ctx_for(0x1006);
    struct gt_coll_desc big = op_desc, small = op_desc;
    big.count = 1 << 18; /* 1 MiB */
    small.count = 1;     /* 4 B */
    struct gt_coll_desc ch = {.kind = GT_COLL_EV_PROXYOP, .pid = (int)getpid()};
    void *first = gt_coll_start(ctx, &big);
    assert_non_null(first);
    gt_coll_stop(first); /* parked */
    void *last = NULL;
    for (int n = 0; n < GT_COLL_INFLIGHT; n++) {
        void *h = gt_coll_start(ctx, &small);
        assert_non_null(h);
        if (n == GT_COLL_INFLIGHT - 1) {
            last = h; /* in the first one's slot, still running */
            break;
        }
        ch.parent = h;
        void *a = gt_coll_start(ctx, &ch);
        assert_non_null(a);
        gt_coll_stop(h);
        gt_coll_stop(a);
    }
    struct gtr_coll_comm *c = entry(0x1006);
    /* the first one's late child: refused, counted */
    ch.parent = first;
    assert_null(gt_coll_start(ctx, &ch));
    assert_int_equal(c->stale_child, 1);
    /* a late child of one that completed: ignored, not stale */
    assert_int_equal(c->inflight_full, 0);
    /* the slot's own operation: its child, then its end */
    ch.parent = last;
    void *a = gt_coll_start(ctx, &ch);
    assert_non_null(a);
    gt_coll_stop(a);
    assert_int_equal(cell_at(c, 2)->hist.count, GT_COLL_INFLIGHT - 1); /* host hold left */
    gt_coll_stop(last);
    assert_int_equal(cell_at(c, 20)->count, 1);
    assert_int_equal(cell_at(c, 20)->hist.count, 0); /* not timed, never by another's child */
    assert_int_equal(cell_at(c, 2)->count, GT_COLL_INFLIGHT);
    assert_int_equal(cell_at(c, 2)->hist.count, GT_COLL_INFLIGHT);
    /* a stop sent twice, and a handle of a finalized context, do nothing */
    gt_coll_stop(last);
    assert_int_equal(cell_at(c, 2)->hist.count, GT_COLL_INFLIGHT);
    gt_coll_finalize(ctx);
    gt_coll_stop(last);
    gt_coll_stop(first);
}

/* Parked slots reused while late children of their old operations arrive
 * from another thread: each operation ends exactly one way. */
#define RACE_OPS 50000
static void *g_rq[RACE_OPS];
static unsigned g_rhead, g_rtail; /* produced; children sent */

static void *late_children(void *arg)
{
    void *ctx = arg;
    struct gt_coll_desc ch = {.kind = GT_COLL_EV_PROXYOP, .pid = (int)getpid()};
    for (unsigned n = 0; n < RACE_OPS; n++) {
        /* lag the producer by about one table: the slot is being reused */
        while (__atomic_load_n(&g_rhead, __ATOMIC_ACQUIRE) <
                   n + 1 + (n < RACE_OPS - 1100 ? 1000 : 0) &&
               __atomic_load_n(&g_rhead, __ATOMIC_ACQUIRE) < RACE_OPS)
            ;
        ch.parent = g_rq[n];
        void *a = ch.parent ? gt_coll_start(ctx, &ch) : NULL;
        gt_coll_stop(a);
        __atomic_store_n(&g_rtail, n + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void test_reuse_race(void **state)
{
    (void)state;
    void *ctx = ctx_for(0x1007);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, late_children, ctx), 0);
    uint64_t refused = 0;
    for (unsigned n = 0; n < RACE_OPS; n++) {
        /* at most a table and a few ahead: the reuse meets the late child */
        while (n > __atomic_load_n(&g_rtail, __ATOMIC_ACQUIRE) + GT_COLL_INFLIGHT + 8)
            ;
        void *h = gt_coll_start(ctx, &op_desc);
        refused += !h;
        gt_coll_stop(h); /* parked until its child, if it comes in time */
        g_rq[n] = h;
        __atomic_store_n(&g_rhead, n + 1, __ATOMIC_RELEASE);
    }
    pthread_join(t, NULL);
    struct gtr_coll_comm *c = entry(0x1007);
    struct gtr_coll_cell *x = cell(c);
    assert_int_equal(x->count, RACE_OPS);
    assert_int_equal(c->inflight_full, refused);
    /* timed (its child came while its slot was its own), stale (the slot
     * was reused first) or refused at start; a lost hold would leave a slot
     * stuck and the sum short */
    assert_int_equal(x->hist.count + c->stale_child + refused, RACE_OPS);
    assert_true(x->hist.count > 0);
    /* no slot stuck: a whole table of new operations, each timed */
    struct gt_coll_desc ch = {.kind = GT_COLL_EV_PROXYOP, .pid = (int)getpid()};
    uint64_t before = x->hist.count;
    for (int n = 0; n < 2 * GT_COLL_INFLIGHT; n++) {
        void *h = gt_coll_start(ctx, &op_desc);
        assert_non_null(h);
        ch.parent = h;
        void *a = gt_coll_start(ctx, &ch);
        assert_non_null(a);
        gt_coll_stop(h);
        gt_coll_stop(a);
    }
    assert_int_equal(x->hist.count, before + 2 * GT_COLL_INFLIGHT);
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
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_stale_child),
        cmocka_unit_test(test_reuse_race),
        cmocka_unit_test(test_off),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
