/* SPDX-License-Identifier: Apache-2.0 */
/*
 * watch.c — `reader_watch`: the frames of `gdrtrace watch` (tools/render/watch_frame.c)
 * built from fixture recorders with known counters, sampled at times the
 * test chooses, so every rate has one right value:
 *  * the first frame knows no rate; the second gives (counter delta) / dt
 *    per process, per communicator and in total, exactly;
 *  * a counter that went down (the writer reopened its recorder) counts its
 *    new value; a process that started after the previous sample counts all
 *    of its counters; one that was running but not seen has no rate;
 *    processes that left are counted as gone;
 *  * rows are ordered errors, fallbacks, then the rest, communicators before
 *    processes within one verdict;
 *  * a rendered frame never has more lines than rows nor a line wider than
 *    cols (30x80, 10x40, 30x100, and the degenerate ones), with "… N more"
 *    counting exactly what was left out, wide characters in a host name
 *    counted as two columns, and cut cells ending in "…"; on a terminal every
 *    line is cleared to its end and the frame ends clearing the screen below;
 *  * escape sequences in a recorder's strings never reach the output raw.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

#include "tools/lib/recfile.h"
#include "tests/reader/fixture.h"
#include "tools/lib/model.h"
#include "tools/render/watch_frame.h"

static int failures; /* tests/check.h counts here */
#define MAXREC 64
#define PER_SCALE_MSGS 2000ull            /* fixture: 1000 sends + 1000 receives per scale */
#define PER_SCALE_BYTES (2000ull * 65536) /* their bytes */

struct set {
    struct gt_recfile recs[MAXREC];
    size_t n;
};

static void add(struct set *s, struct fx_opts o)
{
    char err[GT_ERRLEN];
    size_t len;
    if (!o.scale)
        o.scale = 1;
    unsigned char *b = fx_build(&o, &len);
    if (!b || s->n == MAXREC || gt_recfile_parse(b, len, "fx", &s->recs[s->n], err, sizeof(err))) {
        printf("FAIL: fixture does not parse: %s\n", b ? err : "out of memory");
        exit(1);
    }
    free(b);
    s->recs[s->n++].liveness = GT_LIVE_LIVE;
}

static void clear(struct set *s)
{
    for (size_t i = 0; i < s->n; i++)
        gt_recfile_free(&s->recs[i]);
    s->n = 0;
}

/* One frame of the set at time t (monotonic s) and wall clock wall_ns. */
static void frame(struct gt_watch *w, struct set *s, double t, int64_t wall_ns,
                  struct gt_watch_frame *f)
{
    struct gt_job j;
    if (gt_job_build(&j, s->recs, s->n) || gt_watch_frame_build(w, &j, t, wall_ns, f)) {
        printf("FAIL: out of memory building a frame\n");
        exit(1);
    }
    gt_job_free(&j);
}

static const struct gt_watch_row *row(const struct gt_watch_frame *f, const char *name)
{
    for (size_t i = 0; i < f->nrows; i++)
        if (!strcmp(f->rows[i].name, name))
            return &f->rows[i];
    return NULL;
}

#define START_NS 1764669600000000000ll /* the fixture's start time */

static void test_rates(void)
{
    struct gt_watch w = {0};
    struct gt_watch_frame f;
    struct set s = {.n = 0};
    struct fx_opts
        a = {.kind = FX_DMABUF, .host = "node-a", .pid = 11, .rank = 0, .comm_id = 0xc0ffee},
        b = {.kind = FX_DMABUF, .host = "node-b", .pid = 22, .rank = 1, .comm_id = 0xc0ffee};
    uint64_t regs1 = fx_expected_regs(&(struct fx_opts){.kind = FX_DMABUF, .scale = 1});
    add(&s, a);
    add(&s, b);
    frame(&w, &s, 10.0, START_NS + 5000000000ll, &f);
    CHECK(!f.total.known && f.dt == 0, "first frame: total known %d, dt %g", f.total.known, f.dt);
    for (size_t i = 0; i < f.nrows; i++)
        CHECK(!f.rows[i].rate.known, "first frame: row %s has a rate", f.rows[i].name);
    CHECK(f.nrows == 3, "2 processes + 1 communicator: %zu rows", f.nrows);
    gt_watch_frame_free(&f);

    /* a's counters tripled, b's unchanged; 2 s later */
    clear(&s);
    a.scale = 3;
    add(&s, a);
    add(&s, b);
    frame(&w, &s, 12.0, START_NS + 7000000000ll, &f);
    const struct gt_watch_row *ra = row(&f, "proc node-a:11 rank 0"),
                              *rb = row(&f, "proc node-b:22 rank 1"),
                              *rc = row(&f, "comm 0xc0ffee");
    CHECK(ra && rb && rc, "rows present");
    if (ra && rb && rc) {
        double want_b = 2.0 * PER_SCALE_BYTES / 2.0, want_m = 2.0 * PER_SCALE_MSGS / 2.0,
               want_r = 2.0 * (double)regs1 / 2.0;
        CHECK(ra->rate.known && ra->rate.bytes == want_b && ra->rate.msgs == want_m &&
                  ra->rate.regs == want_r,
              "a: known %d %g B/s %g msg/s %g reg/s, want %g %g %g", ra->rate.known, ra->rate.bytes,
              ra->rate.msgs, ra->rate.regs, want_b, want_m, want_r);
        CHECK(rb->rate.known && rb->rate.bytes == 0 && rb->rate.msgs == 0 && rb->rate.regs == 0,
              "b unchanged: %g %g %g", rb->rate.bytes, rb->rate.msgs, rb->rate.regs);
        CHECK(rc->rate.known && rc->rate.bytes == want_b && rc->rate.msgs == want_m,
              "comm: %g %g, want %g %g", rc->rate.bytes, rc->rate.msgs, want_b, want_m);
        CHECK(f.total.known && f.total.bytes == want_b && f.total.regs == want_r && f.dt == 2.0,
              "total %g B/s %g reg/s over %g s", f.total.bytes, f.total.regs, f.dt);
        CHECK(f.nknown == 2 && f.nnew == 0 && f.ngone == 0, "known %zu new %zu gone %zu", f.nknown,
              f.nnew, f.ngone);
    }
    gt_watch_frame_free(&f);

    /* a reset to scale 1 (its recorder reopened): the delta is the new
     * value; b left; c was running all along but never seen; d started
     * after the previous sample.  4 s later. */
    clear(&s);
    a.scale = 1;
    add(&s, a);
    struct fx_opts c = {.kind = FX_DMABUF,
                        .host = "node-c",
                        .pid = 33,
                        .rank = 2,
                        .comm_id = 0xc0ffee},
                   d = {.kind = FX_DMABUF,
                        .host = "node-d",
                        .pid = 44,
                        .rank = 3,
                        .comm_id = 0xd00d,
                        .end_wall_ns = START_NS + 8000000000ll + 2000000000ll};
    add(&s, c);
    add(&s, d); /* its start: end_wall_ns - 2 s = 1 s after the previous sample */
    frame(&w, &s, 16.0, START_NS + 11000000000ll, &f);
    ra = row(&f, "proc node-a:11 rank 0");
    const struct gt_watch_row *rcc = row(&f, "proc node-c:33 rank 2"),
                              *rd = row(&f, "proc node-d:44 rank 3");
    CHECK(ra && rcc && rd, "rows present");
    if (ra && rcc && rd) {
        CHECK(ra->rate.known && ra->rate.msgs == PER_SCALE_MSGS / 4.0, "reset: %g msg/s, want %g",
              ra->rate.msgs, PER_SCALE_MSGS / 4.0);
        CHECK(!rcc->rate.known, "a process running before, never sampled, has no rate");
        CHECK(rd->rate.known && rd->rate.bytes == PER_SCALE_BYTES / 4.0,
              "started since: %g B/s, want %g", rd->rate.bytes, PER_SCALE_BYTES / 4.0);
        CHECK(f.nnew == 2 && f.ngone == 1 && f.nknown == 2, "new %zu gone %zu known %zu", f.nnew,
              f.ngone, f.nknown);
        CHECK(f.total.msgs == 2 * PER_SCALE_MSGS / 4.0, "total %g msg/s", f.total.msgs);
        /* the world communicator: a (known) and c (unknown): a's share only */
        rc = row(&f, "comm 0xc0ffee");
        CHECK(rc && rc->rate.known && rc->rate.msgs == PER_SCALE_MSGS / 4.0,
              "comm with a member without a rate: %g", rc ? rc->rate.msgs : -1);
    }
    gt_watch_frame_free(&f);
    clear(&s);
    gt_watch_free(&w);
}

static int tier(int v)
{
    return v == GT_V_ERROR ? 0 : v == GT_V_FALLBACK ? 1 : v == GT_V_NO_DATA ? 3 : 2;
}

/* Many processes of every kind, for ordering and fitting. */
static void make_mixed(struct set *s, int n, const char *host0)
{
    static const int kinds[] = {FX_DMABUF, FX_NODATA, FX_FALLBACK, FX_PEERMEM,
                                FX_ERROR,  FX_MIXED,  FX_HOST};
    for (int i = 0; i < n; i++) {
        static char hosts[MAXREC][64];
        snprintf(hosts[i], sizeof(hosts[i]), "%s%02d", host0, i);
        add(s, (struct fx_opts){.kind = kinds[i % 7],
                                .host = hosts[i],
                                .pid = 100 + i,
                                .rank = i,
                                .comm_id = 0x5e1a7c0ffee00000ull + (uint64_t)(i % 9)});
    }
}

static void test_order(void)
{
    struct gt_watch w = {0};
    struct gt_watch_frame f;
    struct set s = {.n = 0};
    make_mixed(&s, 28, "node-");
    frame(&w, &s, 1.0, START_NS, &f);
    CHECK(f.nrows > 28, "%zu rows", f.nrows);
    CHECK(f.nrows && f.rows[0].verdict == GT_V_ERROR, "first row %s", f.rows[0].name);
    for (size_t i = 1; i < f.nrows; i++) {
        const struct gt_watch_row *p = &f.rows[i - 1], *q = &f.rows[i];
        CHECK(tier(p->verdict) <= tier(q->verdict), "row %zu %s (%s) after %s (%s)", i, q->name,
              gt_verdict_name(q->verdict), p->name, gt_verdict_name(p->verdict));
        if (p->verdict == q->verdict)
            CHECK(p->kind <= q->kind, "row %zu: a communicator after a process of its verdict", i);
    }
    gt_watch_frame_free(&f);
    clear(&s);
    gt_watch_free(&w);
}

/* Columns of a rendered line counted independently of the code under test:
 * "…" and "—" one, any other non-ASCII code point two, ESC[K nothing. */
static size_t cols_of(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0x1b && i + 2 < n && s[i + 1] == '[') {
            i += 3;
            continue;
        }
        if (c < 0x80) {
            w++;
            i++;
        } else {
            size_t l = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            int ours = l == 3 && i + 3 <= n &&
                       (!memcmp(s + i, "\xe2\x80\xa6", 3) || !memcmp(s + i, "\xe2\x80\x94", 3));
            w += ours ? 1 : 2;
            i += l;
        }
    }
    return w;
}

/* Renders f at rows x cols and checks invariant 1; returns the output. */
static char *render_check(const struct gt_watch_frame *f, int rows, int cols, int tty, int *nlines)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        exit(1);
    int n = gt_watch_frame_render(m, f, rows, cols, tty);
    fclose(m);
    int lines = 0;
    for (char *p = buf; *p;) {
        char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        lines++;
        CHECK(!cols || cols_of(p, l) <= (size_t)cols, "%dx%d%s: line %d is %zu columns: %.*s", rows,
              cols, tty ? " tty" : "", lines, cols_of(p, l), (int)l, p);
        if (tty && lines <= n)
            CHECK(e ? l >= 3 && !memcmp(p + l - 3, "\033[K", 3)
                    : l >= 6 && !memcmp(p + l - 6, "\033[K\033[J", 6),
                  "tty line %d does not end clearing: %.*s", lines, (int)l, p);
        if (!e)
            break;
        p = e + 1;
        if (!tty && !*p)
            break;
    }
    CHECK(!rows || lines <= rows, "%dx%d: %d lines", rows, cols, lines);
    CHECK(lines == n, "%dx%d: render says %d lines, wrote %d", rows, cols, n, lines);
    if (tty)
        CHECK(len >= 3 && !strcmp(buf + len - 3, "\033[J"), "tty frame does not end with ESC[J");
    *nlines = lines;
    return buf;
}

static void test_fit(void)
{
    struct gt_watch w = {0};
    struct gt_watch_frame f;
    struct set s = {.n = 0};
    make_mixed(&s, 40, "node-with-a-rather-long-host-name-");
    /* a host name of wide characters: 2 columns each */
    add(&s, (struct fx_opts){.kind = FX_ERROR,
                             .host = "\xe3\x83\x8e\xe3\x83\xbc\xe3\x83\x89\xe3\x83\xbc\xe3\x83\x8e"
                                     "\xe3\x83\xbc\xe3\x83\x89\xe3\x83\xbc\xe3\x83\x8e\xe3\x83\xbc",
                             .pid = 7,
                             .rank = 99,
                             .comm_id = 0x77});
    frame(&w, &s, 1.0, START_NS, &f);
    gt_watch_frame_free(&f);
    frame(&w, &s, 3.0, START_NS + 2000000000ll, &f); /* with rates */
    static const int sizes[][2] = {{30, 80}, {10, 40}, {30, 100}, {24, 80}, {5, 20},
                                   {4, 30},  {1, 10},  {2, 200},  {6, 1}};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (int tty = 0; tty < 2; tty++) {
            int n;
            char *out = render_check(&f, sizes[i][0], sizes[i][1], tty, &n);
            if (sizes[i][0] >= 6) {
                /* 4 lines of header (verdict, rates, title, columns), then rows */
                size_t shown = (size_t)sizes[i][0] - 5;
                char want[64];
                snprintf(want, sizeof(want), "\xe2\x80\xa6 %zu more (use gdrtrace summary)",
                         f.nrows - shown);
                if (sizes[i][1] >= 40)
                    CHECK(strstr(out, want) != NULL, "%dx%d: no '%s' in:\n%s", sizes[i][0],
                          sizes[i][1], want, out);
                CHECK(n == sizes[i][0], "%dx%d: %d lines, want all of them", sizes[i][0],
                      sizes[i][1], n);
            }
            if (i == 0 && !tty) {
                CHECK(!strncmp(out, "all ERROR", 9), "the verdict line first: %.40s", out);
                CHECK(strstr(out, "\xe2\x80\xa6") != NULL, "30x80: nothing cut with '…'");
            }
            free(out);
        }
    /* no limit: every row, nothing cut */
    int n;
    char *out = render_check(&f, 0, 0, 0, &n);
    CHECK((size_t)n == f.nrows + 4, "no limit: %d lines for %zu rows", n, f.nrows);
    CHECK(!strstr(out, "more (use"), "no limit: rows left out");
    free(out);
    gt_watch_frame_free(&f);
    clear(&s);
    gt_watch_free(&w);
}

static void test_escape(void)
{
    struct gt_watch w = {0};
    struct gt_watch_frame f;
    struct set s = {.n = 0};
    add(&s, (struct fx_opts){.kind = FX_ERROR, .host = "n\033[2J\nFORGED", .pid = 5});
    frame(&w, &s, 1.0, START_NS, &f);
    int n;
    char *out = render_check(&f, 30, 100, 0, &n);
    CHECK(!strchr(out, '\033'), "an escape byte reached the output:\n%s", out);
    CHECK(strstr(out, "\nFORGED") == NULL, "a forged line:\n%s", out);
    free(out);
    gt_watch_frame_free(&f);
    clear(&s);
    gt_watch_free(&w);
}

int main(void)
{
    test_rates();
    test_order();
    test_fit();
    test_escape();
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("PASS: watch frames: rates, order, fit, escaping\n");
    return 0;
}
