/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html.c — the page of `gdrtrace report` (html.h): the grid of nodes x
 * communicators coloured by the model's verdicts, the latency histograms per
 * operation (one run, or the overlay of A and B), and the tables behind them.
 * The invariants (escaping, nothing fetched, verdicts from the model,
 * deterministic bytes) are numbered in html.h.
 *
 * Layout of the grid, sized so that a 1,000-node canary stays one screen
 * wide: rows are nodes in natural host order (node2 before node10), the
 * first column the node's own verdict (struct gt_node), then one column per
 * communicator; cells shrink with the row count (20, 16, 12, 9 px) and rows wrap
 * into side-by-side bands; above GT_HTML_UNPACKED_MAX communicators, those on
 * disjoint nodes share a column (a node-local communicator per node: one
 * column).  A cell is drawn only where the node has processes in the
 * communicator.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/esc.h"
#include "tools/lib/hist.h"
#include "tools/render/html.h"
#include "tools/render/html_coll.h"
#include "tools/render/html_host.h"
#include "tools/render/html_latency.h"

/* ---- escaping and natural order ----------------------------------------- */

void gt_html_escape(FILE *f, const char *s, size_t max_chars)
{
    if (!s)
        return;
    /* gt_esc first: a control character or a byte that is not UTF-8 becomes
     * the same visible escape the text outputs print, so the page shows what
     * the terminal shows, and the text handed on is valid UTF-8. */
    const unsigned char *p = (const unsigned char *)gt_esc(s);
    size_t chars = 0;
    for (; *p; p++) {
        if ((*p & 0xC0) != 0x80) { /* the first byte of a character */
            if (max_chars && chars == max_chars) {
                fputs("&#8230;", f);
                return;
            }
            chars++;
        }
        switch (*p) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*p, f);
        }
    }
}

static void esc(FILE *f, const char *s)
{
    gt_html_escape(f, s, 0);
}

static int isdig(char c)
{
    return c >= '0' && c <= '9';
}

int gt_html_natcmp(const char *a, const char *b)
{
    const char *x = a, *y = b;
    while (*x && *y) {
        if (isdig(*x) && isdig(*y)) {
            /* compare the numbers: leading zeros skipped, then length, then digits */
            while (*x == '0' && isdig(x[1]))
                x++;
            while (*y == '0' && isdig(y[1]))
                y++;
            size_t lx = 0, ly = 0;
            while (isdig(x[lx]))
                lx++;
            while (isdig(y[ly]))
                ly++;
            if (lx != ly)
                return lx < ly ? -1 : 1;
            int c = strncmp(x, y, lx);
            if (c)
                return c;
            x += lx;
            y += ly;
            continue;
        }
        if (*x != *y)
            return (unsigned char)*x < (unsigned char)*y ? -1 : 1;
        x++;
        y++;
    }
    if (*x || *y)
        return *x ? 1 : -1;
    return strcmp(a, b); /* node01 and node1: equal as numbers, still ordered */
}

/* ---- the grid ------------------------------------------------------------ */

static const struct gt_job *sort_job;

static int row_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = gt_html_natcmp(sort_job->nodes[x].host, sort_job->nodes[y].host);
    return c ? c : (x > y) - (x < y);
}

struct hkey {
    const char *host;
    size_t row;
};

static int hkey_cmp(const void *a, const void *b)
{
    return strcmp(((const struct hkey *)a)->host, ((const struct hkey *)b)->host);
}

/* The model's communicator key (model.c, ckey): NCCL's commId when there is
 * one, else the process (a record standing for itself, an overflow slot). */
struct ckey {
    int has;
    uint64_t id; /* comm_id when has == 1, else the recorder index */
    size_t comm;
};

static int ckey_cmp(const void *a, const void *b)
{
    const struct ckey *x = a, *y = b;
    if ((x->has == 1) != (y->has == 1))
        return x->has == 1 ? -1 : 1;
    if (x->has != y->has)
        return x->has < y->has ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

struct tri {
    size_t row, comm;
    int code, emulated;
};

static int tri_cmp(const void *a, const void *b)
{
    const struct tri *x = a, *y = b;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    return (x->comm > y->comm) - (x->comm < y->comm);
}

static size_t row_of_host(const struct hkey *hk, size_t n, const char *host)
{
    struct hkey k = {host, 0};
    const struct hkey *h = bsearch(&k, hk, n, sizeof(*hk), hkey_cmp);
    return h ? h->row : SIZE_MAX;
}

void gt_html_grid_free(struct gt_html_grid *g)
{
    free(g->rows);
    free(g->row_emulated);
    free(g->cells);
    free(g->col);
    free(g->ncomm_col);
    memset(g, 0, sizeof(*g));
}

static const struct gt_html_grid *sort_grid;
static const size_t *sort_ncell;

/* Packing order: communicators with more cells first, then the model's. */
static int pack_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (sort_ncell[x] != sort_ncell[y])
        return sort_ncell[x] > sort_ncell[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* Greedy first fit: each communicator goes to the first column none of whose
 * rows it occupies.  Cost: communicators x columns tried x rows of one. */
static int pack_columns(const struct gt_job *j, struct gt_html_grid *g)
{
    size_t nc = j->ncomm, words = (g->nrows + 63) / 64;
    size_t *ncell = calloc(nc + 1, sizeof(*ncell)), *start = calloc(nc + 1, sizeof(*start));
    size_t *order = malloc((nc ? nc : 1) * sizeof(*order));
    size_t *byc = malloc((g->ncells ? g->ncells : 1) * sizeof(*byc));
    uint64_t *occ = NULL;
    size_t ncols = 0, cap = 0;
    int rc = ENOMEM;
    if (!ncell || !start || !order || !byc)
        goto out;
    for (size_t i = 0; i < g->ncells; i++)
        ncell[g->cells[i].comm]++;
    for (size_t c = 0; c < nc; c++)
        start[c + 1] = start[c] + ncell[c];
    {
        size_t *fill = calloc(nc + 1, sizeof(*fill));
        if (!fill)
            goto out;
        for (size_t i = 0; i < g->ncells; i++) {
            size_t c = g->cells[i].comm;
            byc[start[c] + fill[c]++] = i;
        }
        free(fill);
    }
    for (size_t c = 0; c < nc; c++)
        order[c] = c;
    sort_ncell = ncell;
    qsort(order, nc, sizeof(*order), pack_cmp);
    for (size_t k = 0; k < nc; k++) {
        size_t c = order[k], col = 0;
        for (; col < ncols; col++) {
            const uint64_t *o = occ + col * words;
            size_t i = start[c];
            for (; i < start[c + 1]; i++) {
                size_t r = g->cells[byc[i]].row;
                if (o[r / 64] >> (r % 64) & 1)
                    break;
            }
            if (i == start[c + 1])
                break;
        }
        if (col == ncols) {
            if (ncols == cap) {
                size_t ncap = cap ? 2 * cap : 8;
                uint64_t *no = realloc(occ, ncap * (words ? words : 1) * sizeof(*no));
                if (!no)
                    goto out;
                occ = no;
                cap = ncap;
            }
            memset(occ + ncols * words, 0, words * sizeof(*occ));
            ncols++;
        }
        for (size_t i = start[c]; i < start[c + 1]; i++) {
            size_t r = g->cells[byc[i]].row;
            occ[col * words + r / 64] |= (uint64_t)1 << (r % 64);
        }
        g->col[c] = col;
    }
    g->ncols = ncols;
    rc = 0;
out:
    free(ncell);
    free(start);
    free(order);
    free(byc);
    free(occ);
    return rc;
}

static int cell_cmp(const void *a, const void *b)
{
    const struct gt_html_cell *x = a, *y = b;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    size_t cx = sort_grid->col[x->comm], cy = sort_grid->col[y->comm];
    if (cx != cy)
        return cx < cy ? -1 : 1;
    return (x->comm > y->comm) - (x->comm < y->comm);
}

int gt_html_grid_build(const struct gt_job *j, struct gt_html_grid *g)
{
    memset(g, 0, sizeof(*g));
    size_t nn = j->nnodes, nc = j->ncomm;
    struct hkey *hk = malloc((nn ? nn : 1) * sizeof(*hk));
    struct ckey *ck = malloc((nc ? nc : 1) * sizeof(*ck));
    struct tri *t = malloc((j->nranks ? j->nranks : 1) * sizeof(*t));
    g->rows = malloc((nn ? nn : 1) * sizeof(*g->rows));
    g->row_emulated = calloc(nn ? nn : 1, sizeof(*g->row_emulated));
    g->cells = malloc((j->nranks ? j->nranks : 1) * sizeof(*g->cells));
    g->col = calloc(nc ? nc : 1, sizeof(*g->col));
    if (!hk || !ck || !t || !g->rows || !g->row_emulated || !g->cells || !g->col)
        goto oom;
    /* rows: the model's nodes, in natural order of their host names */
    for (size_t i = 0; i < nn; i++)
        g->rows[i] = i;
    sort_job = j;
    qsort(g->rows, nn, sizeof(*g->rows), row_cmp);
    g->nrows = nn;
    for (size_t r = 0; r < nn; r++)
        hk[r] = (struct hkey){j->nodes[g->rows[r]].host, r};
    qsort(hk, nn, sizeof(*hk), hkey_cmp);
    for (size_t i = 0; i < j->nrec; i++) {
        size_t r = row_of_host(hk, nn, j->recs[i].id.host);
        if (r != SIZE_MAX && j->recs[i].emulated)
            g->row_emulated[r] = 1;
    }
    /* each process's digest of each communicator, placed by (row, comm) */
    for (size_t c = 0; c < nc; c++) {
        const struct gt_ccomm *x = &j->comms[c];
        uint64_t id = x->has_comm_id == 1 ? x->comm_id : (x->nmembers ? x->members[0].rec : 0);
        ck[c] = (struct ckey){x->has_comm_id, id, c};
    }
    qsort(ck, nc, sizeof(*ck), ckey_cmp);
    size_t nt = 0;
    for (size_t i = 0; i < j->nranks; i++) {
        const struct gt_rank_comm *d = &j->ranks[i];
        struct ckey k = {d->has_comm_id, d->has_comm_id == 1 ? d->comm_id : d->rec, 0};
        const struct ckey *hit = bsearch(&k, ck, nc, sizeof(*ck), ckey_cmp);
        size_t r = d->rec < j->nrec ? row_of_host(hk, nn, j->recs[d->rec].id.host) : SIZE_MAX;
        if (!hit || r == SIZE_MAX)
            continue; /* not in the model's view: nothing to draw */
        t[nt++] = (struct tri){r, hit->comm, d->verdict, j->recs[d->rec].emulated};
    }
    qsort(t, nt, sizeof(*t), tri_cmp);
    for (size_t i = 0; i < nt;) {
        int seen[GT_V_COUNT] = {0}, emu = 0, np = 0;
        size_t k = i;
        for (; k < nt && t[k].row == t[i].row && t[k].comm == t[i].comm; k++) {
            if (t[k].code >= 0 && t[k].code < GT_V_COUNT)
                seen[t[k].code]++;
            emu |= t[k].emulated;
            np++;
        }
        g->cells[g->ncells++] =
            (struct gt_html_cell){t[i].row, t[i].comm, gt_verdict_combine_counts(seen), emu, np};
        i = k;
    }
    /* columns */
    if (nc > GT_HTML_UNPACKED_MAX) {
        g->packed = 1;
        if (pack_columns(j, g))
            goto oom;
    } else {
        for (size_t c = 0; c < nc; c++)
            g->col[c] = c;
        g->ncols = nc;
    }
    g->ncomm_col = calloc(g->ncols ? g->ncols : 1, sizeof(*g->ncomm_col));
    if (!g->ncomm_col)
        goto oom;
    for (size_t c = 0; c < nc; c++)
        g->ncomm_col[g->col[c]]++;
    sort_grid = g;
    qsort(g->cells, g->ncells, sizeof(*g->cells), cell_cmp);
    free(hk);
    free(ck);
    free(t);
    return 0;
oom:
    free(hk);
    free(ck);
    free(t);
    gt_html_grid_free(g);
    return ENOMEM;
}

/* ---- the page -------------------------------------------------------------- */

static const char *const vcolour[GT_V_COUNT] = {
    "#1a9850", /* DIRECT-DMABUF: the goal */
    "#4575b4", /* DIRECT-PEERMEM: direct, by the legacy path */
    "#8c6bb1", /* HOST-STAGED: no GPU Direct */
    "#e6c229", /* MIXED */
    "#f46d43", /* FALLBACK */
    "#c51b1b", /* ERROR */
    "#d4d4d4", /* NO-DATA */
    "#4d4d4d", /* BYPASSED */
};
_Static_assert(GT_V_COUNT == 8, "a colour per verdict");

static const char *const vmeaning[GT_V_COUNT] = {
    "GPU memory registered by DMA-BUF only",
    "GPU memory registered by peermem only",
    "no GPU memory registered: NCCL staged through host memory",
    "DMA-BUF and peermem both",
    "a DMA-BUF registration fell back",
    "a registration failed or an error was recorded",
    "nothing registered, no fallback, no error",
    "the plugin refused the process: NCCL's traffic went elsewhere",
};

/* Verdicts a canary must look at first. */
static int bad(int code)
{
    return code == GT_V_ERROR || code == GT_V_FALLBACK || code == GT_V_MIXED ||
           code == GT_V_BYPASSED;
}

static void css(FILE *f)
{
    fputs("<style>\n"
          "body{font:14px/1.4 system-ui,sans-serif;margin:16px 24px;color:#222;background:#fff}\n"
          "h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:24px 0 8px;"
          "border-bottom:1px solid #ddd}h3{font-size:15px;margin:14px 0 6px}\n"
          ".meta{color:#555}.mono{font-family:ui-monospace,monospace}\n"
          ".badge{display:inline-block;padding:1px "
          "8px;border-radius:3px;color:#fff;white-space:nowrap;"
          "font-weight:600;font-family:ui-monospace,monospace}\n"
          ".badge.b3,.badge.b6{color:#222}\n"
          ".banner{padding:10px 14px;margin:10px 0;border:2px solid;font-weight:600}\n"
          ".banner.emu{border-color:#8a6d00;color:#4a3a00;background:repeating-linear-gradient("
          "45deg,#fff3c4 0 10px,#ffe48a 10px 20px)}\n"
          ".banner.warn{border-color:#c51b1b;color:#7a0d0d;background:#fde8e8}\n"
          ".legend{display:flex;flex-wrap:wrap;gap:4px 18px;margin:8px 0;padding:0;"
          "list-style:none}\n"
          ".legend li{display:flex;align-items:center;gap:6px}\n"
          ".sw{display:inline-block;width:14px;height:14px;border:1px solid #999}\n"
          ".sw.emu{background:repeating-linear-gradient(45deg,#888 0 2px,#fff 2px 5px)}\n"
          ".scroll{overflow:auto;max-width:100%}\n"
          "svg text{font-family:ui-monospace,monospace;fill:#333}\n"
          "svg .axis{stroke:#999;stroke-width:1}svg .tick{fill:#555}\n"
          "svg .cell,svg .node{stroke:#fff;stroke-width:0.5}\n"
          "svg .run-a{fill:#3b6fb6;fill-opacity:0.45;stroke:#1f4f94;stroke-width:1.2}\n"
          "svg .run-b{fill:#f28e2b;fill-opacity:0.40;stroke:#c0610c;stroke-width:1.2}\n"
          "svg .run-1{fill:#3b6fb6;fill-opacity:0.6;stroke:#1f4f94;stroke-width:1}\n"
          "svg .mark{stroke-width:1.2;stroke-dasharray:4 3}\n"
          "table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;"
          "padding:2px 8px;text-align:left;vertical-align:top}\n"
          "th{background:#f4f4f4}td.num{text-align:right;font-family:ui-monospace,monospace}\n"
          ".why{max-width:70em;font-size:12px}\n"
          ".hists{display:flex;flex-wrap:wrap;gap:0 28px}figure.hist{margin:8px 0}\n"
          "footer{margin-top:28px;color:#777;font-size:12px}\n",
          f);
    for (int v = 0; v < GT_V_COUNT; v++) {
        fprintf(f, "svg .v%d{fill:%s}.b%d{background:%s}\n", v, vcolour[v], v, vcolour[v]);
        /* emulated cells: the verdict's colour hatched with white
         * (patterns defined once, in the page's first svg) */
        fprintf(f, "svg .emu.v%d{fill:url(#hatch%d)}\n", v, v);
    }
    fputs("</style>\n", f);
}

static void defs(FILE *f)
{
    fputs("<svg class=\"defs\" width=\"0\" height=\"0\" style=\"position:absolute\" "
          "aria-hidden=\"true\"><defs>\n",
          f);
    for (int v = 0; v < GT_V_COUNT; v++)
        fprintf(f,
                "<pattern id=\"hatch%d\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\" "
                "patternTransform=\"rotate(45)\"><rect width=\"4\" height=\"4\" "
                "fill=\"%s\"/><rect width=\"1.6\" height=\"4\" fill=\"#fff\" "
                "fill-opacity=\"0.85\"/></pattern>\n",
                v, vcolour[v]);
    fputs("</defs></svg>\n", f);
}

static void badge(FILE *f, int code, int emulated)
{
    fprintf(f, "<span class=\"badge b%d\">", code >= 0 && code < GT_V_COUNT ? code : GT_V_NO_DATA);
    esc(f, gt_verdict_label(code, emulated));
    fputs("</span>", f);
}

static void paths_text(FILE *f, const struct gt_html_run *r)
{
    if (!r->npaths) {
        fputs("the recorders in <span class=\"mono\">", f);
        esc(f, r->dir ? r->dir : "$GDRTRACE_DIR");
        fputs("</span>", f);
        return;
    }
    for (int i = 0; i < r->npaths; i++) {
        fputs(i ? ", <span class=\"mono\">" : "<span class=\"mono\">", f);
        esc(f, r->paths[i]);
        fputs("</span>", f);
    }
}

/* "job42, job43 and 2 more": the distinct job ids (recorders are in job order). */
static void jobs_text(FILE *f, const struct gt_job *j)
{
    int shown = 0;
    for (size_t i = 0; i < j->nrec; i++) {
        if (i && !strcmp(j->recs[i].id.job, j->recs[i - 1].id.job))
            continue;
        if (shown == 3) {
            fprintf(f, " and %d more", j->njobs - 3);
            return;
        }
        fputs(shown ? ", " : "", f);
        if (j->recs[i].id.job[0])
            esc(f, j->recs[i].id.job);
        else
            fputs("(no job id)", f);
        shown++;
    }
}

static void run_header(FILE *f, const struct gt_html_run *r)
{
    const struct gt_job *j = r->job;
    fputs("<p class=\"meta\">", f);
    if (r->name)
        fprintf(f, "<b>Run %s</b> (%s): ", r->name,
                !strcmp(r->name, "A") ? "baseline" : "compared");
    fputs("read from ", f);
    paths_text(f, r);
    fprintf(f, ".<br>%zu process(es) on %d node(s), %zu communicator(s); job ", j->nrec, j->nhosts,
            j->ncomm);
    jobs_text(f, j);
    fputs(".</p>\n<p>Verdict", f);
    if (r->name)
        fprintf(f, " of %s", r->name);
    fputs(": ", f);
    badge(f, j->overall.code, j->overall.emulated);
    fputs(" <span class=\"why\">", f);
    esc(f, j->overall.why);
    fputs("</span></p>\n", f);
    if (j->overall.emulated) {
        fputs("<div class=\"banner emu\" role=\"alert\" data-emulated=\"1\">EMULATED RUN", f);
        if (r->name)
            fprintf(f, " (%s)", r->name);
        fputs(": " GT_EMULATED_TEXT ". This is the GPU-memory validation mode "
              "(GDRTRACE_GPUMEM=1): no verdict here is evidence of GPUDirect RDMA; "
              "hatched cells are emulated.</div>\n",
              f);
    }
    if (r->nbad)
        fprintf(f,
                "<div class=\"banner warn\" role=\"alert\">%d input(s) could not be read "
                "(gdrtrace said why on its standard error): this page covers the rest.</div>\n",
                r->nbad);
}

static void legend(FILE *f, const struct gt_html_grid *g, int any_emulated)
{
    size_t count[GT_V_COUNT] = {0};
    for (size_t i = 0; i < g->ncells; i++)
        if (g->cells[i].code >= 0 && g->cells[i].code < GT_V_COUNT)
            count[g->cells[i].code]++;
    fputs("<ul class=\"legend\">\n", f);
    for (int v = 0; v < GT_V_COUNT; v++)
        fprintf(f,
                "<li data-verdict=\"%s\" data-cells=\"%zu\"><span class=\"sw b%d\"></span>"
                "<b>%s</b> %s: %zu cell(s)</li>\n",
                gt_verdict_name(v), count[v], v, gt_verdict_name(v), vmeaning[v], count[v]);
    if (any_emulated)
        fputs("<li><span class=\"sw emu\"></span><b>hatched</b> emulated: GPU-memory validation "
              "mode, no NIC</li>\n",
              f);
    fputs("</ul>\n", f);
}

/* A communicator's header text: its label, or "#k xN" for a packed column. */
static void col_label(FILE *f, const struct gt_job *j, const struct gt_html_grid *g, size_t col,
                      size_t max_chars)
{
    if (g->ncomm_col[col] == 1) {
        for (size_t c = 0; c < j->ncomm; c++)
            if (g->col[c] == col) {
                gt_html_escape(f, j->comms[c].label, max_chars);
                return;
            }
    }
    fprintf(f, "#%zu &#215;%zu", col + 1, g->ncomm_col[col]);
}

static void grid_svg(FILE *f, const struct gt_job *j, const struct gt_html_grid *g, const char *run)
{
    size_t nr = g->nrows, ncols = g->ncols;
    int cs = nr <= 16 ? 20 : nr <= 64 ? 16 : nr <= 256 ? 12 : 9; /* cell pitch, px */
    int font = cs >= 20 ? 12 : cs >= 16 ? 11 : cs >= 12 ? 9 : 7;
    double cw = font * 0.62; /* a monospace character's width */
    size_t maxhost = 4;
    for (size_t i = 0; i < j->nnodes; i++) {
        size_t l = strlen(j->nodes[i].host);
        if (l > maxhost)
            maxhost = l;
    }
    if (maxhost > 24)
        maxhost = 24;
    int lw = (int)(maxhost * cw) + 8;
    size_t maxcol = 6;
    for (size_t c = 0; c < j->ncomm; c++) {
        size_t l = g->packed ? 10 : strlen(j->comms[c].label);
        if (l > maxcol)
            maxcol = l;
    }
    if (maxcol > 20)
        maxcol = 20;
    int hh = (int)(maxcol * cw) + 12;   /* header: rotated column labels */
    int x0 = lw, xc = lw + cs + 6;      /* node column, communicator columns */
    int bw = xc + (int)ncols * cs + 22; /* a band's width */
    size_t maxbands = bw < 1360 ? (size_t)(1360 / bw) : 1;
    size_t rpb = (nr + maxbands - 1) / maxbands; /* rows per band */
    size_t minrows = nr < 32 ? nr : 32;
    if (rpb < minrows)
        rpb = minrows;
    if (!rpb)
        rpb = 1;
    size_t nb = (nr + rpb - 1) / rpb;
    if (!nb)
        nb = 1;
    fprintf(f,
            "<div class=\"scroll\"><svg class=\"grid\" "
            "width=\"%zu\" height=\"%zu\" data-rows=\"%zu\" data-columns=\"%zu\" "
            "data-cells=\"%zu\"%s%s%s role=\"img\" aria-label=\"nodes by communicators\">\n",
            nb * (size_t)bw, (size_t)hh + rpb * (size_t)cs + 4, nr, ncols, g->ncells,
            run ? " data-run=\"" : "", run ? run : "", run ? "\"" : "");
    for (size_t b = 0; b < nb; b++) {
        int bx = (int)(b * (size_t)bw);
        /* header: the node column, then one rotated label per column */
        fprintf(f,
                "<text x=\"%d\" y=\"%d\" font-size=\"%d\" transform=\"rotate(-90 %d %d)\">"
                "node</text>\n",
                bx + x0 + cs / 2 + font / 3, hh - 4, font, bx + x0 + cs / 2 + font / 3, hh - 4);
        for (size_t col = 0; col < ncols; col++) {
            int tx = bx + xc + (int)col * cs + cs / 2 + font / 3;
            fprintf(f,
                    "<text class=\"col\" x=\"%d\" y=\"%d\" font-size=\"%d\" "
                    "transform=\"rotate(-90 %d %d)\">",
                    tx, hh - 4, font, tx, hh - 4);
            col_label(f, j, g, col, maxcol);
            fputs("</text>\n", f);
        }
    }
    size_t ci = 0;
    for (size_t r = 0; r < nr; r++) {
        const struct gt_node *nd = &j->nodes[g->rows[r]];
        int bx = (int)((r / rpb) * (size_t)bw), y = hh + (int)((r % rpb) * (size_t)cs);
        fprintf(f, "<text class=\"host\" x=\"%d\" y=\"%d\" font-size=\"%d\">", bx + 2,
                y + cs - (cs - font) / 2 - 2, font);
        gt_html_escape(f, nd->host, maxhost);
        fputs("<title>", f);
        esc(f, nd->host);
        fputs("</title></text>\n", f);
        int emu = g->row_emulated[r];
        fprintf(f,
                "<rect class=\"node v%d%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                "data-node=\"",
                nd->code, emu ? " emu" : "", bx + x0, y, cs - 1, cs - 1);
        esc(f, nd->host);
        fprintf(f, "\" data-verdict=\"%s\"%s><title>", gt_verdict_name(nd->code),
                emu ? " data-emulated=\"1\"" : "");
        esc(f, nd->host);
        fputs(": ", f);
        esc(f, gt_verdict_label(nd->code, emu));
        fprintf(f, " (the node: %d process(es), %d communicator(s))</title></rect>\n", nd->nproc,
                nd->ncomm);
        for (; ci < g->ncells && g->cells[ci].row == r; ci++) {
            const struct gt_html_cell *c = &g->cells[ci];
            const struct gt_ccomm *x = &j->comms[c->comm];
            fprintf(f,
                    "<rect class=\"cell v%d%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                    "data-node=\"",
                    c->code, c->emulated ? " emu" : "", bx + xc + (int)g->col[c->comm] * cs, y,
                    cs - 1, cs - 1);
            esc(f, nd->host);
            fputs("\" data-comm=\"", f);
            esc(f, x->label);
            fprintf(f, "\" data-verdict=\"%s\"%s data-processes=\"%d\"><title>",
                    gt_verdict_name(c->code), c->emulated ? " data-emulated=\"1\"" : "", c->nproc);
            esc(f, nd->host);
            fputs(" &#215; ", f);
            esc(f, x->label);
            fputs(": ", f);
            esc(f, gt_verdict_label(c->code, c->emulated));
            fprintf(f,
                    " (%d process(es) here; the communicator: %s on %d node(s))</title></rect>\n",
                    c->nproc, gt_verdict_name(x->v.code), x->nhosts);
        }
    }
    fputs("</svg></div>\n", f);
}

/* Nodes whose verdict is ERROR, FALLBACK, MIXED or BYPASSED, with the cells
 * that made it so: what to open first on a large job. */
static void attention(FILE *f, const struct gt_job *j, const struct gt_html_grid *g)
{
    size_t n = 0, shown = 0, ci = 0;
    for (size_t r = 0; r < g->nrows; r++)
        n += bad(j->nodes[g->rows[r]].code);
    if (!n) {
        fputs("<p>No node is ERROR, FALLBACK, MIXED or BYPASSED.</p>\n", f);
        return;
    }
    fprintf(f,
            "<h3>Nodes to look at first (%zu)</h3>\n<table class=\"attention\"><tr><th>node</th>"
            "<th>verdict</th><th>communicators with that verdict here</th></tr>\n",
            n);
    for (size_t r = 0; r < g->nrows; r++) {
        const struct gt_node *nd = &j->nodes[g->rows[r]];
        size_t first = ci;
        while (ci < g->ncells && g->cells[ci].row == r)
            ci++;
        if (!bad(nd->code) || shown == 200)
            continue;
        shown++;
        fputs("<tr><td class=\"mono\">", f);
        esc(f, nd->host);
        fputs("</td><td>", f);
        badge(f, nd->code, g->row_emulated[r]);
        fputs("</td><td class=\"mono\">", f);
        int k = 0;
        for (size_t i = first; i < ci; i++) {
            if (g->cells[i].code != nd->code)
                continue;
            if (k++ == 8) {
                fputs(" &#8230;", f);
                break;
            }
            fputs(k > 1 ? ", " : "", f);
            esc(f, j->comms[g->cells[i].comm].label);
        }
        if (!k)
            fputs("(a process: see below)", f);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (shown < n)
        fprintf(f, "<p>&#8230; and %zu more node(s).</p>\n", n - shown);
}

static void comm_table(FILE *f, const struct gt_job *j, const struct gt_html_grid *g)
{
    fprintf(f, "<details%s><summary>Communicators (%zu)%s</summary>\n",
            j->ncomm <= 32 ? " open" : "", j->ncomm,
            g->packed ? ": column # of each (communicators on disjoint nodes share one)" : "");
    fputs("<table class=\"comms\"><tr><th>column</th><th>communicator</th><th>nodes</th>"
          "<th>processes</th><th>verdict</th><th>evidence</th></tr>\n",
          f);
    for (size_t c = 0; c < j->ncomm; c++) {
        const struct gt_ccomm *x = &j->comms[c];
        fprintf(f, "<tr><td class=\"num\">%zu</td><td class=\"mono\">", g->col[c] + 1);
        esc(f, x->label);
        fprintf(f, "</td><td class=\"num\">%d</td><td class=\"num\">%zu</td><td>", x->nhosts,
                x->nprocs);
        badge(f, x->v.code, x->v.emulated);
        fputs("</td><td class=\"why\">", f);
        esc(f, x->v.why);
        fputs("</td></tr>\n", f);
    }
    fputs("</table></details>\n", f);
    if (!j->nfates)
        return;
    fprintf(f,
            "<h3>Processes the plugin refused or that died inside a call (%zu)</h3>\n"
            "<table class=\"fates\"><tr><th>node</th><th>pid</th><th>rank</th><th>verdict</th>"
            "<th>what happened</th></tr>\n",
            j->nfates);
    for (size_t i = 0; i < j->nfates; i++) {
        const struct gt_recfile *r = &j->recs[j->fates[i].rec];
        fputs("<tr><td class=\"mono\">", f);
        esc(f, r->id.host);
        fprintf(f, "</td><td class=\"num\">%d</td><td class=\"num\">%d</td><td>", (int)r->id.pid,
                (int)r->id.rank);
        if (j->fates[i].f.kind == GT_FATE_IN_CALL)
            fputs("-", f);
        else
            badge(f, j->fates[i].f.code, r->emulated);
        fputs("</td><td class=\"why\">", f);
        esc(f, j->fates[i].f.text);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void grid_section(FILE *f, const struct gt_html_run *r, const struct gt_html_grid *g)
{
    const struct gt_job *j = r->job;
    fputs("<h2>Nodes &#215; communicators", f);
    if (r->name)
        fprintf(f, " (run %s)", r->name);
    fputs("</h2>\n<p class=\"meta\">A row per node (natural order of host names), its first "
          "square the node's verdict, then a square per communicator the node has processes in: "
          "the verdicts of those processes combined.  Hover a square for its detail.",
          f);
    if (g->packed)
        fprintf(f,
                "  %zu communicators in %zu columns: communicators on disjoint nodes share a "
                "column (the table below gives each one's).",
                j->ncomm, g->ncols);
    fputs("</p>\n", f);
    int any_emu = j->overall.emulated;
    legend(f, g, any_emu);
    if (!g->nrows)
        fputs("<p>No node: nothing was recorded.</p>\n", f);
    else
        grid_svg(f, j, g, r->name);
    attention(f, j, g);
    comm_table(f, j, g);
}

/* ---- the whole page --------------------------------------------------------- */

int gt_html_write(FILE *f, const struct gt_html_run *a, const struct gt_html_run *b,
                  const char *version)
{
    struct gt_html_grid ga, gb;
    if (gt_html_grid_build(a->job, &ga))
        return ENOMEM;
    if (b && gt_html_grid_build(b->job, &gb)) {
        gt_html_grid_free(&ga);
        return ENOMEM;
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          /* invariant 2: a browser refuses any fetch this page could attempt */
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'\">\n"
          "<meta name=\"viewport\" content=\"width=device-width\">\n<title>gdrtrace ",
          f);
    fputs(b ? "A/B report: " : "report: ", f);
    jobs_text(f, a->job);
    if (b) {
        fputs(" vs ", f);
        jobs_text(f, b->job);
    }
    fputs("</title>\n", f);
    css(f);
    fputs("</head><body>\n", f);
    defs(f);
    fprintf(f, "<header><h1>gdrtrace %s</h1>\n",
            b ? "A/B report: did NCCL use the direct GPU&#8596;NIC path, and at what latency?"
              : "report: did NCCL use the direct GPU&#8596;NIC path?");
    run_header(f, a);
    if (b) {
        run_header(f, b);
        fputs("<p class=\"meta\"><span class=\"mono\">gdrtrace diff A B</span> names whatever "
              "else differs between the two runs (kernel, NVIDIA module, NCCL, settings, "
              "topology).</p>\n",
              f);
    }
    fputs("</header>\n<main>\n", f);
    fprintf(f, "<section class=\"run\" data-run=\"%s\">\n", b ? "A" : "all");
    grid_section(f, a, &ga);
    fputs("</section>\n", f);
    if (b) {
        fputs("<section class=\"run\" data-run=\"B\">\n", f);
        grid_section(f, b, &gb);
        fputs("</section>\n", f);
    }
    /* host pressure beside the grid (nothing before format 1.5) */
    if (gt_html_host_section(f, a->job, b ? b->job : NULL) == ENOMEM) {
        gt_html_grid_free(&ga);
        if (b)
            gt_html_grid_free(&gb);
        return ENOMEM;
    }
    gt_html_coll_section(f, a->job); /* nothing before format 1.6 */
    if (b)
        gt_html_coll_overlay(f, a->job, b->job);
    fputs("<section class=\"latency\">\n", f);
    int rc = gt_html_latency_section(f, a->job, b ? b->job : NULL);
    fputs("</section>\n</main>\n<footer>Written by gdrtrace ", f);
    esc(f, version);
    fputs(" from its flight recorders.  Self-contained: no script, no font, nothing fetched; "
          "verdicts as <span class=\"mono\">gdrtrace verdict</span> gives them "
          "(docs/reader.md).</footer>\n</body></html>\n",
          f);
    gt_html_grid_free(&ga);
    if (b)
        gt_html_grid_free(&gb);
    return rc;
}
