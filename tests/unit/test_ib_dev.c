/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ib_dev.c — device selection of the ib transport without hardware:
 * the GDRTRACE_IB_HCA filter (prefix, '=' exact, '^' exclude, ':port'), the
 * speed arithmetic, the RoCE GID choice from a fixture sysfs tree and a fake
 * GID table, a clean refusal to initialise without libibverbs, saying why,
 * and, over a fake verbs device, a connect abandoned half way freed by the
 * last finalize.
 */
#include <endian.h>
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

#include "common/nccl_env.h"
#include "plugin/ib/ib.h"
#include "common/settings.h"

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
    /* NCCL's own examples */
    assert_false(gt_ib_hca_selected("^mlx5_1", "mlx5_1", 1));
    assert_false(gt_ib_hca_selected("^mlx5_1", "mlx5_10", 1)); /* prefix, so _10 too */
    assert_true(gt_ib_hca_selected("^mlx5_1", "mlx5_0", 1));
    assert_true(gt_ib_hca_selected("=mlx5_0:1", "mlx5_0", 1));
    assert_false(gt_ib_hca_selected("=mlx5_0:1", "mlx5_0", 2));
    assert_false(gt_ib_hca_selected("=mlx5_0:1", "mlx5_00", 1));
    assert_true(gt_ib_hca_selected("mlx5", "mlx5_3", 2));
    assert_false(gt_ib_hca_selected("mlx5", "rxe0", 1));
    assert_true(gt_ib_hca_selected("=mlx5_0:1,mlx5_3:1", "mlx5_3", 1));
    /* NCCL's corners: "^" alone is an empty list excluded: nothing */
    assert_false(gt_ib_hca_selected("^", "mlx5_0", 1));
    assert_false(gt_ib_hca_selected("^,", "mlx5_0", 1));
    assert_true(gt_ib_hca_selected("=", "mlx5_0", 1)); /* empty list: all */
    /* empty entries skipped, ":1" (no name) skipped */
    assert_true(gt_ib_hca_selected(",,mlx5_0,", "mlx5_0", 1));
    assert_false(gt_ib_hca_selected(":1,rxe", "mlx5_0", 1));
    assert_true(gt_ib_hca_selected(":1", "mlx5_0", 1)); /* only a skipped entry: all */
    /* rail and plane fields after the port are ignored; an empty port is any */
    assert_true(gt_ib_hca_selected("mlx5_0:1:0:1", "mlx5_0", 1));
    assert_false(gt_ib_hca_selected("mlx5_0:1:0:1", "mlx5_0", 2));
    assert_true(gt_ib_hca_selected("mlx5_0:", "mlx5_0", 2));
    assert_true(gt_ib_hca_selected("mlx5_0::3", "mlx5_0", 2));
    /* a port NCCL reads with atoi: "x" is 0 and matches no port (WARNed at
     * open through gt_ib_hca_valid, but not widened to every port) */
    assert_false(gt_ib_hca_selected("mlx5_0:x", "mlx5_0", 1));
    assert_false(gt_ib_hca_selected("mlx5_0:x,rxe", "mlx5_0", 2));
    assert_true(gt_ib_hca_selected("^mlx5_0:x", "mlx5_0", 1));
    assert_true(gt_ib_hca_valid(NULL));
    assert_true(gt_ib_hca_valid("^=mlx5_0:1,rxe0,mlx5_1:255,"));
    assert_true(gt_ib_hca_valid("mlx5_0:1:0:1"));
    assert_false(gt_ib_hca_valid("mlx5_0:x"));
    assert_false(gt_ib_hca_valid("mlx5_0:0"));
    assert_false(gt_ib_hca_valid("mlx5_0:256"));
    assert_false(gt_ib_hca_valid("rxe0,mlx5_0:0x1"));
    /* a list */
    assert_true(gt_ib_hca_selected("rxe1,mlx5_2:1", "mlx5_2", 1));
    assert_false(gt_ib_hca_selected("rxe1,mlx5_2:1", "mlx5_2", 2));
}

/* NCCL's railId/planeId from NCCL_IB_HCA "name:port:rail:plane" */
static void rail_plane_from_hca(void **state)
{
    (void)state;
    int r, pl;
    assert_int_equal(gt_ib_hca_rail_plane("mlx5_0:1:3:2,mlx5_1:1:4", "mlx5_0", 1, &r, &pl), 1);
    assert_int_equal(r, 3);
    assert_int_equal(pl, 2);
    assert_int_equal(gt_ib_hca_rail_plane("mlx5_0:1:3:2,mlx5_1:1:4", "mlx5_1", 1, &r, &pl), 1);
    assert_int_equal(r, 4);
    assert_int_equal(pl, -1);
    /* an empty port matches any port; an empty rail is -1 */
    assert_int_equal(gt_ib_hca_rail_plane("mlx5_2::7,mlx5_3:1::5", "mlx5_2", 2, &r, &pl), 1);
    assert_int_equal(r, 7);
    assert_int_equal(gt_ib_hca_rail_plane("mlx5_2::7,mlx5_3:1::5", "mlx5_3", 1, &r, &pl), 1);
    assert_int_equal(r, -1);
    assert_int_equal(pl, 5);
    /* no fields, no match, an excluding list: -1 */
    assert_int_equal(gt_ib_hca_rail_plane("mlx5_0", "mlx5_0", 1, &r, &pl), 1);
    assert_int_equal(r, -1);
    assert_int_equal(gt_ib_hca_rail_plane("mlx5_0:2:1:1", "mlx5_0", 1, &r, &pl), 0);
    assert_int_equal(r, -1);
    assert_int_equal(gt_ib_hca_rail_plane("^mlx5_1:1:1:1", "mlx5_0", 1, &r, &pl), 0);
    assert_int_equal(pl, -1);
    assert_int_equal(gt_ib_hca_rail_plane("=mlx5:1:1:1", "mlx5_0", 1, &r, &pl), 0);
    assert_int_equal(gt_ib_hca_rail_plane(NULL, "mlx5_0", 1, &r, &pl), 0);
}

static void speed(void **state)
{
    (void)state;
    assert_int_equal(gt_ib_speed_mbps(64, 2), 200000);  /* HDR x4 */
    assert_int_equal(gt_ib_speed_mbps(128, 2), 400000); /* NDR x4 */
    assert_int_equal(gt_ib_speed_mbps(32, 2), 100000);  /* EDR x4 */
    assert_int_equal(gt_ib_speed_mbps(1, 1), 2500);
    /* NCCL's reading: the lowest bit set; none: the last entry (XDR) */
    assert_int_equal(gt_ib_speed_mbps(3, 2), 10000);
    assert_int_equal(gt_ib_speed_mbps(256, 2), 800000);  /* XDR x4 (active_speed_ex) */
    assert_int_equal(gt_ib_speed_mbps(0, 2), 800000);    /* XDR read as 0 by old stacks */
    assert_int_equal(gt_ib_speed_mbps(128, 16), 200000); /* NDR x2 */
    assert_int_equal(gt_ib_speed_mbps(128, 0), 200000);  /* unknown width: 2x, as NCCL */
}

/* A fake RoCE GID table and its gid_attrs/types, as a port with IPv4 and
 * IPv6 addresses shows them (every GID twice: RoCE v1, v2):
 *   0 fe80::1 v1   1 fe80::1 v2   2 ::ffff:10.0.0.1 v1   3 ::ffff:10.0.0.1 v2
 *   4 2001:db8::1 v1   5 2001:db8::1 v2   6 ::ffff:192.168.1.5 v2   7 zero
 * flid_gid: IB, index 1 carries a FLID (bytes 4-5). */
static int flid_gid;
static void gid_at(int i, uint8_t *g)
{
    memset(g, 0, 16);
    if (flid_gid && i == 1) {
        g[0] = 0xfe, g[1] = 0x80, g[4] = 0x00, g[5] = 0x2a, g[15] = 1;
        return;
    }
    static const uint8_t v6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    switch (i) {
    case 0:
    case 1:
        g[0] = 0xfe, g[1] = 0x80, g[15] = 1;
        break;
    case 2:
    case 3:
        g[10] = g[11] = 0xff, g[12] = 10, g[15] = 1;
        break;
    case 4:
    case 5:
        memcpy(g, v6, 16);
        break;
    case 6:
        g[10] = g[11] = 0xff, g[12] = 192, g[13] = 168, g[14] = 1, g[15] = 5;
        break;
    default:
        break;
    }
}
static int fake_query_gid(struct ibv_context *c, uint8_t p, int i, union ibv_gid *g)
{
    (void)c, (void)p;
    gid_at(i, g->raw);
    return i < 8 ? 0 : EINVAL;
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

static const char *const gid_vars[] = {"NCCL_IB_GID_INDEX",        "GDRTRACE_IB_GID_INDEX",
                                       "NCCL_IB_ROCE_VERSION_NUM", "NCCL_IB_ADDR_FAMILY",
                                       "NCCL_IB_ADDR_RANGE",       NULL};

/* The index NCCL's rules give under `env` ("NAME=value" pairs, NULL-ended). */
static int pick(int link_layer, int len, const char *const *env)
{
    for (int i = 0; gid_vars[i]; i++)
        unsetenv(gid_vars[i]);
    for (int i = 0; env && env[i]; i += 2)
        setenv(env[i], env[i + 1], 1);
    struct gt_ib_gid_rules r;
    gt_ib_gid_rules_read(&r, 1);
    return gt_ib_pick_gid(NULL, "fake0", 1, link_layer, len, &r);
}

static void gid_choice_nccl_rules(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/gt_test_ib_dev.XXXXXX");
    assert_non_null(mkdtemp(root));
    const char *types[] = {"IB/RoCE v1", "RoCE v2", "IB/RoCE v1", "RoCE v2",
                           "IB/RoCE v1", "RoCE v2", "RoCE v2",    "RoCE v2"};
    for (int i = 0; i < 8; i++) {
        char rel[128];
        snprintf(rel, sizeof(rel), "class/infiniband/fake0/ports/1/gid_attrs/types/%d", i);
        write_file(rel, types[i]);
    }
    gt_ib_sysfs = root;
    struct gt_ibv_fns t = {.query_gid = fake_query_gid};
    gt_ibv_install(&t);
    const int E = IBV_LINK_LAYER_ETHERNET, I = IBV_LINK_LAYER_INFINIBAND;
    /* defaults (AF_INET, RoCE v2, no range): 2 replaces 0 (other family),
     * then 3 replaces 2 (same address, v2); 6 has the version 3 has */
    assert_int_equal(pick(E, 8, NULL), 3);
    /* a table ending before index 3: the IPv4 v1 entry, not the fe80 v2 */
    assert_int_equal(pick(E, 3, NULL), 2);
    const char *v1[] = {"NCCL_IB_ROCE_VERSION_NUM", "1", NULL};
    assert_int_equal(pick(E, 8, v1), 2);
    const char *inet6[] = {"NCCL_IB_ADDR_FAMILY", "AF_INET6", NULL};
    assert_int_equal(pick(E, 8, inet6), 5); /* link-local never; the global v2 */
    const char *inet6v1[] = {"NCCL_IB_ADDR_FAMILY", "AF_INET6", "NCCL_IB_ROCE_VERSION_NUM", "1",
                             NULL};
    assert_int_equal(pick(E, 8, inet6v1), 4);
    const char *range[] = {"NCCL_IB_ADDR_RANGE", "192.168.1.0/24", NULL};
    assert_int_equal(pick(E, 8, range), 6);
    const char *range6[] = {"NCCL_IB_ADDR_FAMILY", "AF_INET6", "NCCL_IB_ADDR_RANGE",
                            "2001:db8::/32", NULL};
    assert_int_equal(pick(E, 8, range6), 5);
    const char *norange[] = {"NCCL_IB_ADDR_RANGE", "192.168.1.0", NULL}; /* no "/bits" */
    assert_int_equal(pick(E, 8, norange), 3);
    /* a forced index, whatever the table says; our twin overrides NCCL's */
    const char *forced[] = {"NCCL_IB_GID_INDEX", "4", NULL};
    assert_int_equal(pick(E, 8, forced), 4);
    const char *twin[] = {"NCCL_IB_GID_INDEX", "4", "GDRTRACE_IB_GID_INDEX", "1", NULL};
    assert_int_equal(pick(E, 8, twin), 1);
    /* IB: NCCL_IB_GID_INDEX does not apply; index 1 only with a FLID */
    assert_int_equal(pick(I, 8, forced), 0);
    flid_gid = 1;
    assert_int_equal(pick(I, 8, NULL), 1);
    flid_gid = 0;
    const char *twin_only[] = {"GDRTRACE_IB_GID_INDEX", "5", NULL};
    assert_int_equal(pick(I, 8, twin_only), 5);
    /* nothing to choose from */
    assert_int_equal(pick(E, 0, NULL), -1);
    for (int i = 0; gid_vars[i]; i++)
        unsetenv(gid_vars[i]);
    gt_ibv_reset();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    gt_ib_sysfs = "/sys";
}

/* NCCL's SL and TC: the variable, else the communicator's traffic class
 * (for the SL too), else 0. */
static void sl_tc_as_nccl(void **state)
{
    (void)state;
    struct gt_ib_params p;
    int sl, tc;
    unsetenv("NCCL_IB_SL");
    unsetenv("NCCL_IB_TC");
    gt_ib_params_read(&p, 1);
    gt_ib_sl_tc(&p, -1, &sl, &tc);
    assert_int_equal(sl, 0);
    assert_int_equal(tc, 0);
    gt_ib_sl_tc(&p, 5, &sl, &tc);
    assert_int_equal(sl, 5);
    assert_int_equal(tc, 5);
    setenv("NCCL_IB_TC", "106", 1);
    setenv("NCCL_IB_SL", "3", 1);
    gt_ib_params_read(&p, 1);
    gt_ib_sl_tc(&p, 5, &sl, &tc);
    assert_int_equal(sl, 3);
    assert_int_equal(tc, 106);
    assert_int_equal(p.s_tc.source, GT_SRC_NCCL);
    assert_string_equal(p.s_tc.key, "GDRTRACE_IB_TC");
    setenv("NCCL_IB_QPS_PER_CONNECTION", "64", 1); /* NCCL allows 128: clamped */
    gt_ib_params_read(&p, 0);
    assert_int_equal(p.qps, GT_IB_MAX_QPS);
    unsetenv("NCCL_IB_QPS_PER_CONNECTION");
    unsetenv("NCCL_IB_TC");
    unsetenv("NCCL_IB_SL");
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
    assert_int_equal(f.reason, GT_REASON_NO_RDMA_DEVICE);
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

/* NCCL_IB_DISABLE: under GDRTRACE_TRANSPORT=auto ib refuses at once,
 * naming the variable (the core then takes sock, as NCCL takes its Socket
 * transport); an explicit GDRTRACE_TRANSPORT=ib goes on (here to the
 * missing library). */
static void ib_disable(void **state)
{
    (void)state;
    gt_ibv_reset();
    setenv("GDRTRACE_IBVERBS_LIB", "/nonexistent/libibverbs.so.1", 1);
    setenv("NCCL_IB_DISABLE", "1", 1);
    void *ctx = NULL;
    uint32_t mark = gt_net_fail_mark();
    assert_int_equal(gt_ib_ops.init(&ctx, 0, 0, NULL, NULL, NULL), GT_SYSTEM_ERROR);
    struct gt_net_failure f;
    assert_int_equal(gt_net_failure_since(mark, &f), 1);
    assert_non_null(strstr(f.text, "disabled by NCCL_IB_DISABLE=1"));
    struct gt_setting noted[32];
    int nn = gt_nccl_noted(noted, 32);
    int found = 0;
    for (int i = 0; i < nn; i++)
        found |= !strcmp(noted[i].key, "NCCL_IB_DISABLE") && !strcmp(noted[i].value, "1");
    assert_true(found); /* the recorder says why ib is not in use */
    setenv("GDRTRACE_TRANSPORT", "ib", 1);
    gt_settings_reset_for_test();
    mark = gt_net_fail_mark();
    assert_int_equal(gt_ib_ops.init(&ctx, 0, 0, NULL, NULL, NULL), GT_SYSTEM_ERROR);
    assert_int_equal(gt_net_failure_since(mark, &f), 1);
    assert_null(strstr(f.text, "NCCL_IB_DISABLE"));
    assert_non_null(strstr(f.text, "no active RDMA port"));
    setenv("NCCL_IB_DISABLE", "0", 1);
    unsetenv("GDRTRACE_TRANSPORT");
    gt_settings_reset_for_test();
    mark = gt_net_fail_mark();
    assert_int_equal(gt_ib_ops.init(&ctx, 0, 0, NULL, NULL, NULL), GT_SYSTEM_ERROR);
    assert_int_equal(gt_net_failure_since(mark, &f), 1);
    assert_non_null(strstr(f.text, "no active RDMA port"));
    /* a refused ib leaves none of its settings for the recorder */
    nn = gt_nccl_noted(noted, 32);
    for (int i = 0; i < nn; i++) {
        assert_true(strncmp(noted[i].key, "GDRTRACE_IB", 11) != 0);
        assert_true(strncmp(noted[i].key, "NCCL_IB_", 8) != 0);
    }
    unsetenv("NCCL_IB_DISABLE");
    unsetenv("GDRTRACE_IBVERBS_LIB");
    gt_ibv_reset();
}

/* ---- a whole fake verbs device, for the connection lifetimes ---------- */

static int live_qps, live_cqs, live_mrs, live_pds, live_ctxs;
static char fk_dev;

static int fk_devlists, fk_forks, fk_devlists_at_fork = -1;
static int fk_fork_init(void)
{
    fk_forks++;
    fk_devlists_at_fork = fk_devlists;
    return 0;
}

static struct ibv_device **fk_get_device_list(int *n)
{
    static struct ibv_device *list[2];
    fk_devlists++;
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
    struct ibv_context *c = calloc(1, sizeof(struct ibv_context));
    c->async_fd = -1;
    return c;
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

/* The whole fake device's table. */
static void fk_install(void)
{
    struct gt_ibv_fns t = {
        .fork_init = fk_fork_init,
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
}

/* ibv_fork_init as NCCL calls it: once per process, before the first
 * device is listed or opened (its result is not fatal). */
static void fork_init_once_before_devices(void **state)
{
    (void)state;
    fk_install();
    void *ctx = NULL;
    assert_int_equal(gt_ib_ops.init(&ctx, 0, 0, NULL, NULL, NULL), GT_OK);
    assert_int_equal(fk_forks, 1);
    assert_int_equal(fk_devlists_at_fork, 0);
    assert_true(fk_devlists >= 1);
    assert_int_equal(gt_ib_ops.finalize(ctx), GT_OK);
    assert_int_equal(gt_ib_ops.init(&ctx, 0, 0, NULL, NULL, NULL), GT_OK);
    assert_int_equal(fk_forks, 1); /* the devices were opened again, fork_init not */
    assert_int_equal(fk_devlists, 2);
    assert_int_equal(gt_ib_ops.finalize(ctx), GT_OK);
    gt_ibv_reset();
}

/* libnccl's ncclGetVersion, as the process NCCL loaded us in exports it
 * (this test links with -rdynamic); 0: no NCCL in the process. */
static int fake_nccl_version;
__attribute__((visibility("default"))) int ncclGetVersion(int *v);
int ncclGetVersion(int *v)
{
    if (!fake_nccl_version)
        return 1;
    *v = fake_nccl_version;
    return 0;
}

/* ---- topology inputs from a fake sysfs tree ---------------------------- */

/* Five devices as a host with a dual-function NIC, a VF, another NIC and a
 * soft device lists them (not in PCI order):
 *   mlx5_3  0000:86:00.0  guid B  active_speed EDR, active_speed_ex XDR
 *   mlx5_1  0000:3b:00.1  guid A  (second function of the first NIC)
 *   mlx5_0  0000:3b:00.0  guid A
 *   mlx5_4  0000:3b:01.3  guid A  (a virtual function)
 *   rxe0    no PCI device */
static const struct {
    const char *name, *bdf;
    uint64_t guid;
    int speed, speed_ex;
} topo[] = {{"mlx5_3", "0000:86:00.0", 0xb0b0, 32, 256},
            {"mlx5_1", "0000:3b:00.1", 0xa0a0, 128, 0},
            {"mlx5_0", "0000:3b:00.0", 0xa0a0, 128, 0},
            {"mlx5_4", "0000:3b:01.3", 0xa0a0, 128, 0},
            {"rxe0", NULL, 0xc0c0, 64, 0}};
enum { NTOPO = sizeof(topo) / sizeof(topo[0]) };
static char topo_devs[NTOPO];

static struct ibv_device **topo_list(int *n)
{
    static struct ibv_device *l[NTOPO + 1];
    for (int i = 0; i < NTOPO; i++)
        l[i] = (struct ibv_device *)&topo_devs[i];
    *n = NTOPO;
    return l;
}
static int topo_idx(const void *d)
{
    return (int)((const char *)d - topo_devs);
}
static const char *topo_name(struct ibv_device *d)
{
    return topo[topo_idx(d)].name;
}
static struct ibv_context *topo_open(struct ibv_device *d)
{
    struct ibv_context *c = fk_open_device(d);
    c->device = d;
    return c;
}
static int topo_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
    fk_query_device(c, a);
    a->sys_image_guid = htobe64(topo[topo_idx(c->device)].guid);
    return 0;
}
static int topo_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a)
{
    fk_query_port(c, port, a);
    int i = topo_idx(c->device);
    a->active_speed = (uint8_t)topo[i].speed;
    a->active_width = 2;                      /* 4x */
    uint32_t ex = (uint32_t)topo[i].speed_ex; /* where newer providers put it */
    memcpy((char *)a + GT_IB_SPEED_EX_OFF, &ex, sizeof(ex));
    return 0;
}

/* ibv_query_port_speed (rdma-core 56): known for mlx5_3 only, 100 Mb/s units */
static int topo_query_port_speed(struct ibv_context *c, uint8_t port, uint64_t *speed)
{
    (void)port;
    if (strcmp(topo[topo_idx(c->device)].name, "mlx5_3") != 0)
        return EOPNOTSUPP;
    *speed = 4000;
    return 0;
}

static void topo_tree(void)
{
    snprintf(root, sizeof(root), "/tmp/gt_test_ib_topo.XXXXXX");
    assert_non_null(mkdtemp(root));
    char cmd[1024];
    for (int i = 0; i < NTOPO; i++) {
        if (topo[i].bdf)
            snprintf(
                cmd, sizeof(cmd),
                "cd '%s' && mkdir -p devices/pci0000:00/0000:00:01.0/%s class/infiniband/%s && "
                "ln -s ../../../devices/pci0000:00/0000:00:01.0/%s class/infiniband/%s/device",
                root, topo[i].bdf, topo[i].name, topo[i].bdf, topo[i].name);
        else
            snprintf(cmd, sizeof(cmd), "mkdir -p '%s/class/infiniband/%s'", root, topo[i].name);
        assert_int_equal(system(cmd), 0);
    }
    gt_ib_sysfs = root;
}

/* The order, PCI paths, ports, GUIDs and speeds NCCL's rules give
 * (transport/net_ib/init.cc), read through getProperties. */
static void topology_as_nccl(void **state)
{
    (void)state;
    topo_tree();
    fk_install();
    gt_ibv.get_device_list = topo_list;
    gt_ibv.get_device_name = topo_name;
    gt_ibv.open_device = topo_open;
    gt_ibv.query_device = topo_query_device;
    gt_ibv.query_port = topo_query_port;
    static const struct {
        const char *merge_vfs, *order;
        int nccl; /* the loading NCCL's version code; 0 none */
        const char *name[NTOPO], *path[NTOPO];
        int port[NTOPO];
    } want[] = {
        {NULL,
         NULL, /* NCCL's defaults */
         0,
         {"mlx5_0", "mlx5_1", "mlx5_4", "mlx5_3", "rxe0"},
         {"0000:3b:00.0", "0000:3b:00.0", "0000:3b:00.0", "0000:86:00.0", "rxe0"},
         {1, 2, 3, 1, 1}},
        {"0",
         NULL, /* VFs keep their device digits: a PCI device of their own */
         0,
         {"mlx5_0", "mlx5_1", "mlx5_4", "mlx5_3", "rxe0"},
         {"0000:3b:00.0", "0000:3b:00.0", "0000:3b:01.0", "0000:86:00.0", "rxe0"},
         {1, 2, 1, 1, 1}},
        {NULL,
         "0", /* the verbs order */
         0,
         {"mlx5_3", "mlx5_1", "mlx5_0", "mlx5_4", "rxe0"},
         {"0000:86:00.0", "0000:3b:00.0", "0000:3b:00.0", "0000:3b:00.0", "rxe0"},
         {1, 1, 2, 3, 1}},
        {NULL,
         NULL, /* NCCL 2.28.3 (and 2.29.3): no sorting, realPort in the verbs order */
         22803,
         {"mlx5_3", "mlx5_1", "mlx5_0", "mlx5_4", "rxe0"},
         {"0000:86:00.0", "0000:3b:00.0", "0000:3b:00.0", "0000:3b:00.0", "rxe0"},
         {1, 1, 2, 3, 1}},
        {NULL,
         "1", /* ... which has no NCCL_IB_DEVICE_PCI_ORDER to ask for it */
         22903,
         {"mlx5_3", "mlx5_1", "mlx5_0", "mlx5_4", "rxe0"},
         {"0000:86:00.0", "0000:3b:00.0", "0000:3b:00.0", "0000:3b:00.0", "rxe0"},
         {1, 1, 2, 3, 1}},
        {NULL,
         NULL, /* NCCL 2.29.7, the first that sorts */
         22907,
         {"mlx5_0", "mlx5_1", "mlx5_4", "mlx5_3", "rxe0"},
         {"0000:3b:00.0", "0000:3b:00.0", "0000:3b:00.0", "0000:86:00.0", "rxe0"},
         {1, 2, 3, 1, 1}},
    };
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        if (want[k].merge_vfs)
            setenv("NCCL_IB_MERGE_VFS", want[k].merge_vfs, 1);
        else
            unsetenv("NCCL_IB_MERGE_VFS");
        if (want[k].order)
            setenv("NCCL_IB_DEVICE_PCI_ORDER", want[k].order, 1);
        else
            unsetenv("NCCL_IB_DEVICE_PCI_ORDER");
        fake_nccl_version = want[k].nccl;
        void *ctx = NULL;
        assert_int_equal(gt_ib_ops.init(&ctx, 0, 0, NULL, NULL, NULL), GT_OK);
        int n = 0;
        assert_int_equal(gt_ib_ops.devices(&n), GT_OK);
        assert_int_equal(n, NTOPO);
        for (int i = 0; i < n; i++) {
            struct gt_props p;
            assert_int_equal(gt_ib_ops.get_properties(i, &p), GT_OK);
            assert_string_equal(p.name, want[k].name[i]);
            const char *slash = strrchr(p.pci_path, '/');
            assert_non_null(slash);
            assert_string_equal(slash + 1, want[k].path[i]);
            assert_int_equal(p.port, want[k].port[i]);
            int t = 0;
            while (strcmp(topo[t].name, p.name) != 0)
                t++;
            /* sys_image_guid as verbs gives it, as NCCL stores it */
            assert_int_equal(p.guid, htobe64(topo[t].guid));
            /* NDR x4, except active_speed_ex (XDR) over EDR, and HDR x4 */
            int speed = topo[t].speed_ex ? 800000 : topo[t].speed == 64 ? 200000 : 400000;
            assert_int_equal(p.speed_mbps, speed);
        }
        assert_int_equal(gt_ib_ops.finalize(ctx), GT_OK);
    }
    fake_nccl_version = 0;
    unsetenv("NCCL_IB_MERGE_VFS");
    unsetenv("NCCL_IB_DEVICE_PCI_ORDER");
    /* NCCL asks ibv_query_port_speed first where libibverbs has it (and
     * NCCL_IB_QUERY_PORT_SPEED is not 0); a port it cannot answer for
     * keeps the attribute's speed */
    gt_ibv.query_port_speed = topo_query_port_speed;
    gt_ibv.has_query_port_speed = 1;
    for (int qs = 1; qs >= 0; qs--) {
        setenv("NCCL_IB_QUERY_PORT_SPEED", qs ? "1" : "0", 1);
        void *ctx = NULL;
        assert_int_equal(gt_ib_ops.init(&ctx, 0, 0, NULL, NULL, NULL), GT_OK);
        for (int i = 0; i < NTOPO; i++) {
            struct gt_props p;
            assert_int_equal(gt_ib_ops.get_properties(i, &p), GT_OK);
            if (!strcmp(p.name, "mlx5_3"))
                assert_int_equal(p.speed_mbps, qs ? 400000 : 800000);
            if (!strcmp(p.name, "mlx5_0"))
                assert_int_equal(p.speed_mbps, 400000);
        }
        assert_int_equal(gt_ib_ops.finalize(ctx), GT_OK);
    }
    unsetenv("NCCL_IB_QUERY_PORT_SPEED");
    gt_ibv_reset();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    gt_ib_sysfs = "/sys";
}

/* A connect NCCL abandons half way (its peer never accepts) dies by the
 * last finalize, before the device under its QPs closes (gt_net.h
 * lifetimes: half-made comm); and the handle that named it is not trusted
 * afterwards. */
static void abandoned_connect_dies_at_last_finalize(void **state)
{
    (void)state;
    fk_install();
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
        cmocka_unit_test(rail_plane_from_hca),
        cmocka_unit_test(gid_choice_nccl_rules),
        cmocka_unit_test(sl_tc_as_nccl),
        cmocka_unit_test(no_library),
        cmocka_unit_test(ib_disable),
        cmocka_unit_test(fork_init_once_before_devices),
        cmocka_unit_test(abandoned_connect_dies_at_last_finalize),
        cmocka_unit_test(topology_as_nccl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
