/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_verdict.c — `gdrtrace verdict [--full] [--json] [--expect dmabuf|peermem|host]
 * [PATH...]`: one line per communicator (merged across processes and nodes),
 * per node, and one for the whole input; past GT_ALIKE_MAX alike ones, the
 * communicators and nodes that agree with the majority print as one line
 * each kind (tools/render/alike_text.h; --full: every line; --json always has every one).  Exit
 * code (docs/reader.md): the whole input's verdict (0 DIRECT-DMABUF, 10 DIRECT-PEERMEM, 11
 * HOST-STAGED, 12 MIXED, 13 FALLBACK, 14 ERROR, 15 NO-DATA, 16 BYPASSED); with --expect, 0 on a
 * match and 20 otherwise, and 21 when --expect dmabuf|peermem matched a run of the GPU-memory
 * validation mode (emulated: it must never pass for GPUDirect RDMA) without --allow-emulated; 2
 * when an input could not be read; 64 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cmd/options.h"
#include "tools/cmd/commands.h"
#include "tools/lib/esc.h"
#include "tools/lib/nccljoin.h"
#include "tools/render/json_verdict.h"
#include "tools/render/nccljoin_text.h"
#include "tools/lib/load.h"
#include "tools/render/alike_text.h"
#include "tools/render/coll_text.h"
#include "tools/render/next.h"
#include "tools/render/text.h"

/* one communicator's evidence with NCCL's view appended */
#define GT_EV_LEN 2600

/* the help says "8" */
_Static_assert(GT_ALIKE_MAX == 8, "verdict --help names GT_ALIKE_MAX");

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gdrtrace verdict [--full] [--json] [--expect dmabuf|peermem|host]\n"
            "                        [--allow-emulated] [--job J] [--nccl-log FILE|DIR]...\n"
            "                        [--accept-owner USER]... [PATH...]\n"
            "  Did NCCL use the direct GPU<->NIC path?  One line per communicator, one per\n"
            "  node (when several), and one for all: DIRECT-DMABUF, DIRECT-PEERMEM, HOST-STAGED, "
            "MIXED, FALLBACK, ERROR,\n"
            "  NO-DATA, BYPASSED, each with the evidence; one per process the plugin refused\n"
            "  (BYPASSED) or that died inside a call into another library (ERROR).  PATH as for "
            "summary.\n"
            "  Past 8 alike communicators, or nodes (the majority's verdict, the same\n"
            "  evidence), they print as one line: the count, the evidence once, their ids\n"
            "  or host ranges; every other line is printed in full.\n"
            "  --full      one line for every communicator and node, however many\n"
            "  --expect X  exit 0 if the whole input is DIRECT-DMABUF (dmabuf),\n"
            "              DIRECT-PEERMEM (peermem) or HOST-STAGED (host), else 20\n"
            "  --allow-emulated  let --expect dmabuf|peermem match a run of the GPU-memory\n"
            "              validation mode (GDRTRACE_GPUMEM=1: no NIC, CUDA copies); else 21\n"
            "  --job J     only the recorders of job J (--job -: those without a job "
            "id)\n" GT_ACCEPT_OWNER_USAGE
            "  --nccl-log FILE|DIR  NCCL's log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET; a\n"
            "              folder: each regular file in it), joined by commId: every\n"
            "              communicator NCCL created gets a verdict (INTRA-NODE: no network;\n"
            "              BYPASSED: an internal NCCL transport, NCCL's line quoted)\n"
            "  --json      machine-readable output (every communicator and node)\n"
            "exit: 0 DIRECT-DMABUF, 10 DIRECT-PEERMEM, 11 HOST-STAGED, 12 MIXED, 13 FALLBACK,\n"
            "      14 ERROR, 15 NO-DATA, 16 BYPASSED, 20 --expect mismatch, 21 --expect met only\n"
            "      by emulation, 2 unreadable input, 64 usage\n");
}

/* What verdict's steps share: the options, the job, NCCL's log joined. */
struct verdict {
    struct gt_opts o;
    int allow_emulated, nlogs;
    char **logs;
    char **paths;
    int npaths;
    struct gt_inputs in;
    struct gt_job j;
    struct gt_nlog log;
    struct gt_nccl_join nj;
    int joined, badlogs;
    int rc;          /* 2 when an input or log could not be read */
    int code, emu;   /* the whole input's verdict (NCCL's log joined) */
    int emu_refused; /* --expect met only by emulation, not allowed */
    int exit_code;
    /* each communicator's evidence with NCCL's view appended (j.coll) */
    char (*evbuf)[GT_EV_LEN];
    const char **ev;
};

/* -1: go on; else the exit code */
static int parse(struct verdict *v, int argc, char **argv)
{
    static const struct option opts[] = {GT_LONG_JSON,
                                         GT_LONG_FULL,
                                         GT_LONG_EXPECT,
                                         GT_LONG_JOB,
                                         {"allow-emulated", no_argument, 0, 'E'},
                                         {"nccl-log", required_argument, 0, 'L'},
                                         GT_LONG_ACCEPT_OWNER,
                                         GT_LONG_HELP,
                                         {0, 0, 0, 0}};
    int c, rc;
    while ((c = getopt_long(argc, argv, "hjx:", opts, NULL)) != -1) {
        switch (c) {
        case 'E':
            v->allow_emulated = 1;
            break;
        case 'L':
            v->logs[v->nlogs++] = optarg;
            break;
        default:
            if ((rc = gt_opts_default(&v->o, c, optarg, usage)) >= 0)
                return rc;
        }
    }
    v->paths = argv + optind;
    v->npaths = argc - optind;
    return -1;
}

/* The recorders, folded as read, and NCCL's log joined (tools/lib/nccljoin.h):
 * its verdict covers every communicator NCCL created, and the whole input's
 * takes them in. */
static void load(struct verdict *v)
{
    struct gt_job *j = &v->j;
    v->in = (struct gt_inputs){.job = v->o.job, .fold = j, .fold_lean = 1};
    gt_inputs_take_owners(&v->in, &v->o.owners);
    v->rc = gt_load_job(v->paths, v->npaths, &v->in, j);
    v->code = j->overall.code;
    v->emu = j->overall.emulated;
    if (!v->nlogs)
        return;
    if (gt_nlog_init(&v->log)) {
        fprintf(stderr, "gdrtrace verdict: out of memory\n");
        v->rc = GT_EXIT_INPUT;
        return;
    }
    gt_nccl_log_owners(&v->log, &v->in);
    v->badlogs = gt_nccl_log_load(&v->log, v->logs, v->nlogs);
    if (v->badlogs && !v->rc)
        v->rc = GT_EXIT_INPUT;
    if (gt_nccl_join(&v->log, j, &v->nj)) {
        fprintf(stderr, "gdrtrace verdict: out of memory joining NCCL's log\n");
        v->rc = GT_EXIT_INPUT;
    } else {
        v->joined = 1;
        v->code = v->nj.code;
    }
}

/* The exit code (the header's list); an emulated DIRECT-* verdict never
 * answers "did NCCL use GPUDirect". */
static void judge(struct verdict *v)
{
    int expect = v->o.expect, code = v->code;
    v->emu_refused = expect >= 0 && code == expect && v->emu && !v->allow_emulated &&
                     (expect == GT_V_DIRECT_DMABUF || expect == GT_V_DIRECT_PEERMEM);
    v->exit_code = v->rc         ? v->rc
                   : expect >= 0 ? (code != expect   ? GT_EXIT_EXPECT
                                    : v->emu_refused ? GT_EXIT_EMULATED
                                                     : 0)
                                 : gt_verdict_exit(code);
}

/* NCCL's own view of each communicator (its profiler interface, format
 * 1.6): rank/nRanks and the busiest operation, or why it is absent;
 * appended to the evidence */
static void evidence(struct verdict *v)
{
    const struct gt_job *j = &v->j;
    size_t nev = v->joined ? v->nj.ncomm : j->ncomm;
    v->evbuf = j->coll && nev ? calloc(nev, sizeof(*v->evbuf)) : NULL;
    v->ev = v->evbuf ? calloc(nev, sizeof(*v->ev)) : NULL;
    if (!v->ev) {
        free(v->evbuf);
        v->evbuf = NULL;
    }
    for (size_t i = 0; v->ev && i < nev; i++) {
        int has = v->joined ? v->nj.comms[i].has_comm_id == 1 : j->comms[i].has_comm_id == 1;
        uint64_t id = v->joined ? v->nj.comms[i].comm_id : j->comms[i].comm_id;
        const char *why = v->joined ? v->nj.comms[i].why : j->comms[i].v.why;
        char c[512] = "";
        if (has)
            gt_coll_evidence(j->coll, id, c, sizeof(c));
        snprintf(v->evbuf[i], sizeof(v->evbuf[i]), "%s%s%s%s", why, c[0] ? " " : "", c,
                 c[0] ? "." : "");
        v->ev[i] = v->evbuf[i];
    }
}

static void print_json(struct verdict *v)
{
    char next[1024];
    if (!v->joined || !gt_nccl_join_next(&v->nj, &v->j, next, sizeof(next)))
        gt_next_step(&v->j, v->paths, v->npaths, next, sizeof(next));
    struct gt_verdict_doc d = {.j = &v->j,
                               .nj = v->joined ? &v->nj : NULL,
                               .why = v->ev,
                               .code = v->code,
                               .expect = v->o.expect,
                               .expect_met = v->code == v->o.expect && !v->emu_refused,
                               .next = next,
                               .unreadable = v->in.nbad + v->badlogs,
                               .exit_code = v->exit_code};
    gt_json_verdict(stdout, &d);
}

/* The communicators' lines, then one per process the plugin refused or that
 * died in a call; at job scale the lines alike collapse (tools/render/alike_text.h). */
static void print_comms(struct verdict *v, struct gt_alike_line *lines, long max)
{
    const struct gt_job *j = &v->j;
    for (size_t i = 0; v->joined && i < v->nj.ncomm; i++) {
        const struct gt_nj_comm *x = &v->nj.comms[i];
        lines[i] = (struct gt_alike_line){x->label,
                                          gt_nj_label(x),
                                          x->intra ? GT_V_COUNT : x->code,
                                          v->ev ? v->ev[i] : x->why,
                                          x->has_comm_id == 1,
                                          x->comm_id};
    }
    for (size_t i = 0; !v->joined && i < j->ncomm; i++) {
        const struct gt_ccomm *x = &j->comms[i];
        lines[i] = (struct gt_alike_line){x->label,
                                          gt_verdict_label(x->v.code, x->v.emulated),
                                          x->v.code,
                                          v->ev ? v->ev[i] : x->v.why,
                                          x->has_comm_id == 1,
                                          x->comm_id};
    }
    gt_alike_print(stdout, "comm", "communicators", lines, v->joined ? v->nj.ncomm : j->ncomm, max,
                   1);
    for (size_t i = 0; i < j->nfates; i++) {
        const struct gt_recfile *r = &j->recs[j->fates[i].rec];
        char label[96], head[256];
        snprintf(label, sizeof(label), "%s:%d", r->id.host, r->id.pid);
        const char *vl = j->fates[i].f.kind == GT_FATE_IN_CALL
                             ? "-"
                             : gt_verdict_label(j->fates[i].f.code, v->emu);
        int w = snprintf(head, sizeof(head), "proc %-20s %-15s ", gt_esc(label), vl);
        fputs(head, stdout);
        gt_report_wrap(stdout, w, gt_report_hang(w, vl), gt_esc(j->fates[i].f.text));
    }
    if (v->joined)
        gt_nccl_join_print_procs(stdout, &v->nj, v->emu);
}

/* a node's line: its verdict and its counts, the text that must match
 * exactly for nodes to be alike (a node short of a process is worth its own
 * line) */
static void print_nodes(struct verdict *v, struct gt_alike_line *lines, char (*ntext)[64], long max)
{
    const struct gt_job *j = &v->j;
    for (size_t i = 0; j->nnodes > 1 && i < j->nnodes; i++) {
        snprintf(ntext[i], sizeof(ntext[i]), "%d process(es), %d communicator(s)",
                 j->nodes[i].nproc, j->nodes[i].ncomm);
        lines[i] = (struct gt_alike_line){j->nodes[i].host,
                                          gt_verdict_label(j->nodes[i].code, v->emu),
                                          j->nodes[i].code,
                                          ntext[i],
                                          0,
                                          0};
    }
    if (j->nnodes > 1)
        gt_alike_print(stdout, "node", "nodes", lines, j->nnodes, max, 0);
}

/* the whole input's line, --expect's outcome, what was not read, next */
static void print_all(struct verdict *v)
{
    const struct gt_job *j = &v->j;
    int code = v->code, expect = v->o.expect;
    char head[256];
    if (v->joined)
        gt_nccl_join_print_counts(stdout, &v->nj);
    const char *lab = gt_verdict_label(code, v->emu);
    int w = snprintf(head, sizeof(head), "%-25s %-15s ", "all", lab);
    fputs(head, stdout);
    gt_report_wrap(stdout, w, gt_report_hang(w, lab),
                   gt_esc(v->joined ? v->nj.why : j->overall.why));
    if (expect >= 0 && code != expect)
        printf("expected %s, got %s\n", gt_verdict_name(expect), gt_verdict_label(code, v->emu));
    if (v->emu_refused) {
        char line[256];
        snprintf(line, sizeof(line),
                 "expected %s: met only by the GPU-memory validation mode (%s); "
                 "--allow-emulated accepts it",
                 gt_verdict_name(expect), GT_EMULATED_TEXT);
        gt_report_wrap(stdout, 0, 4, line);
    }
    if (v->in.nbad + v->badlogs)
        printf("%d input(s) could not be read (see above): the verdict covers the rest\n",
               v->in.nbad + v->badlogs);
    gt_nccl_join_print_next(stdout, "", v->joined ? &v->nj : NULL, j, v->paths, v->npaths);
}

/* evidence wrapped under itself: no line wider than GT_REPORT_COLS */
static void print_text(struct verdict *v, struct gt_alike_line *lines, char (*ntext)[64])
{
    long max = v->o.full ? -1 : GT_ALIKE_MAX;
    print_comms(v, lines, max);
    print_nodes(v, lines, ntext, max);
    print_all(v);
}

int gt_cmd_verdict(int argc, char **argv)
{
    struct verdict v = {.o = GT_OPTS_INIT("verdict")};
    v.logs = calloc((size_t)argc + 1, sizeof(*v.logs));
    if (!v.logs)
        return GT_EXIT_INPUT;
    int rc = parse(&v, argc, argv);
    if (rc >= 0) {
        free(v.logs);
        return rc;
    }
    load(&v);
    /* the text's lines, one a communicator or node (tools/render/alike_text.h) */
    const struct gt_job *j = &v.j;
    int json = v.o.json;
    size_t nl = v.joined ? v.nj.ncomm : j->ncomm;
    if (nl < j->nnodes)
        nl = j->nnodes;
    struct gt_alike_line *lines = json ? NULL : calloc(nl ? nl : 1, sizeof(*lines));
    char(*ntext)[64] = json ? NULL : calloc(j->nnodes ? j->nnodes : 1, sizeof(*ntext));
    int oom = !json && (!lines || !ntext);
    if (oom) {
        fprintf(stderr, "gdrtrace verdict: out of memory for %zu lines\n", nl);
        v.rc = GT_EXIT_INPUT;
    }
    judge(&v);
    evidence(&v);
    if (json)
        print_json(&v);
    else if (!oom)
        print_text(&v, lines, ntext);
    if (v.nlogs) {
        gt_nccl_join_free(&v.nj);
        gt_nlog_free(&v.log);
    }
    free(lines);
    free(v.ev);
    free(v.evbuf);
    free(ntext);
    free(v.logs);
    gt_job_free(&v.j);
    gt_inputs_free(&v.in);
    return v.exit_code;
}
