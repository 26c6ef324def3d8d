/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cf_dl.c — any net plugin library as the suite's table (cf.h): dlopen the
 * file, take the highest ncclNetPlugin_vN that include/nccl/ declares (v12 …
 * v6, as NCCL's loader tries newest first) or the one asked for, and call
 * it with that version's shapes: int sizes before v9, a connect config in
 * v10, a context from v11.  The library is never closed (NCCL keeps it for
 * the process).  The logger prints the plugin's WARNs (INFO with
 * CF_VERBOSE=1) as NCCL's "NCCL WARN" would.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl/net.h"
#include "tests/conformance/cf.h"

struct dl {
    const void *tab;
    void *ctx; /* v11+: the communicator's context */
};

#define D(n) ((struct dl *)(n)->impl)
#define T(v, n) ((const ncclNet_v##v##_t *)D(n)->tab)
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

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    (void)flags;
    const char *v = getenv("CF_VERBOSE");
    if (level != NCCL_LOG_WARN && !(v && *v == '1' && level == NCCL_LOG_INFO))
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fprintf(stderr, "  plugin %s: %s (%s:%d)\n", level == NCCL_LOG_WARN ? "WARN" : "INFO", buf,
            file ? file : "?", line);
}

static int d_init(struct cf_net *n)
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
        return T(11, n)->init(&D(n)->ctx, 0x5eed, &cfg, logger, NULL);
    case 12:
        return T(12, n)->init(&D(n)->ctx, 0x5eed, &cfg, logger, NULL);
    }
    return ncclInternalError;
}

static int d_finalize(struct cf_net *n)
{
    if (n->abi == 11)
        return T(11, n)->finalize(D(n)->ctx);
    if (n->abi == 12)
        return T(12, n)->finalize(D(n)->ctx);
    return ncclSuccess; /* <= v10: the plugin lives for the process */
}

static int d_devices(struct cf_net *n, int *ndev)
{
    CALL_ALL(n, devices, ndev);
}

static int d_props(struct cf_net *n, int dev, struct cf_props *p)
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
    memset(&u, 0, sizeof(u));
    memset(p, 0, sizeof(*p));
    int rc = ncclInternalError;
#define BASE(q)                                                                                    \
    p->name = (q).name, p->ptr_support = (q).ptrSupport, p->speed = (q).speed,                     \
    p->max_comms = (q).maxComms, p->max_recvs = (q).maxRecvs
    switch (n->abi) {
    case 6:
        rc = T(6, n)->getProperties(dev, &u.v6);
        BASE(u.v6);
        break;
    case 7:
        rc = T(7, n)->getProperties(dev, &u.v7);
        BASE(u.v7);
        break;
    case 8:
        rc = T(8, n)->getProperties(dev, &u.v8);
        BASE(u.v8);
        break;
    case 9:
        rc = T(9, n)->getProperties(dev, &u.v9);
        BASE(u.v9);
        p->max_p2p = u.v9.maxP2pBytes;
        break;
    case 10:
        rc = T(10, n)->getProperties(dev, &u.v10);
        BASE(u.v10);
        p->max_p2p = u.v10.maxP2pBytes;
        break;
    case 11:
        rc = T(11, n)->getProperties(dev, &u.v11);
        BASE(u.v11);
        p->max_p2p = u.v11.maxP2pBytes;
        break;
    case 12:
        rc = T(12, n)->getProperties(dev, &u.v12);
        BASE(u.v12);
        p->max_p2p = u.v12.maxP2pBytes;
        break;
    }
#undef BASE
    return rc;
}

static int d_listen(struct cf_net *n, int dev, void *handle, void **lc)
{
    switch (n->abi) {
    case 11:
        return T(11, n)->listen(D(n)->ctx, dev, handle, lc);
    case 12:
        return T(12, n)->listen(D(n)->ctx, dev, handle, lc);
    }
    switch (n->abi) { /* the same shape v6 … v10 */
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
    }
    return ncclInternalError;
}

static int d_connect(struct cf_net *n, int dev, void *handle, void **sc)
{
    ncclNetDeviceHandle_v7_t *dh = NULL;
    ncclNetCommConfig_v10_t cfg = {.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF};
    switch (n->abi) {
    case 6:
        return T(6, n)->connect(dev, handle, sc);
    case 7:
        return T(7, n)->connect(dev, handle, sc, &dh);
    case 8:
        return T(8, n)->connect(dev, handle, sc, &dh);
    case 9:
        return T(9, n)->connect(dev, handle, sc, &dh);
    case 10:
        return T(10, n)->connect(dev, &cfg, handle, sc, &dh);
    case 11:
        return T(11, n)->connect(D(n)->ctx, dev, handle, sc, &dh);
    case 12:
        return T(12, n)->connect(D(n)->ctx, dev, handle, sc, &dh);
    }
    return ncclInternalError;
}

static int d_accept(struct cf_net *n, void *lc, void **rc)
{
    ncclNetDeviceHandle_v7_t *dh = NULL;
    switch (n->abi) {
    case 6:
        return T(6, n)->accept(lc, rc);
    case 7:
        return T(7, n)->accept(lc, rc, &dh);
    case 8:
        return T(8, n)->accept(lc, rc, &dh);
    case 9:
        return T(9, n)->accept(lc, rc, &dh);
    case 10:
        return T(10, n)->accept(lc, rc, &dh);
    case 11:
        return T(11, n)->accept(lc, rc, &dh);
    case 12:
        return T(12, n)->accept(lc, rc, &dh);
    }
    return ncclInternalError;
}

static int d_reg_mr(struct cf_net *n, void *comm, void *data, size_t size, void **mh)
{
    switch (n->abi) {
    case 6:
        return T(6, n)->regMr(comm, data, (int)size, NCCL_PTR_HOST, mh);
    case 7:
        return T(7, n)->regMr(comm, data, (int)size, NCCL_PTR_HOST, mh);
    }
    CALL_ALL(n, regMr, comm, data, size, NCCL_PTR_HOST, mh);
}

static int d_dereg_mr(struct cf_net *n, void *comm, void *mh)
{
    CALL_ALL(n, deregMr, comm, mh);
}

static int d_isend(struct cf_net *n, void *sc, void *data, size_t size, int tag, void *mh,
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

static int d_irecv(struct cf_net *n, void *rc, int cnt, void **data, size_t *sizes, int *tags,
                   void **mhs, void **req)
{
    int isz[CF_MAX_RECVS];
    void *phs[CF_MAX_RECVS] = {0};
    for (int i = 0; i < cnt && i < CF_MAX_RECVS; i++)
        isz[i] = (int)sizes[i];
    switch (n->abi) {
    case 6:
        return T(6, n)->irecv(rc, cnt, data, isz, tags, mhs, req);
    case 7:
        return T(7, n)->irecv(rc, cnt, data, isz, tags, mhs, req);
    case 8:
        return T(8, n)->irecv(rc, cnt, data, isz, tags, mhs, req);
    case 9:
        return T(9, n)->irecv(rc, cnt, data, sizes, tags, mhs, req);
    case 10:
        return T(10, n)->irecv(rc, cnt, data, sizes, tags, mhs, phs, req);
    case 11:
        return T(11, n)->irecv(rc, cnt, data, sizes, tags, mhs, phs, req);
    case 12:
        return T(12, n)->irecv(rc, cnt, data, sizes, tags, mhs, phs, req);
    }
    return ncclInternalError;
}

static int d_iflush(struct cf_net *n, void *rc, int cnt, void **data, int *sizes, void **mhs,
                    void **req)
{
    CALL_ALL(n, iflush, rc, cnt, data, sizes, mhs, req);
}

static int d_test(struct cf_net *n, void *req, int *done, int *sizes)
{
    CALL_ALL(n, test, req, done, sizes);
}

static int d_close_send(struct cf_net *n, void *c)
{
    CALL_ALL(n, closeSend, c);
}
static int d_close_recv(struct cf_net *n, void *c)
{
    CALL_ALL(n, closeRecv, c);
}
static int d_close_listen(struct cf_net *n, void *c)
{
    CALL_ALL(n, closeListen, c);
}

int cf_dl_open(struct cf_net *n, const char *path, int abi)
{
    static struct dl dl;
    static char label[512];
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("cannot load %s: %s\n", path, dlerror());
        return 1;
    }
    int lo = abi > 0 ? abi : GT_NCCL_ABI_MIN, hi = abi > 0 ? abi : GT_NCCL_ABI_MAX;
    if (lo < GT_NCCL_ABI_MIN || hi > GT_NCCL_ABI_MAX) {
        printf("ABI version %d: this driver knows v%d … v%d\n", abi, GT_NCCL_ABI_MIN,
               GT_NCCL_ABI_MAX);
        return 1;
    }
    for (int v = hi; v >= lo; v--) {
        char sym[32];
        snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", v);
        const void *tab = dlsym(h, sym);
        if (!tab)
            continue;
        memset(n, 0, sizeof(*n));
        dl.tab = tab;
        dl.ctx = NULL;
        snprintf(label, sizeof(label), "%s (%s, %s)", *(const char *const *)tab, sym, path);
        n->label = label;
        n->abi = v;
        n->multiprocess = 1;
        n->impl = &dl;
        n->init = d_init;
        n->finalize = d_finalize;
        n->devices = d_devices;
        n->props = d_props;
        n->listen = d_listen;
        n->connect = d_connect;
        n->accept = d_accept;
        n->reg_mr = d_reg_mr;
        n->dereg_mr = d_dereg_mr;
        n->isend = d_isend;
        n->irecv = d_irecv;
        n->iflush = d_iflush;
        n->test = d_test;
        n->close_send = d_close_send;
        n->close_recv = d_close_recv;
        n->close_listen = d_close_listen;
        return 0;
    }
    if (abi > 0)
        printf("%s exports no ncclNetPlugin_v%d\n", path, abi);
    else
        printf("%s exports no ncclNetPlugin_v%d … v%d (an older or a newer plugin ABI)\n", path,
               GT_NCCL_ABI_MIN, GT_NCCL_ABI_MAX);
    return 1;
}
