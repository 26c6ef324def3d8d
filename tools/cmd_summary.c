/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_summary.c — `gdrtrace summary [--ranks|--full] [--json] [--no-bars] [--events] [PATH...]`.
 * The default report reads at a thousand ranks (job, communicators, the
 * processes that differ from their communicator's majority) and folds each
 * recorder as it is read, like verdict; --full keeps every recorder for the
 * per-process detail, --json too.
 * Exit: 0, GT_EXIT_INPUT (2) when an input could not be read (the rest is
 * still reported), 15 (verdict's NO-DATA) when no recorder was found, so that
 * summary and verdict agree on an empty input, GT_EXIT_USAGE on bad options.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "tools/commands.h"
#include "tools/report.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gdrtrace summary [--ranks|--full] [--json] [--no-bars] [--events] [--job J]\n"
            "                        [PATH...]\n"
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
            "              --job - : those written without a job id\n"
            "exit: 0 ok, 2 an input could not be read, 15 no recorder found, 64 usage\n");
}

int gt_cmd_summary(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, 0, 'j'},   {"no-bars", no_argument, 0, 'b'},
        {"events", no_argument, 0, 'e'}, {"job", required_argument, 0, 'J'},
        {"ranks", no_argument, 0, 'r'},  {"full", no_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'},   {0, 0, 0, 0}};
    int json = 0, flags = GT_REPORT_BARS, c;
    const char *job = NULL;
    while ((c = getopt_long(argc, argv, "hj", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = 1;
            break;
        case 'b':
            flags &= ~GT_REPORT_BARS;
            break;
        case 'e': /* the events are per-process detail */
            flags |= GT_REPORT_EVENTS | GT_REPORT_FULL;
            break;
        case 'J':
            job = optarg;
            break;
        case 'r':
            flags |= GT_REPORT_RANKS;
            break;
        case 'f':
            flags |= GT_REPORT_FULL;
            break;
        default: /* --help, or an option getopt refused */
            return gt_usage_exit(c, usage);
        }
    }
    if ((flags & GT_REPORT_RANKS) && (flags & GT_REPORT_FULL)) {
        fprintf(stderr, "gdrtrace summary: --ranks and --full are two views: give one\n");
        return GT_EXIT_USAGE;
    }
    struct gt_inputs in = {.job = job};
    struct gt_job j;
    /* the default and --ranks need only the digests: fold each recorder as
     * it is read and release it (memory of verdict's order, not the files') */
    if (!json && !(flags & GT_REPORT_FULL))
        in.fold = &j;
    int rc = gt_load_job(argv + optind, argc - optind, &in, &j);
    if (!rc && !in.n)
        rc = gt_verdict_exit(GT_V_NO_DATA);
    if (json) {
        struct gt_json js;
        gj_init(&js, stdout);
        gt_report_json(&js, &j);
    } else {
        gt_report_text(stdout, &j, flags);
        gt_report_next(stdout, "   ", &j, argv + optind, argc - optind);
    }
    gt_job_free(&j);
    gt_inputs_free(&in);
    return rc;
}
