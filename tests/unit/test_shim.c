/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_shim.c — the instrumenting shim over a fake inner transport.  Checks
 * that every call reaches the inner transport with the inner objects
 * (contexts, comms, mhandles, requests; NCCL's preset optional-completion
 * request value), that every result and out-value NCCL sees is the inner
 * one, and that the recorder file holds: the devices and probes, one comm
 * record per init with NCCL's commId, listen/connect/accept/close counts,
 * registrations in the right asked x method cell with bytes (from the
 * transport's report, and inferred when the transport gives none),
 * exported-fd and cache-hit counts, fallbacks and errors with reason and
 * errno, send/recv/flush completions with bytes and histograms, control
 * events always and per-message events only when enabled, a second thread's
 * data path in a sibling slot with the same commId, requests beyond the pool
 * still working, a forked child's calls not reaching the parent's file, and
 * CLOSED state after the last finalize.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/callout.h"
#include "common/hist.h"
#include "tools/lib/recfile.h"
#include "shim/shim.h"
#include "shim/shim_internal.h"

/* ---- the fake inner transport ----------------------------------------- */

static int fake_ctx, fake_listen, fake_send, fake_recv;
static int fake_mh[16];
struct fake_req {
    int polls_left;
    int size;
    int is_flush;
};
static struct fake_req fake_reqs[1024];
static int fake_nreq;
static int connect_polls;   /* connect returns NULL this many times */
static int fill_report = 1; /* 0: behave like a plugin that knows no report */
static struct gt_reg_report next_report;
static gt_result next_reg_result;
static void *last_isend_mh, *last_irecv_mh[4], *last_test_req, *last_irecv_preset;
static void *last_dereg_mh;
static int isend_null_next, iflush_null_next;
static int calls_init, calls_finalize, calls_close;

static gt_result f_init(void **ctx, uint64_t id, int has, const struct gt_comm_config *c,
                        gt_logger_fn l, gt_profiler_fn p)
{
    (void)id, (void)has, (void)c, (void)l, (void)p;
    calls_init++;
    *ctx = &fake_ctx;
    return GT_OK;
}
static gt_result f_devices(int *n)
{
    *n = 2;
    return GT_OK;
}
static gt_result f_props(int dev, struct gt_props *p)
{
    static const char *names[] = {"fake0", "fake1"};
    p->name = names[dev];
    p->pci_path = "/sys/devices/pci0000:00/0000:00:02.0";
    p->ptr_support = GT_PTR_HOST | (dev == 0 ? GT_PTR_DMABUF | GT_PTR_CUDA : 0);
    p->speed_mbps = 100000;
    return GT_OK;
}
static gt_result f_probe(int dev, struct gt_dev_probe *pr)
{
    pr->dmabuf = dev == 0 ? GT_PROBE_SUPPORTED : GT_PROBE_UNSUPPORTED;
    pr->dmabuf_errno = dev == 0 ? 0 : EOPNOTSUPP;
    pr->peermem = GT_PROBE_ABSENT;
    pr->cuda_dmabuf = GT_PROBE_SUPPORTED;
    pr->advertised = GT_PTR_HOST | (dev == 0 ? GT_PTR_DMABUF | GT_PTR_CUDA : 0);
    snprintf(pr->why, sizeof(pr->why), "dev %d: %s", dev, dev == 0 ? "dmabuf ok" : "EOPNOTSUPP");
    return GT_OK;
}
static gt_result f_listen(void *ctx, int dev, void *h, void **lc)
{
    (void)dev, (void)h;
    assert_ptr_equal(ctx, &fake_ctx);
    *lc = &fake_listen;
    return GT_OK;
}
static gt_result f_connect(void *ctx, int dev, void *h, void **sc, void **sdc)
{
    (void)dev, (void)h, (void)sdc;
    assert_ptr_equal(ctx, &fake_ctx);
    if (connect_polls > 0) {
        connect_polls--;
        *sc = NULL;
        return GT_OK;
    }
    *sc = &fake_send;
    return GT_OK;
}
static gt_result f_accept(void *lc, void **rc, void **rdc)
{
    (void)rdc;
    assert_ptr_equal(lc, &fake_listen);
    *rc = &fake_recv;
    return GT_OK;
}
static gt_result f_reg_common(void *comm, void **mh, struct gt_reg_report *rep)
{
    assert_true(comm == &fake_send || comm == &fake_recv);
    assert_non_null(rep);
    if (fill_report) {
        rep->asked = next_report.asked;
        rep->method = next_report.method;
        rep->fell_back = next_report.fell_back;
        rep->reason = next_report.reason;
        rep->err = next_report.err;
        rep->exported_fd = next_report.exported_fd;
        rep->cache_hit = next_report.cache_hit;
    }
    static int k;
    *mh = next_reg_result == GT_OK ? &fake_mh[k++ % 16] : NULL;
    /* A reporting transport describes its failure (gt_net.h F1, F5); one
     * without reports (fill_report = 0) stands for a plugin that does not. */
    if (next_reg_result != GT_OK && fill_report)
        gt_net_fail(next_reg_result, next_report.reason, next_report.err,
                    "fake: registration refused");
    errno = EBADF; /* junk: the shim must not read it (F2) */
    return next_reg_result;
}
static gt_result f_reg_mr(void *comm, void *data, size_t size, int type, void **mh,
                          struct gt_reg_report *rep)
{
    (void)data, (void)size, (void)type;
    return f_reg_common(comm, mh, rep);
}
static gt_result f_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t off,
                                 int fd, void **mh, struct gt_reg_report *rep)
{
    (void)data, (void)size, (void)type, (void)off, (void)fd;
    return f_reg_common(comm, mh, rep);
}
static gt_result f_dereg(void *comm, void *mh)
{
    (void)comm;
    last_dereg_mh = mh;
    return GT_OK;
}
static void *new_req(int size, int polls, int is_flush)
{
    struct fake_req *r = &fake_reqs[fake_nreq++ % 1024];
    r->polls_left = polls;
    r->size = size;
    r->is_flush = is_flush;
    return r;
}
static gt_result f_isend(void *sc, void *data, size_t size, int tag, void *mh, void *ph, void **req)
{
    (void)data, (void)tag, (void)ph;
    assert_ptr_equal(sc, &fake_send);
    last_isend_mh = mh;
    if (isend_null_next) {
        isend_null_next = 0;
        *req = NULL;
        return GT_OK;
    }
    if (size == 999) { /* fails and says why, then leaves a junk errno behind */
        gt_net_fail(GT_REMOTE_ERROR, GT_REASON_PEER_GONE, ECONNRESET,
                    "fake: connection reset by peer");
        errno = EBADF;
        return GT_REMOTE_ERROR;
    }
    if (size == 997) { /* breaks F1: describes a failure, then succeeds */
        gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_HOST_REG_FAILED, ENOMEM, "fake: stale");
        *req = NULL;
        return GT_OK;
    }
    if (size == 998) { /* breaks F1: fails without a description */
        errno = EPIPE;
        return GT_SYSTEM_ERROR;
    }
    *req = new_req((int)size, 1, 0);
    return GT_OK;
}
static gt_result f_irecv(void *rc, int n, void **data, size_t *sizes, int *tags, void **mhs,
                         void **phs, void **req)
{
    (void)data, (void)tags, (void)phs;
    assert_ptr_equal(rc, &fake_recv);
    last_irecv_preset = *req;
    for (int i = 0; i < n && i < 4; i++)
        last_irecv_mh[i] = mhs[i];
    /* received less than posted, so the recorder must take test's sizes */
    *req = new_req((int)sizes[0] / 2, 2, 0);
    return GT_OK;
}
static gt_result f_iflush(void *rc, int n, void **data, int *sizes, void **mhs, void **req)
{
    (void)rc, (void)n, (void)data, (void)sizes, (void)mhs;
    if (iflush_null_next) {
        iflush_null_next = 0;
        *req = NULL;
        return GT_OK;
    }
    *req = new_req(0, 0, 1);
    return GT_OK;
}
static gt_result f_test(void *req, int *done, int *sizes)
{
    struct fake_req *r = req;
    last_test_req = req;
    if (r->polls_left > 0) {
        r->polls_left--;
        *done = 0;
        return GT_OK;
    }
    *done = 1;
    if (sizes)
        sizes[0] = r->size;
    return GT_OK;
}
static gt_result f_close(void *c)
{
    (void)c;
    calls_close++;
    return GT_OK;
}
static gt_result f_get_device_mr(void *comm, void *mh, void **d)
{
    (void)comm;
    *d = mh;
    return GT_OK;
}
static gt_result f_irecv_consumed(void *rc, int n, void *req)
{
    (void)rc, (void)n, (void)req;
    return GT_OK;
}
static gt_result f_finalize(void *ctx)
{
    assert_ptr_equal(ctx, &fake_ctx);
    calls_finalize++;
    return GT_OK;
}
static gt_result f_set_net_attr(void *ctx, void *a)
{
    (void)ctx, (void)a;
    return GT_OK;
}

static const struct gt_net_ops fake_ops = {
    .name = "fake",
    .init = f_init,
    .devices = f_devices,
    .get_properties = f_props,
    .listen = f_listen,
    .connect = f_connect,
    .accept = f_accept,
    .reg_mr = f_reg_mr,
    .reg_mr_dmabuf = f_reg_mr_dmabuf,
    .dereg_mr = f_dereg,
    .isend = f_isend,
    .irecv = f_irecv,
    .iflush = f_iflush,
    .test = f_test,
    .close_send = f_close,
    .close_recv = f_close,
    .close_listen = f_close,
    .get_device_mr = f_get_device_mr,
    .irecv_consumed = f_irecv_consumed,
    .finalize = f_finalize,
    .set_net_attr = f_set_net_attr,
    .get_probe = f_probe,
};

/* ---- helpers ------------------------------------------------------------ */

static char g_dir[PATH_MAX];
static const struct gt_net_ops *ops;

static void drain(void *req, int *sizes)
{
    int done = 0;
    for (int i = 0; i < 10 && !done; i++)
        assert_int_equal(ops->test(req, &done, sizes), GT_OK);
    assert_int_equal(done, 1);
}

static const struct gtr_comm *comm_rec(uint32_t slot)
{
    return &gt_shim_recorder()->comms[slot];
}

struct ev_count {
    int n[GTR_EV_COUNT];
    struct gtr_event last[GTR_EV_COUNT];
};

/* The ring as the reader's validator sees it (a snapshot of the live file). */
static void events_now(struct ev_count *c)
{
    struct gt_recorder *r = gt_shim_recorder();
    struct gt_recfile v;
    char err[GT_ERRLEN];
    int rc = gt_recfile_parse(r->base, r->size, r->path, &v, err, sizeof(err));
    if (rc)
        print_error("reader refused the live recorder: %s\n", err);
    assert_int_equal(rc, 0);
    memset(c, 0, sizeof(*c));
    struct gtr_event e;
    for (uint64_t pos = 0; gt_recfile_event_next(&v, &pos, &e);) {
        assert_true(e.type < GTR_EV_COUNT); /* the validator bounded it */
        c->n[e.type]++;
        c->last[e.type] = e;
    }
    gt_recfile_free(&v);
}

static gt_result reg(void *comm, int dmabuf, int type, int fd, size_t size, void **mh,
                     struct gt_reg_report *out)
{
    static char buf[64];
    if (dmabuf)
        return ops->reg_mr_dmabuf(comm, buf, size, type, 0, fd, mh, out);
    return ops->reg_mr(comm, buf, size, type, mh, out);
}

static struct gt_reg_report rep(int asked, int method, int fell_back, int reason, int err)
{
    struct gt_reg_report r = {
        .asked = asked, .method = method, .fell_back = fell_back, .reason = reason, .err = err};
    return r;
}

/* ---- the test ------------------------------------------------------------ */

struct second_thread {
    void *send;
    uint64_t mh;
};

static void *second_sender(void *arg)
{
    void *sc = arg;
    for (int i = 0; i < 3; i++) {
        void *req = NULL;
        assert_int_equal(ops->isend(sc, NULL, 100, 0, NULL, NULL, &req), GT_OK);
        drain(req, NULL);
    }
    return NULL;
}

static void test_every_call_recorded(void **state)
{
    (void)state;
    struct gt_rec_config cfg = {
        .dir = g_dir, .mode = -1, .ndevs = 4, .ncomms = 8, .ring_events = 1024, .events_all = 1};
    ops = gt_shim_wrap_cfg(&fake_ops, "test: fake transport", NULL, &cfg);
    assert_ptr_not_equal(ops, &fake_ops);
    assert_ptr_equal(gt_shim_wrap(&fake_ops, "again", NULL), ops); /* idempotent */
    gt_shim_set_abi_version(11);
    struct gt_recorder *r = gt_shim_recorder();
    assert_non_null(r);
    struct stat st;
    assert_int_equal(stat(r->path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(r->hdr->state, GTR_STATE_LIVE);
    assert_string_equal(r->id->transport, "fake");
    assert_string_equal(r->id->transport_why, "test: fake transport");
    assert_int_equal(r->id->abi_version, 11);
    assert_int_equal(r->id->policy_events_all, 1);

    /* devices and probes */
    assert_int_equal(r->devs[0].in_use, 1);
    assert_string_equal(r->devs[0].name, "fake0");
    assert_int_equal(r->devs[0].probe_dmabuf, GTR_PROBE_SUPPORTED);
    assert_int_equal(r->devs[1].probe_dmabuf_errno, EOPNOTSUPP);
    assert_int_equal(r->devs[1].probe_peermem, GTR_PROBE_ABSENT);
    assert_string_equal(r->devs[1].why, "dev 1: EOPNOTSUPP");
    assert_int_equal(r->devs[2].in_use, 0);

    void *ctx = NULL;
    assert_int_equal(ops->init(&ctx, 0x1234abcdull, 1, NULL, NULL, NULL), GT_OK);
    assert_int_equal(calls_init, 1);
    uint32_t slot = ((struct shim_ctx *)ctx)->slot->idx;
    const struct gtr_comm *c = comm_rec(slot);
    assert_int_equal(c->state, GTR_COMM_ACTIVE);
    assert_int_equal(c->has_comm_id, 1);
    assert_int_equal(c->comm_id, 0x1234abcdull);
    assert_int_equal(c->abi_version, 11);

    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = NULL, *sc = NULL, *rc = NULL, *sdc = NULL, *rdc = NULL;
    assert_int_equal(ops->listen(ctx, 0, handle, &lc), GT_OK);
    assert_non_null(lc);
    connect_polls = 2;
    int polls = 0;
    do {
        assert_int_equal(ops->connect(ctx, 0, handle, &sc, &sdc), GT_OK);
        polls++;
    } while (!sc);
    assert_int_equal(polls, 3); /* "not yet" passed through twice */
    assert_int_equal(ops->accept(lc, &rc, &rdc), GT_OK);
    assert_non_null(rc);
    assert_int_equal(c->listen_count, 1);
    assert_int_equal(c->connect_count, 1);
    assert_int_equal(c->accept_count, 1);
    assert_int_equal(c->dev, 0);

    /* registrations: the transport's report decides the cell */
    void *mh1, *mh2, *mh3, *mh4, *mh5;
    struct gt_reg_report out;
    next_reg_result = GT_OK;
    next_report = rep(GT_ASKED_DMABUF, GT_METHOD_DMABUF, 0, 0, 0);
    next_report.cache_hit = 1;
    assert_int_equal(reg(rc, 1, GT_PTR_CUDA, 7, 4096, &mh1, &out), GT_OK);
    assert_int_equal(out.method, GT_METHOD_DMABUF);
    assert_int_equal(out.cache_hit, 1);
    next_report = rep(GT_ASKED_CUDA, GT_METHOD_DMABUF, 0, 0, 0);
    next_report.exported_fd = 1;
    assert_int_equal(reg(sc, 0, GT_PTR_CUDA, -1, 8192, &mh2, NULL), GT_OK);
    next_report = rep(GT_ASKED_DMABUF, GT_METHOD_PEERMEM, 1, GT_REASON_DMABUF_REG_FAILED, EINVAL);
    assert_int_equal(reg(sc, 1, GT_PTR_CUDA, 9, 100, &mh3, &out), GT_OK);
    assert_int_equal(out.fell_back, 1);
    next_reg_result = GT_SYSTEM_ERROR;
    next_report = rep(GT_ASKED_CUDA, GT_METHOD_FAILED, 0, GT_REASON_PEERMEM_NOT_ALLOWED, EPERM);
    void *bad = (void *)1;
    assert_int_equal(reg(sc, 0, GT_PTR_CUDA, -1, 300, &bad, NULL), GT_SYSTEM_ERROR);
    assert_null(bad);
    /* a transport without reports: asked from the call, method from success */
    fill_report = 0;
    next_reg_result = GT_OK;
    assert_int_equal(reg(sc, 0, GT_PTR_HOST, -1, 50, &mh4, &out), GT_OK);
    assert_int_equal(out.asked, GT_ASKED_HOST);
    assert_int_equal(out.method, GT_METHOD_HOST);
    assert_int_equal(reg(sc, 1, GT_PTR_CUDA, 3, 60, &mh5, NULL), GT_OK);
    next_reg_result = GT_INTERNAL_ERROR;
    assert_int_equal(reg(sc, 1, GT_PTR_CUDA, -1, 70, &bad, NULL), GT_INTERNAL_ERROR);
    fill_report = 1;
    next_reg_result = GT_OK;

    assert_int_equal(c->reg_count[GT_ASKED_DMABUF][GT_METHOD_DMABUF], 2); /* mh1, mh5 */
    assert_int_equal(c->reg_bytes[GT_ASKED_DMABUF][GT_METHOD_DMABUF], 4096 + 60);
    assert_int_equal(c->reg_count[GT_ASKED_CUDA][GT_METHOD_DMABUF], 1);
    assert_int_equal(c->reg_bytes[GT_ASKED_CUDA][GT_METHOD_DMABUF], 8192);
    assert_int_equal(c->reg_count[GT_ASKED_DMABUF][GT_METHOD_PEERMEM], 1);
    assert_int_equal(c->reg_count[GT_ASKED_CUDA][GT_METHOD_FAILED], 2);
    assert_int_equal(c->reg_bytes[GT_ASKED_CUDA][GT_METHOD_FAILED], 370);
    assert_int_equal(c->reg_count[GT_ASKED_HOST][GT_METHOD_HOST], 1);
    assert_int_equal(c->reg_exported_fd, 1);
    assert_int_equal(c->reg_cache_hits, 1);
    assert_int_equal(c->fallback_count, 1);
    assert_int_equal(gtr_reason_count(c, GTR_FALLBACKS, GT_REASON_DMABUF_REG_FAILED), 1);
    assert_int_equal(c->fallback_last_errno, EINVAL);
    assert_int_equal(c->fallback_last_reason, GT_REASON_DMABUF_REG_FAILED);
    assert_int_equal(c->error_count, 2);
    assert_int_equal(gtr_reason_count(c, GTR_ERRORS, GT_REASON_PEERMEM_NOT_ALLOWED), 1);
    assert_non_null(strstr(c->error_last_text, "regMrDmaBuf(cuda, 70 bytes)"));
    assert_int_equal(c->hist[GTR_OP_REG].count, 7);

    /* data path: inner objects reach the transport, results come back */
    void *req = NULL;
    assert_int_equal(ops->isend(sc, NULL, 1000, 5, mh2, NULL, &req), GT_OK);
    assert_non_null(req);
    assert_ptr_equal(last_isend_mh, ((struct shim_mr *)mh2)->inner);
    int sizes[4] = {0};
    drain(req, sizes);
    assert_int_equal(sizes[0], 1000);
    isend_null_next = 1;
    req = (void *)0x99;
    assert_int_equal(ops->isend(sc, NULL, 1000, 5, mh2, NULL, &req), GT_OK);
    assert_null(req); /* "no slot, retry" passed through */
    req = NULL;
    assert_int_equal(ops->isend(sc, NULL, 999, 5, mh2, NULL, &req), GT_REMOTE_ERROR);
    /* the transport's description, not the errno it left behind */
    assert_int_equal(c->error_last_errno, ECONNRESET);
    assert_int_equal(c->error_last_reason, GT_REASON_PEER_GONE);
    assert_non_null(
        strstr(c->error_last_text, "isend(999 bytes): result 6: fake: connection reset"));
    struct ev_count fev;
    events_now(&fev);
    assert_int_equal(fev.last[GTR_EV_ERROR].err, ECONNRESET);
    assert_int_equal(fev.last[GTR_EV_ERROR].aux, GT_REASON_PEER_GONE);
    /* the shim's caller sees the same description (F1 holds for the shim) */
    struct gt_net_failure f;
    uint32_t mark = gt_net_fail_mark();
    assert_int_equal(ops->isend(sc, NULL, 999, 5, mh2, NULL, &req), GT_REMOTE_ERROR);
    assert_int_equal(gt_net_failure_since(mark, &f), 1);
    assert_int_equal(f.err, ECONNRESET);
    assert_int_equal(f.reason, GT_REASON_PEER_GONE);
    /* a silent failure after a stale description: neither errno nor the
     * earlier call's record is attributed to it */
    assert_int_equal(ops->isend(sc, NULL, 997, 5, mh2, NULL, &req), GT_OK);
    assert_int_equal(ops->isend(sc, NULL, 998, 5, mh2, NULL, &req), GT_SYSTEM_ERROR);
    assert_int_equal(c->error_last_errno, 0);
    assert_int_equal(c->error_last_reason, GT_REASON_TRANSPORT_ERROR);
    assert_non_null(strstr(c->error_last_text, "the transport gave no reason"));

    void *data[2] = {0};
    size_t rsz[2] = {4000, 4000};
    int tags[2] = {1, 2};
    void *mhs[2] = {mh1, mh1};
    req = (void *)(uintptr_t)GT_NET_OPTIONAL_RECV_COMPLETION;
    assert_int_equal(ops->irecv(rc, 2, data, rsz, tags, mhs, NULL, &req), GT_OK);
    assert_ptr_equal(last_irecv_preset, (void *)(uintptr_t)GT_NET_OPTIONAL_RECV_COMPLETION);
    assert_ptr_equal(last_irecv_mh[1], ((struct shim_mr *)mh1)->inner);
    sizes[0] = sizes[1] = 0;
    drain(req, sizes);
    assert_int_equal(sizes[0], 2000);
    int fsz[1] = {4000};
    assert_int_equal(ops->iflush(rc, 1, data, fsz, mhs, &req), GT_OK);
    drain(req, NULL);
    iflush_null_next = 1;
    assert_int_equal(ops->iflush(rc, 1, data, fsz, mhs, &req), GT_OK);
    assert_null(req); /* nothing to flush */

    void *dptr = NULL;
    assert_int_equal(ops->get_device_mr(rc, mh1, &dptr), GT_OK);
    assert_ptr_equal(dptr, ((struct shim_mr *)mh1)->inner);

    assert_int_equal(c->send_posted, 1);
    assert_int_equal(c->send_count, 1);
    assert_int_equal(c->send_bytes, 1000);
    assert_int_equal(c->recv_posted, 1);
    assert_int_equal(c->recv_count, 2);        /* messages: one request of n = 2 */
    assert_int_equal(c->recv_bytes, 2000 + 0); /* test's sizes, not the posted 8000 */
    assert_int_equal(c->flush_count, 1);
    assert_int_equal(c->hist[GTR_OP_SEND].count, 1);
    assert_int_equal(c->hist[GTR_OP_RECV].count, 1);
    assert_int_equal(c->hist[GTR_OP_FLUSH].count, 1);
    assert_int_equal(c->error_count, 5); /* + the failed isends */
    assert_int_equal(gtr_reason_count(c, GTR_ERRORS, GT_REASON_PEER_GONE), 2);
    /* the silent isend and the registration of a plugin without reports */
    assert_int_equal(gtr_reason_count(c, GTR_ERRORS, GT_REASON_TRANSPORT_ERROR), 2);

    /* more requests in flight than the pool holds: still correct */
    enum { N = SHIM_POOL + 40 };
    static void *reqs[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(ops->isend(sc, NULL, 10, 0, NULL, NULL, &reqs[i]), GT_OK);
    for (int i = 0; i < N; i++)
        drain(reqs[i], NULL);
    assert_int_equal(c->send_count, 1 + N);
    assert_int_equal(c->send_bytes, 1000 + 10 * N);

    /* a second thread driving the same communicator: a sibling slot */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, second_sender, sc), 0);
    pthread_join(t, NULL);
    int siblings = 0;
    uint64_t total_sends = 0;
    for (uint32_t i = 0; i < r->ncomms; i++) {
        const struct gtr_comm *x = comm_rec(i);
        if (x->state != GTR_COMM_FREE && x->has_comm_id == 1 && x->comm_id == 0x1234abcdull) {
            siblings += i != slot;
            total_sends += x->send_count;
        }
    }
    assert_int_equal(siblings, 1);
    assert_int_equal(total_sends, 1 + N + 3);
    assert_int_equal(c->send_count, 1 + N); /* the primary's own are unchanged */

    /* events: control always, per message because events_all=1 here */
    struct ev_count ev;
    events_now(&ev);
    assert_int_equal(ev.n[GTR_EV_RECORDER_OPEN], 1);
    assert_int_equal(ev.n[GTR_EV_PROBE], 2);
    assert_int_equal(ev.last[GTR_EV_PROBE].err, EOPNOTSUPP);
    assert_int_equal(ev.n[GTR_EV_INIT], 1);
    assert_int_equal(ev.last[GTR_EV_INIT].a0, 0x1234abcdull);
    assert_int_equal(ev.n[GTR_EV_LISTEN], 1);
    assert_int_equal(ev.n[GTR_EV_CONNECT], 1);
    assert_int_equal(ev.n[GTR_EV_ACCEPT], 1);
    assert_int_equal(ev.n[GTR_EV_REG], 7);
    assert_int_equal(ev.last[GTR_EV_REG].aux, GT_ASKED_CUDA << 8 | GT_METHOD_FAILED);
    assert_int_equal(ev.last[GTR_EV_REG].a1, 70);
    assert_int_equal(ev.n[GTR_EV_FALLBACK], 1);
    assert_int_equal(ev.last[GTR_EV_FALLBACK].err, EINVAL);
    assert_int_equal(ev.n[GTR_EV_ERROR], 5);
    assert_int_equal(ev.n[GTR_EV_SEND], 1 + N + 3);
    assert_int_equal(ev.n[GTR_EV_RECV], 1);
    assert_int_equal(ev.last[GTR_EV_RECV].a0, 2000);
    assert_int_equal(ev.n[GTR_EV_FLUSH], 1);

    /* per-message events off: only control events from here on */
    r->events_all = 0;
    assert_int_equal(ops->isend(sc, NULL, 10, 0, NULL, NULL, &req), GT_OK);
    drain(req, NULL);
    assert_int_equal(ops->dereg_mr(sc, mh2), GT_OK);
    assert_ptr_equal(last_dereg_mh, &fake_mh[1]);
    events_now(&ev);
    assert_int_equal(ev.n[GTR_EV_SEND], 1 + N + 3);
    assert_int_equal(ev.n[GTR_EV_DEREG], 1);
    assert_int_equal(ev.last[GTR_EV_DEREG].a1, 8192);
    assert_int_equal(ev.last[GTR_EV_DEREG].aux, GT_METHOD_DMABUF);
    assert_int_equal(c->dereg_count, 1);
    assert_int_equal(c->hist[GTR_OP_DEREG].count, 1);

    /* a forked child's records never reach the parent's file */
    uint64_t sends_before = c->send_count, head_before = r->ring.hdr->head;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        void *creq = NULL;
        int cdone = 0;
        r->events_all = 1;
        for (int i = 0; i < 100; i++) {
            ops->isend(sc, NULL, 10, 0, NULL, NULL, &creq);
            while (!cdone)
                ops->test(creq, &cdone, NULL);
            cdone = 0;
        }
        /* recorded into private zeroed memory that replaced the mapping */
        _exit(c->send_count == 100 ? 0 : 1);
    }
    int wst;
    assert_int_equal(waitpid(pid, &wst, 0), pid);
    assert_true(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
    assert_int_equal(c->send_count, sends_before);
    assert_int_equal(r->ring.hdr->head, head_before);

    /* teardown: closes, the rest of the deregistrations, finalize */
    void *left[] = {mh1, mh3, mh4, mh5};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(ops->dereg_mr(i ? sc : rc, left[i]), GT_OK);
    /* closed with requests in flight, more than the pool holds: every one
     * dies with the comm (gt_net.h lifetimes), the heap ones too */
    for (int i = 0; i < SHIM_POOL + 8; i++) {
        assert_int_equal(ops->isend(sc, NULL, 10, 0, NULL, NULL, &reqs[i]), GT_OK);
        assert_non_null(reqs[i]);
    }
    assert_int_equal(gt_shim_heap_reqs(), 8);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(gt_shim_heap_reqs(), 0);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    assert_int_equal(ops->close_listen(lc), GT_OK);
    assert_int_equal(calls_close, 3);
    assert_int_equal(c->close_count, 3);
    assert_int_equal(c->dereg_count, 5);
    assert_int_equal(r->hdr->state, GTR_STATE_LIVE);
    assert_int_equal(ops->finalize(ctx), GT_OK);
    assert_int_equal(calls_finalize, 1);
    assert_int_equal(c->state, GTR_COMM_FINALIZED);
    assert_true(c->finalize_ns >= c->init_ns);
    assert_int_equal(r->hdr->state, GTR_STATE_CLOSED);
    assert_true(r->id->end_wall_ns >= r->id->start_wall_ns);
    events_now(&ev);
    assert_int_equal(ev.n[GTR_EV_CLOSE_SEND] + ev.n[GTR_EV_CLOSE_RECV] + ev.n[GTR_EV_CLOSE_LISTEN],
                     3);
    assert_int_equal(ev.n[GTR_EV_FINALIZE], 1);

    /* a new init after the last finalize makes the file LIVE again */
    assert_int_equal(ops->init(&ctx, 0x777, 1, NULL, NULL, NULL), GT_OK);
    assert_int_equal(r->hdr->state, GTR_STATE_LIVE);
    assert_int_equal(r->id->end_wall_ns, 0);
    assert_int_equal(ops->finalize(ctx), GT_OK);
    assert_int_equal(r->hdr->state, GTR_STATE_CLOSED);
}

/* Reason codes beyond format 1.0's 16 slots: a known code >= 16 gets its
 * own slot (in the 1.1 tail of the record), a code this format has no slot
 * for is counted in the "other" slot, and last_reason and the event keep
 * the exact code (1.0 clamped both to slot 0, "none"). */
static void test_reason_slots(void **state)
{
    (void)state;
    assert_non_null(ops); /* wrapped by test_every_call_recorded */
    struct gt_recorder *r = gt_shim_recorder();
    void *ctx = NULL, *lc = NULL, *sc = NULL, *sdc = NULL;
    char handle[GT_NET_HANDLE_MAXSIZE];
    assert_int_equal(ops->init(&ctx, 0x5107ull, 1, NULL, NULL, NULL), GT_OK);
    const struct gtr_comm *c = comm_rec(((struct shim_ctx *)ctx)->slot->idx);
    assert_int_equal(ops->listen(ctx, 0, handle, &lc), GT_OK);
    connect_polls = 0;
    assert_int_equal(ops->connect(ctx, 0, handle, &sc, &sdc), GT_OK);
    assert_non_null(sc);

    void *mh16, *mh77, *bad = NULL;
    next_reg_result = GT_OK;
    next_report = rep(GT_ASKED_DMABUF, GT_METHOD_PEERMEM, 1, GT_REASON_NO_RDMA_DEVICE, ENODEV);
    assert_int_equal(reg(sc, 1, GT_PTR_CUDA, 5, 100, &mh16, NULL), GT_OK);
    next_report = rep(GT_ASKED_DMABUF, GT_METHOD_PEERMEM, 1, 77, EIO);
    assert_int_equal(reg(sc, 1, GT_PTR_CUDA, 6, 100, &mh77, NULL), GT_OK);
    assert_int_equal(c->fallback_count, 2);
    assert_int_equal(gtr_reason_count(c, GTR_FALLBACKS, GT_REASON_NO_RDMA_DEVICE), 1);
    assert_int_equal(c->fallback_by_reason_hi[GT_REASON_NO_RDMA_DEVICE - GTR_REASON_SLOTS_1_0], 1);
    assert_int_equal(gtr_reason_count(c, GTR_FALLBACKS, GTR_REASON_OTHER), 1);
    assert_int_equal(gtr_reason_count(c, GTR_FALLBACKS, GT_REASON_NONE), 0);
    assert_int_equal(c->fallback_last_reason, 77);
    next_reg_result = GT_SYSTEM_ERROR;
    next_report = rep(GT_ASKED_CUDA, GT_METHOD_FAILED, 0, -3, EPERM);
    assert_int_equal(reg(sc, 0, GT_PTR_CUDA, -1, 10, &bad, NULL), GT_SYSTEM_ERROR);
    next_reg_result = GT_OK;
    assert_int_equal(c->error_count, 1);
    assert_int_equal(gtr_reason_count(c, GTR_ERRORS, GTR_REASON_OTHER), 1);
    assert_int_equal(gtr_reason_count(c, GTR_ERRORS, GT_REASON_NONE), 0);
    assert_int_equal(c->error_last_reason, -3);
    struct ev_count ev;
    events_now(&ev);
    assert_int_equal(ev.last[GTR_EV_FALLBACK].aux, 77);
    assert_int_equal(ev.last[GTR_EV_ERROR].aux, (uint32_t)-3);

    assert_int_equal(ops->dereg_mr(sc, mh16), GT_OK);
    assert_int_equal(ops->dereg_mr(sc, mh77), GT_OK);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_listen(lc), GT_OK);
    assert_int_equal(ops->finalize(ctx), GT_OK);
    assert_int_equal(r->hdr->state, GTR_STATE_CLOSED);
}

/* Issue 23: calls into code gdrtrace does not own, announced from several
 * threads at once, are each bracketed by CALLING and RETURNED of one serial
 * and name their library in the callees section (one entry per library and
 * ABI); a call that never returns stays the last CALLING of its thread. */
struct announcer {
    const char *path;
    int version;
};

static void *announce_calls(void *arg)
{
    const struct announcer *a = arg;
    for (int i = 0; i < 50; i++) {
        uint64_t t =
            gt_callout_begin(GT_CALL_INNER_CONNECT, "inner plugin", a->path, a->version, 0);
        assert_int_not_equal(t, 0);
        gt_callout_end(t, GT_CALL_INNER_CONNECT, GT_OK);
    }
    return NULL;
}

static void test_foreign_calls_are_bracketed(void **state)
{
    (void)state;
    assert_non_null(ops); /* the recorder is open, so the sink is installed */
    struct gt_recorder *r = gt_shim_recorder();
    struct announcer who[4] = {
        {"/x/libA.so", 8}, {"/x/libB.so", 11}, {"/x/libA.so", 8}, {"/x/libB.so", 11}};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, announce_calls, &who[i]), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    uint64_t open_call = gt_callout_begin(GT_CALL_INNER_INIT, "inner plugin", "/x/libA.so", 8, -1);

    struct gt_recfile v;
    char err[GT_ERRLEN];
    assert_int_equal(gt_recfile_parse(r->base, r->size, r->path, &v, err, sizeof(err)), 0);
    int in_use = 0;
    for (uint32_t i = 0; i < v.ncallee; i++)
        in_use += (int)v.callees[i].in_use;
    assert_int_equal(in_use, 2);
    uint64_t calling[256], nc = 0, returned[256], nr = 0, last_calling = 0;
    struct gtr_event e;
    for (uint64_t pos = 0; gt_recfile_event_next(&v, &pos, &e);) {
        if (e.type == GTR_EV_CALLING) {
            assert_true(nc < 256);
            calling[nc++] = e.a1;
            last_calling = e.a1;
            assert_true(e.a2 < v.ncallee);
            const struct gtr_callee *c = &v.callees[e.a2];
            assert_int_equal(c->version, (int)e.aux);
            assert_string_equal(c->path, e.aux == 8 ? "/x/libA.so" : "/x/libB.so");
            assert_string_equal(c->kind, "inner plugin");
        } else if (e.type == GTR_EV_RETURNED) {
            assert_true(nr < 256);
            assert_int_equal(e.a0, GT_CALL_INNER_CONNECT);
            returned[nr++] = e.a1;
        }
    }
    assert_int_equal(nc, 201);
    assert_int_equal(nr, 200);
    assert_int_equal(last_calling, open_call); /* the one never returned */
    for (uint64_t i = 0; i < nc; i++) {
        int found = 0;
        for (uint64_t k = 0; k < nr; k++)
            found += returned[k] == calling[i];
        assert_int_equal(found, calling[i] == open_call ? 0 : 1);
    }
    gt_recfile_free(&v);
    gt_callout_end(open_call, GT_CALL_INNER_INIT, GT_OK);
    gt_callout_end(0, GT_CALL_INNER_INIT, GT_OK); /* "not recorded": nothing */

    /* Issue 19.1: a refusal names the transport and why, and closes the
     * recorder (nothing is initialised) */
    gt_shim_refused(1, "ib", GT_SYSTEM_ERROR, GT_REASON_NO_RDMA_DEVICE, 0,
                    "GDRTRACE_TRANSPORT=ib: ib unavailable (ib: no active RDMA port)");
    struct ev_count ev;
    events_now(&ev);
    assert_int_equal(ev.n[GTR_EV_REFUSED], 1);
    assert_int_equal(ev.last[GTR_EV_REFUSED].aux, GT_REASON_NO_RDMA_DEVICE);
    assert_int_equal(ev.last[GTR_EV_REFUSED].a0, 1);
    assert_string_equal(r->id->transport, "ib");
    assert_string_equal(r->id->transport_why,
                        "GDRTRACE_TRANSPORT=ib: ib unavailable (ib: no active RDMA port)");
    assert_int_equal(r->hdr->state, GTR_STATE_CLOSED);
}

int main(void)
{
    snprintf(g_dir, sizeof(g_dir), "%s/gt-shim-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_call_recorded),
        cmocka_unit_test(test_reason_slots),
        cmocka_unit_test(test_foreign_calls_are_bracketed),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (gt_shim_recorder()) /* also after a failed assertion skipped the test's own unlink */
        unlink(gt_shim_recorder()->path);
    rmdir(g_dir);
    return rc;
}
