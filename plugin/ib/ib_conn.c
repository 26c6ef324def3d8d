/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ib_conn.c — connection setup of the RDMA verbs transport: init and device
 * queries, QP creation and the INIT -> RTR -> RTS transitions, and
 * listen/connect/accept over the shared out-of-band module (plugin/oob).
 *
 * Setup (the connector drives it from connect(), the acceptor from accept();
 * every step is non-blocking):
 *  1. The handle (plugin/oob layout, magic GTIB) carries the listener's
 *     address, port and nonce; the connector keeps its in-progress comm in the
 *     handle's private bytes (NCCL hands the same buffer back on each retry).
 *  2. Connector -> acceptor: the out-of-band hello (nonce, random connection
 *     id) followed by its setup message (struct ib_wire: QPNs, PSNs, GID/LID,
 *     MTU, its FIFO's address/rkey).  The listener (plugin/oob) holds strangers
 *     in its pending table until their hello and message are complete and
 *     valid (gt_ib_check_setup); nothing a stranger does fails accept().
 *  3. Acceptor: creates its QPs, moves them to RTS toward the connector's,
 *     answers with its own ib_wire (completion records' address/rkey).
 *  4. Connector: checks it (nonce included), moves its QPs to RTS and sends
 *     one "ready" byte, after which the acceptor's accept() returns.
 * Invariants:
 *  - Steps 3–4 run for one authenticated connection at a time per listener,
 *    bounded by that connection's out-of-band deadline: an authenticated
 *    peer that stalls or vanishes fails accept() with a message naming it
 *    (it is the real peer failing), a stranger never does.
 *  - After setup the socket stays open as the liveness channel (ib_data.c).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/env.h"
#include "common/log.h"
#include "common/nccl_env.h"
#include "common/settings.h"
#include "plugin/ib/ib_net.h"

/* Connector-private state in the handle's bytes from GT_OOB_HANDLE_PRIVATE. */
struct ib_stage {
    uint64_t magic;
    struct ib_comm *c;
};
#define STAGE_MAGIC 0x5354414745494231ull
_Static_assert(GT_OOB_HANDLE_PRIVATE + sizeof(struct ib_stage) <= GT_NET_HANDLE_MAXSIZE,
               "the stage fits the handle");

/* ---- helpers ----------------------------------------------------------- */

static uint32_t rand24(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    static __thread uint32_t x;
    x = x * 1103515245u + 12345u + (uint32_t)ts.tv_nsec + (uint32_t)getpid();
    return x & 0xffffff;
}

/* ---- QPs --------------------------------------------------------------- */

static struct ibv_qp *create_qp(struct ib_comm *c, int sq, int rq)
{
    struct ibv_qp_init_attr ia;
    memset(&ia, 0, sizeof(ia));
    ia.send_cq = c->cq;
    ia.recv_cq = c->cq;
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = (uint32_t)sq;
    ia.cap.max_recv_wr = (uint32_t)rq;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    struct ibv_qp *qp = gt_ibv.create_qp(c->dev->pd, &ia);
    if (!qp)
        return NULL;
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = (uint16_t)gt_ib_params.pkey; /* NCCL_IB_PKEY is an index */
    a.port_num = c->dev->port;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    int rc = gt_ibv.modify_qp(qp, &a,
                              IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (rc) {
        gt_ibv.destroy_qp(qp);
        errno = rc;
        return NULL;
    }
    return qp;
}

void gt_ib_fill_ah(const struct gt_ib_dev *d, const uint8_t rgid[16], uint16_t rlid, int sl, int tc,
                   struct ibv_ah_attr *ah)
{
    memset(ah, 0, sizeof(*ah));
    ah->port_num = d->port;
    ah->sl = (uint8_t)sl;
    int global = 1;
    if (d->link_layer != IBV_LINK_LAYER_ETHERNET) {
        /* NCCL: the subnet is the low 16 bits of the GID's prefix (bytes
         * 6-7); another subnet is reached through the peer's FLID (bytes
         * 4-5), a GRH either way. */
        int same = d->gid.raw[6] == rgid[6] && d->gid.raw[7] == rgid[7];
        uint16_t flid = (uint16_t)((rgid[4] << 8) | rgid[5]);
        global = !same || (d->port_flags & IBV_QPF_GRH_REQUIRED);
        ah->dlid = !same && flid ? flid : rlid;
        if (!same && !flid) {
            static int said;
            if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
                GT_WARN("ib: %s:%d: the peer is on another subnet but its FLID is 0: using its "
                        "LID, as NCCL",
                        d->name, d->port);
        }
    }
    if (global) {
        ah->is_global = 1;
        memcpy(ah->grh.dgid.raw, rgid, 16);
        ah->grh.sgid_index = (uint8_t)d->gid_index;
        ah->grh.hop_limit = 255;
        /* NCCL sets the traffic class on RoCE only */
        ah->grh.traffic_class = d->link_layer == IBV_LINK_LAYER_ETHERNET ? (uint8_t)tc : 0;
    }
}

/* INIT -> RTR -> RTS toward (qpn, psn) at the peer described by w.
 * Returns 0 or an errno, with *step naming the transition that failed. */
static int qp_connect(struct ib_comm *c, struct ibv_qp *qp, uint32_t lpsn, uint32_t rqpn,
                      uint32_t rpsn, const struct ib_wire *w, const char **step)
{
    struct gt_ib_dev *d = c->dev;
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = d->mtu < (enum ibv_mtu)w->mtu ? d->mtu : (enum ibv_mtu)w->mtu;
    a.dest_qp_num = rqpn;
    a.rq_psn = rpsn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    /* NCCL_IB_FIFO_TC: the receiver's data QPs carry only its clear-to-send
     * writes, which NCCL gives their own class (RoCE); never the flush QP */
    int tc = c->kind == COMM_RECV && qp != c->flush_qp && gt_ib_params.fifo_tc >= 0
                 ? gt_ib_params.fifo_tc
                 : c->tc;
    gt_ib_fill_ah(d, w->gid, le16toh(w->lid), c->sl, tc, &a.ah_attr);
    int rc = gt_ibv.modify_qp(qp, &a,
                              IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc) {
        *step = "ibv_modify_qp(RTR)";
        return rc;
    }
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = (uint8_t)gt_ib_params.timeout;
    a.retry_cnt = (uint8_t)gt_ib_params.retry_cnt;
    a.rnr_retry = 7;
    a.sq_psn = lpsn;
    a.max_rd_atomic = 1;
    rc = gt_ibv.modify_qp(qp, &a,
                          IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                              IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc) {
        *step = "ibv_modify_qp(RTS)";
        return rc;
    }
    return 0;
}

static void comm_free(struct ib_comm *c)
{
    if (!c)
        return;
    if (c->flush_qp)
        gt_ibv.destroy_qp(c->flush_qp);
    for (int q = 0; q < c->nqps; q++)
        if (c->qps[q])
            gt_ibv.destroy_qp(c->qps[q]);
    if (c->cq)
        gt_ibv.destroy_cq(c->cq);
    if (c->ctrl_mr)
        gt_ibv.dereg_mr(c->ctrl_mr);
    free(c->ctrl);
    free(c->ss);
    free(c->rs);
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}

/* CQ, control memory and nqps QPs in INIT. */
static gt_result comm_resources(struct ib_comm *c, int nqps)
{
    struct gt_ib_dev *d = c->dev;
    c->nqps = nqps;
    c->sq_depth = GT_IB_SLOTS * 12 + 8;
    if (d->max_qp_wr > 0 && c->sq_depth > d->max_qp_wr)
        c->sq_depth = d->max_qp_wr;
    c->cq = gt_ibv.create_cq(d->ctx, (GT_IB_SLOTS + 8) * (nqps + 2) + 64, NULL, NULL, 0);
    if (!c->cq)
        return gt_ib_fail_errno(c, GT_SYSTEM_ERROR, errno, "%s: ibv_create_cq failed: %s", d->name,
                                strerror(errno));
    if (posix_memalign((void **)&c->ctrl, 4096, sizeof(struct ctrl)) != 0)
        return gt_ib_fail_errno(c, GT_SYSTEM_ERROR, ENOMEM, "%s: out of memory", d->name);
    memset(c->ctrl, 0, sizeof(struct ctrl));
    c->ctrl_mr =
        gt_ibv.reg_mr(d->pd, c->ctrl, sizeof(struct ctrl),
                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    if (!c->ctrl_mr)
        return gt_ib_fail_errno(c, GT_SYSTEM_ERROR, errno,
                                "%s: ibv_reg_mr of the control block failed: %s", d->name,
                                strerror(errno));
    for (int q = 0; q < nqps; q++) {
        c->qps[q] = create_qp(c, c->sq_depth, GT_IB_RQ_DEPTH);
        if (!c->qps[q])
            return gt_ib_fail_errno(c, GT_SYSTEM_ERROR, errno,
                                    "%s: creating QP %d of %d failed: %s", d->name, q, nqps,
                                    strerror(errno));
        c->psn[q] = rand24();
    }
    return GT_OK;
}

static void fill_wire(struct ib_comm *c, struct ib_wire *w, uint64_t addr)
{
    memset(w, 0, sizeof(*w));
    w->magic = htole32(GT_IB_MAGIC);
    w->version = htole16(GT_IB_WIRE_VERSION);
    w->nqps = htole16((uint16_t)c->nqps);
    w->nonce = htole64(c->nonce);
    for (int q = 0; q < c->nqps; q++) {
        w->qpn[q] = htole32(c->qps[q]->qp_num);
        w->psn[q] = htole32(c->psn[q]);
    }
    memcpy(w->gid, c->dev->gid.raw, 16);
    w->lid = htole16(c->dev->lid);
    w->link_layer = (uint8_t)c->dev->link_layer;
    w->mtu = (uint8_t)c->dev->mtu;
    w->addr = htole64(addr);
    w->rkey = htole32(c->ctrl_mr->rkey);
    w->flags = htole32(c->split ? GT_IB_WIRE_SPLIT : 0);
    snprintf(w->dev, sizeof(w->dev), "%.31s", c->dev->name);
}

/* ECE (Enhanced Connection Establishment), as NCCL negotiates it when
 * NCCL_IB_ECE_ENABLE (default) and libibverbs has it: the connector sends
 * each QP's own ECE; the acceptor sets it on its QP before RTR and answers
 * with the reduced one the device accepted (queried after RTS); the
 * connector sets that on its QP before RTR.  A QP whose query or set fails
 * goes without, as in NCCL. */
static int ece_on(void)
{
    return gt_ib_params.ece && gt_ibv.has_ece;
}

static void ece_query(struct ib_comm *c, struct ib_wire *w, uint32_t only)
{
    w->ece_mask = 0;
    if (!ece_on())
        return;
    uint32_t mask = 0;
    for (int q = 0; q < c->nqps; q++) {
        struct ibv_ece e;
        memset(&e, 0, sizeof(e));
        if (!(only & (1u << q)) || gt_ibv.query_ece(c->qps[q], &e) != 0)
            continue;
        mask |= 1u << q;
        w->ece[q].vendor_id = htole32(e.vendor_id);
        w->ece[q].options = htole32(e.options);
        w->ece[q].comp_mask = htole32(e.comp_mask);
    }
    w->ece_mask = htole32(mask);
}

/* Sets the peer's ECE on our QPs; returns the QPs where it took. */
static uint32_t ece_set(struct ib_comm *c, const struct ib_wire *w, uint32_t local)
{
    uint32_t mask = le32toh(w->ece_mask) & local, ok = 0;
    if (!ece_on())
        return 0;
    for (int q = 0; q < c->nqps; q++) {
        if (!(mask & (1u << q)))
            continue;
        struct ibv_ece e = {.vendor_id = le32toh(w->ece[q].vendor_id),
                            .options = le32toh(w->ece[q].options),
                            .comp_mask = le32toh(w->ece[q].comp_mask)};
        if (gt_ibv.set_ece(c->qps[q], &e) == 0)
            ok |= 1u << q;
    }
    return ok;
}

/* Checks a peer's setup message; 0 or a reason. */
static const char *check_wire(const struct ib_wire *w, uint64_t nonce, int want_nqps)
{
    if (le32toh(w->magic) != GT_IB_MAGIC)
        return "bad magic (not a gdrtrace ib peer)";
    if (le16toh(w->version) != GT_IB_WIRE_VERSION)
        return "wire version mismatch";
    if (le64toh(w->nonce) != nonce)
        return "nonce mismatch (connected to the wrong listener)";
    int n = le16toh(w->nqps);
    if (n < 1 || n > GT_IB_MAX_QPS || (want_nqps && n != want_nqps))
        return "bad QP count";
    if (w->mtu < IBV_MTU_256 || w->mtu > IBV_MTU_4096)
        return "bad MTU";
    return NULL;
}

static void set_peer(struct ib_comm *c, const struct ib_wire *w)
{
    char dev[33];
    memcpy(dev, w->dev, 32);
    dev[32] = 0;
    union gt_oob_addr sa;
    memset(&sa, 0, sizeof(sa));
    socklen_t sl = sizeof(sa);
    char ip[96] = "?";
    if (getpeername(c->fd, &sa.sa, &sl) == 0)
        gt_oob_addr_str(&sa, ip, sizeof(ip)); /* address:port, IPv4 or [IPv6] */
    snprintf(c->peer, sizeof(c->peer), "%s (device %s, QPN %u)", ip, dev, le32toh(w->qpn[0]));
}

static gt_result connect_qps(struct ib_comm *c, const struct ib_wire *w)
{
    for (int q = 0; q < c->nqps; q++) {
        const char *step = "";
        int rc =
            qp_connect(c, c->qps[q], c->psn[q], le32toh(w->qpn[q]), le32toh(w->psn[q]), w, &step);
        if (rc)
            return gt_ib_fail_errno(c, GT_SYSTEM_ERROR, rc,
                                    "%s: %s of QP %u toward %s failed: %s (errno %d)", c->dev->name,
                                    step, c->qps[q]->qp_num, c->peer, strerror(rc), rc);
    }
    return GT_OK;
}

/* ---- gt_net_ops: setup ------------------------------------------------- */

static int init_refs; /* under staged_lock */

/* Connects under way.  NCCL's handle carries the comm between connect()
 * calls, but a connect NCCL abandons must still die by the last finalize
 * (gt_net.h lifetimes: half-made comm), and a handle's pointer is used only
 * while the comm is on this list. */
static pthread_mutex_t staged_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ib_comm *staged;

static void staged_add(struct ib_comm *c)
{
    pthread_mutex_lock(&staged_lock);
    c->st_prev = NULL;
    c->st_next = staged;
    if (staged)
        staged->st_prev = c;
    staged = c;
    c->on_staged = 1;
    pthread_mutex_unlock(&staged_lock);
}

static void staged_remove(struct ib_comm *c)
{
    pthread_mutex_lock(&staged_lock);
    if (c->on_staged) {
        if (c->st_prev)
            c->st_prev->st_next = c->st_next;
        else
            staged = c->st_next;
        if (c->st_next)
            c->st_next->st_prev = c->st_prev;
        c->on_staged = 0;
    }
    pthread_mutex_unlock(&staged_lock);
}

/* The staged comm a handle names, or NULL when it is not (or no longer) one. */
static struct ib_comm *staged_find(const struct ib_comm *p)
{
    pthread_mutex_lock(&staged_lock);
    struct ib_comm *c = staged;
    while (c && c != p)
        c = c->st_next;
    pthread_mutex_unlock(&staged_lock);
    return c;
}

static gt_result ib_init(void **ctx, uint64_t comm_id, int has_comm_id,
                         const struct gt_comm_config *config, gt_logger_fn logger,
                         gt_profiler_fn profiler)
{
    (void)has_comm_id, (void)profiler;
    if (logger)
        gt_log_set_logger(logger);
    /* NCCL_IB_DISABLE (NCCL: any non-zero value) keeps NCCL off IB, so under
     * GDRTRACE_TRANSPORT=auto ib refuses and the core takes sock, as NCCL
     * would take its Socket transport; an explicit GDRTRACE_TRANSPORT=ib is
     * our override and wins, said once. */
    struct gt_setting dis;
    long disable = gt_nccl_long(&dis, "NCCL_IB_DISABLE", NULL, 0, -2147483647L - 1, 2147483647L, 1);
    if (disable) {
        if (gt_settings_get()->transport != GT_TRANSPORT_IB) {
            gt_nccl_note(&dis); /* why ib is not in use */
            return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, 0,
                               "ib: disabled by %s (as NCCL's IB transport)", dis.origin);
        }
        static int said;
        if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
            GT_WARN("%s ignored: GDRTRACE_TRANSPORT=ib asks for the ib transport", dis.origin);
    }
    int n = gt_ib_devices_open();
    if (n == 0) {
        gt_ib_devices_close();
        /* ib's settings were not in force: the recorder keeps only those
         * of the transport in use (else two hosts, one with libibverbs,
         * would differ by settings nothing used). */
        gt_nccl_unnote("GDRTRACE_IB");
        gt_nccl_unnote("NCCL_IB_");
        /* INFO, not WARN: in auto mode this is the normal answer on a host
         * without RDMA, and the core says which transport it chose. */
        GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET, "ib: no active RDMA port%s%s",
                gt_ibv.loaded ? "" : ": ", gt_ibv.loaded ? "" : gt_ibv.why);
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_NO_RDMA_DEVICE, 0,
                           "ib: no active RDMA port%s%s", gt_ibv.loaded ? "" : ": ",
                           gt_ibv.loaded ? "" : gt_ibv.why);
    }
    struct ib_ctx *x = calloc(1, sizeof(*x));
    if (!x) {
        gt_ib_devices_close();
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                           "ib: init: out of memory");
    }
    x->comm_id = comm_id;
    gt_ib_sl_tc(&gt_ib_params, config ? config->traffic_class : -1, &x->sl, &x->tc);
    pthread_mutex_lock(&staged_lock);
    init_refs++;
    pthread_mutex_unlock(&staged_lock);
    *ctx = x;
    return GT_OK;
}

static gt_result ib_finalize(void *ctx)
{
    free(ctx);
    /* The last context: connects NCCL abandoned die now, while the devices
     * their QPs live on are still open. */
    pthread_mutex_lock(&staged_lock);
    struct ib_comm *left = --init_refs == 0 ? staged : NULL;
    if (left)
        staged = NULL;
    pthread_mutex_unlock(&staged_lock);
    for (struct ib_comm *c = left, *next; c; c = next) {
        next = c->st_next;
        comm_free(c);
    }
    gt_ib_devices_close();
    return GT_OK;
}

static gt_result ib_devices(int *ndev)
{
    *ndev = gt_ib_ndevs;
    return GT_OK;
}

static gt_result ib_get_properties(int dev, struct gt_props *p)
{
    if (dev < 0 || dev >= gt_ib_ndevs)
        return gt_ib_bad_arg(__func__);
    struct gt_ib_dev *d = &gt_ib_devs[dev];
    memset(p, 0, sizeof(*p));
    p->name = d->name;
    p->pci_path = d->pci_path;
    p->guid = d->guid;
    p->ptr_support = d->reg.probe.advertised;
    p->reg_is_global = 1;
    p->force_flush = 0;
    p->speed_mbps = d->speed_mbps;
    p->port = d->port + d->real_port; /* NCCL's: unique per port of one PCI device */
    p->latency_us = 0;
    p->max_comms = d->max_qp > 0 ? d->max_qp : 65536;
    p->max_recvs = GT_IB_MAX_RECVS;
    p->net_device_type = 0;
    p->net_device_version = 0;
    p->vdev_count = 1;
    p->vdevs[0] = dev;
    p->max_p2p_bytes = GT_MAX_NET_SIZE_BYTES;
    p->max_coll_bytes = GT_MAX_NET_SIZE_BYTES;
    p->max_multi_request_size = 1;
    p->rail_id = d->rail_id; /* NCCL_IB_HCA's rail and plane fields, as NCCL */
    p->plane_id = d->plane_id;
    return GT_OK;
}

static gt_result ib_get_probe(int dev, struct gt_dev_probe *probe)
{
    if (dev < 0 || dev >= gt_ib_ndevs)
        return gt_ib_bad_arg(__func__);
    *probe = gt_ib_devs[dev].reg.probe;
    return GT_OK;
}

/* The flush QP is connected to itself: an RDMA READ through it completes
 * only after the NIC's earlier writes to GPU memory are visible. */
gt_result gt_ib_make_flush_qp(struct ib_comm *c)
{
    c->flush_qp = create_qp(c, GT_IB_FLUSHES + 4, 1);
    if (!c->flush_qp)
        return gt_ib_fail_errno(c, GT_SYSTEM_ERROR, errno, "ib: %s: creating the flush QP: %s",
                                c->dev->name, strerror(errno));
    struct ib_wire self;
    memset(&self, 0, sizeof(self));
    memcpy(self.gid, c->dev->gid.raw, 16);
    self.lid = htole16(c->dev->lid);
    self.link_layer = (uint8_t)c->dev->link_layer;
    self.mtu = (uint8_t)c->dev->mtu;
    uint32_t psn = rand24();
    const char *step = "";
    int rc = qp_connect(c, c->flush_qp, psn, c->flush_qp->qp_num, psn, &self, &step);
    if (rc)
        return gt_ib_fail(c, GT_SYSTEM_ERROR, "ib: %s: %s of the flush QP %u: %s", c->dev->name,
                          step, c->flush_qp->qp_num, strerror(rc));
    return GT_OK;
}

/* ---- out-of-band setup ----------------------------------------------------- */

const char *gt_ib_check_setup(const void *body, size_t len, const struct gt_oob_hello *h)
{
    struct ib_wire w;
    if (len != sizeof(w))
        return "setup message size mismatch";
    memcpy(&w, body, sizeof(w));
    return check_wire(&w, h->nonce, 0);
}

static void prepare_fd(int fd, int listening)
{
    if (listening)
        return;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static const struct gt_oob_proto ib_proto = {
    .name = "ib",
    .magic = GT_IB_MAGIC,
    .version = GT_IB_WIRE_VERSION,
    .body_len = sizeof(struct ib_wire),
    .check_body = gt_ib_check_setup,
    .prepare_fd = prepare_fd,
};

/* The address peers reach us at, which is also the one we bind:
 * GDRTRACE_IB_OOB_IF (a name prefix) if set, its first IPv4 address; else
 * NCCL's choice for its IB transport's address: the first interface of
 * NCCL_SOCKET_IFNAME's choice (NCCL's automatic order when unset) in
 * NCCL_SOCKET_FAMILY (IPv4 preferred on an interface with both, IPv6
 * link-local skipped: the handle carries no scope); else loopback. */
static void oob_addr(union gt_oob_addr *a)
{
    const char *want = gt_env_str("GDRTRACE_IB_OOB_IF");
    struct gt_oob_if cands[128], one;
    int n = gt_oob_if_system(cands, 128);
    memset(a, 0, sizeof(*a));
    struct gt_oob_if_settings ifs;
    gt_oob_if_settings_read(&ifs, NULL, 0);
    if (n > 0 && (want ? gt_oob_if_first_ipv4(cands, n, want, &one)
                       : gt_oob_if_select(cands, n, ifs.has_spec ? ifs.spec : NULL, ifs.family,
                                          &one, 1) == 1)) {
        *a = one.addr;
        return;
    }
    static int warned;
    if ((want || ifs.has_spec) && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        GT_WARN("ib: no up interface with a%s address matches %s%s; the out-of-band "
                "setup uses loopback (peers on other hosts cannot connect)",
                want || ifs.family == AF_INET ? "n IPv4"
                : ifs.family == AF_INET6      ? "n IPv6"
                                              : "n",
                want ? "GDRTRACE_IB_OOB_IF=" : "", want ? want : ifs.s_ifname.origin);
    if (!want && ifs.family == AF_INET6) {
        a->in6.sin6_family = AF_INET6;
        a->in6.sin6_addr = in6addr_loopback;
        return;
    }
    a->in4.sin_family = AF_INET;
    a->in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static gt_result ib_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
    struct ib_ctx *x = ctx;
    if (dev < 0 || dev >= gt_ib_ndevs)
        return gt_ib_bad_arg(__func__);
    struct ib_listen *l = calloc(1, sizeof(*l));
    if (!l)
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                           "ib: listen: out of memory");
    l->kind = COMM_LISTEN;
    l->dev = &gt_ib_devs[dev];
    if (x) {
        l->tc = x->tc;
        l->sl = x->sl;
    } else /* no context: the variables alone decide */
        gt_ib_sl_tc(&gt_ib_params, -1, &l->sl, &l->tc);
    union gt_oob_addr a;
    oob_addr(&a);
    if (gt_oob_listen(&l->oob, &a, &ib_proto) != GT_OK) {
        int e = errno;
        char s[80];
        free(l);
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, e,
                           "ib: listen socket on %s: %s", gt_oob_addr_str(&a, s, sizeof(s)),
                           strerror(e));
    }
    gt_oob_handle_encode(GT_IB_MAGIC, GT_IB_WIRE_VERSION, &l->oob.addr, l->oob.nonce, handle);
    char s[80];
    GT_INFO(GT_LOGSUB_NET, "ib: %s listening for setup on %s", l->dev->name,
            gt_oob_addr_str(&l->oob.addr, s, sizeof(s)));
    *listen_comm = l;
    return GT_OK;
}

static gt_result ib_close_listen(void *lc)
{
    struct ib_listen *l = lc;
    if (!l)
        return GT_OK;
    comm_free(l->pending);
    gt_oob_listen_close(&l->oob);
    free(l);
    return GT_OK;
}

enum { ST_TCP = 1, ST_SEND_INFO, ST_RECV_INFO, ST_SEND_READY, ST_RECV_READY };

static struct ib_comm *stage_get(const void *handle)
{
    struct ib_stage s;
    memcpy(&s, (const char *)handle + GT_OOB_HANDLE_PRIVATE, sizeof(s));
    return s.magic == STAGE_MAGIC ? staged_find(s.c) : NULL;
}

static void stage_set(void *handle, struct ib_comm *c)
{
    struct ib_stage s = {.magic = c ? STAGE_MAGIC : 0, .c = c};
    memcpy((char *)handle + GT_OOB_HANDLE_PRIVATE, &s, sizeof(s));
}

static gt_result ib_connect(void *ctx, int dev, void *handle, void **send_comm,
                            void **send_dev_comm)
{
    struct ib_ctx *x = ctx;
    *send_comm = NULL;
    if (send_dev_comm)
        *send_dev_comm = NULL;
    if (dev < 0 || dev >= gt_ib_ndevs)
        return gt_ib_bad_arg(__func__);
    struct ib_comm *c = stage_get(handle);
    gt_result r = GT_INTERNAL_ERROR;
    if (!c) {
        union gt_oob_addr a;
        uint64_t nonce;
        char why[160];
        if (gt_oob_handle_decode(handle, GT_NET_HANDLE_MAXSIZE, GT_IB_MAGIC, GT_IB_WIRE_VERSION,
                                 "ib", &a, &nonce, why, sizeof(why)) != GT_OK) {
            GT_WARN("ib: connect: rejected connection handle: %s", why);
            return gt_net_fail(GT_INVALID_ARGUMENT, GT_REASON_BAD_ARGUMENT, 0,
                               "ib: connect: rejected connection handle: %s", why);
        }
        c = calloc(1, sizeof(*c));
        if (!c)
            return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                               "ib: connect: out of memory");
        c->kind = COMM_SEND;
        c->dev = &gt_ib_devs[dev];
        c->fd = -1;
        if (x) {
            c->tc = x->tc;
            c->sl = x->sl;
        } else
            gt_ib_sl_tc(&gt_ib_params, -1, &c->sl, &c->tc);
        c->nonce = nonce;
        c->split = gt_ib_params.split;
        c->ar = c->dev->ar;
        c->ar_threshold = (uint64_t)gt_ib_params.ar_threshold;
        c->ss = calloc(GT_IB_SLOTS, sizeof(*c->ss));
        gt_oob_addr_str(&a, c->peer, sizeof(c->peer));
        if (!c->ss || (r = comm_resources(c, gt_ib_params.qps)) != GT_OK)
            goto err;
        fill_wire(c, &c->out, (uint64_t)(uintptr_t)c->ctrl->fifo);
        ece_query(c, &c->out, ~0u);
        struct gt_oob_hello h = {.magic = GT_IB_MAGIC,
                                 .version = GT_IB_WIRE_VERSION,
                                 .body_len = sizeof(struct ib_wire),
                                 .nonce = nonce,
                                 .conn_id = gt_oob_rand64()};
        gt_oob_hello_encode(&h, c->hello);
        c->fd = gt_oob_connect_start(&a, prepare_fd);
        if (c->fd < 0) {
            r = gt_ib_fail_errno(c, GT_REMOTE_ERROR, errno, "ib: connect to %s: %s", c->peer,
                                 strerror(errno));
            goto err;
        }
        c->stage = ST_TCP;
        stage_set(handle, c);
        staged_add(c);
    }
    if (c->stage == ST_TCP) {
        int k = gt_oob_connect_poll(c->fd);
        if (k == 0)
            return GT_OK; /* still connecting */
        if (k < 0) {
            r = gt_ib_fail_errno(c, GT_REMOTE_ERROR, errno, "ib: connect to %s: %s", c->peer,
                                 strerror(errno));
            goto err;
        }
        c->stage = ST_SEND_INFO;
    }
    if (c->stage == ST_SEND_INFO) {
        /* The hello, then the setup message, as one stream. */
        int k = 1;
        if (c->out_off < sizeof(c->hello))
            k = gt_oob_xfer(c->fd, c->hello, sizeof(c->hello), &c->out_off, 1, 0);
        if (k > 0) {
            size_t off = c->out_off - sizeof(c->hello);
            k = gt_oob_xfer(c->fd, &c->out, sizeof(c->out), &off, 1, 0);
            c->out_off = sizeof(c->hello) + off;
        }
        if (k == 0)
            return GT_OK;
        if (k < 0) {
            r = gt_ib_fail_errno(c, GT_REMOTE_ERROR, errno, "ib: sending setup to %s: %s", c->peer,
                                 strerror(errno));
            goto err;
        }
        c->stage = ST_RECV_INFO;
    }
    if (c->stage == ST_RECV_INFO) {
        int k = gt_oob_xfer(c->fd, &c->in, sizeof(c->in), &c->in_off, 0, 0);
        if (k == 0)
            return GT_OK;
        if (k < 0) {
            r = gt_ib_fail_errno(c, GT_REMOTE_ERROR, errno,
                                 "ib: peer %s vanished during connection setup: %s", c->peer,
                                 strerror(errno));
            goto err;
        }
        const char *bad = check_wire(&c->in, c->nonce, c->nqps);
        if (bad) {
            r = gt_ib_fail(c, GT_REMOTE_ERROR, "ib: setup from %s rejected: %s", c->peer, bad);
            goto err;
        }
        set_peer(c, &c->in);
        c->raddr = le64toh(c->in.addr);
        c->rkey = le32toh(c->in.rkey);
        ece_set(c, &c->in, le32toh(c->out.ece_mask)); /* the reduced ECE, before RTR */
        if ((r = connect_qps(c, &c->in)) != GT_OK)
            goto err;
        c->stage = ST_SEND_READY;
        c->out_off = 0;
        c->ready = 1;
    }
    if (c->stage == ST_SEND_READY) {
        int k = gt_oob_xfer(c->fd, &c->ready, 1, &c->out_off, 1, 0);
        if (k == 0)
            return GT_OK;
        if (k < 0) {
            r = gt_ib_fail_errno(c, GT_REMOTE_ERROR, errno, "ib: peer %s vanished: %s", c->peer,
                                 strerror(errno));
            goto err;
        }
    }
    c->stage = 0;
    stage_set(handle, NULL);
    staged_remove(c);
    GT_INFO(GT_LOGSUB_NET, "ib: %s connected to %s, %d QP(s)", c->dev->name, c->peer, c->nqps);
    *send_comm = c;
    return GT_OK;
err:
    stage_set(handle, NULL);
    staged_remove(c);
    /* Only an allocation failed without a description (F1). */
    r = c->err ? gt_ib_again(c)
               : gt_ib_fail_errno(c, r, ENOMEM, "ib: connect to %s: out of memory", c->peer);
    comm_free(c);
    return r;
}

/* Steps 3–4 for an authenticated connection (ownership of conn->fd passes
 * to the comm).  GT_OK with *out set, or an error (the comm is freed). */
static gt_result accept_start(struct ib_listen *l, const struct gt_oob_conn *conn,
                              struct ib_comm **out)
{
    gt_result r = GT_SYSTEM_ERROR;
    struct ib_comm *c = calloc(1, sizeof(*c));
    if (!c) {
        close(conn->fd);
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                           "ib: accept: out of memory");
    }
    c->kind = COMM_RECV;
    c->dev = l->dev;
    c->fd = conn->fd;
    c->tc = l->tc;
    c->sl = l->sl;
    c->nonce = l->oob.nonce;
    c->deadline_ms = conn->deadline_ms;
    memcpy(&c->in, conn->body, sizeof(c->in));
    /* The sender's split decides where each message goes: the receives
     * follow it, whatever this side's variable says. */
    c->split = (le32toh(c->in.flags) & GT_IB_WIRE_SPLIT) != 0;
    set_peer(c, &c->in);
    c->rs = calloc(GT_IB_SLOTS, sizeof(*c->rs));
    if (!c->rs)
        goto err;
    if ((r = comm_resources(c, le16toh(c->in.nqps))) != GT_OK)
        goto err;
    c->raddr = le64toh(c->in.addr);
    c->rkey = le32toh(c->in.rkey);
    uint32_t ece = ece_set(c, &c->in, ~0u); /* the connector's ECE, before RTR */
    if ((r = connect_qps(c, &c->in)) != GT_OK)
        goto err;
    /* The flush QP now, not on the data path, as NCCL, unless
     * NCCL_GDR_FLUSH_DISABLE.  NCCL makes it only where the device takes
     * GPU memory; here always, so memory registered as GPU memory is
     * flushed whatever the probe advertised (one QP per receive comm). */
    if (!gt_ib_params.flush_disable && (r = gt_ib_make_flush_qp(c)) != GT_OK)
        goto err;
    fill_wire(c, &c->out, (uint64_t)(uintptr_t)c->ctrl->cmpl);
    ece_query(c, &c->out, ece); /* the reduced ECE the device accepted */
    c->stage = ST_SEND_INFO;
    *out = c;
    return GT_OK;
err:
    r = c->err ? gt_ib_again(c)
               : gt_ib_fail_errno(c, r, ENOMEM, "ib: accept from %s: out of memory", c->peer);
    comm_free(c);
    return r;
}

static gt_result ib_accept(void *lc, void **recv_comm, void **recv_dev_comm)
{
    struct ib_listen *l = lc;
    *recv_comm = NULL;
    if (recv_dev_comm)
        *recv_dev_comm = NULL;
    struct ib_comm *c = l->pending;
    gt_result r = GT_INTERNAL_ERROR;
    if (!c) {
        struct gt_oob_conn conn;
        int k = gt_oob_accept(&l->oob, &conn);
        if (k < 0) {
            int e = errno;
            GT_WARN("ib: accept on %s: the listening socket failed: %s", l->dev->name, strerror(e));
            return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, e,
                               "ib: accept on %s: the listening socket failed: %s", l->dev->name,
                               strerror(e));
        }
        if (k == 0)
            return GT_OK; /* nobody authenticated yet */
        if ((r = accept_start(l, &conn, &c)) != GT_OK)
            return r;
        l->pending = c;
    }
    if (c->stage == ST_SEND_INFO) {
        int k = gt_oob_xfer(c->fd, &c->out, sizeof(c->out), &c->out_off, 1, c->deadline_ms);
        if (k == 0)
            return GT_OK;
        if (k < 0) {
            r = gt_ib_fail_errno(c, GT_REMOTE_ERROR, errno,
                                 "ib: %s: peer %s failed during setup: %s", c->dev->name, c->peer,
                                 strerror(errno));
            goto err;
        }
        c->stage = ST_RECV_READY;
        c->in_off = 0;
    }
    if (c->stage == ST_RECV_READY) {
        int k = gt_oob_xfer(c->fd, &c->ready, 1, &c->in_off, 0, c->deadline_ms);
        if (k == 0)
            return GT_OK;
        if (k < 0 || c->ready != 1) {
            r = gt_ib_fail_errno(c, GT_REMOTE_ERROR, k < 0 ? errno : 0,
                                 "ib: %s: peer %s did not finish connection setup: %s",
                                 c->dev->name, c->peer,
                                 k < 0 ? (errno == ETIMEDOUT ? "no ready byte within "
                                                               "GDRTRACE_OOB_TIMEOUT_MS"
                                                             : strerror(errno))
                                       : "bad ready byte");
            goto err;
        }
    }
    c->stage = 0;
    l->pending = NULL;
    GT_INFO(GT_LOGSUB_NET, "ib: %s accepted %s, %d QP(s)", c->dev->name, c->peer, c->nqps);
    *recv_comm = c;
    return GT_OK;
err:
    l->pending = NULL;
    r = gt_ib_again(c);
    comm_free(c);
    return r;
}

static gt_result ib_close_send(void *sc)
{
    comm_free(sc);
    return GT_OK;
}

static gt_result ib_close_recv(void *rc)
{
    comm_free(rc);
    return GT_OK;
}

const struct gt_net_ops gt_ib_ops = {
    .name = "gdrtrace-ib",
    .init = ib_init,
    .devices = ib_devices,
    .get_properties = ib_get_properties,
    .listen = ib_listen,
    .connect = ib_connect,
    .accept = ib_accept,
    .reg_mr = gt_ib_reg_mr,
    .reg_mr_dmabuf = gt_ib_reg_mr_dmabuf,
    .dereg_mr = gt_ib_dereg_mr,
    .isend = gt_ib_isend,
    .irecv = gt_ib_irecv,
    .iflush = gt_ib_iflush,
    .test = gt_ib_test,
    .close_send = ib_close_send,
    .close_recv = ib_close_recv,
    .close_listen = ib_close_listen,
    .get_device_mr = gt_ib_get_device_mr,
    .irecv_consumed = gt_ib_irecv_consumed,
    .finalize = ib_finalize,
    .set_net_attr = gt_ib_set_net_attr,
    .get_probe = ib_get_probe,
};
