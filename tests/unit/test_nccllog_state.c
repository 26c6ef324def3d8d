/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_nccllog_state.c — what the reader of NCCL's log keeps
 * (tools/lib/nccllog_state.c), through its keeping calls (nccllog_int.h):
 * a process is (short host, pid), "node-a.cluster" and "node-a" one, and
 * 3,000 of them are found again after the table grew; a process's
 * communicator records are capped at GT_NLOG_MAX_PROC_COMMS, the one over
 * counted dropped; a pointer names its newest record not destroyed, an
 * older one once the newer is destroyed; the open record of a thread;
 * connection phases go on while one thread logs, a line of another thread
 * closes it, and past GT_NLOG_MAX_PHASES none is kept after (dropped
 * counted once); the GPU Direct decisions' line: "none", sorted, distinct,
 * joined by "; ", cut to the buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/nccllog_int.h"

static void processes(void **state)
{
    (void)state;
    struct gt_nlog l;
    assert_int_equal(gt_nlog_init(&l), 0);
    long a = gt_nlog_proc_get(&l, "node-a.cluster.example", 10);
    assert_int_equal(a, 0);
    assert_int_equal(gt_nlog_proc_get(&l, "node-a", 10), a);
    assert_int_not_equal(gt_nlog_proc_get(&l, "node-a", 11), a);
    assert_int_not_equal(gt_nlog_proc_get(&l, "node-ab", 10), a);
    assert_string_equal(l.procs[a].host, "node-a");
    assert_ptr_equal(gt_nlog_proc_find(&l, "node-a.other", 10), &l.procs[a]);
    assert_null(gt_nlog_proc_find(&l, "node-b", 10));
    for (int i = 0; i < 3000; i++) {
        char h[32];
        snprintf(h, sizeof(h), "n%d.dc", i % 50);
        long pi = gt_nlog_proc_get(&l, h, 1000 + i);
        assert_true(pi >= 0);
    }
    assert_int_equal(l.nproc, 3 + 3000);
    for (int i = 0; i < 3000; i++) {
        char h[32];
        snprintf(h, sizeof(h), "n%d", i % 50);
        const struct gt_nlog_proc *p = gt_nlog_proc_find(&l, h, 1000 + i);
        assert_non_null(p);
        assert_int_equal(p->pid, 1000 + i);
        assert_string_equal(p->host, h);
    }
    gt_nlog_free(&l);
}

static void communicators(void **state)
{
    (void)state;
    struct gt_nlog l;
    assert_int_equal(gt_nlog_init(&l), 0);
    long pi = gt_nlog_proc_get(&l, "h", 1);
    struct gt_nlog_comm *c1 = gt_nlog_comm_new(&l, pi, 5);
    c1->ptr = 0xabc;
    size_t i1 = (size_t)(c1 - l.comms);
    struct gt_nlog_comm *c2 = gt_nlog_comm_new(&l, pi, 6);
    c2->ptr = 0xabc; /* the address reused */
    c2->open = 1;
    size_t i2 = (size_t)(c2 - l.comms);
    assert_int_equal(l.comms[i2].rank, -1); /* unknown until read */
    assert_ptr_equal(gt_nlog_comm_by_ptr(&l, pi, 0xabc), &l.comms[i2]);
    assert_ptr_equal(gt_nlog_comm_by_ptr_before(&l, 0xabc, &l.comms[i2]), &l.comms[i1]);
    assert_ptr_equal(gt_nlog_comm_open_on(&l, pi, 6), &l.comms[i2]);
    assert_null(gt_nlog_comm_open_on(&l, pi, 5));
    l.comms[i2].destroyed = 1;
    assert_ptr_equal(gt_nlog_comm_by_ptr(&l, pi, 0xabc), &l.comms[i1]);
    assert_null(gt_nlog_comm_open_on(&l, pi, 6));
    assert_null(gt_nlog_comm_by_ptr(&l, pi, 0xdef));
    /* the per-process cap: the one over it dropped, another process not */
    for (int i = 2; i < GT_NLOG_MAX_PROC_COMMS; i++)
        assert_non_null(gt_nlog_comm_new(&l, pi, 7));
    assert_int_equal(l.dropped, 0);
    assert_null(gt_nlog_comm_new(&l, pi, 7));
    assert_int_equal(l.dropped, 1);
    assert_non_null(gt_nlog_comm_new(&l, gt_nlog_proc_get(&l, "h", 2), 7));
    gt_nlog_free(&l);
}

static void phases(void **state)
{
    (void)state;
    struct gt_nlog l;
    assert_int_equal(gt_nlog_init(&l), 0);
    long pi = gt_nlog_proc_get(&l, "h", 1);
    struct gt_nlog_phase *p1 = gt_nlog_phase_of(&l, pi, 5);
    assert_non_null(p1);
    assert_ptr_equal(gt_nlog_phase_of(&l, pi, 5), p1); /* the same thread goes on */
    assert_int_equal(l.nphase, 1);
    gt_nlog_phase_of(&l, pi, 6); /* another thread: a new phase, the first closed */
    assert_int_equal(l.nphase, 2);
    assert_int_equal(l.phases[0].closed, 1);
    assert_int_equal(l.phases[0].next, 1);
    gt_nlog_phase_close(&l, pi, 5); /* not the latest's thread: nothing */
    assert_int_equal(l.phases[1].closed, 0);
    gt_nlog_phase_close(&l, pi, 6);
    assert_int_equal(l.phases[1].closed, 1);
    gt_nlog_phase_of(&l, pi, 6); /* closed: a new one, even for that thread */
    assert_int_equal(l.nphase, 3);
    /* the per-process cap: the first over it dropped, then none kept */
    for (int i = 3; i < GT_NLOG_MAX_PHASES; i++) {
        gt_nlog_phase_close(&l, pi, 6);
        assert_non_null(gt_nlog_phase_of(&l, pi, 6));
    }
    assert_int_equal(l.procs[pi].nphase, GT_NLOG_MAX_PHASES);
    gt_nlog_phase_close(&l, pi, 6);
    assert_null(gt_nlog_phase_of(&l, pi, 6));
    assert_null(gt_nlog_phase_of(&l, pi, 7));
    assert_int_equal(l.dropped, 1);
    assert_int_equal(l.procs[pi].phase_dropped, 2);
    gt_nlog_free(&l);
}

static void add_gdr(struct gt_nlog *l, long pi, int kind, const char *gpu, const char *hca, int en,
                    int dist, int level)
{
    struct gt_nlog_proc *p = &l->procs[pi];
    struct gt_nlog_gdr *d = &p->gdr[p->ngdr++];
    memset(d, 0, sizeof(*d));
    d->kind = (uint8_t)kind;
    d->enabled = (uint8_t)en;
    d->distance = (int16_t)dist;
    d->level = (int16_t)level;
    snprintf(d->gpu, sizeof(d->gpu), "%s", gpu);
    snprintf(d->hca, sizeof(d->hca), "%s", hca);
}

static void gdr_line(void **state)
{
    (void)state;
    struct gt_nlog l;
    char b[256];
    assert_int_equal(gt_nlog_init(&l), 0);
    gt_nlog_gdr_text(&l, b, sizeof(b));
    assert_string_equal(b, "none");
    long p1 = gt_nlog_proc_get(&l, "a", 1), p2 = gt_nlog_proc_get(&l, "b", 2);
    add_gdr(&l, p1, 0, "1", "0", 0, 8, 5);
    add_gdr(&l, p1, 1, "IB", "0 'mlx5_0'", 1, -1, -1);
    add_gdr(&l, p2, 0, "1", "0", 0, 8, 5); /* the same decision, another process */
    add_gdr(&l, p2, 0, "0", "0", 1, 3, 5);
    gt_nlog_gdr_text(&l, b, sizeof(b));
    assert_string_equal(b, "GPU 0 / HCA 0: Enabled (distance 3 <= 5); "
                           "GPU 1 / HCA 0: Disabled (distance 8 > 5); "
                           "NET/IB HCA 0 'mlx5_0': Enabled");
    char s[20];
    memset(s, 'z', sizeof(s));
    gt_nlog_gdr_text(&l, s, 12);
    assert_string_equal(s, "GPU 0 / HCA");
    assert_int_equal(s[12], 'z');
    gt_nlog_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(processes),
        cmocka_unit_test(communicators),
        cmocka_unit_test(phases),
        cmocka_unit_test(gdr_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
