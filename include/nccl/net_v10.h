/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net_v10.h — NCCL net plugin ABI v10 (NCCL 2.26.2 …).  Symbol:
 * ncclNetPlugin_v10.
 *
 * v10 over v9: init also takes the profiler callback; connect takes a
 * per-communicator config (trafficClass) as its 2nd argument; isend/irecv
 * take profiler phandle(s).  The properties are laid out exactly as v9.
 */
#ifndef GDRTRACE_NCCL_NET_V10_H
#define GDRTRACE_NCCL_NET_V10_H

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
    ncclNetVDeviceProps_v10_t vProps;
    size_t maxP2pBytes;
    size_t maxCollBytes;
} ncclNetProperties_v10_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v10_t *props);
    ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(int dev, ncclNetCommConfig_v10_t *config, void *handle, void **sendComm,
                            ncclNetDeviceHandle_v10_t **sendDevComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm,
                           ncclNetDeviceHandle_v10_t **recvDevComm);
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
    ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v10_t *props);
} ncclNet_v10_t;

#if defined(__LP64__)
_Static_assert(sizeof(ncclNetProperties_v10_t) == 104, "props v10 size (same layout as v9)");
_Static_assert(offsetof(ncclNetProperties_v10_t, forceFlush) == 32, "props v10: forceFlush at 32");
_Static_assert(offsetof(ncclNetProperties_v10_t, vProps) == 64, "props v10: vProps at 64");
_Static_assert(offsetof(ncclNetProperties_v10_t, maxP2pBytes) == 88,
               "props v10: maxP2pBytes at 88");
_Static_assert(sizeof(ncclNet_v10_t) == 20 * sizeof(void *), "ncclNet_v10_t: name + 19 functions");
#endif

#endif /* GDRTRACE_NCCL_NET_V10_H */
