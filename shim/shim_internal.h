/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shim_internal.h — the shim's private wrapper objects, and the hooks its
 * tests and benchmarks use.  Not for other layers: they see only shim.h.
 *
 * Layout notes: struct shim_req is what NCCL holds as a request; struct
 * shim_comm embeds a pool of them (SHIM_POOL, enough for NCCL's 32 requests
 * per comm times 8 sub-receives on the send side, plus flushes) and the
 * bitmap of free ones (bit set = free).
 */
#ifndef GDRTRACE_SHIM_INTERNAL_H
#define GDRTRACE_SHIM_INTERNAL_H

#include <stdint.h>

#include "common/gt_net.h"
#include "shim/recorder.h"

#define SHIM_MAX_RECVS 64 /* sub-receives per irecv the shim can unwrap (NCCL uses <= 8) */
#define SHIM_POOL 320
#define SHIM_POOL_WORDS (SHIM_POOL / 64)
#define SHIM_REQ_HEAP 0xffffu

_Static_assert(SHIM_POOL % 64 == 0, "pool is whole bitmap words");
_Static_assert(SHIM_POOL >= GT_NET_MAX_REQUESTS * 8 + GT_NET_MAX_REQUESTS,
               "pool covers NCCL's limit");

/* Process-private companion of one comm slot of the file. */
struct shim_slot {
    struct gtr_comm *c;
    uint16_t idx;
    int shared;                /* overflow slot: every update is an RMW */
    int refs;                  /* inits sharing this primary (under the shim lock) */
    void *owner;               /* data-path writer's key (S3), NULL = none yet */
    struct shim_slot *primary; /* itself for a primary */
    struct shim_slot *sibling; /* primary: first sibling; sibling: next one */
};

struct shim_comm;

struct shim_ctx {
    void *inner;
    const struct gt_net_ops *ops;
    struct shim_slot *slot;
    struct shim_comm *spare; /* for connect polls */
};

struct shim_req {
    void *inner;
    struct shim_comm *comm;
    uint64_t t0;    /* ticks at post */
    uint64_t bytes; /* posted bytes */
    int tag;
    uint16_t index;                 /* in the pool, or SHIM_REQ_HEAP */
    uint8_t op;                     /* enum gtr_op */
    uint8_t n;                      /* sub-requests */
    struct shim_req *hprev, *hnext; /* SHIM_REQ_HEAP only: the comm's heap list */
};

enum { SHIM_LISTEN = 1, SHIM_SEND = 2, SHIM_RECV = 3 };

struct shim_comm {
    int kind;
    int dev;
    int defer_free; /* recv with a device handle: requests live until irecv_consumed */
    void *inner;
    const struct gt_net_ops *ops;
    struct shim_slot *slot;
    struct shim_comm *spare; /* listen comms: for accept polls */
    struct shim_req *heap;   /* requests beyond the pool, in flight (heap_lock) */
    int heap_lock;
    uint64_t free_bits[SHIM_POOL_WORDS];
    struct shim_req pool[SHIM_POOL];
};

struct shim_mr {
    void *inner;
    uint64_t addr;
    uint64_t size;
    uint8_t asked;  /* enum gt_reg_asked */
    uint8_t method; /* enum gt_reg_method */
};

/* gt_shim_wrap with an explicit recorder configuration (tests, benches:
 * small rings, a private directory).  cfg is used only by the call that
 * creates the recorder. */
const struct gt_net_ops *gt_shim_wrap_cfg(const struct gt_net_ops *inner, const char *transport_why,
                                          gt_logger_fn logger, const struct gt_rec_config *cfg);

/* Requests beyond a comm's pool that are alive now, all comms together. */
uint64_t gt_shim_heap_reqs(void);

/* The process's recorder, NULL until created. */
struct gt_recorder *gt_shim_recorder(void);

#endif
