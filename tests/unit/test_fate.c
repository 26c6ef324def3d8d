/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_fate.c — what became of a process, from its recorder alone
 * (tools/lib/fate.c), on fixture recorders (tests/reader/fixture.c) whose
 * newest events say it: none; refused by the plugin (BYPASSED, the reason
 * and the recorded why); the inner plugin's connect called and never
 * returned — exited inside it (closed: ERROR), crashed inside it (live,
 * writer gone: ERROR), still inside it (live, writer running: no verdict);
 * the same calls both returned: nothing.  The sentence names the call,
 * the library, the ABI and device, the time and the process.
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

static void fate_of(int fate, int state, int liveness, struct gt_fate *f)
{
    struct fx_opts o = {.kind = FX_DMABUF, .fate = fate, .state = state};
    struct gt_recfile r;
    fx_recfile(&o, "fate.rec", &r);
    r.liveness = liveness;
    gt_recfile_fate(&r, f);
    gt_recfile_free(&r);
}

static void has(const struct gt_fate *f, const char *needle)
{
    if (!strstr(f->text, needle))
        fail_msg("\"%s\" not in \"%s\"", needle, f->text);
}

#define CALL "the inner plugin's connect (" FX_INNER_PATH ", ABI v8, device 0)"
#define WHO "; host node-a, pid 4242, rank 0, job job42"

static void nothing_happened(void **state)
{
    (void)state;
    struct gt_fate f;
    fate_of(FX_FATE_NONE, GTR_STATE_CLOSED, GT_LIVE_EXITED, &f);
    assert_int_equal(f.kind, GT_FATE_NONE);
    assert_int_equal(f.code, GT_V_NO_DATA);
    assert_string_equal(f.text, "");
    /* every call returned: nothing either, closed or crashed */
    fate_of(FX_FATE_RETURNED, GTR_STATE_CLOSED, GT_LIVE_EXITED, &f);
    assert_int_equal(f.kind, GT_FATE_NONE);
    fate_of(FX_FATE_RETURNED, GTR_STATE_LIVE, GT_LIVE_CRASHED, &f);
    assert_int_equal(f.kind, GT_FATE_NONE);
    assert_int_equal(f.code, GT_V_NO_DATA);
}

static void refused(void **state)
{
    (void)state;
    struct gt_fate f;
    fate_of(FX_FATE_REFUSED, GTR_STATE_CLOSED, GT_LIVE_EXITED, &f);
    assert_int_equal(f.kind, GT_FATE_REFUSED);
    assert_int_equal(f.code, GT_V_BYPASSED);
    assert_int_equal(f.reason, GT_REASON_NO_RDMA_DEVICE);
    has(&f, "the plugin refused this process at ");
    has(&f, ": \"" FX_REFUSED_WHY "\" (");
    has(&f, gt_reason_name(GT_REASON_NO_RDMA_DEVICE));
    has(&f, "NCCL ran it on its internal transports, unobserved" WHO);
}

static void inside_a_call(void **state)
{
    (void)state;
    struct gt_fate f;
    fate_of(FX_FATE_CRASHED, GTR_STATE_CLOSED, GT_LIVE_EXITED, &f);
    assert_int_equal(f.kind, GT_FATE_EXITED_IN_CALL);
    assert_int_equal(f.code, GT_V_ERROR);
    assert_int_equal(f.site, GT_CALL_INNER_CONNECT);
    has(&f, "exited inside " CALL ", called at ");
    has(&f, " UTC (thread ");
    has(&f, "before it returned" WHO);

    fate_of(FX_FATE_CRASHED, GTR_STATE_LIVE, GT_LIVE_CRASHED, &f);
    assert_int_equal(f.kind, GT_FATE_CRASHED_IN_CALL);
    assert_int_equal(f.code, GT_V_ERROR);
    has(&f, "crashed inside " CALL ", called at ");
    has(&f, "which never returned" WHO);
    /* liveness unknown: not proven running, so crashed */
    fate_of(FX_FATE_CRASHED, GTR_STATE_LIVE, GT_LIVE_UNKNOWN, &f);
    assert_int_equal(f.kind, GT_FATE_CRASHED_IN_CALL);

    fate_of(FX_FATE_CRASHED, GTR_STATE_LIVE, GT_LIVE_LIVE, &f);
    assert_int_equal(f.kind, GT_FATE_IN_CALL);
    assert_int_equal(f.code, GT_V_NO_DATA); /* still running: no verdict yet */
    has(&f, "inside " CALL " since ");
    has(&f, "still running" WHO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nothing_happened),
        cmocka_unit_test(refused),
        cmocka_unit_test(inside_a_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
