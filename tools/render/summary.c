/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c — the summary report: per node, per process (identity, node
 * fingerprint, devices and probes, event ring, communicators), then per
 * communicator across processes and nodes, then the verdict of the input.
 * Invariant: output depends only on the parsed recorders (plus the liveness
 * judged at load or dump time), so a dump archive reports exactly like the
 * live files it was made from; the only line naming where a recorder was read
 * from starts with "source".
 */
#include "tools/render/summary.h"

#include <stdlib.h>
#include <string.h>

#include "common/gt_net.h"
#include "common/nccl_cfg.h"
#include "tools/lib/ab.h"
#include "tools/lib/alike.h"
#include "tools/lib/coll.h"
#include "tools/lib/esc.h"
#include "tools/lib/hist.h"
#include "tools/lib/kcorr.h"
#include "tools/lib/ncclcfg.h"

#include <unistd.h>

static const double qs[] = {0.50, 0.95, 0.99};

/* Recorders whose buffers the kernel can show now: read from a file (not an
 * archive), judged live, written on this host. */
static int live_here(const struct gt_recfile *r)
{
    char h[256];
    if (r->from_archive || r->liveness != GT_LIVE_LIVE || gethostname(h, sizeof(h)) != 0)
        return 0;
    h[sizeof(h) - 1] = 0;
    return !strcmp(h, r->id.host);
}

struct kc_view {
    int nlive;
    uint64_t dmabuf_regs, deregs;
    struct gt_kcorr k;
};

/* 0 when no recorder is live here (nothing to corroborate). */
static int kc_collect(const struct gt_job *j, struct kc_view *v)
{
    memset(v, 0, sizeof(*v));
    for (size_t i = 0; i < j->nrec; i++)
        v->nlive += live_here(&j->recs[i]);
    /* from the digests: a folded recorder no longer holds its comm slots */
    for (size_t i = 0; v->nlive && i < j->nranks; i++) {
        const struct gt_rank_comm *d = &j->ranks[i];
        if (!live_here(&j->recs[d->rec]))
            continue;
        v->dmabuf_regs += d->did[GT_METHOD_DMABUF];
        v->deregs += d->deregs;
    }
    if (!v->nlive)
        return 0;
    gt_kcorr_read(&v->k);
    return 1;
}

static void kc_text(FILE *f, const struct gt_job *j)
{
    struct kc_view *v = malloc(sizeof(*v));
    if (!v || !kc_collect(j, v)) {
        free(v);
        return;
    }
    char b[32], line[512];
    snprintf(line, sizeof(line), "== kernel corroboration (%s, read now)", gt_esc(v->k.path));
    fputc('\n', f);
    gt_report_wrap(f, 0, 3, line);
    snprintf(line, sizeof(line),
             "%d live recorder(s) on this host: %llu DMA-BUF registration(s) recorded, %llu "
             "deregistration(s) of any kind",
             v->nlive, (unsigned long long)v->dmabuf_regs, (unsigned long long)v->deregs);
    fprintf(f, "   ");
    gt_report_wrap(f, 3, 5, line);
    if (!v->k.readable) {
        snprintf(line, sizeof(line),
                 "not readable: %s (debugfs must be mounted and readable, usually root)",
                 gt_kcorr_error(&v->k));
        fprintf(f, "   ");
        gt_report_wrap(f, 3, 5, line);
        free(v);
        return;
    }
    fprintf(f, "   kernel: %llu dma-buf object(s), %llu exported by nv_dmabuf (%s)\n",
            (unsigned long long)v->k.objects, (unsigned long long)v->k.nv_objects,
            gt_fmt_bytes(v->k.nv_bytes, b, sizeof(b)));
    int shown = 0;
    for (size_t i = 0; i < j->nrec; i++) {
        const struct gt_recfile *r = &j->recs[i];
        if (!live_here(r))
            continue;
        for (uint32_t d = 0; d < r->ndev; d++) {
            const struct gtr_device *dv = &r->devs[d];
            if (!dv->in_use || !dv->pci_path[0])
                continue;
            const char *bdf = strrchr(dv->pci_path, '/');
            bdf = bdf ? bdf + 1 : dv->pci_path;
            int dup = 0;
            for (size_t q = 0; q < i && !dup; q++)
                for (uint32_t e = 0; live_here(&j->recs[q]) && e < j->recs[q].ndev; e++)
                    dup |= j->recs[q].devs[e].in_use &&
                           !strcmp(j->recs[q].devs[e].pci_path, dv->pci_path);
            for (uint32_t e = 0; e < d; e++)
                dup |= r->devs[e].in_use && !strcmp(r->devs[e].pci_path, dv->pci_path);
            if (dup)
                continue;
            fprintf(f, "   NIC %-12s %-14s nv_dmabuf objects attached: %llu\n", gt_esc(dv->name),
                    gt_esc(bdf), (unsigned long long)gt_kcorr_attached(&v->k, dv->pci_path));
            shown++;
        }
    }
    if (!shown)
        fprintf(f, "   (no device with a PCI address recorded)\n");
    if (v->dmabuf_regs && !v->k.nv_objects)
        fprintf(f, "   WARNING: DMA-BUF registrations were recorded but the kernel lists no\n"
                   "   nv_dmabuf object now (released, or not GPU memory)\n");
    free(v);
}

static void kc_json(struct gt_json *js, const struct gt_job *j)
{
    struct kc_view *v = malloc(sizeof(*v));
    if (!v || !kc_collect(j, v)) {
        free(v);
        return;
    }
    gj_obj(js, "kernel");
    gj_str(js, "bufinfo", v->k.path);
    gj_bool(js, "readable", v->k.readable);
    if (!v->k.readable)
        gj_str(js, "error", gt_kcorr_error(&v->k));
    gj_i64(js, "live_recorders", v->nlive);
    gj_u64(js, "dmabuf_registrations_recorded", v->dmabuf_regs);
    gj_u64(js, "objects", v->k.objects);
    gj_u64(js, "nv_dmabuf_objects", v->k.nv_objects);
    gj_u64(js, "nv_dmabuf_bytes", v->k.nv_bytes);
    gj_obj(js, "attached");
    for (int i = 0; i < v->k.ndevs; i++)
        gj_u64(js, v->k.devs[i].name, v->k.devs[i].nv_objects);
    gj_end(js, '}');
    gj_end(js, '}');
    free(v);
}

static int load_job(char **paths, int n, struct gt_inputs *in, struct gt_job *j);

int gt_load_job(char **paths, int n, struct gt_inputs *in, struct gt_job *j)
{
    int rc = load_job(paths, n, in, j);
    j->empty_why[0] = '\0';
    if (!j->nrec)
        gt_inputs_empty_cause(in, j->empty_why, sizeof(j->empty_why));
    return rc;
}

static int load_job(char **paths, int n, struct gt_inputs *in, struct gt_job *j)
{
    if (in->fold) {
        if (gt_job_begin(j)) {
            fprintf(stderr, "gdrtrace: out of memory building the report\n");
            in->fold = NULL;
            gt_job_build(j, NULL, 0);
            return GT_EXIT_INPUT;
        }
        in->fold = j;
        int bad = gt_inputs_load(in, paths, n);
        in->fold = NULL;
        if (in->fold_failed || gt_job_finish(j, in->recs, in->n)) {
            if (!in->fold_failed)
                fprintf(stderr, "gdrtrace: out of memory building the report\n");
            gt_job_free(j);
            gt_job_build(j, NULL, 0);
            return GT_EXIT_INPUT;
        }
        return bad ? GT_EXIT_INPUT : 0;
    }
    int bad = gt_inputs_load(in, paths, n);
    if (gt_job_build(j, in->recs, in->n)) {
        fprintf(stderr, "gdrtrace: out of memory building the report\n");
        return GT_EXIT_INPUT;
    }
    return bad ? GT_EXIT_INPUT : 0;
}

void gt_report_hist_bars(FILE *f, const struct gtr_hist *h, const char *indent, int width)
{
    /* One row per power of two: the 16 sub-buckets summed. */
    enum { ROWS = GTR_HIST_BUCKETS / GTR_HIST_SUB };
    uint64_t row[ROWS] = {0}, maxrow = 0;
    int lo = -1, hi = -1;
    for (int r = 0; r < ROWS; r++) {
        for (int s = 0; s < (int)GTR_HIST_SUB; s++)
            row[r] += h->buckets[r * GTR_HIST_SUB + s];
        if (row[r]) {
            if (lo < 0)
                lo = r;
            hi = r;
            if (row[r] > maxrow)
                maxrow = row[r];
        }
    }
    if (lo < 0)
        return;
    for (int r = lo; r <= hi; r++) {
        char a[24], b[24];
        uint64_t from = gt_hist_bucket_lo((unsigned)(r * GTR_HIST_SUB));
        uint64_t to = gt_hist_bucket_hi((unsigned)(r * GTR_HIST_SUB + GTR_HIST_SUB - 1));
        int len = (int)((double)row[r] * width / (double)maxrow + 0.5);
        if (row[r] && len == 0)
            len = 1;
        fprintf(f, "%s%9s..%-9s |", indent, gt_fmt_ns(from, a, sizeof(a)),
                to == UINT64_MAX ? "inf" : gt_fmt_ns(to, b, sizeof(b)));
        for (int i = 0; i < len; i++)
            fputc('#', f);
        fprintf(f, "%*s %llu\n", width - len, "", (unsigned long long)row[r]);
    }
}

/* ---- Line width (issue 21: every line of summary and verdict fits 100 columns) ---- */

/* Columns a string takes: UTF-8 code points (gt_esc output: no controls). */
static int cols(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Bytes of s that fit in w columns. */
static size_t fit_bytes(const char *s, int w)
{
    size_t i = 0;
    int c = 0;
    while (s[i]) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (c == w)
                break;
            c++;
        }
        i++;
    }
    return i;
}

int gt_report_hang(int w, const char *label)
{
    int l = cols(label);
    return l > 15 ? w - (l - 15) : w;
}

void gt_report_wrap(FILE *f, int used, int indent, const char *text)
{
    const int width = GT_REPORT_COLS;
    if (indent > width / 2)
        indent = width / 2;
    int at = used;
    int bare = used <= indent; /* nothing on this line but its indent: no use breaking */
    const char *p = text;
    while (*p == ' ')
        p++;
    while (*p) {
        const char *g = p; /* the spaces before a word are kept unless the line breaks there */
        while (*p == ' ')
            p++;
        int gap = bare ? 0 : (int)(p - g);
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        char word[512];
        size_t wl = (size_t)(e - p) < sizeof(word) - 1 ? (size_t)(e - p) : sizeof(word) - 1;
        memcpy(word, p, wl);
        word[wl] = 0;
        int wc = cols(word);
        /* a word too long for the hanging indent (a path) gets a line of its
         * own from column 4 rather than being cut */
        int ind = wc > width - indent && indent > 4 ? 4 : indent;
        if (at + gap + wc > width && !(bare && at <= ind)) {
            fprintf(f, "\n%*s", ind, "");
            at = ind;
            gap = 0;
            bare = 1;
        }
        if (at + gap + wc > width) { /* longer than a line: cut where the line ends */
            size_t take = fit_bytes(word, width - at - gap);
            if (!take)
                take = 1;
            fprintf(f, "%*s%.*s\n%*s", gap, "", (int)take, word, indent, "");
            at = indent;
            bare = 1;
            p += take;
            continue;
        }
        fprintf(f, "%*s%s", gap, "", word);
        at += gap + wc;
        bare = 0;
        p += wl;
    }
    fputc('\n', f);
}

/* Prints s in a column of width w (left-aligned, then one space); a longer
 * s takes its own line and the row goes on under it at column `col` + w + 1,
 * so a long host or label never pushes the row past the width. */
static void cell(FILE *f, const char *s, int w, int col)
{
    int c = cols(s);
    if (c <= w)
        fprintf(f, "%s%*s ", s, w - c, "");
    else
        fprintf(f, "%s\n%*s", s, col + w + 1, "");
}

/* ---- Unknown values: "?" and why (issue 21: never -1) ---- */

/* Which launcher variable the writer read the rank from (shim/recorder.c
 * fill_launcher): the net plugin API gives the plugin no rank. */
static const char *rank_var(const struct gt_recfile *r, int which)
{
    static const char *const v[][3] = {
        {"RANK", "LOCAL_RANK", "WORLD_SIZE"},
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
    };
    const char *l = r->id.launcher;
    int k = !strcmp(l, "torchrun") ? 0 : !strcmp(l, "openmpi") ? 1 : !strcmp(l, "slurm") ? 2 : -1;
    return k < 0 ? NULL : v[k][which];
}

/* Why rank (which 0), local rank (1) or world size (2) is unknown. */
static void rank_unknown_why(const struct gt_recfile *r, int which, char *buf, size_t n)
{
    const char *var = rank_var(r, which);
    if (var)
        snprintf(buf, n, "%s unset or not a number (launcher %s)", var, gt_esc(r->id.launcher));
    else
        snprintf(buf, n,
                 "no launcher variable (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID); the net "
                 "plugin API passes no rank");
}

#define NCCL_UNKNOWN_WHY "ncclGetVersion not visible to the plugin when its recorder opened"
#define CUDA_UNKNOWN_WHY "libcuda.so.1 not loadable or cuDriverGetVersion failed"

static const char *fmt_int(int v, char *buf, size_t n)
{
    if (v < 0)
        snprintf(buf, n, "?");
    else
        snprintf(buf, n, "%d", v);
    return buf;
}

/* NCCL's version code: 22803 -> 2.28.3 (2.9+: M*10000+m*100+p; older M*1000+m*100+p). */
static const char *fmt_nccl(int v, char *buf, size_t n)
{
    if (v <= 0)
        snprintf(buf, n, "?");
    else if (v >= 10000)
        snprintf(buf, n, "%d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
    else
        snprintf(buf, n, "%d.%d.%d", v / 1000, v % 1000 / 100, v % 100);
    return buf;
}

/* One line naming each unknown identity value of r and why, or nothing. */
static void text_unknowns(FILE *f, const struct gt_recfile *r, const char *ind)
{
    char why[1024] = "", b[200];
    if (r->id.rank < 0 || r->id.world_size < 0 || r->id.local_rank < 0) {
        rank_unknown_why(r, r->id.rank < 0 ? 0 : r->id.world_size < 0 ? 2 : 1, b, sizeof(b));
        snprintf(why + strlen(why), sizeof(why) - strlen(why), "rank: %s. ", b);
    }
    if (r->id.nccl_version <= 0)
        snprintf(why + strlen(why), sizeof(why) - strlen(why), "NCCL: %s. ", NCCL_UNKNOWN_WHY);
    if (r->id.abi_version <= 0)
        snprintf(why + strlen(why), sizeof(why) - strlen(why),
                 "net ABI: NCCL has not called init yet. ");
    if (r->id.node.cuda_driver_version < 0)
        snprintf(why + strlen(why), sizeof(why) - strlen(why), "CUDA driver: %s.",
                 CUDA_UNKNOWN_WHY);
    if (!why[0])
        return;
    fprintf(f, "%s?        ", ind);
    gt_report_wrap(f, (int)strlen(ind) + 9, (int)strlen(ind) + 9, why);
}

/* ---- The compact summary: job, communicators, ranks that differ ---- */

#define TALLY_MAX 6

/* Distinct values of one identity field and how many processes show each. */
struct tally {
    char v[TALLY_MAX][160];
    size_t n[TALLY_MAX];
    size_t nv, other;
};

static void tally_add(struct tally *t, const char *v)
{
    for (size_t i = 0; i < t->nv; i++)
        if (!strcmp(t->v[i], v)) {
            t->n[i]++;
            return;
        }
    if (t->nv == TALLY_MAX) {
        t->other++;
        return;
    }
    snprintf(t->v[t->nv], sizeof(t->v[0]), "%s", v);
    t->n[t->nv++] = 1;
}

/* "NAME V" when every process agrees, else "NAME V1 xN1, V2 xN2" most first. */
static void tally_text(const struct tally *t, const char *name, char *buf, size_t n)
{
    size_t ord[TALLY_MAX];
    for (size_t i = 0; i < t->nv; i++)
        ord[i] = i;
    for (size_t i = 1; i < t->nv; i++)
        for (size_t k = i; k > 0 && t->n[ord[k]] > t->n[ord[k - 1]]; k--) {
            size_t x = ord[k];
            ord[k] = ord[k - 1];
            ord[k - 1] = x;
        }
    size_t l = (size_t)snprintf(buf, n, "%s", name);
    for (size_t i = 0; i < t->nv && l < n; i++) {
        if (t->nv == 1 && !t->other)
            l += (size_t)snprintf(buf + l, n - l, " %s", t->v[ord[i]]);
        else
            l += (size_t)snprintf(buf + l, n - l, "%s %s x%zu", i ? "," : "", t->v[ord[i]],
                                  t->n[ord[i]]);
    }
    if (t->other && l < n)
        snprintf(buf + l, n - l, ", %zu other(s)", t->other);
}

static const char *rank_label(const struct gt_recfile *r, char *buf, size_t n)
{
    if (r->id.rank >= 0)
        snprintf(buf, n, "rank %d", r->id.rank);
    else
        snprintf(buf, n, "rank ?");
    return buf;
}

static void text_job(FILE *f, const struct gt_job *j)
{
    struct tally *t = calloc(6, sizeof(*t));
    if (!t)
        return;
    size_t states[8] = {0}, unknown_rank = 0, known_rank = 0;
    int rmin = 0, rmax = 0;
    const struct gt_recfile *unk = NULL;
    for (size_t i = 0; i < j->nrec; i++) {
        const struct gt_recfile *r = &j->recs[i];
        char b[160];
        tally_add(&t[0], r->id.plugin_version[0] ? gt_esc(r->id.plugin_version) : "?");
        fmt_nccl(r->id.nccl_version, b, sizeof(b));
        tally_add(&t[1], b);
        if (r->id.abi_version > 0)
            snprintf(b, sizeof(b), "v%d", r->id.abi_version);
        else
            snprintf(b, sizeof(b), "?");
        tally_add(&t[2], b);
        tally_add(&t[3], r->id.transport[0] ? gt_esc(r->id.transport) : "?");
        tally_add(&t[4], r->id.node.kernel_release[0] ? gt_esc(r->id.node.kernel_release) : "?");
        tally_add(&t[5], r->id.launcher[0] ? gt_esc(r->id.launcher) : "none");
        if ((unsigned)r->liveness < 8)
            states[r->liveness]++;
        if (r->id.rank < 0) {
            if (!unknown_rank++)
                unk = r;
        } else {
            if (!known_rank++ || r->id.rank < rmin)
                rmin = r->id.rank;
            if (known_rank == 1 || r->id.rank > rmax)
                rmax = r->id.rank;
        }
    }
    char line[1024], b[512];
    if (j->njobs == 1)
        snprintf(b, sizeof(b), "job %s", j->recs[0].id.job[0] ? gt_esc(j->recs[0].id.job) : "-");
    else
        snprintf(b, sizeof(b), "%d jobs", j->njobs);
    snprintf(line, sizeof(line), "== %s: %zu process(es) on %zu node(s), %zu communicator(s);", b,
             j->nrec, j->nnodes, j->ncomm);
    for (int s = 0; s < 8; s++)
        if (states[s])
            snprintf(line + strlen(line), sizeof(line) - strlen(line), " %s %zu",
                     gt_liveness_name(s), states[s]);
    gt_report_wrap(f, 0, 6, line);
    static const char *const names[] = {"plugin",    "NCCL",   "net ABI",
                                        "transport", "kernel", "launcher"};
    line[0] = 0;
    for (int k = 0; k < 6; k++) {
        tally_text(&t[k], names[k], b, sizeof(b));
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s", k ? "; " : "", b);
    }
    fprintf(f, "   software ");
    gt_report_wrap(f, 12, 12, line);
    if (known_rank)
        snprintf(line, sizeof(line), "%d..%d (%zu process(es) with a rank)", rmin, rmax,
                 known_rank);
    else
        line[0] = 0;
    if (unknown_rank) {
        rank_unknown_why(unk, 0, b, sizeof(b));
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s? for %zu process(es) (%s)",
                 known_rank ? "; " : "", unknown_rank, b);
    }
    fprintf(f, "   ranks    ");
    gt_report_wrap(f, 12, 12, line);
    /* whose files these are: one owner per job unless --accept-owner took more */
    long owners[4];
    size_t nown[4] = {0}, no = 0, more = 0;
    for (size_t i = 0; i < j->nrec; i++) {
        size_t k = 0;
        while (k < no && owners[k] != j->recs[i].owner)
            k++;
        if (k == no && no == 4) {
            more++;
            continue;
        }
        if (k == no)
            owners[no++] = j->recs[i].owner;
        nown[k]++;
    }
    line[0] = 0;
    for (size_t k = 0; k < no; k++) {
        char o[64];
        gt_owner_short(owners[k], o, sizeof(o));
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s", k ? "; " : "", o);
        if (no > 1)
            snprintf(line + strlen(line), sizeof(line) - strlen(line), " (%zu)", nown[k]);
    }
    if (more)
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "; %zu more", more);
    if (no) {
        fprintf(f, "   owner    ");
        gt_report_wrap(f, 12, 12, gt_esc(line));
    }
    for (int k = 1; k < 3; k++)
        for (size_t i = 0; i < t[k].nv; i++)
            if (!strcmp(t[k].v[i], "?")) {
                fprintf(f, "   ?        ");
                gt_report_wrap(f, 12, 12,
                               k == 1 ? "NCCL: " NCCL_UNKNOWN_WHY
                                      : "net ABI: NCCL had not called the plugin's init");
            }
    free(t);
    /* nodes: how many show each verdict; those that differ from the most common */
    size_t seen[GT_V_COUNT] = {0};
    for (size_t i = 0; i < j->nnodes; i++)
        if ((unsigned)j->nodes[i].code < GT_V_COUNT)
            seen[j->nodes[i].code]++;
    int maj = gt_alike_majority(seen, GT_V_COUNT); /* as verdict's alike nodes */
    snprintf(line, sizeof(line), "%zu (%s", j->nnodes, gt_esc(j->nodes[0].host));
    if (j->nnodes > 1)
        snprintf(line + strlen(line), sizeof(line) - strlen(line), " .. %s",
                 gt_esc(j->nodes[j->nnodes - 1].host));
    snprintf(line + strlen(line), sizeof(line) - strlen(line), "):");
    for (int v = 0; v < GT_V_COUNT; v++)
        if (seen[v])
            snprintf(line + strlen(line), sizeof(line) - strlen(line), " %s %zu",
                     gt_verdict_label(v, j->overall.emulated), seen[v]);
    fprintf(f, "   nodes    ");
    gt_report_wrap(f, 12, 12, line);
    size_t shown = 0;
    for (size_t i = 0; i < j->nnodes; i++) {
        const struct gt_node *nd = &j->nodes[i];
        if (nd->code == maj)
            continue;
        if (shown++ == GT_REPORT_LIST_MAX)
            continue;
        snprintf(line, sizeof(line), "%s: %s (%d process(es), %d communicator(s))",
                 gt_esc(nd->host), gt_verdict_label(nd->code, j->overall.emulated), nd->nproc,
                 nd->ncomm);
        fprintf(f, "            ");
        gt_report_wrap(f, 12, 14, line);
    }
    if (shown > GT_REPORT_LIST_MAX)
        fprintf(f, "            and %zu more node(s) (gdrtrace verdict lists every node)\n",
                shown - GT_REPORT_LIST_MAX);
    uint64_t did[GTR_METHOD_COUNT] = {0}, fb = 0, err = 0;
    for (size_t i = 0; i < j->ncomm; i++) {
        for (int a = 0; a < GTR_ASKED_COUNT; a++)
            for (int m = 0; m < GTR_METHOD_COUNT; m++)
                did[m] += j->comms[i].sum.reg_count[a][m];
        fb += j->comms[i].sum.fallback_count;
        err += j->comms[i].sum.error_count;
    }
    fprintf(f,
            "   regs     dmabuf %llu, peermem %llu, host %llu, failed %llu; fallbacks %llu, "
            "errors %llu\n",
            (unsigned long long)did[0], (unsigned long long)did[1], (unsigned long long)did[2],
            (unsigned long long)did[3], (unsigned long long)fb, (unsigned long long)err);
    for (size_t i = 0; i < j->nfates; i++) {
        if (i == GT_REPORT_LIST_MAX) {
            fprintf(f, "   and %zu more process(es) with a fate (gdrtrace verdict lists them)\n",
                    j->nfates - i);
            break;
        }
        const struct gt_recfile *r = &j->recs[j->fates[i].rec];
        snprintf(line, sizeof(line), "proc %s:%d %s: ", gt_esc(r->id.host), r->id.pid,
                 j->fates[i].f.kind == GT_FATE_IN_CALL
                     ? "-"
                     : gt_verdict_label(j->fates[i].f.code, j->overall.emulated));
        fprintf(f, "   ");
        char all[1400];
        snprintf(all, sizeof(all), "%s%s", line, gt_esc(j->fates[i].f.text));
        gt_report_wrap(f, 3, 8, all);
    }
}

/* One line for a process that differs from its communicator's norm. */
static void text_differing(FILE *f, const struct gt_job *j, const struct gt_comm_norm *nm,
                           const struct gt_rank_comm *d, unsigned bits, unsigned slow)
{
    const struct gt_recfile *r = &j->recs[d->rec];
    char line[1024], b1[32], b2[32], lab[32];
    snprintf(line, sizeof(line), "%s (%s pid %d):", rank_label(r, lab, sizeof(lab)),
             gt_esc(r->id.host), r->id.pid);
    const char *sep = "";
    if (bits & GT_DIFF_VERDICT) {
        snprintf(line + strlen(line), sizeof(line) - strlen(line), " %s (the majority: %s)",
                 gt_verdict_label(d->verdict, 0), gt_verdict_label(nm->majority, 0));
        sep = ";";
    }
    if (bits & GT_DIFF_FALLBACK) {
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s %llu fallback(s)", sep,
                 (unsigned long long)d->fallbacks);
        sep = ";";
    }
    if (bits & GT_DIFF_ERROR) {
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s %llu error(s)", sep,
                 (unsigned long long)d->errors);
        sep = ";";
    }
    for (int op = 0; op < GTR_OP_COUNT; op++)
        if (slow & (1u << op)) {
            uint64_t m = nm->median[op];
            snprintf(line + strlen(line), sizeof(line) - strlen(line),
                     "%s %s p50 %s, %.1fx the median %s", sep, gt_op_name(op),
                     gt_fmt_ns(d->p50_ns[op], b1, sizeof(b1)), (double)d->p50_ns[op] / (double)m,
                     gt_fmt_ns(m, b2, sizeof(b2)));
            sep = ";";
        }
    fprintf(f, "     ");
    gt_report_wrap(f, 5, 9, line);
}

/* --ranks: one row per process of the communicator. */
static void text_rank_rows(FILE *f, const struct gt_job *j, size_t ci,
                           const struct gt_comm_norm *nm)
{
    const struct gt_ccomm *x = &j->comms[ci];
    fprintf(f, "     %-6s %-16s %8s %-15s %3s %3s %8s %8s %8s\n", "rank", "node", "pid", "verdict",
            "fb", "err", "reg", "send", "recv");
    for (size_t k = 0; k < x->nrix; k++) {
        const struct gt_rank_comm *d = &j->ranks[j->rank_ix[x->rix + k]];
        const struct gt_recfile *r = &j->recs[d->rec];
        char lab[32], b[3][32], w[16];
        unsigned slow;
        unsigned bits = gt_rank_differs(nm, d, &slow);
        fprintf(f, "     %-6s ", fmt_int(r->id.rank, w, sizeof(w)));
        cell(f, gt_esc(r->id.host), 16, 16);
        snprintf(lab, sizeof(lab), "%d", r->id.pid);
        fprintf(
            f, "%8s %-15s %3llu %3llu %8s %8s %8s%s\n", lab, gt_verdict_name(d->verdict),
            (unsigned long long)d->fallbacks, (unsigned long long)d->errors,
            d->p50_ns[GTR_OP_REG] ? gt_fmt_ns(d->p50_ns[GTR_OP_REG], b[0], sizeof(b[0])) : "-",
            d->p50_ns[GTR_OP_SEND] ? gt_fmt_ns(d->p50_ns[GTR_OP_SEND], b[1], sizeof(b[1])) : "-",
            d->p50_ns[GTR_OP_RECV] ? gt_fmt_ns(d->p50_ns[GTR_OP_RECV], b[2], sizeof(b[2])) : "-",
            bits ? " *" : "");
    }
}

/* A communicator's row: label, processes, nodes, verdict, median p50s. */
static void text_comm_row(FILE *f, const struct gt_job *j, const struct gt_ccomm *x,
                          const struct gt_comm_norm *nm)
{
    char b[3][32], n1[24], n2[24];
    fprintf(f, "   ");
    cell(f, gt_esc(x->label), 20, 3);
    snprintf(n1, sizeof(n1), "%zu", x->nprocs);
    snprintf(n2, sizeof(n2), "%d", x->nhosts);
    const int ops[3] = {GTR_OP_REG, GTR_OP_SEND, GTR_OP_RECV};
    for (int k = 0; k < 3; k++)
        if (nm->nop[ops[k]])
            gt_fmt_ns(nm->median[ops[k]], b[k], sizeof(b[k]));
        else
            snprintf(b[k], sizeof(b[k]), "-");
    const char *v = gt_verdict_label(x->v.code, x->v.emulated);
    if (cols(v) > 15) { /* the emulated label: on its own line */
        fprintf(f, "%6s %5s %-15s %9s %9s %9s\n", n1, n2, "", b[0], b[1], b[2]);
        fprintf(f, "     ");
        gt_report_wrap(f, 5, 7, v);
    } else {
        fprintf(f, "%6s %5s %-15s %9s %9s %9s\n", n1, n2, v, b[0], b[1], b[2]);
    }
    (void)j;
}

/* Quiet communicators (no process differs) alike in verdict and shape are
 * shown once: the first, and a line for how many more. */
struct qgroup {
    int code, emulated;
    size_t nprocs;
    int nhosts;
    size_t count, first, second, last;
};

static void text_comms(FILE *f, const struct gt_job *j, int flags)
{
    int all = flags & GT_REPORT_RANKS;
    struct gt_comm_norm *nm = calloc(j->ncomm ? j->ncomm : 1, sizeof(*nm));
    unsigned char *ndiff = calloc(j->ncomm ? j->ncomm : 1, 1);
    size_t *grp = calloc(j->ncomm ? j->ncomm : 1, sizeof(*grp));
    struct qgroup *g = calloc(j->ncomm ? j->ncomm : 1, sizeof(*g));
    if (!nm || !ndiff || !grp || !g) {
        fprintf(f, "gdrtrace: out of memory for the communicators\n");
        goto out;
    }
    size_t ng = 0, differing = 0;
    for (size_t i = 0; i < j->ncomm; i++) {
        const struct gt_ccomm *x = &j->comms[i];
        if (gt_comm_norm(j, i, &nm[i])) {
            fprintf(f, "gdrtrace: out of memory for the communicators\n");
            goto out;
        }
        for (size_t k = 0; k < x->nrix; k++)
            if (gt_rank_differs(&nm[i], &j->ranks[j->rank_ix[x->rix + k]], NULL)) {
                ndiff[i] = 1;
                differing++;
            }
        grp[i] = SIZE_MAX;
        if (ndiff[i] || all)
            continue;
        /* groups: few distinct shapes in practice; linear search is enough */
        size_t q = 0;
        for (; q < ng; q++)
            if (g[q].code == x->v.code && g[q].emulated == x->v.emulated &&
                g[q].nprocs == x->nprocs && g[q].nhosts == x->nhosts)
                break;
        if (q == ng) {
            g[ng] = (struct qgroup){x->v.code, x->v.emulated, x->nprocs, x->nhosts, 0, i, i, i};
            ng++;
        }
        if (++g[q].count == 2)
            g[q].second = i;
        g[q].last = i;
        grp[i] = q;
    }
    fprintf(f,
            "\n== communicators: %zu; %zu process(es) differ from their communicator's majority\n",
            j->ncomm, differing);
    fprintf(f, "   %-20s %6s %5s %-15s %9s %9s %9s\n", "comm", "procs", "nodes", "verdict",
            "reg p50", "send p50", "recv p50");
    size_t listed = 0;
    for (size_t i = 0; i < j->ncomm; i++) {
        const struct gt_ccomm *x = &j->comms[i];
        if (grp[i] != SIZE_MAX && g[grp[i]].first != i)
            continue; /* shown with its group */
        if (ndiff[i] && !all && listed++ >= GT_REPORT_LIST_MAX)
            continue;
        text_comm_row(f, j, x, &nm[i]);
        if (grp[i] != SIZE_MAX && g[grp[i]].count > 1) {
            char line[400];
            snprintf(line, sizeof(line),
                     "and %zu more alike (%s, %zu process(es) on %d node(s) each, no process "
                     "differs): %s%s%s",
                     g[grp[i]].count - 1, gt_verdict_label(x->v.code, x->v.emulated), x->nprocs,
                     x->nhosts, gt_esc(j->comms[g[grp[i]].second].label),
                     g[grp[i]].count > 2 ? ", ..., " : "",
                     g[grp[i]].count > 2 ? gt_esc(j->comms[g[grp[i]].last].label) : "");
            fprintf(f, "     ");
            gt_report_wrap(f, 5, 7, line);
        }
        if (x->v.code != GT_V_DIRECT_DMABUF && x->v.code != GT_V_NO_DATA) {
            fprintf(f, "     why ");
            gt_report_wrap(f, 9, 9, gt_esc(x->v.why));
        }
        if (all) {
            text_rank_rows(f, j, i, &nm[i]);
            continue;
        }
        size_t shown = 0, nd = 0;
        for (size_t k = 0; k < x->nrix; k++) {
            const struct gt_rank_comm *d = &j->ranks[j->rank_ix[x->rix + k]];
            unsigned slow;
            unsigned bits = gt_rank_differs(&nm[i], d, &slow);
            if (!bits)
                continue;
            nd++;
            if (shown++ < GT_REPORT_LIST_MAX)
                text_differing(f, j, &nm[i], d, bits, slow);
        }
        if (nd > GT_REPORT_LIST_MAX)
            fprintf(f, "     and %zu more process(es) differ (gdrtrace summary --ranks)\n",
                    nd - GT_REPORT_LIST_MAX);
    }
    if (!all && listed > GT_REPORT_LIST_MAX)
        fprintf(f,
                "   and %zu more communicator(s) where processes differ (gdrtrace summary "
                "--ranks)\n",
                listed - GT_REPORT_LIST_MAX);
    int moved = 0;
    for (size_t i = 0; i < j->ncomm; i++)
        moved |= nm[i].nop[GTR_OP_SEND] || nm[i].nop[GTR_OP_RECV];
    fprintf(f, "   p50: the median over the communicator's processes of each one's p50.\n");
    if (moved)
        fprintf(f, "   send, recv: from the post (isend/irecv) to the test() that finds it done,\n"
                   "   which includes waiting for the peer: milliseconds there are normal.\n");
    if (all)
        fprintf(f, "   *: differs from the communicator's majority (verdict, fallbacks, errors, "
                   "p50 outlier)\n");
out:
    free(nm);
    free(ndiff);
    free(grp);
    free(g);
}

static void text_compact(FILE *f, const struct gt_job *j, int flags)
{
    text_job(f, j);
    text_comms(f, j, flags);
    fprintf(f, "\n== verdict\n   all  %s  ",
            gt_verdict_label(j->overall.code, j->overall.emulated));
    /* "   all  " LABEL "  ": 10 columns and the label's */
    gt_report_wrap(f, 10 + cols(gt_verdict_label(j->overall.code, j->overall.emulated)), 7,
                   gt_esc(j->overall.why));
}

static void text_matrix(FILE *f, const struct gtr_comm *c, const char *ind)
{
    char b[32];
    fprintf(f, "%sregistrations   asked \\ did    %10s %10s %10s %10s\n", ind, "dmabuf", "peermem",
            "host", "failed");
    for (int a = 0; a < GTR_ASKED_COUNT; a++) {
        uint64_t row = 0;
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            row += c->reg_count[a][m];
        if (!row)
            continue;
        fprintf(f, "%s                %-14s", ind,
                a == GT_ASKED_DMABUF ? "regMrDmaBuf"
                : a == GT_ASKED_CUDA ? "regMr(CUDA)"
                                     : "regMr(HOST)");
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            fprintf(f, " %10llu", (unsigned long long)c->reg_count[a][m]);
        fprintf(f, "\n%s                %-14s", ind, "  bytes");
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            fprintf(f, " %10s",
                    c->reg_count[a][m] ? gt_fmt_bytes(c->reg_bytes[a][m], b, sizeof(b)) : "-");
        fputc('\n', f);
    }
    if (c->reg_exported_fd || c->reg_cache_hits)
        fprintf(f, "%s                plugin-exported dma-buf fds %llu, MR cache hits %llu\n", ind,
                (unsigned long long)c->reg_exported_fd, (unsigned long long)c->reg_cache_hits);
}

static void text_reasons(FILE *f, const struct gtr_comm *c, int kind)
{
    int first = 1;
    for (unsigned i = 0; i < GTR_REASON_SLOTS; i++) {
        uint64_t k = gtr_reason_count(c, kind, i);
        if (k) {
            fprintf(f, "%s%s x%llu", first ? " (" : ", ", gt_reason_slot_name((int)i),
                    (unsigned long long)k);
            first = 0;
        }
    }
    if (!first)
        fputc(')', f);
}

static void text_comm_body(FILE *f, const struct gtr_comm *c, const char *ind, int flags)
{
    char b1[32], b2[32];
    int in = (int)strlen(ind) + 16;
    text_matrix(f, c, ind);
    char *txt = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&txt, &len);
    if (!m)
        return;
    fprintf(m, "%llu", (unsigned long long)c->fallback_count);
    text_reasons(m, c, GTR_FALLBACKS);
    if (c->fallback_count && c->fallback_last_errno)
        fprintf(m, "; last errno %d (%s)", c->fallback_last_errno,
                strerror(c->fallback_last_errno));
    fflush(m);
    fprintf(f, "%sfallbacks       ", ind);
    gt_report_wrap(f, in, in, txt);
    rewind(m);
    fprintf(m, "%llu", (unsigned long long)c->error_count);
    text_reasons(m, c, GTR_ERRORS);
    if (c->error_count && c->error_last_errno)
        fprintf(m, "; last errno %d (%s)", c->error_last_errno, strerror(c->error_last_errno));
    if (c->error_last_text[0])
        fprintf(m, "; last: \"%s\"", gt_esc(c->error_last_text));
    fputc(0, m);
    fclose(m);
    fprintf(f, "%serrors          ", ind);
    gt_report_wrap(f, in, in, txt);
    free(txt);
    fprintf(f, "%sconnections     listen %llu, connect %llu, accept %llu, close %llu, dereg %llu\n",
            ind, (unsigned long long)c->listen_count, (unsigned long long)c->connect_count,
            (unsigned long long)c->accept_count, (unsigned long long)c->close_count,
            (unsigned long long)c->dereg_count);
    fprintf(f, "%straffic         sent %llu (%s), received %llu (%s), flushes %llu\n", ind,
            (unsigned long long)c->send_count, gt_fmt_bytes(c->send_bytes, b1, sizeof(b1)),
            (unsigned long long)c->recv_count, gt_fmt_bytes(c->recv_bytes, b2, sizeof(b2)),
            (unsigned long long)c->flush_count);
    int any = 0;
    for (int op = 0; op < GTR_OP_COUNT; op++)
        any |= c->hist[op].count != 0;
    if (!any)
        return;
    fprintf(f, "%slatency         %-6s %10s %10s %10s %10s %10s\n", ind, "op", "count", "p50",
            "p95", "p99", "max");
    for (int op = 0; op < GTR_OP_COUNT; op++) {
        const struct gtr_hist *h = &c->hist[op];
        if (!h->count)
            continue;
        fprintf(f, "%s                %-6s %10llu", ind, gt_op_name(op),
                (unsigned long long)h->count);
        for (unsigned q = 0; q < 3; q++)
            fprintf(f, " %10s", gt_fmt_ns(gt_hist_quantile(h, qs[q]), b1, sizeof(b1)));
        fprintf(f, " %10s\n", gt_fmt_ns(h->max_ns, b1, sizeof(b1)));
    }
    if (c->hist[GTR_OP_SEND].count || c->hist[GTR_OP_RECV].count)
        fprintf(f,
                "%s                send, recv: post (isend/irecv) to the test() that finds it "
                "done,\n%s                including the wait for the peer (not a wire time)\n",
                ind, ind);
    if (flags & GT_REPORT_BARS) {
        char ind2[64];
        snprintf(ind2, sizeof(ind2), "%s    ", ind);
        for (int op = 0; op < GTR_OP_COUNT; op++) {
            if (!c->hist[op].count)
                continue;
            fprintf(f, "%shistogram %s\n", ind, gt_op_name(op));
            gt_report_hist_bars(f, &c->hist[op], ind2, 40);
        }
    }
}

void gt_report_process(FILE *f, const struct gt_recfile *r, int flags)
{
    const struct gtr_identity *id = &r->id;
    char b[64];
    char rk[3][16], line[1200];
    snprintf(line, sizeof(line), "== process %s pid %d  job %s  rank %s/%s (local %s)  %s",
             gt_esc(id->host), id->pid, id->job[0] ? gt_esc(id->job) : "-",
             fmt_int(id->rank, rk[0], sizeof(rk[0])), fmt_int(id->world_size, rk[1], sizeof(rk[1])),
             fmt_int(id->local_rank, rk[2], sizeof(rk[2])), gt_liveness_name(r->liveness));
    fputc('\n', f);
    gt_report_wrap(f, 0, 11, line);
    fprintf(f, "   source   ");
    gt_report_wrap(f, 12, 12, gt_esc(r->source));
    fprintf(f, "   format   %u.%u, %llu bytes\n", r->hdr.version_major, r->hdr.version_minor,
            (unsigned long long)r->hdr.file_size);
    char nv[24], abi[16];
    if (id->abi_version > 0)
        snprintf(abi, sizeof(abi), "v%d", id->abi_version);
    else
        snprintf(abi, sizeof(abi), "?");
    snprintf(line, sizeof(line), "%s  NCCL %s  net ABI %s  launcher %s",
             id->plugin_version[0] ? gt_esc(id->plugin_version) : "?",
             fmt_nccl(id->nccl_version, nv, sizeof(nv)), abi,
             id->launcher[0] ? gt_esc(id->launcher) : "-");
    fprintf(f, "   plugin   ");
    gt_report_wrap(f, 12, 12, line);
    text_unknowns(f, r, "   ");
    snprintf(line, sizeof(line), "%s (%s)", id->transport[0] ? gt_esc(id->transport) : "?",
             id->transport_why[0] ? gt_esc(id->transport_why) : "no reason recorded");
    fprintf(f, "   transport ");
    gt_report_wrap(f, 13, 13, line);
    if (r->nset) {
        /* 1.2+: the settings in force, as many to a line as fit, each with its source */
        int k = 0, at = 0;
        for (uint32_t i = 0; i < r->nset; i++) {
            const struct gtr_setting *s = &r->settings[i];
            if (!s->in_use || gt_nccl_cfg_find(s->key)) /* NCCL's own: their lines below */
                continue;
            char src[112], item[600];
            gt_setting_source_text(s, src, sizeof(src));
            snprintf(item, sizeof(item), "%s=%s [%s]", gt_esc(s->key), gt_esc(s->value),
                     gt_esc(src));
            int w = cols(item);
            if (!k) {
                fprintf(f, "   settings ");
                at = 12;
            } else if (at + 2 + w > GT_REPORT_COLS) {
                fprintf(f, "\n            ");
                at = 12;
            } else {
                fprintf(f, "  ");
                at += 2;
            }
            if (at + w > GT_REPORT_COLS) { /* alone on its line and still too long */
                char *nl = NULL;
                size_t len = 0;
                FILE *m = open_memstream(&nl, &len);
                if (m) {
                    gt_report_wrap(m, at, 14, item);
                    fclose(m);
                    if (len && nl[len - 1] == '\n')
                        nl[len - 1] = 0;
                    fputs(nl, f);
                    const char *last = strrchr(nl, '\n');
                    at = last ? cols(last + 1) : at + cols(nl);
                }
                free(nl);
            } else {
                fputs(item, f);
                at += w;
            }
            k++;
        }
        if (k)
            fputc('\n', f);
        gt_ncclcfg_print(f, r);
        if (id->policy_text[0]) {
            fprintf(f, "   set      ");
            gt_report_wrap(f, 12, 12, gt_esc(id->policy_text));
        }
    } else {
        snprintf(line, sizeof(line), "GDRTRACE_REG=%s GDRTRACE_ALLOW_PEERMEM=%u%s%s",
                 id->policy_reg[0] ? gt_esc(id->policy_reg) : "?", id->policy_allow_peermem,
                 id->policy_text[0] ? "  set: " : "", gt_esc(id->policy_text));
        fprintf(f, "   policy   ");
        gt_report_wrap(f, 12, 12, line);
    }
    const struct gtr_fingerprint *fp = &id->node;
    static const char *flav[] = {"unknown", "open", "proprietary", "absent"};
    char cu[16];
    snprintf(line, sizeof(line), "kernel %s, nvidia %s %s, peermem %s, CUDA driver %s",
             fp->kernel_release[0] ? gt_esc(fp->kernel_release) : "?",
             fp->nvidia_flavour <= GTR_NV_ABSENT ? flav[fp->nvidia_flavour] : "unknown",
             fp->nvidia_version[0] ? gt_esc(fp->nvidia_version) : "-",
             fp->peermem_loaded ? "loaded"
             : fp->memory_peers ? "memory_peers"
                                : "absent",
             fmt_int(fp->cuda_driver_version, cu, sizeof(cu)));
    fprintf(f, "   node     ");
    gt_report_wrap(f, 12, 12, line);
    snprintf(line, sizeof(line), "rdma %s; gpus %s",
             fp->rdma_devices[0] ? gt_esc(fp->rdma_devices) : "none",
             fp->gpus[0] ? gt_esc(fp->gpus) : "none");
    fprintf(f, "            ");
    gt_report_wrap(f, 12, 14, line);
    int hdr = 0;
    for (uint32_t k = 0; k < r->ndev; k++) {
        const struct gtr_device *d = &r->devs[k];
        if (!d->in_use)
            continue;
        if (!hdr++)
            fprintf(f, "   devices  %-3s %-12s %-9s %-16s %-15s %-11s %s\n", "dev", "name",
                    "transport", "ptrSupport", "dmabuf", "peermem", "cuda-dmabuf");
        char e[16] = "";
        if (d->probe_dmabuf_errno)
            snprintf(e, sizeof(e), "(%d)", d->probe_dmabuf_errno);
        char pd[64];
        snprintf(pd, sizeof(pd), "%s%s", gt_probe_name(d->probe_dmabuf), e);
        fprintf(f, "            %-3d ", d->dev);
        cell(f, gt_esc(d->name), 12, 16);
        cell(f, gt_esc(d->transport), 9, 29);
        fprintf(f, "%-16s %-15s %-11s %s\n", gt_fmt_ptr(d->ptr_support, b, sizeof(b)), pd,
                gt_probe_name(d->probe_peermem), gt_probe_name(d->probe_cuda_dmabuf));
        if (d->why[0]) {
            fprintf(f, "                why ");
            gt_report_wrap(f, 20, 20, gt_esc(d->why));
        }
    }
    if (!hdr)
        fprintf(f, "   devices  none recorded\n");
    if (r->has_ring) {
        const struct gt_ring_stats *rs = &r->rs;
        fprintf(f,
                "   events   %llu slots, %llu written: %llu complete, %llu torn, %llu overwritten",
                (unsigned long long)rs->capacity, (unsigned long long)rs->head,
                (unsigned long long)rs->complete, (unsigned long long)rs->torn,
                (unsigned long long)rs->overwritten);
        if (rs->bad)
            fprintf(f, ", %llu invalid", (unsigned long long)rs->bad);
        fputc('\n', f);
        /* counts by kind, wrapped under themselves (a run with every kind
         * is about 150 columns) */
        char kinds[1024];
        size_t kl = 0;
        kinds[0] = '\0';
        for (int t = 1; t < GTR_EV_COUNT; t++)
            if (rs->by_type[t] && kl < sizeof(kinds))
                kl += (size_t)snprintf(kinds + kl, sizeof(kinds) - kl, "%s%s %llu", kl ? ", " : "",
                                       gt_event_name(t), (unsigned long long)rs->by_type[t]);
        if (kl) {
            fputs("            ", f);
            gt_report_wrap(f, 12, 12, kinds);
        }
        if (flags & GT_REPORT_EVENTS) {
            /* the last few fallbacks and errors, newest last */
            struct gtr_event last[5], e;
            size_t nlast = 0;
            uint64_t pos = 0;
            while (gt_recfile_event_next(r, &pos, &e)) {
                if (e.type != GTR_EV_FALLBACK && e.type != GTR_EV_ERROR)
                    continue;
                if (nlast == 5)
                    memmove(last, last + 1, 4 * sizeof(last[0]));
                else
                    nlast++;
                last[nlast - 1] = e;
            }
            for (size_t i = 0; i < nlast; i++) {
                snprintf(line, sizeof(line),
                         "%+.6fs %s dev %d comm-slot %u errno %d (%s) reason %s",
                         gt_recfile_ts_rel_s(r, last[i].ts), gt_event_name(last[i].type),
                         last[i].dev, last[i].comm_slot, last[i].err, strerror(last[i].err),
                         gt_reason_name((int)last[i].aux));
                fprintf(f, "            ");
                gt_report_wrap(f, 12, 14, line);
            }
        }
    }
    struct gtr_comm *c = malloc(sizeof(*c));
    if (!c)
        return;
    for (uint32_t h = 0; h < r->nheld; h++) {
        uint32_t s = r->comm_slot[h];
        int nsib;
        if (!gt_recfile_comm_group(r, s, c, &nsib))
            continue;
        struct gt_verdict v;
        const struct gt_recfile *ctx = r;
        gt_verdict_of(c, &ctx, 1, &v);
        char sib[32] = "";
        if (nsib > 1)
            snprintf(sib, sizeof(sib), " + %d sibling slot(s)", nsib - 1);
        char dv[48], ab[16];
        if (c->dev >= 0)
            snprintf(dv, sizeof(dv), "dev %d", c->dev);
        else
            snprintf(dv, sizeof(dv), "dev ? (no connection yet)");
        if (c->abi_version > 0)
            snprintf(ab, sizeof(ab), "v%d", c->abi_version);
        else
            snprintf(ab, sizeof(ab), "?");
        snprintf(line, sizeof(line), "comm %s  (slot %u%s, net ABI %s, %s, %s)",
                 gt_esc(gt_fmt_comm(c, r, b, sizeof(b))), s, sib, ab, dv,
                 c->state == GTR_COMM_FINALIZED ? "finalized" : "active");
        fprintf(f, "\n   ");
        gt_report_wrap(f, 3, 8, line);
        text_comm_body(f, c, "     ", flags);
        snprintf(line, sizeof(line), "%s: %s", gt_verdict_label(v.code, v.emulated), gt_esc(v.why));
        fprintf(f, "     verdict         ");
        gt_report_wrap(f, 21, 21, line);
    }
    free(c);
}

static void text_full(FILE *f, const struct gt_job *j, int flags, char *const *procs)
{
    /* per node */
    fprintf(f, "== nodes\n   %-20s %5s %5s %9s %9s %9s %9s  %s\n", "host", "procs", "comms",
            "dmabuf", "peermem", "host", "failed", "verdict");
    for (size_t i = 0; i < j->nnodes; i++) {
        const struct gt_node *nd = &j->nodes[i];
        fprintf(f, "   ");
        cell(f, gt_esc(nd->host), 20, 3);
        fprintf(f, "%5d %5d %9llu %9llu %9llu %9llu  ", nd->nproc, nd->ncomm,
                (unsigned long long)nd->did[0], (unsigned long long)nd->did[1],
                (unsigned long long)nd->did[2], (unsigned long long)nd->did[3]);
        gt_report_wrap(f, 77, 79, gt_verdict_label(nd->code, j->overall.emulated));
    }
    for (size_t i = 0; i < j->nrec; i++)
        if (procs)
            fputs(procs[i] ? procs[i] : "", f);
        else
            gt_report_process(f, &j->recs[i], flags);

    fprintf(f, "\n== communicators across %zu process(es) on %d host(s)\n", j->nrec, j->nhosts);
    fprintf(f, "   %-20s %5s %5s %8s %8s %8s %8s %5s %5s  %s\n", "comm", "procs", "hosts", "dmabuf",
            "peermem", "host", "failed", "fallb", "errs", "verdict");
    for (size_t i = 0; i < j->ncomm; i++) {
        const struct gt_ccomm *x = &j->comms[i];
        uint64_t did[GTR_METHOD_COUNT] = {0};
        for (int a = 0; a < GTR_ASKED_COUNT; a++)
            for (int m = 0; m < GTR_METHOD_COUNT; m++)
                did[m] += x->sum.reg_count[a][m];
        fprintf(f, "   ");
        cell(f, gt_esc(x->label), 20, 3);
        fprintf(f, "%5zu %5d %8llu %8llu %8llu %8llu %5llu %5llu  ", x->nprocs, x->nhosts,
                (unsigned long long)did[0], (unsigned long long)did[1], (unsigned long long)did[2],
                (unsigned long long)did[3], (unsigned long long)x->sum.fallback_count,
                (unsigned long long)x->sum.error_count);
        gt_report_wrap(f, 85, 87, gt_verdict_label(x->v.code, x->v.emulated));
    }
    for (size_t i = 0; i < j->ncomm; i++) {
        const struct gt_ccomm *x = &j->comms[i];
        if (x->nprocs < 2)
            continue;
        fprintf(f, "\n   comm %s across %zu process(es) on %d host(s)\n", gt_esc(x->label),
                x->nprocs, x->nhosts);
        text_comm_body(f, &x->sum, "     ", 0);
    }
    fprintf(f, "\n== verdict\n");
    for (size_t i = 0; i < j->ncomm; i++) {
        char head[160];
        snprintf(head, sizeof(head), "   comm %-20s %-15s ", gt_esc(j->comms[i].label),
                 gt_verdict_label(j->comms[i].v.code, j->comms[i].v.emulated));
        fputs(head, f);
        gt_report_wrap(f, cols(head),
                       gt_report_hang(cols(head),
                                      gt_verdict_label(j->comms[i].v.code, j->comms[i].v.emulated)),
                       gt_esc(j->comms[i].v.why));
    }
    char head[160];
    snprintf(head, sizeof(head), "   %-25s %-15s ", "all",
             gt_verdict_label(j->overall.code, j->overall.emulated));
    fputs(head, f);
    gt_report_wrap(
        f, cols(head),
        gt_report_hang(cols(head), gt_verdict_label(j->overall.code, j->overall.emulated)),
        gt_esc(j->overall.why));
}

void gt_report_text(FILE *f, const struct gt_job *j, int flags)
{
    gt_report_text_procs(f, j, flags, NULL);
}

void gt_report_text_procs(FILE *f, const struct gt_job *j, int flags, char *const *procs)
{
    if (!j->nrec) {
        fprintf(f, "no recorders found\n");
        return;
    }
    if (flags & GT_REPORT_FULL)
        text_full(f, j, flags, procs);
    else
        text_compact(f, j, flags);
    gt_ab_summary_text(f, j, flags & GT_REPORT_FULL); /* nothing before format 1.5 */
    /* nothing before format 1.6; the histograms with --full */
    gt_coll_text(f, j->coll, (flags & GT_REPORT_BARS) && (flags & GT_REPORT_FULL));
    kc_text(f, j);
}

void gt_json_owner(struct gt_json *js, const struct gt_recfile *r)
{
    char o[64];
    gj_str(js, "owner", gt_owner_short(r->owner, o, sizeof(o)));
    gj_i64(js, "owner_uid", r->owner);
}

void gt_json_identity(struct gt_json *js, const struct gt_recfile *r)
{
    const struct gtr_identity *id = &r->id;
    gt_json_owner(js, r);
    gj_str(js, "host", id->host);
    gj_i64(js, "pid", id->pid);
    gj_str(js, "job", id->job);
    gj_i64(js, "rank", id->rank);
    gj_i64(js, "local_rank", id->local_rank);
    gj_i64(js, "world_size", id->world_size);
    gj_str(js, "state", gt_liveness_name(r->liveness));
    gj_str(js, "launcher", id->launcher);
    gj_str(js, "plugin_version", id->plugin_version);
    gj_i64(js, "nccl_version", id->nccl_version);
    gj_i64(js, "abi_version", id->abi_version);
    gj_str(js, "transport", id->transport);
    gj_str(js, "transport_why", id->transport_why);
    gj_str(js, "policy_reg", id->policy_reg);
    gj_bool(js, "policy_allow_peermem", id->policy_allow_peermem);
    gj_str(js, "policy_text", id->policy_text);
    gj_arr(js, "settings"); /* 1.2+: [] for older files */
    for (uint32_t i = 0; i < r->nset; i++) {
        const struct gtr_setting *s = &r->settings[i];
        if (!s->in_use)
            continue;
        gj_obj(js, NULL);
        gj_str(js, "key", s->key);
        gj_str(js, "value", s->value);
        const char *sn = gt_setting_source_name((int)s->source);
        char num[24];
        snprintf(num, sizeof(num), "source#%u", s->source);
        gj_str(js, "source", sn ? sn : num);
        gj_str(js, "origin", s->origin);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_i64(js, "start_wall_ns", id->start_wall_ns);
    gj_i64(js, "end_wall_ns", id->end_wall_ns);
    gj_obj(js, "node");
    const struct gtr_fingerprint *fp = &id->node;
    gj_str(js, "kernel_release", fp->kernel_release);
    gj_str(js, "boot_id", fp->boot_id);
    gj_str(js, "nvidia_version", fp->nvidia_version);
    gj_i64(js, "nvidia_flavour", fp->nvidia_flavour);
    gj_bool(js, "peermem_loaded", fp->peermem_loaded);
    gj_bool(js, "memory_peers", fp->memory_peers);
    gj_i64(js, "cuda_driver_version", fp->cuda_driver_version);
    gj_str(js, "rdma_devices", fp->rdma_devices);
    gj_str(js, "gpus", fp->gpus);
    gj_str(js, "cpu_model", fp->cpu_model);
    gj_end(js, '}');
}

static void json_reasons(struct gt_json *js, const char *key, const struct gtr_comm *c, int kind)
{
    gj_obj(js, key);
    for (unsigned i = 0; i < GTR_REASON_SLOTS; i++) {
        uint64_t k = gtr_reason_count(c, kind, i);
        if (k)
            gj_u64(js, gt_reason_slot_name((int)i), k);
    }
    gj_end(js, '}');
}

void gt_json_comm_counts(struct gt_json *js, const struct gtr_comm *c)
{
    gj_obj(js, "registrations");
    for (int a = 0; a < GTR_ASKED_COUNT; a++) {
        gj_obj(js, gt_asked_name(a));
        for (int m = 0; m < GTR_METHOD_COUNT; m++) {
            gj_obj(js, gt_method_name(m));
            gj_u64(js, "count", c->reg_count[a][m]);
            gj_u64(js, "bytes", c->reg_bytes[a][m]);
            gj_end(js, '}');
        }
        gj_end(js, '}');
    }
    gj_end(js, '}');
    gj_u64(js, "exported_fds", c->reg_exported_fd);
    gj_u64(js, "cache_hits", c->reg_cache_hits);
    gj_u64(js, "deregistrations", c->dereg_count);
    gj_obj(js, "fallbacks");
    gj_u64(js, "count", c->fallback_count);
    json_reasons(js, "by_reason", c, GTR_FALLBACKS);
    gj_i64(js, "last_errno", c->fallback_last_errno);
    gj_str(js, "last_reason", gt_reason_name(c->fallback_last_reason));
    gj_end(js, '}');
    gj_obj(js, "errors");
    gj_u64(js, "count", c->error_count);
    json_reasons(js, "by_reason", c, GTR_ERRORS);
    gj_i64(js, "last_errno", c->error_last_errno);
    gj_str(js, "last_reason", gt_reason_name(c->error_last_reason));
    gj_str(js, "last_text", c->error_last_text);
    gj_end(js, '}');
    gj_obj(js, "connections");
    gj_u64(js, "listen", c->listen_count);
    gj_u64(js, "connect", c->connect_count);
    gj_u64(js, "accept", c->accept_count);
    gj_u64(js, "close", c->close_count);
    gj_end(js, '}');
    gj_obj(js, "traffic");
    gj_u64(js, "sends", c->send_count);
    gj_u64(js, "send_bytes", c->send_bytes);
    gj_u64(js, "recvs", c->recv_count);
    gj_u64(js, "recv_bytes", c->recv_bytes);
    gj_u64(js, "flushes", c->flush_count);
    gj_u64(js, "send_posted", c->send_posted);
    gj_u64(js, "recv_posted", c->recv_posted);
    gj_end(js, '}');
}

void gt_json_latency(struct gt_json *js, const struct gtr_comm *c)
{
    gj_obj(js, "latency_ns");
    for (int op = 0; op < GTR_OP_COUNT; op++) {
        const struct gtr_hist *h = &c->hist[op];
        gj_obj(js, gt_op_name(op));
        gj_u64(js, "count", h->count);
        gj_u64(js, "sum", h->sum_ns);
        gj_u64(js, "min", h->count ? h->min_ns : 0);
        gj_u64(js, "p50", gt_hist_quantile(h, 0.50));
        gj_u64(js, "p95", gt_hist_quantile(h, 0.95));
        gj_u64(js, "p99", gt_hist_quantile(h, 0.99));
        gj_u64(js, "max", h->max_ns);
        gj_end(js, '}');
    }
    gj_end(js, '}');
}

static void json_verdict(struct gt_json *js, const struct gt_verdict *v)
{
    gj_obj(js, "verdict");
    gj_str(js, "code", gt_verdict_label(v->code, v->emulated));
    gj_i64(js, "exit", gt_verdict_exit(v->code));
    if (v->emulated)
        gj_str(js, "emulated", GT_EMULATED_TEXT);
    gj_str(js, "why", v->why);
    gj_end(js, '}');
}

/* The communicator's norm and the processes that differ from it (the
 * compact report's lines, whole: no limit). */
static void json_differing(struct gt_json *js, const struct gt_job *j, size_t ci)
{
    const struct gt_ccomm *x = &j->comms[ci];
    struct gt_comm_norm nm;
    if (gt_comm_norm(j, ci, &nm))
        return;
    gj_obj(js, "norm");
    gj_str(js, "verdict", gt_verdict_name(nm.majority));
    gj_u64(js, "processes_with_it", nm.nmajority);
    gj_obj(js, "p50_median_ns");
    for (int op = 0; op < GTR_OP_COUNT; op++)
        if (nm.nop[op])
            gj_u64(js, gt_op_name(op), nm.median[op]);
    gj_end(js, '}');
    gj_obj(js, "p50_mad_ns");
    for (int op = 0; op < GTR_OP_COUNT; op++)
        if (nm.nop[op])
            gj_u64(js, gt_op_name(op), nm.mad[op]);
    gj_end(js, '}');
    gj_end(js, '}');
    gj_arr(js, "differing");
    for (size_t k = 0; k < x->nrix; k++) {
        const struct gt_rank_comm *d = &j->ranks[j->rank_ix[x->rix + k]];
        unsigned slow;
        unsigned bits = gt_rank_differs(&nm, d, &slow);
        if (!bits)
            continue;
        const struct gt_recfile *r = &j->recs[d->rec];
        gj_obj(js, NULL);
        gj_i64(js, "rank", r->id.rank);
        gj_str(js, "host", r->id.host);
        gj_i64(js, "pid", r->id.pid);
        gj_str(js, "verdict", gt_verdict_name(d->verdict));
        gj_u64(js, "fallbacks", d->fallbacks);
        gj_u64(js, "errors", d->errors);
        gj_arr(js, "why");
        if (bits & GT_DIFF_VERDICT)
            gj_str(js, NULL, "verdict");
        if (bits & GT_DIFF_FALLBACK)
            gj_str(js, NULL, "fallbacks");
        if (bits & GT_DIFF_ERROR)
            gj_str(js, NULL, "errors");
        for (int op = 0; op < GTR_OP_COUNT; op++)
            if (slow & (1u << op)) {
                char w[32];
                snprintf(w, sizeof(w), "slow %s", gt_op_name(op));
                gj_str(js, NULL, w);
            }
        gj_end(js, ']');
        gj_obj(js, "p50_ns");
        for (int op = 0; op < GTR_OP_COUNT; op++)
            if (d->p50_ns[op])
                gj_u64(js, gt_op_name(op), d->p50_ns[op]);
        gj_end(js, '}');
        gj_end(js, '}');
    }
    gj_end(js, ']');
}

void gt_report_json(struct gt_json *js, const struct gt_job *j)
{
    gt_report_json_ex(js, j, NULL, NULL);
}

void gt_report_json_process(struct gt_json *js, const struct gt_recfile *r)
{
    gj_obj(js, NULL);
    gj_str(js, "source", r->source);
    char fmt[16];
    snprintf(fmt, sizeof(fmt), "%u.%u", r->hdr.version_major, r->hdr.version_minor);
    gj_str(js, "format", fmt);
    gj_u64(js, "file_size", r->hdr.file_size);
    gt_json_identity(js, r);
    gj_arr(js, "devices");
    for (uint32_t k = 0; k < r->ndev; k++) {
        const struct gtr_device *d = &r->devs[k];
        if (!d->in_use)
            continue;
        gj_obj(js, NULL);
        gj_i64(js, "dev", d->dev);
        gj_str(js, "name", d->name);
        gj_str(js, "pci_path", d->pci_path);
        gj_str(js, "transport", d->transport);
        gj_i64(js, "ptr_support", d->ptr_support);
        gj_i64(js, "speed_mbps", d->speed_mbps);
        gj_str(js, "probe_dmabuf", gt_probe_name(d->probe_dmabuf));
        gj_i64(js, "probe_dmabuf_errno", d->probe_dmabuf_errno);
        gj_str(js, "probe_peermem", gt_probe_name(d->probe_peermem));
        gj_str(js, "probe_cuda_dmabuf", gt_probe_name(d->probe_cuda_dmabuf));
        gj_str(js, "why", d->why);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    if (r->has_ring) {
        gj_obj(js, "events");
        gj_u64(js, "capacity", r->rs.capacity);
        gj_u64(js, "written", r->rs.head);
        gj_u64(js, "complete", r->rs.complete);
        gj_u64(js, "torn", r->rs.torn);
        gj_u64(js, "overwritten", r->rs.overwritten);
        gj_u64(js, "invalid", r->rs.bad);
        gj_obj(js, "by_type");
        for (int t = 1; t < GTR_EV_COUNT; t++)
            if (r->rs.by_type[t])
                gj_u64(js, gt_event_name(t), r->rs.by_type[t]);
        gj_end(js, '}');
        gj_end(js, '}');
    }
    gj_arr(js, "comms");
    struct gtr_comm *c = malloc(sizeof(*c));
    for (uint32_t h = 0; c && h < r->nheld; h++) {
        uint32_t s = r->comm_slot[h];
        int nsib;
        if (!gt_recfile_comm_group(r, s, c, &nsib))
            continue;
        char b[96];
        gj_obj(js, NULL);
        gj_str(js, "comm", gt_fmt_comm(c, r, b, sizeof(b)));
        gj_u64(js, "slot", s);
        gj_i64(js, "slots", nsib);
        gj_bool(js, "has_comm_id", c->has_comm_id);
        gj_i64(js, "abi_version", c->abi_version);
        gj_i64(js, "dev", c->dev);
        gj_str(js, "state", c->state == GTR_COMM_FINALIZED ? "finalized" : "active");
        gt_json_comm_counts(js, c);
        gt_json_latency(js, c);
        struct gt_verdict v;
        gt_verdict_of(c, &r, 1, &v);
        json_verdict(js, &v);
        gj_end(js, '}');
    }
    free(c);
    gj_end(js, ']');
    gj_end(js, '}');
}

void gt_report_json_ex(struct gt_json *js, const struct gt_job *j,
                       void (*extra)(struct gt_json *js, const void *arg), const void *arg)
{
    gt_report_json_procs(js, j, extra, arg, NULL);
}

void gt_report_json_procs(struct gt_json *js, const struct gt_job *j,
                          void (*extra)(struct gt_json *js, const void *arg), const void *arg,
                          char *const *procs)
{
    gj_obj(js, NULL);
    gj_arr(js, "processes");
    for (size_t i = 0; i < j->nrec; i++) {
        if (!procs) {
            gt_report_json_process(js, &j->recs[i]);
            continue;
        }
        /* written at this depth as a first item (gt_report_json_process):
         * the comma between items is ours */
        if (i)
            fputc(',', js->f);
        fputs(procs[i] ? procs[i] : "{}", js->f);
    }
    if (procs)
        js->count[js->depth] = (int)j->nrec;
    gj_end(js, ']');
    gj_arr(js, "nodes");
    for (size_t i = 0; i < j->nnodes; i++) {
        const struct gt_node *nd = &j->nodes[i];
        gj_obj(js, NULL);
        gj_str(js, "host", nd->host);
        gj_i64(js, "processes", nd->nproc);
        gj_i64(js, "comms", nd->ncomm);
        gj_obj(js, "registrations");
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            gj_u64(js, gt_method_name(m), nd->did[m]);
        gj_end(js, '}');
        gj_str(js, "verdict", gt_verdict_label(nd->code, j->overall.emulated));
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_arr(js, "communicators");
    for (size_t i = 0; i < j->ncomm; i++) {
        const struct gt_ccomm *x = &j->comms[i];
        gj_obj(js, NULL);
        gj_str(js, "comm", x->label);
        gj_u64(js, "processes", x->nprocs);
        gj_i64(js, "hosts", x->nhosts);
        gj_arr(js, "ranks"); /* one digest per process, in report order */
        for (size_t k = 0; k < x->nrix; k++)
            gj_i64(js, NULL, j->recs[j->ranks[j->rank_ix[x->rix + k]].rec].id.rank);
        gj_end(js, ']');
        gt_json_comm_counts(js, &x->sum);
        gt_json_latency(js, &x->sum);
        json_verdict(js, &x->v);
        json_differing(js, j, i);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gt_ab_summary_json(js, j); /* nothing before format 1.5 */
    gt_coll_json(js, j->coll); /* nothing before format 1.6 */
    gj_i64(js, "hosts", j->nhosts);
    kc_json(js, j);
    json_verdict(js, &j->overall);
    if (extra)
        extra(js, arg);
    gj_end(js, '}');
    gj_done(js);
}

/* ---- The next step for an outcome (verdict, summary; docs/runbook-gates.md) ---- */

/* The first node (natural order) whose verdict is code, else the first node. */
static const char *node_with(const struct gt_job *j, int code)
{
    for (size_t i = 0; i < j->nnodes; i++)
        if (j->nodes[i].code == code)
            return j->nodes[i].host;
    return j->nnodes ? j->nodes[0].host : "a node";
}

void gt_next_step(const struct gt_job *j, char **paths, int npaths, char *buf, size_t n)
{
    char p[512] = "";
    for (int i = 0; i < npaths && strlen(p) + 2 < sizeof(p); i++)
        snprintf(p + strlen(p), sizeof(p) - strlen(p), " %s", gt_esc(paths[i]));
    int code = j->nrec ? j->overall.code : GT_V_NO_DATA;
    const struct gt_recfile *r0 = j->nrec ? &j->recs[0] : NULL;
    const char *reg = r0 ? r0->id.policy_reg : "";
    const char *node = gt_esc(node_with(j, code));
    switch (code) {
    case GT_V_DIRECT_DMABUF:
        if (j->overall.emulated)
            snprintf(buf, n,
                     "emulated (no NIC): rerun on nodes with an RDMA NIC; gdrtrace doctor "
                     "first (gates 1-2)");
        else
            snprintf(buf, n, "compare with a baseline run (gate 4): gdrtrace diff BASE%s", p);
        break;
    case GT_V_DIRECT_PEERMEM:
        if (!strcmp(reg, "peermem"))
            snprintf(buf, n,
                     "peermem baseline: rerun with GDRTRACE_REG=dmabuf, then gdrtrace diff%s "
                     "DMABUF-RUN",
                     p[0] ? p : " BASE");
        else
            snprintf(buf, n,
                     "why not DMA-BUF: gdrtrace doctor on %s (gates 1-2; NCCL_DMABUF_ENABLE)",
                     node);
        break;
    case GT_V_HOST_STAGED:
        if (!strcmp(reg, "host"))
            snprintf(buf, n,
                     "host-memory baseline: rerun with GDRTRACE_REG=dmabuf, then gdrtrace "
                     "diff%s DMABUF-RUN",
                     p[0] ? p : " BASE");
        else if (r0 && !strncmp(r0->id.transport, "sock", 4))
            snprintf(buf, n,
                     "no RDMA NIC was used (transport sock): gdrtrace doctor on %s (gate 1)", node);
        else
            snprintf(buf, n,
                     "NCCL kept GPU memory off the NIC: gdrtrace doctor on %s (gates 1-2), then "
                     "NCCL's GDR level",
                     node);
        break;
    case GT_V_MIXED:
        snprintf(buf, n, "gdrtrace summary%s shows which communicators and processes differ", p);
        break;
    case GT_V_FALLBACK: {
        const char *host = node;
        for (size_t i = 0; i < j->nranks; i++)
            if (j->ranks[i].fallbacks) {
                host = gt_esc(j->recs[j->ranks[i].rec].id.host);
                break;
            }
        snprintf(buf, n, "gdrtrace summary%s names who fell back; gdrtrace doctor on %s (gate 2)",
                 p, host);
        break;
    }
    case GT_V_ERROR: {
        const struct gt_pfate *died = NULL;
        for (size_t i = 0; i < j->nfates && !died; i++)
            if (j->fates[i].f.code == GT_V_ERROR)
                died = &j->fates[i];
        if (died)
            snprintf(buf, n,
                     "the core dump and the called library's log: %s pid %d (it died in "
                     "that call)",
                     gt_esc(j->recs[died->rec].id.host), j->recs[died->rec].id.pid);
        else
            snprintf(buf, n,
                     "failing calls and errnos: gdrtrace summary --full --events%s; gdrtrace "
                     "doctor on %s",
                     p, node);
        break;
    }
    case GT_V_BYPASSED:
        snprintf(buf, n,
                 "fix what the plugin refused (reason above): gdrtrace doctor on %s (gate 1)",
                 node);
        break;
    default: /* NO-DATA */
        if (!j->nrec && j->empty_why[0])
            snprintf(buf, n, "%s", j->empty_why);
        else if (!j->nrec)
            snprintf(buf, n,
                     "likely NCCL did not load the plugin (NCCL_DEBUG=INFO: NET/Plugin) or "
                     "another GDRTRACE_DIR");
        else
            snprintf(buf, n,
                     "likely no network connection yet (one node: NCCL used P2P/SHM); run "
                     "across 2+ nodes");
        break;
    }
}

void gt_report_next(FILE *f, const char *ind, const struct gt_job *j, char **paths, int npaths)
{
    char buf[1024];
    gt_next_step(j, paths, npaths, buf, sizeof(buf));
    fprintf(f, "%snext: ", ind);
    gt_report_wrap(f, (int)strlen(ind) + 6, (int)strlen(ind) + 6, buf);
}
