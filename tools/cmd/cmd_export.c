/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_export.c — `gdrtrace export [--prometheus|--json] [-o FILE] [PATH...]`:
 * metrics for node_exporter's textfile collector (Prometheus text exposition
 * format 0.0.4) or as JSON.  Every family is printed whole (HELP, TYPE, then
 * its samples), label values are escaped (\\ \" \n), and -o writes through a
 * temporary file in FILE's folder and rename() so the collector never reads a
 * half file; FILE must be absent or a regular file (a FIFO or device node is
 * refused, tools/lib/outfile.h).  Exit: 0, 1 output not written, 2 unreadable input, 64 usage.
 *
 * Labels follow Prometheus' conventions: no label named like a target label
 * (job, instance: the job is `gdrtrace_job`), and by default no per-process
 * label (pid, rank), because each run would make new series: samples with
 * equal names and labels are summed (per host, job, communicator, device).
 * Every sample is buffered, merged, and printed in first-seen order, so each
 * family stays whole.  Exited or crashed recorders whose last activity is
 * older than --exited-within are left out (a comment line counts them).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/hist.h"
#include "tools/lib/coll.h"
#include "tools/cmd/commands.h"
#include "tools/cmd/options.h"
#include "tools/lib/duration.h"
#include "tools/lib/esc.h"
#include "tools/lib/hist.h"
#include "tools/lib/outfile.h"
#include "tools/lib/recfact.h"
#include "tools/render/json_export.h"
#include "tools/render/prom.h"
#include "tools/lib/load.h"
#include "tools/render/json.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gdrtrace export [--prometheus|--json] [-o FILE] [--job J] [--per-process]\n"
            "                       [--exited-within DURATION] [--quiet] [--accept-owner USER]...\n"
            "                       [PATH...]\n"
            "  Metrics of every recorder (default: $GDRTRACE_DIR) in Prometheus text format\n"
            "  (for node_exporter's textfile collector; -o FILE replaces FILE atomically,\n"
            "  and only if it is a regular file) or JSON.  Families:\n"
            "  gdrtrace_registrations_total, gdrtrace_registered_bytes_total,\n"
            "  gdrtrace_fallbacks_total, gdrtrace_errors_total, gdrtrace_latency_seconds\n"
            "  (summary: _sum, _count; quantiles 0.5/0.95/0.99 with --per-process),\n"
            "  gdrtrace_messages_total,\n"
            "  gdrtrace_message_bytes_total, gdrtrace_verdict, gdrtrace_job_verdict,\n"
            "  gdrtrace_events_total, gdrtrace_recorders; with host pressure (format 1.5)\n"
            "  gdrtrace_host_cpu_seconds_total, gdrtrace_host_data_path_thread_cpu_seconds_total,\n"
            "  gdrtrace_host_staging_bytes, gdrtrace_host_staging_high_water_bytes,\n"
            "  gdrtrace_host_{resident,locked,pinned}_high_water_bytes.  Labels: host,\n"
            "  gdrtrace_job, comm, device, ...; samples of one host, job and communicator\n"
            "  are summed.\n"
            "  --per-process         add rank and pid labels (a new series per process and\n"
            "                        run) and the latency quantiles\n"
            "  --exited-within D     leave out exited or crashed recorders whose last\n"
            "                        activity is older than D (default 15m: a whole number\n"
            "                        and a unit s, m, h, d or w); archives keep them all\n"
            "  --quiet               no note on stderr when no recorder is found (for a\n"
            "                        timer: an idle node is normal); errors still "
            "printed\n" GT_ACCEPT_OWNER_USAGE
            "exit: 0 ok, 1 output not written, 2 an input could not be read, 64 usage\n");
}

/* What the fold keeps of each recorder for the --exited-within view, by the
 * index it was read under. */
struct exrec {
    int64_t act;          /* last activity (gt_last_activity_ns), unclamped */
    int seen[GT_V_COUNT]; /* its communicators' verdicts */
};

struct exfold {
    struct gt_prom *k;
    struct gtr_comm *grp;
    struct exrec *r;
    size_t cap;
    int oom;
};

/* inputs.h's each hook: recorder i is still whole here. */
static void each_rec(struct gt_inputs *in, size_t i, void *arg)
{
    struct exfold *x = arg;
    if (i >= x->cap) {
        size_t nc = x->cap ? 2 * x->cap : 64;
        while (nc <= i)
            nc *= 2;
        struct exrec *nr = realloc(x->r, nc * sizeof(*nr));
        if (!nr) {
            x->oom = 1;
            return;
        }
        x->r = nr;
        x->cap = nc;
    }
    const struct gt_recfile *r = &in->recs[i];
    memset(&x->r[i], 0, sizeof(x->r[i]));
    x->r[i].act = gt_last_activity_ns(r, INT64_MAX);
    x->k->rec = i;
    gt_prom_export_recorder(x->k, r, x->grp, x->r[i].seen);
}

/* Exited or crashed, not from an archive, and last active (act) before now - within. */
static int left_out_rec(const struct gt_recfile *r, int64_t act, int64_t now, int64_t within)
{
    int gone = r->liveness == GT_LIVE_EXITED || r->liveness == GT_LIVE_CRASHED;
    return gone && !r->from_archive && now - (act > now ? now : act) > within;
}

static int per_process; /* --per-process */

/* -1: go on; else the exit code */
static int parse(struct gt_opts *o, int64_t *within, int *quiet, int argc, char **argv)
{
    static const struct option opts[] = {{"prometheus", no_argument, 0, 'p'},
                                         GT_LONG_JSON,
                                         GT_LONG_OUTPUT,
                                         GT_LONG_JOB,
                                         {"per-process", no_argument, 0, 'P'},
                                         {"exited-within", required_argument, 0, 'E'},
                                         {"quiet", no_argument, 0, 'q'},
                                         GT_LONG_ACCEPT_OWNER,
                                         GT_LONG_HELP,
                                         {0, 0, 0, 0}};
    int c, rc;
    while ((c = getopt_long(argc, argv, "hjpqo:", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            o->json = 0;
            break;
        case 'P':
            per_process = 1;
            break;
        case 'q':
            *quiet = 1;
            break;
        case 'E':
            if (gt_parse_duration(optarg, within) != 0) {
                fprintf(stderr,
                        "gdrtrace export: --exited-within '%s' is not a duration: want a whole "
                        "number and a unit s, m, h, d or w (15m, 12h)\n",
                        gt_esc(optarg));
                return 64;
            }
            break;
        default:
            if ((rc = gt_opts_default(o, c, optarg, usage)) >= 0)
                return rc;
        }
    }
    return -1;
}

/* The view: live recorders, and exited/crashed ones of the last `within`
 * (gone[i] 0, by report position; the count of the others returned).
 * Archive members are a snapshot taken at dump time, so they all stay.
 * *overall: the verdict of what is kept. */
static size_t view(const struct gt_job *j, const struct exfold *x, int64_t within,
                   unsigned char *gone, struct gt_verdict *overall)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    size_t left_out = 0;
    for (size_t ri = 0; ri < j->nrec && j->rec_pos; ri++) {
        size_t i = j->rec_pos[ri];
        gone[i] = (unsigned char)left_out_rec(&j->recs[i], x->r[ri].act, now, within);
        left_out += gone[i];
    }
    *overall = j->overall;
    if (!left_out)
        return 0;
    /* the model's verdict counted them: combine what is kept */
    int seen[GT_V_COUNT] = {0};
    overall->emulated = 0;
    for (size_t ri = 0; ri < j->nrec; ri++) {
        size_t i = j->rec_pos[ri];
        if (gone[i])
            continue;
        overall->emulated |= j->recs[i].emulated;
        for (int v = 0; v < GT_V_COUNT; v++)
            seen[v] += x->r[ri].seen[v];
    }
    for (size_t i = 0; i < j->nfates; i++) { /* fates of the processes kept */
        int code = j->fates[i].f.code;
        if (j->fates[i].rec >= j->nrec || gone[j->fates[i].rec])
            continue;
        if (code >= 0 && code < GT_V_COUNT)
            seen[code]++;
    }
    overall->code = gt_verdict_combine_counts(seen);
    return left_out;
}

/* The samples read after the fold, merged, written to f as text or JSON;
 * 0, or 1 out of memory (said). */
static int write_metrics(FILE *f, int json, struct gt_prom *k, const struct gt_job *j,
                         const struct exfold *x, int64_t within, unsigned char *gone)
{
    struct gt_verdict overall;
    size_t left_out = view(j, x, within, gone, &overall);
    if (!json && left_out) /* nothing to say when none was left out */
        fprintf(f,
                "# gdrtrace: %zu exited or crashed recorder(s) left out: last activity older "
                "than --exited-within\n",
                left_out);
    gt_prom_export_job(k, j, gone, &overall);
    gt_prom_merge(k);
    if (json)
        gt_json_export(f, k);
    else
        gt_prom_text(f, k);
    if (!k->oom)
        return 0;
    fprintf(stderr, "gdrtrace export: out of memory\n");
    return 1;
}

/* -o FILE: written to tmp, then renamed over FILE; 0, or 1 (said) */
static int commit_out(FILE *f, const char *tmp, const char *out)
{
    char err[GT_ERRLEN];
    int bad = ferror(f) | (fclose(f) != 0);
    if (bad) {
        fprintf(stderr, "gdrtrace export: writing %s failed: %m\n", tmp);
        unlink(tmp);
        return 1;
    }
    if (gt_out_commit(tmp, out, 1, err, sizeof(err))) {
        fprintf(stderr, "gdrtrace export: %s\n", gt_esc(err));
        unlink(tmp);
        return 1;
    }
    return 0;
}

int gt_cmd_export(int argc, char **argv)
{
    struct gt_opts o = GT_OPTS_INIT("export");
    int quiet = 0;
    int64_t within = 15LL * 60 * 1000000000;
    int rc = parse(&o, &within, &quiet, argc, argv);
    if (rc >= 0)
        return rc;
    const char *out = o.out;
    char err[GT_ERRLEN];
    if (out && gt_out_check(out, 1, err, sizeof(err))) {
        fprintf(stderr, "gdrtrace export: %s\n", gt_esc(err));
        return 1;
    }
    /* Each recorder's communicator samples are taken while it is whole and
     * it is then reduced to its digest (fold mode): memory is the samples
     * and the digests, not the recorders. */
    struct gt_job j;
    struct gt_prom k = {0};
    gt_prom_export_begin(&k, per_process);
    struct exfold x = {.k = &k, .grp = malloc(sizeof(struct gtr_comm))};
    struct gt_inputs in = {.job = o.job, .quiet_empty = quiet, .each = each_rec, .each_arg = &x};
    gt_inputs_take_owners(&in, &o.owners);
    in.fold = &j;
    unsigned char *gone = NULL;
    FILE *f = stdout;
    char tmp[4200];
    if (!x.grp) {
        fprintf(stderr, "gdrtrace export: out of memory\n");
        return 1;
    }
    rc = gt_load_job(argv + optind, argc - optind, &in, &j);
    if (x.oom || (j.nrec && !(gone = calloc(j.nrec, 1)))) {
        fprintf(stderr, "gdrtrace export: out of memory\n");
        rc = 1;
        goto done;
    }
    if (out) {
        snprintf(tmp, sizeof(tmp), "%s.tmp.%d", out, (int)getpid());
        f = fopen(tmp, "wx");
        if (!f) {
            fprintf(stderr, "gdrtrace export: %s: %m\n", tmp);
            rc = 1;
            goto done;
        }
    }
    if (write_metrics(f, o.json, &k, &j, &x, within, gone))
        rc = 1;
    if (out && commit_out(f, tmp, out))
        rc = 1;
done:
    gt_prom_free(&k);
    free(gone);
    free(x.r);
    free(x.grp);
    gt_job_free(&j);
    gt_inputs_free(&in);
    return rc;
}
