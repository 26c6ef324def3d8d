/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_shim_untraced.c — when tracing is off or impossible the job runs on
 * the bare transport.  Checks: GDRTRACE_DISABLE=1 makes gt_shim_wrap return
 * the inner table itself and creates no file; a recorder that cannot be
 * created (GDRTRACE_DIR names a missing directory) makes it return the inner
 * table too, with exactly one WARN through NCCL's logger that names the
 * directory and the errno text — and no second WARN on later wraps; and an
 * invalid GDRTRACE_EVENTS value is reported by name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim/shim.h"
#include "shim/shim_internal.h"
#include "tests/unit/capture_log.h"
#include "common/settings.h"

static gt_result f_devices(int *n)
{
    *n = 0;
    return GT_OK;
}

static const struct gt_net_ops inner = {.name = "bare", .devices = f_devices};

static void test_disable(void **state)
{
    (void)state;
    setenv("GDRTRACE_DISABLE", "1", 1);
    assert_ptr_equal(gt_shim_wrap(&inner, "test", capture_logger), &inner);
    assert_null(gt_shim_recorder());
    assert_int_equal(g_warns, 0);
    unsetenv("GDRTRACE_DISABLE");
}

static void test_cannot_create(void **state)
{
    (void)state;
    setenv("GDRTRACE_DIR", "/nonexistent/gdrtrace-test-dir", 1);
    setenv("GDRTRACE_EVENTS", "everything", 1);
    gt_settings_reset_for_test();
    assert_ptr_equal(gt_shim_wrap(&inner, "test", capture_logger), &inner);
    assert_null(gt_shim_recorder());
    /* one WARN for the bad GDRTRACE_EVENTS, one for the recorder */
    assert_int_equal(g_warns, 2);
    assert_non_null(strstr(g_last, "running untraced"));
    assert_non_null(strstr(g_last, "/nonexistent/gdrtrace-test-dir"));
    assert_non_null(strstr(g_last, "No such file or directory"));
    assert_ptr_equal(gt_shim_wrap(&inner, "test", capture_logger), &inner);
    assert_int_equal(g_warns, 2); /* never retried, never repeated */
    unsetenv("GDRTRACE_DIR");
    unsetenv("GDRTRACE_EVENTS");
}

static void test_bad_events_value_named(void **state)
{
    (void)state;
    /* the first WARN of test_cannot_create, said again by a new snapshot */
    setenv("GDRTRACE_EVENTS", "everything", 1);
    gt_settings_reset_for_test();
    g_warns = 0;
    g_last[0] = '\0';
    struct gt_rec_config cfg = {.dir = "/nonexistent/x", .mode = -1, .events_all = -1};
    struct gt_recorder r;
    char err[256];
    assert_int_not_equal(gt_rec_open(&r, &cfg, err, sizeof(err)), 0);
    assert_int_equal(g_warns, 1);
    assert_non_null(strstr(g_last, "GDRTRACE_EVENTS='everything'"));
    assert_non_null(strstr(g_last, "control|all"));
    unsetenv("GDRTRACE_EVENTS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disable),
        cmocka_unit_test(test_cannot_create),
        cmocka_unit_test(test_bad_events_value_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
