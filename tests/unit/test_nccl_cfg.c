/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_nccl_cfg.c — NCCL's settings that decide GPU Direct and the
 * transport are recorded as NCCL reads them (common/nccl_cfg.c), and reach
 * the recorder (shim/recorder.c) with value and source:
 *  - unset: every table entry recorded, value "", source default; the
 *    legacy NCCL_IB_GDR_LEVEL only when set;
 *  - from the environment: value as NCCL makes it ("0" is LOC for a level,
 *    "0x0" is 0 and "abc" is 0 for an integer as NCCL's strtoll), origin
 *    NAME=text; text NCCL ignores (a level in lower case, an overflow):
 *    source invalid, value "" (NCCL's default), origin kept;
 *  - from a conf file (NCCL_CONF_FILE): origin "NAME=text (PATH)"; and the
 *    same when NCCL already copied the file's value into the environment
 *    (absent from the environment the process started with), but not when
 *    the process started with it, or the value differs;
 *  - an NCCL environment plugin makes the source unknown;
 *  - the recorder opened under these holds them, read back by the reader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four it needs */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/nccl_cfg.h"
#include "common/nccl_env.h"
#include "tools/lib/recfile.h"
#include "shim/recorder.h"

static char g_dir[64], g_conf[128], g_environ[128], g_etc[128];

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

static void unset_all(void)
{
    size_t n;
    const struct gt_nccl_cfg *t = gt_nccl_cfg_table(&n);
    for (size_t i = 0; i < n; i++)
        unsetenv(t[i].name);
    unsetenv("NCCL_CONF_FILE");
    unsetenv("NCCL_ENV_PLUGIN");
}

static int setup(void **state)
{
    (void)state;
    unset_all();
    snprintf(g_dir, sizeof(g_dir), "/tmp/gt_nccl_cfg.XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    snprintf(g_conf, sizeof(g_conf), "%s/nccl.conf", g_dir);
    snprintf(g_environ, sizeof(g_environ), "%s/environ", g_dir);
    snprintf(g_etc, sizeof(g_etc), "%s/etc.conf", g_dir);
    setenv("HOME", g_dir, 1); /* no ~/.nccl.conf of the machine's */
    gt_nccl_etc_conf = g_etc; /* nor its /etc/nccl.conf */
    /* the environment the process "started with": none of NCCL's */
    write_file(g_environ, "HOME=/root\0PATH=/bin\0", 21);
    gt_nccl_proc_environ = g_environ;
    gt_nccl_env_reload();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unset_all();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", g_dir);
    assert_int_equal(system(cmd), 0);
    gt_nccl_env_reload();
    return 0;
}

static struct gt_setting g_set[GT_NCCL_CFG_MAX];
static int g_n;

static void read_all(void)
{
    gt_nccl_env_reload();
    g_n = gt_nccl_cfg_read(g_set, GT_NCCL_CFG_MAX);
}

static const struct gt_setting *find(const char *key)
{
    for (int i = 0; i < g_n; i++)
        if (!strcmp(g_set[i].key, key))
            return &g_set[i];
    return NULL;
}

static void expect(const char *key, const char *value, int source, const char *origin)
{
    const struct gt_setting *s = find(key);
    if (!s)
        fail_msg("%s not recorded", key);
    if (strcmp(s->value, value) || s->source != source || strcmp(s->origin, origin))
        fail_msg("%s: got value '%s' source %d origin '%s'; want '%s' %d '%s'", key, s->value,
                 s->source, s->origin, value, source, origin);
}

static void unset_is_default(void **state)
{
    (void)state;
    read_all();
    size_t n;
    gt_nccl_cfg_table(&n);
    assert_true(n <= GT_NCCL_CFG_MAX);
    assert_int_equal(g_n, (int)n - 1); /* all but the legacy name */
    for (int i = 0; i < g_n; i++) {
        assert_string_equal(g_set[i].value, "");
        assert_int_equal(g_set[i].source, GT_SRC_DEFAULT);
        assert_string_equal(g_set[i].origin, "");
        assert_non_null(gt_nccl_cfg_find(g_set[i].key));
    }
    assert_null(find("NCCL_IB_GDR_LEVEL"));
    for (const char *const *k =
             (const char *const[]){"NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ", "NCCL_DMABUF_ENABLE",
                                   "NCCL_NET", "NCCL_NET_PLUGIN", "NCCL_IB_DISABLE",
                                   "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_CROSS_NIC", NULL};
         *k; k++)
        assert_non_null(find(*k));
}

static void from_environment(void **state)
{
    (void)state;
    setenv("NCCL_NET_GDR_LEVEL", "0", 1);
    setenv("NCCL_P2P_LEVEL", "PXB", 1);
    setenv("NCCL_NET_GDR_READ", "0x0", 1);
    setenv("NCCL_CROSS_NIC", "abc", 1); /* NCCL's strtoll: 0, no error */
    setenv("NCCL_NET", "gdrtrace", 1);
    setenv("NCCL_SHM_DISABLE", "", 1); /* empty: unset, as NCCL */
    setenv("NCCL_IB_GDR_LEVEL", "PHB", 1);
    read_all();
    expect("NCCL_NET_GDR_LEVEL", "LOC", GT_SRC_NCCL, "NCCL_NET_GDR_LEVEL=0");
    expect("NCCL_P2P_LEVEL", "PXB", GT_SRC_NCCL, "NCCL_P2P_LEVEL=PXB");
    expect("NCCL_NET_GDR_READ", "0", GT_SRC_NCCL, "NCCL_NET_GDR_READ=0x0");
    expect("NCCL_CROSS_NIC", "0", GT_SRC_NCCL, "NCCL_CROSS_NIC=abc");
    expect("NCCL_NET", "gdrtrace", GT_SRC_NCCL, "NCCL_NET=gdrtrace");
    expect("NCCL_SHM_DISABLE", "", GT_SRC_DEFAULT, "");
    expect("NCCL_DMABUF_ENABLE", "", GT_SRC_DEFAULT, "");
    expect("NCCL_IB_GDR_LEVEL", "PHB", GT_SRC_NCCL, "NCCL_IB_GDR_LEVEL=PHB");

    /* text NCCL ignores: its default in force */
    setenv("NCCL_NET_GDR_LEVEL", "loc", 1); /* NCCL compares names case-sensitively */
    setenv("NCCL_NET_GDR_READ", "99999999999999999999", 1); /* overflow: NCCL's default */
    read_all();
    expect("NCCL_NET_GDR_LEVEL", "", GT_SRC_INVALID, "NCCL_NET_GDR_LEVEL=loc");
    expect("NCCL_NET_GDR_READ", "", GT_SRC_INVALID, "NCCL_NET_GDR_READ=99999999999999999999");
}

static void level_parse(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"LOC", "LOC"}, {"PIX", "PIX"}, {"PXB", "PXB"}, {"PHB", "PHB"}, {"SYS", "SYS"},
        {"NVL", "NVL"}, {"C2C", "C2C"}, {"P2C", "P2C"}, {"PXN", "PXN"}, {"0", "LOC"},
        {"1", "PIX"},   {"2", "PXB"},   {"3", "PHB"},   {"4", "SYS"},   {"5", "SYS"},
        {"9", "SYS"},   {"0x2", "PXB"}, {"2abc", "PXB"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = gt_nccl_level_parse(cases[i][0]);
        if (!got || strcmp(got, cases[i][1]))
            fail_msg("level '%s': got %s, want %s", cases[i][0], got ? got : "NULL", cases[i][1]);
    }
    assert_null(gt_nccl_level_parse("pxb"));
    assert_null(gt_nccl_level_parse("NET")); /* beyond SYS: not a level NCCL accepts */
    assert_null(gt_nccl_level_parse(""));
    assert_null(gt_nccl_level_parse("-1"));
}

static void from_conf_file(void **state)
{
    (void)state;
    const char *text = "NCCL_DMABUF_ENABLE=0\nNCCL_NET_GDR_LEVEL=SYS\nNCCL_TOPO_FILE=/t.xml\n";
    write_file(g_conf, text, strlen(text));
    setenv("NCCL_CONF_FILE", g_conf, 1);
    char o[160];
    read_all();
    snprintf(o, sizeof(o), "NCCL_DMABUF_ENABLE=0 (%s)", g_conf);
    expect("NCCL_DMABUF_ENABLE", "0", GT_SRC_NCCL, o);
    snprintf(o, sizeof(o), "NCCL_NET_GDR_LEVEL=SYS (%s)", g_conf);
    expect("NCCL_NET_GDR_LEVEL", "SYS", GT_SRC_NCCL, o);
    snprintf(o, sizeof(o), "NCCL_TOPO_FILE=/t.xml (%s)", g_conf);
    expect("NCCL_TOPO_FILE", "/t.xml", GT_SRC_NCCL, o);

    /* Inside a job NCCL has already done setenv(name, value, 0) for the
     * file's values before the plugin loads: still the file's. */
    setenv("NCCL_DMABUF_ENABLE", "0", 1);
    read_all();
    snprintf(o, sizeof(o), "NCCL_DMABUF_ENABLE=0 (%s)", g_conf);
    expect("NCCL_DMABUF_ENABLE", "0", GT_SRC_NCCL, o);
    /* ... but the environment's when the process started with it ... */
    write_file(g_environ, "NCCL_DMABUF_ENABLE=0\0PATH=/bin\0", 31);
    read_all();
    expect("NCCL_DMABUF_ENABLE", "0", GT_SRC_NCCL, "NCCL_DMABUF_ENABLE=0");
    /* ... or when its value is not the file's (set by the program) */
    write_file(g_environ, "PATH=/bin\0", 10);
    setenv("NCCL_DMABUF_ENABLE", "1", 1);
    read_all();
    expect("NCCL_DMABUF_ENABLE", "1", GT_SRC_NCCL, "NCCL_DMABUF_ENABLE=1");
    /* an unreadable start environment: the environment's, as before */
    setenv("NCCL_DMABUF_ENABLE", "0", 1);
    gt_nccl_proc_environ = "/nonexistent/environ";
    read_all();
    expect("NCCL_DMABUF_ENABLE", "0", GT_SRC_NCCL, "NCCL_DMABUF_ENABLE=0");
    gt_nccl_proc_environ = g_environ;
}

static void env_plugin_unknown(void **state)
{
    (void)state;
    setenv("NCCL_NET_GDR_LEVEL", "PHB", 1);
    setenv("NCCL_ENV_PLUGIN", "mysite", 1);
    read_all();
    expect("NCCL_NET_GDR_LEVEL", "PHB", GT_SRC_UNKNOWN, "NCCL_NET_GDR_LEVEL=PHB");
    expect("NCCL_NET", "", GT_SRC_DEFAULT, "");
}

/* Through the writer: the recorder opened under these settings holds them
 * in its settings section, as the reader reads it. */
static void in_the_recorder(void **state)
{
    (void)state;
    setenv("NCCL_NET_GDR_LEVEL", "LOC", 1);
    const char *text = "NCCL_DMABUF_ENABLE=0\n";
    write_file(g_conf, text, strlen(text));
    setenv("NCCL_CONF_FILE", g_conf, 1);
    gt_nccl_env_reload();
    struct gt_recorder r;
    char err[256];
    struct gt_rec_config cfg = {.dir = g_dir, .mode = 0600, .events_all = -1};
    assert_int_equal(gt_rec_open(&r, &cfg, err, sizeof(err)), 0);
    gt_rec_close(&r);
    struct gt_recfile v;
    char lerr[GT_ERRLEN];
    int rc = gt_recfile_load_file(r.path, &v, lerr, sizeof(lerr));
    if (rc)
        fail_msg("%s", lerr);
    gt_rec_unmap(&r);
    unlink(r.path);
    int found = 0, nccl = 0;
    char o[160];
    snprintf(o, sizeof(o), "NCCL_DMABUF_ENABLE=0 (%s)", g_conf);
    for (uint32_t i = 0; i < v.nset; i++) {
        const struct gtr_setting *s = &v.settings[i];
        if (!s->in_use || !gt_nccl_cfg_find(s->key))
            continue;
        nccl++;
        if (!strcmp(s->key, "NCCL_NET_GDR_LEVEL")) {
            assert_string_equal(s->value, "LOC");
            assert_int_equal(s->source, GT_SRC_NCCL);
            assert_string_equal(s->origin, "NCCL_NET_GDR_LEVEL=LOC");
            found++;
        }
        if (!strcmp(s->key, "NCCL_DMABUF_ENABLE")) {
            assert_string_equal(s->value, "0");
            assert_int_equal(s->source, GT_SRC_NCCL);
            assert_string_equal(s->origin, o);
            found++;
        }
    }
    size_t n;
    gt_nccl_cfg_table(&n);
    assert_int_equal(found, 2);
    assert_int_equal(nccl, (int)n - 1);
    /* the GDRTRACE_* settings are still there beside them */
    int reg = 0;
    for (uint32_t i = 0; i < v.nset; i++)
        reg |= v.settings[i].in_use && !strcmp(v.settings[i].key, "GDRTRACE_REG");
    assert_true(reg);
    gt_recfile_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(unset_is_default, setup, teardown),
        cmocka_unit_test_setup_teardown(from_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(level_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(from_conf_file, setup, teardown),
        cmocka_unit_test_setup_teardown(env_plugin_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(in_the_recorder, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
