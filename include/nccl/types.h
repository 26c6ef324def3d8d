/* SPDX-License-Identifier: Apache-2.0 */
/*
 * types.h — the pieces of NCCL's net plugin ABI shared by every version:
 * ncclResult_t, the logger, pointer types, size limits, the device offload
 * handle, the profiler callback, the per-communicator config and net attrs.
 *
 * Written by gdrtrace from the facts in nccl-net-abi.md (release sources
 * v2.13.4 … v2.30.7); no NCCL header text is copied.  Names follow NCCL so
 * that a reader can hold this file against NCCL's documentation.
 *
 * Invariants: every type here crosses the plugin boundary by value or by
 * pointer, so its size and member offsets are fixed by NCCL; the
 * _Static_asserts at the bottom pin them on LP64 (the only data model NCCL
 * ships for).  Never reorder or insert members.
 */
#ifndef GDRTRACE_NCCL_TYPES_H
#define GDRTRACE_NCCL_TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7, /* public nccl.h since 2.14 */
} ncclResult_t;

typedef enum {
    NCCL_LOG_NONE = 0,
    NCCL_LOG_VERSION = 1,
    NCCL_LOG_WARN = 2,
    NCCL_LOG_INFO = 3,
    NCCL_LOG_ABORT = 4,
    NCCL_LOG_TRACE = 5,
} ncclDebugLogLevel;

/* Subsystem bit flags passed as the logger's `flags`. */
typedef enum {
    NCCL_INIT = 0x1,
    NCCL_COLL = 0x2,
    NCCL_P2P = 0x4,
    NCCL_SHM = 0x8,
    NCCL_NET = 0x10,
    NCCL_GRAPH = 0x20,
    NCCL_TUNING = 0x40,
    NCCL_ENV = 0x80,
    NCCL_ALLOC = 0x100,
    NCCL_CALL = 0x200,
    NCCL_PROXY = 0x400,
    NCCL_NVLS = 0x800,
    NCCL_BOOTSTRAP = 0x1000,
    NCCL_REG = 0x2000,
    NCCL_PROFILE = 0x4000,
    NCCL_RAS = 0x8000,
    NCCL_DESTROY = 0x10000,
    NCCL_ALLOC_HOST = 0x20000,
} ncclDebugLogSubSys;
#define NCCL_ALL (~0UL)

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file,
                                  int line, const char *fmt, ...);

/* Pointer types (ptrSupport bits and regMr's `type`). */
#define NCCL_PTR_HOST 0x1
#define NCCL_PTR_CUDA 0x2
#define NCCL_PTR_DMABUF 0x4

#define NCCL_NET_HANDLE_MAXSIZE 128
/* Requests a comm must accept in flight: 8 up to NCCL 2.18 (ABI v6),
 * 32 from 2.19 (ABI v7+).  The send side multiplies this by maxRecvs. */
#define NCCL_NET_MAX_REQUESTS_V6 8
#define NCCL_NET_MAX_REQUESTS 32
/* NCCL pre-sets *request to this in irecv (LL/LL128): the plugin may skip
 * reporting the data's arrival precisely. */
#define NCCL_NET_OPTIONAL_RECV_COMPLETION 0x1
/* Ceiling NCCL accepts for maxP2pBytes / maxCollBytes (1 TiB). */
#define NCCL_MAX_NET_SIZE_BYTES (1ULL << 40)
/* What NCCL's compat layers use for int-size ABIs (<= v8): 1 GiB p2p,
 * 512 MiB collnet. */
#define NCCL_MAX_NET_SIZE_V8 (1ULL << 30)
#define NCCL_MAX_COLLNET_SIZE_V8 (1ULL << 29)
#define NCCL_NET_ID_UNDEF (-1)
#define NCCL_NET_TRAFFIC_CLASS_UNDEF (-1)

/* Device offload (v7+).  Only HOST is meaningful for gdrtrace. */
typedef enum {
    NCCL_NET_DEVICE_HOST = 0,
    NCCL_NET_DEVICE_UNPACK = 1,
} ncclNetDeviceType;
#define NCCL_NET_DEVICE_INVALID_VERSION 0x0
#define NCCL_NET_DEVICE_UNPACK_VERSION 0x7
#define NCCL_NET_MTU_SIZE 4096

typedef struct {
    ncclNetDeviceType netDeviceType;
    int netDeviceVersion;
    void *handle;
    size_t size;
    int needsProxyProgress;
} ncclNetDeviceHandle_v7_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v8_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v9_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v10_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v11_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v12_t;

/* Profiler callback handed to init (v10+).  type: 0 start, 1 stop,
 * 2 update, 3 update-and-stop. */
typedef ncclResult_t (*ncclProfilerCallback_t)(void **eHandle, int type, void *phandle,
                                               int64_t pluginId, void *extData);
enum {
    ncclProfilerNetEventStart = 0,
    ncclProfilerNetEventStop = 1,
    ncclProfilerNetEventUpdate = 2,
    ncclProfilerNetEventUpdateAndStop = 3,
};

/* Per-communicator config: an argument of connect in v10, of init in v11+. */
typedef struct {
    int trafficClass; /* NCCL_NET_TRAFFIC_CLASS_UNDEF when unset */
} ncclNetCommConfig_v10_t;
typedef ncclNetCommConfig_v10_t ncclNetCommConfig_v11_t;
typedef ncclNetCommConfig_v10_t ncclNetCommConfig_v12_t;

/* setNetAttr (v11+). */
typedef struct {
    int32_t maxConcurrentPeers;
    int32_t minConcurrentPeers;
    int32_t maxFlowsPerPeer;
    int32_t minFlowsPerPeer;
} ncclNetCommAttr_v11_t;
typedef struct {
    ncclNetCommAttr_v11_t sendCommAttr;
    ncclNetCommAttr_v11_t recvCommAttr;
    uint32_t op;
    uint32_t algo;
    uint32_t proto;
} ncclNetAttr_v11_t;
typedef ncclNetCommAttr_v11_t ncclNetCommAttr_v12_t;
typedef ncclNetAttr_v11_t ncclNetAttr_v12_t;

/* Virtual (fused) NIC description: 4 members up to v11, 8 in v12. */
#define NCCL_NET_MAX_DEVS_PER_NIC_V9 4
#define NCCL_NET_MAX_DEVS_PER_NIC_V11 4
#define NCCL_NET_MAX_DEVS_PER_NIC_V12 8
typedef struct {
    int ndevs;
    int devs[NCCL_NET_MAX_DEVS_PER_NIC_V9];
} ncclNetVDeviceProps_v9_t;
typedef ncclNetVDeviceProps_v9_t ncclNetVDeviceProps_v10_t;
typedef ncclNetVDeviceProps_v9_t ncclNetVDeviceProps_v11_t;
typedef struct {
    int ndevs;
    int devs[NCCL_NET_MAX_DEVS_PER_NIC_V12];
} ncclNetVDeviceProps_v12_t;

/* Layout pins (LP64). */
#if defined(__LP64__)
_Static_assert(sizeof(ncclResult_t) == 4, "ncclResult_t is an int-sized enum");
_Static_assert(sizeof(ncclNetDeviceHandle_v7_t) == 32, "device handle: 2 ints, ptr, size_t, int");
_Static_assert(offsetof(ncclNetDeviceHandle_v7_t, handle) == 8, "device handle: handle at 8");
_Static_assert(offsetof(ncclNetDeviceHandle_v7_t, size) == 16, "device handle: size at 16");
_Static_assert(offsetof(ncclNetDeviceHandle_v7_t, needsProxyProgress) == 24,
               "device handle: needsProxyProgress at 24");
_Static_assert(sizeof(ncclNetCommConfig_v10_t) == 4, "comm config is one int");
_Static_assert(sizeof(ncclNetAttr_v11_t) == 44, "net attr: 2x4 int32 + 3 uint32");
_Static_assert(offsetof(ncclNetAttr_v11_t, recvCommAttr) == 16, "net attr: recvCommAttr at 16");
_Static_assert(offsetof(ncclNetAttr_v11_t, proto) == 40, "net attr: proto at 40");
_Static_assert(sizeof(ncclNetVDeviceProps_v9_t) == 20, "vProps v9: ndevs + 4 devs");
_Static_assert(sizeof(ncclNetVDeviceProps_v12_t) == 36, "vProps v12: ndevs + 8 devs");
#endif

#endif /* GDRTRACE_NCCL_TYPES_H */
