/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gt_net.h — the one internal network interface of gdrtrace.
 *
 * Every exported ncclNetPlugin_vN (plugin/abi/) is a thin adapter onto this
 * table; every transport (plugin/sock, plugin/ib, plugin/inner) implements it;
 * the recorder shim (shim/) wraps one gt_net_ops into another without changing
 * any result.  It is shaped like NCCL's newest ABI (v12): per-communicator
 * init(ctx, commId, ...), size_t sizes, profiler phandles.
 *
 * Conventions (fixed for every implementation):
 *  - Every member returns a gt_result (numerically identical to ncclResult_t,
 *    so adapters pass it through unchanged).
 *  - Every slot is filled.  A transport without a feature fills the slot with
 *    a function returning GT_INTERNAL_ERROR and says so in a comment; the only
 *    NULLs are in the exported ABI tables where NCCL reads NULL as
 *    "unsupported" (e.g. makeVDevice).
 *  - Registration calls report what they really did through a
 *    struct gt_reg_report (may be NULL when the caller does not care); this is
 *    how the shim learns the method without the transport knowing that a
 *    recorder exists.
 *  - Threads: NCCL calls one comm's data-path functions (isend/irecv/iflush/
 *    test) from one proxy thread at a time; init/devices/getProperties may be
 *    called from any thread.  Implementations must not assume more.
 */
#ifndef GDRTRACE_GT_NET_H
#define GDRTRACE_GT_NET_H

#include <stddef.h>
#include <stdint.h>

/* Codes that reach the recorder (reasons, methods, asked kinds, probe states,
 * GT_PTR_* bits) are defined once, with explicit values, in the format
 * headers. */
#include "gdrtrace/codes.h"

/* Values equal to ncclResult_t (see include/nccl/types.h). */
typedef enum {
    GT_OK = 0,
    GT_UNHANDLED_CUDA_ERROR = 1,
    GT_SYSTEM_ERROR = 2,
    GT_INTERNAL_ERROR = 3,
    GT_INVALID_ARGUMENT = 4,
    GT_INVALID_USAGE = 5,
    GT_REMOTE_ERROR = 6,
    GT_IN_PROGRESS = 7,
} gt_result;

#define GT_NET_HANDLE_MAXSIZE 128
#define GT_NET_MAX_REQUESTS 32
#define GT_NET_OPTIONAL_RECV_COMPLETION 0x1
#define GT_MAX_NET_SIZE_BYTES (1ULL << 40) /* NCCL's ceiling for maxP2pBytes */
#define GT_MAX_DEVS_PER_NIC 8

/* Log levels / subsystems, equal to NCCL's ncclDebugLogLevel / SubSys. */
enum { GT_LOG_NONE = 0, GT_LOG_VERSION = 1, GT_LOG_WARN = 2, GT_LOG_INFO = 3, GT_LOG_TRACE = 5 };
#define GT_LOGSUB_INIT 0x1
#define GT_LOGSUB_NET 0x10
#define GT_LOGSUB_ENV 0x80
#define GT_LOGSUB_ALL (~0UL)

typedef void (*gt_logger_fn)(int level, unsigned long flags, const char *file, int line,
                             const char *fmt, ...);
/* NCCL's profiler callback (v10+): (eHandle, type, phandle, pluginId, extData). */
typedef gt_result (*gt_profiler_fn)(void **eHandle, int type, void *phandle, int64_t pluginId,
                                    void *extData);

/* Device properties, v12-shaped.  Strings are owned by the transport and live
 * until the last finalize. */
struct gt_props {
    const char *name;
    const char *pci_path;
    uint64_t guid;
    int ptr_support; /* GT_PTR_* bits */
    int reg_is_global;
    int force_flush;
    int speed_mbps;
    int port;
    float latency_us;
    int max_comms;
    int max_recvs;
    int net_device_type; /* 0 = HOST */
    int net_device_version;
    int vdev_count;
    int vdevs[GT_MAX_DEVS_PER_NIC];
    size_t max_p2p_bytes;
    size_t max_coll_bytes;
    int max_multi_request_size;
    int16_t rail_id;
    int16_t plane_id;
};

struct gt_comm_config {
    int traffic_class; /* -1 = undefined */
};

/* Filled by reg_mr / reg_mr_dmabuf.  Transports set every field they know;
 * the caller zeroes it first. */
struct gt_reg_report {
    int asked;            /* enum gt_reg_asked */
    int method;           /* enum gt_reg_method */
    int fell_back;        /* 1 if DMA-BUF was tried and another method used */
    int reason;           /* enum gt_reason: why fallback/failure (NONE on the plain path) */
    int err;              /* errno of the failed step, 0 if none */
    int exported_fd;      /* 1 if the plugin exported the dma-buf fd itself (CUDA) */
    int cache_hit;        /* 1 if served from the MR cache */
};

/* Per-device probe results, filled by get_probe.  Recorded at init. */
struct gt_dev_probe {
    int dmabuf;          /* enum gt_probe_state: ibv_reg_dmabuf_mr(fd=-1) probe */
    int dmabuf_errno;    /* errno the probe returned */
    int peermem;         /* enum gt_probe_state: nvidia_peermem present */
    int cuda_dmabuf;     /* enum gt_probe_state: CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */
    int advertised;      /* ptrSupport given to NCCL */
    char why[128];       /* one line: why that ptrSupport */
};

struct gt_net_ops {
    const char *name;
    /* Called once per communicator (v11+) or once per process (older ABIs,
     * comm_id = 0 and has_comm_id = 0).  Returns a context for listen/connect
     * and finalize. */
    gt_result (*init)(void **ctx, uint64_t comm_id, int has_comm_id,
                      const struct gt_comm_config *config, gt_logger_fn logger,
                      gt_profiler_fn profiler);
    gt_result (*devices)(int *ndev);
    gt_result (*get_properties)(int dev, struct gt_props *props);
    gt_result (*listen)(void *ctx, int dev, void *handle, void **listen_comm);
    /* *send_comm == NULL with GT_OK means "not yet, call again". */
    gt_result (*connect)(void *ctx, int dev, void *handle, void **send_comm, void **send_dev_comm);
    /* *recv_comm == NULL with GT_OK means "not yet, call again". */
    gt_result (*accept)(void *listen_comm, void **recv_comm, void **recv_dev_comm);
    gt_result (*reg_mr)(void *comm, void *data, size_t size, int type, void **mhandle,
                        struct gt_reg_report *report);
    gt_result (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
                               int fd, void **mhandle, struct gt_reg_report *report);
    gt_result (*dereg_mr)(void *comm, void *mhandle);
    /* *request == NULL with GT_OK means "no slot now, call again". */
    gt_result (*isend)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
                       void *phandle, void **request);
    gt_result (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
                       void **mhandles, void **phandles, void **request);
    gt_result (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
                        void **request);
    /* sizes: received sizes per sub-request when done (may be NULL). */
    gt_result (*test)(void *request, int *done, int *sizes);
    gt_result (*close_send)(void *send_comm);
    gt_result (*close_recv)(void *recv_comm);
    gt_result (*close_listen)(void *listen_comm);
    gt_result (*get_device_mr)(void *comm, void *mhandle, void **dptr_mhandle);
    gt_result (*irecv_consumed)(void *recv_comm, int n, void *request);
    gt_result (*finalize)(void *ctx);
    gt_result (*set_net_attr)(void *ctx, void *net_attr);
    /* gdrtrace's own: what the device's probes found (for the recorder). */
    gt_result (*get_probe)(int dev, struct gt_dev_probe *probe);
};

#endif /* GDRTRACE_GT_NET_H */
