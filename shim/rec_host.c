/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rec_host.c — samples the process's host pressure into the recorder's
 * host section (see rec_host.h for when, and its invariants H1-H3).
 */
#include "shim/rec_host.h"

#include "common/procid.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

__thread uint32_t gt_rec_host_calls __attribute__((tls_model("initial-exec")));

/* The host section this thread claimed a slot in (or found full): NULL
 * before its claim.  A section, not a flag: tests open several recorders
 * in one process, one after another. */
static __thread struct gtr_host *tls_claimed __attribute__((tls_model("initial-exec")));

static inline void st64(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline void sti64(int64_t *p, int64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static void max64(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > cur &&
           !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* The calling thread's CPU time: a sample's cost is CPU, not wall time (a
 * rank bound to one core shares it with its proxy thread, so the wall time
 * of a sample counts the other thread's turns). */
static int64_t thread_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The per-thread CPU clock of thread `tid` of this process: the kernel's
 * encoding (CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED, the tid inverted in the
 * high bits), the one glibc's pthread_getcpuclockid builds. */
static clockid_t thread_clock(uint32_t tid)
{
    return (clockid_t)(((~tid) << 3) | 6u);
}

static int thread_cpu_ns(uint32_t tid, uint64_t *ns)
{
    struct timespec ts;
    if (clock_gettime(thread_clock(tid), &ts) != 0)
        return -1;
    *ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return 0;
}

/* "Name:   1234 kB" of /proc/self/status, in bytes; 0 when absent. */
static uint64_t status_kb(const char *buf, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = buf; p && *p;) {
        if (strncmp(p, name, n) == 0 && p[n] == ':') {
            uint64_t v = 0;
            for (p += n + 1; *p == ' ' || *p == '\t'; p++)
                ;
            for (; *p >= '0' && *p <= '9'; p++)
                v = v * 10 + (uint64_t)(*p - '0');
            return v * 1024;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return 0;
}

/* /proc/self/status into buf (no stdio: nothing allocated); 0 or -1. */
static int read_status(char *buf, size_t n)
{
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < n) {
        ssize_t k = read(fd, buf + got, n - 1 - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    buf[got] = '\0';
    return got ? 0 : -1;
}

static void sample_threads(struct gtr_host *h, int64_t now)
{
    uint32_t n = __atomic_load_n(&h->nthreads, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n && i < GTR_HOST_THREADS; i++) {
        struct gtr_host_thread *t = &h->threads[i];
        uint32_t tid = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE);
        if (!tid || __atomic_load_n(&t->gone, __ATOMIC_RELAXED))
            continue;
        uint64_t ns;
        if (thread_cpu_ns(tid, &ns) != 0) {
            __atomic_store_n(&t->gone, 1, __ATOMIC_RELAXED);
            continue;
        }
        st64(&t->cpu_ns, ns);
        sti64(&t->last_mono_ns, now);
    }
}

static uint64_t tv_ns(const struct timeval *tv)
{
    return (uint64_t)tv->tv_sec * 1000000000u + (uint64_t)tv->tv_usec * 1000u;
}

/* The helper process's CPU (the copier's), added to what earlier helpers
 * used: a helper that exited keeps its last reading, a new pid starts on
 * top of the old total.  The caller holds r->host_busy. */
static uint32_t sample_helper(struct gt_recorder *r, struct gtr_host *h)
{
    int pid = gt_helper_pid();
    if (pid != r->helper_pid && pid > 0) {
        r->helper_base_u += r->helper_last_u;
        r->helper_base_s += r->helper_last_s;
        r->helper_last_u = r->helper_last_s = 0;
        r->helper_pid = pid;
        __atomic_store_n(&h->helper_pid, (uint32_t)pid, __ATOMIC_RELAXED);
        __atomic_fetch_add(&h->helper_count, 1, __ATOMIC_RELAXED);
    }
    if (r->helper_pid <= 0)
        return 0;
    uint64_t u, s;
    if (gt_proc_cpu_ns(r->helper_pid, &u, &s) != 0)
        return GTR_HOST_HELPER_UNREADABLE; /* exited: its last reading stands */
    if (u >= r->helper_last_u && s >= r->helper_last_s) {
        r->helper_last_u = u;
        r->helper_last_s = s;
    }
    st64(&h->helper_utime_ns, r->helper_base_u + r->helper_last_u);
    st64(&h->helper_stime_ns, r->helper_base_s + r->helper_last_s);
    return 0;
}

/* One sample of the process; the caller holds r->host_busy. */
static void sample_locked(struct gt_recorder *r, int first)
{
    struct gtr_host *h = r->host;
    int64_t t0 = mono_ns(), c0 = thread_ns();
    uint32_t flags = 0;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        if (first) {
            st64(&h->utime_at_open_ns, tv_ns(&ru.ru_utime));
            st64(&h->stime_at_open_ns, tv_ns(&ru.ru_stime));
        }
        st64(&h->utime_ns, tv_ns(&ru.ru_utime));
        st64(&h->stime_ns, tv_ns(&ru.ru_stime));
    } else {
        flags |= GTR_HOST_RUSAGE_FAILED;
    }
    char buf[4096];
    if (read_status(buf, sizeof(buf)) == 0) {
        uint64_t lck = status_kb(buf, "VmLck"), pin = status_kb(buf, "VmPin");
        max64(&h->rss_hwm_bytes, status_kb(buf, "VmHWM"));
        st64(&h->rss_bytes, status_kb(buf, "VmRSS"));
        st64(&h->locked_bytes, lck);
        st64(&h->pinned_bytes, pin);
        max64(&h->locked_hwm_bytes, lck);
        max64(&h->pinned_hwm_bytes, pin);
    } else {
        flags |= GTR_HOST_STATUS_UNREADABLE;
    }
    flags |= sample_helper(r, h);
    int64_t now = mono_ns();
    sample_threads(h, now);
    if (first)
        sti64(&h->first_mono_ns, t0);
    sti64(&h->last_mono_ns, now);
    __atomic_store_n(&h->flags, flags, __ATOMIC_RELAXED);
    int64_t cost = thread_ns() - c0;
    __atomic_fetch_add(&h->sample_cost_ns, (uint64_t)(cost > 0 ? cost : 0), __ATOMIC_RELAXED);
    __atomic_fetch_add(&h->samples, 1, __ATOMIC_RELAXED);
}

static int try_sample(struct gt_recorder *r, int first)
{
    if (!r->host || __atomic_exchange_n(&r->host_busy, 1, __ATOMIC_ACQUIRE))
        return 0;
    sample_locked(r, first);
    __atomic_store_n(&r->host_busy, 0, __ATOMIC_RELEASE);
    return 1;
}

void gt_rec_host_open(struct gt_recorder *r)
{
    r->host_busy = 0;
    r->helper_pid = 0;
    r->helper_base_u = r->helper_base_s = r->helper_last_u = r->helper_last_s = 0;
    r->host_due = gt_clock_now() + gt_clock_g.hz;
    try_sample(r, 1);
}

void gt_rec_host_sample(struct gt_recorder *r)
{
    try_sample(r, 0);
}

void gt_rec_host_sample_aged(struct gt_recorder *r, int64_t min_age_ns)
{
    if (!r->host ||
        mono_ns() - __atomic_load_n(&r->host->last_mono_ns, __ATOMIC_RELAXED) < min_age_ns)
        return;
    try_sample(r, 0);
}

void gt_rec_host_staging(struct gt_recorder *r, int64_t delta)
{
    struct gtr_host *h = r->host;
    if (!h || !delta)
        return;
    if (delta > 0) {
        uint64_t now = __atomic_add_fetch(&h->staging_bytes, (uint64_t)delta, __ATOMIC_RELAXED);
        __atomic_fetch_add(&h->staging_regs, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&h->staging_total_bytes, (uint64_t)delta, __ATOMIC_RELAXED);
        max64(&h->staging_hwm_bytes, now);
        return;
    }
    /* never below zero: a deregistration of a buffer registered before the
     * recorder existed has nothing to take from */
    uint64_t d = (uint64_t)(-delta), cur = __atomic_load_n(&h->staging_bytes, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&h->staging_bytes, &cur, cur > d ? cur - d : 0, 1,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    uint64_t regs = __atomic_load_n(&h->staging_regs, __ATOMIC_RELAXED);
    while (regs && !__atomic_compare_exchange_n(&h->staging_regs, &regs, regs - 1, 1,
                                                __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* H2: this thread's slot, claimed once. */
static void claim(struct gt_recorder *r)
{
    struct gtr_host *h = r->host;
    uint32_t tid = gt_rec_tid();
    uint32_t i = __atomic_load_n(&h->nthreads, __ATOMIC_RELAXED);
    do {
        if (i >= GTR_HOST_THREADS) {
            __atomic_fetch_add(&h->threads_untracked, 1, __ATOMIC_RELAXED);
            tls_claimed = h;
            return;
        }
    } while (!__atomic_compare_exchange_n(&h->nthreads, &i, i + 1, 1, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED));
    struct gtr_host_thread *t = &h->threads[i];
    uint64_t ns = 0;
    thread_cpu_ns(tid, &ns);
    int64_t now = mono_ns();
    st64(&t->cpu_first_ns, ns);
    st64(&t->cpu_ns, ns);
    sti64(&t->first_mono_ns, now);
    sti64(&t->last_mono_ns, now);
    /* release: the slot's values before its tid (samplers acquire tid) */
    __atomic_store_n(&t->tid, tid, __ATOMIC_RELEASE);
    tls_claimed = h;
}

void gt_rec_host_check(struct gt_recorder *r)
{
    if (__builtin_expect(!r->host, 0))
        return;
    if (__builtin_expect(tls_claimed != r->host, 0))
        claim(r);
    uint64_t now = gt_clock_now();
    uint64_t due = __atomic_load_n(&r->host_due, __ATOMIC_RELAXED);
    if (__builtin_expect(now < due, 1))
        return;
    /* one thread wins the second; the others go on */
    if (!__atomic_compare_exchange_n(&r->host_due, &due, now + gt_clock_g.hz, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return;
    try_sample(r, 0);
}
