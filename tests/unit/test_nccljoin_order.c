/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_nccljoin_order.c — the join's step 3b (tools/lib/nccljoin_order.c):
 * NCCL's ambiguous NET/gdrtrace channel lines given to communicators by
 * the order of a process's connection phases against its recorder's
 * connection runs, through gt_nccl_join on the lazy four-communicator log
 * (tests/reader/nccl-logs/synthetic-2.28-lazy-4comm) and fixture recorders
 * with connection runs: the runs in NCCL's order give all 26 lines, 13 a
 * process, each communicator its count; all or nothing per process, with
 * the reason: runs in another order, a run missing, a run's connects not
 * NCCL's [send] lines, no recorder of the process, a recorder without
 * commIds (ABI v10).
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
#include "tools/lib/nccljoin.h"
#include "tests/unit/fx_recfile.h"

#define LOG "tests/reader/nccl-logs/synthetic-2.28-lazy-4comm"
#define COMM 0x7a2e000000001000ull
/* SLOT:LISTENS/CONNECTS, one listen a [receive] line, one connect a [send] line:
 * the recorders connected slots 0, 2, 1, 3 (as NCCL's phases) */
#define RUNS3 "0:2/2,2:1/1,1:3/3"

static struct gt_nlog g_log;
static struct gt_recfile g_recs[2];
static struct gt_job g_job;
static struct gt_nccl_join g_nj;

static int setup(void **state)
{
    (void)state;
    char *paths[] = {LOG};
    if (gt_nlog_init(&g_log) || gt_nccl_log_load(&g_log, paths, 1))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gt_nlog_free(&g_log);
    return 0;
}

/* Joins the log to recorders of node-c (runs c) and, unless d is NULL,
 * node-d (runs d). */
static void join(const char *c, const char *d, int abi)
{
    struct fx_opts o[2] = {
        {.kind = FX_DMABUF,
         .host = "node-c",
         .pid = 3001,
         .rank = 0,
         .comm_id = COMM,
         .conn = c,
         .abi = abi},
        {.kind = FX_DMABUF,
         .host = "node-d",
         .pid = 4001,
         .rank = 1,
         .comm_id = COMM,
         .conn = d,
         .abi = abi},
    };
    int n = d ? 2 : 1;
    memset(g_recs, 0, sizeof(g_recs));
    for (int i = 0; i < n; i++) {
        fx_recfile(&o[i], "order.rec", &g_recs[i]);
        g_recs[i].liveness = GT_LIVE_EXITED;
    }
    memset(&g_job, 0, sizeof(g_job));
    assert_int_equal(gt_job_build(&g_job, g_recs, (size_t)n), 0);
    memset(&g_nj, 0, sizeof(g_nj));
    assert_int_equal(gt_nccl_join(&g_log, &g_job, &g_nj), 0);
}

static void unjoin(int n)
{
    gt_nccl_join_free(&g_nj);
    gt_job_free(&g_job);
    for (int i = 0; i < n; i++)
        gt_recfile_free(&g_recs[i]);
}

static const struct gt_nj_order *order_of(const char *host)
{
    const struct gt_nlog_proc *p =
        gt_nlog_proc_find(&g_log, host, !strcmp(host, "node-c") ? 3001 : 4001);
    assert_non_null(p);
    return &g_nj.order[p - g_log.procs];
}

static void has(const char *why, const char *needle)
{
    if (!strstr(why, needle))
        fail_msg("\"%s\" not in \"%s\"", needle, why);
}

static void in_order(void **state)
{
    (void)state;
    join(RUNS3 ",3:0/1", RUNS3 ",3:1/0", 12);
    assert_int_equal(g_nj.by_order, 26);
    assert_int_equal(order_of("node-c")->lines, 13);
    assert_int_equal(order_of("node-d")->lines, 13);
    assert_string_equal(order_of("node-c")->why, "");
    /* each communicator's NET/gdrtrace lines, slot k is commId COMM + k */
    static const uint32_t want[4] = {8, 12, 4, 2};
    int seen = 0;
    for (size_t i = 0; i < g_nj.ncomm; i++) {
        const struct gt_nj_comm *c = &g_nj.comms[i];
        if (!c->has_comm_id || c->comm_id < COMM || c->comm_id > COMM + 3)
            continue;
        assert_int_equal(c->ch[GT_NLOG_CH_NET_OURS], want[c->comm_id - COMM]);
        assert_int_equal(c->amb, 0);
        seen++;
    }
    assert_int_equal(seen, 4);
    unjoin(2);
}

static void all_or_nothing(void **state)
{
    (void)state;
    /* node-c's runs in another order: none of its lines by order; node-d's still */
    join("0:2/2,1:3/3,2:1/1,3:0/1", RUNS3 ",3:1/0", 12);
    assert_int_equal(order_of("node-c")->lines, 0);
    has(order_of("node-c")->why, "is no run of NCCL's connection phases");
    assert_int_equal(order_of("node-d")->lines, 13);
    assert_int_equal(g_nj.by_order, 13);
    unjoin(2);

    /* node-d's last run missing: a phase left over */
    join(RUNS3 ",3:0/1", RUNS3, 12);
    assert_int_equal(order_of("node-d")->lines, 0);
    has(order_of("node-d")->why, "4 connection phase(s) via NET/gdrtrace in NCCL's log, 3 "
                                 "connection run(s) in its recorder matching 3 of them");
    unjoin(2);

    /* node-c's last run counts two connects where NCCL logged one [send] line */
    join(RUNS3 ",3:0/2", RUNS3 ",3:1/0", 12);
    assert_int_equal(order_of("node-c")->lines, 0);
    has(order_of("node-c")->why, "connection run 4 (0x7a2e000000001003: 0 listen, 2 connect "
                                 "event(s)) is no run of NCCL's connection phases from phase 4");
    unjoin(2);

    /* no recorder of node-d */
    join(RUNS3 ",3:0/1", NULL, 12);
    assert_int_equal(order_of("node-d")->lines, 0);
    assert_string_equal(order_of("node-d")->why, "no recorder of the process");
    assert_int_equal(order_of("node-c")->lines, 13);
    unjoin(1);

    /* ABI v10: the recorder holds no commId to name a run's communicator */
    join(RUNS3 ",3:0/1", RUNS3 ",3:1/0", 10);
    assert_int_equal(g_nj.by_order, 0);
    has(order_of("node-c")->why, "net ABI <= v10");
    unjoin(2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(in_order),
        cmocka_unit_test(all_or_nothing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
