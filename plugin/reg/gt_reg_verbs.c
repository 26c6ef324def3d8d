/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gt_reg_verbs.c — the verbs registrar (gt_reg_verbs, contract in gt_reg.h):
 * every ibv_* call the registration policy makes, through the gt_ibv table.
 *
 * rctx is the device's struct ibv_pd *; handles are struct ibv_mr *.
 * Relaxed ordering is added when the policy asks for it and
 * ibv_reg_mr_iova2 exists.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/dl/gt_ibv.h"
#include "plugin/reg/gt_reg.h"

#define BASE_ACCESS                                                                                \
    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |                   \
     IBV_ACCESS_REMOTE_ATOMIC)

static int use_ro(const struct gt_reg_policy *p)
{
    return p->relaxed_ordering && gt_ibv.has_reg_mr_iova2;
}

static int v_can_import(void *rctx, const char **why)
{
    (void)rctx;
    if (why)
        *why = gt_ibv.why_reg_dmabuf_mr;
    return gt_ibv.has_reg_dmabuf_mr;
}

static void v_probe(void *rctx, struct gt_dev_probe *pr)
{
    if (!gt_ibv.has_reg_dmabuf_mr) {
        pr->dmabuf = GT_PROBE_UNSUPPORTED;
        pr->dmabuf_errno = EOPNOTSUPP;
    } else {
        errno = 0;
        struct ibv_mr *mr = gt_ibv.reg_dmabuf_mr(rctx, 0, 0, 0, -1, 0);
        int e = errno;
        if (mr) {
            /* fd -1 cannot succeed; a provider that says it did is odd but
             * clearly implements the call. */
            gt_ibv.dereg_mr(mr);
            e = 0;
        }
        pr->dmabuf_errno = e;
        pr->dmabuf =
            (e == EOPNOTSUPP || e == EPROTONOSUPPORT) ? GT_PROBE_UNSUPPORTED : GT_PROBE_SUPPORTED;
    }
    pr->peermem = gt_reg_peermem_present() ? GT_PROBE_SUPPORTED : GT_PROBE_ABSENT;
}

/* ibv_reg_mr on a virtual address (host memory, or GPU memory via peermem). */
static void *v_reg_va(void *rctx, const struct gt_reg_policy *p, uintptr_t a, size_t len, int gpu)
{
    (void)gpu;
    errno = 0;
    struct ibv_mr *mr;
    if (use_ro(p))
        mr =
            gt_ibv.reg_mr_iova2(rctx, (void *)a, len, a, BASE_ACCESS | IBV_ACCESS_RELAXED_ORDERING);
    else
        mr = gt_ibv.reg_mr(rctx, (void *)a, len, BASE_ACCESS);
    if (!mr && !errno)
        errno = EIO; /* a provider that fails without saying why */
    return mr;
}

static void *v_import(void *rctx, const struct gt_reg_policy *p, uint64_t offset, uintptr_t a,
                      size_t len, int fd, char *why, size_t whylen)
{
    int acc = BASE_ACCESS | (use_ro(p) ? IBV_ACCESS_RELAXED_ORDERING : 0);
    errno = 0;
    struct ibv_mr *mr = gt_ibv.reg_dmabuf_mr(rctx, offset, len, a, fd, acc);
    if (!mr && !errno)
        errno = EIO;
    if (!mr) { /* what explains a refusal: the call's arguments */
        int e = errno;
        snprintf(why, whylen, "%s (errno %d; access flags %#x)", strerror(e), e, (unsigned)acc);
        errno = e;
    }
    return mr;
}

static int v_dereg(void *rctx, void *h)
{
    (void)rctx;
    return gt_ibv.dereg_mr(h);
}

const struct gt_registrar gt_reg_verbs = {
    .name = "verbs",
    .import_call = "ibv_reg_dmabuf_mr",
    .va_call = "ibv_reg_mr",
    .dereg_call = "ibv_dereg_mr",
    .no_peermem = "no /sys/module/nvidia_peermem",
    .can_import = v_can_import,
    .probe = v_probe,
    .import_dmabuf = v_import,
    .reg_va = v_reg_va,
    .dereg = v_dereg,
};
