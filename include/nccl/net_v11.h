/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net_v11.h — NCCL net plugin ABI v11 (NCCL 2.28.3 …).  Symbol:
 * ncclNetPlugin_v11.
 *
 * v11 over v10: init is called once per communicator (ctx, commId, config)
 * and returns a context that listen/connect receive; the config moved from
 * connect into init; finalize(ctx) and setNetAttr(ctx, attr) are appended.
 * The properties append maxMultiRequestSize.
 */
#ifndef GDRTRACE_NCCL_NET_V11_H
#define GDRTRACE_NCCL_NET_V11_H

#include "nccl/types.h"

typedef struct {
    char *name;
    char *pciPath;
    uint64_t guid;
    int ptrSupport;
    int regIsGlobal;
    int forceFlush;
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    ncclNetDeviceType netDeviceType;
    int netDeviceVersion;
    ncclNetVDeviceProps_v11_t vProps;
    size_t maxP2pBytes;
    size_t maxCollBytes;
    int maxMultiRequestSize;
} ncclNetProperties_v11_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, ncclNetCommConfig_v11_t *config,
                         ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v11_t *props);
    ncclResult_t (*listen)(void *ctx, int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(void *ctx, int dev, void *handle, void **sendComm,
                            ncclNetDeviceHandle_v11_t **sendDevComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm,
                           ncclNetDeviceHandle_v11_t **recvDevComm);
    ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
    ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
                                int fd, void **mhandle);
    ncclResult_t (*deregMr)(void *comm, void *mhandle);
    ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                          void *phandle, void **request);
    ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                          void **mhandles, void **phandles, void **request);
    ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                           void **request);
    ncclResult_t (*test)(void *request, int *done, int *sizes);
    ncclResult_t (*closeSend)(void *sendComm);
    ncclResult_t (*closeRecv)(void *recvComm);
    ncclResult_t (*closeListen)(void *listenComm);
    ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
    ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v11_t *props);
    ncclResult_t (*finalize)(void *ctx);
    ncclResult_t (*setNetAttr)(void *ctx, ncclNetAttr_v11_t *netAttr);
} ncclNet_v11_t;

#if defined(__LP64__)
_Static_assert(sizeof(ncclNetProperties_v11_t) == 112, "props v11 size");
_Static_assert(offsetof(ncclNetProperties_v11_t, regIsGlobal) == 28,
               "props v11: regIsGlobal at 28");
_Static_assert(offsetof(ncclNetProperties_v11_t, forceFlush) == 32, "props v11: forceFlush at 32");
_Static_assert(offsetof(ncclNetProperties_v11_t, vProps) == 64, "props v11: vProps at 64");
_Static_assert(sizeof(ncclNet_v11_t) == 22 * sizeof(void *), "ncclNet_v11_t: name + 21 functions");
_Static_assert(offsetof(ncclNet_v11_t, finalize) == 20 * sizeof(void *),
               "ncclNet_v11_t: finalize is member 20");
_Static_assert(offsetof(ncclNetProperties_v11_t, maxP2pBytes) == 88,
               "props v11: maxP2pBytes at 88");
_Static_assert(offsetof(ncclNetProperties_v11_t, maxMultiRequestSize) == 104,
               "props v11: maxMultiRequestSize appended at 104");
#endif

#endif /* GDRTRACE_NCCL_NET_V11_H */
