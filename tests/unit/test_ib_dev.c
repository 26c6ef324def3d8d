/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ib_dev.c — device selection of the ib transport without hardware:
 * the GDRTRACE_IB_HCA filter (prefix, '=' exact, '^' exclude, ':port'), the
 * speed arithmetic, the RoCE GID choice from a fixture sysfs tree and a fake
 * GID table, and a clean refusal to initialise without libibverbs, saying why.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/ib/ib.h"

static void hca_filter(void **state)
{
    (void)state;
    assert_true(gt_ib_hca_selected(NULL, "mlx5_0", 1));
    assert_true(gt_ib_hca_selected("", "mlx5_0", 1));
    /* prefix by default */
    assert_true(gt_ib_hca_selected("mlx5", "mlx5_10", 1));
    assert_false(gt_ib_hca_selected("mlx5_1", "mlx5_0", 1));
    assert_true(gt_ib_hca_selected("mlx5_1", "mlx5_10", 1));
    /* '=' exact */
    assert_false(gt_ib_hca_selected("=mlx5_1", "mlx5_10", 1));
    assert_true(gt_ib_hca_selected("=mlx5_1,mlx5_3", "mlx5_3", 1));
    /* ports */
    assert_true(gt_ib_hca_selected("mlx5_0:1", "mlx5_0", 1));
    assert_false(gt_ib_hca_selected("mlx5_0:1", "mlx5_0", 2));
    /* '^' exclude, with and without '=' */
    assert_false(gt_ib_hca_selected("^rxe", "rxe0", 1));
    assert_true(gt_ib_hca_selected("^rxe", "mlx5_0", 1));
    assert_true(gt_ib_hca_selected("^=rxe", "rxe0", 1));
    assert_false(gt_ib_hca_selected("^=rxe0:1", "rxe0", 1));
    assert_true(gt_ib_hca_selected("^=rxe0:1", "rxe0", 2));
    /* ports are base-10 integers 1..255: anything else is refused as a whole */
    assert_true(gt_ib_hca_valid(NULL));
    assert_true(gt_ib_hca_valid("^=mlx5_0:1,rxe0,mlx5_1:255,"));
    assert_false(gt_ib_hca_valid("mlx5_0:x"));
    assert_false(gt_ib_hca_valid("mlx5_0:0"));
    assert_false(gt_ib_hca_valid("mlx5_0:256"));
    assert_false(gt_ib_hca_valid("mlx5_0:"));
    assert_false(gt_ib_hca_valid(":1"));
    assert_false(gt_ib_hca_valid("rxe0,mlx5_0:0x1"));
    assert_false(gt_ib_hca_selected("mlx5_0:x", "mlx5_0", 0)); /* was atoi: port 0 */
    /* a list */
    assert_true(gt_ib_hca_selected("rxe1,mlx5_2:1", "mlx5_2", 1));
    assert_false(gt_ib_hca_selected("rxe1,mlx5_2:1", "mlx5_2", 2));
}

static void speed(void **state)
{
    (void)state;
    assert_int_equal(gt_ib_speed_mbps(64, 2), 200000);  /* HDR x4 */
    assert_int_equal(gt_ib_speed_mbps(128, 2), 400000); /* NDR x4 */
    assert_int_equal(gt_ib_speed_mbps(32, 2), 100000);  /* EDR x4 */
    assert_int_equal(gt_ib_speed_mbps(1, 1), 2500);
    assert_int_equal(gt_ib_speed_mbps(3, 2), 0);        /* unknown encoding */
}

/* Fake GID table: 0 = fe80 link-local v1, 1 = same v2, 2 = v4-mapped v1,
 * 3 = v4-mapped v2, 4 = empty. */
static int fake_query_gid(struct ibv_context *c, uint8_t p, int i, union ibv_gid *g)
{
    (void)c, (void)p;
    memset(g, 0, sizeof(*g));
    if (i == 0 || i == 1) {
        g->raw[0] = 0xfe;
        g->raw[1] = 0x80;
        g->raw[15] = 1;
    } else if (i == 2 || i == 3) {
        g->raw[10] = g->raw[11] = 0xff;
        g->raw[12] = 10;
        g->raw[15] = 1;
    }
    return i < 5 ? 0 : EINVAL;
}

static char root[64];

static void write_file(const char *rel, const char *text)
{
    char p[256], cmd[300];
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void roce_gid_choice(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/gt_test_ib_dev.XXXXXX");
    assert_non_null(mkdtemp(root));
    const char *types[] = {"IB/RoCE v1", "RoCE v2", "IB/RoCE v1", "RoCE v2", "RoCE v2"};
    for (int i = 0; i < 5; i++) {
        char rel[128];
        snprintf(rel, sizeof(rel), "class/infiniband/fake0/ports/1/gid_attrs/types/%d", i);
        write_file(rel, types[i]);
    }
    gt_ib_sysfs = root;
    struct gt_ibv_fns t = {.query_gid = fake_query_gid};
    gt_ibv_install(&t);
    /* the v4-mapped RoCE v2 entry wins */
    assert_int_equal(gt_ib_pick_gid(NULL, "fake0", 1, 5), 3);
    /* without index 3, the other v2 */
    assert_int_equal(gt_ib_pick_gid(NULL, "fake0", 1, 3), 1);
    /* the override wins whatever the table says */
    setenv("GDRTRACE_IB_GID_INDEX", "0", 1);
    assert_int_equal(gt_ib_pick_gid(NULL, "fake0", 1, 5), 0);
    unsetenv("GDRTRACE_IB_GID_INDEX");
    /* nothing usable */
    assert_int_equal(gt_ib_pick_gid(NULL, "fake0", 1, 0), -1);
    gt_ibv_reset();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    gt_ib_sysfs = "/sys";
}

/* Without libibverbs the transport refuses init with GT_SYSTEM_ERROR and
 * leaves no device behind (the core then uses sock). */
static void no_library(void **state)
{
    (void)state;
    gt_ibv_reset();
    setenv("GDRTRACE_IBVERBS_LIB", "/nonexistent/libibverbs.so.1", 1);
    void *ctx = NULL;
    uint32_t mark = gt_net_fail_mark();
    assert_int_equal(gt_ib_ops.init(&ctx, 0, 0, NULL, NULL, NULL), GT_SYSTEM_ERROR);
    assert_null(ctx);
    /* init hands back why (gt_net.h F1): the core's selection reason */
    struct gt_net_failure f;
    assert_int_equal(gt_net_failure_since(mark, &f), 1);
    assert_int_equal(f.reason, GT_REASON_TRANSPORT_ERROR);
    assert_non_null(strstr(f.text, "ib: no active RDMA port: "));
    assert_non_null(strstr(f.text, "libibverbs"));
    int n = -1;
    assert_int_equal(gt_ib_ops.devices(&n), GT_OK);
    assert_int_equal(n, 0);
    struct gt_props p;
    assert_int_equal(gt_ib_ops.get_properties(0, &p), GT_INVALID_ARGUMENT);
    unsetenv("GDRTRACE_IBVERBS_LIB");
    gt_ibv_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hca_filter),
        cmocka_unit_test(speed),
        cmocka_unit_test(roce_gid_choice),
        cmocka_unit_test(no_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
