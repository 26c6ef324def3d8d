// SPDX-License-Identifier: Apache-2.0
/*
 * dmabuf_reg.c — the real CUDA side of DMA-BUF on a GPU machine without an
 * RDMA NIC (tests/gpu/run-all.sh, step 6).
 *
 * What it proves: when NCCL calls regMr(NCCL_PTR_CUDA) under
 * GDRTRACE_REG=dmabuf, the plugin's own registration code (plugin/reg,
 * gt_reg_register -> cuMemGetHandleForAddressRange through the dlopen'd CUDA
 * table) exports a real dma-buf fd of exporter `nv_dmabuf` for cudaMalloc'd
 * memory; the recorder (shim/, through gt_shim_wrap exactly as plugin/core
 * uses it) records the attempt; and the reader then says why it failed.
 *
 * Why a driver and not NCCL: with no NIC the plugin's transport is TCP and
 * advertises host memory only, so NCCL never hands it GPU memory.  This
 * program stands where NCCL stands (init, connect, regMr with a CUDA buffer)
 * and puts the plugin's registration path behind a minimal gt_net_ops, the
 * way plugin/ib does.
 *
 * The one stand-in: this machine has no RDMA device, hence no protection
 * domain to import the fd into.  The verbs slot ibv_reg_dmabuf_mr (the
 * gt_ibv table's documented seam) is replaced by a function that does what
 * the missing NIC cannot: it inspects the fd it was handed
 * (/proc/self/fdinfo: exp_name, size), prints it, and fails with ENODEV —
 * the registration fails for want of an RDMA device, as it would.
 * Everything before that call (the export) is the plugin's real code against
 * the real driver.
 *
 * Output lines (gpucheck.py dmabuf reads them):
 *   EXPORT fd=<n> size=<bytes> exp_name=<exporter> range=<bytes asked>
 *   REG type=cuda size=<n> result=<gt_result>
 * Exit: 0 when an nv_dmabuf export was seen and the registration failed as
 * it must; 1 otherwise; 77 without a GPU.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "common/dl/gt_cuda.h"
#include "common/dl/gt_ibv.h"
#include "common/gt_net.h"
#include "common/log.h"
#include "plugin/reg/gt_reg.h"
#include "shim/shim.h"

#define BUF_BYTES (8u << 20)

static struct gt_reg_dev g_dev;
static struct gt_reg_policy g_pol;
static int g_exports_seen, g_nv_dmabuf_seen;
static int g_token; /* the address stands for the one comm/ctx */

static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    (void)flags;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stdout, "# log[%d] %s:%d: ", level, file, line);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
}

/* The NIC that is not there: look at the fd, then fail as a missing device. */
static struct ibv_mr *no_nic_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
                                           uint64_t iova, int fd, int access)
{
    (void)pd, (void)offset, (void)iova, (void)access;
    char path[64], line[256], exp_name[64] = "?", size[32] = "?";
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    FILE *f = fopen(path, "r");
    if (f) {
        while (fgets(line, sizeof(line), f)) {
            if (sscanf(line, "exp_name: %63s", exp_name) == 1)
                continue;
            sscanf(line, "size: %31s", size);
        }
        fclose(f);
    } else {
        snprintf(exp_name, sizeof(exp_name), "unreadable(%s)", strerror(errno));
    }
    printf("EXPORT fd=%d size=%s exp_name=%s range=%zu\n", fd, size, exp_name, length);
    fflush(stdout);
    g_exports_seen++;
    if (!strcmp(exp_name, "nv_dmabuf"))
        g_nv_dmabuf_seen++;
    errno = ENODEV;
    return NULL;
}

/* ---- a minimal transport around plugin/reg (as plugin/ib uses it) ---- */

static gt_result d_init(void **ctx, uint64_t comm_id, int has_comm_id,
                        const struct gt_comm_config *config, gt_logger_fn lg, gt_profiler_fn pf)
{
    (void)comm_id, (void)has_comm_id, (void)config, (void)lg, (void)pf;
    *ctx = &g_token;
    return GT_OK;
}

static gt_result d_devices(int *ndev)
{
    *ndev = 1;
    return GT_OK;
}

static gt_result d_props(int dev, struct gt_props *p)
{
    (void)dev;
    memset(p, 0, sizeof(*p));
    p->name = "no-rdma-device";
    p->pci_path = "";
    p->ptr_support = g_dev.probe.advertised;
    p->speed_mbps = 1000;
    p->max_comms = 1;
    p->max_recvs = 1;
    p->vdev_count = 1;
    p->max_p2p_bytes = p->max_coll_bytes = 1u << 30;
    p->rail_id = p->plane_id = -1;
    return GT_OK;
}

static gt_result d_listen(void *ctx, int dev, void *handle, void **lc)
{
    (void)ctx, (void)dev;
    memset(handle, 0, GT_NET_HANDLE_MAXSIZE);
    *lc = &g_token;
    return GT_OK;
}

static gt_result d_connect(void *ctx, int dev, void *handle, void **sc, void **sdc)
{
    (void)ctx, (void)dev, (void)handle;
    *sc = &g_token;
    if (sdc)
        *sdc = NULL;
    return GT_OK;
}

static gt_result d_accept(void *lc, void **rc, void **rdc)
{
    (void)lc;
    *rc = &g_token;
    if (rdc)
        *rdc = NULL;
    return GT_OK;
}

static gt_result d_reg_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                              int fd, void **mh, struct gt_reg_report *rep)
{
    (void)comm;
    char err[512];
    struct gt_mr *mr = NULL;
    struct gt_reg_report own = {0};
    if (!rep)
        rep = &own;
    gt_result r =
        gt_reg_register(&g_dev, &g_pol, data, size, type, offset, fd, &mr, rep, err, sizeof(err));
    *mh = mr;
    if (r != GT_OK) {
        GT_WARN("%s", err);
        /* gt_net.h F1/F5, as ib's regMr does: the shim records this
         * reason and errno, not "the transport gave no reason". */
        return gt_net_fail(r, rep->reason, rep->err, "%s", err);
    }
    return r;
}

static gt_result d_reg(void *comm, void *data, size_t size, int type, void **mh,
                       struct gt_reg_report *rep)
{
    return d_reg_dmabuf(comm, data, size, type, 0, -1, mh, rep);
}

static gt_result d_dereg(void *comm, void *mh)
{
    (void)comm;
    return mh ? gt_reg_deregister(&g_dev, mh) : GT_OK;
}

/* No data path: this driver only registers. */
static gt_result d_isend(void *a, void *b, size_t c, int d, void *e, void *f, void **g)
{
    (void)a, (void)b, (void)c, (void)d, (void)e, (void)f, (void)g;
    return GT_INTERNAL_ERROR;
}
static gt_result d_irecv(void *a, int b, void **c, size_t *d, int *e, void **f, void **g, void **h)
{
    (void)a, (void)b, (void)c, (void)d, (void)e, (void)f, (void)g, (void)h;
    return GT_INTERNAL_ERROR;
}
static gt_result d_iflush(void *a, int b, void **c, int *d, void **e, void **f)
{
    (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
    return GT_INTERNAL_ERROR;
}
static gt_result d_test(void *a, int *b, int *c)
{
    (void)a, (void)b, (void)c;
    return GT_INTERNAL_ERROR;
}
static gt_result d_close(void *c)
{
    (void)c;
    return GT_OK;
}
static gt_result d_get_device_mr(void *a, void *b, void **c)
{
    (void)a, (void)b;
    *c = NULL;
    return GT_OK;
}
static gt_result d_irecv_consumed(void *a, int b, void *c)
{
    (void)a, (void)b, (void)c;
    return GT_OK;
}
static gt_result d_set_net_attr(void *a, void *b)
{
    (void)a, (void)b;
    return GT_OK;
}
static gt_result d_get_probe(int dev, struct gt_dev_probe *p)
{
    (void)dev;
    *p = g_dev.probe;
    return GT_OK;
}

static const struct gt_net_ops driver_ops = {
    .name = "dmabuf-driver",
    .init = d_init,
    .devices = d_devices,
    .get_properties = d_props,
    .listen = d_listen,
    .connect = d_connect,
    .accept = d_accept,
    .reg_mr = d_reg,
    .reg_mr_dmabuf = d_reg_dmabuf,
    .dereg_mr = d_dereg,
    .isend = d_isend,
    .irecv = d_irecv,
    .iflush = d_iflush,
    .test = d_test,
    .close_send = d_close,
    .close_recv = d_close,
    .close_listen = d_close,
    .get_device_mr = d_get_device_mr,
    .irecv_consumed = d_irecv_consumed,
    .finalize = d_close,
    .set_net_attr = d_set_net_attr,
    .get_probe = d_get_probe,
};

int main(void)
{
    int rc = 1, ndev = 0;
    void *buf = NULL, *ctx = NULL, *sc = NULL, *mh = NULL;
    char handle[GT_NET_HANDLE_MAXSIZE];
    const struct gt_net_ops *net;

    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP: no CUDA device visible\n");
        return 77;
    }
    /* cudart makes device 0's primary context current on this thread; the
     * plugin's dlopen'd libcuda is the same library and sees it. */
    if (cudaSetDevice(0) != cudaSuccess || cudaMalloc(&buf, BUF_BYTES) != cudaSuccess) {
        printf("FAIL: cudaMalloc of %u bytes on device 0 failed\n", BUF_BYTES);
        return 1;
    }
    gt_log_set_logger(logger);
    if (gt_cu_load() != 0) {
        printf("FAIL: the plugin's CUDA table did not load: %s\n", gt_cu.why);
        goto out;
    }
    gt_ibv_load();
    printf("# libibverbs loaded=%d has_reg_dmabuf_mr=%d\n", gt_ibv.loaded,
           gt_ibv.has_reg_dmabuf_mr);
    gt_ibv.reg_dmabuf_mr = no_nic_reg_dmabuf_mr; /* the seam: the NIC that is not there */
    gt_ibv.has_reg_dmabuf_mr = 1;

    gt_reg_policy_from_env(&g_pol);
    printf("# policy GDRTRACE_REG=%s allow_peermem=%d\n", gt_reg_mode_name(g_pol.mode),
           g_pol.allow_peermem);
    gt_reg_dev_init(&g_dev, "no-rdma-device", NULL);
    /* No device to probe: say so, and advertise what the policy would. */
    g_dev.probe.dmabuf = GT_PROBE_UNKNOWN;
    g_dev.probe.peermem = GT_PROBE_ABSENT;
    g_dev.probe.cuda_dmabuf = GT_PROBE_SUPPORTED;
    g_dev.probe.advertised = GT_PTR_HOST | GT_PTR_CUDA | GT_PTR_DMABUF;
    snprintf(g_dev.probe.why, sizeof(g_dev.probe.why),
             "dmabuf_reg driver: no RDMA device on this node (ibv_get_device_list is empty)");

    net = gt_shim_wrap(&driver_ops,
                       "tests/gpu/dmabuf_reg: plugin registration path, no RDMA "
                       "device on this node",
                       logger);
    if (net == &driver_ops)
        printf("# WARNING: the recorder is off (GDRTRACE_DISABLE or no recorder file)\n");
    struct gt_comm_config cfg = {.traffic_class = -1};
    if (net->init(&ctx, 0xd3abf00d5eedull, 1, &cfg, logger, NULL) != GT_OK ||
        net->devices(&ndev) != GT_OK) {
        printf("FAIL: init/devices through the shim failed\n");
        goto out;
    }
    memset(handle, 0, sizeof(handle));
    if (net->connect(ctx, 0, handle, &sc, NULL) != GT_OK || !sc) {
        printf("FAIL: connect through the shim failed\n");
        goto out;
    }
    gt_result r = net->reg_mr(sc, buf, BUF_BYTES, GT_PTR_CUDA, &mh, NULL);
    printf("REG type=cuda size=%u result=%d\n", BUF_BYTES, (int)r);
    if (r == GT_OK && mh)
        net->dereg_mr(sc, mh);
    net->close_send(sc);
    net->finalize(ctx);
    gt_reg_dev_fini(&g_dev);

    if (g_nv_dmabuf_seen && r != GT_OK) {
        printf("PASS: the plugin exported a real nv_dmabuf fd (%d export(s)); the registration "
               "failed for want of an RDMA device\n",
               g_exports_seen);
        rc = 0;
    } else {
        printf("FAIL: exports seen %d, nv_dmabuf %d, registration result %d\n", g_exports_seen,
               g_nv_dmabuf_seen, (int)r);
    }
out:
    cudaFree(buf);
    return rc;
}
