/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock_ctrl.c — the sock transport's control stream: the out buffer of
 * headers (and inline bodies) and its flush, the CTS a receiver posts and
 * the sender matches, and the parsing of what arrives (CTS on a sender,
 * DATA headers on a receiver) into the requests they belong to.
 *
 * Invariants:
 *  1b. (receiver) Large payloads never pass through the control buffer:
 *     once a payload was larger than INLINE_MAX the stream is read only up
 *     to the end of the next message (its header, or header and inline
 *     body), so the next payload lands straight in its buffer; an inline
 *     message switches back to filling the buffer (many small messages per
 *     recv()).
 *  2. The sender matches an isend to the oldest CTS with that tag; per-tag
 *     order is FIFO on both ends, so this is the receive NCCL meant.  No CTS
 *     and no single-receive promise yet -> isend returns a NULL request.
 *  2a. Eager: once the sender has sent one eager DATA it never uses a CTS
 *     again (it drops them), so the k-th message of a tag always belongs to
 *     the k-th receive of that tag.  The receiver matches every DATA that
 *     way (oldest posted receive with that tag; a DATA sent against a CTS
 *     must name that same slot); a DATA with no such receive yet stops the
 *     stream where it is (it and its payload wait in the socket) until one
 *     is posted.  That cannot deadlock because receives are single: the one
 *     it waits for is the one NCCL posts next for that tag, which depends on
 *     nothing behind it in the stream.
 *  3. Everything read from the network is validated before use (type, slot,
 *     sub, tag, size, n); a violation fails the comm with GT_REMOTE_ERROR
 *     and a WARN naming the peer.
 *  5. Truncation (message larger than the posted buffer): a sender that
 *     matched a CTS sees it there and sends a DATA header with FLAG_TRUNC
 *     and no payload: both requests fail from test().  An eager sender
 *     cannot know; the receiver reads the payload into a sink and fails the
 *     receive (the send completes, as with NCCL's Socket).  Either way the
 *     stream stays in sync and the comm stays usable.
 *  6. (receiver) A sender may close once its sends completed, before this
 *     side posted the matching receives (NCCL's proxies finish at their own
 *     pace; an eager sender's messages wait in our socket).  So the
 *     receiver writes to it as little as it can: no CTS once a DATA other
 *     than a flagged truncation arrived (the sender has the single-receive
 *     promise and goes eager when it finds no CTS), and irecv reads what
 *     arrived before deciding.
 *     A CTS the closed sender refuses (EPIPE, or the reset its closed
 *     socket answers with) is dropped and no more are written; a reset read
 *     after the buffered messages is the end of the stream, as EOF.  A
 *     receive fails only when the stream ended without its message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/log.h"
#include "plugin/sock/sock_internal.h"

/* ---- control stream ----------------------------------------------------- */

gt_result gt_sock_flush_out(struct sock_comm *c)
{
    while (c->out_off < c->out_len) {
        size_t lim = c->out_len - c->out_off;
        if (c->kind == COMM_SEND && c->wq_count) {
            /* Invariant 1a: nothing past the oldest queued payload's start. */
            uint64_t mark = c->wq[c->wq_head].mark;
            if (mark <= c->out_sent)
                break;
            if (mark - c->out_sent < lim)
                lim = (size_t)(mark - c->out_sent);
        }
        ssize_t n = send(c->fd, c->out + c->out_off, lim, MSG_DONTWAIT | MSG_NOSIGNAL);
        c->st.ctrl_writes++;
        if (n > 0) {
            c->out_off += (size_t)n;
            c->out_sent += (uint64_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        int e = errno;
        if (c->kind == COMM_RECV && (e == EPIPE || e == ECONNRESET)) {
            c->peer_shut = 1; /* invariant 6: only CTS were due */
            c->out_off = c->out_len;
            break;
        }
        return gt_sock_fail_errno(c, e, "send on control socket: %s", strerror(e));
    }
    if (c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    return GT_OK;
}

int gt_sock_out_room(struct sock_comm *c, size_t need)
{
    if (OUT_CAP - c->out_len >= need)
        return 1;
    if (c->out_off > 0) {
        memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
        c->out_len -= c->out_off;
        c->out_off = 0;
    }
    return OUT_CAP - c->out_len >= need;
}

/* Invariant 2: the oldest CTS with this tag, or -1. */
int gt_sock_cts_match(const struct sock_comm *c, int tag)
{
    for (int i = 0; i < c->ncts; i++)
        if (c->cts[i].tag == tag)
            return i;
    return -1;
}

static gt_result handle_cts(struct sock_comm *c, const struct wire_hdr *h, const uint8_t *body)
{
    if (c->kind != COMM_SEND)
        return gt_sock_fail(c, GT_REMOTE_ERROR, "peer sent a CTS to a receiver (protocol error)");
    if (!(h->flags & W_FLAG_EAGER_OK))
        return gt_sock_fail(c, GT_REMOTE_ERROR,
                            "peer's CTS does not promise single receives (a peer that allows "
                            "grouped receives; protocol error)");
    c->eager_ok = 1;
    if (c->eager_sent)
        return GT_OK; /* invariant 2a: matched by order on the receiver, not by CTS */
    if (c->ncts >= RECV_POOL)
        return gt_sock_fail(c, GT_REMOTE_ERROR, "peer announced more than %d receives in flight",
                            RECV_POOL);
    if (h->slot >= RECV_POOL)
        return gt_sock_fail(c, GT_REMOTE_ERROR, "peer CTS slot %u out of range", h->slot);
    struct wire_cts_ent ce;
    memcpy(&ce, body, sizeof(ce));
    if (ce.size > MAX_MSG)
        return gt_sock_fail(c, GT_REMOTE_ERROR, "peer CTS size %llu exceeds %zu",
                            (unsigned long long)ce.size, MAX_MSG);
    c->cts[c->ncts++] = (struct cts_ent){.slot = h->slot, .tag = ce.tag, .size = ce.size};
    return GT_OK;
}

/* Invariant 2a: the receiver's match for a DATA of this tag. */
static struct sock_req *eager_match(struct sock_comm *c, int tag)
{
    struct sock_req *best = NULL;
    for (int i = 0; i < c->nreqs; i++) {
        struct sock_req *q = &c->reqs[i];
        if (q->kind == REQ_RECV && q->state == 0 && q->tag == tag && (!best || q->seq < best->seq))
            best = q;
    }
    return best;
}

/* Returns GT_OK with c->stalled set when the DATA must wait for its receive. */
static gt_result handle_data(struct sock_comm *c, const struct wire_hdr *h, const uint8_t *body)
{
    if (c->kind != COMM_RECV)
        return gt_sock_fail(c, GT_REMOTE_ERROR, "peer sent DATA to a sender (protocol error)");
    int eager = (h->flags & W_FLAG_EAGER) != 0;
    struct sock_req *r = eager_match(c, h->tag);
    if (!r) {
        c->stalled = 1;
        c->st.stalls++;
        return GT_OK;
    }
    if (!eager && (h->slot != (size_t)(r - c->reqs) || h->sub != 0))
        return gt_sock_fail(c, GT_REMOTE_ERROR,
                            "peer DATA (tag %d) names slot %u sub %u, but the receive it "
                            "belongs to is slot %td",
                            h->tag, h->slot, h->sub, r - c->reqs);
    /* A DATA means the sender read a CTS's single-receive promise: it
     * needs no more CTS and goes eager when it finds none (invariant 6).
     * After a flagged truncation CTS go on, so the next one is flagged too
     * (invariant 5). */
    if (eager || !(h->flags & W_FLAG_TRUNC))
        c->peer_eager = 1;
    c->await_hdr--;
    c->st.msgs++;
    c->st.eager += eager;
    c->st.bytes += h->size;
    if (h->size > MAX_MSG)
        return gt_sock_fail(c, GT_REMOTE_ERROR, "peer DATA size %llu exceeds %zu",
                            (unsigned long long)h->size, MAX_MSG);
    r->got = h->size;
    int trunc = (h->flags & W_FLAG_TRUNC) != 0;
    c->exact_ctrl = !trunc && h->size > INLINE_MAX; /* invariant 1b */
    if (!trunc && h->size > r->size && !eager)
        return gt_sock_fail(c, GT_REMOTE_ERROR,
                            "peer sent %llu bytes (tag %d) into a %zu-byte receive without "
                            "flagging truncation",
                            (unsigned long long)h->size, h->tag, r->size);
    if (trunc || h->size > r->size) {
        GT_WARN("sock: message of %llu bytes (tag %d) from %s exceeds the posted receive "
                "buffer of %zu bytes: truncation refused",
                (unsigned long long)h->size, h->tag, c->peer, r->size);
        if (!r->err)
            r->err = GT_INVALID_USAGE;
        if (trunc || h->size <= INLINE_MAX) {
            gt_sock_req_finished(r); /* no payload, or inline and skipped with the header */
            return GT_OK;
        }
        r->discard = 1; /* eager: the payload is on its way and must be read */
    } else if (h->size <= INLINE_MAX) {
        if (h->size)
            memcpy(r->data, body, h->size);
        gt_sock_req_finished(r);
        return GT_OK;
    }
    r->state = 1;
    gt_sock_enqueue_payload(c, r, h->size);
    return GT_OK;
}

/* Bytes that follow header h in the control stream (0 for a CTS whose n is
 * not 1: gt_sock_frame rejects it). */
static size_t msg_body(const struct wire_hdr *h)
{
    if (h->type == W_CTS)
        return h->sub == 1 ? sizeof(struct wire_cts_ent) : 0;
    if (h->type == W_DATA)
        return (!(h->flags & W_FLAG_TRUNC) && h->size <= INLINE_MAX) ? h->size : 0;
    return 0;
}

int gt_sock_frame(const uint8_t *p, size_t len, struct wire_hdr *h, size_t *total, char *why,
                  size_t whylen)
{
    *total = sizeof(*h);
    if (len < sizeof(*h))
        return 0;
    memcpy(h, p, sizeof(*h));
    if (h->type == W_CTS && h->sub != 1) {
        if (why)
            snprintf(why, whylen, "peer CTS with n=%u (single receives only)", h->sub);
        return -1;
    }
    if (h->type != W_CTS && h->type != W_DATA) {
        if (why)
            snprintf(why, whylen, "peer sent unknown control message type %u", h->type);
        return -1;
    }
    *total += msg_body(h);
    return len >= *total;
}

static gt_result parse_in(struct sock_comm *c)
{
    size_t off = 0;
    gt_result rc = GT_OK;
    c->stalled = 0;
    while (c->in_len - off >= sizeof(struct wire_hdr)) {
        struct wire_hdr h;
        size_t total;
        char why[96];
        int f = gt_sock_frame(c->in + off, c->in_len - off, &h, &total, why, sizeof(why));
        if (f < 0) {
            rc = gt_sock_fail(c, GT_REMOTE_ERROR, "%s", why);
            break;
        }
        if (f == 0)
            break;
        size_t body = total - sizeof(h);
        const uint8_t *b = c->in + off + sizeof(h);
        rc = h.type == W_CTS ? handle_cts(c, &h, b) : handle_data(c, &h, b);
        if (rc != GT_OK || c->stalled)
            break;
        off += sizeof(h) + body;
        if (c->kind == COMM_RECV && c->wq_count) {
            /* Invariant 1a: this DATA's payload follows it in this stream;
             * take what is buffered, the rest comes from the socket before
             * anything else is parsed. */
            struct sock_work *w = &c->wq[c->wq_head];
            size_t n = c->in_len - off < w->len - w->done ? c->in_len - off : w->len - w->done;
            if (n && !w->req->discard)
                memcpy((char *)w->req->data + w->done, c->in + off, n);
            off += n;
            if (!gt_sock_work_moved(c, n))
                break;
        }
    }
    if (off) {
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
    }
    return rc;
}

/* Bytes still missing from the partial message at the start of c->in (what
 * parse_in left): the rest of its header, else the rest of its body. */
static size_t ctrl_need(const struct sock_comm *c)
{
    struct wire_hdr h;
    size_t total;
    gt_sock_frame(c->in, c->in_len, &h, &total, NULL, 0);
    return total > c->in_len ? total - c->in_len : 0;
}

gt_result gt_sock_read_ctrl(struct sock_comm *c)
{
    /* What is already buffered first: a stalled DATA may match a receive
     * posted since (invariant 2a). */
    gt_result r = parse_in(c);
    if (r != GT_OK)
        return r;
    for (;;) {
        if (gt_sock_reached(c))
            break;
        if (c->kind == COMM_RECV && c->wq_count) {
            /* Invariant 1a: a payload is due before any further header. */
            r = gt_sock_move_data(c);
            if (r != GT_OK || c->wq_count)
                return r;
            continue;
        }
        if (c->eof || c->stalled)
            break; /* nothing behind a stalled DATA can be used yet */
        /* A message always fits, so a full buffer is parsed at once. */
        if (c->in_len == IN_CAP)
            return gt_sock_fail(c, GT_INTERNAL_ERROR, "control buffer overflow");
        size_t room = IN_CAP - c->in_len;
        if (c->exact_ctrl) {
            /* Invariant 1b: up to the end of the next message, no further. */
            size_t need = ctrl_need(c);
            if (need && need < room)
                room = need;
        }
        ssize_t n = recv(c->fd, c->in + c->in_len, room, MSG_DONTWAIT);
        c->st.ctrl_reads++;
        if (n > 0) {
            c->st.ctrl_bytes += (uint64_t)n;
            c->in_len += (size_t)n;
            r = parse_in(c);
            if (r != GT_OK)
                return r;
            continue;
        }
        if (n == 0) {
            c->eof = 1;
            break;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            break;
        int e = errno;
        if (c->kind == COMM_RECV && e == ECONNRESET) {
            c->eof = c->peer_shut = 1; /* invariant 6: after every buffered byte */
            break;
        }
        return gt_sock_fail_errno(c, e, "recv on control socket: %s", strerror(e));
    }
    return GT_OK;
}
