/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net_v12.h — NCCL net plugin ABI v12 (NCCL 2.30.3 …).  Symbol:
 * ncclNetPlugin_v12.
 *
 * v12 over v11: the function table is unchanged; vProps grows to 8 devs
 * (so maxP2pBytes moves to 104) and railId/planeId (int16) are appended.
 */
#ifndef GDRTRACE_NCCL_NET_V12_H
#define GDRTRACE_NCCL_NET_V12_H

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
    ncclNetVDeviceProps_v12_t vProps;
    size_t maxP2pBytes;
    size_t maxCollBytes;
    int maxMultiRequestSize;
    int16_t railId;  /* NCCL_NET_ID_UNDEF when unknown */
    int16_t planeId; /* NCCL_NET_ID_UNDEF when unknown */
} ncclNetProperties_v12_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, ncclNetCommConfig_v12_t *config,
                         ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v12_t *props);
    ncclResult_t (*listen)(void *ctx, int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(void *ctx, int dev, void *handle, void **sendComm,
                            ncclNetDeviceHandle_v12_t **sendDevComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm,
                           ncclNetDeviceHandle_v12_t **recvDevComm);
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
    ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v12_t *props);
    ncclResult_t (*finalize)(void *ctx);
    ncclResult_t (*setNetAttr)(void *ctx, ncclNetAttr_v12_t *netAttr);
} ncclNet_v12_t;

#if defined(__LP64__)
_Static_assert(sizeof(ncclNetProperties_v12_t) == 128, "props v12 size");
_Static_assert(offsetof(ncclNetProperties_v12_t, regIsGlobal) == 28,
               "props v12: regIsGlobal at 28");
_Static_assert(offsetof(ncclNetProperties_v12_t, forceFlush) == 32, "props v12: forceFlush at 32");
_Static_assert(offsetof(ncclNetProperties_v12_t, vProps) == 64, "props v12: vProps at 64");
_Static_assert(sizeof(ncclNet_v12_t) == 22 * sizeof(void *), "ncclNet_v12_t: name + 21 functions");
_Static_assert(offsetof(ncclNet_v12_t, finalize) == 20 * sizeof(void *),
               "ncclNet_v12_t: finalize is member 20");
_Static_assert(offsetof(ncclNetProperties_v12_t, maxP2pBytes) == 104,
               "props v12: maxP2pBytes after the 8-dev vProps");
_Static_assert(offsetof(ncclNetProperties_v12_t, maxMultiRequestSize) == 120,
               "props v12: maxMultiRequestSize at 120");
_Static_assert(offsetof(ncclNetProperties_v12_t, railId) == 124, "props v12: railId at 124");
_Static_assert(offsetof(ncclNetProperties_v12_t, planeId) == 126, "props v12: planeId at 126");
#endif

#endif /* GDRTRACE_NCCL_NET_V12_H */
