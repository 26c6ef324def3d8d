/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi_v6.c — ncclNetPlugin_v6 (NCCL 2.13 … 2.18, and any later NCCL that
 * falls back to v6): adapter onto gt_net_ops.
 *
 * Beyond forwarding: init once per process; int sizes checked (negative, or
 * over NCCL's 1 GiB cap for int ABIs) and widened; properties converted to
 * the v6 struct (no regIsGlobal, forceFlush or maxP2pBytes: NCCL fills those
 * in for a v6 plugin itself).
 */
#include "plugin/abi/abi.h"

#include <limits.h>

#define ABI 6

static struct gt_abi_proc proc = GT_ABI_PROC_INIT;

static ncclResult_t v6_init(ncclDebugLogger_t logger)
{
    return GT_R(gt_abi_proc_init(&proc, ABI, (gt_logger_fn)logger, NULL));
}

static ncclResult_t v6_get_properties(int dev, ncclNetProperties_v6_t *props)
{
    struct gt_props p;
    gt_result rc = gt_abi_props(ABI, dev, &p);
    if (rc != GT_OK)
        return GT_R(rc);
    GT_ABI_PROPS_BASE(props, &p);
    return ncclSuccess;
}

static ncclResult_t v6_listen(int dev, void *handle, void **listen_comm)
{
    GT_ABI_OPS(ABI);
    return GT_R(ops->listen(proc.ctx, dev, handle, listen_comm));
}

static ncclResult_t v6_connect(int dev, void *handle, void **send_comm)
{
    GT_ABI_OPS(ABI);
    void *dev_comm = NULL; /* v6 has no device offload */
    return GT_R(ops->connect(proc.ctx, dev, handle, send_comm, &dev_comm));
}

static ncclResult_t v6_accept(void *listen_comm, void **recv_comm)
{
    GT_ABI_OPS(ABI);
    void *dev_comm = NULL;
    return GT_R(ops->accept(listen_comm, recv_comm, &dev_comm));
}

static ncclResult_t v6_reg_mr(void *comm, void *data, int size, int type, void **mhandle)
{
    GT_ABI_OPS(ABI);
    if (gt_abi_check_int_size(ABI, "regMr", size, INT_MAX) != GT_OK)
        return ncclInternalError;
    return GT_R(ops->reg_mr(comm, data, (size_t)size, type, mhandle, NULL));
}

static ncclResult_t v6_isend(void *send_comm, void *data, int size, int tag, void *mhandle,
                             void **request)
{
    GT_ABI_OPS(ABI);
    if (gt_abi_check_int_size(ABI, "isend", size, NCCL_MAX_NET_SIZE_V8) != GT_OK)
        return ncclInternalError;
    return GT_R(ops->isend(send_comm, data, (size_t)size, tag, mhandle, NULL, request));
}

static ncclResult_t v6_irecv(void *recv_comm, int n, void **data, int *sizes, int *tags,
                             void **mhandles, void **request)
{
    return GT_R(gt_abi_irecv_int(ABI, recv_comm, n, data, sizes, tags, mhandles, request));
}

GT_EXPORT const ncclNet_v6_t ncclNetPlugin_v6 = {
    .name = "gdrtrace",
    .init = v6_init,
    .devices = gt_abi_devices,
    .getProperties = v6_get_properties,
    .listen = v6_listen,
    .connect = v6_connect,
    .accept = v6_accept,
    .regMr = v6_reg_mr,
    .regMrDmaBuf = gt_abi_reg_mr_dmabuf,
    .deregMr = gt_abi_dereg_mr,
    .isend = v6_isend,
    .irecv = v6_irecv,
    .iflush = gt_abi_iflush,
    .test = gt_abi_test,
    .closeSend = gt_abi_close_send,
    .closeRecv = gt_abi_close_recv,
    .closeListen = gt_abi_close_listen,
};
