/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock_data.c — the sock transport's data path: request pools, the queue of
 * payloads on the stream, progress (payload send()/sendmsg()/recv()), and
 * the isend/irecv/iflush/test entry points.
 *
 * Invariants:
 *  1a. The sender writes no control byte that follows a queued payload's
 *     header before that payload (each work records the stream position it
 *     starts at, `mark`); the receiver, having parsed such a header, takes
 *     what of the payload it already buffered and reads the rest straight
 *     from the socket before it parses anything else (sock_ctrl.c).
 *  1b. (sender) A header and its payload leave in one sendmsg(): one
 *     syscall, and the header rides in the payload's first segment.
 *  4. No allocation, lock or blocking call on the data path: request pools
 *     and queues are allocated at connect/accept; the socket is
 *     non-blocking and all progress happens inside isend/irecv/test.
 *  4a. Progress scope: a test() moves bytes, in stream order, only until the
 *     request tested has completed (a sendmsg() that completes it ends the
 *     call), and an isend sends nothing, so each header leaves with its
 *     payload (1b), as NCCL's Socket does.  So NCCL hears of each completion
 *     before later messages are moved, which is what lets its GPU kernel
 *     reuse the slot.
 *  4b. A send completes only when its payload *and* its header (with any
 *     inline body) have left our buffers for the kernel's: after the last
 *     send's test() says done NCCL may never call us on that comm again, so
 *     nothing of it may be left behind.
 *  4c. A payload send() or recv() that moved fewer bytes than asked is
 *     repeated until it would block or the payload is done, as NCCL's
 *     Socket does: what arrived (or drained) while the kernel copied is
 *     taken in this call, not one proxy loop later.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "common/log.h"
#include "plugin/sock/sock_internal.h"

#define SINK_BYTES 16384 /* a truncated eager payload is read into this and dropped */

/* ---- requests ----------------------------------------------------------- */

static struct sock_req *req_get(struct sock_comm *c, int kind)
{
    if (c->nfree == 0)
        return NULL;
    struct sock_req *r = &c->reqs[c->freelist[--c->nfree]];
    memset(r, 0, sizeof(*r));
    r->comm = c;
    r->kind = kind;
    return r;
}

static void req_put(struct sock_req *r)
{
    struct sock_comm *c = r->comm;
    r->kind = REQ_FREE;
    c->freelist[c->nfree++] = (int)(r - c->reqs);
}

void gt_sock_req_finished(struct sock_req *r)
{
    r->state = 2;
    r->busy = 0;
    if (r->abandoned)
        req_put(r);
}

/* ---- the payload queue (invariant 1a) ----------------------------------- */

void gt_sock_enqueue_payload(struct sock_comm *c, struct sock_req *r, size_t size)
{
    /* The payload starts after everything not yet sent: the out buffer and
     * the payloads queued before it. */
    uint64_t mark = c->out_sent + (c->out_len - c->out_off);
    for (unsigned k = 0; k < c->wq_count; k++) {
        const struct sock_work *q = &c->wq[(c->wq_head + k) % WQ_CAP];
        mark += q->len - q->done;
    }
    struct sock_work *w = &c->wq[(c->wq_head + c->wq_count) % WQ_CAP];
    *w = (struct sock_work){.req = r, .len = size, .done = 0, .mark = mark};
    r->busy = 1;
    c->wq_count++;
}

/* Done from the wire's side: every payload byte handed to the kernel and,
 * for a send, its header (and inline body) too.  A send whose header still
 * waits in the out buffer is not done: NCCL may never call us on this comm
 * again, and the receiver would wait for that header forever (4b). */
static int req_complete(const struct sock_comm *c, const struct sock_req *q)
{
    /* What has left `out` is what was ever queued there less what waits. */
    uint64_t flushed = c->out_added - (c->out_len - c->out_off);
    return !q->busy && (q->kind != REQ_SEND || flushed >= q->out_end);
}

/* The tested request has completed: nothing more to move this call (4a). */
int gt_sock_reached(const struct sock_comm *c)
{
    return c->until && req_complete(c, c->until);
}

/* Accounts n bytes moved for the oldest payload; 1 when it completed. */
int gt_sock_work_moved(struct sock_comm *c, size_t n)
{
    struct sock_work *w = &c->wq[c->wq_head];
    w->done += n;
    if (w->done < w->len)
        return 0;
    gt_sock_req_finished(w->req);
    c->wq_head = (c->wq_head + 1) % WQ_CAP;
    c->wq_count--;
    return 1;
}

/* ---- payloads ----------------------------------------------------------- */

gt_result gt_sock_move_data(struct sock_comm *c)
{
    int sending = c->kind == COMM_SEND;
    while (c->wq_count) {
        struct sock_work *w = &c->wq[c->wq_head];
        struct sock_req *q = w->req;
        /* Invariant 1a: its header (and all before it) must be out first. */
        if (sending && w->mark + w->done != c->out_sent)
            break;
        char sink[SINK_BYTES];
        char *p = (char *)q->data + w->done;
        size_t want = w->len - w->done;
        if (q->discard) {
            p = sink;
            if (want > sizeof(sink))
                want = sizeof(sink);
        }
        ssize_t n = sending ? send(c->fd, p, want, MSG_DONTWAIT | MSG_NOSIGNAL)
                            : recv(c->fd, p, want, MSG_DONTWAIT);
        c->st.io_calls++;
        if (n > 0) {
            c->st.io_bytes += (uint64_t)n;
            if (sending)
                c->out_sent += (uint64_t)n;
            if (gt_sock_work_moved(c, (size_t)n) && gt_sock_reached(c))
                return GT_OK;
            /* Invariant 4c: ask again until it would block (a receiver
             * reading a truncated payload into the sink too). */
            continue;
        }
        if (n == 0 && !sending)
            return gt_sock_fail_gone(
                c,
                "peer closed the connection mid-message (%zu of %zu bytes of a "
                "%zu-byte message received)",
                w->done, q->got, q->got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            c->st.would_block++;
            break;
        }
        int e = n < 0 ? errno : EIO;
        return gt_sock_fail_errno(c, e, "%s of a payload: %s", sending ? "send" : "recv",
                                  strerror(e));
    }
    return GT_OK;
}

/* Sender: when the oldest queued payload has not started and what precedes
 * it in the stream is all in the out buffer, send both with one sendmsg()
 * (invariant 1b): one syscall, and the header rides in the payload's first
 * segment instead of a 24-byte segment of its own. */
static gt_result send_fused(struct sock_comm *c)
{
    if (!c->wq_count)
        return GT_OK;
    struct sock_work *w = &c->wq[c->wq_head];
    if (w->done || w->mark <= c->out_sent || w->mark - c->out_sent > c->out_len - c->out_off)
        return GT_OK; /* under way, or not next: gt_sock_flush_out/gt_sock_move_data go on */
    size_t lead = (size_t)(w->mark - c->out_sent);
    struct iovec iov[2] = {{.iov_base = c->out + c->out_off, .iov_len = lead},
                           {.iov_base = w->req->data, .iov_len = w->len}};
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
    ssize_t n;
    do
        n = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    c->st.io_calls++;
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            c->st.would_block++;
            return GT_OK;
        }
        int e = errno;
        return gt_sock_fail_errno(c, e, "send on control socket: %s", strerror(e));
    }
    size_t hdr_part = (size_t)n < lead ? (size_t)n : lead;
    c->out_off += hdr_part;
    c->out_sent += (uint64_t)n;
    if (c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    if ((size_t)n > lead) {
        c->st.io_bytes += (uint64_t)n - lead;
        gt_sock_work_moved(c, (size_t)n - lead);
    }
    return GT_OK;
}

/* Sender: header and payload bytes take turns on one socket (invariant 1a),
 * so send until neither moves. */
static gt_result pump_ctrl(struct sock_comm *c)
{
    for (;;) {
        uint64_t before = c->out_sent;
        gt_result r = send_fused(c);
        /* A fused sendmsg() may complete the tested send by itself: then
         * the next header and payload wait for their own test() (4a), and
         * leave together from there (1b). */
        if (r == GT_OK && !gt_sock_reached(c))
            r = gt_sock_flush_out(c);
        if (r == GT_OK && !gt_sock_reached(c))
            r = gt_sock_move_data(c);
        if (r != GT_OK || c->out_sent == before || gt_sock_reached(c))
            return r;
    }
}

static gt_result progress(struct sock_comm *c)
{
    if (c->err)
        return gt_sock_again(c);
    c->st.progress++;
    if (c->kind == COMM_SEND)
        return pump_ctrl(c);
    gt_result r = gt_sock_flush_out(c);
    /* Only read the socket when something is expected there: the sender
     * reads CTS in isend(), where it needs them; the receiver while a posted
     * receive waits for its header.  Each skipped recv() is one syscall less
     * per test() spin, which matters when cores are scarce. */
    if (r == GT_OK && c->await_hdr > 0)
        r = gt_sock_read_ctrl(c);
    /* gt_sock_read_ctrl has just moved the payloads (invariant 1a) until it would
     * block; trying again now would only be a second failing recv() per
     * test() spin, twice NCCL's Socket's.  With no header awaited, a payload
     * may still be under way. */
    else if (r == GT_OK)
        r = gt_sock_move_data(c);
    if (r == GT_OK)
        r = gt_sock_flush_out(c);
    if (r == GT_OK && c->eof && c->await_hdr > 0) {
        /* A receive still waiting for its header can never complete now. */
        for (int i = 0; i < c->nreqs; i++) {
            struct sock_req *q = &c->reqs[i];
            if (q->kind == REQ_RECV && q->state == 0)
                return gt_sock_fail_gone(c,
                                         "peer closed the connection with a receive (tag %d) "
                                         "still pending",
                                         q->tag);
        }
    }
    return r;
}

/* ---- data path ------------------------------------------------------------ */

gt_result gt_sock_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
                        void *phandle, void **request)
{
    (void)mhandle;
    (void)phandle;
    struct sock_comm *c = send_comm;
    if (!c || !request || c->kind != COMM_SEND || (size && !data))
        return gt_sock_bad_arg(__func__);
    *request = NULL;
    if (size > MAX_MSG) {
        GT_WARN("sock: isend of %zu bytes exceeds maxP2pBytes %zu", size, MAX_MSG);
        return gt_sock_bad_arg(__func__);
    }
    /* No flush here: queued headers leave with their payloads from test()
     * (invariants 1b, 4a).  Flushing would send the previous message's
     * header alone whenever NCCL posts ahead of its tests: a syscall and a
     * small segment more per message. */
    int e = -1;
    if (!c->eager_sent && (e = gt_sock_cts_match(c, tag)) < 0) {
        gt_result r = gt_sock_read_ctrl(c);
        if (r != GT_OK)
            return r;
        e = gt_sock_cts_match(c, tag);
    }
    int eager = c->eager_sent || (e < 0 && c->eager_ok);
    if (!eager && e < 0) {
        if (c->eof)
            return gt_sock_fail_gone(
                c,
                "peer closed the connection; isend (tag %d, %zu bytes) can never "
                "be received",
                tag, size);
        return GT_OK; /* receiver has not posted it yet: NULL request, NCCL retries */
    }
    int trunc = !eager && size > c->cts[e].size;
    size_t inl = (!trunc && size <= INLINE_MAX) ? size : 0;
    if (!gt_sock_out_room(c, sizeof(struct wire_hdr) + inl))
        return GT_OK;
    struct sock_req *q = req_get(c, REQ_SEND);
    if (!q)
        return GT_OK; /* pool full: NULL request */
    q->data = data;
    q->size = size;
    q->tag = tag;
    struct wire_hdr h = {.type = W_DATA,
                         .slot = eager ? 0 : c->cts[e].slot,
                         .flags = eager   ? W_FLAG_EAGER
                                  : trunc ? W_FLAG_TRUNC
                                          : 0,
                         .size = size,
                         .tag = tag};
    memcpy(c->out + c->out_len, &h, sizeof(h));
    c->out_len += sizeof(h);
    c->out_added += sizeof(h) + inl;
    q->out_end = c->out_added;
    if (trunc) {
        GT_WARN("sock: isend of %zu bytes (tag %d) to %s exceeds the receiver's posted buffer "
                "of %llu bytes: truncation refused",
                size, tag, c->peer, (unsigned long long)c->cts[e].size);
        q->err = GT_INVALID_USAGE;
    } else if (size <= INLINE_MAX) {
        if (inl)
            memcpy(c->out + c->out_len, data, inl);
        c->out_len += inl;
    } else {
        gt_sock_enqueue_payload(c, q, size);
    }
    c->st.msgs++;
    c->st.bytes += size;
    c->st.eager += eager;
    if (eager) {
        c->eager_sent = 1;
        c->ncts = 0; /* invariant 2a: no CTS is used again */
    } else {
        memmove(&c->cts[e], &c->cts[e + 1], (size_t)(c->ncts - e - 1) * sizeof(c->cts[0]));
        c->ncts--;
    }
    *request = q;
    return GT_OK; /* as NCCL's Socket: the bytes move in test() (4a) */
}

gt_result gt_sock_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
                        void **mhandles, void **phandles, void **request)
{
    (void)mhandles;
    (void)phandles;
    struct sock_comm *c = recv_comm;
    if (!c || !request || c->kind != COMM_RECV || !data || !sizes || !tags)
        return gt_sock_bad_arg(__func__);
    /* GT_NET_OPTIONAL_RECV_COMPLETION: NCCL (LL/LL128, n == 1) pre-sets
     * *request to 0x1 to say it does not need to learn when the data landed
     * (the data carries its own flags), so a transport whose NIC writes the
     * buffer by itself may complete the request early.  Here the bytes are
     * moved by recv() inside test(): completing early could let NCCL stop
     * calling test() with data still in the socket, so the hint is recorded
     * and the request completes when the data is in the buffer, as always.
     * NCCL still test()s the request it gets back, so whatever happens
     * *request must not keep the 0x1 marker. */
    int optional = *request == (void *)(uintptr_t)GT_NET_OPTIONAL_RECV_COMPLETION;
    *request = NULL;
    if (n != 1) {
        GT_WARN("sock: irecv with n=%d sub-receives (sock offers maxRecvs 1: single receives, "
                "what lets sends go out eagerly)",
                n);
        return gt_sock_bad_arg(__func__);
    }
    if (sizes[0] > MAX_MSG || (sizes[0] && !data[0])) {
        GT_WARN("sock: irecv: %zu bytes at %p invalid (maxP2pBytes %zu)", sizes[0], data[0],
                MAX_MSG);
        return gt_sock_bad_arg(__func__);
    }
    if (c->err)
        return gt_sock_again(c);
    /* An eager sender's messages may still be buffered here after its close. */
    if (c->eof && c->in_len < sizeof(struct wire_hdr))
        return gt_sock_fail_gone(c, "peer closed the connection; irecv (tag %d) can never complete",
                                 tags[0]);
    /* Until the sender is known eager, read what it sent first: its first
     * eager DATA ends the CTS (invariant 2a), so a sender that finished
     * and closed is not written to (invariant 6). */
    if (!c->peer_eager && !c->peer_shut && !c->eof) {
        gt_result r = gt_sock_read_ctrl(c);
        if (r != GT_OK)
            return r;
    }
    int cts = !c->peer_eager && !c->peer_shut; /* an eager sender needs no CTS (2a) */
    size_t need = sizeof(struct wire_hdr) + sizeof(struct wire_cts_ent);
    if (cts && !gt_sock_out_room(c, need))
        return GT_OK;
    struct sock_req *q = req_get(c, REQ_RECV);
    if (!q)
        return GT_OK; /* pool full: NULL request */
    q->busy = 1;
    q->optional = optional;
    q->seq = c->post_seq++;
    q->data = data[0];
    q->size = sizes[0];
    q->tag = tags[0];
    c->await_hdr++;
    *request = q;
    if (!cts)
        return GT_OK;
    struct wire_hdr h = {
        .type = W_CTS, .sub = 1, .slot = (uint16_t)(q - c->reqs), .flags = W_FLAG_EAGER_OK};
    struct wire_cts_ent ce = {.tag = tags[0], .size = sizes[0]};
    memcpy(c->out + c->out_len, &h, sizeof(h));
    memcpy(c->out + c->out_len + sizeof(h), &ce, sizeof(ce));
    c->out_len += sizeof(h) + sizeof(ce);
    return gt_sock_flush_out(c);
}

gt_result gt_sock_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
                         void **request)
{
    (void)n;
    (void)data;
    (void)sizes;
    (void)mhandles;
    struct sock_comm *c = recv_comm;
    if (!c || !request || c->kind != COMM_RECV)
        return gt_sock_bad_arg(__func__);
    /* Host memory written by recv() is already visible to the CPU: nothing
     * to flush, the request completes on its first test(). */
    *request = req_get(c, REQ_FLUSH);
    return GT_OK;
}

gt_result gt_sock_test(void *request, int *done, int *sizes)
{
    struct sock_req *q = request;
    if (done)
        *done = 0;
    if (!q || (uintptr_t)q == GT_NET_OPTIONAL_RECV_COMPLETION || !done) {
        GT_WARN("sock: test(%p) is not a request", request);
        return gt_sock_bad_arg(__func__);
    }
    struct sock_comm *c = q->comm;
    if (q->kind == REQ_FLUSH) {
        *done = 1;
        req_put(q);
        return GT_OK;
    }
    if (q->kind == REQ_FREE || q->abandoned) {
        return SOCK_FAIL(GT_INVALID_USAGE, GT_REASON_BAD_ARGUMENT, 0,
                         "sock: test(%p) on a request that is no longer in flight", request);
    }
    c->until = q; /* invariant 4a */
    gt_result r = progress(c);
    c->until = NULL;
    if (q->err) {
        gt_result e = q->err;
        /* The comm's failure (F4), or this message's: a truncation refused. */
        if (c->err)
            gt_sock_again(c);
        else
            gt_net_fail(e, GT_REASON_BAD_ARGUMENT, EMSGSIZE,
                        "sock: message larger than the receive posted for it: truncation "
                        "refused");
        /* Free now if nothing will touch it again; else when its bytes end. */
        if (!q->busy)
            req_put(q);
        else
            q->abandoned = 1;
        return e;
    }
    if (r != GT_OK)
        return r;
    if (!req_complete(c, q))
        return GT_OK;
    *done = 1;
    if (sizes)
        sizes[0] = (int)(q->kind == REQ_RECV ? q->got : q->size);
    req_put(q);
    return GT_OK;
}
