/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net_v9.h — NCCL net plugin ABI v9 (NCCL 2.24.3 …).  Symbol:
 * ncclNetPlugin_v9.
 *
 * v9 over v8: isend takes size_t, irecv takes size_t sizes (iflush and
 * test keep int*); makeVDevice appended (may be NULL); the properties
 * insert forceFlush after regIsGlobal and append vProps (4 devs),
 * maxP2pBytes and maxCollBytes.
 */
#ifndef GDRTRACE_NCCL_NET_V9_H
#define GDRTRACE_NCCL_NET_V9_H

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
    ncclNetVDeviceProps_v9_t vProps;
    size_t maxP2pBytes;
    size_t maxCollBytes;
} ncclNetProperties_v9_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v9_t *props);
    ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
                            ncclNetDeviceHandle_v9_t **sendDevComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm,
                           ncclNetDeviceHandle_v9_t **recvDevComm);
    ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
    ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
                                int fd, void **mhandle);
    ncclResult_t (*deregMr)(void *comm, void *mhandle);
    ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                          void **request);
    ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                          void **mhandles, void **request);
    ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                           void **request);
    ncclResult_t (*test)(void *request, int *done, int *sizes);
    ncclResult_t (*closeSend)(void *sendComm);
    ncclResult_t (*closeRecv)(void *recvComm);
    ncclResult_t (*closeListen)(void *listenComm);
    ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
    ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v9_t *props);
} ncclNet_v9_t;

#if defined(__LP64__)
_Static_assert(sizeof(ncclNetProperties_v9_t) == 104, "props v9 size");
_Static_assert(offsetof(ncclNetProperties_v9_t, regIsGlobal) == 28, "props v9: regIsGlobal at 28");
_Static_assert(offsetof(ncclNetProperties_v9_t, forceFlush) == 32,
               "props v9: forceFlush right after regIsGlobal");
_Static_assert(offsetof(ncclNetProperties_v9_t, speed) == 36, "props v9: speed at 36");
_Static_assert(offsetof(ncclNetProperties_v9_t, vProps) == 64, "props v9: vProps at 64");
_Static_assert(offsetof(ncclNetProperties_v9_t, maxP2pBytes) == 88,
               "props v9: maxP2pBytes 8-aligned after vProps");
_Static_assert(offsetof(ncclNetProperties_v9_t, maxCollBytes) == 96,
               "props v9: maxCollBytes at 96");
_Static_assert(sizeof(ncclNet_v9_t) == 20 * sizeof(void *), "ncclNet_v9_t: name + 19 functions");
_Static_assert(offsetof(ncclNet_v9_t, makeVDevice) == 19 * sizeof(void *),
               "ncclNet_v9_t: makeVDevice is member 19");
#endif

#endif /* GDRTRACE_NCCL_NET_V9_H */
