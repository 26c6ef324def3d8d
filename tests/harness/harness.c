/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness.c — drives the built libnccl-net-gdrtrace.so exactly as NCCL
 * drives a net plugin, through each exported ncclNetPlugin_vN in turn.
 *
 * For every ABI version it checks, with two real processes over loopback:
 *   data      init (v11+: with a commId, plus a second communicator's
 *             init/finalize), devices, getProperties validated as NCCL
 *             validates them, listen, the handle exchanged through a
 *             socketpair, connect/accept interleaved and retried (NULL comm
 *             until the peer accepts), regMr(HOST), many concurrent
 *             isend/irecv/test both ways with random sizes (0 B .. --max-size)
 *             up to the version's requests in flight, multi-receive (n > 1)
 *             when maxRecvs > 1, NCCL_NET_OPTIONAL_RECV_COMPLETION receives,
 *             every byte and every received size checked (and the bytes past
 *             each message left untouched), iflush, deregMr, close, finalize.
 *   handle    connect with a corrupt, a zeroed and a truncated handle: an
 *             error, never a connection, a hang or a crash.
 *   garbage   a peer that connects properly and then writes garbage onto its
 *             sockets: the receiver's test() fails.
 *   diesend   the sender dies (SIGKILL) mid-message: the receiver's test()
 *             fails.
 *   dierecv   the receiver dies mid-message: the sender's test() fails (and
 *             the sender is not killed by SIGPIPE).
 * Each scenario runs in child processes under a wall-clock limit; a hang is
 * a failure.  Exit: 0 all passed, 1 a failure, 77 nothing could run (the
 * last line says why), 2 usage.
 *
 * Other tools reuse it to produce recorders:  harness --abi 11 --dir X
 * (GDRTRACE_* variables are passed through to the plugin).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nccl/net.h"

#define MiB (1024.0 * 1024.0)
#define MAX_RECVS 8
#define LL_SLOTS 64
#define LL_SLOT_SIZE (64 * 1024)
#define SLACK_MAX 4096
#define ALIGN 64

/* ------------------------------------------------------------------ */
/* options and output                                                  */

static struct {
    const char *plugin;
    int by_name; /* plugin is NCCL_NET_PLUGIN's NAME, looked up as NCCL does */
    int abis[8], nabi;
    int iters;
    uint64_t seed;
    size_t max_size;
    int inflight; /* 0: the version's NCCL_NET_MAX_REQUESTS */
    int timeout_s;
    int bad_timeout_s;
    int verbose;
    int data, bad;
    int no_reg; /* --no-reg: the data scenario registers no host memory */
} opt = {.iters = 40,
         .seed = 1,
         .max_size = 24u << 20,
         .timeout_s = 120,
         .bad_timeout_s = 15,
         .data = 1,
         .bad = 1};

static char tag_str[32] = "harness"; /* "v11 A" in a child */
static int g_rank = -1;              /* 0 or 1 in a child: its rank in NCCL's log lines */
static int g_warns, g_bad_flags;
static char g_transport_line[1024];

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    printf("[%s] %s\n", tag_str, buf);
    fflush(stdout);
}

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        say("FAIL: " __VA_ARGS__);                                                                 \
        _exit(1);                                                                                  \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* NCCL's debug file, as NCCL writes one: with NCCL_DEBUG=INFO (or TRACE)
 * and NCCL_DEBUG_FILE set, each process appends "HOST:PID:TID [0] NCCL
 * INFO …" lines to the file the pattern names, %h the host name and %p the
 * pid (NCCL's src/debug.cc).  Tools that read NCCL's log beside the recorders
 * (`gdrtrace run`) see one from the harness too.  Opened once per process:
 * a forked child writes its own file. */
static FILE *nccl_debug_file(void)
{
    static pid_t owner;
    static FILE *f;
    if (owner == getpid())
        return f;
    owner = getpid();
    f = NULL; /* the parent's stays the parent's (line-buffered: nothing pending) */
    const char *lvl = getenv("NCCL_DEBUG"), *pat = getenv("NCCL_DEBUG_FILE");
    if (!lvl || (strcasecmp(lvl, "INFO") && strcasecmp(lvl, "TRACE")) || !pat || !*pat)
        return NULL;
    char host[256] = "", path[PATH_MAX];
    gethostname(host, sizeof(host) - 1);
    size_t o = 0;
    for (const char *c = pat; *c && o + 1 < sizeof(path); c++) {
        if (c[0] == '%' && c[1] == 'h') {
            o += (size_t)snprintf(path + o, sizeof(path) - o, "%s", host);
            c++;
        } else if (c[0] == '%' && c[1] == 'p') {
            o += (size_t)snprintf(path + o, sizeof(path) - o, "%d", (int)getpid());
            c++;
        } else {
            path[o++] = *c;
        }
    }
    path[o < sizeof(path) ? o : sizeof(path) - 1] = '\0';
    f = fopen(path, "a");
    if (f)
        setvbuf(f, NULL, _IOLBF, 0);
    return f;
}

static void nccl_debug_line(const char *level, const char *text)
{
    FILE *f = nccl_debug_file();
    if (!f || (!strcmp(level, "TRACE") && strcasecmp(getenv("NCCL_DEBUG"), "TRACE")))
        return;
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    fprintf(f, "%s:%d:%d [0] NCCL %s %s\n", host, (int)getpid(), (int)gettid(), level, text);
}

/* NCCL's logger, as the plugin sees it.  Checks the flags convention: WARN
 * with NCCL_ALL, INFO/TRACE with a real subsystem. */
static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    nccl_debug_line(level == NCCL_LOG_WARN   ? "WARN"
                    : level == NCCL_LOG_INFO ? "INFO"
                                             : "TRACE",
                    buf);
    if (level == NCCL_LOG_WARN) {
        g_warns++;
        if (flags != NCCL_ALL)
            g_bad_flags++;
        say("plugin WARN: %s (%s:%d)", buf, file, line);
        return;
    }
    if ((level == NCCL_LOG_INFO || level == NCCL_LOG_TRACE) && (flags == 0 || flags == NCCL_ALL))
        g_bad_flags++, say("plugin INFO with flags 0x%lx (not a subsystem): %s", flags, buf);
    if (level == NCCL_LOG_INFO && strstr(buf, "transport "))
        snprintf(g_transport_line, sizeof(g_transport_line), "%s", buf);
    if (opt.verbose)
        say("plugin %s: %s", level == NCCL_LOG_INFO ? "INFO" : "TRACE", buf);
}

/* ------------------------------------------------------------------ */
/* PRNG and data patterns                                              */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t msg_key(int dir, int msg)
{
    uint64_t s = opt.seed * 1000003u + (uint64_t)dir * 7919u + (uint64_t)msg * 104729u;
    return splitmix(&s);
}

static void fill(uint8_t *p, size_t n, uint64_t key)
{
    uint64_t s = key;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = splitmix(&s);
        memcpy(p + i, &v, 8);
    }
    if (i < n) {
        uint64_t v = splitmix(&s);
        memcpy(p + i, &v, n - i);
    }
}

/* Offset of the first wrong byte, or -1. */
static long long check(const uint8_t *p, size_t n, uint64_t key)
{
    uint64_t s = key;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = splitmix(&s);
        if (memcmp(p + i, &v, 8) != 0)
            goto find;
    }
    if (i < n) {
        uint64_t v = splitmix(&s);
        if (memcmp(p + i, &v, n - i) != 0)
            goto find;
    }
    return -1;
find:;
    uint8_t tmp[8];
    uint64_t v = 0;
    s = key;
    for (size_t j = 0; j <= i; j += 8)
        v = splitmix(&s);
    memcpy(tmp, &v, 8);
    for (size_t k = 0; k < 8 && i + k < n; k++)
        if (p[i + k] != tmp[k])
            return (long long)(i + k);
    return (long long)i;
}

/* ------------------------------------------------------------------ */
/* one ABI version's table, driven v12-style                           */

struct net {
    int abi;
    const void *tab;
    void *ctx; /* v11+: the communicator's context */
};

#define T(v, n) ((const ncclNet_v##v##_t *)(n)->tab)
/* Members whose signature is the same in every version. */
#define CALL_ALL(n, member, ...)                                                                   \
    do {                                                                                           \
        switch ((n)->abi) {                                                                        \
        case 6:                                                                                    \
            return T(6, n)->member(__VA_ARGS__);                                                   \
        case 7:                                                                                    \
            return T(7, n)->member(__VA_ARGS__);                                                   \
        case 8:                                                                                    \
            return T(8, n)->member(__VA_ARGS__);                                                   \
        case 9:                                                                                    \
            return T(9, n)->member(__VA_ARGS__);                                                   \
        case 10:                                                                                   \
            return T(10, n)->member(__VA_ARGS__);                                                  \
        case 11:                                                                                   \
            return T(11, n)->member(__VA_ARGS__);                                                  \
        case 12:                                                                                   \
            return T(12, n)->member(__VA_ARGS__);                                                  \
        }                                                                                          \
        return ncclInternalError;                                                                  \
    } while (0)

static void net_open(struct net *n, int abi)
{
    char sym[32];
    n->abi = abi;
    n->ctx = NULL;
    void *h = dlopen(opt.plugin, RTLD_NOW | RTLD_LOCAL);
    if (!h && opt.by_name) {
        /* NCCL's rule for NCCL_NET_PLUGIN=NAME (2.24 and later): the bare
         * NAME first, then libnccl-net-NAME.so, both along the linker's path. */
        static char lib[PATH_MAX];
        snprintf(lib, sizeof(lib), "libnccl-net-%s.so", opt.plugin);
        opt.plugin = lib;
        h = dlopen(opt.plugin, RTLD_NOW | RTLD_LOCAL);
    }
    if (!h)
        FAIL("dlopen(%s): %s", opt.plugin, dlerror());
    snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", abi);
    n->tab = dlsym(h, sym);
    if (!n->tab)
        FAIL("%s has no symbol %s: %s", opt.plugin, sym, dlerror());
    /* NCCL's own line once a plugin is loaded (every ncclNet_vN_t starts with its name) */
    char line[256];
    snprintf(line, sizeof(line), "NET/Plugin: Loaded net plugin %s (v%d)",
             *(const char *const *)n->tab, abi);
    nccl_debug_line("INFO", line);
    Dl_info where;
    if (opt.by_name && dladdr(n->tab, &where) && where.dli_fname)
        say("NCCL_NET_PLUGIN: dlopen(\"%s\") loaded %s", opt.plugin, where.dli_fname);
    /* Never dlclose: NCCL keeps the plugin for the process, and the
     * plugin's per-process state (<= v10) lives in it. */
}

static ncclResult_t n_init(struct net *n, void **ctx, uint64_t comm_id)
{
    ncclNetCommConfig_v11_t cfg = {.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF};
    switch (n->abi) {
    case 6:
        return T(6, n)->init(logger);
    case 7:
        return T(7, n)->init(logger);
    case 8:
        return T(8, n)->init(logger);
    case 9:
        return T(9, n)->init(logger);
    case 10:
        return T(10, n)->init(logger, NULL);
    case 11:
        return T(11, n)->init(ctx, comm_id, &cfg, logger, NULL);
    case 12:
        return T(12, n)->init(ctx, comm_id, &cfg, logger, NULL);
    }
    return ncclInternalError;
}

static ncclResult_t n_finalize(struct net *n, void *ctx)
{
    if (n->abi == 11)
        return T(11, n)->finalize(ctx);
    if (n->abi == 12)
        return T(12, n)->finalize(ctx);
    return ncclSuccess; /* <= v10: no finalize; the plugin lives for the process */
}

static ncclResult_t n_devices(struct net *n, int *ndev)
{
    CALL_ALL(n, devices, ndev);
}

static ncclResult_t n_listen(struct net *n, int dev, void *handle, void **lc)
{
    switch (n->abi) {
    case 6:
        return T(6, n)->listen(dev, handle, lc);
    case 7:
        return T(7, n)->listen(dev, handle, lc);
    case 8:
        return T(8, n)->listen(dev, handle, lc);
    case 9:
        return T(9, n)->listen(dev, handle, lc);
    case 10:
        return T(10, n)->listen(dev, handle, lc);
    case 11:
        return T(11, n)->listen(n->ctx, dev, handle, lc);
    case 12:
        return T(12, n)->listen(n->ctx, dev, handle, lc);
    }
    return ncclInternalError;
}

static ncclResult_t n_connect(struct net *n, int dev, void *handle, void **sc)
{
    ncclNetDeviceHandle_v7_t *dh = NULL;
    ncclNetCommConfig_v10_t cfg = {.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF};
    ncclResult_t rc = ncclInternalError;
    switch (n->abi) {
    case 6:
        return T(6, n)->connect(dev, handle, sc);
    case 7:
        rc = T(7, n)->connect(dev, handle, sc, &dh);
        break;
    case 8:
        rc = T(8, n)->connect(dev, handle, sc, &dh);
        break;
    case 9:
        rc = T(9, n)->connect(dev, handle, sc, &dh);
        break;
    case 10:
        rc = T(10, n)->connect(dev, &cfg, handle, sc, &dh);
        break;
    case 11:
        rc = T(11, n)->connect(n->ctx, dev, handle, sc, &dh);
        break;
    case 12:
        rc = T(12, n)->connect(n->ctx, dev, handle, sc, &dh);
        break;
    }
    if (rc == ncclSuccess && dh && dh->netDeviceType != NCCL_NET_DEVICE_HOST)
        FAIL("connect returned a device handle of type %d for a HOST device", dh->netDeviceType);
    return rc;
}

static ncclResult_t n_accept(struct net *n, void *lc, void **rc_out)
{
    ncclNetDeviceHandle_v7_t *dh = NULL;
    if (n->abi == 6)
        return T(6, n)->accept(lc, rc_out);
    ncclResult_t rc = ncclInternalError;
    switch (n->abi) {
    case 7:
        rc = T(7, n)->accept(lc, rc_out, &dh);
        break;
    case 8:
        rc = T(8, n)->accept(lc, rc_out, &dh);
        break;
    case 9:
        rc = T(9, n)->accept(lc, rc_out, &dh);
        break;
    case 10:
        rc = T(10, n)->accept(lc, rc_out, &dh);
        break;
    case 11:
        rc = T(11, n)->accept(lc, rc_out, &dh);
        break;
    case 12:
        rc = T(12, n)->accept(lc, rc_out, &dh);
        break;
    }
    if (rc == ncclSuccess && dh && dh->netDeviceType != NCCL_NET_DEVICE_HOST)
        FAIL("accept returned a device handle of type %d for a HOST device", dh->netDeviceType);
    return rc;
}

static ncclResult_t n_reg_mr(struct net *n, void *comm, void *data, size_t size, void **mh)
{
    switch (n->abi) {
    case 6:
        return T(6, n)->regMr(comm, data, (int)size, NCCL_PTR_HOST, mh);
    case 7:
        return T(7, n)->regMr(comm, data, (int)size, NCCL_PTR_HOST, mh);
    case 8:
        return T(8, n)->regMr(comm, data, size, NCCL_PTR_HOST, mh);
    case 9:
        return T(9, n)->regMr(comm, data, size, NCCL_PTR_HOST, mh);
    case 10:
        return T(10, n)->regMr(comm, data, size, NCCL_PTR_HOST, mh);
    case 11:
        return T(11, n)->regMr(comm, data, size, NCCL_PTR_HOST, mh);
    case 12:
        return T(12, n)->regMr(comm, data, size, NCCL_PTR_HOST, mh);
    }
    return ncclInternalError;
}

static ncclResult_t n_dereg_mr(struct net *n, void *comm, void *mh)
{
    CALL_ALL(n, deregMr, comm, mh);
}

static ncclResult_t n_isend(struct net *n, void *sc, void *data, size_t size, int tag, void *mh,
                            void **req)
{
    switch (n->abi) {
    case 6:
        return T(6, n)->isend(sc, data, (int)size, tag, mh, req);
    case 7:
        return T(7, n)->isend(sc, data, (int)size, tag, mh, req);
    case 8:
        return T(8, n)->isend(sc, data, (int)size, tag, mh, req);
    case 9:
        return T(9, n)->isend(sc, data, size, tag, mh, req);
    case 10:
        return T(10, n)->isend(sc, data, size, tag, mh, NULL, req);
    case 11:
        return T(11, n)->isend(sc, data, size, tag, mh, NULL, req);
    case 12:
        return T(12, n)->isend(sc, data, size, tag, mh, NULL, req);
    }
    return ncclInternalError;
}

static ncclResult_t n_irecv(struct net *n, void *rcomm, int cnt, void **data, const size_t *sizes,
                            int *tags, void **mhs, void **req)
{
    int isz[MAX_RECVS];
    size_t ssz[MAX_RECVS];
    void *phs[MAX_RECVS] = {0};
    for (int i = 0; i < cnt; i++) {
        isz[i] = (int)sizes[i];
        ssz[i] = sizes[i];
    }
    switch (n->abi) {
    case 6:
        return T(6, n)->irecv(rcomm, cnt, data, isz, tags, mhs, req);
    case 7:
        return T(7, n)->irecv(rcomm, cnt, data, isz, tags, mhs, req);
    case 8:
        return T(8, n)->irecv(rcomm, cnt, data, isz, tags, mhs, req);
    case 9:
        return T(9, n)->irecv(rcomm, cnt, data, ssz, tags, mhs, req);
    case 10:
        return T(10, n)->irecv(rcomm, cnt, data, ssz, tags, mhs, phs, req);
    case 11:
        return T(11, n)->irecv(rcomm, cnt, data, ssz, tags, mhs, phs, req);
    case 12:
        return T(12, n)->irecv(rcomm, cnt, data, ssz, tags, mhs, phs, req);
    }
    return ncclInternalError;
}

static ncclResult_t n_iflush(struct net *n, void *rcomm, int cnt, void **data, int *sizes,
                             void **mhs, void **req)
{
    CALL_ALL(n, iflush, rcomm, cnt, data, sizes, mhs, req);
}

static ncclResult_t n_test(struct net *n, void *req, int *done, int *sizes)
{
    CALL_ALL(n, test, req, done, sizes);
}

static ncclResult_t n_close_send(struct net *n, void *c)
{
    CALL_ALL(n, closeSend, c);
}
static ncclResult_t n_close_recv(struct net *n, void *c)
{
    CALL_ALL(n, closeRecv, c);
}
static ncclResult_t n_close_listen(struct net *n, void *c)
{
    CALL_ALL(n, closeListen, c);
}

/* Properties, normalised; validated as NCCL validates them (and a little
 * more: every field written). */
struct hprops {
    const char *name;
    int ptr_support, speed, max_comms, max_recvs, dev_type, dev_version;
    int vdevs, vdev0;
    size_t max_p2p;
    int has_v9, has_v7;
};

#define POISON 0xA5
static int poisoned_int(int v)
{
    int p;
    memset(&p, POISON, sizeof(p));
    return v == p;
}

static void n_props(struct net *n, int dev, struct hprops *h)
{
    union {
        ncclNetProperties_v6_t v6;
        ncclNetProperties_v7_t v7;
        ncclNetProperties_v8_t v8;
        ncclNetProperties_v9_t v9;
        ncclNetProperties_v10_t v10;
        ncclNetProperties_v11_t v11;
        ncclNetProperties_v12_t v12;
    } u;
    memset(&u, POISON, sizeof(u));
    memset(h, 0, sizeof(*h));
    ncclResult_t rc = ncclInternalError;
#define BASE(p)                                                                                    \
    h->name = (p).name, h->ptr_support = (p).ptrSupport, h->speed = (p).speed,                     \
    h->max_comms = (p).maxComms, h->max_recvs = (p).maxRecvs
#define V7(p) h->has_v7 = 1, h->dev_type = (p).netDeviceType, h->dev_version = (p).netDeviceVersion
#define V9(p)                                                                                      \
    h->has_v9 = 1, h->vdevs = (p).vProps.ndevs, h->vdev0 = (p).vProps.devs[0],                     \
    h->max_p2p = (p).maxP2pBytes
    switch (n->abi) {
    case 6:
        rc = T(6, n)->getProperties(dev, &u.v6);
        BASE(u.v6);
        break;
    case 7:
        rc = T(7, n)->getProperties(dev, &u.v7);
        BASE(u.v7);
        V7(u.v7);
        break;
    case 8:
        rc = T(8, n)->getProperties(dev, &u.v8);
        BASE(u.v8);
        V7(u.v8);
        if (poisoned_int(u.v8.regIsGlobal))
            FAIL("dev %d: regIsGlobal not written", dev);
        break;
    case 9:
        rc = T(9, n)->getProperties(dev, &u.v9);
        BASE(u.v9);
        V7(u.v9);
        V9(u.v9);
        break;
    case 10:
        rc = T(10, n)->getProperties(dev, &u.v10);
        BASE(u.v10);
        V7(u.v10);
        V9(u.v10);
        break;
    case 11:
        rc = T(11, n)->getProperties(dev, &u.v11);
        BASE(u.v11);
        V7(u.v11);
        V9(u.v11);
        if (u.v11.maxMultiRequestSize < 1)
            FAIL("dev %d: maxMultiRequestSize %d < 1", dev, u.v11.maxMultiRequestSize);
        break;
    case 12:
        rc = T(12, n)->getProperties(dev, &u.v12);
        BASE(u.v12);
        V7(u.v12);
        V9(u.v12);
        if (u.v12.maxMultiRequestSize < 1)
            FAIL("dev %d: maxMultiRequestSize %d < 1", dev, u.v12.maxMultiRequestSize);
        if (u.v12.railId < -1 || u.v12.planeId < -1)
            FAIL("dev %d: railId %d / planeId %d below NCCL_NET_ID_UNDEF", dev, u.v12.railId,
                 u.v12.planeId);
        break;
    }
#undef BASE
#undef V7
#undef V9
    if (rc != ncclSuccess)
        FAIL("getProperties(%d) returned %d", dev, rc);
    if (!h->name || poisoned_int((int)(intptr_t)h->name))
        FAIL("dev %d: name not set", dev);
    if (!(h->ptr_support & NCCL_PTR_HOST))
        FAIL("dev %d: ptrSupport 0x%x lacks NCCL_PTR_HOST", dev, h->ptr_support);
    if (h->ptr_support & ~(NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF))
        FAIL("dev %d: ptrSupport 0x%x has unknown bits", dev, h->ptr_support);
    if (h->speed <= 0 || poisoned_int(h->speed))
        FAIL("dev %d: speed %d Mbps", dev, h->speed);
    if (h->max_comms <= 0)
        FAIL("dev %d: maxComms %d", dev, h->max_comms);
    if (h->max_recvs < 1 || h->max_recvs > MAX_RECVS)
        FAIL("dev %d: maxRecvs %d outside [1, %d]", dev, h->max_recvs, MAX_RECVS);
    /* NCCL's checks: device type HOST (or UNPACK v7), maxP2pBytes in (0, 1 TiB]. */
    if (h->has_v7 && !(h->dev_type == NCCL_NET_DEVICE_HOST ||
                       (h->dev_type == NCCL_NET_DEVICE_UNPACK &&
                        h->dev_version == NCCL_NET_DEVICE_UNPACK_VERSION)))
        FAIL("dev %d: netDeviceType %d version %d: NCCL would reject the plugin", dev, h->dev_type,
             h->dev_version);
    if (h->has_v9) {
        if (h->max_p2p == 0 || h->max_p2p > NCCL_MAX_NET_SIZE_BYTES)
            FAIL("dev %d: maxP2pBytes %zu outside (0, 1 TiB]: NCCL would refuse it", dev,
                 h->max_p2p);
        int width = n->abi == 12 ? NCCL_NET_MAX_DEVS_PER_NIC_V12 : NCCL_NET_MAX_DEVS_PER_NIC_V9;
        if (h->vdevs < 1 || h->vdevs > width)
            FAIL("dev %d: vProps.ndevs %d outside [1, %d]", dev, h->vdevs, width);
        if (h->vdevs == 1 && h->vdev0 != dev)
            FAIL("dev %d: vProps.devs[0] = %d, expected the device itself", dev, h->vdev0);
    } else {
        h->max_p2p = NCCL_MAX_NET_SIZE_V8; /* what NCCL assumes for <= v8 */
    }
}

/* ------------------------------------------------------------------ */
/* the peer link (socketpair) with timeouts                            */

static void link_write(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            FAIL("writing to the peer link: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
}

/* 0 on success, -1 on timeout or EOF. */
static int link_read(int fd, void *buf, size_t n, int timeout_ms)
{
    uint8_t *p = buf;
    double end = now_s() + timeout_ms / 1000.0;
    while (n) {
        int left = (int)((end - now_s()) * 1000);
        if (left <= 0)
            return -1;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int r = poll(&pfd, 1, left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* setup shared by the scenarios                                       */

struct side {
    struct net n;
    void *ctx2; /* v11+: a second communicator, finalized before the first */
    struct hprops props;
    int ndev;
    void *lc, *sc, *rc;
    char handle[NCCL_NET_HANDLE_MAXSIZE], peer_handle[NCCL_NET_HANDLE_MAXSIZE];
};

static uint64_t comm_id(void)
{
    return 0x6764727400000000ULL ^ opt.seed; /* the same on both ranks, as NCCL's */
}

/* NCCL's lines around a communicator's init, in its debug file: the
 * commId that joins NCCL's log with the recorders (`verdict --nccl-log`).
 * Only where the plugin learns the commId too (ABI v11+): before, the
 * recorder has none to join with.  As NCCL's eager init prints them: "Using
 * network", Init START, the channels it connects, Init COMPLETE; the
 * second communicator (no connection) starts and completes inside the
 * first's init, so each channel line has one communicator open. */
static void nccl_debug_init(int abi, const void *comm, uint64_t id, const char *what)
{
    if (abi < 11)
        return;
    char line[256];
    if (!strcmp(what, "START"))
        nccl_debug_line("INFO", "Using network gdrtrace");
    snprintf(line, sizeof(line),
             "ncclCommInitRank comm %p rank %d nranks 2 cudaDev 0 nvmlDev 0 busId 0 commId "
             "0x%llx - Init %s",
             comm, g_rank, (unsigned long long)id, what);
    nccl_debug_line("INFO", line);
}

static void side_init(struct side *s, int abi)
{
    memset(s, 0, sizeof(*s));
    net_open(&s->n, abi);
    nccl_debug_init(abi, s, comm_id(), "START");
    ncclResult_t rc = n_init(&s->n, &s->n.ctx, comm_id());
    if (rc != ncclSuccess)
        FAIL("init returned %d", rc);
    if (abi >= 11) {
        nccl_debug_init(abi, &s->ctx2, comm_id() + 1, "START");
        rc = n_init(&s->n, &s->ctx2, comm_id() + 1);
        if (rc != ncclSuccess)
            FAIL("init of a second communicator returned %d", rc);
        if (s->ctx2 == s->n.ctx)
            FAIL("two communicators got the same context %p", s->ctx2);
        nccl_debug_init(abi, &s->ctx2, comm_id() + 1, "COMPLETE");
    }
    rc = n_devices(&s->n, &s->ndev);
    if (rc != ncclSuccess || s->ndev < 1)
        FAIL("devices returned %d with ndev %d", rc, s->ndev);
    for (int d = 0; d < s->ndev; d++) {
        struct hprops p;
        n_props(&s->n, d, &p);
        if (d == 0)
            s->props = p;
    }
}

static void side_listen(struct side *s)
{
    memset(s->handle, 0, sizeof(s->handle));
    ncclResult_t rc = n_listen(&s->n, 0, s->handle, &s->lc);
    if (rc != ncclSuccess || !s->lc)
        FAIL("listen returned %d, listenComm %p", rc, s->lc);
}

/* Both directions at once, as NCCL's proxy does: connect to the peer and
 * accept from it, each retried while it returns a NULL comm. */
static void side_connect_both(struct side *s, int link, int want_send, int want_recv)
{
    double end = now_s() + opt.timeout_s / 2.0;
    long tries = 0;
    while ((want_send && !s->sc) || (want_recv && !s->rc)) {
        if (want_send && !s->sc) {
            ncclResult_t rc = n_connect(&s->n, 0, s->peer_handle, &s->sc);
            if (rc != ncclSuccess)
                FAIL("connect returned %d", rc);
        }
        if (want_recv && !s->rc) {
            ncclResult_t rc = n_accept(&s->n, s->lc, &s->rc);
            if (rc != ncclSuccess)
                FAIL("accept returned %d", rc);
        }
        tries++;
        if (now_s() > end)
            FAIL("connect/accept did not complete after %ld tries (send %p recv %p)", tries, s->sc,
                 s->rc);
        if ((want_send && !s->sc) || (want_recv && !s->rc))
            usleep(200);
    }
    (void)link;
    if (s->n.abi >= 11) {
        char line[128];
        if (want_send) {
            snprintf(line, sizeof(line), "Channel 00/0 : %d[0] -> %d[0] [send] via NET/gdrtrace/0",
                     g_rank, 1 - g_rank);
            nccl_debug_line("INFO", line);
        }
        if (want_recv) {
            snprintf(line, sizeof(line),
                     "Channel 00/0 : %d[0] -> %d[0] [receive] via NET/gdrtrace/0", 1 - g_rank,
                     g_rank);
            nccl_debug_line("INFO", line);
        }
        nccl_debug_init(s->n.abi, s, comm_id(), "COMPLETE");
    }
}

static void exchange_handles(struct side *s, int link)
{
    link_write(link, s->handle, sizeof(s->handle));
    if (link_read(link, s->peer_handle, sizeof(s->peer_handle), opt.timeout_s * 1000) != 0)
        FAIL("the peer did not send its handle");
}

static void sync_peer(int link, char c)
{
    char got = 0;
    link_write(link, &c, 1);
    if (link_read(link, &got, 1, opt.timeout_s * 1000) != 0 || got != c)
        FAIL("the peer did not reach sync point '%c'", c);
}

/* ------------------------------------------------------------------ */
/* the data scenario                                                   */

struct plan {
    int nmsg, ngroup;
    int *group_first, *group_n; /* per group */
    size_t *size;               /* per message */
    int *tag;
    size_t max_group_bytes;
};

static size_t rand_size(uint64_t *s, size_t max)
{
    uint64_t r = splitmix(s) % 100, v = splitmix(s);
    size_t x;
    if (r < 10)
        x = 0;
    else if (r < 25)
        x = 1 + v % 64;
    else if (r < 60)
        x = v % 65536;
    else if (r < 90)
        x = v % (1u << 20);
    else
        x = v % (max + 1);
    return x > max ? max : x;
}

/* Both ranks compute the same plan for a direction. */
static void make_plan(struct plan *p, int dir, int max_recvs, size_t max_size)
{
    uint64_t s = opt.seed ^ (0x5eedULL << 8) ^ (uint64_t)dir;
    int groups = opt.iters;
    p->ngroup = groups;
    p->group_first = calloc((size_t)groups, sizeof(int));
    p->group_n = calloc((size_t)groups, sizeof(int));
    p->size = calloc((size_t)groups * MAX_RECVS, sizeof(size_t));
    p->tag = calloc((size_t)groups * MAX_RECVS, sizeof(int));
    if (!p->group_first || !p->group_n || !p->size || !p->tag)
        FAIL("out of memory for the plan");
    int m = 0;
    p->max_group_bytes = 0;
    for (int g = 0; g < groups; g++) {
        int k = 1;
        if (max_recvs > 1 && splitmix(&s) % 3 == 0)
            k = 2 + (int)(splitmix(&s) % (uint64_t)(max_recvs - 1));
        if (g == groups - 1)
            k = 1; /* the last group is the fence: a plain receive */
        p->group_first[g] = m;
        p->group_n[g] = k;
        int base = (int)(splitmix(&s) % 100000) * MAX_RECVS;
        size_t total = 0;
        for (int j = 0; j < k; j++, m++) {
            size_t sz = rand_size(&s, max_size);
            /* keep a group within 2 x max so the arena always fits one */
            if (total + sz > 2 * max_size)
                sz = 0;
            total += sz;
            p->size[m] = sz;
            p->tag[m] = base + j;
        }
        if (total > p->max_group_bytes)
            p->max_group_bytes = total;
    }
    /* Edge sizes always present: a 0-byte first and a max-size fence. */
    p->size[0] = 0;
    p->size[p->group_first[groups - 1]] = max_size;
    /* The fence was sized after the loop: the arenas must hold it too. */
    if (max_size > p->max_group_bytes)
        p->max_group_bytes = max_size;
    p->nmsg = m;
}

/* A FIFO ring allocator over one registered buffer: spans are released
 * oldest first, as NCCL recycles its buffer slots. */
struct arena {
    uint8_t *base;
    size_t cap;
    void *mh;
    size_t head, tail; /* live bytes: [head, tail) or wrapped [head, cap) + [0, tail) */
    int live, wrapped;
};

static long arena_alloc(struct arena *a, size_t len)
{
    len = (len + ALIGN - 1) / ALIGN * ALIGN;
    if (len == 0)
        len = ALIGN; /* a 0-byte message still gets a distinct address */
    if (len > a->cap)
        FAIL("harness bug: a %zu-byte span can never fit the %zu-byte arena", len, a->cap);
    if (a->live == 0) {
        a->head = a->tail = 0;
        a->wrapped = 0;
    }
    if (!a->wrapped) {
        if (a->cap - a->tail >= len) {
            a->tail += len;
            a->live++;
            return (long)(a->tail - len);
        }
        if (a->head >= len) {
            a->wrapped = 1;
            a->tail = len;
            a->live++;
            return 0;
        }
        return -1;
    }
    if (a->head - a->tail >= len) {
        a->tail += len;
        a->live++;
        return (long)(a->tail - len);
    }
    return -1;
}

/* Releases the oldest span; next_start is where the next live span starts
 * (or -1 when none). */
static void arena_release_oldest(struct arena *a, long next_start)
{
    a->live--;
    if (a->live == 0 || next_start < 0) {
        a->head = a->tail = 0;
        a->wrapped = 0;
        return;
    }
    if ((size_t)next_start < a->head)
        a->wrapped = 0; /* the head jumped back to the start of the buffer */
    a->head = (size_t)next_start;
}

struct sreq {
    void *req;
    int msg;
    long off;
    int done;
};

struct rreq {
    void *req;
    int group;
    long off; /* in the recv arena, or -1 for an LL slot */
    int ll_slot;
    int optional, done, verified;
    uint8_t *buf[MAX_RECVS];
    size_t posted[MAX_RECVS];
};

struct stats {
    long long bytes_sent, bytes_recv;
    int msgs_sent, msgs_recv, multi_recvs, optional_recvs, flushes, null_sends, null_recvs;
    int max_send_inflight, max_recv_inflight;
};

static void verify_recv(struct side *s, struct plan *p, int dir, struct rreq *r, const int *sizes,
                        int final)
{
    int first = p->group_first[r->group], k = p->group_n[r->group];
    (void)s;
    for (int j = 0; j < k; j++) {
        int m = first + j;
        size_t want = p->size[m];
        if (!r->optional && sizes[j] != (int)want)
            FAIL("dir %d msg %d (group %d sub %d, tag %d): test reported %d bytes, %zu were sent",
                 dir, m, r->group, j, p->tag[m], sizes[j], want);
        long long bad = check(r->buf[j], want, msg_key(dir, m));
        if (bad >= 0) {
            if (r->optional && !final)
                return; /* LL-style: the data may land after the completion */
            FAIL("dir %d msg %d (group %d sub %d, %zu bytes): byte %lld differs", dir, m, r->group,
                 j, want, bad);
        }
        for (size_t b = want; b < r->posted[j]; b++)
            if (r->buf[j][b] != 0xEE)
                FAIL("dir %d msg %d: byte %zu past the %zu-byte message was overwritten", dir, m, b,
                     want);
    }
    r->verified = 1;
}

static void run_data(struct side *s, int role, int link, struct stats *st)
{
    int dir_out = role, dir_in = 1 - role;
    int max_inflight = opt.inflight
                           ? opt.inflight
                           : (s->n.abi == 6 ? NCCL_NET_MAX_REQUESTS_V6 : NCCL_NET_MAX_REQUESTS);
    int max_recvs = s->props.max_recvs;
    size_t max_size = opt.max_size;
    if (max_size > s->props.max_p2p)
        max_size = s->props.max_p2p;
    struct plan out, in;
    make_plan(&out, dir_out, max_recvs, max_size);
    make_plan(&in, dir_in, max_recvs, max_size);

    size_t arena_cap =
        2 * (out.max_group_bytes > in.max_group_bytes ? out.max_group_bytes : in.max_group_bytes) +
        (size_t)MAX_RECVS * (SLACK_MAX + 2 * ALIGN) + (8u << 20);
    struct arena sa = {.cap = arena_cap}, ra = {.cap = arena_cap};
    sa.base = malloc(sa.cap);
    ra.base = malloc(ra.cap);
    uint8_t *ll = malloc((size_t)LL_SLOTS * LL_SLOT_SIZE);
    if (!sa.base || !ra.base || !ll)
        FAIL("out of memory for %zu-byte arenas", arena_cap);
    void *ll_mh = NULL;
    ncclResult_t rc;
    /* --no-reg: the same messages with no memory registered (NULL handles,
     * which sock accepts): a run that moves nothing through host staging */
    if (!opt.no_reg &&
        ((rc = n_reg_mr(&s->n, s->sc, sa.base, sa.cap, &sa.mh)) != ncclSuccess || !sa.mh))
        FAIL("regMr(send arena, %zu bytes, HOST) returned %d", sa.cap, rc);
    if (!opt.no_reg &&
        ((rc = n_reg_mr(&s->n, s->rc, ra.base, ra.cap, &ra.mh)) != ncclSuccess || !ra.mh))
        FAIL("regMr(recv arena, %zu bytes, HOST) returned %d", ra.cap, rc);
    if (!opt.no_reg && ((rc = n_reg_mr(&s->n, s->rc, ll, (size_t)LL_SLOTS * LL_SLOT_SIZE,
                                       &ll_mh)) != ncclSuccess ||
                        !ll_mh))
        FAIL("regMr(LL buffer) returned %d", rc);
    int ll_busy[LL_SLOTS] = {0};

    int send_cap = max_inflight * max_recvs;
    struct sreq *sq = calloc((size_t)send_cap, sizeof(*sq));
    struct rreq *rq = calloc((size_t)max_inflight, sizeof(*rq));
    if (!sq || !rq)
        FAIL("out of memory for request queues");
    int sq_head = 0, sq_n = 0, rq_head = 0, rq_n = 0;
    int next_msg = 0, next_group = 0, sends_done = 0, groups_done = 0;
    struct sreq pend_s = {.msg = -1};
    struct rreq pend_r = {.group = -1};
    uint64_t lr = opt.seed * 31 + (uint64_t)role + 17; /* receiver's local choices */
    double last_progress = now_s(), t0 = now_s();

    while (sends_done < out.nmsg || groups_done < in.ngroup) {
        int progress = 0;
        /* post sends, in plan order */
        while (next_msg < out.nmsg && sq_n < send_cap) {
            if (pend_s.msg < 0) {
                size_t sz = out.size[next_msg];
                long off = arena_alloc(&sa, sz);
                if (off < 0)
                    break;
                fill(sa.base + off, sz, msg_key(dir_out, next_msg));
                pend_s = (struct sreq){.msg = next_msg, .off = off};
            }
            void *req = NULL;
            int m = pend_s.msg;
            rc = n_isend(&s->n, s->sc, sa.base + pend_s.off, out.size[m], out.tag[m], sa.mh, &req);
            if (rc != ncclSuccess)
                FAIL("isend(msg %d, %zu bytes, tag %d) returned %d", m, out.size[m], out.tag[m],
                     rc);
            if (!req) {
                st->null_sends++;
                break; /* not now: retry later, as NCCL does */
            }
            pend_s.req = req;
            sq[(sq_head + sq_n) % send_cap] = pend_s;
            sq_n++;
            if (sq_n > st->max_send_inflight)
                st->max_send_inflight = sq_n;
            pend_s.msg = -1;
            next_msg++;
            progress = 1;
        }
        /* post receives, one irecv per group */
        while (next_group < in.ngroup && rq_n < max_inflight) {
            if (pend_r.group < 0) {
                int g = next_group, k = in.group_n[g], first = in.group_first[g];
                struct rreq r = {.group = g, .off = -1, .ll_slot = -1};
                size_t total = 0;
                for (int j = 0; j < k; j++) {
                    size_t slack = splitmix(&lr) % 2 ? 0 : splitmix(&lr) % SLACK_MAX;
                    r.posted[j] = in.size[first + j] + slack;
                    total += (r.posted[j] + ALIGN - 1) / ALIGN * ALIGN + ALIGN;
                }
                int want_ll = k == 1 && g != in.ngroup - 1 && r.posted[0] <= LL_SLOT_SIZE &&
                              splitmix(&lr) % 4 == 0;
                if (want_ll)
                    for (int i = 0; i < LL_SLOTS; i++)
                        if (!ll_busy[i]) {
                            r.ll_slot = i;
                            break;
                        }
                if (r.ll_slot >= 0) {
                    ll_busy[r.ll_slot] = 1;
                    r.optional = 1;
                    r.buf[0] = ll + (size_t)r.ll_slot * LL_SLOT_SIZE;
                    memset(r.buf[0], 0, r.posted[0]);
                } else {
                    r.off = arena_alloc(&ra, total);
                    if (r.off < 0)
                        break;
                    size_t o = (size_t)r.off;
                    for (int j = 0; j < k; j++) {
                        r.buf[j] = ra.base + o;
                        o += (r.posted[j] + ALIGN - 1) / ALIGN * ALIGN + ALIGN;
                    }
                }
                for (int j = 0; j < k; j++) {
                    size_t want = in.size[first + j];
                    if (!r.optional)
                        memset(r.buf[j], 0, want);
                    memset(r.buf[j] + want, 0xEE, r.posted[j] - want);
                }
                pend_r = r;
            }
            int g = pend_r.group, k = in.group_n[g], first = in.group_first[g];
            void *data[MAX_RECVS], *mhs[MAX_RECVS];
            int tags[MAX_RECVS];
            for (int j = 0; j < k; j++) {
                data[j] = pend_r.buf[j];
                mhs[j] = pend_r.optional ? ll_mh : ra.mh;
                tags[j] = in.tag[first + j];
            }
            void *req = pend_r.optional ? (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION : NULL;
            rc = n_irecv(&s->n, s->rc, k, data, pend_r.posted, tags, mhs, &req);
            if (rc != ncclSuccess)
                FAIL("irecv(group %d, n=%d) returned %d", g, k, rc);
            if (req == (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION)
                FAIL("irecv left NCCL's optional-completion marker in *request");
            if (!req) {
                st->null_recvs++;
                break;
            }
            pend_r.req = req;
            rq[(rq_head + rq_n) % max_inflight] = pend_r;
            rq_n++;
            if (rq_n > st->max_recv_inflight)
                st->max_recv_inflight = rq_n;
            if (k > 1)
                st->multi_recvs++;
            if (pend_r.optional)
                st->optional_recvs++;
            pend_r.group = -1;
            next_group++;
            progress = 1;
        }
        /* test everything in flight, in any order */
        for (int i = 0; i < sq_n; i++) {
            struct sreq *q = &sq[(sq_head + i) % send_cap];
            if (q->done)
                continue;
            int done = 0, sz = -1;
            rc = n_test(&s->n, q->req, &done, &sz);
            if (rc != ncclSuccess)
                FAIL("test(send msg %d, %zu bytes) returned %d", q->msg, out.size[q->msg], rc);
            if (done) {
                q->done = 1;
                sends_done++;
                st->msgs_sent++;
                st->bytes_sent += (long long)out.size[q->msg];
                progress = 1;
            }
        }
        for (int i = 0; i < rq_n; i++) {
            struct rreq *r = &rq[(rq_head + i) % max_inflight];
            if (r->done) {
                if (!r->verified) {
                    int dummy[MAX_RECVS] = {0};
                    verify_recv(s, &in, dir_in, r, dummy, 0);
                }
                continue;
            }
            int done = 0, sizes[MAX_RECVS];
            for (int j = 0; j < MAX_RECVS; j++)
                sizes[j] = -1;
            rc = n_test(&s->n, r->req, &done, sizes);
            if (rc != ncclSuccess)
                FAIL("test(recv group %d) returned %d", r->group, rc);
            if (!done)
                continue;
            r->done = 1;
            groups_done++;
            progress = 1;
            int k = in.group_n[r->group];
            for (int j = 0; j < k; j++)
                st->bytes_recv += (long long)in.size[in.group_first[r->group] + j];
            st->msgs_recv += k;
            verify_recv(s, &in, dir_in, r, sizes, 0);
            if (!r->optional && splitmix(&lr) % 4 == 0) {
                /* iflush as NCCL issues it after a receive (GDR); NULL = nothing to do */
                void *data[MAX_RECVS], *mhs[MAX_RECVS], *freq = NULL;
                int fs[MAX_RECVS];
                for (int j = 0; j < k; j++)
                    data[j] = r->buf[j], mhs[j] = ra.mh, fs[j] = sizes[j];
                rc = n_iflush(&s->n, s->rc, k, data, fs, mhs, &freq);
                if (rc != ncclSuccess)
                    FAIL("iflush(group %d) returned %d", r->group, rc);
                double fend = now_s() + 10;
                for (int fdone = 0; freq && !fdone;) {
                    if (n_test(&s->n, freq, &fdone, NULL) != ncclSuccess)
                        FAIL("test(flush of group %d) failed", r->group);
                    if (now_s() > fend)
                        FAIL("flush of group %d never completed", r->group);
                }
                st->flushes++;
            }
        }
        /* retire completed heads, oldest first */
        while (sq_n && sq[sq_head].done) {
            sq_head = (sq_head + 1) % send_cap;
            sq_n--;
            long next = sq_n ? sq[sq_head].off : (pend_s.msg >= 0 ? pend_s.off : -1);
            arena_release_oldest(&sa, next);
        }
        while (rq_n && rq[rq_head].done && rq[rq_head].verified) {
            struct rreq *r = &rq[rq_head];
            int was_arena = r->off >= 0;
            if (r->ll_slot >= 0)
                ll_busy[r->ll_slot] = 0;
            rq_head = (rq_head + 1) % max_inflight;
            rq_n--;
            if (was_arena) {
                long next = -1;
                for (int i = 0; i < rq_n && next < 0; i++)
                    if (rq[(rq_head + i) % max_inflight].off >= 0)
                        next = rq[(rq_head + i) % max_inflight].off;
                if (next < 0 && pend_r.group >= 0 && pend_r.off >= 0)
                    next = pend_r.off;
                arena_release_oldest(&ra, next);
            }
        }
        if (progress) {
            last_progress = now_s();
        } else {
            if (now_s() - last_progress > opt.timeout_s / 2.0)
                FAIL("no progress for %.0f s: sent %d/%d, received %d/%d groups, %d sends and "
                     "%d receives in flight",
                     now_s() - last_progress, sends_done, out.nmsg, groups_done, in.ngroup, sq_n,
                     rq_n);
            usleep(20); /* the plugin progresses only inside our calls */
        }
    }
    /* LL-style receives whose data landed after their completion: the fence
     * (the last, plain receive) has completed, so everything sent before it
     * has landed. */
    while (rq_n) {
        struct rreq *r = &rq[rq_head];
        if (!r->verified) {
            int dummy[MAX_RECVS] = {0};
            verify_recv(s, &in, dir_in, r, dummy, 1);
        }
        rq_head = (rq_head + 1) % max_inflight;
        rq_n--;
    }
    double secs = now_s() - t0;
    sync_peer(link, 'D');
    if (!opt.no_reg && (rc = n_dereg_mr(&s->n, s->sc, sa.mh)) != ncclSuccess)
        FAIL("deregMr(send arena) returned %d", rc);
    if (!opt.no_reg && (rc = n_dereg_mr(&s->n, s->rc, ra.mh)) != ncclSuccess)
        FAIL("deregMr(recv arena) returned %d", rc);
    if (!opt.no_reg && (rc = n_dereg_mr(&s->n, s->rc, ll_mh)) != ncclSuccess)
        FAIL("deregMr(LL buffer) returned %d", rc);
    say("moved %d messages (%.1f MiB) out and %d (%.1f MiB, %d multi-receives, %d "
        "optional-completion, %d flushes) in, in %.2f s; up to %d sends / %d receives in "
        "flight; every byte and size checked",
        st->msgs_sent, st->bytes_sent / MiB, st->msgs_recv, st->bytes_recv / MiB, st->multi_recvs,
        st->optional_recvs, st->flushes, secs, st->max_send_inflight, st->max_recv_inflight);
    free(sa.base);
    free(ra.base);
    free(ll);
    free(sq);
    free(rq);
    free(out.group_first), free(out.group_n), free(out.size), free(out.tag);
    free(in.group_first), free(in.group_n), free(in.size), free(in.tag);
}

static void side_close(struct side *s)
{
    ncclResult_t rc;
    if (s->sc && (rc = n_close_send(&s->n, s->sc)) != ncclSuccess)
        FAIL("closeSend returned %d", rc);
    if (s->rc && (rc = n_close_recv(&s->n, s->rc)) != ncclSuccess)
        FAIL("closeRecv returned %d", rc);
    if (s->lc && (rc = n_close_listen(&s->n, s->lc)) != ncclSuccess)
        FAIL("closeListen returned %d", rc);
    if (s->ctx2 && (rc = n_finalize(&s->n, s->ctx2)) != ncclSuccess)
        FAIL("finalize of the second communicator returned %d", rc);
    if ((rc = n_finalize(&s->n, s->n.ctx)) != ncclSuccess)
        FAIL("finalize returned %d", rc);
}

static void child_data(int abi, int role, int link)
{
    struct side s;
    struct stats st = {0};
    side_init(&s, abi);
    if (role == 0)
        say("device 0: %s, speed %d Mbps, ptrSupport 0x%x, maxRecvs %d, maxComms %d%s",
            s.props.name, s.props.speed, s.props.ptr_support, s.props.max_recvs, s.props.max_comms,
            s.props.has_v9 ? "" : " (maxP2pBytes: NCCL's 1 GiB for <= v8)");
    if (role == 0 && g_transport_line[0])
        say("plugin says: %s", g_transport_line);
    side_listen(&s);
    exchange_handles(&s, link);
    side_connect_both(&s, link, 1, 1);
    run_data(&s, role, link, &st);
    side_close(&s);
    if (g_bad_flags)
        FAIL("the plugin logged %d message(s) with the wrong subsystem flags", g_bad_flags);
    exit(0); /* not _exit: the plugin closes its recorder at exit */
}

/* ------------------------------------------------------------------ */
/* bad-input scenarios                                                 */

/* connect must fail on each corrupt handle, within the time limit. */
static void expect_connect_error(struct side *s, const char *what, const char *handle)
{
    char h[NCCL_NET_HANDLE_MAXSIZE];
    memcpy(h, handle, sizeof(h));
    void *sc = NULL;
    double t0 = now_s(), end = t0 + opt.bad_timeout_s / 2.0;
    for (;;) {
        ncclResult_t rc = n_connect(&s->n, 0, h, &sc);
        if (rc != ncclSuccess) {
            say("%s handle: connect returned error %d after %.0f ms: OK", what, rc,
                (now_s() - t0) * 1e3);
            return;
        }
        if (sc)
            FAIL("connect accepted a %s handle", what);
        if (now_s() > end)
            FAIL("connect on a %s handle neither failed nor connected in %.0f s (a hang)", what,
                 now_s() - t0);
        usleep(1000);
    }
}

static void child_bad_handle(int abi)
{
    struct side s;
    side_init(&s, abi);
    side_listen(&s); /* a real handle to corrupt */
    char h[NCCL_NET_HANDLE_MAXSIZE];
    uint64_t r = opt.seed + 99;
    for (size_t i = 0; i < sizeof(h); i++)
        h[i] = (char)splitmix(&r);
    expect_connect_error(&s, "random", h);
    memset(h, 0, sizeof(h));
    expect_connect_error(&s, "all-zero", h);
    memset(h, 0, sizeof(h));
    memcpy(h, s.handle, 12);
    expect_connect_error(&s, "truncated (12 of 128 bytes)", h);
    memcpy(h, s.handle, sizeof(h));
    for (int i = 0; i < 4; i++)
        h[i] ^= 0x5a;
    expect_connect_error(&s, "corrupt (first 4 bytes flipped)", h);
    memcpy(h, s.handle, sizeof(h));
    h[20] ^= 0x01;
    expect_connect_error(&s, "corrupt (one address bit flipped)", h);
    side_close(&s);
    exit(0); /* not _exit: the plugin closes its recorder at exit */
}

/* The receiver of a scenario where the peer misbehaves: test() must fail
 * within the limit (a completed receive is re-posted: garbage might look
 * like a message, but the dead peer must surface as an error). */
static void recv_expect_error(struct side *s, int link, size_t size, const char *what)
{
    uint8_t *buf = malloc(size);
    void *mh = NULL;
    if (!buf)
        FAIL("out of memory");
    if (n_reg_mr(&s->n, s->rc, buf, size, &mh) != ncclSuccess)
        FAIL("regMr failed");
    sync_peer(link, 'A');
    double t0 = now_s(), end = t0 + opt.bad_timeout_s / 2.0;
    int completions = 0;
    for (;;) {
        void *req = NULL, *data[1] = {buf}, *mhs[1] = {mh};
        size_t sz[1] = {size};
        int tags[1] = {7};
        ncclResult_t rc = n_irecv(&s->n, s->rc, 1, data, sz, tags, mhs, &req);
        if (rc != ncclSuccess) {
            say("%s: irecv returned error %d after %.0f ms: OK", what, rc, (now_s() - t0) * 1e3);
            break;
        }
        int done = 0, sizes[1];
        while (req && !done) {
            rc = n_test(&s->n, req, &done, sizes);
            if (rc != ncclSuccess)
                break;
            if (now_s() > end)
                FAIL("%s: the receive neither completed nor failed in %.0f s (a hang)", what,
                     now_s() - t0);
            usleep(100);
        }
        if (rc != ncclSuccess) {
            say("%s: test returned error %d after %.0f ms: OK", what, rc, (now_s() - t0) * 1e3);
            break;
        }
        if (done)
            completions++;
        if (now_s() > end)
            FAIL("%s: no error in %.0f s (%d receives completed)", what, now_s() - t0, completions);
        if (!req)
            usleep(100);
    }
    /* After an error NCCL aborts the communicator: close must not crash. */
    n_dereg_mr(&s->n, s->rc, mh);
    free(buf);
}

static void child_peer_recv(int abi, int link, const char *what, size_t size)
{
    struct side s;
    side_init(&s, abi);
    side_listen(&s);
    exchange_handles(&s, link);
    side_connect_both(&s, link, 0, 1);
    recv_expect_error(&s, link, size, what);
    side_close(&s);
    exit(0); /* not _exit: the plugin closes its recorder at exit */
}

/* Writes garbage straight onto every socket the plugin opened, then dies. */
static void child_garbage_sender(int abi, int link)
{
    struct side s;
    side_init(&s, abi);
    side_listen(&s);
    exchange_handles(&s, link);
    side_connect_both(&s, link, 1, 0);
    sync_peer(link, 'A');
    uint8_t junk[4096];
    uint64_t r = opt.seed + 7;
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)splitmix(&r);
    int hit = 0;
    for (int fd = 3; fd < 1024; fd++) {
        if (fd == link)
            continue;
        int type;
        socklen_t len = sizeof(type);
        struct sockaddr_storage peer;
        socklen_t plen = sizeof(peer);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
            continue;
        if (getpeername(fd, (struct sockaddr *)&peer, &plen) != 0)
            continue; /* the listen socket */
        if (send(fd, junk, sizeof(junk), MSG_NOSIGNAL | MSG_DONTWAIT) > 0)
            hit++;
    }
    say("wrote 4 KiB of garbage onto %d connected socket(s) of the plugin, then exiting", hit);
    usleep(200 * 1000);
    exit(0); /* not _exit: the plugin closes its recorder at exit */
}

/* Starts a large isend, lets it make some progress, then SIGKILLs itself. */
static void child_dying_sender(int abi, int link, size_t size)
{
    struct side s;
    side_init(&s, abi);
    side_listen(&s);
    exchange_handles(&s, link);
    side_connect_both(&s, link, 1, 0);
    uint8_t *buf = calloc(1, size);
    void *mh = NULL, *req = NULL;
    if (!buf || n_reg_mr(&s.n, s.sc, buf, size, &mh) != ncclSuccess)
        FAIL("buffer/regMr for %zu bytes failed", size);
    sync_peer(link, 'A');
    double end = now_s() + opt.bad_timeout_s / 2.0;
    while (!req) {
        if (n_isend(&s.n, s.sc, buf, size, 7, mh, &req) != ncclSuccess)
            FAIL("isend failed before the peer had a reason to fail");
        if (now_s() > end)
            FAIL("isend never got a request");
        usleep(100);
    }
    for (int i = 0; i < 3; i++) {
        int done = 0;
        n_test(&s.n, req, &done, NULL);
        usleep(1000);
    }
    say("sent part of a %zu-byte message; dying now (SIGKILL)", size);
    raise(SIGKILL);
    _exit(3);
}

/* Sends a large message to a receiver that dies: test must fail. */
static void child_send_to_dying(int abi, int link, size_t size)
{
    struct side s;
    side_init(&s, abi);
    side_listen(&s);
    exchange_handles(&s, link);
    side_connect_both(&s, link, 1, 0);
    uint8_t *buf = calloc(1, size);
    void *mh = NULL, *req = NULL;
    if (!buf || n_reg_mr(&s.n, s.sc, buf, size, &mh) != ncclSuccess)
        FAIL("buffer/regMr for %zu bytes failed", size);
    sync_peer(link, 'A');
    double t0 = now_s(), end = t0 + opt.bad_timeout_s / 2.0;
    ncclResult_t rc = ncclSuccess;
    while (!req && rc == ncclSuccess) {
        rc = n_isend(&s.n, s.sc, buf, size, 7, mh, &req);
        if (now_s() > end)
            FAIL("isend to a dying receiver: no request and no error in %.0f s", now_s() - t0);
        usleep(100);
    }
    int done = 0;
    while (rc == ncclSuccess && !done) {
        rc = n_test(&s.n, req, &done, NULL);
        if (now_s() > end)
            FAIL("sending to a dead receiver: no error in %.0f s (a hang)", now_s() - t0);
        usleep(100);
    }
    if (rc == ncclSuccess)
        FAIL("a %zu-byte send to a receiver that died completed", size);
    say("receiver died: send failed with error %d after %.0f ms: OK", rc, (now_s() - t0) * 1e3);
    n_dereg_mr(&s.n, s.sc, mh);
    side_close(&s);
    free(buf);
    exit(0); /* not _exit: the plugin closes its recorder at exit */
}

static void child_dying_receiver(int abi, int link, size_t size)
{
    struct side s;
    side_init(&s, abi);
    side_listen(&s);
    exchange_handles(&s, link);
    side_connect_both(&s, link, 0, 1);
    uint8_t *buf = malloc(size);
    void *mh = NULL, *req = NULL;
    if (!buf || n_reg_mr(&s.n, s.rc, buf, size, &mh) != ncclSuccess)
        FAIL("buffer/regMr failed");
    sync_peer(link, 'A');
    void *data[1] = {buf}, *mhs[1] = {mh};
    size_t sz[1] = {size};
    int tags[1] = {7};
    while (!req)
        if (n_irecv(&s.n, s.rc, 1, data, sz, tags, mhs, &req) != ncclSuccess)
            FAIL("irecv failed");
    /* One test() only: it reads until the sockets would block (as NCCL's
     * Socket does), so every further call, and every pause between calls
     * in which the sender refills the sockets, lets a fast sender get
     * further; on a loaded machine three calls 2 ms apart sometimes took
     * the whole 128 MiB and the scenario tested nothing. */
    int done = 0, sizes[1];
    n_test(&s.n, req, &done, sizes);
    if (done)
        FAIL("the whole %zu-byte message arrived before the receiver could die", size);
    say("received part of a %zu-byte message; dying now (SIGKILL)", size);
    raise(SIGKILL);
    _exit(3);
}

/* ------------------------------------------------------------------ */
/* the parent: runs scenarios in children under a wall-clock limit     */

enum expect { EXPECT_EXIT0, EXPECT_KILLED };

struct kid {
    pid_t pid;
    enum expect expect;
    const char *role;
};

static pid_t spawn(int abi, const char *role, void (*fn)(int abi, int role, int link, void *arg),
                   int r, int link, int other, void *arg)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        close(other);
        g_rank = r;
        snprintf(tag_str, sizeof(tag_str), "v%d %s", abi, role);
        fn(abi, r, link, arg);
        exit(0);
    }
    return pid;
}

/* Waits for all kids; 0 when each ended as expected. */
static int reap(struct kid *k, int n, int timeout_s, const char *scenario, int abi)
{
    double end = now_s() + timeout_s;
    int left = n, fail = 0;
    while (left) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p == 0) {
            if (now_s() > end) {
                for (int i = 0; i < n; i++)
                    if (k[i].pid > 0) {
                        printf("[v%d] FAIL: %s: %s still running after %d s (a hang); killing "
                               "it\n",
                               abi, scenario, k[i].role, timeout_s);
                        kill(k[i].pid, SIGKILL);
                    }
                fail = 1;
                end = now_s() + 3600;
            }
            usleep(20 * 1000);
            continue;
        }
        if (p < 0)
            break;
        for (int i = 0; i < n; i++) {
            if (k[i].pid != p)
                continue;
            left--;
            k[i].pid = -1;
            if (k[i].expect == EXPECT_KILLED && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
                break;
            if (k[i].expect == EXPECT_EXIT0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
                break;
            if (WIFSIGNALED(st))
                printf("[v%d] FAIL: %s: %s killed by signal %d (%s)%s\n", abi, scenario, k[i].role,
                       WTERMSIG(st), strsignal(WTERMSIG(st)),
                       WTERMSIG(st) == SIGPIPE ? ": the plugin wrote to a dead socket without "
                                                 "MSG_NOSIGNAL"
                                               : "");
            else if (!fail)
                printf("[v%d] FAIL: %s: %s exited with %d\n", abi, scenario, k[i].role,
                       WEXITSTATUS(st));
            fail = 1;
        }
    }
    fflush(stdout);
    return fail;
}

typedef void (*kid_fn)(int abi, int role, int link, void *arg);

static void k_data(int abi, int role, int link, void *arg)
{
    (void)arg;
    child_data(abi, role, link);
}
static void k_bad_handle(int abi, int role, int link, void *arg)
{
    (void)role, (void)link, (void)arg;
    child_bad_handle(abi);
}
static void k_garbage_recv(int abi, int role, int link, void *arg)
{
    (void)role, (void)arg;
    child_peer_recv(abi, link, "peer sent garbage", 1u << 20);
}
static void k_garbage_send(int abi, int role, int link, void *arg)
{
    (void)role, (void)arg;
    child_garbage_sender(abi, link);
}
static void k_die_send(int abi, int role, int link, void *arg)
{
    (void)role, (void)arg;
    child_dying_sender(abi, link, 128u << 20);
}
static void k_die_send_recv(int abi, int role, int link, void *arg)
{
    (void)role, (void)arg;
    child_peer_recv(abi, link, "sender died mid-message", 128u << 20);
}
static void k_die_recv(int abi, int role, int link, void *arg)
{
    (void)role, (void)arg;
    child_dying_receiver(abi, link, 128u << 20);
}
static void k_send_to_dying(int abi, int role, int link, void *arg)
{
    (void)role, (void)arg;
    child_send_to_dying(abi, link, 128u << 20);
}

static int run_pair(int abi, const char *scenario, kid_fn a, const char *arole, enum expect ea,
                    kid_fn b, const char *brole, enum expect eb, int timeout_s)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("socketpair");
        return 1;
    }
    struct kid k[2] = {{.expect = ea, .role = arole}, {.expect = eb, .role = brole}};
    k[0].pid = spawn(abi, arole, a, 0, sv[0], sv[1], NULL);
    int n = 1;
    if (b) {
        k[1].pid = spawn(abi, brole, b, 1, sv[1], sv[0], NULL);
        n = 2;
    }
    close(sv[0]);
    close(sv[1]);
    int fail = reap(k, n, timeout_s, scenario, abi);
    printf("[v%d] %s: %s\n", abi, scenario, fail ? "FAILED" : "passed");
    fflush(stdout);
    return fail;
}

static int run_abi(int abi)
{
    int fail = 0;
    printf("[v%d] == ncclNetPlugin_v%d from %s\n", abi, abi, opt.plugin);
    if (opt.data)
        fail |= run_pair(abi, "data: two processes, both directions", k_data, "A", EXPECT_EXIT0,
                         k_data, "B", EXPECT_EXIT0, opt.timeout_s);
    if (opt.bad) {
        fail |= run_pair(abi, "bad handles: connect fails cleanly", k_bad_handle, "A", EXPECT_EXIT0,
                         NULL, NULL, EXPECT_EXIT0, opt.bad_timeout_s);
        fail |= run_pair(abi, "garbage from the peer: receive fails cleanly", k_garbage_recv,
                         "receiver", EXPECT_EXIT0, k_garbage_send, "sender", EXPECT_EXIT0,
                         opt.bad_timeout_s);
        fail |= run_pair(abi, "sender dies mid-message: receive fails cleanly", k_die_send_recv,
                         "receiver", EXPECT_EXIT0, k_die_send, "sender", EXPECT_KILLED,
                         opt.bad_timeout_s);
        fail |= run_pair(abi, "receiver dies mid-message: send fails cleanly", k_send_to_dying,
                         "sender", EXPECT_EXIT0, k_die_recv, "receiver", EXPECT_KILLED,
                         opt.bad_timeout_s);
    }
    return fail;
}

/* ------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: harness [options]\n"
            "Drives libnccl-net-gdrtrace.so as NCCL does, through ncclNetPlugin_vN, with two\n"
            "processes over loopback; checks every byte; then feeds it bad input.\n\n"
            "  --abi N[,N...]|all  ABI versions to drive, 6..12 (default: all)\n"
            "  --plugin PATH       the plugin (default: $BUILD/libnccl-net-gdrtrace.so,\n"
            "                      BUILD defaulting to build/default; with NCCL_NET_PLUGIN=NAME\n"
            "                      set: NAME, then libnccl-net-NAME.so, as NCCL looks it up)\n"
            "  --iters N           receive groups per direction (default %d)\n"
            "  --seed S            random seed for sizes, tags and data (default %" PRIu64 ")\n"
            "  --max-size BYTES    largest message, K/M/G suffixes (default 24M)\n"
            "  --inflight N        requests in flight per comm (default: the version's\n"
            "                      NCCL_NET_MAX_REQUESTS: 8 for v6, 32 after)\n"
            "  --dir DIR           set GDRTRACE_DIR=DIR for the plugin (where recorders go)\n"
            "  --data-only         skip the bad-input scenarios\n"
            "  --bad-only          only the bad-input scenarios\n"
            "  --no-reg            the data scenario registers no memory (NULL handles)\n"
            "  --timeout S         wall-clock limit of the data scenario (default %d)\n"
            "  --bad-timeout S     limit of each bad-input scenario (default %d)\n"
            "  -v, --verbose       print the plugin's INFO lines\n"
            "  -h, --help          this text\n"
            "GDRTRACE_* variables in the environment reach the plugin unchanged.\n"
            "Exit: 0 all passed, 1 a check failed, 77 could not run, 2 usage.\n",
            opt.iters, opt.seed, opt.timeout_s, opt.bad_timeout_s);
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s)
        return -1;
    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10, end++;
        break;
    case 'm':
    case 'M':
        v <<= 20, end++;
        break;
    case 'g':
    case 'G':
        v <<= 30, end++;
        break;
    }
    if (*end)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_abis(const char *s)
{
    opt.nabi = 0;
    if (strcmp(s, "all") == 0) {
        for (int v = GT_NCCL_ABI_MIN; v <= GT_NCCL_ABI_MAX; v++)
            opt.abis[opt.nabi++] = v;
        return 0;
    }
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        char *end;
        long v = strtol(t, &end, 10);
        if (*end || v < GT_NCCL_ABI_MIN || v > GT_NCCL_ABI_MAX || opt.nabi == 8)
            return -1;
        opt.abis[opt.nabi++] = (int)v;
    }
    return opt.nabi ? 0 : -1;
}

int main(int argc, char **argv)
{
    static char default_plugin[PATH_MAX];
    static const struct option lo[] = {{"abi", required_argument, 0, 'a'},
                                       {"plugin", required_argument, 0, 'p'},
                                       {"iters", required_argument, 0, 'i'},
                                       {"seed", required_argument, 0, 's'},
                                       {"max-size", required_argument, 0, 'm'},
                                       {"inflight", required_argument, 0, 'f'},
                                       {"dir", required_argument, 0, 'd'},
                                       {"data-only", no_argument, 0, 'D'},
                                       {"bad-only", no_argument, 0, 'B'},
                                       {"no-reg", no_argument, 0, 'N'},
                                       {"timeout", required_argument, 0, 't'},
                                       {"bad-timeout", required_argument, 0, 'T'},
                                       {"verbose", no_argument, 0, 'v'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *build = getenv("BUILD");
    snprintf(default_plugin, sizeof(default_plugin), "%s/libnccl-net-gdrtrace.so",
             build && *build ? build : "build/default");
    opt.plugin = default_plugin;
    const char *by_name = getenv("NCCL_NET_PLUGIN");
    if (by_name && *by_name)
        opt.plugin = by_name, opt.by_name = 1;
    parse_abis("all");
    int c;
    while ((c = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'a':
            if (parse_abis(optarg) != 0) {
                fprintf(stderr, "harness: --abi '%s': expected 6..12, a comma list, or all\n",
                        optarg);
                return 2;
            }
            break;
        case 'p':
            opt.plugin = optarg, opt.by_name = 0;
            break;
        case 'i':
            opt.iters = (int)strtol(optarg, &end, 0);
            if (*end || opt.iters < 1 || opt.iters > 1000000) {
                fprintf(stderr, "harness: --iters '%s': expected 1..1000000\n", optarg);
                return 2;
            }
            break;
        case 's':
            opt.seed = strtoull(optarg, &end, 0);
            if (*end) {
                fprintf(stderr, "harness: --seed '%s' is not a number\n", optarg);
                return 2;
            }
            break;
        case 'm':
            if (parse_size(optarg, &opt.max_size) != 0 || opt.max_size > (1ULL << 30)) {
                fprintf(stderr, "harness: --max-size '%s': expected bytes up to 1G\n", optarg);
                return 2;
            }
            break;
        case 'f':
            opt.inflight = (int)strtol(optarg, &end, 0);
            if (*end || opt.inflight < 1 || opt.inflight > NCCL_NET_MAX_REQUESTS) {
                fprintf(stderr, "harness: --inflight '%s': expected 1..%d\n", optarg,
                        NCCL_NET_MAX_REQUESTS);
                return 2;
            }
            break;
        case 'd':
            if (setenv("GDRTRACE_DIR", optarg, 1) != 0) {
                perror("setenv GDRTRACE_DIR");
                return 2;
            }
            break;
        case 'D':
            opt.bad = 0;
            break;
        case 'N':
            opt.no_reg = 1;
            break;
        case 'B':
            opt.data = 0;
            break;
        case 't':
        case 'T': {
            int v = (int)strtol(optarg, &end, 0);
            if (*end || v < 1 || v > 3600) {
                fprintf(stderr, "harness: --%s '%s': expected 1..3600 seconds\n",
                        c == 't' ? "timeout" : "bad-timeout", optarg);
                return 2;
            }
            *(c == 't' ? &opt.timeout_s : &opt.bad_timeout_s) = v;
            break;
        }
        case 'v':
            opt.verbose = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "harness: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!opt.by_name && access(opt.plugin, R_OK) != 0) {
        printf("harness: cannot read the plugin %s (%s); build it with make\n", opt.plugin,
               strerror(errno));
        return 77;
    }
    printf("harness: plugin %s, seed %" PRIu64 ", %d groups each way, messages 0 B .. %zu B\n",
           opt.plugin, opt.seed, opt.iters, opt.max_size);
    int failed = 0;
    for (int i = 0; i < opt.nabi; i++)
        if (run_abi(opt.abis[i]))
            failed++;
    printf("harness: %d of %d ABI version(s) passed\n", opt.nabi - failed, opt.nabi);
    return failed ? 1 : 0;
}
