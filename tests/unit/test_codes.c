/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_codes.c — the on-disk codes and their one names table: every code
 * this build knows has a name, names are unique (they are JSON keys and
 * Prometheus labels), unknown codes get none, and every reason code maps to
 * the counter slot the format promises (its own below GTR_REASON_OTHER, the
 * "other" slot above or below the range), with slots 0..15 at their 1.0
 * place and 16..31 in the 1.1 tail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/codes.h"
#include "gdrtrace/recorder_format.h"

static void test_every_reason_named_once(void **state)
{
    (void)state;
    for (int r = 0; r < GT_REASON_COUNT; r++) {
        const char *t = gt_reason_token(r);
        assert_non_null(t);
        assert_true(strlen(t) > 0);
        assert_string_equal(gt_reason_slot_token(r), t);
        for (int q = 0; q < r; q++)
            assert_string_not_equal(gt_reason_token(q), t);
        assert_string_not_equal(t, "other");
    }
    assert_null(gt_reason_token(GT_REASON_COUNT));
    assert_null(gt_reason_token(-1));
    assert_string_equal(gt_reason_slot_token(GTR_REASON_OTHER), "other");
    assert_null(gt_reason_slot_token(GTR_REASON_SLOTS));
    assert_string_equal(gt_reason_token(GT_REASON_NO_RDMA_DEVICE), "no-rdma-device");
}

static void test_other_names(void **state)
{
    (void)state;
    const char *asked[] = {"dmabuf", "cuda", "host"};
    const char *method[] = {"dmabuf", "peermem", "host", "failed"};
    const char *probe[] = {"unknown", "supported", "unsupported", "absent"};
    for (int i = 0; i < GT_ASKED_COUNT; i++)
        assert_string_equal(gt_asked_name(i), asked[i]);
    for (int i = 0; i < GT_METHOD_COUNT; i++)
        assert_string_equal(gt_method_name(i), method[i]);
    for (int i = 0; i < GT_PROBE_COUNT; i++)
        assert_string_equal(gt_probe_name(i), probe[i]);
    assert_string_equal(gt_asked_name(GT_ASKED_COUNT), "?");
    assert_string_equal(gt_method_name(-1), "?");
    assert_string_equal(gt_probe_name(GT_PROBE_COUNT), "unknown");
    /* the policy's codes read as GDRTRACE_REG's words (format 1.8's reg_mode) */
    const char *reg[] = {"dmabuf", "peermem", "host", "auto"};
    for (int i = 0; i < GT_REG_MODE_COUNT; i++)
        assert_string_equal(gt_reg_mode_name(i), reg[i]);
    assert_string_equal(gt_reg_mode_name(GT_REG_MODE_COUNT), "?");
    assert_string_equal(gt_reg_mode_name(-1), "?");
    for (int i = 0; i < GT_CALL_COUNT; i++)
        assert_non_null(gt_call_site_name(i));
    assert_string_equal(gt_call_site_name(GT_CALL_INNER_CONNECT), "connect");
    assert_null(gt_call_site_name(GT_CALL_COUNT));
}

static void test_reason_slots(void **state)
{
    (void)state;
    for (int r = 0; r < GTR_REASON_OTHER; r++)
        assert_int_equal(gtr_reason_slot(r), r);
    assert_int_equal(gtr_reason_slot(GTR_REASON_OTHER), GTR_REASON_OTHER);
    assert_int_equal(gtr_reason_slot(1000), GTR_REASON_OTHER);
    assert_int_equal(gtr_reason_slot(-1), GTR_REASON_OTHER);
    assert_int_equal(gtr_reason_slot(INT64_MIN), GTR_REASON_OTHER);

    static struct gtr_comm c;
    for (unsigned s = 0; s < GTR_REASON_SLOTS; s++) {
        *gtr_reason_counter(&c, GTR_FALLBACKS, s) = 100 + s;
        *gtr_reason_counter(&c, GTR_ERRORS, s) = 200 + s;
    }
    for (unsigned s = 0; s < GTR_REASON_SLOTS_1_0; s++) {
        assert_int_equal(c.fallback_by_reason_lo[s], 100 + s);
        assert_int_equal(c.error_by_reason_lo[s], 200 + s);
    }
    for (unsigned s = GTR_REASON_SLOTS_1_0; s < GTR_REASON_SLOTS; s++) {
        assert_int_equal(c.fallback_by_reason_hi[s - GTR_REASON_SLOTS_1_0], 100 + s);
        assert_int_equal(c.error_by_reason_hi[s - GTR_REASON_SLOTS_1_0], 200 + s);
        assert_int_equal(gtr_reason_count(&c, GTR_ERRORS, s), 200 + s);
    }
    /* the 1.1 tail starts where a 1.0 record ended */
    assert_int_equal(offsetof(struct gtr_comm, fallback_by_reason_hi), GTR_COMM_SIZE_1_0);
}

/* What NCCL asked, decided in one place for every layer (gt_asked_of). */
static void test_asked_of(void **state)
{
    (void)state;
    assert_int_equal(gt_asked_of(GT_PTR_HOST, -1), GT_ASKED_HOST);
    assert_int_equal(gt_asked_of(GT_PTR_CUDA, -1), GT_ASKED_CUDA);
    assert_int_equal(gt_asked_of(GT_PTR_CUDA | 0x8, -1), GT_ASKED_CUDA);
    assert_int_equal(gt_asked_of(GT_PTR_CUDA, 0), GT_ASKED_DMABUF);
    assert_int_equal(gt_asked_of(GT_PTR_CUDA | GT_PTR_DMABUF, 9), GT_ASKED_DMABUF);
    assert_int_equal(gt_asked_of(GT_PTR_HOST, -1), GT_ASKED_HOST);
    assert_int_equal(gt_asked_of(0, -1), GT_ASKED_HOST);
}

/* The method assumed when a transport does not say (gt_method_assumed), the
 * one rule of the inner plugin's report and the shim's fallback. */
static void test_method_assumed(void **state)
{
    (void)state;
    assert_int_equal(gt_method_assumed(GT_ASKED_DMABUF), GT_METHOD_DMABUF);
    assert_int_equal(gt_method_assumed(GT_ASKED_CUDA), GT_METHOD_PEERMEM);
    assert_int_equal(gt_method_assumed(GT_ASKED_HOST), GT_METHOD_HOST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_reason_named_once),
        cmocka_unit_test(test_other_names),
        cmocka_unit_test(test_reason_slots),
        cmocka_unit_test(test_asked_of),
        cmocka_unit_test(test_method_assumed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
