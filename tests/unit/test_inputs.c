/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_inputs.c — command-line paths to parsed recorders (tools/lib/
 * inputs.c), through its public calls (gt_inputs_load, _sort, _free and
 * the counts struct gt_inputs keeps): a folder's recorder files and every
 * member of its dump archives are read; a process seen twice (its file and
 * its archived copy) counted once; entries with other names skipped and
 * counted, a file of another name holding a recorder named as an example,
 * a folder `gdrtrace run` left counted apart, a FIFO among them never
 * waited on; --job keeps its own and names another job seen; a path that
 * is not a recorder, a FIFO named and a missing path each counted bad
 * while the rest is read; the order after sorting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/reader/fixture.h"
#include "tools/lib/archive.h"
#include "tools/lib/inputs.h"
#include "tests/unit/scratch_dir.h"

static int setup(void **state)
{
    (void)state;
    if (scratch_make())
        return -1;
    struct fx_opts a = {.kind = FX_DMABUF, .host = "node10", .pid = 10, .rank = 1};
    struct fx_opts b = {.kind = FX_DMABUF, .host = "node2", .pid = 20, .rank = 0};
    struct fx_opts c = {.kind = FX_DMABUF, .host = "node3", .pid = 30, .rank = 2};
    if (fx_write(&a, scratch_at("gdrtrace.node10.10.rec")) ||
        fx_write(&b, scratch_at("gdrtrace.node2.20.rec")) ||
        fx_write(&c, scratch_at("renamed.bin")))
        return -1;
    /* an archive of c (only there under a recorder's name) and of b again */
    char err[512];
    struct gt_archive_writer *w = gt_archive_create(scratch_at("job.zst"), 1, 1, err, sizeof(err));
    if (!w)
        return -1;
    struct fx_opts *o[2] = {&c, &b};
    for (int i = 0; i < 2; i++) {
        size_t len;
        unsigned char *img = fx_build(o[i], &len);
        int rc = gt_archive_add(w, i ? "gdrtrace.node2.20.rec" : "gdrtrace.node3.30.rec",
                                GT_LIVE_EXITED, img, len, NULL, err, sizeof(err));
        free(img);
        if (rc)
            return -1;
    }
    if (gt_archive_finish(w, NULL, NULL, err, sizeof(err)))
        return -1;
    FILE *f = fopen(scratch_at("notes.txt"), "w");
    if (!f)
        return -1;
    fputs("not a recorder\n", f);
    fclose(f);
    if (mkfifo(scratch_at("pipe"), 0600) || mkdir(scratch_at("gdrtrace-run.77"), 0700))
        return -1;
    return 0;
}

static void a_folder(void **state)
{
    (void)state;
    struct gt_inputs in = {.quiet = 1};
    char *paths[] = {g_dir};
    assert_int_equal(gt_inputs_load(&in, paths, 1), 0);
    assert_int_equal(in.nbad, 0);
    assert_int_equal(in.n, 3); /* node10, node2 (file and archive: once), node3 (archive) */
    assert_int_equal(in.dups, 1);
    assert_int_equal(in.ndirs, 1);
    assert_int_equal(in.skip_run, 1);
    assert_string_equal(in.skip_run_eg, "gdrtrace-run.77");
    assert_int_equal(in.skip_name, 3); /* notes.txt, pipe, renamed.bin */
    assert_int_equal(in.skip_ours, 1);
    assert_string_equal(in.skip_ours_eg, "renamed.bin");
    gt_inputs_sort(&in);
    assert_string_equal(in.recs[0].id.host, "node2");
    assert_string_equal(in.recs[1].id.host, "node3");
    assert_string_equal(in.recs[2].id.host, "node10");
    gt_inputs_free(&in);
}

static void job_filter(void **state)
{
    (void)state;
    struct gt_inputs in = {.quiet = 1, .job = "job7"};
    char *paths[] = {g_dir};
    assert_int_equal(gt_inputs_load(&in, paths, 1), 0);
    assert_int_equal(in.n, 0);
    assert_true(in.skip_job >= 3);
    assert_string_equal(in.other_job, "job42");
    gt_inputs_free(&in);
    in = (struct gt_inputs){.quiet = 1, .job = "job42"};
    assert_int_equal(gt_inputs_load(&in, paths, 1), 0);
    assert_int_equal(in.n, 3);
    gt_inputs_free(&in);
}

static void bad_paths(void **state)
{
    (void)state;
    struct gt_inputs in = {.quiet = 1};
    static const char *names[5] = {"notes.txt", "pipe", "absent", "gdrtrace.node10.10.rec",
                                   "renamed.bin"};
    char p[5][160], *paths[5];
    for (int i = 0; i < 5; i++) {
        snprintf(p[i], sizeof(p[i]), "%s/%s", g_dir, names[i]);
        paths[i] = p[i];
    }
    assert_int_equal(gt_inputs_load(&in, paths, 5), 3);
    assert_int_equal(in.nbad, 3);
    assert_int_equal(in.n, 2); /* a file named is read whatever its name */
    gt_inputs_free(&in);
}

/* List mode (ls): every recorder handed to `each` once, whole, none held */
static void count_each(struct gt_inputs *in, size_t i, void *arg)
{
    size_t *seen = arg;
    assert_non_null(in->each_rec);
    assert_true(in->each_rec->id.host[0] != 0);
    assert_true(i < 8);
    seen[i]++;
}

static void list_mode(void **state)
{
    (void)state;
    size_t seen[8] = {0};
    struct gt_inputs in = {.quiet = 1, .discard = 1, .each = count_each, .each_arg = seen};
    char *paths[] = {g_dir};
    assert_int_equal(gt_inputs_load(&in, paths, 1), 0);
    assert_int_equal(in.n, 3); /* as a full load: node2's archived copy counted once */
    assert_int_equal(in.dups, 1);
    assert_int_equal(seen[0] + seen[1] + seen[2], 3);
    gt_inputs_free(&in);
}

/* Recorder files identical in identity are two processes (one process
 * writes one file), never merged, however many */
static void identical_files(void **state)
{
    (void)state;
    char dir[200];
    snprintf(dir, sizeof(dir), "%s/same", g_dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    struct fx_opts o = {.kind = FX_DMABUF, .host = "twin", .pid = 7};
    for (int i = 0; i < 40; i++) {
        char p[256];
        snprintf(p, sizeof(p), "%s/gdrtrace.twin.%d.rec", dir, i);
        assert_int_equal(fx_write(&o, p), 0);
    }
    struct gt_inputs in = {.quiet = 1, .release = 1};
    char *paths[] = {dir};
    assert_int_equal(gt_inputs_load(&in, paths, 1), 0);
    assert_int_equal(in.n, 40);
    assert_int_equal(in.dups, 0);
    gt_inputs_free(&in);
}

/* Root: another owner's recorder of root's own job is left out from its
 * header and identity, never parsed (its ring is broken: a parse would be a
 * problem, nbad); counted by nparsed */
static void foreign_unparsed(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* needs a file of another owner: chown */
    char dir[200], mine[256], theirs[256];
    snprintf(dir, sizeof(dir), "%s/owners", g_dir);
    snprintf(mine, sizeof(mine), "%s/gdrtrace.J.b.2.rec", dir);
    snprintf(theirs, sizeof(theirs), "%s/gdrtrace.J.a.1.rec", dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    struct fx_opts o = {.kind = FX_HOST, .job = "J", .host = "b", .pid = 2};
    assert_int_equal(fx_write(&o, mine), 0);
    size_t len;
    struct fx_opts f = {.kind = FX_DMABUF, .job = "J", .host = "a", .pid = 1};
    unsigned char *img = fx_build(&f, &len);
    assert_non_null(img);
    struct gtr_header h;
    memcpy(&h, img, sizeof(h));
    for (unsigned i = 0; i < h.section_count; i++)
        if (h.sections[i].id == GTR_SEC_RING) {
            uint64_t three = 3; /* not a power of two */
            memcpy(img + h.sections[i].offset, &three, sizeof(three));
        }
    FILE *fp = fopen(theirs, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(img, 1, len, fp), len);
    fclose(fp);
    free(img);
    assert_int_equal(chown(theirs, 65534, 65534), 0);
    struct gt_inputs in = {.quiet = 1};
    char *paths[] = {dir};
    assert_int_equal(gt_inputs_load(&in, paths, 1), 0);
    assert_int_equal(in.nbad, 0);
    assert_int_equal(in.n, 1);
    assert_string_equal(in.recs[0].id.host, "b");
    assert_int_equal(in.nparsed, 1); /* root's own alone */
    assert_int_equal(in.nskip_owner, 1);
    assert_int_equal(in.skip_owner[0].uid, 65534);
    gt_inputs_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_folder),        cmocka_unit_test(job_filter),
        cmocka_unit_test(bad_paths),       cmocka_unit_test(list_mode),
        cmocka_unit_test(identical_files), cmocka_unit_test(foreign_unparsed),
    };
    return cmocka_run_group_tests(tests, setup, scratch_teardown);
}
