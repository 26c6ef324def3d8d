/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ab.c — the A/B over runs (ab.h gives the roles, the rules and the
 * conclusion's order).  Invariants: every decision comes from the per-run
 * values of a row (abstat.c), the EFFECT rows of one diff form one Holm
 * family at GT_AB_ALPHA, and the conclusion reads only those decisions and
 * the mechanism rows, so it can never contradict a printed row; "faster"
 * or "slower" only when an SLO row moved, host rows alone are "host path
 * unloaded" (or "loaded more").
 */
#include "tools/lib/ab.h"

#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/abstat.h"
#include "tools/lib/coll.h"
#include "tools/lib/hist.h"

const char *gt_ab_state_name(int s)
{
    static const char *const n[] = {"n/a",  "same",          "within noise", "up",
                                    "down", "noise unknown", "not evidence"};
    return s >= 0 && s <= GT_AB_NOTEVID ? n[s] : "?";
}

const char *gt_ab_group_name(int g)
{
    static const char *const n[] = {"application SLO", "NCCL/RDMA evidence", "host pressure"};
    return g >= 0 && g < GT_AB_GROUPS ? n[g] : "?";
}

const char *gt_ab_role_name(int r)
{
    static const char *const n[] = {"effect", "mechanism", "info", "waits on the peer"};
    return r >= 0 && r <= GT_AB_PEER ? n[r] : "?";
}

static void setf(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void setf(char *dst, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, n, fmt, ap);
    va_end(ap);
}

/* ---- one run's figures ------------------------------------------------- */

static struct gt_ab_val *put(struct gt_ab_run *r, int group, int role, int fmt, int better,
                             const char *name, double v, double floor)
{
    if (r->nval >= GT_AB_ROWS)
        return NULL;
    struct gt_ab_val *x = &r->val[r->nval++];
    memset(x, 0, sizeof(*x));
    x->group = group;
    x->role = role;
    x->fmt = fmt;
    x->better = better;
    x->v = v;
    x->floor = floor;
    setf(x->name, sizeof(x->name), "%s", name);
    return x;
}

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

static double qv(const struct gtr_hist *h, double q)
{
    return h->count ? (double)gt_hist_quantile(h, q) : NAN;
}

static void slo_vals(struct gt_ab_run *r, const struct gt_job *j)
{
    struct gt_ab_slo *s = malloc(sizeof(*s));
    if (!s) {
        setf(r->slo_why, sizeof(r->slo_why), "out of memory");
        return;
    }
    gt_ab_slo_of(j, UINT64_MAX, s);
    r->slo_recorded = s->recorded;
    setf(r->slo_why, sizeof(r->slo_why), "%s", s->why);
    if (s->recorded) {
        if (s->init_ns >= 0)
            put(r, GT_AB_SLO, GT_AB_EFFECT, GT_AB_F_NS, -1, "init (net init -> profiler)",
                (double)s->init_ns, 0);
        static const double qs[] = {0.5, 0.95, 0.99};
        static const char *const qn[] = {"p50", "p95", "p99"};
        for (int f = 0; f < GTR_COLL_FUNC_COUNT; f++) {
            const struct gt_ab_slo_fn *x = &s->fn[f];
            if (!x->present)
                continue;
            char name[48];
            for (int q = 0; q < 3; q++) {
                snprintf(name, sizeof(name), "%s %s", gt_coll_func_name(f), qn[q]);
                put(r, GT_AB_SLO, GT_AB_EFFECT, GT_AB_F_NS, -1, name, qv(&x->h, qs[q]), 0);
            }
            snprintf(name, sizeof(name), "%s algbw (GB/s)", gt_coll_func_name(f));
            put(r, GT_AB_SLO, GT_AB_EFFECT, GT_AB_F_G3, +1, name, gt_ab_slo_gbs(x), 0);
        }
    }
    free(s);
}

static uint64_t did(const struct gtr_comm *c, int m)
{
    uint64_t t = 0;
    for (int a = 0; a < GTR_ASKED_COUNT; a++)
        t += c->reg_count[a][m];
    return t;
}

#define TICKS_S 0.02        /* CPU accounting: 2 clock ticks a process */
#define MEM_FLOOR 1048576.0 /* 1 MiB a process */

static void evidence_vals(struct gt_ab_run *r, const struct gt_job *j, const struct gtr_comm *t)
{
    struct gt_ab_val *x = put(r, GT_AB_EVIDENCE, GT_AB_MECH, GT_AB_F_TEXT, 0, "verdict",
                              j->overall.code * 2 + (j->overall.emulated ? 1 : 0), 0);
    if (x)
        setf(x->text, sizeof(x->text), "%s%s", gt_verdict_name(j->overall.code),
             j->overall.emulated ? " (emul.)" : "");
    uint64_t n = gt_comm_regs(t);
    static const char *const mname[GTR_METHOD_COUNT] = {
        "registrations by DMA-BUF", "registrations by peermem", "registrations of host memory",
        "registrations failed"};
    /* every method, 0 % too, so that the rows keep one order whichever side
     * used which; rows 0 in every run are left out (add_row) */
    for (int m = 0; m < GTR_METHOD_COUNT && n; m++)
        put(r, GT_AB_EVIDENCE, GT_AB_MECH, GT_AB_F_PCT, 0, mname[m],
            100.0 * (double)did(t, m) / (double)n, 0);
    put(r, GT_AB_EVIDENCE, GT_AB_INFO, GT_AB_F_COUNT, -1, "fallbacks", (double)t->fallback_count,
        0);
    put(r, GT_AB_EVIDENCE, GT_AB_INFO, GT_AB_F_COUNT, -1, "errors", (double)t->error_count, 0);
    static const struct {
        int op;
        double q;
        const char *name;
        int role;
    } lat[] = {
        {GTR_OP_SEND, 0.5, "send p50", GT_AB_PEER},  {GTR_OP_SEND, 0.95, "send p95", GT_AB_PEER},
        {GTR_OP_SEND, 0.99, "send p99", GT_AB_PEER}, {GTR_OP_RECV, 0.5, "recv p50", GT_AB_PEER},
        {GTR_OP_RECV, 0.95, "recv p95", GT_AB_PEER}, {GTR_OP_RECV, 0.99, "recv p99", GT_AB_PEER},
        {GTR_OP_REG, 0.5, "reg p50", GT_AB_INFO}};
    for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++)
        if (t->hist[lat[i].op].count)
            put(r, GT_AB_EVIDENCE, lat[i].role, GT_AB_F_NS, -1, lat[i].name,
                qv(&t->hist[lat[i].op], lat[i].q), 0);
}

/* Seconds of the data path, summed over processes: from the first call of
 * the first thread that drove it (a data-path thread is claimed at its first
 * isend, irecv or test) to the process's last sample. */
static double data_window_s(const struct gt_job *j)
{
    double t = 0;
    for (size_t i = 0; i < j->nrec; i++) {
        const struct gtr_host *x = j->recs[i].host;
        if (!x)
            continue;
        int64_t first = INT64_MAX;
        for (uint32_t k = 0; k < x->nthreads && k < GTR_HOST_THREADS; k++)
            if (x->threads[k].tid && x->threads[k].first_mono_ns < first)
                first = x->threads[k].first_mono_ns;
        if (first != INT64_MAX && x->last_mono_ns > first)
            t += (double)(x->last_mono_ns - first) / 1e9;
    }
    return t;
}

static void host_vals(struct gt_ab_run *r, const struct gt_job *j)
{
    const struct gt_hostp *h = &r->host;
    if (!h->nproc)
        return;
    double np = (double)h->nproc;
    r->cpu_s = h->cpu_s;
    r->helper_s = h->helper_s;
    /* the application's pace: bytes moved per second of its data path
     * (the same work on both sides: higher is faster) */
    double dw = data_window_s(j);
    if (dw > 0 && h->bytes)
        put(r, GT_AB_SLO, GT_AB_EFFECT, GT_AB_F_G3, +1, GT_AB_PACE, (double)h->bytes / dw / 1e6, 0);
    put(r, GT_AB_HOST, GT_AB_EFFECT, GT_AB_F_S2, -1, "process CPU, traced (s)", h->cpu_s,
        TICKS_S * np);
    /* 0 without a copier; a row only when some run had one (add_row) */
    put(r, GT_AB_HOST, GT_AB_EFFECT, GT_AB_F_S2, -1, "copier process CPU (s)",
        h->nhelper ? h->helper_s : 0, TICKS_S * np);
    double g = gt_hostp_cpu_per_gb(h), gb = (double)h->bytes / 1e9;
    if (g >= 0)
        put(r, GT_AB_HOST, GT_AB_EFFECT, GT_AB_F_S3, -1, "CPU s per GB moved", g,
            gb > 0 ? TICKS_S * np / gb : 0);
    double s = gt_hostp_share(h);
    if (s >= 0)
        put(r, GT_AB_HOST, GT_AB_INFO, GT_AB_F_PCT, 0, "data-path thread CPU share", 100 * s, 0);
    put(r, GT_AB_HOST, GT_AB_EFFECT, GT_AB_F_BYTES, -1, "host memory in the data path",
        (double)h->staging_hwm, MEM_FLOOR * np);
    put(r, GT_AB_HOST, GT_AB_EFFECT, GT_AB_F_BYTES, -1, "resident high-water", (double)h->rss_hwm,
        MEM_FLOOR * np);
    put(r, GT_AB_HOST, GT_AB_EFFECT, GT_AB_F_BYTES, -1, "locked high-water", (double)h->locked_hwm,
        MEM_FLOOR * np);
    put(r, GT_AB_HOST, GT_AB_EFFECT, GT_AB_F_BYTES, -1, "pinned high-water", (double)h->pinned_hwm,
        MEM_FLOOR * np);
}

void gt_ab_run_of(const struct gt_job *j, struct gt_ab_run *r)
{
    memset(r, 0, sizeof(*r));
    r->emulated = j->overall.emulated;
    struct gtr_comm *t = malloc(sizeof(*t));
    gt_hostp_of_job(j, &r->host);
    slo_vals(r, j);
    host_vals(r, j); /* its SLO row first: the groups are printed in order anyway */
    if (t) {
        gt_comm_clear(t);
        for (size_t i = 0; i < j->ncomm; i++)
            gt_comm_accumulate(t, j->comms[i].sum);
        evidence_vals(r, j, t);
        free(t);
    }
}

/* ---- the rows ---------------------------------------------------------- */

static void fmt_val(int fmt, double v, const char *text, char *out, size_t n)
{
    char x[32];
    if (isnan(v)) {
        setf(out, n, "-");
        return;
    }
    switch (fmt) {
    case GT_AB_F_NS:
        setf(out, n, "%s", gt_fmt_ns((uint64_t)(v + 0.5), x, sizeof(x)));
        break;
    case GT_AB_F_S2:
        setf(out, n, "%.2f", v);
        break;
    case GT_AB_F_S3:
        setf(out, n, "%.3f", v);
        break;
    case GT_AB_F_PCT:
        setf(out, n, "%.1f %%", v);
        break;
    case GT_AB_F_BYTES:
        setf(out, n, "%s", gt_fmt_bytes((uint64_t)(v + 0.5), x, sizeof(x)));
        break;
    case GT_AB_F_COUNT:
        setf(out, n, "%.4g", v);
        break;
    case GT_AB_F_TEXT:
        setf(out, n, "%s", text ? text : "?");
        break;
    default:
        setf(out, n, "%.3g", v);
    }
}

/* the verdict row: the label when every run of a side agrees, else "varies" */
static void verdict_row(struct gt_ab_row *row, const struct gt_ab_run *const *runs[2],
                        const int k[2], int vi[2][GT_AB_MAXRUNS])
{
    const char *lab[2] = {NULL, NULL};
    int code[2] = {-1, -1}, varies[2] = {0, 0};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < k[s]; i++) {
            if (vi[s][i] < 0)
                continue;
            const struct gt_ab_val *x = &runs[s][i]->val[vi[s][i]];
            if (!lab[s]) {
                lab[s] = x->text;
                code[s] = (int)x->v;
            } else if ((int)x->v != code[s])
                varies[s] = 1;
        }
    for (int s = 0; s < 2; s++)
        setf(s ? row->b : row->a, sizeof(row->a), "%s",
             !lab[s]     ? "-"
             : varies[s] ? "varies"
                         : lab[s]);
    int same = lab[0] && lab[1] && !varies[0] && !varies[1] && code[0] == code[1];
    row->va = code[0];
    row->vb = code[1];
    setf(row->delta, sizeof(row->delta), "%s", same ? "=" : "changed");
    setf(row->ci, sizeof(row->ci), "-");
    row->state = !lab[0] || !lab[1] ? GT_AB_NA : same ? GT_AB_SAME : GT_AB_UP;
}

static void delta_text(struct gt_ab_row *r, const struct gt_abstat *st)
{
    if (isnan(r->va) || isnan(r->vb)) {
        setf(r->delta, sizeof(r->delta), "-");
        return;
    }
    if (r->fmt == GT_AB_F_PCT) {
        setf(r->delta, sizeof(r->delta), "%+.1f pt", r->vb - r->va);
        if (!isnan(r->lo))
            setf(r->ci, sizeof(r->ci), "[%+.1f, %+.1f] pt", r->lo, r->hi);
        return;
    }
    if (st->logscale) {
        setf(r->delta, sizeof(r->delta), "%+.1f %%", 100 * (exp(st->diff) - 1));
        if (!isnan(r->lo))
            setf(r->ci, sizeof(r->ci), "[%+.0f, %+.0f] %%", 100 * (exp(r->lo) - 1),
                 100 * (exp(r->hi) - 1));
        return;
    }
    if (r->va != 0)
        setf(r->delta, sizeof(r->delta), "%+.1f %%", 100 * (r->vb - r->va) / fabs(r->va));
    else
        setf(r->delta, sizeof(r->delta), "%s", r->vb == 0 ? "+0" : "new");
    if (!isnan(r->lo)) {
        char x[20], y[20];
        fmt_val(r->fmt == GT_AB_F_BYTES || r->fmt == GT_AB_F_NS ? GT_AB_F_G3 : r->fmt, r->lo, NULL,
                x, sizeof(x));
        fmt_val(r->fmt == GT_AB_F_BYTES || r->fmt == GT_AB_F_NS ? GT_AB_F_G3 : r->fmt, r->hi, NULL,
                y, sizeof(y));
        setf(r->ci, sizeof(r->ci), "[%s, %s]", x, y);
    }
}

/* index of `name` in run r, -1 when absent */
static int find(const struct gt_ab_run *r, const char *name)
{
    for (int i = 0; i < r->nval; i++)
        if (!strcmp(r->val[i].name, name))
            return i;
    return -1;
}

static void add_row(struct gt_ab *ab, const struct gt_ab_val *proto,
                    const struct gt_ab_run *const *runs[2], const int k[2], struct gt_abstat *st)
{
    if (ab->nrow >= GT_AB_ROWS)
        return;
    struct gt_ab_row *r = &ab->row[ab->nrow++];
    memset(r, 0, sizeof(*r));
    r->group = proto->group;
    r->role = proto->role;
    r->fmt = proto->fmt;
    r->better = proto->better;
    setf(r->name, sizeof(r->name), "%s", proto->name);
    r->p = r->level = r->diff = r->lo = r->hi = NAN;
    static int vi[2][GT_AB_MAXRUNS];
    double v[2][GT_AB_MAXRUNS], floor = 0;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < k[s]; i++) {
            vi[s][i] = find(runs[s][i], proto->name);
            v[s][i] = vi[s][i] < 0 ? NAN : runs[s][i]->val[vi[s][i]].v;
            if (vi[s][i] >= 0 && runs[s][i]->val[vi[s][i]].floor > floor)
                floor = runs[s][i]->val[vi[s][i]].floor;
        }
    if (r->fmt == GT_AB_F_TEXT) {
        verdict_row(r, runs, k, vi);
        return;
    }
    /* a method share absent from a run is 0 % of its registrations */
    if (r->role == GT_AB_MECH)
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < k[s]; i++)
                if (isnan(v[s][i]) && runs[s][i]->nval)
                    v[s][i] = 0;
    int lg = r->fmt != GT_AB_F_PCT && r->role != GT_AB_MECH;
    gt_abstat_compare(v[0], k[0], v[1], k[1], lg, st);
    if (st->equal && st->center[0] == 0 &&
        (r->role == GT_AB_MECH || r->fmt == GT_AB_F_COUNT || strstr(r->name, "copier"))) {
        ab->nrow--; /* none in any run: no row */
        return;
    }
    r->na = st->n[0];
    r->nb = st->n[1];
    r->va = st->center[0];
    r->vb = st->center[1];
    r->logscale = st->logscale;
    r->diff = st->diff;
    r->p = st->p;
    fmt_val(r->fmt, r->va, NULL, r->a, sizeof(r->a));
    fmt_val(r->fmt, r->vb, NULL, r->b, sizeof(r->b));
    setf(r->ci, sizeof(r->ci), "-");
    /* the floor in the compared unit is checked on the centers */
    r->below_floor = fabs(r->vb - r->va) <= floor;
    if (!r->na || !r->nb)
        r->state = GT_AB_NA;
    else if (st->equal)
        r->state = GT_AB_SAME;
    else if (r->role == GT_AB_MECH)
        r->state = fabs(r->vb - r->va) <= 5.0 ? GT_AB_NOISE : r->vb > r->va ? GT_AB_UP : GT_AB_DOWN;
    else if (isnan(r->p))
        r->state = GT_AB_UNKNOWN;
    else if (r->role != GT_AB_EFFECT)
        r->state = GT_AB_NOTEVID;
    else
        r->family = 1; /* decided by Holm over the family */
}

static int moved(int s)
{
    return s == GT_AB_UP || s == GT_AB_DOWN;
}

static void decide(struct gt_ab *ab, struct gt_abstat *st)
{
    double p[GT_AB_ROWS], miss[GT_AB_ROWS];
    int ix[GT_AB_ROWS], rej[GT_AB_ROWS], m = 0;
    for (int i = 0; i < ab->nrow; i++)
        if (ab->row[i].family) {
            ix[m] = i;
            p[m++] = ab->row[i].p;
        }
    ab->nfamily = m;
    gt_abstat_holm(p, m, ab->alpha, rej, miss);
    for (int q = 0; q < m; q++) {
        struct gt_ab_row *r = &ab->row[ix[q]];
        r->level = miss[q];
        if (!rej[q])
            r->state = GT_AB_NOISE;
        else if (r->below_floor)
            r->state = GT_AB_NOISE;
        else
            r->state = r->diff > 0 ? GT_AB_UP : GT_AB_DOWN;
        if (!rej[q] || !r->below_floor)
            r->below_floor = 0;
    }
    /* intervals: family rows at their Holm level, the others at alpha */
    for (int i = 0; i < ab->nrow; i++) {
        struct gt_ab_row *r = &ab->row[i];
        if (r->fmt == GT_AB_F_TEXT)
            continue;
        if (!r->family)
            r->level = isnan(r->p) ? NAN : ab->alpha;
        st[i].p = r->p;
        gt_abstat_interval(&st[i], r->level, &r->lo, &r->hi);
        delta_text(r, &st[i]);
    }
}

static void pct_of(char *out, size_t n, const struct gt_ab_row *r)
{
    setf(out, n, "%s %s", r->name, r->delta);
}

/* The SLO's direction and the host's, from the rows' decisions alone. */
static void directions(struct gt_ab *ab, char *host_text, size_t hn)
{
    int worse = 0, better = 0, any = 0, up = 0, down = 0, hany = 0;
    host_text[0] = 0;
    for (int i = 0; i < ab->nrow; i++) {
        const struct gt_ab_row *r = &ab->row[i];
        if (r->role != GT_AB_EFFECT || r->state == GT_AB_NA)
            continue;
        if (r->group == GT_AB_SLO) {
            any++;
            if (moved(r->state)) {
                int higher = r->state == GT_AB_UP;
                if ((higher && r->better < 0) || (!higher && r->better > 0))
                    worse++;
                else
                    better++;
            }
        } else if (r->group == GT_AB_HOST) {
            hany++;
            if (moved(r->state)) {
                up += r->state == GT_AB_UP; /* more CPU or memory: loaded more */
                down += r->state == GT_AB_DOWN;
                size_t l = strlen(host_text);
                char x[96];
                pct_of(x, sizeof(x), r);
                setf(host_text + l, hn - l, "%s%s", l ? ", " : "", x);
            }
        }
    }
    /* a trade-off is never sold as faster: any worse SLO row is regressed */
    ab->slo = !any ? GT_AB_NA : worse ? GT_AB_UP : better ? GT_AB_DOWN : GT_AB_NOISE;
    ab->host = !hany ? GT_AB_NA : up ? GT_AB_UP : down ? GT_AB_DOWN : GT_AB_NOISE;
}

static void conclude(struct gt_ab *ab)
{
    char *c = ab->conclusion;
    size_t n = sizeof(ab->conclusion);
    char host_text[320];
    directions(ab, host_text, sizeof(host_text));
    const char *mech = ab->mechanism ? "mechanism changed" : "mechanism unchanged";
    int effect = 0;
    for (int i = 0; i < ab->nrow; i++)
        effect += ab->row[i].family && moved(ab->row[i].state);
    int one = ab->k[0] < 2 || ab->k[1] < 2;
    if (ab->ndiffs) {
        setf(ab->rule, sizeof(ab->rule), "not-comparable");
        setf(c, n,
             "not comparable: A and B differ in more than the registration path (%d "
             "difference(s)); no conclusion about the registration path",
             ab->ndiffs);
        return;
    }
    if ((ab->emulated[0] || ab->emulated[1]) && (ab->mechanism || effect || one)) {
        char share[160] = "";
        for (int s = 0; s < 2; s++)
            if (!isnan(ab->copier_share[s])) {
                size_t l = strlen(share);
                setf(share + l, sizeof(share) - l, "%s%s %.0f %%", l ? ", " : "", s ? "B" : "A",
                     100 * ab->copier_share[s]);
            }
        setf(ab->rule, sizeof(ab->rule), "emulated");
        setf(c, n,
             "%s; the application and host-pressure effects are not measurable on an emulated "
             "NIC: %s moved GPU memory by CUDA copies%s, which a real NIC does not do%s%s%s",
             mech,
             ab->emulated[0] && ab->emulated[1] ? "both sides"
             : ab->emulated[0]                  ? "A"
                                                : "B",
             share[0] ? " and the copier process" : "",
             share[0] ? " (the copier's share of host CPU: " : "", share, share[0] ? ")" : "");
        return;
    }
    if (one) {
        setf(ab->rule, sizeof(ab->rule), "one-run");
        setf(c, n,
             "%s; the noise is unknown with %d run(s) of A and %d of B: no effect can be told "
             "from noise; repeat the runs (3 or more a side, interleaved A1 B1 A2 B2 ...: "
             "docs/diff.md)",
             mech, ab->k[0], ab->k[1]);
        return;
    }
    if (!ab->mechanism && !effect) {
        setf(ab->rule, sizeof(ab->rule), "no-difference");
        setf(c, n, "no difference (within noise)");
        return;
    }
    setf(ab->rule, sizeof(ab->rule), "runbook");
    char hp[360];
    if (ab->host == GT_AB_NA)
        setf(hp, sizeof(hp), "host pressure not recorded");
    else if (host_text[0])
        setf(hp, sizeof(hp), "host pressure moved (%s)", host_text);
    else
        setf(hp, sizeof(hp), "host pressure within noise");
    const char *slo_text = ab->slo == GT_AB_NA     ? "application SLO not recorded"
                           : ab->slo == GT_AB_DOWN ? "application SLO improved"
                           : ab->slo == GT_AB_UP   ? "application SLO regressed"
                                                   : "application SLO within noise";
    int up = ab->host == GT_AB_UP, down = ab->host == GT_AB_DOWN;
    const char *judgement;
    if (ab->slo == GT_AB_DOWN)
        judgement = ab->mechanism ? "faster" : "faster, but not by the registration path";
    else if (ab->slo == GT_AB_UP)
        judgement = ab->mechanism ? "slower" : "slower, but not by the registration path";
    else if (ab->host == GT_AB_NA)
        judgement = ab->slo == GT_AB_NA ? "the effect on host and application is unknown"
                                        : "no application effect; the host effect is unknown";
    else if (ab->slo == GT_AB_NA)
        judgement = down ? "host path unloaded; the application effect is unknown"
                    : up ? "host path loaded more; the application effect is unknown"
                         : "no host effect; the application effect is unknown";
    else
        judgement = down ? "host path unloaded, no application effect"
                    : up ? "host path loaded more, no application effect"
                         : "no host or application effect";
    setf(c, n, "%s, %s, %s: %s%s", mech, hp, slo_text, judgement,
         !ab->mechanism && effect ? " (not caused by the registration path: look for another "
                                    "cause)"
                                  : "");
}

void gt_ab_build(struct gt_ab *ab, const struct gt_ab_run *a, int ka, const struct gt_ab_run *b,
                 int kb, int ndiffs)
{
    memset(ab, 0, sizeof(*ab));
    ab->alpha = GT_AB_ALPHA;
    ab->ndiffs = ndiffs;
    ka = ka > GT_AB_MAXRUNS ? GT_AB_MAXRUNS : ka;
    kb = kb > GT_AB_MAXRUNS ? GT_AB_MAXRUNS : kb;
    ab->k[0] = ka;
    ab->k[1] = kb;
    const struct gt_ab_run *pa[GT_AB_MAXRUNS], *pb[GT_AB_MAXRUNS];
    for (int i = 0; i < ka; i++)
        pa[i] = &a[i];
    for (int i = 0; i < kb; i++)
        pb[i] = &b[i];
    const struct gt_ab_run *const *runs[2] = {pa, pb};
    const int k[2] = {ka, kb};
    struct gt_abstat *st = calloc(GT_AB_ROWS, sizeof(*st));
    if (!st || !ka || !kb) {
        free(st);
        setf(ab->conclusion, sizeof(ab->conclusion), "no runs to compare");
        return;
    }
    if (ka)
        ab->hostp[0] = a[0].host;
    if (kb)
        ab->hostp[1] = b[0].host;
    /* the SLO: recorded on both sides' every run, or why not */
    int rec[2] = {1, 1};
    for (int s = 0; s < 2; s++) {
        double cpu = 0, helper = 0;
        for (int i = 0; i < k[s]; i++) {
            rec[s] &= runs[s][i]->slo_recorded;
            ab->emulated[s] |= runs[s][i]->emulated;
            cpu += runs[s][i]->cpu_s;
            helper += runs[s][i]->helper_s;
        }
        ab->copier_share[s] = helper > 0 ? helper / (cpu + helper) : NAN;
    }
    if (!rec[0] || !rec[1]) {
        const struct gt_ab_run *w = !rec[0] ? &a[0] : &b[0];
        for (int i = 0; !rec[0] && i < ka; i++)
            if (!a[i].slo_recorded)
                w = &a[i];
        if (rec[0])
            for (int i = 0; i < kb; i++)
                if (!b[i].slo_recorded)
                    w = &b[i];
        if (rec[0] != rec[1])
            setf(ab->slo_why, sizeof(ab->slo_why), "collectives recorded in %s only; %s: %s",
                 rec[0] ? "A" : "B", rec[0] ? "B" : "A", w->slo_why);
        else
            setf(ab->slo_why, sizeof(ab->slo_why), "%s", w->slo_why);
    }
    /* rows in the order of first appearance, each group in turn */
    for (int g = 0; g < GT_AB_GROUPS; g++)
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < k[s]; i++)
                for (int v = 0; v < runs[s][i]->nval; v++) {
                    const struct gt_ab_val *x = &runs[s][i]->val[v];
                    if (x->group != g)
                        continue;
                    /* the collectives' rows only when both sides recorded them */
                    if (g == GT_AB_SLO && (!rec[0] || !rec[1]) && strcmp(x->name, GT_AB_PACE))
                        continue;
                    int seen = 0;
                    for (int q = 0; q < ab->nrow && !seen; q++)
                        seen = !strcmp(ab->row[q].name, x->name);
                    if (!seen)
                        add_row(ab, x, runs, k, &st[ab->nrow]);
                }
    for (int i = 0; i < ab->nrow; i++)
        if (ab->row[i].role == GT_AB_MECH && moved(ab->row[i].state))
            ab->mechanism = 1;
    decide(ab, st);
    conclude(ab);
    free(st);
}

int gt_ab_build_jobs(struct gt_ab *ab, const struct gt_job *a, const struct gt_job *b, int ndiffs)
{
    struct gt_ab_run *r = malloc(2 * sizeof(*r));
    if (!r)
        return -1;
    gt_ab_run_of(a, &r[0]);
    gt_ab_run_of(b, &r[1]);
    gt_ab_build(ab, &r[0], 1, &r[1], 1, ndiffs);
    free(r);
    return 0;
}
