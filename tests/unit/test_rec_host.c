/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_rec_host.c — the recorder's host-pressure section (shim/rec_host.c)
 * against what the kernel says, read by this test itself from /proc.
 *
 * A forked child opens a recorder, burns CPU on its main thread and on a
 * second thread that "drives the data path" (calls gt_rec_host_tick as
 * test() does), registers and deregisters host staging, locks a few pages,
 * closes the recorder (the closing sample), then stops itself (SIGSTOP) with
 * the second thread parked, so nothing runs between the last sample and the
 * parent's reading of /proc/<pid>/stat, /proc/<pid>/task/<tid>/stat and
 * /proc/<pid>/status.  Checks:
 *  - process user+system CPU within max(3 clock ticks, 5 %) of /proc's
 *    (ticks: /proc truncates each of utime and stime to a tick; the CPU
 *    accounting itself is the same on both sides, so the bound holds on any
 *    machine and kernel); user and system never above /proc's plus a tick;
 *  - the data-path thread is the one slot claimed, with its tid, and its CPU
 *    within max(3 ticks, 5 %) of its task's stat; the main thread (which
 *    never called tick) holds no slot;
 *  - staging: high-water = the most registered at once, now = what is left,
 *    total = every byte, registrations alive = 1;
 *  - resident high-water within 5 % (or 1 MiB) of VmHWM, and VmLck's
 *    high-water at least what the child saw in VmLck after its mlock
 *    (nothing to check where mlock is refused or, under ASan, a no-op);
 *  - samples: the creation's, the periodic ones (the second thread ticks
 *    until one was taken), the close's; the cost of sampling recorded and
 *    positive.
 * Every amount of work is counted (CPU seconds of a thread, samples taken),
 * never timed, so a loaded machine only makes the test slower.
 * Then the helper process (format 1.7, the GPU-memory copier's place): two
 * children burn CPU one after the other as this process's helper
 * (gt_helper_pid_set); the recorder's helper_* hold each one's CPU within
 * 3 ticks of its /proc stat, keep the first's after it exits (flag
 * HELPER_UNREADABLE) and add the second's on top; helper_count 2.
 * Exit 0 pass, 1 fail.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/check.h"

#include "tools/lib/recfile.h"
#include "common/procid.h"
#include "shim/rec_host.h"
#include "shim/recorder.h"

static int failures;
static struct gt_recorder g_rec;
static volatile int g_park;
static int g_pipe[2];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile uint64_t g_sink;

/* The work is counted in CPU seconds, never wall time: a loaded machine only
 * takes longer.  BURN_CAP_S of wall time bounds each wait all the same, so
 * a thread that gets no CPU at all fails a check instead of hanging. */
#define BURN_CAP_S 120.0

static double cpu_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burns `seconds` of the calling thread's CPU time. */
static void burn(double seconds)
{
    double start = cpu_s(CLOCK_THREAD_CPUTIME_ID), cap = now_s() + BURN_CAP_S;
    uint64_t x = 1;
    while (cpu_s(CLOCK_THREAD_CPUTIME_ID) - start < seconds && now_s() < cap)
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    g_sink = x;
}

static void *driver(void *arg)
{
    (void)arg;
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    if (write(g_pipe[1], &tid, sizeof(tid)) != (ssize_t)sizeof(tid))
        return NULL;
    /* the data path: many test() calls, with CPU between them, until a
     * periodic sample was taken (a tick found a second gone) and this thread
     * used 0.15 s of CPU: counted, so a starved thread only takes longer */
    uint64_t samples0 = __atomic_load_n(&g_rec.host->samples, __ATOMIC_ACQUIRE);
    double cpu0 = cpu_s(CLOCK_THREAD_CPUTIME_ID), cap = now_s() + BURN_CAP_S;
    while ((__atomic_load_n(&g_rec.host->samples, __ATOMIC_ACQUIRE) == samples0 ||
            cpu_s(CLOCK_THREAD_CPUTIME_ID) - cpu0 < 0.15) &&
           now_s() < cap) {
        gt_rec_host_tick(&g_rec);
        for (int i = 0; i < 2000; i++)
            g_sink = g_sink * 6364136223846793005ull + 1;
    }
    __atomic_store_n(&g_park, 1, __ATOMIC_RELEASE);
    for (;;)
        pause(); /* parked: no CPU until the parent kills the process */
    return NULL;
}

static int child(const char *dir)
{
    struct gt_rec_config cfg = {.dir = dir, .mode = -1, .ndevs = 1, .ncomms = 2, .events_all = 0};
    char err[512];
    if (gt_rec_open(&g_rec, &cfg, err, sizeof(err))) {
        fprintf(stderr, "child: %s\n", err);
        return 2;
    }
    burn(0.25); /* with the driver's 0.15 s: the process used at least 0.4 s */
    gt_rec_host_staging(&g_rec, 3 << 20);
    gt_rec_host_staging(&g_rec, 1 << 20);
    gt_rec_host_staging(&g_rec, -(3 << 20));
    static char locked[16 << 10] __attribute__((aligned(4096)));
    memset(locked, 1, sizeof(locked));
    mlock(locked, sizeof(locked)); /* may be refused (RLIMIT_MEMLOCK 0), or be a no-op (ASan) */
    gt_rec_host_sample(&g_rec);
    /* what the kernel counted, as this process sees it: the parent's bound */
    int64_t lck_kb = 0;
    FILE *sf = fopen("/proc/self/status", "r");
    char line[256];
    while (sf && fgets(line, sizeof(line), sf))
        if (!strncmp(line, "VmLck:", 6))
            lck_kb = strtoll(line + 6, NULL, 10);
    if (sf)
        fclose(sf);
    if (write(g_pipe[1], &lck_kb, sizeof(lck_kb)) != (ssize_t)sizeof(lck_kb))
        return 2;
    munlock(locked, sizeof(locked));
    pthread_t th;
    if (pthread_create(&th, NULL, driver, NULL))
        return 2;
    while (!__atomic_load_n(&g_park, __ATOMIC_ACQUIRE))
        burn(0.01);
    gt_rec_close(&g_rec);
    raise(SIGSTOP);
    return 0;
}

/* utime + stime (fields 14, 15) of a stat file, in ticks; -1 unreadable. */
static int stat_ticks(const char *path, long long *ut, long long *st)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char buf[2048] = "";
    char *ok = fgets(buf, sizeof(buf), f);
    fclose(f);
    char *p = ok ? strrchr(buf, ')') : NULL;
    if (!p)
        return -1;
    /* after ")": field 3 is the state; utime is field 14 */
    for (int field = 2; field < 14 && p; field++)
        p = strchr(p + 1, ' ');
    if (!p || sscanf(p + 1, "%lld %lld", ut, st) != 2)
        return -1;
    return 0;
}

static long long status_kb(pid_t pid, const char *name)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long long v = -1;
    size_t n = strlen(name);
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, name, n) && line[n] == ':')
            v = strtoll(line + n + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

static int near(double got, double want, double floor_abs)
{
    double tol = want * 0.05 > floor_abs ? want * 0.05 : floor_abs;
    return got >= want - tol && got <= want + tol;
}

/* A helper child: burns `seconds` of CPU time, says so on `fd`, then waits to
 * be killed.  Returns its pid. */
static pid_t helper_child(double seconds, int fd)
{
    pid_t p = fork();
    if (p == 0) {
        /* CPU seconds, not wall time: a loaded machine only takes longer */
        struct timespec ts;
        do {
            burn(0.01);
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        } while ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 < seconds);
        char c = 1;
        if (write(fd, &c, 1) != 1)
            _exit(2);
        for (;;)
            pause();
    }
    char c;
    if (p > 0 && read(g_pipe[0], &c, 1) != 1)
        return -1;
    return p;
}

static int helper_checks(void)
{
    char dir[] = "/tmp/gt_rec_helper.XXXXXX";
    REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    REQUIRE(pipe(g_pipe) == 0, "pipe");
    struct gt_recorder rec;
    struct gt_rec_config cfg = {.dir = dir, .mode = -1, .ndevs = 1, .ncomms = 2, .events_all = 0};
    char err[512], path[PATH_MAX];
    REQUIRE(gt_rec_open(&rec, &cfg, err, sizeof(err)) == 0, "%s", err);
    snprintf(path, sizeof(path), "%s", rec.path);
    struct gtr_host *h = rec.host;
    double tick = 1.0 / (double)sysconf(_SC_CLK_TCK);
    long long ut, st, total = 0;
    CHECK(h->helper_pid == 0 && h->helper_count == 0 && !h->helper_utime_ns,
          "a helper before any ran (pid %u)", h->helper_pid);

    pid_t a = helper_child(0.3, g_pipe[1]);
    REQUIRE(a > 0, "fork");
    gt_helper_pid_set(a);
    gt_rec_host_sample(&rec);
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)a);
    REQUIRE(stat_ticks(path, &ut, &st) == 0, "cannot read %s", path);
    total = ut + st;
    double got = (double)(h->helper_utime_ns + h->helper_stime_ns) / 1e9;
    printf("helper %d: recorder %.3f s, /proc %.3f s\n", (int)a, got, (double)total * tick);
    CHECK(near(got, (double)total * tick, 3 * tick), "helper CPU %.3f s vs /proc %.3f s", got,
          (double)total * tick);
    CHECK(got >= 0.2, "the helper burnt 0.3 s, the recorder says %.3f s", got);
    CHECK(h->helper_pid == (uint32_t)a && h->helper_count == 1, "pid %u count %u", h->helper_pid,
          h->helper_count);

    kill(a, SIGKILL);
    waitpid(a, NULL, 0);
    gt_rec_host_sample(&rec);
    CHECK(h->flags & GTR_HOST_HELPER_UNREADABLE, "an exited helper not flagged (%#x)", h->flags);
    CHECK((double)(h->helper_utime_ns + h->helper_stime_ns) / 1e9 == got,
          "an exited helper's CPU changed");

    pid_t b = helper_child(0.2, g_pipe[1]);
    REQUIRE(b > 0, "fork");
    gt_helper_pid_set(b);
    gt_rec_host_sample(&rec);
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)b);
    REQUIRE(stat_ticks(path, &ut, &st) == 0, "cannot read %s", path);
    total += ut + st;
    got = (double)(h->helper_utime_ns + h->helper_stime_ns) / 1e9;
    printf("helpers %d then %d: recorder %.3f s, /proc %.3f s\n", (int)a, (int)b, got,
           (double)total * tick);
    CHECK(near(got, (double)total * tick, 4 * tick), "two helpers' CPU %.3f s vs /proc %.3f s", got,
          (double)total * tick);
    CHECK(h->helper_pid == (uint32_t)b && h->helper_count == 2, "pid %u count %u", h->helper_pid,
          h->helper_count);
    CHECK(!(h->flags & GTR_HOST_HELPER_UNREADABLE), "a running helper flagged (%#x)", h->flags);
    kill(b, SIGKILL);
    waitpid(b, NULL, 0);
    gt_helper_pid_set(0);
    snprintf(path, sizeof(path), "%s", rec.path);
    gt_rec_close(&rec);
    gt_rec_unmap(&rec);
    unlink(path);
    rmdir(dir);
    close(g_pipe[0]);
    close(g_pipe[1]);
    return 0;
}

int main(void)
{
    char dir[] = "/tmp/gt_rec_host.XXXXXX";
    REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    REQUIRE(pipe(g_pipe) == 0, "pipe");
    pid_t pid = fork();
    REQUIRE(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0)
        _exit(child(dir));
    uint32_t tid = 0;
    int64_t lck_kb = -1;
    close(g_pipe[1]);
    REQUIRE(read(g_pipe[0], &lck_kb, sizeof(lck_kb)) == (ssize_t)sizeof(lck_kb),
            "child sent no VmLck");
    REQUIRE(read(g_pipe[0], &tid, sizeof(tid)) == (ssize_t)sizeof(tid), "child sent no tid");
    int st;
    REQUIRE(waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st), "child did not stop (%#x)", st);
    double tick = 1.0 / (double)sysconf(_SC_CLK_TCK);

    char path[PATH_MAX];
    long long ut = 0, stt = 0, tut = 0, tst = 0;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int have = stat_ticks(path, &ut, &stt) == 0;
    snprintf(path, sizeof(path), "/proc/%d/task/%u/stat", (int)pid, tid);
    int have_t = stat_ticks(path, &tut, &tst) == 0;
    long long hwm_kb = status_kb(pid, "VmHWM");
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    REQUIRE(have && have_t, "cannot read the child's /proc stat files");

    char name[256] = "";
    DIR *dp = opendir(dir);
    for (struct dirent *e = dp ? readdir(dp) : NULL; e; e = readdir(dp))
        if (e->d_name[0] != '.')
            snprintf(name, sizeof(name), "%s", e->d_name);
    if (dp)
        closedir(dp);
    REQUIRE(name[0], "no recorder in %s", dir);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct gt_recfile r;
    char err[GT_ERRLEN];
    REQUIRE(gt_recfile_load_file(path, &r, err, sizeof(err)) == 0, "%s", err);
    const struct gtr_host *h = r.host;
    REQUIRE(r.has_host && h, "no host section");
    CHECK(r.hdr.version_minor >= 5, "minor %u", r.hdr.version_minor);

    double cpu = (double)(h->utime_ns + h->stime_ns) / 1e9;
    double proc = (double)(ut + stt) * tick;
    printf("process CPU: recorder %.3f s (user %.3f, system %.3f), /proc %.3f s; tick %.4f s\n",
           cpu, (double)h->utime_ns / 1e9, (double)h->stime_ns / 1e9, proc, tick);
    CHECK(near(cpu, proc, 3 * tick), "process CPU %.3f s vs /proc %.3f s", cpu, proc);
    CHECK((double)h->utime_ns / 1e9 <= (double)ut * tick + 2 * tick, "user %.3f vs /proc %.3f",
          (double)h->utime_ns / 1e9, (double)ut * tick);
    CHECK(cpu >= 0.3, "the child burnt at least 0.4 s, the recorder says %.3f s", cpu);
    CHECK(h->utime_at_open_ns + h->stime_at_open_ns < h->utime_ns + h->stime_ns,
          "CPU at open %llu not below the last",
          (unsigned long long)(h->utime_at_open_ns + h->stime_at_open_ns));

    CHECK(h->nthreads == 1, "%u thread slots, expected 1 (the data-path thread)", h->nthreads);
    const struct gtr_host_thread *t = &h->threads[0];
    CHECK(t->tid == tid, "slot 0 tid %u, expected %u", t->tid, tid);
    double tcpu = (double)t->cpu_ns / 1e9, tproc = (double)(tut + tst) * tick;
    printf("data-path thread %u CPU: recorder %.3f s (from %.3f), /proc %.3f s\n", tid, tcpu,
           (double)t->cpu_first_ns / 1e9, tproc);
    CHECK(near(tcpu, tproc, 3 * tick), "thread CPU %.3f s vs /proc %.3f s", tcpu, tproc);
    CHECK(t->cpu_ns > t->cpu_first_ns && t->last_mono_ns > t->first_mono_ns && !t->gone,
          "thread slot not advanced");

    CHECK(h->staging_hwm_bytes == 4u << 20, "staging high-water %llu",
          (unsigned long long)h->staging_hwm_bytes);
    CHECK(h->staging_bytes == 1u << 20, "staging now %llu", (unsigned long long)h->staging_bytes);
    CHECK(h->staging_total_bytes == 4u << 20, "staging total %llu",
          (unsigned long long)h->staging_total_bytes);
    CHECK(h->staging_regs == 1, "staging registrations alive %llu",
          (unsigned long long)h->staging_regs);

    double hwm = (double)h->rss_hwm_bytes, want = (double)hwm_kb * 1024;
    CHECK(hwm_kb > 0 && (near(hwm, want, 1 << 20)), "VmHWM %.0f vs /proc %.0f", hwm, want);
    if (lck_kb > 0)
        CHECK(h->locked_hwm_bytes >= (uint64_t)lck_kb * 1024,
              "VmLck high-water %llu, the child saw VmLck %lld kB",
              (unsigned long long)h->locked_hwm_bytes, (long long)lck_kb);
    else
        printf("mlock not counted here (VmLck %lld kB): its high-water not checked\n",
               (long long)lck_kb);
    CHECK(h->locked_bytes == 0, "VmLck now %llu after munlock",
          (unsigned long long)h->locked_bytes);

    printf("samples %llu, sampling cost %.1f us each\n", (unsigned long long)h->samples,
           h->samples ? (double)h->sample_cost_ns / (double)h->samples / 1e3 : 0.0);
    CHECK(h->samples >= 4, "samples %llu: open, explicit, >= 1 periodic, close",
          (unsigned long long)h->samples);
    CHECK(h->sample_cost_ns > 0 && h->last_mono_ns > h->first_mono_ns, "no cost or times");
    CHECK(h->flags == 0, "flags %#x", h->flags);
    gt_recfile_free(&r);
    unlink(path);
    rmdir(dir);
    if (helper_checks())
        failures++;
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
