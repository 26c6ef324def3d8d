/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock.c — gt_sock_ops: NCCL-style point-to-point messaging over TCP, host
 * memory only.  Owns the device table, listen/connect/accept, the request
 * pools and the wire protocol.
 *
 * A connection is 1 control socket + N data sockets (N = the connector's
 * GDRTRACE_SOCKET_NSOCKS; the acceptor learns it from the hello).  With N = 0
 * a payload follows its DATA header on the control socket itself, as in
 * NCCL's Socket transport without helper threads: the control socket then
 * doubles as the one work queue (data[0], invariant 1a).
 *
 * Wire protocol (host byte order on the sockets: both ends run this build,
 * which the hello's version pins; the handle alone is byte-order neutral):
 *   hello   (each socket, connector -> acceptor, once): struct wire_hello.
 *   CTS     (control, receiver -> sender, one per irecv): wire_hdr{type CTS,
 *           sub = n, slot, flags} + n x wire_cts_ent{tag, size}.  "Clear to
 *           send": the sender sends into that posted receive.
 *   DATA    (control, sender -> receiver, one per isend): wire_hdr{type DATA,
 *           sub, slot, flags, size, tag}, followed on the control socket by
 *           the payload itself when size <= INLINE_MAX (small-message
 *           latency), else the payload is striped over the data sockets.
 *
 * Two ways to send, chosen per receiving comm:
 *   rendezvous (GDRTRACE_SOCKET_MAXRECVS > 1, grouped receives allowed):
 *           every isend waits for its CTS, so a multi-receive can never be
 *           starved behind a message for a later receive.
 *   eager    (maxRecvs 1, the default, as NCCL's own Socket transport): the
 *           receiver's CTS carry FLAG_EAGER_OK, a promise that it will only
 *           ever post single receives.  From the first such CTS on, a send
 *           with no CTS to match goes out without one (DATA with FLAG_EAGER) and
 *           waits in the kernel's socket buffers; the sender's progress no
 *           longer depends on the receiver having posted.  Once the receiver
 *           has seen an eager DATA it stops sending CTS altogether.
 *
 * Invariants:
 *  1. Striping is a pure function of (size, nsocks, chunk, rotation counter);
 *     both ends advance the counter for each non-inline DATA in control-stream
 *     order, so every data socket carries the same sequence of parts on both
 *     ends and needs no per-part header.
 *  1a. N = 0: the sender writes no control byte that follows a queued
 *     payload's header before that payload (each work records the stream
 *     position it starts at, `mark`); the receiver, having parsed such a
 *     header, takes what of the payload it already buffered and reads the
 *     rest straight from the socket before it parses anything else.
 *  1b. N = 0: large payloads never pass through the control buffer.  The
 *     sender hands a header and its payload to one sendmsg(); the receiver,
 *     once a payload was larger than INLINE_MAX, reads the control stream
 *     only up to the end of the next message (its header, or header and
 *     inline body), so the next payload lands straight in its buffer; an
 *     inline message switches back to filling the buffer (many small
 *     messages per recv()).
 *  2. The sender matches an isend to the oldest CTS entry with an unmatched
 *     sub of that tag; per-tag order is FIFO on both ends, so this is the
 *     receive NCCL meant.  No CTS -> isend returns a NULL request (retry),
 *     unless the receiver promised single receives (eager, below).
 *  2a. Eager: once the sender has sent one eager DATA it never uses a CTS
 *     again (it drops them), so the k-th message of a tag always belongs to
 *     the k-th receive of that tag.  An eager receiver matches every DATA
 *     that way (oldest posted receive with that tag; a rendezvous DATA must
 *     name that same slot); a DATA with no such receive yet stops the
 *     control stream where it is (it and its payload wait in the socket)
 *     until one is posted.  That cannot deadlock because the receiver's
 *     receives are single: the one it waits for is the one NCCL posts next
 *     for that tag, which depends on nothing behind it in the stream.
 *  3. Everything read from the network is validated before use (hello
 *     fields, slot, sub, tag, size, n); a violation fails the comm with
 *     GT_REMOTE_ERROR and a WARN naming the peer.  A comm error is sticky.
 *  4. No allocation, lock or blocking call on the data path: request pools
 *     and queues are allocated at connect/accept; sockets are non-blocking
 *     and all progress happens inside isend/irecv/test.
 *  4a. Progress scope (GDRTRACE_SOCKET_PROGRESS): by default ("tested") a
 *     test() moves bytes, in stream order, only until the request tested
 *     has completed (a sendmsg() that completes it ends the call), and an
 *     isend sends no payload, as NCCL's Socket does; with no data sockets
 *     it sends nothing at all, so each header leaves with its payload (1b).
 *     So NCCL hears of each completion before later messages are moved,
 *     which is what lets its GPU kernel reuse the slot.  "all" moves
 *     everything the sockets take on every call.  With 2+ data sockets a
 *     socket stops once the tested request has no part left on it.
 *  4b. A send completes only when its payload *and* its header (with any
 *     inline body) have left our buffers for the kernel's: after the last
 *     send's test() says done NCCL may never call us on that comm again, so
 *     nothing of it may be left behind.
 *  4c. A payload send() or recv() that moved fewer bytes than asked is
 *     repeated on that socket until it would block or the part is done, as
 *     NCCL's Socket does: what arrived (or drained) while the kernel copied
 *     is taken in this call, not one proxy loop later.  Only a sender with
 *     GDRTRACE_SOCKET_POLL_WRITABLE=1 stops at once and waits for poll().
 *  5. Truncation (message larger than the posted buffer): in rendezvous the
 *     sender sees it in the CTS and sends a DATA header with FLAG_TRUNC and
 *     no payload: both requests fail from test().  An eager sender cannot
 *     know; the receiver reads the payload into a sink and fails the
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
#include <time.h>
#include <unistd.h>

#include "common/env.h"
#include "common/log.h"
#include "plugin/sock/sock_internal.h"

#define INLINE_MAX 4096
#define IN_CAP (64 * 1024)
#define OUT_CAP (256 * 1024)
#define DEFAULT_CHUNK (128 * 1024)
#define MAX_MSG ((size_t)1 << 30) /* test() reports int sizes: stay well below INT_MAX */
#define RECV_POOL GT_NET_MAX_REQUESTS
#define SEND_POOL (GT_NET_MAX_REQUESTS * GT_SOCK_MAX_RECVS)
#define WQ_CAP SEND_POOL        /* >= both pools' worst case of one part per message per socket */
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
    uint8_t sub; /* CTS: n; DATA: sub index */
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
    uint8_t index;  /* 0 = control, 1..nsocks = data */
    uint8_t nsocks; /* data sockets */
    uint32_t chunk; /* striping granule (bytes) */
    uint32_t reserved;
    uint64_t conn_id; /* groups one connection's sockets */
    uint64_t nonce;   /* the listen handle's nonce */
};
_Static_assert(sizeof(struct wire_hello) == 32, "wire_hello is 32 bytes on the wire");

enum { REQ_FREE = 0, REQ_SEND, REQ_RECV, REQ_FLUSH };

struct sock_sub {
    void *data;
    size_t size; /* recv: posted capacity; send: message size */
    size_t got;  /* recv: size the sender announced */
    size_t left; /* payload bytes still to move */
    int tag;
    int state;   /* recv: 0 waiting for header, 1 header seen, 2 done */
    int discard; /* recv: truncated eager payload, read into the sink */
};

struct sock_comm;
struct sock_req {
    struct sock_comm *comm;
    int kind;
    int n;
    int subs_left;
    int optional;  /* NCCL pre-set *request to GT_NET_OPTIONAL_RECV_COMPLETION */
    int abandoned; /* test() already reported its error; free when subs finish */
    uint64_t seq;  /* recv: posting order, for eager matching (invariant 2a) */
    uint64_t out_end; /* send: out_added once its header (and inline body) was queued */
    gt_result err;
    struct sock_sub sub[GT_SOCK_MAX_RECVS];
};

struct sock_work {
    struct sock_req *req;
    int sub;
    size_t off, len, done;
    uint64_t mark; /* N = 0, sender: control-stream position the payload starts at */
};

struct sock_data {
    int fd;
    unsigned head, count;
    int full;            /* sender: the last send() did not take all it was offered */
    struct sock_work *w; /* ring of WQ_CAP */
};

struct cts_ent {
    uint16_t slot;
    uint8_t n;
    uint8_t matched; /* bit per sub */
    int32_t tag[GT_SOCK_MAX_RECVS];
    uint64_t size[GT_SOCK_MAX_RECVS];
};

enum { COMM_SEND = 1, COMM_RECV = 2 };

struct sock_comm {
    int kind;
    int nsocks;
    int nq; /* work queues: nsocks, or 1 (the control socket) when nsocks is 0 */
    size_t chunk;
    int ctrl;
    unsigned rot; /* invariant 1 */
    gt_result err;
    int eof;       /* control socket saw EOF */
    int await_hdr; /* receiver: posted sub-receives still waiting for their DATA header */
    int max_recvs; /* receiver: sub-receives allowed per irecv (1 = eager, see the top) */
    int peer_eager; /* receiver: an eager DATA arrived, no more CTS are needed */
    int stalled;    /* receiver: the next DATA has no posted receive yet */
    int exact_ctrl; /* receiver, N = 0: the last payload was large, so read the
                     * control stream one message at a time (invariant 1b) */
    uint64_t post_seq;
    int eager_ok;   /* sender: the receiver promised single receives */
    int eager_sent; /* sender: an eager DATA went out; CTS are ignored from now on */
    struct gt_sock_stats st;
    /* GDRTRACE_SOCKET_PROGRESS=tested: the request test() was called on.
     * Progress stops as soon as it has completed, so test() reports it
     * without first moving every later message the socket would take. */
    const struct sock_req *until;
    char peer[80];
    struct sock_data data[GT_SOCK_MAX_SOCKS];
    uint8_t *out;
    size_t out_off, out_len;
    uint64_t out_sent; /* control-stream bytes sent so far (invariant 1a) */
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
    int hello_sent[GT_SOCK_MAX_SOCKS + 1];
    int connected[GT_SOCK_MAX_SOCKS + 1];
    int fds[GT_SOCK_MAX_SOCKS + 1]; /* fds[0] = ctrl, fds[i] = data[i-1].fd */
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
static int g_nsocks;        /* GDRTRACE_SOCKET_NSOCKS, read once per first init */
static int g_max_recvs = 1; /* GDRTRACE_SOCKET_MAXRECVS, likewise */
static int g_poll_writable; /* GDRTRACE_SOCKET_POLL_WRITABLE, likewise */
static int g_tested_only;   /* GDRTRACE_SOCKET_PROGRESS=tested, likewise */
static int g_sndbuf;        /* GDRTRACE_SOCKET_SNDBUF bytes, 0 = kernel autotuning; likewise */
static int g_rcvbuf;        /* GDRTRACE_SOCKET_RCVBUF, likewise */
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
            "sock: using%s; data sockets %d, maxRecvs %d, progress %s, poll writable %d", line,
            g_nsocks, g_max_recvs, g_tested_only ? "tested" : "all", g_poll_writable);
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
        /* 0: payloads on the control socket, NCCL's Socket shape.  In real
         * NCCL on the GPU machine it beat 1 and 2 data sockets in every
         * broadcast/sendrecv cell measured side by side (plugin/sock/README.md,
         * docs/results/gpu-nccl.md Run 4). */
        g_nsocks = (int)gt_env_long("GDRTRACE_SOCKET_NSOCKS", 0, 0, GT_SOCK_MAX_SOCKS);
        /* 1, like NCCL's Socket: sends need not wait for the receiver.  More
         * allows grouped receives at the price of a CTS round trip per send. */
        g_max_recvs =
            (int)gt_env_long("GDRTRACE_SOCKET_MAXRECVS", 1, 1, GT_SOCK_MAX_RECVS);
        /* Off by default: the GPU runs measured retrying at once (docs/results/
         * gpu-nccl.md); waiting measured neutral on the CI machine's bench. */
        g_poll_writable = gt_env_bool("GDRTRACE_SOCKET_POLL_WRITABLE", 0);
        /* all: each test() moves every posted message the sockets take;
         * tested: only up to the request tested (NCCL's Socket's way), so
         * NCCL learns of each completion before later messages move. */
        static const char *const scopes[] = {"all", "tested", NULL};
        g_tested_only = gt_env_choice("GDRTRACE_SOCKET_PROGRESS", scopes, 1) == 1;
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
    p->max_recvs = __atomic_load_n(&g_max_recvs, __ATOMIC_RELAXED);
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

static struct sock_comm *comm_alloc(int kind, int nsocks)
{
    struct sock_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->kind = kind;
    c->nsocks = nsocks;
    c->nq = nsocks ? nsocks : 1;
    c->chunk = DEFAULT_CHUNK;
    c->ctrl = -1;
    for (int i = 0; i <= GT_SOCK_MAX_SOCKS; i++)
        c->fds[i] = -1;
    for (int i = 0; i < GT_SOCK_MAX_SOCKS; i++)
        c->data[i].fd = -1;
    c->nreqs = kind == COMM_SEND ? SEND_POOL : RECV_POOL;
    c->out = malloc(OUT_CAP);
    c->in = malloc(IN_CAP);
    c->reqs = calloc((size_t)c->nreqs, sizeof(*c->reqs));
    c->freelist = calloc((size_t)c->nreqs, sizeof(int));
    int ok = c->out && c->in && c->reqs && c->freelist;
    for (int i = 0; ok && i < c->nq; i++) {
        c->data[i].w = calloc(WQ_CAP, sizeof(struct sock_work));
        ok = c->data[i].w != NULL;
    }
    if (!ok) {
        for (int i = 0; i < c->nq; i++)
            free(c->data[i].w);
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
    if (c->out_len > c->out_off)
        return 1;
    for (int i = 0; i < c->nq; i++)
        if (c->data[i].count)
            return 1;
    return c->nfree != c->nreqs;
}

static void comm_free(struct sock_comm *c, int abortive)
{
    if (!c)
        return;
    for (int i = 0; i <= c->nsocks; i++) {
        int fd = c->fds[i];
        if (fd < 0)
            continue;
        if (abortive) {
            close_abort(fd);
        } else {
            /* Unread bytes at close() turn our FIN into a RST, which could
             * make the peer drop data it has not read yet: drain first. */
            char sink[4096];
            while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
                ;
            shutdown(fd, SHUT_WR);
            close(fd);
        }
    }
    for (int i = 0; i < c->nq; i++)
        free(c->data[i].w);
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

static void sub_finished(struct sock_req *r, int s)
{
    r->sub[s].state = 2;
    if (--r->subs_left == 0 && r->abandoned)
        req_put(r);
}

/* ---- striping (invariant 1) --------------------------------------------- */

static int stripe(const struct sock_comm *c, size_t size, size_t *part)
{
    if (c->nsocks == 0) {
        *part = size; /* one work, on the control socket */
        return 1;
    }
    size_t np = size / c->chunk;
    if (np < 1)
        np = 1;
    if (np > (size_t)c->nsocks)
        np = (size_t)c->nsocks;
    size_t p = (size + np - 1) / np;
    p = (p + 4095) & ~(size_t)4095;
    *part = p;
    return (int)((size + p - 1) / p);
}

static void enqueue_parts(struct sock_comm *c, struct sock_req *r, int s, size_t size)
{
    size_t part;
    int np = stripe(c, size, &part);
    r->sub[s].left = size;
    /* Invariant 1a: the payload starts after everything not yet sent: the
     * out buffer and the payloads queued before it. */
    uint64_t mark = c->out_sent + (c->out_len - c->out_off);
    if (c->nsocks == 0)
        for (unsigned k = 0; k < c->data[0].count; k++) {
            const struct sock_work *q = &c->data[0].w[(c->data[0].head + k) % WQ_CAP];
            mark += q->len - q->done;
        }
    for (int i = 0; i < np; i++) {
        struct sock_data *d = &c->data[(c->rot + (unsigned)i) % (unsigned)c->nq];
        struct sock_work *w = &d->w[(d->head + d->count) % WQ_CAP];
        w->req = r;
        w->sub = s;
        w->off = (size_t)i * part;
        w->len = size - w->off < part ? size - w->off : part;
        w->done = 0;
        w->mark = mark;
        d->count++;
    }
    c->rot = (c->rot + (unsigned)np) % (unsigned)c->nq;
}

/* Done from the wire's side: every payload byte handed to the kernel and,
 * for a send, its header (and inline body) too.  A send whose header still
 * waits in the out buffer is not done: NCCL may never call us on this comm
 * again, and the receiver would wait for that header forever. */
static int req_complete(const struct sock_comm *c, const struct sock_req *q)
{
    /* What has left `out` is what was ever queued there less what waits. */
    uint64_t flushed = c->out_added - (c->out_len - c->out_off);
    return q->subs_left == 0 && (q->kind != REQ_SEND || flushed >= q->out_end);
}

/* The tested request has completed: nothing more to move this call. */
static int reached(const struct sock_comm *c)
{
    return c->until && req_complete(c, c->until);
}

/* Tested scope with 2 or more data sockets: a socket moves bytes only while
 * the tested request still has its part on it, so no socket runs ahead into
 * later messages' stripes while another still carries the tested one (4a).
 * Each socket is its own stream, so holding one back never blocks another;
 * with 0 or 1 the stream order alone bounds it (reached()). */
static int holds_until(const struct sock_comm *c, const struct sock_data *d)
{
    if (!c->until || c->nsocks < 2)
        return 1;
    for (unsigned k = 0; k < d->count; k++)
        if (d->w[(d->head + k) % WQ_CAP].req == c->until)
            return 1;
    return 0;
}

/* Accounts n bytes moved for the oldest work of d; 1 when it completed. */
static int work_moved(struct sock_data *d, size_t n)
{
    struct sock_work *w = &d->w[d->head];
    struct sock_sub *s = &w->req->sub[w->sub];
    w->done += n;
    if (w->done < w->len)
        return 0;
    s->left -= w->len;
    if (s->left == 0)
        sub_finished(w->req, w->sub);
    d->head = (d->head + 1) % WQ_CAP;
    d->count--;
    return 1;
}

/* ---- control stream ----------------------------------------------------- */

static gt_result flush_out(struct sock_comm *c)
{
    while (c->out_off < c->out_len) {
        size_t lim = c->out_len - c->out_off;
        if (c->nsocks == 0 && c->kind == COMM_SEND && c->data[0].count) {
            /* Invariant 1a: nothing past the oldest queued payload's start. */
            uint64_t mark = c->data[0].w[c->data[0].head].mark;
            if (mark <= c->out_sent)
                break;
            if (mark - c->out_sent < lim)
                lim = (size_t)(mark - c->out_sent);
        }
        ssize_t n = send(c->ctrl, c->out + c->out_off, lim, MSG_DONTWAIT | MSG_NOSIGNAL);
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
    int ok = (h->flags & W_FLAG_EAGER_OK) != 0;
    if (c->eager_ok && !ok)
        return comm_fail(c, GT_REMOTE_ERROR,
                         "peer's CTS withdrew its single-receive promise (protocol error)");
    c->eager_ok = ok;
    if (c->eager_sent)
        return GT_OK; /* invariant 2a: matched by order on the receiver, not by CTS */
    if (c->ncts >= RECV_POOL)
        return comm_fail(c, GT_REMOTE_ERROR, "peer announced more than %d receives in flight",
                         RECV_POOL);
    if (h->slot >= RECV_POOL)
        return comm_fail(c, GT_REMOTE_ERROR, "peer CTS slot %u out of range", h->slot);
    struct cts_ent *e = &c->cts[c->ncts];
    e->slot = h->slot;
    e->n = h->sub;
    e->matched = 0;
    for (int i = 0; i < h->sub; i++) {
        struct wire_cts_ent ce;
        memcpy(&ce, body + i * sizeof(ce), sizeof(ce));
        if (ce.size > MAX_MSG)
            return comm_fail(c, GT_REMOTE_ERROR, "peer CTS size %llu exceeds %zu",
                             (unsigned long long)ce.size, MAX_MSG);
        e->tag[i] = ce.tag;
        e->size[i] = ce.size;
    }
    c->ncts++;
    return GT_OK;
}

/* Invariant 2a: the eager receiver's match for a DATA of this tag. */
static struct sock_req *eager_match(struct sock_comm *c, int tag)
{
    struct sock_req *best = NULL;
    for (int i = 0; i < c->nreqs; i++) {
        struct sock_req *q = &c->reqs[i];
        if (q->kind == REQ_RECV && q->sub[0].state == 0 && q->sub[0].tag == tag &&
            (!best || q->seq < best->seq))
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
    struct sock_req *r;
    int si;
    if (c->max_recvs == 1) {
        r = eager_match(c, h->tag);
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
        si = 0;
    } else {
        if (eager)
            return comm_fail(c, GT_REMOTE_ERROR,
                             "peer sent without a CTS to a comm that allows grouped receives "
                             "(protocol error)");
        if (h->slot >= c->nreqs)
            return comm_fail(c, GT_REMOTE_ERROR, "peer DATA slot %u out of range", h->slot);
        r = &c->reqs[h->slot];
        if (r->kind != REQ_RECV || h->sub >= r->n || r->sub[h->sub].state != 0)
            return comm_fail(c, GT_REMOTE_ERROR,
                             "peer DATA for slot %u sub %u matches no posted receive", h->slot,
                             h->sub);
        si = h->sub;
    }
    struct sock_sub *s = &r->sub[si];
    c->await_hdr--;
    c->st.msgs++;
    c->st.eager += eager;
    c->st.bytes += h->size;
    if (h->tag != s->tag)
        return comm_fail(c, GT_REMOTE_ERROR, "peer DATA tag %d for a receive posted with tag %d",
                         h->tag, s->tag);
    if (h->size > MAX_MSG)
        return comm_fail(c, GT_REMOTE_ERROR, "peer DATA size %llu exceeds %zu",
                         (unsigned long long)h->size, MAX_MSG);
    s->got = h->size;
    int trunc = (h->flags & W_FLAG_TRUNC) != 0;
    if (c->nsocks == 0)
        c->exact_ctrl = !trunc && h->size > INLINE_MAX; /* invariant 1b */
    if (!trunc && h->size > s->size && !eager)
        return comm_fail(c, GT_REMOTE_ERROR,
                         "peer sent %llu bytes (tag %d) into a %zu-byte receive without "
                         "flagging truncation",
                         (unsigned long long)h->size, h->tag, s->size);
    if (trunc || h->size > s->size) {
        GT_WARN("sock: message of %llu bytes (tag %d) from %s exceeds the posted receive "
                "buffer of %zu bytes: truncation refused",
                (unsigned long long)h->size, h->tag, c->peer, s->size);
        if (!r->err)
            r->err = GT_INVALID_USAGE;
        if (trunc || h->size <= INLINE_MAX) {
            sub_finished(r, si); /* no payload, or inline and skipped with the header */
            return GT_OK;
        }
        s->discard = 1; /* eager: the payload is on its way and must be read */
    } else if (h->size <= INLINE_MAX) {
        if (h->size)
            memcpy(s->data, body, h->size);
        sub_finished(r, si);
        return GT_OK;
    }
    s->state = 1;
    enqueue_parts(c, r, si, h->size);
    return GT_OK;
}

/* Bytes that follow header h in the control stream (0 for a CTS whose n is
 * out of range: parse_in rejects it). */
static size_t msg_body(const struct wire_hdr *h)
{
    if (h->type == W_CTS)
        return h->sub >= 1 && h->sub <= GT_SOCK_MAX_RECVS
                   ? (size_t)h->sub * sizeof(struct wire_cts_ent)
                   : 0;
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
        if (h.type == W_CTS && (h.sub < 1 || h.sub > GT_SOCK_MAX_RECVS)) {
            rc = comm_fail(c, GT_REMOTE_ERROR, "peer CTS with n=%u (max %d)", h.sub,
                           GT_SOCK_MAX_RECVS);
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
        if (c->nsocks == 0 && c->kind == COMM_RECV && c->data[0].count) {
            /* Invariant 1a: this DATA's payload follows it in this stream;
             * take what is buffered, the rest comes from the socket before
             * anything else is parsed. */
            struct sock_data *d = &c->data[0];
            struct sock_work *w = &d->w[d->head];
            struct sock_sub *ss = &w->req->sub[w->sub];
            size_t n = c->in_len - off < w->len - w->done ? c->in_len - off : w->len - w->done;
            if (n && !ss->discard)
                memcpy((char *)ss->data + w->off + w->done, c->in + off, n);
            off += n;
            if (!work_moved(d, n))
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
        if (c->nsocks == 0 && c->kind == COMM_RECV && c->data[0].count) {
            /* Invariant 1a: a payload is due before any further header. */
            r = move_data(c);
            if (r != GT_OK || c->data[0].count)
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
        ssize_t n = recv(c->ctrl, c->in + c->in_len, room, MSG_DONTWAIT);
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

/* ---- data sockets ------------------------------------------------------- */

/* A socket whose send buffer filled is offered data again only once poll()
 * calls it writable, which TCP does when a good part of the buffer is free.
 * Retrying send() at once would, under back-pressure, write the few KiB
 * freed since, each its own segment for both ends' TCP to process. */
static gt_result wait_writable(struct sock_comm *c)
{
    struct pollfd pf[GT_SOCK_MAX_SOCKS];
    int idx[GT_SOCK_MAX_SOCKS], np = 0;
    for (int i = 0; i < c->nq; i++)
        if (c->data[i].full && c->data[i].count) {
            pf[np] = (struct pollfd){.fd = c->data[i].fd, .events = POLLOUT};
            idx[np++] = i;
        }
    if (np == 0)
        return GT_OK;
    c->st.polls++;
    int pr = poll(pf, (nfds_t)np, 0);
    if (pr < 0 && errno != EINTR && errno != EAGAIN)
        return comm_fail(c, GT_SYSTEM_ERROR, "poll on data sockets: %s", strerror(errno));
    for (int k = 0; pr > 0 && k < np; k++)
        if (pf[k].revents) /* POLLOUT, or an error send() will name */
            c->data[idx[k]].full = 0;
    return GT_OK;
}

static gt_result move_data(struct sock_comm *c)
{
    int sending = c->kind == COMM_SEND;
    int gated = sending && __atomic_load_n(&g_poll_writable, __ATOMIC_RELAXED);
    if (gated) {
        gt_result r = wait_writable(c);
        if (r != GT_OK)
            return r;
    }
    for (int i = 0; i < c->nq; i++) {
        struct sock_data *d = &c->data[i];
        if (gated && d->full)
            continue;
        while (d->count && holds_until(c, d)) {
            struct sock_work *w = &d->w[d->head];
            struct sock_sub *s = &w->req->sub[w->sub];
            /* Invariant 1a: its header (and all before it) must be out first. */
            if (sending && c->nsocks == 0 && w->mark + w->done != c->out_sent)
                break;
            char sink[SINK_BYTES];
            char *p = (char *)s->data + w->off + w->done;
            size_t want = w->len - w->done;
            if (s->discard) {
                p = sink;
                if (want > sizeof(sink))
                    want = sizeof(sink);
            }
            ssize_t n = sending ? send(d->fd, p, want, MSG_DONTWAIT | MSG_NOSIGNAL)
                                : recv(d->fd, p, want, MSG_DONTWAIT);
            c->st.io_calls++;
            if (n > 0) {
                c->st.io_bytes += (uint64_t)n;
                if (sending && c->nsocks == 0)
                    c->out_sent += (uint64_t)n;
                if (work_moved(d, (size_t)n)) {
                    if (reached(c))
                        return GT_OK;
                    continue;
                }
                /* Invariant 4c: ask again until it would block (a receiver
                 * reading a truncated payload into the sink too).  Only a
                 * sender can be gated, and it never discards. */
                if (!gated)
                    continue;
                d->full = 1;
                break; /* gated sender: poll() says when there is room again */
            }
            if (n == 0 && !sending)
                return comm_fail(c, GT_REMOTE_ERROR,
                                 "peer closed %s socket %d mid-message (%zu of %zu bytes of a "
                                 "%zu-byte message received)",
                                 c->nsocks ? "data" : "the control (payload)", i,
                                 s->got - s->left + w->done, s->got, s->got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                c->st.would_block++;
                d->full = sending;
                break;
            }
            int e = n < 0 ? errno : EIO;
            return comm_fail(c, errno_result(e), "%s on data socket %d: %s",
                             sending ? "send" : "recv", i, strerror(e));
        }
    }
    return GT_OK;
}

/* N = 0, sender: when the oldest queued payload has not started and what
 * precedes it in the stream is all in the out buffer, send both with one
 * sendmsg() (invariant 1b): one syscall, and the header rides in the
 * payload's first segment instead of a 24-byte segment of its own. */
static gt_result send_fused(struct sock_comm *c)
{
    struct sock_data *d = &c->data[0];
    if (!d->count)
        return GT_OK;
    if (d->full && __atomic_load_n(&g_poll_writable, __ATOMIC_RELAXED))
        return GT_OK; /* move_data offers it again once poll() calls it writable */
    struct sock_work *w = &d->w[d->head];
    if (w->done || w->mark <= c->out_sent || w->mark - c->out_sent > c->out_len - c->out_off)
        return GT_OK; /* under way, or not next: flush_out/move_data go on */
    size_t lead = (size_t)(w->mark - c->out_sent);
    struct sock_sub *sub = &w->req->sub[w->sub];
    struct iovec iov[2] = {{.iov_base = c->out + c->out_off, .iov_len = lead},
                           {.iov_base = (char *)sub->data + w->off, .iov_len = w->len}};
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
    ssize_t n;
    do
        n = sendmsg(c->ctrl, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
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
    d->full = (size_t)n < lead + w->len;
    size_t hdr_part = (size_t)n < lead ? (size_t)n : lead;
    c->out_off += hdr_part;
    c->out_sent += (uint64_t)n;
    if (c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    if ((size_t)n > lead) {
        c->st.io_bytes += (uint64_t)n - lead;
        work_moved(d, (size_t)n - lead);
    }
    return GT_OK;
}

/* N = 0, sender: header and payload bytes take turns on one socket
 * (invariant 1a), so send until neither moves. */
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
    if (c->nsocks == 0 && c->kind == COMM_SEND)
        return pump_ctrl(c);
    gt_result r = flush_out(c);
    /* Only read the control socket when something is expected there: the
     * sender reads CTS in isend(), where it needs them; the receiver while a
     * posted receive waits for its header.  Each skipped recv() is one
     * syscall less per test() spin, which matters when cores are scarce. */
    int ctrl_read = 0;
    if (r == GT_OK && c->kind == COMM_RECV && c->await_hdr > 0) {
        r = read_ctrl(c);
        ctrl_read = 1;
    }
    /* N = 0: read_ctrl has just moved the payloads on the control socket
     * (invariant 1a) until it would block; trying again now would only be a
     * second failing recv() per test() spin, twice NCCL's Socket's. */
    if (r == GT_OK && !(ctrl_read && c->nsocks == 0))
        r = move_data(c);
    if (r == GT_OK)
        r = flush_out(c);
    if (r == GT_OK && c->eof && c->await_hdr > 0) {
        /* A receive still waiting for its header can never complete now. */
        for (int i = 0; i < c->nreqs; i++) {
            struct sock_req *q = &c->reqs[i];
            if (q->kind != REQ_RECV)
                continue;
            for (int s = 0; s < q->n; s++)
                if (q->sub[s].state == 0)
                    return comm_fail(c, GT_REMOTE_ERROR,
                                     "peer closed the connection with a receive (tag %d) "
                                     "still pending",
                                     q->sub[s].tag);
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

/* One non-blocking step of every socket of a connecting comm.
 * Returns GT_OK with *ready = 1 once every hello went out. */
static gt_result connect_step(struct sock_comm *c, int *ready)
{
    int all = 1;
    for (int i = 0; i <= c->nsocks; i++) {
        int fd = c->fds[i];
        if (!c->connected[i]) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            int pr = poll(&pfd, 1, 0);
            if (pr < 0 && errno != EINTR)
                return comm_fail(c, GT_SYSTEM_ERROR, "poll: %s", strerror(errno));
            if (pr <= 0) {
                all = 0;
                continue;
            }
            int soerr = 0;
            socklen_t sl = sizeof(soerr);
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
                soerr = errno;
            if (soerr)
                return comm_fail(c, errno_result(soerr), "connect (socket %d): %s", i,
                                 strerror(soerr));
            c->connected[i] = 1;
        }
        if (c->hello_sent[i] < (int)sizeof(struct wire_hello)) {
            struct wire_hello h = c->hello;
            h.index = (uint8_t)i;
            ssize_t n = send(fd, (char *)&h + c->hello_sent[i],
                             sizeof(h) - (size_t)c->hello_sent[i], MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n > 0)
                c->hello_sent[i] += (int)n;
            else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                return comm_fail(c, errno_result(errno), "sending hello (socket %d): %s", i,
                                 strerror(errno));
            if (c->hello_sent[i] < (int)sizeof(struct wire_hello))
                all = 0;
        }
    }
    *ready = all;
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
        int nsocks = __atomic_load_n(&g_nsocks, __ATOMIC_RELAXED);
        c = comm_alloc(COMM_SEND, nsocks);
        if (!c) {
            GT_WARN("sock: connect: out of memory");
            return GT_SYSTEM_ERROR;
        }
        c->dev = dev;
        gt_sock_addr_str(&info.addr, c->peer, sizeof(c->peer));
        c->conn_id = rand64();
        c->hello = (struct wire_hello){.magic = HELLO_MAGIC,
                                       .version = GT_SOCK_PROTO_VERSION,
                                       .nsocks = (uint8_t)nsocks,
                                       .chunk = (uint32_t)c->chunk,
                                       .conn_id = c->conn_id,
                                       .nonce = info.nonce};
        for (int i = 0; i <= nsocks; i++) {
            int fd = socket(info.addr.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
            if (fd < 0) {
                GT_WARN("sock: connect to %s: socket: %s", c->peer, strerror(errno));
                comm_free(c, 1);
                return GT_SYSTEM_ERROR;
            }
            c->fds[i] = fd;
            size_buffers(fd);
            tune(fd);
            if (connect(fd, &info.addr.sa, addr_len(&info.addr)) != 0 && errno != EINPROGRESS &&
                errno != EINTR) {
                gt_result r = errno_result(errno);
                GT_WARN("sock: connect to %s: %s", c->peer, strerror(errno));
                comm_free(c, 1);
                return r;
            }
        }
        c->ctrl = c->fds[0];
        for (int i = 0; i < nsocks; i++)
            c->data[i].fd = c->fds[i + 1];
        if (nsocks == 0)
            c->data[0].fd = c->ctrl; /* invariant 1a */
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
        buffer_sizes(c->fds[0], &snd, &rcv);
        GT_INFO(GT_LOGSUB_NET, "sock: connected to %s with %d data sockets (sndbuf %d, rcvbuf %d)",
                c->peer, c->nsocks, snd, rcv);
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

/* Builds a recv comm when every socket of one connection has said hello. */
static struct sock_comm *try_group(struct sock_listen *l, int i0)
{
    const struct wire_hello *h0 = &l->pend[i0].hello;
    int idx[GT_SOCK_MAX_SOCKS + 1];
    int found = 0;
    for (int k = 0; k <= h0->nsocks; k++)
        idx[k] = -1;
    for (int i = 0; i < l->npend; i++) {
        const struct sock_pending *p = &l->pend[i];
        if (p->got != sizeof(p->hello) || p->hello.conn_id != h0->conn_id)
            continue;
        if (p->hello.nsocks != h0->nsocks || p->hello.chunk != h0->chunk ||
            idx[p->hello.index] >= 0)
            return NULL; /* inconsistent group: left for the stale check */
        idx[p->hello.index] = i;
        found++;
    }
    if (found != h0->nsocks + 1)
        return NULL;
    struct sock_comm *c = comm_alloc(COMM_RECV, h0->nsocks);
    if (!c)
        return NULL;
    c->chunk = h0->chunk;
    c->max_recvs = __atomic_load_n(&g_max_recvs, __ATOMIC_RELAXED);
    for (int k = 0; k <= h0->nsocks; k++)
        c->fds[k] = l->pend[idx[k]].fd;
    c->ctrl = c->fds[0];
    for (int k = 0; k < c->nsocks; k++)
        c->data[k].fd = c->fds[k + 1];
    if (c->nsocks == 0)
        c->data[0].fd = c->ctrl; /* invariant 1a */
    snprintf(c->peer, sizeof(c->peer), "%s", l->pend[idx[0]].peer);
    /* Remove from the pending table, highest index first so swaps stay valid. */
    for (int n = 0; n <= h0->nsocks; n++) {
        int hi = -1;
        for (int k = 0; k <= h0->nsocks; k++)
            if (idx[k] > hi)
                hi = idx[k];
        int kk = 0;
        for (int k = 0; k <= h0->nsocks; k++)
            if (idx[k] == hi)
                kk = k;
        idx[kk] = -1;
        l->pend[hi] = l->pend[--l->npend];
    }
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
        if (p->got == sizeof(p->hello))
            continue;
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
        const char *bad = h->magic != HELLO_MAGIC       ? "bad magic (not a gdrtrace peer)"
                          : h->version != GT_SOCK_PROTO_VERSION ? "protocol version mismatch"
                          : h->nonce != l->nonce        ? "handle nonce mismatch (stale handle?)"
                          : h->nsocks > GT_SOCK_MAX_SOCKS ? "socket count out of range"
                          : h->index > h->nsocks                      ? "socket index out of range"
                          : h->chunk < 4096 || h->chunk > (64u << 20) ? "chunk size out of range"
                                                                      : NULL;
        if (bad) {
            GT_WARN("sock: accept: refusing connection from %s: %s", p->peer, bad);
            pend_drop(l, i--, 1);
        }
    }
    for (int i = 0; i < l->npend; i++) {
        if (l->pend[i].got != sizeof(l->pend[i].hello))
            continue;
        struct sock_comm *c = try_group(l, i);
        if (c) {
            int snd, rcv;
            buffer_sizes(c->fds[0], &snd, &rcv);
            GT_INFO(GT_LOGSUB_NET, "sock: accepted %s with %d data sockets (sndbuf %d, rcvbuf %d)",
                    c->peer, c->nsocks, snd, rcv);
            *recv_comm = c;
            return GT_OK;
        }
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
            "sock: %s comm with %s closed: %llu messages (%llu eager), %llu bytes; data "
            "sockets: %llu %s() calls moving %llu bytes, %llu would-block, %llu polls; %llu "
            "control reads moving %llu bytes, %llu control writes, %llu progress calls, %llu "
            "stalls",
            c->kind == COMM_SEND ? "send" : "recv", c->peer, (unsigned long long)t->msgs,
            (unsigned long long)t->eager, (unsigned long long)t->bytes,
            (unsigned long long)t->io_calls, c->kind == COMM_SEND ? "send" : "recv",
            (unsigned long long)t->io_bytes, (unsigned long long)t->would_block,
            (unsigned long long)t->polls, (unsigned long long)t->ctrl_reads,
            (unsigned long long)t->ctrl_bytes, (unsigned long long)t->ctrl_writes,
            (unsigned long long)t->progress, (unsigned long long)t->stalls);
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

static int cts_match(struct sock_comm *c, int tag, int *ent, int *sub)
{
    for (int i = 0; i < c->ncts; i++)
        for (int s = 0; s < c->cts[i].n; s++)
            if (!(c->cts[i].matched & (1u << s)) && c->cts[i].tag[s] == tag) {
                *ent = i;
                *sub = s;
                return 1;
            }
    return 0;
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
    /* Tested scope without data sockets: queued headers leave with their
     * payloads from test() (invariant 1b).  Flushing here would send the
     * previous message's header alone whenever NCCL posts ahead of its
     * tests: a syscall and a small segment more per message. */
    gt_result r = g_tested_only && c->nsocks == 0 ? GT_OK : flush_out(c);
    if (r != GT_OK)
        return r;
    int e = -1, s = 0;
    if (!c->eager_sent && !cts_match(c, tag, &e, &s)) {
        r = read_ctrl(c);
        if (r != GT_OK)
            return r;
    }
    int eager = c->eager_sent || (!cts_match(c, tag, &e, &s) && c->eager_ok);
    if (!eager && e < 0) {
        if (c->eof)
            return comm_fail(c, GT_REMOTE_ERROR,
                             "peer closed the connection; isend (tag %d, %zu bytes) can never "
                             "be received",
                             tag, size);
        return GT_OK; /* receiver has not posted it yet: NULL request, NCCL retries */
    }
    int trunc = !eager && size > c->cts[e].size[s];
    size_t inl = (!trunc && size <= INLINE_MAX) ? size : 0;
    if (!out_room(c, sizeof(struct wire_hdr) + inl))
        return GT_OK;
    struct sock_req *q = req_get(c, REQ_SEND);
    if (!q)
        return GT_OK; /* pool full: NULL request */
    q->n = 1;
    q->sub[0] = (struct sock_sub){.data = data, .size = size, .tag = tag};
    struct wire_hdr h = {.type = W_DATA,
                         .sub = (uint8_t)s,
                         .slot = eager ? 0 : c->cts[e].slot,
                         .flags = eager ? W_FLAG_EAGER : trunc ? W_FLAG_TRUNC : 0,
                         .size = size,
                         .tag = tag};
    memcpy(c->out + c->out_len, &h, sizeof(h));
    c->out_len += sizeof(h);
    c->out_added += sizeof(h) + inl;
    q->out_end = c->out_added;
    if (trunc) {
        GT_WARN("sock: isend of %zu bytes (tag %d) to %s exceeds the receiver's posted buffer "
                "of %llu bytes: truncation refused",
                size, tag, c->peer, (unsigned long long)c->cts[e].size[s]);
        q->err = GT_INVALID_USAGE;
    } else if (size <= INLINE_MAX) {
        if (inl)
            memcpy(c->out + c->out_len, data, inl);
        c->out_len += inl;
    } else {
        q->subs_left = 1;
        enqueue_parts(c, q, 0, size);
    }
    c->st.msgs++;
    c->st.bytes += size;
    c->st.eager += eager;
    if (eager) {
        c->eager_sent = 1;
        c->ncts = 0; /* invariant 2a: no CTS is used again */
    } else {
        c->cts[e].matched |= (uint8_t)(1u << s);
        if (c->cts[e].matched == (1u << c->cts[e].n) - 1) {
            memmove(&c->cts[e], &c->cts[e + 1], (size_t)(c->ncts - e - 1) * sizeof(c->cts[0]));
            c->ncts--;
        }
    }
    *request = q;
    if (g_tested_only)
        return GT_OK; /* as NCCL's Socket: the bytes move in test() */
    if (c->nsocks == 0)
        return pump_ctrl(c);
    r = flush_out(c);
    if (r == GT_OK && q->subs_left)
        r = move_data(c);
    return r;
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
    if (n < 1 || n > c->max_recvs) {
        GT_WARN("sock: irecv with n=%d sub-receives (this comm allows 1..%d: maxRecvs, "
                "GDRTRACE_SOCKET_MAXRECVS)",
                n, c->max_recvs);
        return GT_INVALID_ARGUMENT;
    }
    for (int i = 0; i < n; i++)
        if (sizes[i] > MAX_MSG || (sizes[i] && !data[i])) {
            GT_WARN("sock: irecv sub %d: %zu bytes at %p invalid (maxP2pBytes %zu)", i, sizes[i],
                    data[i], MAX_MSG);
            return GT_INVALID_ARGUMENT;
        }
    if (c->err)
        return c->err;
    /* An eager sender's messages may still be buffered here after its close. */
    if (c->eof && c->in_len < sizeof(struct wire_hdr))
        return comm_fail(c, GT_REMOTE_ERROR,
                         "peer closed the connection; irecv (tag %d) can never complete", tags[0]);
    int cts = !c->peer_eager; /* an eager sender needs no CTS (invariant 2a) */
    size_t need = sizeof(struct wire_hdr) + (size_t)n * sizeof(struct wire_cts_ent);
    if (cts && !out_room(c, need))
        return GT_OK;
    struct sock_req *q = req_get(c, REQ_RECV);
    if (!q)
        return GT_OK; /* pool full: NULL request */
    q->n = n;
    q->subs_left = n;
    q->optional = optional;
    q->seq = c->post_seq++;
    c->await_hdr += n;
    for (int i = 0; i < n; i++)
        q->sub[i] = (struct sock_sub){.data = data[i], .size = sizes[i], .tag = tags[i]};
    *request = q;
    if (!cts)
        return GT_OK;
    struct wire_hdr h = {.type = W_CTS,
                         .sub = (uint8_t)n,
                         .slot = (uint16_t)(q - c->reqs),
                         .flags = c->max_recvs == 1 ? W_FLAG_EAGER_OK : 0};
    memcpy(c->out + c->out_len, &h, sizeof(h));
    c->out_len += sizeof(h);
    for (int i = 0; i < n; i++) {
        struct wire_cts_ent ce = {.tag = tags[i], .size = sizes[i]};
        memcpy(c->out + c->out_len, &ce, sizeof(ce));
        c->out_len += sizeof(ce);
    }
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
    if (g_tested_only)
        c->until = q;
    gt_result r = progress(c);
    c->until = NULL;
    if (q->err) {
        gt_result e = q->err;
        /* Free now if nothing will touch it again; else when its subs end. */
        if (q->subs_left == 0)
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
        for (int i = 0; i < q->n; i++)
            sizes[i] = (int)(q->kind == REQ_RECV ? q->sub[i].got : q->sub[i].size);
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
