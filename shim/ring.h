/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ring.h — the recorder's event ring: lock-free multi-producer
 * reserve/commit in overwrite mode, and the matching safe read.
 *
 * The algorithm, its numbered invariants and the reasoning behind every
 * barrier are at the top of ring.c; the fast path lives here (static inline)
 * and every unlikely branch calls the out-of-line slow path in ring.c.
 *
 * Writer contract (gt_ring_emit): any thread, any number of threads, signal
 * handlers excluded.  No lock, no allocation, no system call.  Returns
 *   1  the event is committed at position *pos (may be NULL);
 *   0  the event was discarded because a producer one full lap behind was
 *      still writing the same slot (counted in ring->dropped).
 * Reader contract (gt_ring_read): any process mapping the file, while or
 * after the writer runs; never blocks the writer; returns 1 with a private
 * copy of the record committed at absolute position pos, or 0 if that record
 * is not (or no longer) there: torn, being written, overwritten, or never
 * written.
 */
#ifndef GDRTRACE_SHIM_RING_H
#define GDRTRACE_SHIM_RING_H

#include <stdint.h>

#include "gdrtrace/recorder_format.h"

/* A writer's view of a ring living in shared memory. */
struct gt_ring {
    struct gtr_ring_header *hdr;
    struct gtr_event *ev;
    uint64_t mask; /* capacity - 1; capacity is a power of two */
};

#define GT_EVENT_WORDS (sizeof(struct gtr_event) / sizeof(uint64_t))

/* Slow path (ring.c): a lapped producer gives its event up. */
int gt_ring_discard(struct gt_ring *r);

/* Initialises the ring header and marks every slot "never written"
 * (seq = 0, which no position ever commits to).  Not thread-safe: call
 * before publishing the ring. */
void gt_ring_format(struct gt_ring *r, struct gtr_ring_header *hdr, struct gtr_event *ev,
                    uint64_t capacity);

static inline int gt_ring_emit(struct gt_ring *r, const struct gtr_event *e, uint64_t *pos_out)
{
    /* (I1) positions are handed out once each; relaxed: the position is
     * only a ticket, ordering comes from the slot's seq word. */
    uint64_t pos = __atomic_fetch_add(&r->hdr->head, 1, __ATOMIC_RELAXED);
    struct gtr_event *slot = &r->ev[pos & r->mask];
    uint64_t busy = 2 * pos + 1;

    /* (I3) claim: only from an even (committed or never written) seq that
     * is older than ours.  An odd seq means another producer is inside the
     * slot; a seq >= ours means a newer lap already owns it. */
    uint64_t s = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED);
    if (__builtin_expect((s & 1) || s >= busy, 0))
        return gt_ring_discard(r);
    if (__builtin_expect(!__atomic_compare_exchange_n(&slot->seq, &s, busy, 0, __ATOMIC_RELAXED,
                                                      __ATOMIC_RELAXED),
                         0))
        return gt_ring_discard(r);
    const uint64_t *src = (const uint64_t *)e;
    uint64_t *dst = (uint64_t *)slot;
    /* (I4) payload words are store-release: each orders the odd seq of the
     * claim above before itself, so a reader that loads any payload word of
     * ours and then re-reads seq cannot see the older even value.  (A
     * release fence would do the same once; per-word release costs nothing
     * more on x86 (plain movs) and, unlike fences, TSan understands it.) */
    for (unsigned i = 1; i < GT_EVENT_WORDS; i++)
        __atomic_store_n(&dst[i], src[i], __ATOMIC_RELEASE);

    /* (I5) store-release orders the whole payload before the commit word:
     * a reader that acquires seq == 2*pos+2 sees the complete record. */
    __atomic_store_n(&slot->seq, busy + 1, __ATOMIC_RELEASE);
    if (pos_out)
        *pos_out = pos;
    return 1;
}

/* Reader side; see the contract above.  `capacity` and `head` must come
 * from the reader's own validated copy of the ring header. */
static inline int gt_ring_read(const struct gtr_event *ev, uint64_t capacity, uint64_t pos,
                               struct gtr_event *out)
{
    const struct gtr_event *slot = &ev[pos & (capacity - 1)];
    uint64_t want = 2 * pos + 2;
    /* (R1) acquire pairs with the writer's commit release (I5). */
    uint64_t s1 = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
    if (s1 != want)
        return 0;
    const uint64_t *src = (const uint64_t *)slot;
    uint64_t *dst = (uint64_t *)out;
    dst[0] = s1;
    /* (R2) payload loads are load-acquire: the re-read of seq below cannot
     * be satisfied before them; pairs with the writer's per-word release
     * (I4).  Plain movs on x86. */
    for (unsigned i = 1; i < GT_EVENT_WORDS; i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_ACQUIRE);
    uint64_t s2 = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED);
    return s2 == want;
}

#endif /* GDRTRACE_SHIM_RING_H */
