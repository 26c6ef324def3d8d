/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_dl.c — the dlopen'd verbs and CUDA tables keep their promise: every
 * slot is callable whatever was found, missing pieces answer "unsupported"
 * with a recorded reason, and the test seam (install/reset) works.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/dl/gt_cuda.h"
#include "common/dl/gt_ibv.h"

static void assert_all_ibv_slots(void)
{
    /* Every function slot (they precede `loaded`) must be non-NULL. */
    const char *p = (const char *)&gt_ibv;
    for (size_t off = 0; off < offsetof(struct gt_ibv_fns, loaded); off += sizeof(void (*)(void))) {
        void (*f)(void);
        memcpy(&f, p + off, sizeof(f));
        assert_non_null(f);
    }
}

/* A library that does not exist: load fails with ENOENT, the reason names the
 * path and the variable, and every slot is a stub answering EOPNOTSUPP. */
static void ibv_missing_library_gives_stubs(void **state)
{
    (void)state;
    gt_ibv_reset();
    setenv("GDRTRACE_IBVERBS_LIB", "/nonexistent/libibverbs.so.1", 1);
    assert_int_equal(gt_ibv_load(), ENOENT);
    unsetenv("GDRTRACE_IBVERBS_LIB");
    assert_int_equal(gt_ibv.loaded, 0);
    assert_non_null(strstr(gt_ibv.why, "/nonexistent/libibverbs.so.1"));
    assert_non_null(strstr(gt_ibv.why, "GDRTRACE_IBVERBS_LIB"));
    assert_all_ibv_slots();
    int n = 7;
    errno = 0;
    assert_null(gt_ibv.get_device_list(&n));
    assert_int_equal(n, 0);
    assert_int_equal(errno, EOPNOTSUPP);
    errno = 0;
    assert_null(gt_ibv.reg_dmabuf_mr(NULL, 0, 0, 0, -1, 0));
    assert_int_equal(errno, EOPNOTSUPP);
    assert_int_equal(gt_ibv.modify_qp(NULL, NULL, 0), EOPNOTSUPP);
    assert_int_equal(gt_ibv.has_reg_dmabuf_mr, 0);
    assert_true(strlen(gt_ibv.why_reg_dmabuf_mr) > 0);
    /* A second load does not retry: the answer is cached. */
    assert_int_equal(gt_ibv_load(), ENOENT);
}

/* The system library, when installed: core symbols at IBVERBS_1.1 resolve and
 * the optional ones are reported as found or with a reason. */
static void ibv_system_library(void **state)
{
    (void)state;
    gt_ibv_reset();
    int rc = gt_ibv_load();
    if (rc == ENOENT) {
        assert_int_equal(gt_ibv.loaded, 0);
        skip();
    }
    assert_int_equal(rc, 0);
    assert_int_equal(gt_ibv.loaded, 1);
    assert_string_equal(gt_ibv.why, "");
    assert_all_ibv_slots();
    if (!gt_ibv.has_reg_dmabuf_mr)
        assert_non_null(strstr(gt_ibv.why_reg_dmabuf_mr, "IBVERBS_1.12"));
    /* On a host without RDMA devices the real call returns an empty list. */
    int n = -1;
    struct ibv_device **l = gt_ibv.get_device_list(&n);
    assert_true(n >= 0);
    if (l)
        gt_ibv.free_device_list(l);
    assert_string_equal(gt_ibv.wc_status_str(IBV_WC_SUCCESS), "success");
}

static struct ibv_mr fake_mr;
static struct ibv_mr *fake_reg_mr(struct ibv_pd *pd, void *a, size_t l, int acc)
{
    (void)pd, (void)acc;
    fake_mr.addr = a;
    fake_mr.length = l;
    return &fake_mr;
}

/* The seam: an installed table keeps the given slots, stubs the rest, and
 * derives has_* from what was given. */
static void ibv_install_fills_missing(void **state)
{
    (void)state;
    struct gt_ibv_fns t = {.reg_mr = fake_reg_mr};
    gt_ibv_install(&t);
    assert_int_equal(gt_ibv.loaded, 1);
    assert_int_equal(gt_ibv_load(), 0);
    assert_all_ibv_slots();
    char buf[8];
    assert_ptr_equal(gt_ibv.reg_mr(NULL, buf, sizeof(buf), 0), &fake_mr);
    assert_int_equal(gt_ibv.has_reg_dmabuf_mr, 0);
    assert_non_null(strstr(gt_ibv.why_reg_dmabuf_mr, "not installed"));
    errno = 0;
    assert_null(gt_ibv.reg_dmabuf_mr(NULL, 0, 0, 0, -1, 0));
    assert_int_equal(errno, EOPNOTSUPP);
    gt_ibv_reset();
}

/* No libcuda: every slot answers NOT_INITIALIZED except the export entry,
 * which says NOT_SUPPORTED; the reason names the library. */
static void cuda_missing_library_gives_stubs(void **state)
{
    (void)state;
    gt_cu_reset();
    setenv("GDRTRACE_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
    assert_int_equal(gt_cu_load(), ENOENT);
    unsetenv("GDRTRACE_CUDA_LIB");
    assert_int_equal(gt_cu.loaded, 0);
    assert_non_null(strstr(gt_cu.why, "/nonexistent/libcuda.so.1"));
    int n = 5;
    assert_int_equal(gt_cu.device_get_count(&n), GT_CUDA_ERROR_NOT_INITIALIZED);
    assert_int_equal(n, 0);
    int fd = -1;
    assert_int_equal(gt_cu.mem_get_handle_for_address_range(
                         &fd, 0x1000, 4096, GT_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0),
                     GT_CUDA_ERROR_NOT_SUPPORTED);
    assert_string_equal(gt_cu_errstr(GT_CUDA_ERROR_NOT_SUPPORTED), "CUDA_ERROR_NOT_SUPPORTED");
    assert_int_equal(gt_cu.has_dmabuf_export, 0);
}

static gt_CUresult fake_count(int *c)
{
    *c = 3;
    return GT_CUDA_SUCCESS;
}

static void cuda_install(void **state)
{
    (void)state;
    struct gt_cu_fns t = {.device_get_count = fake_count};
    gt_cu_install(&t);
    int n = 0;
    assert_int_equal(gt_cu.device_get_count(&n), GT_CUDA_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(gt_cu.has_dmabuf_export, 0);
    assert_int_equal(gt_cu.mem_alloc(NULL, 1), GT_CUDA_ERROR_NOT_SUPPORTED);
    gt_cu_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ibv_missing_library_gives_stubs),
        cmocka_unit_test(ibv_system_library),
        cmocka_unit_test(ibv_install_fills_missing),
        cmocka_unit_test(cuda_missing_library_gives_stubs),
        cmocka_unit_test(cuda_install),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
