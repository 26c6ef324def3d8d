/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_env.c — strict parsing of GDRTRACE_* variables and command-line
 * numbers (common/env.c).  Checks: integers are base 10 ("010" is ten, not
 * eight; "0x10", " 5", "5 ", "", "+" and out-of-range values are refused);
 * an invalid variable gives exactly one WARN naming the variable and the
 * value and the default is used; a valid one gives no WARN; choices and
 * booleans refuse unknown words the same way; a retired variable, set, gives
 * one WARN naming it, its value and what replaced it, unset or empty none;
 * an invalid GDRTRACE_DEBUG is said once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four it needs */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/env.h"
#include "common/log.h"
#include "tests/unit/capture_log.h"

static void test_parse_long(void **state)
{
    (void)state;
    long x = -7;
    assert_int_equal(gt_parse_long("010", 0, 100, &x), 0);
    assert_int_equal(x, 10); /* base 10: not octal 8 */
    assert_int_equal(gt_parse_long("-3", -5, 5, &x), 0);
    assert_int_equal(x, -3);
    assert_int_equal(gt_parse_long("+4", 0, 5, &x), 0);
    assert_int_equal(x, 4);
    static const char *const bad[] = {
        "0x10", " 5", "5 ", "", "+", "-", "1e3", "12abc", "6", "-6", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        x = -7;
        assert_int_equal(gt_parse_long(bad[i], -5, 5, &x), -1);
        assert_int_equal(x, -7); /* untouched */
    }
    assert_int_equal(gt_parse_long(NULL, 0, 1, &x), -1);
}

static void test_env_long(void **state)
{
    (void)state;
    setenv("GDRTRACE_TEST_N", "010", 1);
    g_warns = 0;
    assert_int_equal(gt_env_long("GDRTRACE_TEST_N", 3, 0, 100), 10);
    assert_int_equal(g_warns, 0);
    static const char *const bad[] = {"0x10", "ten", " 5", "101", "-1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv("GDRTRACE_TEST_N", bad[i], 1);
        g_warns = 0;
        assert_int_equal(gt_env_long("GDRTRACE_TEST_N", 3, 0, 100), 3);
        assert_int_equal(g_warns, 1);
        assert_non_null(strstr(g_last, "GDRTRACE_TEST_N"));
        assert_non_null(strstr(g_last, bad[i]));
    }
    unsetenv("GDRTRACE_TEST_N");
    g_warns = 0;
    assert_int_equal(gt_env_long("GDRTRACE_TEST_N", 3, 0, 100), 3);
    assert_int_equal(g_warns, 0);
}

static void test_choice_and_bool(void **state)
{
    (void)state;
    static const char *const choices[] = {"tsc", "monotonic", NULL};
    setenv("GDRTRACE_TEST_C", "MONOTONIC", 1);
    g_warns = 0;
    assert_int_equal(gt_env_choice("GDRTRACE_TEST_C", choices, 0), 1);
    setenv("GDRTRACE_TEST_C", "hpet", 1);
    assert_int_equal(gt_env_choice("GDRTRACE_TEST_C", choices, 0), 0);
    assert_int_equal(g_warns, 1);
    assert_non_null(strstr(g_last, "GDRTRACE_TEST_C='hpet'"));
    assert_non_null(strstr(g_last, "tsc|monotonic"));
    setenv("GDRTRACE_TEST_C", "maybe", 1);
    g_warns = 0;
    assert_int_equal(gt_env_bool("GDRTRACE_TEST_C", 1), 1);
    assert_int_equal(g_warns, 1);
    unsetenv("GDRTRACE_TEST_C");
}

static void test_retired(void **state)
{
    (void)state;
    unsetenv("GDRTRACE_TEST_R");
    g_warns = 0;
    assert_int_equal(gt_env_retired("GDRTRACE_TEST_R", "the new way"), 0);
    setenv("GDRTRACE_TEST_R", "", 1); /* empty counts as unset, as everywhere */
    assert_int_equal(gt_env_retired("GDRTRACE_TEST_R", "the new way"), 0);
    assert_int_equal(g_warns, 0);
    setenv("GDRTRACE_TEST_R", "3", 1);
    assert_int_equal(gt_env_retired("GDRTRACE_TEST_R", "the new way"), 1);
    assert_int_equal(g_warns, 1);
    assert_non_null(strstr(g_last, "GDRTRACE_TEST_R is retired"));
    assert_non_null(strstr(g_last, "'3'"));
    assert_non_null(strstr(g_last, "the new way"));
    assert_non_null(strstr(g_last, "docs/configuration.md"));
    unsetenv("GDRTRACE_TEST_R");
}

static void test_debug_variable(void **state)
{
    (void)state;
    setenv("GDRTRACE_DEBUG", "yes", 1);
    g_warns = 0;
    GT_INFO(GT_LOGSUB_ALL, "one");
    GT_INFO(GT_LOGSUB_ALL, "two");
    assert_int_equal(g_warns, 1); /* said once, not at every message */
    assert_non_null(strstr(g_last, "GDRTRACE_DEBUG='yes'"));
    unsetenv("GDRTRACE_DEBUG");
}

static char g_all[4096]; /* every WARN of test_unknown_variable, one a line */

__attribute__((format(printf, 5, 6))) static void
all_logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    (void)flags, (void)file, (void)line;
    if (level != GT_LOG_WARN)
        return;
    size_t l = strlen(g_all);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_all + l, sizeof(g_all) - l, fmt, ap);
    va_end(ap);
    l = strlen(g_all);
    if (l + 1 < sizeof(g_all))
        g_all[l] = '\n', g_all[l + 1] = 0;
    g_warns++;
}

static void test_unknown_variable(void **state)
{
    (void)state;
    gt_log_set_logger(all_logger);
    /* only this test's variables: whatever the runner's environment holds */
    extern char **environ;
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e; e++)
            if (!strncmp(*e, "GDRTRACE_", 9)) {
                char name[128];
                snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
                unsetenv(name);
                again = 1;
                break;
            }
    }
    setenv("GDRTRACE_TRANSPROT", "ib", 1);
    setenv("GDRTRACE_NO_SUCH_KNOB_AT_ALL", "1", 1);
    setenv("GDRTRACE_TRANSPORT", "sock", 1); /* a known one: no word */
    g_warns = 0;
    g_all[0] = 0;
    int n = gt_env_check_unknown();
    assert_int_equal(n, 2);
    assert_int_equal(g_warns, 2);
    assert_non_null(strstr(g_all, "GDRTRACE_TRANSPROT is not a gdrtrace variable and is ignored: "
                                  "did you mean GDRTRACE_TRANSPORT?"));
    assert_non_null(strstr(g_all, "GDRTRACE_NO_SUCH_KNOB_AT_ALL is not a gdrtrace variable"));
    assert_null(strstr(g_all, "GDRTRACE_TRANSPORT is not"));
    /* once per process */
    assert_int_equal(gt_env_check_unknown(), 0);
    assert_int_equal(g_warns, 2);
    unsetenv("GDRTRACE_TRANSPROT");
    unsetenv("GDRTRACE_NO_SUCH_KNOB_AT_ALL");
    unsetenv("GDRTRACE_TRANSPORT");
    gt_log_set_logger(capture_logger);
}

int main(void)
{
    gt_log_set_logger(capture_logger);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_long),      cmocka_unit_test(test_env_long),
        cmocka_unit_test(test_choice_and_bool), cmocka_unit_test(test_retired),
        cmocka_unit_test(test_debug_variable),  cmocka_unit_test(test_unknown_variable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
