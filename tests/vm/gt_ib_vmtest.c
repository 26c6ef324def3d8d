/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gt_ib_vmtest.c — drives the ib transport (gt_ib_ops) against a real kernel
 * verbs stack (Soft-RoCE in the test VM), one process driving both ends of
 * each connection through the non-blocking API, as NCCL's proxy does.
 *
 *   gt_ib_vmtest data       byte-checked transfers: sizes 0..4 MiB, 1/2/4
 *                           QPs, multi-receive n=8 with tags, 32 in flight,
 *                           iflush on host memory (no-op) and on
 *                           "peermem" memory (a real RDMA READ on the
 *                           loopback QP; host memory stands in for GPU
 *                           memory via a fixture nvidia_peermem file)
 *   gt_ib_vmtest faults     strangers on the setup port (scanner, HTTP,
 *                           garbage, 71 idle connections) never fail
 *                           accept and the real peer completes; an RTR
 *                           transition failing by fault injection through the
 *                           gt_ibv table, and a real work-completion error
 *                           (the receiver deregisters its buffer after its
 *                           clear-to-send): each must end in a clear error,
 *                           never a hang
 *   gt_ib_vmtest dmabuf EXPECT
 *                           the DMA-BUF probe and policy on a real vgem
 *                           dma-buf fd (rxe refuses it with EOPNOTSUPP);
 *                           EXPECT = notallowed | noperrmem | fallback
 *   gt_ib_vmtest devices N  exactly N devices under the GDRTRACE_IB_HCA or
 *                           NCCL_IB_HCA given
 *   gt_ib_vmtest qpattrs TC SL TIMEOUT QPS
 *                           the QPs of both sides, read back with
 *                           ibv_query_qp, carry what NCCL_IB_TC/_SL/_TIMEOUT/
 *                           _QPS_PER_CONNECTION asked; data byte-checked
 *   gt_ib_vmtest gid [-n] DEV=INDEX…
 *                           each device's GID index is the one given (NCCL's
 *                           rules, NCCL_IB_GID_INDEX and friends); then data
 *                           flows byte-checked (not with -n)
 *   gt_ib_vmtest bw SIZE COUNT DEPTH
 *                           bandwidth of COUNT SIZE-byte messages, DEPTH in
 *                           flight (ib_write_bw's -s/-n/-t), printed as
 *                           "@@BW size=… depth=… gbps=…"
 * Exit 0 = all checks passed; 1 = a check failed (the line says which).
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "tests/check.h"

#include "plugin/ib/ib.h"
#include "plugin/ib/ib_net.h"
#include "plugin/oob/oob.h"
#include "tests/vm/vgem.h"

static const struct gt_net_ops *N = &gt_ib_ops;
static void *ctx;
static int failures;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct pair {
    void *lc, *sc, *rc;
    int sdev, rdev;
};

/* Drives listen/connect/accept to completion; returns the first error. */
static gt_result connect_pair(struct pair *p, int sdev, int rdev)
{
    char handle[GT_NET_HANDLE_MAXSIZE];
    memset(p, 0, sizeof(*p));
    p->sdev = sdev, p->rdev = rdev;
    gt_result r = N->listen(ctx, rdev, handle, &p->lc);
    if (r != GT_OK)
        return r;
    double t0 = now();
    while (!p->sc || !p->rc) {
        if (!p->sc && (r = N->connect(ctx, sdev, handle, &p->sc, NULL)) != GT_OK)
            return r;
        if (!p->rc && (r = N->accept(p->lc, &p->rc, NULL)) != GT_OK)
            return r;
        if (now() - t0 > 20) {
            printf("connect_pair: timed out\n");
            return GT_INTERNAL_ERROR;
        }
    }
    return GT_OK;
}

static void close_pair(struct pair *p)
{
    if (p->sc)
        N->close_send(p->sc);
    if (p->rc)
        N->close_recv(p->rc);
    if (p->lc)
        N->close_listen(p->lc);
    memset(p, 0, sizeof(*p));
}

static gt_result wait_req(void *req, int *sizes, double limit)
{
    double t0 = now();
    int done = 0;
    while (!done) {
        gt_result r = N->test(req, &done, sizes);
        if (r != GT_OK)
            return r;
        if (now() - t0 > limit) {
            printf("wait_req: no completion within %.0f s\n", limit);
            return GT_INTERNAL_ERROR;
        }
    }
    return GT_OK;
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
}

static size_t first_diff(const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(seed * 131u + i * 7u + (i >> 8)))
            return i;
    return (size_t)-1;
}

/* One multi-receive round: n messages with the given sizes, tags 100+i,
 * the receive buffers `slack` bytes larger than what is sent. */
static void round_trip(struct pair *p, int n, const size_t *sizes, unsigned seed, int flush_gpu)
{
    unsigned char *sb[GT_IB_MAX_RECVS], *rb[GT_IB_MAX_RECVS];
    void *smh[GT_IB_MAX_RECVS], *rmh[GT_IB_MAX_RECVS];
    void *rdata[GT_IB_MAX_RECVS];
    size_t rsz[GT_IB_MAX_RECVS];
    int tags[GT_IB_MAX_RECVS];
    const size_t slack = 64;
    for (int i = 0; i < n; i++) {
        sb[i] = malloc(sizes[i] + 1);
        rb[i] = malloc(sizes[i] + slack);
        fill(sb[i], sizes[i], seed + (unsigned)i);
        memset(rb[i], 0xAA, sizes[i] + slack);
        struct gt_reg_report rep = {0};
        CHECK(N->reg_mr(p->sc, sb[i], sizes[i] + 1, GT_PTR_HOST, &smh[i], &rep) == GT_OK,
              "reg send %d", i);
        CHECK(rep.method == GT_METHOD_HOST, "send method %d", rep.method);
        int type = flush_gpu ? GT_PTR_CUDA : GT_PTR_HOST;
        memset(&rep, 0, sizeof(rep));
        CHECK(N->reg_mr(p->rc, rb[i], sizes[i] + slack, type, &rmh[i], &rep) == GT_OK,
              "reg recv %d type %d", i, type);
        rdata[i] = rb[i];
        rsz[i] = sizes[i] + slack;
        tags[i] = 100 + i;
    }
    void *rreq = NULL;
    double t0 = now();
    while (!rreq && now() - t0 < 10)
        CHECK(N->irecv(p->rc, n, rdata, rsz, tags, rmh, NULL, &rreq) == GT_OK, "irecv");
    void *sreq[GT_IB_MAX_RECVS] = {0};
    /* Send in reverse order: matching is by tag, not by position. */
    for (int i = n - 1; i >= 0; i--) {
        t0 = now();
        while (!sreq[i] && now() - t0 < 10) {
            gt_result r = N->isend(p->sc, sb[i], sizes[i], tags[i], smh[i], NULL, &sreq[i]);
            if (r != GT_OK) {
                CHECK(0, "isend %d: %d", i, r);
                break;
            }
        }
    }
    int got[GT_IB_MAX_RECVS];
    for (int i = 0; i < n; i++) {
        int ssz = -1;
        CHECK(sreq[i] && wait_req(sreq[i], &ssz, 20) == GT_OK, "send %d done", i);
        CHECK(ssz == (int)sizes[i], "send size %d vs %zu", ssz, sizes[i]);
    }
    CHECK(rreq && wait_req(rreq, got, 20) == GT_OK, "recv done");
    for (int i = 0; i < n; i++) {
        CHECK(got[i] == (int)sizes[i], "recv %d size %d, want %zu", i, got[i], sizes[i]);
        size_t d = first_diff(rb[i], sizes[i], seed + (unsigned)i);
        CHECK(d == (size_t)-1, "recv %d size %zu: byte %zu differs", i, sizes[i], d);
        for (size_t k = sizes[i]; k < sizes[i] + slack; k++)
            if (rb[i][k] != 0xAA) {
                CHECK(0, "recv %d: byte %zu past the message was written", i, k);
                break;
            }
    }
    /* iflush: host memory completes at once; "GPU" memory reads back. */
    int isz[GT_IB_MAX_RECVS];
    for (int i = 0; i < n; i++)
        isz[i] = got[i];
    void *freq = NULL;
    CHECK(N->iflush(p->rc, n, rdata, isz, rmh, &freq) == GT_OK && freq, "iflush");
    if (freq)
        CHECK(wait_req(freq, NULL, 10) == GT_OK, "iflush completes");
    for (int i = 0; i < n; i++) {
        CHECK(N->dereg_mr(p->sc, smh[i]) == GT_OK, "dereg");
        CHECK(N->dereg_mr(p->rc, rmh[i]) == GT_OK, "dereg");
        free(sb[i]);
        free(rb[i]);
    }
}

/* 32 receives and sends in flight on one connection, completed out of order. */
static void pipeline(struct pair *p, size_t size)
{
    enum { W = GT_NET_MAX_REQUESTS };
    unsigned char *sb = malloc(size * W), *rb = malloc(size * W);
    void *smh, *rmh;
    CHECK(N->reg_mr(p->sc, sb, size * W, GT_PTR_HOST, &smh, NULL) == GT_OK, "reg");
    CHECK(N->reg_mr(p->rc, rb, size * W, GT_PTR_HOST, &rmh, NULL) == GT_OK, "reg");
    for (int i = 0; i < W; i++)
        fill(sb + (size_t)i * size, size, 1000u + (unsigned)i);
    memset(rb, 0, size * W);
    void *rr[W], *sr[W];
    for (int i = 0; i < W; i++) {
        void *d = rb + (size_t)i * size;
        size_t sz = size;
        int tag = 7;
        rr[i] = NULL;
        double t0 = now();
        while (!rr[i] && now() - t0 < 10)
            CHECK(N->irecv(p->rc, 1, &d, &sz, &tag, &rmh, NULL, &rr[i]) == GT_OK, "irecv");
        CHECK(rr[i] != NULL, "irecv %d slot", i);
    }
    for (int i = 0; i < W; i++) {
        sr[i] = NULL;
        double t0 = now();
        while (!sr[i] && now() - t0 < 10)
            CHECK(N->isend(p->sc, sb + (size_t)i * size, size, 7, smh, NULL, &sr[i]) == GT_OK,
                  "isend");
        CHECK(sr[i] != NULL, "isend %d slot", i);
    }
    for (int i = W - 1; i >= 0; i--) {
        int s = 0;
        CHECK(wait_req(sr[i], &s, 20) == GT_OK, "send %d", i);
        CHECK(wait_req(rr[i], &s, 20) == GT_OK && s == (int)size, "recv %d size %d", i, s);
        CHECK(first_diff(rb + (size_t)i * size, size, 1000u + (unsigned)i) == (size_t)-1,
              "pipelined message %d corrupted", i);
    }
    N->dereg_mr(p->sc, smh);
    N->dereg_mr(p->rc, rmh);
    free(sb);
    free(rb);
}

static char peermem_root[64];

/* A fixture sysfs with nvidia_peermem "present", so REG=peermem registers
 * host memory as if it were GPU memory (the NIC cannot tell). */
static void fake_peermem(void)
{
    snprintf(peermem_root, sizeof(peermem_root), "/tmp/gt_vm_peermem.XXXXXX");
    if (!mkdtemp(peermem_root))
        return;
    char p[256];
    const char *dirs[] = {"/sys", "/sys/module", "/sys/module/nvidia_peermem"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof(p), "%s%s", peermem_root, dirs[i]);
        mkdir(p, 0700);
    }
    snprintf(p, sizeof(p), "%s/sys/module/nvidia_peermem/version", peermem_root);
    int fd = open(p, O_CREAT | O_WRONLY, 0600);
    if (fd >= 0)
        close(fd);
    gt_reg_sysroot = peermem_root;
}

/* The last WARN the transport logged, to check what an error says. */
static char last_warn[1024];
static void capture_logger(int level, unsigned long flags, const char *file, int line,
                           const char *fmt, ...)
{
    (void)flags, (void)file, (void)line;
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (level == GT_LOG_WARN) {
        snprintf(last_warn, sizeof(last_warn), "%s", buf);
        printf("WARN: %s\n", buf);
    }
}

static int do_init(void)
{
    gt_result r = N->init(&ctx, 0, 0, NULL, capture_logger, NULL);
    int n = 0;
    if (r != GT_OK || N->devices(&n) != GT_OK || n < 1) {
        printf("FAIL: ib init %d, %d devices\n", r, n);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        struct gt_props pr;
        struct gt_dev_probe pb;
        N->get_properties(i, &pr);
        N->get_probe(i, &pb);
        printf("dev %d: %s port %d speed %d Mb/s guid %#llx pci %s ptrSupport %#x maxComms %d "
               "maxRecvs %d | probe dmabuf=%d errno=%d peermem=%d cuda=%d why: %s\n",
               i, pr.name, pr.port, pr.speed_mbps, (unsigned long long)pr.guid, pr.pci_path,
               pr.ptr_support, pr.max_comms, pr.max_recvs, pb.dmabuf, pb.dmabuf_errno, pb.peermem,
               pb.cuda_dmabuf, pb.why);
        CHECK(pr.max_recvs == 8 && pr.reg_is_global == 1 && pr.max_p2p_bytes == (1ULL << 40),
              "props of %s", pr.name);
    }
    return n;
}

static int test_data(void)
{
    int ndev = do_init();
    if (!ndev)
        return 1;
    int sdev = ndev > 1 ? 1 : 0, rdev = 0;
    static const size_t sizes[] = {0, 1, 127, 128, 129, 4096, 4097, 65536, 1 << 20, 4 << 20};
    for (int qps = 1; qps <= 4; qps *= 2) {
        char v[16];
        snprintf(v, sizeof(v), "%d", qps);
        setenv("GDRTRACE_IB_QPS", v, 1);
        gt_ib_params_read(&gt_ib_params, 1); /* read once per process, as NCCL */
        struct pair p;
        CHECK(connect_pair(&p, sdev, rdev) == GT_OK, "connect with %d QPs", qps);
        if (!p.sc || !p.rc)
            return 1;
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
            round_trip(&p, 1, &sizes[k], (unsigned)(qps * 100 + k), 0);
        size_t multi[8] = {0, 1, 100, 4096, 5000, 65536, 1 << 20, 3};
        round_trip(&p, 8, multi, 77u + (unsigned)qps, 0);
        pipeline(&p, 8192 + 3);
        printf("data: %d QP(s): %zu sizes, multi-recv 8, 32 in flight: %s\n", qps,
               sizeof(sizes) / sizeof(sizes[0]), failures ? "FAILED" : "ok");
        close_pair(&p);
    }
    unsetenv("GDRTRACE_IB_QPS");
    gt_ib_params_read(&gt_ib_params, 1);
    /* Flush through the loopback QP: reregister as GPU memory via a
     * fixture "peermem"; the RDMA READ must complete. */
    N->finalize(ctx);
    fake_peermem();
    setenv("GDRTRACE_REG", "peermem", 1);
    gt_settings_reset_for_test(); /* the plugin keeps its first init's settings */
    ndev = do_init();
    struct pair p;
    CHECK(connect_pair(&p, sdev, rdev) == GT_OK, "connect for flush");
    size_t one = 1 << 20;
    if (p.sc && p.rc)
        round_trip(&p, 1, &one, 5u, 1);
    size_t two[2] = {4096, 100};
    if (p.sc && p.rc)
        round_trip(&p, 2, two, 6u, 1);
    printf("flush: RDMA READ on the loopback QP: %s\n", failures ? "FAILED" : "ok");
    close_pair(&p);
    N->finalize(ctx);
    unsetenv("GDRTRACE_REG");
    gt_settings_reset_for_test();
    return failures ? 1 : 0;
}

/* ---- faults ------------------------------------------------------------ */

static int (*real_modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
static int inject_rtr_errno;
static int faulty_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    if (inject_rtr_errno && a->qp_state == IBV_QPS_RTR)
        return inject_rtr_errno;
    return real_modify_qp(qp, a, mask);
}

/* Completions fail on cue: the first send completion after arming comes
 * back as "retry exceeded", as when a peer's NIC stops answering. */
static int (*real_poll_cq)(struct ibv_cq *, int, struct ibv_wc *);
static int inject_wc;
static int faulty_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    int k = real_poll_cq(cq, n, wc);
    for (int i = 0; i < k && inject_wc; i++)
        if (wc[i].opcode == IBV_WC_RDMA_WRITE || wc[i].opcode == IBV_WC_SEND) {
            wc[i].status = IBV_WC_RETRY_EXC_ERR;
            inject_wc = 0;
        }
    return k;
}

static int test_faults(void)
{
    int ndev = do_init();
    if (!ndev)
        return 1;
    int sdev = ndev > 1 ? 1 : 0, rdev = 0;

    /* 1. Strangers on the out-of-band port (issue 17): a scanner's
     * connect+close, an HTTP request, garbage, an idle connection and 70
     * idle ones.  accept() must keep answering GT_OK with no comm, and the
     * real peer must then complete (the table holds 64: the oldest idle ones
     * are evicted on the way). */
    {
        char handle[GT_NET_HANDLE_MAXSIZE];
        void *lc = NULL, *sc = NULL, *rc = NULL;
        CHECK(N->listen(ctx, rdev, handle, &lc) == GT_OK, "listen");
        union gt_oob_addr a;
        uint64_t nonce;
        char why[160];
        CHECK(gt_oob_handle_decode(handle, sizeof(handle), GT_IB_MAGIC, GT_IB_WIRE_VERSION, "ib",
                                   &a, &nonce, why, sizeof(why)) == GT_OK,
              "handle: %s", why);
        enum { NSTRAY = 74 };
        int fds[NSTRAY], nfd = 0;
        for (int i = 0; i < NSTRAY; i++) {
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            CHECK(fd >= 0 && connect(fd, &a.sa, sizeof(a.in4)) == 0, "tcp connect %d", i);
            if (i == 0) { /* scanner */
                close(fd);
                continue;
            }
            if (i == 1) {
                const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
                (void)!write(fd, req, sizeof(req) - 1);
            } else if (i == 2) {
                char junk[300];
                memset(junk, 0xa5, sizeof(junk));
                (void)!write(fd, junk, sizeof(junk));
            }
            fds[nfd++] = fd; /* 3 and up: idle */
        }
        gt_result r = GT_OK;
        double t0 = now();
        while (r == GT_OK && !rc && now() - t0 < 0.2)
            r = N->accept(lc, &rc, NULL);
        CHECK(r == GT_OK && !rc, "accept with strangers only: %d", r);
        gt_result rs = GT_OK;
        t0 = now();
        while (r == GT_OK && rs == GT_OK && (!sc || !rc) && now() - t0 < 10) {
            if (!sc)
                rs = N->connect(ctx, sdev, handle, &sc, NULL);
            if (!rc)
                r = N->accept(lc, &rc, NULL);
        }
        CHECK(rs == GT_OK && r == GT_OK && sc && rc,
              "real peer after strangers: connect %d accept %d", rs, r);
        printf("faults: scanner, HTTP, garbage, %d idle connections -> accept GT_OK; "
               "real peer %s\n",
               nfd - 2, sc && rc ? "connected" : "FAILED");
        if (sc)
            N->close_send(sc);
        if (rc)
            N->close_recv(rc);
        for (int i = 0; i < nfd; i++)
            close(fds[i]);
        N->close_listen(lc);
    }
    /* 2. A handle that is not ours. */
    {
        char handle[GT_NET_HANDLE_MAXSIZE];
        memset(handle, 0x5a, sizeof(handle));
        void *sc = NULL;
        CHECK(N->connect(ctx, sdev, handle, &sc, NULL) == GT_INVALID_ARGUMENT && !sc,
              "bad handle refused");
    }
    /* 3. The RTR transition fails (fault injected through the table): the
     * side that fails reports the step and errno; the other side sees its
     * peer vanish.  Both end in an error, neither hangs. */
    {
        real_modify_qp = gt_ibv.modify_qp;
        gt_ibv.modify_qp = faulty_modify_qp;
        inject_rtr_errno = ETIMEDOUT;
        char handle[GT_NET_HANDLE_MAXSIZE];
        void *lc = NULL, *sc = NULL, *rc = NULL;
        CHECK(N->listen(ctx, rdev, handle, &lc) == GT_OK, "listen");
        gt_result rs = GT_OK, ra = GT_OK;
        double t0 = now();
        while ((rs == GT_OK || ra == GT_OK) && now() - t0 < 10) {
            if (rs == GT_OK)
                rs = N->connect(ctx, sdev, handle, &sc, NULL);
            if (ra == GT_OK)
                ra = N->accept(lc, &rc, NULL);
            if (sc || rc)
                break;
        }
        inject_rtr_errno = 0;
        gt_ibv.modify_qp = real_modify_qp;
        CHECK(!sc && !rc, "no comm comes out of a failed setup");
        CHECK(rs != GT_OK && ra != GT_OK, "both ends report: connect %d, accept %d", rs, ra);
        printf("faults: injected RTR failure (ETIMEDOUT) -> connect error %d, accept error %d\n",
               rs, ra);
        N->close_listen(lc);
    }
    /* 4. An injected completion error: test() names the status, the QP and
     * the peer, and the comm stays failed. */
    {
        struct pair p;
        CHECK(connect_pair(&p, sdev, rdev) == GT_OK, "connect");
        size_t sz = 4096;
        char *sb = calloc(1, sz), *rb = calloc(1, sz);
        void *smh = NULL, *rmh = NULL, *rreq = NULL, *sreq = NULL, *d = rb;
        int tag = 2;
        N->reg_mr(p.sc, sb, sz, GT_PTR_HOST, &smh, NULL);
        N->reg_mr(p.rc, rb, sz, GT_PTR_HOST, &rmh, NULL);
        real_poll_cq = gt_ibv.poll_cq;
        gt_ibv.poll_cq = faulty_poll_cq;
        inject_wc = 1;
        double t0 = now();
        while (!rreq && now() - t0 < 10)
            N->irecv(p.rc, 1, &d, &sz, &tag, &rmh, NULL, &rreq);
        gt_result r = GT_OK;
        while (!sreq && r == GT_OK && now() - t0 < 10)
            r = N->isend(p.sc, sb, sz, tag, smh, NULL, &sreq);
        int done = 0;
        last_warn[0] = 0;
        while (r == GT_OK && !done && now() - t0 < 10)
            r = N->test(sreq, &done, NULL);
        gt_ibv.poll_cq = real_poll_cq;
        CHECK(r == GT_REMOTE_ERROR, "injected completion error: test() %d done %d", r, done);
        CHECK(strstr(last_warn, gt_ibv.wc_status_str(IBV_WC_RETRY_EXC_ERR)) &&
                  strstr(last_warn, "on QP") && strstr(last_warn, "with peer 10.0.0."),
              "the error names status, QP and peer: %s", last_warn);
        done = 0;
        CHECK(N->test(sreq, &done, NULL) == GT_REMOTE_ERROR && !done, "the error sticks");
        printf("faults: injected completion error -> test() %d: %s\n", r, last_warn);
        N->dereg_mr(p.sc, smh);
        N->dereg_mr(p.rc, rmh);
        close_pair(&p);
        free(sb);
        free(rb);
    }
    /* 5. A real work-completion error: the receiver's buffer is deregistered
     * after its clear-to-send went out, so the sender's RDMA WRITE meets an
     * invalid rkey.  Both ends must report, neither may hang. */
    {
        setenv("GDRTRACE_IB_TIMEOUT", "12", 1);
        setenv("GDRTRACE_IB_RETRY_CNT", "1", 1);
        gt_ib_params_read(&gt_ib_params, 1); /* read once per process, as NCCL */
        struct pair p;
        CHECK(connect_pair(&p, sdev, rdev) == GT_OK, "connect");
        size_t sz = 65536;
        char *sb = calloc(1, sz), *rb = calloc(1, sz);
        void *smh = NULL, *rmh = NULL, *rreq = NULL, *sreq = NULL;
        N->reg_mr(p.sc, sb, sz, GT_PTR_HOST, &smh, NULL);
        N->reg_mr(p.rc, rb, sz, GT_PTR_HOST, &rmh, NULL);
        void *d = rb;
        int tag = 1;
        double t0 = now();
        while (!rreq && now() - t0 < 10)
            N->irecv(p.rc, 1, &d, &sz, &tag, &rmh, NULL, &rreq);
        /* The clear-to-send carries rmh's rkey; invalidate it now. */
        N->dereg_mr(p.rc, rmh);
        sreq = NULL;
        t0 = now();
        gt_result r = GT_OK;
        while (!sreq && r == GT_OK && now() - t0 < 10)
            r = N->isend(p.sc, sb, sz, tag, smh, NULL, &sreq);
        int done = 0;
        t0 = now();
        while (r == GT_OK && !done && now() - t0 < 30)
            r = N->test(sreq, &done, NULL);
        CHECK(r == GT_REMOTE_ERROR, "sender sees the work-completion error: %d (done %d)", r, done);
        CHECK(strstr(last_warn, "remote access error") || strstr(last_warn, "Flushed"),
              "the error names the status: %s", last_warn);
        gt_result rr = GT_OK;
        done = 0;
        t0 = now();
        while (rr == GT_OK && !done && now() - t0 < 5)
            rr = N->test(rreq, &done, NULL);
        CHECK(rr != GT_OK, "receiver sees an error too: %d (done %d)", rr, done);
        printf("faults: real WC error -> sender %d, receiver %d (%.1f s)\n", r, rr, now() - t0);
        N->dereg_mr(p.sc, smh);
        close_pair(&p);
        free(sb);
        free(rb);
        unsetenv("GDRTRACE_IB_TIMEOUT");
        unsetenv("GDRTRACE_IB_RETRY_CNT");
        gt_ib_params_read(&gt_ib_params, 1);
    }
    N->finalize(ctx);
    return failures ? 1 : 0;
}

/* ---- DMA-BUF on a real vgem dma-buf fd ------------------------------- */

static int test_dmabuf(const char *expect)
{
    int ndev = do_init();
    if (!ndev)
        return 1;
    const char *reg = getenv("GDRTRACE_REG"), *allow = getenv("GDRTRACE_ALLOW_PEERMEM");
    printf("dmabuf: GDRTRACE_REG=%s GDRTRACE_ALLOW_PEERMEM=%s expect %s\n", reg ? reg : "(unset)",
           allow ? allow : "(unset)", expect);
    for (int i = 0; i < ndev; i++) {
        struct gt_dev_probe pb;
        N->get_probe(i, &pb);
        CHECK(pb.dmabuf == GT_PROBE_UNSUPPORTED && pb.dmabuf_errno == EOPNOTSUPP,
              "rxe DMA-BUF probe: state %d errno %d", pb.dmabuf, pb.dmabuf_errno);
        struct gt_props pr;
        N->get_properties(i, &pr);
        CHECK(!(pr.ptr_support & GT_PTR_DMABUF), "DMABUF not advertised: %#x", pr.ptr_support);
    }
    struct pair p;
    CHECK(connect_pair(&p, ndev > 1 ? 1 : 0, 0) == GT_OK, "connect");
    if (!p.rc)
        return 1;
    size_t size = 1 << 20;
    void *cpu = NULL;
    int fd = vgem_dmabuf(size, &cpu);
    CHECK(fd >= 0, "a vgem dma-buf");
    if (fd < 0)
        return 1;
    /* What the buffer's address is: for the fallback case a host buffer
     * stands in for GPU memory that nvidia_peermem would pin. */
    void *host = NULL;
    if (posix_memalign(&host, 4096, size) != 0)
        return 1;
    void *addr = strcmp(expect, "fallback") == 0 ? host : cpu;
    void *mh = NULL;
    struct gt_reg_report rep = {0};
    gt_result r = N->reg_mr_dmabuf(p.rc, addr, size, GT_PTR_CUDA, 0, fd, &mh, &rep);
    printf("dmabuf: regMrDmaBuf(fd %d) -> %d asked=%d method=%s reason=%s err=%d fell_back=%d\n",
           fd, r, rep.asked, gt_method_name(rep.method), gt_reg_reason_name(rep.reason), rep.err,
           rep.fell_back);
    CHECK(rep.asked == GT_ASKED_DMABUF, "asked");
    /* The first cause is recorded, unless the fallback itself failed. */
    int pf = !strcmp(expect, "peermemfails");
    CHECK(rep.err == (pf ? EFAULT : EOPNOTSUPP), "err %d", rep.err);
    CHECK(rep.reason == (pf ? GT_REASON_PEERMEM_REG_FAILED : GT_REASON_DMABUF_UNSUPPORTED),
          "reason %s", gt_reg_reason_name(rep.reason));
    if (!strcmp(expect, "notallowed") || !strcmp(expect, "nopeermem")) {
        CHECK(r != GT_OK && !mh && rep.method == GT_METHOD_FAILED && !rep.fell_back,
              "fails as configured");
    } else if (!strcmp(expect, "fallback")) {
        CHECK(r == GT_OK && mh && rep.method == GT_METHOD_PEERMEM && rep.fell_back,
              "falls back to peermem");
        /* The fallback registration carries real traffic. */
        if (r == GT_OK) {
            void *smh = NULL, *rreq = NULL, *sreq = NULL;
            char *sb = malloc(size);
            fill((unsigned char *)sb, size, 9);
            N->reg_mr(p.sc, sb, size, GT_PTR_HOST, &smh, NULL);
            int tag = 3;
            double t0 = now();
            while (!rreq && now() - t0 < 10)
                N->irecv(p.rc, 1, &addr, &size, &tag, &mh, NULL, &rreq);
            while (!sreq && now() - t0 < 10)
                N->isend(p.sc, sb, size, tag, smh, NULL, &sreq);
            int got = 0;
            CHECK(sreq && wait_req(sreq, NULL, 10) == GT_OK, "send");
            CHECK(rreq && wait_req(rreq, &got, 10) == GT_OK && got == (int)size, "recv");
            CHECK(first_diff(host, size, 9) == (size_t)-1, "fallback data");
            N->dereg_mr(p.sc, smh);
            N->dereg_mr(p.rc, mh);
            free(sb);
        }
    } else if (!strcmp(expect, "peermemfails")) {
        /* allowed and "present", but the address is a dma-buf mmap that
         * ibv_reg_mr cannot pin (EFAULT), so the fallback fails too. */
        CHECK(r != GT_OK && rep.fell_back && rep.method == GT_METHOD_FAILED, "fallback fails");
    } else
        CHECK(0, "unknown expectation %s", expect);
    /* NCCL closes the fd right after the call; nothing of ours may use it. */
    close(fd);
    close_pair(&p);
    N->finalize(ctx);
    free(host);
    printf("dmabuf %s: %s\n", expect, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

/* ---- bandwidth --------------------------------------------------------- */

static double now_coarse(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* COUNT messages of SIZE bytes with at most DEPTH sends (and DEPTH
 * receives) in flight: the same bytes and the same depth as
 * `ib_write_bw -s SIZE -n COUNT -t DEPTH`.  The receive side posts ahead of
 * the sender on its own, as NCCL's proxy does, so a clear-to-send is on its
 * way while earlier data is still on the wire.  The clock runs from the
 * first post to the last completion, as perftest's does.  The hot loop
 * reads only the coarse clock (for the drain limit); GT_BW_YIELD=1 calls
 * sched_yield() on a pass that completed nothing, as NCCL's proxy thread
 * does when idle. */
static int test_bw(size_t size, unsigned long count, unsigned long depth)
{
    int ndev = do_init();
    if (!ndev)
        return 1;
    struct pair p;
    CHECK(connect_pair(&p, ndev > 1 ? 1 : 0, 0) == GT_OK, "connect");
    if (!p.sc || !p.rc)
        return 1;
    enum { W = 32 };
    if (depth < 1)
        depth = 1;
    if (depth > W)
        depth = W;
    const char *y = getenv("GT_BW_YIELD");
    int yield = y && *y == '1';
    char *sb = malloc(size ? size : 1), *rb = malloc(size ? size * W : 1);
    memset(sb, 1, size);
    void *smh, *rmh;
    N->reg_mr(p.sc, sb, size, GT_PTR_HOST, &smh, NULL);
    N->reg_mr(p.rc, rb, size * W, GT_PTR_HOST, &rmh, NULL);
    void *rr[W] = {0}, *sr[W] = {0};
    unsigned long rposted = 0, sposted = 0, rdone = 0, sdone = 0;
    double t0 = now(), limit = now_coarse() + 60 + (double)count;
    gt_result err = GT_OK;
    while ((rdone < count || sdone < count) && err == GT_OK) {
        int moved = 0;
        while (rposted < count && rposted - rdone < depth && err == GT_OK) {
            int k = (int)(rposted % W);
            void *d = rb + (size_t)k * size;
            size_t sz = size;
            int tag = 0;
            err = N->irecv(p.rc, 1, &d, &sz, &tag, &rmh, NULL, &rr[k]);
            if (!rr[k])
                break;
            rposted++, moved = 1;
        }
        while (sposted < count && sposted - sdone < depth && err == GT_OK) {
            int k = (int)(sposted % W);
            err = N->isend(p.sc, sb, size, 0, smh, NULL, &sr[k]);
            if (!sr[k])
                break;
            sposted++, moved = 1;
        }
        while (sdone < sposted && err == GT_OK) {
            int k = (int)(sdone % W), done = 0;
            err = N->test(sr[k], &done, NULL);
            if (!done)
                break;
            sdone++, moved = 1;
        }
        while (rdone < rposted && err == GT_OK) {
            int k = (int)(rdone % W), done = 0;
            err = N->test(rr[k], &done, NULL);
            if (!done)
                break;
            rdone++, moved = 1;
        }
        if (!moved) {
            if (now_coarse() > limit) {
                printf("bw: no completion after %lu of %lu messages\n", rdone, count);
                return 1;
            }
            if (yield)
                sched_yield();
        }
    }
    if (err != GT_OK) {
        printf("bw: error %d\n", err);
        return 1;
    }
    double dt = now() - t0;
    double gbps = (double)count * (double)size * 8 / dt / 1e9;
    printf("@@BW size=%zu msgs=%lu depth=%lu seconds=%.3f gbps=%.3f qps=%s yield=%d\n", size, count,
           depth, dt, gbps, getenv("GDRTRACE_IB_QPS") ? getenv("GDRTRACE_IB_QPS") : "1", yield);
    N->dereg_mr(p.sc, smh);
    N->dereg_mr(p.rc, rmh);
    close_pair(&p);
    N->finalize(ctx);
    free(sb);
    free(rb);
    return 0;
}

/* ---- NCCL's variables on real verbs (guest.d/60-nccl-env.sh) ----------- */

/* ibv_query_qp is not in the gt_ibv table (the transport never reads a QP
 * back): the test takes it from libibverbs itself. */
typedef int (*query_qp_fn)(struct ibv_qp *, struct ibv_qp_attr *, int, struct ibv_qp_init_attr *);
static query_qp_fn load_query_qp(void)
{
    void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    void *f = h ? dlvsym(h, "ibv_query_qp", "IBVERBS_1.1") : NULL;
    query_qp_fn q;
    memcpy(&q, &f, sizeof(q));
    return f ? q : NULL;
}

/* The QPs of a connected pair carry what NCCL's variables ask (the caller
 * sets NCCL_IB_TC, _SL, _TIMEOUT, _QPS_PER_CONNECTION, …), read back with
 * ibv_query_qp on both sides; then data flows byte-checked. */
static int test_qpattrs(int tc, int sl, int timeout, int qps)
{
    query_qp_fn query_qp = load_query_qp();
    if (!query_qp) {
        printf("FAIL: ibv_query_qp not found: %s\n", dlerror());
        return 1;
    }
    int ndev = do_init();
    if (!ndev)
        return 1;
    struct pair p;
    CHECK(connect_pair(&p, ndev > 1 ? 1 : 0, 0) == GT_OK, "connect");
    if (!p.sc || !p.rc)
        return 1;
    struct ib_comm *side[2] = {p.sc, p.rc};
    for (int k = 0; k < 2; k++) {
        CHECK(side[k]->nqps == qps, "%s side: %d QPs, want %d", k ? "recv" : "send", side[k]->nqps,
              qps);
        for (int q = 0; q < side[k]->nqps; q++) {
            struct ibv_qp_attr a;
            struct ibv_qp_init_attr ia;
            memset(&a, 0, sizeof(a));
            int rc = query_qp(side[k]->qps[q], &a,
                              IBV_QP_STATE | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT, &ia);
            CHECK(rc == 0, "ibv_query_qp: %s", strerror(rc));
            printf("%s QP %d: state %d tc %d sl %d timeout %d retry %d gid index %d\n",
                   k ? "recv" : "send", q, a.qp_state, a.ah_attr.grh.traffic_class, a.ah_attr.sl,
                   a.timeout, a.retry_cnt, a.ah_attr.grh.sgid_index);
            CHECK(a.qp_state == IBV_QPS_RTS, "state %d", a.qp_state);
            CHECK(a.ah_attr.grh.traffic_class == tc, "tc %d, want %d", a.ah_attr.grh.traffic_class,
                  tc);
            /* rxe keeps no SL for RoCE: its query_qp rebuilds ah_attr from
             * the GRH and port alone (rxe_av_to_attr), so it reads back 0
             * whatever modify_qp set.  SL is an InfiniBand LRH field; on
             * RoCE the priority travels as the traffic class checked above.
             * How NCCL_IB_SL resolves is checked in test_ib_dev. */
            if (a.ah_attr.is_global == 0)
                CHECK(a.ah_attr.sl == sl, "sl %d, want %d", a.ah_attr.sl, sl);
            CHECK(a.timeout == timeout, "timeout %d, want %d", a.timeout, timeout);
        }
    }
    static const size_t sizes[] = {0, 1, 4097, 1 << 20};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
        round_trip(&p, 1, &sizes[k], 900u + (unsigned)k, 0);
    printf("qpattrs: tc %d sl %d timeout %d qps %d, data byte-checked: %s\n", tc, sl, timeout, qps,
           failures ? "FAILED" : "ok");
    close_pair(&p);
    N->finalize(ctx);
    return failures ? 1 : 0;
}

/* Each device's GID index is the one given as "name=index" (every device
 * named once); with data, a connection on those GIDs moves bytes checked. */
static int test_gid(int argc, char **argv, int data)
{
    int ndev = do_init();
    CHECK(ndev == argc, "%d device(s), %d expectations", ndev, argc);
    for (int i = 0; i < ndev; i++) {
        char want[80];
        int found = 0;
        printf("device %d: %s:%d gid index %d\n", i, gt_ib_devs[i].name, gt_ib_devs[i].port,
               gt_ib_devs[i].gid_index);
        for (int k = 0; k < argc && !found; k++) {
            const char *eq = strchr(argv[k], '=');
            if (eq && (size_t)(eq - argv[k]) == strlen(gt_ib_devs[i].name) &&
                !strncmp(argv[k], gt_ib_devs[i].name, (size_t)(eq - argv[k]))) {
                found = 1;
                snprintf(want, sizeof(want), "%s", eq + 1);
            }
        }
        CHECK(found && atoi(want) == gt_ib_devs[i].gid_index, "%s: gid index %d, want %s",
              gt_ib_devs[i].name, gt_ib_devs[i].gid_index, found ? want : "(not given)");
    }
    if (data && ndev > 0) {
        struct pair p;
        CHECK(connect_pair(&p, ndev > 1 ? 1 : 0, 0) == GT_OK, "connect");
        size_t sz = 65537;
        if (p.sc && p.rc)
            round_trip(&p, 1, &sz, 55u, 0);
        close_pair(&p);
    }
    if (ndev > 0)
        N->finalize(ctx);
    return failures ? 1 : 0;
}

/* ---- NCCL's protocol on real verbs: work requests per message ---------- */

/* The data path's table slots, wrapped to count what goes to the device
 * (the table is the tests' seam, gt_ibv.h). */
static int (*real_post_send)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);
static int (*real_poll_cq)(struct ibv_cq *, int, struct ibv_wc *);
static struct ib_comm *P_s, *P_r;
static long p_writes, p_imm, p_imm0, p_signaled, p_cts, p_scqe, p_rcqe;
static int count_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    int sender = 0;
    for (int q = 0; P_s && q < P_s->nqps; q++)
        sender |= P_s->qps[q] == qp;
    for (struct ibv_send_wr *w = wr; w; w = w->next) {
        size_t len = 0;
        for (int i = 0; i < w->num_sge; i++)
            len += w->sg_list[i].length;
        if (!sender)
            p_cts += w->opcode == IBV_WR_RDMA_WRITE;
        else if (w->opcode == IBV_WR_RDMA_WRITE)
            p_writes++;
        else if (w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
            p_imm++, p_imm0 += len == 0;
        p_signaled += sender && (w->send_flags & IBV_SEND_SIGNALED);
    }
    return real_post_send(qp, wr, bad);
}
static int count_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    int k = real_poll_cq(cq, n, wc);
    for (int i = 0; i < k; i++) {
        if (P_s && cq == P_s->cq)
            p_scqe++;
        else if (P_r && cq == P_r->cq && wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM)
            p_rcqe++;
    }
    return k;
}

/* 64 messages of each size one after another, counted per message, for 1
 * and 4 QPs, split or not, adaptive routing off and forced on (RoCE's
 * default is off): what test_ib_data pins on its model, here on rxe. */
static int test_proto(void)
{
    int ndev = do_init();
    if (!ndev)
        return 1;
    real_post_send = gt_ibv.post_send;
    real_poll_cq = gt_ibv.poll_cq;
    gt_ibv.post_send = count_post_send;
    gt_ibv.poll_cq = count_poll_cq;
    static const struct {
        int qps, split, ar;
        size_t size;
        long writes, imm, imm0; /* per message */
    } cases[] = {
        {1, 0, 0, 8, 0, 1, 0},     {1, 0, 0, 65536, 0, 1, 0}, {4, 0, 0, 8, 0, 1, 0},
        {4, 0, 0, 65536, 0, 1, 0}, {4, 1, 0, 65536, 0, 4, 0}, {1, 0, 1, 65536, 1, 1, 1},
        {1, 0, 1, 8192, 0, 1, 0},  {4, 0, 1, 65536, 1, 1, 1}, {4, 1, 1, 65536, 4, 4, 4},
        {1, 0, 0, 0, 0, 1, 1},
    };
    enum { M = 64 };
    char *sb = malloc(65536), *rb = malloc(65536);
    fill((unsigned char *)sb, 65536, 3);
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        gt_ib_params.qps = cases[k].qps;
        gt_ib_params.split = cases[k].split;
        for (int d = 0; d < ndev; d++)
            gt_ib_devs[d].ar = cases[k].ar;
        struct pair p;
        CHECK(connect_pair(&p, ndev > 1 ? 1 : 0, 0) == GT_OK, "connect");
        if (!p.sc || !p.rc)
            return 1;
        P_s = p.sc, P_r = p.rc;
        void *smh, *rmh;
        N->reg_mr(p.sc, sb, 65536, GT_PTR_HOST, &smh, NULL);
        N->reg_mr(p.rc, rb, 65536, GT_PTR_HOST, &rmh, NULL);
        p_writes = p_imm = p_imm0 = p_signaled = p_cts = p_scqe = p_rcqe = 0;
        size_t sz = cases[k].size;
        int ok = 1;
        for (int m = 0; m < M && ok; m++) {
            void *rr = NULL, *sr = NULL, *d = rb;
            size_t rs = 65536;
            int tag = 0, got = -1;
            while (!rr && N->irecv(p.rc, 1, &d, &rs, &tag, &rmh, NULL, &rr) == GT_OK)
                ;
            while (rr && !sr && N->isend(p.sc, sb, sz, 0, smh, NULL, &sr) == GT_OK)
                ;
            ok = rr && sr && wait_req(sr, NULL, 10) == GT_OK && wait_req(rr, &got, 10) == GT_OK &&
                 got == (int)sz && memcmp(rb, sb, sz) == 0;
        }
        int nq = cases[k].split ? cases[k].qps : 1;
        printf(
            "proto %d QP(s) split %d ar %d size %zu: per message %.2f WRITE, %.2f WRITE_WITH_IMM "
            "(%.2f empty), %.2f signaled, %.2f send and %.2f receive completions; %ld "
            "clear-to-send writes\n",
            cases[k].qps, cases[k].split, cases[k].ar, sz, (double)p_writes / M, (double)p_imm / M,
            (double)p_imm0 / M, (double)p_signaled / M, (double)p_scqe / M, (double)p_rcqe / M,
            p_cts);
        CHECK(ok, "64 messages of %zu bytes arrive whole", sz);
        CHECK(p_writes == M * cases[k].writes && p_imm == M * cases[k].imm &&
                  p_imm0 == M * cases[k].imm0 && p_signaled == M * nq && p_scqe == M * nq &&
                  p_rcqe == M * nq && p_cts == M,
              "NCCL's work requests and completions per message");
        N->dereg_mr(p.sc, smh);
        N->dereg_mr(p.rc, rmh);
        close_pair(&p);
        P_s = P_r = NULL;
    }
    gt_ibv.post_send = real_post_send;
    gt_ibv.poll_cq = real_poll_cq;
    free(sb);
    free(rb);
    N->finalize(ctx);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && !strcmp(argv[1], "data"))
        return test_data();
    if (argc >= 2 && !strcmp(argv[1], "faults"))
        return test_faults();
    if (argc >= 2 && !strcmp(argv[1], "proto"))
        return test_proto();
    if (argc >= 3 && !strcmp(argv[1], "dmabuf")) {
        if (!strcmp(argv[2], "fallback") || !strcmp(argv[2], "peermemfails"))
            fake_peermem();
        return test_dmabuf(argv[2]);
    }
    if (argc >= 3 && !strcmp(argv[1], "devices")) {
        /* GDRTRACE_IB_HCA decides which ports become devices. */
        int want = atoi(argv[2]), n = 0;
        if (N->init(&ctx, 0, 0, NULL, capture_logger, NULL) == GT_OK) {
            N->devices(&n);
            for (int i = 0; i < n; i++) {
                struct gt_props pr;
                N->get_properties(i, &pr);
                printf("device %d: %s\n", i, pr.name);
            }
            N->finalize(ctx);
        }
        printf("HCA filter %s: %d device(s), want %d\n",
               gt_ib_params.s_hca.origin[0] ? gt_ib_params.s_hca.origin : "(unset)", n, want);
        return n == want ? 0 : 1;
    }
    if (argc >= 6 && !strcmp(argv[1], "qpattrs"))
        return test_qpattrs(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    if (argc >= 3 && !strcmp(argv[1], "gid") && !strcmp(argv[2], "-n"))
        return test_gid(argc - 3, argv + 3, 0);
    if (argc >= 2 && !strcmp(argv[1], "gid"))
        return test_gid(argc - 2, argv + 2, 1);
    if (argc >= 5 && !strcmp(argv[1], "bw"))
        return test_bw(strtoull(argv[2], NULL, 0), strtoul(argv[3], NULL, 0),
                       strtoul(argv[4], NULL, 0));
    fprintf(
        stderr,
        "usage: %s data | faults | proto | dmabuf EXPECT | devices N | qpattrs TC SL TIMEOUT QPS | "
        "gid [-n] DEV=INDEX... | bw SIZE COUNT DEPTH\n",
        argv[0]);
    return 2;
}
