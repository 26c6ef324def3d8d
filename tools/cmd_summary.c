/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_summary.c — `gdrtrace summary [--json] [--no-bars] [--events] [PATH...]`.
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
    fprintf(f, "usage: gdrtrace summary [--json] [--no-bars] [--events] [--job J] [PATH...]\n"
               "  Per node, per process and per communicator: what NCCL asked for and what the\n"
               "  plugin did (counts and bytes), fallbacks and errors with reasons and errnos,\n"
               "  latency p50/p95/p99/max per operation with histograms, device probes, the\n"
               "  verdict with its evidence.  PATH: recorder files, dump archives, or folders of\n"
               "  them (all nodes of a job in one folder are summarized as one job); default:\n"
               "  the recorders in $GDRTRACE_DIR (/dev/shm).\n"
               "  --json      machine-readable output (shape in docs/reader.md)\n"
               "  --no-bars   leave out the histogram bars\n"
               "  --events    list the most recent fallback/error events of each process\n"
               "  --job J     only the recorders of job J (GDRTRACE_JOB, SLURM_JOB_ID, ...);\n"
               "              --job - : those written without a job id\n"
               "exit: 0 ok, 2 an input could not be read, 15 no recorder found, 64 usage\n");
}

int gt_cmd_summary(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, 0, 'j'},   {"no-bars", no_argument, 0, 'b'},
        {"events", no_argument, 0, 'e'}, {"job", required_argument, 0, 'J'},
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
        case 'e':
            flags |= GT_REPORT_EVENTS;
            break;
        case 'J':
            job = optarg;
            break;
        default: /* --help, or an option getopt refused */
            return gt_usage_exit(c, usage);
        }
    }
    struct gt_inputs in = {.job = job};
    struct gt_job j;
    int rc = gt_load_job(argv + optind, argc - optind, &in, &j);
    if (!rc && !in.n)
        rc = gt_verdict_exit(GT_V_NO_DATA);
    if (json) {
        struct gt_json js;
        gj_init(&js, stdout);
        gt_report_json(&js, &j);
    } else {
        gt_report_text(stdout, &j, flags);
    }
    gt_job_free(&j);
    gt_inputs_free(&in);
    return rc;
}
