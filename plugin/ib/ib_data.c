/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ib_data.c — the data path of the RDMA verbs transport: RC QPs, clear-to-send
 * FIFO, data by RDMA WRITE, completion by WRITE_WITH_IMM, flush by RDMA READ;
 * memory registration through plugin/reg.  The connection setup that joins
 * the two comms is ib_conn.c.
 *
 * Protocol (per connection; a sendComm and a recvComm joined by nqps RC QPs),
 * NCCL's IB protocol message for message (docs/ib-vs-nccl.md):
 *  1. Setup (ib_conn.c): each side learns the other's QP numbers/PSNs,
 *     GID/LID, MTU and the address/rkey of the peer's FIFO (receiver) or
 *     completion records (sender); the sender's split choice.
 *  2. irecv of slot id posts one receive on each QP the message will use
 *     (QP id % nqps; every QP when split), then RDMA WRITEs the n
 *     clear-to-send entries (address, rkey, size, tag, n, id+1) into the
 *     sender's FIFO slot id % 32 on QP 0, signaled once per FIFO turn.
 *  3. isend waits (returns a NULL request) until that slot carries id+1
 *     and an unused entry of its tag (else NULL too: NCCL retries), takes
 *     the first such entry, truncates to the posted size, and once all n
 *     sends of the slot are in posts on each QP used one RDMA WRITE per
 *     request (its 128-byte-aligned share when split); the last work
 *     request is a signaled WRITE_WITH_IMM carrying the size: the single
 *     data write itself, or — for a multi-receive (sizes into the
 *     completion record), or with adaptive routing above
 *     NCCL_IB_AR_THRESHOLD (0 bytes) — one of its own.  So a message is
 *     one work request and one completion on each side, as NCCL's.
 *  4. RC delivers each QP in order, so the receiver's request is complete
 *     when the receive of every QP used completed; the sender's when every
 *     signaled write did.
 * Invariants:
 *  - At most GT_IB_SLOTS (= GT_NET_MAX_REQUESTS) slots in flight per comm; a
 *    slot is reused only after NCCL tested all its requests done.
 *  - A work-completion error latches the comm into an error state: every
 *    later call on it returns that error with a message naming the status,
 *    the QP and the peer.  Nothing waits without bound: every call returns.
 *  - The data path makes no system call and takes no lock; it allocates
 *    nothing (all request state is preallocated per comm).
 */
#include <arpa/inet.h>
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/log.h"
#include "plugin/ib/ib_net.h"

/* A comm's first failure latches (WARNed once); every call that returns it
 * describes it again (gt_net.h F1, F4). */
gt_result gt_ib_again(struct ib_comm *c)
{
    return gt_net_fail(c->err, c->fail_reason, c->fail_errno, "%s", c->errmsg);
}

static gt_result failv(struct ib_comm *c, gt_result r, int reason, int err, const char *fmt,
                       va_list ap)
{
    if (c->err == GT_OK) {
        vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
        c->err = r;
        c->fail_reason = reason;
        c->fail_errno = err;
        GT_WARN("%s", c->errmsg);
    }
    return gt_ib_again(c);
}

/* A protocol, verbs-status or internal failure: no errno. */
gt_result gt_ib_fail(struct ib_comm *c, gt_result r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r = failv(c, r, GT_REASON_TRANSPORT_ERROR, 0, fmt, ap);
    va_end(ap);
    return r;
}

/* A system or verbs call failed with errno `e`; a remote error means the
 * peer is gone. */
gt_result gt_ib_fail_errno(struct ib_comm *c, gt_result r, int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r = failv(c, r, r == GT_REMOTE_ERROR ? GT_REASON_PEER_GONE : GT_REASON_TRANSPORT_ERROR, e, fmt,
              ap);
    va_end(ap);
    return r;
}

/* F1 for an argument NCCL never passes. */
gt_result gt_ib_bad_arg(const char *fn)
{
    return gt_net_fail(GT_INVALID_ARGUMENT, GT_REASON_BAD_ARGUMENT, EINVAL,
                       "ib: %s: invalid argument", fn);
}

/* The setup socket stays open as a liveness channel: nothing is ever sent
 * on it after setup, so EOF means the peer process is gone (the kernel closes
 * its sockets when it dies) and bytes mean a peer that is not speaking our
 * protocol.  Checked only on idle paths, at most every 100 ms, so the data
 * path stays free of system calls while anything completes. */
/* A fatal async event of this comm's device, CQ or QPs (gt_ib_async_poll)
 * fails it, naming the port and the event. */
static gt_result check_async(struct ib_comm *c)
{
    struct gt_ib_dev *d = c->dev;
    gt_ib_async_poll(d);
    if (__atomic_load_n(&d->fatal, __ATOMIC_ACQUIRE))
        return gt_ib_fail(c, GT_REMOTE_ERROR,
                          "ib: %s:%d: async fatal event: %s; the connection to %s fails with it",
                          d->name, d->port, gt_ibv.event_type_str(IBV_EVENT_DEVICE_FATAL), c->peer);
    unsigned nq = __atomic_load_n(&d->ndead_qpn, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < nq; i++) {
        int mine = c->flush_qp && c->flush_qp->qp_num == d->dead_qpn[i];
        for (int q = 0; q < c->nqps; q++)
            mine |= c->qps[q] && c->qps[q]->qp_num == d->dead_qpn[i];
        if (mine)
            return gt_ib_fail(c, GT_REMOTE_ERROR,
                              "ib: %s:%d: async fatal event on QP %u: %s; the connection to %s "
                              "fails with it",
                              d->name, d->port, d->dead_qpn[i],
                              gt_ibv.event_type_str((enum ibv_event_type)d->dead_qp_ev[i]),
                              c->peer);
    }
    unsigned ncq = __atomic_load_n(&d->ndead_cq, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < ncq; i++)
        if (d->dead_cq[i] == (const void *)c->cq)
            return gt_ib_fail(c, GT_REMOTE_ERROR,
                              "ib: %s:%d: async fatal event on its CQ: %s; the connection to %s "
                              "fails with it",
                              d->name, d->port, gt_ibv.event_type_str(IBV_EVENT_CQ_ERR), c->peer);
    return GT_OK;
}

static gt_result check_peer(struct ib_comm *c)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    uint64_t ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
    if (ms - c->last_check_ms < 100)
        return GT_OK;
    c->last_check_ms = ms;
    gt_result ar = check_async(c);
    if (ar != GT_OK || c->fd < 0)
        return ar;
    char b;
    ssize_t r = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    if (r == 0)
        return gt_ib_fail_errno(c, GT_REMOTE_ERROR, 0,
                                "ib: %s: peer %s closed its connection with requests "
                                "outstanding (process exited or communicator closed)",
                                c->dev->name, c->peer);
    if (r > 0)
        return gt_ib_fail(c, GT_REMOTE_ERROR,
                          "ib: %s: unexpected bytes from peer %s on the setup socket "
                          "(not a gdrtrace ib peer, or corrupted)",
                          c->dev->name, c->peer);
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return GT_OK;
    int e = errno;
    return gt_ib_fail_errno(c, GT_REMOTE_ERROR, e, "ib: %s: connection to peer %s failed: %s",
                            c->dev->name, c->peer, strerror(e));
}

/* ---- registration ------------------------------------------------------ */

static struct gt_ib_dev *comm_dev(void *comm)
{
    /* ib_comm and ib_listen both start with (kind, dev). */
    struct ib_comm *c = comm;
    return c ? c->dev : NULL;
}

gt_result gt_ib_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                              int fd, void **mhandle, struct gt_reg_report *report)
{
    struct gt_ib_dev *d = comm_dev(comm);
    if (!d)
        return gt_ib_bad_arg(__func__);
    struct gt_mr *m = NULL;
    char err[512];
    struct gt_reg_report mine = {0};
    if (!report)
        report = &mine;
    gt_result r = gt_reg_register(&d->reg, &gt_ib_policy, data, size, type, offset, fd, &m, report,
                                  err, sizeof(err));
    *mhandle = m;
    if (r != GT_OK) /* F5: the policy's reason and errno, in its words */
        gt_net_fail(r, report->reason, report->err, "%s", err);
    return r;
}

gt_result gt_ib_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle,
                       struct gt_reg_report *report)
{
    return gt_ib_reg_mr_dmabuf(comm, data, size, type, 0, -1, mhandle, report);
}

gt_result gt_ib_dereg_mr(void *comm, void *mhandle)
{
    struct gt_ib_dev *d = comm_dev(comm);
    if (!d)
        return gt_ib_bad_arg(__func__);
    if (!mhandle)
        return GT_OK;
    gt_result r = gt_reg_deregister(&d->reg, mhandle);
    if (r != GT_OK)
        gt_net_fail(r, GT_REASON_TRANSPORT_ERROR, 0, "ib: deregMr failed (result %d)", (int)r);
    return r;
}

/* ---- data path --------------------------------------------------------- */

static gt_result wc_error(struct ib_comm *c, const struct ibv_wc *wc)
{
    static const char *const kinds[] = {"?", "send", "recv", "clear-to-send", "flush", "data"};
    int k = WR_KIND(wc->wr_id);
    return gt_ib_fail(c, GT_REMOTE_ERROR,
                      "ib: %s: work completion error '%s' (status %d, vendor_err %#x) "
                      "on QP %u (%s, slot %d) with peer %s",
                      c->dev->name, gt_ibv.wc_status_str(wc->status), (int)wc->status,
                      wc->vendor_err, wc->qp_num, (k >= 0 && k <= 5) ? kinds[k] : "?",
                      WR_SLOT(wc->wr_id), c->peer);
}

static gt_result post_slot(struct ib_comm *c, struct send_slot *s);

/* Polls the CQ and applies completions.  No system call, no lock. */
static gt_result progress(struct ib_comm *c)
{
    if (c->err)
        return gt_ib_again(c);
    struct ibv_wc wc[16];
    for (int round = 0; round < 4; round++) {
        int n = gt_ibv.poll_cq(c->cq, 16, wc);
        if (n < 0)
            return gt_ib_fail(c, GT_SYSTEM_ERROR, "ib: %s: ibv_poll_cq failed (%d)", c->dev->name,
                              n);
        for (int i = 0; i < n; i++) {
            if (wc[i].status != IBV_WC_SUCCESS)
                return wc_error(c, &wc[i]);
            int slot = WR_SLOT(wc[i].wr_id), q = WR_QP(wc[i].wr_id);
            if ((slot >= GT_IB_SLOTS && WR_KIND(wc[i].wr_id) != WR_FLUSH) || q >= GT_IB_MAX_QPS)
                return gt_ib_fail(c, GT_INTERNAL_ERROR, "ib: bad wr_id %#llx",
                                  (unsigned long long)wc[i].wr_id);
            switch (WR_KIND(wc[i].wr_id)) {
            case WR_SEND: {
                struct send_slot *s = &c->ss[slot];
                c->sq_used[q] -= s->wrs[q];
                s->events--;
                break;
            }
            case WR_RECV: {
                struct recv_slot *s = &c->rs[slot];
                c->rq_used[q]--;
                if (wc[i].opcode != IBV_WC_RECV_RDMA_WITH_IMM || !s->busy || s->events <= 0)
                    return gt_ib_fail(c, GT_REMOTE_ERROR,
                                      "ib: %s: protocol error from %s: QP %d slot %d got "
                                      "opcode %d (a receive %s)",
                                      c->dev->name, c->peer, q, slot, (int)wc[i].opcode,
                                      s->busy ? "already complete" : "not posted");
                s->imm = ntohl(wc[i].imm_data);
                s->events--;
                break;
            }
            case WR_CTS: {
                /* Only every GT_IB_SLOTS-th clear-to-send is signaled (as
                 * NCCL's, once per FIFO turn): its completion retires it
                 * and every earlier one on the QP. */
                if (c->cts_sig_head == c->cts_sig_tail)
                    return gt_ib_fail(c, GT_INTERNAL_ERROR,
                                      "ib: %s: clear-to-send completion with none signaled",
                                      c->dev->name);
                uint32_t upto = c->cts_sig[c->cts_sig_head++ % 16];
                c->sq_used[0] = (int)(c->cts_posted - upto);
                break;
            }
            case WR_FLUSH:
                if (slot >= GT_IB_FLUSHES || c->flush[slot].type != REQ_FLUSH)
                    return gt_ib_fail(c, GT_INTERNAL_ERROR, "ib: %s: stray flush completion %d",
                                      c->dev->name, slot);
                c->flush_used--;
                c->flush[slot].done = 1;
                break;
            default:
                return gt_ib_fail(c, GT_INTERNAL_ERROR, "ib: unknown completion %#llx",
                                  (unsigned long long)wc[i].wr_id);
            }
        }
        if (n < 16)
            break;
    }
    /* Slots whose sends are all in but did not fit in the SQ: in order. */
    if (c->kind == COMM_SEND) {
        while (c->next_post != c->seq) {
            struct send_slot *s = &c->ss[c->next_post % GT_IB_SLOTS];
            if (!s->active || s->posted || s->nposted != s->nreqs)
                break;
            gt_result r = post_slot(c, s);
            if (r != GT_OK)
                return r;
            if (!s->posted)
                break;
        }
    }
    return GT_OK;
}

/* The QPs a message goes on, as NCCL picks them: message `id` uses
 * nq = (split ? nqps : 1) QPs, its j-th being (id * nq + j) % nqps — every QP
 * in turn when split, else one QP per message, round-robin. */
static int msg_qps(const struct ib_comm *c, uint32_t id, int j)
{
    int nq = c->split ? c->nqps : 1;
    return (int)(((uint64_t)id * (uint64_t)nq + (uint64_t)j) % (uint64_t)c->nqps);
}

/* One message's share on the j-th of nq QPs: NCCL's chunk, the size over nq
 * rounded up to 128 bytes (what LL and LL128 need), clipped to the size. */
static void msg_share(size_t size, int nq, int j, size_t *off, size_t *len)
{
    size_t share = (size + (size_t)nq - 1) / (size_t)nq;
    share = (share + GT_IB_CHUNK_ALIGN - 1) & ~(size_t)(GT_IB_CHUNK_ALIGN - 1);
    *off = share * (size_t)j;
    *len = *off >= size ? 0 : (size - *off < share ? size - *off : share);
}

/* Whether the slot ends with a WRITE_WITH_IMM of its own (NCCL: for a
 * multi-receive, carrying the sizes into the completion record; with
 * adaptive routing, a 0-byte one after a message over the threshold, so the
 * data, which may arrive out of order, is all in before the completion)
 * rather than the immediate riding on the last data write. */
static int slot_record(const struct send_slot *s)
{
    return s->nreqs > 1 || s->reqs[0].size >= GT_IB_IMM_SEE_RECORD;
}
static int slot_separate_imm(const struct ib_comm *c, const struct send_slot *s)
{
    return slot_record(s) || (c->ar && s->reqs[0].size > c->ar_threshold);
}

/* Work requests of one slot on the j-th of its QPs. */
static int slot_wrs(const struct ib_comm *c, const struct send_slot *s, int j)
{
    int nq = c->split ? c->nqps : 1, n = 0;
    for (int i = 0; i < s->nreqs; i++) {
        size_t off, len;
        msg_share(s->reqs[i].size, nq, j, &off, &len);
        /* NCCL posts one write per request even when it carries nothing */
        n += len <= GT_IB_MAX_WR_BYTES ? 1
                                       : (int)((len + GT_IB_MAX_WR_BYTES - 1) / GT_IB_MAX_WR_BYTES);
    }
    return n + slot_separate_imm(c, s);
}

/* Posts a complete slot's work requests if the SQs have room, as NCCL's
 * protocol: per QP used, one RDMA WRITE per request (the 1 GiB split only
 * past NCCL's largest message), the last work request a signaled
 * WRITE_WITH_IMM whose immediate is the size of a single receive. */
static gt_result post_slot(struct ib_comm *c, struct send_slot *s)
{
    struct ibv_send_wr wrs[GT_IB_MAX_WRS_PER_QP];
    struct ibv_sge sges[GT_IB_MAX_WRS_PER_QP];
    int slot = (int)(s - c->ss);
    int nq = c->split ? c->nqps : 1;
    /* First count, so a slot goes out whole or not at all. */
    for (int j = 0; j < nq; j++) {
        int q = msg_qps(c, s->seq, j), need = slot_wrs(c, s, j);
        if (need > GT_IB_MAX_WRS_PER_QP)
            return gt_ib_fail(c, GT_INVALID_ARGUMENT,
                              "ib: %s: message too large for one slot (%d work requests "
                              "on one QP)",
                              c->dev->name, need);
        if (c->sq_used[q] + need > c->sq_depth)
            return GT_OK; /* retried from progress() */
    }
    int record = slot_record(s), separate = slot_separate_imm(c, s);
    uint32_t imm =
        s->reqs[0].size >= GT_IB_IMM_SEE_RECORD ? GT_IB_IMM_SEE_RECORD : (uint32_t)s->reqs[0].size;
    struct cmpl_rec *rec = &c->ctrl->rec[slot];
    for (int i = 0; i < s->nreqs; i++)
        rec->size[i] = s->reqs[i].size;
    for (int j = 0; j < nq; j++) {
        int q = msg_qps(c, s->seq, j), w = 0;
        for (int i = 0; i < s->nreqs; i++) {
            struct ib_req *r = &s->reqs[i];
            size_t off, len;
            msg_share(r->size, nq, j, &off, &len);
            size_t o = off;
            do {
                size_t l = len - (o - off);
                if (l > GT_IB_MAX_WR_BYTES)
                    l = GT_IB_MAX_WR_BYTES;
                memset(&wrs[w], 0, sizeof(wrs[w]));
                if (l > 0) {
                    sges[w].addr = (uintptr_t)r->data + o;
                    sges[w].length = (uint32_t)l;
                    sges[w].lkey = r->mh->mr->lkey;
                    wrs[w].sg_list = &sges[w];
                    wrs[w].num_sge = 1;
                }
                wrs[w].wr_id = gt_ib_wr_id(WR_DATA, slot, q);
                wrs[w].opcode = IBV_WR_RDMA_WRITE;
                wrs[w].wr.rdma.remote_addr = s->e[r->idx].addr + o;
                wrs[w].wr.rdma.rkey = s->e[r->idx].rkey;
                w++;
                o += l;
            } while (o < off + len);
        }
        if (separate) {
            memset(&wrs[w], 0, sizeof(wrs[w]));
            if (record) { /* the sizes, landing before the completion */
                sges[w].addr = (uintptr_t)rec;
                sges[w].length = (uint32_t)((size_t)s->nreqs * sizeof(rec->size[0]));
                sges[w].lkey = c->ctrl_mr->lkey;
                wrs[w].sg_list = &sges[w];
                wrs[w].num_sge = 1;
            }
            wrs[w].wr.rdma.remote_addr = c->raddr + (uint64_t)slot * sizeof(struct cmpl_rec);
            wrs[w].wr.rdma.rkey = c->rkey;
            w++;
        }
        wrs[w - 1].wr_id = gt_ib_wr_id(WR_SEND, slot, q);
        wrs[w - 1].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        wrs[w - 1].send_flags = IBV_SEND_SIGNALED;
        wrs[w - 1].imm_data = htonl(imm);
        for (int k = 0; k + 1 < w; k++)
            wrs[k].next = &wrs[k + 1];
        struct ibv_send_wr *bad = NULL;
        int rc = gt_ibv.post_send(c->qps[q], &wrs[0], &bad);
        if (rc)
            return gt_ib_fail_errno(c, GT_SYSTEM_ERROR, rc,
                                    "ib: %s: ibv_post_send on QP %u to %s failed: %s (errno %d)",
                                    c->dev->name, c->qps[q]->qp_num, c->peer, strerror(rc), rc);
        s->wrs[q] = w;
        c->sq_used[q] += w;
    }
    s->events = nq;
    s->posted = 1;
    c->next_post++;
    return GT_OK;
}

gt_result gt_ib_isend(void *sc, void *data, size_t size, int tag, void *mhandle, void *phandle,
                      void **request)
{
    (void)phandle;
    struct ib_comm *c = sc;
    *request = NULL;
    if (c->err)
        return gt_ib_again(c);
    int si = (int)(c->seq % GT_IB_SLOTS);
    struct send_slot *s = &c->ss[si];
    volatile struct cts_entry *fe = c->ctrl->fifo[si].e;
    if (fe[0].seq != c->seq + 1) {
        gt_result r = progress(c); /* no clear-to-send yet */
        return r != GT_OK ? r : check_peer(c);
    }
    if (s->active && s->seq != c->seq)
        return progress(c); /* previous use of the slot not yet tested */
    if (!s->active) {
        if (s->ntested != 0 || s->posted)
            return progress(c); /* previous use of the slot not yet tested */
        uint32_t n = fe[0].nreqs;
        if (n < 1 || n > GT_IB_MAX_RECVS)
            return gt_ib_fail(c, GT_REMOTE_ERROR, "ib: %s: clear-to-send from %s has %u entries",
                              c->dev->name, c->peer, n);
        for (uint32_t i = 0; i < n; i++)
            if (fe[i].seq != c->seq + 1)
                return progress(c); /* not all entries landed yet */
        /* The entries are complete; read them after seeing their seq. */
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        memset(s, 0, sizeof(*s));
        for (uint32_t i = 0; i < n; i++) {
            s->e[i].addr = fe[i].addr;
            s->e[i].size = fe[i].size;
            s->e[i].rkey = fe[i].rkey;
            s->e[i].tag = fe[i].tag;
        }
        s->active = 1;
        s->seq = c->seq;
        s->nreqs = (int)n;
    }
    int idx = -1;
    for (int i = 0; i < s->nreqs; i++)
        if (!s->used[i] && s->e[i].tag == tag) {
            idx = i;
            break;
        }
    /* No unused receive of this tag in the head slot: another sender of a
     * shared comm (PXN), or this one's next message, comes first.  As
     * NCCL's IB: success and no request, and NCCL asks again later. */
    if (idx < 0)
        return progress(c);
    /* NCCL truncates a send to the receive the peer posted (the receiver
     * learns the size sent and NCCL's protocol decides what that means). */
    if (size > s->e[idx].size)
        size = (size_t)s->e[idx].size;
    struct gt_mr *mh = mhandle;
    if (size > 0 && (!mh || (uintptr_t)data < mh->base || (uintptr_t)data + size > mh->end))
        return gt_ib_fail(c, GT_INVALID_ARGUMENT,
                          "ib: %s: isend buffer %p+%zu is not inside its memory handle",
                          c->dev->name, data, size);
    struct ib_req *r = &s->reqs[idx];
    memset(r, 0, sizeof(*r));
    r->type = REQ_SEND;
    r->c = c;
    r->slot = si;
    r->idx = idx;
    r->size = size;
    r->data = data;
    r->mh = mh;
    s->used[idx] = 1;
    s->nposted++;
    if (s->nposted == s->nreqs) {
        c->seq++;
        gt_result res = GT_OK;
        if (c->next_post == s->seq)
            res = post_slot(c, s);
        if (res != GT_OK)
            return res;
    }
    *request = r;
    return GT_OK;
}

gt_result gt_ib_irecv(void *rc, int n, void **data, size_t *sizes, int *tags, void **mhandles,
                      void **phandles, void **request)
{
    (void)phandles;
    struct ib_comm *c = rc;
    *request = NULL;
    if (c->err)
        return gt_ib_again(c);
    if (n < 1 || n > GT_IB_MAX_RECVS)
        return gt_ib_fail(c, GT_INVALID_ARGUMENT, "ib: irecv with n=%d (1..%d)", n,
                          GT_IB_MAX_RECVS);
    int si = (int)(c->seq % GT_IB_SLOTS);
    struct recv_slot *s = &c->rs[si];
    if (s->busy || c->sq_used[0] + 1 > c->sq_depth ||
        (si == 0 && c->cts_sig_tail - c->cts_sig_head >= 16)) {
        gt_result r = progress(c);
        return r != GT_OK ? r : check_peer(c);
    }
    /* The receives go on the QPs the sender will use for this message. */
    int nq = c->split ? c->nqps : 1;
    for (int j = 0; j < nq; j++)
        if (c->rq_used[msg_qps(c, c->seq, j)] >= GT_IB_RQ_DEPTH)
            return progress(c);
    for (int i = 0; i < n; i++) {
        struct gt_mr *mh = mhandles ? mhandles[i] : NULL;
        if (sizes[i] > 0 &&
            (!mh || (uintptr_t)data[i] < mh->base || (uintptr_t)data[i] + sizes[i] > mh->end))
            return gt_ib_fail(c, GT_INVALID_ARGUMENT,
                              "ib: %s: irecv buffer %p+%zu is not inside its memory "
                              "handle",
                              c->dev->name, data[i], sizes[i]);
    }
    for (int j = 0; j < nq; j++) {
        int q = msg_qps(c, c->seq, j);
        struct ibv_recv_wr wr, *bad = NULL;
        memset(&wr, 0, sizeof(wr));
        wr.wr_id = gt_ib_wr_id(WR_RECV, si, q);
        int e = gt_ibv.post_recv(c->qps[q], &wr, &bad);
        if (e)
            return gt_ib_fail_errno(c, GT_SYSTEM_ERROR, e,
                                    "ib: %s: ibv_post_recv on QP %u failed: %s (errno %d)",
                                    c->dev->name, c->qps[q]->qp_num, strerror(e), e);
        c->rq_used[q]++;
    }
    struct cts_slot *cts = &c->ctrl->cts[si];
    for (int i = 0; i < n; i++) {
        struct gt_mr *mh = mhandles ? mhandles[i] : NULL;
        cts->e[i].addr = (uintptr_t)data[i];
        cts->e[i].size = sizes[i];
        cts->e[i].rkey = mh ? mh->mr->rkey : 0;
        cts->e[i].tag = tags ? tags[i] : 0;
        cts->e[i].nreqs = (uint32_t)n;
        cts->e[i].seq = c->seq + 1;
        s->posted_size[i] = sizes[i];
    }
    struct ibv_sge sge = {.addr = (uintptr_t)cts,
                          .length = (uint32_t)(n * sizeof(struct cts_entry)),
                          .lkey = c->ctrl_mr->lkey};
    struct ibv_send_wr wr, *bad = NULL;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = gt_ib_wr_id(WR_CTS, si, 0);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    /* Signaled once per FIFO turn, as NCCL's (slot 0 on its one device):
     * enough to keep the send queue draining. */
    wr.send_flags = si == 0 ? IBV_SEND_SIGNALED : 0;
    wr.wr.rdma.remote_addr = c->raddr + (uint64_t)si * sizeof(struct cts_slot);
    wr.wr.rdma.rkey = c->rkey;
    int e = gt_ibv.post_send(c->qps[0], &wr, &bad);
    if (e)
        return gt_ib_fail(c, GT_SYSTEM_ERROR,
                          "ib: %s: posting clear-to-send on QP %u to %s failed: %s", c->dev->name,
                          c->qps[0]->qp_num, c->peer, strerror(e));
    c->sq_used[0]++;
    c->cts_posted++;
    if (si == 0)
        c->cts_sig[c->cts_sig_tail++ % 16] = c->cts_posted;
    s->busy = 1;
    s->seq = c->seq;
    s->n = n;
    s->events = nq;
    memset(&s->req, 0, sizeof(s->req));
    s->req.type = REQ_RECV;
    s->req.c = c;
    s->req.slot = si;
    c->seq++;
    *request = &s->req;
    return GT_OK;
}

gt_result gt_ib_iflush(void *rc, int n, void **data, int *sizes, void **mhandles, void **request)
{
    struct ib_comm *c = rc;
    *request = NULL;
    if (c->err)
        return gt_ib_again(c);
    int last = -1;
    for (int i = 0; i < n; i++) {
        struct gt_mr *mh = mhandles ? mhandles[i] : NULL;
        if (sizes[i] > 0 && mh && mh->gpu)
            last = i;
    }
    if (last < 0 || gt_ib_params.flush_disable) {
        /* Host memory only, or NCCL_GDR_FLUSH_DISABLE: nothing to flush, a
         * request that is done (NCCL's own answer is no request at all,
         * which NCCL reads the same way). */
        c->noop.type = REQ_DONE;
        c->noop.c = c;
        *request = &c->noop;
        return GT_OK;
    }
    if (!c->flush_qp) /* made at accept; only a receive comm has one */
        return gt_ib_fail(c, GT_INTERNAL_ERROR, "ib: %s: iflush on a comm without a flush QP",
                          c->dev->name);
    /* A free request: one NCCL has not tested done yet is never reused, and
     * never is a NULL request returned for a flush, since NCCL reads NULL
     * as "nothing to flush" and would skip it. */
    int fi = -1;
    for (int k = 0; k < GT_IB_FLUSHES; k++) {
        int i = (int)((c->flush_next + (uint32_t)k) % GT_IB_FLUSHES);
        if (c->flush[i].type != REQ_FLUSH) {
            fi = i;
            break;
        }
    }
    if (fi < 0)
        return gt_ib_fail(c, GT_INTERNAL_ERROR,
                          "ib: %s: %d flushes outstanding that were never tested done",
                          c->dev->name, GT_IB_FLUSHES);
    struct ib_req *fr = &c->flush[fi];
    struct gt_mr *mh = mhandles[last];
    struct ibv_sge sge = {
        .addr = (uintptr_t)c->ctrl->flush_dst, .length = 1, .lkey = c->ctrl_mr->lkey};
    struct ibv_send_wr wr, *bad = NULL;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = gt_ib_wr_id(WR_FLUSH, fi, 0);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = (uintptr_t)data[last];
    wr.wr.rdma.rkey = mh->mr->rkey;
    int e = gt_ibv.post_send(c->flush_qp, &wr, &bad);
    if (e)
        return gt_ib_fail_errno(c, GT_SYSTEM_ERROR, e, "ib: %s: posting the flush READ: %s",
                                c->dev->name, strerror(e));
    memset(fr, 0, sizeof(*fr));
    fr->type = REQ_FLUSH;
    fr->c = c;
    fr->slot = fi;
    c->flush_used++;
    c->flush_next = (uint32_t)fi + 1;
    *request = fr;
    return GT_OK;
}

gt_result gt_ib_test(void *request, int *done, int *sizes)
{
    struct ib_req *r = request;
    *done = 0;
    if (!r)
        return gt_ib_bad_arg(__func__);
    struct ib_comm *c = r->c;
    if (r->type == REQ_DONE) {
        *done = 1;
        return GT_OK;
    }
    gt_result res = progress(c);
    if (res != GT_OK)
        return res;
    switch (r->type) {
    case REQ_SEND: {
        struct send_slot *s = &c->ss[r->slot];
        if (!s->posted || s->events > 0)
            return check_peer(c);
        *done = 1;
        if (sizes)
            sizes[0] = (int)(r->size > 0x7fffffff ? 0x7fffffff : r->size);
        r->type = 0;
        if (++s->ntested == s->nreqs)
            memset(s, 0, sizeof(*s)); /* the slot is free again */
        return GT_OK;
    }
    case REQ_RECV: {
        struct recv_slot *s = &c->rs[r->slot];
        if (s->events > 0)
            return check_peer(c);
        /* A single receive's size is the immediate (as NCCL's); a
         * multi-receive's, or one too large for it, the completion record
         * the same WRITE_WITH_IMM carried. */
        volatile struct cmpl_rec *rec = &c->ctrl->cmpl[r->slot];
        int from_rec = s->n > 1 || s->imm == GT_IB_IMM_SEE_RECORD;
        for (int i = 0; i < s->n; i++) {
            uint64_t got = from_rec ? rec->size[i] : s->imm;
            if (got > s->posted_size[i])
                return gt_ib_fail(c, GT_REMOTE_ERROR,
                                  "ib: %s: peer %s reports %llu bytes for a %zu-byte "
                                  "receive",
                                  c->dev->name, c->peer, (unsigned long long)got,
                                  s->posted_size[i]);
            if (sizes)
                sizes[i] = (int)(got > 0x7fffffff ? 0x7fffffff : got);
        }
        *done = 1;
        r->type = 0;
        s->busy = 0;
        return GT_OK;
    }
    case REQ_FLUSH:
        if (r->done) {
            *done = 1;
            r->type = 0;
        }
        return GT_OK;
    default:
        return gt_ib_fail(c, GT_INTERNAL_ERROR, "ib: test() on a finished request %p", request);
    }
}

/* Device offload (netDeviceType UNPACK) is not implemented: we advertise
 * NCCL_NET_DEVICE_HOST, so NCCL never calls these two. */
gt_result gt_ib_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle)
{
    (void)comm, (void)mhandle;
    *dptr_mhandle = NULL;
    return gt_net_fail(GT_INTERNAL_ERROR, GT_REASON_BAD_ARGUMENT, 0,
                       "ib: getDeviceMr: no device offload (netDeviceType HOST)");
}

gt_result gt_ib_irecv_consumed(void *recv_comm, int n, void *request)
{
    (void)recv_comm, (void)n, (void)request;
    return gt_net_fail(GT_INTERNAL_ERROR, GT_REASON_BAD_ARGUMENT, 0,
                       "ib: irecvConsumed: no device offload (netDeviceType HOST)");
}

/* NCCL's per-communicator network attributes are hints; we take none. */
gt_result gt_ib_set_net_attr(void *ctx, void *net_attr)
{
    (void)ctx, (void)net_attr;
    return GT_OK;
}
