/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_archive.c — `dump` archives (tools/lib/archive.c) written and read
 * back through the library: members come back in order with their names,
 * liveness and bytes (fixture recorders, a non-recorder blob); a sparse
 * member's absent pages come back as zeros without being read; the
 * container's size and magic; a cap below a member's size refused naming
 * the archive; a truncated archive refused after handing on the members
 * before the cut; a callback's non-zero value stops the walk; an existing
 * path kept without replace; an aborted writer leaves nothing behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/reader/fixture.h"
#include "tools/lib/archive.h"
#include "tools/lib/recfile.h"

static char g_dir[64], g_arc[128];

#define NMEM 3
static unsigned char *g_data[NMEM];
static size_t g_len[NMEM];
static const char *g_name[NMEM] = {"gdrtrace-node-a.rec", "blob.txt", "gdrtrace-node-b.rec"};
static const int g_live[NMEM] = {GT_LIVE_EXITED, GT_LIVE_UNKNOWN, GT_LIVE_CRASHED};

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof(g_dir), "/tmp/gt_archive_XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    snprintf(g_arc, sizeof(g_arc), "%s/job.zst", g_dir);
    struct fx_opts a = {.kind = FX_DMABUF, .host = "node-a"};
    struct fx_opts b = {.kind = FX_HOST, .host = "node-b", .pid = 77};
    g_data[0] = fx_build(&a, &g_len[0]);
    g_data[1] = (unsigned char *)strdup("not a recorder\n");
    g_len[1] = strlen((char *)g_data[1]);
    g_data[2] = fx_build(&b, &g_len[2]);
    return g_data[0] && g_data[2] ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < NMEM; i++)
        free(g_data[i]);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_archive(const char *path, int n)
{
    char err[512] = "";
    struct gt_archive_writer *w = gt_archive_create(path, 3, 1, err, sizeof(err));
    if (!w)
        fail_msg("%s", err);
    for (int i = 0; i < n; i++)
        if (gt_archive_add(w, g_name[i], g_live[i], g_data[i], g_len[i], NULL, err, sizeof(err)))
            fail_msg("%s", err);
    uint64_t in = 0, out = 0;
    if (gt_archive_finish(w, &in, &out, err, sizeof(err)))
        fail_msg("%s", err);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(out, (uint64_t)st.st_size);
    uint64_t payload = 0;
    for (int i = 0; i < n; i++)
        payload += g_len[i];
    assert_true(in >= payload);
}

struct seen {
    int n, stop_at;
    char names[8][64];
    int live[8];
    int same[8];
};

static int cb(struct gt_archive_member *m, void *arg)
{
    struct seen *s = arg;
    int i = s->n++;
    if (i < 8) {
        snprintf(s->names[i], sizeof(s->names[i]), "%s", m->name);
        s->live[i] = m->liveness;
        int k = -1;
        for (int j = 0; j < NMEM; j++)
            if (!strcmp(m->name, g_name[j]))
                k = j;
        /* a recorder is held whole; anything else only by its first bytes */
        s->same[i] = k >= 0 && m->len <= g_len[k] && !memcmp(m->data, g_data[k], m->len) &&
                     (m->len == g_len[k] || k == 1);
    }
    return s->stop_at && s->n == s->stop_at ? 7 : 0;
}

static int read_back(const char *path, size_t max, struct seen *s, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    int rc = gt_archive_stream_fd(fd, max, path, cb, s, err, errlen);
    close(fd);
    return rc;
}

static void round_trip(void **state)
{
    (void)state;
    write_archive(g_arc, NMEM);
    unsigned char head[4];
    int fd = open(g_arc, O_RDONLY);
    assert_int_equal(read(fd, head, 4), 4);
    close(fd);
    assert_int_equal(gt_archive_sniff(head, 4), 1);
    assert_int_equal(gt_archive_sniff(g_data[0], 4), 0);
    assert_int_equal(gt_archive_sniff(head, 3), 0);

    struct seen s = {0};
    char err[512] = "";
    if (read_back(g_arc, 1 << 30, &s, err, sizeof(err)))
        fail_msg("%s", err);
    assert_int_equal(s.n, NMEM);
    for (int i = 0; i < NMEM; i++) {
        assert_string_equal(s.names[i], g_name[i]);
        assert_int_equal(s.live[i], g_live[i]);
        if (i != 1)
            assert_true(s.same[i]);
    }
    /* the container, decompressed whole: magic then version 1 */
    struct stat st;
    assert_int_equal(stat(g_arc, &st), 0);
    unsigned char *z = malloc((size_t)st.st_size), *raw = NULL;
    fd = open(g_arc, O_RDONLY);
    assert_int_equal(read(fd, z, (size_t)st.st_size), st.st_size);
    close(fd);
    size_t rawn = 0;
    assert_int_equal(
        gt_archive_decompress(z, (size_t)st.st_size, 1 << 30, &raw, &rawn, "z", err, sizeof(err)),
        0);
    assert_memory_equal(raw, GT_ARC_MAGIC, 8);
    assert_int_equal(raw[8], 1);
    /* members + end marker: 24 bytes a member header, the end 8 */
    size_t want = 16 + 8;
    for (int i = 0; i < NMEM; i++)
        want += 24 + strlen(g_name[i]) + g_len[i];
    assert_int_equal(rawn, want);
    /* the walk over the decompressed container sees the same */
    struct seen w = {0};
    assert_int_equal(gt_archive_walk(raw, rawn, "raw", cb, &w, err, sizeof(err)), 0);
    assert_int_equal(w.n, NMEM);
    assert_true(w.same[0] && w.same[2]);
    free(raw);
    free(z);
}

static void sparse_member(void **state)
{
    (void)state;
    size_t len = 3 * GT_IMAGE_PAGE;
    unsigned char *img = malloc(len);
    memset(img, 0, len);
    memcpy(img, g_data[0], GT_IMAGE_PAGE < g_len[0] ? GT_IMAGE_PAGE : g_len[0]);
    memset(img + 2 * GT_IMAGE_PAGE, 0xab, GT_IMAGE_PAGE); /* absent: must not be read */
    unsigned char present[1] = {1};                       /* page 0 only */
    char err[512] = "";
    struct gt_archive_writer *w = gt_archive_create(g_arc, 1, 1, err, sizeof(err));
    assert_non_null(w);
    assert_int_equal(
        gt_archive_add(w, "sparse.rec", GT_LIVE_EXITED, img, len, present, err, sizeof(err)), 0);
    assert_int_equal(gt_archive_finish(w, NULL, NULL, err, sizeof(err)), 0);

    struct stat st;
    assert_int_equal(stat(g_arc, &st), 0);
    unsigned char *z = malloc((size_t)st.st_size), *raw = NULL;
    int fd = open(g_arc, O_RDONLY);
    assert_int_equal(read(fd, z, (size_t)st.st_size), st.st_size);
    close(fd);
    size_t rawn = 0;
    assert_int_equal(
        gt_archive_decompress(z, (size_t)st.st_size, 1 << 30, &raw, &rawn, "z", err, sizeof(err)),
        0);
    size_t at = 16 + 24 + strlen("sparse.rec");
    assert_true(rawn >= at + len);
    assert_memory_equal(raw + at, img, GT_IMAGE_PAGE);
    for (size_t i = GT_IMAGE_PAGE; i < len; i++)
        if (raw[at + i])
            fail_msg("byte %zu of an absent page is %#x, not 0", i, raw[at + i]);
    free(raw);
    free(z);
    free(img);
}

static void cap_and_truncation(void **state)
{
    (void)state;
    write_archive(g_arc, NMEM);
    struct seen s = {0};
    char err[512] = "";
    /* a cap below the first member: refused, naming the archive */
    assert_int_equal(read_back(g_arc, g_len[0] / 2, &s, err, sizeof(err)), -1);
    assert_int_equal(s.n, 0);
    char want[160];
    snprintf(want, sizeof(want), "%s: ", g_arc);
    assert_true(strncmp(err, want, strlen(want)) == 0);
    assert_non_null(strstr(err, "more than GDRTRACE_ARCHIVE_MAX"));

    /* cut the compressed file short: the members before the cut are handed
     * on, then the problem is said */
    struct stat st;
    assert_int_equal(stat(g_arc, &st), 0);
    assert_int_equal(truncate(g_arc, st.st_size - 16), 0);
    s = (struct seen){0};
    err[0] = 0;
    assert_int_equal(read_back(g_arc, 1 << 30, &s, err, sizeof(err)), -1);
    assert_true(s.n < NMEM);
    assert_true(strncmp(err, want, strlen(want)) == 0);
    assert_non_null(strstr(err, "truncated"));
}

static void callback_stops(void **state)
{
    (void)state;
    write_archive(g_arc, NMEM);
    struct seen s = {.stop_at = 2};
    char err[512] = "";
    assert_int_equal(read_back(g_arc, 1 << 30, &s, err, sizeof(err)), 7);
    assert_int_equal(s.n, 2);
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void replace_and_abort(void **state)
{
    (void)state;
    write_archive(g_arc, 1);
    struct stat before;
    assert_int_equal(stat(g_arc, &before), 0);
    char err[512] = "";
    assert_null(gt_archive_create(g_arc, 3, 0, err, sizeof(err)));
    assert_non_null(strstr(err, "exists; not replaced"));
    /* aborted: the existing archive untouched, no temporary file left */
    struct gt_archive_writer *w = gt_archive_create(g_arc, 3, 1, err, sizeof(err));
    assert_non_null(w);
    assert_int_equal(gt_archive_add(w, "x", 0, g_data[0], g_len[0], NULL, err, sizeof(err)), 0);
    gt_archive_abort(w);
    struct stat after;
    assert_int_equal(stat(g_arc, &after), 0);
    assert_int_equal(after.st_size, before.st_size);
    assert_int_equal(after.st_ino, before.st_ino);
    assert_int_equal(entries(g_dir), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(sparse_member, setup, teardown),
        cmocka_unit_test_setup_teardown(cap_and_truncation, setup, teardown),
        cmocka_unit_test_setup_teardown(callback_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(replace_and_abort, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
