/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_rc.h — an in-process reliable-connected verbs model for the unit
 * tests of plugin/ib's data path (test_ib_data.c): QPs, CQs and MRs of one
 * process, connected by the dest_qp_num given at RTR.  A posted work
 * request takes effect at once (RDMA WRITE copies, WRITE_WITH_IMM also
 * consumes the peer's next receive and completes it with the immediate,
 * RDMA READ copies back), in order, as RC delivers one QP.  What the model
 * enforces as hardware does: a send queue holds at most max_send_wr work
 * requests that are not known done (an unsignaled one is known done only
 * when a later signaled one of the same QP was polled), a WRITE_WITH_IMM
 * with no receive posted fails the test.  What it counts: work requests
 * per opcode and QP, signaled ones, completions per kind.  Header-only (one
 * test includes it); include after <cmocka.h>.
 */
#ifndef GDRTRACE_TESTS_FAKE_RC_H
#define GDRTRACE_TESTS_FAKE_RC_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl/gt_ibv.h"

#define FRC_QPS 64
#define FRC_CQE 8192
#define FRC_RQ 512

struct frc_cq {
    struct ibv_cq cq;
    struct ibv_wc wc[FRC_CQE];
    uint64_t sq_seq[FRC_CQE]; /* send completions: the QP's post count at that WR */
    int qpi[FRC_CQE];
    unsigned head, tail;
};

struct frc_qp {
    struct ibv_qp qp;
    int used;
    struct frc_cq *cq;
    uint32_t dest;
    int max_send_wr;
    uint64_t posted, retired; /* send WRs posted / known done */
    uint64_t rq[FRC_RQ];
    unsigned rq_head, rq_tail;
};

static struct {
    struct frc_qp qp[FRC_QPS];
    int creates;
    /* counters the tests read (reset with frc_reset_counts) */
    long writes, writes_imm, reads, signaled, send_cqes, recv_cqes;
    long writes_imm_zero;     /* WRITE_WITH_IMM with no bytes */
    long per_qp_imm[FRC_QPS]; /* WRITE_WITH_IMM per QP index */
    long sq_full;             /* posts refused for a full send queue */
    int no_recv;              /* a WRITE_WITH_IMM found no receive */
    uint32_t last_imm;
    struct ibv_async_event ev[8]; /* async events to hand out, in order */
    int nev, acked;
} frc;

static int frc_get_async_event(struct ibv_context *c, struct ibv_async_event *e)
{
    (void)c;
    if (frc.nev == 0) {
        errno = EAGAIN;
        return -1;
    }
    *e = frc.ev[0];
    memmove(&frc.ev[0], &frc.ev[1], sizeof(frc.ev[0]) * (size_t)--frc.nev);
    return 0;
}
static void frc_ack_async_event(struct ibv_async_event *e)
{
    (void)e;
    frc.acked++;
}
static const char *frc_event_type_str(enum ibv_event_type t)
{
    return t == IBV_EVENT_DEVICE_FATAL ? "local catastrophic error"
           : t == IBV_EVENT_QP_FATAL   ? "local work queue catastrophic error"
           : t == IBV_EVENT_CQ_ERR     ? "CQ error"
                                       : "other event";
}

static void frc_reset_counts(void)
{
    frc.writes = frc.writes_imm = frc.reads = frc.signaled = frc.send_cqes = frc.recv_cqes = 0;
    frc.writes_imm_zero = frc.sq_full = 0;
    memset(frc.per_qp_imm, 0, sizeof(frc.per_qp_imm));
}

static struct frc_qp *frc_by_num(uint32_t n)
{
    return n >= 1 && n <= FRC_QPS && frc.qp[n - 1].used ? &frc.qp[n - 1] : NULL;
}

static struct ibv_cq *frc_create_cq(struct ibv_context *c, int cqe, void *ctx,
                                    struct ibv_comp_channel *ch, int v)
{
    (void)c, (void)cqe, (void)ctx, (void)ch, (void)v;
    return calloc(1, sizeof(struct frc_cq));
}
static int frc_destroy_cq(struct ibv_cq *cq)
{
    free(cq);
    return 0;
}
static struct ibv_mr *frc_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    (void)pd, (void)access;
    struct ibv_mr *m = calloc(1, sizeof(*m));
    m->addr = addr;
    m->length = len;
    m->lkey = m->rkey = 7;
    return m;
}
static int frc_dereg_mr(struct ibv_mr *mr)
{
    free(mr);
    return 0;
}
static struct ibv_qp *frc_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
    (void)pd;
    for (int i = 0; i < FRC_QPS; i++)
        if (!frc.qp[i].used) {
            struct frc_qp *q = &frc.qp[i];
            memset(q, 0, sizeof(*q));
            q->used = 1;
            q->qp.qp_num = (uint32_t)i + 1;
            q->cq = (struct frc_cq *)a->send_cq;
            q->max_send_wr = (int)a->cap.max_send_wr;
            frc.creates++;
            return &q->qp;
        }
    errno = ENOMEM;
    return NULL;
}
static int frc_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    if (a->qp_state == IBV_QPS_RTR && (mask & IBV_QP_DEST_QPN))
        ((struct frc_qp *)qp)->dest = a->dest_qp_num;
    return 0;
}
static int frc_destroy_qp(struct ibv_qp *qp)
{
    ((struct frc_qp *)qp)->used = 0;
    return 0;
}

static void frc_push(struct frc_cq *cq, const struct ibv_wc *wc, uint64_t seq, int qpi)
{
    assert_true(cq->tail - cq->head < FRC_CQE);
    cq->wc[cq->tail % FRC_CQE] = *wc;
    cq->sq_seq[cq->tail % FRC_CQE] = seq;
    cq->qpi[cq->tail % FRC_CQE] = qpi;
    cq->tail++;
}

static int frc_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    struct frc_qp *q = (struct frc_qp *)ibqp;
    int n = 0;
    for (struct ibv_send_wr *w = wr; w; w = w->next)
        n++;
    if (q->posted - q->retired + (uint64_t)n > (uint64_t)q->max_send_wr) {
        frc.sq_full++;
        *bad = wr;
        return ENOMEM;
    }
    struct frc_qp *peer = frc_by_num(q->dest);
    for (struct ibv_send_wr *w = wr; w; w = w->next) {
        size_t len = 0;
        for (int i = 0; i < w->num_sge; i++)
            len += w->sg_list[i].length;
        q->posted++;
        struct ibv_wc wc = {.wr_id = w->wr_id, .status = IBV_WC_SUCCESS, .qp_num = q->qp.qp_num};
        switch (w->opcode) {
        case IBV_WR_RDMA_WRITE:
        case IBV_WR_RDMA_WRITE_WITH_IMM: {
            char *dst = (char *)(uintptr_t)w->wr.rdma.remote_addr;
            for (int i = 0; i < w->num_sge; i++) {
                memcpy(dst, (void *)(uintptr_t)w->sg_list[i].addr, w->sg_list[i].length);
                dst += w->sg_list[i].length;
            }
            wc.opcode = IBV_WC_RDMA_WRITE;
            if (w->opcode == IBV_WR_RDMA_WRITE) {
                frc.writes++;
                break;
            }
            frc.writes_imm++;
            frc.writes_imm_zero += len == 0;
            frc.per_qp_imm[q->qp.qp_num - 1]++;
            frc.last_imm = w->imm_data;
            assert_non_null(peer);
            if (peer->rq_head == peer->rq_tail) {
                frc.no_recv = 1;
                break;
            }
            struct ibv_wc r = {.wr_id = peer->rq[peer->rq_head++ % FRC_RQ],
                               .status = IBV_WC_SUCCESS,
                               .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
                               .byte_len = (uint32_t)len,
                               .imm_data = w->imm_data,
                               .qp_num = peer->qp.qp_num,
                               .wc_flags = IBV_WC_WITH_IMM};
            frc_push(peer->cq, &r, 0, -1);
            break;
        }
        case IBV_WR_RDMA_READ:
            frc.reads++;
            memcpy((void *)(uintptr_t)w->sg_list[0].addr, (void *)(uintptr_t)w->wr.rdma.remote_addr,
                   w->sg_list[0].length);
            wc.opcode = IBV_WC_RDMA_READ;
            break;
        default:
            fail_msg("fake_rc: unexpected opcode %d", (int)w->opcode);
        }
        if (w->send_flags & IBV_SEND_SIGNALED) {
            frc.signaled++;
            frc_push(q->cq, &wc, q->posted, (int)q->qp.qp_num - 1);
        }
    }
    return 0;
}

static int frc_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    (void)bad;
    struct frc_qp *q = (struct frc_qp *)ibqp;
    for (struct ibv_recv_wr *w = wr; w; w = w->next) {
        assert_true(q->rq_tail - q->rq_head < FRC_RQ);
        q->rq[q->rq_tail++ % FRC_RQ] = w->wr_id;
    }
    return 0;
}

static int frc_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
    struct frc_cq *cq = (struct frc_cq *)ibcq;
    int k = 0;
    while (k < n && cq->head != cq->tail) {
        unsigned i = cq->head++ % FRC_CQE;
        wc[k] = cq->wc[i];
        if (cq->qpi[i] >= 0) { /* a send completion: it and all before it are done */
            frc.qp[cq->qpi[i]].retired = cq->sq_seq[i];
            frc.send_cqes++;
        } else
            frc.recv_cqes++;
        k++;
    }
    return k;
}

static void frc_install(void)
{
    memset(&frc, 0, sizeof(frc));
    struct gt_ibv_fns t = {.create_cq = frc_create_cq,
                           .destroy_cq = frc_destroy_cq,
                           .reg_mr = frc_reg_mr,
                           .dereg_mr = frc_dereg_mr,
                           .create_qp = frc_create_qp,
                           .modify_qp = frc_modify_qp,
                           .destroy_qp = frc_destroy_qp,
                           .post_send = frc_post_send,
                           .post_recv = frc_post_recv,
                           .poll_cq = frc_poll_cq,
                           .get_async_event = frc_get_async_event,
                           .ack_async_event = frc_ack_async_event,
                           .event_type_str = frc_event_type_str};
    gt_ibv_install(&t);
}

#endif
