/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ib_conn.c — ib's connection setup (listen/connect/accept) over real
 * loopback TCP with fake verbs (gt_ibv_install: QPs, CQ and MR are
 * placeholders, every transition succeeds), so the out-of-band hardening is
 * checked in every build, without RDMA:
 *   - the listener binds the chosen interface's address, not INADDR_ANY;
 *   - a scanner's connect+close, an HTTP request, garbage, an idle
 *     connection and 70 idle connections each leave accept() returning
 *     GT_OK (no comm), and the real peer then completes within seconds;
 *   - an authenticated peer that stalls after its hello fails accept()
 *     with a clear error at the deadline instead of hanging.
 * And NCCL's QP variables (NCCL_IB_TC, _SL, _TIMEOUT, _RETRY_CNT, _PKEY,
 * _QPS_PER_CONNECTION) reach the attributes of both sides' QPs.
 * GDRTRACE_OOB_TIMEOUT_MS=300 keeps it fast.  The Soft-RoCE VM test runs
 * the same stray-connection scenario on real verbs (gt_ib_vmtest stray).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/ib/ib.h"
#include "plugin/oob/oob.h"

/* ---- fake verbs ------------------------------------------------------------ */

/* What the code asked of the QPs, transition by transition. */
static struct {
    int creates, inits, rtrs, rtss;
    int pkey_index, sl, tc, is_global, timeout, retry_cnt, rnr_retry;
    int tc_count[256]; /* RTRs per traffic class */
} seen;
static uint32_t next_qpn = 100;
static struct ibv_cq *fake_create_cq(struct ibv_context *c, int cqe, void *ctx,
                                     struct ibv_comp_channel *ch, int v)
{
    (void)c, (void)cqe, (void)ctx, (void)ch, (void)v;
    return calloc(1, sizeof(struct ibv_cq));
}
static int fake_destroy_cq(struct ibv_cq *cq)
{
    free(cq);
    return 0;
}
static struct ibv_mr *fake_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    (void)pd, (void)access;
    struct ibv_mr *m = calloc(1, sizeof(*m));
    m->addr = addr;
    m->length = len;
    m->lkey = m->rkey = 7;
    return m;
}
static int fake_dereg_mr(struct ibv_mr *mr)
{
    free(mr);
    return 0;
}
static struct ibv_qp *fake_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
    (void)pd, (void)a;
    struct ibv_qp *q = calloc(1, sizeof(*q));
    q->qp_num = next_qpn++;
    seen.creates++;
    return q;
}
static int fake_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    (void)qp;
    if (a->qp_state == IBV_QPS_INIT && (mask & IBV_QP_PKEY_INDEX)) {
        seen.inits++;
        seen.pkey_index = a->pkey_index;
    } else if (a->qp_state == IBV_QPS_RTR && (mask & IBV_QP_AV)) {
        seen.rtrs++;
        seen.sl = a->ah_attr.sl;
        seen.tc = a->ah_attr.grh.traffic_class;
        seen.tc_count[a->ah_attr.grh.traffic_class]++;
        seen.is_global = a->ah_attr.is_global;
    } else if (a->qp_state == IBV_QPS_RTS && (mask & IBV_QP_TIMEOUT)) {
        seen.rtss++;
        seen.timeout = a->timeout;
        seen.retry_cnt = a->retry_cnt;
        seen.rnr_retry = a->rnr_retry;
    }
    return 0;
}
/* ECE: each QP's own is 0x100 | its number; what was set, in order. */
static int ece_queries, ece_sets, ece_fail_query;
static uint32_t ece_set_qpn[32], ece_set_opt[32];
static int fake_query_ece(struct ibv_qp *qp, struct ibv_ece *e)
{
    ece_queries++;
    if (ece_fail_query)
        return EOPNOTSUPP;
    e->vendor_id = 0x15b3;
    e->options = 0x100u | qp->qp_num;
    e->comp_mask = 0;
    return 0;
}
static int fake_set_ece(struct ibv_qp *qp, struct ibv_ece *e)
{
    assert_int_equal(e->vendor_id, 0x15b3);
    if (ece_sets < 32) {
        ece_set_qpn[ece_sets] = qp->qp_num;
        ece_set_opt[ece_sets] = e->options;
    }
    ece_sets++;
    return 0;
}
static int fake_destroy_qp(struct ibv_qp *qp)
{
    free(qp);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    setenv("GDRTRACE_OOB_TIMEOUT_MS", "300", 1);
    setenv("GDRTRACE_IB_OOB_IF", "lo", 1);
    struct gt_ibv_fns t = {.create_cq = fake_create_cq,
                           .destroy_cq = fake_destroy_cq,
                           .reg_mr = fake_reg_mr,
                           .dereg_mr = fake_dereg_mr,
                           .create_qp = fake_create_qp,
                           .modify_qp = fake_modify_qp,
                           .destroy_qp = fake_destroy_qp,
                           .query_ece = fake_query_ece,
                           .set_ece = fake_set_ece};
    gt_ibv_install(&t);
    struct gt_ib_dev *d = &gt_ib_devs[0];
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "fake0");
    d->port = 1;
    d->link_layer = IBV_LINK_LAYER_ETHERNET;
    d->mtu = IBV_MTU_1024;
    d->max_qp_wr = 4096;
    gt_ib_ndevs = 1;
    gt_ib_params_read(&gt_ib_params, 1); /* what the devices' open reads */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gt_ib_ndevs = 0;
    gt_ibv_reset();
    return 0;
}

/* ---- helpers ----------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The listener's address, from the handle as a connector would read it. */
static struct sockaddr_in handle_addr(const void *handle)
{
    union gt_oob_addr a;
    uint64_t nonce;
    char why[160];
    assert_int_equal(gt_oob_handle_decode(handle, GT_NET_HANDLE_MAXSIZE, GT_IB_MAGIC,
                                          GT_IB_WIRE_VERSION, "ib", &a, &nonce, why, sizeof(why)),
                     GT_OK);
    return a.in4;
}

static int tcp_to(const struct sockaddr_in *sa)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Calls accept a few times (as NCCL's proxy would while the stray sits
 * there); every call must say GT_OK and return no comm. */
static void accept_quietly(void *lc, double secs)
{
    double end = now_s() + secs;
    while (now_s() < end) {
        void *rc = NULL;
        assert_int_equal(gt_ib_ops.accept(lc, &rc, NULL), GT_OK);
        assert_null(rc);
        usleep(2000);
    }
}

/* Drives the real peer's connect and the listener's accept to completion,
 * as NCCL does; fails when it takes more than 5 s. */
static void real_peer_completes(void *lc, char *handle)
{
    void *sc = NULL, *rc = NULL;
    double end = now_s() + 5;
    while ((!sc || !rc) && now_s() < end) {
        if (!sc)
            assert_int_equal(gt_ib_ops.connect(NULL, 0, handle, &sc, NULL), GT_OK);
        if (!rc)
            assert_int_equal(gt_ib_ops.accept(lc, &rc, NULL), GT_OK);
    }
    assert_non_null(sc);
    assert_non_null(rc);
    gt_ib_ops.close_send(sc);
    gt_ib_ops.close_recv(rc);
}

static void *listen_on(char *handle)
{
    void *lc = NULL;
    assert_int_equal(gt_ib_ops.listen(NULL, 0, handle, &lc), GT_OK);
    assert_non_null(lc);
    return lc;
}

/* ---- tests ------------------------------------------------------------------- */

static void plain_pair(void **state)
{
    (void)state;
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = listen_on(handle);
    real_peer_completes(lc, handle);
    gt_ib_ops.close_listen(lc);
}

/* The out-of-band address follows NCCL_SOCKET_FAMILY as NCCL's does:
 * AF_INET6 on lo gives ::1 in the handle, and the pair connects over it;
 * AF_INET gives 127.0.0.1 (the old code was IPv4 only). */
static void oob_follows_socket_family(void **state)
{
    (void)state;
    unsetenv("GDRTRACE_IB_OOB_IF");
    setenv("NCCL_SOCKET_IFNAME", "lo", 1);
    static const struct {
        const char *family;
        int af;
    } c[] = {{"AF_INET6", AF_INET6}, {"AF_INET", AF_INET}};
    for (int k = 0; k < 2; k++) {
        setenv("NCCL_SOCKET_FAMILY", c[k].family, 1);
        char handle[GT_NET_HANDLE_MAXSIZE];
        void *lc = listen_on(handle);
        union gt_oob_addr a;
        uint64_t nonce;
        char why[128];
        assert_int_equal(gt_oob_handle_decode(handle, sizeof(handle), GT_IB_MAGIC,
                                              GT_IB_WIRE_VERSION, "ib", &a, &nonce, why,
                                              sizeof(why)),
                         GT_OK);
        assert_int_equal(a.sa.sa_family, c[k].af);
        if (c[k].af == AF_INET6)
            assert_memory_equal(&a.in6.sin6_addr, &in6addr_loopback, 16);
        real_peer_completes(lc, handle);
        gt_ib_ops.close_listen(lc);
    }
    unsetenv("NCCL_SOCKET_FAMILY");
    unsetenv("NCCL_SOCKET_IFNAME");
    setenv("GDRTRACE_IB_OOB_IF", "lo", 1);
}

/* Bound to 127.0.0.1 (GDRTRACE_IB_OOB_IF=lo): another loopback address of
 * the same host is refused, which INADDR_ANY would have accepted. */
static void listens_on_chosen_address_only(void **state)
{
    (void)state;
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = listen_on(handle);
    struct sockaddr_in sa = handle_addr(handle);
    assert_int_equal(sa.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    sa.sin_addr.s_addr = htonl(0x7f000002); /* 127.0.0.2 */
    int fd = tcp_to(&sa);
    if (fd >= 0)
        close(fd);
    assert_true(fd < 0);
    assert_int_equal(errno, ECONNREFUSED);
    gt_ib_ops.close_listen(lc);
}

static void scanner_connect_close(void **state)
{
    (void)state;
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = listen_on(handle);
    struct sockaddr_in sa = handle_addr(handle);
    for (int i = 0; i < 3; i++) {
        int fd = tcp_to(&sa);
        assert_true(fd >= 0);
        close(fd);
    }
    accept_quietly(lc, 0.05);
    real_peer_completes(lc, handle);
    gt_ib_ops.close_listen(lc);
}

static void http_request(void **state)
{
    (void)state;
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = listen_on(handle);
    struct sockaddr_in sa = handle_addr(handle);
    int fd = tcp_to(&sa);
    assert_true(fd >= 0);
    const char req[] = "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl/8.0\r\n\r\n";
    assert_int_equal(send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(req) - 1);
    accept_quietly(lc, 0.05);
    real_peer_completes(lc, handle);
    close(fd);
    gt_ib_ops.close_listen(lc);
}

static void garbage(void **state)
{
    (void)state;
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = listen_on(handle);
    struct sockaddr_in sa = handle_addr(handle);
    int fd = tcp_to(&sa);
    assert_true(fd >= 0);
    uint8_t junk[600];
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)(i * 131 + 7);
    assert_int_equal(send(fd, junk, sizeof(junk), MSG_NOSIGNAL), (ssize_t)sizeof(junk));
    accept_quietly(lc, 0.05);
    real_peer_completes(lc, handle);
    close(fd);
    gt_ib_ops.close_listen(lc);
}

static void idle_connection(void **state)
{
    (void)state;
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = listen_on(handle);
    struct sockaddr_in sa = handle_addr(handle);
    int fd = tcp_to(&sa);
    assert_true(fd >= 0);
    accept_quietly(lc, 0.05); /* the idle one is taken in before the peer comes */
    real_peer_completes(lc, handle);
    close(fd);
    gt_ib_ops.close_listen(lc);
}

static void many_idle_connections(void **state)
{
    (void)state;
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = listen_on(handle);
    struct sockaddr_in sa = handle_addr(handle);
    enum { N = 70 }; /* more than the pending table holds */
    int fds[N];
    for (int i = 0; i < N; i++) {
        fds[i] = tcp_to(&sa);
        assert_true(fds[i] >= 0);
    }
    accept_quietly(lc, 0.05);
    real_peer_completes(lc, handle);
    for (int i = 0; i < N; i++)
        close(fds[i]);
    gt_ib_ops.close_listen(lc);
}

/* A peer that knows the nonce but stops after its hello: accept fails with a
 * clear error at the deadline (the peer is authenticated, so this is the
 * real peer failing, not a stranger), never hangs. */
static void authenticated_peer_stalls(void **state)
{
    (void)state;
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = listen_on(handle);
    void *sc = NULL, *rc = NULL;
    /* connect until the hello and setup message went out, then stop */
    for (int i = 0; i < 50 && !rc; i++) {
        assert_int_equal(gt_ib_ops.connect(NULL, 0, handle, &sc, NULL), GT_OK);
        usleep(1000);
    }
    assert_null(sc);
    double t0 = now_s();
    gt_result r = GT_OK;
    while (r == GT_OK && now_s() - t0 < 5) {
        r = gt_ib_ops.accept(lc, &rc, NULL);
        assert_null(rc);
    }
    assert_int_equal(r, GT_REMOTE_ERROR);
    assert_true(now_s() - t0 < 2);
    /* The connector finishes or fails on its own (the acceptor answered
     * before it gave up); either way its state leaves the handle. */
    r = GT_OK;
    for (int i = 0; i < 1000 && r == GT_OK && !sc; i++) {
        r = gt_ib_ops.connect(NULL, 0, handle, &sc, NULL);
        usleep(1000);
    }
    assert_true(r != GT_OK || sc);
    if (sc)
        gt_ib_ops.close_send(sc);
    gt_ib_ops.close_listen(lc);
}

/* NCCL's QP variables reach the QPs of both sides (RoCE device: global
 * routing); our GDRTRACE_* twin overrides one; NCCL's defaults otherwise. */
static void nccl_settings_reach_qps(void **state)
{
    (void)state;
    static const char *const vars[][2] = {
        {"NCCL_IB_TC", "106"},      {"NCCL_IB_SL", "3"},   {"NCCL_IB_TIMEOUT", "22"},
        {"NCCL_IB_RETRY_CNT", "5"}, {"NCCL_IB_PKEY", "2"}, {"NCCL_IB_QPS_PER_CONNECTION", "4"}};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        setenv(vars[i][0], vars[i][1], 1);
    gt_ib_params_read(&gt_ib_params, 1);
    memset(&seen, 0, sizeof(seen));
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = listen_on(handle);
    real_peer_completes(lc, handle);
    gt_ib_ops.close_listen(lc);
    assert_int_equal(seen.creates, 9); /* 4 QPs on each side, the receiver's flush QP */
    assert_int_equal(seen.inits, 9);
    assert_int_equal(seen.rtrs, 9);
    assert_int_equal(seen.rtss, 9);
    assert_int_equal(seen.pkey_index, 2);
    assert_int_equal(seen.sl, 3);
    assert_int_equal(seen.tc, 106);
    assert_int_equal(seen.is_global, 1);
    assert_int_equal(seen.timeout, 22);
    assert_int_equal(seen.retry_cnt, 5);
    assert_int_equal(seen.rnr_retry, 7);

    setenv("GDRTRACE_IB_TC", "41", 1); /* the twin overrides */
    setenv("NCCL_IB_QPS_PER_CONNECTION", "1", 1);
    gt_ib_params_read(&gt_ib_params, 1);
    memset(&seen, 0, sizeof(seen));
    lc = listen_on(handle);
    real_peer_completes(lc, handle);
    gt_ib_ops.close_listen(lc);
    assert_int_equal(seen.creates, 3);
    assert_int_equal(seen.tc, 41);
    unsetenv("GDRTRACE_IB_TC");

    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i][0]);
    gt_ib_params_read(&gt_ib_params, 1); /* NCCL's defaults */
    memset(&seen, 0, sizeof(seen));
    lc = listen_on(handle);
    real_peer_completes(lc, handle);
    gt_ib_ops.close_listen(lc);
    assert_int_equal(seen.creates, 3);
    assert_int_equal(seen.pkey_index, 0);
    assert_int_equal(seen.sl, 0);
    assert_int_equal(seen.tc, 0);
    assert_int_equal(seen.timeout, 20);
    assert_int_equal(seen.retry_cnt, 7);
}

/* NCCL_IB_FIFO_TC: the receiver's data QPs, which send only its
 * clear-to-send writes, get that class (RoCE); the sender's QPs and the
 * receiver's flush QP keep the data's (NCCL's ncclIbRtrQp fifoTc). And
 * NCCL_IB_TIMEOUT=0 (verbs: no timeout) reaches the QPs as NCCL passes it. */
static void fifo_tc_and_timeout_zero(void **state)
{
    (void)state;
    setenv("NCCL_IB_TC", "106", 1);
    setenv("NCCL_IB_FIFO_TC", "50", 1);
    setenv("NCCL_IB_TIMEOUT", "0", 1);
    const char *qps[] = {"1", "4"};
    for (int k = 0; k < 2; k++) {
        setenv("NCCL_IB_QPS_PER_CONNECTION", qps[k], 1);
        gt_ib_params_read(&gt_ib_params, 1);
        assert_int_equal(gt_ib_params.s_timeout.source, GT_SRC_NCCL);
        memset(&seen, 0, sizeof(seen));
        char handle[GT_NET_HANDLE_MAXSIZE];
        void *lc = listen_on(handle);
        real_peer_completes(lc, handle);
        gt_ib_ops.close_listen(lc);
        int n = atoi(qps[k]);
        assert_int_equal(seen.rtrs, 2 * n + 1);
        assert_int_equal(seen.tc_count[50], n);      /* the receiver's data QPs */
        assert_int_equal(seen.tc_count[106], n + 1); /* the sender's, the flush QP */
        assert_int_equal(seen.timeout, 0);
    }
    unsetenv("NCCL_IB_FIFO_TC"); /* unset: the data's class everywhere */
    setenv("NCCL_IB_QPS_PER_CONNECTION", "1", 1);
    gt_ib_params_read(&gt_ib_params, 1);
    memset(&seen, 0, sizeof(seen));
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = listen_on(handle);
    real_peer_completes(lc, handle);
    gt_ib_ops.close_listen(lc);
    assert_int_equal(seen.tc_count[106], 3);
    unsetenv("NCCL_IB_TC");
    unsetenv("NCCL_IB_TIMEOUT");
    unsetenv("NCCL_IB_QPS_PER_CONNECTION");
    gt_ib_params_read(&gt_ib_params, 1);
}

/* ECE as NCCL negotiates it: the acceptor sets the connector's ECE on each
 * of its QPs, the connector then the reduced one the acceptor's device
 * accepted (here: the acceptor QP's own); NCCL_IB_ECE_ENABLE=0, or a
 * provider without it, sets none. */
static void ece_negotiated(void **state)
{
    (void)state;
    setenv("NCCL_IB_QPS_PER_CONNECTION", "2", 1);
    gt_ib_params_read(&gt_ib_params, 1);
    ece_queries = ece_sets = 0;
    next_qpn = 200;
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = listen_on(handle);
    real_peer_completes(lc, handle);
    gt_ib_ops.close_listen(lc);
    /* connector QPs 200, 201; acceptor QPs 202, 203 (then its flush QP) */
    assert_int_equal(ece_sets, 4);
    assert_int_equal(ece_set_qpn[0], 202);
    assert_int_equal(ece_set_opt[0], 0x100 | 200);
    assert_int_equal(ece_set_qpn[1], 203);
    assert_int_equal(ece_set_opt[1], 0x100 | 201);
    assert_int_equal(ece_set_qpn[2], 200);
    assert_int_equal(ece_set_opt[2], 0x100 | 202);
    assert_int_equal(ece_set_qpn[3], 201);
    assert_int_equal(ece_set_opt[3], 0x100 | 203);

    ece_queries = ece_sets = 0;
    ece_fail_query = 1; /* the provider has no ECE */
    lc = listen_on(handle);
    real_peer_completes(lc, handle);
    gt_ib_ops.close_listen(lc);
    assert_int_equal(ece_sets, 0);
    ece_fail_query = 0;

    setenv("NCCL_IB_ECE_ENABLE", "0", 1);
    gt_ib_params_read(&gt_ib_params, 1);
    ece_queries = ece_sets = 0;
    lc = listen_on(handle);
    real_peer_completes(lc, handle);
    gt_ib_ops.close_listen(lc);
    assert_int_equal(ece_queries + ece_sets, 0);
    unsetenv("NCCL_IB_ECE_ENABLE");
    unsetenv("NCCL_IB_QPS_PER_CONNECTION");
    gt_ib_params_read(&gt_ib_params, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_pair),
        cmocka_unit_test(oob_follows_socket_family),
        cmocka_unit_test(listens_on_chosen_address_only),
        cmocka_unit_test(scanner_connect_close),
        cmocka_unit_test(http_request),
        cmocka_unit_test(garbage),
        cmocka_unit_test(idle_connection),
        cmocka_unit_test(many_idle_connections),
        cmocka_unit_test(authenticated_peer_stalls),
        cmocka_unit_test(nccl_settings_reach_qps),
        cmocka_unit_test(fifo_tc_and_timeout_zero),
        cmocka_unit_test(ece_negotiated),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
