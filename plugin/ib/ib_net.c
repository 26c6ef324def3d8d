/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ib_net.c — the RDMA verbs transport (gt_ib_ops): RC QPs, clear-to-send
 * FIFO, data by RDMA WRITE, completion by WRITE_WITH_IMM, flush by RDMA READ.
 *
 * Protocol (per connection; a sendComm and a recvComm joined by nqps RC QPs):
 *  1. Setup over TCP (address and nonce in the 128-byte handle): the
 *     connector sends its QP numbers/PSNs, GID/LID, MTU and the address/rkey
 *     of its FIFO; the acceptor answers with its own and the address/rkey of
 *     its completion records; the connector moves its QPs to RTS and sends
 *     one "ready" byte, after which the acceptor's accept() returns.
 *  2. irecv posts one receive per QP, then RDMA WRITEs the n clear-to-send
 *     entries (address, rkey, size, tag, n, seq+1) into the sender's FIFO
 *     slot seq % 32.
 *  3. isend waits (returns a NULL request) until that slot carries seq+1,
 *     matches its tag, and once all n sends of the slot are in, posts on every
 *     QP its 128-byte-aligned share of each message as unsignaled RDMA WRITEs,
 *     on QP 0 the completion record (sizes, seq+1) last; the last write on
 *     every QP is a signaled WRITE_WITH_IMM carrying seq+1 (a zero-byte one
 *     on a QP with nothing else to write).
 *  4. RC delivers each QP in order, so the receiver's request is complete
 *     when all nqps immediates arrived; the sender's when all nqps signaled
 *     writes completed.
 * Invariants:
 *  - At most GT_IB_SLOTS (= GT_NET_MAX_REQUESTS) slots in flight per comm; a
 *    slot is reused only after NCCL tested all its requests done.
 *  - A work-completion error latches the comm into an error state: every
 *    later call on it returns that error with a message naming the status,
 *    the QP and the peer.  Nothing waits without bound: every call returns.
 *  - The data path makes no system call and takes no lock; it allocates
 *    nothing (all request state is preallocated per comm).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <stdarg.h>
#include <stddef.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/env.h"
#include "plugin/ib/ib.h"
#include "common/log.h"

#define GT_IB_SLOTS GT_NET_MAX_REQUESTS
#define GT_IB_CHUNK_ALIGN 128
#define GT_IB_MAX_WR_BYTES (1ULL << 30)
#define GT_IB_MAX_WRS_PER_QP 96 /* per slot and QP: data writes + record + imm */
#define GT_IB_RQ_DEPTH (GT_IB_SLOTS + 8)

/* ---- wire formats ------------------------------------------------------ */

struct ib_handle {
    uint32_t magic;
    uint16_t version;
    uint16_t port; /* network order */
    uint32_t addr; /* IPv4, network order */
    uint32_t csum; /* FNV-1a of the other fields: a damaged handle fails fast */
    uint64_t nonce;
    uint8_t reserved[40];
    /* Connector-private from here (NCCL hands the same buffer back on every
     * connect() retry; the peer never reads it). */
    uint64_t stage_magic;
    void *stage;
};
_Static_assert(sizeof(struct ib_handle) <= GT_NET_HANDLE_MAXSIZE, "handle fits NCCL's");
#define STAGE_MAGIC 0x5354414745494231ull

struct ib_wire {
    uint32_t magic;
    uint16_t version;
    uint16_t nqps;
    uint64_t nonce;
    uint32_t qpn[GT_IB_MAX_QPS];
    uint32_t psn[GT_IB_MAX_QPS];
    uint8_t gid[16];
    uint16_t lid;
    uint8_t link_layer;
    uint8_t mtu;
    uint64_t addr; /* connector: its FIFO; acceptor: its completion records */
    uint32_t rkey;
    uint32_t pad;
    char dev[32];
};

/* One clear-to-send entry, written by the receiver into the sender's FIFO. */
struct cts_entry {
    uint64_t addr;
    uint64_t size;
    uint32_t rkey;
    int32_t tag;
    uint32_t nreqs;
    uint32_t seq; /* slot sequence + 1; 0 = never written */
};
struct cts_slot {
    struct cts_entry e[GT_IB_MAX_RECVS];
};
/* The completion record, written by the sender into the receiver's. */
struct cmpl_rec {
    uint32_t seq;
    uint32_t n;
    uint64_t size[GT_IB_MAX_RECVS];
};

/* Host memory registered once per comm. */
struct ctrl {
    struct cts_slot fifo[GT_IB_SLOTS]; /* sender: written by the peer */
    struct cts_slot cts[GT_IB_SLOTS];  /* receiver: staging for CTS writes */
    struct cmpl_rec cmpl[GT_IB_SLOTS]; /* receiver: written by the peer */
    struct cmpl_rec rec[GT_IB_SLOTS];  /* sender: staging */
    char flush_dst[64];
};

/* ---- requests and comms ------------------------------------------------ */

enum { REQ_SEND = 1, REQ_RECV, REQ_FLUSH, REQ_DONE };
enum { WR_SEND = 1, WR_RECV, WR_CTS, WR_FLUSH, WR_DATA };

struct ib_comm;
struct ib_req {
    int type;
    struct ib_comm *c;
    int slot;
    int idx;
    size_t size;
    void *data;
    struct gt_mr *mh;
    int done;
};

struct send_slot {
    int active;
    uint32_t seq;
    int nreqs, nposted, ntested;
    int posted;  /* WRs are on the wire */
    int events;  /* signaled completions still to come */
    int wrs[GT_IB_MAX_QPS];
    int used[GT_IB_MAX_RECVS];
    struct cts_entry e[GT_IB_MAX_RECVS];
    struct ib_req reqs[GT_IB_MAX_RECVS];
};

struct recv_slot {
    int busy;
    uint32_t seq;
    int n;
    int events;
    size_t posted_size[GT_IB_MAX_RECVS];
    struct ib_req req;
};

enum { COMM_SEND = 1, COMM_RECV, COMM_LISTEN };

struct ib_comm {
    int kind;
    struct gt_ib_dev *dev;
    struct ibv_cq *cq;
    int nqps;
    struct ibv_qp *qps[GT_IB_MAX_QPS];
    int sq_used[GT_IB_MAX_QPS];
    int sq_depth;
    int rq_used[GT_IB_MAX_QPS];
    uint32_t psn[GT_IB_MAX_QPS];
    struct ctrl *ctrl;
    struct ibv_mr *ctrl_mr;
    uint64_t raddr;
    uint32_t rkey;
    uint32_t seq;
    char peer[160];
    gt_result err;
    int fail_reason; /* with err and errmsg: what again() describes (gt_net.h F4) */
    int fail_errno;
    char errmsg[384];
    int tc;
    /* sender */
    struct send_slot *ss;
    uint32_t next_post; /* next slot seq whose WRs must go out (in order) */
    /* receiver */
    struct recv_slot *rs;
    struct ibv_qp *flush_qp;
    int flush_used;
    uint32_t flush_seq;
    struct ib_req flush[GT_IB_SLOTS];
    struct ib_req noop;
    /* setup */
    int fd; /* setup socket, then the liveness channel */
    uint64_t last_check_ms;
    int stage;
    struct ib_wire out, in;
    size_t out_off, in_off;
    uint8_t ready;
    uint64_t nonce;
};

struct ib_listen {
    int kind;
    struct gt_ib_dev *dev;
    int fd;
    uint64_t nonce;
    struct ib_comm *pending;
    int tc;
};

struct ib_ctx {
    uint64_t comm_id;
    int tc;
};

/* ---- helpers ----------------------------------------------------------- */

static uint64_t wr_id(int kind, int slot, int qp)
{
    return ((uint64_t)kind << 32) | ((uint64_t)(slot & 0xffff) << 16) | (uint64_t)(qp & 0xffff);
}
#define WR_KIND(w) ((int)((w) >> 32))
#define WR_SLOT(w) ((int)(((w) >> 16) & 0xffff))
#define WR_QP(w) ((int)((w)&0xffff))

/* A comm's first failure latches (WARNed once); every call that returns it
 * describes it again (gt_net.h F1, F4). */
static gt_result again(struct ib_comm *c)
{
    return gt_net_fail(c->err, c->fail_reason, c->fail_errno, "%s", c->errmsg);
}

static gt_result failv(struct ib_comm *c, gt_result r, int reason, int err, const char *fmt,
                       va_list ap)
{
    if (c->err == GT_OK) {
        vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
        c->err = r;
        c->fail_reason = reason;
        c->fail_errno = err;
        GT_WARN("%s", c->errmsg);
    }
    return again(c);
}

/* A protocol, verbs-status or internal failure: no errno. */
static gt_result fail(struct ib_comm *c, gt_result r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static gt_result fail(struct ib_comm *c, gt_result r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r = failv(c, r, GT_REASON_TRANSPORT_ERROR, 0, fmt, ap);
    va_end(ap);
    return r;
}

/* A system or verbs call failed with errno `e`; a remote error means the
 * peer is gone. */
static gt_result fail_errno(struct ib_comm *c, gt_result r, int e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static gt_result fail_errno(struct ib_comm *c, gt_result r, int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r = failv(c, r, r == GT_REMOTE_ERROR ? GT_REASON_PEER_GONE : GT_REASON_TRANSPORT_ERROR, e, fmt,
              ap);
    va_end(ap);
    return r;
}

/* F1 for an argument NCCL never passes. */
static gt_result bad_arg(const char *fn)
{
    return gt_net_fail(GT_INVALID_ARGUMENT, GT_REASON_BAD_ARGUMENT, EINVAL,
                       "ib: %s: invalid argument", fn);
}

static int env_qps(void) { return (int)gt_env_long("GDRTRACE_IB_QPS", 1, 1, GT_IB_MAX_QPS); }
static int env_timeout(void) { return (int)gt_env_long("GDRTRACE_IB_TIMEOUT", 20, 1, 31); }
static int env_retry(void) { return (int)gt_env_long("GDRTRACE_IB_RETRY_CNT", 7, 0, 7); }

static uint32_t handle_csum(const struct ib_handle *h)
{
    uint32_t x = 2166136261u;
    const uint8_t *b = (const uint8_t *)h;
    for (size_t i = 0; i < offsetof(struct ib_handle, csum); i++)
        x = (x ^ b[i]) * 16777619u;
    b = (const uint8_t *)&h->nonce;
    for (size_t i = 0; i < sizeof(h->nonce); i++)
        x = (x ^ b[i]) * 16777619u;
    return htole32(x ^ 0x5a5a5a5au);
}

/* The setup socket stays open as a liveness channel: nothing is ever sent
 * on it after setup, so EOF means the peer process is gone (the kernel closes
 * its sockets when it dies) and bytes mean a peer that is not speaking our
 * protocol.  Checked only on idle paths, at most every 100 ms, so the data
 * path stays free of system calls while anything completes. */
static gt_result check_peer(struct ib_comm *c)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    uint64_t ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
    if (c->fd < 0 || ms - c->last_check_ms < 100)
        return GT_OK;
    c->last_check_ms = ms;
    char b;
    ssize_t r = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    if (r == 0)
        return fail_errno(c, GT_REMOTE_ERROR, 0,
                          "ib: %s: peer %s closed its connection with requests "
                          "outstanding (process exited or communicator closed)",
                          c->dev->name, c->peer);
    if (r > 0)
        return fail(c, GT_REMOTE_ERROR,
                    "ib: %s: unexpected bytes from peer %s on the setup socket "
                    "(not a gdrtrace ib peer, or corrupted)",
                    c->dev->name, c->peer);
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return GT_OK;
    int e = errno;
    return fail_errno(c, GT_REMOTE_ERROR, e, "ib: %s: connection to peer %s failed: %s",
                      c->dev->name, c->peer, strerror(e));
}

static uint32_t rand24(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    static __thread uint32_t x;
    x = x * 1103515245u + 12345u + (uint32_t)ts.tv_nsec + (uint32_t)getpid();
    return x & 0xffffff;
}

static uint64_t rand64(void)
{
    uint64_t v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
            v = 0;
        close(fd);
    }
    if (!v)
        v = ((uint64_t)rand24() << 32) ^ (uint64_t)time(NULL);
    return v;
}

/* The IPv4 address peers should reach us at: GDRTRACE_IB_OOB_IF (a name
 * prefix) if set, else the first up, non-loopback interface, else loopback. */
static uint32_t oob_addr(void)
{
    const char *want = gt_env_str("GDRTRACE_IB_OOB_IF");
    struct ifaddrs *ifa, *i;
    uint32_t best = htonl(INADDR_LOOPBACK);
    if (getifaddrs(&ifa) != 0)
        return best;
    for (i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
            continue;
        if (want ? strncmp(i->ifa_name, want, strlen(want)) != 0
                 : (i->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        best = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
        break;
    }
    freeifaddrs(ifa);
    return best;
}

/* Non-blocking transfer of a fixed-size buffer: 1 done, 0 again, -1 error. */
static int xfer(int fd, void *buf, size_t len, size_t *off, int sending)
{
    while (*off < len) {
        ssize_t r = sending ? send(fd, (char *)buf + *off, len - *off, MSG_DONTWAIT | MSG_NOSIGNAL)
                            : recv(fd, (char *)buf + *off, len - *off, MSG_DONTWAIT);
        if (r > 0) {
            *off += (size_t)r;
            continue;
        }
        if (r == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return 0;
        return -1;
    }
    return 1;
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
    a.pkey_index = 0;
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
    a.ah_attr.port_num = d->port;
    a.ah_attr.sl = (uint8_t)gt_env_long("GDRTRACE_IB_SL", 0, 0, 15);
    if (d->link_layer == IBV_LINK_LAYER_ETHERNET || w->link_layer == IBV_LINK_LAYER_ETHERNET ||
        le16toh(w->lid) == 0) {
        a.ah_attr.is_global = 1;
        memcpy(a.ah_attr.grh.dgid.raw, w->gid, 16);
        a.ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
        a.ah_attr.grh.hop_limit = 255;
        a.ah_attr.grh.traffic_class = (uint8_t)c->tc;
    } else
        a.ah_attr.dlid = le16toh(w->lid);
    int rc = gt_ibv.modify_qp(qp, &a,
                              IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                                  IBV_QP_MIN_RNR_TIMER);
    if (rc) {
        *step = "ibv_modify_qp(RTR)";
        return rc;
    }
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = (uint8_t)env_timeout();
    a.retry_cnt = (uint8_t)env_retry();
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
        return fail_errno(c, GT_SYSTEM_ERROR, errno, "%s: ibv_create_cq failed: %s", d->name,
                          strerror(errno));
    if (posix_memalign((void **)&c->ctrl, 4096, sizeof(struct ctrl)) != 0)
        return fail_errno(c, GT_SYSTEM_ERROR, ENOMEM, "%s: out of memory", d->name);
    memset(c->ctrl, 0, sizeof(struct ctrl));
    c->ctrl_mr = gt_ibv.reg_mr(d->pd, c->ctrl, sizeof(struct ctrl),
                               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                   IBV_ACCESS_REMOTE_READ);
    if (!c->ctrl_mr)
        return fail_errno(c, GT_SYSTEM_ERROR, errno,
                          "%s: ibv_reg_mr of the control block failed: %s", d->name,
                          strerror(errno));
    for (int q = 0; q < nqps; q++) {
        c->qps[q] = create_qp(c, c->sq_depth, GT_IB_RQ_DEPTH);
        if (!c->qps[q])
            return fail_errno(c, GT_SYSTEM_ERROR, errno, "%s: creating QP %d of %d failed: %s",
                              d->name, q, nqps, strerror(errno));
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
    snprintf(w->dev, sizeof(w->dev), "%.31s", c->dev->name);
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
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    char ip[INET_ADDRSTRLEN] = "?";
    if (getpeername(c->fd, (struct sockaddr *)&sa, &sl) == 0)
        inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
    snprintf(c->peer, sizeof(c->peer), "%s:%u (device %s, QPN %u)", ip,
             (unsigned)ntohs(sa.sin_port), dev, le32toh(w->qpn[0]));
}

static gt_result connect_qps(struct ib_comm *c, const struct ib_wire *w)
{
    for (int q = 0; q < c->nqps; q++) {
        const char *step = "";
        int rc = qp_connect(c, c->qps[q], c->psn[q], le32toh(w->qpn[q]), le32toh(w->psn[q]), w,
                            &step);
        if (rc)
            return fail_errno(c, GT_SYSTEM_ERROR, rc,
                              "%s: %s of QP %u toward %s failed: %s (errno %d)", c->dev->name, step,
                              c->qps[q]->qp_num, c->peer, strerror(rc), rc);
    }
    return GT_OK;
}

/* ---- gt_net_ops: setup ------------------------------------------------- */

static int init_refs;

static gt_result ib_init(void **ctx, uint64_t comm_id, int has_comm_id,
                         const struct gt_comm_config *config, gt_logger_fn logger,
                         gt_profiler_fn profiler)
{
    (void)has_comm_id, (void)profiler;
    if (logger)
        gt_log_set_logger(logger);
    int n = gt_ib_devices_open();
    if (n == 0) {
        gt_ib_devices_close();
        /* INFO, not WARN: in auto mode this is the normal answer on a host
         * without RDMA, and the core says which transport it chose. */
        GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET, "ib: no active RDMA port%s%s",
                gt_ibv.loaded ? "" : ": ", gt_ibv.loaded ? "" : gt_ibv.why);
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, 0,
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
    x->tc = (int)gt_env_long("GDRTRACE_IB_TC", config && config->traffic_class >= 0
                                                    ? config->traffic_class : 0, 0, 255);
    __atomic_add_fetch(&init_refs, 1, __ATOMIC_RELAXED);
    *ctx = x;
    return GT_OK;
}

static gt_result ib_finalize(void *ctx)
{
    free(ctx);
    __atomic_sub_fetch(&init_refs, 1, __ATOMIC_RELAXED);
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
        return bad_arg(__func__);
    struct gt_ib_dev *d = &gt_ib_devs[dev];
    memset(p, 0, sizeof(*p));
    p->name = d->name;
    p->pci_path = d->pci_path;
    p->guid = d->guid;
    p->ptr_support = d->reg.probe.advertised;
    p->reg_is_global = 1;
    p->force_flush = 0;
    p->speed_mbps = d->speed_mbps;
    p->port = d->port;
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
    p->rail_id = -1;
    p->plane_id = -1;
    return GT_OK;
}

static gt_result ib_get_probe(int dev, struct gt_dev_probe *probe)
{
    if (dev < 0 || dev >= gt_ib_ndevs)
        return bad_arg(__func__);
    *probe = gt_ib_devs[dev].reg.probe;
    return GT_OK;
}

static gt_result ib_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
    struct ib_ctx *x = ctx;
    if (dev < 0 || dev >= gt_ib_ndevs)
        return bad_arg(__func__);
    struct ib_listen *l = calloc(1, sizeof(*l));
    if (!l)
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                           "ib: listen: out of memory");
    l->kind = COMM_LISTEN;
    l->dev = &gt_ib_devs[dev];
    l->tc = x ? x->tc : 0;
    l->nonce = rand64();
    l->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (l->fd < 0)
        goto err_sock;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t sl = sizeof(sa);
    if (bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(l->fd, 16) != 0 ||
        getsockname(l->fd, (struct sockaddr *)&sa, &sl) != 0)
        goto err_sock;
    struct ib_handle *h = handle;
    memset(h, 0, GT_NET_HANDLE_MAXSIZE);
    h->magic = htole32(GT_IB_MAGIC);
    h->version = htole16(GT_IB_WIRE_VERSION);
    h->port = sa.sin_port;
    h->addr = oob_addr();
    h->nonce = htole64(l->nonce);
    h->csum = handle_csum(h);
    *listen_comm = l;
    return GT_OK;
err_sock:;
    int e = errno;
    GT_WARN("ib: listen socket for %s: %s", l->dev->name, strerror(e));
    gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, e, "ib: listen socket for %s: %s",
                l->dev->name, strerror(e));
    if (l->fd >= 0)
        close(l->fd);
    free(l);
    return GT_SYSTEM_ERROR;
}

static gt_result ib_close_listen(void *lc)
{
    struct ib_listen *l = lc;
    if (!l)
        return GT_OK;
    comm_free(l->pending);
    close(l->fd);
    free(l);
    return GT_OK;
}

enum { ST_TCP = 1, ST_SEND_INFO, ST_RECV_INFO, ST_SEND_READY, ST_RECV_READY };

static gt_result ib_connect(void *ctx, int dev, void *handle, void **send_comm,
                            void **send_dev_comm)
{
    struct ib_ctx *x = ctx;
    struct ib_handle *h = handle;
    *send_comm = NULL;
    if (send_dev_comm)
        *send_dev_comm = NULL;
    if (dev < 0 || dev >= gt_ib_ndevs)
        return bad_arg(__func__);
    struct ib_comm *c = h->stage_magic == STAGE_MAGIC ? h->stage : NULL;
    gt_result r = GT_INTERNAL_ERROR;
    if (!c) {
        if (le32toh(h->magic) != GT_IB_MAGIC || le16toh(h->version) != GT_IB_WIRE_VERSION ||
            h->csum != handle_csum(h) || h->port == 0) {
            GT_WARN("ib: connect: handle is not an intact gdrtrace ib v%d handle "
                    "(magic %#x version %u checksum %s)",
                    GT_IB_WIRE_VERSION, le32toh(h->magic), le16toh(h->version),
                    h->csum == handle_csum(h) ? "ok" : "bad");
            return gt_net_fail(GT_INVALID_ARGUMENT, GT_REASON_BAD_ARGUMENT, 0,
                               "ib: connect: handle is not an intact gdrtrace ib handle");
        }
        c = calloc(1, sizeof(*c));
        if (!c)
            return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                               "ib: connect: out of memory");
        c->kind = COMM_SEND;
        c->dev = &gt_ib_devs[dev];
        c->fd = -1;
        c->tc = x ? x->tc : 0;
        c->nonce = le64toh(h->nonce);
        c->ss = calloc(GT_IB_SLOTS, sizeof(*c->ss));
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &h->addr, ip, sizeof(ip));
        snprintf(c->peer, sizeof(c->peer), "%s:%u", ip, (unsigned)ntohs(h->port));
        if (!c->ss || (r = comm_resources(c, env_qps())) != GT_OK)
            goto err;
        fill_wire(c, &c->out, (uint64_t)(uintptr_t)c->ctrl->fifo);
        c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->fd < 0) {
            r = fail_errno(c, GT_SYSTEM_ERROR, errno, "ib: socket: %s", strerror(errno));
            goto err;
        }
        int one = 1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = h->port,
                                 .sin_addr.s_addr = h->addr};
        if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS) {
            r = fail_errno(c, GT_REMOTE_ERROR, errno, "ib: connect to %s: %s", c->peer,
                           strerror(errno));
            goto err;
        }
        c->stage = ST_TCP;
        h->stage_magic = STAGE_MAGIC;
        h->stage = c;
    }
    if (c->stage == ST_TCP) {
        int e = 0;
        socklen_t el = sizeof(e);
        struct sockaddr_in sa;
        socklen_t sl = sizeof(sa);
        if (getpeername(c->fd, (struct sockaddr *)&sa, &sl) != 0) {
            if (errno != ENOTCONN)
                e = errno;
            else {
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el);
                if (!e)
                    return GT_OK; /* still connecting */
            }
            r = fail_errno(c, GT_REMOTE_ERROR, e, "ib: connect to %s: %s", c->peer, strerror(e));
            goto err;
        }
        c->stage = ST_SEND_INFO;
    }
    if (c->stage == ST_SEND_INFO) {
        int k = xfer(c->fd, &c->out, sizeof(c->out), &c->out_off, 1);
        if (k == 0)
            return GT_OK;
        if (k < 0) {
            r = fail_errno(c, GT_REMOTE_ERROR, errno, "ib: sending setup to %s: %s", c->peer,
                           strerror(errno));
            goto err;
        }
        c->stage = ST_RECV_INFO;
    }
    if (c->stage == ST_RECV_INFO) {
        int k = xfer(c->fd, &c->in, sizeof(c->in), &c->in_off, 0);
        if (k == 0)
            return GT_OK;
        if (k < 0) {
            r = fail(c, GT_REMOTE_ERROR,
                     "ib: peer %s vanished during connection setup: %s", c->peer,
                     strerror(errno));
            goto err;
        }
        const char *bad = check_wire(&c->in, c->nonce, c->nqps);
        if (bad) {
            r = fail(c, GT_REMOTE_ERROR, "ib: setup from %s rejected: %s", c->peer,
                     bad);
            goto err;
        }
        set_peer(c, &c->in);
        c->raddr = le64toh(c->in.addr);
        c->rkey = le32toh(c->in.rkey);
        if ((r = connect_qps(c, &c->in)) != GT_OK)
            goto err;
        c->stage = ST_SEND_READY;
        c->out_off = 0;
        c->ready = 1;
    }
    if (c->stage == ST_SEND_READY) {
        int k = xfer(c->fd, &c->ready, 1, &c->out_off, 1);
        if (k == 0)
            return GT_OK;
        if (k < 0) {
            r = fail_errno(c, GT_REMOTE_ERROR, errno, "ib: peer %s vanished: %s", c->peer,
                           strerror(errno));
            goto err;
        }
    }
    c->stage = 0;
    h->stage_magic = 0;
    h->stage = NULL;
    GT_INFO(GT_LOGSUB_NET, "ib: %s connected to %s, %d QP(s)", c->dev->name, c->peer,
            c->nqps);
    *send_comm = c;
    return GT_OK;
err:
    h->stage_magic = 0;
    h->stage = NULL;
    /* Only an allocation failed without a description (F1). */
    r = c->err ? again(c) : fail_errno(c, r, ENOMEM, "ib: connect to %s: out of memory", c->peer);
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
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
                errno == ECONNABORTED)
                return GT_OK;
            int e = errno;
            GT_WARN("ib: accept on %s: %s", l->dev->name, strerror(e));
            return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, e,
                               "ib: accept on %s: %s", l->dev->name, strerror(e));
        }
        c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                               "ib: accept: out of memory");
        }
        c->kind = COMM_RECV;
        c->dev = l->dev;
        c->fd = fd;
        c->tc = l->tc;
        c->nonce = l->nonce;
        c->stage = ST_RECV_INFO;
        snprintf(c->peer, sizeof(c->peer), "(connecting peer)");
        l->pending = c;
    }
    if (c->stage == ST_RECV_INFO) {
        int k = xfer(c->fd, &c->in, sizeof(c->in), &c->in_off, 0);
        if (k == 0)
            return GT_OK;
        if (k < 0) {
            r = fail_errno(c, GT_REMOTE_ERROR, errno,
                           "ib: %s: peer vanished during connection setup: %s", l->dev->name,
                           strerror(errno));
            goto err;
        }
        const char *bad = check_wire(&c->in, c->nonce, 0);
        set_peer(c, &c->in);
        if (bad) {
            r = fail(c, GT_REMOTE_ERROR, "ib: setup from %s rejected: %s", c->peer,
                     bad);
            goto err;
        }
        c->rs = calloc(GT_IB_SLOTS, sizeof(*c->rs));
        if (!c->rs) {
            r = GT_SYSTEM_ERROR;
            goto err;
        }
        if ((r = comm_resources(c, le16toh(c->in.nqps))) != GT_OK)
            goto err;
        c->raddr = le64toh(c->in.addr);
        c->rkey = le32toh(c->in.rkey);
        if ((r = connect_qps(c, &c->in)) != GT_OK)
            goto err;
        fill_wire(c, &c->out, (uint64_t)(uintptr_t)c->ctrl->cmpl);
        c->stage = ST_SEND_INFO;
    }
    if (c->stage == ST_SEND_INFO) {
        int k = xfer(c->fd, &c->out, sizeof(c->out), &c->out_off, 1);
        if (k == 0)
            return GT_OK;
        if (k < 0) {
            r = fail_errno(c, GT_REMOTE_ERROR, errno, "ib: peer %s vanished: %s", c->peer,
                           strerror(errno));
            goto err;
        }
        c->stage = ST_RECV_READY;
        c->in_off = 0;
    }
    if (c->stage == ST_RECV_READY) {
        int k = xfer(c->fd, &c->ready, 1, &c->in_off, 0);
        if (k == 0)
            return GT_OK;
        if (k < 0 || c->ready != 1) {
            r = fail_errno(c, GT_REMOTE_ERROR, k < 0 ? errno : 0,
                           "ib: peer %s vanished before ready: %s", c->peer,
                           k < 0 ? strerror(errno) : "bad ready byte");
            goto err;
        }
    }
    c->stage = 0;
    l->pending = NULL;
    GT_INFO(GT_LOGSUB_NET, "ib: %s accepted %s, %d QP(s)", c->dev->name, c->peer,
            c->nqps);
    *recv_comm = c;
    return GT_OK;
err:
    l->pending = NULL;
    r = c->err ? again(c) : fail_errno(c, r, ENOMEM, "ib: accept from %s: out of memory", c->peer);
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

/* ---- registration ------------------------------------------------------ */

static struct gt_ib_dev *comm_dev(void *comm)
{
    /* ib_comm and ib_listen both start with (kind, dev). */
    struct ib_comm *c = comm;
    return c ? c->dev : NULL;
}

static gt_result ib_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                                  int fd, void **mhandle, struct gt_reg_report *report)
{
    struct gt_ib_dev *d = comm_dev(comm);
    if (!d)
        return bad_arg(__func__);
    struct gt_mr *m = NULL;
    char err[512];
    struct gt_reg_report mine = {0};
    if (!report)
        report = &mine;
    gt_result r = gt_reg_register(&d->reg, &gt_ib_policy, data, size, type, offset, fd, &m, report,
                                  err, sizeof(err));
    *mhandle = m;
    if (r != GT_OK) /* F5: the policy's reason and errno, in its words */
        gt_net_fail(r, report->reason, report->err, "%s", err);
    return r;
}

static gt_result ib_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle,
                           struct gt_reg_report *report)
{
    return ib_reg_mr_dmabuf(comm, data, size, type, 0, -1, mhandle, report);
}

static gt_result ib_dereg_mr(void *comm, void *mhandle)
{
    struct gt_ib_dev *d = comm_dev(comm);
    if (!d)
        return bad_arg(__func__);
    if (!mhandle)
        return GT_OK;
    gt_result r = gt_reg_deregister(&d->reg, mhandle);
    if (r != GT_OK)
        gt_net_fail(r, GT_REASON_TRANSPORT_ERROR, 0, "ib: deregMr failed (result %d)", (int)r);
    return r;
}

/* ---- data path --------------------------------------------------------- */

static gt_result wc_error(struct ib_comm *c, const struct ibv_wc *wc)
{
    static const char *const kinds[] = {"?", "send", "recv", "clear-to-send", "flush", "data"};
    int k = WR_KIND(wc->wr_id);
    return fail(c, GT_REMOTE_ERROR,
                "ib: %s: work completion error '%s' (status %d, vendor_err %#x) "
                "on QP %u (%s, slot %d) with peer %s",
                c->dev->name, gt_ibv.wc_status_str(wc->status), (int)wc->status, wc->vendor_err,
                wc->qp_num, (k >= 0 && k <= 5) ? kinds[k] : "?", WR_SLOT(wc->wr_id), c->peer);
}

static gt_result post_slot(struct ib_comm *c, struct send_slot *s);

/* Polls the CQ and applies completions.  No system call, no lock. */
static gt_result progress(struct ib_comm *c)
{
    if (c->err)
        return again(c);
    struct ibv_wc wc[16];
    for (int round = 0; round < 4; round++) {
        int n = gt_ibv.poll_cq(c->cq, 16, wc);
        if (n < 0)
            return fail(c, GT_SYSTEM_ERROR, "ib: %s: ibv_poll_cq failed (%d)",
                        c->dev->name, n);
        for (int i = 0; i < n; i++) {
            if (wc[i].status != IBV_WC_SUCCESS)
                return wc_error(c, &wc[i]);
            int slot = WR_SLOT(wc[i].wr_id), q = WR_QP(wc[i].wr_id);
            if (slot >= GT_IB_SLOTS || q >= GT_IB_MAX_QPS)
                return fail(c, GT_INTERNAL_ERROR, "ib: bad wr_id %#llx",
                            (unsigned long long)wc[i].wr_id);
            switch (WR_KIND(wc[i].wr_id)) {
            case WR_SEND: {
                struct send_slot *s = &c->ss[slot];
                c->sq_used[q] -= s->wrs[q];
                s->events--;
                break;
            }
            case WR_RECV: {
                struct recv_slot *s = &c->rs[slot];
                c->rq_used[q]--;
                uint32_t imm = ntohl(wc[i].imm_data);
                if (wc[i].opcode != IBV_WC_RECV_RDMA_WITH_IMM || imm != s->seq + 1)
                    return fail(c, GT_REMOTE_ERROR,
                                "ib: %s: protocol error from %s: QP %d slot %d got "
                                "opcode %d imm %u, expected seq %u",
                                c->dev->name, c->peer, q, slot, (int)wc[i].opcode, imm,
                                s->seq + 1);
                s->events--;
                break;
            }
            case WR_CTS:
                c->sq_used[q]--;
                break;
            case WR_FLUSH:
                c->flush_used--;
                c->flush[slot].done = 1;
                break;
            default:
                return fail(c, GT_INTERNAL_ERROR, "ib: unknown completion %#llx",
                            (unsigned long long)wc[i].wr_id);
            }
        }
        if (n < 16)
            break;
    }
    /* Slots whose sends are all in but did not fit in the SQ: in order. */
    if (c->kind == COMM_SEND) {
        while (c->next_post != c->seq) {
            struct send_slot *s = &c->ss[c->next_post % GT_IB_SLOTS];
            if (!s->active || s->posted || s->nposted != s->nreqs)
                break;
            gt_result r = post_slot(c, s);
            if (r != GT_OK)
                return r;
            if (!s->posted)
                break;
        }
    }
    return GT_OK;
}

/* Posts a complete slot's WRs on every QP if the SQs have room. */
static gt_result post_slot(struct ib_comm *c, struct send_slot *s)
{
    struct ibv_send_wr wrs[GT_IB_MAX_WRS_PER_QP];
    struct ibv_sge sges[GT_IB_MAX_WRS_PER_QP];
    int slot = (int)(s - c->ss);
    /* First count, so a slot goes out whole or not at all. */
    int need[GT_IB_MAX_QPS];
    for (int q = 0; q < c->nqps; q++) {
        need[q] = 1; /* QP 0: the record; others: a zero-byte WRITE_WITH_IMM at most */
        for (int i = 0; i < s->nreqs; i++) {
            size_t sz = s->reqs[i].size;
            size_t share = (sz + (size_t)c->nqps - 1) / (size_t)c->nqps;
            share = (share + GT_IB_CHUNK_ALIGN - 1) & ~(size_t)(GT_IB_CHUNK_ALIGN - 1);
            size_t off = share * (size_t)q;
            if (off >= sz)
                continue;
            size_t len = sz - off < share ? sz - off : share;
            need[q] += (int)((len + GT_IB_MAX_WR_BYTES - 1) / GT_IB_MAX_WR_BYTES);
        }
        if (need[q] > GT_IB_MAX_WRS_PER_QP)
            return fail(c, GT_INVALID_ARGUMENT,
                        "ib: %s: message too large for one slot (%d work requests "
                        "on one QP; raise GDRTRACE_IB_QPS)",
                        c->dev->name, need[q]);
        if (c->sq_used[q] + need[q] > c->sq_depth)
            return GT_OK; /* retried from progress() */
    }
    struct cmpl_rec *rec = &c->ctrl->rec[slot];
    rec->seq = s->seq + 1;
    rec->n = (uint32_t)s->nreqs;
    for (int i = 0; i < s->nreqs; i++)
        rec->size[i] = s->reqs[i].size;
    for (int q = 0; q < c->nqps; q++) {
        int w = 0;
        for (int i = 0; i < s->nreqs; i++) {
            struct ib_req *r = &s->reqs[i];
            size_t sz = r->size;
            size_t share = (sz + (size_t)c->nqps - 1) / (size_t)c->nqps;
            share = (share + GT_IB_CHUNK_ALIGN - 1) & ~(size_t)(GT_IB_CHUNK_ALIGN - 1);
            size_t off = share * (size_t)q;
            if (off >= sz)
                continue;
            size_t end = sz - off < share ? sz : off + share;
            for (size_t o = off; o < end; o += GT_IB_MAX_WR_BYTES) {
                size_t len = end - o < GT_IB_MAX_WR_BYTES ? end - o : GT_IB_MAX_WR_BYTES;
                memset(&wrs[w], 0, sizeof(wrs[w]));
                sges[w].addr = (uintptr_t)r->data + o;
                sges[w].length = (uint32_t)len;
                sges[w].lkey = r->mh->mr->lkey;
                wrs[w].wr_id = wr_id(WR_DATA, slot, q);
                wrs[w].sg_list = &sges[w];
                wrs[w].num_sge = 1;
                wrs[w].opcode = IBV_WR_RDMA_WRITE;
                wrs[w].wr.rdma.remote_addr = s->e[r->idx].addr + o;
                wrs[w].wr.rdma.rkey = s->e[r->idx].rkey;
                w++;
            }
        }
        if (q == 0) {
            memset(&wrs[w], 0, sizeof(wrs[w]));
            sges[w].addr = (uintptr_t)rec;
            sges[w].length = sizeof(*rec);
            sges[w].lkey = c->ctrl_mr->lkey;
            wrs[w].wr_id = wr_id(WR_DATA, slot, q);
            wrs[w].sg_list = &sges[w];
            wrs[w].num_sge = 1;
            wrs[w].opcode = IBV_WR_RDMA_WRITE;
            wrs[w].wr.rdma.remote_addr = c->raddr + (uint64_t)slot * sizeof(struct cmpl_rec);
            wrs[w].wr.rdma.rkey = c->rkey;
            w++;
        }
        /* The QP's last write carries the immediate (QP 0: the record, so
         * it has landed when the receive completes; else the last data
         * write): one work request and one packet fewer per QP and message
         * than a separate zero-byte WRITE_WITH_IMM, same completion for the
         * receiver.  A QP with nothing to write gets the zero-byte one. */
        if (w == 0) {
            memset(&wrs[w], 0, sizeof(wrs[w]));
            wrs[w].sg_list = NULL;
            wrs[w].num_sge = 0;
            /* Any valid remote address: zero bytes are written. */
            wrs[w].wr.rdma.remote_addr = c->raddr;
            wrs[w].wr.rdma.rkey = c->rkey;
            w++;
        }
        wrs[w - 1].wr_id = wr_id(WR_SEND, slot, q);
        wrs[w - 1].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        wrs[w - 1].send_flags = IBV_SEND_SIGNALED;
        wrs[w - 1].imm_data = htonl(s->seq + 1);
        for (int k = 0; k + 1 < w; k++)
            wrs[k].next = &wrs[k + 1];
        struct ibv_send_wr *bad = NULL;
        int rc = gt_ibv.post_send(c->qps[q], &wrs[0], &bad);
        if (rc)
            return fail_errno(c, GT_SYSTEM_ERROR, rc,
                              "ib: %s: ibv_post_send on QP %u to %s failed: %s (errno %d)",
                              c->dev->name, c->qps[q]->qp_num, c->peer, strerror(rc), rc);
        s->wrs[q] = w;
        c->sq_used[q] += w;
    }
    s->events = c->nqps;
    s->posted = 1;
    c->next_post++;
    return GT_OK;
}

static gt_result ib_isend(void *sc, void *data, size_t size, int tag, void *mhandle,
                          void *phandle, void **request)
{
    (void)phandle;
    struct ib_comm *c = sc;
    *request = NULL;
    if (c->err)
        return again(c);
    int si = (int)(c->seq % GT_IB_SLOTS);
    struct send_slot *s = &c->ss[si];
    volatile struct cts_entry *fe = c->ctrl->fifo[si].e;
    if (fe[0].seq != c->seq + 1) {
        gt_result r = progress(c); /* no clear-to-send yet */
        return r != GT_OK ? r : check_peer(c);
    }
    if (s->active && s->seq != c->seq)
        return progress(c); /* previous use of the slot not yet tested */
    if (!s->active) {
        if (s->ntested != 0 || s->posted)
            return progress(c); /* previous use of the slot not yet tested */
        uint32_t n = fe[0].nreqs;
        if (n < 1 || n > GT_IB_MAX_RECVS)
            return fail(c, GT_REMOTE_ERROR,
                        "ib: %s: clear-to-send from %s has %u entries", c->dev->name,
                        c->peer, n);
        for (uint32_t i = 0; i < n; i++)
            if (fe[i].seq != c->seq + 1)
                return progress(c); /* not all entries landed yet */
        /* The entries are complete; read them after seeing their seq. */
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        memset(s, 0, sizeof(*s));
        for (uint32_t i = 0; i < n; i++) {
            s->e[i].addr = fe[i].addr;
            s->e[i].size = fe[i].size;
            s->e[i].rkey = fe[i].rkey;
            s->e[i].tag = fe[i].tag;
        }
        s->active = 1;
        s->seq = c->seq;
        s->nreqs = (int)n;
    }
    int idx = -1;
    for (int i = 0; i < s->nreqs; i++)
        if (!s->used[i] && s->e[i].tag == tag) {
            idx = i;
            break;
        }
    if (idx < 0)
        return fail(c, GT_INVALID_USAGE,
                    "ib: %s: isend tag %d matches none of the %d receive(s) posted "
                    "by %s for slot %u",
                    c->dev->name, tag, s->nreqs, c->peer, s->seq);
    if (size > s->e[idx].size)
        return fail(c, GT_INVALID_USAGE,
                    "ib: %s: isend of %zu bytes (tag %d) exceeds the %llu bytes the "
                    "receiver %s posted",
                    c->dev->name, size, tag, (unsigned long long)s->e[idx].size, c->peer);
    struct gt_mr *mh = mhandle;
    if (size > 0 && (!mh || (uintptr_t)data < mh->base || (uintptr_t)data + size > mh->end))
        return fail(c, GT_INVALID_ARGUMENT,
                    "ib: %s: isend buffer %p+%zu is not inside its memory handle",
                    c->dev->name, data, size);
    struct ib_req *r = &s->reqs[idx];
    memset(r, 0, sizeof(*r));
    r->type = REQ_SEND;
    r->c = c;
    r->slot = si;
    r->idx = idx;
    r->size = size;
    r->data = data;
    r->mh = mh;
    s->used[idx] = 1;
    s->nposted++;
    if (s->nposted == s->nreqs) {
        c->seq++;
        gt_result res = GT_OK;
        if (c->next_post == s->seq)
            res = post_slot(c, s);
        if (res != GT_OK)
            return res;
    }
    *request = r;
    return GT_OK;
}

static gt_result ib_irecv(void *rc, int n, void **data, size_t *sizes, int *tags, void **mhandles,
                          void **phandles, void **request)
{
    (void)phandles;
    struct ib_comm *c = rc;
    *request = NULL;
    if (c->err)
        return again(c);
    if (n < 1 || n > GT_IB_MAX_RECVS)
        return fail(c, GT_INVALID_ARGUMENT, "ib: irecv with n=%d (1..%d)", n,
                    GT_IB_MAX_RECVS);
    int si = (int)(c->seq % GT_IB_SLOTS);
    struct recv_slot *s = &c->rs[si];
    if (s->busy || c->sq_used[0] + 1 > c->sq_depth) {
        gt_result r = progress(c);
        return r != GT_OK ? r : check_peer(c);
    }
    for (int q = 0; q < c->nqps; q++)
        if (c->rq_used[q] >= GT_IB_RQ_DEPTH)
            return progress(c);
    for (int i = 0; i < n; i++) {
        struct gt_mr *mh = mhandles ? mhandles[i] : NULL;
        if (sizes[i] > 0 &&
            (!mh || (uintptr_t)data[i] < mh->base || (uintptr_t)data[i] + sizes[i] > mh->end))
            return fail(c, GT_INVALID_ARGUMENT,
                        "ib: %s: irecv buffer %p+%zu is not inside its memory "
                        "handle",
                        c->dev->name, data[i], sizes[i]);
    }
    for (int q = 0; q < c->nqps; q++) {
        struct ibv_recv_wr wr, *bad = NULL;
        memset(&wr, 0, sizeof(wr));
        wr.wr_id = wr_id(WR_RECV, si, q);
        int e = gt_ibv.post_recv(c->qps[q], &wr, &bad);
        if (e)
            return fail_errno(c, GT_SYSTEM_ERROR, e,
                              "ib: %s: ibv_post_recv on QP %u failed: %s (errno %d)", c->dev->name,
                              c->qps[q]->qp_num, strerror(e), e);
        c->rq_used[q]++;
    }
    struct cts_slot *cts = &c->ctrl->cts[si];
    for (int i = 0; i < n; i++) {
        struct gt_mr *mh = mhandles ? mhandles[i] : NULL;
        cts->e[i].addr = (uintptr_t)data[i];
        cts->e[i].size = sizes[i];
        cts->e[i].rkey = mh ? mh->mr->rkey : 0;
        cts->e[i].tag = tags ? tags[i] : 0;
        cts->e[i].nreqs = (uint32_t)n;
        cts->e[i].seq = c->seq + 1;
        s->posted_size[i] = sizes[i];
    }
    struct ibv_sge sge = {.addr = (uintptr_t)cts,
                          .length = (uint32_t)(n * sizeof(struct cts_entry)),
                          .lkey = c->ctrl_mr->lkey};
    struct ibv_send_wr wr, *bad = NULL;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id(WR_CTS, si, 0);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = c->raddr + (uint64_t)si * sizeof(struct cts_slot);
    wr.wr.rdma.rkey = c->rkey;
    int e = gt_ibv.post_send(c->qps[0], &wr, &bad);
    if (e)
        return fail(c, GT_SYSTEM_ERROR,
                    "ib: %s: posting clear-to-send on QP %u to %s failed: %s",
                    c->dev->name, c->qps[0]->qp_num, c->peer, strerror(e));
    c->sq_used[0]++;
    s->busy = 1;
    s->seq = c->seq;
    s->n = n;
    s->events = c->nqps;
    memset(&s->req, 0, sizeof(s->req));
    s->req.type = REQ_RECV;
    s->req.c = c;
    s->req.slot = si;
    c->seq++;
    *request = &s->req;
    return GT_OK;
}

/* The flush QP is connected to itself: an RDMA READ through it completes
 * only after the NIC's earlier writes to GPU memory are visible. */
static gt_result make_flush_qp(struct ib_comm *c)
{
    c->flush_qp = create_qp(c, GT_IB_SLOTS + 4, 1);
    if (!c->flush_qp)
        return fail_errno(c, GT_SYSTEM_ERROR, errno, "ib: %s: creating the flush QP: %s",
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
        return fail(c, GT_SYSTEM_ERROR, "ib: %s: %s of the flush QP %u: %s",
                    c->dev->name, step, c->flush_qp->qp_num, strerror(rc));
    return GT_OK;
}

static gt_result ib_iflush(void *rc, int n, void **data, int *sizes, void **mhandles,
                           void **request)
{
    struct ib_comm *c = rc;
    *request = NULL;
    if (c->err)
        return again(c);
    int last = -1;
    for (int i = 0; i < n; i++) {
        struct gt_mr *mh = mhandles ? mhandles[i] : NULL;
        if (sizes[i] > 0 && mh && mh->gpu)
            last = i;
    }
    if (last < 0) {
        /* Host memory only: nothing to flush, a request that is done. */
        c->noop.type = REQ_DONE;
        c->noop.c = c;
        *request = &c->noop;
        return GT_OK;
    }
    if (!c->flush_qp) {
        gt_result r = make_flush_qp(c);
        if (r != GT_OK)
            return r;
    }
    int fi = (int)(c->flush_seq % GT_IB_SLOTS);
    struct ib_req *fr = &c->flush[fi];
    if (fr->type == REQ_FLUSH && !fr->done)
        return progress(c);
    struct gt_mr *mh = mhandles[last];
    struct ibv_sge sge = {.addr = (uintptr_t)c->ctrl->flush_dst, .length = 1,
                          .lkey = c->ctrl_mr->lkey};
    struct ibv_send_wr wr, *bad = NULL;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id(WR_FLUSH, fi, 0);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = (uintptr_t)data[last];
    wr.wr.rdma.rkey = mh->mr->rkey;
    int e = gt_ibv.post_send(c->flush_qp, &wr, &bad);
    if (e)
        return fail(c, GT_SYSTEM_ERROR, "ib: %s: posting the flush READ: %s",
                    c->dev->name, strerror(e));
    memset(fr, 0, sizeof(*fr));
    fr->type = REQ_FLUSH;
    fr->c = c;
    fr->slot = fi;
    c->flush_used++;
    c->flush_seq++;
    *request = fr;
    return GT_OK;
}

static gt_result ib_test(void *request, int *done, int *sizes)
{
    struct ib_req *r = request;
    *done = 0;
    if (!r)
        return bad_arg(__func__);
    struct ib_comm *c = r->c;
    if (r->type == REQ_DONE) {
        *done = 1;
        return GT_OK;
    }
    gt_result res = progress(c);
    if (res != GT_OK)
        return res;
    switch (r->type) {
    case REQ_SEND: {
        struct send_slot *s = &c->ss[r->slot];
        if (!s->posted || s->events > 0)
            return check_peer(c);
        *done = 1;
        if (sizes)
            sizes[0] = (int)(r->size > 0x7fffffff ? 0x7fffffff : r->size);
        r->type = 0;
        if (++s->ntested == s->nreqs)
            memset(s, 0, sizeof(*s)); /* the slot is free again */
        return GT_OK;
    }
    case REQ_RECV: {
        struct recv_slot *s = &c->rs[r->slot];
        if (s->events > 0)
            return check_peer(c);
        volatile struct cmpl_rec *rec = &c->ctrl->cmpl[r->slot];
        if (rec->seq != s->seq + 1 || rec->n != (uint32_t)s->n)
            return fail(c, GT_REMOTE_ERROR,
                        "ib: %s: completion record from %s for slot %u is "
                        "inconsistent (seq %u n %u)",
                        c->dev->name, c->peer, s->seq, rec->seq, rec->n);
        for (int i = 0; i < s->n; i++) {
            uint64_t got = rec->size[i];
            if (got > s->posted_size[i])
                return fail(c, GT_REMOTE_ERROR,
                            "ib: %s: peer %s reports %llu bytes for a %zu-byte "
                            "receive",
                            c->dev->name, c->peer, (unsigned long long)got, s->posted_size[i]);
            if (sizes)
                sizes[i] = (int)(got > 0x7fffffff ? 0x7fffffff : got);
        }
        *done = 1;
        r->type = 0;
        s->busy = 0;
        return GT_OK;
    }
    case REQ_FLUSH:
        if (r->done) {
            *done = 1;
            r->type = 0;
        }
        return GT_OK;
    default:
        return fail(c, GT_INTERNAL_ERROR, "ib: test() on a finished request %p",
                    request);
    }
}

/* Device offload (netDeviceType UNPACK) is not implemented: we advertise
 * NCCL_NET_DEVICE_HOST, so NCCL never calls these two. */
static gt_result ib_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle)
{
    (void)comm, (void)mhandle;
    *dptr_mhandle = NULL;
    return gt_net_fail(GT_INTERNAL_ERROR, GT_REASON_BAD_ARGUMENT, 0,
                       "ib: getDeviceMr: no device offload (netDeviceType HOST)");
}

static gt_result ib_irecv_consumed(void *recv_comm, int n, void *request)
{
    (void)recv_comm, (void)n, (void)request;
    return gt_net_fail(GT_INTERNAL_ERROR, GT_REASON_BAD_ARGUMENT, 0,
                       "ib: irecvConsumed: no device offload (netDeviceType HOST)");
}

/* NCCL's per-communicator network attributes are hints; we take none. */
static gt_result ib_set_net_attr(void *ctx, void *net_attr)
{
    (void)ctx, (void)net_attr;
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
    .reg_mr = ib_reg_mr,
    .reg_mr_dmabuf = ib_reg_mr_dmabuf,
    .dereg_mr = ib_dereg_mr,
    .isend = ib_isend,
    .irecv = ib_irecv,
    .iflush = ib_iflush,
    .test = ib_test,
    .close_send = ib_close_send,
    .close_recv = ib_close_recv,
    .close_listen = ib_close_listen,
    .get_device_mr = ib_get_device_mr,
    .irecv_consumed = ib_irecv_consumed,
    .finalize = ib_finalize,
    .set_net_attr = ib_set_net_attr,
    .get_probe = ib_get_probe,
};
