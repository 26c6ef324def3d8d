/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_nccl_env.c — NCCL's variables read as NCCL reads them
 * (common/nccl_env.c), written from NCCL's rules (src/misc/param.cc):
 * the environment wins, even when empty; then NCCL_CONF_FILE, or
 * $HOME/.nccl.conf only when NCCL_CONF_FILE is unset or empty; then
 * /etc/nccl.conf; the first file naming a variable wins.  File lines: '#'
 * comments, lines without '=' skipped, CR dropped, nothing trimmed, the
 * value is everything after the first '='.  Integers as NCCL's strtoll base
 * 0; a GDRTRACE_* twin overrides; invalid values WARN once and give the
 * default with source "invalid"; an environment plugin makes NCCL sources
 * "unknown"; unhonored NCCL variables WARN once each, not when their value
 * asks for what we do anyway; NCCL_IB_PCI_RELAXED_ORDERING reaches the
 * registration policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four it needs */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/nccl_env.h"
#include "tests/unit/capture_log.h"

static char g_dir[64];
static char g_etc[128], g_user[128], g_home_conf[128];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char *const vars[] = {"NCCL_CONF_FILE",
                                   "NCCL_IB_HCA",
                                   "NCCL_IB_TC",
                                   "NCCL_IB_SL",
                                   "NCCL_IB_GID_INDEX",
                                   "NCCL_ENV_PLUGIN",
                                   "GDRTRACE_IB_TC",
                                   "GDRTRACE_IB_HCA",
                                   "NCCL_IB_FIFO_TC",
                                   "NCCL_IB_USE_INLINE",
                                   "NCCL_IB_MERGE_NICS",
                                   "NCCL_SOCKET_NTHREADS",
                                   "NCCL_IB_PCI_RELAXED_ORDERING",
                                   "GDRTRACE_IB_RELAXED_ORDERING",
                                   "NCCL_IB_TIMEOUT",
                                   "NCCL_X",
                                   "NCCL_Y",
                                   NULL};

static int setup(void **state)
{
    (void)state;
    for (int i = 0; vars[i]; i++)
        unsetenv(vars[i]);
    snprintf(g_dir, sizeof(g_dir), "/tmp/gt_nccl_env.XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    snprintf(g_etc, sizeof(g_etc), "%s/etc.conf", g_dir);
    snprintf(g_user, sizeof(g_user), "%s/user.conf", g_dir);
    snprintf(g_home_conf, sizeof(g_home_conf), "%s/.nccl.conf", g_dir);
    setenv("HOME", g_dir, 1);
    gt_nccl_etc_conf = g_etc;
    gt_nccl_env_reload();
    g_warns = 0;
    g_last[0] = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(g_etc);
    unlink(g_user);
    unlink(g_home_conf);
    rmdir(g_dir);
    return 0;
}

static void order_env_conf_file_etc(void **state)
{
    (void)state;
    write_file(g_etc, "NCCL_IB_HCA=etc\nNCCL_IB_TC=1\nNCCL_IB_SL=2\n");
    write_file(g_user, "NCCL_IB_HCA=user\nNCCL_IB_TC=3\n");
    write_file(g_home_conf, "NCCL_IB_HCA=home\n");
    setenv("NCCL_CONF_FILE", g_user, 1);
    setenv("NCCL_IB_HCA", "=mlx5_0:1", 1);
    gt_nccl_env_reload();
    const char *where = NULL;
    assert_string_equal(gt_nccl_raw("NCCL_IB_HCA", &where), "=mlx5_0:1");
    assert_string_equal(where, "environment");
    assert_string_equal(gt_nccl_raw("NCCL_IB_TC", &where), "3"); /* NCCL_CONF_FILE over /etc */
    assert_string_equal(where, g_user);
    assert_string_equal(gt_nccl_raw("NCCL_IB_SL", &where), "2"); /* only in /etc */
    assert_string_equal(where, g_etc);
    assert_null(gt_nccl_raw("NCCL_IB_GID_INDEX", NULL));

    /* ~/.nccl.conf is read only when NCCL_CONF_FILE is unset or empty */
    unsetenv("NCCL_IB_HCA");
    assert_string_equal(gt_nccl_raw("NCCL_IB_HCA", NULL), "user");
    setenv("NCCL_CONF_FILE", "", 1);
    gt_nccl_env_reload();
    assert_string_equal(gt_nccl_raw("NCCL_IB_HCA", &where), "home");
    assert_string_equal(where, g_home_conf);
    assert_string_equal(gt_nccl_raw("NCCL_IB_TC", NULL), "1"); /* /etc after home */

    /* an empty environment value still wins: NCCL's setenv(..., 0) keeps it */
    setenv("NCCL_IB_TC", "", 1);
    assert_string_equal(gt_nccl_raw("NCCL_IB_TC", &where), "");
    struct gt_setting s;
    assert_int_equal(gt_nccl_long(&s, "NCCL_IB_TC", NULL, -1, -1, 255, 1), -1);
    assert_int_equal(s.source, GT_SRC_DEFAULT);
    assert_int_equal(g_warns, 0);
}

static void file_syntax(void **state)
{
    (void)state;
    write_file(g_etc, "# NCCL_IB_SL=9\n"
                      "NCCL_IB_SL\n"
                      "NCCL_IB_TC = 5\n"
                      "NCCL_IB_HCA=^mlx5_1\r\n"
                      "NCCL_X=a=b\n"
                      "=nameless\n"
                      "NCCL_Y=\n"
                      "NCCL_IB_HCA=second\n");
    gt_nccl_env_reload();
    assert_null(gt_nccl_raw("NCCL_IB_SL", NULL)); /* commented, then no '=' */
    assert_null(gt_nccl_raw("NCCL_IB_TC", NULL)); /* the name is "NCCL_IB_TC " */
    assert_string_equal(gt_nccl_raw("NCCL_IB_TC ", NULL), " 5");
    assert_string_equal(gt_nccl_raw("NCCL_IB_HCA", NULL), "^mlx5_1"); /* CR dropped, first wins */
    assert_string_equal(gt_nccl_raw("NCCL_X", NULL), "a=b");
    assert_string_equal(gt_nccl_raw("NCCL_Y", NULL), "");
    struct gt_setting s;
    assert_null(gt_nccl_str(&s, "NCCL_Y", NULL)); /* empty is unset */
    assert_int_equal(s.source, GT_SRC_DEFAULT);
    /* a missing file is no error */
    gt_nccl_etc_conf = "/nonexistent/nccl.conf";
    gt_nccl_env_reload();
    assert_null(gt_nccl_raw("NCCL_IB_HCA", NULL));
    gt_nccl_etc_conf = g_etc;
}

static void integers_as_nccl(void **state)
{
    (void)state;
    struct gt_setting s;
    setenv("NCCL_IB_TC", "0x6a", 1);
    assert_int_equal(gt_nccl_long(&s, "NCCL_IB_TC", "GDRTRACE_IB_TC", -1, -1, 255, 1), 106);
    assert_string_equal(s.key, "GDRTRACE_IB_TC");
    assert_string_equal(s.value, "106");
    assert_string_equal(s.origin, "NCCL_IB_TC=0x6a");
    assert_int_equal(s.source, GT_SRC_NCCL);
    setenv("NCCL_IB_TC", "010", 1); /* octal, as strtoll base 0 */
    assert_int_equal(gt_nccl_long(&s, "NCCL_IB_TC", NULL, -1, -1, 255, 1), 8);
    assert_int_equal(g_warns, 0);
    setenv("NCCL_IB_TC", "96abc", 1); /* NCCL uses the leading number */
    assert_int_equal(gt_nccl_long(&s, "NCCL_IB_TC", NULL, -1, -1, 255, 1), 96);
    assert_int_equal(g_warns, 1);
    assert_non_null(strstr(g_last, "NCCL_IB_TC='96abc'"));
    setenv("NCCL_IB_TC", "300", 1); /* out of range: default, invalid */
    assert_int_equal(gt_nccl_long(&s, "NCCL_IB_TC", NULL, -1, -1, 255, 1), -1);
    assert_int_equal(g_warns, 2);
    assert_int_equal(s.source, GT_SRC_INVALID);
    assert_string_equal(s.origin, "NCCL_IB_TC=300");
    setenv("NCCL_IB_TC", "99999999999999999999", 1); /* overflow: NCCL's default */
    assert_int_equal(gt_nccl_long(&s, "NCCL_IB_TC", NULL, -1, -1, 255, 1), -1);
    assert_int_equal(g_warns, 3);
    /* warn = 0: quiet */
    assert_int_equal(gt_nccl_long(NULL, "NCCL_IB_TC", NULL, -1, -1, 255, 0), -1);
    assert_int_equal(g_warns, 3);
}

static void twin_overrides(void **state)
{
    (void)state;
    struct gt_setting s;
    write_file(g_etc, "NCCL_IB_TC=106\nNCCL_IB_HCA=mlx5\n");
    gt_nccl_env_reload();
    assert_int_equal(gt_nccl_long(&s, "NCCL_IB_TC", "GDRTRACE_IB_TC", -1, -1, 255, 1), 106);
    assert_int_equal(s.source, GT_SRC_NCCL);
    char want[256];
    snprintf(want, sizeof(want), "NCCL_IB_TC=106 (%s)", g_etc); /* the file that set it */
    assert_string_equal(s.origin, want);
    setenv("GDRTRACE_IB_TC", "41", 1);
    assert_int_equal(gt_nccl_long(&s, "NCCL_IB_TC", "GDRTRACE_IB_TC", -1, -1, 255, 1), 41);
    assert_int_equal(s.source, GT_SRC_GDRTRACE);
    assert_string_equal(s.origin, "GDRTRACE_IB_TC=41");
    /* the twin is strict: 0x29 is not base 10, so NCCL's value stands, WARNed */
    setenv("GDRTRACE_IB_TC", "0x29", 1);
    assert_int_equal(gt_nccl_long(&s, "NCCL_IB_TC", "GDRTRACE_IB_TC", -1, -1, 255, 1), 106);
    assert_int_equal(g_warns, 1);
    assert_non_null(strstr(g_last, "GDRTRACE_IB_TC='0x29'"));
    unsetenv("GDRTRACE_IB_TC");
    /* text */
    assert_string_equal(gt_nccl_str(&s, "NCCL_IB_HCA", "GDRTRACE_IB_HCA"), "mlx5");
    assert_int_equal(s.source, GT_SRC_NCCL);
    assert_string_equal(s.key, "GDRTRACE_IB_HCA");
    setenv("GDRTRACE_IB_HCA", "^mlx5_1", 1);
    assert_string_equal(gt_nccl_str(&s, "NCCL_IB_HCA", "GDRTRACE_IB_HCA"), "^mlx5_1");
    assert_int_equal(s.source, GT_SRC_GDRTRACE);
    unsetenv("GDRTRACE_IB_HCA");
}

static void origin_names_file(void **state)
{
    (void)state;
    struct gt_setting s;
    write_file(g_etc, "NCCL_IB_TIMEOUT=22\n");
    gt_nccl_env_reload();
    assert_int_equal(gt_nccl_long(&s, "NCCL_IB_TIMEOUT", NULL, 20, 1, 31, 1), 22);
    char want[256];
    snprintf(want, sizeof(want), "NCCL_IB_TIMEOUT=22 (%s)", g_etc);
    assert_string_equal(s.origin, want);
    assert_string_equal(s.key, "NCCL_IB_TIMEOUT");
}

static void env_plugin_unknown(void **state)
{
    (void)state;
    struct gt_setting s;
    setenv("NCCL_IB_TC", "106", 1);
    setenv("NCCL_ENV_PLUGIN", "none", 1);
    gt_nccl_env_reload();
    gt_nccl_long(&s, "NCCL_IB_TC", "GDRTRACE_IB_TC", -1, -1, 255, 1);
    assert_int_equal(s.source, GT_SRC_NCCL);
    assert_int_equal(g_warns, 0);
    setenv("NCCL_ENV_PLUGIN", "mysite", 1);
    gt_nccl_env_reload();
    gt_nccl_long(&s, "NCCL_IB_TC", "GDRTRACE_IB_TC", -1, -1, 255, 1);
    assert_int_equal(s.source, GT_SRC_UNKNOWN);
    assert_int_equal(g_warns, 1);
    assert_non_null(strstr(g_last, "mysite"));
    gt_nccl_long(&s, "NCCL_IB_TC", "GDRTRACE_IB_TC", -1, -1, 255, 1);
    assert_int_equal(g_warns, 1); /* once */
    /* our own override stays known */
    setenv("GDRTRACE_IB_TC", "5", 1);
    gt_nccl_long(&s, "NCCL_IB_TC", "GDRTRACE_IB_TC", -1, -1, 255, 1);
    assert_int_equal(s.source, GT_SRC_GDRTRACE);
    /* and so does a default */
    unsetenv("GDRTRACE_IB_TC");
    gt_nccl_long(&s, "NCCL_IB_SL", NULL, -1, -1, 15, 1);
    assert_int_equal(s.source, GT_SRC_DEFAULT);
}

static void unhonored_warn_once(void **state)
{
    (void)state;
    assert_int_equal(gt_nccl_warn_unhonored("ib"), 0);
    assert_int_equal(g_warns, 0);
    setenv("NCCL_IB_FIFO_TC", "106", 1); /* honored (ib_conn.c): no WARN */
    setenv("NCCL_IB_USE_INLINE", "1", 1);
    setenv("NCCL_IB_MERGE_NICS", "0", 1);   /* what we do anyway */
    setenv("NCCL_SOCKET_NTHREADS", "4", 1); /* sock's, not ib's */
    assert_int_equal(gt_nccl_warn_unhonored("ib"), 2);
    assert_int_equal(g_warns, 1);
    assert_non_null(strstr(g_last, "NCCL_IB_USE_INLINE='1'"));
    assert_non_null(strstr(g_last, "inline"));
    assert_null(strstr(g_last, "NCCL_IB_FIFO_TC"));
    gt_nccl_warn_unhonored("ib");
    assert_int_equal(g_warns, 1); /* once per process */
    setenv("NCCL_IB_MERGE_NICS", "1", 1);
    gt_nccl_warn_unhonored("ib");
    assert_int_equal(g_warns, 2);
    assert_non_null(strstr(g_last, "never merged"));
    assert_int_equal(gt_nccl_warn_unhonored("sock"), 1);
    assert_int_equal(g_warns, 3);
    assert_non_null(strstr(g_last, "NCCL_SOCKET_NTHREADS"));
}

static void relaxed_ordering_policy(void **state)
{
    (void)state;
    struct gt_reg_policy p;
    struct gt_setting s[GT_REG_POLICY_SETTINGS];
    gt_reg_policy_read(&p, s, 1);
    assert_int_equal(p.relaxed_ordering, 1);
    assert_int_equal(s[2].source, GT_SRC_DEFAULT);
    setenv("NCCL_IB_PCI_RELAXED_ORDERING", "0", 1);
    gt_reg_policy_read(&p, s, 1);
    assert_int_equal(p.relaxed_ordering, 0);
    assert_int_equal(s[2].source, GT_SRC_NCCL);
    assert_string_equal(s[2].key, "GDRTRACE_IB_RELAXED_ORDERING");
    assert_string_equal(s[2].value, "0");
    assert_string_equal(s[2].origin, "NCCL_IB_PCI_RELAXED_ORDERING=0");
    setenv("NCCL_IB_PCI_RELAXED_ORDERING", "2", 1);
    gt_reg_policy_read(&p, s, 1);
    assert_int_equal(p.relaxed_ordering, 1);
    setenv("NCCL_IB_PCI_RELAXED_ORDERING", "0", 1);
    setenv("GDRTRACE_IB_RELAXED_ORDERING", "1", 1); /* our twin wins */
    gt_reg_policy_read(&p, s, 1);
    assert_int_equal(p.relaxed_ordering, 1);
    assert_int_equal(s[2].source, GT_SRC_GDRTRACE);
    assert_int_equal(g_warns, 0);
}

static void noted_by_key(void **state)
{
    (void)state;
    struct gt_setting a, out[4];
    setenv("NCCL_IB_TC", "1", 1);
    gt_nccl_long(&a, "NCCL_IB_TC", "GDRTRACE_IB_TC", -1, -1, 255, 1);
    gt_nccl_note(&a);
    setenv("NCCL_IB_TC", "2", 1);
    gt_nccl_long(&a, "NCCL_IB_TC", "GDRTRACE_IB_TC", -1, -1, 255, 1);
    gt_nccl_note(&a);
    gt_nccl_long(&a, "NCCL_IB_SL", "GDRTRACE_IB_SL", -1, -1, 15, 1);
    gt_nccl_note(&a);
    assert_int_equal(gt_nccl_noted(out, 4), 2);
    assert_string_equal(out[0].key, "GDRTRACE_IB_TC");
    assert_string_equal(out[0].value, "2");
    assert_string_equal(out[1].key, "GDRTRACE_IB_SL");
    assert_int_equal(gt_nccl_noted(out, 1), 1);
    gt_nccl_unnote("GDRTRACE_IB_T"); /* a refused transport's settings go */
    assert_int_equal(gt_nccl_noted(out, 4), 1);
    assert_string_equal(out[0].key, "GDRTRACE_IB_SL");
}

int main(void)
{
    gt_log_set_logger(capture_logger);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(order_env_conf_file_etc, setup, teardown),
        cmocka_unit_test_setup_teardown(file_syntax, setup, teardown),
        cmocka_unit_test_setup_teardown(integers_as_nccl, setup, teardown),
        cmocka_unit_test_setup_teardown(twin_overrides, setup, teardown),
        cmocka_unit_test_setup_teardown(origin_names_file, setup, teardown),
        cmocka_unit_test_setup_teardown(env_plugin_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(unhonored_warn_once, setup, teardown),
        cmocka_unit_test_setup_teardown(relaxed_ordering_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(noted_by_key, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
