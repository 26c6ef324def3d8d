/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi_v9.c — ncclNetPlugin_v9 (NCCL 2.24.3 …): adapter onto gt_net_ops.
 *
 * Init once per process.  Sizes are size_t from here on (iflush/test keep
 * int* as in every version).  The properties gain forceFlush, vProps (4
 * devs), maxP2pBytes and maxCollBytes.  No profiler handles yet.
 */
#include "plugin/abi/abi.h"

#define ABI 9

static struct gt_abi_proc proc = GT_ABI_PROC_INIT;

static ncclResult_t v9_init(ncclDebugLogger_t logger)
{
    return GT_R(gt_abi_proc_init(&proc, ABI, (gt_logger_fn)logger, NULL));
}

static ncclResult_t v9_get_properties(int dev, ncclNetProperties_v9_t *props)
{
    struct gt_props p;
    gt_result rc = gt_abi_props(ABI, dev, &p);
    if (rc != GT_OK)
        return GT_R(rc);
    GT_ABI_PROPS_BASE(props, &p);
    GT_ABI_PROPS_V9(props, &p, NCCL_NET_MAX_DEVS_PER_NIC_V9);
    return ncclSuccess;
}

static ncclResult_t v9_listen(int dev, void *handle, void **listen_comm)
{
    GT_ABI_OPS(ABI);
    return GT_R(ops->listen(proc.ctx, dev, handle, listen_comm));
}

static ncclResult_t v9_connect(int dev, void *handle, void **send_comm,
                               ncclNetDeviceHandle_v9_t **send_dev_comm)
{
    GT_ABI_OPS(ABI);
    void *unused = NULL; /* NCCL always passes one; a NULL is tolerated */
    return GT_R(ops->connect(proc.ctx, dev, handle, send_comm,
                             send_dev_comm ? (void **)send_dev_comm : &unused));
}

static ncclResult_t v9_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
                             void **request)
{
    GT_ABI_OPS(ABI);
    return GT_R(ops->isend(send_comm, data, size, tag, mhandle, NULL, request));
}

static ncclResult_t v9_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
                             void **mhandles, void **request)
{
    return GT_R(gt_abi_irecv(ABI, recv_comm, n, data, sizes, tags, mhandles, NULL, request));
}

GT_EXPORT const ncclNet_v9_t ncclNetPlugin_v9 = {
    .name = "gdrtrace",
    .init = v9_init,
    .devices = gt_abi_devices,
    .getProperties = v9_get_properties,
    .listen = v9_listen,
    .connect = v9_connect,
    .accept = gt_abi_accept,
    .regMr = gt_abi_reg_mr_sz,
    .regMrDmaBuf = gt_abi_reg_mr_dmabuf,
    .deregMr = gt_abi_dereg_mr,
    .isend = v9_isend,
    .irecv = v9_irecv,
    .iflush = gt_abi_iflush,
    .test = gt_abi_test,
    .closeSend = gt_abi_close_send,
    .closeRecv = gt_abi_close_recv,
    .closeListen = gt_abi_close_listen,
    .getDeviceMr = gt_abi_get_device_mr,
    .irecvConsumed = gt_abi_irecv_consumed,
    /* NULL on purpose: NCCL reads a NULL makeVDevice as "NIC fusion not
     * supported" and keeps one physical device per NCCL device. */
    .makeVDevice = NULL,
};
