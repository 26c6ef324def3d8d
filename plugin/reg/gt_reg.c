/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gt_reg.c — registration policy, probes and MR cache (contract in gt_reg.h).
 *
 * Cache invariants:
 *  1. Every entry is a live MR with refs >= 1; the last deregistration
 *     removes it, so a freed-and-reused address is never served stale after
 *     NCCL deregistered it.
 *  2. A lookup hits only an entry of the same memory kind (GPU vs host)
 *     whose range contains the whole request.
 *  3. Host and peermem ranges are page-aligned (what the NIC pins anyway);
 *     DMA-BUF ranges are aligned as far as the dma-buf itself reaches.
 */
#include "plugin/reg/gt_reg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/dl/gt_cuda.h"
#include "common/env.h"
#include "common/log.h"
#include "common/codes.h"

const char *gt_reg_sysroot = "";

const char *gt_reg_reason_name(int r)
{
    const char *t = gt_reason_token(r);
    return t ? t : "?";
}

void gt_reg_policy_from_env(struct gt_reg_policy *p)
{
    *p = gt_settings_get()->reg;
}

/* ---- probes ------------------------------------------------------------ */

int gt_reg_peermem_present(void)
{
    /* Every path any NCCL version checks (nccl-net-abi.md §4.1). */
    static const char *const paths[] = {
        "/sys/kernel/mm/memory_peers/nv_mem/version",
        "/sys/kernel/mm/memory_peers/nv_mem_nc/version",
        "/sys/kernel/mm/memory_peers/nvidia-peermem/version",
        "/sys/module/nvidia_peermem/version",
    };
    char p[512];
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", gt_reg_sysroot, paths[i]);
        if (access(p, F_OK) == 0)
            return 1;
    }
    return 0;
}

static int cuda_dmabuf_state(void)
{
    if (gt_cu_load() != 0)
        return GT_PROBE_ABSENT;
    int n = 0;
    if (gt_cu.device_get_count(&n) != GT_CUDA_SUCCESS || n <= 0)
        return GT_PROBE_ABSENT;
    for (int i = 0; i < n; i++) {
        gt_CUdevice dev;
        int v = 0;
        if (gt_cu.device_get(&dev, i) != GT_CUDA_SUCCESS ||
            gt_cu.device_get_attribute(&v, GT_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev) !=
                GT_CUDA_SUCCESS ||
            !v)
            return GT_PROBE_UNSUPPORTED;
    }
    return GT_PROBE_SUPPORTED;
}

static int ptr_support(const struct gt_reg_policy *p, struct gt_dev_probe *pr, int can_import,
                       const char *no_import);

void gt_reg_probe(struct gt_reg_dev *d, const struct gt_reg_policy *p)
{
    struct gt_dev_probe *pr = &d->probe;
    memset(pr, 0, sizeof(*pr));
    d->rg->probe(d->rctx, pr);
    pr->cuda_dmabuf = cuda_dmabuf_state();
    const char *no_import = NULL;
    int ci = d->rg->can_import(d->rctx, &no_import);
    /* verbs keeps its fixed sentence; another registrar says why itself */
    ptr_support(p, pr, ci, d->rg == &gt_reg_verbs ? NULL : no_import);
}

int gt_reg_ptr_support(const struct gt_reg_policy *p, struct gt_dev_probe *pr)
{
    return ptr_support(p, pr, gt_ibv.has_reg_dmabuf_mr, NULL);
}

static int ptr_support(const struct gt_reg_policy *p, struct gt_dev_probe *pr, int can_import,
                       const char *no_import)
{
    int bits = GT_PTR_HOST;
    int peermem_ok = pr->peermem == GT_PROBE_SUPPORTED;
    int dmabuf_ok = pr->dmabuf == GT_PROBE_SUPPORTED;
    /* Exporting an fd ourselves for regMr(CUDA) needs the CUDA side too. */
    int export_ok = dmabuf_ok && pr->cuda_dmabuf == GT_PROBE_SUPPORTED && gt_cu.has_dmabuf_export;
    const char *why;
    char buf[sizeof(pr->why)];
    switch (p->mode) {
    case GT_REG_HOST:
        why = "GDRTRACE_REG=host: GPU memory is staged through host memory";
        break;
    case GT_REG_PEERMEM:
        if (peermem_ok) {
            bits |= GT_PTR_CUDA;
            why = "GDRTRACE_REG=peermem and nvidia_peermem is loaded";
        } else
            why = "GDRTRACE_REG=peermem but nvidia_peermem is not loaded: host memory only";
        break;
    default:
        if (dmabuf_ok) {
            bits |= GT_PTR_DMABUF;
            if (export_ok) {
                bits |= GT_PTR_CUDA;
                why = "DMA-BUF supported by NIC and GPU (regMr(CUDA) exported via CUDA)";
            } else if (p->allow_peermem && peermem_ok) {
                bits |= GT_PTR_CUDA;
                why = "DMA-BUF supported by NIC; regMr(CUDA) by peermem (allowed, present)";
            } else
                why = "DMA-BUF supported by NIC (fd from NCCL only: no CUDA export here)";
        } else if (p->allow_peermem && peermem_ok) {
            bits |= GT_PTR_CUDA;
            why = "DMA-BUF unsupported by NIC; peermem allowed and present";
        } else if (!can_import && no_import) {
            snprintf(buf, sizeof(buf), "no DMA-BUF import (%s): host memory only", no_import);
            why = buf;
        } else if (!can_import)
            why = "libibverbs lacks ibv_reg_dmabuf_mr and peermem not usable: host memory only";
        else if (p->allow_peermem)
            why = "DMA-BUF unsupported by NIC and nvidia_peermem absent: host memory only";
        else
            why = "DMA-BUF unsupported by NIC and GDRTRACE_ALLOW_PEERMEM=0: host memory only";
        break;
    }
    snprintf(pr->why, sizeof(pr->why), "%s", why);
    pr->advertised = bits;
    return bits;
}

/* ---- cache ------------------------------------------------------------- */

void gt_reg_dev_init_registrar(struct gt_reg_dev *d, const char *name,
                               const struct gt_registrar *rg, void *rctx)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "%s", name);
    d->rg = rg;
    d->rctx = rctx;
    pthread_mutex_init(&d->lock, NULL);
}

void gt_reg_dev_init(struct gt_reg_dev *d, const char *name, struct ibv_pd *pd)
{
    gt_reg_dev_init_registrar(d, name, &gt_reg_verbs, pd);
    d->pd = pd;
}

void gt_reg_dev_fini(struct gt_reg_dev *d)
{
    pthread_mutex_lock(&d->lock);
    for (int i = 0; i < d->ncache; i++) {
        d->rg->dereg(d->rctx, d->cache[i]->h);
        free(d->cache[i]);
    }
    free(d->cache);
    d->cache = NULL;
    d->ncache = d->cap = 0;
    pthread_mutex_unlock(&d->lock);
    pthread_mutex_destroy(&d->lock);
}

/* Caller holds d->lock. */
static struct gt_mr *cache_find(struct gt_reg_dev *d, uintptr_t a, uintptr_t e, int gpu)
{
    for (int i = 0; i < d->ncache; i++) {
        struct gt_mr *m = d->cache[i];
        if (m->gpu == gpu && m->base <= a && e <= m->end)
            return m;
    }
    return NULL;
}

/* Caller holds d->lock.  Takes ownership of mr on success. */
static int cache_add(struct gt_reg_dev *d, struct gt_mr *m)
{
    if (d->ncache == d->cap) {
        int cap = d->cap ? 2 * d->cap : 16;
        struct gt_mr **c = realloc(d->cache, (size_t)cap * sizeof(*c));
        if (!c)
            return ENOMEM;
        d->cache = c;
        d->cap = cap;
    }
    d->cache[d->ncache++] = m;
    return 0;
}

/* ---- registration ------------------------------------------------------ */

/* The registrar's calls; NULL with errno (never 0) on failure. */
static void *reg_va(struct gt_reg_dev *d, const struct gt_reg_policy *p, uintptr_t a, uintptr_t e,
                    int gpu)
{
    errno = 0;
    void *h = d->rg->reg_va(d->rctx, p, a, e - a, gpu);
    if (!h && !errno)
        errno = EIO;
    return h;
}

static void *reg_dmabuf(struct gt_reg_dev *d, const struct gt_reg_policy *p, uint64_t offset,
                        uintptr_t a, uintptr_t e, int fd, char *why, size_t whylen)
{
    errno = 0;
    why[0] = 0;
    void *h = d->rg->import_dmabuf(d->rctx, p, offset, a, e - a, fd, why, whylen);
    if (!h && !errno)
        errno = EIO;
    return h;
}

struct attempt {
    int reason; /* first cause of a DMA-BUF failure */
    int err;
    char what[320]; /* the failed step, for the message */
};

/* DMA-BUF with NCCL's fd.  Fills *range with what was registered. */
static void *try_dmabuf_fd(struct gt_reg_dev *d, const struct gt_reg_policy *p, uintptr_t a,
                           uintptr_t e, uint64_t offset, int fd, uintptr_t *ra, uintptr_t *re,
                           struct attempt *at)
{
    const char *no_import = "";
    if (!d->rg->can_import(d->rctx, &no_import)) {
        at->reason = GT_REASON_NO_REG_DMABUF_SYMBOL;
        at->err = EOPNOTSUPP;
        snprintf(at->what, sizeof(at->what), "%s", no_import);
        return NULL;
    }
    /* Widen to pages where the dma-buf itself covers them: the fd's byte
     * `offset` is `a`, so it reaches back `offset` bytes; its size (llseek
     * on a dma-buf fd gives it) bounds the end. */
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t wa = a & ~(uintptr_t)(pg - 1);
    uint64_t off = offset;
    if (a - wa <= offset) {
        off = offset - (a - wa);
    } else
        wa = a;
    uintptr_t we = (e + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
    off_t fsz = lseek(fd, 0, SEEK_END);
    if (fsz < 0 || (uint64_t)fsz < off + (we - wa))
        we = e;
    char why[200];
    void *mr = reg_dmabuf(d, p, off, wa, we, fd, why, sizeof(why));
    if (!mr) {
        at->err = errno;
        at->reason = d->probe.dmabuf == GT_PROBE_UNSUPPORTED ? GT_REASON_DMABUF_UNSUPPORTED
                                                             : GT_REASON_DMABUF_REG_FAILED;
        snprintf(at->what, sizeof(at->what),
                 "%s(fd %d, offset %llu, length %zu, iova %#lx, dma-buf size %lld) failed: %s",
                 d->rg->import_call, fd, (unsigned long long)off, (size_t)(we - wa),
                 (unsigned long)wa, (long long)fsz, why[0] ? why : strerror(at->err));
        return NULL;
    }
    *ra = wa;
    *re = we;
    return mr;
}

unsigned long long gt_reg_export_flags(uintptr_t a)
{
    /* As NCCL (transport/net.cc) where the GPU reaches the CPU over C2C and
     * the NIC over PCIe: without the flag the driver maps the dma-buf for
     * C2C, which a PCIe NIC cannot reach.  C2C is read as ATS (pageable
     * memory through the host's page tables: Grace Hopper/Blackwell); the
     * flag exists from CUDA 12.8. */
    int ver = 0, ord = -1, ats = 0;
    gt_CUdevice dev;
    if (gt_cu.driver_get_version(&ver) != GT_CUDA_SUCCESS || ver < 12080)
        return 0;
    if (gt_cu.pointer_get_attribute(&ord, GT_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                    (gt_CUdeviceptr)a) != GT_CUDA_SUCCESS ||
        gt_cu.device_get(&dev, ord) != GT_CUDA_SUCCESS ||
        gt_cu.device_get_attribute(
            &ats, GT_CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, dev) !=
            GT_CUDA_SUCCESS)
        return 0;
    return ats ? GT_CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE : 0;
}

/* DMA-BUF with an fd we export from CUDA for regMr(CUDA). */
static void *try_dmabuf_export(struct gt_reg_dev *d, const struct gt_reg_policy *p, uintptr_t a,
                               uintptr_t e, uintptr_t *ra, uintptr_t *re, struct attempt *at)
{
    const char *no_import = "";
    if (!d->rg->can_import(d->rctx, &no_import)) {
        at->reason = GT_REASON_NO_REG_DMABUF_SYMBOL;
        at->err = EOPNOTSUPP;
        snprintf(at->what, sizeof(at->what), "%s", no_import);
        return NULL;
    }
    if (d->probe.dmabuf == GT_PROBE_UNSUPPORTED) {
        /* No point exporting: the NIC said no at init. */
        at->reason = GT_REASON_DMABUF_UNSUPPORTED;
        at->err = d->probe.dmabuf_errno;
        snprintf(at->what, sizeof(at->what), "the NIC's DMA-BUF probe failed at init: %s",
                 strerror(at->err));
        return NULL;
    }
    if (gt_cu_load() != 0) {
        at->reason = GT_REASON_CUDA_UNAVAILABLE;
        at->err = 0;
        snprintf(at->what, sizeof(at->what), "cannot export a dma-buf: %s", gt_cu.why);
        return NULL;
    }
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t wa = a & ~(uintptr_t)(pg - 1);
    uintptr_t we = (e + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
    gt_CUdeviceptr base = 0;
    size_t bsz = 0;
    if (gt_cu.mem_get_address_range(&base, &bsz, (gt_CUdeviceptr)a) == GT_CUDA_SUCCESS && bsz) {
        /* A buffer running past its allocation cannot be exported whole:
         * a shorter registration would fail later, on the wire, far from
         * the cause; say it here. */
        if (a < base || e > base + bsz) {
            at->reason = GT_REASON_CUDA_EXPORT_FAILED;
            at->err = EINVAL;
            snprintf(at->what, sizeof(at->what),
                     "buffer [%#lx, %#lx) extends past its CUDA allocation [%#llx, %#llx)",
                     (unsigned long)a, (unsigned long)e, (unsigned long long)base,
                     (unsigned long long)(base + bsz));
            return NULL;
        }
        /* The page rounding stays inside the allocation: CUDA exports
         * allocations, not pages. */
        if (wa < base)
            wa = (uintptr_t)base;
        if (we > base + bsz)
            we = (uintptr_t)(base + bsz);
    }
    unsigned long long flags = gt_reg_export_flags(a);
    int fd = -1;
    gt_CUresult r = gt_cu.mem_get_handle_for_address_range(
        &fd, (gt_CUdeviceptr)wa, we - wa, GT_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, flags);
    if (r != GT_CUDA_SUCCESS || fd < 0) {
        at->reason = GT_REASON_CUDA_EXPORT_FAILED;
        at->err = r;
        snprintf(at->what, sizeof(at->what),
                 "cuMemGetHandleForAddressRange(%#lx, %zu bytes, flags %#llx) failed: %s (%d)",
                 (unsigned long)wa, (size_t)(we - wa), flags, gt_cu_errstr(r), r);
        return NULL;
    }
    char why[200];
    void *mr = reg_dmabuf(d, p, 0, wa, we, fd, why, sizeof(why));
    int e2 = errno;
    close(fd);
    if (!mr) {
        at->err = e2;
        at->reason = GT_REASON_DMABUF_REG_FAILED;
        snprintf(at->what, sizeof(at->what),
                 "%s on the exported fd (offset 0, length %zu, iova %#lx, "
                 "dma-buf size %zu) failed: %s",
                 d->rg->import_call, (size_t)(we - wa), (unsigned long)wa, (size_t)(we - wa),
                 why[0] ? why : strerror(e2));
        return NULL;
    }
    *ra = wa;
    *re = we;
    return mr;
}

gt_result gt_reg_register(struct gt_reg_dev *d, const struct gt_reg_policy *p, void *data,
                          size_t size, int type, uint64_t offset, int fd, struct gt_mr **out,
                          struct gt_reg_report *rep, char *err, size_t errlen)
{
    struct gt_reg_report dummy;
    if (!rep)
        rep = &dummy;
    memset(rep, 0, sizeof(*rep));
    if (err && errlen)
        err[0] = 0;
    *out = NULL;
    int asked = gt_asked_of(type, fd);
    rep->asked = asked;
    rep->method = GT_METHOD_FAILED;
    uintptr_t a = (uintptr_t)data, e = a + size;
    if (!data || size == 0 || e < a || (fd < 0 && type != GT_PTR_HOST && type != GT_PTR_CUDA)) {
        rep->reason = GT_REASON_BAD_ARGUMENT;
        rep->err = EINVAL;
        snprintf(err, errlen, "%s: refusing to register buffer %p size %zu type %d fd %d", d->name,
                 data, size, type, fd);
        return GT_INVALID_ARGUMENT;
    }
    int gpu = asked != GT_ASKED_HOST;
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t pa = a & ~(uintptr_t)(pg - 1);
    uintptr_t pe = (e + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);

    pthread_mutex_lock(&d->lock);
    struct gt_mr *hit = cache_find(d, a, e, gpu);
    if (hit) {
        hit->refs++;
        rep->method = hit->method;
        rep->cache_hit = 1;
        *out = hit;
        pthread_mutex_unlock(&d->lock);
        return GT_OK;
    }

    void *mr = NULL;
    uintptr_t ra = pa, re = pe;
    int method = GT_METHOD_FAILED;
    struct attempt at = {0};
    gt_result res = GT_SYSTEM_ERROR;

    if (!gpu) {
        mr = reg_va(d, p, pa, pe, 0);
        if (mr)
            method = GT_METHOD_HOST;
        else {
            rep->reason = GT_REASON_HOST_REG_FAILED;
            rep->err = errno;
            snprintf(err, errlen, "%s: %s of host buffer %p size %zu failed: %s (errno %d)",
                     d->name, d->rg->va_call, data, size, strerror(rep->err), rep->err);
        }
        goto done;
    }
    if (p->mode == GT_REG_HOST) {
        rep->reason = GT_REASON_POLICY_HOST;
        res = GT_INVALID_USAGE;
        snprintf(err, errlen,
                 "%s: GPU buffer %p size %zu refused: GDRTRACE_REG=host registers host memory "
                 "only (NCCL was told ptrSupport=HOST)",
                 d->name, data, size);
        goto done;
    }
    if (p->mode == GT_REG_PEERMEM) {
        if (d->probe.peermem != GT_PROBE_SUPPORTED) {
            rep->reason = GT_REASON_PEERMEM_ABSENT;
            snprintf(err, errlen,
                     "%s: GPU buffer %p size %zu: GDRTRACE_REG=peermem but nvidia_peermem is "
                     "not loaded (%s)",
                     d->name, data, size, d->rg->no_peermem);
            goto done;
        }
        mr = reg_va(d, p, pa, pe, 1);
        if (mr) {
            method = GT_METHOD_PEERMEM;
            rep->reason = GT_REASON_POLICY_PEERMEM;
        } else {
            rep->reason = GT_REASON_PEERMEM_REG_FAILED;
            rep->err = errno;
            snprintf(err, errlen,
                     "%s: peermem %s of GPU buffer %p size %zu failed: %s (errno %d) "
                     "(GDRTRACE_REG=peermem)",
                     d->name, d->rg->va_call, data, size, strerror(rep->err), rep->err);
        }
        goto done;
    }

    /* dmabuf / auto */
    if (fd >= 0)
        mr = try_dmabuf_fd(d, p, a, e, offset, fd, &ra, &re, &at);
    else
        mr = try_dmabuf_export(d, p, a, e, &ra, &re, &at);
    if (mr) {
        method = GT_METHOD_DMABUF;
        rep->exported_fd = fd < 0;
        goto done;
    }
    rep->reason = at.reason;
    rep->err = at.err;
    if (!p->allow_peermem) {
        snprintf(err, errlen,
                 "%s: DMA-BUF registration of GPU buffer %p size %zu failed (%s; errno %d) and "
                 "the peermem fallback is not allowed (GDRTRACE_ALLOW_PEERMEM=1 allows it)",
                 d->name, data, size, at.what, at.err);
        goto done;
    }
    if (d->probe.peermem != GT_PROBE_SUPPORTED) {
        snprintf(err, errlen,
                 "%s: DMA-BUF registration of GPU buffer %p size %zu failed (%s; errno %d) and "
                 "GDRTRACE_ALLOW_PEERMEM=1 but nvidia_peermem is not loaded",
                 d->name, data, size, at.what, at.err);
        goto done;
    }
    rep->fell_back = 1;
    ra = pa;
    re = pe;
    mr = reg_va(d, p, pa, pe, 1);
    if (mr) {
        method = GT_METHOD_PEERMEM;
        GT_INFO(GT_LOGSUB_NET,
                "%s: GPU buffer %p size %zu registered by peermem after DMA-BUF failed (%s)",
                d->name, data, size, at.what);
    } else {
        int e2 = errno;
        rep->reason = GT_REASON_PEERMEM_REG_FAILED;
        rep->err = e2;
        snprintf(err, errlen,
                 "%s: DMA-BUF registration of GPU buffer %p size %zu failed (%s; errno %d), then "
                 "the peermem fallback (GDRTRACE_ALLOW_PEERMEM=1) failed too: %s: %s "
                 "(errno %d)",
                 d->name, data, size, at.what, at.err, d->rg->va_call, strerror(e2), e2);
    }

done:
    if (mr) {
        struct gt_mr *m = calloc(1, sizeof(*m));
        if (!m || cache_add(d, m) != 0) {
            free(m);
            d->rg->dereg(d->rctx, mr);
            rep->method = GT_METHOD_FAILED;
            rep->err = ENOMEM;
            snprintf(err, errlen, "%s: out of memory for the MR cache", d->name);
            pthread_mutex_unlock(&d->lock);
            return GT_SYSTEM_ERROR;
        }
        m->h = mr;
        m->base = ra;
        m->end = re;
        m->method = method;
        m->gpu = gpu;
        m->refs = 1;
        rep->method = method;
        *out = m;
        res = GT_OK;
    } else {
        rep->method = GT_METHOD_FAILED;
        GT_WARN("%s", err);
    }
    pthread_mutex_unlock(&d->lock);
    return res;
}

gt_result gt_reg_deregister(struct gt_reg_dev *d, struct gt_mr *m)
{
    gt_result res = GT_OK;
    pthread_mutex_lock(&d->lock);
    int i;
    for (i = 0; i < d->ncache && d->cache[i] != m; i++)
        ;
    if (i == d->ncache) {
        GT_WARN("%s: deregistration of an unknown memory handle %p", d->name, (void *)m);
        res = GT_INTERNAL_ERROR;
        goto out;
    }
    if (--m->refs > 0)
        goto out;
    d->cache[i] = d->cache[--d->ncache];
    int rc = d->rg->dereg(d->rctx, m->h);
    if (rc) {
        GT_WARN("%s: %s failed: %s", d->name, d->rg->dereg_call, strerror(rc));
        res = GT_SYSTEM_ERROR;
    }
    free(m);
out:
    pthread_mutex_unlock(&d->lock);
    return res;
}
