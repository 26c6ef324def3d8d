/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi_v7.c — ncclNetPlugin_v7 (NCCL 2.19.1 …): adapter onto gt_net_ops.
 *
 * As v6 (init once per process, int sizes checked and widened), plus the
 * device-handle out-parameters of connect/accept (always HOST here: the
 * transport leaves them NULL), getDeviceMr/irecvConsumed, and
 * netDeviceType/netDeviceVersion in the properties.
 */
#include "plugin/abi/abi.h"

#include <limits.h>

#define ABI 7

static struct gt_abi_proc proc = GT_ABI_PROC_INIT;

static ncclResult_t v7_init(ncclDebugLogger_t logger)
{
    return GT_R(gt_abi_proc_init(&proc, ABI, (gt_logger_fn)logger, NULL));
}

static ncclResult_t v7_get_properties(int dev, ncclNetProperties_v7_t *props)
{
    struct gt_props p;
    gt_result rc = gt_abi_props(ABI, dev, &p);
    if (rc != GT_OK)
        return GT_R(rc);
    GT_ABI_PROPS_BASE(props, &p);
    props->netDeviceType = (ncclNetDeviceType)p.net_device_type;
    props->netDeviceVersion = p.net_device_version;
    return ncclSuccess;
}

static ncclResult_t v7_listen(int dev, void *handle, void **listen_comm)
{
    GT_ABI_OPS(ABI);
    return GT_R(ops->listen(proc.ctx, dev, handle, listen_comm));
}

static ncclResult_t v7_connect(int dev, void *handle, void **send_comm,
                               ncclNetDeviceHandle_v7_t **send_dev_comm)
{
    GT_ABI_OPS(ABI);
    void *unused = NULL; /* NCCL always passes one; a NULL is tolerated */
    return GT_R(ops->connect(proc.ctx, dev, handle, send_comm,
                             send_dev_comm ? (void **)send_dev_comm : &unused));
}

static ncclResult_t v7_reg_mr(void *comm, void *data, int size, int type, void **mhandle)
{
    GT_ABI_OPS(ABI);
    if (gt_abi_check_int_size(ABI, "regMr", size, INT_MAX) != GT_OK)
        return ncclInternalError;
    return GT_R(ops->reg_mr(comm, data, (size_t)size, type, mhandle, NULL));
}

static ncclResult_t v7_isend(void *send_comm, void *data, int size, int tag, void *mhandle,
                             void **request)
{
    GT_ABI_OPS(ABI);
    if (gt_abi_check_int_size(ABI, "isend", size, NCCL_MAX_NET_SIZE_V8) != GT_OK)
        return ncclInternalError;
    return GT_R(ops->isend(send_comm, data, (size_t)size, tag, mhandle, NULL, request));
}

static ncclResult_t v7_irecv(void *recv_comm, int n, void **data, int *sizes, int *tags,
                             void **mhandles, void **request)
{
    return GT_R(gt_abi_irecv_int(ABI, recv_comm, n, data, sizes, tags, mhandles, request));
}

GT_EXPORT const ncclNet_v7_t ncclNetPlugin_v7 = {
    .name = "gdrtrace",
    .init = v7_init,
    .devices = gt_abi_devices,
    .getProperties = v7_get_properties,
    .listen = v7_listen,
    .connect = v7_connect,
    .accept = gt_abi_accept,
    .regMr = v7_reg_mr,
    .regMrDmaBuf = gt_abi_reg_mr_dmabuf,
    .deregMr = gt_abi_dereg_mr,
    .isend = v7_isend,
    .irecv = v7_irecv,
    .iflush = gt_abi_iflush,
    .test = gt_abi_test,
    .closeSend = gt_abi_close_send,
    .closeRecv = gt_abi_close_recv,
    .closeListen = gt_abi_close_listen,
    .getDeviceMr = gt_abi_get_device_mr,
    .irecvConsumed = gt_abi_irecv_consumed,
};
