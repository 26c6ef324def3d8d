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
 *  - Every slot is filled (tests/unit/test_net_ops.c checks sock, ib, inner
 *    and the shim).  A transport without a feature fills the slot with a
 *    function that fails under the failure rule below and says so in a
 *    comment; the only NULLs are in the exported ABI tables where NCCL reads
 *    NULL as "unsupported" (e.g. makeVDevice).
 *  - Registration calls report what they really did through a
 *    struct gt_reg_report (may be NULL when the caller does not care); this is
 *    how the shim learns the method without the transport knowing that a
 *    recorder exists.
 *  - Threads: NCCL calls one comm's data-path functions (isend/irecv/iflush/
 *    test) from one proxy thread at a time; init/devices/getProperties may be
 *    called from any thread.  Implementations must not assume more.
 *
 * Failures: the one rule for how a failed call's reason and errno travel.
 *  F1. A call that returns anything but GT_OK has, on the calling thread and
 *      just before returning, described why with gt_net_fail(result, reason,
 *      errno, text): reason an enum gt_reason, errno that of the system or
 *      verbs call that failed (0 when none did: a protocol error, a bad
 *      argument, a wrapped plugin that does not say), text one line in the
 *      transport's words ("ib: no active RDMA port: ...").  A call that
 *      returns GT_OK describes nothing.
 *  F2. errno after a gt_net call means nothing: no implementation promises
 *      it, and no caller reads it.
 *  F3. The caller reads the description with gt_net_failure_since(mark),
 *      mark = gt_net_fail_mark() taken before the call: it yields the
 *      callee's record, or, when the callee broke F1, reason
 *      GT_REASON_TRANSPORT_ERROR with errno 0, never a record of an earlier
 *      call.  The shim records it for every failed call; plugin/core
 *      explains a transport that fails init() or devices() with its text.
 *  F4. A comm that failed for good (peer gone, work-completion error) keeps
 *      failing: each later call on it returns the error and describes it
 *      again (F1), so every recorded failure carries the original reason.
 *  F5. Registration failures follow F1 too; gt_reg_report's reason/err say
 *      why a successful registration fell back (fell_back = 1).
 *
 * Lifetimes: who may use which object until when.  "Dies" means the handle
 * may not be passed to any call afterwards; the transport may keep (and
 * reuse) the storage.  Derived from what NCCL does (src/transport/net.cc's
 * proxy connect/free paths, net_ib and net_socket) and held by sock, ib,
 * inner and the shim.
 *
 *  object         born                          dies
 *  -------------  ----------------------------  ---------------------------------------------
 *  ctx            init() returns GT_OK          finalize(ctx).  Every comm made from it is
 *                                               closed first (NCCL frees its connections
 *                                               before finalizing the communicator); comms
 *                                               never reach back into their ctx.  Before v11
 *                                               (has_comm_id = 0) NCCL inits once, never
 *                                               finalizes: plugin/core holds that ctx.
 *  listen comm    listen() returns GT_OK        close_listen().  Comms accept() returned
 *                                               outlive it: NCCL closes the listen comm right
 *                                               after its accept() completes.  A setup still
 *                                               under way dies with it.
 *  send comm      connect() sets *send_comm     close_send()
 *  recv comm      accept() sets *recv_comm      close_recv()
 *  half-made      connect()/accept() returned   the next connect()/accept() call that
 *  comm           GT_OK with NULL ("not yet")   completes or fails it, or close_listen()
 *                                               (accept) / finalize of the last ctx (connect)
 *  mhandle        reg_mr*() returns GT_OK       dereg_mr(comm, mh), which NCCL calls before
 *                                               it closes that comm and never while a request
 *                                               using mh is in flight.  dereg_mr after the
 *                                               comm's close is a caller error.
 *  request        isend/irecv/iflush set a      test() sets *done = 1; for a recv comm with a
 *                 non-NULL *request             device handle, irecv_consumed() instead.  Also
 *                                               dies when test() returns an error (NCCL does
 *                                               not test it again; the comm is failed, F4)
 *                                               and at its comm's close.  A call that returns
 *                                               an error or a NULL *request made none.
 *
 *  Close with requests in flight: close_send/close_recv may be called with
 *  requests outstanding (NCCL's abort path).  Close then returns GT_OK
 *  without waiting for the peer (bounded time, no blocking I/O), drops the
 *  data in flight, and every outstanding request dies with the comm.  The
 *  peer sees the connection end and fails its own requests (F4).
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
    int asked;       /* enum gt_reg_asked */
    int method;      /* enum gt_reg_method */
    int fell_back;   /* 1 if DMA-BUF was tried and another method used */
    int reason;      /* enum gt_reason: why fallback/failure (NONE on the plain path) */
    int err;         /* errno of the failed step, 0 if none */
    int exported_fd; /* 1 if the plugin exported the dma-buf fd itself (CUDA) */
    int cache_hit;   /* 1 if served from the MR cache */
};

/* Per-device probe results, filled by get_probe.  Recorded at init. */
struct gt_dev_probe {
    int dmabuf;       /* enum gt_probe_state: ibv_reg_dmabuf_mr(fd=-1) probe */
    int dmabuf_errno; /* errno the probe returned */
    int peermem;      /* enum gt_probe_state: nvidia_peermem present */
    int cuda_dmabuf;  /* enum gt_probe_state: CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */
    int advertised;   /* ptrSupport given to NCCL */
    char why[128];    /* one line: why that ptrSupport */
};

/* The calling thread's description of a failed call (see "Failures"). */
struct gt_net_failure {
    int reason;     /* enum gt_reason */
    int err;        /* errno of the failed step; 0 when no system call failed */
    char text[128]; /* one line, in the transport's words */
};

/* F1: describe the failure this call is about to return; returns `res`, so
 * `return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_..., e, "...")` is one
 * statement.  Never fails, allocates nothing, logs nothing. */
gt_result gt_net_fail(gt_result res, int reason, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* F3: a mark taken before a call (one thread-local load: fit for the data
 * path), and the description of that call's failure, read once after it
 * returned an error.  Returns 1 when the callee described it, 0 when not
 * (then *out is reason GT_REASON_TRANSPORT_ERROR, err 0).  Both concern the
 * calling thread only. */
extern __thread uint32_t gt_net_fail_seq __attribute__((tls_model("initial-exec")));
static inline uint32_t gt_net_fail_mark(void)
{
    return gt_net_fail_seq;
}
int gt_net_failure_since(uint32_t mark, struct gt_net_failure *out);

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
