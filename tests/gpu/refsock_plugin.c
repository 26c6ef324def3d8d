// SPDX-License-Identifier: Apache-2.0
/*
 * refsock_plugin.c — a reference data path shaped like NCCL's own Socket
 * transport, as a net plugin (ncclNetPlugin_v11, NCCL 2.28), for the GPU
 * bandwidth comparisons (tests/gpu/bw-knobs.sh).
 *
 * Why: NCCL's internal Socket is measured against our plugin, but the two
 * differ in more than the data path: one is internal, the other an external
 * plugin with its own properties.  This plugin takes everything NCCL plans
 * with (init, devices, getProperties, makeVDevice, setNetAttr, finalize) from
 * the inner plugin named by GT_REFSOCK_INNER (our libnccl-net-gdrtrace.so),
 * and replaces only the connections and the data path with the shape NCCL's
 * Socket has on a host where it spawns no helper threads: one TCP socket per
 * connection, each message's size (a 4-byte int) followed by its payload on
 * it, no I/O in isend/irecv, and all I/O in test(), the comm's requests
 * progressed strictly in the order they were posted.  So:
 *   refsock ~ Socket, plugin below  -> the gap is in our data path;
 *   refsock ~ plugin, both below    -> the gap is in being an external plugin
 *                                      (or in the properties NCCL plans with).
 *
 * Without GT_REFSOCK_INNER it stands alone: its own init, one device (the
 * first interface that is up, not loopback, with an IPv4 address, or
 * GT_REFSOCK_IFNAME) and the properties NCCL's Socket reports for it
 * (HOST pointers, speed from sysfs else 10 Gb/s, maxP2pBytes = maxCollBytes
 * = 1 TiB) and no regMrDmaBuf, so nothing of ours is loaded at all:
 *   standalone refsock ~ Socket -> our init or properties hold the gap;
 *   standalone refsock ~ plugin -> any external plugin pays it.
 *
 * GT_REFSOCK_ONE=1 makes test(r) move no request posted after r, as NCCL's
 * Socket does (it progresses only the request tested); by default test()
 * moves every posted request until the socket blocks, as our sock does.
 *
 * GT_REFSOCK_HDR=N (4..64) pads each message's 4-byte size to N bytes on
 * the wire (ours sends a 24-byte header), to tell header size apart.
 *
 * GT_REFSOCK_FUSE=1 sends a size and its payload in one sendmsg() (as our
 * sock transport does) instead of two send() calls, to tell that one
 * difference apart.  GT_REFSOCK_MAXBYTES=N reports maxP2pBytes and
 * maxCollBytes as N (NCCL's Socket reports 1 TiB; ours 1 GiB), and
 * GT_REFSOCK_PASSTHRU=1 keeps the inner plugin's own connections and data
 * path, so that only such a property differs from the inner plugin.
 *
 * Invariants: host memory only (regMr of anything else fails, as Socket's);
 * single receives only (irecv with n > 1 fails); a message larger than its
 * posted receive fails that receive and the comm (Socket does the same); a
 * peer's EOF or reset fails every request of the comm.  Test tool: no
 * recorder, no retries, no keepalive.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tests/gpu/inner_v11.h"

#define RS_REQS 32           /* NCCL keeps at most NCCL_NET_MAX_REQUESTS (32) in flight */
#define RS_MAGIC 0x52534f31u /* "RSO1" */
#define RS_HDR_MAX 64        /* GT_REFSOCK_HDR's upper bound */

__attribute__((visibility("default"))) ncclNet_v11_t ncclNetPlugin_v11;
#define table ncclNetPlugin_v11
static const ncclNet_v11_t *inner;
static int fuse;
static size_t hdr_len = 4; /* GT_REFSOCK_HDR: bytes before each payload (NCCL's Socket: 4) */
static int only_tested;    /* GT_REFSOCK_ONE=1: test(r) moves nothing posted after r */
static size_t max_bytes;   /* 0: the inner plugin's */
static char alone_if[64];  /* standalone: the one device's interface */
static char *alone_pci;    /* its realpath(/sys/class/net/<if>/device), or NULL */
static int alone_speed;

union rs_addr {
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
};

struct rs_handle {
    uint32_t magic;
    uint32_t len;
    union rs_addr addr;
};
_Static_assert(sizeof(struct rs_handle) <= NCCL_NET_HANDLE_MAXSIZE, "handle fits NCCL's");

enum { RS_FREE, RS_SIZE, RS_PAYLOAD, RS_DONE, RS_FAILED };

struct rs_comm;
struct rs_req {
    int state;
    int sending;
    char *data;
    size_t size; /* posted size; then the message's size */
    union {
        int32_t size;                /* the size on the wire, first */
        unsigned char b[RS_HDR_MAX]; /* then GT_REFSOCK_HDR - 4 zero bytes */
    } wire;
    size_t hoff; /* bytes of `wire` moved */
    size_t off;  /* bytes of the payload moved */
    uint64_t seq;
    struct rs_comm *c;
};

struct rs_comm {
    int fd;
    int failed;
    uint64_t next_seq;
    struct rs_req r[RS_REQS];
};

struct rs_listen {
    int fd;
};

static int dummy_mr;

/* The device's address: the first IPv4 (else IPv6, not link-local) address of
 * the interface the inner plugin names for `dev`; any non-loopback one if that
 * name matches none (a virtual device's merged name). */
static int dev_addr(int dev, union rs_addr *out, socklen_t *len)
{
    ncclNetProperties_v11_t p;
    memset(&p, 0, sizeof(p));
    if (table.getProperties(dev, &p) != ncclSuccess || !p.name)
        return -1;
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0)
        return -1;
    int found = 0;
    for (int pass = 0; pass < 4 && !found; pass++) {
        int want_name = pass < 2, want_v4 = pass % 2 == 0;
        for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
            if (!i->ifa_addr || strcmp(i->ifa_name, "lo") == 0)
                continue;
            if (want_name && strcmp(i->ifa_name, p.name) != 0)
                continue;
            if (want_v4 && i->ifa_addr->sa_family == AF_INET) {
                memcpy(&out->in4, i->ifa_addr, sizeof(out->in4));
                *len = sizeof(out->in4);
                found = 1;
            } else if (!want_v4 && i->ifa_addr->sa_family == AF_INET6) {
                struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)i->ifa_addr;
                if (IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr))
                    continue;
                memcpy(&out->in6, a6, sizeof(out->in6));
                *len = sizeof(out->in6);
                found = 1;
            }
        }
    }
    freeifaddrs(ifs);
    return found ? 0 : -1;
}

static void nodelay_nonblock(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static ncclResult_t rs_listen(void *ctx, int dev, void *handle, void **listenComm)
{
    (void)ctx;
    struct rs_handle h;
    socklen_t len = 0;
    memset(&h, 0, sizeof(h));
    if (dev_addr(dev, &h.addr, &len) != 0) {
        fprintf(stderr, "refsock: no address for device %d\n", dev);
        return ncclSystemError;
    }
    if (h.addr.sa.sa_family == AF_INET)
        h.addr.in4.sin_port = 0;
    else
        h.addr.in6.sin6_port = 0;
    int fd = socket(h.addr.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, &h.addr.sa, len) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, &h.addr.sa, &len) != 0) {
        fprintf(stderr, "refsock: listen: %s\n", strerror(errno));
        if (fd >= 0)
            close(fd);
        return ncclSystemError;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    h.magic = RS_MAGIC;
    h.len = len;
    struct rs_listen *l = calloc(1, sizeof(*l));
    if (!l) {
        close(fd);
        return ncclSystemError;
    }
    l->fd = fd;
    memcpy(handle, &h, sizeof(h));
    *listenComm = l;
    return ncclSuccess;
}

static struct rs_comm *new_comm(int fd)
{
    struct rs_comm *c = calloc(1, sizeof(*c));
    if (!c) {
        close(fd);
        return NULL;
    }
    c->fd = fd;
    nodelay_nonblock(fd);
    return c;
}

static ncclResult_t rs_connect(void *ctx, int dev, void *handle, void **sendComm,
                               ncclNetDeviceHandle_v11_t **sendDevComm)
{
    (void)ctx, (void)dev;
    struct rs_handle h;
    memcpy(&h, handle, sizeof(h));
    *sendComm = NULL;
    if (sendDevComm)
        *sendDevComm = NULL;
    if (h.magic != RS_MAGIC || h.len > sizeof(h.addr)) {
        fprintf(stderr, "refsock: connect: not a refsock handle\n");
        return ncclInvalidUsage;
    }
    int fd = socket(h.addr.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    /* Blocking connect: the peer's kernel completes it from the listen
     * backlog whether or not the peer has called accept yet. */
    if (fd < 0 || connect(fd, &h.addr.sa, h.len) != 0) {
        fprintf(stderr, "refsock: connect: %s\n", strerror(errno));
        if (fd >= 0)
            close(fd);
        return ncclSystemError;
    }
    *sendComm = new_comm(fd);
    return *sendComm ? ncclSuccess : ncclSystemError;
}

static ncclResult_t rs_accept(void *listenComm, void **recvComm,
                              ncclNetDeviceHandle_v11_t **recvDevComm)
{
    struct rs_listen *l = listenComm;
    *recvComm = NULL;
    if (recvDevComm)
        *recvDevComm = NULL;
    int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return ncclSuccess; /* NCCL calls again */
        fprintf(stderr, "refsock: accept: %s\n", strerror(errno));
        return ncclSystemError;
    }
    *recvComm = new_comm(fd);
    return *recvComm ? ncclSuccess : ncclSystemError;
}

static ncclResult_t rs_regMr(void *comm, void *data, size_t size, int type, void **mhandle)
{
    (void)comm, (void)data, (void)size;
    *mhandle = &dummy_mr;
    return type == NCCL_PTR_HOST ? ncclSuccess : ncclInternalError;
}

static ncclResult_t rs_regMrDmaBuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                                   int fd, void **mhandle)
{
    (void)comm, (void)data, (void)size, (void)type, (void)offset, (void)fd, (void)mhandle;
    return ncclInternalError;
}

static ncclResult_t rs_deregMr(void *comm, void *mhandle)
{
    (void)comm, (void)mhandle;
    return ncclSuccess;
}

static ncclResult_t post(struct rs_comm *c, int sending, void *data, size_t size, void **request)
{
    *request = NULL;
    if (size > (size_t)INT32_MAX)
        return ncclInvalidUsage;
    for (int i = 0; i < RS_REQS; i++)
        if (c->r[i].state == RS_FREE) {
            c->r[i] = (struct rs_req){.state = RS_SIZE,
                                      .sending = sending,
                                      .data = data,
                                      .size = size,
                                      .wire.size = (int32_t)size,
                                      .seq = c->next_seq++,
                                      .c = c};
            /* The padding goes on the wire: zero, whatever the union left. */
            memset(c->r[i].wire.b + sizeof(int32_t), 0, RS_HDR_MAX - sizeof(int32_t));
            *request = &c->r[i];
            return ncclSuccess;
        }
    fprintf(stderr, "refsock: out of requests\n");
    return ncclInternalError;
}

static ncclResult_t rs_isend(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                             void *phandle, void **request)
{
    (void)tag, (void)mhandle, (void)phandle;
    return post(sendComm, 1, data, size, request);
}

static ncclResult_t rs_irecv(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                             void **mhandles, void **phandles, void **request)
{
    (void)tags, (void)mhandles, (void)phandles;
    if (n != 1)
        return ncclInternalError;
    return post(recvComm, 0, data[0], sizes[0], request);
}

static ncclResult_t rs_iflush(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                              void **request)
{
    (void)recvComm, (void)n, (void)data, (void)sizes, (void)mhandles;
    *request = NULL; /* host memory never needs a flush: nothing to wait for */
    return ncclSuccess;
}

/* Move what the socket takes now: 1 progressed, 0 would block, -1 failed. */
static int io(struct rs_comm *c, int sending, void *p, size_t len, size_t *off)
{
    int moved = 0;
    while (*off < len) {
        ssize_t n = sending ? send(c->fd, (char *)p + *off, len - *off, MSG_DONTWAIT | MSG_NOSIGNAL)
                            : recv(c->fd, (char *)p + *off, len - *off, MSG_DONTWAIT);
        if (n > 0) {
            *off += (size_t)n;
            moved = 1;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return moved;
        return -1; /* EOF or a real error */
    }
    return 1;
}

/* A size and its whole payload in one sendmsg() (GT_REFSOCK_FUSE=1). */
static int io_fused(struct rs_comm *c, struct rs_req *q)
{
    while (q->hoff < hdr_len) {
        struct iovec v[2] = {{(char *)q->wire.b + q->hoff, hdr_len - q->hoff}, {q->data, q->size}};
        struct msghdr m = {.msg_iov = v, .msg_iovlen = q->size ? 2 : 1};
        ssize_t n = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
        size_t head = hdr_len - q->hoff;
        if ((size_t)n <= head) {
            q->hoff += (size_t)n;
        } else {
            q->hoff = hdr_len;
            q->off = (size_t)n - head;
        }
    }
    return 1;
}

/* Every active request of the comm, oldest first, until one blocks; with
 * GT_REFSOCK_ONE=1 none posted after `upto` (NCCL's Socket moves only the
 * request test() is called on). */
static void progress(struct rs_comm *c, const struct rs_req *upto)
{
    uint64_t last = 0;
    int have_last = 0;
    while (!c->failed) {
        struct rs_req *q = NULL;
        for (int i = 0; i < RS_REQS; i++) {
            struct rs_req *k = &c->r[i];
            if (k->state != RS_SIZE && k->state != RS_PAYLOAD)
                continue;
            if (have_last && k->seq <= last)
                continue;
            if (only_tested && k->seq > upto->seq)
                continue;
            if (!q || k->seq < q->seq)
                q = k;
        }
        if (!q)
            return;
        last = q->seq;
        have_last = 1;
        if (q->state == RS_SIZE) {
            int r = fuse && q->sending ? io_fused(c, q)
                                       : io(c, q->sending, q->wire.b, hdr_len, &q->hoff);
            if (r < 0)
                goto fail;
            if (q->hoff < hdr_len)
                return;
            if (!q->sending) {
                if (q->wire.size < 0 || (size_t)q->wire.size > q->size) {
                    fprintf(stderr, "refsock: message of %d bytes into a receive of %zu\n",
                            (int)q->wire.size, q->size);
                    goto fail;
                }
                q->size = (size_t)q->wire.size;
            }
            q->state = RS_PAYLOAD;
        }
        int r = io(c, q->sending, q->data, q->size, &q->off);
        if (r < 0)
            goto fail;
        if (q->off < q->size)
            return;
        q->state = RS_DONE;
    }
    return;
fail:
    c->failed = 1;
    for (int i = 0; i < RS_REQS; i++)
        if (c->r[i].state == RS_SIZE || c->r[i].state == RS_PAYLOAD)
            c->r[i].state = RS_FAILED;
}

static ncclResult_t rs_test(void *request, int *done, int *sizes)
{
    struct rs_req *q = request;
    *done = 0;
    if (!q)
        return ncclInternalError;
    progress(q->c, q);
    if (q->state == RS_FAILED) {
        q->state = RS_FREE;
        return ncclRemoteError;
    }
    if (q->state == RS_DONE) {
        *done = 1;
        if (sizes)
            sizes[0] = (int)q->size;
        q->state = RS_FREE;
    }
    return ncclSuccess;
}

static ncclResult_t rs_close(void *comm)
{
    struct rs_comm *c = comm;
    if (c) {
        close(c->fd);
        free(c);
    }
    return ncclSuccess;
}

static ncclResult_t rs_closeListen(void *listenComm)
{
    struct rs_listen *l = listenComm;
    if (l) {
        close(l->fd);
        free(l);
    }
    return ncclSuccess;
}

static ncclResult_t rs_getDeviceMr(void *comm, void *mhandle, void **dptr_mhandle)
{
    (void)comm, (void)mhandle;
    *dptr_mhandle = NULL;
    return ncclSuccess;
}

static ncclResult_t rs_irecvConsumed(void *recvComm, int n, void *request)
{
    (void)recvComm, (void)n, (void)request;
    return ncclSuccess;
}

static ncclResult_t rs_getProperties(int dev, ncclNetProperties_v11_t *props)
{
    ncclResult_t r = inner->getProperties(dev, props);
    if (r == ncclSuccess && max_bytes) {
        props->maxP2pBytes = max_bytes;
        props->maxCollBytes = max_bytes;
    }
    return r;
}

/* ---- standalone: init, devices and properties as NCCL's Socket's -------- */

/* Once per process (NCCL may init communicators from several threads): the
 * one device, its PCI path and speed.  alone_if stays empty if none fits. */
static void alone_discover(void)
{
    const char *want = getenv("GT_REFSOCK_IFNAME");
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0) {
        fprintf(stderr, "refsock: getifaddrs: %s\n", strerror(errno));
        return;
    }
    for (struct ifaddrs *i = ifs; i && !alone_if[0]; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || strcmp(i->ifa_name, "lo") == 0)
            continue;
        if (want ? strcmp(i->ifa_name, want) != 0 : strncmp(i->ifa_name, "docker", 6) == 0)
            continue;
        snprintf(alone_if, sizeof(alone_if), "%s", i->ifa_name);
    }
    freeifaddrs(ifs);
    if (!alone_if[0]) {
        fprintf(stderr, "refsock: no usable IPv4 interface%s%s\n", want ? " named " : "",
                want ? want : "");
        return;
    }
    char path[256];
    snprintf(path, sizeof(path), "/sys/class/net/%s/device", alone_if);
    alone_pci = realpath(path, NULL);
    snprintf(path, sizeof(path), "/sys/class/net/%s/speed", alone_if);
    FILE *f = fopen(path, "r");
    alone_speed = 0;
    if (f) {
        if (fscanf(f, "%d", &alone_speed) != 1)
            alone_speed = 0;
        fclose(f);
    }
    if (alone_speed <= 0)
        alone_speed = 10000;
}

static ncclResult_t alone_init(void **ctx, uint64_t commId, ncclNetCommConfig_v11_t *config,
                               ncclDebugLogger_t log, ncclProfilerCallback_t prof)
{
    (void)commId, (void)config, (void)log, (void)prof;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, alone_discover);
    if (!alone_if[0])
        return ncclSystemError;
    *ctx = malloc(1); /* one per communicator, as NCCL's v11 expects; nothing in it */
    return *ctx ? ncclSuccess : ncclSystemError;
}

static ncclResult_t alone_devices(int *ndev)
{
    *ndev = alone_if[0] ? 1 : 0;
    return ncclSuccess;
}

static ncclResult_t alone_getProperties(int dev, ncclNetProperties_v11_t *props)
{
    if (dev != 0 || !alone_if[0])
        return ncclInvalidArgument;
    memset(props, 0, sizeof(*props));
    props->name = alone_if;
    props->pciPath = alone_pci;
    props->guid = (uint64_t)dev;
    props->ptrSupport = NCCL_PTR_HOST;
    props->speed = alone_speed;
    props->port = 0;
    props->latency = 0;
    props->maxComms = 65536;
    props->maxRecvs = 1;
    props->netDeviceType = NCCL_NET_DEVICE_HOST;
    props->vProps.ndevs = 1;
    props->vProps.devs[0] = dev;
    props->maxP2pBytes = max_bytes ? max_bytes : (size_t)1 << 40;
    props->maxCollBytes = props->maxP2pBytes;
    props->maxMultiRequestSize = 1;
    return ncclSuccess;
}

static ncclResult_t alone_finalize(void *ctx)
{
    free(ctx);
    return ncclSuccess;
}

static ncclResult_t alone_setNetAttr(void *ctx, ncclNetAttr_v11_t *attr)
{
    (void)ctx, (void)attr;
    return ncclSuccess;
}

/* Our connections and data path in the table (not in pass-through). */
static void own_data_path(void)
{
    table.listen = rs_listen;
    table.connect = rs_connect;
    table.accept = rs_accept;
    table.regMr = rs_regMr;
    table.regMrDmaBuf = inner ? rs_regMrDmaBuf : NULL; /* standalone: as Socket, none */
    table.deregMr = rs_deregMr;
    table.isend = rs_isend;
    table.irecv = rs_irecv;
    table.iflush = rs_iflush;
    table.test = rs_test;
    table.closeSend = rs_close;
    table.closeRecv = rs_close;
    table.closeListen = rs_closeListen;
    table.getDeviceMr = rs_getDeviceMr;
    table.irecvConsumed = rs_irecvConsumed;
}

__attribute__((constructor)) static void at_load(void)
{
    const char *path = getenv("GT_REFSOCK_INNER");
    const char *f = getenv("GT_REFSOCK_FUSE");
    const char *mb = getenv("GT_REFSOCK_MAXBYTES");
    const char *pt = getenv("GT_REFSOCK_PASSTHRU");
    const char *one = getenv("GT_REFSOCK_ONE");
    const char *hl = getenv("GT_REFSOCK_HDR");
    if (hl) {
        long v = strtol(hl, NULL, 0);
        if (v < 4 || v > RS_HDR_MAX)
            fprintf(stderr, "refsock: GT_REFSOCK_HDR=%s is not 4..%d; using 4\n", hl, RS_HDR_MAX);
        else
            hdr_len = (size_t)v;
    }
    fuse = f && strcmp(f, "1") == 0;
    only_tested = one && strcmp(one, "1") == 0;
    max_bytes = mb ? strtoull(mb, NULL, 0) : 0;
    table.name = "refsock-broken";
    table.init = broken_init;
    if (!path || !*path) {
        table = (ncclNet_v11_t){.name = "refsock",
                                .init = alone_init,
                                .devices = alone_devices,
                                .getProperties = alone_getProperties,
                                .finalize = alone_finalize,
                                .setNetAttr = alone_setNetAttr};
        own_data_path();
        return;
    }
    inner = load_inner_v11("refsock", path);
    if (!inner)
        return;
    table = *inner;
    table.name = "refsock";
    table.getProperties = rs_getProperties;
    if (!(pt && strcmp(pt, "1") == 0))
        own_data_path();
}
