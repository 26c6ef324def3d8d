/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ib_net.h — private to ib_conn.c (connection setup) and ib_data.c (data
 * path): the wire formats, the comm and request layouts, and the few
 * functions one file gives the other.  The protocol and its invariants are
 * described at the top of ib_data.c; the setup at the top of ib_conn.c.
 */
#ifndef GDRTRACE_IB_IB_NET_H
#define GDRTRACE_IB_IB_NET_H

#include <stddef.h>
#include <stdint.h>

#include "plugin/ib/ib.h"
#include "plugin/oob/oob.h"

#define GT_IB_SLOTS GT_NET_MAX_REQUESTS
#define GT_IB_CHUNK_ALIGN 128
#define GT_IB_MAX_WR_BYTES (1ULL << 30)
#define GT_IB_MAX_WRS_PER_QP 96 /* per slot and QP: data writes + record + imm */
#define GT_IB_RQ_DEPTH (GT_IB_SLOTS + 8)
/* Flush requests NCCL may hold untested at once; one more is refused with
 * an error, never answered with a NULL request (which NCCL reads as done). */
#define GT_IB_FLUSHES (2 * GT_IB_SLOTS)
/* The immediate carries the size of a single receive (as NCCL's); this value
 * says "read the completion record instead" (a size that does not fit). */
#define GT_IB_IMM_SEE_RECORD 0xffffffffu

/* ---- wire formats ------------------------------------------------------ */

struct ib_wire {
    uint32_t magic;
    uint16_t version;
    uint16_t nqps;
    uint64_t nonce;
    uint32_t qpn[GT_IB_MAX_QPS];
    uint32_t psn[GT_IB_MAX_QPS];
    uint8_t gid[16];
    uint16_t lid;
    uint8_t link_layer;
    uint8_t mtu;
    uint64_t addr; /* connector: its FIFO; acceptor: its completion records */
    uint32_t rkey;
    uint32_t flags; /* connector: GT_IB_WIRE_* (the acceptor adopts them) */
    char dev[32];
    /* ECE per QP, as NCCL's: the connector's own, the acceptor's reduced
     * one; bit q of ece_mask says QP q has one. */
    uint32_t ece_mask;
    struct {
        uint32_t vendor_id, options, comp_mask;
    } ece[GT_IB_MAX_QPS];
};
#define GT_IB_WIRE_SPLIT 0x1u /* each message split over every QP */
_Static_assert(sizeof(struct ib_wire) <= GT_OOB_BODY_MAX,
               "the setup message fits the hello's body");

/* One clear-to-send entry, written by the receiver into the sender's FIFO. */
struct cts_entry {
    uint64_t addr;
    uint64_t size;
    uint32_t rkey;
    int32_t tag;
    uint32_t nreqs;
    uint32_t seq; /* slot sequence + 1; 0 = never written */
};
struct cts_slot {
    struct cts_entry e[GT_IB_MAX_RECVS];
};
/* The completion record: the sizes of a multi-receive (or of a single one
 * too large for the immediate), written by the sender's WRITE_WITH_IMM into
 * the receiver's, as NCCL's (which writes ints). */
struct cmpl_rec {
    uint64_t size[GT_IB_MAX_RECVS];
};

/* Host memory registered once per comm. */
struct ctrl {
    struct cts_slot fifo[GT_IB_SLOTS]; /* sender: written by the peer */
    struct cts_slot cts[GT_IB_SLOTS];  /* receiver: staging for CTS writes */
    struct cmpl_rec cmpl[GT_IB_SLOTS]; /* receiver: written by the peer */
    struct cmpl_rec rec[GT_IB_SLOTS];  /* sender: staging */
    char flush_dst[64];
};

/* ---- requests and comms ------------------------------------------------ */

enum { REQ_SEND = 1, REQ_RECV, REQ_FLUSH, REQ_DONE };
enum { WR_SEND = 1, WR_RECV, WR_CTS, WR_FLUSH, WR_DATA };

struct ib_comm;
struct ib_req {
    int type;
    struct ib_comm *c;
    int slot;
    int idx;
    size_t size;
    void *data;
    struct gt_mr *mh;
    int done;
};

struct send_slot {
    int active;
    uint32_t seq;
    int nreqs, nposted, ntested;
    int posted; /* WRs are on the wire */
    int events; /* signaled completions still to come (one per QP used) */
    int wrs[GT_IB_MAX_QPS];
    int used[GT_IB_MAX_RECVS];
    struct cts_entry e[GT_IB_MAX_RECVS];
    struct ib_req reqs[GT_IB_MAX_RECVS];
};

struct recv_slot {
    int busy;
    uint32_t seq;
    int n;
    int events;   /* receive completions still to come (one per QP used) */
    uint32_t imm; /* the immediate: the size of a single receive */
    size_t posted_size[GT_IB_MAX_RECVS];
    struct ib_req req;
};

enum { COMM_SEND = 1, COMM_RECV, COMM_LISTEN };

struct ib_comm {
    int kind;
    struct gt_ib_dev *dev;
    struct ibv_cq *cq;
    int nqps;
    struct ibv_qp *qps[GT_IB_MAX_QPS];
    int sq_used[GT_IB_MAX_QPS];
    int sq_depth;
    int rq_used[GT_IB_MAX_QPS];
    uint32_t psn[GT_IB_MAX_QPS];
    struct ctrl *ctrl;
    struct ibv_mr *ctrl_mr;
    uint64_t raddr;
    uint32_t rkey;
    uint32_t seq;
    char peer[160];
    gt_result err;
    int fail_reason; /* with err and errmsg: what again() describes (gt_net.h F4) */
    int fail_errno;
    char errmsg[384];
    int tc;
    int sl;
    int split;             /* each message over every QP (NCCL_IB_SPLIT_DATA_ON_QPS=1) */
    int ar;                /* adaptive routing: separate 0-byte WRITE_WITH_IMM above ... */
    uint64_t ar_threshold; /* ... this many bytes (NCCL_IB_AR_THRESHOLD) */
    /* sender */
    struct send_slot *ss;
    uint32_t next_post; /* next slot seq whose WRs must go out (in order) */
    /* receiver */
    struct recv_slot *rs;
    uint32_t cts_posted;  /* clear-to-send writes posted on QP 0 */
    uint32_t cts_sig[16]; /* cts_posted at each signaled one still to complete */
    unsigned cts_sig_head, cts_sig_tail;
    struct ibv_qp *flush_qp; /* made at accept when the device takes GPU memory */
    int flush_used;
    uint32_t flush_next;
    struct ib_req flush[GT_IB_FLUSHES];
    struct ib_req noop;
    /* setup */
    int fd; /* setup socket, then the liveness channel */
    uint64_t last_check_ms;
    int stage;
    struct ib_comm *st_prev, *st_next; /* ib_conn.c's staged list, while a connect is half made */
    int on_staged;
    struct ib_wire out, in;
    size_t out_off, in_off;
    uint8_t ready;
    uint64_t nonce;
    uint64_t deadline_ms;              /* acceptor: end of setup (the out-of-band deadline) */
    uint8_t hello[GT_OOB_HELLO_BYTES]; /* connector: sent just before `out` */
};

struct ib_listen {
    int kind;
    struct gt_ib_dev *dev;
    int tc;
    int sl;
    struct ib_comm *pending; /* authenticated, answering; at most one */
    struct gt_oob_listener oob;
};

struct ib_ctx {
    uint64_t comm_id;
    int tc;
    int sl;
};

static inline uint64_t gt_ib_wr_id(int kind, int slot, int qp)
{
    return ((uint64_t)kind << 32) | ((uint64_t)(slot & 0xffff) << 16) | (uint64_t)(qp & 0xffff);
}
#define WR_KIND(w) ((int)((w) >> 32))
#define WR_SLOT(w) ((int)(((w) >> 16) & 0xffff))
#define WR_QP(w) ((int)((w)&0xffff))

/* ib_data.c */
/*! gt_ib_fail() / gt_ib_fail_errno() : latch the comm's first failure
 *  (WARNed once) with its reason and errno; gt_ib_again() describes the
 *  latched failure again and returns it (gt_net.h F1, F4). */
gt_result gt_ib_fail(struct ib_comm *c, gt_result r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
gt_result gt_ib_fail_errno(struct ib_comm *c, gt_result r, int e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
gt_result gt_ib_again(struct ib_comm *c);
/*! gt_ib_bad_arg() : F1 for an argument NCCL never passes. */
gt_result gt_ib_bad_arg(const char *fn);
gt_result gt_ib_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                              int fd, void **mhandle, struct gt_reg_report *report);
gt_result gt_ib_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle,
                       struct gt_reg_report *report);
gt_result gt_ib_dereg_mr(void *comm, void *mhandle);
gt_result gt_ib_isend(void *sc, void *data, size_t size, int tag, void *mhandle, void *phandle,
                      void **request);
gt_result gt_ib_irecv(void *rc, int n, void **data, size_t *sizes, int *tags, void **mhandles,
                      void **phandles, void **request);
gt_result gt_ib_iflush(void *rc, int n, void **data, int *sizes, void **mhandles, void **request);
gt_result gt_ib_test(void *request, int *done, int *sizes);
gt_result gt_ib_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle);
gt_result gt_ib_irecv_consumed(void *recv_comm, int n, void *request);
gt_result gt_ib_set_net_attr(void *ctx, void *net_attr);

/* ib_conn.c */
/*! gt_ib_fill_ah() : the address vector toward a peer as NCCL's RTR makes
 *  it: RoCE global (GID, the traffic class); IB by LID, global when the
 *  subnets (low 16 bits of the GID prefix) differ, then to the peer's FLID
 *  (its LID when the FLID is 0), or when the port requires a GRH. */
void gt_ib_fill_ah(const struct gt_ib_dev *d, const uint8_t rgid[16], uint16_t rlid, int sl, int tc,
                   struct ibv_ah_attr *ah);
/*! gt_ib_make_flush_qp() : the receiver's flush QP, connected to itself. */
gt_result gt_ib_make_flush_qp(struct ib_comm *c);
/*! gt_ib_check_setup() : checks a connector's setup message (the body of
 *  its out-of-band hello, `len` bytes); NULL or a constant reason.  The
 *  listener's check_body, and the fuzz target's entry point. */
const char *gt_ib_check_setup(const void *body, size_t len, const struct gt_oob_hello *h);

#endif
