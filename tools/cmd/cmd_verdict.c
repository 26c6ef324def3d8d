/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_verdict.c — `gdrtrace verdict [--full] [--json] [--expect dmabuf|peermem|host]
 * [PATH...]`: one line per communicator (merged across processes and nodes),
 * per node, and one for the whole input; past GT_ALIKE_MAX alike ones, the
 * communicators and nodes that agree with the majority print as one line
 * each kind (tools/lib/alike.h; --full: every line; --json always has every one).  Exit code
 * (docs/reader.md): the whole input's verdict (0 DIRECT-DMABUF, 10 DIRECT-PEERMEM, 11 HOST-STAGED,
 * 12 MIXED, 13 FALLBACK, 14 ERROR, 15 NO-DATA, 16 BYPASSED); with --expect, 0 on a match and 20
 * otherwise, and 21 when --expect dmabuf|peermem matched a run of the
 * GPU-memory validation mode (emulated: it must never pass for GPUDirect
 * RDMA) without --allow-emulated; 2 when an input could not be read; 64 usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/alike.h"
#include "tools/lib/coll.h"
#include "tools/cmd/commands.h"
#include "tools/lib/esc.h"
#include "tools/lib/nccljoin.h"
#include "tools/render/json_nccljoin.h"
#include "tools/render/nccljoin_text.h"
#include "tools/render/summary.h"

/* one communicator's evidence with NCCL's view appended */
#define GT_EV_LEN 2600

/* the help says "8" */
_Static_assert(GT_ALIKE_MAX == 8, "verdict --help names GT_ALIKE_MAX");

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gdrtrace verdict [--full] [--json] [--expect dmabuf|peermem|host]\n"
            "                        [--allow-emulated] [--job J] [--nccl-log FILE|DIR]...\n"
            "                        [PATH...]\n"
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

int gt_cmd_verdict(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, 0, 'j'},
                                         {"full", no_argument, 0, 'F'},
                                         {"expect", required_argument, 0, 'x'},
                                         {"job", required_argument, 0, 'J'},
                                         {"allow-emulated", no_argument, 0, 'E'},
                                         {"nccl-log", required_argument, 0, 'L'},
                                         {"accept-owner", required_argument, 0, 'O'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    struct gt_inputs owners = {0};
    int json = 0, c, expect = -1, allow_emulated = 0, nlogs = 0, full = 0;
    const char *job = NULL;
    char **logs = calloc((size_t)argc + 1, sizeof(*logs));
    if (!logs)
        return GT_EXIT_INPUT;
    while ((c = getopt_long(argc, argv, "hjx:", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = 1;
            break;
        case 'F':
            full = 1;
            break;
        case 'x':
            if (!strcmp(optarg, "dmabuf"))
                expect = GT_V_DIRECT_DMABUF;
            else if (!strcmp(optarg, "peermem"))
                expect = GT_V_DIRECT_PEERMEM;
            else if (!strcmp(optarg, "host"))
                expect = GT_V_HOST_STAGED;
            else {
                fprintf(stderr,
                        "gdrtrace verdict: --expect takes dmabuf, peermem or host, not '%s'\n",
                        optarg);
                free(logs);
                return GT_EXIT_USAGE;
            }
            break;
        case 'J':
            job = optarg;
            break;
        case 'E':
            allow_emulated = 1;
            break;
        case 'O':
            if (gt_inputs_accept_owner(&owners, optarg, "verdict"))
                return GT_EXIT_USAGE;
            break;
        case 'L':
            logs[nlogs++] = optarg;
            break;
        default: /* --help, or an option getopt refused */
            free(logs);
            return gt_usage_exit(c, usage);
        }
    }
    struct gt_job j;
    /* fold mode: each recorder is folded and released as it is read */
    struct gt_inputs in = {.job = job, .fold = &j};
    gt_inputs_take_owners(&in, &owners);
    int rc = gt_load_job(argv + optind, argc - optind, &in, &j);
    int code = j.overall.code;
    /* NCCL's log, joined (tools/lib/nccljoin.h): its verdict covers every
     * communicator NCCL created, and the whole input's takes them in. */
    struct gt_nlog log;
    struct gt_nccl_join nj = {0};
    int joined = 0, badlogs = 0;
    if (nlogs) {
        if (gt_nlog_init(&log)) {
            fprintf(stderr, "gdrtrace verdict: out of memory\n");
            rc = GT_EXIT_INPUT;
        } else {
            badlogs = gt_nccl_log_load(&log, logs, nlogs);
            if (badlogs && !rc)
                rc = GT_EXIT_INPUT;
            if (gt_nccl_join(&log, &j, &nj)) {
                fprintf(stderr, "gdrtrace verdict: out of memory joining NCCL's log\n");
                rc = GT_EXIT_INPUT;
            } else {
                joined = 1;
                code = nj.code;
            }
        }
    }
    /* the text's lines, one a communicator or node (tools/lib/alike.h) */
    size_t nl = joined ? nj.ncomm : j.ncomm;
    if (nl < j.nnodes)
        nl = j.nnodes;
    struct gt_alike_line *lines = json ? NULL : calloc(nl ? nl : 1, sizeof(*lines));
    char(*ntext)[64] = json ? NULL : calloc(j.nnodes ? j.nnodes : 1, sizeof(*ntext));
    int oom = !json && (!lines || !ntext);
    if (oom) {
        fprintf(stderr, "gdrtrace verdict: out of memory for %zu lines\n", nl);
        rc = GT_EXIT_INPUT;
    }
    int emu = j.overall.emulated;
    /* An emulated DIRECT-* verdict never answers "did NCCL use GPUDirect". */
    int emu_refused = expect >= 0 && code == expect && emu && !allow_emulated &&
                      (expect == GT_V_DIRECT_DMABUF || expect == GT_V_DIRECT_PEERMEM);
    int exit_code = rc            ? rc
                    : expect >= 0 ? (code != expect ? GT_EXIT_EXPECT
                                     : emu_refused  ? GT_EXIT_EMULATED
                                                    : 0)
                                  : gt_verdict_exit(code);
    /* NCCL's own view of each communicator (its profiler interface, format
     * 1.6): rank/nRanks and the busiest operation, or why it is absent;
     * appended to the evidence */
    size_t nev = joined ? nj.ncomm : j.ncomm;
    char(*ev)[GT_EV_LEN] = j.coll && nev ? calloc(nev, sizeof(*ev)) : NULL;
    for (size_t i = 0; ev && i < nev; i++) {
        int has = joined ? nj.comms[i].has_comm_id == 1 : j.comms[i].has_comm_id == 1;
        uint64_t id = joined ? nj.comms[i].comm_id : j.comms[i].comm_id;
        const char *why = joined ? nj.comms[i].why : j.comms[i].v.why;
        char c[512] = "";
        if (has)
            gt_coll_evidence(j.coll, id, c, sizeof(c));
        snprintf(ev[i], sizeof(ev[i]), "%s%s%s%s", why, c[0] ? " " : "", c, c[0] ? "." : "");
    }
    if (json) {
        struct gt_json js;
        gj_init(&js, stdout);
        gj_obj(&js, NULL);
        gj_arr(&js, "communicators");
        for (size_t i = 0; joined && i < nj.ncomm; i++) {
            const struct gt_nj_comm *x = &nj.comms[i];
            gj_obj(&js, NULL);
            gj_str(&js, "comm", x->label);
            gj_u64(&js, "processes", x->ccomm >= 0 ? j.comms[x->ccomm].nprocs : x->nprocs);
            gj_i64(&js, "hosts", x->ccomm >= 0 ? j.comms[x->ccomm].nhosts : x->nhosts);
            gj_str(&js, "verdict", gt_nj_label(x));
            gj_str(&js, "why", ev ? ev[i] : x->why);
            gt_nccl_join_json_comm(&js, x);
            gj_end(&js, '}');
        }
        for (size_t i = 0; !joined && i < j.ncomm; i++) {
            gj_obj(&js, NULL);
            gj_str(&js, "comm", j.comms[i].label);
            gj_u64(&js, "processes", j.comms[i].nprocs);
            gj_i64(&js, "hosts", j.comms[i].nhosts);
            gj_str(&js, "verdict", gt_verdict_label(j.comms[i].v.code, j.comms[i].v.emulated));
            gj_str(&js, "why", ev ? ev[i] : j.comms[i].v.why);
            gj_end(&js, '}');
        }
        gj_end(&js, ']');
        gj_arr(&js, "processes");
        for (size_t i = 0; i < j.nfates; i++) {
            const struct gt_recfile *r = &j.recs[j.fates[i].rec];
            gj_obj(&js, NULL);
            gj_str(&js, "host", r->id.host);
            gj_i64(&js, "pid", r->id.pid);
            gj_i64(&js, "rank", r->id.rank);
            gj_str(&js, "job", r->id.job);
            gj_str(&js, "verdict", gt_verdict_label(j.fates[i].f.code, emu));
            gj_str(&js, "why", j.fates[i].f.text);
            gj_end(&js, '}');
        }
        gj_end(&js, ']');
        gj_arr(&js, "nodes");
        for (size_t i = 0; i < j.nnodes; i++) {
            gj_obj(&js, NULL);
            gj_str(&js, "host", j.nodes[i].host);
            gj_i64(&js, "processes", j.nodes[i].nproc);
            gj_i64(&js, "comms", j.nodes[i].ncomm);
            gj_str(&js, "verdict", gt_verdict_label(j.nodes[i].code, emu));
            gj_end(&js, '}');
        }
        gj_end(&js, ']');
        if (joined)
            gt_nccl_join_json(&js, &nj);
        gj_obj(&js, "all");
        gj_str(&js, "verdict", gt_verdict_label(code, emu));
        if (emu)
            gj_str(&js, "emulated", GT_EMULATED_TEXT);
        gj_str(&js, "why", joined ? nj.why : j.overall.why);
        gj_end(&js, '}');
        if (expect >= 0) {
            gj_str(&js, "expect", gt_verdict_name(expect));
            gj_bool(&js, "expect_met", code == expect && !emu_refused);
        }
        char next[1024];
        if (!joined || !gt_nccl_join_next(&nj, &j, next, sizeof(next)))
            gt_next_step(&j, argv + optind, argc - optind, next, sizeof(next));
        gj_str(&js, "next", next);
        gj_i64(&js, "unreadable_inputs", in.nbad + badlogs);
        gj_i64(&js, "exit", exit_code);
        gj_end(&js, '}');
        gj_done(&js);
    } else if (!oom) {
        /* evidence wrapped under itself: no line wider than GT_REPORT_COLS;
         * at job scale the lines alike collapse (tools/lib/alike.h) */
        char head[256];
        long max = full ? -1 : GT_ALIKE_MAX;
        for (size_t i = 0; joined && i < nj.ncomm; i++) {
            const struct gt_nj_comm *x = &nj.comms[i];
            lines[i] = (struct gt_alike_line){x->label,
                                              gt_nj_label(x),
                                              x->intra ? GT_V_COUNT : x->code,
                                              ev ? ev[i] : x->why,
                                              x->has_comm_id == 1,
                                              x->comm_id};
        }
        for (size_t i = 0; !joined && i < j.ncomm; i++) {
            const struct gt_ccomm *x = &j.comms[i];
            lines[i] = (struct gt_alike_line){x->label,
                                              gt_verdict_label(x->v.code, x->v.emulated),
                                              x->v.code,
                                              ev ? ev[i] : x->v.why,
                                              x->has_comm_id == 1,
                                              x->comm_id};
        }
        gt_alike_print(stdout, "comm", "communicators", lines, joined ? nj.ncomm : j.ncomm, max, 1);
        for (size_t i = 0; i < j.nfates; i++) {
            const struct gt_recfile *r = &j.recs[j.fates[i].rec];
            char label[96];
            snprintf(label, sizeof(label), "%s:%d", r->id.host, r->id.pid);
            const char *v = j.fates[i].f.kind == GT_FATE_IN_CALL
                                ? "-"
                                : gt_verdict_label(j.fates[i].f.code, emu);
            int w = snprintf(head, sizeof(head), "proc %-20s %-15s ", gt_esc(label), v);
            fputs(head, stdout);
            gt_report_wrap(stdout, w, gt_report_hang(w, v), gt_esc(j.fates[i].f.text));
        }
        if (joined)
            gt_nccl_join_print_procs(stdout, &nj, emu);
        /* a node's line: its verdict and its counts, the text that must
         * match exactly for nodes to be alike (a node short of a process
         * is worth its own line) */
        for (size_t i = 0; j.nnodes > 1 && i < j.nnodes; i++) {
            snprintf(ntext[i], sizeof(ntext[i]), "%d process(es), %d communicator(s)",
                     j.nodes[i].nproc, j.nodes[i].ncomm);
            lines[i] = (struct gt_alike_line){j.nodes[i].host,
                                              gt_verdict_label(j.nodes[i].code, emu),
                                              j.nodes[i].code,
                                              ntext[i],
                                              0,
                                              0};
        }
        if (j.nnodes > 1)
            gt_alike_print(stdout, "node", "nodes", lines, j.nnodes, max, 0);
        if (joined)
            gt_nccl_join_print_counts(stdout, &nj);
        const char *lab = gt_verdict_label(code, emu);
        int w = snprintf(head, sizeof(head), "%-25s %-15s ", "all", lab);
        fputs(head, stdout);
        gt_report_wrap(stdout, w, gt_report_hang(w, lab), gt_esc(joined ? nj.why : j.overall.why));
        if (expect >= 0 && code != expect)
            printf("expected %s, got %s\n", gt_verdict_name(expect), gt_verdict_label(code, emu));
        if (emu_refused) {
            char line[256];
            snprintf(line, sizeof(line),
                     "expected %s: met only by the GPU-memory validation mode (%s); "
                     "--allow-emulated accepts it",
                     gt_verdict_name(expect), GT_EMULATED_TEXT);
            gt_report_wrap(stdout, 0, 4, line);
        }
        if (in.nbad + badlogs)
            printf("%d input(s) could not be read (see above): the verdict covers the rest\n",
                   in.nbad + badlogs);
        gt_nccl_join_print_next(stdout, "", joined ? &nj : NULL, &j, argv + optind, argc - optind);
    }
    if (nlogs) {
        gt_nccl_join_free(&nj);
        gt_nlog_free(&log);
    }
    free(lines);
    free(ev);
    free(ntext);
    free(logs);
    gt_job_free(&j);
    gt_inputs_free(&in);
    return exit_code;
}
