/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live.c — doctor's live half: the CUDA driver and libibverbs, through the
 * plugin's dlopen'd tables (plugin/dl), exactly the calls the plugin makes.
 *
 *   verbs: open every RDMA device that sysfs lists, one PD each; the DMA-BUF
 *          probe ibv_reg_dmabuf_mr(fd = -1) (NCCL's probe: EOPNOTSUPP or
 *          EPROTONOSUPPORT = no kernel/provider support, anything else = the
 *          kernel looked at the fd); host memory registered as the negative
 *          control.
 *   CUDA:  per GPU: primary context, cuMemAlloc, cuMemGetHandleForAddressRange
 *          (DMA_BUF_FD), fdinfo exp_name, ibv_reg_dmabuf_mr on every device
 *          nearest first, optionally ibv_reg_mr on the GPU address (peermem).
 *
 * Ownership: everything allocated here (contexts, PDs, MRs, fds, GPU and host
 * buffers) is released before dr_live_run returns, on every path, in reverse
 * order of acquisition.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/dl/gt_cuda.h"
#include "common/dl/gt_ibv.h"
#include "tools/cmd/doctor/doctor.h"

#define DR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static int real_fd_exporter(int fd, char *name, size_t len)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    name[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f)
        return errno;
    int rc = ENOENT;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "exp_name:", 9) != 0)
            continue;
        char *p = line + 9;
        while (isspace((unsigned char)*p))
            p++;
        p[strcspn(p, "\r\n")] = '\0';
        dr_strlcpy(name, p, len);
        rc = 0;
        break;
    }
    fclose(f);
    return rc;
}

int (*dr_fd_exporter)(int fd, char *name, size_t len) = real_fd_exporter;

/* "0000:1A:00.0" or "00000000:1a:00.0" -> "0000:1a:00.0" (sysfs spelling) */
static void norm_bdf(const char *in, char *out, size_t len)
{
    unsigned d, b, dev, fn;
    if (sscanf(in, "%x:%x:%x.%x", &d, &b, &dev, &fn) == 4)
        snprintf(out, len, "%04x:%02x:%02x.%x", d & 0xffff, b, dev, fn);
    else
        dr_strlcpy(out, in, len);
}

struct vdev {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
};

static void verbs_phase(struct dr_inventory *inv, struct dr_live *live, struct vdev *vd,
                        size_t size)
{
    int rc = gt_ibv_load();
    if (rc) {
        snprintf(live->verbs_err, sizeof(live->verbs_err), "%s", gt_ibv.why);
        return;
    }
    live->verbs_ok = 1;
    live->verbs_has_reg_dmabuf = gt_ibv.has_reg_dmabuf_mr;
    int n = 0;
    struct ibv_device **list = gt_ibv.get_device_list(&n);
    if (!list) {
        snprintf(live->verbs_err, sizeof(live->verbs_err), "ibv_get_device_list failed: %s",
                 strerror(errno));
        return;
    }
    live->verbs_count = n;
    void *host = NULL;
    if (posix_memalign(&host, 4096, size) != 0)
        host = NULL;
    else
        memset(host, 0, size); /* touch it: registration pins resident pages */
    for (int i = 0; i < n && i < DR_MAX_NICS; i++) {
        const char *name = gt_ibv.get_device_name(list[i]);
        dr_strlcpy(live->verbs_names[i], name ? name : "?", sizeof(live->verbs_names[i]));
        int k;
        for (k = 0; k < inv->nnics; k++)
            if (strcmp(inv->nics[k].name, live->verbs_names[i]) == 0)
                break;
        if (k == inv->nnics)
            continue; /* verbs lists it but sysfs does not: reported by the checks */
        struct dr_nic *d = &inv->nics[k];
        d->verbs_index = i;
        vd[k].ctx = gt_ibv.open_device(list[i]);
        if (!vd[k].ctx) {
            d->probe_state = GTR_PROBE_UNKNOWN;
            d->probe_errno = errno;
            d->host_reg_errno = errno;
            continue;
        }
        vd[k].pd = gt_ibv.alloc_pd(vd[k].ctx);
        if (!vd[k].pd) {
            d->probe_errno = errno;
            d->host_reg_errno = errno;
            continue;
        }
        /* the probe: fd -1 can never be mapped, so a supporting kernel answers
         * EBADF/EINVAL while one without support answers EOPNOTSUPP first */
        errno = 0;
        struct ibv_mr *mr = gt_ibv.reg_dmabuf_mr(vd[k].pd, 0, size, 0, -1, DR_ACCESS);
        if (mr) {
            gt_ibv.dereg_mr(mr);
            d->probe_state = GTR_PROBE_SUPPORTED;
            d->probe_errno = 0;
        } else {
            d->probe_errno = errno;
            d->probe_state = (errno == EOPNOTSUPP || errno == EPROTONOSUPPORT || errno == ENOSYS)
                                 ? GTR_PROBE_UNSUPPORTED
                                 : GTR_PROBE_SUPPORTED;
            if (!gt_ibv.has_reg_dmabuf_mr)
                d->probe_state = GTR_PROBE_ABSENT;
        }
        if (!host) {
            d->host_reg_errno = ENOMEM;
            continue;
        }
        errno = 0;
        mr = gt_ibv.reg_mr(vd[k].pd, host, size, DR_ACCESS);
        if (mr) {
            d->host_reg_errno = 0;
            gt_ibv.dereg_mr(mr);
        } else {
            d->host_reg_errno = errno ? errno : EIO;
        }
    }
    free(host);
    gt_ibv.free_device_list(list);
}

static void add_reg(struct dr_reg *arr, int *count, int max, int gpu, int nic, int rc,
                    const char *err)
{
    if (*count >= max)
        return;
    struct dr_reg *r = &arr[(*count)++];
    r->gpu = gpu;
    r->nic = nic;
    r->rc = rc;
    dr_strlcpy(r->err, err ? err : "", sizeof(r->err));
}

static void gpu_phase(struct dr_inventory *inv, const struct dr_topology *topo,
                      const struct dr_options *opt, struct dr_live *live, struct vdev *vd, int g)
{
    struct dr_gpu *gpu = &inv->gpus[g];
    int max = (int)(sizeof(live->reg) / sizeof(live->reg[0]));
    char err[160];
    gt_CUdevice dev;
    gt_CUcontext ctx = NULL;
    gt_CUdeviceptr dptr = 0;
    int fd = -1;
    size_t size = opt->reg_size;

    live->export_rc[g] = -1;
    if (gpu->cuda_index < 0)
        return;
    gt_CUresult r = gt_cu.device_get(&dev, gpu->cuda_index);
    if (r == GT_CUDA_SUCCESS) {
        int v = -1;
        if (gt_cu.device_get_attribute(&v, GT_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev) ==
            GT_CUDA_SUCCESS)
            gpu->dmabuf_attr = v;
    }
    if (r != GT_CUDA_SUCCESS) {
        snprintf(live->export_err[g], sizeof(live->export_err[g]), "cuDeviceGet(%d): %s (%d)",
                 gpu->cuda_index, gt_cu_errstr(r), r);
        live->export_rc[g] = EIO;
        return;
    }
    r = gt_cu.primary_ctx_retain(&ctx, dev);
    if (r != GT_CUDA_SUCCESS) {
        snprintf(live->export_err[g], sizeof(live->export_err[g]),
                 "cuDevicePrimaryCtxRetain: %s (%d)", gt_cu_errstr(r), r);
        live->export_rc[g] = EIO;
        return;
    }
    r = gt_cu.ctx_set_current(ctx);
    if (r != GT_CUDA_SUCCESS) {
        snprintf(live->export_err[g], sizeof(live->export_err[g]), "cuCtxSetCurrent: %s (%d)",
                 gt_cu_errstr(r), r);
        live->export_rc[g] = EIO;
        goto err_ctx;
    }
    r = gt_cu.mem_alloc(&dptr, size);
    if (r != GT_CUDA_SUCCESS) {
        snprintf(live->export_err[g], sizeof(live->export_err[g]), "cuMemAlloc(%zu): %s (%d)", size,
                 gt_cu_errstr(r), r);
        live->export_rc[g] = ENOMEM;
        goto err_ctx;
    }
    if (!gt_cu.has_dmabuf_export) {
        snprintf(live->export_err[g], sizeof(live->export_err[g]), "%s", gt_cu.why_dmabuf_export);
        live->export_rc[g] = ENOSYS;
    } else {
        r = gt_cu.mem_get_handle_for_address_range(&fd, dptr, size,
                                                   GT_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
        if (r != GT_CUDA_SUCCESS || fd < 0) {
            snprintf(live->export_err[g], sizeof(live->export_err[g]),
                     "cuMemGetHandleForAddressRange(DMA_BUF_FD): %s (%d)", gt_cu_errstr(r), r);
            live->export_rc[g] = r == GT_CUDA_ERROR_NOT_SUPPORTED ? EOPNOTSUPP : EIO;
            fd = -1;
        } else {
            live->export_rc[g] = 0;
            int e = dr_fd_exporter(fd, live->export_name[g], sizeof(live->export_name[g]));
            if (e)
                snprintf(live->export_name[g], sizeof(live->export_name[g]), "?(%s)", strerror(e));
        }
    }
    for (int i = 0; i < inv->nnics; i++) {
        int k = topo->order[g][i];
        if (!vd[k].pd)
            continue;
        if (fd >= 0) {
            errno = 0;
            struct ibv_mr *mr =
                gt_ibv.reg_dmabuf_mr(vd[k].pd, 0, size, (uint64_t)dptr, fd, DR_ACCESS);
            if (mr) {
                gt_ibv.dereg_mr(mr);
                add_reg(live->reg, &live->nreg, max, g, k, 0, "");
            } else {
                int e = errno ? errno : EIO;
                snprintf(err, sizeof(err), "ibv_reg_dmabuf_mr(%s, fd %d, %zu bytes): %s",
                         inv->nics[k].name, fd, size, strerror(e));
                add_reg(live->reg, &live->nreg, max, g, k, e, err);
            }
        }
        if (opt->peermem) {
            errno = 0;
            struct ibv_mr *mr = gt_ibv.reg_mr(vd[k].pd, (void *)(uintptr_t)dptr, size, DR_ACCESS);
            if (mr) {
                gt_ibv.dereg_mr(mr);
                add_reg(live->peer, &live->npeer, max, g, k, 0, "");
            } else {
                int e = errno ? errno : EIO;
                snprintf(err, sizeof(err), "ibv_reg_mr(%s, GPU address, %zu bytes): %s",
                         inv->nics[k].name, size, strerror(e));
                add_reg(live->peer, &live->npeer, max, g, k, e, err);
            }
        }
    }
    if (fd >= 0)
        close(fd);
    gt_cu.mem_free(dptr);
err_ctx:
    gt_cu.primary_ctx_release(dev);
}

/* ---- a dma-buf without a GPU: vgem ---------------------------------------
 * The DRM UAPI facts we need (include/uapi/drm/drm.h, drm_mode.h): the
 * dumb-buffer create and the PRIME export ioctls, 'd' type. */
struct dr_drm_create_dumb {
    uint32_t height, width, bpp, flags;
    uint32_t handle, pitch;
    uint64_t size;
};
struct dr_drm_prime_handle {
    uint32_t handle, flags;
    int32_t fd;
};
#define DR_DRM_IOCTL_MODE_CREATE_DUMB _IOWR('d', 0xB2, struct dr_drm_create_dumb)
#define DR_DRM_IOCTL_PRIME_HANDLE_TO_FD _IOWR('d', 0x2d, struct dr_drm_prime_handle)

/* Returns a dma-buf fd of at least size bytes from the first DRM card that
 * makes dumb buffers (vgem in the test VM); *card_fd stays open while the fd
 * is in use.  -1 with errno and live->vgem_err on failure. */
static int vgem_export(struct dr_live *live, size_t size, int *card_fd)
{
    int last = ENOENT;
    for (int i = 0; i < 8; i++) {
        char path[32];
        snprintf(path, sizeof(path), "/dev/dri/card%d", i);
        int card = open(path, O_RDWR | O_CLOEXEC);
        if (card < 0) {
            if (errno != ENOENT)
                last = errno;
            continue;
        }
        struct dr_drm_create_dumb cd = {.height = 1, .width = (uint32_t)(size / 4), .bpp = 32};
        struct dr_drm_prime_handle ph = {.flags = O_CLOEXEC | O_RDWR, .fd = -1};
        if (ioctl(card, DR_DRM_IOCTL_MODE_CREATE_DUMB, &cd) != 0) {
            last = errno;
            snprintf(live->vgem_err, sizeof(live->vgem_err), "%s: DRM_IOCTL_MODE_CREATE_DUMB: %s",
                     path, strerror(errno));
            close(card);
            continue;
        }
        ph.handle = cd.handle;
        if (ioctl(card, DR_DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) != 0) {
            last = errno;
            snprintf(live->vgem_err, sizeof(live->vgem_err), "%s: DRM_IOCTL_PRIME_HANDLE_TO_FD: %s",
                     path, strerror(errno));
            close(card);
            continue;
        }
        dr_strlcpy(live->vgem_card, path, sizeof(live->vgem_card));
        *card_fd = card;
        return ph.fd;
    }
    if (!live->vgem_err[0])
        snprintf(live->vgem_err, sizeof(live->vgem_err),
                 "no DRM card with dumb buffers under /dev/dri (load vgem): %s", strerror(last));
    errno = last;
    return -1;
}

static void vgem_phase(struct dr_inventory *inv, struct dr_live *live, struct vdev *vd, size_t size)
{
    int card = -1;
    int fd = vgem_export(live, size, &card);
    if (fd < 0) {
        live->vgem_rc = errno ? errno : ENOENT;
        return;
    }
    live->vgem_rc = 0;
    int e = dr_fd_exporter(fd, live->vgem_exp_name, sizeof(live->vgem_exp_name));
    if (e)
        snprintf(live->vgem_exp_name, sizeof(live->vgem_exp_name), "?(%s)", strerror(e));
    for (int k = 0; k < inv->nnics; k++) {
        if (!vd[k].pd)
            continue;
        char err[160];
        errno = 0;
        struct ibv_mr *mr = gt_ibv.reg_dmabuf_mr(vd[k].pd, 0, size, 0, fd, DR_ACCESS);
        if (mr) {
            gt_ibv.dereg_mr(mr);
            add_reg(live->vgem, &live->nvgem, DR_MAX_NICS, -1, k, 0, "");
        } else {
            int en = errno ? errno : EIO;
            snprintf(err, sizeof(err), "ibv_reg_dmabuf_mr(%s, vgem fd %d, %zu bytes): %s",
                     inv->nics[k].name, fd, size, strerror(en));
            add_reg(live->vgem, &live->nvgem, DR_MAX_NICS, -1, k, en, err);
        }
    }
    close(fd);
    close(card);
}

void dr_live_run(struct dr_inventory *inv, const struct dr_topology *topo,
                 const struct dr_options *opt, struct dr_live *live)
{
    memset(live, 0, sizeof(*live));
    live->cuda_version = -1;
    live->verbs_has_reg_dmabuf = -1;
    live->vgem_rc = -1;
    for (int g = 0; g < DR_MAX_GPUS; g++)
        live->export_rc[g] = -1;
    if (opt->no_live) {
        dr_strlcpy(live->skip_why, opt->no_live_why, sizeof(live->skip_why));
        return;
    }
    live->attempted = 1;
    struct vdev *vd = calloc(DR_MAX_NICS, sizeof(*vd));
    if (!vd) {
        live->attempted = 0;
        snprintf(live->skip_why, sizeof(live->skip_why), "out of memory");
        return;
    }
    verbs_phase(inv, live, vd, opt->reg_size);
    if (opt->vgem)
        vgem_phase(inv, live, vd, opt->reg_size);

    int rc = gt_cu_load();
    if (rc == 0 || rc == ENODEV) {
        /* with cuInit failing (no GPU) the driver still answers its version */
        int v = 0;
        if (gt_cu.driver_get_version(&v) == GT_CUDA_SUCCESS && v > 0)
            live->cuda_version = v;
    }
    if (rc) {
        snprintf(live->cuda_err, sizeof(live->cuda_err), "%s", gt_cu.why);
    } else {
        live->cuda_ok = 1;
        int n = 0;
        if (gt_cu.device_get_count(&n) != GT_CUDA_SUCCESS)
            n = 0;
        live->cuda_count = n;
        for (int i = 0; i < n; i++) {
            gt_CUdevice dev;
            char bus[32] = "", bdf[16];
            if (gt_cu.device_get(&dev, i) != GT_CUDA_SUCCESS ||
                gt_cu.device_get_pci_bus_id(bus, (int)sizeof(bus), dev) != GT_CUDA_SUCCESS)
                continue;
            norm_bdf(bus, bdf, sizeof(bdf));
            for (int g = 0; g < inv->ngpus; g++)
                if (strcmp(inv->gpus[g].pci.bdf, bdf) == 0)
                    inv->gpus[g].cuda_index = i;
        }
        for (int g = 0; g < inv->ngpus; g++)
            gpu_phase(inv, topo, opt, live, vd, g);
    }

    for (int k = DR_MAX_NICS - 1; k >= 0; k--) {
        if (vd[k].pd)
            gt_ibv.dealloc_pd(vd[k].pd);
        if (vd[k].ctx)
            gt_ibv.close_device(vd[k].ctx);
    }
    free(vd);
}
