/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ab.c — the A/B's three groups and its conclusion (ab.h gives the noise
 * rules N1-N4 and the conclusion's order).  Invariant: the conclusion says
 * "faster" or "slower" only when the application SLO moved beyond noise;
 * host pressure alone is "host path unloaded" (or "loaded more").
 */
#include "tools/lib/ab.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/coll.h"
#include "tools/lib/hist.h"

const char *gt_ab_state_name(int s)
{
    static const char *const n[] = {"n/a", "same", "within noise", "up", "down"};
    return s >= 0 && s <= GT_AB_DOWN ? n[s] : "?";
}

const char *gt_ab_group_name(int g)
{
    static const char *const n[] = {"application SLO", "NCCL/RDMA evidence", "host pressure"};
    return g >= 0 && g < GT_AB_GROUPS ? n[g] : "?";
}

static struct gt_ab_row *add(struct gt_ab *ab, int group, const char *name, double va, double vb)
{
    if (ab->nrow >= GT_AB_ROWS)
        return NULL;
    struct gt_ab_row *r = &ab->row[ab->nrow++];
    memset(r, 0, sizeof(*r));
    r->group = group;
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->va = va;
    r->vb = vb;
    return r;
}

static void setf(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void setf(char *dst, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, n, fmt, ap);
    va_end(ap);
}

/* state from the values and the noise band (>= 0) */
static int judge(double a, double b, double band)
{
    if (isnan(a) || isnan(b))
        return GT_AB_NA;
    if (a == b)
        return GT_AB_SAME;
    if (fabs(b - a) <= band)
        return GT_AB_NOISE;
    return b > a ? GT_AB_UP : GT_AB_DOWN;
}

static void rel_text(const struct gt_ab_row *r, char *out, size_t n)
{
    if (isnan(r->va) || isnan(r->vb))
        setf(out, n, "-");
    else if (r->va == 0)
        setf(out, n, "%s", r->vb == 0 ? "+0 %" : "new");
    else
        setf(out, n, "%+.1f %%", 100 * (r->vb - r->va) / r->va);
}

/* ---- N1: a quantile's distribution-free interval ----------------------- */

static void q_interval(const struct gtr_hist *h, double q, double *lo, double *hi)
{
    double n = (double)h->count;
    double d = 3 * sqrt(q * (1 - q) / n);
    double ql = q - d < 0 ? 0 : q - d, qh = q + d > 1 ? 1 : q + d;
    *lo = (double)gt_hist_quantile(h, ql) * (1 - 1.0 / GTR_HIST_SUB);
    *hi = (double)(qh >= 1 ? h->max_ns : gt_hist_quantile(h, qh)) * (1 + 1.0 / GTR_HIST_SUB);
}

static void latency_row(struct gt_ab *ab, int group, const char *name, const struct gtr_hist *ha,
                        const struct gtr_hist *hb, double q)
{
    if (!ha->count && !hb->count)
        return;
    double a = ha->count ? (double)gt_hist_quantile(ha, q) : NAN;
    double b = hb->count ? (double)gt_hist_quantile(hb, q) : NAN;
    struct gt_ab_row *r = add(ab, group, name, a, b);
    if (!r)
        return;
    char x[24];
    setf(r->a, sizeof(r->a), "%s", ha->count ? gt_fmt_ns((uint64_t)a, x, sizeof(x)) : "-");
    setf(r->b, sizeof(r->b), "%s", hb->count ? gt_fmt_ns((uint64_t)b, x, sizeof(x)) : "-");
    rel_text(r, r->delta, sizeof(r->delta));
    if (!ha->count || !hb->count) {
        r->state = GT_AB_NA;
        return;
    }
    double alo, ahi, blo, bhi;
    q_interval(ha, q, &alo, &ahi);
    q_interval(hb, q, &blo, &bhi);
    if (a == b)
        r->state = GT_AB_SAME;
    else if (blo <= ahi && alo <= bhi)
        r->state = GT_AB_NOISE;
    else
        r->state = b > a ? GT_AB_UP : GT_AB_DOWN;
}

/* ---- N2, N3 ------------------------------------------------------------ */

#define CPU_REL 0.40
#define CPU_TICKS_S 0.02
#define MEM_REL 0.05
#define MEM_FLOOR (1u << 20)
#define SHARE_POINTS 5.0   /* N4: the method mix */
#define THREAD_POINTS 25.0 /* N2: the data-path threads' share of CPU */

static double maxd(double a, double b)
{
    return a > b ? a : b;
}

/* 3 standard errors of the difference of two per-process means */
static double spread_band(const struct gt_spread *a, const struct gt_spread *b)
{
    if (a->n < 2 || b->n < 2)
        return 0;
    double sa = gt_spread_sd(a), sb = gt_spread_sd(b);
    return 3 * sqrt(sa * sa / a->n + sb * sb / b->n);
}

static double nproc_max(const struct gt_ab *ab)
{
    return (double)(ab->host[0].nproc > ab->host[1].nproc ? ab->host[0].nproc : ab->host[1].nproc);
}

static struct gt_ab_row *cpu_row(struct gt_ab *ab, const char *name, double a, double b,
                                 double floor_abs, double spread, const char *fmt)
{
    struct gt_ab_row *r = add(ab, GT_AB_HOST, name, a, b);
    if (!r)
        return NULL;
    setf(r->a, sizeof(r->a), isnan(a) ? "-" : fmt, a);
    setf(r->b, sizeof(r->b), isnan(b) ? "-" : fmt, b);
    rel_text(r, r->delta, sizeof(r->delta));
    r->state = judge(a, b, maxd(maxd(CPU_REL * maxd(fabs(a), fabs(b)), floor_abs), spread));
    return r;
}

static struct gt_ab_row *mem_row(struct gt_ab *ab, const char *name, uint64_t a, uint64_t b,
                                 int have)
{
    struct gt_ab_row *r = add(ab, GT_AB_HOST, name, have ? (double)a : NAN, have ? (double)b : NAN);
    if (!r)
        return NULL;
    char x[32];
    setf(r->a, sizeof(r->a), "%s", have ? gt_fmt_bytes(a, x, sizeof(x)) : "-");
    setf(r->b, sizeof(r->b), "%s", have ? gt_fmt_bytes(b, x, sizeof(x)) : "-");
    rel_text(r, r->delta, sizeof(r->delta));
    double band = maxd(MEM_REL * maxd((double)a, (double)b), MEM_FLOOR * nproc_max(ab));
    r->state = have ? judge((double)a, (double)b, band) : GT_AB_NA;
    return r;
}

/* ---- the groups -------------------------------------------------------- */

static uint64_t did(const struct gtr_comm *c, int m)
{
    uint64_t t = 0;
    for (int a = 0; a < GTR_ASKED_COUNT; a++)
        t += c->reg_count[a][m];
    return t;
}

/* ---- application SLO (NCCL's profiler interface, format 1.6) ------------ */

static void slo_add_comm(struct gt_ab_slo *s, const struct gt_coll_mcomm *c)
{
    if (c->netinit_max_ns > s->init_ns)
        s->init_ns = c->netinit_max_ns;
    for (size_t k = 0; k < c->ncell; k++) {
        const struct gt_coll_mcell *x = &c->cells[k];
        if (x->func >= GTR_COLL_FUNC_COUNT || !x->hist.count)
            continue;
        struct gt_ab_slo_fn *f = &s->fn[x->func];
        if (!f->present)
            gt_hist_init(&f->h);
        f->present = 1;
        gt_hist_merge(&f->h, &x->hist);
        if (x->count > x->unsized) {
            f->timed_bytes +=
                (double)x->bytes / (double)(x->count - x->unsized) * (double)x->hist.count;
            f->timed_ns += (double)x->hist.sum_ns;
        }
        s->recorded = 1;
    }
}

void gt_ab_slo_of(const struct gt_job *j, uint64_t comm_id, struct gt_ab_slo *s)
{
    memset(s, 0, sizeof(*s));
    s->init_ns = -1;
    const struct gt_coll_model *m = j->coll;
    if (!m) {
        setf(s->why, sizeof(s->why),
             "no collective-level records (job init time, per-collective p50/p95/p99, "
             "throughput): the recorders predate NCCL's profiler interface (format < 1.6)");
        return;
    }
    for (size_t i = 0; i < m->ncomm; i++)
        if (comm_id == UINT64_MAX || (m->comms[i].has_id && m->comms[i].comm_id == comm_id))
            slo_add_comm(s, &m->comms[i]);
    if (!s->recorded) {
        if (m->nabsent)
            setf(s->why, sizeof(s->why), "no collective recorded: %s", m->absent[0].why);
        else
            setf(s->why, sizeof(s->why), "no collective recorded by NCCL's profiler interface");
    }
}

double gt_ab_slo_gbs(const struct gt_ab_slo_fn *f)
{
    /* NaN: nothing timed, or no size known (P2p without a datatype) */
    return f->timed_ns > 0 && f->timed_bytes > 0 ? f->timed_bytes / f->timed_ns : NAN; /* GB/s */
}

/* relative half-width of the quantile interval of h at q (N1), for the
 * throughput's noise band */
static double q_rel_width(const struct gtr_hist *h, double q)
{
    double lo, hi, v = (double)gt_hist_quantile(h, q);
    if (!h->count || v <= 0)
        return 0;
    q_interval(h, q, &lo, &hi);
    return (hi - lo) / 2 / v;
}

static void slo_group(struct gt_ab *ab, const struct gt_job *ja, const struct gt_job *jb)
{
    struct gt_ab_slo *s = calloc(2, sizeof(*s));
    ab->slo = GT_AB_NA;
    if (!s) {
        setf(ab->slo_why, sizeof(ab->slo_why), "out of memory");
        return;
    }
    gt_ab_slo_of(ja, UINT64_MAX, &s[0]);
    gt_ab_slo_of(jb, UINT64_MAX, &s[1]);
    if (!s[0].recorded || !s[1].recorded) {
        if (!s[0].recorded && !s[1].recorded)
            setf(ab->slo_why, sizeof(ab->slo_why), "%s", s[0].why);
        else
            setf(ab->slo_why, sizeof(ab->slo_why), "recorded in %s only; %s: %s",
                 s[0].recorded ? "A" : "B", s[0].recorded ? "B" : "A",
                 s[0].recorded ? s[1].why : s[0].why);
        struct gt_ab_row *r = add(ab, GT_AB_SLO, "application SLO", NAN, NAN);
        if (r) {
            setf(r->a, sizeof(r->a), "%s", s[0].recorded ? "recorded" : "not recorded");
            setf(r->b, sizeof(r->b), "%s", s[1].recorded ? "recorded" : "not recorded");
            setf(r->delta, sizeof(r->delta), "-");
            r->state = GT_AB_NA;
        }
        free(s);
        return;
    }
    int up = 0, down = 0, any = 0; /* worse, better, compared */
    if (s[0].init_ns >= 0 && s[1].init_ns >= 0) {
        char x[24];
        struct gt_ab_row *r = add(ab, GT_AB_SLO, "init (net init -> profiler)",
                                  (double)s[0].init_ns, (double)s[1].init_ns);
        if (r) {
            setf(r->a, sizeof(r->a), "%s", gt_fmt_ns((uint64_t)s[0].init_ns, x, sizeof(x)));
            setf(r->b, sizeof(r->b), "%s", gt_fmt_ns((uint64_t)s[1].init_ns, x, sizeof(x)));
            rel_text(r, r->delta, sizeof(r->delta));
            /* one duration a side: N2's timing band */
            r->state = judge(r->va, r->vb, CPU_REL * maxd(r->va, r->vb));
            up += r->state == GT_AB_UP;
            down += r->state == GT_AB_DOWN;
            any++;
        }
    }
    static const double qs[] = {0.5, 0.95, 0.99};
    static const char *const qn[] = {"p50", "p95", "p99"};
    for (int f = 0; f < GTR_COLL_FUNC_COUNT; f++) {
        const struct gt_ab_slo_fn *a = &s[0].fn[f], *b = &s[1].fn[f];
        if (!a->present && !b->present)
            continue;
        char name[48];
        for (int q = 0; q < 3; q++) {
            struct gtr_hist empty;
            gt_hist_init(&empty);
            snprintf(name, sizeof(name), "%s %s", gt_coll_func_name(f), qn[q]);
            latency_row(ab, GT_AB_SLO, name, a->present ? &a->h : &empty,
                        b->present ? &b->h : &empty, qs[q]);
            const struct gt_ab_row *r = &ab->row[ab->nrow - 1];
            if (ab->nrow && !strcmp(r->name, name) && r->state != GT_AB_NA) {
                up += r->state == GT_AB_UP; /* longer: worse */
                down += r->state == GT_AB_DOWN;
                any++;
            }
        }
        double ga = a->present ? gt_ab_slo_gbs(a) : NAN, gb = b->present ? gt_ab_slo_gbs(b) : NAN;
        snprintf(name, sizeof(name), "%s algbw (GB/s)", gt_coll_func_name(f));
        struct gt_ab_row *r = add(ab, GT_AB_SLO, name, ga, gb);
        if (!r)
            break;
        setf(r->a, sizeof(r->a), isnan(ga) ? "-" : "%.3g", ga);
        setf(r->b, sizeof(r->b), isnan(gb) ? "-" : "%.3g", gb);
        rel_text(r, r->delta, sizeof(r->delta));
        /* throughput comes from the same durations: its band is the median's */
        double band = maxd(0.05, maxd(a->present ? q_rel_width(&a->h, 0.5) : 0,
                                      b->present ? q_rel_width(&b->h, 0.5) : 0));
        r->state = judge(ga, gb, band * maxd(fabs(ga), fabs(gb)));
        if (r->state == GT_AB_UP || r->state == GT_AB_DOWN) {
            down += r->state == GT_AB_UP; /* more throughput: better */
            up += r->state == GT_AB_DOWN;
        }
        any += r->state != GT_AB_NA;
    }
    /* the SLO's direction: GT_AB_UP = regressed (a latency longer or a
     * throughput lower beyond noise), GT_AB_DOWN = improved, both: mixed
     * counts as regressed (a runbook never sells a trade-off as faster) */
    ab->slo = !any ? GT_AB_NA : up ? GT_AB_UP : down ? GT_AB_DOWN : GT_AB_NOISE;
    if (!any)
        setf(ab->slo_why, sizeof(ab->slo_why), "no function timed on both sides");
    free(s);
}

static void evidence_group(struct gt_ab *ab, const struct gt_job *ja, const struct gtr_comm *ta,
                           const struct gt_job *jb, const struct gtr_comm *tb)
{
    struct gt_ab_row *r = add(ab, GT_AB_EVIDENCE, "verdict", ja->overall.code, jb->overall.code);
    if (r) {
        setf(r->a, sizeof(r->a), "%s%s", gt_verdict_name(ja->overall.code),
             ja->overall.emulated ? " (emul.)" : "");
        setf(r->b, sizeof(r->b), "%s%s", gt_verdict_name(jb->overall.code),
             jb->overall.emulated ? " (emul.)" : "");
        int same =
            ja->overall.code == jb->overall.code && ja->overall.emulated == jb->overall.emulated;
        setf(r->delta, sizeof(r->delta), "%s", same ? "=" : "changed");
        r->state = same ? GT_AB_SAME : GT_AB_UP;
        if (!same)
            ab->mechanism = 1;
    }
    uint64_t na = gt_comm_regs(ta), nb = gt_comm_regs(tb);
    static const char *const mname[GTR_METHOD_COUNT] = {
        "registrations by DMA-BUF", "registrations by peermem", "registrations of host memory",
        "registrations failed"};
    for (int m = 0; m < GTR_METHOD_COUNT; m++) {
        double a = na ? 100.0 * (double)did(ta, m) / (double)na : NAN;
        double b = nb ? 100.0 * (double)did(tb, m) / (double)nb : NAN;
        if ((isnan(a) || a == 0) && (isnan(b) || b == 0))
            continue;
        r = add(ab, GT_AB_EVIDENCE, mname[m], a, b);
        if (!r)
            break;
        setf(r->a, sizeof(r->a), isnan(a) ? "-" : "%.1f %%", a);
        setf(r->b, sizeof(r->b), isnan(b) ? "-" : "%.1f %%", b);
        if (!isnan(a) && !isnan(b))
            setf(r->delta, sizeof(r->delta), "%+.1f pt", b - a);
        else
            setf(r->delta, sizeof(r->delta), "-");
        r->state = judge(a, b, SHARE_POINTS); /* N4 */
        if (r->state == GT_AB_UP || r->state == GT_AB_DOWN)
            ab->mechanism = 1;
    }
    uint64_t cnt[2][2] = {{ta->fallback_count, tb->fallback_count},
                          {ta->error_count, tb->error_count}};
    for (int k = 0; k < 2; k++) {
        if (!cnt[k][0] && !cnt[k][1])
            continue;
        r = add(ab, GT_AB_EVIDENCE, k ? "errors" : "fallbacks", (double)cnt[k][0],
                (double)cnt[k][1]);
        if (!r)
            break;
        setf(r->a, sizeof(r->a), "%llu", (unsigned long long)cnt[k][0]);
        setf(r->b, sizeof(r->b), "%llu", (unsigned long long)cnt[k][1]);
        setf(r->delta, sizeof(r->delta), "%+lld", (long long)cnt[k][1] - (long long)cnt[k][0]);
        r->state = cnt[k][0] == cnt[k][1]  ? GT_AB_SAME
                   : cnt[k][1] > cnt[k][0] ? GT_AB_UP
                                           : GT_AB_DOWN;
    }
    static const struct {
        int op;
        double q;
        const char *name;
    } lat[] = {{GTR_OP_SEND, 0.5, "send p50"},  {GTR_OP_SEND, 0.95, "send p95"},
               {GTR_OP_SEND, 0.99, "send p99"}, {GTR_OP_RECV, 0.5, "recv p50"},
               {GTR_OP_RECV, 0.95, "recv p95"}, {GTR_OP_RECV, 0.99, "recv p99"},
               {GTR_OP_REG, 0.5, "reg p50"}};
    for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++)
        latency_row(ab, GT_AB_EVIDENCE, lat[i].name, &ta->hist[lat[i].op], &tb->hist[lat[i].op],
                    lat[i].q);
}

static void host_group(struct gt_ab *ab)
{
    const struct gt_hostp *a = &ab->host[0], *b = &ab->host[1];
    int have = a->nproc && b->nproc;
    if (!a->nproc && !b->nproc) {
        struct gt_ab_row *r = add(ab, GT_AB_HOST, "host pressure", NAN, NAN);
        if (r) {
            setf(r->a, sizeof(r->a), "not recorded");
            setf(r->b, sizeof(r->b), "not recorded");
            setf(r->delta, sizeof(r->delta), "-");
        }
        ab->hp = ab->mem = GT_AB_NA;
        return;
    }
    double np = nproc_max(ab);
    double cpu_a = a->nproc ? a->cpu_s : NAN, cpu_b = b->nproc ? b->cpu_s : NAN;
    cpu_row(ab, "process CPU, traced (s)", cpu_a, cpu_b, CPU_TICKS_S * np, 0, "%.2f");
    if (a->nhelper || b->nhelper) /* the copier's CPU is in CPU per GB: say how much */
        cpu_row(ab, "copier process CPU (s)", a->nproc ? a->helper_s : NAN,
                b->nproc ? b->helper_s : NAN, CPU_TICKS_S * np, 0, "%.2f");
    double ga = gt_hostp_cpu_per_gb(a), gb = gt_hostp_cpu_per_gb(b);
    double gbytes = (double)(a->bytes < b->bytes ? a->bytes : b->bytes) / 1e9;
    struct gt_ab_row *r = cpu_row(ab, "CPU s per GB moved", ga < 0 ? NAN : ga, gb < 0 ? NAN : gb,
                                  gbytes > 0 ? CPU_TICKS_S * np / gbytes : 0,
                                  spread_band(&a->per_gb, &b->per_gb), "%.3f");
    ab->hp = r ? r->state : GT_AB_NA;
    ab->hp_rel = r && !isnan(r->va) && !isnan(r->vb) && r->va > 0 ? (r->vb - r->va) / r->va : 0;
    double sa = gt_hostp_share(a), sb = gt_hostp_share(b);
    r = add(ab, GT_AB_HOST, "data-path thread CPU share", sa < 0 ? NAN : 100 * sa,
            sb < 0 ? NAN : 100 * sb);
    if (r) {
        setf(r->a, sizeof(r->a), isnan(r->va) ? "-" : "%.1f %%", r->va);
        setf(r->b, sizeof(r->b), isnan(r->vb) ? "-" : "%.1f %%", r->vb);
        if (!isnan(r->va) && !isnan(r->vb))
            setf(r->delta, sizeof(r->delta), "%+.1f pt", r->vb - r->va);
        else
            setf(r->delta, sizeof(r->delta), "-");
        r->state =
            judge(r->va, r->vb, maxd(THREAD_POINTS, 100 * spread_band(&a->share, &b->share)));
    }
    r = mem_row(ab, "host memory in the data path", a->staging_hwm, b->staging_hwm, have);
    ab->mem = r ? r->state : GT_AB_NA;
    ab->mem_rel = r && have && r->va > 0 ? (r->vb - r->va) / r->va : 0;
    mem_row(ab, "resident high-water", a->rss_hwm, b->rss_hwm, have);
    mem_row(ab, "locked high-water", a->locked_hwm, b->locked_hwm, have);
    mem_row(ab, "pinned high-water", a->pinned_hwm, b->pinned_hwm, have);
}

static int moved(int s)
{
    return s == GT_AB_UP || s == GT_AB_DOWN;
}

static void pct(char *out, size_t n, double rel)
{
    setf(out, n, "%+.0f %%", 100 * rel);
}

static void conclude(struct gt_ab *ab)
{
    char *c = ab->conclusion;
    size_t n = sizeof(ab->conclusion);
    if (ab->ndiffs) {
        setf(c, n,
             "not comparable: A and B differ in more than the registration path (%d "
             "difference(s)); no conclusion about the registration path",
             ab->ndiffs);
        return;
    }
    int hp = moved(ab->hp), mem = moved(ab->mem), slo = moved(ab->slo);
    if (!ab->mechanism && !hp && !mem && !slo) {
        setf(c, n, "no difference (within noise)");
        return;
    }
    char hp_text[128], x[24], y[24];
    if (hp && mem) {
        pct(x, sizeof(x), ab->hp_rel);
        pct(y, sizeof(y), ab->mem_rel);
        setf(hp_text, sizeof(hp_text), "host pressure %s (host memory in the data path %s)", x, y);
    } else if (hp) {
        pct(x, sizeof(x), ab->hp_rel);
        setf(hp_text, sizeof(hp_text), "host pressure %s", x);
    } else if (mem) {
        pct(y, sizeof(y), ab->mem_rel);
        setf(hp_text, sizeof(hp_text), "host CPU within noise, host memory in the data path %s", y);
    } else if (ab->hp == GT_AB_NA && ab->mem == GT_AB_NA) {
        setf(hp_text, sizeof(hp_text), "host pressure not recorded");
    } else {
        setf(hp_text, sizeof(hp_text), "host pressure within noise");
    }
    /* which way the host went: CPU per GB first, host memory when CPU held */
    int down = hp ? ab->hp == GT_AB_DOWN : mem ? ab->mem == GT_AB_DOWN : 0;
    int up = hp ? ab->hp == GT_AB_UP : mem ? ab->mem == GT_AB_UP : 0;
    const char *slo_text = ab->slo == GT_AB_NA     ? "application SLO not recorded"
                           : ab->slo == GT_AB_DOWN ? "application SLO improved"
                           : ab->slo == GT_AB_UP   ? "application SLO regressed"
                                                   : "application SLO unchanged";
    const char *judgement;
    int host_na = ab->hp == GT_AB_NA && ab->mem == GT_AB_NA;
    if (host_na && !slo)
        judgement = ab->slo == GT_AB_NA ? "the effect on host and application is unknown"
                                        : "no application effect; the host effect is unknown";
    else if (slo && ab->slo == GT_AB_DOWN)
        judgement = ab->mechanism ? "faster" : "faster, but not by the registration path";
    else if (slo)
        judgement = ab->mechanism ? "slower" : "slower, but not by the registration path";
    else if (ab->slo == GT_AB_NA)
        judgement = down ? "host path unloaded; the application effect is unknown"
                    : up ? "host path loaded more; the application effect is unknown"
                         : "no host effect; the application effect is unknown";
    else
        judgement = down ? "host path unloaded, no application effect"
                    : up ? "host path loaded more, no application effect"
                         : "no host or application effect";
    setf(c, n, "mechanism %s, %s, %s: %s%s", ab->mechanism ? "changed" : "unchanged", hp_text,
         slo_text, judgement,
         !ab->mechanism && (hp || mem) ? " (not caused by the registration path: look for another "
                                         "cause)"
                                       : "");
}

void gt_ab_build(struct gt_ab *ab, const struct gt_job *a, const struct gtr_comm *ta,
                 const struct gt_job *b, const struct gtr_comm *tb, int ndiffs)
{
    memset(ab, 0, sizeof(*ab));
    ab->ndiffs = ndiffs;
    gt_hostp_of_job(a, &ab->host[0]);
    gt_hostp_of_job(b, &ab->host[1]);
    slo_group(ab, a, b);
    evidence_group(ab, a, ta, b, tb);
    host_group(ab);
    conclude(ab);
}
