/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_nccllog_read.c — NCCL's log from streams, files and folders
 * (tools/lib/nccllog_read.c): bytes become the same lines whatever the
 * split (whole, byte by byte, every split of a short text), a last line
 * without a newline is taken at the end; a line of GT_NLOG_LINE_MAX bytes
 * is kept and one byte more is counted too long, whatever the split, and
 * the next line is read; a file named is read; a FIFO, /dev/null, a
 * missing path are refused with the path; a folder's regular files are
 * read in name order, recorders and archives skipped by name, links,
 * FIFOs and folders inside skipped, nothing waited on; the owner rule
 * leaves out a folder's files of another owner, never a file named.
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

#include "tools/lib/nccllog.h"
#include "tests/unit/scratch_dir.h"

/* 3 of NCCL's lines, 2 foreign, the last without a newline */
static const char TEXT[] = "h1:10:10 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\n"
                           "plain text\n"
                           "h1:10:10 [0] NCCL INFO something unused\n"
                           "h1:10:11 [0] NCCL WARN a warning\n"
                           "trailing words";

struct counts {
    uint64_t lines, bytes, nccl, foreign, too_long;
};

static struct counts counts_of(const struct gt_nlog *l)
{
    return (struct counts){l->lines, l->bytes, l->nccl_lines, l->foreign, l->too_long};
}

static void same(struct counts a, struct counts b)
{
    assert_int_equal(a.lines, b.lines);
    assert_int_equal(a.bytes, b.bytes);
    assert_int_equal(a.nccl, b.nccl);
    assert_int_equal(a.foreign, b.foreign);
    assert_int_equal(a.too_long, b.too_long);
}

static struct counts feed_split(const char *s, size_t n, size_t cut1, size_t cut2)
{
    struct gt_nlog l;
    assert_int_equal(gt_nlog_init(&l), 0);
    gt_nlog_feed(&l, s, cut1);
    gt_nlog_feed(&l, s + cut1, cut2 - cut1);
    gt_nlog_feed(&l, s + cut2, n - cut2);
    gt_nlog_feed_end(&l);
    struct counts c = counts_of(&l);
    gt_nlog_free(&l);
    return c;
}

static void any_split(void **state)
{
    (void)state;
    size_t n = strlen(TEXT);
    struct counts whole = feed_split(TEXT, n, n, n);
    /* counted here from the text: 5 lines, their bytes without newlines */
    size_t nl = 0;
    for (size_t i = 0; i < n; i++)
        nl += TEXT[i] == '\n';
    assert_int_equal(whole.lines, nl + 1);
    assert_int_equal(whole.bytes, n - nl);
    assert_int_equal(whole.nccl, 3);
    assert_int_equal(whole.foreign, 2);
    for (size_t a = 0; a <= n; a++)
        for (size_t b = a; b <= n; b += 7)
            same(feed_split(TEXT, n, a, b), whole);
    /* byte by byte */
    struct gt_nlog l;
    assert_int_equal(gt_nlog_init(&l), 0);
    for (size_t i = 0; i < n; i++)
        gt_nlog_feed(&l, TEXT + i, 1);
    gt_nlog_feed_end(&l);
    same(counts_of(&l), whole);
    gt_nlog_free(&l);
}

static void long_lines(void **state)
{
    (void)state;
    size_t max = GT_NLOG_LINE_MAX;
    char *s = malloc(2 * max + 64);
    /* a line of exactly max bytes, then one of max + 1, then a short one */
    memset(s, 'x', max);
    s[max] = '\n';
    memset(s + max + 1, 'y', max + 1);
    s[2 * max + 2] = '\n';
    strcpy(s + 2 * max + 3, "short\n");
    size_t n = strlen(s);
    struct counts c = feed_split(s, n, 0, 0);
    assert_int_equal(c.lines, 3);
    assert_int_equal(c.too_long, 1);
    assert_int_equal(c.foreign, 2); /* the max one and "short" were read */
    assert_int_equal(c.bytes, max + 5);
    for (size_t cut = max - 2; cut < max + 6; cut++)
        same(feed_split(s, n, cut, cut + max), c);
    free(s);
}

static void files_named(void **state)
{
    (void)state;
    struct gt_nlog l;
    const char *what = NULL;
    scratch_put(scratch_at("one.log"), TEXT);
    assert_int_equal(gt_nlog_init(&l), 0);
    assert_int_equal(gt_nlog_add_path(&l, scratch_at("one.log"), &what), 0);
    assert_int_equal(l.files, 1);
    assert_int_equal(l.nccl_lines, 3);

    assert_int_equal(mkfifo(scratch_at("fifo"), 0600), 0);
    assert_int_equal(gt_nlog_add_path(&l, scratch_at("fifo"), &what), GT_NLOG_NOT_REGULAR);
    assert_string_equal(what, scratch_at("fifo"));
    assert_int_equal(gt_nlog_add_path(&l, "/dev/null", &what), GT_NLOG_NOT_REGULAR);
    assert_string_equal(what, "/dev/null");
    assert_int_equal(gt_nlog_add_path(&l, scratch_at("absent"), &what), ENOENT);
    assert_string_equal(what, scratch_at("absent"));
    assert_int_equal(l.files, 1); /* none of them read */
    gt_nlog_free(&l);
}

static void a_folder(void **state)
{
    (void)state;
    /* written in reverse order: read in name order all the same */
    scratch_put(scratch_at("b.log"), "h1:10:10 [0] NCCL INFO unused-from-b\n");
    scratch_put(scratch_at("a.log"), "h1:10:10 [0] NCCL INFO unused-from-a\n");
    scratch_put(scratch_at("gdrtrace.node.1.rec"), "h1:10:10 [0] NCCL INFO from a recorder\n");
    scratch_put(scratch_at("recorders.zst"), "h1:10:10 [0] NCCL INFO from an archive\n");
    assert_int_equal(symlink(scratch_at("a.log"), scratch_at("c-link.log")), 0);
    assert_int_equal(mkfifo(scratch_at("d-fifo.log"), 0600), 0);
    assert_int_equal(mkdir(scratch_at("e-sub"), 0700), 0);
    scratch_put(scratch_at("e-sub/f.log"), "h1:10:10 [0] NCCL INFO nested\n");
    struct gt_nlog l;
    const char *what = NULL;
    assert_int_equal(gt_nlog_init(&l), 0);
    assert_int_equal(gt_nlog_add_path(&l, g_dir, &what), 0);
    assert_int_equal(l.files, 2);
    assert_int_equal(l.skipped, 2);
    assert_int_equal(l.nccl_lines, 2);
    assert_non_null(strstr(l.first_unused, "unused-from-a"));
    gt_nlog_free(&l);
}

static void owner_rule(void **state)
{
    (void)state;
    scratch_put(scratch_at("a.log"), TEXT);
    scratch_put(scratch_at("b.log"), TEXT);
    struct gt_nlog l;
    const char *what = NULL;
    assert_int_equal(gt_nlog_init(&l), 0);
    l.owners[0] = (long)getuid() + 1;
    l.nowners = 1;
    assert_int_equal(gt_nlog_add_path(&l, g_dir, &what), 0);
    assert_int_equal(l.files, 0);
    assert_int_equal(l.owner_left, 2);
    assert_int_equal(l.owner_left_uid, (long)getuid());
    assert_true(!strcmp(l.owner_left_eg, scratch_at("a.log")) ||
                !strcmp(l.owner_left_eg, scratch_at("b.log")));
    /* a file named by itself is the operator's choice */
    assert_int_equal(gt_nlog_add_path(&l, scratch_at("a.log"), &what), 0);
    assert_int_equal(l.files, 1);
    /* our own uid among the owners: read */
    l.owners[1] = (long)getuid();
    l.nowners = 2;
    assert_int_equal(gt_nlog_add_path(&l, g_dir, &what), 0);
    assert_int_equal(l.files, 3);
    gt_nlog_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(any_split),
        cmocka_unit_test(long_lines),
        cmocka_unit_test_setup_teardown(files_named, scratch_setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(a_folder, scratch_setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(owner_rule, scratch_setup, scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
