/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_model.c — the fold of recorders into the job's model
 * (tools/lib/model.c), through its public calls on fixture recorders:
 * processes of one commId on two hosts are one communicator (members,
 * processes, hosts counted); other commIds are apart; below ABI v11 (no
 * commId) each process stands for itself; recorders in report order
 * (job, host in natural order, rank) and nodes likewise, each with its
 * combined verdict, the whole MIXED when they disagree; folding one
 * recorder at a time in any order gives the same model as building from
 * all; the norm of a communicator and the one rank that differs from it
 * (slow registrations: 10x its peers).
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
#include "tests/unit/fx_recfile.h"

#define MAXREC 8

static struct gt_recfile *parse_all(const struct fx_opts *o, int n)
{
    struct gt_recfile *recs = calloc(MAXREC, sizeof(*recs));
    assert_non_null(recs);
    for (int i = 0; i < n; i++) {
        fx_recfile(&o[i], "model.rec", &recs[i]);
        recs[i].liveness = GT_LIVE_EXITED;
    }
    return recs;
}

static void free_all(struct gt_recfile *recs, int n)
{
    for (int i = 0; i < n; i++)
        gt_recfile_free(&recs[i]);
    free(recs);
}

/* node10:r3, node2:r1, node10:r2, node2:r0, all of commId C */
static void four(struct fx_opts *o, int kind_of_node10)
{
    o[0] = (struct fx_opts){
        .kind = kind_of_node10, .host = "node10", .rank = 3, .pid = 13, .world = 4};
    o[1] = (struct fx_opts){.kind = FX_DMABUF, .host = "node2", .rank = 1, .pid = 21, .world = 4};
    o[2] = (struct fx_opts){
        .kind = kind_of_node10, .host = "node10", .rank = 2, .pid = 12, .world = 4};
    o[3] = (struct fx_opts){.kind = FX_DMABUF, .host = "node2", .rank = 0, .pid = 20, .world = 4};
}

static void one_communicator(void **state)
{
    (void)state;
    struct fx_opts o[4];
    four(o, FX_DMABUF);
    struct gt_recfile *recs = parse_all(o, 4);
    static struct gt_job j;
    memset(&j, 0, sizeof(j));
    assert_int_equal(gt_job_build(&j, recs, 4), 0);
    assert_int_equal(j.nrec, 4);
    /* report order: node2 before node10 (natural), then rank */
    static const char *host[4] = {"node2", "node2", "node10", "node10"};
    static const int rank[4] = {0, 1, 2, 3};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(j.recs[i].id.host, host[i]);
        assert_int_equal(j.recs[i].id.rank, rank[i]);
    }
    assert_int_equal(j.ncomm, 1);
    assert_int_equal(j.comms[0].nprocs, 4);
    assert_int_equal(j.comms[0].nmembers, 4);
    assert_int_equal(j.comms[0].nhosts, 2);
    assert_int_equal(j.comms[0].v.code, GT_V_DIRECT_DMABUF);
    assert_int_equal(j.nnodes, 2);
    assert_string_equal(j.nodes[0].host, "node2");
    assert_string_equal(j.nodes[1].host, "node10");
    assert_int_equal(j.nhosts, 2);
    assert_int_equal(j.overall.code, GT_V_DIRECT_DMABUF);
    /* the communicator's sum is its members' counts added */
    uint64_t regs = 0;
    for (int i = 0; i < 4; i++)
        regs += fx_expected_regs(&o[i]);
    assert_int_equal(gt_comm_regs(j.comms[0].sum), regs);
    gt_job_free(&j);
    free_all(recs, 4);
}

static void apart(void **state)
{
    (void)state;
    struct fx_opts o[4];
    four(o, FX_PEERMEM);
    o[2].comm_id = 0x77; /* node10:r2 in another communicator */
    struct gt_recfile *recs = parse_all(o, 4);
    static struct gt_job j;
    memset(&j, 0, sizeof(j));
    assert_int_equal(gt_job_build(&j, recs, 4), 0);
    assert_int_equal(j.ncomm, 2);
    int codes[2] = {j.comms[0].v.code, j.comms[1].v.code};
    /* one of node2 r0, r1 and node10 r3 (dmabuf and peermem: MIXED); one of node10 r2 */
    assert_true((codes[0] == GT_V_MIXED && codes[1] == GT_V_DIRECT_PEERMEM) ||
                (codes[1] == GT_V_MIXED && codes[0] == GT_V_DIRECT_PEERMEM));
    assert_int_equal(j.nodes[0].code, GT_V_DIRECT_DMABUF);
    assert_int_equal(j.nodes[1].code, GT_V_DIRECT_PEERMEM);
    assert_int_equal(j.overall.code, GT_V_MIXED);
    gt_job_free(&j);
    free_all(recs, 4);

    /* ABI v10: NCCL gives no commId, each process stands for itself */
    four(o, FX_DMABUF);
    for (int i = 0; i < 4; i++)
        o[i].abi = 10;
    recs = parse_all(o, 4);
    memset(&j, 0, sizeof(j));
    assert_int_equal(gt_job_build(&j, recs, 4), 0);
    assert_int_equal(j.ncomm, 4);
    for (size_t c = 0; c < j.ncomm; c++) {
        assert_int_equal(j.comms[c].nprocs, 1);
        assert_true(!strncmp(j.comms[c].label, "process node", 12));
    }
    gt_job_free(&j);
    free_all(recs, 4);
}

/* A digest of the model, to compare two ways of building it. */
static void digest(const struct gt_job *j, char *out, size_t n)
{
    size_t k = (size_t)snprintf(out, n, "overall %d comms %zu nodes %zu|", j->overall.code,
                                j->ncomm, j->nnodes);
    for (size_t i = 0; i < j->nrec && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s:%d ", j->recs[i].id.host, j->recs[i].id.rank);
    for (size_t c = 0; c < j->ncomm && k < n; c++)
        k += (size_t)snprintf(out + k, n - k, "[%s %d %zu %zu %s]", j->comms[c].label,
                              j->comms[c].v.code, j->comms[c].nprocs, j->comms[c].nmembers,
                              j->comms[c].v.why);
    for (size_t i = 0; i < j->nnodes && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "{%s %d %d}", j->nodes[i].host, j->nodes[i].code,
                              j->nodes[i].nproc);
}

static void fold_equals_build(void **state)
{
    (void)state;
    struct fx_opts o[4];
    four(o, FX_HOST);
    o[1].comm_id = 0x99;
    static char want[16384], got[16384];
    struct gt_recfile *recs = parse_all(o, 4);
    static struct gt_job j;
    memset(&j, 0, sizeof(j));
    assert_int_equal(gt_job_build(&j, recs, 4), 0);
    digest(&j, want, sizeof(want));
    gt_job_free(&j);
    free_all(recs, 4);

    static const int orders[3][4] = {{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}};
    for (int t = 0; t < 3; t++) {
        recs = parse_all(o, 4);
        memset(&j, 0, sizeof(j));
        assert_int_equal(gt_job_begin(&j), 0);
        for (int i = 0; i < 4; i++)
            assert_int_equal(gt_job_add(&j, recs, (size_t)orders[t][i]), 0);
        assert_int_equal(gt_job_finish(&j, recs, 4), 0);
        digest(&j, got, sizeof(got));
        if (strcmp(got, want))
            fail_msg("order %d:\n%s\nbuild:\n%s", t, got, want);
        gt_job_free(&j);
        free_all(recs, 4);
    }
}

static void the_rank_that_differs(void **state)
{
    (void)state;
    struct fx_opts o[4];
    four(o, FX_DMABUF);
    o[0].lat_pct = 1000; /* node10 rank 3: registrations 10x slower */
    struct gt_recfile *recs = parse_all(o, 4);
    static struct gt_job j;
    memset(&j, 0, sizeof(j));
    assert_int_equal(gt_job_build(&j, recs, 4), 0);
    assert_int_equal(j.ncomm, 1);
    struct gt_comm_norm n;
    assert_int_equal(gt_comm_norm(&j, 0, &n), 0);
    assert_int_equal(n.nranks, 4);
    assert_int_equal(n.majority, GT_V_DIRECT_DMABUF);
    assert_int_equal(n.nmajority, 4);
    int differing = 0;
    for (size_t k = 0; k < j.comms[0].nrix; k++) {
        const struct gt_rank_comm *d = &j.ranks[j.rank_ix[j.comms[0].rix + k]];
        unsigned slow = 0, bits = gt_rank_differs(&n, d, &slow);
        if (j.recs[d->rec].id.rank == 3) {
            assert_int_equal(bits, GT_DIFF_SLOW);
            assert_true(slow & (1u << GTR_OP_REG));
            assert_false(slow & (1u << GTR_OP_SEND)); /* sends as fast as the others' */
            differing++;
        } else {
            assert_int_equal(bits, 0);
        }
    }
    assert_int_equal(differing, 1);
    gt_job_free(&j);
    free_all(recs, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_communicator),
        cmocka_unit_test(apart),
        cmocka_unit_test(fold_equals_build),
        cmocka_unit_test(the_rank_that_differs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
