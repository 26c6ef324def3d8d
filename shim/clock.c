/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clock.c — chooses and calibrates the recorder's timestamp clock (see
 * clock.h).
 *
 * Invariants:
 *  - gt_clock_g is written only inside the pthread_once below, before any
 *    recorder section that depends on it is published; afterwards it is
 *    read-only, so hot-path reads need no synchronisation.
 *  - kind == GTR_CLOCK_TSC only if the TSC is invariant and a calibration
 *    against CLOCK_MONOTONIC gave a plausible frequency (100 MHz .. 10 GHz).
 */
#include "shim/clock.h"

#include "common/env.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if GT_HAVE_TSC
#include <cpuid.h>
#endif

struct gt_clock gt_clock_g = {.kind = GTR_CLOCK_MONOTONIC, .mult = 1, .hz = 1000000000ull};

static pthread_once_t once = PTHREAD_ONCE_INIT;

#if GT_HAVE_TSC
static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __cpuid(0x80000007u, a, b, c, d);
    return (d >> 8) & 1;
}

/* One (mono, tsc) pair taken as close together as we can: the tsc read
 * bracketing the clock_gettime with the smallest gap wins. */
static void sample(int64_t *mono, uint64_t *tsc)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = __rdtsc();
        int64_t m = gt_clock_mono_ns();
        uint64_t t1 = __rdtsc();
        if (t1 - t0 < best) {
            best = t1 - t0;
            *mono = m;
            *tsc = t0 + (t1 - t0) / 2;
        }
    }
}
#endif

static void choose(void)
{
    struct gt_clock c = {.kind = GTR_CLOCK_MONOTONIC, .shift = 0, .mult = 1, .hz = 1000000000ull};
    c.mono0_ns = gt_clock_mono_ns();
    c.tick0 = (uint64_t)c.mono0_ns;
    /* Read on every architecture, so a bad value is reported everywhere. */
    static const char *const kinds[] = {"tsc", "monotonic", NULL};
    int want_tsc = gt_env_choice("GDRTRACE_CLOCK", kinds, 0) == 0;
#if GT_HAVE_TSC
    if (want_tsc && tsc_invariant()) {
        int64_t m0, m1;
        uint64_t t0, t1;
        sample(&m0, &t0);
        struct timespec nap = {0, 5 * 1000 * 1000};
        nanosleep(&nap, NULL);
        sample(&m1, &t1);
        if (m1 > m0 && t1 > t0) {
            uint64_t hz =
                (uint64_t)((unsigned __int128)(t1 - t0) * 1000000000u / (uint64_t)(m1 - m0));
            if (hz >= 100000000ull && hz <= 10000000000ull) {
                c.kind = GTR_CLOCK_TSC;
                c.hz = hz;
                c.shift = 32;
                c.mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / hz);
                c.tick0 = t1;
                c.mono0_ns = m1;
            }
        }
    }
#else
    (void)want_tsc;
#endif
    gt_clock_g = c;
}

void gt_clock_init(void)
{
    pthread_once(&once, choose);
}
