/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rec_host.h — the writer of the recorder's host-pressure section (1.5,
 * struct gtr_host): what the process costs its host, sampled from calls that
 * already happen, with no thread of gdrtrace's own.
 *
 * When a sample is taken (process CPU by getrusage, Vm* from
 * /proc/self/status, every claimed data-path thread's CPU clock):
 *   - at the recorder's creation (gt_rec_open: the *_at_open values),
 *   - at each connection set up (gt_rec_host_sample from connect/accept),
 *     and at each one closed, unless a sample is younger than 10 ms,
 *   - at most once a second from test(): gt_rec_host_tick() counts the
 *     calling thread's calls and only every GT_REC_HOST_EVERY-th reads the
 *     clock (no system call) and compares it with the next due time,
 *   - at close (gt_rec_close), so a crashed job keeps its last sample.
 * Staging bytes change at each host registration and deregistration.
 *
 * Invariants:
 *  H1. On the data path, a call costs one thread-local increment and a
 *      branch; one in GT_REC_HOST_EVERY adds a clock read and a compare.  The
 *      system calls of a sample happen on the thread that finds the second
 *      gone (or a cold path), at most once a second, one sampler at a time.
 *  H2. A data-path thread claims one of GTR_HOST_THREADS slots once (the
 *      first check on that thread); slots are never reused.  A thread's CPU
 *      is read through its per-thread CPU clock (made from its tid, as
 *      glibc's pthread_getcpuclockid does), so one sampler reads every
 *      thread; a thread that exited keeps its last value (gone = 1).
 *  H3. Nothing here allocates; a failed read leaves a flag, never an error
 *      for the job.
 */
#ifndef GDRTRACE_SHIM_REC_HOST_H
#define GDRTRACE_SHIM_REC_HOST_H

#include <stdint.h>

#include "shim/recorder.h"

/* Calls of a thread between two clock checks: a power of two. */
#define GT_REC_HOST_EVERY 16u

extern __thread uint32_t gt_rec_host_calls __attribute__((tls_model("initial-exec")));

/* The first sample; called by gt_rec_open once the section is laid out. */
void gt_rec_host_open(struct gt_recorder *r);

/* A sample now (cold paths: connection setup, close).  Skipped when another
 * thread is sampling at this moment. */
void gt_rec_host_sample(struct gt_recorder *r);

/* A sample unless the latest is younger than min_age_ns (connection
 * teardown: NCCL closes its connections from the threads about to exit, so
 * their last CPU is read here; the age bounds the cost of a teardown of
 * thousands of connections). */
void gt_rec_host_sample_aged(struct gt_recorder *r, int64_t min_age_ns);

/* Host memory registered (delta > 0) or deregistered (delta < 0) by the
 * data path (regMr NCCL_PTR_HOST); any thread. */
void gt_rec_host_staging(struct gt_recorder *r, int64_t delta);

/* The slow part of the tick: claim this thread's slot, compare the clock,
 * sample when the second is gone. */
void gt_rec_host_check(struct gt_recorder *r);

/* From test() (any data-path call): H1. */
static inline void gt_rec_host_tick(struct gt_recorder *r)
{
    if (__builtin_expect((++gt_rec_host_calls & (GT_REC_HOST_EVERY - 1)) != 0, 1))
        return;
    gt_rec_host_check(r);
}

#endif /* GDRTRACE_SHIM_REC_HOST_H */
