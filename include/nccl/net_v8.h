/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net_v8.h — NCCL net plugin ABI v8 (NCCL 2.20.3 …).  Symbol:
 * ncclNetPlugin_v8.
 *
 * v8 over v7: regMr takes a size_t size; the properties insert regIsGlobal
 * right after ptrSupport (every later field shifts by 4).  isend/irecv
 * sizes are still int.
 */
#ifndef GDRTRACE_NCCL_NET_V8_H
#define GDRTRACE_NCCL_NET_V8_H

#include "nccl/types.h"

typedef struct {
    char *name;
    char *pciPath;
    uint64_t guid;
    int ptrSupport;
    int regIsGlobal;
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    ncclNetDeviceType netDeviceType;
    int netDeviceVersion;
} ncclNetProperties_v8_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v8_t *props);
    ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
                            ncclNetDeviceHandle_v8_t **sendDevComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm,
                           ncclNetDeviceHandle_v8_t **recvDevComm);
    ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
    ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
                                int fd, void **mhandle);
    ncclResult_t (*deregMr)(void *comm, void *mhandle);
    ncclResult_t (*isend)(void *sendComm, void *data, int size, int tag, void *mhandle,
                          void **request);
    ncclResult_t (*irecv)(void *recvComm, int n, void **data, int *sizes, int *tags,
                          void **mhandles, void **request);
    ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                           void **request);
    ncclResult_t (*test)(void *request, int *done, int *sizes);
    ncclResult_t (*closeSend)(void *sendComm);
    ncclResult_t (*closeRecv)(void *recvComm);
    ncclResult_t (*closeListen)(void *listenComm);
    ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
} ncclNet_v8_t;

#if defined(__LP64__)
_Static_assert(sizeof(ncclNetProperties_v8_t) == 64, "props v8 size");
_Static_assert(offsetof(ncclNetProperties_v8_t, regIsGlobal) == 28,
               "props v8: regIsGlobal right after ptrSupport");
_Static_assert(offsetof(ncclNetProperties_v8_t, speed) == 32, "props v8: speed shifted to 32");
_Static_assert(offsetof(ncclNetProperties_v8_t, netDeviceVersion) == 56,
               "props v8: netDeviceVersion at 56");
_Static_assert(sizeof(ncclNet_v8_t) == 19 * sizeof(void *), "ncclNet_v8_t: name + 18 functions");
#endif

#endif /* GDRTRACE_NCCL_NET_V8_H */
