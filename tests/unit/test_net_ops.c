/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_net_ops.c — every implementation of common/gt_net.h fills every slot
 * of struct gt_net_ops (the convention at the top of gt_net.h): sock, ib,
 * inner and the recorder shim, linked together as in the plugin.  The table
 * is walked as what it is (a name, then function pointers only), so a slot
 * added to gt_net.h is checked here without editing this file; the size
 * assertion fails first if a member of another kind is ever added.  It also
 * checks the failure rule (gt_net.h F1) on calls every transport must refuse
 * without a device or a peer: each failing call describes itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four above, which it needs */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/gt_net.h"
#include "shim/shim_internal.h"

extern const struct gt_net_ops gt_sock_ops;
extern const struct gt_net_ops gt_ib_ops;
extern const struct gt_net_ops gt_inner_ops;
const struct gt_net_ops *gt_gpumem_wrap(const struct gt_net_ops *inner); /* plugin/gpumem */

typedef gt_result (*any_slot)(void);
#define NSLOTS ((sizeof(struct gt_net_ops) - sizeof(const char *)) / sizeof(any_slot))
_Static_assert(offsetof(struct gt_net_ops, name) == 0, "name first, then the slots");
_Static_assert(sizeof(struct gt_net_ops) == sizeof(const char *) + NSLOTS * sizeof(any_slot),
               "gt_net_ops holds only its name and function pointers");

static void assert_full(const struct gt_net_ops *ops, const char *who)
{
    assert_non_null(ops);
    if (!ops->name || !ops->name[0])
        fail_msg("%s: name not set", who);
    const char *base = (const char *)ops + sizeof(const char *);
    for (size_t i = 0; i < NSLOTS; i++) {
        any_slot f;
        memcpy(&f, base + i * sizeof(any_slot), sizeof(f));
        if (!f)
            fail_msg("%s ('%s'): slot %zu of %zu is NULL", who, ops->name, i, NSLOTS);
    }
}

static void sock_fills_every_slot(void **state)
{
    (void)state;
    assert_full(&gt_sock_ops, "plugin/sock");
}

static void ib_fills_every_slot(void **state)
{
    (void)state;
    assert_full(&gt_ib_ops, "plugin/ib");
}

static void inner_fills_every_slot(void **state)
{
    (void)state;
    assert_full(&gt_inner_ops, "plugin/inner");
}

static void gpumem_fills_every_slot(void **state)
{
    (void)state;
    assert_full(gt_gpumem_wrap(&gt_sock_ops), "plugin/gpumem");
}

/* The shim's table, as plugin/core gets it: wrapping a transport (sock). */
static void shim_fills_every_slot(void **state)
{
    (void)state;
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/gt-netops-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
    struct gt_rec_config cfg = {.dir = dir, .mode = -1, .ndevs = 2, .ncomms = 4, .ring_events = 64};
    const struct gt_net_ops *ops = gt_shim_wrap_cfg(&gt_sock_ops, "test", NULL, &cfg);
    assert_ptr_not_equal(ops, &gt_sock_ops); /* the shim's own table, not the transport's */
    assert_full(ops, "shim");
    if (gt_shim_recorder())
        unlink(gt_shim_recorder()->path);
    rmdir(dir);
}

/* A failing call described itself since `mark` (gt_net.h F1). */
static void assert_described(uint32_t mark, gt_result r, const char *who, const char *words)
{
    struct gt_net_failure f;
    if (r == GT_OK)
        fail_msg("%s: expected a failure", who);
    if (!gt_net_failure_since(mark, &f))
        fail_msg("%s failed (%d) without describing why", who, (int)r);
    if (!strstr(f.text, words))
        fail_msg("%s: description '%s' lacks '%s'", who, f.text, words);
}

static void failing_calls_describe_themselves(void **state)
{
    (void)state;
    const struct gt_net_ops *t[] = {&gt_sock_ops, &gt_ib_ops};
    const char *words[] = {"sock", "ib"};
    for (int i = 0; i < 2; i++) {
        struct gt_props p;
        struct gt_dev_probe pr;
        int done = 0;
        uint32_t m = gt_net_fail_mark();
        assert_described(m, t[i]->get_properties(-1, &p), "get_properties(-1)", words[i]);
        m = gt_net_fail_mark();
        assert_described(m, t[i]->get_probe(-1, &pr), "get_probe(-1)", words[i]);
        m = gt_net_fail_mark();
        assert_described(m, t[i]->test(NULL, &done, NULL), "test(NULL)", words[i]);
    }
    /* inner without GDRTRACE_INNER: init says what is missing */
    unsetenv("GDRTRACE_INNER");
    void *ctx = NULL;
    uint32_t m = gt_net_fail_mark();
    assert_described(m, gt_inner_ops.init(&ctx, 0, 0, NULL, NULL, NULL), "inner init",
                     "needs GDRTRACE_INNER");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sock_fills_every_slot),
        cmocka_unit_test(ib_fills_every_slot),
        cmocka_unit_test(inner_fills_every_slot),
        cmocka_unit_test(gpumem_fills_every_slot),
        cmocka_unit_test(shim_fills_every_slot),
        cmocka_unit_test(failing_calls_describe_themselves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
