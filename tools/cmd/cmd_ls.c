/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_ls.c — `gdrtrace ls [--json] [PATH...]`: the recorders found in
 * $GDRTRACE_DIR (or the paths/archives given) with host, pid, job, rank,
 * state (live / exited / crashed / unknown / creating) and size, and under a
 * recorder what became of its process when the plugin refused it or it died
 * inside a call into another library (gt_recfile_fate).  Unreadable files are
 * listed on stderr with the problem.  Exit 0, 2 if any could not be read.
 */
#include <stdio.h>
#include <string.h>

#include "tools/cmd/commands.h"
#include "tools/cmd/options.h"
#include "tools/lib/esc.h"
#include "tools/render/json_ls.h"
#include "tools/lib/inputs.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gdrtrace ls [--json] [--job J] [PATH...]\n"
               "  Lists recorders: host, pid, job, rank, state (live: the process with the\n"
               "  pid holds the file open; exited: closed cleanly; crashed: never closed and\n"
               "  the pid is gone or reused, or the machine rebooted; unknown: the pid here\n"
               "  is another process (the writer's is from another pid namespace) or cannot\n"
               "  be inspected), size.  Default: $GDRTRACE_DIR (/dev/shm).\n"
               "  Archive members show the state seen when the archive was made.  owner: the\n"
               "  file's (an archive member: the archive's); other commands count only\n"
               "  recorders of one owner per job (--accept-owner).\n"
               "  --job J     only the recorders of job J (--job -: those without a job id)\n"
               "exit: 0 ok, 2 an input could not be read, 64 usage\n");
}

int gt_cmd_ls(int argc, char **argv)
{
    static const struct option opts[] = {GT_LONG_JSON, GT_LONG_JOB, GT_LONG_HELP, {0, 0, 0, 0}};
    struct gt_opts o = GT_OPTS_INIT("ls");
    int c, rc;
    while ((c = getopt_long(argc, argv, "hj", opts, NULL)) != -1)
        if ((rc = gt_opts_default(&o, c, optarg, usage)) >= 0)
            return rc;
    /* each recorder is reduced to its identity and fate as it is read */
    /* every owner listed, each named: ls is where an operator sees them */
    struct gt_inputs in = {.job = o.job, .release = 1, .keep_fates = 1, .all_owners = 1};
    int bad = gt_inputs_load(&in, argv + optind, argc - optind);
    if (o.json) {
        gt_json_ls(stdout, in.recs, in.fates, in.n);
    } else {
        printf("%-20s %8s %-16s %5s %-8s %-10s %10s  %s\n", "host", "pid", "job", "rank", "state",
               "owner", "size", "source");
        for (size_t i = 0; i < in.n; i++) {
            const struct gt_recfile *r = &in.recs[i];
            char owner[64];
            gt_owner_short(r->owner, owner, sizeof(owner));
            printf("%-20s %8d %-16s %5d %-8s %-10s %10llu  %s\n", gt_esc(r->id.host), r->id.pid,
                   r->id.job[0] ? gt_esc(r->id.job) : "-", r->id.rank,
                   gt_liveness_name(r->liveness), gt_esc(owner), (unsigned long long)r->size,
                   gt_esc(r->source));
            if (r->liveness_why && r->liveness_why[0])
                printf("    %s (%s): %s\n", gt_liveness_name(r->liveness), r->liveness_why,
                       !strcmp(r->liveness_why, GT_LIVE_WHY_OTHER_NS)
                           ? "the writer's pid namespace is not this reader's; judge it from there"
                           : "the writer's or this reader's /proc/self/ns/pid could not be read");
            /* what became of it, from the recorder alone (refused, died in a call) */
            if (in.fates[i])
                printf("    %s\n", gt_esc(in.fates[i]->text));
        }
        if (!in.n)
            printf("(no recorders)\n");
        if (in.n) /* else the note on stderr said it */
            gt_inputs_note_run_dirs(&in, stdout);
    }
    gt_inputs_free(&in);
    return bad ? GT_EXIT_INPUT : 0;
}
