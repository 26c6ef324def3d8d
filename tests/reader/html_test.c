/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html_test.c — `reader_html`: the page of `gdrtrace report` (tools/render/html.c)
 * without a browser.  Checks that
 *  - gt_html_escape() makes markup, quotes, control characters, bytes that
 *    are not UTF-8 and bidirectional overrides inert, and cuts at a character
 *    boundary;
 *  - natural host order puts node2 before node10;
 *  - a page written from recorders whose host, job, launcher and error text
 *    carry <script>, <img onerror>, quotes and a URL holds none of them as
 *    markup: no <script, <img, <iframe, src=, href=, http:, https:, //, and
 *    url( only to #fragments;
 *  - the grid has one cell per node x communicator, carrying the verdict
 *    the model gave (cell = gt_verdict_combine of the processes' verdicts),
 *    emulated cells and the banner marked;
 *  - above GT_HTML_UNPACKED_MAX communicators, packed columns never put two
 *    cells of a row in one column, and node-local communicators share one;
 *  - a process the plugin refused (no communicator) makes its node BYPASSED.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

#include "tools/lib/recfile.h"
#include "tests/reader/fixture.h"
#include "tools/lib/inputs.h"
#include "tools/render/html.h"
#include "tools/lib/model.h"

static int failures; /* tests/check.h counts here */
/* What gt_html_escape writes for s. */
static char *escaped(const char *s, size_t max_chars)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    gt_html_escape(f, s, max_chars);
    fclose(f);
    return buf;
}

static void test_escape(void)
{
    static const struct {
        const char *in;
        size_t max;
        const char *want;
    } cases[] = {
        {"<script>alert(\"x\")</script>", 0, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"},
        {"a'b&c", 0, "a&#39;b&amp;c"},
        {"\x1b[31mred\n", 0, "\\e[31mred\\n"}, /* terminal escapes made visible */
        {"bad\xff", 0, "bad\\xff"},            /* not UTF-8 */
        {"\xe2\x80\xae"
         "evil",
         0, "\\u{202e}evil"}, /* a bidirectional override */
        {"n\xc3\xa9"
         "ud-1",
         3,
         "n\xc3\xa9"
         "u&#8230;"},      /* cut after 3 characters, not bytes */
        {"abc", 3, "abc"}, /* exactly the limit: not cut */
        {"<<<<", 2, "&lt;&lt;&#8230;"},
        {"", 0, ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = escaped(cases[i].in, cases[i].max);
        CHECK(!strcmp(got, cases[i].want), "escape case %zu: got '%s', want '%s'", i, got,
              cases[i].want);
        free(got);
    }
    char *got = escaped(NULL, 0);
    CHECK(!strcmp(got, ""), "NULL gives '%s'", got);
    free(got);
}

static void test_natcmp(void)
{
    static const char *const sorted[] = {"gpu-a1", "gpu-a2",  "gpu-a10", "gpu-b1",
                                         "node",   "node01",  "node1",   "node2",
                                         "node10", "node10a", "node10b", "node100"};
    size_t n = sizeof(sorted) / sizeof(sorted[0]);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n; k++) {
            int c = gt_html_natcmp(sorted[i], sorted[k]);
            int want = (i > k) - (i < k);
            CHECK((c > 0) - (c < 0) == want, "natcmp(%s, %s) = %d, want %d", sorted[i], sorted[k],
                  c, want);
        }
}

/* ---- pages from fixture recorders ---------------------------------------- */

struct recs {
    struct gt_recfile r[128];
    size_t n;
};

static void add(struct recs *rs, int kind, const char *host, int pid, uint64_t comm,
                const char *setting, const char *job, const char *error_text)
{
    struct fx_opts o = {.kind = kind,
                        .host = host,
                        .pid = pid,
                        .rank = pid,
                        .comm_id = comm,
                        .setting = setting,
                        .job = job};
    size_t n;
    unsigned char *b = fx_build(&o, &n);
    if (error_text) /* the last error of comm slot 0, as a hostile writer would leave it */
        snprintf((char *)b + fx_off_comms() + offsetof(struct gtr_comm, error_last_text),
                 sizeof(((struct gtr_comm *)0)->error_last_text), "%s", error_text);
    char err[GT_ERRLEN];
    int rc = gt_recfile_parse_owned(b, n, host, &rs->r[rs->n], err, sizeof(err));
    CHECK(rc == 0, "fixture %s does not parse: %s", host, err);
    if (!rc)
        rs->n++;
}

static char *page(const struct gt_job *a, const struct gt_job *b)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    const char *paths[] = {"/tmp/<b>run</b>"};
    struct gt_html_run ra = {b ? "A" : NULL, paths, 1, a, 0};
    struct gt_html_run rb = {"B", NULL, 0, b, 1, gt_default_dir()};
    int rc = gt_html_write(f, &ra, b ? &rb : NULL, "test");
    fclose(f);
    CHECK(rc == 0, "gt_html_write: %d", rc);
    return buf;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Invariant 2 of html.h, on the markup of the page: every '<' of the page
 * opens a tag (text has none left), so each tag and the style sheet are
 * checked; the hostile strings may still read "src=" or "https://" as
 * escaped text, which is inert. */
static void no_fetch(const char *html, const char *what)
{
    static const char *const banned_tags[] = {"<script", "<img",   "<iframe", "<link",
                                              "<object", "<embed", "<base",   "<form",
                                              "<a ",     "<audio", "<video",  "<source"};
    static const char *const banned_in_tag[] = {
        "src=", "href=", "http:", "https:", "//", "data:", "action=", "xlink"};
    for (const char *p = html; (p = strchr(p, '<')); p++) {
        size_t l = strcspn(p, ">");
        char tag[4096];
        snprintf(tag, sizeof(tag), "%.*s", (int)(l < sizeof(tag) ? l : sizeof(tag) - 1), p);
        for (char *t = tag; *t; t++)
            *t = (char)(*t >= 'A' && *t <= 'Z' ? *t + 32 : *t);
        for (size_t i = 0; i < sizeof(banned_tags) / sizeof(banned_tags[0]); i++)
            CHECK(strncmp(tag, banned_tags[i], strlen(banned_tags[i])), "%s: a tag %s", what, tag);
        for (size_t i = 0; i < sizeof(banned_in_tag) / sizeof(banned_in_tag[0]); i++)
            CHECK(!strstr(tag, banned_in_tag[i]), "%s: '%s' in the tag %.80s", what,
                  banned_in_tag[i], tag);
        for (const char *q = tag; (q = strstr(q, " on")); q += 3) /* event handler attributes */
            CHECK(q[3 + strspn(q + 3, "abcdefghijklmnopqrstuvwxyz")] != '=', "%s: %.80s", what,
                  tag);
        for (const char *q = tag; (q = strstr(q, "url(")); q += 4)
            CHECK(q[4] == '#', "%s: url( to something else than a #fragment: %.40s", what, q);
    }
    const char *css = strstr(html, "<style>"), *end = css ? strstr(css, "</style>") : NULL;
    CHECK(css && end, "%s: no style sheet", what);
    if (!css || !end)
        return;
    size_t n = (size_t)(end - css);
    for (const char *q = css; (q = strstr(q, "url(")) && q < end; q += 4)
        CHECK(q[4] == '#', "%s: CSS url( to something else than a #fragment: %.40s", what, q);
    CHECK(!memmem(css, n, "@import", 7) && !memmem(css, n, "//", 2) && !memmem(css, n, "http", 4) &&
              !memmem(css, n, "@font-face", 10),
          "%s: the style sheet names something outside the page", what);
}

/* The data-verdict of the cell of host x comm label, or NULL. */
static const char *cell_verdict(const char *html, const char *host, const char *comm, char *out,
                                size_t n)
{
    char key[256];
    snprintf(key, sizeof(key), "data-node=\"%s\" data-comm=\"%s\" data-verdict=\"", host, comm);
    const char *p = strstr(html, key);
    if (!p)
        return NULL;
    p += strlen(key);
    size_t l = strcspn(p, "\"");
    snprintf(out, n, "%.*s", (int)(l < n ? l : n - 1), p);
    return out;
}

static void test_hostile_page(void)
{
    static struct recs rs;
    memset(&rs, 0, sizeof(rs));
    const char *evil_host = "<script>alert(1)</script>\"'";
    const char *evil_job = "</title><img src=x onerror=alert(2)>";
    const char *evil_err = "<iframe src=\"https://evil.example/\"></iframe> url(//x)";
    add(&rs, FX_DMABUF, "node10", 10, 0xa, NULL, evil_job, NULL);
    add(&rs, FX_DMABUF, "node2", 2, 0xa, NULL, evil_job, NULL);
    add(&rs, FX_FALLBACK, "node2", 3, 0xb, NULL, evil_job, NULL);
    add(&rs, FX_ERROR, evil_host, 4, 0xb, NULL, evil_job, evil_err);
    add(&rs, FX_PEERMEM, "node1", 5, 0xa, NULL, evil_job, NULL);
    add(&rs, FX_DMABUF, "node1", 6, 0xa, NULL, evil_job, NULL); /* with peermem: MIXED here */
    struct gt_job j;
    CHECK(gt_job_build(&j, rs.r, rs.n) == 0, "gt_job_build");
    char *html = page(&j, NULL);
    no_fetch(html, "hostile page");
    CHECK(!strstr(html, evil_host) && !strstr(html, evil_job) && !strstr(html, "<iframe"),
          "a hostile string reached the page as markup");
    CHECK(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;") != NULL,
          "the hostile host is not shown escaped");
    CHECK(strstr(html, "&lt;/title&gt;&lt;img src=x onerror=alert(2)&gt;") != NULL,
          "the hostile job is not shown escaped");
    CHECK(strstr(html, "&lt;b&gt;run&lt;/b&gt;") != NULL, "the path is not shown escaped");
    /* one cell per node x communicator: node1 0xa, node2 0xa and 0xb,
     * node10 0xa, the hostile host 0xb */
    CHECK(count(html, "<rect class=\"cell ") == 5, "%zu cells, want 5",
          count(html, "<rect class=\"cell "));
    CHECK(count(html, "<rect class=\"node ") == 4, "%zu node squares, want 4",
          count(html, "<rect class=\"node "));
    char v[64];
    const char *want[][3] = {
        {"node1", "0xa", "MIXED"},
        {"node2", "0xa", "DIRECT-DMABUF"},
        {"node2", "0xb", "FALLBACK"},
        {"node10", "0xa", "DIRECT-DMABUF"},
        {"&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;", "0xb", "ERROR"},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const char *got = cell_verdict(html, want[i][0], want[i][1], v, sizeof(v));
        CHECK(got && !strcmp(got, want[i][2]), "cell %s x %s: %s, want %s", want[i][0], want[i][1],
              got ? got : "(none)", want[i][2]);
    }
    /* rows in natural order: node1, node2, node10 (the hostile '<' sorts first) */
    const char *p1 = strstr(html, "data-node=\"node1\""), *p2 = strstr(html, "data-node=\"node2\""),
               *p10 = strstr(html, "data-node=\"node10\"");
    CHECK(p1 && p2 && p10 && p1 < p2 && p2 < p10, "rows not in natural order");
    CHECK(!strstr(html, "EMULATED RUN"), "a real run carries the emulated banner");
    free(html);

    /* the grid model itself: each cell is the model's verdicts combined */
    struct gt_html_grid g;
    CHECK(gt_html_grid_build(&j, &g) == 0, "grid");
    CHECK(g.ncells == 5 && g.nrows == 4 && g.ncols == 2 && !g.packed,
          "grid %zu cells %zu rows %zu cols packed %d", g.ncells, g.nrows, g.ncols, g.packed);
    for (size_t i = 0; i < g.ncells; i++) {
        int seen[GT_V_COUNT] = {0};
        const struct gt_ccomm *x = &j.comms[g.cells[i].comm];
        for (size_t k = 0; k < j.nranks; k++)
            if (j.ranks[k].comm_id == x->comm_id &&
                !strcmp(j.recs[j.ranks[k].rec].id.host, j.nodes[g.rows[g.cells[i].row]].host))
                seen[j.ranks[k].verdict]++;
        CHECK(g.cells[i].code == gt_verdict_combine_counts(seen), "cell %zu: %s", i,
              gt_verdict_name(g.cells[i].code));
    }
    gt_html_grid_free(&g);
    gt_job_free(&j);
    for (size_t i = 0; i < rs.n; i++)
        gt_recfile_free(&rs.r[i]);
}

static void test_emulated_ab(void)
{
    static struct recs a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    add(&a, FX_DMABUF, "gpu1", 1, 0xc, NULL, "jobA", NULL);
    add(&b, FX_DMABUF, "gpu1", 1, 0xc, "GDRTRACE_GPUMEM=1", "jobB", NULL);
    struct gt_job ja, jb;
    CHECK(gt_job_build(&ja, a.r, a.n) == 0 && gt_job_build(&jb, b.r, b.n) == 0, "jobs");
    char *html = page(&ja, &jb);
    no_fetch(html, "A/B page");
    CHECK(count(html, "EMULATED RUN (B)") == 1, "no banner for the emulated B");
    CHECK(count(html, "<rect class=\"cell v0 emu\"") == 1 &&
              count(html, "<rect class=\"cell v0\"") == 1,
          "emulated cell not hatched, or the real one is");
    CHECK(count(html, "data-emulated=\"1\"") == 3, "%zu data-emulated (banner, node, cell)",
          count(html, "data-emulated=\"1\""));
    CHECK(count(html, "<path class=\"run-a\" data-run=\"A\"") >= 1 &&
              count(html, "<path class=\"run-b\" data-run=\"B\"") >= 1,
          "no A/B overlay of the latency");
    CHECK(strstr(html, "input(s) could not be read") != NULL, "the unreadable input of B");
    free(html);
    gt_job_free(&ja);
    gt_job_free(&jb);
    gt_recfile_free(&a.r[0]);
    gt_recfile_free(&b.r[0]);
}

/* 60 nodes, each with its own communicator, and one communicator over nodes
 * 0 and 1: 61 communicators, more than GT_HTML_UNPACKED_MAX, packed. */
static void test_packing(void)
{
    static struct recs rs;
    memset(&rs, 0, sizeof(rs));
    char host[62][16];
    for (int i = 0; i < 60; i++) {
        snprintf(host[i], sizeof(host[i]), "n%d", i);
        add(&rs, FX_DMABUF, host[i], 100 + i, 0x1000 + (uint64_t)i, NULL, NULL, NULL);
    }
    add(&rs, FX_HOST, "n0", 200, 0xf00d, NULL, NULL, NULL);
    add(&rs, FX_HOST, "n1", 201, 0xf00d, NULL, NULL, NULL);
    struct gt_job j;
    CHECK(gt_job_build(&j, rs.r, rs.n) == 0, "job");
    struct gt_html_grid g;
    CHECK(gt_html_grid_build(&j, &g) == 0, "grid");
    CHECK(g.packed && g.ncols == 2 && g.ncells == 62, "packed %d, %zu columns, %zu cells", g.packed,
          g.ncols, g.ncells);
    for (size_t i = 1; i < g.ncells; i++)
        CHECK(g.cells[i].row != g.cells[i - 1].row ||
                  g.col[g.cells[i].comm] != g.col[g.cells[i - 1].comm],
              "two cells of row %zu in column %zu", g.cells[i].row, g.col[g.cells[i].comm]);
    for (size_t c = 0; c < j.ncomm; c++)
        if (j.comms[c].comm_id == 0xf00d)
            CHECK(g.col[c] == 0, "the communicator of two nodes is not the first column");
    gt_html_grid_free(&g);
    char *html = page(&j, NULL);
    CHECK(count(html, "<rect class=\"cell ") == 62, "%zu cells drawn",
          count(html, "<rect class=\"cell "));
    CHECK(strstr(html, "#1 &#215;59") && strstr(html, "#2 &#215;2<"),
          "the packed columns' headers");
    free(html);
    gt_job_free(&j);
    for (size_t i = 0; i < rs.n; i++)
        gt_recfile_free(&rs.r[i]);
}

/* A process the plugin refused has no communicator: its node's square says
 * BYPASSED (the model's node verdict), the fates table says why. */
static void test_refused(void)
{
    static struct recs rs;
    memset(&rs, 0, sizeof(rs));
    struct fx_opts o = {.kind = FX_NODATA, .host = "gpu7", .pid = 77, .fate = FX_FATE_REFUSED};
    size_t n;
    unsigned char *b = fx_build(&o, &n);
    char err[GT_ERRLEN];
    CHECK(gt_recfile_parse_owned(b, n, "refused", &rs.r[0], err, sizeof(err)) == 0, "%s", err);
    rs.n = 1;
    struct gt_job j;
    CHECK(gt_job_build(&j, rs.r, rs.n) == 0, "job");
    char *html = page(&j, NULL);
    CHECK(count(html, "<rect class=\"cell ") == 0, "cells for a process without a communicator");
    CHECK(strstr(html, "<rect class=\"node v7\"") &&
              strstr(html, "data-node=\"gpu7\" data-verdict=\"BYPASSED\""),
          "the refused node's square is not BYPASSED");
    CHECK(strstr(html, "the plugin refused this process") != NULL, "no fates table");
    no_fetch(html, "refused page");
    free(html);
    gt_job_free(&j);
    gt_recfile_free(&rs.r[0]);
}

int main(void)
{
    test_escape();
    test_natcmp();
    test_hostile_page();
    test_emulated_ab();
    test_packing();
    test_refused();
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("reader_html: escaping, natural order, grid cells and packing, nothing fetched\n");
    return 0;
}
