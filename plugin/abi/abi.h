/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi.h — helpers shared by the ncclNetPlugin_vN adapters (abi_vN.c).
 *
 * The adapters are thin: they convert each version's argument types to the
 * v12-shaped gt_net_ops (common/gt_net.h) and back, and reject what an old
 * ABI cannot express.  gt_result equals ncclResult_t numerically, so results
 * pass through unchanged.
 *
 * Threads: NCCL may call init/devices/getProperties from any thread and each
 * comm's data path from one thread at a time; nothing here takes a lock on
 * the data path (gt_core_ops() is one atomic load).
 */
#ifndef GDRTRACE_ABI_H
#define GDRTRACE_ABI_H

#include <pthread.h>

#include "nccl/net.h"
#include "plugin/core.h"
#include "common/gt_net.h"
#include "common/log.h"

#define GT_EXPORT __attribute__((visibility("default")))

/* The most receives one irecv may group (n).  NCCL's own IB transport
 * advertises 8 (NCCL_NET_IB_MAX_RECVS) and no NCCL groups more; we clamp
 * maxRecvs to this so the int-size adapters can convert sizes on the stack. */
#define GT_ABI_MAX_RECVS 8

_Static_assert((int)ncclSuccess == GT_OK && (int)ncclInternalError == GT_INTERNAL_ERROR &&
                   (int)ncclInProgress == GT_IN_PROGRESS,
               "gt_result must equal ncclResult_t so results pass through");
_Static_assert(NCCL_PTR_HOST == GT_PTR_HOST && NCCL_PTR_CUDA == GT_PTR_CUDA &&
                   NCCL_PTR_DMABUF == GT_PTR_DMABUF,
               "pointer types must match NCCL's");
_Static_assert(NCCL_NET_HANDLE_MAXSIZE == GT_NET_HANDLE_MAXSIZE, "handle size must match");
_Static_assert(NCCL_NET_OPTIONAL_RECV_COMPLETION == GT_NET_OPTIONAL_RECV_COMPLETION,
               "optional receive completion flag must match");
_Static_assert(NCCL_MAX_NET_SIZE_BYTES == GT_MAX_NET_SIZE_BYTES, "1 TiB ceiling must match");
_Static_assert(NCCL_NET_MAX_DEVS_PER_NIC_V12 == GT_MAX_DEVS_PER_NIC, "v12 vProps width");

/* gt_result -> ncclResult_t: equal values (asserted above); the cast only
 * tells the compiler the enum change is meant. */
#define GT_R(x) ((ncclResult_t)(x))

/* Once-per-process state of an ABI version <= v10 (NCCL calls its init once
 * per process; a repeated init is answered GT_OK without a new reference). */
struct gt_abi_proc {
    pthread_mutex_t lock;
    int inited;
    void *ctx; /* the transport context every comm of this version uses */
    gt_logger_fn logger;
    gt_profiler_fn profiler;
};
#define GT_ABI_PROC_INIT                                                                           \
    {                                                                                              \
        .lock = PTHREAD_MUTEX_INITIALIZER                                                          \
    }

gt_result gt_abi_proc_init(struct gt_abi_proc *p, int abi, gt_logger_fn logger,
                           gt_profiler_fn profiler);

/* v11+: one reference and one transport context per communicator. */
gt_result gt_abi_comm_init(int abi, void **ctx, uint64_t comm_id,
                           const ncclNetCommConfig_v11_t *config, gt_logger_fn logger,
                           gt_profiler_fn profiler);
gt_result gt_abi_comm_finalize(int abi, void *ctx);

/* Properties as the transport gives them, normalised to what every NCCL
 * validates: netDeviceType HOST, maxP2pBytes/maxCollBytes in (0, 1 TiB],
 * maxRecvs in [1, GT_ABI_MAX_RECVS], at least one vdev (this device). */
gt_result gt_abi_props(int abi, int dev, struct gt_props *p);

/* Size checks of the int-size ABIs.  Return GT_OK or log one WARN naming the
 * call, the ABI and the size, and return GT_INTERNAL_ERROR. */
gt_result gt_abi_check_int_size(int abi, const char *call, long long size,
                                unsigned long long limit);

/* The table in use, or NULL (and a WARN) when NCCL calls before init. */
const struct gt_net_ops *gt_abi_ops(int abi, const char *call);

#define GT_ABI_OPS(abi)                                                                            \
    const struct gt_net_ops *ops = gt_abi_ops((abi), __func__);                                    \
    if (!ops)                                                                                      \
    return (int)GT_INTERNAL_ERROR

/* Fills the fields every version shares, from name to maxRecvs. */
#define GT_ABI_PROPS_BASE(dst, src)                                                                \
    do {                                                                                           \
        (dst)->name = (char *)(src)->name;                                                         \
        (dst)->pciPath = (char *)(src)->pci_path;                                                  \
        (dst)->guid = (src)->guid;                                                                 \
        (dst)->ptrSupport = (src)->ptr_support;                                                    \
        (dst)->speed = (src)->speed_mbps;                                                          \
        (dst)->port = (src)->port;                                                                 \
        (dst)->latency = (src)->latency_us;                                                        \
        (dst)->maxComms = (src)->max_comms;                                                        \
        (dst)->maxRecvs = (src)->max_recvs;                                                        \
    } while (0)

/* The fields v9 … v12 add, from regIsGlobal to maxCollBytes; `width` is the
 * version's vProps.devs capacity. */
#define GT_ABI_PROPS_V9(dst, src, width)                                                           \
    do {                                                                                           \
        (dst)->regIsGlobal = (src)->reg_is_global;                                                 \
        (dst)->forceFlush = (src)->force_flush;                                                    \
        (dst)->netDeviceType = (ncclNetDeviceType)(src)->net_device_type;                          \
        (dst)->netDeviceVersion = (src)->net_device_version;                                       \
        int nv_ = (src)->vdev_count < (width) ? (src)->vdev_count : (width);                       \
        (dst)->vProps.ndevs = nv_;                                                                 \
        for (int i_ = 0; i_ < (width); i_++)                                                       \
            (dst)->vProps.devs[i_] = i_ < nv_ ? (src)->vdevs[i_] : 0;                              \
        (dst)->maxP2pBytes = (src)->max_p2p_bytes;                                                 \
        (dst)->maxCollBytes = (src)->max_coll_bytes;                                               \
    } while (0)

/* irecv of the int-size ABIs (<= v8): check and widen the sizes. */
gt_result gt_abi_irecv_int(int abi, void *comm, int n, void **data, int *sizes, int *tags,
                           void **mhandles, void **request);
/* irecv of the size_t ABIs: checks n only. */
gt_result gt_abi_irecv(int abi, void *comm, int n, void **data, size_t *sizes, int *tags,
                       void **mhandles, void **phandles, void **request);

/* Forwarders for the members whose signature is the same in every version
 * that has them (v6+ unless noted).  They are the table entries themselves. */
ncclResult_t gt_abi_devices(int *ndev);
ncclResult_t gt_abi_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                                  int fd, void **mhandle);
ncclResult_t gt_abi_reg_mr_sz(void *comm, void *data, size_t size, int type,
                              void **mhandle); /* v8+ */
ncclResult_t gt_abi_dereg_mr(void *comm, void *mhandle);
ncclResult_t gt_abi_accept(void *listen_comm, void **recv_comm,
                           ncclNetDeviceHandle_v7_t **recv_dev_comm); /* v7+ */
ncclResult_t gt_abi_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
                           void **request);
ncclResult_t gt_abi_test(void *request, int *done, int *sizes);
ncclResult_t gt_abi_close_send(void *send_comm);
ncclResult_t gt_abi_close_recv(void *recv_comm);
ncclResult_t gt_abi_close_listen(void *listen_comm);
ncclResult_t gt_abi_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle); /* v7+ */
ncclResult_t gt_abi_irecv_consumed(void *recv_comm, int n, void *request);         /* v7+ */
ncclResult_t gt_abi_isend_sz(void *send_comm, void *data, size_t size, int tag, void *mhandle,
                             void *phandle, void **request); /* v10+ */
ncclResult_t gt_abi_irecv_sz(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
                             void **mhandles, void **phandles, void **request); /* v10+ */
ncclResult_t gt_abi_set_net_attr(void *ctx, ncclNetAttr_v11_t *attr);           /* v11+ */

#endif /* GDRTRACE_ABI_H */
