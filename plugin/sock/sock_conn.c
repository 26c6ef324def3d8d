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
 *     sock_data.c and sock_ctrl.c).
 *  3. Connections are taken in by plugin/oob's listener: a connection
 *     becomes a comm only once its hello (magic, version, checksum, the
 *     listen handle's nonce, a connection id not seen before) is complete;
 *     strangers that are bad, silent past GDRTRACE_OOB_TIMEOUT_MS or closed
 *     are dropped and logged there, and never fail accept.  A comm's error
 *     is sticky: gt_sock_fail() WARNs once and every later call returns the
 *     same result.
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
#include <time.h>
#include <unistd.h>

#include "common/env.h"
#include "common/nccl_env.h"
#include "common/log.h"
#include "plugin/sock/sock_internal.h"

#define MAX_CONNECTING 256

struct sock_listen {
    int dev;
    struct gt_oob_listener oob; /* the socket, the nonce and the pending table */
};

struct sock_ctx {
    uint64_t comm_id;
    int traffic_class;
};

/* ---- devices ---------------------------------------------------------- */

struct sock_dev {
    struct gt_oob_if ifc;
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
    struct gt_oob_if cands[128], sel[GT_SOCK_MAX_DEVS];
    int nc = gt_oob_if_system(cands, 128);
    if (nc < 0) {
        int e = errno;
        return SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, e,
                         "sock: getifaddrs failed: %s", strerror(e));
    }
    struct gt_oob_if_settings ifs;
    gt_oob_if_settings_read(&ifs, "GDRTRACE_SOCKET_IFNAME", 1);
    gt_nccl_note(&ifs.s_ifname);
    gt_nccl_note(&ifs.s_family);
    const char *spec = ifs.has_spec ? ifs.spec : NULL;
    int family = ifs.family;
    int n = gt_oob_if_select(cands, nc, spec, family, sel, GT_SOCK_MAX_DEVS);
    if (n <= 0) {
        return SOCK_FAIL(GT_INTERNAL_ERROR, GT_REASON_TRANSPORT_ERROR, 0,
                         "sock: no usable network interface (up, with an %s address%s%s)%s%s",
                         family == AF_INET    ? "IPv4"
                         : family == AF_INET6 ? "IPv6"
                                              : "IPv4/IPv6",
                         family ? ": " : "", family ? ifs.s_family.origin : "",
                         spec ? " matching " : "", spec ? ifs.s_ifname.origin : "");
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
                 gt_oob_addr_str(&sel[i].addr, a, sizeof(a)));
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

/* A socket buffer size: our twin (0 .. 1 GiB, 0 autotuning), else NCCL's
 * variable with NCCL's meaning (a size > 0 is set, anything else leaves
 * autotuning; above 1 GiB we set 1 GiB, which the kernel caps lower anyway). */
static int sockbuf(const char *nccl, const char *twin)
{
    struct gt_setting s;
    long v;
    const char *tv = gt_env_str(twin);
    if (tv && gt_parse_long(tv, 0, 1L << 30, &v) == 0) {
        gt_nccl_long(&s, nccl, twin, 0, 0, 1L << 30, 0);
    } else {
        if (tv)
            GT_WARN("%s='%s' is not an integer in [0, %ld]; ignoring it", twin, tv, 1L << 30);
        v = gt_nccl_long(&s, nccl, NULL, -1, -2147483647L - 1, 2147483647L, 1);
        v = v <= 0 ? 0 : v > (1L << 30) ? (1L << 30) : v;
        snprintf(s.key, sizeof(s.key), "%s", twin);
        snprintf(s.value, sizeof(s.value), "%ld", v);
    }
    gt_nccl_note(&s);
    return (int)v;
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
        gt_nccl_warn_unhonored("sock");
        g_sndbuf = sockbuf("NCCL_SOCKET_SNDBUF", "GDRTRACE_SOCKET_SNDBUF");
        g_rcvbuf = sockbuf("NCCL_SOCKET_RCVBUF", "GDRTRACE_SOCKET_RCVBUF");
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

/* plugin/oob calls this on the listening socket (buffer sizes, which
 * accepted sockets inherit) and on each accepted one (the options). */
static void prepare_fd(int fd, int listening)
{
    if (listening)
        size_buffers(fd);
    else
        tune(fd);
}

static void prepare_connect(int fd, int listening)
{
    (void)listening;
    size_buffers(fd);
    tune(fd);
}

static const struct gt_oob_proto sock_proto = {
    .name = "sock",
    .magic = GT_SOCK_HELLO_MAGIC,
    .version = GT_SOCK_PROTO_VERSION,
    .body_len = 0,
    .check_body = NULL,
    .prepare_fd = prepare_fd,
};

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
    if (gt_oob_listen(&l->oob, &g_dev[dev].ifc.addr, &sock_proto) != GT_OK) {
        int e = errno;
        free(l);
        return SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, e,
                         "sock: listen on %s (%s): %s", g_dev[dev].ifc.name,
                         gt_oob_addr_str(&g_dev[dev].ifc.addr, a, sizeof(a)), strerror(e));
    }
    struct gt_sock_handle_info info = {.addr = l->oob.addr, .nonce = l->oob.nonce};
    gt_sock_handle_encode(&info, handle);
    GT_INFO(GT_LOGSUB_NET, "sock: listening on %s (%s)", g_dev[dev].ifc.name,
            gt_oob_addr_str(&l->oob.addr, a, sizeof(a)));
    *listen_comm = l;
    return GT_OK;
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
        int k = gt_oob_connect_poll(c->fd);
        if (k == 0)
            return GT_OK;
        if (k < 0)
            return gt_sock_fail_errno(c, errno, "connect: %s", strerror(errno));
        c->connected = 1;
    }
    int k = gt_oob_xfer(c->fd, c->hello, sizeof(c->hello), &c->hello_sent, 1, 0);
    if (k < 0)
        return gt_sock_fail_errno(c, errno, "sending hello: %s", strerror(errno));
    *ready = k;
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
                    gt_oob_addr_str(&info.addr, a, sizeof(a)), (unsigned long long)id);
            return gt_sock_bad_arg(__func__);
        }
    } else {
        c = comm_alloc(COMM_SEND);
        if (!c)
            return SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                             "sock: connect: out of memory");
        c->dev = dev;
        gt_oob_addr_str(&info.addr, c->peer, sizeof(c->peer));
        c->conn_id = gt_oob_rand64();
        struct gt_oob_hello h = {.magic = GT_SOCK_HELLO_MAGIC,
                                 .version = GT_SOCK_PROTO_VERSION,
                                 .nonce = info.nonce,
                                 .conn_id = c->conn_id};
        gt_oob_hello_encode(&h, c->hello);
        c->fd = gt_oob_connect_start(&info.addr, prepare_connect);
        if (c->fd < 0) {
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

gt_result gt_sock_accept(void *listen_comm, void **recv_comm, void **recv_dev_comm)
{
    if (recv_dev_comm)
        *recv_dev_comm = NULL;
    if (!listen_comm || !recv_comm)
        return gt_sock_bad_arg(__func__);
    *recv_comm = NULL;
    struct sock_listen *l = listen_comm;
    struct gt_oob_conn conn;
    int k = gt_oob_accept(&l->oob, &conn);
    if (k < 0) {
        int e = errno;
        return SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, e, "sock: accept: %s",
                         strerror(e));
    }
    if (k == 0)
        return GT_OK; /* nobody with a valid hello yet */
    struct sock_comm *c = comm_alloc(COMM_RECV);
    if (!c) {
        close_abort(conn.fd);
        return SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                         "sock: accept: out of memory");
    }
    c->fd = conn.fd;
    gt_oob_addr_str(&conn.peer, c->peer, sizeof(c->peer));
    int snd, rcv;
    buffer_sizes(c->fd, &snd, &rcv);
    GT_INFO(GT_LOGSUB_NET, "sock: accepted %s (sndbuf %d, rcvbuf %d)", c->peer, snd, rcv);
    *recv_comm = c;
    return GT_OK;
}

gt_result gt_sock_close_listen(void *listen_comm)
{
    struct sock_listen *l = listen_comm;
    if (!l)
        return gt_sock_bad_arg(__func__);
    gt_oob_listen_close(&l->oob);
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
