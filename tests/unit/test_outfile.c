/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_outfile.c — where the reader may write an output (tools/lib/outfile.c):
 * gt_out_check allows an absent path, and a regular file only with replace;
 * refuses a FIFO, /dev/null, a folder and a symbolic link (even to a
 * regular file) naming what it is, and a path it cannot check with the
 * system's reason; gt_out_commit renames onto an absent path, refuses to
 * replace without replace (tmp kept for the caller, the target untouched),
 * replaces with it, and refuses a FIFO that appeared in between.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/lib/outfile.h"

static char g_dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof(g_dir), "/tmp/gt_outfile_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *at(const char *name)
{
    static char p[4][128];
    static int k;
    char *b = p[k++ % 4];
    snprintf(b, 128, "%s/%s", g_dir, name);
    return b;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void holds(const char *path, const char *text)
{
    char b[64] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(b, 1, sizeof(b) - 1, f);
    fclose(f);
    b[n] = 0;
    assert_string_equal(b, text);
}

/* err is "PATH: what" */
static void refused_with(const char *path, int replace, const char *what)
{
    char err[512] = "", want[512];
    assert_int_equal(gt_out_check(path, replace, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "%s: %s", path, what);
    assert_string_equal(err, want);
}

static void check(void **state)
{
    (void)state;
    char err[512] = "";
    assert_int_equal(gt_out_check(at("absent"), 0, err, sizeof(err)), 0);
    assert_int_equal(gt_out_check(at("absent"), 1, err, sizeof(err)), 0);
    put(at("file"), "x");
    refused_with(at("file"), 0, "exists; not replaced (--force replaces it)");
    assert_int_equal(gt_out_check(at("file"), 1, err, sizeof(err)), 0);

    assert_int_equal(mkfifo(at("fifo"), 0600), 0);
    refused_with(at("fifo"), 1, "is a FIFO, not a regular file; refusing to replace it");
    refused_with("/dev/null", 1,
                 "is a character device, not a regular file; refusing to replace it");
    refused_with(g_dir, 1, "is a folder, not a regular file; refusing to replace it");
    assert_int_equal(symlink(at("file"), at("link")), 0);
    refused_with(at("link"), 1, "is a symbolic link, not a regular file; refusing to replace it");

    /* below a regular file: the system's reason */
    char p[160];
    snprintf(p, sizeof(p), "%s/x", at("file"));
    char what[128];
    snprintf(what, sizeof(what), "cannot check the output path: %s", strerror(ENOTDIR));
    refused_with(p, 1, what);
}

static void commit(void **state)
{
    (void)state;
    char err[512] = "";
    put(at("tmp1"), "one");
    assert_int_equal(gt_out_commit(at("tmp1"), at("out"), 0, err, sizeof(err)), 0);
    holds(at("out"), "one");
    assert_int_equal(access(at("tmp1"), F_OK), -1); /* moved, not copied */

    /* the target exists now: without replace, refused; both files kept */
    put(at("tmp2"), "two");
    assert_int_equal(gt_out_commit(at("tmp2"), at("out"), 0, err, sizeof(err)), -1);
    char want[512];
    snprintf(want, sizeof(want), "%s: exists; not replaced (--force replaces it)", at("out"));
    assert_string_equal(err, want);
    holds(at("out"), "one");
    holds(at("tmp2"), "two");

    assert_int_equal(gt_out_commit(at("tmp2"), at("out"), 1, err, sizeof(err)), 0);
    holds(at("out"), "two");
    assert_int_equal(access(at("tmp2"), F_OK), -1);

    /* a FIFO planted at the target: never swapped in by a replace */
    put(at("tmp3"), "three");
    assert_int_equal(mkfifo(at("planted"), 0600), 0);
    assert_int_equal(gt_out_commit(at("tmp3"), at("planted"), 1, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "is a FIFO"));
    struct stat st;
    assert_int_equal(lstat(at("planted"), &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    /* nor without replace: said as what it is */
    assert_int_equal(gt_out_commit(at("tmp3"), at("planted"), 0, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "is a FIFO"));
    holds(at("tmp3"), "three");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(check, setup, teardown),
        cmocka_unit_test_setup_teardown(commit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
