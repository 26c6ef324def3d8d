/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_text_util.c — the reader's string utilities (tools/lib/text_util.c):
 * gt_appendf appends, cuts at the end of the buffer and leaves a full one
 * as it is; gt_natcmp orders digit runs by value (node2 < node10, leading
 * zeros), is a total order (n02 vs n2 by bytes) and antisymmetric over a
 * set of names sorted by hand; gt_fmt_ns, gt_fmt_bytes and gt_fmt_ptr at
 * each unit boundary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "gdrtrace/codes.h"
#include "tools/lib/text_util.h"

static void appendf(void **state)
{
    (void)state;
    char b[12] = "";
    gt_appendf(b, sizeof(b), "%s", "abc");
    gt_appendf(b, sizeof(b), "-%d", 42);
    assert_string_equal(b, "abc-42");
    gt_appendf(b, sizeof(b), "%s", "0123456789"); /* cut: 11 chars and the NUL */
    assert_string_equal(b, "abc-4201234");
    gt_appendf(b, sizeof(b), "%s", "more"); /* full: unchanged */
    assert_string_equal(b, "abc-4201234");
    char one[1] = "";
    gt_appendf(one, sizeof(one), "x");
    assert_string_equal(one, "");
}

static int sign(int v)
{
    return (v > 0) - (v < 0);
}

static void natcmp(void **state)
{
    (void)state;
    assert_int_equal(gt_natcmp("node2", "node10"), -1);
    assert_int_equal(gt_natcmp("node10", "node2"), 1);
    assert_int_equal(gt_natcmp("node10", "node10"), 0);
    assert_int_equal(gt_natcmp("node007", "node7"), -1); /* equal by value: bytes '0' < '7' */
    assert_int_equal(gt_natcmp("node7", "node007"), 1);
    assert_int_equal(gt_natcmp("node", "node1"), -1);
    assert_int_equal(gt_natcmp("a", "b"), -1);
    assert_int_equal(gt_natcmp("", ""), 0);
    assert_int_equal(gt_natcmp("", "0"), -1);
    /* 30-digit runs: compared by length then digits, no overflow */
    assert_int_equal(
        gt_natcmp("x999999999999999999999999999999", "x1000000000000000000000000000000"), -1);
    /* a list in natural order, written by hand: every pair agrees */
    static const char *sorted[] = {"gpu",    "gpu0", "gpu00", "gpu1",    "gpu1a",    "gpu1b",
                                   "gpu2",   "gpu9", "gpu10", "gpu10-1", "gpu10-02", "gpu10-10",
                                   "gpu100", "gpuA", "h1",    "h1.r2",   "h1.r10",   "h2"};
    size_t n = sizeof(sorted) / sizeof(sorted[0]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int want = i < j ? -1 : i > j ? 1 : 0;
            int got = sign(gt_natcmp(sorted[i], sorted[j]));
            if (got != want)
                fail_msg("natcmp(%s, %s) = %d, want %d", sorted[i], sorted[j], got, want);
        }
}

static void fmt_ns(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(gt_fmt_ns(0, b, sizeof(b)), "0ns");
    assert_string_equal(gt_fmt_ns(999, b, sizeof(b)), "999ns");
    assert_string_equal(gt_fmt_ns(1000, b, sizeof(b)), "1.0us");
    assert_string_equal(gt_fmt_ns(12345, b, sizeof(b)), "12.3us");
    assert_string_equal(gt_fmt_ns(999949, b, sizeof(b)), "999.9us");
    assert_string_equal(gt_fmt_ns(1000000, b, sizeof(b)), "1.00ms");
    assert_string_equal(gt_fmt_ns(1200000, b, sizeof(b)), "1.20ms");
    assert_string_equal(gt_fmt_ns(1000000000, b, sizeof(b)), "1.00s");
    assert_string_equal(gt_fmt_ns(3400000000ull, b, sizeof(b)), "3.40s");
}

static void fmt_bytes(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(gt_fmt_bytes(0, b, sizeof(b)), "0 B");
    assert_string_equal(gt_fmt_bytes(1023, b, sizeof(b)), "1023 B");
    assert_string_equal(gt_fmt_bytes(1024, b, sizeof(b)), "1.0 KiB");
    assert_string_equal(gt_fmt_bytes(1536, b, sizeof(b)), "1.5 KiB");
    assert_string_equal(gt_fmt_bytes(64ull << 20, b, sizeof(b)), "64.0 MiB");
    assert_string_equal(gt_fmt_bytes(3ull << 30, b, sizeof(b)), "3.0 GiB");
    assert_string_equal(gt_fmt_bytes(1ull << 40, b, sizeof(b)), "1.0 TiB");
    assert_string_equal(gt_fmt_bytes(1ull << 50, b, sizeof(b)), "1.0 PiB");
    assert_string_equal(gt_fmt_bytes(UINT64_MAX, b, sizeof(b)), "16.0 EiB");
}

static void fmt_ptr(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(gt_fmt_ptr(0, b, sizeof(b)), "none");
    assert_string_equal(gt_fmt_ptr(GT_PTR_HOST, b, sizeof(b)), "HOST");
    assert_string_equal(gt_fmt_ptr(GT_PTR_CUDA, b, sizeof(b)), "CUDA");
    assert_string_equal(gt_fmt_ptr(GT_PTR_DMABUF, b, sizeof(b)), "DMABUF");
    assert_string_equal(gt_fmt_ptr(GT_PTR_HOST | GT_PTR_CUDA | GT_PTR_DMABUF, b, sizeof(b)),
                        "HOST|CUDA|DMABUF");
    assert_string_equal(gt_fmt_ptr(GT_PTR_CUDA | GT_PTR_DMABUF, b, sizeof(b)), "CUDA|DMABUF");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(appendf),   cmocka_unit_test(natcmp),  cmocka_unit_test(fmt_ns),
        cmocka_unit_test(fmt_bytes), cmocka_unit_test(fmt_ptr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
