/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ib_dev.c — device selection of the ib transport without hardware:
 * the GDRTRACE_IB_HCA filter (prefix, '=' exact, '^' exclude, ':port'), the
 * speed arithmetic, the RoCE GID choice from a fixture sysfs tree and a fake
 * GID table, a clean refusal to initialise without libibverbs, saying why,
 * and, over a fake verbs device, a connect abandoned half way freed by the
 * last finalize.
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

/* ---- a whole fake verbs device, for the connection lifetimes ---------- */

static int live_qps, live_cqs, live_mrs, live_pds, live_ctxs;
static char fk_dev;

static struct ibv_device **fk_get_device_list(int *n)
{
    static struct ibv_device *list[2];
    list[0] = (struct ibv_device *)&fk_dev;
    *n = 1;
    return list;
}
static void fk_free_device_list(struct ibv_device **l)
{
    (void)l;
}
static const char *fk_get_device_name(struct ibv_device *d)
{
    (void)d;
    return "fake_ib0";
}
static __be64 fk_get_device_guid(struct ibv_device *d)
{
    (void)d;
    return 0;
}
static struct ibv_context *fk_open_device(struct ibv_device *d)
{
    (void)d;
    live_ctxs++;
    return calloc(1, sizeof(struct ibv_context));
}
static int fk_close_device(struct ibv_context *c)
{
    live_ctxs--;
    free(c);
    return 0;
}
static int fk_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
    (void)c;
    a->phys_port_cnt = 1;
    a->max_qp = 1024;
    a->max_qp_wr = 4096;
    return 0;
}
static int fk_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a)
{
    (void)c, (void)port;
    a->state = IBV_PORT_ACTIVE;
    a->link_layer = IBV_LINK_LAYER_INFINIBAND;
    a->lid = 1;
    a->active_mtu = IBV_MTU_1024;
    return 0;
}
static int fk_query_gid(struct ibv_context *c, uint8_t p, int i, union ibv_gid *g)
{
    (void)c, (void)p, (void)i;
    memset(g, 0, sizeof(*g));
    return 0;
}
static struct ibv_pd *fk_alloc_pd(struct ibv_context *c)
{
    (void)c;
    live_pds++;
    return calloc(1, sizeof(struct ibv_pd));
}
static int fk_dealloc_pd(struct ibv_pd *pd)
{
    if (live_qps || live_cqs || live_mrs)
        return EBUSY; /* as a real PD with resources on it */
    live_pds--;
    free(pd);
    return 0;
}
static struct ibv_mr *fk_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    (void)pd, (void)addr, (void)len, (void)access;
    live_mrs++;
    return calloc(1, sizeof(struct ibv_mr));
}
static int fk_dereg_mr(struct ibv_mr *mr)
{
    live_mrs--;
    free(mr);
    return 0;
}
static struct ibv_cq *fk_create_cq(struct ibv_context *c, int cqe, void *cc,
                                   struct ibv_comp_channel *ch, int vec)
{
    (void)c, (void)cqe, (void)cc, (void)ch, (void)vec;
    live_cqs++;
    return calloc(1, sizeof(struct ibv_cq));
}
static int fk_destroy_cq(struct ibv_cq *cq)
{
    live_cqs--;
    free(cq);
    return 0;
}
static struct ibv_qp *fk_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
    (void)pd, (void)a;
    struct ibv_qp *qp = calloc(1, sizeof(*qp));
    qp->qp_num = (uint32_t)++live_qps;
    return qp;
}
static int fk_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    (void)qp, (void)a, (void)mask;
    return 0;
}
static int fk_destroy_qp(struct ibv_qp *qp)
{
    live_qps--;
    free(qp);
    return 0;
}

/* A connect NCCL abandons half way (its peer never accepts) dies by the
 * last finalize, before the device under its QPs closes (gt_net.h
 * lifetimes: half-made comm); and the handle that named it is not trusted
 * afterwards. */
static void abandoned_connect_dies_at_last_finalize(void **state)
{
    (void)state;
    struct gt_ibv_fns t = {
        .get_device_list = fk_get_device_list,
        .free_device_list = fk_free_device_list,
        .get_device_name = fk_get_device_name,
        .get_device_guid = fk_get_device_guid,
        .open_device = fk_open_device,
        .close_device = fk_close_device,
        .query_device = fk_query_device,
        .query_port = fk_query_port,
        .query_gid = fk_query_gid,
        .alloc_pd = fk_alloc_pd,
        .dealloc_pd = fk_dealloc_pd,
        .reg_mr = fk_reg_mr,
        .dereg_mr = fk_dereg_mr,
        .create_cq = fk_create_cq,
        .destroy_cq = fk_destroy_cq,
        .create_qp = fk_create_qp,
        .modify_qp = fk_modify_qp,
        .destroy_qp = fk_destroy_qp,
    };
    gt_ibv_install(&t);
    setenv("GDRTRACE_IB_OOB_IF", "lo", 1);
    void *ctx = NULL, *lc = NULL, *sc = NULL;
    char handle[GT_NET_HANDLE_MAXSIZE];
    assert_int_equal(gt_ib_ops.init(&ctx, 0, 0, NULL, NULL, NULL), GT_OK);
    assert_int_equal(gt_ib_ndevs, 1);
    assert_int_equal(gt_ib_ops.listen(ctx, 0, handle, &lc), GT_OK);
    assert_int_equal(gt_ib_ops.connect(ctx, 0, handle, &sc, NULL), GT_OK);
    assert_null(sc); /* under way: nobody accepts */
    assert_true(live_qps > 0 && live_cqs == 1 && live_mrs == 1);
    assert_int_equal(gt_ib_ops.close_listen(lc), GT_OK);
    assert_int_equal(gt_ib_ops.finalize(ctx), GT_OK);
    assert_int_equal(live_qps, 0);
    assert_int_equal(live_cqs, 0);
    assert_int_equal(live_mrs, 0);
    assert_int_equal(live_pds, 0); /* the PD could be freed: nothing left on it */
    assert_int_equal(live_ctxs, 0);
    /* A new context: the old handle names nothing now, so connect starts a
     * fresh attempt (the listener is gone) instead of using freed memory. */
    assert_int_equal(gt_ib_ops.init(&ctx, 0, 0, NULL, NULL, NULL), GT_OK);
    gt_result r = gt_ib_ops.connect(ctx, 0, handle, &sc, NULL);
    assert_true(r == GT_OK || r == GT_REMOTE_ERROR);
    assert_null(sc);
    assert_int_equal(gt_ib_ops.finalize(ctx), GT_OK);
    assert_int_equal(live_qps + live_cqs + live_mrs + live_pds + live_ctxs, 0);
    unsetenv("GDRTRACE_IB_OOB_IF");
    gt_ibv_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hca_filter),
        cmocka_unit_test(speed),
        cmocka_unit_test(roce_gid_choice),
        cmocka_unit_test(no_library),
        cmocka_unit_test(abandoned_connect_dies_at_last_finalize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
