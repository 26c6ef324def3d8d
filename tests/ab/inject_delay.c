/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inject_delay.c — an LD_PRELOAD library that slows the data path the way a
 * slower link would: every send(), sendmsg() and recv() that moves n bytes
 * is followed by n * AB_INJECT_NS_PER_KIB / 1024 ns, slept, not burnt (no
 * host CPU added).  The calibration sets it to half the time a KiB took in
 * the baseline runs (exchange time over bytes moved): +50 % data-path
 * latency.  Short debts are carried until 100 us are owed, so the sleeps'
 * granularity does not inflate the total.  Used by the A/B calibration
 * (tests/ab/ab-calibration.sh); nothing in the product knows of it.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>

static double g_factor = -1;   /* seconds owed per byte moved */
static __thread double t_debt; /* seconds owed by this thread */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void init(void)
{
    const char *s = getenv("AB_INJECT_NS_PER_KIB");
    g_factor = s ? strtod(s, NULL) / 1024 / 1e9 : 0; /* seconds a byte */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

static void owe(ssize_t bytes)
{
    if (g_factor < 0)
        init();
    t_debt += g_factor * (double)bytes;
    if (t_debt < 100e-6)
        return;
    double t0 = now();
    struct timespec d = {(time_t)t_debt, (long)((t_debt - (double)(time_t)t_debt) * 1e9)};
    nanosleep(&d, NULL);
    t_debt -= now() - t0; /* an oversleep is paid back by the next calls */
}

__attribute__((visibility("default"))) ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    static ssize_t (*real)(int, const void *, size_t, int);
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
    ssize_t r = real(fd, buf, n, flags);
    if (r > 0)
        owe(r);
    return r;
}

__attribute__((visibility("default"))) ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    static ssize_t (*real)(int, const struct msghdr *, int);
    if (!real)
        real = (ssize_t(*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
    ssize_t r = real(fd, m, flags);
    if (r > 0)
        owe(r);
    return r;
}

__attribute__((visibility("default"))) ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    static ssize_t (*real)(int, void *, size_t, int);
    if (!real)
        real = (ssize_t(*)(int, void *, size_t, int))dlsym(RTLD_NEXT, "recv");
    ssize_t r = real(fd, buf, n, flags);
    if (r > 0)
        owe(r);
    return r;
}
