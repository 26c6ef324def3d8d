/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net_v6.h — NCCL net plugin ABI v6 (NCCL 2.13.4 … 2.18; probed by NCCL
 * up to HEAD).  Symbol: ncclNetPlugin_v6, an object of type ncclNet_v6_t.
 *
 * v6: int sizes for regMr/isend/irecv, regMrDmaBuf with size_t, init once
 * per process.  Written from nccl-net-abi.md §1.3/§1.4; see types.h.
 */
#ifndef GDRTRACE_NCCL_NET_V6_H
#define GDRTRACE_NCCL_NET_V6_H

#include "nccl/types.h"

typedef struct {
    char *name;
    char *pciPath;
    uint64_t guid;
    int ptrSupport;
    int speed; /* Mbps */
    int port;
    float latency; /* us */
    int maxComms;
    int maxRecvs;
} ncclNetProperties_v6_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v6_t *props);
    ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(int dev, void *handle, void **sendComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm);
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
} ncclNet_v6_t;

#if defined(__LP64__)
_Static_assert(sizeof(ncclNetProperties_v6_t) == 48, "props v6 size");
_Static_assert(offsetof(ncclNetProperties_v6_t, ptrSupport) == 24, "props v6: ptrSupport at 24");
_Static_assert(offsetof(ncclNetProperties_v6_t, speed) == 28, "props v6: speed follows ptrSupport");
_Static_assert(offsetof(ncclNetProperties_v6_t, latency) == 36, "props v6: latency at 36");
_Static_assert(offsetof(ncclNetProperties_v6_t, maxRecvs) == 44, "props v6: maxRecvs last, at 44");
_Static_assert(sizeof(ncclNet_v6_t) == 17 * sizeof(void *), "ncclNet_v6_t: name + 16 functions");
_Static_assert(offsetof(ncclNet_v6_t, regMrDmaBuf) == 8 * sizeof(void *),
               "ncclNet_v6_t: regMrDmaBuf is member 8");
_Static_assert(offsetof(ncclNet_v6_t, closeListen) == 16 * sizeof(void *),
               "ncclNet_v6_t: closeListen is member 16");
#endif

#endif /* GDRTRACE_NCCL_NET_V6_H */
