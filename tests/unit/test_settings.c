/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_settings.c — common/settings.c: each setting's returned value and the
 * value it reports for the recorder are the same choice, with the right
 * source (default / gdrtrace / invalid), the canonical spelling ("yes" is
 * "1", "PeerMem" is "peermem"), what was set kept in origin, the
 * registration policy's defaults (GDRTRACE_REG=auto allows peermem unless
 * GDRTRACE_ALLOW_PEERMEM says otherwise), the transport names, and the
 * process-wide snapshot (taken once, also when threads race for it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/codes.h"
#include "common/log.h"
#include "common/settings.h"
#include "tests/unit/capture_log.h"

static void test_choice_sources(void **state)
{
    (void)state;
    static const char *const ch[] = {"one", "two", NULL};
    struct gt_setting s;
    unsetenv("GT_TEST_X");
    assert_int_equal(gt_setting_choice(&s, "GT_TEST_X", ch, 1, 0), 1);
    assert_string_equal(s.key, "GT_TEST_X");
    assert_string_equal(s.value, "two");
    assert_int_equal(s.source, GT_SRC_DEFAULT);
    assert_string_equal(s.origin, "");
    setenv("GT_TEST_X", "ONE", 1);
    assert_int_equal(gt_setting_choice(&s, "GT_TEST_X", ch, 1, 0), 0);
    assert_string_equal(s.value, "one");
    assert_int_equal(s.source, GT_SRC_GDRTRACE);
    assert_string_equal(s.origin, "GT_TEST_X=ONE");
    setenv("GT_TEST_X", "three", 1);
    assert_int_equal(gt_setting_choice(&s, "GT_TEST_X", ch, 1, 1), 1);
    assert_string_equal(s.value, "two");
    assert_int_equal(s.source, GT_SRC_INVALID);
    assert_string_equal(s.origin, "GT_TEST_X=three");
    setenv("GT_TEST_X", "yes", 1);
    assert_int_equal(gt_setting_bool(&s, "GT_TEST_X", 0, 0), 1);
    assert_string_equal(s.value, "1");
    assert_int_equal(s.source, GT_SRC_GDRTRACE);
    setenv("GT_TEST_X", "2", 1);
    assert_int_equal(gt_setting_bool(&s, "GT_TEST_X", 1, 0), 1);
    assert_string_equal(s.value, "1");
    assert_int_equal(s.source, GT_SRC_INVALID);
    unsetenv("GT_TEST_X");
    assert_int_equal(gt_setting_bool(NULL, "GT_TEST_X", 0, 0), 0);
}

static void test_reg_policy(void **state)
{
    (void)state;
    struct {
        const char *reg, *allow;
        int mode, allow_eff;
        const char *mode_value, *allow_value;
        int reg_src, allow_src;
    } cases[] = {
        {NULL, NULL, GT_REG_DMABUF, 0, "dmabuf", "0", GT_SRC_DEFAULT, GT_SRC_DEFAULT},
        {"auto", NULL, GT_REG_AUTO, 1, "auto", "1", GT_SRC_GDRTRACE, GT_SRC_DEFAULT},
        {"AUTO", "0", GT_REG_AUTO, 0, "auto", "0", GT_SRC_GDRTRACE, GT_SRC_GDRTRACE},
        {"dmabuf", "on", GT_REG_DMABUF, 1, "dmabuf", "1", GT_SRC_GDRTRACE, GT_SRC_GDRTRACE},
        {"bogus", NULL, GT_REG_DMABUF, 0, "dmabuf", "0", GT_SRC_INVALID, GT_SRC_DEFAULT},
        {"host", "x", GT_REG_HOST, 0, "host", "0", GT_SRC_GDRTRACE, GT_SRC_INVALID},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cases[i].reg)
            setenv("GDRTRACE_REG", cases[i].reg, 1);
        else
            unsetenv("GDRTRACE_REG");
        if (cases[i].allow)
            setenv("GDRTRACE_ALLOW_PEERMEM", cases[i].allow, 1);
        else
            unsetenv("GDRTRACE_ALLOW_PEERMEM");
        struct gt_reg_policy p, q;
        struct gt_setting s[GT_REG_POLICY_SETTINGS];
        gt_reg_policy_read(&p, s, 0);
        gt_reg_policy_read(&q, NULL, 0);
        assert_int_equal(p.mode, cases[i].mode);
        assert_int_equal(q.mode, p.mode);
        assert_int_equal(p.allow_peermem, cases[i].allow_eff);
        assert_int_equal(q.allow_peermem, p.allow_peermem);
        assert_string_equal(s[0].key, "GDRTRACE_REG");
        assert_string_equal(s[0].value, cases[i].mode_value);
        assert_string_equal(s[0].value, gt_reg_mode_name(p.mode));
        assert_int_equal(s[0].source, cases[i].reg_src);
        assert_string_equal(s[1].key, "GDRTRACE_ALLOW_PEERMEM");
        assert_string_equal(s[1].value, cases[i].allow_value);
        assert_int_equal(s[1].source, cases[i].allow_src);
        assert_string_equal(s[2].key, "GDRTRACE_IB_RELAXED_ORDERING");
        assert_int_equal(p.relaxed_ordering, 1);
    }
    unsetenv("GDRTRACE_REG");
    unsetenv("GDRTRACE_ALLOW_PEERMEM");
}

static void test_transport_and_names(void **state)
{
    (void)state;
    struct gt_setting s;
    setenv("GDRTRACE_TRANSPORT", "Sock", 1);
    assert_int_equal(gt_transport_read(&s, 0), GT_TRANSPORT_SOCK);
    assert_string_equal(s.value, "sock");
    unsetenv("GDRTRACE_TRANSPORT");
    assert_int_equal(gt_transport_read(&s, 0), GT_TRANSPORT_AUTO);
    assert_string_equal(gt_transport_name(GT_TRANSPORT_INNER), "inner");
    assert_string_equal(gt_transport_name(GT_TRANSPORT_COUNT), "?");
    assert_string_equal(gt_setting_source_name(GT_SRC_DEFAULT), "default");
    assert_string_equal(gt_setting_source_name(GT_SRC_GDRTRACE), "gdrtrace");
    assert_string_equal(gt_setting_source_name(GT_SRC_NCCL), "nccl");
    assert_string_equal(gt_setting_source_name(GT_SRC_INVALID), "invalid");
    assert_string_equal(gt_setting_source_name(GT_SRC_UNKNOWN), "unknown");
    assert_null(gt_setting_source_name(GT_SRC_COUNT));
    setenv("GDRTRACE_EVENTS", "all", 1);
    assert_int_equal(gt_events_read(&s, 0), 1);
    assert_string_equal(s.value, "all");
    unsetenv("GDRTRACE_EVENTS");
}

/* WARN lines about GDRTRACE_REG seen by the logger (any thread). */
#define SNAP_THREADS 8
static pthread_barrier_t g_start;
static void *take(void *arg)
{
    pthread_barrier_wait(&g_start);
    *(const struct gt_settings **)arg = gt_settings_get();
    return NULL;
}

/* The snapshot: NCCL's threads taking it at once get one snapshot, one WARN
 * for an invalid value, the same values and records the parsers give, and
 * a later change to the environment is not seen. */
static void test_snapshot_once(void **state)
{
    (void)state;
    setenv("GDRTRACE_REG", "bogus", 1);
    setenv("GDRTRACE_TRANSPORT", "sock", 1);
    setenv("GDRTRACE_GPUMEM", "1", 1);
    gt_settings_reset_for_test();
    g_warns = 0;
    g_warn_about = "GDRTRACE_REG";
    gt_log_set_logger(capture_logger);
    pthread_t t[SNAP_THREADS];
    const struct gt_settings *got[SNAP_THREADS];
    assert_int_equal(pthread_barrier_init(&g_start, NULL, SNAP_THREADS), 0);
    for (int i = 0; i < SNAP_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, take, &got[i]), 0);
    for (int i = 0; i < SNAP_THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&g_start);
    assert_int_equal(g_warns, 1);
    for (int i = 1; i < SNAP_THREADS; i++)
        assert_ptr_equal(got[i], got[0]);
    const struct gt_settings *st = got[0];
    struct gt_reg_policy p;
    struct gt_setting rs[GT_REG_POLICY_SETTINGS], ts;
    gt_reg_policy_read(&p, rs, 0);
    assert_memory_equal(&st->reg, &p, sizeof(p));
    assert_memory_equal(st->reg_set, rs, sizeof(rs));
    assert_int_equal(st->reg.mode, GT_REG_DMABUF);
    assert_int_equal(st->reg_set[0].source, GT_SRC_INVALID);
    assert_int_equal(st->transport, gt_transport_read(&ts, 0));
    assert_memory_equal(&st->transport_set, &ts, sizeof(ts));
    assert_int_equal(st->transport, GT_TRANSPORT_SOCK);
    assert_int_equal(st->gpumem.on, 1);
    assert_string_equal(st->gpumem_set[0].value, "1");

    setenv("GDRTRACE_REG", "host", 1);
    unsetenv("GDRTRACE_TRANSPORT");
    unsetenv("GDRTRACE_GPUMEM");
    assert_ptr_equal(gt_settings_get(), st);
    assert_int_equal(gt_settings_get()->reg.mode, GT_REG_DMABUF);
    assert_int_equal(gt_settings_get()->transport, GT_TRANSPORT_SOCK);
    assert_int_equal(g_warns, 1);
    gt_settings_reset_for_test(); /* tests only: the environment now */
    assert_int_equal(gt_settings_get()->reg.mode, GT_REG_HOST);
    assert_int_equal(gt_settings_get()->transport, GT_TRANSPORT_AUTO);
    assert_int_equal(gt_settings_get()->gpumem.on, 0);
    unsetenv("GDRTRACE_REG");
    gt_settings_reset_for_test();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choice_sources),
        cmocka_unit_test(test_reg_policy),
        cmocka_unit_test(test_transport_and_names),
        cmocka_unit_test(test_snapshot_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
