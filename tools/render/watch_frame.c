/* SPDX-License-Identifier: Apache-2.0 */
/*
 * watch_frame.c — a frame of `gdrtrace watch` from a folded job, and its
 * rendering to a size (see watch_frame.h for the invariants).  Works from
 * the job's digests only (communicator sums, per process and communicator
 * digests, fates), so it runs on a job folded in bounded memory.
 */
#include "tools/render/watch_frame.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/esc.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */
#define EMDASH "\xe2\x80\x94"   /* U+2014, one column: a rate not known yet */

struct gt_watch_sample {
    int used;
    int32_t has; /* -1: the process itself; else the communicator's has_comm_id */
    int32_t pid;
    uint64_t id; /* comm_id when has == 1, else the group's first slot */
    int64_t start_wall_ns, start_mono_ns;
    char host[sizeof(((struct gtr_identity *)0)->host)];
    uint64_t bytes, msgs, regs;
};

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static void key_of(struct gt_watch_sample *k, const struct gt_recfile *r, int32_t has, uint64_t id)
{
    memset(k, 0, sizeof(*k));
    k->has = has;
    k->id = id;
    k->pid = r->id.pid;
    k->start_wall_ns = r->id.start_wall_ns;
    k->start_mono_ns = r->id.start_mono_ns;
    memcpy(k->host, r->id.host, sizeof(k->host)); /* NUL-terminated by the parser */
}

static uint64_t key_hash(const struct gt_watch_sample *k)
{
    uint64_t h = fnv(k->host, strlen(k->host), 1469598103934665603ull);
    h = fnv(&k->pid, sizeof(k->pid), h);
    h = fnv(&k->start_wall_ns, sizeof(k->start_wall_ns), h);
    h = fnv(&k->start_mono_ns, sizeof(k->start_mono_ns), h);
    h = fnv(&k->has, sizeof(k->has), h);
    return fnv(&k->id, sizeof(k->id), h);
}

static int key_eq(const struct gt_watch_sample *a, const struct gt_watch_sample *b)
{
    return a->has == b->has && a->id == b->id && a->pid == b->pid &&
           a->start_wall_ns == b->start_wall_ns && a->start_mono_ns == b->start_mono_ns &&
           !strcmp(a->host, b->host);
}

/* The slot holding k, or the empty slot where it goes; NULL when cap is 0. */
static struct gt_watch_sample *slot_of(struct gt_watch_sample *tab, size_t cap,
                                       const struct gt_watch_sample *k)
{
    if (!cap)
        return NULL;
    size_t i = (size_t)key_hash(k) & (cap - 1);
    while (tab[i].used && !key_eq(&tab[i], k))
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

/* Deltas of one process or communicator over the interval. */
struct acc {
    int known;
    uint64_t bytes, msgs, regs;
};

static void acc_add(struct acc *a, uint64_t bytes, uint64_t msgs, uint64_t regs)
{
    a->known = 1;
    a->bytes += bytes;
    a->msgs += msgs;
    a->regs += regs;
}

static struct gt_watch_rate rate_of(const struct acc *a, double dt)
{
    struct gt_watch_rate r = {0};
    if (a->known && dt > 0) {
        r.known = 1;
        r.bytes = (double)a->bytes / dt;
        r.msgs = (double)a->msgs / dt;
        r.regs = (double)a->regs / dt;
    }
    return r;
}

/* Severity rank of a verdict, most severe first (the precedence of
 * docs/reader.md; the DIRECT and HOST-STAGED kinds are equals). */
static int tier(int v)
{
    switch (v) {
    case GT_V_ERROR:
        return 0;
    case GT_V_FALLBACK:
        return 1;
    case GT_V_BYPASSED:
        return 2;
    case GT_V_MIXED:
        return 3;
    case GT_V_NO_DATA:
        return 5;
    default:
        return 4;
    }
}

static const struct gt_watch_row *sort_rows;
static int row_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    const struct gt_watch_row *rx = &sort_rows[x], *ry = &sort_rows[y];
    int tx = tier(rx->verdict), ty = tier(ry->verdict);
    if (tx != ty)
        return tx - ty;
    if (rx->kind != ry->kind)
        return rx->kind - ry->kind;
    return x < y ? -1 : x > y;
}

static void comm_note(char *buf, size_t n, const struct gtr_comm *c)
{
    buf[0] = 0;
    if (c->error_count) {
        char eno[32] = "";
        if (c->error_last_errno)
            snprintf(eno, sizeof(eno), " errno %d", c->error_last_errno);
        snprintf(buf, n, "error %s%s%s%s", gt_reason_name(c->error_last_reason), eno,
                 c->error_last_text[0] ? ": " : "", gt_esc(c->error_last_text));
    } else if (c->fallback_count) {
        char eno[32] = "";
        if (c->fallback_last_errno)
            snprintf(eno, sizeof(eno), " errno %d", c->fallback_last_errno);
        snprintf(buf, n, "fallback %s%s", gt_reason_name(c->fallback_last_reason), eno);
    }
}

/* Index of communicator key (has, has == 1 ? comm_id : rec) in cix. */
static size_t *cix_slot(size_t *cix, size_t cap, const struct gt_job *j, int has, uint64_t id,
                        size_t rec)
{
    uint64_t key = has == 1 ? id : (uint64_t)rec;
    uint64_t h = fnv(&key, sizeof(key), fnv(&has, sizeof(has), 1469598103934665603ull));
    size_t i = (size_t)h & (cap - 1);
    for (; cix[i]; i = (i + 1) & (cap - 1)) {
        const struct gt_ccomm *x = &j->comms[cix[i] - 1];
        if (x->has_comm_id == has &&
            (has == 1 ? x->comm_id == id : x->nmembers && x->members[0].rec == rec))
            return &cix[i];
    }
    return &cix[i];
}

static size_t pow2_at_least(size_t n)
{
    size_t c = 16;
    while (c < n)
        c *= 2;
    return c;
}

/* One build's working memory: this sample's table and the deltas. */
struct build {
    struct gt_watch *w;
    const struct gt_job *j;
    struct gt_watch_frame *f;
    size_t nrec, ncomm, nrows, cap, ccap;
    double dt;
    int have;                    /* a previous sample and time has passed */
    struct gt_watch_sample *cur; /* this sample, by key */
    struct acc *pacc, *cacc;     /* deltas per process, per communicator */
    char *pknown;                /* pknown[i]: process i's rate can be known */
    size_t *cix, *fate_of, *order;
    struct gt_watch_row *rows; /* communicators, then processes (report order) */
    size_t nproc;              /* distinct processes in cur */
};

static int build_alloc(struct build *b)
{
    b->cap = pow2_at_least(2 * (b->nrec + b->j->nranks));
    b->ccap = pow2_at_least(2 * b->ncomm);
    b->cur = calloc(b->cap, sizeof(*b->cur));
    b->pacc = calloc(b->nrec + 1, sizeof(*b->pacc));
    b->cacc = calloc(b->ncomm + 1, sizeof(*b->cacc));
    b->pknown = calloc(b->nrec + 1, 1);
    b->cix = calloc(b->ccap, sizeof(*b->cix));
    b->fate_of = malloc((b->nrec + 1) * sizeof(*b->fate_of));
    b->order = malloc((b->nrows + 1) * sizeof(*b->order));
    b->rows = calloc(b->nrows + 1, sizeof(*b->rows));
    b->f->rows = malloc((b->nrows + 1) * sizeof(*b->f->rows));
    return b->cur && b->pacc && b->cacc && b->pknown && b->cix && b->fate_of && b->order &&
           b->rows && b->f->rows;
}

static void build_free(struct build *b)
{
    free(b->cur);
    free(b->pacc);
    free(b->cacc);
    free(b->pknown);
    free(b->cix);
    free(b->fate_of);
    free(b->order);
    free(b->rows);
}

/* The processes: which were seen before (invariant 3). */
static void match_procs(struct build *b)
{
    struct gt_watch *w = b->w;
    size_t matched = 0;
    for (size_t i = 0; i < b->nrec; i++) {
        const struct gt_recfile *r = &b->j->recs[i];
        struct gt_watch_sample k;
        key_of(&k, r, -1, 0);
        struct gt_watch_sample *p = slot_of(w->tab, w->cap, &k);
        int before = p && p->used;
        b->pknown[i] = (char)(b->have && (before || r->id.start_wall_ns >= w->wall_ns));
        struct gt_watch_sample *c = slot_of(b->cur, b->cap, &k);
        if (c->used) /* the same identity twice (hostile input): count it once */
            continue;
        *c = k;
        c->used = 1;
        b->nproc++;
        matched += before;
        b->f->nnew += w->have && !before;
    }
    b->f->nproc = b->nrec;
    b->f->ngone = w->have && w->nproc > matched ? w->nproc - matched : 0;
    for (size_t i = 0; i < b->ncomm; i++) {
        const struct gt_ccomm *x = &b->j->comms[i];
        size_t *s = cix_slot(b->cix, b->ccap, b->j, x->has_comm_id, x->comm_id,
                             x->nmembers ? x->members[0].rec : SIZE_MAX);
        if (!*s)
            *s = i + 1;
    }
}

/* Each process's communicators: deltas against the previous sample. */
static void take_deltas(struct build *b)
{
    const struct gt_job *j = b->j;
    for (size_t k = 0; k < j->nranks; k++) {
        const struct gt_rank_comm *rc = &j->ranks[k];
        if (rc->rec >= b->nrec)
            continue;
        const struct gt_recfile *r = &j->recs[rc->rec];
        uint64_t regs = 0;
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            regs += rc->did[m];
        struct gt_watch_sample key;
        key_of(&key, r, rc->has_comm_id, rc->has_comm_id == 1 ? rc->comm_id : rc->slot);
        key.bytes = rc->bytes;
        key.msgs = rc->msgs;
        key.regs = regs;
        struct gt_watch_sample *c = slot_of(b->cur, b->cap, &key);
        if (c->used)
            continue;
        *c = key;
        c->used = 1;
        if (!b->pknown[rc->rec])
            continue;
        const struct gt_watch_sample *p = slot_of(b->w->tab, b->w->cap, &key);
        uint64_t db = rc->bytes, dm = rc->msgs, dr = regs; /* new since: all of it */
        if (p && p->used && rc->bytes >= p->bytes && rc->msgs >= p->msgs && regs >= p->regs) {
            db -= p->bytes;
            dm -= p->msgs;
            dr -= p->regs;
        } /* else a counter went down: reset, the new value is the delta */
        acc_add(&b->pacc[rc->rec], db, dm, dr);
        size_t ci = *cix_slot(b->cix, b->ccap, j, rc->has_comm_id, rc->comm_id, rc->rec);
        if (ci)
            acc_add(&b->cacc[ci - 1], db, dm, dr);
    }
}

static void comm_rows(struct build *b)
{
    for (size_t i = 0; i < b->ncomm; i++) {
        const struct gt_ccomm *x = &b->j->comms[i];
        struct gt_watch_row *w_ = &b->rows[i];
        w_->kind = GT_WATCH_COMM;
        w_->verdict = x->v.code;
        w_->emulated = x->v.emulated;
        snprintf(w_->name, sizeof(w_->name), "comm %s", gt_esc(x->label));
        w_->nprocs = x->nprocs;
        w_->errors = x->sum->error_count;
        w_->fallbacks = x->sum->fallback_count;
        w_->rate = rate_of(&b->cacc[i], b->dt);
        comm_note(w_->note, sizeof(w_->note), x->sum);
    }
}

/* The processes' rows (their digests' counts and verdicts with their fate)
 * and the total of every process with a known rate. */
static void proc_rows(struct build *b)
{
    const struct gt_job *j = b->j;
    for (size_t i = 0; i < b->nrec; i++)
        b->fate_of[i] = SIZE_MAX;
    for (size_t i = 0; i < j->nfates; i++)
        if (j->fates[i].rec < b->nrec)
            b->fate_of[j->fates[i].rec] = i;
    size_t k = 0;
    struct acc tot = {0};
    for (size_t i = 0; i < b->nrec; i++) {
        const struct gt_recfile *r = &j->recs[i];
        struct gt_watch_row *w_ = &b->rows[b->ncomm + i];
        int seen[GT_V_COUNT] = {0};
        w_->kind = GT_WATCH_PROC;
        w_->nprocs = 1;
        for (; k < j->nranks && j->ranks[k].rec <= i; k++) {
            if (j->ranks[k].rec != i)
                continue;
            w_->errors += j->ranks[k].errors;
            w_->fallbacks += j->ranks[k].fallbacks;
            if (j->ranks[k].verdict >= 0 && j->ranks[k].verdict < GT_V_COUNT)
                seen[j->ranks[k].verdict]++;
        }
        const struct gt_fate *fate = b->fate_of[i] != SIZE_MAX ? &j->fates[b->fate_of[i]].f : NULL;
        if (fate && fate->code >= 0 && fate->code < GT_V_COUNT)
            seen[fate->code]++;
        w_->verdict = gt_verdict_combine_counts(seen);
        w_->emulated = r->emulated;
        char rank[32] = "";
        if (r->id.rank >= 0)
            snprintf(rank, sizeof(rank), " rank %d", r->id.rank);
        snprintf(w_->name, sizeof(w_->name), "proc %s:%d%s", gt_esc(r->id.host), r->id.pid, rank);
        w_->rate = rate_of(&b->pacc[i], b->dt);
        if (fate)
            snprintf(w_->note, sizeof(w_->note), "%s", gt_esc(fate->text));
        else if (r->liveness != GT_LIVE_LIVE)
            snprintf(w_->note, sizeof(w_->note), "%s", gt_liveness_name(r->liveness));
        if (b->pacc[i].known) {
            b->f->nknown++;
            acc_add(&tot, b->pacc[i].bytes, b->pacc[i].msgs, b->pacc[i].regs);
        }
    }
    /* the total: every process with a known rate; known from the second frame on */
    tot.known = b->have;
    b->f->total = rate_of(&tot, b->dt);
}

int gt_watch_frame_build(struct gt_watch *w, const struct gt_job *j, double mono_s, int64_t wall_ns,
                         struct gt_watch_frame *f)
{
    memset(f, 0, sizeof(*f));
    struct build b = {.w = w, .j = j, .f = f, .nrec = j->nrec, .ncomm = j->ncomm};
    b.nrows = b.nrec + b.ncomm;
    if (!build_alloc(&b)) {
        free(f->rows);
        f->rows = NULL;
        build_free(&b);
        return -1;
    }
    double dt = w->have ? mono_s - w->mono_s : 0;
    b.have = w->have && dt > 0;
    b.dt = dt;
    f->dt = b.have ? dt : 0;
    match_procs(&b);
    take_deltas(&b);
    comm_rows(&b);
    proc_rows(&b);

    for (size_t i = 0; i < b.nrows; i++)
        b.order[i] = i;
    sort_rows = b.rows;
    if (b.nrows > 1)
        qsort(b.order, b.nrows, sizeof(*b.order), row_cmp);
    for (size_t i = 0; i < b.nrows; i++)
        f->rows[i] = b.rows[b.order[i]];
    f->nrows = b.nrows;

    f->verdict_code = j->overall.code;
    snprintf(f->verdict, sizeof(f->verdict), "all %s  %s",
             gt_verdict_label(j->overall.code, j->overall.emulated), gt_esc(j->overall.why));

    /* this sample becomes the previous one */
    free(w->tab);
    w->tab = b.cur;
    w->cap = b.cap;
    w->nproc = b.nproc;
    w->have = 1;
    w->mono_s = mono_s;
    w->wall_ns = wall_ns;
    b.cur = NULL;
    build_free(&b);
    return 0;
}

void gt_watch_frame_free(struct gt_watch_frame *f)
{
    free(f->rows);
    f->rows = NULL;
    f->nrows = 0;
}

void gt_watch_free(struct gt_watch *w)
{
    free(w->tab);
    memset(w, 0, sizeof(*w));
}

/* ---- rendering --------------------------------------------------------- */

/* Bytes of the UTF-8 sequence at s (n bytes left), at least 1. */
static size_t cp_len(const char *s, size_t n)
{
    unsigned char c = (unsigned char)s[0];
    size_t l = c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    return l < n ? l : n;
}

/* Columns of one code point (invariant 1): ours are 1, any other non-ASCII
 * at most 2. */
static size_t cp_width(const char *s, size_t l)
{
    if (l == 1 && (unsigned char)s[0] < 0x80)
        return 1;
    if (l == 3 && (!memcmp(s, ELLIPSIS, 3) || !memcmp(s, EMDASH, 3)))
        return 1;
    return 2;
}

size_t gt_watch_width(const char *s)
{
    size_t w = 0, n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t l = cp_len(s + i, n - i);
        w += cp_width(s + i, l);
        i += l;
    }
    return w;
}

/* A line being assembled; bytes beyond its buffer are dropped. */
struct line {
    char b[4096];
    size_t n;
};

static void put_bytes(struct line *ln, const char *s, size_t n)
{
    if (n > sizeof(ln->b) - 1 - ln->n)
        n = sizeof(ln->b) - 1 - ln->n;
    memcpy(ln->b + ln->n, s, n);
    ln->n += n;
    ln->b[ln->n] = 0;
}

static void put_spaces(struct line *ln, size_t k)
{
    while (k--)
        put_bytes(ln, " ", 1);
}

/* Appends s in exactly w columns: cut with "…" when wider (a wide
 * character that does not fit is left out whole), padded with spaces on
 * the right (left-aligned) or the left (right). */
static void put_cell(struct line *ln, const char *s, size_t w, int right)
{
    size_t sw = gt_watch_width(s);
    if (sw <= w) {
        if (right)
            put_spaces(ln, w - sw);
        put_bytes(ln, s, strlen(s));
        if (!right)
            put_spaces(ln, w - sw);
        return;
    }
    if (!w)
        return;
    size_t n = strlen(s), used = 0, i = 0;
    while (i < n) {
        size_t l = cp_len(s + i, n - i), cw = cp_width(s + i, l);
        if (used + cw > w - 1)
            break;
        put_bytes(ln, s + i, l);
        used += cw;
        i += l;
    }
    put_bytes(ln, ELLIPSIS, 3);
    put_spaces(ln, w - 1 - used);
}

struct out {
    FILE *f;
    int rows, cols, tty, n;
};

/* Writes one line cut to the width, if the height has room. */
static void emit(struct out *o, const char *s)
{
    if (o->rows && o->n >= o->rows)
        return;
    struct line ln = {.n = 0};
    ln.b[0] = 0;
    if (o->cols && gt_watch_width(s) > (size_t)o->cols)
        put_cell(&ln, s, (size_t)o->cols, 0);
    else
        put_bytes(&ln, s, strlen(s));
    if (o->tty) {
        if (o->n)
            fputc('\n', o->f);
        fputs(ln.b, o->f);
        fputs("\033[K", o->f);
    } else {
        fputs(ln.b, o->f);
        fputc('\n', o->f);
    }
    o->n++;
}

static void emitf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emitf(struct out *o, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    emit(o, buf);
}

static const char *fmt_bytes_rate(const struct gt_watch_rate *r, double v, char *buf, size_t n)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (!r->known)
        return EMDASH;
    int i = 0;
    while (v >= 1024 && i < 6) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, n, "%.0f B", v);
    else
        snprintf(buf, n, "%.1f %s", v, u[i]);
    return buf;
}

/* 0, 2.5, 37, 12.3k, 4.6M, 1.2G: at most 6 characters below 1e12. */
static const char *fmt_num(double v, char *buf, size_t n)
{
    if (v == 0)
        snprintf(buf, n, "0");
    else if (v < 9.95)
        snprintf(buf, n, "%.1f", v);
    else if (v < 999.5)
        snprintf(buf, n, "%.0f", v);
    else if (v < 999.95e3)
        snprintf(buf, n, "%.1fk", v / 1e3);
    else if (v < 999.95e6)
        snprintf(buf, n, "%.1fM", v / 1e6);
    else if (v < 999.95e9)
        snprintf(buf, n, "%.1fG", v / 1e9);
    else
        snprintf(buf, n, "%.2g", v);
    return buf;
}

static const char *fmt_rate(const struct gt_watch_rate *r, double v, char *buf, size_t n)
{
    return r->known ? fmt_num(v, buf, n) : EMDASH;
}

static const char *fmt_count(uint64_t v, char *buf, size_t n)
{
    if (v < 1000000)
        snprintf(buf, n, "%llu", (unsigned long long)v);
    else
        fmt_num((double)v, buf, n);
    return buf;
}

/* The columns of a row, in display order; name and note take what is left. */
enum { C_VERDICT, C_NAME, C_PROCS, C_ERR, C_FB, C_BYTES, C_MSGS, C_REGS, C_NOTE, C_COUNT };
static const struct {
    const char *head;
    size_t w;
    int right;
} cols_def[C_COUNT] = {
    [C_VERDICT] = {"verdict", 14, 0}, [C_NAME] = {"comm / process", 0, 0},
    [C_PROCS] = {"procs", 5, 1},      [C_ERR] = {"errors", 6, 1},
    [C_FB] = {"fallbk", 6, 1},        [C_BYTES] = {"bytes/s", 10, 1},
    [C_MSGS] = {"msgs/s", 6, 1},      [C_REGS] = {"regs/s", 6, 1},
    [C_NOTE] = {"why", 0, 0},
};
/* Which fixed columns stay when the width is short, the most useful first. */
static const int col_prio[] = {C_BYTES, C_ERR, C_FB, C_MSGS, C_REGS, C_PROCS};
#define NAME_MIN 14
#define NOTE_MIN 8
#define CELL 320 /* a cell's text: a row's note (256) and its prefix */

static void row_cells(const struct gt_watch_row *r, char cell[C_COUNT][CELL])
{
    snprintf(cell[C_VERDICT], CELL, "%s", gt_verdict_name(r->verdict));
    snprintf(cell[C_NAME], CELL, "%s", r->name);
    if (r->kind == GT_WATCH_COMM)
        fmt_count(r->nprocs, cell[C_PROCS], CELL);
    else
        cell[C_PROCS][0] = 0;
    fmt_count(r->errors, cell[C_ERR], CELL);
    fmt_count(r->fallbacks, cell[C_FB], CELL);
    char b[64];
    snprintf(cell[C_BYTES], CELL, "%s", fmt_bytes_rate(&r->rate, r->rate.bytes, b, sizeof(b)));
    snprintf(cell[C_MSGS], CELL, "%s", fmt_rate(&r->rate, r->rate.msgs, b, sizeof(b)));
    snprintf(cell[C_REGS], CELL, "%s", fmt_rate(&r->rate, r->rate.regs, b, sizeof(b)));
    snprintf(cell[C_NOTE], CELL, "%s%s%s", r->emulated ? "emulated" : "",
             r->emulated && r->note[0] ? "; " : "", r->note);
}

int gt_watch_frame_render(FILE *out, const struct gt_watch_frame *f, int rows, int cols, int tty)
{
    struct out o = {out, rows > 0 ? rows : 0, cols > 0 ? cols : 0, tty, 0};
    char b1[64], b2[64], b3[64];
    emit(&o, f->verdict);
    const struct gt_watch_rate *t = &f->total;
    if (t->known) {
        char extra[128] = "";
        size_t unknown = f->nproc - f->nknown;
        int e = 0;
        if (f->nnew)
            e += snprintf(extra + e, sizeof(extra) - (size_t)e, ", %zu new", f->nnew);
        if (f->ngone && e >= 0 && (size_t)e < sizeof(extra))
            e += snprintf(extra + e, sizeof(extra) - (size_t)e, ", %zu gone", f->ngone);
        if (unknown && e >= 0 && (size_t)e < sizeof(extra))
            snprintf(extra + e, sizeof(extra) - (size_t)e, ", %zu without an earlier sample",
                     unknown);
        emitf(&o, "rates  %s/s  %s msgs/s  %s regs/s  over %.2f s, %zu process(es)%s",
              fmt_bytes_rate(t, t->bytes, b1, sizeof(b1)), fmt_rate(t, t->msgs, b2, sizeof(b2)),
              fmt_rate(t, t->regs, b3, sizeof(b3)), f->dt, f->nproc, extra);
    } else {
        emit(&o, "rates  " EMDASH " B/s  " EMDASH " msgs/s  " EMDASH
                 " regs/s  (first frame: a rate needs two samples)");
    }
    emit(&o, f->title);

    size_t body = f->nrows, more = 0;
    if (o.rows) {
        long cap = (long)o.rows - o.n - 1; /* the column header takes a line */
        if (cap < 1)
            body = 0;
        else if (f->nrows > (size_t)cap) {
            body = (size_t)cap - 1;
            more = f->nrows - body;
        }
    }
    if (body) {
        /* which columns fit, and how wide name and note are (invariant 1) */
        int on[C_COUNT] = {0};
        on[C_VERDICT] = on[C_NAME] = 1;
        size_t used = cols_def[C_VERDICT].w;
        for (size_t i = 0; i < sizeof(col_prio) / sizeof(col_prio[0]); i++) {
            size_t w = cols_def[col_prio[i]].w + 1;
            if (!o.cols || used + w + 1 + NAME_MIN <= (size_t)o.cols) {
                on[col_prio[i]] = 1;
                used += w;
            }
        }
        size_t namew = gt_watch_width(cols_def[C_NAME].head), has_note = 0;
        for (size_t i = 0; i < body; i++) {
            size_t w = gt_watch_width(f->rows[i].name);
            namew = w > namew ? w : namew;
            has_note |= f->rows[i].note[0] || f->rows[i].emulated;
        }
        if (o.cols)
            namew = used + 1 >= (size_t)o.cols          ? 0
                    : namew < (size_t)o.cols - used - 1 ? namew
                                                        : (size_t)o.cols - used - 1;
        used += 1 + namew;
        size_t notew = 0;
        if (has_note && (!o.cols || used + 1 + NOTE_MIN <= (size_t)o.cols)) {
            on[C_NOTE] = 1;
            notew = o.cols ? (size_t)o.cols - used - 1 : 0;
        }
        char cell[C_COUNT][CELL];
        for (int pass = -1; pass < (int)body; pass++) {
            if (pass < 0)
                for (int c = 0; c < C_COUNT; c++)
                    snprintf(cell[c], sizeof(cell[c]), "%s", cols_def[c].head);
            else
                row_cells(&f->rows[pass], cell);
            struct line ln = {.n = 0};
            ln.b[0] = 0;
            for (int c = 0; c < C_COUNT; c++) {
                if (!on[c])
                    continue;
                if (c)
                    put_bytes(&ln, " ", 1);
                if (c == C_NOTE)
                    put_cell(&ln, cell[c], notew ? notew : gt_watch_width(cell[c]), 0);
                else
                    put_cell(&ln, cell[c], c == C_NAME ? namew : cols_def[c].w, cols_def[c].right);
            }
            while (ln.n && ln.b[ln.n - 1] == ' ') /* no trailing blanks */
                ln.b[--ln.n] = 0;
            emit(&o, ln.b);
        }
    }
    if (more)
        emitf(&o, ELLIPSIS " %zu more (use gdrtrace summary)", more);
    if (tty)
        fputs("\033[J", out);
    return o.n;
}
