/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ab.c — the A/B judgement (tools/lib/ab.c) on jobs folded from
 * fixture recorders: a run against itself is "no difference (within
 * noise)", every row same or n/a; confounders found make it "not
 * comparable" whatever else; DMA-BUF against peermem is a changed
 * mechanism; the same run with every latency 4x is beyond noise (up) in
 * the latency rows and a 1 % change within it (N1); the SLO's throughput
 * in GB/s from bytes and ns, NaN with nothing timed; state and group names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/reader/fixture.h"
#include "tools/lib/ab.h"
#include "tests/unit/fx_recfile.h"

struct side {
    struct gt_recfile recs[2];
    struct gt_job job;
    struct gtr_comm tot;
};

static void fold(struct side *s, const struct fx_opts *o, int n)
{
    memset(s, 0, sizeof(*s));
    for (int i = 0; i < n; i++) {
        fx_recfile(&o[i], "ab.rec", &s->recs[i]);
        s->recs[i].liveness = GT_LIVE_EXITED;
    }
    assert_int_equal(gt_job_build(&s->job, s->recs, (size_t)n), 0);
    gt_comm_clear(&s->tot);
    for (size_t i = 0; i < s->job.ncomm; i++)
        gt_comm_accumulate(&s->tot, s->job.comms[i].sum);
}

static void unfold(struct side *s, int n)
{
    gt_job_free(&s->job);
    for (int i = 0; i < n; i++)
        gt_recfile_free(&s->recs[i]);
}

static struct side g_a, g_b;
static struct gt_ab g_ab;

static void judge(const struct fx_opts *a, const struct fx_opts *b, int ndiffs)
{
    fold(&g_a, a, 1);
    fold(&g_b, b, 1);
    gt_ab_build(&g_ab, &g_a.job, &g_a.tot, &g_b.job, &g_b.tot, ndiffs);
    unfold(&g_a, 1);
    unfold(&g_b, 1);
}

static const struct gt_ab_row *row(const char *prefix)
{
    for (int i = 0; i < g_ab.nrow; i++)
        if (!strncmp(g_ab.row[i].name, prefix, strlen(prefix)))
            return &g_ab.row[i];
    return NULL;
}

static void itself(void **state)
{
    (void)state;
    struct fx_opts o = {.kind = FX_DMABUF, .coll = "data"};
    judge(&o, &o, 0);
    assert_true(g_ab.nrow > 0);
    for (int i = 0; i < g_ab.nrow; i++)
        if (g_ab.row[i].state != GT_AB_SAME && g_ab.row[i].state != GT_AB_NA)
            fail_msg("row %s: %s", g_ab.row[i].name, gt_ab_state_name(g_ab.row[i].state));
    assert_int_equal(g_ab.mechanism, 0);
    assert_string_equal(g_ab.conclusion, "no difference (within noise)");
    judge(&o, &o, 2);
    assert_string_equal(g_ab.conclusion,
                        "not comparable: A and B differ in more than the registration path (2 "
                        "difference(s)); no conclusion about the registration path");
}

static void mechanism(void **state)
{
    (void)state;
    struct fx_opts a = {.kind = FX_DMABUF}, b = {.kind = FX_PEERMEM};
    judge(&a, &b, 0);
    assert_int_equal(g_ab.mechanism, 1);
    assert_true(!strncmp(g_ab.conclusion, "mechanism changed, ", 19));
    judge(&b, &b, 0);
    assert_int_equal(g_ab.mechanism, 0);
}

static void latency_noise(void **state)
{
    (void)state;
    /* the fixture scales its registration and collective latencies (not
     * send/recv): each latency row that moved went up beyond noise */
    struct fx_opts a = {.kind = FX_DMABUF, .coll = "data"}, b = a;
    b.lat_pct = 400;
    judge(&a, &b, 0);
    int up = 0;
    for (int i = 0; i < g_ab.nrow; i++) {
        const struct gt_ab_row *r = &g_ab.row[i];
        if (!strstr(r->name, "p50") && !strstr(r->name, "p95") && !strstr(r->name, "p99"))
            continue;
        if (r->va == r->vb ? r->state != GT_AB_SAME : r->state != GT_AB_UP)
            fail_msg("row %s (%g -> %g): %s at 4x", r->name, r->va, r->vb,
                     gt_ab_state_name(r->state));
        up += r->state == GT_AB_UP;
    }
    assert_true(up >= 3);
    assert_int_equal(g_ab.slo, GT_AB_UP); /* slower collectives: regressed */
    assert_non_null(strstr(g_ab.conclusion, "application SLO regressed"));
    /* 1 % slower: within noise everywhere */
    b.lat_pct = 101;
    judge(&a, &b, 0);
    for (int i = 0; i < g_ab.nrow; i++)
        if (g_ab.row[i].state == GT_AB_UP || g_ab.row[i].state == GT_AB_DOWN)
            fail_msg("row %s: %s at 1 %%", g_ab.row[i].name, gt_ab_state_name(g_ab.row[i].state));
    assert_string_equal(g_ab.conclusion, "no difference (within noise)");
    assert_null(row("no such row"));
}

static void gbs_and_names(void **state)
{
    (void)state;
    struct gt_ab_slo_fn f = {.timed_bytes = 3e9, .timed_ns = 1.5e9};
    assert_true(fabs(gt_ab_slo_gbs(&f) - 2.0) < 1e-12);
    f.timed_ns = 0;
    assert_true(isnan(gt_ab_slo_gbs(&f)));
    f.timed_ns = 1;
    f.timed_bytes = 0;
    assert_true(isnan(gt_ab_slo_gbs(&f)));
    assert_string_equal(gt_ab_state_name(GT_AB_NA), "n/a");
    assert_string_equal(gt_ab_state_name(GT_AB_NOISE), "within noise");
    assert_string_equal(gt_ab_state_name(GT_AB_DOWN), "down");
    assert_string_equal(gt_ab_state_name(99), "?");
    assert_string_equal(gt_ab_group_name(GT_AB_SLO), "application SLO");
    assert_string_equal(gt_ab_group_name(GT_AB_HOST), "host pressure");
    assert_string_equal(gt_ab_group_name(GT_AB_GROUPS), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(itself),
        cmocka_unit_test(mechanism),
        cmocka_unit_test(latency_noise),
        cmocka_unit_test(gbs_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
