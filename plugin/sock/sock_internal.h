/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock_internal.h — the sock transport's private header: the connection
 * handle codec, interface selection and a comm's counters (which the unit
 * tests use too), then the wire format, the comm and request structures and
 * the functions sock_conn.c, sock_ctrl.c and sock_data.c call in each other
 * (plugin/sock/sock.c says which file owns what).  Nothing here is part of
 * gt_net; only plugin/sock/ and the sock tests and benches include it.
 *
 * Handle: plugin/oob's layout (oob.h) with magic 'GTSK' and version
 * GT_SOCK_HANDLE_VERSION: family, port, address, the listen comm's nonce
 * and a checksum in bytes 0..39; then, at GT_SOCK_HANDLE_STAGE_OFF (64):
 *   64  u64 connect-in-progress id, written by connect() between its calls
 *       (NCCL gives connect no other place to keep state); never dereferenced:
 *       it is looked up in a registry, so a corrupt value is an error, not a crash.
 */
#ifndef GDRTRACE_SOCK_INTERNAL_H
#define GDRTRACE_SOCK_INTERNAL_H

#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/gt_net.h"
#include "plugin/oob/oob.h"

#define GT_SOCK_HANDLE_MAGIC 0x4754534bu /* "GTSK" */
#define GT_SOCK_HANDLE_VERSION 1
#define GT_SOCK_HANDLE_MINLEN GT_OOB_HANDLE_MINLEN /* bytes that must be present to decode */
#define GT_SOCK_HANDLE_STAGE_OFF GT_OOB_HANDLE_PRIVATE
/* The hello's magic and version (plugin/oob's hello, no setup message after
 * it); 2: eager sends; 3: the shared out-of-band hello. */
#define GT_SOCK_HELLO_MAGIC 0x47544831u /* "GTH1" */
#define GT_SOCK_PROTO_VERSION 3

#define GT_SOCK_MAX_DEVS 32
#define GT_SOCK_DEFAULT_SPEED 10000

struct gt_sock_handle_info {
    union gt_oob_addr addr; /* listen address and port */
    uint64_t nonce;
};

/* Writes the whole 128-byte handle (stage id zero). */
void gt_sock_handle_encode(const struct gt_sock_handle_info *info, void *handle);
/* Validates `len` bytes of a handle.  GT_OK, or GT_INVALID_ARGUMENT with a
 * one-line reason in why[] (truncated, bad magic, version, family, checksum...). */
gt_result gt_sock_handle_decode(const void *handle, size_t len, struct gt_sock_handle_info *info,
                                char *why, size_t whylen);
/* Addresses and interface selection (GDRTRACE_SOCKET_IFNAME, _FAMILY) are
 * plugin/oob's: union gt_oob_addr, gt_oob_if_select() and friends. */

/* What a comm did, logged at INFO (NET) when it closes: enough to tell a
 * transport that moves data in few large syscalls from one that spins or
 * waits (stalls: DATA that arrived before its receive was posted). */
struct gt_sock_stats {
    uint64_t msgs, bytes, eager;
    uint64_t io_calls, io_bytes, would_block; /* payload send()/recv()/sendmsg() calls */
    uint64_t ctrl_reads, ctrl_bytes; /* recv()s on the control socket, and what they read */
    uint64_t ctrl_writes;            /* send()s of headers alone, not fused with a payload */
    uint64_t progress, stalls;
};

/* A copy of a send or receive comm's counters so far. */
void gt_sock_comm_stats(const void *comm, struct gt_sock_stats *out);

/* ---- the wire format and a comm (sock_conn.c, sock_ctrl.c, sock_data.c) ---- */

#define INLINE_MAX 4096 /* payloads up to this ride in the control buffer with their header */
#define IN_CAP (64 * 1024)
#define OUT_CAP (256 * 1024)
#define MAX_MSG ((size_t)1 << 30) /* test() reports int sizes: stay well below INT_MAX */
#define RECV_POOL GT_NET_MAX_REQUESTS
/* An eager sender may run ahead of its receiver: as many sends in flight as
 * the transport always allowed (8 per receive slot). */
#define SEND_POOL (GT_NET_MAX_REQUESTS * 8)
#define WQ_CAP SEND_POOL /* >= both pools: at most one queued payload per message */

enum { W_CTS = 1, W_DATA = 2 };
#define W_FLAG_TRUNC 1u
#define W_FLAG_EAGER 2u    /* DATA: sent without a CTS */
#define W_FLAG_EAGER_OK 4u /* CTS: this receiver only ever posts single receives */

struct wire_hdr {
    uint8_t type;
    uint8_t sub; /* CTS: n (always 1); DATA: sub index (always 0) */
    uint16_t slot;
    uint32_t flags;
    uint64_t size;
    int32_t tag;
    uint32_t reserved;
};
_Static_assert(sizeof(struct wire_hdr) == 24, "wire_hdr is 24 bytes on the wire");

struct wire_cts_ent {
    int32_t tag;
    uint32_t reserved;
    uint64_t size;
};
_Static_assert(sizeof(struct wire_cts_ent) == 16, "wire_cts_ent is 16 bytes on the wire");

enum { REQ_FREE = 0, REQ_SEND, REQ_RECV, REQ_FLUSH };

struct sock_comm;
struct sock_req {
    struct sock_comm *comm;
    int kind;
    int busy;         /* payload bytes (or, recv, the header) still to come */
    int optional;     /* NCCL pre-set *request to GT_NET_OPTIONAL_RECV_COMPLETION */
    int abandoned;    /* test() already reported its error; free when busy ends */
    uint64_t seq;     /* recv: posting order, for eager matching (invariant 2a) */
    uint64_t out_end; /* send: out_added once its header (and inline body) was queued */
    gt_result err;
    void *data;
    size_t size; /* recv: posted capacity; send: message size */
    size_t got;  /* recv: size the sender announced */
    int tag;
    int state;   /* recv: 0 waiting for header, 1 header seen, 2 done */
    int discard; /* recv: truncated eager payload, read into the sink */
};

/* One payload queued on the stream (invariant 1a). */
struct sock_work {
    struct sock_req *req;
    size_t len, done;
    uint64_t mark; /* sender: stream position the payload starts at */
};

struct cts_ent {
    uint16_t slot;
    int32_t tag;
    uint64_t size;
};

enum { COMM_SEND = 1, COMM_RECV = 2 };

struct sock_comm {
    int kind;
    int fd;
    gt_result err;
    int fail_reason; /* with err: what gt_sock_again describes (gt_net.h F4) */
    int fail_errno;
    char fail_text[128];
    int eof;        /* the socket saw EOF */
    int await_hdr;  /* receiver: posted receives still waiting for their DATA header */
    int peer_eager; /* receiver: a DATA arrived, no more CTS are needed (invariant 6) */
    int peer_shut;  /* receiver: the sender closed or reset; CTS go nowhere (invariant 6) */
    int stalled;    /* receiver: the next DATA has no posted receive yet */
    int exact_ctrl; /* receiver: the last payload was large, so read the
                     * stream one message at a time (invariant 1b) */
    uint64_t post_seq;
    int eager_ok;   /* sender: the receiver promised single receives */
    int eager_sent; /* sender: an eager DATA went out; CTS are ignored from now on */
    struct gt_sock_stats st;
    /* The request test() was called on (invariant 4a): progress stops as
     * soon as it has completed, so test() reports it without first moving
     * every later message the socket would take. */
    const struct sock_req *until;
    char peer[80];
    struct sock_work *wq; /* ring of WQ_CAP payloads, in stream order */
    unsigned wq_head, wq_count;
    uint8_t *out;
    size_t out_off, out_len;
    uint64_t out_sent;  /* stream bytes sent so far (invariant 1a) */
    uint64_t out_added; /* sender: bytes ever queued in `out` (headers, inline bodies) */
    uint8_t *in;
    size_t in_len;
    struct cts_ent cts[RECV_POOL];
    int ncts;
    struct sock_req *reqs;
    int nreqs;
    int *freelist;
    int nfree;
    /* connect() state until established */
    uint64_t conn_id;
    size_t hello_sent;
    int connected;
    uint8_t hello[GT_OOB_HELLO_BYTES];
    int dev;
};

/* ---- calls between the files; every one runs on the caller's thread, with
 * no lock: NCCL calls a comm from one thread at a time. ---- */

/* sock_conn.c.  Fails the comm with r and one WARN naming the peer and the
 * formatted reason; sticky: once failed, returns the first error, no WARN.
 * Every failing return describes itself (common/gt_net.h F1, F4): _fail is
 * a protocol or internal error (no errno), _fail_errno a system call that
 * failed with e, _fail_gone the peer that closed; gt_sock_again describes a
 * failed comm's error again. */
__attribute__((format(printf, 3, 4))) gt_result gt_sock_fail(struct sock_comm *c, gt_result r,
                                                             const char *fmt, ...);
__attribute__((format(printf, 3, 4))) gt_result gt_sock_fail_errno(struct sock_comm *c, int e,
                                                                   const char *fmt, ...);
__attribute__((format(printf, 2, 3))) gt_result gt_sock_fail_gone(struct sock_comm *c,
                                                                  const char *fmt, ...);
gt_result gt_sock_again(struct sock_comm *c);
/* A NULL or out-of-range argument NCCL never passes (the detail, if any, is
 * in a WARN just before). */
gt_result gt_sock_bad_arg(const char *fn);
/* WARN and describe this call's failure in the same words; `err` must be
 * saved before (the WARN may change errno). */
#define SOCK_FAIL(res, reason, err, ...)                                                           \
    (GT_WARN(__VA_ARGS__), gt_net_fail((res), (reason), (err), __VA_ARGS__))
/* GT_REMOTE_ERROR for errnos that mean the peer or the path went away, else
 * GT_SYSTEM_ERROR. */
gt_result gt_sock_errno_result(int e);

/* sock_ctrl.c.  Sends what waits in the out buffer, up to the oldest queued
 * payload's start (1a); GT_OK also when the socket would block. */
gt_result gt_sock_flush_out(struct sock_comm *c);
/* 1 when `need` bytes fit in the out buffer (compacting it first), else 0. */
int gt_sock_out_room(struct sock_comm *c, size_t need);
/* Reads and handles control messages until the socket would block, a DATA
 * stalls (2a), the tested request completed (4a) or EOF; a receiver moves
 * each payload before the next header (1a). */
gt_result gt_sock_read_ctrl(struct sock_comm *c);
/* The framing of the control message at the start of the `len` bytes a
 * peer sent: pure (no comm, no I/O; reads p[0..len) only, allocates
 * nothing), so the fuzz target (tests/fuzz/fuzz_sock.c) calls it as
 * gt_sock_read_ctrl does.  Decodes the header into *h; *total = the
 * message's bytes known so far (the header, then header and inline body,
 * never more than sizeof(wire_hdr) + INLINE_MAX: a message always fits in
 * the control buffer).  1: a whole message is there; 0: more bytes needed;
 * -1: refused (unknown type, or a CTS whose n is not 1), why[] says so
 * (why may be NULL). */
int gt_sock_frame(const uint8_t *p, size_t len, struct wire_hdr *h, size_t *total, char *why,
                  size_t whylen);
/* Invariant 2: index of the oldest CTS with this tag, or -1. */
int gt_sock_cts_match(const struct sock_comm *c, int tag);

/* sock_data.c.  A request's bytes are all in: frees it if test() already
 * gave it up. */
void gt_sock_req_finished(struct sock_req *r);
/* Queues r's payload of `size` bytes at the end of the stream (1a). */
void gt_sock_enqueue_payload(struct sock_comm *c, struct sock_req *r, size_t size);
/* Accounts n bytes moved for the oldest queued payload; 1 when it completed. */
int gt_sock_work_moved(struct sock_comm *c, size_t n);
/* 1 when the request test() was called on has completed (4a). */
int gt_sock_reached(const struct sock_comm *c);
/* Moves queued payload bytes until the socket would block (4c), the queue is
 * empty, or the tested request completed (4a). */
gt_result gt_sock_move_data(struct sock_comm *c);

/* The gt_net slots, for the ops table in sock.c. */
gt_result gt_sock_init(void **ctx, uint64_t comm_id, int has_comm_id,
                       const struct gt_comm_config *config, gt_logger_fn logger,
                       gt_profiler_fn profiler);
gt_result gt_sock_finalize(void *ctx);
gt_result gt_sock_devices(int *ndev);
gt_result gt_sock_get_properties(int dev, struct gt_props *p);
gt_result gt_sock_get_probe(int dev, struct gt_dev_probe *probe);
gt_result gt_sock_listen(void *ctx, int dev, void *handle, void **listen_comm);
gt_result gt_sock_connect(void *ctx, int dev, void *handle, void **send_comm, void **send_dev_comm);
gt_result gt_sock_accept(void *listen_comm, void **recv_comm, void **recv_dev_comm);
gt_result gt_sock_close_listen(void *listen_comm);
gt_result gt_sock_close_comm(void *comm);
gt_result gt_sock_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
                        void *phandle, void **request);
gt_result gt_sock_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
                        void **mhandles, void **phandles, void **request);
gt_result gt_sock_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
                         void **request);
gt_result gt_sock_test(void *request, int *done, int *sizes);

#endif
