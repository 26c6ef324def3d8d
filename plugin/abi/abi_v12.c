/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi_v12.c — ncclNetPlugin_v12 (NCCL 2.30.3 …): adapter onto gt_net_ops.
 *
 * init is per communicator: each call takes a core reference and returns the
 * transport's own context for that communicator (commId and trafficClass go
 * to the transport); finalize(ctx) releases both.  Everything else forwards.
 */
#include "plugin/abi/abi.h"

#define ABI 12

static ncclResult_t v12_init(void **ctx, uint64_t comm_id, ncclNetCommConfig_v12_t *config,
                             ncclDebugLogger_t logger, ncclProfilerCallback_t profiler)
{
    return GT_R(gt_abi_comm_init(ABI, ctx, comm_id, config, (gt_logger_fn)logger,
                                 (gt_profiler_fn)profiler));
}

static ncclResult_t v12_finalize(void *ctx)
{
    return GT_R(gt_abi_comm_finalize(ABI, ctx));
}

static ncclResult_t v12_get_properties(int dev, ncclNetProperties_v12_t *props)
{
    struct gt_props p;
    gt_result rc = gt_abi_props(ABI, dev, &p);
    if (rc != GT_OK)
        return GT_R(rc);
    GT_ABI_PROPS_BASE(props, &p);
    GT_ABI_PROPS_V9(props, &p, NCCL_NET_MAX_DEVS_PER_NIC_V12);
    props->maxMultiRequestSize = p.max_multi_request_size;
    props->railId = p.rail_id;
    props->planeId = p.plane_id;
    return ncclSuccess;
}

static ncclResult_t v12_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
    GT_ABI_OPS(ABI);
    return GT_R(ops->listen(ctx, dev, handle, listen_comm));
}

static ncclResult_t v12_connect(void *ctx, int dev, void *handle, void **send_comm,
                                ncclNetDeviceHandle_v12_t **send_dev_comm)
{
    GT_ABI_OPS(ABI);
    void *unused = NULL; /* NCCL always passes one; a NULL is tolerated */
    return GT_R(ops->connect(ctx, dev, handle, send_comm,
                             send_dev_comm ? (void **)send_dev_comm : &unused));
}

GT_EXPORT const ncclNet_v12_t ncclNetPlugin_v12 = {
    .name = "gdrtrace",
    .init = v12_init,
    .devices = gt_abi_devices,
    .getProperties = v12_get_properties,
    .listen = v12_listen,
    .connect = v12_connect,
    .accept = gt_abi_accept,
    .regMr = gt_abi_reg_mr_sz,
    .regMrDmaBuf = gt_abi_reg_mr_dmabuf,
    .deregMr = gt_abi_dereg_mr,
    .isend = gt_abi_isend_sz,
    .irecv = gt_abi_irecv_sz,
    .iflush = gt_abi_iflush,
    .test = gt_abi_test,
    .closeSend = gt_abi_close_send,
    .closeRecv = gt_abi_close_recv,
    .closeListen = gt_abi_close_listen,
    .getDeviceMr = gt_abi_get_device_mr,
    .irecvConsumed = gt_abi_irecv_consumed,
    /* NULL on purpose: NCCL reads it as "NIC fusion not supported". */
    .makeVDevice = NULL,
    .finalize = v12_finalize,
    .setNetAttr = gt_abi_set_net_attr,
};
