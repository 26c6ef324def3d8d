/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_conform_ib.c — the conformance suite's patterns (cf_patterns.c, NCCL's
 * call patterns) against the ib transport's data path, in this process, over
 * the reliable-connected verbs model of tests/unit/fake_rc.h: one RoCE
 * device, maxRecvs 8, the connection setup over loopback TCP.  What the
 * suite finds here is what ib assumes that NCCL does not promise (a tag
 * twice per clear-to-send slot latched the comm before; the shared-senders
 * and repeated-tags patterns fail on that code).  The verbs model lives in
 * this process: the two-"node" pattern, which forks ranks that each load a
 * plugin, is left to gdrtrace-conform on a real or Soft-RoCE device
 * (tests/vm).  The model holds 64 QPs, so many-comms opens 16 connections.
 * Memory handles are the model's (plugin/reg's policy is test_reg's).
 * Exit 0 pass, 1 fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/ib/ib_net.h"
#include "tests/conformance/cf.h"
#include "tests/unit/fake_rc.h"

struct mem {
    struct gt_mr mh;
    struct ibv_mr mr;
};

static int i_init(struct cf_net *n)
{
    (void)n;
    frc_install();
    frc_reset_counts();
    struct gt_ib_dev *d = &gt_ib_devs[0];
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "model0");
    d->port = 1;
    d->link_layer = IBV_LINK_LAYER_ETHERNET;
    d->lid = 5;
    d->mtu = IBV_MTU_4096;
    d->max_qp_wr = 4096;
    d->reg.probe.advertised = GT_PTR_HOST;
    static struct ibv_context ctx;
    ctx.async_fd = -1;
    d->ctx = &ctx;
    gt_ib_ndevs = 1;
    gt_ib_params_read(&gt_ib_params, 1);
    d->ar = 0;
    return 0;
}

/* The model's own checks: a WRITE_WITH_IMM that found no receive, a post
 * refused for a full send queue. */
static int i_finalize(struct cf_net *n)
{
    (void)n;
    if (frc.no_recv || frc.sq_full) {
        printf("  verbs model: %s%s\n", frc.no_recv ? "a WRITE_WITH_IMM found no receive; " : "",
               frc.sq_full ? "a post found the send queue full" : "");
        return 1;
    }
    return 0;
}

static int i_devices(struct cf_net *n, int *ndev)
{
    (void)n;
    *ndev = gt_ib_ndevs;
    return 0;
}

static int i_props(struct cf_net *n, int dev, struct cf_props *p)
{
    (void)n;
    struct gt_props g;
    memset(&g, 0, sizeof(g));
    int rc = gt_ib_ops.get_properties(dev, &g);
    memset(p, 0, sizeof(*p));
    p->name = g.name;
    p->ptr_support = g.ptr_support;
    p->speed = g.speed_mbps;
    p->max_comms = g.max_comms;
    p->max_recvs = g.max_recvs;
    p->max_p2p = g.max_p2p_bytes;
    return rc;
}

static int i_listen(struct cf_net *n, int dev, void *handle, void **lc)
{
    (void)n;
    return gt_ib_ops.listen(NULL, dev, handle, lc);
}
static int i_connect(struct cf_net *n, int dev, void *handle, void **sc)
{
    (void)n;
    void *dh = NULL;
    return gt_ib_ops.connect(NULL, dev, handle, sc, &dh);
}
static int i_accept(struct cf_net *n, void *lc, void **rc)
{
    (void)n;
    void *dh = NULL;
    return gt_ib_ops.accept(lc, rc, &dh);
}
static int i_reg_mr(struct cf_net *n, void *comm, void *data, size_t size, void **mh)
{
    (void)n, (void)comm;
    struct mem *m = calloc(1, sizeof(*m));
    m->mr.lkey = m->mr.rkey = 9;
    m->mh.mr = &m->mr;
    m->mh.base = (uintptr_t)data;
    m->mh.end = (uintptr_t)data + size;
    *mh = &m->mh;
    return 0;
}
static int i_dereg_mr(struct cf_net *n, void *comm, void *mh)
{
    (void)n, (void)comm;
    free(mh);
    return 0;
}
static int i_isend(struct cf_net *n, void *sc, void *data, size_t size, int tag, void *mh,
                   void **req)
{
    (void)n;
    return gt_ib_ops.isend(sc, data, size, tag, mh, NULL, req);
}
static int i_irecv(struct cf_net *n, void *rc, int cnt, void **data, size_t *sizes, int *tags,
                   void **mhs, void **req)
{
    (void)n;
    return gt_ib_ops.irecv(rc, cnt, data, sizes, tags, mhs, NULL, req);
}
static int i_iflush(struct cf_net *n, void *rc, int cnt, void **data, int *sizes, void **mhs,
                    void **req)
{
    (void)n;
    return gt_ib_ops.iflush(rc, cnt, data, sizes, mhs, req);
}
static int i_test(struct cf_net *n, void *req, int *done, int *sizes)
{
    (void)n;
    return gt_ib_ops.test(req, done, sizes);
}
static int i_close_send(struct cf_net *n, void *c)
{
    (void)n;
    return gt_ib_ops.close_send(c);
}
static int i_close_recv(struct cf_net *n, void *c)
{
    (void)n;
    return gt_ib_ops.close_recv(c);
}
static int i_close_listen(struct cf_net *n, void *c)
{
    (void)n;
    return gt_ib_ops.close_listen(c);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    setenv("GDRTRACE_OOB_TIMEOUT_MS", "2000", 1);
    setenv("GDRTRACE_IB_OOB_IF", "lo", 1);
    static const char *const vars[] = {"NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SPLIT_DATA_ON_QPS",
                                       "NCCL_IB_ADAPTIVE_ROUTING", "NCCL_GDR_FLUSH_DISABLE", NULL};
    for (int i = 0; vars[i]; i++)
        unsetenv(vars[i]);
    struct cf_net n = {.label = "ib over the verbs model (in-process)",
                       .init = i_init,
                       .finalize = i_finalize,
                       .devices = i_devices,
                       .props = i_props,
                       .listen = i_listen,
                       .connect = i_connect,
                       .accept = i_accept,
                       .reg_mr = i_reg_mr,
                       .dereg_mr = i_dereg_mr,
                       .isend = i_isend,
                       .irecv = i_irecv,
                       .iflush = i_iflush,
                       .test = i_test,
                       .close_send = i_close_send,
                       .close_recv = i_close_recv,
                       .close_listen = i_close_listen};
    struct cf_opts o = {.dev = 0, .watchdog_s = 60, .verbose = 1, .max_pairs = 16};
    if (argc > 1)
        o.only = argv[1];
    /* with 1 and with 4 QPs per connection (each message on one QP, in turn) */
    int rc = cf_run_all(&n, &o);
    setenv("NCCL_IB_QPS_PER_CONNECTION", "2", 1);
    n.label = "ib over the verbs model, NCCL_IB_QPS_PER_CONNECTION=2";
    o.max_pairs = 10;
    rc |= cf_run_all(&n, &o);
    return rc ? 1 : 0;
}
