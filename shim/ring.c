/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ring.c — the recorder's event ring: slow path and formatting.  The fast
 * path (gt_ring_emit) and the reader (gt_ring_read) are static inline in
 * ring.h; this comment is the algorithm for both.
 *
 * A seqlock per slot over a shared ticket counter, in the spirit of LTTng-UST's
 * and Linux's printk ring buffers, reduced to fixed-size records:
 *
 *   producer:  pos = head++ (ticket)                     (I1)
 *              claim slot pos%cap: seq even & < 2pos+1 --CAS--> 2pos+1   (I3)
 *              payload words (store-release each)         (I4)
 *              seq = 2pos+2 (store-release)               (I5)
 *   reader:    s1 = seq (acquire); require s1 == 2pos+2   (R1)
 *              copy payload (load-acquire each)
 *              s2 = seq; require s2 == s1                 (R2)
 *
 * Numbered invariants:
 *  I1. Every absolute position is handed out exactly once (atomic
 *      fetch-add on hdr->head); head is the number of reservations ever made.
 *  I2. A slot's seq only grows.  0 means never written; 2p+1 means the
 *      producer of position p is writing it; 2p+2 means position p is
 *      committed there.  No other values occur.
 *  I3. A producer enters a slot only by a CAS from an even value older
 *      than its own position.  Hence at most one producer is ever inside a
 *      slot (odd seq excludes the others), and a producer that was lapped
 *      before it claimed (seq already >= 2p+1) discards its event instead of
 *      writing over a newer one.  A producer lapped while inside the slot
 *      keeps it: the newer producer finds an odd seq and discards its own
 *      event.  Either way no record ever mixes two producers' words.
 *  I4. The odd seq is ordered before every payload word (each word is a
 *      store-release, each reader load an acquire): a reader that loads any
 *      payload word of position p and then re-reads seq sees 2p+1 or later,
 *      never the older commit it started from.  Per-word release/acquire
 *      instead of fences: identical code on x86, and TSan checks it.
 *  I5. The payload is ordered before the commit (store-release on seq): a
 *      reader that acquires seq == 2p+2 reads position p's complete payload.
 *  I6. A reader accepts position p only if seq == 2p+2 both before and after
 *      copying (R1, R2).  So a record left mid-write (producer killed),
 *      one being overwritten, one overwritten already, or one discarded
 *      under I3 is never returned; every other committed record within the
 *      last `capacity` positions is.
 *  I7. After a producer dies (SIGKILL), every position it committed keeps
 *      2p+2 until a later producer overwrites it; the file is MAP_SHARED on
 *      tmpfs, so stores that retired before the kill are in the page cache.
 *
 * Progress: producers are wait-free (one fetch-add, at most one CAS attempt,
 * no loop).  Readers are wait-free and never write the ring.
 *
 * Benign races: a reader racing a producer reads payload words that may be
 * half old, half new; I6 rejects that copy.  hdr->dropped is a statistic
 * (relaxed fetch-add), not part of the protocol.
 */
#include "shim/ring.h"

#include <string.h>

int gt_ring_discard(struct gt_ring *r)
{
    __atomic_fetch_add(&r->hdr->dropped, 1, __ATOMIC_RELAXED);
    return 0;
}

void gt_ring_format(struct gt_ring *r, struct gtr_ring_header *hdr, struct gtr_event *ev,
                    uint64_t capacity)
{
    memset(hdr, 0, sizeof(*hdr));
    memset(ev, 0, capacity * sizeof(*ev));
    hdr->capacity = capacity;
    hdr->event_size = sizeof(struct gtr_event);
    hdr->mode = GTR_RING_OVERWRITE;
    r->hdr = hdr;
    r->ev = ev;
    r->mask = capacity - 1;
}
