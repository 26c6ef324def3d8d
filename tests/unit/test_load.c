/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_load.c — PATH arguments to the job's model (tools/lib/load.c), its
 * one public call on folders of fixture recorders: read whole and built,
 * or folded as read (in->fold), the same model either way; a path that
 * cannot be read makes the exit GT_EXIT_INPUT while the rest is loaded; a
 * folder with no recorder gives an empty job, NO-DATA; it says why
 * (j->empty_why) only for a known cause: inputs that could not be read,
 * a --job that matched none (the job's name given); a loaded job leaves
 * it empty.
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
#include "tools/lib/load.h"

static char g_dir[64], g_empty[96], g_missing[96];

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof(g_dir), "/tmp/gt_load_XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    static const struct {
        const char *host;
        int rank, kind;
    } r[3] = {{"node10", 1, FX_DMABUF}, {"node2", 0, FX_DMABUF}, {"node2", 2, FX_PEERMEM}};
    for (int i = 0; i < 3; i++) {
        struct fx_opts o = {
            .kind = r[i].kind, .host = r[i].host, .rank = r[i].rank, .pid = 100 + i, .world = 3};
        char p[160];
        snprintf(p, sizeof(p), "%s/" GTR_FILE_PREFIX "%s.%d" GTR_FILE_SUFFIX, g_dir, r[i].host,
                 100 + i);
        if (fx_write(&o, p))
            return -1;
    }
    snprintf(g_empty, sizeof(g_empty), "%s/empty", g_dir);
    snprintf(g_missing, sizeof(g_missing), "%s/missing", g_dir);
    return mkdir(g_empty, 0700);
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void digest(const struct gt_job *j, char *out, size_t n)
{
    size_t k = (size_t)snprintf(out, n, "overall %d comms %zu nodes %zu|", j->overall.code,
                                j->ncomm, j->nnodes);
    for (size_t i = 0; i < j->nrec && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s:%d ", j->recs[i].id.host, j->recs[i].id.rank);
    for (size_t c = 0; c < j->ncomm && k < n; c++)
        k += (size_t)snprintf(out + k, n - k, "[%s %d %s]", j->comms[c].label, j->comms[c].v.code,
                              j->comms[c].v.why);
}

static int load(char **paths, int n, int fold, char *dig, size_t dn, size_t *nrec, char *why,
                size_t wn)
{
    static struct gt_job j;
    memset(&j, 0, sizeof(j));
    struct gt_inputs in = {.fold = fold ? &j : NULL};
    int rc = gt_load_job(paths, n, &in, &j);
    digest(&j, dig, dn);
    *nrec = j.nrec;
    snprintf(why, wn, "%s", j.empty_why);
    gt_job_free(&j);
    gt_inputs_free(&in);
    return rc;
}

static void whole_or_folded(void **state)
{
    (void)state;
    static char a[8192], b[8192];
    char why[512];
    size_t n;
    char *paths[] = {g_dir};
    assert_int_equal(load(paths, 1, 0, a, sizeof(a), &n, why, sizeof(why)), 0);
    assert_int_equal(n, 3);
    assert_string_equal(why, "");
    assert_non_null(strstr(a, "|node2:0 node2:2 node10:1 "));
    assert_true(!strncmp(a, "overall 3 ", 10)); /* GT_V_MIXED: dmabuf and peermem */
    assert_int_equal(load(paths, 1, 1, b, sizeof(b), &n, why, sizeof(why)), 0);
    assert_int_equal(n, 3);
    assert_string_equal(b, a);
}

static void unreadable_and_empty(void **state)
{
    (void)state;
    static char a[8192];
    char why[512];
    size_t n;
    char *two[] = {g_missing, g_dir};
    assert_int_equal(load(two, 2, 0, a, sizeof(a), &n, why, sizeof(why)), GT_EXIT_INPUT);
    assert_int_equal(n, 3); /* the rest loaded */
    assert_int_equal(load(two, 2, 1, a, sizeof(a), &n, why, sizeof(why)), GT_EXIT_INPUT);
    assert_int_equal(n, 3);
    char *empty[] = {g_empty};
    load(empty, 1, 1, a, sizeof(a), &n, why, sizeof(why));
    assert_int_equal(n, 0);
    assert_string_equal(why, "");               /* no known cause: the explanation is printed */
    assert_true(!strncmp(a, "overall 6 ", 10)); /* GT_V_NO_DATA */
    char *missing[] = {g_missing};
    assert_int_equal(load(missing, 1, 1, a, sizeof(a), &n, why, sizeof(why)), GT_EXIT_INPUT);
    assert_int_equal(n, 0);
    assert_string_equal(why, "1 input(s) named above could not be read: check the path(s)");
}

static void job_filter(void **state)
{
    (void)state;
    static struct gt_job j;
    memset(&j, 0, sizeof(j));
    char *paths[] = {g_dir};
    struct gt_inputs in = {.job = "job99", .fold = &j};
    assert_int_equal(gt_load_job(paths, 1, &in, &j), 0);
    assert_int_equal(j.nrec, 0);
    assert_string_equal(j.empty_why,
                        "--job job99 matched none of the recorders read (e.g. --job job42: "
                        "gdrtrace ls)");
    gt_job_free(&j);
    gt_inputs_free(&in);
    memset(&j, 0, sizeof(j));
    in = (struct gt_inputs){.job = "job42", .fold = &j};
    assert_int_equal(gt_load_job(paths, 1, &in, &j), 0);
    assert_int_equal(j.nrec, 3);
    gt_job_free(&j);
    gt_inputs_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_or_folded),
        cmocka_unit_test(unreadable_and_empty),
        cmocka_unit_test(job_filter),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
