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
#include "tests/unit/scratch_dir.h"

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
    assert_int_equal(gt_out_check(scratch_at("absent"), 0, err, sizeof(err)), 0);
    assert_int_equal(gt_out_check(scratch_at("absent"), 1, err, sizeof(err)), 0);
    scratch_put(scratch_at("file"), "x");
    refused_with(scratch_at("file"), 0, "exists; not replaced (--force replaces it)");
    assert_int_equal(gt_out_check(scratch_at("file"), 1, err, sizeof(err)), 0);

    assert_int_equal(mkfifo(scratch_at("fifo"), 0600), 0);
    refused_with(scratch_at("fifo"), 1, "is a FIFO, not a regular file; refusing to replace it");
    refused_with("/dev/null", 1,
                 "is a character device, not a regular file; refusing to replace it");
    refused_with(g_dir, 1, "is a folder, not a regular file; refusing to replace it");
    assert_int_equal(symlink(scratch_at("file"), scratch_at("link")), 0);
    refused_with(scratch_at("link"), 1,
                 "is a symbolic link, not a regular file; refusing to replace it");

    /* below a regular file: the system's reason */
    char p[160];
    snprintf(p, sizeof(p), "%s/x", scratch_at("file"));
    char what[128];
    snprintf(what, sizeof(what), "cannot check the output path: %s", strerror(ENOTDIR));
    refused_with(p, 1, what);
}

static void commit(void **state)
{
    (void)state;
    char err[512] = "";
    scratch_put(scratch_at("tmp1"), "one");
    assert_int_equal(gt_out_commit(scratch_at("tmp1"), scratch_at("out"), 0, err, sizeof(err)), 0);
    holds(scratch_at("out"), "one");
    assert_int_equal(access(scratch_at("tmp1"), F_OK), -1); /* moved, not copied */

    /* the target exists now: without replace, refused; both files kept */
    scratch_put(scratch_at("tmp2"), "two");
    assert_int_equal(gt_out_commit(scratch_at("tmp2"), scratch_at("out"), 0, err, sizeof(err)), -1);
    char want[512];
    snprintf(want, sizeof(want), "%s: exists; not replaced (--force replaces it)",
             scratch_at("out"));
    assert_string_equal(err, want);
    holds(scratch_at("out"), "one");
    holds(scratch_at("tmp2"), "two");

    assert_int_equal(gt_out_commit(scratch_at("tmp2"), scratch_at("out"), 1, err, sizeof(err)), 0);
    holds(scratch_at("out"), "two");
    assert_int_equal(access(scratch_at("tmp2"), F_OK), -1);

    /* a FIFO planted at the target: never swapped in by a replace */
    scratch_put(scratch_at("tmp3"), "three");
    assert_int_equal(mkfifo(scratch_at("planted"), 0600), 0);
    assert_int_equal(gt_out_commit(scratch_at("tmp3"), scratch_at("planted"), 1, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "is a FIFO"));
    struct stat st;
    assert_int_equal(lstat(scratch_at("planted"), &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    /* nor without replace: said as what it is */
    assert_int_equal(gt_out_commit(scratch_at("tmp3"), scratch_at("planted"), 0, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "is a FIFO"));
    holds(scratch_at("tmp3"), "three");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(check, scratch_setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(commit, scratch_setup, scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
