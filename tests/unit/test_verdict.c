/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_verdict.c — the verdict rules (tools/lib/verdict.c) on hand-made
 * communicator records:
 *  - gt_verdict_of: nothing registered is NO-DATA; a failed registration or
 *    an error is ERROR with the counts, reasons and last error text; a
 *    fallback not taken by policy is FALLBACK, one by policy is not; GPU
 *    memory all via DMA-BUF, all via peermem, none (host) and two paths at
 *    once are DIRECT-DMABUF, DIRECT-PEERMEM, HOST-STAGED and MIXED; host
 *    registrations beside GPU ones are NCCL's LL buffers, not a mix; an
 *    emulated recorder marks the verdict emulated;
 *  - gt_verdict_combine: the precedence table of docs/reader.md checked on
 *    every pair of codes against a ranking written here; combine_counts
 *    agrees with combine; NO-DATA never outranks anything;
 *  - exit codes and names as docs/reader.md lists them; out-of-range codes;
 *  - gt_comm_accumulate sums counters and keeps the last error of the
 *    source; gt_comm_used for a free and an empty overflow slot;
 *    gt_fmt_comm's three labels.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/model.h"
#include "tools/lib/recfact.h"

static struct gt_recfile g_rec;

static int setup(void **state)
{
    (void)state;
    memset(&g_rec, 0, sizeof(g_rec));
    snprintf(g_rec.id.host, sizeof(g_rec.id.host), "node-a");
    g_rec.id.pid = 4242;
    g_rec.id.node.peermem_loaded = 1;
    gt_rec_decide_facts(&g_rec); /* as a parse does */
    return 0;
}

static struct gtr_comm *fresh(void)
{
    static struct gtr_comm c;
    gt_comm_clear(&c);
    c.state = GTR_COMM_ACTIVE;
    c.has_comm_id = 1;
    c.comm_id = 0xabc;
    return &c;
}

static int judge(const struct gtr_comm *c, struct gt_verdict *v)
{
    const struct gt_recfile *ctx[] = {&g_rec};
    gt_verdict_of(c, ctx, 1, v);
    return v->code;
}

static void has(const struct gt_verdict *v, const char *needle)
{
    if (!strstr(v->why, needle))
        fail_msg("\"%s\" not in \"%s\"", needle, v->why);
}

static void no_data(void **state)
{
    (void)state;
    struct gt_verdict v;
    assert_int_equal(judge(fresh(), &v), GT_V_NO_DATA);
    has(&v, "no registration recorded");
    assert_int_equal(v.emulated, 0);
}

static void error_outranks_everything(void **state)
{
    (void)state;
    struct gtr_comm *c = fresh();
    c->reg_count[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 10;
    c->reg_count[GT_ASKED_DMABUF][GT_METHOD_FAILED] = 2;
    c->fallback_count = 3;
    c->error_count = 1;
    *gtr_reason_counter(c, GTR_ERRORS, GT_REASON_POLICY_HOST) = 1;
    c->error_last_errno = 12;
    snprintf(c->error_last_text, sizeof(c->error_last_text), "ibv_reg_mr: cannot allocate");
    struct gt_verdict v;
    assert_int_equal(judge(c, &v), GT_V_ERROR);
    has(&v, "2 registration(s) failed, 1 error(s) recorded");
    has(&v, "last errno 12 (");
    has(&v, "last error: \"ibv_reg_mr: cannot allocate\"");
    /* a failed registration alone, no error counted, is an error too */
    c->error_count = 0;
    assert_int_equal(judge(c, &v), GT_V_ERROR);
}

static void fallback_unless_by_policy(void **state)
{
    (void)state;
    struct gtr_comm *c = fresh();
    c->reg_count[GT_ASKED_DMABUF][GT_METHOD_PEERMEM] = 4;
    c->fallback_count = 4;
    *gtr_reason_counter(c, GTR_FALLBACKS, 1) = 4;
    struct gt_verdict v;
    assert_int_equal(judge(c, &v), GT_V_FALLBACK);
    has(&v, "4 of 4 GPU registration(s) fell back from DMA-BUF");
    has(&v, "did: dmabuf 0, peermem 4, host 0.");
    /* the same four taken by GDRTRACE_REG=peermem: the policy's path */
    c = fresh();
    c->reg_count[GT_ASKED_DMABUF][GT_METHOD_PEERMEM] = 4;
    c->fallback_count = 4;
    *gtr_reason_counter(c, GTR_FALLBACKS, GT_REASON_POLICY_PEERMEM) = 4;
    assert_int_equal(judge(c, &v), GT_V_DIRECT_PEERMEM);
    has(&v, "4 registration(s) took another path by policy.");
    /* one real among five: FALLBACK, counted as one */
    c->fallback_count = 5;
    c->reg_count[GT_ASKED_DMABUF][GT_METHOD_PEERMEM] = 5;
    assert_int_equal(judge(c, &v), GT_V_FALLBACK);
    has(&v, "1 of 5 GPU registration(s)");
}

static void the_paths(void **state)
{
    (void)state;
    struct gt_verdict v;
    struct gtr_comm *c = fresh();
    c->reg_count[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 3;
    c->reg_bytes[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 3u << 20;
    assert_int_equal(judge(c, &v), GT_V_DIRECT_DMABUF);
    has(&v, "3 GPU registration(s) via DMA-BUF (3.0 MiB)");
    /* NCCL's LL buffers in host memory beside them: still DIRECT-DMABUF */
    c->reg_count[GT_ASKED_HOST][GT_METHOD_HOST] = 7;
    assert_int_equal(judge(c, &v), GT_V_DIRECT_DMABUF);
    has(&v, " 7 host registration(s) beside them");
    /* a GPU buffer registered as host memory too: two paths */
    c->reg_count[GT_ASKED_CUDA][GT_METHOD_HOST] = 1;
    assert_int_equal(judge(c, &v), GT_V_MIXED);
    has(&v, "dmabuf 3, peermem 0, as host 1.");

    c = fresh();
    c->reg_count[GT_ASKED_CUDA][GT_METHOD_PEERMEM] = 2;
    assert_int_equal(judge(c, &v), GT_V_DIRECT_PEERMEM);
    has(&v, "2 GPU registration(s) via peermem");
    c->reg_count[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 1;
    assert_int_equal(judge(c, &v), GT_V_MIXED);

    c = fresh();
    c->reg_count[GT_ASKED_HOST][GT_METHOD_HOST] = 9;
    assert_int_equal(judge(c, &v), GT_V_HOST_STAGED);
    has(&v, "9 host-memory registration(s)");
    has(&v, "NCCL never asked for GPU memory (no device record).");
    /* GPU memory asked for but handled as host memory: still staged */
    c->reg_count[GT_ASKED_CUDA][GT_METHOD_HOST] = 2;
    assert_int_equal(judge(c, &v), GT_V_HOST_STAGED);
    has(&v, ", 2 GPU buffer(s) handled as host memory");
}

static void emulated_marks_the_verdict(void **state)
{
    (void)state;
    struct gtr_comm *c = fresh();
    c->reg_count[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 1;
    struct gt_verdict v;
    snprintf(g_rec.id.transport, sizeof(g_rec.id.transport), "sock+gpumem");
    gt_rec_decide_facts(&g_rec);
    judge(c, &v);
    g_rec.id.transport[0] = 0;
    gt_rec_decide_facts(&g_rec);
    assert_int_equal(v.code, GT_V_DIRECT_DMABUF);
    assert_int_equal(v.emulated, 1);
    judge(c, &v);
    assert_int_equal(v.emulated, 0);
}

/* docs/reader.md, "Precedence": a rank for each code (NO-DATA ignored),
 * written here, not taken from the code. */
static int rank_of(int code)
{
    switch (code) {
    case GT_V_ERROR:
        return 1;
    case GT_V_FALLBACK:
        return 2;
    case GT_V_BYPASSED:
        return 3;
    case GT_V_NO_DATA:
        return 99;
    default:
        return 5; /* one of the three paths */
    }
}

static int expected_pair(int a, int b)
{
    if (a == GT_V_NO_DATA)
        return b;
    if (b == GT_V_NO_DATA || a == b)
        return a;
    int ra = rank_of(a), rb = rank_of(b);
    if (ra < 5 || rb < 5)
        return ra <= rb ? a : b;
    return GT_V_MIXED; /* two different paths (MIXED with a path is MIXED too) */
}

static void combine_precedence(void **state)
{
    (void)state;
    assert_int_equal(gt_verdict_combine(NULL, 0), GT_V_NO_DATA);
    for (int a = 0; a < GT_V_COUNT; a++) {
        int one[1] = {a};
        assert_int_equal(gt_verdict_combine(one, 1), a);
        for (int b = 0; b < GT_V_COUNT; b++) {
            int two[2] = {a, b};
            int want = expected_pair(a, b);
            int got = gt_verdict_combine(two, 2);
            if (got != want)
                fail_msg("combine(%s, %s) = %s, want %s", gt_verdict_name(a), gt_verdict_name(b),
                         gt_verdict_name(got), gt_verdict_name(want));
            int seen[GT_V_COUNT] = {0};
            seen[a]++;
            seen[b]++;
            assert_int_equal(gt_verdict_combine_counts(seen), want);
        }
    }
    /* codes out of range are ignored */
    int odd[3] = {-1, GT_V_COUNT, GT_V_HOST_STAGED};
    assert_int_equal(gt_verdict_combine(odd, 3), GT_V_HOST_STAGED);
}

static void names_and_exits(void **state)
{
    (void)state;
    static const struct {
        int code;
        const char *name;
        int exit;
    } doc[] = {
        {GT_V_DIRECT_DMABUF, "DIRECT-DMABUF", 0},
        {GT_V_DIRECT_PEERMEM, "DIRECT-PEERMEM", 10},
        {GT_V_HOST_STAGED, "HOST-STAGED", 11},
        {GT_V_MIXED, "MIXED", 12},
        {GT_V_FALLBACK, "FALLBACK", 13},
        {GT_V_ERROR, "ERROR", 14},
        {GT_V_NO_DATA, "NO-DATA", 15},
        {GT_V_BYPASSED, "BYPASSED", 16},
    };
    assert_int_equal(sizeof(doc) / sizeof(doc[0]), GT_V_COUNT);
    for (size_t i = 0; i < sizeof(doc) / sizeof(doc[0]); i++) {
        assert_string_equal(gt_verdict_name(doc[i].code), doc[i].name);
        assert_int_equal(gt_verdict_exit(doc[i].code), doc[i].exit);
        assert_string_equal(gt_verdict_label(doc[i].code, 0), doc[i].name);
        char want[256];
        snprintf(want, sizeof(want), "%s (%s)", doc[i].name, GT_EMULATED_TEXT);
        assert_string_equal(gt_verdict_label(doc[i].code, 1), want);
    }
    assert_string_equal(gt_verdict_name(-1), "?");
    assert_string_equal(gt_verdict_name(GT_V_COUNT), "?");
    assert_string_equal(gt_verdict_label(GT_V_COUNT, 1), "?");
    assert_int_equal(gt_verdict_exit(GT_V_COUNT), GT_EXIT_INPUT);
    assert_int_equal(gt_verdict_exit(-1), GT_EXIT_INPUT);
}

static void accumulate_and_used(void **state)
{
    (void)state;
    struct gtr_comm a, b;
    gt_comm_clear(&a);
    gt_comm_clear(&b);
    assert_int_equal(a.dev, -1);
    a.reg_count[GT_ASKED_HOST][GT_METHOD_HOST] = 2;
    a.send_bytes = 100;
    a.error_count = 1;
    a.error_last_errno = 5;
    b.reg_count[GT_ASKED_HOST][GT_METHOD_HOST] = 3;
    b.reg_count[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 4;
    b.send_bytes = 23;
    b.error_count = 2;
    b.error_last_errno = 7;
    *gtr_reason_counter(&b, GTR_ERRORS, 20) = 2; /* a slot of the high half */
    b.dev = 3;
    b.state = GTR_COMM_ACTIVE;
    gt_comm_accumulate(&a, &b);
    assert_int_equal(a.reg_count[GT_ASKED_HOST][GT_METHOD_HOST], 5);
    assert_int_equal(gt_comm_regs(&a), 9);
    assert_int_equal(a.send_bytes, 123);
    assert_int_equal(a.error_count, 3);
    assert_int_equal(a.error_last_errno, 7);
    assert_int_equal(gtr_reason_count(&a, GTR_ERRORS, 20), 2);
    assert_int_equal(a.dev, 3);
    assert_int_equal(a.state, GTR_COMM_ACTIVE);

    /* a FREE slot is never used; an overflow slot only once it holds a count */
    struct gtr_comm c;
    gt_comm_clear(&c);
    assert_int_equal(gt_comm_used(&c), 0);
    c.state = GTR_COMM_ACTIVE;
    c.has_comm_id = GT_COMM_OVERFLOW;
    assert_int_equal(gt_comm_used(&c), 0);
    c.connect_count = 1;
    assert_int_equal(gt_comm_used(&c), 1);
    c.has_comm_id = 0;
    c.connect_count = 0;
    assert_int_equal(gt_comm_used(&c), 1);

    char buf[96];
    c.has_comm_id = GT_COMM_OVERFLOW;
    assert_string_equal(gt_fmt_comm(&c, &g_rec, buf, sizeof(buf)), "overflow node-a:4242");
    c.has_comm_id = 0;
    assert_string_equal(gt_fmt_comm(&c, &g_rec, buf, sizeof(buf)), "process node-a:4242");
    c.has_comm_id = 1;
    c.comm_id = 0x5e1a7c0ffee00001ull;
    assert_string_equal(gt_fmt_comm(&c, &g_rec, buf, sizeof(buf)), "0x5e1a7c0ffee00001");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(no_data, setup),
        cmocka_unit_test_setup(error_outranks_everything, setup),
        cmocka_unit_test_setup(fallback_unless_by_policy, setup),
        cmocka_unit_test_setup(the_paths, setup),
        cmocka_unit_test_setup(emulated_marks_the_verdict, setup),
        cmocka_unit_test(combine_precedence),
        cmocka_unit_test(names_and_exits),
        cmocka_unit_test_setup(accumulate_and_used, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
