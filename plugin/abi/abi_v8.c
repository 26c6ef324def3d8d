/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi_v8.c — ncclNetPlugin_v8 (NCCL 2.20.3 …): adapter onto gt_net_ops.
 *
 * As v7, except regMr takes a size_t (no int check), and the properties
 * carry regIsGlobal.  isend/irecv sizes are still int: checked and widened.
 */
#include "plugin/abi/abi.h"

#define ABI 8

static struct gt_abi_proc proc = GT_ABI_PROC_INIT;

static ncclResult_t v8_init(ncclDebugLogger_t logger)
{
    return GT_R(gt_abi_proc_init(&proc, ABI, (gt_logger_fn)logger, NULL));
}

static ncclResult_t v8_get_properties(int dev, ncclNetProperties_v8_t *props)
{
    struct gt_props p;
    gt_result rc = gt_abi_props(ABI, dev, &p);
    if (rc != GT_OK)
        return GT_R(rc);
    GT_ABI_PROPS_BASE(props, &p);
    props->regIsGlobal = p.reg_is_global;
    props->netDeviceType = (ncclNetDeviceType)p.net_device_type;
    props->netDeviceVersion = p.net_device_version;
    return ncclSuccess;
}

static ncclResult_t v8_listen(int dev, void *handle, void **listen_comm)
{
    GT_ABI_OPS(ABI);
    return GT_R(ops->listen(proc.ctx, dev, handle, listen_comm));
}

static ncclResult_t v8_connect(int dev, void *handle, void **send_comm,
                               ncclNetDeviceHandle_v8_t **send_dev_comm)
{
    GT_ABI_OPS(ABI);
    void *unused = NULL; /* NCCL always passes one; a NULL is tolerated */
    return GT_R(ops->connect(proc.ctx, dev, handle, send_comm,
                             send_dev_comm ? (void **)send_dev_comm : &unused));
}

static ncclResult_t v8_isend(void *send_comm, void *data, int size, int tag, void *mhandle,
                             void **request)
{
    GT_ABI_OPS(ABI);
    if (gt_abi_check_int_size(ABI, "isend", size, NCCL_MAX_NET_SIZE_V8) != GT_OK)
        return ncclInternalError;
    return GT_R(ops->isend(send_comm, data, (size_t)size, tag, mhandle, NULL, request));
}

static ncclResult_t v8_irecv(void *recv_comm, int n, void **data, int *sizes, int *tags,
                             void **mhandles, void **request)
{
    return GT_R(gt_abi_irecv_int(ABI, recv_comm, n, data, sizes, tags, mhandles, request));
}

GT_EXPORT const ncclNet_v8_t ncclNetPlugin_v8 = {
    .name = "gdrtrace",
    .init = v8_init,
    .devices = gt_abi_devices,
    .getProperties = v8_get_properties,
    .listen = v8_listen,
    .connect = v8_connect,
    .accept = gt_abi_accept,
    .regMr = gt_abi_reg_mr_sz,
    .regMrDmaBuf = gt_abi_reg_mr_dmabuf,
    .deregMr = gt_abi_dereg_mr,
    .isend = v8_isend,
    .irecv = v8_irecv,
    .iflush = gt_abi_iflush,
    .test = gt_abi_test,
    .closeSend = gt_abi_close_send,
    .closeRecv = gt_abi_close_recv,
    .closeListen = gt_abi_close_listen,
    .getDeviceMr = gt_abi_get_device_mr,
    .irecvConsumed = gt_abi_irecv_consumed,
};
