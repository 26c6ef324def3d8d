/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock_conn.c — the sock transport up to an established comm: the device
 * table (init/finalize, properties, probe, the retired variables), socket
 * options, listen/connect/accept with the hello, the connect-in-progress
 * registry and the accept's pending table, and a comm's lifetime (alloc,
 * sticky failure, close).
 *
 * Invariants:
 *  1. One socket per connection: control messages and payloads share one
 *     TCP stream, so its order is the protocol's order (1a, 1b in
 *     sock_data.c and sock_ctrl.c).  The hello still carries the data-socket
 *     count and striping chunk of protocol version 2 (0 and 128 KiB), so the
 *     wire stays what it was; an acceptor refuses a peer that asks for any.
 *  3. Every hello is validated (magic, version, the listen handle's nonce,
 *     socket count and index, chunk) before the connection becomes a comm;
 *     a bad one is refused with a WARN naming the peer and a RST.  A comm's
 *     error is sticky: gt_sock_fail() WARNs once and every later call
 *     returns the same result.
 *  -  connect() keeps its in-progress state id in the handle (NCCL gives it
 *     nowhere else); the id is looked up in a registry, never dereferenced.
 *  -  g_lock guards the device table, the reference count and the registry;
 *     nothing on the data path takes it.
 */
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

#define HELLO_MAGIC 0x47544831u /* "GTH1" */
/* The hello's chunk field: the striping granule of protocol version 2, which
 * the wire keeps; nothing is striped now. */
#define HELLO_CHUNK (128 * 1024)
#define MAX_PENDING 64
#define MAX_CONNECTING 256

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
        int e = errno;
        return SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, e,
                         "sock: getifaddrs failed: %s", strerror(e));
    }
    const char *spec = gt_env_str("GDRTRACE_SOCKET_IFNAME");
    static const char *const fams[] = {"any", "AF_INET", "AF_INET6", "4", "6", NULL};
    static const int fam_of[] = {0, AF_INET, AF_INET6, AF_INET, AF_INET6};
    int family = fam_of[gt_env_choice("GDRTRACE_SOCKET_FAMILY", fams, 0)];
    int n = gt_sock_if_select(cands, nc, spec, family, sel, GT_SOCK_MAX_DEVS);
    if (n <= 0) {
        return SOCK_FAIL(GT_INTERNAL_ERROR, GT_REASON_TRANSPORT_ERROR, 0,
                         "sock: no usable network interface (up, with an %s address)%s%s%s",
                         family == AF_INET    ? "IPv4 (GDRTRACE_SOCKET_FAMILY)"
                         : family == AF_INET6 ? "IPv6 (GDRTRACE_SOCKET_FAMILY)"
                                              : "IPv4/IPv6",
                         spec ? " matching GDRTRACE_SOCKET_IFNAME='" : "", spec ? spec : "",
                         spec ? "'" : "");
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

gt_result gt_sock_init(void **ctx, uint64_t comm_id, int has_comm_id,
                       const struct gt_comm_config *config, gt_logger_fn logger,
                       gt_profiler_fn profiler)
{
    (void)has_comm_id;
    (void)profiler;
    if (!ctx)
        return gt_sock_bad_arg(__func__);
    gt_log_set_logger(logger);
    struct sock_ctx *x = calloc(1, sizeof(*x));
    if (!x)
        return SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                         "sock: init: out of memory");
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

gt_result gt_sock_finalize(void *ctx)
{
    if (!ctx)
        return gt_sock_bad_arg(__func__);
    pthread_mutex_lock(&g_lock);
    if (g_refs > 0 && --g_refs == 0)
        devices_release();
    pthread_mutex_unlock(&g_lock);
    free(ctx);
    return GT_OK;
}

gt_result gt_sock_devices(int *ndev)
{
    if (!ndev)
        return gt_sock_bad_arg(__func__);
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

gt_result gt_sock_get_properties(int dev, struct gt_props *p)
{
    if (!p || !dev_ok(dev))
        return gt_sock_bad_arg(__func__);
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

gt_result gt_sock_get_probe(int dev, struct gt_dev_probe *probe)
{
    if (!probe || !dev_ok(dev))
        return gt_sock_bad_arg(__func__);
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
        comm_free(c, 1); /* no socket yet: frees what was allocated */
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

gt_result gt_sock_again(struct sock_comm *c)
{
    return gt_net_fail(c->err, c->fail_reason, c->fail_errno, "%s", c->fail_text);
}

static gt_result comm_failv(struct sock_comm *c, gt_result r, int reason, int err, const char *fmt,
                            va_list ap)
{
    if (c->err)
        return gt_sock_again(c); /* sticky; WARN once */
    char msg[384];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    GT_WARN("sock: %s comm with peer %s failed: %s", c->kind == COMM_SEND ? "send" : "recv",
            c->peer, msg);
    c->err = r;
    c->fail_reason = reason;
    c->fail_errno = err;
    snprintf(c->fail_text, sizeof(c->fail_text), "sock: %.121s", msg);
    return gt_sock_again(c);
}

__attribute__((format(printf, 3, 4))) gt_result gt_sock_fail(struct sock_comm *c, gt_result r,
                                                             const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r = comm_failv(c, r, GT_REASON_TRANSPORT_ERROR, 0, fmt, ap);
    va_end(ap);
    return r;
}

__attribute__((format(printf, 3, 4))) gt_result gt_sock_fail_errno(struct sock_comm *c, int e,
                                                                   const char *fmt, ...)
{
    gt_result r = gt_sock_errno_result(e);
    va_list ap;
    va_start(ap, fmt);
    r = comm_failv(c, r, r == GT_REMOTE_ERROR ? GT_REASON_PEER_GONE : GT_REASON_TRANSPORT_ERROR, e,
                   fmt, ap);
    va_end(ap);
    return r;
}

__attribute__((format(printf, 2, 3))) gt_result gt_sock_fail_gone(struct sock_comm *c,
                                                                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gt_result r = comm_failv(c, GT_REMOTE_ERROR, GT_REASON_PEER_GONE, 0, fmt, ap);
    va_end(ap);
    return r;
}

gt_result gt_sock_bad_arg(const char *fn)
{
    return gt_net_fail(GT_INVALID_ARGUMENT, GT_REASON_BAD_ARGUMENT, EINVAL,
                       "sock: %s: invalid argument", fn);
}

gt_result gt_sock_errno_result(int e)
{
    return (e == ECONNRESET || e == EPIPE || e == ECONNREFUSED || e == ETIMEDOUT ||
            e == EHOSTUNREACH || e == ENETUNREACH || e == ECONNABORTED)
               ? GT_REMOTE_ERROR
               : GT_SYSTEM_ERROR;
}

/* ---- listen / connect / accept ------------------------------------------ */

gt_result gt_sock_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
    (void)ctx;
    if (!handle || !listen_comm || !dev_ok(dev))
        return gt_sock_bad_arg(__func__);
    struct sock_listen *l = calloc(1, sizeof(*l));
    if (!l)
        return SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                         "sock: listen: out of memory");
    char a[80];
    l->dev = dev;
    l->addr = g_dev[dev].ifc.addr;
    if (l->addr.sa.sa_family == AF_INET6)
        l->addr.in6.sin6_port = 0;
    else
        l->addr.in4.sin_port = 0;
    l->fd = socket(l->addr.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int e;
    if (l->fd < 0) {
        e = errno;
        SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, e, "sock: listen on %s: socket: %s",
                  g_dev[dev].ifc.name, strerror(e));
        goto err_free;
    }
    int one = 1;
    setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    size_buffers(l->fd);
    socklen_t len = addr_len(&l->addr);
    if (bind(l->fd, &l->addr.sa, len) != 0 || listen(l->fd, 1024) != 0 ||
        getsockname(l->fd, &l->addr.sa, &len) != 0) {
        e = errno;
        SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, e, "sock: listen on %s (%s): %s",
                  g_dev[dev].ifc.name, gt_sock_addr_str(&l->addr, a, sizeof(a)), strerror(e));
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
    return GT_SYSTEM_ERROR; /* described above */
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
            return gt_sock_fail_errno(c, errno, "poll: %s", strerror(errno));
        if (pr <= 0)
            return GT_OK;
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
            soerr = errno;
        if (soerr)
            return gt_sock_fail_errno(c, soerr, "connect: %s", strerror(soerr));
        c->connected = 1;
    }
    if (c->hello_sent < (int)sizeof(struct wire_hello)) {
        ssize_t n = send(c->fd, (char *)&c->hello + c->hello_sent,
                         sizeof(c->hello) - (size_t)c->hello_sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0)
            c->hello_sent += (int)n;
        else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return gt_sock_fail_errno(c, errno, "sending hello: %s", strerror(errno));
    }
    *ready = c->hello_sent == (int)sizeof(struct wire_hello);
    return GT_OK;
}

gt_result gt_sock_connect(void *ctx, int dev, void *handle, void **send_comm, void **send_dev_comm)
{
    (void)ctx;
    if (send_dev_comm)
        *send_dev_comm = NULL; /* netDeviceType HOST: no device-side handle */
    if (!handle || !send_comm)
        return gt_sock_bad_arg(__func__);
    *send_comm = NULL;
    if (!dev_ok(dev))
        return gt_sock_bad_arg(__func__);
    struct gt_sock_handle_info info;
    char why[160], a[80];
    if (gt_sock_handle_decode(handle, GT_NET_HANDLE_MAXSIZE, &info, why, sizeof(why)) != GT_OK) {
        GT_WARN("sock: connect: rejected connection handle: %s", why);
        return gt_sock_bad_arg(__func__);
    }
    struct sock_comm *c;
    uint64_t id = stage_get(handle);
    if (id) {
        c = registry_take(id, 0);
        if (!c) {
            GT_WARN("sock: connect to %s: handle carries unknown connect-in-progress id "
                    "0x%llx (handle corrupted or reused)",
                    gt_sock_addr_str(&info.addr, a, sizeof(a)), (unsigned long long)id);
            return gt_sock_bad_arg(__func__);
        }
    } else {
        c = comm_alloc(COMM_SEND);
        if (!c)
            return SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                             "sock: connect: out of memory");
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
            int e = errno;
            SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, e,
                      "sock: connect to %s: socket: %s", c->peer, strerror(e));
            comm_free(c, 1);
            return GT_SYSTEM_ERROR;
        }
        size_buffers(c->fd);
        tune(c->fd);
        if (connect(c->fd, &info.addr.sa, addr_len(&info.addr)) != 0 && errno != EINPROGRESS &&
            errno != EINTR) {
            int e = errno;
            gt_result r = gt_sock_errno_result(e);
            SOCK_FAIL(r, r == GT_REMOTE_ERROR ? GT_REASON_PEER_GONE : GT_REASON_TRANSPORT_ERROR, e,
                      "sock: connect to %s: %s", c->peer, strerror(e));
            comm_free(c, 1);
            return r;
        }
        if (!registry_add(c->conn_id, c)) {
            SOCK_FAIL(GT_INTERNAL_ERROR, GT_REASON_TRANSPORT_ERROR, 0,
                      "sock: connect to %s: more than %d connects in progress", c->peer,
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

gt_result gt_sock_accept(void *listen_comm, void **recv_comm, void **recv_dev_comm)
{
    if (recv_dev_comm)
        *recv_dev_comm = NULL;
    if (!listen_comm || !recv_comm)
        return gt_sock_bad_arg(__func__);
    *recv_comm = NULL;
    struct sock_listen *l = listen_comm;
    for (;;) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            int e = errno;
            return SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, e, "sock: accept: %s",
                             strerror(e));
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

gt_result gt_sock_close_listen(void *listen_comm)
{
    struct sock_listen *l = listen_comm;
    if (!l)
        return gt_sock_bad_arg(__func__);
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

gt_result gt_sock_close_comm(void *comm)
{
    struct sock_comm *c = comm;
    if (!c)
        return gt_sock_bad_arg(__func__);
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
