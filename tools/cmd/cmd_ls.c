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
#include <stdlib.h>
#include <string.h>

#include "tools/cmd/commands.h"
#include "tools/cmd/options.h"
#include "tools/lib/esc.h"
#include "tools/render/json_ls.h"
#include "tools/lib/inputs.h"
#include "tools/lib/model.h"
#include "tools/lib/text_util.h"

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

struct ls_rows {
    struct gt_ls_row *v;
    size_t cap;
    int oom;
};

/* inputs' `each` in list mode: row i from the recorder while it is whole
 * (its fate reads the events); a later live copy of the process replaces it */
static void take_row(struct gt_inputs *in, size_t i, void *arg)
{
    struct ls_rows *rows = arg;
    const struct gt_recfile *r = in->each_rec;
    if (i >= rows->cap) {
        size_t nc = rows->cap ? rows->cap * 2 : 256;
        struct gt_ls_row *nv = realloc(rows->v, nc * sizeof(*nv));
        if (!nv) {
            rows->oom = 1;
            return;
        }
        memset(nv + rows->cap, 0, (nc - rows->cap) * sizeof(*nv));
        rows->v = nv;
        rows->cap = nc;
    }
    struct gt_ls_row *w = &rows->v[i];
    free(w->source);
    free(w->fate);
    size_t ls = strlen(r->source) + 1, lh = strlen(r->id.host) + 1, lj = strlen(r->id.job) + 1;
    char *b = malloc(ls + lh + lj);
    if (!b) {
        memset(w, 0, sizeof(*w));
        rows->oom = 1;
        return;
    }
    memcpy(b, r->source, ls);
    memcpy(b + ls, r->id.host, lh);
    memcpy(b + ls + lh, r->id.job, lj);
    struct gt_fate f;
    gt_recfile_fate(r, &f);
    *w = (struct gt_ls_row){.source = b,
                            .host = b + ls,
                            .job = b + ls + lh,
                            .pid = r->id.pid,
                            .rank = r->id.rank,
                            .liveness = r->liveness,
                            .liveness_why = r->liveness_why,
                            .owner = r->owner,
                            .size = r->size,
                            .start_wall_ns = r->id.start_wall_ns,
                            .fate = f.kind != GT_FATE_NONE ? strdup(f.text) : NULL};
}

/* The report order of recorders (gt_recfile_cmp): job, host (both
 * natural), rank, pid, source. */
static int row_cmp(const void *a, const void *b)
{
    const struct gt_ls_row *x = a, *y = b;
    int c = gt_natcmp(x->job, y->job);
    if (c || (c = gt_natcmp(x->host, y->host)))
        return c;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return strcmp(x->source, y->source);
}

int gt_cmd_ls(int argc, char **argv)
{
    static const struct option opts[] = {GT_LONG_JSON, GT_LONG_JOB, GT_LONG_HELP, {0, 0, 0, 0}};
    struct gt_opts o = GT_OPTS_INIT("ls");
    int c, rc;
    while ((c = getopt_long(argc, argv, "hj", opts, NULL)) != -1)
        if ((rc = gt_opts_default(&o, c, optarg, usage)) >= 0)
            return rc;
    /* list mode: each recorder becomes a row as it is read, and is freed;
     * every owner listed, each named: ls is where an operator sees them */
    struct ls_rows rows = {0};
    struct gt_inputs in = {
        .job = o.job, .discard = 1, .all_owners = 1, .each = take_row, .each_arg = &rows};
    int bad = gt_inputs_load(&in, argv + optind, argc - optind);
    size_t n = in.n;
    if (rows.oom) {
        fprintf(stderr, "gdrtrace: out of memory listing the recorders\n");
        bad = 1;
        n = 0;
    }
    if (n > 1)
        qsort(rows.v, n, sizeof(*rows.v), row_cmp);
    if (o.json) {
        gt_json_ls(stdout, rows.v, n);
    } else {
        printf("%-20s %8s %-16s %5s %-8s %-10s %10s  %s\n", "host", "pid", "job", "rank", "state",
               "owner", "size", "source");
        for (size_t i = 0; i < n; i++) {
            const struct gt_ls_row *r = &rows.v[i];
            char owner[64];
            gt_owner_short(r->owner, owner, sizeof(owner));
            printf("%-20s %8d %-16s %5d %-8s %-10s %10llu  %s\n", gt_esc(r->host), r->pid,
                   r->job[0] ? gt_esc(r->job) : "-", r->rank, gt_liveness_name(r->liveness),
                   gt_esc(owner), (unsigned long long)r->size, gt_esc(r->source));
            if (r->liveness_why && r->liveness_why[0])
                printf("    %s (%s): %s\n", gt_liveness_name(r->liveness), r->liveness_why,
                       !strcmp(r->liveness_why, GT_LIVE_WHY_OTHER_NS)
                           ? "the writer's pid namespace is not this reader's; judge it from there"
                           : "the writer's or this reader's /proc/self/ns/pid could not be read");
            /* what became of it, from the recorder alone (refused, died in a call) */
            if (r->fate)
                printf("    %s\n", gt_esc(r->fate));
        }
        if (!n)
            printf("(no recorders)\n");
        if (n) /* else the note on stderr said it */
            gt_inputs_note_run_dirs(&in, stdout);
    }
    for (size_t i = 0; i < rows.cap; i++) {
        free(rows.v[i].source);
        free(rows.v[i].fate);
    }
    free(rows.v);
    gt_inputs_free(&in);
    return bad ? GT_EXIT_INPUT : 0;
}
