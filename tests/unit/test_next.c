/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_next.c — the next step for an outcome (tools/render/next.c), on jobs
 * folded from fixture recorders: one sentence per verdict, the one
 * docs/runbook-gates.md gives (a baseline diff for DIRECT-DMABUF; for
 * DIRECT-PEERMEM and HOST-STAGED a baseline when the policy chose it, else
 * doctor on the node; summary for MIXED; who fell back for FALLBACK; the
 * process that died in a call, else the failing calls, for ERROR; why
 * nothing was found for NO-DATA, with or without recorders); the paths the
 * command was given repeated, escaped; "next: " wrapped under its indent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/reader/fixture.h"
#include "tools/lib/model.h"
#include "tools/render/next.h"
#include "tests/unit/fx_recfile.h"

#define MAXREC 4

static char g_buf[1024];

/* The next step for a job of n fixture recorders o[0..n). */
static const char *next_of(const struct fx_opts *o, int n, char **paths, int npaths)
{
    struct gt_recfile *recs = calloc(MAXREC, sizeof(*recs));
    assert_non_null(recs);
    for (int i = 0; i < n; i++) {
        fx_recfile(&o[i], "next.rec", &recs[i]);
        recs[i].liveness =
            o[i].state == GTR_STATE_LIVE ? GT_LIVE_CRASHED : GT_LIVE_EXITED; /* as judged */
    }
    static struct gt_job j;
    memset(&j, 0, sizeof(j));
    assert_int_equal(gt_job_build(&j, recs, (size_t)n), 0);
    gt_next_step(&j, paths, npaths, g_buf, sizeof(g_buf));
    gt_job_free(&j);
    for (int i = 0; i < n; i++)
        gt_recfile_free(&recs[i]);
    free(recs);
    return g_buf;
}

static char *g_paths[] = {"job/"};

static void each_verdict(void **state)
{
    (void)state;
    struct fx_opts o[2] = {{.kind = FX_DMABUF}};
    assert_string_equal(next_of(o, 1, g_paths, 1),
                        "compare with a baseline run (gate 4): gdrtrace diff BASE job/");

    o[0] = (struct fx_opts){.kind = FX_PEERMEM, .reg = "peermem"};
    assert_string_equal(next_of(o, 1, g_paths, 1),
                        "peermem baseline: rerun with GDRTRACE_REG=dmabuf, then gdrtrace diff "
                        "job/ DMABUF-RUN");
    assert_string_equal(next_of(o, 1, NULL, 0),
                        "peermem baseline: rerun with GDRTRACE_REG=dmabuf, then gdrtrace diff "
                        "BASE DMABUF-RUN");
    o[0] = (struct fx_opts){.kind = FX_PEERMEM, .reg = "auto", .host = "gpu7"};
    assert_string_equal(next_of(o, 1, g_paths, 1),
                        "why not DMA-BUF: gdrtrace doctor on gpu7 (gates 1-2; NCCL_DMABUF_ENABLE)");

    o[0] = (struct fx_opts){.kind = FX_HOST, .reg = "host"};
    assert_string_equal(next_of(o, 1, g_paths, 1),
                        "host-memory baseline: rerun with GDRTRACE_REG=dmabuf, then gdrtrace "
                        "diff job/ DMABUF-RUN");

    o[0] = (struct fx_opts){.kind = FX_DMABUF, .host = "node-a"};
    o[1] = (struct fx_opts){.kind = FX_PEERMEM, .host = "node-b", .pid = 99, .rank = 1};
    assert_string_equal(next_of(o, 2, g_paths, 1),
                        "gdrtrace summary job/ shows which communicators and processes differ");

    o[0] = (struct fx_opts){.kind = FX_DMABUF, .host = "node-a"};
    o[1] = (struct fx_opts){.kind = FX_FALLBACK, .host = "node-b", .pid = 99, .rank = 1};
    assert_string_equal(next_of(o, 2, g_paths, 1),
                        "gdrtrace summary job/ names who fell back; gdrtrace doctor on node-b "
                        "(gate 2)");

    o[0] = (struct fx_opts){.kind = FX_ERROR, .host = "node-c"};
    assert_string_equal(next_of(o, 1, g_paths, 1),
                        "failing calls and errnos: gdrtrace summary --full --events job/; gdrtrace "
                        "doctor on node-c");

    o[0] = (struct fx_opts){.kind = FX_DMABUF,
                            .host = "node-d",
                            .pid = 31337,
                            .fate = FX_FATE_CRASHED,
                            .state = GTR_STATE_LIVE};
    assert_string_equal(next_of(o, 1, g_paths, 1),
                        "the core dump and the called library's log: node-d pid 31337 (it died in "
                        "that call)");

    o[0] = (struct fx_opts){.kind = FX_NODATA};
    assert_string_equal(next_of(o, 1, g_paths, 1),
                        "likely no network connection yet (one node: NCCL used P2P/SHM); run "
                        "across 2+ nodes");
    assert_string_equal(next_of(o, 0, g_paths, 1),
                        "likely NCCL did not load the plugin (NCCL_DEBUG=INFO: NET/Plugin) or "
                        "another GDRTRACE_DIR");
}

static void paths_escaped(void **state)
{
    (void)state;
    struct fx_opts o[1] = {{.kind = FX_DMABUF}};
    char *paths[] = {"a b/", "x\ny/"};
    assert_string_equal(next_of(o, 1, paths, 2),
                        "compare with a baseline run (gate 4): gdrtrace diff BASE a b/ x\\ny/");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_verdict),
        cmocka_unit_test(paths_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
