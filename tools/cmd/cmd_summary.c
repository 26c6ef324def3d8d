/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_summary.c — `gdrtrace summary [--ranks|--full] [--json] [--no-bars] [--events] [PATH...]`.
 * The default report reads at a thousand ranks (job, communicators, the
 * processes that differ from their communicator's majority) and folds each
 * recorder as it is read, like verdict; --full and --json too, each
 * process's section (or JSON item) written while its recorder is whole and
 * kept as text.
 * Exit: 0, GT_EXIT_INPUT (2) when an input could not be read (the rest is
 * still reported), 15 (verdict's NO-DATA) when no recorder was found, so that
 * summary and verdict agree on an empty input, GT_EXIT_USAGE on bad options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cmd/commands.h"
#include "tools/cmd/options.h"
#include "tools/lib/esc.h"
#include "tools/lib/nccljoin.h"
#include "tools/lib/load.h"
#include "tools/render/json_summary.h"
#include "tools/render/json_summary_nccl.h"
#include "tools/render/nccljoin_text.h"
#include "tools/render/summary.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gdrtrace summary [--ranks|--full] [--json] [--no-bars] [--events] [--job J]\n"
            "                        [--nccl-log FILE|DIR]... [--accept-owner USER]... [PATH...]\n"
            "  The job (processes, nodes, versions, verdicts), then each communicator with\n"
            "  only the processes that differ from its majority: another verdict, fallbacks,\n"
            "  errors, a p50 latency outlier (over 2x the median and 3 scaled MADs above it);\n"
            "  communicators alike are counted on one line; then the verdict and the next\n"
            "  step.  PATH: recorder files, dump archives, or folders of them (all nodes of a\n"
            "  job in one folder are summarized as one job); default: the recorders in\n"
            "  $GDRTRACE_DIR (/dev/shm).\n"
            "  --ranks     every process of every communicator, one line each\n"
            "  --full      per node, per process and per communicator: what NCCL asked for\n"
            "              and what the plugin did, fallbacks and errors with reasons and\n"
            "              errnos, latency p50/p95/p99/max with histograms, device probes\n"
            "  --json      machine-readable output (shape in docs/reader.md)\n"
            "  --no-bars   leave out the histogram bars (--full)\n"
            "  --events    --full, with the last fallback/error events of each process\n"
            "  --job J     only the recorders of job J (GDRTRACE_JOB, SLURM_JOB_ID, ...);\n"
            "              --job - : those written without a job id\n" GT_ACCEPT_OWNER_USAGE
            "  --nccl-log FILE|DIR  NCCL's log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET),\n"
            "              joined by commId: what NCCL loaded, each communicator's ranks,\n"
            "              hosts and channels, GPU Direct decisions, the verdict with it\n"
            "exit: 0 ok, 2 an input could not be read, 15 no recorder found, 64 usage\n");
}

/* --full and --json: each process's section (or JSON item), written while
 * its recorder is whole (inputs.h's each hook), by the index it was read
 * under. */
struct procs {
    int flags, json, oom;
    char **text;
    size_t n, cap;
};

static void write_proc(struct gt_inputs *in, size_t i, void *arg)
{
    struct procs *p = arg;
    if (i >= p->cap) {
        size_t nc = p->cap ? 2 * p->cap : 64;
        while (nc <= i)
            nc *= 2;
        char **nt = realloc(p->text, nc * sizeof(*nt));
        if (!nt) {
            p->oom = 1;
            return;
        }
        memset(nt + p->cap, 0, (nc - p->cap) * sizeof(*nt));
        p->text = nt;
        p->cap = nc;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        p->oom = 1;
        return;
    }
    if (p->json) { /* an item of "processes": {"processes": [ is depth 2 */
        struct gt_json js = {.f = f, .depth = 2};
        gt_report_json_process(&js, &in->recs[i]);
    } else {
        gt_report_process(f, &in->recs[i], p->flags);
    }
    if (fclose(f)) {
        free(buf);
        p->oom = 1;
        return;
    }
    free(p->text[i]);
    p->text[i] = buf;
    if (i >= p->n)
        p->n = i + 1;
}

/* -1: go on (*flags set); else the exit code */
static int parse(struct gt_opts *o, int *flags, char **logs, int *nlogs, int argc, char **argv)
{
    static const struct option opts[] = {GT_LONG_JSON,
                                         GT_LONG_NO_BARS,
                                         {"events", no_argument, 0, 'e'},
                                         GT_LONG_JOB,
                                         {"ranks", no_argument, 0, 'r'},
                                         GT_LONG_FULL,
                                         {"nccl-log", required_argument, 0, 'L'},
                                         GT_LONG_ACCEPT_OWNER,
                                         GT_LONG_HELP,
                                         {0, 0, 0, 0}};
    int c, rc;
    *flags = GT_REPORT_BARS;
    while ((c = getopt_long(argc, argv, "hj", opts, NULL)) != -1) {
        switch (c) {
        case 'e': /* the events are per-process detail */
            *flags |= GT_REPORT_EVENTS | GT_REPORT_FULL;
            break;
        case 'r':
            *flags |= GT_REPORT_RANKS;
            break;
        case 'L':
            logs[(*nlogs)++] = optarg;
            break;
        default:
            if ((rc = gt_opts_default(o, c, optarg, usage)) >= 0)
                return rc;
        }
    }
    if (o->no_bars)
        *flags &= ~GT_REPORT_BARS;
    if (o->full)
        *flags |= GT_REPORT_FULL;
    if ((*flags & GT_REPORT_RANKS) && (*flags & GT_REPORT_FULL)) {
        fprintf(stderr, "gdrtrace summary: --ranks and --full are two views: give one\n");
        return GT_EXIT_USAGE;
    }
    return -1;
}

/* NCCL's log, joined (tools/lib/nccljoin.h); 1 when it was */
static int join_log(struct gt_nlog *log, struct gt_nccl_join *nj, const struct gt_job *j,
                    const struct gt_inputs *in, char **logs, int *nlogs, int *rc)
{
    int joined = 0;
    if (*nlogs && !gt_nlog_init(log)) {
        gt_nccl_log_owners(log, in);
        int bad = gt_nccl_log_load(log, logs, *nlogs);
        joined = !gt_nccl_join(log, j, nj);
        if ((bad || !joined) && !*rc)
            *rc = GT_EXIT_INPUT;
    } else if (*nlogs) {
        *rc = GT_EXIT_INPUT;
        *nlogs = 0;
    }
    return joined;
}

static void print_text(const struct gt_job *j, int flags, char **procs,
                       const struct gt_nccl_join *nj, char **paths, int npaths)
{
    gt_report_text_procs(stdout, j, flags, procs);
    if (nj) {
        gt_nccl_join_print_section(stdout, nj);
        printf("\n== verdict with NCCL's log\n");
        gt_nccl_join_print_comms(stdout, nj);
        gt_nccl_join_print_procs(stdout, nj, j->overall.emulated);
        char head[160]; /* an emulated label alone is 66 columns */
        const char *lab = gt_verdict_label(nj->code, j->overall.emulated);
        int w = snprintf(head, sizeof(head), "%-25s %-15s ", "all", lab);
        fputs(head, stdout);
        gt_report_wrap(stdout, w, gt_report_hang(w, lab), gt_esc(nj->why));
    }
    gt_nccl_join_print_next(stdout, "   ", nj, j, paths, npaths);
}

int gt_cmd_summary(int argc, char **argv)
{
    struct gt_opts o = GT_OPTS_INIT("summary");
    int flags, nlogs = 0;
    char **logs = calloc((size_t)argc + 1, sizeof(*logs));
    if (!logs)
        return GT_EXIT_INPUT;
    int rc = parse(&o, &flags, logs, &nlogs, argc, argv);
    if (rc >= 0) {
        free(logs);
        return rc;
    }
    int json = o.json;
    struct gt_inputs in = {.job = o.job};
    gt_inputs_take_owners(&in, &o.owners);
    struct gt_job j;
    /* the default and --ranks need only the digests: fold each recorder as
     * it is read and release it (memory of verdict's order, not the files');
     * --full and --json write each process's section while its recorder is
     * whole, then fold it: memory is that text, not the recorders */
    struct procs pr = {.flags = flags, .json = json};
    in.fold = &j;
    if (json || (flags & GT_REPORT_FULL)) {
        in.each = write_proc;
        in.each_arg = &pr;
    }
    rc = gt_load_job(argv + optind, argc - optind, &in, &j);
    char **procs = NULL; /* pr.text in report order */
    if (in.each && !pr.oom && j.nrec && !(procs = calloc(j.nrec, sizeof(*procs))))
        pr.oom = 1;
    if (pr.oom) {
        fprintf(stderr, "gdrtrace summary: out of memory writing the processes' sections\n");
        rc = GT_EXIT_INPUT;
    }
    for (size_t i = 0; procs && i < j.nrec && i < pr.n && j.rec_pos; i++)
        procs[j.rec_pos[i]] = pr.text[i];
    struct gt_nlog log;
    struct gt_nccl_join nj = {0};
    int joined = join_log(&log, &nj, &j, &in, logs, &nlogs, &rc);
    if (!rc && !in.n && !(joined && log.ncomm))
        rc = gt_verdict_exit(GT_V_NO_DATA);
    if (json) {
        struct gt_json js;
        gj_init(&js, stdout);
        gt_report_json_procs(&js, &j, joined ? gt_json_summary_nccl : NULL, &nj, procs);
    } else {
        print_text(&j, flags, procs, joined ? &nj : NULL, argv + optind, argc - optind);
    }
    if (nlogs) {
        gt_nccl_join_free(&nj);
        gt_nlog_free(&log);
    }
    free(logs);
    for (size_t i = 0; i < pr.n; i++)
        free(pr.text[i]);
    free(pr.text);
    free(procs);
    gt_job_free(&j);
    gt_inputs_free(&in);
    return rc;
}
