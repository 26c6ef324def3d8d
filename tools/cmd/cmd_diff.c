/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_diff.c — `gdrtrace diff [--json] A B`: A/B of two runs (each a
 * recorder, archive or folder).  Compares the method mix, fallbacks, errors
 * and latency percentiles per operation (delta and ratio B/A), and warns
 * loudly, naming each field, when A and B differ in anything but the
 * registration path (GDRTRACE_REG / GDRTRACE_ALLOW_PEERMEM): the node
 * fingerprint (common/fingerprint.c's gt_fingerprint_diff: kernel, NVIDIA
 * flavour/version, peermem, CUDA driver, RDMA devices, GPUs, CPU), NCCL and
 * plugin versions, net ABI, transport, devices, process and host counts, other
 * GDRTRACE_* settings, NCCL's own settings that decide GPU Direct and the
 * transport (NCCL_NET_GDR_LEVEL, NCCL_DMABUF_ENABLE, NCCL_NET …: what NCCL
 * hands the plugin); and when the recorders of one side disagree among
 * themselves.  Then the runbook's three groups side by side (application
 * SLO, NCCL/RDMA evidence, host pressure; tools/lib/ab.c) and its one-line
 * conclusion.  Exit: 0 comparable, 1 warning printed, 2 unreadable input,
 * 64 usage.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fingerprint.h"
#include "common/nccl_cfg.h"
#include "tools/lib/ab.h"
#include "tools/lib/load.h"
#include "tools/render/ab_text.h"
#include "tools/cmd/commands.h"
#include "tools/cmd/options.h"
#include "tools/lib/esc.h"
#include "tools/lib/hist.h"
#include "tools/lib/nccljoin.h"
#include "tools/lib/ncclcfg.h"
#include "tools/lib/recfact.h"
#include "tools/render/json_diff.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: gdrtrace diff [--json] [--nccl-log-a FILE|DIR]... [--nccl-log-b FILE|DIR]...\n"
        "                     A B\n"
        "       gdrtrace diff [options] --a RUN... --b RUN...\n"
        "       gdrtrace diff [options] --runs-a DIR --runs-b DIR\n"
        "  A/B of runs (recorder files, archives or folders; a run is the unit of\n"
        "  evidence): k runs a side, interleaved A1 B1 A2 B2 ... on the same nodes.\n"
        "  --a RUN, --b RUN     one run of A, of B (repeat: one option a run)\n"
        "  --runs-a DIR, --runs-b DIR  every entry of DIR (a folder or archive) is\n"
        "              one run, in name order\n"
        "  Each figure's B-A comes from the per-run values with an interval; the\n"
        "  figures that are evidence of an effect are judged together (false-alarm\n"
        "  rate 5 %%); with one run a side the noise is unknown and nothing is judged.\n"
        "  Warns loudly when A and B differ in anything but the registration path\n"
        "  (kernel, NVIDIA module, CUDA driver, NCCL version, RDMA devices, GPUs,\n"
        "  transport, topology, NCCL's GPU Direct settings such as NCCL_NET_GDR_LEVEL),\n"
        "  naming each difference.  docs/diff.md.\n"
        "  --nccl-log-a FILE|DIR  NCCL's log of run A (as verdict --nccl-log)\n"
        "  --nccl-log-b FILE|DIR  NCCL's log of run B: with both, NCCL's GPU Direct\n"
        "              decisions per GPU and HCA and its GDRDMA channels are "
        "compared\n" GT_ACCEPT_OWNER_USAGE
        "exit: 0 comparable, 1 not comparable (warning printed), 2 unreadable input, 64 usage\n");
}

struct side {
    const char *path;
    struct gt_inputs in;
    struct gt_job job;
    struct gtr_comm *tot; /* summed over every communicator */
};

struct warns {
    char (*w)[512];
    int n, cap;
};

static void warn(struct warns *ws, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct warns *ws, const char *fmt, ...)
{
    if (ws->n == ws->cap) {
        int nc = ws->cap ? ws->cap * 2 : 16;
        void *p = realloc(ws->w, (size_t)nc * sizeof(*ws->w));
        if (!p)
            return;
        ws->w = p;
        ws->cap = nc;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ws->w[ws->n++], sizeof(ws->w[0]), fmt, ap);
    va_end(ap);
}

struct fpctx {
    struct warns *ws;
    const char *la, *lb;
};

static void fp_cb(const char *field, const char *a, const char *b, void *arg)
{
    struct fpctx *c = arg;
    warn(c->ws, "node.%s: %s \"%s\" vs %s \"%s\"", field, c->la, a, c->lb, b);
}

/* The settings an A/B canary varies: everything else must be equal. */
static int is_reg_path(const char *key)
{
    return !strcmp(key, "GDRTRACE_REG") || !strcmp(key, "GDRTRACE_ALLOW_PEERMEM");
}

static const struct gtr_setting *find_setting(const struct gt_recfile *r, const char *key,
                                              size_t klen)
{
    for (uint32_t i = 0; i < r->nset; i++)
        if (r->settings[i].in_use && strlen(r->settings[i].key) == klen &&
            !strncmp(r->settings[i].key, key, klen))
            return &r->settings[i];
    return NULL;
}

/* 1.2+: the settings in force, key by key: every one but the registration
 * path must have the same value on both sides, and an invalid one (the
 * default was in force, not what the operator wrote) is named on its own. */
static void compare_settings(struct warns *ws, const struct gt_recfile *a,
                             const struct gt_recfile *b, const char *la, const char *lb)
{
    const struct gt_recfile *side[2] = {a, b};
    const char *lab[2] = {la, lb};
    for (int s = 0; s < 2; s++)
        for (uint32_t i = 0; i < side[s]->nset; i++) {
            const struct gtr_setting *x = &side[s]->settings[i];
            if (!x->in_use)
                continue;
            if (x->source == GT_SRC_INVALID && !gt_nccl_cfg_find(x->key))
                warn(ws, "setting %s: %s has the invalid %s; the default \"%s\" was in force",
                     x->key, lab[s], x->origin, x->value);
            if (is_reg_path(x->key) || gt_nccl_cfg_find(x->key))
                continue; /* NCCL's own: compare_nccl_settings() */
            const struct gtr_setting *y = find_setting(side[1 - s], x->key, strlen(x->key));
            if (!y)
                warn(ws, "setting %s: %s \"%s\", %s does not record it", x->key, lab[s], x->value,
                     lab[1 - s]);
            else if (s == 0 && strcmp(x->value, y->value))
                warn(ws, "setting %s: %s \"%s\" vs %s \"%s\"", x->key, la, x->value, lb, y->value);
        }
}

/* NCCL's own settings that decide GPU Direct and the transport
 * (common/nccl_cfg.h), by what NCCL made of them: NCCL, not gdrtrace, acts
 * on these, so a difference changes what NCCL hands the plugin, and the
 * runs no longer differ in the registration path only.  A side whose
 * recorder predates their recording is said once. */
static void compare_nccl_settings(struct warns *ws, const struct gt_recfile *a,
                                  const struct gt_recfile *b, const char *la, const char *lb)
{
    int ra = gt_ncclcfg_recorded(a), rb = gt_ncclcfg_recorded(b);
    if (!ra && !rb)
        return;
    if (!ra || !rb) {
        warn(ws,
             "NCCL settings: %s records NCCL's GPU Direct and transport settings, %s's recorder "
             "(plugin %s) does not: whether NCCL ran both the same way is unknown",
             ra ? la : lb, ra ? lb : la, (ra ? b : a)->id.plugin_version);
        return;
    }
    size_t n;
    const struct gt_nccl_cfg *t = gt_nccl_cfg_table(&n);
    static const char *const role[] = {"decides GPU Direct", "decides the transport",
                                       "ignored by NCCL 2.4 and later"};
    for (size_t i = 0; i < n; i++) {
        const struct gtr_setting *x = gt_ncclcfg_get(a, t[i].name);
        const struct gtr_setting *y = gt_ncclcfg_get(b, t[i].name);
        const struct gtr_setting *side[2] = {x, y};
        const char *lab[2] = {la, lb};
        char tx[320], ty[320];
        for (int k = 0; k < 2; k++)
            if (side[k] && side[k]->source == GT_SRC_INVALID)
                warn(ws, "NCCL setting %s: %s has %s", t[i].name, lab[k],
                     gt_ncclcfg_text(side[k], tx, sizeof(tx)));
        const char *vx = x ? x->value : "", *vy = y ? y->value : "";
        if (!strcmp(vx, vy))
            continue;
        if (x)
            gt_ncclcfg_text(x, tx, sizeof(tx));
        else
            snprintf(tx, sizeof(tx), "%s unset", t[i].name);
        if (y)
            gt_ncclcfg_text(y, ty, sizeof(ty));
        else
            snprintf(ty, sizeof(ty), "%s unset", t[i].name);
        warn(ws, "NCCL setting %s (%s): %s %s vs %s %s", t[i].name,
             role[t[i].role < 3 ? t[i].role : 0], la, tx, lb, ty);
    }
}

/* GDRTRACE_* variables set, other than the registration path and those the
 * settings sections of a or b (either may be NULL) record, sorted, "K=V K=V". */
static void other_policy(const char *text, const struct gt_recfile *a, const struct gt_recfile *b,
                         char *out, size_t n)
{
    char buf[512], *save = NULL, *toks[64];
    int nt = 0;
    snprintf(buf, sizeof(buf), "%s", text);
    for (char *t = strtok_r(buf, " ", &save); t && nt < 64; t = strtok_r(NULL, " ", &save)) {
        size_t klen = strcspn(t, "=");
        if (!strncmp(t, "GDRTRACE_REG=", 13) || !strncmp(t, "GDRTRACE_ALLOW_PEERMEM=", 23) ||
            !strncmp(t, "GDRTRACE_DIR=", 13) || !strncmp(t, "GDRTRACE_JOB=", 13) ||
            (a && find_setting(a, t, klen)) || (b && find_setting(b, t, klen)))
            continue;
        toks[nt++] = t;
    }
    for (int i = 1; i < nt; i++)
        for (int k = i; k > 0 && strcmp(toks[k - 1], toks[k]) > 0; k--) {
            char *x = toks[k];
            toks[k] = toks[k - 1];
            toks[k - 1] = x;
        }
    out[0] = 0;
    for (int i = 0; i < nt; i++) {
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%s", i ? " " : "", toks[i]);
    }
}

static void devices_text(const struct gt_recfile *r, char *out, size_t n)
{
    out[0] = 0;
    for (uint32_t k = 0; k < r->ndev; k++) {
        const struct gtr_device *d = &r->devs[k];
        if (!d->in_use)
            continue;
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%d:%s/%s", l ? "," : "", d->dev, d->name, d->transport);
    }
}

/* Everything but the registration path, between two recorders. */
static void compare_recs(struct warns *ws, const struct gt_recfile *a, const struct gt_recfile *b,
                         const char *la, const char *lb)
{
    struct fpctx fc = {ws, la, lb};
    gt_fingerprint_diff(&a->id.node, &b->id.node, fp_cb, &fc);
#define CMP_INT(f, name)                                                                           \
    if (a->id.f != b->id.f)                                                                        \
    warn(ws, "%s: %s %d vs %s %d", name, la, (int)a->id.f, lb, (int)b->id.f)
#define CMP_STR(f, name)                                                                           \
    if (strcmp(a->id.f, b->id.f))                                                                  \
    warn(ws, "%s: %s \"%s\" vs %s \"%s\"", name, la, a->id.f, lb, b->id.f)
    CMP_INT(nccl_version, "NCCL version");
    CMP_STR(plugin_version, "plugin version");
    CMP_INT(abi_version, "net plugin ABI");
    CMP_STR(transport, "transport");
    CMP_INT(world_size, "world size");
    char x[512], y[512];
    /* Settings key by key when both files have the section (1.2+); else, and
     * for the variables no section records, the variables as set. */
    const struct gt_recfile *sa = NULL, *sb = NULL;
    if (a->nset && b->nset) {
        compare_settings(ws, a, b, la, lb);
        compare_nccl_settings(ws, a, b, la, lb);
        sa = a;
        sb = b;
    }
    other_policy(a->id.policy_text, sa, sb, x, sizeof(x));
    other_policy(b->id.policy_text, sa, sb, y, sizeof(y));
    if (strcmp(x, y))
        warn(ws, "other GDRTRACE_* settings: %s \"%s\" vs %s \"%s\"", la, x, lb, y);
    devices_text(a, x, sizeof(x));
    devices_text(b, y, sizeof(y));
    if (strcmp(x, y))
        warn(ws, "devices: %s \"%s\" vs %s \"%s\"", la, x, lb, y);
#undef CMP_INT
#undef CMP_STR
}

/* NCCL's GPU Direct decisions and GDRDMA channels of two runs' logs; a
 * difference is one more reason A and B are not comparable.  0, or
 * GT_EXIT_INPUT when a log could not be read. */
static int compare_gdr(struct warns *ws, char **logs[2], const int nlog[2])
{
    struct gt_nlog l[2];
    char t[2][400];
    uint64_t lines[2], gdr[2];
    int bad = 0;
    for (int s = 0; s < 2; s++) {
        if (gt_nlog_init(&l[s]))
            return GT_EXIT_INPUT;
        bad += gt_nccl_log_load(&l[s], logs[s], nlog[s]);
        gt_nlog_gdr_text(&l[s], t[s], sizeof(t[s]));
        lines[s] = l[s].net_lines;
        gdr[s] = l[s].net_gdrdma;
        gt_nlog_free(&l[s]);
    }
    if (strcmp(t[0], t[1]))
        warn(ws, "nccl-log GPU Direct decisions: A \"%s\" vs B \"%s\"", t[0], t[1]);
    if ((gdr[0] > 0) != (gdr[1] > 0) || (gdr[0] < lines[0]) != (gdr[1] < lines[1]))
        warn(ws, "nccl-log NET channels with GDRDMA: A %llu of %llu vs B %llu of %llu",
             (unsigned long long)gdr[0], (unsigned long long)lines[0], (unsigned long long)gdr[1],
             (unsigned long long)lines[1]);
    return bad ? GT_EXIT_INPUT : 0;
}

/* Each side folds as verdict does (memory bounded by the digests, not the
 * recorders): what is printed is the communicators' sums, the job's verdict
 * and counts, and each recorder's identity, devices and settings, which the
 * reduced recorders keep (keep_settings).  One path a side: a folder is read
 * live-first, so the fold keeps the same copy of a process as a full load. */
static int load_side(struct side *s)
{
    char *p = (char *)s->path;
    s->in.fold = &s->job;
    s->in.keep_settings = 1;
    int rc = gt_load_job(&p, 1, &s->in, &s->job);
    s->tot = malloc(sizeof(*s->tot));
    if (!s->tot)
        return GT_EXIT_INPUT;
    gt_comm_clear(s->tot);
    for (size_t i = 0; i < s->job.ncomm; i++)
        gt_comm_accumulate(s->tot, s->job.comms[i].sum);
    return rc;
}

static uint64_t did(const struct gtr_comm *c, int m)
{
    uint64_t t = 0;
    for (int a = 0; a < GTR_ASKED_COUNT; a++)
        t += c->reg_count[a][m];
    return t;
}

/* The runs of each side, as named on the command line. */
struct runs {
    char **path[2];
    int n[2];
    char *mem[2 * GT_AB_MAXRUNS]; /* --runs-X DIR: the names built from DIR's entries */
    int nmem;
};

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* every entry of dir (but dot files) a run of side s, in name order */
static int add_runs_dir(struct runs *R, int s, const char *dir, int cap)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "gdrtrace diff: --runs-%c %s: %s\n", s ? 'b' : 'a', gt_esc(dir),
                strerror(errno));
        return GT_EXIT_INPUT;
    }
    struct dirent *e;
    int first = R->n[s];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (R->n[s] >= cap) {
            closedir(d);
            fprintf(stderr, "gdrtrace diff: --runs-%c %s: more than %d runs\n", s ? 'b' : 'a',
                    gt_esc(dir), GT_AB_MAXRUNS);
            return GT_EXIT_USAGE;
        }
        size_t l = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(l);
        if (!p) {
            closedir(d);
            return GT_EXIT_INPUT;
        }
        snprintf(p, l, "%s/%s", dir, e->d_name);
        R->path[s][R->n[s]++] = p;
        R->mem[R->nmem++] = p;
    }
    closedir(d);
    if (R->n[s] == first) {
        fprintf(stderr, "gdrtrace diff: --runs-%c %s: no run in it (each entry is one run)\n",
                s ? 'b' : 'a', gt_esc(dir));
        return GT_EXIT_USAGE;
    }
    qsort(R->path[s] + first, (size_t)(R->n[s] - first), sizeof(char *), by_name);
    return -1;
}

/* -1: go on; else the exit code */
static int parse(struct gt_opts *o, char **logs[2], int nlog[2], struct runs *R, int argc,
                 char **argv)
{
    static const struct option opts[] = {GT_LONG_JSON,
                                         {"nccl-log-a", required_argument, 0, 'A'},
                                         {"nccl-log-b", required_argument, 0, 'B'},
                                         {"a", required_argument, 0, 'a'},
                                         {"b", required_argument, 0, 'b'},
                                         {"runs-a", required_argument, 0, 'r'},
                                         {"runs-b", required_argument, 0, 's'},
                                         GT_LONG_ACCEPT_OWNER,
                                         GT_LONG_HELP,
                                         {0, 0, 0, 0}};
    int c, rc, named = 0;
    while ((c = getopt_long(argc, argv, "hj", opts, NULL)) != -1) {
        if (c == 'A' || c == 'B')
            logs[c == 'B'][nlog[c == 'B']++] = optarg;
        else if (c == 'a' || c == 'b') {
            int s = c == 'b';
            if (R->n[s] >= GT_AB_MAXRUNS) {
                fprintf(stderr, "gdrtrace diff: more than %d runs of %c\n", GT_AB_MAXRUNS,
                        s ? 'B' : 'A');
                return GT_EXIT_USAGE;
            }
            R->path[s][R->n[s]++] = optarg;
            named = 1;
        } else if (c == 'r' || c == 's') {
            if ((rc = add_runs_dir(R, c == 's', optarg, GT_AB_MAXRUNS)) >= 0)
                return rc;
            named = 1;
        } else if ((rc = gt_opts_default(o, c, optarg, usage)) >= 0)
            return rc;
    }
    if (named) {
        if (argc - optind != 0 || !R->n[0] || !R->n[1]) {
            fprintf(stderr, "gdrtrace diff: %s\n",
                    argc - optind ? "--a/--b/--runs-a/--runs-b name every run: no other "
                                    "path may follow"
                                  : "runs of both sides are needed (--a or --runs-a, and --b "
                                    "or --runs-b)");
            usage(stderr);
            return GT_EXIT_USAGE;
        }
        return -1;
    }
    if (argc - optind != 2) {
        usage(stderr);
        return GT_EXIT_USAGE;
    }
    R->path[0][R->n[0]++] = argv[optind];
    R->path[1][R->n[1]++] = argv[optind + 1];
    return -1;
}

/* What differs beyond the registration path: A against B, then within
 * each side every process against its first; NCCL's GPU Direct decisions
 * when both logs are given.  Returns compare_gdr's code (2: a log unread). */
static int compare(struct warns *ws, struct side S[2], char **logs[2], int nlog[2])
{
    compare_recs(ws, &S[0].in.recs[0], &S[1].in.recs[0], "A", "B");
    if (S[0].in.n != S[1].in.n)
        warn(ws, "processes: A %zu vs B %zu", S[0].in.n, S[1].in.n);
    if (S[0].job.nhosts != S[1].job.nhosts)
        warn(ws, "hosts: A %d vs B %d", S[0].job.nhosts, S[1].job.nhosts);
    int logrc = 0;
    if (nlog[0] && nlog[1]) /* NCCL's own GPU Direct decisions, from its logs */
        logrc = compare_gdr(ws, logs, nlog);
    else if (nlog[0] || nlog[1])
        fprintf(stderr,
                "gdrtrace diff: NCCL's log given for %s only: its GPU Direct decisions "
                "are not compared\n",
                nlog[0] ? "A" : "B");
    /* world size and process counts are expected to match within a side;
     * fingerprint fields may legitimately repeat per node, keep them. */
    for (int s = 0; s < 2; s++)
        for (size_t i = 1; i < S[s].in.n; i++) {
            char la[160], lb[160];
            const struct gt_recfile *r0 = &S[s].in.recs[0], *ri = &S[s].in.recs[i];
            snprintf(la, sizeof(la), "%s %s:%d", s ? "B" : "A", r0->id.host, r0->id.pid);
            snprintf(lb, sizeof(lb), "%s:%d", ri->id.host, ri->id.pid);
            compare_recs(ws, r0, ri, la, lb);
        }
    return logrc;
}

static void print_sides(const struct side S[2], const int k[2], const struct warns *ws)
{
    for (int s = 0; s < 2; s++) {
        printf("%s: %s  (%zu process(es), %d host(s), GDRTRACE_REG=%s, verdict %s)\n",
               s ? "B" : "A", gt_esc(S[s].path), S[s].in.n, S[s].job.nhosts,
               gt_esc(gt_rec_reg_name(&S[s].in.recs[0])),
               gt_verdict_label(S[s].job.overall.code, S[s].job.overall.emulated));
        if (k[s] > 1)
            printf("   and %d more run(s) of %s; the method mix and latency tables below are "
                   "of its first run\n",
                   k[s] - 1, s ? "B" : "A");
    }
    if (!ws->n) {
        printf("comparable: A and B differ only in the registration path\n");
        return;
    }
    printf("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
           "!! WARNING: A and B differ in more than the registration path (%d "
           "difference(s)).\n"
           "!! The runbook forbids mixing hypotheses: the deltas below cannot be pinned on\n"
           "!! DMA-BUF vs peermem vs host staging.\n",
           ws->n);
    for (int i = 0; i < ws->n; i++)
        printf("!!   %s\n", gt_esc(ws->w[i]));
    printf("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n");
    fprintf(stderr,
            "gdrtrace diff: WARNING: A and B differ in more than the registration path "
            "(%d difference(s), listed above)\n",
            ws->n);
}

/* method mix, fallbacks by reason, errors */
static void print_mix(const struct gtr_comm *A, const struct gtr_comm *B)
{
    uint64_t ta = gt_comm_regs(A), tb = gt_comm_regs(B);
    printf("\nmethod mix (all registrations)\n   %-9s %10s %7s %10s %7s\n", "method", "A", "A %",
           "B", "B %");
    for (int m = 0; m < GTR_METHOD_COUNT; m++) {
        uint64_t a = did(A, m), b = did(B, m);
        printf("   %-9s %10llu %6.1f%% %10llu %6.1f%%\n", gt_method_name(m), (unsigned long long)a,
               ta ? 100.0 * (double)a / (double)ta : 0.0, (unsigned long long)b,
               tb ? 100.0 * (double)b / (double)tb : 0.0);
    }
    printf("\n   %-9s %10s %10s\n", "", "A", "B");
    printf("   %-9s %10llu %10llu\n", "fallbacks", (unsigned long long)A->fallback_count,
           (unsigned long long)B->fallback_count);
    for (unsigned r = 0; r < GTR_REASON_SLOTS; r++) {
        uint64_t a = gtr_reason_count(A, GTR_FALLBACKS, r);
        uint64_t b = gtr_reason_count(B, GTR_FALLBACKS, r);
        if (a || b)
            printf("     %-22s %10llu %10llu\n", gt_reason_slot_name((int)r), (unsigned long long)a,
                   (unsigned long long)b);
    }
    printf("   %-9s %10llu %10llu\n", "errors", (unsigned long long)A->error_count,
           (unsigned long long)B->error_count);
}

static void print_latency(const struct gtr_comm *A, const struct gtr_comm *B)
{
    printf("\nlatency (all communicators)\n   %-6s %-4s %10s %10s %11s %8s\n", "op", "", "A", "B",
           "B-A", "B/A");
    for (int op = 0; op < GTR_OP_COUNT; op++) {
        const struct gtr_hist *ha = &A->hist[op], *hb = &B->hist[op];
        if (!ha->count && !hb->count)
            continue;
        for (int q = 0; q < GT_DIFF_NQ; q++) {
            uint64_t a = gt_diff_qval(ha, q), b = gt_diff_qval(hb, q);
            char x[24], y[24], d[24];
            gt_fmt_ns(b > a ? b - a : a - b, d, sizeof(d));
            char dd[28];
            snprintf(dd, sizeof(dd), "%s%s", b >= a ? "+" : "-", d);
            char ratio[16] = "-";
            if (a && b)
                snprintf(ratio, sizeof(ratio), "%.2fx", (double)b / (double)a);
            printf("   %-6s %-4s %10s %10s %11s %8s\n", q ? "" : gt_op_name(op), gt_diff_qname[q],
                   ha->count ? gt_fmt_ns(a, x, sizeof(x)) : "-",
                   hb->count ? gt_fmt_ns(b, y, sizeof(y)) : "-",
                   (ha->count && hb->count) ? dd : "-", ratio);
        }
    }
    if (A->hist[GTR_OP_SEND].count || A->hist[GTR_OP_RECV].count || B->hist[GTR_OP_SEND].count ||
        B->hist[GTR_OP_RECV].count)
        printf("   send, recv: from the post (isend/irecv) to the test() that finds it done,\n"
               "   which includes waiting for the peer: milliseconds there are normal.\n");
}

static void print_json(const struct side S[2], const struct warns *ws, const struct gt_ab *ab)
{
    struct gt_diff_doc d = {.warn = (const char(*)[512])ws->w, .nwarn = ws->n, .ab = ab};
    for (int s = 0; s < 2; s++)
        d.side[s] = (struct gt_diff_side){S[s].path, S[s].in.n, &S[s].job, S[s].tot,
                                          gt_rec_reg_name(&S[s].in.recs[0])};
    gt_json_diff(stdout, &d);
}

/* Runs 2..k of side s: each read, checked against the side's first run
 * (a run of another kind is a confounder like any), its figures taken and
 * the job let go.  0, or GT_EXIT_INPUT when a run could not be read. */
static int more_runs(struct side *first, int s, char **paths, int n, struct gt_ab_run *out,
                     const struct gt_opts *o, struct warns *ws)
{
    int bad = 0;
    for (int i = 1; i < n; i++) {
        struct side x = {.path = paths[i]};
        gt_inputs_take_owners(&x.in, &o->owners);
        int rc = load_side(&x);
        if (rc || !x.in.n) {
            fprintf(stderr, "gdrtrace diff: %s: no readable recorder\n", gt_esc(x.path));
            bad = 1;
        } else {
            char la[160], lb[200];
            const struct gt_recfile *r0 = &first->in.recs[0];
            snprintf(la, sizeof(la), "%s run 1", s ? "B" : "A");
            snprintf(lb, sizeof(lb), "%s run %d", s ? "B" : "A", i + 1);
            compare_recs(ws, r0, &x.in.recs[0], la, lb);
            if (x.in.n != first->in.n)
                warn(ws, "processes: %s %zu vs %s %zu", la, first->in.n, lb, x.in.n);
            gt_ab_run_of(&x.job, &out[i]);
        }
        free(x.tot);
        gt_job_free(&x.job);
        gt_inputs_free(&x.in);
    }
    return bad ? GT_EXIT_INPUT : 0;
}

int gt_cmd_diff(int argc, char **argv)
{
    struct gt_opts o = GT_OPTS_INIT("diff");
    int nlog[2] = {0, 0};
    char **logs[2] = {calloc((size_t)argc + 1, sizeof(char *)),
                      calloc((size_t)argc + 1, sizeof(char *))};
    struct runs R = {
        .path = {calloc(GT_AB_MAXRUNS, sizeof(char *)), calloc(GT_AB_MAXRUNS, sizeof(char *))}};
    struct gt_ab_run *runs[2] = {NULL, NULL};
    struct side S[2] = {{0}};
    struct warns ws = {0};
    int rc = !logs[0] || !logs[1] || !R.path[0] || !R.path[1]
                 ? GT_EXIT_INPUT
                 : parse(&o, logs, nlog, &R, argc, argv);
    if (rc >= 0)
        goto out;
    for (int s = 0; s < 2; s++) {
        S[s].path = R.path[s][0];
        gt_inputs_take_owners(&S[s].in, &o.owners);
    }
    rc = load_side(&S[0]);
    int rc2 = load_side(&S[1]);
    if (rc || rc2 || !S[0].in.n || !S[1].in.n) {
        for (int i = 0; i < 2; i++)
            if (!S[i].in.n)
                fprintf(stderr, "gdrtrace diff: %s: no readable recorder\n", gt_esc(S[i].path));
        rc = GT_EXIT_INPUT;
        goto out;
    }
    int logrc = compare(&ws, S, logs, nlog);
    for (int s = 0; s < 2; s++) {
        runs[s] = calloc((size_t)R.n[s], sizeof(*runs[s]));
        if (!runs[s]) {
            rc = GT_EXIT_INPUT;
            goto out;
        }
        gt_ab_run_of(&S[s].job, &runs[s][0]);
        if (more_runs(&S[s], s, R.path[s], R.n[s], runs[s], &o, &ws)) {
            rc = GT_EXIT_INPUT;
            goto out;
        }
    }
    /* the runbook's three groups and its one-line conclusion (tools/lib/ab.c) */
    struct gt_ab *ab = calloc(1, sizeof(*ab));
    if (!ab) {
        rc = GT_EXIT_INPUT;
        goto out;
    }
    gt_ab_build(ab, runs[0], R.n[0], runs[1], R.n[1], ws.n);
    if (o.json) {
        print_json(S, &ws, ab);
    } else {
        print_sides(S, R.n, &ws);
        print_mix(S[0].tot, S[1].tot);
        print_latency(S[0].tot, S[1].tot);
        gt_ab_print(stdout, ab);
    }
    free(ab);
    rc = logrc ? logrc : ws.n ? 1 : 0;
out:
    free(ws.w);
    free(logs[0]);
    free(logs[1]);
    for (int s = 0; s < 2; s++) {
        free(runs[s]);
        free(R.path[s]);
        free(S[s].tot);
        gt_job_free(&S[s].job);
        gt_inputs_free(&S[s].in);
    }
    for (int i = 0; i < R.nmem; i++)
        free(R.mem[i]);
    return rc;
}
