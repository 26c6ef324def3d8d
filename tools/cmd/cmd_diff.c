/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_diff.c — `gdrtrace diff`: options and the runs of each side (A B, --a
 * and --b, --runs-a and --runs-b), loading them, and the choice of renderer.
 * The comparability guard is tools/lib/abguard.c, the judge tools/lib/ab.c
 * (statistics: abstat.c), the output tools/render/ab_tables.c, ab_text.c
 * and json_diff.c/json_ab.c (docs/diff.md).  Exit: 0 comparable, 1 warning
 * printed, 2 unreadable input, 64 usage.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/ab.h"
#include "tools/lib/abguard.h"
#include "tools/lib/load.h"
#include "tools/render/ab_tables.h"
#include "tools/render/ab_text.h"
#include "tools/cmd/commands.h"
#include "tools/cmd/options.h"
#include "tools/lib/esc.h"
#include "tools/lib/hist.h"
#include "tools/lib/recfact.h"
#include "tools/render/json_diff.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: gdrtrace diff [--json] [--nccl-log-a FILE|DIR]... [--nccl-log-b FILE|DIR]...\n"
        "                     [--accept-owner USER]... A B\n"
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
static int compare(struct gt_abguard *ws, struct side S[2], char **logs[2], int nlog[2])
{
    gt_abguard_recs(ws, &S[0].in.recs[0], &S[1].in.recs[0], "A", "B");
    if (S[0].in.n != S[1].in.n)
        gt_abguard_warn(ws, "processes: A %zu vs B %zu", S[0].in.n, S[1].in.n);
    if (S[0].job.nhosts != S[1].job.nhosts)
        gt_abguard_warn(ws, "hosts: A %d vs B %d", S[0].job.nhosts, S[1].job.nhosts);
    int logrc = 0;
    if (nlog[0] && nlog[1]) /* NCCL's own GPU Direct decisions, from its logs */
        logrc = gt_abguard_gdr(ws, logs, nlog);
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
            gt_abguard_recs(ws, r0, ri, la, lb);
        }
    return logrc;
}

static void print_sides(const struct side S[2], const int k[2], const struct gt_abguard *ws)
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

static void print_json(const struct side S[2], const struct gt_abguard *ws, const struct gt_ab *ab)
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
                     const struct gt_opts *o, struct gt_abguard *ws)
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
            gt_abguard_recs(ws, r0, &x.in.recs[0], la, lb);
            if (x.in.n != first->in.n)
                gt_abguard_warn(ws, "processes: %s %zu vs %s %zu", la, first->in.n, lb, x.in.n);
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
    struct gt_abguard ws = {0};
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
        gt_ab_print_mix(stdout, S[0].tot, S[1].tot);
        gt_ab_print_latency(stdout, S[0].tot, S[1].tot);
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
