/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi_v10.c — ncclNetPlugin_v10 (NCCL 2.26.2 …): adapter onto gt_net_ops.
 *
 * Init once per process (with the profiler callback).  connect carries the
 * communicator's config (trafficClass), which gt_net takes at init: the
 * adapter keeps one transport context per traffic class seen, created on
 * first use and kept for the process (v10 has no finalize).  Invariant:
 * tc_ctx[i] is valid for i < ntc, and tc[] never holds the "undefined"
 * class, which uses the process context.
 */
#include "plugin/abi/abi.h"

#define ABI 10
/* NCCL uses a handful of classes per job; beyond this the class is dropped
 * with a WARN rather than failing the connection. */
#define MAX_TRAFFIC_CLASSES 16

static struct gt_abi_proc proc = GT_ABI_PROC_INIT;

static struct {
    pthread_mutex_t lock;
    int ntc;
    int tc[MAX_TRAFFIC_CLASSES];
    void *tc_ctx[MAX_TRAFFIC_CLASSES];
} tcs = {.lock = PTHREAD_MUTEX_INITIALIZER};

static ncclResult_t v10_init(ncclDebugLogger_t logger, ncclProfilerCallback_t profiler)
{
    return GT_R(gt_abi_proc_init(&proc, ABI, (gt_logger_fn)logger, (gt_profiler_fn)profiler));
}

static ncclResult_t v10_get_properties(int dev, ncclNetProperties_v10_t *props)
{
    struct gt_props p;
    gt_result rc = gt_abi_props(ABI, dev, &p);
    if (rc != GT_OK)
        return GT_R(rc);
    GT_ABI_PROPS_BASE(props, &p);
    GT_ABI_PROPS_V9(props, &p, NCCL_NET_MAX_DEVS_PER_NIC_V9);
    return ncclSuccess;
}

static ncclResult_t v10_listen(int dev, void *handle, void **listen_comm)
{
    GT_ABI_OPS(ABI);
    return GT_R(ops->listen(proc.ctx, dev, handle, listen_comm));
}

/* The transport context for a traffic class: found, or made once. */
static gt_result ctx_for_class(const struct gt_net_ops *ops, int tc, void **ctx)
{
    gt_result rc = GT_OK;
    *ctx = proc.ctx;
    if (tc == NCCL_NET_TRAFFIC_CLASS_UNDEF)
        return GT_OK;
    pthread_mutex_lock(&tcs.lock);
    for (int i = 0; i < tcs.ntc; i++) {
        if (tcs.tc[i] == tc) {
            *ctx = tcs.tc_ctx[i];
            goto out;
        }
    }
    if (tcs.ntc == MAX_TRAFFIC_CLASSES) {
        GT_WARN("connect: more than %d traffic classes; class %d is not applied",
                MAX_TRAFFIC_CLASSES, tc);
        goto out;
    }
    struct gt_comm_config cfg = {.traffic_class = tc};
    void *c = NULL;
    rc = ops->init(&c, 0, 0, &cfg, proc.logger, proc.profiler);
    if (rc != GT_OK) {
        GT_WARN("connect: transport init for traffic class %d failed (error %d)", tc, (int)rc);
        goto out;
    }
    tcs.tc[tcs.ntc] = tc;
    tcs.tc_ctx[tcs.ntc] = c;
    tcs.ntc++;
    *ctx = c;
out:
    pthread_mutex_unlock(&tcs.lock);
    return rc;
}

static ncclResult_t v10_connect(int dev, ncclNetCommConfig_v10_t *config, void *handle,
                                void **send_comm, ncclNetDeviceHandle_v10_t **send_dev_comm)
{
    GT_ABI_OPS(ABI);
    void *ctx;
    gt_result rc =
        ctx_for_class(ops, config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF, &ctx);
    if (rc != GT_OK)
        return GT_R(rc);
    void *unused = NULL; /* NCCL always passes one; a NULL is tolerated */
    return GT_R(ops->connect(ctx, dev, handle, send_comm,
                             send_dev_comm ? (void **)send_dev_comm : &unused));
}

GT_EXPORT const ncclNet_v10_t ncclNetPlugin_v10 = {
    .name = "gdrtrace",
    .init = v10_init,
    .devices = gt_abi_devices,
    .getProperties = v10_get_properties,
    .listen = v10_listen,
    .connect = v10_connect,
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
};
