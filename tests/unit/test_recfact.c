/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_recfact.c — facts of one recorder decided in one place
 * (tools/lib/recfact.c), on hand-made identities: before format 1.8 the
 * policy from identity.policy_reg by the plugin's names (an unknown name is
 * -1 and shown as written) and emulated from the transport's name or the
 * GDRTRACE_GPUMEM=1 setting in use; from 1.8 the codes win over the strings
 * where their bit of identity.facts is set, a code this build does not know
 * is -1, a bit clear (or a 1.7 file with it set) falls back to the strings;
 * the sock transport by its name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "tools/lib/recfact.h"

static struct gt_recfile g_r;
static struct gtr_setting g_set[2];

static int setup(void **state)
{
    (void)state;
    memset(&g_r, 0, sizeof(g_r));
    memset(g_set, 0, sizeof(g_set));
    g_r.hdr.version_minor = 7;
    g_r.settings = g_set;
    g_r.nset = 2;
    return 0;
}

static int reg_of(const char *name)
{
    snprintf(g_r.id.policy_reg, sizeof(g_r.id.policy_reg), "%s", name);
    gt_rec_decide_facts(&g_r);
    return g_r.reg_mode;
}

static void policy_by_name(void **state)
{
    (void)state;
    assert_int_equal(reg_of("dmabuf"), GT_REG_DMABUF);
    assert_string_equal(gt_rec_reg_name(&g_r), "dmabuf");
    assert_int_equal(reg_of("peermem"), GT_REG_PEERMEM);
    assert_int_equal(reg_of("host"), GT_REG_HOST);
    assert_int_equal(reg_of("auto"), GT_REG_AUTO);
    assert_string_equal(gt_rec_reg_name(&g_r), "auto");
    assert_int_equal(reg_of("DMABUF"), -1);
    assert_int_equal(reg_of("dmabuf "), -1);
    assert_int_equal(reg_of("future-mode"), -1);
    assert_string_equal(gt_rec_reg_name(&g_r), "future-mode");
    assert_int_equal(reg_of(""), -1);
}

static void emulated_by_strings(void **state)
{
    (void)state;
    gt_rec_decide_facts(&g_r);
    assert_int_equal(g_r.emulated, 0);
    snprintf(g_r.id.transport, sizeof(g_r.id.transport), "sock+gpumem");
    gt_rec_decide_facts(&g_r);
    assert_int_equal(g_r.emulated, 1);
    snprintf(g_r.id.transport, sizeof(g_r.id.transport), "ib");
    g_set[1] = (struct gtr_setting){.in_use = 1};
    snprintf(g_set[1].key, sizeof(g_set[1].key), "GDRTRACE_GPUMEM");
    snprintf(g_set[1].value, sizeof(g_set[1].value), "1");
    gt_rec_decide_facts(&g_r);
    assert_int_equal(g_r.emulated, 1);
    snprintf(g_set[1].value, sizeof(g_set[1].value), "0");
    gt_rec_decide_facts(&g_r);
    assert_int_equal(g_r.emulated, 0);
    snprintf(g_set[1].value, sizeof(g_set[1].value), "1");
    g_set[1].in_use = 0; /* an empty entry says nothing */
    gt_rec_decide_facts(&g_r);
    assert_int_equal(g_r.emulated, 0);
    g_set[1].in_use = 1;
    g_r.settings = NULL; /* a file before settings (1.1) */
    gt_rec_decide_facts(&g_r);
    assert_int_equal(g_r.emulated, 0);
}

static void codes_win_from_1_8(void **state)
{
    (void)state;
    snprintf(g_r.id.policy_reg, sizeof(g_r.id.policy_reg), "dmabuf");
    snprintf(g_r.id.transport, sizeof(g_r.id.transport), "sock+gpumem");
    g_r.id.reg_mode = GT_REG_HOST;
    g_r.id.emulated = 0;
    g_r.id.facts = GTR_ID_HAS_REG_MODE | GTR_ID_HAS_EMULATED;
    /* a 1.7 file with the bits set: reserved bytes, the strings decide */
    gt_rec_decide_facts(&g_r);
    assert_int_equal(g_r.reg_mode, GT_REG_DMABUF);
    assert_int_equal(g_r.emulated, 1);
    g_r.hdr.version_minor = 8;
    gt_rec_decide_facts(&g_r);
    assert_int_equal(g_r.reg_mode, GT_REG_HOST);
    assert_string_equal(gt_rec_reg_name(&g_r), "host");
    assert_int_equal(g_r.emulated, 0);
    /* a newer writer's policy code: unknown here, shown by its string */
    g_r.id.reg_mode = GT_REG_MODE_COUNT;
    gt_rec_decide_facts(&g_r);
    assert_int_equal(g_r.reg_mode, -1);
    assert_string_equal(gt_rec_reg_name(&g_r), "dmabuf");
    /* one bit clear: that fact from the strings, the other from its code */
    g_r.id.reg_mode = GT_REG_PEERMEM;
    g_r.id.facts = GTR_ID_HAS_REG_MODE;
    gt_rec_decide_facts(&g_r);
    assert_int_equal(g_r.reg_mode, GT_REG_PEERMEM);
    assert_int_equal(g_r.emulated, 1);
    g_r.id.facts = GTR_ID_HAS_EMULATED;
    gt_rec_decide_facts(&g_r);
    assert_int_equal(g_r.reg_mode, GT_REG_DMABUF);
    assert_int_equal(g_r.emulated, 0);
}

static void sock(void **state)
{
    (void)state;
    static const struct {
        const char *t;
        int sock;
    } c[] = {{"sock", 1}, {"sock+gpumem", 1}, {"ib", 0}, {"inner", 0}, {"", 0}, {"soc", 0}};
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        snprintf(g_r.id.transport, sizeof(g_r.id.transport), "%s", c[i].t);
        assert_int_equal(gt_rec_sock(&g_r), c[i].sock);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(policy_by_name, setup),
        cmocka_unit_test_setup(emulated_by_strings, setup),
        cmocka_unit_test_setup(codes_win_from_1_8, setup),
        cmocka_unit_test_setup(sock, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
