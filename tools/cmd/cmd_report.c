/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_report.c — `gdrtrace report -o FILE [--force] [--job J] [--baseline A]
 * [PATH...]`: one self-contained HTML page of a run (tools/render/html.c draws it),
 * or with --baseline the A/B of run A (one path, as diff's A) and the run
 * read from PATH... (B, as diff's B).  The page is written to FILE.tmp.PID
 * and renamed onto FILE (tools/lib/outfile.h), so a browser or a CI artifact
 * collector never sees half a page; an existing FILE is replaced only with
 * --force.  Exit: 0 written; 2 an input could not be read (written for the
 * rest, the page says so); 15 a run has no recorder (not written); 1 not
 * written (the output); 64 usage.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tools/cmd/commands.h"
#include "tools/cmd/options.h"
#include "tools/lib/esc.h"
#include "tools/render/html.h"
#include "tools/lib/outfile.h"
#include "tools/lib/load.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gdrtrace report -o FILE [--force] [--job J] [--baseline A]\n"
               "                       [--accept-owner USER]... [PATH...]\n"
               "  One self-contained HTML page to open in a browser (inline CSS and SVG: no\n"
               "  script, nothing fetched): the nodes x communicators grid coloured by verdict\n"
               "  (natural node order, a legend, emulated runs bannered and hatched), the nodes\n"
               "  to look at first, the communicators with their evidence, and the latency\n"
               "  histogram of each operation.  PATH as for summary.\n"
               "  -o FILE       where to write the page (required); written whole, then renamed\n"
               "  --force       replace FILE if it exists (a regular file only)\n"
               "  --baseline A  an A/B page: run A (one recorder, archive or folder, as for\n"
               "                diff) against the run read from PATH (B), both grids and their\n"
               "                latency distributions overlaid\n"
               "  --job J       only the recorders of job J (--job -: those without a job "
               "id)\n" GT_ACCEPT_OWNER_USAGE
               "exit: 0 written, 2 an input could not be read (written for the rest),\n"
               "      15 no recorder found (not written), 1 not written, 64 usage\n");
}

struct side {
    struct gt_inputs in;
    struct gt_job job;
    int rc;
};

static void load(struct side *s, char **paths, int n, const struct gt_opts *o)
{
    memset(&s->in, 0, sizeof(s->in));
    s->in.job = o->job;
    gt_inputs_take_owners(&s->in, &o->owners);
    s->in.fold = &s->job; /* the page needs the merged view and digests only */
    s->rc = gt_load_job(paths, n, &s->in, &s->job);
}

static void unload(struct side *s)
{
    gt_job_free(&s->job);
    gt_inputs_free(&s->in);
}

int gt_cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        GT_LONG_OUTPUT,       GT_LONG_FORCE, GT_LONG_JOB, {"baseline", required_argument, 0, 'B'},
        GT_LONG_ACCEPT_OWNER, GT_LONG_HELP,  {0, 0, 0, 0}};
    struct gt_opts o = GT_OPTS_INIT("report");
    char *baseline = NULL;
    int c, rc;
    while ((c = getopt_long(argc, argv, "ho:f", opts, NULL)) != -1) {
        if (c == 'B')
            baseline = optarg;
        else if ((rc = gt_opts_default(&o, c, optarg, usage)) >= 0)
            return rc;
    }
    const char *out = o.out;
    int force = o.force;
    if (!out || !*out) {
        fprintf(stderr, "gdrtrace report: -o FILE is required\n");
        usage(stderr);
        return GT_EXIT_USAGE;
    }
    char err[GT_ERRLEN];
    if (gt_out_check(out, force, err, sizeof(err))) {
        fprintf(stderr, "gdrtrace report: %s\n", gt_esc(err));
        return 1;
    }
    struct side A, B;
    int two = baseline != NULL;
    rc = 0;
    if (two)
        load(&A, &baseline, 1, &o);
    load(&B, argv + optind, argc - optind, &o);
    struct side *first = two ? &A : &B;
    for (struct side *s = first; s; s = (s == &A) ? &B : NULL) {
        if (s->rc && !rc)
            rc = s->rc;
        if (!s->in.n) {
            fprintf(stderr, "gdrtrace report: %s%sno recorder found; %s not written\n",
                    two ? (s == &A ? "A (--baseline)" : "B") : "", two ? ": " : "", gt_esc(out));
            if (!s->rc)
                rc = gt_verdict_exit(GT_V_NO_DATA);
            else
                rc = s->rc;
        }
    }
    if (two && !A.in.n)
        goto done;
    if (!B.in.n)
        goto done;
    struct gt_html_run ra = {two ? "A" : NULL, (const char *const *)&baseline, 1, &A.job,
                             two ? A.in.nbad : 0};
    struct gt_html_run rb = {two ? "B" : NULL, (const char *const *)(argv + optind), argc - optind,
                             &B.job, B.in.nbad};
    rb.dir = gt_default_dir(); /* named on the page when no PATH was given */
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", out, (int)getpid());
    FILE *f = fopen(tmp, "wx");
    if (!f) {
        fprintf(stderr, "gdrtrace report: %s: %m\n", gt_esc(tmp));
        rc = 1;
        goto done;
    }
    int werr = two ? gt_html_write(f, &ra, &rb, GDRTRACE_VERSION)
                   : gt_html_write(f, &rb, NULL, GDRTRACE_VERSION);
    int bad = ferror(f) | (fclose(f) != 0);
    if (werr || bad) {
        fprintf(stderr, "gdrtrace report: writing %s failed: %s\n", gt_esc(tmp),
                werr ? "out of memory" : "write error");
        unlink(tmp);
        rc = 1;
        goto done;
    }
    if (gt_out_commit(tmp, out, force, err, sizeof(err))) {
        fprintf(stderr, "gdrtrace report: %s\n", gt_esc(err));
        unlink(tmp);
        rc = 1;
        goto done;
    }
    const struct gt_job *jb = &B.job;
    if (two)
        printf("%s: A/B page: A %zu process(es), verdict %s; B %zu process(es), verdict %s\n",
               gt_esc(out), A.in.n, gt_verdict_label(A.job.overall.code, A.job.overall.emulated),
               B.in.n, gt_verdict_label(jb->overall.code, jb->overall.emulated));
    else
        printf("%s: %d node(s), %zu communicator(s), %zu process(es), verdict %s\n", gt_esc(out),
               jb->nhosts, jb->ncomm, B.in.n,
               gt_verdict_label(jb->overall.code, jb->overall.emulated));
done:
    if (two)
        unload(&A);
    unload(&B);
    return rc;
}
