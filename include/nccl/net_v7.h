/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net_v7.h — NCCL net plugin ABI v7 (NCCL 2.19.1 …).  Symbol:
 * ncclNetPlugin_v7.
 *
 * v7 over v6: connect/accept gain a device-handle out-parameter, the
 * properties gain netDeviceType/netDeviceVersion at the end, and
 * getDeviceMr/irecvConsumed are appended.  Sizes are still int.
 */
#ifndef GDRTRACE_NCCL_NET_V7_H
#define GDRTRACE_NCCL_NET_V7_H

#include "nccl/types.h"

typedef struct {
    char *name;
    char *pciPath;
    uint64_t guid;
    int ptrSupport;
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    ncclNetDeviceType netDeviceType;
    int netDeviceVersion;
} ncclNetProperties_v7_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v7_t *props);
    ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
                            ncclNetDeviceHandle_v7_t **sendDevComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm,
                           ncclNetDeviceHandle_v7_t **recvDevComm);
    ncclResult_t (*regMr)(void *comm, void *data, int size, int type, void **mhandle);
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
} ncclNet_v7_t;

#if defined(__LP64__)
_Static_assert(sizeof(ncclNetProperties_v7_t) == 56, "props v7 size");
_Static_assert(offsetof(ncclNetProperties_v7_t, speed) == 28, "props v7: no regIsGlobal yet");
_Static_assert(offsetof(ncclNetProperties_v7_t, netDeviceType) == 48,
               "props v7: netDeviceType appended at 48");
_Static_assert(sizeof(ncclNet_v7_t) == 19 * sizeof(void *), "ncclNet_v7_t: name + 18 functions");
_Static_assert(offsetof(ncclNet_v7_t, irecvConsumed) == 18 * sizeof(void *),
               "ncclNet_v7_t: irecvConsumed is member 18");
#endif

#endif /* GDRTRACE_NCCL_NET_V7_H */
