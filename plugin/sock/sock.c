/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock.c — gt_sock_ops: NCCL-style point-to-point messaging over TCP, host
 * memory only.  Owns the device table, listen/connect/accept, the request
 * pools and the wire protocol.
 *
 * sock has one mode, the shape of NCCL's Socket transport without helper
 * threads: one TCP stream per connection carries everything (hello, CTS,
 * DATA headers and the payloads after them), receives are single (maxRecvs
 * 1) so sends go out eagerly, and test() moves bytes only up to the request
 * it was given.  The GPU measurements chose each of these over the
 * alternatives the transport once had (data sockets, grouped receives,
 * progress of everything, waiting for a writable socket); their variables
 * are retired (docs/configuration.md) and docs/results/ keeps the runs.
 *
 * Wire protocol (host byte order on the socket: both ends run this build,
 * which the hello's version pins; the handle alone is byte-order neutral):
 *   hello   (connector -> acceptor, once): struct wire_hello, index 0 and
 *           nsocks 0 (the fields once numbered data sockets; a peer that
 *           asks for any is refused).
 *   CTS     (receiver -> sender, one per irecv until the sender went eager):
 *           wire_hdr{type CTS, sub = 1, slot, flags EAGER_OK} + one
 *           wire_cts_ent{tag, size}.  "Clear to send" into that posted
 *           receive, and the receiver's promise to post only single receives.
 *   DATA    (sender -> receiver, one per isend): wire_hdr{type DATA, sub 0,
 *           slot, flags, size, tag}, followed by the payload itself
 *           (unless flagged truncated).
 *
 * Eager sends (as NCCL's own Socket transport): until the first CTS arrives
 * an isend has nothing to go by and returns a NULL request (NCCL retries);
 * from then on a send with no CTS to match goes out without one (DATA with
 * FLAG_EAGER) and waits in the kernel's socket buffers, so the sender's
 * progress no longer depends on the receiver having posted.  Once the
 * receiver has seen an eager DATA it stops sending CTS altogether.
 *
 * Invariants:
 *  1. One socket per connection: control messages and payloads share one
 *     TCP stream, so its order is the protocol's order (1a, 1b).
 *  1a. The sender writes no control byte that follows a queued payload's
 *     header before that payload (each work records the stream position it
 *     starts at, `mark`); the receiver, having parsed such a header, takes
 *     what of the payload it already buffered and reads the rest straight
 *     from the socket before it parses anything else.
 *  1b. Large payloads never pass through the control buffer.  The sender
 *     hands a header and its payload to one sendmsg(); the receiver, once a
 *     payload was larger than INLINE_MAX, reads the stream only up to the
 *     end of the next message (its header, or header and inline body), so
 *     the next payload lands straight in its buffer; an inline message
 *     switches back to filling the buffer (many small messages per recv()).
 *  2. The sender matches an isend to the oldest CTS with that tag; per-tag
 *     order is FIFO on both ends, so this is the receive NCCL meant.  No CTS
 *     and no single-receive promise yet -> isend returns a NULL request.
 *  2a. Eager: once the sender has sent one eager DATA it never uses a CTS
 *     again (it drops them), so the k-th message of a tag always belongs to
 *     the k-th receive of that tag.  The receiver matches every DATA that
 *     way (oldest posted receive with that tag; a DATA sent against a CTS
 *     must name that same slot); a DATA with no such receive yet stops the
 *     stream where it is (it and its payload wait in the socket) until one
 *     is posted.  That cannot deadlock because receives are single: the one
 *     it waits for is the one NCCL posts next for that tag, which depends on
 *     nothing behind it in the stream.
 *  3. Everything read from the network is validated before use (hello
 *     fields, slot, sub, tag, size, n); a violation fails the comm with
 *     GT_REMOTE_ERROR and a WARN naming the peer.  A comm error is sticky.
 *  4. No allocation, lock or blocking call on the data path: request pools
 *     and queues are allocated at connect/accept; sockets are non-blocking
 *     and all progress happens inside isend/irecv/test.
 *  4a. Progress scope: a test() moves bytes, in stream order, only until the
 *     request tested has completed (a sendmsg() that completes it ends the
 *     call), and an isend sends nothing, so each header leaves with its
 *     payload (1b), as NCCL's Socket does.  So NCCL hears of each completion
 *     before later messages are moved, which is what lets its GPU kernel
 *     reuse the slot.
 *  4b. A send completes only when its payload *and* its header (with any
 *     inline body) have left our buffers for the kernel's: after the last
 *     send's test() says done NCCL may never call us on that comm again, so
 *     nothing of it may be left behind.
 *  4c. A payload send() or recv() that moved fewer bytes than asked is
 *     repeated until it would block or the payload is done, as NCCL's
 *     Socket does: what arrived (or drained) while the kernel copied is
 *     taken in this call, not one proxy loop later.
 *  5. Truncation (message larger than the posted buffer): a sender that
 *     matched a CTS sees it there and sends a DATA header with FLAG_TRUNC
 *     and no payload: both requests fail from test().  An eager sender
 *     cannot know; the receiver reads the payload into a sink and fails the
 *     receive (the send completes, as with NCCL's Socket).  Either way the
 *     stream stays in sync and the comm stays usable.
 */
#include "plugin/sock/sock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/env.h"
#include "common/log.h"
#include "plugin/sock/sock_internal.h"

#define INLINE_MAX 4096
#define IN_CAP (64 * 1024)
#define OUT_CAP (256 * 1024)
/* The hello's chunk field: the striping granule of protocol version 2, which
 * the wire keeps; nothing is striped now. */
#define HELLO_CHUNK (128 * 1024)
#define MAX_MSG ((size_t)1 << 30) /* test() reports int sizes: stay well below INT_MAX */
#define RECV_POOL GT_NET_MAX_REQUESTS
/* An eager sender may run ahead of its receiver: as many sends in flight as
 * the transport always allowed (8 per receive slot). */
#define SEND_POOL (GT_NET_MAX_REQUESTS * 8)
#define WQ_CAP SEND_POOL        /* >= both pools: at most one queued payload per message */
#define HELLO_MAGIC 0x47544831u /* "GTH1" */
#define MAX_PENDING 64
#define MAX_CONNECTING 256

enum { W_CTS = 1, W_DATA = 2 };
#define W_FLAG_TRUNC 1u
#define W_FLAG_EAGER 2u    /* DATA: sent without a CTS */
#define W_FLAG_EAGER_OK 4u /* CTS: this receiver only ever posts single receives */
#define SINK_BYTES 16384   /* a truncated eager payload is read into this and dropped */

struct wire_hdr {
    uint8_t type;
    uint8_t sub; /* CTS: n (always 1); DATA: sub index (always 0) */
    uint16_t slot;
    uint32_t flags;
    uint64_t size;
    int32_t tag;
    uint32_t reserved;
};
_Static_assert(sizeof(struct wire_hdr) == 24, "wire_hdr is 24 bytes on the wire");

struct wire_cts_ent {
    int32_t tag;
    uint32_t reserved;
    uint64_t size;
};
_Static_assert(sizeof(struct wire_cts_ent) == 16, "wire_cts_ent is 16 bytes on the wire");

struct wire_hello {
    uint32_t magic;
    uint16_t version;
    uint8_t index;  /* 0: the connection's one socket */
    uint8_t nsocks; /* 0: no data sockets */
    uint32_t chunk; /* HELLO_CHUNK */
    uint32_t reserved;
    uint64_t conn_id; /* the connector's connect-in-progress id */
    uint64_t nonce;   /* the listen handle's nonce */
};
_Static_assert(sizeof(struct wire_hello) == 32, "wire_hello is 32 bytes on the wire");

enum { REQ_FREE = 0, REQ_SEND, REQ_RECV, REQ_FLUSH };

struct sock_comm;
struct sock_req {
    struct sock_comm *comm;
    int kind;
    int busy;         /* payload bytes (or, recv, the header) still to come */
    int optional;     /* NCCL pre-set *request to GT_NET_OPTIONAL_RECV_COMPLETION */
    int abandoned;    /* test() already reported its error; free when busy ends */
    uint64_t seq;     /* recv: posting order, for eager matching (invariant 2a) */
    uint64_t out_end; /* send: out_added once its header (and inline body) was queued */
    gt_result err;
    void *data;
    size_t size; /* recv: posted capacity; send: message size */
    size_t got;  /* recv: size the sender announced */
    int tag;
    int state;   /* recv: 0 waiting for header, 1 header seen, 2 done */
    int discard; /* recv: truncated eager payload, read into the sink */
};

/* One payload queued on the stream (invariant 1a). */
struct sock_work {
    struct sock_req *req;
    size_t len, done;
    uint64_t mark; /* sender: stream position the payload starts at */
};

struct cts_ent {
    uint16_t slot;
    int32_t tag;
    uint64_t size;
};

enum { COMM_SEND = 1, COMM_RECV = 2 };

struct sock_comm {
    int kind;
    int fd;
    gt_result err;
    int eof;        /* the socket saw EOF */
    int await_hdr;  /* receiver: posted receives still waiting for their DATA header */
    int peer_eager; /* receiver: an eager DATA arrived, no more CTS are needed */
    int stalled;    /* receiver: the next DATA has no posted receive yet */
    int exact_ctrl; /* receiver: the last payload was large, so read the
                     * stream one message at a time (invariant 1b) */
    uint64_t post_seq;
    int eager_ok;   /* sender: the receiver promised single receives */
    int eager_sent; /* sender: an eager DATA went out; CTS are ignored from now on */
    struct gt_sock_stats st;
    /* The request test() was called on (invariant 4a): progress stops as
     * soon as it has completed, so test() reports it without first moving
     * every later message the socket would take. */
    const struct sock_req *until;
    char peer[80];
    struct sock_work *wq; /* ring of WQ_CAP payloads, in stream order */
    unsigned wq_head, wq_count;
    uint8_t *out;
    size_t out_off, out_len;
    uint64_t out_sent;  /* stream bytes sent so far (invariant 1a) */
    uint64_t out_added; /* sender: bytes ever queued in `out` (headers, inline bodies) */
    uint8_t *in;
    size_t in_len;
    struct cts_ent cts[RECV_POOL];
    int ncts;
    struct sock_req *reqs;
    int nreqs;
    int *freelist;
    int nfree;
    /* connect() state until established */
    uint64_t conn_id;
    int hello_sent;
    int connected;
    struct wire_hello hello;
    int dev;
};

struct sock_pending {
    int fd;
    size_t got;
    struct wire_hello hello;
    char peer[80];
};

struct sock_listen {
    int fd;
    int dev;
    uint64_t nonce;
    union gt_sock_addr addr;
    int npend;
    struct sock_pending pend[MAX_PENDING];
};

struct sock_ctx {
    uint64_t comm_id;
    int traffic_class;
};

struct sock_mr {
    uint32_t magic;
    void *data;
    size_t size;
};
#define MR_MAGIC 0x4d52534bu

/* ---- devices ---------------------------------------------------------- */

struct sock_dev {
    struct gt_sock_if ifc;
    char *pci;
    int speed;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_refs;
static int g_ndev;
static int g_retired_checked; /* the retired variables were looked at (once per process) */
/* GDRTRACE_SOCKET_SNDBUF/RCVBUF bytes (0: kernel autotuning), read at each first init. */
static int g_sndbuf;
static int g_rcvbuf;
static struct sock_dev g_dev[GT_SOCK_MAX_DEVS];

/* connect-in-progress registry: the id in the handle maps to a comm here */
static struct {
    uint64_t id;
    struct sock_comm *c;
} g_connecting[MAX_CONNECTING];

static uint64_t rand64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
        static uint64_t ctr;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
            __atomic_add_fetch(&ctr, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
    }
    return v ? v : 1;
}

static int read_speed(const char *ifname)
{
    char path[128], buf[32];
    snprintf(path, sizeof(path), "/sys/class/net/%.16s/speed", ifname);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return GT_SOCK_DEFAULT_SPEED;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return GT_SOCK_DEFAULT_SPEED;
    buf[n] = 0;
    long s = strtol(buf, NULL, 10);
    /* -1 (unknown, virtual NICs) and absurd values fall back to 10 Gb/s. */
    return (s > 0 && s < INT_MAX) ? (int)s : GT_SOCK_DEFAULT_SPEED;
}

static gt_result devices_discover(void)
{
    struct gt_sock_if cands[128], sel[GT_SOCK_MAX_DEVS];
    int nc = gt_sock_if_system(cands, 128);
    if (nc < 0) {
        GT_WARN("sock: getifaddrs failed: %s", strerror(errno));
        return GT_SYSTEM_ERROR;
    }
    const char *spec = gt_env_str("GDRTRACE_SOCKET_IFNAME");
    static const char *const fams[] = {"any", "AF_INET", "AF_INET6", "4", "6", NULL};
    static const int fam_of[] = {0, AF_INET, AF_INET6, AF_INET, AF_INET6};
    int family = fam_of[gt_env_choice("GDRTRACE_SOCKET_FAMILY", fams, 0)];
    int n = gt_sock_if_select(cands, nc, spec, family, sel, GT_SOCK_MAX_DEVS);
    if (n <= 0) {
        GT_WARN("sock: no usable network interface (up, with an %s address)%s%s%s",
                family == AF_INET    ? "IPv4 (GDRTRACE_SOCKET_FAMILY)"
                : family == AF_INET6 ? "IPv6 (GDRTRACE_SOCKET_FAMILY)"
                                     : "IPv4/IPv6",
                spec ? " matching GDRTRACE_SOCKET_IFNAME='" : "", spec ? spec : "",
                spec ? "'" : "");
        return GT_INTERNAL_ERROR;
    }
    char line[512] = "";
    for (int i = 0; i < n; i++) {
        char path[128], a[80];
        g_dev[i].ifc = sel[i];
        snprintf(path, sizeof(path), "/sys/class/net/%.16s/device", sel[i].name);
        g_dev[i].pci = realpath(path, NULL); /* NULL: virtual interface, no PCI device */
        g_dev[i].speed = read_speed(sel[i].name);
        size_t l = strlen(line);
        snprintf(line + l, sizeof(line) - l, " [%d]%.16s:%.79s", i, sel[i].name,
                 gt_sock_addr_str(&sel[i].addr, a, sizeof(a)));
    }
    g_ndev = n;
    /* The settings in force, so a run's NCCL log says how it moved data. */
    GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET,
            "sock: using%s; socket buffers sndbuf %d, rcvbuf %d (0: TCP autotuning)", line,
            g_sndbuf, g_rcvbuf);
    return GT_OK;
}

static void comm_free(struct sock_comm *c, int abortive);

/* Called with g_lock held when the last context goes away. */
static void devices_release(void)
{
    /* Connects the caller abandoned half way (never called again): nobody
     * else can reach them now. */
    for (int i = 0; i < MAX_CONNECTING; i++)
        if (g_connecting[i].id) {
            comm_free(g_connecting[i].c, 1);
            g_connecting[i].id = 0;
        }
    for (int i = 0; i < g_ndev; i++) {
        free(g_dev[i].pci);
        g_dev[i].pci = NULL;
    }
    g_ndev = 0;
}

/* Variables of modes the GPU measurements rejected (docs/results/): set, each
 * gets one WARN per process naming what sock does instead, and is ignored. */
static void retired_check(void)
{
    if (g_retired_checked)
        return;
    g_retired_checked = 1;
    gt_env_retired("GDRTRACE_SOCKET_NSOCKS",
                   "sock has no data sockets; each payload follows its header on the "
                   "connection's one socket");
    gt_env_retired("GDRTRACE_SOCKET_MAXRECVS",
                   "sock offers maxRecvs 1 (single receives, eager sends), as NCCL's Socket does");
    gt_env_retired("GDRTRACE_SOCKET_PROGRESS",
                   "test() moves bytes only up to the request tested, as NCCL's Socket does");
    gt_env_retired("GDRTRACE_SOCKET_POLL_WRITABLE",
                   "a full socket is offered data again on the next progress call");
}

static gt_result sock_init(void **ctx, uint64_t comm_id, int has_comm_id,
                           const struct gt_comm_config *config, gt_logger_fn logger,
                           gt_profiler_fn profiler)
{
    (void)has_comm_id;
    (void)profiler;
    if (!ctx)
        return GT_INVALID_ARGUMENT;
    gt_log_set_logger(logger);
    struct sock_ctx *x = calloc(1, sizeof(*x));
    if (!x) {
        GT_WARN("sock: init: out of memory");
        return GT_SYSTEM_ERROR;
    }
    x->comm_id = comm_id;
    x->traffic_class = config ? config->traffic_class : -1;
    gt_result r = GT_OK;
    pthread_mutex_lock(&g_lock);
    if (g_refs == 0) {
        retired_check();
        /* 0: the kernel sizes the buffers (autotuning); like NCCL_SOCKET_SNDBUF
         * and _RCVBUF, a size pins them (capped by net.core.wmem_max/rmem_max). */
        g_sndbuf = (int)gt_env_long("GDRTRACE_SOCKET_SNDBUF", 0, 0, 1L << 30);
        g_rcvbuf = (int)gt_env_long("GDRTRACE_SOCKET_RCVBUF", 0, 0, 1L << 30);
        r = devices_discover();
    }
    if (r == GT_OK)
        g_refs++;
    pthread_mutex_unlock(&g_lock);
    if (r != GT_OK) {
        free(x);
        return r;
    }
    *ctx = x;
    return GT_OK;
}

static gt_result sock_finalize(void *ctx)
{
    if (!ctx)
        return GT_INVALID_ARGUMENT;
    pthread_mutex_lock(&g_lock);
    if (g_refs > 0 && --g_refs == 0)
        devices_release();
    pthread_mutex_unlock(&g_lock);
    free(ctx);
    return GT_OK;
}

static gt_result sock_devices(int *ndev)
{
    if (!ndev)
        return GT_INVALID_ARGUMENT;
    pthread_mutex_lock(&g_lock);
    *ndev = g_ndev;
    pthread_mutex_unlock(&g_lock);
    return GT_OK;
}

static int dev_ok(int dev)
{
    pthread_mutex_lock(&g_lock);
    int ok = dev >= 0 && dev < g_ndev;
    pthread_mutex_unlock(&g_lock);
    if (!ok)
        GT_WARN("sock: device %d does not exist (%d devices; was init called?)", dev, g_ndev);
    return ok;
}

static gt_result sock_get_properties(int dev, struct gt_props *p)
{
    if (!p || !dev_ok(dev))
        return GT_INVALID_ARGUMENT;
    memset(p, 0, sizeof(*p));
    p->name = g_dev[dev].ifc.name;
    p->pci_path = g_dev[dev].pci;
    p->guid = (uint64_t)dev;
    p->ptr_support = GT_PTR_HOST;
    p->reg_is_global = 0;
    p->force_flush = 0;
    p->speed_mbps = g_dev[dev].speed;
    p->port = 0;
    p->latency_us = 0;
    p->max_comms = 65536;
    p->max_recvs = 1; /* single receives: what makes eager sends safe (2a) */
    p->net_device_type = 0;
    p->net_device_version = 0;
    p->vdev_count = 1;
    p->vdevs[0] = dev;
    p->max_p2p_bytes = MAX_MSG;
    p->max_coll_bytes = MAX_MSG;
    p->max_multi_request_size = 1;
    p->rail_id = -1;
    p->plane_id = -1;
    return GT_OK;
}

static gt_result sock_get_probe(int dev, struct gt_dev_probe *probe)
{
    if (!probe || !dev_ok(dev))
        return GT_INVALID_ARGUMENT;
    memset(probe, 0, sizeof(*probe));
    probe->dmabuf = GT_PROBE_ABSENT;
    probe->peermem = GT_PROBE_ABSENT;
    probe->cuda_dmabuf = GT_PROBE_UNKNOWN; /* sock never asks CUDA */
    probe->advertised = GT_PTR_HOST;
    snprintf(probe->why, sizeof(probe->why), "sock: host memory only");
    return GT_OK;
}

/* ---- sockets ------------------------------------------------------------ */

/* Before connect()/listen(): the window scale is fixed at the handshake, and
 * accepted sockets inherit the listener's sizes. */
static void size_buffers(int fd)
{
    int snd = __atomic_load_n(&g_sndbuf, __ATOMIC_RELAXED);
    int rcv = __atomic_load_n(&g_rcvbuf, __ATOMIC_RELAXED);
    if (snd > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd));
    if (rcv > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
}

/* The kernel's current sizes, for the connect/accept INFO line. */
static void buffer_sizes(int fd, int *snd, int *rcv)
{
    socklen_t l = sizeof(*snd);
    *snd = *rcv = -1;
    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, snd, &l);
    l = sizeof(*rcv);
    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, rcv, &l);
}

/* Every connected socket, both ends (buffer sizes are not set here: an
 * accepted socket has its listener's). */
static void tune(int fd)
{
    int one = 1;
    /* Headers and small inline messages must not wait for Nagle. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* A peer host that vanishes without a FIN/RST (power loss, cable) would
     * leave an idle receiver waiting forever: keepalive turns that into an
     * error from test() after ~2 minutes.  Probes are answered by the peer's
     * kernel, so a slow but alive peer never trips it. */
    int idle = 60, intvl = 10, cnt = 6;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

static socklen_t addr_len(const union gt_sock_addr *a)
{
    return a->sa.sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static void peer_name(int fd, char *buf, size_t len)
{
    union gt_sock_addr a;
    socklen_t l = sizeof(a);
    memset(&a, 0, sizeof(a));
    if (getpeername(fd, &a.sa, &l) == 0)
        gt_sock_addr_str(&a, buf, len);
    else
        snprintf(buf, len, "(unknown peer)");
}

/* Abortive close: RST, so a peer blocked on us learns at once. */
static void close_abort(int fd)
{
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(fd);
}

/* ---- comm lifetime ------------------------------------------------------ */

static struct sock_comm *comm_alloc(int kind)
{
    struct sock_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->kind = kind;
    c->fd = -1;
    c->nreqs = kind == COMM_SEND ? SEND_POOL : RECV_POOL;
    c->out = malloc(OUT_CAP);
    c->in = malloc(IN_CAP);
    c->reqs = calloc((size_t)c->nreqs, sizeof(*c->reqs));
    c->freelist = calloc((size_t)c->nreqs, sizeof(int));
    c->wq = calloc(WQ_CAP, sizeof(struct sock_work));
    if (!c->out || !c->in || !c->reqs || !c->freelist || !c->wq) {
        free(c->wq);
        free(c->out);
        free(c->in);
        free(c->reqs);
        free(c->freelist);
        free(c);
        return NULL;
    }
    /* Lowest slots are handed out first (stack): slot numbers stay small. */
    for (int i = 0; i < c->nreqs; i++)
        c->freelist[i] = c->nreqs - 1 - i;
    c->nfree = c->nreqs;
    return c;
}

static int comm_busy(const struct sock_comm *c)
{
    return c->out_len > c->out_off || c->wq_count || c->nfree != c->nreqs;
}

static void comm_free(struct sock_comm *c, int abortive)
{
    if (!c)
        return;
    if (c->fd >= 0) {
        if (abortive) {
            close_abort(c->fd);
        } else {
            /* Unread bytes at close() turn our FIN into a RST, which could
             * make the peer drop data it has not read yet: drain first. */
            char sink[4096];
            while (recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
                ;
            shutdown(c->fd, SHUT_WR);
            close(c->fd);
        }
    }
    free(c->wq);
    free(c->out);
    free(c->in);
    free(c->reqs);
    free(c->freelist);
    free(c);
}

/* ---- errors ------------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static gt_result comm_fail(struct sock_comm *c, gt_result r,
                                                                 const char *fmt, ...)
{
    if (c->err)
        return c->err; /* sticky; WARN once */
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    GT_WARN("sock: %s comm with peer %s failed: %s", c->kind == COMM_SEND ? "send" : "recv",
            c->peer, msg);
    c->err = r;
    return r;
}

static gt_result errno_result(int e)
{
    return (e == ECONNRESET || e == EPIPE || e == ECONNREFUSED || e == ETIMEDOUT ||
            e == EHOSTUNREACH || e == ENETUNREACH || e == ECONNABORTED)
               ? GT_REMOTE_ERROR
               : GT_SYSTEM_ERROR;
}

/* ---- requests ----------------------------------------------------------- */

static struct sock_req *req_get(struct sock_comm *c, int kind)
{
    if (c->nfree == 0)
        return NULL;
    struct sock_req *r = &c->reqs[c->freelist[--c->nfree]];
    memset(r, 0, sizeof(*r));
    r->comm = c;
    r->kind = kind;
    return r;
}

static void req_put(struct sock_req *r)
{
    struct sock_comm *c = r->comm;
    r->kind = REQ_FREE;
    c->freelist[c->nfree++] = (int)(r - c->reqs);
}

static void req_finished(struct sock_req *r)
{
    r->state = 2;
    r->busy = 0;
    if (r->abandoned)
        req_put(r);
}

/* ---- the payload queue (invariant 1a) ----------------------------------- */

static void enqueue_payload(struct sock_comm *c, struct sock_req *r, size_t size)
{
    /* The payload starts after everything not yet sent: the out buffer and
     * the payloads queued before it. */
    uint64_t mark = c->out_sent + (c->out_len - c->out_off);
    for (unsigned k = 0; k < c->wq_count; k++) {
        const struct sock_work *q = &c->wq[(c->wq_head + k) % WQ_CAP];
        mark += q->len - q->done;
    }
    struct sock_work *w = &c->wq[(c->wq_head + c->wq_count) % WQ_CAP];
    *w = (struct sock_work){.req = r, .len = size, .done = 0, .mark = mark};
    r->busy = 1;
    c->wq_count++;
}

/* Done from the wire's side: every payload byte handed to the kernel and,
 * for a send, its header (and inline body) too.  A send whose header still
 * waits in the out buffer is not done: NCCL may never call us on this comm
 * again, and the receiver would wait for that header forever (4b). */
static int req_complete(const struct sock_comm *c, const struct sock_req *q)
{
    /* What has left `out` is what was ever queued there less what waits. */
    uint64_t flushed = c->out_added - (c->out_len - c->out_off);
    return !q->busy && (q->kind != REQ_SEND || flushed >= q->out_end);
}

/* The tested request has completed: nothing more to move this call (4a). */
static int reached(const struct sock_comm *c)
{
    return c->until && req_complete(c, c->until);
}

/* Accounts n bytes moved for the oldest payload; 1 when it completed. */
static int work_moved(struct sock_comm *c, size_t n)
{
    struct sock_work *w = &c->wq[c->wq_head];
    w->done += n;
    if (w->done < w->len)
        return 0;
    req_finished(w->req);
    c->wq_head = (c->wq_head + 1) % WQ_CAP;
    c->wq_count--;
    return 1;
}

/* ---- control stream ----------------------------------------------------- */

static gt_result flush_out(struct sock_comm *c)
{
    while (c->out_off < c->out_len) {
        size_t lim = c->out_len - c->out_off;
        if (c->kind == COMM_SEND && c->wq_count) {
            /* Invariant 1a: nothing past the oldest queued payload's start. */
            uint64_t mark = c->wq[c->wq_head].mark;
            if (mark <= c->out_sent)
                break;
            if (mark - c->out_sent < lim)
                lim = (size_t)(mark - c->out_sent);
        }
        ssize_t n = send(c->fd, c->out + c->out_off, lim, MSG_DONTWAIT | MSG_NOSIGNAL);
        c->st.ctrl_writes++;
        if (n > 0) {
            c->out_off += (size_t)n;
            c->out_sent += (uint64_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        int e = errno;
        return comm_fail(c, errno_result(e), "send on control socket: %s", strerror(e));
    }
    if (c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    return GT_OK;
}

static int out_room(struct sock_comm *c, size_t need)
{
    if (OUT_CAP - c->out_len >= need)
        return 1;
    if (c->out_off > 0) {
        memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
        c->out_len -= c->out_off;
        c->out_off = 0;
    }
    return OUT_CAP - c->out_len >= need;
}

static gt_result handle_cts(struct sock_comm *c, const struct wire_hdr *h, const uint8_t *body)
{
    if (c->kind != COMM_SEND)
        return comm_fail(c, GT_REMOTE_ERROR, "peer sent a CTS to a receiver (protocol error)");
    if (!(h->flags & W_FLAG_EAGER_OK))
        return comm_fail(c, GT_REMOTE_ERROR,
                         "peer's CTS does not promise single receives (a peer that allows "
                         "grouped receives; protocol error)");
    c->eager_ok = 1;
    if (c->eager_sent)
        return GT_OK; /* invariant 2a: matched by order on the receiver, not by CTS */
    if (c->ncts >= RECV_POOL)
        return comm_fail(c, GT_REMOTE_ERROR, "peer announced more than %d receives in flight",
                         RECV_POOL);
    if (h->slot >= RECV_POOL)
        return comm_fail(c, GT_REMOTE_ERROR, "peer CTS slot %u out of range", h->slot);
    struct wire_cts_ent ce;
    memcpy(&ce, body, sizeof(ce));
    if (ce.size > MAX_MSG)
        return comm_fail(c, GT_REMOTE_ERROR, "peer CTS size %llu exceeds %zu",
                         (unsigned long long)ce.size, MAX_MSG);
    c->cts[c->ncts++] = (struct cts_ent){.slot = h->slot, .tag = ce.tag, .size = ce.size};
    return GT_OK;
}

/* Invariant 2a: the receiver's match for a DATA of this tag. */
static struct sock_req *eager_match(struct sock_comm *c, int tag)
{
    struct sock_req *best = NULL;
    for (int i = 0; i < c->nreqs; i++) {
        struct sock_req *q = &c->reqs[i];
        if (q->kind == REQ_RECV && q->state == 0 && q->tag == tag && (!best || q->seq < best->seq))
            best = q;
    }
    return best;
}

/* Returns GT_OK with c->stalled set when the DATA must wait for its receive. */
static gt_result handle_data(struct sock_comm *c, const struct wire_hdr *h, const uint8_t *body)
{
    if (c->kind != COMM_RECV)
        return comm_fail(c, GT_REMOTE_ERROR, "peer sent DATA to a sender (protocol error)");
    int eager = (h->flags & W_FLAG_EAGER) != 0;
    struct sock_req *r = eager_match(c, h->tag);
    if (!r) {
        c->stalled = 1;
        c->st.stalls++;
        return GT_OK;
    }
    if (!eager && (h->slot != (size_t)(r - c->reqs) || h->sub != 0))
        return comm_fail(c, GT_REMOTE_ERROR,
                         "peer DATA (tag %d) names slot %u sub %u, but the receive it "
                         "belongs to is slot %td",
                         h->tag, h->slot, h->sub, r - c->reqs);
    if (eager)
        c->peer_eager = 1;
    c->await_hdr--;
    c->st.msgs++;
    c->st.eager += eager;
    c->st.bytes += h->size;
    if (h->size > MAX_MSG)
        return comm_fail(c, GT_REMOTE_ERROR, "peer DATA size %llu exceeds %zu",
                         (unsigned long long)h->size, MAX_MSG);
    r->got = h->size;
    int trunc = (h->flags & W_FLAG_TRUNC) != 0;
    c->exact_ctrl = !trunc && h->size > INLINE_MAX; /* invariant 1b */
    if (!trunc && h->size > r->size && !eager)
        return comm_fail(c, GT_REMOTE_ERROR,
                         "peer sent %llu bytes (tag %d) into a %zu-byte receive without "
                         "flagging truncation",
                         (unsigned long long)h->size, h->tag, r->size);
    if (trunc || h->size > r->size) {
        GT_WARN("sock: message of %llu bytes (tag %d) from %s exceeds the posted receive "
                "buffer of %zu bytes: truncation refused",
                (unsigned long long)h->size, h->tag, c->peer, r->size);
        if (!r->err)
            r->err = GT_INVALID_USAGE;
        if (trunc || h->size <= INLINE_MAX) {
            req_finished(r); /* no payload, or inline and skipped with the header */
            return GT_OK;
        }
        r->discard = 1; /* eager: the payload is on its way and must be read */
    } else if (h->size <= INLINE_MAX) {
        if (h->size)
            memcpy(r->data, body, h->size);
        req_finished(r);
        return GT_OK;
    }
    r->state = 1;
    enqueue_payload(c, r, h->size);
    return GT_OK;
}

/* Bytes that follow header h in the control stream (0 for a CTS whose n is
 * not 1: parse_in rejects it). */
static size_t msg_body(const struct wire_hdr *h)
{
    if (h->type == W_CTS)
        return h->sub == 1 ? sizeof(struct wire_cts_ent) : 0;
    if (h->type == W_DATA)
        return (!(h->flags & W_FLAG_TRUNC) && h->size <= INLINE_MAX) ? h->size : 0;
    return 0;
}

static gt_result parse_in(struct sock_comm *c)
{
    size_t off = 0;
    gt_result rc = GT_OK;
    c->stalled = 0;
    while (c->in_len - off >= sizeof(struct wire_hdr)) {
        struct wire_hdr h;
        memcpy(&h, c->in + off, sizeof(h));
        if (h.type == W_CTS && h.sub != 1) {
            rc = comm_fail(c, GT_REMOTE_ERROR, "peer CTS with n=%u (single receives only)", h.sub);
            break;
        }
        if (h.type != W_CTS && h.type != W_DATA) {
            rc = comm_fail(c, GT_REMOTE_ERROR, "peer sent unknown control message type %u", h.type);
            break;
        }
        size_t body = msg_body(&h);
        if (c->in_len - off < sizeof(h) + body)
            break;
        const uint8_t *b = c->in + off + sizeof(h);
        rc = h.type == W_CTS ? handle_cts(c, &h, b) : handle_data(c, &h, b);
        if (rc != GT_OK || c->stalled)
            break;
        off += sizeof(h) + body;
        if (c->kind == COMM_RECV && c->wq_count) {
            /* Invariant 1a: this DATA's payload follows it in this stream;
             * take what is buffered, the rest comes from the socket before
             * anything else is parsed. */
            struct sock_work *w = &c->wq[c->wq_head];
            size_t n = c->in_len - off < w->len - w->done ? c->in_len - off : w->len - w->done;
            if (n && !w->req->discard)
                memcpy((char *)w->req->data + w->done, c->in + off, n);
            off += n;
            if (!work_moved(c, n))
                break;
        }
    }
    if (off) {
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
    }
    return rc;
}

static gt_result move_data(struct sock_comm *c);

/* Bytes still missing from the partial message at the start of c->in (what
 * parse_in left): the rest of its header, else the rest of its body. */
static size_t ctrl_need(const struct sock_comm *c)
{
    if (c->in_len < sizeof(struct wire_hdr))
        return sizeof(struct wire_hdr) - c->in_len;
    struct wire_hdr h;
    memcpy(&h, c->in, sizeof(h));
    size_t total = sizeof(h) + msg_body(&h);
    return total > c->in_len ? total - c->in_len : 0;
}

static gt_result read_ctrl(struct sock_comm *c)
{
    /* What is already buffered first: a stalled DATA may match a receive
     * posted since (invariant 2a). */
    gt_result r = parse_in(c);
    if (r != GT_OK)
        return r;
    for (;;) {
        if (reached(c))
            break;
        if (c->kind == COMM_RECV && c->wq_count) {
            /* Invariant 1a: a payload is due before any further header. */
            r = move_data(c);
            if (r != GT_OK || c->wq_count)
                return r;
            continue;
        }
        if (c->eof || c->stalled)
            break; /* nothing behind a stalled DATA can be used yet */
        /* A message always fits, so a full buffer is parsed at once. */
        if (c->in_len == IN_CAP)
            return comm_fail(c, GT_INTERNAL_ERROR, "control buffer overflow");
        size_t room = IN_CAP - c->in_len;
        if (c->exact_ctrl) {
            /* Invariant 1b: up to the end of the next message, no further. */
            size_t need = ctrl_need(c);
            if (need && need < room)
                room = need;
        }
        ssize_t n = recv(c->fd, c->in + c->in_len, room, MSG_DONTWAIT);
        c->st.ctrl_reads++;
        if (n > 0) {
            c->st.ctrl_bytes += (uint64_t)n;
            c->in_len += (size_t)n;
            r = parse_in(c);
            if (r != GT_OK)
                return r;
            continue;
        }
        if (n == 0) {
            c->eof = 1;
            break;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            break;
        int e = errno;
        return comm_fail(c, errno_result(e), "recv on control socket: %s", strerror(e));
    }
    return GT_OK;
}

/* ---- payloads ----------------------------------------------------------- */

static gt_result move_data(struct sock_comm *c)
{
    int sending = c->kind == COMM_SEND;
    while (c->wq_count) {
        struct sock_work *w = &c->wq[c->wq_head];
        struct sock_req *q = w->req;
        /* Invariant 1a: its header (and all before it) must be out first. */
        if (sending && w->mark + w->done != c->out_sent)
            break;
        char sink[SINK_BYTES];
        char *p = (char *)q->data + w->done;
        size_t want = w->len - w->done;
        if (q->discard) {
            p = sink;
            if (want > sizeof(sink))
                want = sizeof(sink);
        }
        ssize_t n = sending ? send(c->fd, p, want, MSG_DONTWAIT | MSG_NOSIGNAL)
                            : recv(c->fd, p, want, MSG_DONTWAIT);
        c->st.io_calls++;
        if (n > 0) {
            c->st.io_bytes += (uint64_t)n;
            if (sending)
                c->out_sent += (uint64_t)n;
            if (work_moved(c, (size_t)n) && reached(c))
                return GT_OK;
            /* Invariant 4c: ask again until it would block (a receiver
             * reading a truncated payload into the sink too). */
            continue;
        }
        if (n == 0 && !sending)
            return comm_fail(c, GT_REMOTE_ERROR,
                             "peer closed the connection mid-message (%zu of %zu bytes of a "
                             "%zu-byte message received)",
                             w->done, q->got, q->got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            c->st.would_block++;
            break;
        }
        int e = n < 0 ? errno : EIO;
        return comm_fail(c, errno_result(e), "%s of a payload: %s", sending ? "send" : "recv",
                         strerror(e));
    }
    return GT_OK;
}

/* Sender: when the oldest queued payload has not started and what precedes
 * it in the stream is all in the out buffer, send both with one sendmsg()
 * (invariant 1b): one syscall, and the header rides in the payload's first
 * segment instead of a 24-byte segment of its own. */
static gt_result send_fused(struct sock_comm *c)
{
    if (!c->wq_count)
        return GT_OK;
    struct sock_work *w = &c->wq[c->wq_head];
    if (w->done || w->mark <= c->out_sent || w->mark - c->out_sent > c->out_len - c->out_off)
        return GT_OK; /* under way, or not next: flush_out/move_data go on */
    size_t lead = (size_t)(w->mark - c->out_sent);
    struct iovec iov[2] = {{.iov_base = c->out + c->out_off, .iov_len = lead},
                           {.iov_base = w->req->data, .iov_len = w->len}};
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
    ssize_t n;
    do
        n = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    c->st.io_calls++;
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            c->st.would_block++;
            return GT_OK;
        }
        int e = errno;
        return comm_fail(c, errno_result(e), "send on control socket: %s", strerror(e));
    }
    size_t hdr_part = (size_t)n < lead ? (size_t)n : lead;
    c->out_off += hdr_part;
    c->out_sent += (uint64_t)n;
    if (c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    if ((size_t)n > lead) {
        c->st.io_bytes += (uint64_t)n - lead;
        work_moved(c, (size_t)n - lead);
    }
    return GT_OK;
}

/* Sender: header and payload bytes take turns on one socket (invariant 1a),
 * so send until neither moves. */
static gt_result pump_ctrl(struct sock_comm *c)
{
    for (;;) {
        uint64_t before = c->out_sent;
        gt_result r = send_fused(c);
        /* A fused sendmsg() may complete the tested send by itself: then
         * the next header and payload wait for their own test() (4a), and
         * leave together from there (1b). */
        if (r == GT_OK && !reached(c))
            r = flush_out(c);
        if (r == GT_OK && !reached(c))
            r = move_data(c);
        if (r != GT_OK || c->out_sent == before || reached(c))
            return r;
    }
}

static gt_result progress(struct sock_comm *c)
{
    if (c->err)
        return c->err;
    c->st.progress++;
    if (c->kind == COMM_SEND)
        return pump_ctrl(c);
    gt_result r = flush_out(c);
    /* Only read the socket when something is expected there: the sender
     * reads CTS in isend(), where it needs them; the receiver while a posted
     * receive waits for its header.  Each skipped recv() is one syscall less
     * per test() spin, which matters when cores are scarce. */
    if (r == GT_OK && c->await_hdr > 0)
        r = read_ctrl(c);
    /* read_ctrl has just moved the payloads (invariant 1a) until it would
     * block; trying again now would only be a second failing recv() per
     * test() spin, twice NCCL's Socket's.  With no header awaited, a payload
     * may still be under way. */
    else if (r == GT_OK)
        r = move_data(c);
    if (r == GT_OK)
        r = flush_out(c);
    if (r == GT_OK && c->eof && c->await_hdr > 0) {
        /* A receive still waiting for its header can never complete now. */
        for (int i = 0; i < c->nreqs; i++) {
            struct sock_req *q = &c->reqs[i];
            if (q->kind == REQ_RECV && q->state == 0)
                return comm_fail(c, GT_REMOTE_ERROR,
                                 "peer closed the connection with a receive (tag %d) "
                                 "still pending",
                                 q->tag);
        }
    }
    return r;
}

/* ---- listen / connect / accept ------------------------------------------ */

static gt_result sock_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
    (void)ctx;
    if (!handle || !listen_comm || !dev_ok(dev))
        return GT_INVALID_ARGUMENT;
    struct sock_listen *l = calloc(1, sizeof(*l));
    if (!l) {
        GT_WARN("sock: listen: out of memory");
        return GT_SYSTEM_ERROR;
    }
    char a[80];
    l->dev = dev;
    l->addr = g_dev[dev].ifc.addr;
    if (l->addr.sa.sa_family == AF_INET6)
        l->addr.in6.sin6_port = 0;
    else
        l->addr.in4.sin_port = 0;
    l->fd = socket(l->addr.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (l->fd < 0) {
        GT_WARN("sock: listen on %s: socket: %s", g_dev[dev].ifc.name, strerror(errno));
        goto err_free;
    }
    int one = 1;
    setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    size_buffers(l->fd);
    socklen_t len = addr_len(&l->addr);
    if (bind(l->fd, &l->addr.sa, len) != 0 || listen(l->fd, 1024) != 0 ||
        getsockname(l->fd, &l->addr.sa, &len) != 0) {
        GT_WARN("sock: listen on %s (%s): %s", g_dev[dev].ifc.name,
                gt_sock_addr_str(&l->addr, a, sizeof(a)), strerror(errno));
        goto err_close;
    }
    l->nonce = rand64();
    struct gt_sock_handle_info info = {.addr = l->addr, .nonce = l->nonce};
    gt_sock_handle_encode(&info, handle);
    GT_INFO(GT_LOGSUB_NET, "sock: listening on %s (%s)", g_dev[dev].ifc.name,
            gt_sock_addr_str(&l->addr, a, sizeof(a)));
    *listen_comm = l;
    return GT_OK;
err_close:
    close(l->fd);
err_free:
    free(l);
    return GT_SYSTEM_ERROR;
}

static uint64_t stage_get(const void *handle)
{
    uint64_t v;
    memcpy(&v, (const uint8_t *)handle + GT_SOCK_HANDLE_STAGE_OFF, sizeof(v));
    return v;
}

static void stage_set(void *handle, uint64_t v)
{
    memcpy((uint8_t *)handle + GT_SOCK_HANDLE_STAGE_OFF, &v, sizeof(v));
}

static int registry_add(uint64_t id, struct sock_comm *c)
{
    int ok = 0;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_CONNECTING && !ok; i++)
        if (!g_connecting[i].id) {
            g_connecting[i].id = id;
            g_connecting[i].c = c;
            ok = 1;
        }
    pthread_mutex_unlock(&g_lock);
    return ok;
}

static struct sock_comm *registry_take(uint64_t id, int remove)
{
    struct sock_comm *c = NULL;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_CONNECTING; i++)
        if (g_connecting[i].id == id) {
            c = g_connecting[i].c;
            if (remove)
                g_connecting[i].id = 0;
            break;
        }
    pthread_mutex_unlock(&g_lock);
    return c;
}

/* One non-blocking step of a connecting comm.
 * Returns GT_OK with *ready = 1 once the hello went out. */
static gt_result connect_step(struct sock_comm *c, int *ready)
{
    *ready = 0;
    if (!c->connected) {
        struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
        int pr = poll(&pfd, 1, 0);
        if (pr < 0 && errno != EINTR)
            return comm_fail(c, GT_SYSTEM_ERROR, "poll: %s", strerror(errno));
        if (pr <= 0)
            return GT_OK;
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
            soerr = errno;
        if (soerr)
            return comm_fail(c, errno_result(soerr), "connect: %s", strerror(soerr));
        c->connected = 1;
    }
    if (c->hello_sent < (int)sizeof(struct wire_hello)) {
        ssize_t n = send(c->fd, (char *)&c->hello + c->hello_sent,
                         sizeof(c->hello) - (size_t)c->hello_sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0)
            c->hello_sent += (int)n;
        else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return comm_fail(c, errno_result(errno), "sending hello: %s", strerror(errno));
    }
    *ready = c->hello_sent == (int)sizeof(struct wire_hello);
    return GT_OK;
}

static gt_result sock_connect(void *ctx, int dev, void *handle, void **send_comm,
                              void **send_dev_comm)
{
    (void)ctx;
    if (send_dev_comm)
        *send_dev_comm = NULL; /* netDeviceType HOST: no device-side handle */
    if (!handle || !send_comm)
        return GT_INVALID_ARGUMENT;
    *send_comm = NULL;
    if (!dev_ok(dev))
        return GT_INVALID_ARGUMENT;
    struct gt_sock_handle_info info;
    char why[160], a[80];
    if (gt_sock_handle_decode(handle, GT_NET_HANDLE_MAXSIZE, &info, why, sizeof(why)) != GT_OK) {
        GT_WARN("sock: connect: rejected connection handle: %s", why);
        return GT_INVALID_ARGUMENT;
    }
    struct sock_comm *c;
    uint64_t id = stage_get(handle);
    if (id) {
        c = registry_take(id, 0);
        if (!c) {
            GT_WARN("sock: connect to %s: handle carries unknown connect-in-progress id "
                    "0x%llx (handle corrupted or reused)",
                    gt_sock_addr_str(&info.addr, a, sizeof(a)), (unsigned long long)id);
            return GT_INVALID_ARGUMENT;
        }
    } else {
        c = comm_alloc(COMM_SEND);
        if (!c) {
            GT_WARN("sock: connect: out of memory");
            return GT_SYSTEM_ERROR;
        }
        c->dev = dev;
        gt_sock_addr_str(&info.addr, c->peer, sizeof(c->peer));
        c->conn_id = rand64();
        c->hello = (struct wire_hello){.magic = HELLO_MAGIC,
                                       .version = GT_SOCK_PROTO_VERSION,
                                       .chunk = HELLO_CHUNK,
                                       .conn_id = c->conn_id,
                                       .nonce = info.nonce};
        c->fd = socket(info.addr.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (c->fd < 0) {
            GT_WARN("sock: connect to %s: socket: %s", c->peer, strerror(errno));
            comm_free(c, 1);
            return GT_SYSTEM_ERROR;
        }
        size_buffers(c->fd);
        tune(c->fd);
        if (connect(c->fd, &info.addr.sa, addr_len(&info.addr)) != 0 && errno != EINPROGRESS &&
            errno != EINTR) {
            gt_result r = errno_result(errno);
            GT_WARN("sock: connect to %s: %s", c->peer, strerror(errno));
            comm_free(c, 1);
            return r;
        }
        if (!registry_add(c->conn_id, c)) {
            GT_WARN("sock: connect to %s: more than %d connects in progress", c->peer,
                    MAX_CONNECTING);
            comm_free(c, 1);
            return GT_INTERNAL_ERROR;
        }
        stage_set(handle, c->conn_id);
        id = c->conn_id;
    }
    int ready = 0;
    gt_result r = connect_step(c, &ready);
    if (r != GT_OK || ready) {
        registry_take(id, 1);
        stage_set(handle, 0);
        if (r != GT_OK) {
            comm_free(c, 1);
            return r;
        }
        int snd, rcv;
        buffer_sizes(c->fd, &snd, &rcv);
        GT_INFO(GT_LOGSUB_NET, "sock: connected to %s (sndbuf %d, rcvbuf %d)", c->peer, snd, rcv);
        *send_comm = c;
    }
    return GT_OK;
}

static void pend_drop(struct sock_listen *l, int i, int abortive)
{
    if (abortive)
        close_abort(l->pend[i].fd);
    else
        close(l->pend[i].fd);
    l->pend[i] = l->pend[--l->npend];
}

/* The recv comm of pending connection i, whose hello checked out; it leaves
 * the pending table.  NULL (out of memory): it stays, tried again by the
 * next accept. */
static struct sock_comm *pend_take(struct sock_listen *l, int i)
{
    struct sock_comm *c = comm_alloc(COMM_RECV);
    if (!c)
        return NULL;
    c->fd = l->pend[i].fd;
    snprintf(c->peer, sizeof(c->peer), "%s", l->pend[i].peer);
    l->pend[i] = l->pend[--l->npend];
    return c;
}

static gt_result sock_accept(void *listen_comm, void **recv_comm, void **recv_dev_comm)
{
    if (recv_dev_comm)
        *recv_dev_comm = NULL;
    if (!listen_comm || !recv_comm)
        return GT_INVALID_ARGUMENT;
    *recv_comm = NULL;
    struct sock_listen *l = listen_comm;
    for (;;) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            GT_WARN("sock: accept: %s", strerror(errno));
            return GT_SYSTEM_ERROR;
        }
        char peer[80];
        peer_name(fd, peer, sizeof(peer));
        if (l->npend == MAX_PENDING) {
            GT_WARN("sock: accept: refusing %s: %d connections already waiting for their "
                    "hello",
                    peer, MAX_PENDING);
            close_abort(fd);
            continue;
        }
        tune(fd);
        struct sock_pending *p = &l->pend[l->npend++];
        memset(p, 0, sizeof(*p));
        p->fd = fd;
        snprintf(p->peer, sizeof(p->peer), "%s", peer);
    }
    for (int i = 0; i < l->npend; i++) {
        struct sock_pending *p = &l->pend[i];
        if (p->got < sizeof(p->hello)) {
            ssize_t n =
                recv(p->fd, (char *)&p->hello + p->got, sizeof(p->hello) - p->got, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                GT_WARN("sock: accept: connection from %s closed before its hello (%s)", p->peer,
                        n == 0 ? "EOF" : strerror(errno));
                pend_drop(l, i--, 0);
                continue;
            }
            if (n > 0)
                p->got += (size_t)n;
            if (p->got < sizeof(p->hello))
                continue;
            const struct wire_hello *h = &p->hello;
            const char *bad =
                h->magic != HELLO_MAGIC               ? "bad magic (not a gdrtrace peer)"
                : h->version != GT_SOCK_PROTO_VERSION ? "protocol version mismatch"
                : h->nonce != l->nonce                ? "handle nonce mismatch (stale handle?)"
                : h->nsocks || h->index ? "the peer asks for data sockets (GDRTRACE_SOCKET_NSOCKS "
                                          "is retired: one socket per connection)"
                : h->chunk < 4096 || h->chunk > (64u << 20) ? "chunk size out of range"
                                                            : NULL;
            if (bad) {
                GT_WARN("sock: accept: refusing connection from %s: %s", p->peer, bad);
                pend_drop(l, i--, 1);
                continue;
            }
        }
        struct sock_comm *c = pend_take(l, i);
        if (!c)
            continue;
        int snd, rcv;
        buffer_sizes(c->fd, &snd, &rcv);
        GT_INFO(GT_LOGSUB_NET, "sock: accepted %s (sndbuf %d, rcvbuf %d)", c->peer, snd, rcv);
        *recv_comm = c;
        return GT_OK;
    }
    return GT_OK;
}

static gt_result sock_close_listen(void *listen_comm)
{
    struct sock_listen *l = listen_comm;
    if (!l)
        return GT_INVALID_ARGUMENT;
    while (l->npend)
        pend_drop(l, 0, 1);
    close(l->fd);
    free(l);
    return GT_OK;
}

void gt_sock_comm_stats(const void *comm, struct gt_sock_stats *out)
{
    *out = ((const struct sock_comm *)comm)->st;
}

static gt_result sock_close_comm(void *comm)
{
    struct sock_comm *c = comm;
    if (!c)
        return GT_INVALID_ARGUMENT;
    const struct gt_sock_stats *t = &c->st;
    GT_INFO(GT_LOGSUB_NET,
            "sock: %s comm with %s closed: %llu messages (%llu eager), %llu bytes; payloads: "
            "%llu %s() calls moving %llu bytes, %llu would-block, %llu control reads moving "
            "%llu bytes, %llu control writes, %llu progress calls, %llu stalls",
            c->kind == COMM_SEND ? "send" : "recv", c->peer, (unsigned long long)t->msgs,
            (unsigned long long)t->eager, (unsigned long long)t->bytes,
            (unsigned long long)t->io_calls, c->kind == COMM_SEND ? "send" : "recv",
            (unsigned long long)t->io_bytes, (unsigned long long)t->would_block,
            (unsigned long long)t->ctrl_reads, (unsigned long long)t->ctrl_bytes,
            (unsigned long long)t->ctrl_writes, (unsigned long long)t->progress,
            (unsigned long long)t->stalls);
    comm_free(c, c->err || comm_busy(c));
    return GT_OK;
}

/* ---- registration -------------------------------------------------------- */

static gt_result sock_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle,
                             struct gt_reg_report *report)
{
    if (report) {
        report->asked = type == GT_PTR_CUDA ? GT_ASKED_CUDA : GT_ASKED_HOST;
        report->method = GT_METHOD_FAILED;
    }
    if (!comm || !mhandle)
        return GT_INVALID_ARGUMENT;
    *mhandle = NULL;
    if (type != GT_PTR_HOST) {
        GT_WARN("sock: regMr of %zu bytes at %p with type %d refused: the sock transport "
                "moves host memory only (ptrSupport = HOST)",
                size, data, type);
        if (report)
            report->reason =
                type == GT_PTR_CUDA ? GT_REASON_HOST_MEMORY_ONLY : GT_REASON_BAD_ARGUMENT;
        return GT_INTERNAL_ERROR;
    }
    struct sock_mr *mr = malloc(sizeof(*mr));
    if (!mr) {
        if (report) {
            report->reason = GT_REASON_HOST_REG_FAILED;
            report->err = ENOMEM;
        }
        GT_WARN("sock: regMr: out of memory");
        return GT_SYSTEM_ERROR;
    }
    *mr = (struct sock_mr){.magic = MR_MAGIC, .data = data, .size = size};
    *mhandle = mr;
    if (report)
        report->method = GT_METHOD_HOST;
    return GT_OK;
}

static gt_result sock_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                                    int fd, void **mhandle, struct gt_reg_report *report)
{
    (void)comm;
    if (mhandle)
        *mhandle = NULL;
    if (report) {
        report->asked =
            fd >= 0 ? GT_ASKED_DMABUF : (type == GT_PTR_HOST ? GT_ASKED_HOST : GT_ASKED_CUDA);
        report->method = GT_METHOD_FAILED;
        report->reason = GT_REASON_HOST_MEMORY_ONLY;
    }
    GT_WARN("sock: regMrDmaBuf of %zu bytes at %p (type %d, fd %d, offset %llu) refused: the "
            "sock transport moves host memory only",
            size, data, type, fd, (unsigned long long)offset);
    return GT_INTERNAL_ERROR;
}

static gt_result sock_dereg_mr(void *comm, void *mhandle)
{
    (void)comm;
    struct sock_mr *mr = mhandle;
    if (!mr)
        return GT_OK;
    if (mr->magic != MR_MAGIC) {
        GT_WARN("sock: deregMr: %p is not a sock memory handle", mhandle);
        return GT_INVALID_ARGUMENT;
    }
    mr->magic = 0;
    free(mr);
    return GT_OK;
}

static gt_result sock_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle)
{
    (void)comm;
    (void)mhandle;
    /* netDeviceType is HOST: there is no device-side handle; NULL says so. */
    if (dptr_mhandle)
        *dptr_mhandle = NULL;
    return GT_OK;
}

/* ---- data path ------------------------------------------------------------ */

/* Invariant 2: the oldest CTS with this tag, or -1. */
static int cts_match(const struct sock_comm *c, int tag)
{
    for (int i = 0; i < c->ncts; i++)
        if (c->cts[i].tag == tag)
            return i;
    return -1;
}

static gt_result sock_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
                            void *phandle, void **request)
{
    (void)mhandle;
    (void)phandle;
    struct sock_comm *c = send_comm;
    if (!c || !request || c->kind != COMM_SEND || (size && !data))
        return GT_INVALID_ARGUMENT;
    *request = NULL;
    if (size > MAX_MSG) {
        GT_WARN("sock: isend of %zu bytes exceeds maxP2pBytes %zu", size, MAX_MSG);
        return GT_INVALID_ARGUMENT;
    }
    /* No flush here: queued headers leave with their payloads from test()
     * (invariants 1b, 4a).  Flushing would send the previous message's
     * header alone whenever NCCL posts ahead of its tests: a syscall and a
     * small segment more per message. */
    int e = -1;
    if (!c->eager_sent && (e = cts_match(c, tag)) < 0) {
        gt_result r = read_ctrl(c);
        if (r != GT_OK)
            return r;
        e = cts_match(c, tag);
    }
    int eager = c->eager_sent || (e < 0 && c->eager_ok);
    if (!eager && e < 0) {
        if (c->eof)
            return comm_fail(c, GT_REMOTE_ERROR,
                             "peer closed the connection; isend (tag %d, %zu bytes) can never "
                             "be received",
                             tag, size);
        return GT_OK; /* receiver has not posted it yet: NULL request, NCCL retries */
    }
    int trunc = !eager && size > c->cts[e].size;
    size_t inl = (!trunc && size <= INLINE_MAX) ? size : 0;
    if (!out_room(c, sizeof(struct wire_hdr) + inl))
        return GT_OK;
    struct sock_req *q = req_get(c, REQ_SEND);
    if (!q)
        return GT_OK; /* pool full: NULL request */
    q->data = data;
    q->size = size;
    q->tag = tag;
    struct wire_hdr h = {.type = W_DATA,
                         .slot = eager ? 0 : c->cts[e].slot,
                         .flags = eager   ? W_FLAG_EAGER
                                  : trunc ? W_FLAG_TRUNC
                                          : 0,
                         .size = size,
                         .tag = tag};
    memcpy(c->out + c->out_len, &h, sizeof(h));
    c->out_len += sizeof(h);
    c->out_added += sizeof(h) + inl;
    q->out_end = c->out_added;
    if (trunc) {
        GT_WARN("sock: isend of %zu bytes (tag %d) to %s exceeds the receiver's posted buffer "
                "of %llu bytes: truncation refused",
                size, tag, c->peer, (unsigned long long)c->cts[e].size);
        q->err = GT_INVALID_USAGE;
    } else if (size <= INLINE_MAX) {
        if (inl)
            memcpy(c->out + c->out_len, data, inl);
        c->out_len += inl;
    } else {
        enqueue_payload(c, q, size);
    }
    c->st.msgs++;
    c->st.bytes += size;
    c->st.eager += eager;
    if (eager) {
        c->eager_sent = 1;
        c->ncts = 0; /* invariant 2a: no CTS is used again */
    } else {
        memmove(&c->cts[e], &c->cts[e + 1], (size_t)(c->ncts - e - 1) * sizeof(c->cts[0]));
        c->ncts--;
    }
    *request = q;
    return GT_OK; /* as NCCL's Socket: the bytes move in test() (4a) */
}

static gt_result sock_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
                            void **mhandles, void **phandles, void **request)
{
    (void)mhandles;
    (void)phandles;
    struct sock_comm *c = recv_comm;
    if (!c || !request || c->kind != COMM_RECV || !data || !sizes || !tags)
        return GT_INVALID_ARGUMENT;
    /* GT_NET_OPTIONAL_RECV_COMPLETION: NCCL (LL/LL128, n == 1) pre-sets
     * *request to 0x1 to say it does not need to learn when the data landed
     * (the data carries its own flags), so a transport whose NIC writes the
     * buffer by itself may complete the request early.  Here the bytes are
     * moved by recv() inside test(): completing early could let NCCL stop
     * calling test() with data still in the socket, so the hint is recorded
     * and the request completes when the data is in the buffer, as always.
     * NCCL still test()s the request it gets back, so whatever happens
     * *request must not keep the 0x1 marker. */
    int optional = *request == (void *)(uintptr_t)GT_NET_OPTIONAL_RECV_COMPLETION;
    *request = NULL;
    if (n != 1) {
        GT_WARN("sock: irecv with n=%d sub-receives (sock offers maxRecvs 1: single receives, "
                "what lets sends go out eagerly)",
                n);
        return GT_INVALID_ARGUMENT;
    }
    if (sizes[0] > MAX_MSG || (sizes[0] && !data[0])) {
        GT_WARN("sock: irecv: %zu bytes at %p invalid (maxP2pBytes %zu)", sizes[0], data[0],
                MAX_MSG);
        return GT_INVALID_ARGUMENT;
    }
    if (c->err)
        return c->err;
    /* An eager sender's messages may still be buffered here after its close. */
    if (c->eof && c->in_len < sizeof(struct wire_hdr))
        return comm_fail(c, GT_REMOTE_ERROR,
                         "peer closed the connection; irecv (tag %d) can never complete", tags[0]);
    int cts = !c->peer_eager; /* an eager sender needs no CTS (invariant 2a) */
    size_t need = sizeof(struct wire_hdr) + sizeof(struct wire_cts_ent);
    if (cts && !out_room(c, need))
        return GT_OK;
    struct sock_req *q = req_get(c, REQ_RECV);
    if (!q)
        return GT_OK; /* pool full: NULL request */
    q->busy = 1;
    q->optional = optional;
    q->seq = c->post_seq++;
    q->data = data[0];
    q->size = sizes[0];
    q->tag = tags[0];
    c->await_hdr++;
    *request = q;
    if (!cts)
        return GT_OK;
    struct wire_hdr h = {
        .type = W_CTS, .sub = 1, .slot = (uint16_t)(q - c->reqs), .flags = W_FLAG_EAGER_OK};
    struct wire_cts_ent ce = {.tag = tags[0], .size = sizes[0]};
    memcpy(c->out + c->out_len, &h, sizeof(h));
    memcpy(c->out + c->out_len + sizeof(h), &ce, sizeof(ce));
    c->out_len += sizeof(h) + sizeof(ce);
    return flush_out(c);
}

static gt_result sock_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
                             void **request)
{
    (void)n;
    (void)data;
    (void)sizes;
    (void)mhandles;
    struct sock_comm *c = recv_comm;
    if (!c || !request || c->kind != COMM_RECV)
        return GT_INVALID_ARGUMENT;
    /* Host memory written by recv() is already visible to the CPU: nothing
     * to flush, the request completes on its first test(). */
    *request = req_get(c, REQ_FLUSH);
    return GT_OK;
}

static gt_result sock_test(void *request, int *done, int *sizes)
{
    struct sock_req *q = request;
    if (done)
        *done = 0;
    if (!q || (uintptr_t)q == GT_NET_OPTIONAL_RECV_COMPLETION || !done) {
        GT_WARN("sock: test(%p) is not a request", request);
        return GT_INVALID_ARGUMENT;
    }
    struct sock_comm *c = q->comm;
    if (q->kind == REQ_FLUSH) {
        *done = 1;
        req_put(q);
        return GT_OK;
    }
    if (q->kind == REQ_FREE || q->abandoned) {
        GT_WARN("sock: test(%p) on a request that is no longer in flight", request);
        return GT_INVALID_USAGE;
    }
    c->until = q; /* invariant 4a */
    gt_result r = progress(c);
    c->until = NULL;
    if (q->err) {
        gt_result e = q->err;
        /* Free now if nothing will touch it again; else when its bytes end. */
        if (!q->busy)
            req_put(q);
        else
            q->abandoned = 1;
        return e;
    }
    if (r != GT_OK)
        return r;
    if (!req_complete(c, q))
        return GT_OK;
    *done = 1;
    if (sizes)
        sizes[0] = (int)(q->kind == REQ_RECV ? q->got : q->size);
    req_put(q);
    return GT_OK;
}

static gt_result sock_irecv_consumed(void *recv_comm, int n, void *request)
{
    (void)n;
    (void)request;
    /* Only device-offloaded (UNPACK) receives need this; ours are HOST. */
    return recv_comm ? GT_OK : GT_INVALID_ARGUMENT;
}

static gt_result sock_set_net_attr(void *ctx, void *net_attr)
{
    (void)net_attr;
    /* Flow/peer hints do not change how TCP sockets are used here. */
    return ctx ? GT_OK : GT_INVALID_ARGUMENT;
}

const struct gt_net_ops gt_sock_ops = {
    .name = "sock",
    .init = sock_init,
    .devices = sock_devices,
    .get_properties = sock_get_properties,
    .listen = sock_listen,
    .connect = sock_connect,
    .accept = sock_accept,
    .reg_mr = sock_reg_mr,
    .reg_mr_dmabuf = sock_reg_mr_dmabuf,
    .dereg_mr = sock_dereg_mr,
    .isend = sock_isend,
    .irecv = sock_irecv,
    .iflush = sock_iflush,
    .test = sock_test,
    .close_send = sock_close_comm,
    .close_recv = sock_close_comm,
    .close_listen = sock_close_listen,
    .get_device_mr = sock_get_device_mr,
    .irecv_consumed = sock_irecv_consumed,
    .finalize = sock_finalize,
    .set_net_attr = sock_set_net_attr,
    .get_probe = sock_get_probe,
};
