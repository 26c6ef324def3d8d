/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi_common.c — what the ncclNetPlugin_vN adapters share: init bookkeeping
 * (once per process for <= v10, per communicator for v11+), property
 * normalisation and the int-size checks.  See abi.h.
 */
#include "plugin/abi/abi.h"

#include <string.h>

const struct gt_net_ops *gt_abi_ops(int abi, const char *call)
{
    const struct gt_net_ops *ops = gt_core_ops();
    if (!ops) {
        if (abi)
            GT_WARN("%s called before init (ABI v%d); refusing", call, abi);
        else
            GT_WARN("%s called before init; refusing", call);
    }
    return ops;
}

gt_result gt_abi_proc_init(struct gt_abi_proc *p, int abi, gt_logger_fn logger,
                           gt_profiler_fn profiler)
{
    const struct gt_net_ops *ops;
    gt_result rc = GT_OK;
    pthread_mutex_lock(&p->lock);
    if (p->inited) {
        /* NCCL <= 2.27 inits once per process; a second call (another NCCL
         * instance in the process) shares the first one's context. */
        gt_log_set_logger(logger);
        goto out;
    }
    rc = gt_core_acquire(abi, logger, profiler, &ops);
    if (rc != GT_OK)
        goto out;
    rc = ops->init(&p->ctx, 0, 0, NULL, logger, profiler);
    if (rc != GT_OK) {
        GT_WARN("ABI v%d init: transport %s init failed (error %d)", abi, ops->name, (int)rc);
        goto err_core;
    }
    p->logger = logger;
    p->profiler = profiler;
    p->inited = 1;
    goto out;
err_core:
    gt_core_release();
out:
    pthread_mutex_unlock(&p->lock);
    return rc;
}

gt_result gt_abi_comm_init(int abi, void **ctx, uint64_t comm_id,
                           const ncclNetCommConfig_v11_t *config, gt_logger_fn logger,
                           gt_profiler_fn profiler)
{
    const struct gt_net_ops *ops;
    if (!ctx) {
        GT_WARN("ABI v%d init: ctx is NULL", abi);
        return GT_INVALID_ARGUMENT;
    }
    *ctx = NULL;
    gt_result rc = gt_core_acquire(abi, logger, profiler, &ops);
    if (rc != GT_OK)
        return rc;
    struct gt_comm_config cfg = {.traffic_class =
                                     config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF};
    rc = ops->init(ctx, comm_id, 1, &cfg, logger, profiler);
    if (rc != GT_OK) {
        GT_WARN("ABI v%d init of comm 0x%llx: transport %s init failed (error %d)", abi,
                (unsigned long long)comm_id, ops->name, (int)rc);
        gt_core_release();
        *ctx = NULL;
    }
    return rc;
}

gt_result gt_abi_comm_finalize(int abi, void *ctx)
{
    const struct gt_net_ops *ops = gt_abi_ops(abi, "finalize");
    if (!ops)
        return GT_INTERNAL_ERROR;
    if (gt_core_refs() == 0) {
        /* ctx cannot be one of ours: never hand it to the transport. */
        GT_WARN("ABI v%d finalize called with no communicator initialised; ignored", abi);
        return GT_INTERNAL_ERROR;
    }
    gt_result rc = ops->finalize(ctx);
    if (rc != GT_OK)
        GT_WARN("ABI v%d finalize: transport %s finalize failed (error %d)", abi, ops->name,
                (int)rc);
    /* The reference goes even when the transport complained: NCCL will not
     * call finalize for this ctx again. */
    gt_core_release();
    return rc;
}

gt_result gt_abi_props(int abi, int dev, struct gt_props *p)
{
    const struct gt_net_ops *ops = gt_abi_ops(abi, "getProperties");
    if (!ops)
        return GT_INTERNAL_ERROR;
    /* Defaults for what a transport may leave alone. */
    memset(p, 0, sizeof(*p));
    p->max_recvs = 1;
    p->max_comms = 1;
    p->max_multi_request_size = 1;
    p->rail_id = NCCL_NET_ID_UNDEF;
    p->plane_id = NCCL_NET_ID_UNDEF;
    gt_result rc = ops->get_properties(dev, p);
    if (rc != GT_OK)
        return rc;
    if (!p->name)
        p->name = "unknown"; /* NCCL prints it with %s */
    if (p->net_device_type != NCCL_NET_DEVICE_HOST) {
        /* NCCL rejects any offload type but UNPACK v7, and gdrtrace offers
         * no device-side networking: the data path is the proxy's. */
        GT_INFO(GT_LOGSUB_NET, "device %d: transport reported device type %d; reporting HOST", dev,
                p->net_device_type);
        p->net_device_type = NCCL_NET_DEVICE_HOST;
    }
    p->net_device_version = NCCL_NET_DEVICE_INVALID_VERSION;
    /* NCCL rejects maxP2pBytes outside (0, 1 TiB]: 0 means "no own limit". */
    if (p->max_p2p_bytes == 0 || p->max_p2p_bytes > GT_MAX_NET_SIZE_BYTES)
        p->max_p2p_bytes = GT_MAX_NET_SIZE_BYTES;
    if (p->max_coll_bytes == 0 || p->max_coll_bytes > GT_MAX_NET_SIZE_BYTES)
        p->max_coll_bytes = GT_MAX_NET_SIZE_BYTES;
    if (p->max_recvs < 1)
        p->max_recvs = 1;
    if (p->max_recvs > GT_ABI_MAX_RECVS)
        p->max_recvs = GT_ABI_MAX_RECVS;
    if (p->max_comms < 1)
        p->max_comms = 1;
    if (p->vdev_count < 1) {
        p->vdev_count = 1;
        p->vdevs[0] = dev;
    }
    if (p->vdev_count > GT_MAX_DEVS_PER_NIC)
        p->vdev_count = GT_MAX_DEVS_PER_NIC;
    if (p->max_multi_request_size < 1)
        p->max_multi_request_size = 1;
    if (p->rail_id < NCCL_NET_ID_UNDEF)
        p->rail_id = NCCL_NET_ID_UNDEF;
    if (p->plane_id < NCCL_NET_ID_UNDEF)
        p->plane_id = NCCL_NET_ID_UNDEF;
    (void)abi;
    return GT_OK;
}

gt_result gt_abi_check_int_size(int abi, const char *call, long long size, unsigned long long limit)
{
    if (size < 0) {
        GT_WARN("%s: size %lld is negative (ABI v%d passes sizes as int); refusing", call, size,
                abi);
        return GT_INTERNAL_ERROR;
    }
    if ((unsigned long long)size > limit) {
        GT_WARN("%s: size %lld bytes exceeds ABI v%d's limit of %llu bytes; refusing", call, size,
                abi, limit);
        return GT_INTERNAL_ERROR;
    }
    return GT_OK;
}

static gt_result check_n(int abi, int n)
{
    if (n < 1 || n > GT_ABI_MAX_RECVS) {
        GT_WARN("irecv: n = %d receives, outside [1, %d] (ABI v%d); refusing", n, GT_ABI_MAX_RECVS,
                abi);
        return GT_INTERNAL_ERROR;
    }
    return GT_OK;
}

gt_result gt_abi_irecv_int(int abi, void *comm, int n, void **data, int *sizes, int *tags,
                           void **mhandles, void **request)
{
    GT_ABI_OPS(abi);
    size_t wide[GT_ABI_MAX_RECVS];
    if (check_n(abi, n) != GT_OK)
        return GT_INTERNAL_ERROR;
    for (int i = 0; i < n; i++) {
        if (gt_abi_check_int_size(abi, "irecv", sizes[i], NCCL_MAX_NET_SIZE_V8) != GT_OK)
            return GT_INTERNAL_ERROR;
        wide[i] = (size_t)sizes[i];
    }
    return ops->irecv(comm, n, data, wide, tags, mhandles, NULL, request);
}

gt_result gt_abi_irecv(int abi, void *comm, int n, void **data, size_t *sizes, int *tags,
                       void **mhandles, void **phandles, void **request)
{
    GT_ABI_OPS(abi);
    if (check_n(abi, n) != GT_OK)
        return GT_INTERNAL_ERROR;
    return ops->irecv(comm, n, data, sizes, tags, mhandles, phandles, request);
}

/* ---- forwarders shared by every version that has the member ----
 * A shared table entry does not know which version NCCL uses: abi 0. */

ncclResult_t gt_abi_devices(int *ndev)
{
    GT_ABI_OPS(0);
    return GT_R(ops->devices(ndev));
}

ncclResult_t gt_abi_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                                  int fd, void **mhandle)
{
    GT_ABI_OPS(0);
    return GT_R(ops->reg_mr_dmabuf(comm, data, size, type, offset, fd, mhandle, NULL));
}

ncclResult_t gt_abi_reg_mr_sz(void *comm, void *data, size_t size, int type, void **mhandle)
{
    GT_ABI_OPS(0);
    return GT_R(ops->reg_mr(comm, data, size, type, mhandle, NULL));
}

ncclResult_t gt_abi_dereg_mr(void *comm, void *mhandle)
{
    GT_ABI_OPS(0);
    return GT_R(ops->dereg_mr(comm, mhandle));
}

ncclResult_t gt_abi_accept(void *listen_comm, void **recv_comm,
                           ncclNetDeviceHandle_v7_t **recv_dev_comm)
{
    GT_ABI_OPS(0);
    void *unused = NULL; /* NCCL always passes one; a NULL is tolerated */
    return GT_R(
        ops->accept(listen_comm, recv_comm, recv_dev_comm ? (void **)recv_dev_comm : &unused));
}

ncclResult_t gt_abi_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
                           void **request)
{
    GT_ABI_OPS(0);
    return GT_R(ops->iflush(recv_comm, n, data, sizes, mhandles, request));
}

ncclResult_t gt_abi_test(void *request, int *done, int *sizes)
{
    GT_ABI_OPS(0);
    return GT_R(ops->test(request, done, sizes));
}

ncclResult_t gt_abi_close_send(void *send_comm)
{
    GT_ABI_OPS(0);
    return GT_R(ops->close_send(send_comm));
}

ncclResult_t gt_abi_close_recv(void *recv_comm)
{
    GT_ABI_OPS(0);
    return GT_R(ops->close_recv(recv_comm));
}

ncclResult_t gt_abi_close_listen(void *listen_comm)
{
    GT_ABI_OPS(0);
    return GT_R(ops->close_listen(listen_comm));
}

ncclResult_t gt_abi_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle)
{
    GT_ABI_OPS(0);
    return GT_R(ops->get_device_mr(comm, mhandle, dptr_mhandle));
}

ncclResult_t gt_abi_irecv_consumed(void *recv_comm, int n, void *request)
{
    GT_ABI_OPS(0);
    return GT_R(ops->irecv_consumed(recv_comm, n, request));
}

ncclResult_t gt_abi_isend_sz(void *send_comm, void *data, size_t size, int tag, void *mhandle,
                             void *phandle, void **request)
{
    GT_ABI_OPS(0);
    return GT_R(ops->isend(send_comm, data, size, tag, mhandle, phandle, request));
}

ncclResult_t gt_abi_irecv_sz(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
                             void **mhandles, void **phandles, void **request)
{
    return GT_R(gt_abi_irecv(0, recv_comm, n, data, sizes, tags, mhandles, phandles, request));
}

ncclResult_t gt_abi_set_net_attr(void *ctx, ncclNetAttr_v11_t *attr)
{
    GT_ABI_OPS(0);
    return GT_R(ops->set_net_attr(ctx, attr));
}
