/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gm_reg.c — the gpumem registrar and its dma-buf check (contract in
 * gpumem.h).  A handle is a struct gm_handle: for a dma-buf import, the
 * duplicate of NCCL's (or our exported) fd, closed at deregistration, so the
 * kernel's dma_buf/bufinfo lists NCCL's buffers while they are registered.
 * No device is touched: "registration" here is the check and the bookkeeping.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dl/gt_cuda.h"
#include "common/settings.h"
#include "plugin/gpumem/gpumem.h"

const char *gt_gpumem_procroot = "";
__thread char gt_gpumem_refusal[200];

struct gm_handle {
    int fd; /* our duplicate of the dma-buf, -1 for VA registrations */
};

/* Reads exp_name and size from /proc/self/fdinfo/<fd>.  Returns 1 when the
 * file was read (name "" when the fd is not a dma-buf). */
static int fdinfo(int fd, char *name, size_t namelen, unsigned long long *size)
{
    char p[512], line[256];
    snprintf(p, sizeof(p), "%s/proc/self/fdinfo/%d", gt_gpumem_procroot, fd);
    FILE *f = fopen(p, "re");
    name[0] = 0;
    *size = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        char v[128];
        if (sscanf(line, "exp_name: %127s", v) == 1)
            snprintf(name, namelen, "%s", v);
        else
            sscanf(line, "size: %llu", size);
    }
    fclose(f);
    return 1;
}

int gt_gpumem_check_dmabuf(int fd, uint64_t offset, uintptr_t a, size_t len, char *why,
                           size_t whylen)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, whylen, "fd %d is not an open file descriptor", fd);
        return EBADF;
    }
    char name[128];
    unsigned long long size = 0;
    if (!fdinfo(fd, name, sizeof(name), &size) || !name[0]) {
        snprintf(why, whylen, "fd %d is not a dma-buf (no exp_name in /proc/self/fdinfo/%d)", fd,
                 fd);
        return ENOTSUP;
    }
    if (strcmp(name, "nv_dmabuf") != 0) {
        snprintf(why, whylen,
                 "fd %d is a dma-buf exported by '%s', not by the NVIDIA driver (nv_dmabuf)", fd,
                 name);
        return ENOTSUP;
    }
    if (offset > size || len > size - offset) {
        snprintf(why, whylen,
                 "fd %d: offset %llu + %zu bytes reaches past the dma-buf's %llu bytes", fd,
                 (unsigned long long)offset, len, size);
        return ERANGE;
    }
    int mt = 0;
    gt_CUdeviceptr base = 0;
    size_t bsz = 0;
    if (gt_cu.pointer_get_attribute(&mt, GT_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (gt_CUdeviceptr)a) !=
            GT_CUDA_SUCCESS ||
        mt != GT_CU_MEMORYTYPE_DEVICE) {
        snprintf(why, whylen, "%#lx is not CUDA device memory (fd %d)", (unsigned long)a, fd);
        return EFAULT;
    }
    /* The dma-buf starts at a - offset; NCCL exports whole pages, which may
     * reach past an allocation that is not a multiple of the page size.
     * Device memory whose range CUDA does not report is taken as it is. */
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t start = a - (uintptr_t)offset;
    int ranged = gt_cu.mem_get_address_range(&base, &bsz, (gt_CUdeviceptr)a) == GT_CUDA_SUCCESS;
    uintptr_t aend = (uintptr_t)((base + bsz + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1));
    if (offset > a || (ranged && (start < base || start + size > aend))) {
        snprintf(why, whylen,
                 "fd %d: the dma-buf (%llu bytes from %#lx) is not inside the CUDA allocation "
                 "[%#llx, +%zu) holding %#lx",
                 fd, size, (unsigned long)start, (unsigned long long)base, bsz, (unsigned long)a);
        return EFAULT;
    }
    return 0;
}

static int r_can_import(void *rctx, const char **why)
{
    (void)rctx;
    if (gt_cu_load() != 0) {
        if (why)
            *why = gt_cu.why;
        return 0;
    }
    if (!gt_cu.has_async) {
        if (why)
            *why = gt_cu.why_async;
        return 0;
    }
    return 1;
}

static void r_probe(void *rctx, struct gt_dev_probe *pr)
{
    const struct gt_gpumem_cfg *c = rctx;
    int ok = r_can_import(rctx, NULL);
    pr->dmabuf = ok ? GT_PROBE_SUPPORTED : GT_PROBE_UNSUPPORTED;
    pr->dmabuf_errno = ok ? 0 : EOPNOTSUPP;
    /* Emulated: there is no nvidia_peermem; the switch says "present". */
    pr->peermem = ok && c->peermem ? GT_PROBE_SUPPORTED : GT_PROBE_ABSENT;
}

static void *r_import(void *rctx, const struct gt_reg_policy *p, uint64_t offset, uintptr_t a,
                      size_t len, int fd, char *why, size_t whylen)
{
    (void)p;
    const struct gt_gpumem_cfg *c = rctx;
    if (c->dmabuf_errno) {
        snprintf(why, whylen, "%s (GDRTRACE_GPUMEM_DMABUF_ERRNO=%d, a test switch)",
                 strerror(c->dmabuf_errno), c->dmabuf_errno);
        snprintf(gt_gpumem_refusal, sizeof(gt_gpumem_refusal), "%s", why);
        errno = c->dmabuf_errno;
        return NULL;
    }
    int e = gt_gpumem_check_dmabuf(fd, offset, a, len, why, whylen);
    if (e) {
        snprintf(gt_gpumem_refusal, sizeof(gt_gpumem_refusal), "%s", why);
        errno = e;
        return NULL;
    }
    struct gm_handle *h = malloc(sizeof(*h));
    if (!h) {
        errno = ENOMEM;
        return NULL;
    }
    /* NCCL closes its fd when regMrDmaBuf returns. */
    h->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (h->fd < 0) {
        e = errno;
        snprintf(why, whylen, "cannot keep a duplicate of fd %d: %s", fd, strerror(e));
        free(h);
        errno = e;
        return NULL;
    }
    return h;
}

static void *r_reg_va(void *rctx, const struct gt_reg_policy *p, uintptr_t a, size_t len, int gpu)
{
    (void)rctx, (void)p, (void)len;
    if (gpu) {
        /* Emulated peermem: the address must at least be GPU memory. */
        int mt = 0;
        if (gt_cu.pointer_get_attribute(&mt, GT_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        (gt_CUdeviceptr)a) != GT_CUDA_SUCCESS ||
            mt != GT_CU_MEMORYTYPE_DEVICE) {
            errno = EFAULT;
            return NULL;
        }
    }
    struct gm_handle *h = malloc(sizeof(*h));
    if (!h) {
        errno = ENOMEM;
        return NULL;
    }
    h->fd = -1;
    return h;
}

static int r_dereg(void *rctx, void *hv)
{
    (void)rctx;
    struct gm_handle *h = hv;
    int rc = 0;
    if (h && h->fd >= 0 && close(h->fd) != 0)
        rc = errno;
    free(h);
    return rc;
}

const struct gt_registrar gt_gpumem_registrar = {
    .name = "gpumem",
    .import_call = "gpumem dma-buf import",
    .va_call = "gpumem VA registration (emulated peermem)",
    .dereg_call = "gpumem deregistration",
    .no_peermem = "emulated only with GDRTRACE_GPUMEM_PEERMEM=1",
    .can_import = r_can_import,
    .probe = r_probe,
    .import_dmabuf = r_import,
    .reg_va = r_reg_va,
    .dereg = r_dereg,
};
