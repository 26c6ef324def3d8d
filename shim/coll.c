/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coll.c — the collective recorder (contract and invariants C1-C4 in
 * coll.h).
 *
 * An operation slot's life: FREE -> BUSY at its start (one hold, the
 * host's) -> each child start adds a hold and counts a child, each child
 * stop and the host's stop take a hold -> whoever takes the holds to 0 with
 * at least one child seen completes it (histogram, busy time) and frees the
 * slot.  Holds, children and the slot's generation are one atomic word
 * (refs), so "nothing holds it, and a child was seen" is decided on one
 * snapshot and exactly one release completes it.  A slot whose host stop
 * came with no child yet is "parked": its children may still come (NCCL's
 * proxy thread starts them after the host stopped the event); a parked slot
 * found again when the table wraps (GT_COLL_INFLIGHT operations later) had
 * none and is reused under a new generation.
 *
 * A handle is not an address: it names the context (its index in a
 * process-wide table and the epoch of that index), the slot, the slot's
 * generation and the tag (coll.h, C2).  A child whose parent handle carries
 * another generation than its slot's word (its operation was parked and the
 * slot reused since) is counted in gtr_coll_comm.stale_child and never
 * attached: one compare-and-swap checks the generation and takes the hold,
 * so a reuse cannot slip between them.  Reusing a parked slot is one
 * compare-and-swap of the whole word from {old generation, no hold, no
 * child} to {new generation, the host's hold}: a child of the old
 * generation that took its hold first makes it fail (the slot is busy:
 * inflight_full), one that comes after fails its own (stale).
 */
#include "shim/coll.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/env.h"
#include "common/hist.h"
#include "common/log.h"
#include "shim/recorder.h"
#include "shim/shim.h"
#include "shim/shim_internal.h"

#define OP_MAGIC 0x636f6c6cu /* "coll" */
#define CTX_MAGIC 0x63747821u
#define TAG_PROXY 1u
#define TAG_KERNEL 2u
#define TAG_GROUP 3u
#define TAG_MASK 3u
/* refs: holds in bits 0-19, children started in 20-39 (saturating), the
 * slot's generation in 40-63 */
#define REF_HOLDS 0xfffffull
#define REF_CHILD (1ull << 20)
#define REF_CHILDREN (0xfffffull << 20)
#define REF_GEN_SHIFT 40
#define GEN_MASK 0xffffffull
/* a handle: tag bits 0-1, slot 2-11, context index 12-19, the index's epoch
 * 20-39, generation 40-63 */
#define H_SLOT_SHIFT 2
#define H_CTX_SHIFT 12
#define H_EPOCH_SHIFT 20
#define H_EPOCH_MASK 0xfffffull
#define GT_COLL_CTXS 256 /* contexts alive at once in a process */

enum { OP_FREE = 0, OP_BUSY = 1 };
enum { KIND_OP = 0, KIND_GROUP = 1 };
/* a P2p operation's place in its group (coll_op.joined) */
enum { J_NONE = 0, J_JOINING, J_IN, J_ALONE };

struct coll_ctx;

struct coll_op {
    uint32_t magic;
    uint32_t state; /* OP_FREE / OP_BUSY (atomic) */
    uint32_t kind;  /* KIND_OP / KIND_GROUP, set by the claimer */
    /* One atomic word, so that "nothing holds it, and a child was seen"
     * (complete) is decided on one snapshot, with the generation a child
     * must carry (REF_*). */
    uint64_t refs;
    struct coll_ctx *ctx;
    struct gtr_coll_cell *cell;
    int64_t start_ns;   /* enqueue, recorder clock */
    int64_t end_ns;     /* latest child stop (atomic max) */
    uint64_t gpu_start; /* KernelCh: earliest GPU start (atomic min; 0 none) */
    uint64_t gpu_end;   /* KernelCh: latest GPU end (atomic max) */
    /* P2p in a group: the group and its generation; joined (J_*, atomic) */
    struct coll_op *group;
    uint64_t group_gen;
    uint32_t joined;
    /* a group: its completed members (a lock-free stack through next) */
    struct coll_op *members;
    struct coll_op *next;
} __attribute__((aligned(64)));

struct coll_ctx {
    uint32_t magic;
    int mode;
    int pid;
    uint32_t idx;   /* in g_ctxs */
    uint64_t epoch; /* of that index, in every handle */
    struct gt_recorder *rec;
    struct gtr_coll_comm *c;
    uint64_t next; /* operations started (atomic): slot and generation */
    struct coll_op ops[GT_COLL_INFLIGHT];
};

_Static_assert(GT_COLL_INFLIGHT == 1024, "a handle has 10 bits for the slot");
_Static_assert(GT_COLL_CTXS == 256, "a handle has 8 bits for the context");
_Static_assert(sizeof(void *) == 8, "a handle is 64 bits");

/* The contexts alive, by the index their handles carry; an epoch per
 * index, so a handle of a finalized context never names its successor. */
static struct coll_ctx *g_ctxs[GT_COLL_CTXS];
static uint64_t g_epoch[GT_COLL_CTXS];

static void copy_str(char *dst, size_t n, const char *src)
{
    size_t len = src ? strnlen(src, n - 1) : 0;
    if (len)
        memcpy(dst, src, len);
    dst[len] = '\0';
}

int gt_coll_mode(void)
{
    static const char *const choices[] = {"off", "proxy", "kernel", NULL};
    return gt_env_choice("GDRTRACE_COLL", choices, GTR_COLL_MODE_PROXY);
}

static int mask_for(int mode, int version)
{
    /* Coll and P2p: the operations.  ProxyOp or KernelCh: their ends.  No
     * ProxyStep, ProxyCtrl or NetPlugin: per-step events cost the proxy
     * thread on every network step and add nothing to a duration. */
    enum { COLL = 1 << 1, P2P = 1 << 2, PROXYOP = 1 << 3, KERNELCH = 1 << 6, CECOLL = 1 << 12 };
    /* v6: CeColl, so a collective NCCL runs on the copy engines is counted
     * (without it NCCL emits no CE event; CeSync/CeBatch add nothing) */
    int ce = version >= 6 ? CECOLL : 0;
    switch (mode) {
    case GTR_COLL_MODE_PROXY:
        return COLL | P2P | PROXYOP | ce;
    case GTR_COLL_MODE_KERNEL:
        return COLL | P2P | KERNELCH | ce;
    default:
        return 0;
    }
}

void *gt_coll_init(int version, int has_comm_id, uint64_t comm_id, const char *comm_name,
                   int nnodes, int nranks, int rank, gt_logger_fn logger, int *mask)
{
    *mask = 0;
    gt_shim_open(logger); /* idempotent; the profiler may come before the net */
    struct gt_recorder *r = gt_shim_recorder();
    if (!r || !r->coll_status)
        return NULL;
    struct gtr_coll_status *st = r->coll_status;
    int mode = gt_coll_mode();
    __atomic_store_n(&st->mode, (uint32_t)mode, __ATOMIC_RELAXED);
    __atomic_store_n(&st->version, version, __ATOMIC_RELAXED);
    __atomic_fetch_add(&st->inits, 1, __ATOMIC_RELAXED);
    if (mode == GTR_COLL_MODE_OFF)
        return NULL;
    struct coll_ctx *x = calloc(1, sizeof(*x)); /* init is NCCL's cold path */
    if (!x) {
        GT_WARN("collective metrics off for communicator 0x%llx: no memory for %zu bytes",
                (unsigned long long)comm_id, sizeof(*x));
        return NULL;
    }
    uint32_t idx = GT_COLL_CTXS;
    for (uint32_t i = 0; i < GT_COLL_CTXS && idx == GT_COLL_CTXS; i++) {
        struct coll_ctx *none = NULL;
        if (__atomic_compare_exchange_n(&g_ctxs[i], &none, x, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            idx = i;
    }
    uint32_t slot;
    struct gtr_coll_comm *c = idx < GT_COLL_CTXS ? gt_rec_new_coll_comm(r, &slot) : NULL;
    if (!c) {
        __atomic_fetch_add(&st->full, 1, __ATOMIC_RELAXED);
        if (idx < GT_COLL_CTXS)
            __atomic_store_n(&g_ctxs[idx], NULL, __ATOMIC_RELEASE);
        free(x);
        return NULL;
    }
    c->has_comm_id = (uint32_t)(has_comm_id != 0);
    c->comm_id = comm_id;
    c->version = version;
    c->rank = rank;
    c->nranks = nranks;
    c->nnodes = nnodes;
    copy_str(c->comm_name, sizeof(c->comm_name), comm_name);
    c->mode = (uint32_t)mode;
    c->mask = (uint32_t)mask_for(mode, version);
    c->init_ns = gt_rec_now_ns(r);
    /* release: identity before ACTIVE (readers acquire state) */
    __atomic_store_n(&c->state, GTR_COMM_ACTIVE, __ATOMIC_RELEASE);
    x->mode = mode;
    x->pid = (int)getpid();
    x->idx = idx;
    /* 1 and up: a handle is never 0 (NULL means "not followed") */
    x->epoch = ((__atomic_add_fetch(&g_epoch[idx], 1, __ATOMIC_RELAXED) - 1) % H_EPOCH_MASK) + 1;
    x->rec = r;
    x->c = c;
    for (unsigned i = 0; i < GT_COLL_INFLIGHT; i++) {
        x->ops[i].magic = OP_MAGIC;
        x->ops[i].ctx = x;
    }
    /* release: the context whole before a handle can name it */
    __atomic_store_n(&x->magic, CTX_MAGIC, __ATOMIC_RELEASE);
    *mask = (int)c->mask;
    return x;
}

void gt_coll_finalize(void *ctx)
{
    struct coll_ctx *x = ctx;
    if (!x || x->magic != CTX_MAGIC)
        return;
    __atomic_store_n(&x->c->finalize_ns, gt_rec_now_ns(x->rec), __ATOMIC_RELAXED);
    __atomic_store_n(&x->c->state, GTR_COMM_FINALIZED, __ATOMIC_RELEASE);
    __atomic_store_n(&x->magic, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&g_ctxs[x->idx], NULL, __ATOMIC_RELEASE);
    free(x);
}

static inline void add(uint64_t *p, uint64_t v)
{
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static inline void max_i64(int64_t *p, int64_t v)
{
    int64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > cur &&
           !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static inline void max_u64(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > cur &&
           !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static inline void min_u64_nz(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while ((cur == 0 || v < cur) &&
           !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* v1-v3: the communicator is known from its first operation. */
static void learn_comm(struct gtr_coll_comm *c, const struct gt_coll_desc *d)
{
    if (!d->has_comm || __atomic_load_n(&c->has_comm_id, __ATOMIC_ACQUIRE))
        return;
    uint32_t zero = 0;
    /* 2 while filling, so one thread fills; readers take 1 only */
    if (!__atomic_compare_exchange_n(&c->has_comm_id, &zero, 2, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return;
    c->comm_id = d->comm_hash;
    copy_str(c->comm_name, sizeof(c->comm_name), d->comm_name);
    if (c->rank < 0)
        c->rank = d->rank;
    __atomic_store_n(&c->has_comm_id, 1, __ATOMIC_RELEASE);
}

static inline void *handle_of(const struct coll_ctx *x, uint32_t i, uint64_t gen)
{
    return (void *)(uintptr_t)(gen << REF_GEN_SHIFT | x->epoch << H_EPOCH_SHIFT |
                               (uint64_t)x->idx << H_CTX_SHIFT | (uint64_t)i << H_SLOT_SHIFT);
}

/* The next slot, for an operation or a group, with the host's hold: NULL
 * when it is still running (inflight_full counted by the caller). */
static struct coll_op *claim(struct coll_ctx *x, int64_t now, void **handle)
{
    uint64_t seq = __atomic_fetch_add(&x->next, 1, __ATOMIC_RELAXED);
    uint32_t i = (uint32_t)(seq & (GT_COLL_INFLIGHT - 1));
    uint64_t gen = (seq / GT_COLL_INFLIGHT + 1) & GEN_MASK;
    uint64_t mine = gen << REF_GEN_SHIFT | 1; /* the new generation, the host's hold */
    struct coll_op *op = &x->ops[i];
    uint32_t st = OP_FREE;
    if (__atomic_compare_exchange_n(&op->state, &st, OP_BUSY, 0, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
        /* free: completed (no child can take a hold again) or never used */
        __atomic_store_n(&op->refs, mine, __ATOMIC_RELAXED);
    } else {
        /* busy: parked (no hold, no child, GT_COLL_INFLIGHT operations ago)
         * is reused; anything else is still running: not timed (C4) */
        uint64_t v = __atomic_load_n(&op->refs, __ATOMIC_RELAXED);
        if ((v & (REF_HOLDS | REF_CHILDREN)) ||
            !__atomic_compare_exchange_n(&op->refs, &v, mine, 0, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED))
            return NULL;
    }
    op->kind = KIND_OP;
    op->cell = NULL;
    op->start_ns = now;
    op->group = NULL;
    op->group_gen = 0;
    op->next = NULL;
    __atomic_store_n(&op->joined, J_NONE, __ATOMIC_RELAXED);
    __atomic_store_n(&op->members, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&op->end_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&op->gpu_start, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&op->gpu_end, 0, __ATOMIC_RELAXED);
    *handle = handle_of(x, i, gen);
    return op;
}

/* The fields a claimer set, before a child (another thread) takes a hold:
 * an update of the word, never a plain store that could erase a hold. */
static inline void publish(struct coll_op *op)
{
    __atomic_fetch_or(&op->refs, 0, __ATOMIC_RELEASE);
}

static struct coll_op *op_of(const void *h, uint64_t *gen);

/* The cell an operation (or a copy-engine collective) is counted in. */
static struct gtr_coll_cell *count_op(struct coll_ctx *x, const struct gt_coll_desc *d)
{
    struct gtr_coll_comm *c = x->c;
    learn_comm(c, d);
    uint64_t bytes = d->count * d->type_size;
    if ((d->func == GTR_COLL_FUNC_ALLGATHER || d->func == GTR_COLL_FUNC_REDUCESCATTER) &&
        c->nranks > 0)
        bytes *= (uint64_t)c->nranks; /* the size nccl-tests and busbw speak of */
    struct gtr_coll_cell *cell = gt_rec_coll_cell(c, d->func, gt_coll_size_log2(bytes));
    add(&cell->count, 1);
    add(&cell->bytes, bytes);
    if (!d->type_size)
        add(&cell->unsized, 1);
    add(&cell->algo_proto[d->algo < GTR_COLL_ALGOS ? d->algo : GTR_ALGO_UNKNOWN]
                         [d->proto < GTR_COLL_PROTOS ? d->proto : GTR_PROTO_UNKNOWN],
        1);
    int64_t zero = 0;
    if (__atomic_load_n(&c->first_ns, __ATOMIC_RELAXED) == 0)
        __atomic_compare_exchange_n(&c->first_ns, &zero, gt_rec_now_ns(x->rec), 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
    return cell;
}

static void *start_op(struct coll_ctx *x, const struct gt_coll_desc *d)
{
    struct gtr_coll_cell *cell = count_op(x, d);
    void *h;
    struct coll_op *op = claim(x, gt_rec_now_ns(x->rec), &h);
    if (!op) {
        add(&x->c->inflight_full, 1);
        return NULL;
    }
    op->cell = cell;
    /* a P2p of a group: timed as the group, which the application waits
     * for (it joins at its first child) */
    uint64_t ggen;
    struct coll_op *g = d->group && ((uintptr_t)d->group & TAG_MASK) == TAG_GROUP &&
                                (d->func == GTR_COLL_FUNC_SEND || d->func == GTR_COLL_FUNC_RECV)
                            ? op_of(d->group, &ggen)
                            : NULL;
    if (g && g->ctx == x) {
        op->group = g;
        op->group_gen = ggen;
    }
    publish(op);
    return h;
}

static void *start_group(struct coll_ctx *x)
{
    void *h;
    struct coll_op *g = claim(x, gt_rec_now_ns(x->rec), &h);
    if (!g) /* its P2p are then timed alone */
        return NULL;
    g->kind = KIND_GROUP;
    publish(g);
    return (void *)((uintptr_t)h | TAG_GROUP);
}

static void release(struct coll_op *op);

/* The last hold of a timed operation (or group) was released: record it.
 * A P2p that joined a group hands its end to the group and waits, busy,
 * for the group to record it with the group's duration. */
static void complete(struct coll_op *op)
{
    struct coll_ctx *x = op->ctx;
    struct gtr_coll_comm *c = x->c;
    int64_t end = __atomic_load_n(&op->end_ns, __ATOMIC_RELAXED);
    uint64_t g0 = __atomic_load_n(&op->gpu_start, __ATOMIC_RELAXED);
    uint64_t g1 = __atomic_load_n(&op->gpu_end, __ATOMIC_RELAXED);
    if (op->kind == KIND_OP && __atomic_load_n(&op->joined, __ATOMIC_ACQUIRE) == J_IN) {
        struct coll_op *g = op->group;
        max_i64(&g->end_ns, end);
        if (g0)
            min_u64_nz(&g->gpu_start, g0);
        max_u64(&g->gpu_end, g1);
        struct coll_op *head = __atomic_load_n(&g->members, __ATOMIC_RELAXED);
        do
            op->next = head;
        while (!__atomic_compare_exchange_n(&g->members, &head, op, 1, __ATOMIC_RELEASE,
                                            __ATOMIC_RELAXED));
        release(g); /* its last member: the group completes here */
        return;
    }
    int64_t last = __atomic_load_n(&c->last_end_ns, __ATOMIC_RELAXED);
    /* NCCL runs a communicator's operations in order: one enqueued while the
     * previous ran starts when that one ends */
    int64_t start = op->start_ns > last ? op->start_ns : last;
    uint64_t busy = end > start ? (uint64_t)(end - start) : 0;
    uint64_t dur = busy;
    if (x->mode == GTR_COLL_MODE_KERNEL && g0 && g1 > g0) {
        dur = g1 - g0; /* the GPU's own clock: no proxy polling in it */
        if (dur < busy)
            busy = dur;
    }
    if (op->kind == KIND_GROUP) {
        struct coll_op *m = __atomic_load_n(&op->members, __ATOMIC_ACQUIRE), *n;
        for (; m; m = n) {
            n = m->next;
            gt_hist_add_shared(&m->cell->hist, dur);
            __atomic_store_n(&m->state, OP_FREE, __ATOMIC_RELEASE);
        }
    } else {
        gt_hist_add_shared(&op->cell->hist, dur);
    }
    add(&c->busy_ns, busy);
    max_i64(&c->last_end_ns, end);
    __atomic_store_n(&op->state, OP_FREE, __ATOMIC_RELEASE);
}

static inline int complete_word(uint64_t v)
{
    return (v & REF_HOLDS) == 0 && (v & REF_CHILDREN) != 0;
}

static void release(struct coll_op *op)
{
    uint64_t v = __atomic_sub_fetch(&op->refs, 1, __ATOMIC_ACQ_REL);
    if (complete_word(v))
        complete(op);
    /* holds left: not yet; none and no child: parked, children may still
     * start (coll.h) */
}

/* A child's hold on generation gen of op: 1 taken; 0 refused (the
 * operation is complete: a late child must not complete it twice; or its
 * holds are saturated); -1 stale (the slot holds another generation). */
static int hold_child(struct coll_op *op, uint64_t gen)
{
    uint64_t v = __atomic_load_n(&op->refs, __ATOMIC_ACQUIRE), nv;
    do {
        if (v >> REF_GEN_SHIFT != gen)
            return -1;
        if (complete_word(v) || (v & REF_HOLDS) == REF_HOLDS)
            return 0;
        nv = v + 1 + ((v & REF_CHILDREN) == REF_CHILDREN ? 0 : REF_CHILD);
    } while (
        !__atomic_compare_exchange_n(&op->refs, &v, nv, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    return 1;
}

/* The operation a handle names, or NULL (a context finalized since, or a
 * handle that is not ours); *gen its generation. */
static struct coll_op *op_of(const void *h, uint64_t *gen)
{
    uint64_t v = (uint64_t)(uintptr_t)h;
    uint32_t idx = (uint32_t)(v >> H_CTX_SHIFT) & (GT_COLL_CTXS - 1);
    struct coll_ctx *x = __atomic_load_n(&g_ctxs[idx], __ATOMIC_ACQUIRE);
    if (!x || __atomic_load_n(&x->magic, __ATOMIC_ACQUIRE) != CTX_MAGIC ||
        x->epoch != ((v >> H_EPOCH_SHIFT) & H_EPOCH_MASK))
        return NULL;
    *gen = v >> REF_GEN_SHIFT;
    return &x->ops[(v >> H_SLOT_SHIFT) & (GT_COLL_INFLIGHT - 1)];
}

static inline void *child_handle(const void *parent, unsigned tag)
{
    return (void *)((uintptr_t)parent | tag);
}

void *gt_coll_start(void *ctx, const struct gt_coll_desc *d)
{
    struct coll_ctx *x = ctx;
    if (!x || !d)
        return NULL;
    switch (d->kind) {
    case GT_COLL_EV_OP:
        return start_op(x, d);
    case GT_COLL_EV_GROUP:
        return start_group(x);
    case GT_COLL_EV_CE:
        /* NCCL stops CeColl, CeSync and CeBatch on the host once the copies
         * are enqueued: nothing says when they ran, so counted, not timed */
        count_op(x, d);
        return NULL;
    case GT_COLL_EV_PROXYOP:
    case GT_COLL_EV_KERNELCH: {
        if (d->kind == GT_COLL_EV_PROXYOP && d->pid && d->pid != x->pid) {
            add(&x->c->foreign, 1); /* C3: the parent is another process's */
            return NULL;
        }
        uint64_t gen;
        struct coll_op *op =
            d->parent && !((uintptr_t)d->parent & TAG_MASK) ? op_of(d->parent, &gen) : NULL;
        if (!op || op->ctx != x)
            return NULL;
        int held = hold_child(op, gen);
        if (held < 0)
            add(&x->c->stale_child, 1); /* its operation's slot was reused: never timed */
        if (held <= 0)
            return NULL;
        if (op->group && __atomic_load_n(&op->joined, __ATOMIC_ACQUIRE) == J_NONE) {
            /* the first child: join the group, unless it is gone (then timed
             * alone); this child's hold keeps the operation from completing
             * meanwhile */
            uint32_t j = J_NONE;
            if (__atomic_compare_exchange_n(&op->joined, &j, J_JOINING, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED))
                __atomic_store_n(&op->joined,
                                 hold_child(op->group, op->group_gen) > 0 ? J_IN : J_ALONE,
                                 __ATOMIC_RELEASE);
        }
        if (d->kind == GT_COLL_EV_KERNELCH) {
            if (d->gpu_ns)
                min_u64_nz(&op->gpu_start, d->gpu_ns);
            return child_handle(d->parent, TAG_KERNEL);
        }
        return child_handle(d->parent, TAG_PROXY);
    }
    default:
        return NULL;
    }
}

void gt_coll_kernel_end(void *handle, uint64_t gpu_ns)
{
    uint64_t gen;
    if (((uintptr_t)handle & TAG_MASK) != TAG_KERNEL)
        return;
    struct coll_op *op = op_of(handle, &gen);
    /* a child holds its operation: the generation is still its own */
    if (op && __atomic_load_n(&op->refs, __ATOMIC_ACQUIRE) >> REF_GEN_SHIFT == gen)
        max_u64(&op->gpu_end, gpu_ns);
}

void gt_coll_stop(void *handle)
{
    uint64_t gen;
    if (!handle)
        return;
    uintptr_t tag = (uintptr_t)handle & TAG_MASK;
    struct coll_op *op = op_of(handle, &gen);
    /* the host and each child hold the operation until this stop, so the
     * slot still has its generation; another one is a stop NCCL sent twice */
    if (!op || __atomic_load_n(&op->refs, __ATOMIC_ACQUIRE) >> REF_GEN_SHIFT != gen)
        return;
    if (tag == TAG_PROXY || tag == TAG_KERNEL)
        max_i64(&op->end_ns, gt_rec_now_ns(op->ctx->rec));
    release(op);
}

/* ---- names ---- */

unsigned gt_coll_func_from_name(const char *s)
{
    static const char *const names[GTR_COLL_FUNC_OTHER] = {
        [GTR_COLL_FUNC_ALLREDUCE] = "AllReduce",
        [GTR_COLL_FUNC_ALLGATHER] = "AllGather",
        [GTR_COLL_FUNC_REDUCESCATTER] = "ReduceScatter",
        [GTR_COLL_FUNC_BROADCAST] = "Broadcast",
        [GTR_COLL_FUNC_REDUCE] = "Reduce",
        [GTR_COLL_FUNC_ALLTOALL] = "AlltoAll",
        [GTR_COLL_FUNC_GATHER] = "Gather",
        [GTR_COLL_FUNC_SCATTER] = "Scatter",
        [GTR_COLL_FUNC_SEND] = "Send",
        [GTR_COLL_FUNC_RECV] = "Recv",
        [GTR_COLL_FUNC_SENDRECV] = "SendRecv",
    };
    if (!s)
        return GTR_COLL_FUNC_OTHER;
    for (unsigned i = 0; i < GTR_COLL_FUNC_OTHER; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return GTR_COLL_FUNC_OTHER;
}

unsigned gt_coll_algo_from_name(const char *s)
{
    static const char *const names[GTR_ALGO_UNKNOWN] = {
        "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
    if (!s)
        return GTR_ALGO_UNKNOWN;
    for (unsigned i = 0; i < GTR_ALGO_UNKNOWN; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    return GTR_ALGO_UNKNOWN;
}

unsigned gt_coll_proto_from_name(const char *s)
{
    static const char *const names[GTR_PROTO_UNKNOWN] = {"LL", "LL128", "SIMPLE"};
    if (!s)
        return GTR_PROTO_UNKNOWN;
    for (unsigned i = 0; i < GTR_PROTO_UNKNOWN; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    return GTR_PROTO_UNKNOWN;
}

unsigned gt_coll_type_size_from_name(const char *s)
{
    static const struct {
        const char *name;
        unsigned size;
    } t[] = {{"ncclInt8", 1},    {"ncclUint8", 1},    {"ncclInt32", 4},      {"ncclUint32", 4},
             {"ncclInt64", 8},   {"ncclUint64", 8},   {"ncclFloat16", 2},    {"ncclFloat32", 4},
             {"ncclFloat64", 8}, {"ncclBfloat16", 2}, {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1}};
    if (!s)
        return 0;
    for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(s, t[i].name) == 0)
            return t[i].size;
    return 0;
}

unsigned gt_coll_func_from_v1(unsigned f)
{
    /* NCCL 2.23's ncclFunc_t */
    static const unsigned map[] = {GTR_COLL_FUNC_BROADCAST, GTR_COLL_FUNC_REDUCE,
                                   GTR_COLL_FUNC_ALLGATHER, GTR_COLL_FUNC_REDUCESCATTER,
                                   GTR_COLL_FUNC_ALLREDUCE, GTR_COLL_FUNC_SENDRECV,
                                   GTR_COLL_FUNC_SEND,      GTR_COLL_FUNC_RECV};
    return f < sizeof(map) / sizeof(map[0]) ? map[f] : GTR_COLL_FUNC_OTHER;
}

unsigned gt_coll_algo_from_v1(unsigned a)
{
    return a < GTR_ALGO_UNKNOWN ? a : GTR_ALGO_UNKNOWN; /* NCCL_ALGO_* are our order */
}

unsigned gt_coll_proto_from_v1(unsigned p)
{
    return p < GTR_PROTO_UNKNOWN ? p : GTR_PROTO_UNKNOWN; /* NCCL_PROTO_* are our order */
}

unsigned gt_coll_type_size_from_v1(unsigned t)
{
    /* ncclDataType_t: int8 uint8 int32 uint32 int64 uint64 half float double bf16 fp8 fp8 */
    static const unsigned sz[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    return t < sizeof(sz) / sizeof(sz[0]) ? sz[t] : 0;
}
