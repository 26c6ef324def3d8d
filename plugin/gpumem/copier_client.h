/* SPDX-License-Identifier: Apache-2.0 */
/*
 * copier_client.h — the plugin's side of the copier process
 * (the layer's one copy mode; protocol in copier_proto.h, the
 * process in copier_main.c, docs/gpumem.md "The copier process").
 *
 * Owns: the one copier of the process (spawned at the first GPU
 * registration, stopped at the layer's last finalize), its control socket,
 * the shared command region and its blocks of command slots.
 * Threads: start, import, release, block_get/put and stop take the client's
 * lock and may block (connection setup, deregistration, close: never the
 * data path).  post, state and alive take no lock and make no system call,
 * except post's FUTEX_WAKE when the copier sleeps and alive's poll(), which
 * the caller makes rare.
 */
#ifndef GDRTRACE_GPUMEM_COPIER_CLIENT_H
#define GDRTRACE_GPUMEM_COPIER_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "plugin/gpumem/copier_proto.h"

/* A GPU range the copier imported: its id there and the plugin's mapping
 * of the shared staging mirror (size bytes, the range's image). */
struct gt_gpumem_creg {
    uint32_t reg;
    uint32_t gen; /* the copier's generation it belongs to */
    void *mirror;
    size_t size;
};

/*! gt_gpumem_copier_import() : starts the copier if needed and has it map
 *  [a, a + size) of GPU memory (one allocation: cuMem/VMM exported as a
 *  POSIX fd, else legacy CUDA IPC) and pin a shared mirror of it.  0, or an
 *  errno with one line in `why` naming the call and its result. */
int gt_gpumem_copier_import(uintptr_t a, size_t size, struct gt_gpumem_creg *out, char *why,
                            size_t whylen);

/*! gt_gpumem_copier_release() : the copier unmaps it; the mirror is
 *  unmapped here.  Quiet when the copier is gone (nothing is left to undo). */
void gt_gpumem_copier_release(struct gt_gpumem_creg *r);

/*! gt_gpumem_copier_block_get() : a block of GMC_SLOTS_PER_BLOCK command
 *  slots for one comm; its first slot, or NULL with `why` (no copier, or
 *  every block in use).  *region: the region it lies in (mapped until the
 *  process exits if a comm still holds a block when the copier stops);
 *  *gen: the copier generation it belongs to. */
struct gmc_cmd *gt_gpumem_copier_block_get(struct gmc_region **region, uint32_t *gen, char *why,
                                           size_t whylen);

/*! gt_gpumem_copier_block_put() : gives a comm's block back once none of
 *  its copies is pending in the copier (waits up to 5 s; a block still busy
 *  then is never reused). */
void gt_gpumem_copier_block_put(struct gmc_cmd *first, uint32_t gen);

/*! gt_gpumem_copier_post() : hands one copy to the copier (the slot must
 *  be IDLE, DONE or FAILED: the caller's).  Release store; FUTEX_WAKE only
 *  when the copier said it sleeps. */
void gt_gpumem_copier_post(struct gmc_region *r, struct gmc_cmd *c, uint32_t dir, uint32_t reg,
                           uint64_t off, uint64_t size);

/*! gt_gpumem_copier_state() : the slot's state (acquire load). */
static inline uint32_t gt_gpumem_copier_state(struct gmc_cmd *c)
{
    return atomic_load_explicit(&c->state, memory_order_acquire);
}

/*! gt_gpumem_copier_alive() : 1 while the copier of generation `gen` runs;
 *  else 0 with one line in `why` ("copier process 1234 exited …").  One
 *  poll() of the socket, no wait. */
int gt_gpumem_copier_alive(uint32_t gen, char *why, size_t whylen);

/* What a pending copy saw of the copier's heartbeat (copier_proto.h
 * invariant 5): zeroed when the copy is posted. */
struct gt_gpumem_watch {
    uint64_t beat;
    long long since; /* CLOCK_MONOTONIC ns when beat was last seen to change; 0: never */
};

/*! gt_gpumem_copier_progress() : for a copy still pending: 1 while the
 *  copier's heartbeat in region r moves, or stood still for less than
 *  GDRTRACE_GPUMEM_COPIER_TIMEOUT (default 10 s) as seen by this copy;
 *  else the copier of generation gen is marked gone and 0 with one line in
 *  `why` ("copier process 1234 made no progress for 10 s … (state T
 *  (stopped) …)").  No system call but clock_gettime until then. */
int gt_gpumem_copier_progress(uint32_t gen, struct gmc_region *r, struct gt_gpumem_watch *w,
                              char *why, size_t whylen);

/*! gt_gpumem_copier_stop() : closes the socket (the copier exits on the
 *  hang-up); the next import starts a new copier. */
void gt_gpumem_copier_stop(void);

/*! gt_gpumem_copier_pid() : the running copier's pid, 0 if none (tests). */
pid_t gt_gpumem_copier_pid(void);

#endif
