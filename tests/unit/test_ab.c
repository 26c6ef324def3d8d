/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ab.c — the A/B judge over runs (tools/lib/ab.c, tools/lib/abstat.c):
 * Student's t and Holm against known values; one run a side is "noise
 * unknown", never "no difference" nor an effect; identical runs are "no
 * difference"; a doubled host CPU with run-to-run spread is "host path
 * loaded more", never "slower"; an SLO row beyond noise with the mechanism
 * changed is "slower"; an emulated side is "not measurable on an emulated
 * NIC" with the copier's share; confounders are "not comparable"; peer rows
 * never decide; and on a thousand random run sets the conclusion never
 * contradicts the rows' decisions.  Jobs folded from fixture recorders give
 * the runs' figures (a run against itself, DMA-BUF against peermem).
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
#include "tests/unit/fx_recfile.h"
#include "tools/lib/ab.h"
#include "tools/lib/abstat.h"

static struct gt_ab g_ab;

static void val(struct gt_ab_run *r, int group, int role, int better, const char *name, double v)
{
    struct gt_ab_val *x = &r->val[r->nval++];
    memset(x, 0, sizeof(*x));
    x->group = group;
    x->role = role;
    x->fmt = GT_AB_F_S3;
    x->better = better;
    x->v = v;
    snprintf(x->name, sizeof(x->name), "%s", name);
}

/* a run: an SLO row (lower is better), a host CPU row, a peer row, a
 * verdict; scaled by slo, cpu, peer; verdict code v */
static void run(struct gt_ab_run *r, double slo, double cpu, double peer, int v)
{
    memset(r, 0, sizeof(*r));
    r->slo_recorded = 1;
    val(r, GT_AB_SLO, GT_AB_EFFECT, -1, "AllReduce p50", slo);
    val(r, GT_AB_HOST, GT_AB_EFFECT, -1, "CPU s per GB moved", cpu);
    val(r, GT_AB_EVIDENCE, GT_AB_PEER, -1, "send p50", peer);
    struct gt_ab_val *x = &r->val[r->nval++];
    memset(x, 0, sizeof(*x));
    x->group = GT_AB_EVIDENCE;
    x->role = GT_AB_MECH;
    x->fmt = GT_AB_F_TEXT;
    x->v = v;
    snprintf(x->name, sizeof(x->name), "verdict");
    snprintf(x->text, sizeof(x->text), "V%d", v);
    r->cpu_s = cpu;
}

static const struct gt_ab_row *row(const char *name)
{
    for (int i = 0; i < g_ab.nrow; i++)
        if (!strcmp(g_ab.row[i].name, name))
            return &g_ab.row[i];
    return NULL;
}

static void student_and_holm(void **state)
{
    (void)state;
    /* t(0.975, 4) = 2.776445, t(0.995, 10) = 3.169273 */
    assert_true(fabs(gt_abstat_t_p(2.776445, 4) - 0.05) < 1e-5);
    assert_true(fabs(gt_abstat_t_p(-3.169273, 10) - 0.01) < 1e-5);
    assert_true(fabs(gt_abstat_t_crit(0.05, 4) - 2.776445) < 1e-4);
    assert_true(fabs(gt_abstat_t_p(0, 3) - 1) < 1e-12);
    /* Holm at 0.05 over 4: 0.01 < 0.0125 rejects, 0.02 >= 0.0167 stops */
    double p[4] = {0.02, 0.01, 0.04, 0.5}, miss[4];
    int rej[4];
    gt_abstat_holm(p, 4, 0.05, rej, miss);
    assert_int_equal(rej[1], 1);
    assert_int_equal(rej[0] + rej[2] + rej[3], 0);
    assert_true(fabs(miss[1] - 0.0125) < 1e-12);
    assert_true(fabs(miss[0] - 0.05 / 3) < 1e-12);
    assert_true(fabs(miss[3] - 0.05 / 3) < 1e-12); /* the stopping step's level */
    /* Welch on the log: 1,2,4 against 2,4,8 is a ratio of exactly 2 */
    double a[3] = {1, 2, 4}, b[3] = {2, 4, 8}, lo, hi;
    struct gt_abstat s;
    gt_abstat_compare(a, 3, b, 3, 1, &s);
    assert_int_equal(s.logscale, 1);
    assert_true(fabs(exp(s.diff) - 2) < 1e-12);
    gt_abstat_interval(&s, 0.05, &lo, &hi);
    assert_true(lo < s.diff && s.diff < hi);
    /* a value <= 0 keeps the raw scale; one run a side is not testable */
    double z[3] = {0, 1, 2};
    gt_abstat_compare(z, 3, b, 3, 1, &s);
    assert_int_equal(s.logscale, 0);
    gt_abstat_compare(a, 1, b, 3, 1, &s);
    assert_true(isnan(s.p));
}

static void one_run(void **state)
{
    (void)state;
    struct gt_ab_run a, b;
    run(&a, 10, 1, 5, 3);
    run(&b, 30, 3, 5, 3); /* three times everything: still unknown */
    gt_ab_build(&g_ab, &a, 1, &b, 1, 0);
    assert_string_equal(g_ab.rule, "one-run");
    assert_non_null(strstr(g_ab.conclusion, "the noise is unknown"));
    assert_int_equal(row("AllReduce p50")->state, GT_AB_UNKNOWN);
    assert_int_equal(row("CPU s per GB moved")->state, GT_AB_UNKNOWN);
    assert_null(strstr(g_ab.conclusion, "no difference"));
    assert_null(strstr(g_ab.conclusion, "slower"));
}

static void identical(void **state)
{
    (void)state;
    struct gt_ab_run r[6];
    for (int i = 0; i < 6; i++)
        run(&r[i], 10 + i % 3, 1 + 0.1 * (i % 3), 5, 3);
    gt_ab_build(&g_ab, r, 3, r + 3, 3, 0);
    assert_string_equal(g_ab.rule, "no-difference");
    assert_string_equal(g_ab.conclusion, "no difference (within noise)");
    assert_int_equal(g_ab.nfamily, 2);
    gt_ab_build(&g_ab, r, 3, r + 3, 3, 2);
    assert_string_equal(g_ab.rule, "not-comparable");
}

static void host_only(void **state)
{
    (void)state;
    struct gt_ab_run r[6];
    double n[3] = {1.0, 1.08, 0.93};
    for (int i = 0; i < 3; i++) {
        run(&r[i], 10 * n[i], 1 * n[(i + 1) % 3], 5, 3);
        run(&r[3 + i], 10 * n[(i + 2) % 3], 2 * n[i], 9 * n[i], 3);
    }
    gt_ab_build(&g_ab, r, 3, r + 3, 3, 0);
    assert_int_equal(row("CPU s per GB moved")->state, GT_AB_UP);
    assert_int_equal(row("AllReduce p50")->state, GT_AB_NOISE);
    assert_int_equal(row("send p50")->state, GT_AB_NOTEVID); /* 9/5 of the peer: not evidence */
    assert_string_equal(g_ab.rule, "runbook");
    assert_non_null(strstr(g_ab.conclusion, "host path loaded more, no application effect"));
    assert_null(strstr(g_ab.conclusion, "slower"));
    /* the interval of a family row excludes 1 exactly when it moved */
    const struct gt_ab_row *c = row("CPU s per GB moved");
    assert_true(c->lo > 0 && c->hi > c->lo);
}

static void slower(void **state)
{
    (void)state;
    struct gt_ab_run r[6];
    double n[3] = {1.0, 1.05, 0.96};
    for (int i = 0; i < 3; i++) {
        run(&r[i], 10 * n[i], 1 * n[i], 5, 3);
        run(&r[3 + i], 15 * n[(i + 1) % 3], 1 * n[(i + 2) % 3], 5, 5);
    }
    gt_ab_build(&g_ab, r, 3, r + 3, 3, 0);
    assert_int_equal(g_ab.mechanism, 1);
    assert_int_equal(row("AllReduce p50")->state, GT_AB_UP);
    assert_non_null(strstr(g_ab.conclusion, "application SLO regressed: slower"));
    /* the same with B emulated: not measurable, the copier's share said */
    for (int i = 3; i < 6; i++) {
        r[i].emulated = 1;
        r[i].helper_s = 1;
    }
    gt_ab_build(&g_ab, r, 3, r + 3, 3, 0);
    assert_string_equal(g_ab.rule, "emulated");
    assert_non_null(strstr(g_ab.conclusion, "not measurable on an emulated NIC"));
    assert_non_null(strstr(g_ab.conclusion, "copier's share of host CPU: B 50 %"));
    assert_null(strstr(g_ab.conclusion, "slower"));
}

/* the conclusion from the rows' printed decisions, independently */
static void check_consistent(const struct gt_ab *ab)
{
    int moved = 0, slo = 0, hup = 0, hdown = 0;
    for (int i = 0; i < ab->nrow; i++) {
        const struct gt_ab_row *r = &ab->row[i];
        int m = r->state == GT_AB_UP || r->state == GT_AB_DOWN;
        if (r->role == GT_AB_PEER || r->role == GT_AB_INFO)
            assert_false(m);
        if (r->role != GT_AB_EFFECT || !m)
            continue;
        moved++;
        slo += r->group == GT_AB_SLO;
        hup += r->group == GT_AB_HOST && r->state == GT_AB_UP;
        hdown += r->group == GT_AB_HOST && r->state == GT_AB_DOWN;
        /* beyond noise: the drawn interval excludes no change */
        assert_true(r->lo > 0 || r->hi < 0);
    }
    const char *c = ab->conclusion;
    if (!strcmp(ab->rule, "no-difference"))
        assert_true(!moved && !ab->mechanism);
    if (strstr(c, "faster") || strstr(c, "slower"))
        assert_true(slo > 0);
    if (strstr(c, "host path loaded more"))
        assert_true(hup > 0);
    if (strstr(c, "host path unloaded"))
        assert_true(hdown > 0 && !hup);
    if (moved && !strcmp(ab->rule, "runbook"))
        assert_null(strstr(c, "no difference"));
}

static void never_contradicts(void **state)
{
    (void)state;
    struct gt_ab_run r[10];
    uint64_t s = 0x1234;
    for (int trial = 0; trial < 1000; trial++) {
        int ka = 2 + trial % 4, kb = 2 + (trial / 4) % 4;
        for (int i = 0; i < ka + kb; i++) {
            double u[3];
            for (int q = 0; q < 3; q++) {
                s = s * 6364136223846793005ULL + 1442695040888963407ULL;
                u[q] = 0.5 + (double)(s >> 11) / 9007199254740992.0;
            }
            int b = i >= ka;
            double es = b ? 1 + 0.5 * (trial % 3) : 1, eh = b ? 1 + 0.5 * (trial % 5 == 0) : 1;
            run(&r[i], 10 * u[0] * es, u[1] * eh, u[2], b && trial % 7 == 0 ? 5 : 3);
        }
        gt_ab_build(&g_ab, r, ka, r + ka, kb, 0);
        check_consistent(&g_ab);
    }
}

/* ---- jobs folded from fixture recorders -------------------------------- */

static void judge_jobs(const struct fx_opts *a, const struct fx_opts *b, int k)
{
    struct gt_recfile ra, rb;
    struct gt_job ja, jb;
    fx_recfile(a, "ab.rec", &ra);
    fx_recfile(b, "ab.rec", &rb);
    ra.liveness = rb.liveness = GT_LIVE_EXITED;
    assert_int_equal(gt_job_build(&ja, &ra, 1), 0);
    assert_int_equal(gt_job_build(&jb, &rb, 1), 0);
    struct gt_ab_run *runs = calloc(2 * (size_t)k, sizeof(*runs));
    assert_non_null(runs);
    for (int i = 0; i < k; i++) {
        gt_ab_run_of(&ja, &runs[i]);
        gt_ab_run_of(&jb, &runs[k + i]);
    }
    gt_ab_build(&g_ab, runs, k, runs + k, k, 0);
    free(runs);
    gt_job_free(&ja);
    gt_job_free(&jb);
    gt_recfile_free(&ra);
    gt_recfile_free(&rb);
}

static void fixture_jobs(void **state)
{
    (void)state;
    struct fx_opts o = {.kind = FX_DMABUF, .coll = "data"};
    judge_jobs(&o, &o, 3);
    assert_true(g_ab.nrow > 0);
    for (int i = 0; i < g_ab.nrow; i++)
        if (g_ab.row[i].state != GT_AB_SAME && g_ab.row[i].state != GT_AB_NA &&
            g_ab.row[i].fmt != GT_AB_F_TEXT)
            fail_msg("row %s: %s", g_ab.row[i].name, gt_ab_state_name(g_ab.row[i].state));
    assert_string_equal(g_ab.conclusion, "no difference (within noise)");
    judge_jobs(&o, &o, 1);
    assert_string_equal(g_ab.rule, "one-run");
    struct fx_opts a = {.kind = FX_DMABUF}, b = {.kind = FX_PEERMEM};
    judge_jobs(&a, &b, 1);
    assert_int_equal(g_ab.mechanism, 1);
    assert_true(!strncmp(g_ab.conclusion, "mechanism changed; the noise is unknown", 39));
}

static void names(void **state)
{
    (void)state;
    struct gt_ab_slo_fn f = {.timed_bytes = 3e9, .timed_ns = 1.5e9};
    assert_true(fabs(gt_ab_slo_gbs(&f) - 2.0) < 1e-12);
    f.timed_ns = 0;
    assert_true(isnan(gt_ab_slo_gbs(&f)));
    assert_string_equal(gt_ab_state_name(GT_AB_UNKNOWN), "noise unknown");
    assert_string_equal(gt_ab_state_name(GT_AB_NOTEVID), "not evidence");
    assert_string_equal(gt_ab_state_name(99), "?");
    assert_string_equal(gt_ab_role_name(GT_AB_PEER), "waits on the peer");
    assert_string_equal(gt_ab_group_name(GT_AB_HOST), "host pressure");
    assert_string_equal(gt_ab_group_name(GT_AB_GROUPS), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(student_and_holm), cmocka_unit_test(one_run),
        cmocka_unit_test(identical),        cmocka_unit_test(host_only),
        cmocka_unit_test(slower),           cmocka_unit_test(never_contradicts),
        cmocka_unit_test(fixture_jobs),     cmocka_unit_test(names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
