/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ncclcfg.c — what the reader makes of NCCL's settings recorded in a
 * recorder (tools/lib/ncclcfg.c), on hand-made settings sections: lookup
 * (entries not in use ignored), "records NCCL's settings" (a GPU Direct
 * key, not NCCL_IB_DISABLE alone), "set" by source; each text: from the
 * environment, as NCCL spelled it, from a conf file (a value holding " ("
 * itself), under an environment plugin, ignored as invalid (with NCCL's
 * default), unset; the sentences a verdict adds: nothing without the
 * section, LOC, a farther level, the topology file, no setting,
 * NCCL_NET_GDR_READ=0, the old NCCL_IB_GDR_LEVEL, and for regMr(CUDA):
 * NCCL_DMABUF_ENABLE=0, DMA-BUF not offered, found unusable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/nccl_cfg.h"
#include "tools/lib/ncclcfg.h"

static struct gtr_setting g_set[16];
static struct gtr_device g_dev[1];
static struct gt_recfile g_r;
static const struct gt_recfile *g_ctx[1] = {&g_r};

static int setup(void **state)
{
    (void)state;
    memset(g_set, 0, sizeof(g_set));
    memset(g_dev, 0, sizeof(g_dev));
    memset(&g_r, 0, sizeof(g_r));
    g_r.settings = g_set;
    g_r.nset = 16;
    g_r.devs = g_dev;
    g_r.ndev = 1;
    return 0;
}

static struct gtr_setting *set(const char *key, int source, const char *value, const char *origin)
{
    for (int i = 0; i < 16; i++)
        if (!g_set[i].in_use) {
            struct gtr_setting *s = &g_set[i];
            s->in_use = 1;
            s->source = (uint32_t)source;
            snprintf(s->key, sizeof(s->key), "%s", key);
            snprintf(s->value, sizeof(s->value), "%s", value);
            snprintf(s->origin, sizeof(s->origin), "%s", origin);
            return s;
        }
    fail_msg("settings full");
    return NULL;
}

/* an entry of g_set to change (g_set is ours; the lookup is const) */
static struct gtr_setting *mut(const char *key)
{
    struct gtr_setting *s = (struct gtr_setting *)gt_ncclcfg_get(&g_r, key);
    assert_non_null(s);
    return s;
}

/* the defaults a writer that records NCCL's settings writes */
static void defaults(void)
{
    set("NCCL_NET_GDR_LEVEL", GT_SRC_DEFAULT, "", "");
    set("NCCL_NET_GDR_READ", GT_SRC_DEFAULT, "", "");
    set("NCCL_DMABUF_ENABLE", GT_SRC_DEFAULT, "", "");
    set("NCCL_TOPO_FILE", GT_SRC_DEFAULT, "", "");
}

static void lookup(void **state)
{
    (void)state;
    assert_null(gt_ncclcfg_get(&g_r, "NCCL_NET_GDR_LEVEL"));
    assert_int_equal(gt_ncclcfg_recorded(&g_r), 0);
    struct gtr_setting *ib = set("NCCL_IB_DISABLE", GT_SRC_NCCL, "1", "NCCL_IB_DISABLE=1");
    assert_ptr_equal(gt_ncclcfg_get(&g_r, "NCCL_IB_DISABLE"), ib);
    assert_int_equal(gt_ncclcfg_recorded(&g_r), 0); /* not a GPU Direct key */
    struct gtr_setting *lvl = set("NCCL_NET_GDR_LEVEL", GT_SRC_DEFAULT, "", "");
    assert_int_equal(gt_ncclcfg_recorded(&g_r), 1);
    lvl->in_use = 0;
    assert_null(gt_ncclcfg_get(&g_r, "NCCL_NET_GDR_LEVEL"));
    assert_int_equal(gt_ncclcfg_recorded(&g_r), 0);
    assert_null(gt_ncclcfg_get(&g_r, "NCCL_IB"));

    struct gtr_setting s = {.in_use = 1, .source = GT_SRC_NCCL};
    snprintf(s.value, sizeof(s.value), "PHB");
    assert_int_equal(gt_ncclcfg_is_set(&s), 1);
    s.source = GT_SRC_UNKNOWN;
    assert_int_equal(gt_ncclcfg_is_set(&s), 1);
    s.source = GT_SRC_INVALID;
    assert_int_equal(gt_ncclcfg_is_set(&s), 0);
    s.source = GT_SRC_DEFAULT;
    assert_int_equal(gt_ncclcfg_is_set(&s), 0);
    s.source = GT_SRC_NCCL;
    s.value[0] = 0;
    assert_int_equal(gt_ncclcfg_is_set(&s), 0);
    assert_int_equal(gt_ncclcfg_is_set(NULL), 0);
}

static void texts(void **state)
{
    (void)state;
    char b[512];
    struct gtr_setting *s = set("NCCL_NET_GDR_LEVEL", GT_SRC_NCCL, "LOC", "NCCL_NET_GDR_LEVEL=LOC");
    assert_string_equal(gt_ncclcfg_text(s, b, sizeof(b)),
                        "NCCL_NET_GDR_LEVEL=LOC (from environment)");
    snprintf(s->origin, sizeof(s->origin), "NCCL_NET_GDR_LEVEL=0");
    assert_string_equal(gt_ncclcfg_text(s, b, sizeof(b)),
                        "NCCL_NET_GDR_LEVEL=LOC (from environment, as NCCL_NET_GDR_LEVEL=0)");
    s = set("NCCL_DMABUF_ENABLE", GT_SRC_NCCL, "0", "NCCL_DMABUF_ENABLE=0 (/etc/nccl.conf)");
    assert_string_equal(gt_ncclcfg_text(s, b, sizeof(b)),
                        "NCCL_DMABUF_ENABLE=0 (from /etc/nccl.conf)");
    s = set("NCCL_TOPO_FILE", GT_SRC_NCCL, "/t (v2)/x.xml",
            "NCCL_TOPO_FILE=/t (v2)/x.xml (/e/n.conf)");
    assert_string_equal(gt_ncclcfg_text(s, b, sizeof(b)),
                        "NCCL_TOPO_FILE=/t (v2)/x.xml (from /e/n.conf)");
    s->source = GT_SRC_UNKNOWN;
    assert_string_equal(gt_ncclcfg_text(s, b, sizeof(b)),
                        "NCCL_TOPO_FILE=/t (v2)/x.xml (from /e/n.conf), though an NCCL environment "
                        "plugin may have given NCCL another value");
    s = set("NCCL_NET_GDR_READ", GT_SRC_INVALID, "", "NCCL_NET_GDR_READ=yes");
    char want[512];
    snprintf(want, sizeof(want),
             "NCCL_NET_GDR_READ=yes (from environment), which NCCL ignores: its default (%s) in "
             "force",
             gt_nccl_cfg_find("NCCL_NET_GDR_READ")->dflt_text);
    assert_string_equal(gt_ncclcfg_text(s, b, sizeof(b)), want);
    s = set("NCCL_NET_FORCE_FLUSH", GT_SRC_DEFAULT, "", "");
    assert_string_equal(gt_ncclcfg_text(s, b, sizeof(b)),
                        "NCCL_NET_FORCE_FLUSH unset (NCCL's default: 0 (1 in 2.18))");
    s = set("NCCL_NOT_IN_TABLE", GT_SRC_DEFAULT, "", "");
    assert_string_equal(gt_ncclcfg_text(s, b, sizeof(b)),
                        "NCCL_NOT_IN_TABLE unset (NCCL's default: ?)");
}

static void has(const char *why, const char *needle)
{
    if (!strstr(why, needle))
        fail_msg("\"%s\" not in \"%s\"", needle, why);
}

static void lacks(const char *why, const char *needle)
{
    if (strstr(why, needle))
        fail_msg("\"%s\" in \"%s\"", needle, why);
}

static void why_host(void **state)
{
    (void)state;
    char why[4096] = "x";
    assert_int_equal(gt_ncclcfg_why_host(why, sizeof(why), g_ctx, 1), 0);
    assert_string_equal(why, "x");
    defaults();
    assert_int_equal(gt_ncclcfg_why_host(why, sizeof(why), g_ctx, 1), 1);
    has(why, "x The plugin offered GPU memory but NCCL never asked to register any:");
    has(why, " no setting explains it (NCCL_NET_GDR_LEVEL unset)");
    has(why, "To confirm, rerun with NCCL_DEBUG=INFO");
    lacks(why, "also keeps sends off");

    struct gtr_setting *lvl = mut("NCCL_NET_GDR_LEVEL");
    *lvl = (struct gtr_setting){.in_use = 1, .source = GT_SRC_NCCL};
    snprintf(lvl->key, sizeof(lvl->key), "NCCL_NET_GDR_LEVEL");
    snprintf(lvl->value, sizeof(lvl->value), "LOC");
    snprintf(lvl->origin, sizeof(lvl->origin), "NCCL_NET_GDR_LEVEL=LOC");
    why[0] = 0;
    gt_ncclcfg_why_host(why, sizeof(why), g_ctx, 1);
    has(why, " NCCL_NET_GDR_LEVEL=LOC (from environment) turns GPU Direct RDMA off for every NIC");
    snprintf(lvl->value, sizeof(lvl->value), "PIX");
    snprintf(lvl->origin, sizeof(lvl->origin), "NCCL_NET_GDR_LEVEL=PIX");
    why[0] = 0;
    gt_ncclcfg_why_host(why, sizeof(why), g_ctx, 1);
    has(why, " NCCL_NET_GDR_LEVEL=PIX (from environment): NCCL uses GPU Direct only up to");

    /* level unset, a topology file: the topology decided */
    lvl->source = GT_SRC_DEFAULT;
    lvl->value[0] = lvl->origin[0] = 0;
    struct gtr_setting *topo = mut("NCCL_TOPO_FILE");
    topo->source = GT_SRC_NCCL;
    snprintf(topo->value, sizeof(topo->value), "/etc/topo.xml");
    snprintf(topo->origin, sizeof(topo->origin), "NCCL_TOPO_FILE=/etc/topo.xml");
    struct gtr_setting *rd = mut("NCCL_NET_GDR_READ");
    rd->source = GT_SRC_NCCL;
    snprintf(rd->value, sizeof(rd->value), "0");
    snprintf(rd->origin, sizeof(rd->origin), "NCCL_NET_GDR_READ=0");
    set("NCCL_IB_GDR_LEVEL", GT_SRC_NCCL, "LOC", "NCCL_IB_GDR_LEVEL=LOC");
    why[0] = 0;
    gt_ncclcfg_why_host(why, sizeof(why), g_ctx, 1);
    has(why,
        " NCCL's topology, read from NCCL_TOPO_FILE=/etc/topo.xml (from environment), decided");
    has(why, " NCCL_NET_GDR_READ=0 (from environment) also keeps sends off GPU memory.");
    has(why, " NCCL_IB_GDR_LEVEL=LOC (from environment) is set, but NCCL 2.4 and later ignore");

    /* the first recorder of ctx that records them is the one read */
    static struct gt_recfile none;
    const struct gt_recfile *two[2] = {&none, &g_r};
    why[0] = 0;
    assert_int_equal(gt_ncclcfg_why_host(why, sizeof(why), two, 2), 1);
    has(why, "NCCL_TOPO_FILE=/etc/topo.xml");
}

static void why_cuda_and_read(void **state)
{
    (void)state;
    char why[2048] = "";
    assert_int_equal(gt_ncclcfg_why_cuda(why, sizeof(why), g_ctx, 1), 0);
    gt_ncclcfg_why_read(why, sizeof(why), g_ctx, 1);
    assert_string_equal(why, "");
    defaults();
    g_dev[0].in_use = 1;
    g_dev[0].ptr_support = GT_PTR_HOST | GT_PTR_CUDA;
    assert_int_equal(gt_ncclcfg_why_cuda(why, sizeof(why), g_ctx, 1), 1);
    assert_string_equal(why,
                        "; the plugin did not offer NCCL_PTR_DMABUF, so NCCL could not use it");
    g_dev[0].ptr_support |= GT_PTR_DMABUF;
    why[0] = 0;
    gt_ncclcfg_why_cuda(why, sizeof(why), g_ctx, 1);
    has(why, "; NCCL_DMABUF_ENABLE unset (NCCL's default: 1), so NCCL itself found DMA-BUF "
             "unusable");
    struct gtr_setting *dm = mut("NCCL_DMABUF_ENABLE");
    dm->source = GT_SRC_NCCL;
    snprintf(dm->value, sizeof(dm->value), "0");
    snprintf(dm->origin, sizeof(dm->origin), "NCCL_DMABUF_ENABLE=0");
    why[0] = 0;
    gt_ncclcfg_why_cuda(why, sizeof(why), g_ctx, 1);
    assert_string_equal(why, "; NCCL_DMABUF_ENABLE=0 (from environment) made NCCL call "
                             "regMr(NCCL_PTR_CUDA), never regMrDmaBuf");

    why[0] = 0;
    gt_ncclcfg_why_read(why, sizeof(why), g_ctx, 1);
    assert_string_equal(why, ""); /* NCCL_NET_GDR_READ at its default */
    struct gtr_setting *rd = mut("NCCL_NET_GDR_READ");
    rd->source = GT_SRC_NCCL;
    snprintf(rd->value, sizeof(rd->value), "0");
    snprintf(rd->origin, sizeof(rd->origin), "NCCL_NET_GDR_READ=0");
    gt_ncclcfg_why_read(why, sizeof(why), g_ctx, 1);
    has(why, " NCCL_NET_GDR_READ=0 (from environment): NCCL keeps its send buffers in host memory");
    snprintf(rd->value, sizeof(rd->value), "1");
    why[0] = 0;
    gt_ncclcfg_why_read(why, sizeof(why), g_ctx, 1);
    assert_string_equal(why, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(lookup, setup),
        cmocka_unit_test_setup(texts, setup),
        cmocka_unit_test_setup(why_host, setup),
        cmocka_unit_test_setup(why_cuda_and_read, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
