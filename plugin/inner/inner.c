/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inner.c — the `inner` transport: load another NCCL net plugin
 * (GDRTRACE_INNER=/path/libnccl-net-X.so: aws-ofi-nccl, HPC-X's, ...) and
 * forward every call to it, so the shim can trace a plugin we did not write.
 *
 * It is the mirror image of plugin/abi: there each exported ncclNetPlugin_vN
 * becomes a gt_net call; here each gt_net call becomes the inner plugin's
 * ncclNetPlugin_vN call, for the newest N the library exports (v12 … v6), or
 * the one GDRTRACE_INNER_VERSION pins.
 *
 * What an inner plugin cannot tell us: the kernel path of a registration.
 * The report therefore records what NCCL asked for and infers the method from
 * the call (regMrDmaBuf with an fd -> DMA-BUF, regMr CUDA -> peermem, regMr
 * host -> host); get_probe says exactly that.
 *
 * Invariants:
 *  1. g.net is set once, under g.lock, by the first init, and never changes
 *     afterwards (a second library would mix two plugins' handles); it is
 *     read lock-free by the data path after init returned.
 *  2. For inner ABIs without per-communicator init (< v11) the inner init
 *     runs once; our ctx is a small heap object carrying the traffic class
 *     v10's connect wants.
 *  3. Sizes over an old inner ABI's int limits are refused before the call,
 *     never truncated.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl/net.h"
#include "common/callout.h"
#include "common/env.h"
#include "common/gt_net.h"
#include "common/log.h"

#define INNER_MAX_RECVS 8

static struct {
    pthread_mutex_t lock;
    void *dl;
    int ver;           /* the inner ABI version in use, 0 until loaded */
    int legacy_inited; /* < v11: inner init done */
    char path[512];
    union {
        const void *any;
        const ncclNet_v6_t *v6;
        const ncclNet_v7_t *v7;
        const ncclNet_v8_t *v8;
        const ncclNet_v9_t *v9;
        const ncclNet_v10_t *v10;
        const ncclNet_v11_t *v11;
        const ncclNet_v12_t *v12;
    } net;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Our context for inner ABIs < v11 (invariant 2). */
struct legacy_ctx {
    ncclNetCommConfig_v10_t config;
};

#define V(n) (g.ver == (n))
#define AT_LEAST(n) (g.ver >= (n))

/* The same member at the same position in every version's table: the
 * function pointer types differ only in their property/handle typedef names,
 * which are the same types; pick by version. */
#define CALL_ANY(member, ...)                                                                      \
    (V(12)   ? g.net.v12->member(__VA_ARGS__)                                                      \
     : V(11) ? g.net.v11->member(__VA_ARGS__)                                                      \
     : V(10) ? g.net.v10->member(__VA_ARGS__)                                                      \
     : V(9)  ? g.net.v9->member(__VA_ARGS__)                                                       \
     : V(8)  ? g.net.v8->member(__VA_ARGS__)                                                       \
     : V(7)  ? g.net.v7->member(__VA_ARGS__)                                                       \
             : g.net.v6->member(__VA_ARGS__))

/* Failure rule F1 of gt_net.h for calls the wrapped plugin answered: it
 * cannot describe its failures to us, so the description names the call and
 * its result, with errno 0 (its errno is not ours to read, F2). */
static gt_result said(const char *call, gt_result rc)
{
    if (rc != GT_OK)
        gt_net_fail(rc, GT_REASON_TRANSPORT_ERROR, 0, "inner plugin %s: %s returned %d", g.path,
                    call, (int)rc);
    return rc;
}

/* WARNs `fmt` and describes it as this call's failure (F1): the plugin
 * refuses the process (the verdict's BYPASSED quotes it). */
#define LOAD_FAIL(rc, ...)                                                                         \
    (GT_WARN(__VA_ARGS__), gt_net_fail((rc), GT_REASON_INNER_LOAD_FAILED, 0, __VA_ARGS__))

/* Every call that runs the inner plugin's code before it is known to work
 * (load, init, listen, connect, accept) is announced (common/callout.h): a
 * crash inside it leaves "calling <site> of <path>, ABI v<ver>" as the last
 * event of the recorder. */
#define INNER_KIND "inner plugin"
static uint64_t announce(int site, const char *path, int dev)
{
    return gt_callout_begin(site, INNER_KIND, path, g.ver, dev);
}

static gt_result load_locked(void)
{
    static const char *const versions[] = {
        "ncclNetPlugin_v12", "ncclNetPlugin_v11", "ncclNetPlugin_v10", "ncclNetPlugin_v9",
        "ncclNetPlugin_v8",  "ncclNetPlugin_v7",  "ncclNetPlugin_v6"};
    if (g.dl)
        return GT_OK;
    const char *path = gt_env_str("GDRTRACE_INNER");
    if (!path) {
        return LOAD_FAIL(GT_INVALID_USAGE,
                         "GDRTRACE_TRANSPORT=inner needs GDRTRACE_INNER=/path/to/libnccl-net-X.so");
    }
    long pin = gt_env_long("GDRTRACE_INNER_VERSION", 0, 0, 12);
    if (pin && pin < 6) {
        GT_WARN("GDRTRACE_INNER_VERSION=%ld: only v6 to v12 are supported; using the newest", pin);
        pin = 0;
    }
    /* RTLD_LOCAL: the inner plugin's ncclNetPlugin_v* must not interpose
     * ours, nor ours its. */
    uint64_t call = announce(GT_CALL_INNER_LOAD, path, -1);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    gt_callout_end(call, GT_CALL_INNER_LOAD, dl ? GT_OK : GT_SYSTEM_ERROR);
    if (!dl) {
        return LOAD_FAIL(GT_SYSTEM_ERROR, "GDRTRACE_INNER=%s could not be loaded: %s", path,
                         dlerror());
    }
    for (int i = 0; i < 7; i++) {
        int ver = 12 - i;
        if (pin && ver != pin)
            continue;
        const void *sym = dlsym(dl, versions[i]);
        if (!sym)
            continue;
        g.net.any = sym;
        g.ver = ver;
        break;
    }
    if (!g.ver) {
        dlclose(dl);
        return LOAD_FAIL(
            GT_INVALID_USAGE, "GDRTRACE_INNER=%s exports no %s (looked for v12 down to v6)", path,
            pin ? "ncclNetPlugin of the pinned GDRTRACE_INNER_VERSION" : "ncclNetPlugin_vN");
    }
    if (g.net.v6->name && strcmp(g.net.v6->name, "gdrtrace") == 0) {
        /* Loading ourselves would recurse through GDRTRACE_TRANSPORT=inner. */
        g.ver = 0;
        g.net.any = NULL;
        dlclose(dl);
        return LOAD_FAIL(GT_INVALID_USAGE,
                         "GDRTRACE_INNER=%s is gdrtrace itself; refusing to wrap it", path);
    }
    g.dl = dl;
    snprintf(g.path, sizeof(g.path), "%s", path);
    GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET, "inner plugin %s ('%s') loaded through its v%d ABI",
            path, g.net.v6->name ? g.net.v6->name : "?", g.ver);
    return GT_OK;
}

/* said() for init: a failed init is the plugin's refusal of the process. */
static gt_result init_said(gt_result rc)
{
    if (rc != GT_OK)
        gt_net_fail(rc, GT_REASON_INNER_INIT_FAILED, 0,
                    "inner plugin %s (ABI v%d): init returned %d", g.path, g.ver, (int)rc);
    return rc;
}

static gt_result inner_init(void **ctx, uint64_t comm_id, int has_comm_id,
                            const struct gt_comm_config *config, gt_logger_fn logger,
                            gt_profiler_fn profiler)
{
    ncclNetCommConfig_v10_t cfg = {.trafficClass = config ? config->traffic_class : -1};
    gt_result rc;
    *ctx = NULL;
    pthread_mutex_lock(&g.lock);
    rc = load_locked();
    if (rc != GT_OK)
        goto out;
    if (AT_LEAST(11)) {
        /* The inner plugin counts its own communicators. */
        uint64_t id = has_comm_id ? comm_id : 0;
        uint64_t call = announce(GT_CALL_INNER_INIT, g.path, -1);
        rc = (gt_result)(V(12) ? g.net.v12->init(ctx, id, &cfg, (ncclDebugLogger_t)logger,
                                                 (ncclProfilerCallback_t)profiler)
                               : g.net.v11->init(ctx, id, &cfg, (ncclDebugLogger_t)logger,
                                                 (ncclProfilerCallback_t)profiler));
        gt_callout_end(call, GT_CALL_INNER_INIT, rc);
        init_said(rc);
        goto out;
    }
    struct legacy_ctx *lc = calloc(1, sizeof(*lc));
    if (!lc) {
        rc = gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                         "inner: init: out of memory");
        goto out;
    }
    lc->config = cfg;
    if (!g.legacy_inited) {
        uint64_t call = announce(GT_CALL_INNER_INIT, g.path, -1);
        if (V(10))
            rc = (gt_result)g.net.v10->init((ncclDebugLogger_t)logger,
                                            (ncclProfilerCallback_t)profiler);
        else
            rc = (gt_result)(V(9)   ? g.net.v9->init((ncclDebugLogger_t)logger)
                             : V(8) ? g.net.v8->init((ncclDebugLogger_t)logger)
                             : V(7) ? g.net.v7->init((ncclDebugLogger_t)logger)
                                    : g.net.v6->init((ncclDebugLogger_t)logger));
        gt_callout_end(call, GT_CALL_INNER_INIT, rc);
        if (rc != GT_OK) {
            GT_WARN("inner plugin %s: init failed (error %d)", g.path, (int)rc);
            init_said(rc);
            free(lc);
            goto out;
        }
    }
    g.legacy_inited++;
    *ctx = lc;
out:
    pthread_mutex_unlock(&g.lock);
    return rc;
}

static gt_result inner_finalize(void *ctx)
{
    if (AT_LEAST(11))
        return said("finalize",
                    (gt_result)(V(12) ? g.net.v12->finalize(ctx) : g.net.v11->finalize(ctx)));
    /* Older ABIs have no finalize: the inner plugin lives until exit. */
    pthread_mutex_lock(&g.lock);
    if (g.legacy_inited > 0)
        g.legacy_inited--;
    pthread_mutex_unlock(&g.lock);
    free(ctx);
    return GT_OK;
}

static gt_result inner_devices(int *ndev)
{
    return said("devices", (gt_result)CALL_ANY(devices, ndev));
}

/* Old properties share a prefix up to ptrSupport; the rest moves between
 * versions, so each is read from its own struct. */
static gt_result inner_get_properties(int dev, struct gt_props *p)
{
    gt_result rc;
    memset(p, 0, sizeof(*p));
    p->vdev_count = 1;
    p->vdevs[0] = dev;
    p->rail_id = -1;
    p->plane_id = -1;
    p->max_p2p_bytes = 1UL << 30; /* what NCCL assumes for int-size ABIs */
    p->max_coll_bytes = 512UL << 20;
#define COPY_COMMON(s)                                                                             \
    do {                                                                                           \
        p->name = (s).name;                                                                        \
        p->pci_path = (s).pciPath;                                                                 \
        p->guid = (s).guid;                                                                        \
        p->ptr_support = (s).ptrSupport;                                                           \
        p->speed_mbps = (s).speed;                                                                 \
        p->port = (s).port;                                                                        \
        p->latency_us = (s).latency;                                                               \
        p->max_comms = (s).maxComms;                                                               \
        p->max_recvs = (s).maxRecvs;                                                               \
    } while (0)
#define COPY_VPROPS(s)                                                                             \
    do {                                                                                           \
        int nd = (s).vProps.ndevs;                                                                 \
        int cap = (int)(sizeof((s).vProps.devs) / sizeof((s).vProps.devs[0]));                     \
        p->vdev_count = nd < 0 ? 0 : nd > cap ? cap : nd;                                          \
        for (int i = 0; i < p->vdev_count; i++)                                                    \
            p->vdevs[i] = (s).vProps.devs[i];                                                      \
        p->max_p2p_bytes = (s).maxP2pBytes;                                                        \
        p->max_coll_bytes = (s).maxCollBytes;                                                      \
        p->reg_is_global = (s).regIsGlobal;                                                        \
        p->force_flush = (s).forceFlush;                                                           \
        p->net_device_type = (s).netDeviceType;                                                    \
        p->net_device_version = (s).netDeviceVersion;                                              \
    } while (0)
    if (V(12)) {
        ncclNetProperties_v12_t s = {0};
        rc = (gt_result)g.net.v12->getProperties(dev, &s);
        COPY_COMMON(s);
        COPY_VPROPS(s);
        p->max_multi_request_size = s.maxMultiRequestSize;
        p->rail_id = s.railId;
        p->plane_id = s.planeId;
    } else if (V(11)) {
        ncclNetProperties_v11_t s = {0};
        rc = (gt_result)g.net.v11->getProperties(dev, &s);
        COPY_COMMON(s);
        COPY_VPROPS(s);
        p->max_multi_request_size = s.maxMultiRequestSize;
    } else if (V(10) || V(9)) {
        ncclNetProperties_v9_t s = {0}; /* v10's layout is v9's */
        rc = V(10) ? (gt_result)g.net.v10->getProperties(dev, (ncclNetProperties_v10_t *)&s)
                   : (gt_result)g.net.v9->getProperties(dev, &s);
        COPY_COMMON(s);
        COPY_VPROPS(s);
    } else if (V(8)) {
        ncclNetProperties_v8_t s = {0};
        rc = (gt_result)g.net.v8->getProperties(dev, &s);
        COPY_COMMON(s);
        p->reg_is_global = s.regIsGlobal;
        p->net_device_type = s.netDeviceType;
        p->net_device_version = s.netDeviceVersion;
    } else if (V(7)) {
        ncclNetProperties_v7_t s = {0};
        rc = (gt_result)g.net.v7->getProperties(dev, &s);
        COPY_COMMON(s);
        p->net_device_type = s.netDeviceType;
        p->net_device_version = s.netDeviceVersion;
    } else {
        ncclNetProperties_v6_t s = {0};
        rc = (gt_result)g.net.v6->getProperties(dev, &s);
        COPY_COMMON(s);
    }
#undef COPY_COMMON
#undef COPY_VPROPS
    if (p->max_recvs < 1)
        p->max_recvs = 1;
    return said("getProperties", rc);
}

static gt_result listen_raw(void *ctx, int dev, void *handle, void **listen_comm)
{
    if (AT_LEAST(11))
        return said("listen",
                    (gt_result)(V(12) ? g.net.v12->listen(ctx, dev, handle, listen_comm)
                                      : g.net.v11->listen(ctx, dev, handle, listen_comm)));
    return said("listen", (gt_result)(V(10)  ? g.net.v10->listen(dev, handle, listen_comm)
                                      : V(9) ? g.net.v9->listen(dev, handle, listen_comm)
                                      : V(8) ? g.net.v8->listen(dev, handle, listen_comm)
                                      : V(7) ? g.net.v7->listen(dev, handle, listen_comm)
                                             : g.net.v6->listen(dev, handle, listen_comm)));
}

static gt_result connect_raw(void *ctx, int dev, void *handle, void **send_comm,
                             void **send_dev_comm)
{
    ncclNetDeviceHandle_v7_t **dh = (ncclNetDeviceHandle_v7_t **)send_dev_comm;
    if (V(12))
        return said("connect", (gt_result)g.net.v12->connect(ctx, dev, handle, send_comm, dh));
    if (V(11))
        return said("connect", (gt_result)g.net.v11->connect(ctx, dev, handle, send_comm, dh));
    if (V(10)) {
        struct legacy_ctx *lc = ctx;
        ncclNetCommConfig_v10_t cfg = lc ? lc->config : (ncclNetCommConfig_v10_t){-1};
        return said("connect", (gt_result)g.net.v10->connect(dev, &cfg, handle, send_comm, dh));
    }
    if (V(9))
        return said("connect", (gt_result)g.net.v9->connect(dev, handle, send_comm, dh));
    if (V(8))
        return said("connect", (gt_result)g.net.v8->connect(dev, handle, send_comm, dh));
    if (V(7))
        return said("connect", (gt_result)g.net.v7->connect(dev, handle, send_comm, dh));
    return said("connect", (gt_result)g.net.v6->connect(dev, handle, send_comm));
}

static gt_result accept_raw(void *listen_comm, void **recv_comm, void **recv_dev_comm)
{
    ncclNetDeviceHandle_v7_t **dh = (ncclNetDeviceHandle_v7_t **)recv_dev_comm;
    if (V(6))
        return said("accept", (gt_result)g.net.v6->accept(listen_comm, recv_comm));
    return said("accept", (gt_result)(V(12)   ? g.net.v12->accept(listen_comm, recv_comm, dh)
                                      : V(11) ? g.net.v11->accept(listen_comm, recv_comm, dh)
                                      : V(10) ? g.net.v10->accept(listen_comm, recv_comm, dh)
                                      : V(9)  ? g.net.v9->accept(listen_comm, recv_comm, dh)
                                      : V(8)  ? g.net.v8->accept(listen_comm, recv_comm, dh)
                                              : g.net.v7->accept(listen_comm, recv_comm, dh)));
}

static gt_result inner_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
    uint64_t call = announce(GT_CALL_INNER_LISTEN, g.path, dev);
    gt_result rc = listen_raw(ctx, dev, handle, listen_comm);
    gt_callout_end(call, GT_CALL_INNER_LISTEN, rc);
    return rc;
}

static gt_result inner_connect(void *ctx, int dev, void *handle, void **send_comm,
                               void **send_dev_comm)
{
    uint64_t call = announce(GT_CALL_INNER_CONNECT, g.path, dev);
    gt_result rc = connect_raw(ctx, dev, handle, send_comm, send_dev_comm);
    gt_callout_end(call, GT_CALL_INNER_CONNECT, rc);
    return rc;
}

static gt_result inner_accept(void *listen_comm, void **recv_comm, void **recv_dev_comm)
{
    uint64_t call = announce(GT_CALL_INNER_ACCEPT, g.path, -1);
    gt_result rc = accept_raw(listen_comm, recv_comm, recv_dev_comm);
    gt_callout_end(call, GT_CALL_INNER_ACCEPT, rc);
    return rc;
}

/* Refuses a size an int-size ABI cannot carry (invariant 3). */
static int int_size_ok(const char *call, size_t size)
{
    if (size <= (size_t)INT_MAX)
        return 1;
    GT_WARN("inner plugin %s speaks ABI v%d, whose %s takes an int size; %zu bytes do not fit",
            g.path, g.ver, call, size);
    gt_net_fail(GT_INTERNAL_ERROR, GT_REASON_BAD_ARGUMENT, 0,
                "inner plugin speaks ABI v%d, whose %s takes an int size; %zu bytes do not fit",
                g.ver, call, size);
    return 0;
}

static void report_call(struct gt_reg_report *r, int asked, gt_result rc)
{
    if (!r)
        return;
    r->asked = asked;
    if (rc != GT_OK) {
        r->method = GT_METHOD_FAILED;
        r->reason = GT_REASON_TRANSPORT_ERROR;
        return;
    }
    /* Inferred from the call: the inner plugin does not say (see top). */
    r->method = gt_method_assumed(asked);
}

static gt_result inner_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle,
                              struct gt_reg_report *report)
{
    int asked = gt_asked_of(type, -1);
    gt_result rc;
    if (AT_LEAST(8)) {
        rc = (gt_result)(V(12)   ? g.net.v12->regMr(comm, data, size, type, mhandle)
                         : V(11) ? g.net.v11->regMr(comm, data, size, type, mhandle)
                         : V(10) ? g.net.v10->regMr(comm, data, size, type, mhandle)
                         : V(9)  ? g.net.v9->regMr(comm, data, size, type, mhandle)
                                 : g.net.v8->regMr(comm, data, size, type, mhandle));
    } else if (!int_size_ok("regMr", size)) {
        report_call(report, asked, GT_INTERNAL_ERROR);
        return GT_INTERNAL_ERROR; /* described by int_size_ok */
    } else {
        rc = (gt_result)(V(7) ? g.net.v7->regMr(comm, data, (int)size, type, mhandle)
                              : g.net.v6->regMr(comm, data, (int)size, type, mhandle));
    }
    report_call(report, asked, rc);
    return said("regMr", rc);
}

static gt_result inner_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                                     int fd, void **mhandle, struct gt_reg_report *report)
{
    int asked = gt_asked_of(type, fd);
    gt_result rc;
    /* regMrDmaBuf may legitimately be NULL in a plugin without DMA-BUF. */
    const void *fn = V(12)   ? (const void *)g.net.v12->regMrDmaBuf
                     : V(11) ? (const void *)g.net.v11->regMrDmaBuf
                     : V(10) ? (const void *)g.net.v10->regMrDmaBuf
                     : V(9)  ? (const void *)g.net.v9->regMrDmaBuf
                     : V(8)  ? (const void *)g.net.v8->regMrDmaBuf
                     : V(7)  ? (const void *)g.net.v7->regMrDmaBuf
                             : (const void *)g.net.v6->regMrDmaBuf;
    if (!fn) {
        GT_WARN("inner plugin %s has no regMrDmaBuf; NCCL should not have called it", g.path);
        report_call(report, asked, GT_INTERNAL_ERROR);
        return gt_net_fail(GT_INTERNAL_ERROR, GT_REASON_DMABUF_UNSUPPORTED, 0,
                           "inner plugin has no regMrDmaBuf");
    }
    rc = (gt_result)CALL_ANY(regMrDmaBuf, comm, data, size, type, offset, fd, mhandle);
    report_call(report, asked, rc);
    return said("regMrDmaBuf", rc);
}

static gt_result inner_dereg_mr(void *comm, void *mhandle)
{
    return said("deregMr", (gt_result)CALL_ANY(deregMr, comm, mhandle));
}

static gt_result inner_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
                             void *phandle, void **request)
{
    if (AT_LEAST(11))
        return said("isend", (gt_result)(V(12) ? g.net.v12->isend(send_comm, data, size, tag,
                                                                  mhandle, phandle, request)
                                               : g.net.v11->isend(send_comm, data, size, tag,
                                                                  mhandle, phandle, request)));
    if (V(10))
        return said("isend", (gt_result)g.net.v10->isend(send_comm, data, size, tag, mhandle,
                                                         phandle, request));
    if (V(9))
        return said("isend",
                    (gt_result)g.net.v9->isend(send_comm, data, size, tag, mhandle, request));
    if (!int_size_ok("isend", size))
        return GT_INTERNAL_ERROR;
    return said(
        "isend",
        (gt_result)(V(8)   ? g.net.v8->isend(send_comm, data, (int)size, tag, mhandle, request)
                    : V(7) ? g.net.v7->isend(send_comm, data, (int)size, tag, mhandle, request)
                           : g.net.v6->isend(send_comm, data, (int)size, tag, mhandle, request)));
}

static gt_result inner_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
                             void **mhandles, void **phandles, void **request)
{
    if (AT_LEAST(10))
        return said("irecv", (gt_result)(V(12)   ? g.net.v12->irecv(recv_comm, n, data, sizes, tags,
                                                                    mhandles, phandles, request)
                                         : V(11) ? g.net.v11->irecv(recv_comm, n, data, sizes, tags,
                                                                    mhandles, phandles, request)
                                                 : g.net.v10->irecv(recv_comm, n, data, sizes, tags,
                                                                    mhandles, phandles, request)));
    if (V(9))
        return said("irecv",
                    (gt_result)g.net.v9->irecv(recv_comm, n, data, sizes, tags, mhandles, request));
    if (n < 1 || n > INNER_MAX_RECVS) {
        GT_WARN("inner irecv: n=%d outside 1..%d", n, INNER_MAX_RECVS);
        return gt_net_fail(GT_INTERNAL_ERROR, GT_REASON_BAD_ARGUMENT, 0,
                           "inner irecv: n=%d outside 1..%d", n, INNER_MAX_RECVS);
    }
    int isz[INNER_MAX_RECVS];
    for (int i = 0; i < n; i++) {
        if (!int_size_ok("irecv", sizes[i]))
            return GT_INTERNAL_ERROR;
        isz[i] = (int)sizes[i];
    }
    return said(
        "irecv",
        (gt_result)(V(8)   ? g.net.v8->irecv(recv_comm, n, data, isz, tags, mhandles, request)
                    : V(7) ? g.net.v7->irecv(recv_comm, n, data, isz, tags, mhandles, request)
                           : g.net.v6->irecv(recv_comm, n, data, isz, tags, mhandles, request)));
}

static gt_result inner_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
                              void **request)
{
    return said("iflush",
                (gt_result)CALL_ANY(iflush, recv_comm, n, data, sizes, mhandles, request));
}

static gt_result inner_test(void *request, int *done, int *sizes)
{
    return said("test", (gt_result)CALL_ANY(test, request, done, sizes));
}

static gt_result inner_close_send(void *c)
{
    return said("closeSend", (gt_result)CALL_ANY(closeSend, c));
}

static gt_result inner_close_recv(void *c)
{
    return said("closeRecv", (gt_result)CALL_ANY(closeRecv, c));
}

static gt_result inner_close_listen(void *c)
{
    return said("closeListen", (gt_result)CALL_ANY(closeListen, c));
}

static gt_result inner_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle)
{
    /* v6 has no device offload: nothing to map. */
    if (V(6) || !(V(12)   ? (const void *)g.net.v12->getDeviceMr
                  : V(11) ? (const void *)g.net.v11->getDeviceMr
                  : V(10) ? (const void *)g.net.v10->getDeviceMr
                  : V(9)  ? (const void *)g.net.v9->getDeviceMr
                  : V(8)  ? (const void *)g.net.v8->getDeviceMr
                          : (const void *)g.net.v7->getDeviceMr)) {
        *dptr_mhandle = NULL;
        return GT_OK;
    }
    return said("getDeviceMr",
                (gt_result)(V(12)   ? g.net.v12->getDeviceMr(comm, mhandle, dptr_mhandle)
                            : V(11) ? g.net.v11->getDeviceMr(comm, mhandle, dptr_mhandle)
                            : V(10) ? g.net.v10->getDeviceMr(comm, mhandle, dptr_mhandle)
                            : V(9)  ? g.net.v9->getDeviceMr(comm, mhandle, dptr_mhandle)
                            : V(8)  ? g.net.v8->getDeviceMr(comm, mhandle, dptr_mhandle)
                                    : g.net.v7->getDeviceMr(comm, mhandle, dptr_mhandle)));
}

static gt_result inner_irecv_consumed(void *recv_comm, int n, void *request)
{
    if (V(6))
        return GT_OK; /* nothing to tell a v6 plugin */
    const void *fn = V(12)   ? (const void *)g.net.v12->irecvConsumed
                     : V(11) ? (const void *)g.net.v11->irecvConsumed
                     : V(10) ? (const void *)g.net.v10->irecvConsumed
                     : V(9)  ? (const void *)g.net.v9->irecvConsumed
                     : V(8)  ? (const void *)g.net.v8->irecvConsumed
                             : (const void *)g.net.v7->irecvConsumed;
    if (!fn)
        return GT_OK;
    return said("irecvConsumed",
                (gt_result)(V(12)   ? g.net.v12->irecvConsumed(recv_comm, n, request)
                            : V(11) ? g.net.v11->irecvConsumed(recv_comm, n, request)
                            : V(10) ? g.net.v10->irecvConsumed(recv_comm, n, request)
                            : V(9)  ? g.net.v9->irecvConsumed(recv_comm, n, request)
                            : V(8)  ? g.net.v8->irecvConsumed(recv_comm, n, request)
                                    : g.net.v7->irecvConsumed(recv_comm, n, request)));
}

static gt_result inner_set_net_attr(void *ctx, void *attr)
{
    if (V(12) && g.net.v12->setNetAttr)
        return said("setNetAttr", (gt_result)g.net.v12->setNetAttr(ctx, attr));
    if (V(11) && g.net.v11->setNetAttr)
        return said("setNetAttr", (gt_result)g.net.v11->setNetAttr(ctx, attr));
    return GT_OK; /* older plugins take no attributes */
}

static gt_result inner_get_probe(int dev, struct gt_dev_probe *probe)
{
    struct gt_props p;
    memset(probe, 0, sizeof(*probe));
    if (inner_get_properties(dev, &p) == GT_OK)
        probe->advertised = p.ptr_support;
    probe->dmabuf = (probe->advertised & GT_PTR_DMABUF) ? GT_PROBE_SUPPORTED : GT_PROBE_UNKNOWN;
    probe->peermem = GT_PROBE_UNKNOWN;
    probe->cuda_dmabuf = GT_PROBE_UNKNOWN;
    snprintf(probe->why, sizeof(probe->why),
             "inner plugin v%d advertises this itself; methods are inferred from NCCL's calls",
             g.ver);
    return GT_OK;
}

const struct gt_net_ops gt_inner_ops = {
    .name = "inner",
    .init = inner_init,
    .devices = inner_devices,
    .get_properties = inner_get_properties,
    .listen = inner_listen,
    .connect = inner_connect,
    .accept = inner_accept,
    .reg_mr = inner_reg_mr,
    .reg_mr_dmabuf = inner_reg_mr_dmabuf,
    .dereg_mr = inner_dereg_mr,
    .isend = inner_isend,
    .irecv = inner_irecv,
    .iflush = inner_iflush,
    .test = inner_test,
    .close_send = inner_close_send,
    .close_recv = inner_close_recv,
    .close_listen = inner_close_listen,
    .get_device_mr = inner_get_device_mr,
    .irecv_consumed = inner_irecv_consumed,
    .finalize = inner_finalize,
    .set_net_attr = inner_set_net_attr,
    .get_probe = inner_get_probe,
};
