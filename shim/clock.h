/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clock.h — the recorder's timestamp source and tick → ns conversion.
 *
 * Writer side: gt_clock_now() returns ticks of the process's chosen clock:
 * the TSC (rdtsc, ~10 ns, no syscall) when the CPU says it is invariant
 * (CPUID 0x80000007 EDX bit 8) and calibration against CLOCK_MONOTONIC
 * succeeded; CLOCK_MONOTONIC otherwise (vDSO, ~20-30 ns; a syscall on hosts
 * whose clocksource has no vDSO path, which is why the TSC is preferred).
 * gt_clock_init() decides once; until then gt_clock_now() uses
 * CLOCK_MONOTONIC.  The choice and its calibration are written into the
 * identity section so readers convert exactly as the writer does.
 *
 * Reader side: gt_clock_ticks_to_ns() needs only the identity fields.
 * (ticks - tick0) is treated as signed (TSCs of different cores may differ
 * by a few ticks) and multiplied in 128 bits: (delta * mult) >> shift
 * overflows 64 bits after a few seconds of TSC ticks.
 */
#ifndef GDRTRACE_SHIM_CLOCK_H
#define GDRTRACE_SHIM_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "gdrtrace/recorder_format.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define GT_HAVE_TSC 1
#else
#define GT_HAVE_TSC 0
#endif

struct gt_clock {
    uint32_t kind; /* enum gtr_clock */
    uint32_t shift;
    uint64_t mult; /* ns = (ticks * mult) >> shift for deltas */
    uint64_t tick0;
    int64_t mono0_ns;
    uint64_t hz;
};

/* Process-wide; written once by gt_clock_init() before any recorder exists,
 * read-only afterwards. */
extern struct gt_clock gt_clock_g;

static inline int64_t gt_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline uint64_t gt_clock_now(void)
{
#if GT_HAVE_TSC
    if (__builtin_expect(gt_clock_g.kind == GTR_CLOCK_TSC, 1))
        return __rdtsc();
#endif
    return (uint64_t)gt_clock_mono_ns();
}

/* A duration in ticks of this process's clock, in ns. */
static inline uint64_t gt_clock_delta_ns(uint64_t dticks)
{
    if (gt_clock_g.kind != GTR_CLOCK_TSC)
        return dticks;
    return (uint64_t)(((unsigned __int128)dticks * gt_clock_g.mult) >> gt_clock_g.shift);
}

/* Chooses and calibrates the clock (idempotent, thread-safe; takes ~5 ms
 * the first time when the TSC is used).  GDRTRACE_CLOCK=monotonic forces
 * CLOCK_MONOTONIC. */
void gt_clock_init(void);

/* Reader-usable: a timestamp of a recorder with the given identity, in
 * CLOCK_MONOTONIC ns of the writer's host. */
static inline int64_t gt_clock_ticks_to_ns(const struct gtr_identity *id, uint64_t ticks)
{
    if (id->clock != GTR_CLOCK_TSC)
        return (int64_t)ticks;
    int64_t d = (int64_t)(ticks - id->clock_tick0);
    __int128 p = (__int128)d * (__int128)id->clock_mult;
    return id->clock_mono0_ns + (int64_t)(p >> (id->clock_shift & 63));
}

#endif /* GDRTRACE_SHIM_CLOCK_H */
