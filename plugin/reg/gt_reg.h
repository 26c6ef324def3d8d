/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gt_reg.h — registration policy, device probes and the MR cache.
 *
 * Owns: how memory NCCL hands us is registered with a NIC, and what is said
 * about it (struct gt_reg_report, struct gt_dev_probe).  The policy makes no
 * verbs call itself: it goes through a registrar (struct gt_registrar below:
 * import a dma-buf, register a VA, deregister, probe what is present).  ib
 * uses gt_reg_verbs (gt_reg_verbs.c, the gt_ibv table); plugin/gpumem brings
 * its own.  With fakes in gt_ibv / gt_cu the whole policy runs without
 * hardware.
 *
 * The policy (DESIGN.md "Registration policy"), as implemented:
 *   GDRTRACE_REG=dmabuf (default): GPU memory by ibv_reg_dmabuf_mr.  NCCL's fd
 *     is used during the call only (NCCL closes it on return).  regMr(CUDA)
 *     exports an fd with cuMemGetHandleForAddressRange, registers by DMA-BUF,
 *     closes it, and reports asked=CUDA, method=DMABUF, exported_fd=1.
 *     If DMA-BUF fails: peermem (ibv_reg_mr on the GPU address) only when
 *     GDRTRACE_ALLOW_PEERMEM=1 and nvidia_peermem is present; otherwise the
 *     call fails with a message naming the errno, the device, the buffer and
 *     GDRTRACE_ALLOW_PEERMEM.
 *   GDRTRACE_REG=auto: as dmabuf, but GDRTRACE_ALLOW_PEERMEM defaults to 1
 *     (an explicit GDRTRACE_ALLOW_PEERMEM=0 still forbids the fallback).
 *   GDRTRACE_REG=peermem: GPU memory by ibv_reg_mr on its address (A/B runs);
 *     fails with PEERMEM_ABSENT when nvidia_peermem is not loaded.
 *   GDRTRACE_REG=host: GPU memory refused (POLICY_HOST); ptrSupport = HOST,
 *     so NCCL stages through host memory.
 *   Host memory is always registered with ibv_reg_mr.
 *
 * The report (what the recorder holds), per outcome:
 *   plain success:   method = DMABUF|PEERMEM|HOST, reason NONE (POLICY_PEERMEM
 *                    under REG=peermem), err 0.
 *   fallback:        method = PEERMEM, fell_back = 1, reason = why DMA-BUF
 *                    failed, err = its errno.
 *   failure:         method = FAILED, reason = the first cause (why DMA-BUF
 *                    failed, even when the fallback was then not allowed or
 *                    absent — the message says which), err = its errno, or
 *                    the CUresult for CUDA_EXPORT_FAILED; fell_back = 1 when
 *                    peermem was tried and failed too (reason then
 *                    PEERMEM_REG_FAILED, err its errno).
 *   cache hit:       the cached entry's method, cache_hit = 1, asked as asked.
 *
 * Threads: every function may be called from any thread; a device's cache is
 * guarded by its mutex (registration is not on the data path).
 */
#ifndef GDRTRACE_REG_GT_REG_H
#define GDRTRACE_REG_GT_REG_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/dl/gt_ibv.h"
#include "common/codes.h"
#include "common/gt_net.h"
#include "common/settings.h"

/*! gt_reg_policy_from_env() : the policy of the process's settings snapshot
 *  (gt_settings_get() of common/settings.h, where enum gt_reg_mode and struct
 *  gt_reg_policy live, so the shim records the same values); bad values were
 *  WARNed and defaulted when the snapshot was taken. */
void gt_reg_policy_from_env(struct gt_reg_policy *p);
const char *gt_reg_reason_name(int reason);

/* One registered range.  The ib transport uses it as NCCL's mhandle.  `h` is
 * the registrar's handle; under gt_reg_verbs it is the ibv_mr, which ib reads
 * as `mr`. */
struct gt_mr {
    union {
        struct ibv_mr *mr; /* gt_reg_verbs only */
        void *h;           /* any registrar */
    };
    uintptr_t base; /* registered range [base, end) */
    uintptr_t end;
    int method; /* enum gt_reg_method (never FAILED) */
    int gpu;    /* 1 when the memory is GPU memory (needs iflush) */
    int refs;   /* guarded by the device lock */
};

/* The registrar seam: the only calls that touch a device.  Each returns its
 * handle, or NULL with errno set (never 0); `why` (may be left empty) is one
 * line on why an import was refused, used instead of strerror.  `rctx` is
 * the registrar's own (the PD for verbs). */
struct gt_registrar {
    const char *name;        /* "verbs" */
    const char *import_call; /* names the import in messages: "ibv_reg_dmabuf_mr" */
    const char *va_call;     /* names the VA registration: "ibv_reg_mr" */
    const char *dereg_call;  /* "ibv_dereg_mr" */
    const char *no_peermem;  /* why peermem is absent: "no /sys/module/nvidia_peermem" */
    /* 1 when dma-bufs can be imported at all; else *why says why not */
    int (*can_import)(void *rctx, const char **why);
    /* fills probe->dmabuf, dmabuf_errno and peermem */
    void (*probe)(void *rctx, struct gt_dev_probe *probe);
    /* [a, a+len) from dma-buf `fd` at byte `offset`; fd is NCCL's or ours,
     * valid during the call only */
    void *(*import_dmabuf)(void *rctx, const struct gt_reg_policy *p, uint64_t offset, uintptr_t a,
                           size_t len, int fd, char *why, size_t whylen);
    /* host memory (gpu = 0) or GPU memory by its address (peermem, gpu = 1) */
    void *(*reg_va)(void *rctx, const struct gt_reg_policy *p, uintptr_t a, size_t len, int gpu);
    int (*dereg)(void *rctx, void *h); /* 0 or an errno */
};

/* The verbs registrar (rctx = struct ibv_pd *): gt_ibv's calls. */
extern const struct gt_registrar gt_reg_verbs;

/* Per device registration state (regIsGlobal: one PD per device). */
struct gt_reg_dev {
    char name[64];
    struct ibv_pd *pd; /* gt_reg_verbs' rctx */
    const struct gt_registrar *rg;
    void *rctx;
    struct gt_dev_probe probe;
    pthread_mutex_t lock;
    struct gt_mr **cache; /* guarded by lock */
    int ncache, cap;
};

/*! gt_reg_dev_init() / gt_reg_dev_fini() : set up the cache for `pd`
 *  (not owned).  fini deregisters whatever NCCL left registered. */
void gt_reg_dev_init(struct gt_reg_dev *d, const char *name, struct ibv_pd *pd);
/*! gt_reg_dev_init_registrar() : the same with registrar `rg` and its rctx. */
void gt_reg_dev_init_registrar(struct gt_reg_dev *d, const char *name,
                               const struct gt_registrar *rg, void *rctx);
void gt_reg_dev_fini(struct gt_reg_dev *d);

/* Where the peermem presence files are looked up ("" = the real root).
 * Tests point it at a temporary tree. */
extern const char *gt_reg_sysroot;

/*! gt_reg_probe() :
 *  Fills d->probe: the registrar's probe (verbs: the fd = -1 DMA-BUF probe
 *  on d->pd (EOPNOTSUPP / EPROTONOSUPPORT = unsupported, any other errno =
 *  supported; a missing symbol = unsupported with errno EOPNOTSUPP, as
 *  NCCL's wrapper does), nvidia_peermem presence (NCCL's sysfs paths,
 *  gt_reg_peermem_present)), the CUDA DMA-BUF attribute
 *  of every visible GPU (ABSENT without libcuda or GPUs), and then
 *  advertised/why from gt_reg_ptr_support(). */
void gt_reg_probe(struct gt_reg_dev *d, const struct gt_reg_policy *p);

/*! gt_reg_export_flags() : the flags of cuMemGetHandleForAddressRange for
 *  GPU address `a`: the PCIe mapping type where the GPU is C2C-attached
 *  (ATS) and the driver has it (CUDA 12.8), else 0, as NCCL. */
unsigned long long gt_reg_export_flags(uintptr_t a);

/*! gt_reg_ptr_support() : the GT_PTR_* bits to advertise for `probe` under
 *  `p`, with one line of why in probe->why; sets probe->advertised. */
int gt_reg_ptr_support(const struct gt_reg_policy *p, struct gt_dev_probe *probe);

/*! gt_reg_peermem_present() : 1 when any sysfs path NCCL checks for
 *  nvidia_peermem exists under gt_reg_sysroot. */
int gt_reg_peermem_present(void);

/*! gt_reg_register() :
 *  Registers [data, data+size) as NCCL asked (type GT_PTR_HOST/CUDA; fd >= 0
 *  for regMrDmaBuf) following the policy.  On GT_OK *out holds a reference
 *  (release with gt_reg_deregister).  On error *out is NULL, `err` holds one
 *  line naming the errno, the device, the buffer and the remedy, and `rep`
 *  says what happened.  `fd` is only used during the call. */
gt_result gt_reg_register(struct gt_reg_dev *d, const struct gt_reg_policy *p, void *data,
                          size_t size, int type, uint64_t offset, int fd, struct gt_mr **out,
                          struct gt_reg_report *rep, char *err, size_t errlen);

/*! gt_reg_deregister() : drops one reference; the last one deregisters the
 *  MR and removes it from the cache.  Returns GT_OK, or GT_INTERNAL_ERROR
 *  if `mr` is not in d's cache (double deregistration) or the registrar's
 *  dereg (ibv_dereg_mr) fails. */
gt_result gt_reg_deregister(struct gt_reg_dev *d, struct gt_mr *mr);

#endif
