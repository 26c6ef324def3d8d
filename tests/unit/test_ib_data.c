/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ib_data.c — ib's data path against an in-process RC model
 * (fake_rc.h), counting work requests and completions per message as
 * NCCL's IB transport makes them (src/transport/net_ib/p2p.cc):
 *   - one WRITE_WITH_IMM per message carrying the size, one completion on
 *     each side, no other write; with 4 QPs each message on one QP, the QPs
 *     taken in turn; NCCL_IB_SPLIT_DATA_ON_QPS=1: on every QP;
 *   - adaptive routing: above NCCL_IB_AR_THRESHOLD the data by RDMA WRITE
 *     and a separate 0-byte WRITE_WITH_IMM;
 *   - a multi-receive: n writes and the sizes by a WRITE_WITH_IMM;
 *   - clear-to-send signaled once per FIFO turn, the send queue never
 *     over-full (the model refuses as hardware would);
 *   - a send larger than the posted receive is truncated, as NCCL's;
 *   - a send whose tag has no unused entry in the head clear-to-send slot
 *     gets no request and success (NCCL retries), the comm unharmed;
 *   - the flush QP exists after accept; a flush request is never NULL.
 * Connection setup runs over loopback TCP as in test_ib_conn.c.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/ib/ib_net.h"
#include "tests/unit/fake_rc.h"
#include "tests/unit/net_pair.h"

static const char *const vars[] = {"NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SPLIT_DATA_ON_QPS",
                                   "NCCL_IB_ADAPTIVE_ROUTING",   "NCCL_IB_AR_THRESHOLD",
                                   "NCCL_GDR_FLUSH_DISABLE",     NULL};

static int setup(void **state)
{
    (void)state;
    setenv("GDRTRACE_OOB_TIMEOUT_MS", "2000", 1);
    setenv("GDRTRACE_IB_OOB_IF", "lo", 1);
    for (int i = 0; vars[i]; i++)
        unsetenv(vars[i]);
    return 0;
}

/* One device, IB or RoCE, GPU memory advertised; the variables read as at
 * the devices' open. */
static void make_dev(int link_layer)
{
    frc_install();
    struct gt_ib_dev *d = &gt_ib_devs[0];
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "fake0");
    d->port = 1;
    d->link_layer = link_layer;
    d->lid = 5;
    d->mtu = IBV_MTU_4096;
    d->max_qp_wr = 4096;
    d->reg.probe.advertised = GT_PTR_HOST | GT_PTR_CUDA;
    static struct ibv_context ctx;
    ctx.async_fd = -1;
    d->ctx = &ctx;
    gt_ib_ndevs = 1;
    gt_ib_params_read(&gt_ib_params, 1);
    d->ar = gt_ib_params.ar == -2 ? link_layer == IBV_LINK_LAYER_INFINIBAND : gt_ib_params.ar;
}

static int teardown(void **state)
{
    (void)state;
    gt_ib_ndevs = 0;
    gt_ibv_reset();
    return 0;
}

/* A memory handle as plugin/reg makes it, over the fake MR. */
struct mem {
    struct gt_mr mh;
    struct ibv_mr mr;
    char *buf;
};
static void mem_init(struct mem *m, size_t len, int gpu)
{
    m->buf = calloc(1, len);
    m->mr.lkey = m->mr.rkey = 9;
    m->mh.mr = &m->mr;
    m->mh.base = (uintptr_t)m->buf;
    m->mh.end = (uintptr_t)m->buf + len;
    m->mh.gpu = gpu;
}

/* Drives `count` messages of `size` bytes (receives of `rsize`, `nrecv` per
 * irecv, each matched by a send of the same tag), at most `depth` in
 * flight, checking the bytes and the sizes both sides report. */
static void traffic(void *sc, void *rc, int count, size_t size, size_t rsize, int nrecv, int depth)
{
    struct mem s, r;
    mem_init(&s, size ? size : 1, 0);
    mem_init(&r, (rsize ? rsize : 1) * (size_t)nrecv * 32, 0);
    for (size_t i = 0; i < size; i++)
        s.buf[i] = (char)(i * 7 + 1);
    void *rreq[32] = {0}, *sreq[32][8] = {{0}};
    int rposted = 0, sposted = 0, rdone = 0, sdone = 0;
    double t0 = now_s();
    while (rdone < count || sdone < count) {
        assert_true(now_s() - t0 < 10);
        while (rposted < count && rposted - rdone < depth) {
            int k = rposted % 32;
            void *d[8];
            size_t sz[8];
            int tags[8];
            void *mh[8];
            for (int i = 0; i < nrecv; i++) {
                d[i] = r.buf + ((size_t)k * (size_t)nrecv + (size_t)i) * rsize;
                sz[i] = rsize;
                tags[i] = i;
                mh[i] = &r.mh;
            }
            assert_int_equal(gt_ib_ops.irecv(rc, nrecv, d, sz, tags, mh, NULL, &rreq[k]), GT_OK);
            if (!rreq[k])
                break;
            rposted++;
        }
        while (sposted < rposted && sposted - sdone < depth) {
            int k = sposted % 32, got = 0;
            for (int i = 0; i < nrecv; i++) {
                assert_int_equal(gt_ib_ops.isend(sc, s.buf, size, i, &s.mh, NULL, &sreq[k][i]),
                                 GT_OK);
                got += sreq[k][i] != NULL;
            }
            if (got < nrecv) {
                assert_int_equal(got, 0); /* all or nothing in this test */
                break;
            }
            sposted++;
        }
        while (sdone < sposted) {
            int k = sdone % 32, all = 1;
            for (int i = 0; i < nrecv; i++) {
                if (!sreq[k][i])
                    continue;
                int done = 0, sizes[1] = {-1};
                assert_int_equal(gt_ib_ops.test(sreq[k][i], &done, sizes), GT_OK);
                if (done) {
                    assert_int_equal(sizes[0], (int)(size < rsize ? size : rsize));
                    sreq[k][i] = NULL;
                } else
                    all = 0;
            }
            if (!all)
                break;
            sdone++;
        }
        while (rdone < rposted) {
            int k = rdone % 32, done = 0, sizes[8];
            assert_int_equal(gt_ib_ops.test(rreq[k], &done, sizes), GT_OK);
            if (!done)
                break;
            size_t want = size < rsize ? size : rsize;
            for (int i = 0; i < nrecv; i++) {
                assert_int_equal(sizes[i], (int)want);
                const char *got = r.buf + ((size_t)k * (size_t)nrecv + (size_t)i) * rsize;
                assert_memory_equal(got, s.buf, want);
            }
            rdone++;
        }
    }
    assert_int_equal(frc.no_recv, 0);
    assert_int_equal(frc.sq_full, 0);
    free(s.buf);
    free(r.buf);
}

/* Counts for `count` messages; exp_* per message. */
struct expect {
    long writes, writes_imm, zero_imm;
};
static void run_case(int link_layer, const char *qps, const char *split, const char *ar,
                     size_t size, int nrecv, struct expect e)
{
    enum { COUNT = 96 };
    setenv("NCCL_IB_QPS_PER_CONNECTION", qps, 1);
    if (split)
        setenv("NCCL_IB_SPLIT_DATA_ON_QPS", split, 1);
    else
        unsetenv("NCCL_IB_SPLIT_DATA_ON_QPS");
    if (ar)
        setenv("NCCL_IB_ADAPTIVE_ROUTING", ar, 1);
    else
        unsetenv("NCCL_IB_ADAPTIVE_ROUTING");
    make_dev(link_layer);
    void *sc, *rc;
    net_connect_pair(&gt_ib_ops, NULL, &sc, &rc);
    struct ib_comm *s = sc, *r = rc;
    frc_reset_counts();
    traffic(sc, rc, COUNT, size, size, nrecv, 32);
    int nq = atoi(qps);
    /* per message: the sender's data writes and its immediates, one send
     * completion per QP used and one receive completion per QP used; the
     * clear-to-send writes: one per message on the receiver's QP 0, of
     * which one per FIFO turn signaled */
    long used = split && atoi(split) ? nq : 1;
    long cts = COUNT;
    assert_int_equal(frc.writes, COUNT * e.writes + cts);
    assert_int_equal(frc.writes_imm, COUNT * e.writes_imm);
    assert_int_equal(frc.writes_imm_zero, COUNT * e.zero_imm);
    assert_int_equal(frc.recv_cqes, COUNT * used);
    assert_int_equal(frc.send_cqes, COUNT * used + COUNT / GT_IB_SLOTS);
    assert_int_equal(frc.signaled, COUNT * used + COUNT / GT_IB_SLOTS);
    /* where the immediates went: the sender's QPs, each in turn */
    for (int q = 0; q < nq; q++)
        assert_int_equal(frc.per_qp_imm[s->qps[q]->qp_num - 1], COUNT * e.writes_imm / nq);
    for (int q = 0; q < r->nqps; q++)
        assert_int_equal(frc.per_qp_imm[r->qps[q]->qp_num - 1], 0);
    gt_ib_ops.close_send(sc);
    gt_ib_ops.close_recv(rc);
    teardown(NULL);
}

static void one_qp(void **state)
{
    (void)state;
    /* RoCE (no adaptive routing by default): one WRITE_WITH_IMM per message */
    run_case(IBV_LINK_LAYER_ETHERNET, "1", NULL, NULL, 65536, 1, (struct expect){0, 1, 0});
    run_case(IBV_LINK_LAYER_ETHERNET, "1", NULL, NULL, 8, 1, (struct expect){0, 1, 0});
    run_case(IBV_LINK_LAYER_ETHERNET, "1", NULL, NULL, 0, 1, (struct expect){0, 1, 1});
    assert_int_equal(frc.last_imm, 0);
}

static void four_qps_round_robin(void **state)
{
    (void)state;
    run_case(IBV_LINK_LAYER_ETHERNET, "4", NULL, NULL, 65536, 1, (struct expect){0, 1, 0});
    run_case(IBV_LINK_LAYER_ETHERNET, "4", "0", NULL, 100, 1, (struct expect){0, 1, 0});
}

static void four_qps_split(void **state)
{
    (void)state;
    /* every QP gets its 128-byte-aligned share, each its own immediate */
    run_case(IBV_LINK_LAYER_ETHERNET, "4", "1", NULL, 65536, 1, (struct expect){0, 4, 0});
}

static void adaptive_routing(void **state)
{
    (void)state;
    /* IB: on by default; above 8192 bytes a separate 0-byte immediate */
    run_case(IBV_LINK_LAYER_INFINIBAND, "1", NULL, NULL, 65536, 1, (struct expect){1, 1, 1});
    run_case(IBV_LINK_LAYER_INFINIBAND, "1", NULL, NULL, 8192, 1, (struct expect){0, 1, 0});
    run_case(IBV_LINK_LAYER_INFINIBAND, "4", NULL, NULL, 65536, 1, (struct expect){1, 1, 1});
    run_case(IBV_LINK_LAYER_INFINIBAND, "4", "1", NULL, 65536, 1, (struct expect){4, 4, 4});
    /* the variable wins both ways */
    run_case(IBV_LINK_LAYER_INFINIBAND, "1", NULL, "0", 65536, 1, (struct expect){0, 1, 0});
    run_case(IBV_LINK_LAYER_ETHERNET, "1", NULL, "1", 65536, 1, (struct expect){1, 1, 1});
    setenv("NCCL_IB_AR_THRESHOLD", "100000", 1);
    run_case(IBV_LINK_LAYER_INFINIBAND, "1", NULL, NULL, 65536, 1, (struct expect){0, 1, 0});
    unsetenv("NCCL_IB_AR_THRESHOLD");
}

static void multi_recv(void **state)
{
    (void)state;
    /* n data writes, then the sizes by a WRITE_WITH_IMM */
    run_case(IBV_LINK_LAYER_ETHERNET, "1", NULL, NULL, 4096, 4, (struct expect){4, 1, 0});
    run_case(IBV_LINK_LAYER_ETHERNET, "4", NULL, NULL, 4096, 2, (struct expect){2, 1, 0});
}

/* NCCL truncates a send to the posted receive; the receiver is told the
 * truncated size (the old code failed the comm). */
static void truncates_to_posted(void **state)
{
    (void)state;
    make_dev(IBV_LINK_LAYER_ETHERNET);
    void *sc, *rc;
    net_connect_pair(&gt_ib_ops, NULL, &sc, &rc);
    traffic(sc, rc, 40, 1000, 300, 1, 8);
    assert_int_equal(frc.last_imm, htonl(300));
    gt_ib_ops.close_send(sc);
    gt_ib_ops.close_recv(rc);
    teardown(NULL);
}

/* Tests `req` until done (bounded); returns the sizes it reported. */
static void wait_done(void *req, int *sizes)
{
    double t0 = now_s();
    int done = 0;
    while (!done) {
        assert_true(now_s() - t0 < 5);
        assert_int_equal(gt_ib_ops.test(req, &done, sizes), GT_OK);
    }
}

/* A send whose tag matches no unused receive of the head clear-to-send
 * slot (a second message of one sender of a shared comm before the other
 * sender's, NCCL's PXN path) is "not yet": success and no request, as
 * NCCL's IB, and the comm goes on (the old code latched GT_INVALID_USAGE). */
static void tag_not_in_head_slot_is_retry(void **state)
{
    (void)state;
    make_dev(IBV_LINK_LAYER_ETHERNET);
    void *sc, *rc;
    net_connect_pair(&gt_ib_ops, NULL, &sc, &rc);
    struct mem s, r;
    mem_init(&s, 256, 0);
    mem_init(&r, 4096, 0);
    for (int i = 0; i < 256; i++)
        s.buf[i] = (char)(i + 1);
    void *d[2] = {r.buf, r.buf + 1024}, *mh[2] = {&r.mh, &r.mh};
    size_t sz[2] = {1024, 1024};
    int tags[2] = {11, 22};
    void *rreq = NULL, *rreq2 = NULL, *s11 = NULL, *s11b = (void *)1, *s22 = NULL;
    assert_int_equal(gt_ib_ops.irecv(rc, 2, d, sz, tags, mh, NULL, &rreq), GT_OK);
    assert_non_null(rreq);
    assert_int_equal(gt_ib_ops.isend(sc, s.buf, 100, 11, &s.mh, NULL, &s11), GT_OK);
    assert_non_null(s11);
    /* tag 11 again: its entry is taken, 22's is not 11's */
    assert_int_equal(gt_ib_ops.isend(sc, s.buf + 100, 50, 11, &s.mh, NULL, &s11b), GT_OK);
    assert_null(s11b);
    assert_int_equal(((struct ib_comm *)sc)->err, GT_OK);
    assert_int_equal(gt_ib_ops.isend(sc, s.buf, 7, 22, &s.mh, NULL, &s22), GT_OK);
    assert_non_null(s22);
    int rs[8] = {-1, -1}, ss[1] = {-1};
    wait_done(rreq, rs);
    assert_int_equal(rs[0], 100);
    assert_int_equal(rs[1], 7);
    wait_done(s11, ss);
    wait_done(s22, ss);
    /* the retried send matches the next receive of tag 11 */
    void *d2 = r.buf + 2048, *mh2 = &r.mh;
    size_t sz2 = 1024;
    int tag2 = 11;
    assert_int_equal(gt_ib_ops.irecv(rc, 1, &d2, &sz2, &tag2, &mh2, NULL, &rreq2), GT_OK);
    s11b = NULL;
    double t0 = now_s();
    while (!s11b) {
        assert_true(now_s() - t0 < 5);
        assert_int_equal(gt_ib_ops.isend(sc, s.buf + 100, 50, 11, &s.mh, NULL, &s11b), GT_OK);
    }
    wait_done(rreq2, rs);
    assert_int_equal(rs[0], 50);
    assert_memory_equal(r.buf + 2048, s.buf + 100, 50);
    assert_memory_equal(r.buf, s.buf, 100);
    assert_memory_equal(r.buf + 1024, s.buf, 7);
    wait_done(s11b, ss);
    gt_ib_ops.close_send(sc);
    gt_ib_ops.close_recv(rc);
    free(s.buf);
    free(r.buf);
    teardown(NULL);
}

/* The flush QP is made at accept (none later); a flush is never a NULL
 * request, however many NCCL leaves untested; past the limit, an error. */
static void flush_never_null(void **state)
{
    (void)state;
    make_dev(IBV_LINK_LAYER_ETHERNET);
    void *sc, *rc;
    net_connect_pair(&gt_ib_ops, NULL, &sc, &rc);
    struct ib_comm *r = rc;
    assert_non_null(r->flush_qp);
    int creates = frc.creates;
    struct mem g;
    mem_init(&g, 4096, 1);
    void *data = g.buf, *mh = &g.mh, *req[GT_IB_FLUSHES];
    int size = 100;
    for (int i = 0; i < GT_IB_FLUSHES; i++) {
        req[i] = NULL;
        assert_int_equal(gt_ib_ops.iflush(rc, 1, &data, &size, &mh, &req[i]), GT_OK);
        assert_non_null(req[i]);
    }
    assert_int_equal(frc.creates, creates);
    assert_int_equal(frc.reads, GT_IB_FLUSHES);
    /* test one, and its slot serves the next flush */
    int done = 0;
    assert_int_equal(gt_ib_ops.test(req[5], &done, NULL), GT_OK);
    assert_int_equal(done, 1);
    void *again = NULL;
    assert_int_equal(gt_ib_ops.iflush(rc, 1, &data, &size, &mh, &again), GT_OK);
    assert_ptr_equal(again, req[5]);
    /* all held: an error naming it, not NULL-as-done */
    void *more = NULL;
    assert_int_not_equal(gt_ib_ops.iflush(rc, 1, &data, &size, &mh, &more), GT_OK);
    assert_null(more);
    gt_ib_ops.close_send(sc);
    gt_ib_ops.close_recv(rc);
    free(g.buf);
    teardown(NULL);

    /* NCCL_GDR_FLUSH_DISABLE=1: no flush QP, flushes done at once */
    setenv("NCCL_GDR_FLUSH_DISABLE", "1", 1);
    make_dev(IBV_LINK_LAYER_ETHERNET);
    net_connect_pair(&gt_ib_ops, NULL, &sc, &rc);
    assert_null(((struct ib_comm *)rc)->flush_qp);
    mem_init(&g, 4096, 1);
    data = g.buf;
    void *one = NULL;
    assert_int_equal(gt_ib_ops.iflush(rc, 1, &data, &size, &mh, &one), GT_OK);
    assert_non_null(one);
    assert_int_equal(gt_ib_ops.test(one, &done, NULL), GT_OK);
    assert_int_equal(done, 1);
    assert_int_equal(frc.reads, 0);
    gt_ib_ops.close_send(sc);
    gt_ib_ops.close_recv(rc);
    free(g.buf);
    unsetenv("NCCL_GDR_FLUSH_DISABLE");
    teardown(NULL);
}

/* Drives test() on a pending receive until it fails; returns the seconds
 * it took (the bound is the idle check's 100 ms and some slack). */
static double fails_within(void *req, const char *want)
{
    double t0 = now_s();
    for (;;) {
        int done = 0;
        uint32_t mark = gt_net_fail_mark();
        gt_result r = gt_ib_ops.test(req, &done, NULL);
        assert_int_equal(done, 0);
        if (r != GT_OK) {
            struct gt_net_failure f;
            assert_int_equal(gt_net_failure_since(mark, &f), 1);
            if (!strstr(f.text, want))
                fail_msg("'%s' not in: %s", want, f.text);
            return now_s() - t0;
        }
        if (now_s() - t0 > 2)
            fail_msg("no failure within 2 s");
        usleep(1000);
    }
}

/* A fatal async event fails the comms it concerns within a bound, naming
 * the port and the event; the others go on.  No thread: the events are
 * read from the calls NCCL makes anyway (here test()). */
static void async_fatal_events(void **state)
{
    (void)state;
    make_dev(IBV_LINK_LAYER_INFINIBAND);
    void *sc1, *rc1, *sc2, *rc2;
    net_connect_pair(&gt_ib_ops, NULL, &sc1, &rc1);
    net_connect_pair(&gt_ib_ops, NULL, &sc2, &rc2);
    struct mem r;
    mem_init(&r, 4096, 0);
    void *d = r.buf, *mh = &r.mh, *req1 = NULL, *req2 = NULL;
    size_t sz = 64;
    int tag = 0;
    assert_int_equal(gt_ib_ops.irecv(rc1, 1, &d, &sz, &tag, &mh, NULL, &req1), GT_OK);
    assert_int_equal(gt_ib_ops.irecv(rc2, 1, &d, &sz, &tag, &mh, NULL, &req2), GT_OK);
    /* a QP of the second pair's receiver dies: only that comm fails */
    struct ib_comm *c2 = rc2;
    frc.ev[frc.nev].event_type = IBV_EVENT_QP_FATAL;
    frc.ev[frc.nev++].element.qp = c2->qps[0];
    assert_true(fails_within(req2, "fake0:1: async fatal event on QP") < 1.0);
    int done = 0;
    assert_int_equal(gt_ib_ops.test(req1, &done, NULL), GT_OK);
    assert_int_equal(frc.acked, 1);
    /* a CQ error: the comm of that CQ fails */
    void *sc3, *rc3, *req3 = NULL;
    net_connect_pair(&gt_ib_ops, NULL, &sc3, &rc3);
    assert_int_equal(gt_ib_ops.irecv(rc3, 1, &d, &sz, &tag, &mh, NULL, &req3), GT_OK);
    frc.ev[frc.nev].event_type = IBV_EVENT_CQ_ERR;
    frc.ev[frc.nev++].element.cq = ((struct ib_comm *)rc3)->cq;
    assert_true(fails_within(req3, "fake0:1: async fatal event on its CQ: CQ error") < 1.0);
    assert_int_equal(gt_ib_ops.test(req1, &done, NULL), GT_OK);
    gt_ib_ops.close_send(sc3);
    gt_ib_ops.close_recv(rc3);
    /* a port-level event NCCL calls non-fatal: warned, nothing fails */
    frc.ev[frc.nev].event_type = IBV_EVENT_PORT_ERR;
    frc.ev[frc.nev++].element.port_num = 1;
    usleep(120000);
    assert_int_equal(gt_ib_ops.test(req1, &done, NULL), GT_OK);
    assert_int_equal(frc.acked, 3);
    /* the device dies: every comm on it fails, naming the port */
    frc.ev[frc.nev++].event_type = IBV_EVENT_DEVICE_FATAL;
    assert_true(fails_within(req1, "fake0:1: async fatal event: local catastrophic error") < 1.0);
    void *sreq = NULL;
    struct mem s;
    mem_init(&s, 64, 0);
    gt_result res = GT_OK;
    double t0 = now_s();
    while (res == GT_OK && now_s() - t0 < 2) {
        res = gt_ib_ops.isend(sc1, s.buf, 64, 0, &s.mh, NULL, &sreq);
        usleep(1000);
    }
    assert_int_not_equal(res, GT_OK);
    gt_ib_ops.close_send(sc1);
    gt_ib_ops.close_recv(rc1);
    gt_ib_ops.close_send(sc2);
    gt_ib_ops.close_recv(rc2);
    free(r.buf);
    free(s.buf);
    teardown(NULL);
}

/* The address vector as NCCL's RTR makes it (connect.cc ncclIbQpRtr). */
static void address_vector_as_nccl(void **state)
{
    (void)state;
    struct gt_ib_dev d;
    memset(&d, 0, sizeof(d));
    snprintf(d.name, sizeof(d.name), "fake0");
    d.port = 1;
    d.gid_index = 3;
    uint8_t mine[16] = {0xfe, 0x80, 0, 0, 0, 0, 0x12, 0x34, 1, 2, 3, 4, 5, 6, 7, 8};
    memcpy(d.gid.raw, mine, 16);
    uint8_t peer[16];
    memcpy(peer, mine, 16);
    peer[15] = 9;
    struct ibv_ah_attr ah;
    /* RoCE: global, with the traffic class */
    d.link_layer = IBV_LINK_LAYER_ETHERNET;
    gt_ib_fill_ah(&d, peer, 0, 3, 106, &ah);
    assert_int_equal(ah.is_global, 1);
    assert_int_equal(ah.grh.traffic_class, 106);
    assert_int_equal(ah.grh.sgid_index, 3);
    assert_int_equal(ah.grh.hop_limit, 255);
    assert_int_equal(ah.sl, 3);
    assert_memory_equal(ah.grh.dgid.raw, peer, 16);
    /* IB, same subnet: the LID alone */
    d.link_layer = IBV_LINK_LAYER_INFINIBAND;
    gt_ib_fill_ah(&d, peer, 42, 0, 106, &ah);
    assert_int_equal(ah.is_global, 0);
    assert_int_equal(ah.dlid, 42);
    /* IB, the port requires a GRH: global to the LID, no traffic class */
    d.port_flags = IBV_QPF_GRH_REQUIRED;
    gt_ib_fill_ah(&d, peer, 42, 0, 106, &ah);
    assert_int_equal(ah.is_global, 1);
    assert_int_equal(ah.dlid, 42);
    assert_int_equal(ah.grh.traffic_class, 0);
    d.port_flags = 0;
    /* IB, another subnet: global, to the peer's FLID (GID bytes 4-5) */
    peer[7] = 0x35;
    peer[4] = 0x01, peer[5] = 0x02;
    gt_ib_fill_ah(&d, peer, 42, 0, 0, &ah);
    assert_int_equal(ah.is_global, 1);
    assert_int_equal(ah.dlid, 0x0102);
    /* ... whose FLID is 0: its LID, as NCCL (WARNed) */
    peer[4] = peer[5] = 0;
    gt_ib_fill_ah(&d, peer, 42, 0, 0, &ah);
    assert_int_equal(ah.is_global, 1);
    assert_int_equal(ah.dlid, 42);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(one_qp, setup),
        cmocka_unit_test_setup(four_qps_round_robin, setup),
        cmocka_unit_test_setup(four_qps_split, setup),
        cmocka_unit_test_setup(adaptive_routing, setup),
        cmocka_unit_test_setup(multi_recv, setup),
        cmocka_unit_test_setup(truncates_to_posted, setup),
        cmocka_unit_test_setup(tag_not_in_head_slot_is_retry, setup),
        cmocka_unit_test_setup(flush_never_null, setup),
        cmocka_unit_test_setup(async_fatal_events, setup),
        cmocka_unit_test(address_vector_as_nccl),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
