/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abstat.h — the A/B's statistics over runs (docs/diff.md): one figure's
 * per-run values of A and B compared by Welch's t test (on the logarithm
 * when every value is positive, so a change reads as a ratio), its interval
 * at a stated level, and Holm's step-down over the rows of one family so
 * that the family-wise false-alarm rate is the stated alpha.  Pure
 * functions, no I/O.
 */
#ifndef GDRTRACE_TOOLS_ABSTAT_H
#define GDRTRACE_TOOLS_ABSTAT_H

/* One figure compared: k runs a side, at least 2 each for a test. */
struct gt_abstat {
    int n[2];
    int logscale;     /* 1: compared on log(value): delta and interval are ratios - 1 */
    double center[2]; /* mean (geometric mean on the log scale) */
    double diff;      /* B - A on the compared scale */
    double se, df;    /* Welch's standard error and degrees of freedom */
    double p;         /* two-sided p; NAN when not testable (a side below 2 runs) */
    int equal;        /* every value of both sides equal */
};

/* Compares a[0..na) with b[0..nb) (NaN values skipped).  logscale: 1 to
 * use the log when every value is positive, 0 never. */
void gt_abstat_compare(const double *a, int na, const double *b, int nb, int logscale,
                       struct gt_abstat *s);
/* The interval of s->diff at two-sided level `miss` (e.g. 0.05 for 95 %):
 * [lo, hi] on the compared scale; NAN when not testable. */
void gt_abstat_interval(const struct gt_abstat *s, double miss, double *lo, double *hi);
/* Two-sided p of Student's t with df degrees of freedom. */
double gt_abstat_t_p(double t, double df);
/* The t with two-sided p `miss` (the quantile 1 - miss/2). */
double gt_abstat_t_crit(double miss, double df);
/* Holm's step-down at family-wise alpha over p[0..m): reject[i] = 1 when
 * row i is beyond noise; miss[i] = the level at which row i's interval is
 * drawn so that it excludes 0 exactly when rejected (alpha/(m-r) at its
 * rank r, the stopping step's level for every row from there on). */
void gt_abstat_holm(const double *p, int m, double alpha, int *reject, double *miss);

#endif
