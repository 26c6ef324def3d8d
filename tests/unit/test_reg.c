/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_reg.c — the registration policy, driven through the verbs/CUDA table
 * seam with fakes, for every combination of
 *   GDRTRACE_REG (dmabuf, peermem, host, auto) × GDRTRACE_ALLOW_PEERMEM
 *   (unset, 0, 1) × DMA-BUF probe (supported, unsupported, symbol missing) ×
 *   nvidia_peermem (present, absent) × CUDA (ok, export fails, no libcuda) ×
 *   DMA-BUF registration (ok, fails) × peermem registration (ok, fails) ×
 *   what NCCL asked (regMrDmaBuf fd, regMr CUDA, regMr HOST).
 * For each it checks the result code, the gt_reg_report (what the recorder
 * will hold), the error text (errno, device, buffer, the variable to set),
 * and which verbs/CUDA calls were made; and the advertised ptrSupport.  The
 * expected outcome comes from an oracle written from the contract in
 * plugin/reg/gt_reg.h, independently of the code under test.  Further tests
 * check the MR cache and relaxed ordering.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/dl/gt_cuda.h"
#include "common/dl/gt_ibv.h"
#include "plugin/reg/gt_reg.h"
#include "common/log.h"
#include "common/settings.h"
#include "tests/unit/capture_log.h"

/* ---- fakes ------------------------------------------------------------- */
static struct {
    int probe_errno; /* what reg_dmabuf_mr(fd -1) says */
    int dmabuf_fail; /* real-fd reg_dmabuf_mr fails with dmabuf_errno */
    int dmabuf_errno;
    int va_fail; /* reg_mr / reg_mr_iova2 fail with va_errno */
    int va_errno;
    int export_fail; /* cuMemGetHandleForAddressRange fails */
    int n_dmabuf, n_va, n_iova2, n_dereg, n_export, n_live;
    int last_fd, last_access;
    uint64_t last_offset, last_iova;
    size_t last_len;
    int exported_fd;               /* the fd handed out by the CUDA fake */
    unsigned long long last_flags; /* cuMemGetHandleForAddressRange's */
    int driver, ats;               /* driver version; the ATS (C2C) attribute */
} F;

static struct ibv_mr *new_mr(void *addr, size_t len)
{
    struct ibv_mr *mr = calloc(1, sizeof(*mr));
    mr->addr = addr;
    mr->length = len;
    mr->lkey = mr->rkey = 0x1234;
    F.n_live++;
    return mr;
}

static struct ibv_mr *f_reg_dmabuf(struct ibv_pd *pd, uint64_t off, size_t len, uint64_t iova,
                                   int fd, int access)
{
    (void)pd;
    if (fd == -1) {
        errno = F.probe_errno;
        return NULL;
    }
    F.n_dmabuf++;
    F.last_fd = fd, F.last_offset = off, F.last_len = len, F.last_iova = iova;
    F.last_access = access;
    if (F.dmabuf_fail) {
        errno = F.dmabuf_errno;
        return NULL;
    }
    return new_mr((void *)(uintptr_t)iova, len);
}

static struct ibv_mr *f_reg_mr(struct ibv_pd *pd, void *a, size_t len, int access)
{
    (void)pd;
    F.n_va++;
    F.last_len = len, F.last_iova = (uintptr_t)a, F.last_access = access;
    if (F.va_fail) {
        errno = F.va_errno;
        return NULL;
    }
    return new_mr(a, len);
}

static struct ibv_mr *f_reg_mr_iova2(struct ibv_pd *pd, void *a, size_t len, uint64_t iova,
                                     unsigned access)
{
    F.n_iova2++;
    (void)iova;
    return f_reg_mr(pd, a, len, (int)access);
}

static int f_dereg(struct ibv_mr *mr)
{
    F.n_dereg++;
    F.n_live--;
    free(mr);
    return 0;
}

static gt_CUresult f_count(int *n)
{
    *n = 1;
    return GT_CUDA_SUCCESS;
}
static gt_CUresult f_dev_get(gt_CUdevice *d, int o)
{
    *d = o;
    return GT_CUDA_SUCCESS;
}
static gt_CUresult f_attr(int *v, int a, gt_CUdevice d)
{
    (void)d;
    *v = a == GT_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED;
    return GT_CUDA_SUCCESS;
}
static gt_CUresult f_range(gt_CUdeviceptr *b, size_t *s, gt_CUdeviceptr p)
{
    *b = p & ~(gt_CUdeviceptr)0xfffff;
    *s = 1 << 24;
    return GT_CUDA_SUCCESS;
}
static gt_CUresult f_export(void *h, gt_CUdeviceptr p, size_t n, int t, unsigned long long fl)
{
    (void)p, (void)n;
    F.n_export++;
    F.last_flags = fl;
    assert_int_equal(t, GT_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD);
    if (F.export_fail)
        return GT_CUDA_ERROR_NOT_SUPPORTED;
    F.exported_fd = open("/dev/null", O_RDONLY);
    *(int *)h = F.exported_fd;
    return GT_CUDA_SUCCESS;
}

enum { CUDA_OK, CUDA_EXPORT_FAIL, CUDA_NONE, CUDA_N };
enum { PROBE_SUP, PROBE_UNSUP, PROBE_NOSYM, PROBE_N };
enum { ALLOW_UNSET, ALLOW_0, ALLOW_1, ALLOW_N };

static char sysroot[128];

static void install(int probe, int cuda, int with_iova2)
{
    struct gt_ibv_fns t = {.reg_mr = f_reg_mr, .dereg_mr = f_dereg};
    if (probe != PROBE_NOSYM)
        t.reg_dmabuf_mr = f_reg_dmabuf;
    if (with_iova2)
        t.reg_mr_iova2 = f_reg_mr_iova2;
    gt_ibv_install(&t);
    if (cuda == CUDA_NONE) {
        gt_cu_reset();
        setenv("GDRTRACE_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
        gt_cu_load();
        unsetenv("GDRTRACE_CUDA_LIB");
    } else {
        struct gt_cu_fns c = {.device_get_count = f_count,
                              .device_get = f_dev_get,
                              .device_get_attribute = f_attr,
                              .mem_get_address_range = f_range,
                              .mem_get_handle_for_address_range = f_export};
        gt_cu_install(&c);
    }
}

static void set_peermem(int present)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/sys/module/nvidia_peermem/version", sysroot);
    if (present) {
        int fd = open(p, O_CREAT | O_WRONLY, 0600);
        assert_true(fd >= 0);
        close(fd);
    } else
        unlink(p);
}

struct combo {
    int mode, allow, probe, peermem, cuda, dmabuf_fail, va_fail, asked;
};

struct expect {
    gt_result res;
    struct gt_reg_report rep;
    const char *text[4]; /* substrings the error must contain */
    int calls_dmabuf, calls_va, calls_export;
};

/* The oracle: gt_reg.h's contract, written out case by case. */
static void oracle(const struct combo *c, struct expect *x)
{
    memset(x, 0, sizeof(*x));
    x->rep.asked = c->asked;
    x->rep.method = GT_METHOD_FAILED;
    x->res = GT_SYSTEM_ERROR;
    int va_errno = EFAULT, dmabuf_errno = c->probe == PROBE_UNSUP ? EOPNOTSUPP : EINVAL;
    if (c->asked == GT_ASKED_HOST) {
        x->calls_va = 1;
        if (c->va_fail) {
            x->rep.reason = GT_REASON_HOST_REG_FAILED;
            x->rep.err = va_errno;
            x->text[0] = "errno 14";
        } else {
            x->res = GT_OK;
            x->rep.method = GT_METHOD_HOST;
        }
        return;
    }
    if (c->mode == GT_REG_HOST) {
        x->res = GT_INVALID_USAGE;
        x->rep.reason = GT_REASON_POLICY_HOST;
        x->text[0] = "GDRTRACE_REG=host";
        return;
    }
    if (c->mode == GT_REG_PEERMEM) {
        if (!c->peermem) {
            x->rep.reason = GT_REASON_PEERMEM_ABSENT;
            x->text[0] = "nvidia_peermem is not loaded";
            return;
        }
        x->calls_va = 1;
        if (c->va_fail) {
            x->rep.reason = GT_REASON_PEERMEM_REG_FAILED;
            x->rep.err = va_errno;
            x->text[0] = "errno 14";
            x->text[1] = "GDRTRACE_REG=peermem";
        } else {
            x->res = GT_OK;
            x->rep.method = GT_METHOD_PEERMEM;
            x->rep.reason = GT_REASON_POLICY_PEERMEM;
        }
        return;
    }
    int allow = c->allow == ALLOW_1 || (c->allow == ALLOW_UNSET && c->mode == GT_REG_AUTO);
    int reason, err;
    if (c->probe == PROBE_NOSYM) {
        reason = GT_REASON_NO_REG_DMABUF_SYMBOL, err = EOPNOTSUPP;
    } else if (c->asked == GT_ASKED_DMABUF) {
        x->calls_dmabuf = 1;
        if (!c->dmabuf_fail) {
            x->res = GT_OK;
            x->rep.method = GT_METHOD_DMABUF;
            return;
        }
        reason =
            c->probe == PROBE_UNSUP ? GT_REASON_DMABUF_UNSUPPORTED : GT_REASON_DMABUF_REG_FAILED;
        err = dmabuf_errno;
    } else if (c->probe == PROBE_UNSUP) {
        reason = GT_REASON_DMABUF_UNSUPPORTED, err = EOPNOTSUPP;
    } else if (c->cuda == CUDA_NONE) {
        reason = GT_REASON_CUDA_UNAVAILABLE, err = 0;
    } else {
        x->calls_export = 1;
        if (c->cuda == CUDA_EXPORT_FAIL) {
            reason = GT_REASON_CUDA_EXPORT_FAILED, err = GT_CUDA_ERROR_NOT_SUPPORTED;
        } else {
            x->calls_dmabuf = 1;
            if (!c->dmabuf_fail) {
                x->res = GT_OK;
                x->rep.method = GT_METHOD_DMABUF;
                x->rep.exported_fd = 1;
                return;
            }
            reason = GT_REASON_DMABUF_REG_FAILED, err = dmabuf_errno;
        }
    }
    x->rep.reason = reason;
    x->rep.err = err;
    x->text[0] = "DMA-BUF registration of GPU buffer";
    if (!allow) {
        x->text[1] = "GDRTRACE_ALLOW_PEERMEM=1 allows";
        return;
    }
    if (!c->peermem) {
        x->text[1] = "nvidia_peermem is not loaded";
        return;
    }
    x->rep.fell_back = 1;
    x->calls_va = 1;
    if (c->va_fail) {
        x->rep.reason = GT_REASON_PEERMEM_REG_FAILED;
        x->rep.err = va_errno;
        x->text[1] = "peermem fallback";
        x->text[2] = "errno 14";
        return;
    }
    x->res = GT_OK;
    x->rep.method = GT_METHOD_PEERMEM;
}

static const char *const mode_env[] = {"dmabuf", "peermem", "host", "auto"};

static void every_policy_combination(void **state)
{
    (void)state;
    int n = 0;
    char *gpu = aligned_alloc(4096, 3 * 4096); /* stands in for GPU memory */
    for (int mode = 0; mode < 4; mode++)
        for (int allow = 0; allow < ALLOW_N; allow++)
            for (int probe = 0; probe < PROBE_N; probe++)
                for (int peermem = 0; peermem < 2; peermem++)
                    for (int cuda = 0; cuda < CUDA_N; cuda++)
                        for (int dfail = 0; dfail < 2; dfail++)
                            for (int vfail = 0; vfail < 2; vfail++)
                                for (int asked = 0; asked < GT_ASKED_COUNT; asked++) {
                                    struct combo c = {mode, allow, probe, peermem,
                                                      cuda, dfail, vfail, asked};
                                    char label[160];
                                    snprintf(label, sizeof(label),
                                             "REG=%s ALLOW=%s probe=%d peermem=%d cuda=%d "
                                             "dmabuf_fail=%d va_fail=%d asked=%d",
                                             mode_env[mode],
                                             allow == ALLOW_UNSET ? "unset"
                                             : allow == ALLOW_0   ? "0"
                                                                  : "1",
                                             probe, peermem, cuda, dfail, vfail, asked);
                                    setenv("GDRTRACE_REG", mode_env[mode], 1);
                                    if (allow == ALLOW_UNSET)
                                        unsetenv("GDRTRACE_ALLOW_PEERMEM");
                                    else
                                        setenv("GDRTRACE_ALLOW_PEERMEM",
                                               allow == ALLOW_1 ? "1" : "0", 1);
                                    gt_settings_reset_for_test();
                                    struct gt_reg_policy pol;
                                    gt_reg_policy_from_env(&pol);
                                    install(probe, cuda, 0);
                                    set_peermem(peermem);
                                    memset(&F, 0, sizeof(F));
                                    F.probe_errno = probe == PROBE_UNSUP ? EOPNOTSUPP : EBADF;
                                    F.dmabuf_fail = dfail;
                                    F.dmabuf_errno = probe == PROBE_UNSUP ? EOPNOTSUPP : EINVAL;
                                    F.va_fail = vfail;
                                    F.va_errno = EFAULT;
                                    F.export_fail = cuda == CUDA_EXPORT_FAIL;

                                    struct gt_reg_dev d;
                                    gt_reg_dev_init(&d, "fakedev0", (struct ibv_pd *)&d);
                                    gt_reg_probe(&d, &pol);
                                    /* The probe itself. */
                                    int want_dmabuf = probe == PROBE_SUP ? GT_PROBE_SUPPORTED
                                                                         : GT_PROBE_UNSUPPORTED;
                                    if (d.probe.dmabuf != want_dmabuf ||
                                        d.probe.dmabuf_errno !=
                                            (probe == PROBE_SUP ? EBADF : EOPNOTSUPP) ||
                                        d.probe.peermem !=
                                            (peermem ? GT_PROBE_SUPPORTED : GT_PROBE_ABSENT) ||
                                        d.probe.cuda_dmabuf != (cuda == CUDA_NONE
                                                                    ? GT_PROBE_ABSENT
                                                                    : GT_PROBE_SUPPORTED))
                                        fail_msg("%s: probe dmabuf=%d/%d peermem=%d cuda=%d", label,
                                                 d.probe.dmabuf, d.probe.dmabuf_errno,
                                                 d.probe.peermem, d.probe.cuda_dmabuf);
                                    F.n_dmabuf = 0;

                                    int fd =
                                        asked == GT_ASKED_DMABUF ? open("/dev/null", O_RDONLY) : -1;
                                    int type = asked == GT_ASKED_HOST ? GT_PTR_HOST : GT_PTR_CUDA;
                                    struct gt_mr *mr = NULL;
                                    struct gt_reg_report rep;
                                    char err[512];
                                    char *buf = gpu + 100;
                                    gt_result r = gt_reg_register(&d, &pol, buf, 5000, type, 100,
                                                                  fd, &mr, &rep, err, sizeof(err));
                                    if (fd >= 0)
                                        close(fd);
                                    struct expect x;
                                    oracle(&c, &x);
                                    if (r != x.res || rep.asked != x.rep.asked ||
                                        rep.method != x.rep.method || rep.reason != x.rep.reason ||
                                        rep.err != x.rep.err || rep.fell_back != x.rep.fell_back ||
                                        rep.exported_fd != x.rep.exported_fd || rep.cache_hit != 0)
                                        fail_msg("%s:\n got res=%d method=%s reason=%s err=%d "
                                                 "fell_back=%d exported=%d\n"
                                                 " want res=%d method=%s reason=%s err=%d "
                                                 "fell_back=%d exported=%d\n err: %s",
                                                 label, r, gt_method_name(rep.method),
                                                 gt_reg_reason_name(rep.reason), rep.err,
                                                 rep.fell_back, rep.exported_fd, x.res,
                                                 gt_method_name(x.rep.method),
                                                 gt_reg_reason_name(x.rep.reason), x.rep.err,
                                                 x.rep.fell_back, x.rep.exported_fd, err);
                                    if (F.n_dmabuf != x.calls_dmabuf || F.n_va != x.calls_va ||
                                        F.n_export != x.calls_export)
                                        fail_msg(
                                            "%s: calls dmabuf=%d va=%d export=%d, want %d %d %d",
                                            label, F.n_dmabuf, F.n_va, F.n_export, x.calls_dmabuf,
                                            x.calls_va, x.calls_export);
                                    if (r == GT_OK) {
                                        assert_non_null(mr);
                                        assert_string_equal(err, "");
                                        assert_true(mr->base <= (uintptr_t)buf &&
                                                    (uintptr_t)buf + 5000 <= mr->end);
                                        assert_int_equal(gt_reg_deregister(&d, mr), GT_OK);
                                    } else {
                                        assert_null(mr);
                                        char addr[32];
                                        snprintf(addr, sizeof(addr), "%p", (void *)buf);
                                        if (!strstr(err, "fakedev0") || !strstr(err, addr) ||
                                            !strstr(err, "5000"))
                                            fail_msg("%s: error text lacks device/buffer/size: %s",
                                                     label, err);
                                        for (int i = 0; i < 4 && x.text[i]; i++)
                                            if (!strstr(err, x.text[i]))
                                                fail_msg("%s: error text lacks '%s': %s", label,
                                                         x.text[i], err);
                                        if (x.rep.err &&
                                            x.rep.reason != GT_REASON_CUDA_EXPORT_FAILED) {
                                            char en[24];
                                            snprintf(en, sizeof(en), "errno %d", x.rep.err);
                                            if (!strstr(err, en))
                                                fail_msg("%s: error text lacks '%s': %s", label, en,
                                                         err);
                                        }
                                    }
                                    /* The exported fd is ours: it must be closed before the call
                                     * returns. */
                                    if (F.n_export && !F.export_fail)
                                        assert_int_equal(fcntl(F.exported_fd, F_GETFD), -1);
                                    assert_int_equal(F.n_live, 0);
                                    gt_reg_dev_fini(&d);
                                    n++;
                                }
    unsetenv("GDRTRACE_REG");
    unsetenv("GDRTRACE_ALLOW_PEERMEM");
    free(gpu);
    print_message("checked %d combinations\n", n);
    assert_int_equal(n, 4 * ALLOW_N * PROBE_N * 2 * CUDA_N * 2 * 2 * GT_ASKED_COUNT);
}

/* ptrSupport per policy and probe outcome, with the reason line. */
static void advertised_ptr_support(void **state)
{
    (void)state;
    struct {
        int mode, allow, dmabuf, peermem, cuda, bits;
        const char *why;
    } cases[] = {
        {GT_REG_DMABUF, 0, 1, 0, 1, GT_PTR_HOST | GT_PTR_DMABUF | GT_PTR_CUDA, "exported via CUDA"},
        {GT_REG_DMABUF, 0, 1, 0, 0, GT_PTR_HOST | GT_PTR_DMABUF, "fd from NCCL only"},
        {GT_REG_DMABUF, 1, 1, 1, 0, GT_PTR_HOST | GT_PTR_DMABUF | GT_PTR_CUDA, "by peermem"},
        {GT_REG_DMABUF, 0, 0, 1, 1, GT_PTR_HOST, "GDRTRACE_ALLOW_PEERMEM=0"},
        {GT_REG_DMABUF, 1, 0, 1, 1, GT_PTR_HOST | GT_PTR_CUDA, "peermem allowed and present"},
        {GT_REG_DMABUF, 1, 0, 0, 1, GT_PTR_HOST, "nvidia_peermem absent"},
        {GT_REG_AUTO, 1, 0, 1, 0, GT_PTR_HOST | GT_PTR_CUDA, "peermem allowed"},
        {GT_REG_PEERMEM, 0, 1, 1, 1, GT_PTR_HOST | GT_PTR_CUDA, "GDRTRACE_REG=peermem and"},
        {GT_REG_PEERMEM, 0, 1, 0, 1, GT_PTR_HOST, "not loaded"},
        {GT_REG_HOST, 1, 1, 1, 1, GT_PTR_HOST, "GDRTRACE_REG=host"},
    };
    install(PROBE_SUP, CUDA_OK, 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct gt_reg_policy p = {cases[i].mode, cases[i].allow, 1};
        struct gt_dev_probe pr = {
            .dmabuf = cases[i].dmabuf ? GT_PROBE_SUPPORTED : GT_PROBE_UNSUPPORTED,
            .peermem = cases[i].peermem ? GT_PROBE_SUPPORTED : GT_PROBE_ABSENT,
            .cuda_dmabuf = cases[i].cuda ? GT_PROBE_SUPPORTED : GT_PROBE_ABSENT};
        int bits = gt_reg_ptr_support(&p, &pr);
        if (bits != cases[i].bits || pr.advertised != bits || !strstr(pr.why, cases[i].why))
            fail_msg("case %zu: bits %#x want %#x, why '%s' want '%s'", i, bits, cases[i].bits,
                     pr.why, cases[i].why);
    }
}

/* The cache: a repeated or contained registration is a refcounted hit; the
 * MR is released only with the last reference; host and GPU never mix; an
 * unknown handle is refused. */
static void mr_cache(void **state)
{
    (void)state;
    install(PROBE_SUP, CUDA_OK, 0);
    memset(&F, 0, sizeof(F));
    F.probe_errno = EBADF;
    struct gt_reg_policy pol = {GT_REG_DMABUF, 0, 1};
    struct gt_reg_dev d;
    gt_reg_dev_init(&d, "fakedev0", (struct ibv_pd *)&d);
    gt_reg_probe(&d, &pol);
    char *buf = aligned_alloc(4096, 4 * 4096);
    struct gt_mr *a, *b, *c, *g;
    struct gt_reg_report rep;
    char err[256];
    assert_int_equal(
        gt_reg_register(&d, &pol, buf + 10, 8000, GT_PTR_HOST, 0, -1, &a, &rep, err, sizeof(err)),
        GT_OK);
    assert_int_equal(rep.cache_hit, 0);
    /* page-aligned */
    assert_int_equal(a->base, (uintptr_t)buf);
    assert_int_equal(a->end, (uintptr_t)buf + 8192);
    assert_int_equal(
        gt_reg_register(&d, &pol, buf + 4096, 100, GT_PTR_HOST, 0, -1, &b, &rep, err, sizeof(err)),
        GT_OK);
    assert_int_equal(rep.cache_hit, 1);
    assert_int_equal(rep.method, GT_METHOD_HOST);
    assert_ptr_equal(a, b);
    assert_int_equal(F.n_va, 1);
    /* Beyond the cached range: a new MR. */
    assert_int_equal(
        gt_reg_register(&d, &pol, buf + 8000, 1000, GT_PTR_HOST, 0, -1, &c, &rep, err, sizeof(err)),
        GT_OK);
    assert_int_equal(rep.cache_hit, 0);
    assert_ptr_not_equal(a, c);
    /* Same addresses as GPU memory: not served from a host entry. */
    assert_int_equal(
        gt_reg_register(&d, &pol, buf + 10, 100, GT_PTR_CUDA, 0, -1, &g, &rep, err, sizeof(err)),
        GT_OK);
    assert_int_equal(rep.cache_hit, 0);
    assert_int_equal(rep.method, GT_METHOD_DMABUF);
    assert_int_equal(gt_reg_deregister(&d, a), GT_OK);
    assert_int_equal(F.n_dereg, 0);
    assert_int_equal(gt_reg_deregister(&d, b), GT_OK);
    assert_int_equal(F.n_dereg, 1);
    /* a/b is gone: a third deregistration is refused, not a double free. */
    assert_int_equal(gt_reg_deregister(&d, a), GT_INTERNAL_ERROR);
    /* After invalidation the same range registers afresh. */
    assert_int_equal(
        gt_reg_register(&d, &pol, buf + 10, 8000, GT_PTR_HOST, 0, -1, &a, &rep, err, sizeof(err)),
        GT_OK);
    assert_int_equal(rep.cache_hit, 0);
    assert_int_equal(gt_reg_deregister(&d, a), GT_OK);
    assert_int_equal(gt_reg_deregister(&d, c), GT_OK);
    assert_int_equal(gt_reg_deregister(&d, g), GT_OK);
    assert_int_equal(F.n_live, 0);
    /* fini releases what is left */
    assert_int_equal(
        gt_reg_register(&d, &pol, buf, 10, GT_PTR_HOST, 0, -1, &a, &rep, err, sizeof(err)), GT_OK);
    gt_reg_dev_fini(&d);
    assert_int_equal(F.n_live, 0);
    free(buf);
}

/* Relaxed ordering: used through ibv_reg_mr_iova2 when libibverbs has it and
 * the policy allows it; plain ibv_reg_mr otherwise. */
static void relaxed_ordering(void **state)
{
    (void)state;
    char *buf = aligned_alloc(4096, 4096);
    for (int iova2 = 0; iova2 < 2; iova2++)
        for (int ro = 0; ro < 2; ro++) {
            install(PROBE_SUP, CUDA_OK, iova2);
            memset(&F, 0, sizeof(F));
            F.probe_errno = EBADF;
            struct gt_reg_policy pol = {GT_REG_DMABUF, 0, ro};
            struct gt_reg_dev d;
            gt_reg_dev_init(&d, "fakedev0", (struct ibv_pd *)&d);
            struct gt_mr *m;
            char err[256];
            assert_int_equal(
                gt_reg_register(&d, &pol, buf, 64, GT_PTR_HOST, 0, -1, &m, NULL, err, sizeof(err)),
                GT_OK);
            int want = iova2 && ro;
            assert_int_equal(F.n_iova2, want);
            assert_int_equal(!!(F.last_access & IBV_ACCESS_RELAXED_ORDERING), want);
            assert_true(F.last_access & IBV_ACCESS_REMOTE_WRITE);
            gt_reg_dev_fini(&d);
        }
    free(buf);
}

/* NCCL's fd with an offset: the dma-buf offset and iova line up with the
 * buffer, and the range is widened only where the dma-buf reaches. */
static gt_CUresult f_version(int *v)
{
    *v = F.driver;
    return GT_CUDA_SUCCESS;
}
static gt_CUresult f_ptr_attr(void *data, int a, gt_CUdeviceptr p)
{
    (void)p;
    assert_int_equal(a, GT_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
    *(int *)data = 0;
    return GT_CUDA_SUCCESS;
}
/* One 16 MiB allocation at 0x7f0000100000. */
static gt_CUresult f_range_one(gt_CUdeviceptr *b, size_t *sz, gt_CUdeviceptr p)
{
    (void)p;
    *b = 0x7f0000100000ull;
    *sz = 1 << 24;
    return GT_CUDA_SUCCESS;
}
static gt_CUresult f_attr_ats(int *v, int a, gt_CUdevice d)
{
    (void)d;
    *v = a == GT_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED ||
         (a == GT_CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES && F.ats);
    return GT_CUDA_SUCCESS;
}

/* Our own export (regMr of CUDA memory under GDRTRACE_REG=dmabuf): the
 * PCIe mapping flag on a C2C (ATS) GPU with CUDA >= 12.8, as NCCL, else 0;
 * a buffer past its allocation is an error naming both ranges (it was
 * clamped to a shorter registration); a refused ibv_reg_dmabuf_mr names
 * its arguments. */
static void own_export_flags_and_range(void **state)
{
    (void)state;
    struct gt_reg_policy pol = {GT_REG_DMABUF, 0, 0};
    char err[512];
    struct gt_mr *m;
    static const struct {
        int driver, ats;
        unsigned long long flags;
    } cases[] = {
        {12080, 1, GT_CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE}, {12080, 0, 0}, {12040, 1, 0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        install(PROBE_SUP, CUDA_OK, 0);
        struct gt_cu_fns c = {.device_get_count = f_count,
                              .device_get = f_dev_get,
                              .device_get_attribute = f_attr_ats,
                              .driver_get_version = f_version,
                              .pointer_get_attribute = f_ptr_attr,
                              .mem_get_address_range = f_range_one,
                              .mem_get_handle_for_address_range = f_export};
        gt_cu_install(&c);
        memset(&F, 0, sizeof(F));
        F.probe_errno = EBADF;
        F.driver = cases[i].driver;
        F.ats = cases[i].ats;
        F.last_flags = 99;
        struct gt_reg_dev d;
        gt_reg_dev_init(&d, "fakedev0", (struct ibv_pd *)&d);
        gt_reg_probe(&d, &pol);
        void *gpu = (void *)(uintptr_t)0x7f0000100000ull; /* never touched */
        assert_int_equal(
            gt_reg_register(&d, &pol, gpu, 4096, GT_PTR_CUDA, 0, -1, &m, NULL, err, sizeof(err)),
            GT_OK);
        assert_int_equal(F.n_export, 1);
        assert_int_equal(F.last_flags, cases[i].flags);
        /* 100 bytes before the end of its 16 MiB allocation, 1000 long */
        void *tail = (void *)(uintptr_t)(0x7f0000100000ull + (1u << 24) - 100);
        assert_int_not_equal(
            gt_reg_register(&d, &pol, tail, 1000, GT_PTR_CUDA, 0, -1, &m, NULL, err, sizeof(err)),
            GT_OK);
        assert_int_equal(F.n_export, 1); /* refused before exporting */
        assert_non_null(strstr(err, "extends past its CUDA allocation"));
        assert_non_null(strstr(err, "0x7f0001100000"));
        /* a refused import names offset, length, iova, size and flags */
        F.dmabuf_fail = 1;
        F.dmabuf_errno = EINVAL;
        void *other = (void *)(uintptr_t)0x7f0000200000ull;
        assert_int_not_equal(
            gt_reg_register(&d, &pol, other, 8192, GT_PTR_CUDA, 0, -1, &m, NULL, err, sizeof(err)),
            GT_OK);
        const char *words[] = {"offset 0",     "length 8192",     "iova 0x7f0000200000",
                               "dma-buf size", "access flags 0x", "Invalid argument"};
        for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
            if (!strstr(err, words[w]))
                fail_msg("'%s' not in: %s", words[w], err);
        gt_reg_dev_fini(&d);
    }
}

static void dmabuf_fd_offset(void **state)
{
    (void)state;
    install(PROBE_SUP, CUDA_OK, 0);
    memset(&F, 0, sizeof(F));
    F.probe_errno = EBADF;
    struct gt_reg_policy pol = {GT_REG_DMABUF, 0, 0};
    struct gt_reg_dev d;
    gt_reg_dev_init(&d, "fakedev0", (struct ibv_pd *)&d);
    gt_reg_probe(&d, &pol);
    char *buf = aligned_alloc(4096, 2 * 4096);
    int fd = open("/dev/null", O_RDONLY); /* size 0: no widening at the end */
    struct gt_mr *m;
    char err[256];
    /* buf+300 is byte 300 of the dma-buf: the page start is byte 0. */
    assert_int_equal(gt_reg_register(&d, &pol, buf + 300, 1000, GT_PTR_CUDA, 300, fd, &m, NULL, err,
                                     sizeof(err)),
                     GT_OK);
    assert_int_equal(F.last_offset, 0);
    assert_int_equal(F.last_iova, (uintptr_t)buf);
    assert_int_equal(F.last_len, 1300);
    assert_int_equal(F.last_fd, fd);
    gt_reg_dev_fini(&d);
    /* buf+300 is byte 100: it cannot reach back to the page start. */
    gt_reg_dev_init(&d, "fakedev0", (struct ibv_pd *)&d);
    d.probe.dmabuf = GT_PROBE_SUPPORTED;
    assert_int_equal(gt_reg_register(&d, &pol, buf + 300, 1000, GT_PTR_CUDA, 100, fd, &m, NULL, err,
                                     sizeof(err)),
                     GT_OK);
    assert_int_equal(F.last_offset, 100);
    assert_int_equal(F.last_iova, (uintptr_t)(buf + 300));
    assert_int_equal(F.last_len, 1000);
    gt_reg_dev_fini(&d);
    close(fd);
    free(buf);
}

static int setup(void **state)
{
    (void)state;
    snprintf(sysroot, sizeof(sysroot), "/tmp/gt_test_reg.XXXXXX");
    assert_non_null(mkdtemp(sysroot));
    char p[256];
    snprintf(p, sizeof(p), "%s/sys", sysroot);
    mkdir(p, 0700);
    snprintf(p, sizeof(p), "%s/sys/module", sysroot);
    mkdir(p, 0700);
    snprintf(p, sizeof(p), "%s/sys/module/nvidia_peermem", sysroot);
    mkdir(p, 0700);
    gt_reg_sysroot = sysroot;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char p[256];
    set_peermem(0);
    snprintf(p, sizeof(p), "%s/sys/module/nvidia_peermem", sysroot);
    rmdir(p);
    snprintf(p, sizeof(p), "%s/sys/module", sysroot);
    rmdir(p);
    snprintf(p, sizeof(p), "%s/sys", sysroot);
    rmdir(p);
    rmdir(sysroot);
    gt_ibv_reset();
    gt_cu_reset();
    return 0;
}

/* WARN lines about GDRTRACE_REG seen by the plugin's logger. */
/* The policy is the process's snapshot: ib's init after a finalize and a
 * re-init (gt_reg_policy_from_env each time) uses what the first init saw,
 * whatever the environment says now, and an invalid value is WARNed once
 * per snapshot, not at every init (before: once per ib init). */
static void policy_is_the_snapshot(void **state)
{
    (void)state;
    setenv("GDRTRACE_REG", "host", 1);
    gt_settings_reset_for_test();
    struct gt_reg_policy pol;
    gt_reg_policy_from_env(&pol); /* ib's first init */
    assert_int_equal(pol.mode, GT_REG_HOST);
    setenv("GDRTRACE_REG", "dmabuf", 1);
    setenv("GDRTRACE_ALLOW_PEERMEM", "1", 1);
    gt_reg_policy_from_env(&pol); /* a second init in the same process */
    assert_int_equal(pol.mode, GT_REG_HOST);
    assert_int_equal(pol.allow_peermem, 0);

    setenv("GDRTRACE_REG", "bogus", 1);
    gt_settings_reset_for_test();
    g_warns = 0;
    g_warn_about = "GDRTRACE_REG";
    gt_log_set_logger(capture_logger);
    for (int i = 0; i < 3; i++) {
        gt_reg_policy_from_env(&pol);
        assert_int_equal(pol.mode, GT_REG_DMABUF);
    }
    assert_int_equal(g_warns, 1);
    unsetenv("GDRTRACE_REG");
    unsetenv("GDRTRACE_ALLOW_PEERMEM");
    gt_settings_reset_for_test();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_policy_combination),   cmocka_unit_test(policy_is_the_snapshot),
        cmocka_unit_test(advertised_ptr_support),     cmocka_unit_test(mr_cache),
        cmocka_unit_test(relaxed_ordering),           cmocka_unit_test(dmabuf_fd_offset),
        cmocka_unit_test(own_export_flags_and_range),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
