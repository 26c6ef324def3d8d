/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_inner.c — a stand-in for a third-party NCCL net plugin
 * (libnccl-net-fakeinner.so), so the `inner` transport can be tested without
 * aws-ofi-nccl or HPC-X: it exports ncclNetPlugin_v11 and ncclNetPlugin_v8
 * over the sock transport, named "fakeinner".  GDRTRACE_INNER_VERSION picks
 * which one gdrtrace loads.  Test-only; never installed.
 *
 * FAKEINNER_CRASH=init|connect makes that call die of SIGSEGV, as HPC-X's
 * plugin does inside its init on Soft-RoCE (issue 23): the post-mortem test
 * (inner_crash.sh) checks that the recorder names the call.
 */
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "nccl/net.h"
#include "plugin/sock/sock.h"

#define S gt_sock_ops
#define EXPORT __attribute__((visibility("default")))

static void crash_if(const char *call)
{
    const char *c = getenv("FAKEINNER_CRASH");
    if (c && strcmp(c, call) == 0)
        raise(SIGSEGV);
}

static void fill_common(int dev, const struct gt_props *p, char **name, char **pci, uint64_t *guid,
                        int *ptr, int *speed, int *port, float *lat, int *maxc, int *maxr)
{
    (void)dev;
    *name = (char *)p->name;
    *pci = (char *)p->pci_path;
    *guid = p->guid;
    *ptr = p->ptr_support;
    *speed = p->speed_mbps;
    *port = p->port;
    *lat = p->latency_us;
    *maxc = p->max_comms;
    *maxr = p->max_recvs;
}

/* ---- v11 ---- */
static ncclResult_t v11_init(void **ctx, uint64_t id, ncclNetCommConfig_v11_t *cfg,
                             ncclDebugLogger_t lg, ncclProfilerCallback_t pf)
{
    crash_if("init");
    struct gt_comm_config c = {.traffic_class = cfg ? cfg->trafficClass : -1};
    return (ncclResult_t)S.init(ctx, id, 1, &c, (gt_logger_fn)lg, (gt_profiler_fn)pf);
}
static ncclResult_t v11_props(int dev, ncclNetProperties_v11_t *o)
{
    struct gt_props p;
    ncclResult_t rc = (ncclResult_t)S.get_properties(dev, &p);
    memset(o, 0, sizeof(*o));
    fill_common(dev, &p, &o->name, &o->pciPath, &o->guid, &o->ptrSupport, &o->speed, &o->port,
                &o->latency, &o->maxComms, &o->maxRecvs);
    o->vProps.ndevs = 1;
    o->vProps.devs[0] = dev;
    o->maxP2pBytes = p.max_p2p_bytes;
    o->maxCollBytes = p.max_coll_bytes;
    return rc;
}
static ncclResult_t v11_regmr(void *c, void *d, size_t sz, int t, void **m)
{
    return (ncclResult_t)S.reg_mr(c, d, sz, t, m, NULL);
}
static ncclResult_t v11_regmr_dmabuf(void *c, void *d, size_t sz, int t, uint64_t off, int fd,
                                     void **m)
{
    return (ncclResult_t)S.reg_mr_dmabuf(c, d, sz, t, off, fd, m, NULL);
}
static ncclResult_t v11_connect(void *ctx, int dev, void *h, void **sc,
                                ncclNetDeviceHandle_v11_t **dc)
{
    crash_if("connect");
    return (ncclResult_t)S.connect(ctx, dev, h, sc, (void **)dc);
}
static ncclResult_t v11_accept(void *l, void **rc, ncclNetDeviceHandle_v11_t **dc)
{
    return (ncclResult_t)S.accept(l, rc, (void **)dc);
}
static ncclResult_t v11_set_attr(void *ctx, ncclNetAttr_v11_t *a)
{
    return (ncclResult_t)S.set_net_attr(ctx, a);
}
/* Pass-throughs whose signatures are the same in v8 and v11. */
static ncclResult_t f_devices(int *n)
{
    return (ncclResult_t)S.devices(n);
}
static ncclResult_t f_listen11(void *ctx, int dev, void *h, void **l)
{
    return (ncclResult_t)S.listen(ctx, dev, h, l);
}
static ncclResult_t f_dereg(void *c, void *m)
{
    return (ncclResult_t)S.dereg_mr(c, m);
}
static ncclResult_t f_iflush(void *rc, int n, void **d, int *sz, void **m, void **req)
{
    return (ncclResult_t)S.iflush(rc, n, d, sz, m, req);
}
static ncclResult_t f_test(void *r, int *done, int *sz)
{
    return (ncclResult_t)S.test(r, done, sz);
}
static ncclResult_t f_close_send(void *c)
{
    return (ncclResult_t)S.close_send(c);
}
static ncclResult_t f_close_recv(void *c)
{
    return (ncclResult_t)S.close_recv(c);
}
static ncclResult_t f_close_listen(void *c)
{
    return (ncclResult_t)S.close_listen(c);
}
static ncclResult_t f_get_dev_mr(void *c, void *m, void **d)
{
    return (ncclResult_t)S.get_device_mr(c, m, d);
}
static ncclResult_t f_consumed(void *rc, int n, void *r)
{
    return (ncclResult_t)S.irecv_consumed(rc, n, r);
}
static ncclResult_t f_finalize(void *ctx)
{
    return (ncclResult_t)S.finalize(ctx);
}
static ncclResult_t v11_isend(void *sc, void *d, size_t sz, int tag, void *m, void *ph, void **r)
{
    return (ncclResult_t)S.isend(sc, d, sz, tag, m, ph, r);
}
static ncclResult_t v11_irecv(void *rc, int n, void **d, size_t *sz, int *tags, void **m, void **ph,
                              void **r)
{
    return (ncclResult_t)S.irecv(rc, n, d, sz, tags, m, ph, r);
}

EXPORT const ncclNet_v11_t ncclNetPlugin_v11 = {
    .name = "fakeinner",
    .init = v11_init,
    .devices = f_devices,
    .getProperties = v11_props,
    .listen = f_listen11,
    .connect = v11_connect,
    .accept = v11_accept,
    .regMr = v11_regmr,
    .regMrDmaBuf = v11_regmr_dmabuf,
    .deregMr = f_dereg,
    .isend = v11_isend,
    .irecv = v11_irecv,
    .iflush = f_iflush,
    .test = f_test,
    .closeSend = f_close_send,
    .closeRecv = f_close_recv,
    .closeListen = f_close_listen,
    .getDeviceMr = f_get_dev_mr,
    .irecvConsumed = f_consumed,
    .makeVDevice = NULL, /* NCCL reads NULL as "no NIC fusion" */
    .finalize = f_finalize,
    .setNetAttr = v11_set_attr,
};

/* ---- v8: process-wide init, int sizes for isend/irecv ---- */
static void *v8_ctx;
static ncclResult_t v8_init(ncclDebugLogger_t lg)
{
    crash_if("init");
    if (v8_ctx)
        return ncclSuccess;
    return (ncclResult_t)S.init(&v8_ctx, 0, 0, NULL, (gt_logger_fn)lg, NULL);
}
static ncclResult_t v8_props(int dev, ncclNetProperties_v8_t *o)
{
    struct gt_props p;
    ncclResult_t rc = (ncclResult_t)S.get_properties(dev, &p);
    memset(o, 0, sizeof(*o));
    fill_common(dev, &p, &o->name, &o->pciPath, &o->guid, &o->ptrSupport, &o->speed, &o->port,
                &o->latency, &o->maxComms, &o->maxRecvs);
    return rc;
}
static ncclResult_t v8_listen(int dev, void *h, void **l)
{
    return (ncclResult_t)S.listen(v8_ctx, dev, h, l);
}
static ncclResult_t v8_connect(int dev, void *h, void **sc, ncclNetDeviceHandle_v8_t **dc)
{
    crash_if("connect");
    return (ncclResult_t)S.connect(v8_ctx, dev, h, sc, (void **)dc);
}
static ncclResult_t v8_accept(void *l, void **rc, ncclNetDeviceHandle_v8_t **dc)
{
    return (ncclResult_t)S.accept(l, rc, (void **)dc);
}
static ncclResult_t v8_isend(void *sc, void *d, int sz, int tag, void *m, void **r)
{
    return (ncclResult_t)S.isend(sc, d, (size_t)sz, tag, m, NULL, r);
}
static ncclResult_t v8_irecv(void *rc, int n, void **d, int *sz, int *tags, void **m, void **r)
{
    size_t s[8];
    if (n < 1 || n > 8)
        return ncclInternalError;
    for (int i = 0; i < n; i++)
        s[i] = sz[i] < 0 ? 0 : (size_t)sz[i];
    return (ncclResult_t)S.irecv(rc, n, d, s, tags, m, NULL, r);
}

EXPORT const ncclNet_v8_t ncclNetPlugin_v8 = {
    .name = "fakeinner",
    .init = v8_init,
    .devices = f_devices,
    .getProperties = v8_props,
    .listen = v8_listen,
    .connect = v8_connect,
    .accept = v8_accept,
    .regMr = v11_regmr,
    .regMrDmaBuf = v11_regmr_dmabuf,
    .deregMr = f_dereg,
    .isend = v8_isend,
    .irecv = v8_irecv,
    .iflush = f_iflush,
    .test = f_test,
    .closeSend = f_close_send,
    .closeRecv = f_close_recv,
    .closeListen = f_close_listen,
    .getDeviceMr = f_get_dev_mr,
    .irecvConsumed = f_consumed,
};
