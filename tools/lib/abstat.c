/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abstat.c — Welch's t test over runs and Holm's step-down (abstat.h).
 * Invariant: a row is beyond noise exactly when its drawn interval
 * excludes zero (gt_abstat_holm's levels).
 */
#include "tools/lib/abstat.h"

#include <math.h>
#include <stdlib.h>

/* continued fraction of the regularized incomplete beta (Lentz) */
static double betacf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-14)
            break;
    }
    return h;
}

static double ibeta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(1 - x);
    if (x < (a + 1) / (a + b + 2))
        return exp(lbt) * betacf(a, b, x) / a;
    return 1 - exp(lbt) * betacf(b, a, 1 - x) / b;
}

double gt_abstat_t_p(double t, double df)
{
    if (isnan(t) || df <= 0)
        return NAN;
    if (isinf(t))
        return 0;
    return ibeta(df / 2, 0.5, df / (df + t * t));
}

double gt_abstat_t_crit(double miss, double df)
{
    double lo = 0, hi = 1;
    while (gt_abstat_t_p(hi, df) > miss && hi < 1e12)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (gt_abstat_t_p(mid, df) > miss)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

static int collect(const double *x, int n, double *out, int *allpos)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) {
            out[k++] = x[i];
            if (!(x[i] > 0))
                *allpos = 0;
        }
    return k;
}

static void moments(const double *x, int n, int lg, double *mean, double *var)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += lg ? log(x[i]) : x[i];
    *mean = n ? s / n : NAN;
    double v = 0;
    for (int i = 0; i < n; i++) {
        double d = (lg ? log(x[i]) : x[i]) - *mean;
        v += d * d;
    }
    *var = n > 1 ? v / (n - 1) : NAN;
}

void gt_abstat_compare(const double *a, int na, const double *b, int nb, int logscale,
                       struct gt_abstat *s)
{
    double *x = malloc(sizeof(double) * (size_t)(na + nb + 1));
    int allpos = 1;
    s->p = s->se = s->df = s->diff = NAN;
    s->center[0] = s->center[1] = NAN;
    s->n[0] = s->n[1] = 0;
    s->logscale = 0;
    s->equal = 0;
    if (!x)
        return;
    int ka = collect(a, na, x, &allpos);
    int kb = collect(b, nb, x + ka, &allpos);
    s->n[0] = ka;
    s->n[1] = kb;
    s->logscale = logscale && allpos && ka && kb;
    s->equal = ka && kb;
    for (int i = 1; i < ka + kb; i++)
        if (x[i] != x[0])
            s->equal = 0;
    double m[2], v[2];
    moments(x, ka, s->logscale, &m[0], &v[0]);
    moments(x + ka, kb, s->logscale, &m[1], &v[1]);
    for (int k = 0; k < 2; k++)
        s->center[k] = s->logscale ? exp(m[k]) : m[k];
    if (ka && kb)
        s->diff = m[1] - m[0];
    if (ka >= 2 && kb >= 2) {
        double ua = v[0] / ka, ub = v[1] / kb;
        s->se = sqrt(ua + ub);
        s->df = ua + ub > 0 ? (ua + ub) * (ua + ub) / (ua * ua / (ka - 1) + ub * ub / (kb - 1))
                            : (double)(ka + kb - 2);
        if (s->equal || s->diff == 0)
            s->p = 1;
        else if (s->se == 0)
            s->p = 0; /* every run of each side alike, the sides apart */
        else
            s->p = gt_abstat_t_p(s->diff / s->se, s->df);
    }
    free(x);
}

void gt_abstat_interval(const struct gt_abstat *s, double miss, double *lo, double *hi)
{
    if (isnan(s->p) || isnan(miss)) {
        *lo = *hi = NAN;
        return;
    }
    double h = s->se > 0 ? gt_abstat_t_crit(miss, s->df) * s->se : 0;
    *lo = s->diff - h;
    *hi = s->diff + h;
}

void gt_abstat_holm(const double *p, int m, double alpha, int *reject, double *miss)
{
    int *ix = malloc(sizeof(int) * (size_t)(m ? m : 1));
    if (!ix)
        return;
    for (int i = 0; i < m; i++) {
        ix[i] = i;
        reject[i] = 0;
        miss[i] = NAN;
    }
    for (int i = 1; i < m; i++) /* ascending p, stable */
        for (int k = i; k > 0 && p[ix[k - 1]] > p[ix[k]]; k--) {
            int t = ix[k];
            ix[k] = ix[k - 1];
            ix[k - 1] = t;
        }
    int stopped = 0;
    double level = alpha;
    for (int r = 0; r < m; r++) {
        if (!stopped) {
            level = alpha / (m - r);
            if (p[ix[r]] < level)
                reject[ix[r]] = 1;
            else
                stopped = 1;
        }
        miss[ix[r]] = level;
    }
    free(ix);
}
