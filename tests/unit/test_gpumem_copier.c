/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gpumem_copier.c — the GPU-memory validation layer and its copier
 * process: the built gdrtrace-gpumem-copier as
 * a real second process, real sock connections on loopback, and the fake
 * libcuda (tests/harness/fake_cuda.c, through GDRTRACE_CUDA_LIB) in both
 * processes: its "device memory" is memfds the copier maps by the same
 * calls as CUDA's (cuMem export/import of a POSIX fd, legacy IPC), and its
 * copies happen only when the copier polls its events.  It proves:
 *  - data arrives intact both ways, for cuMem (VMM) and for legacy
 *    (cudaMalloc, IPC) allocations, while this process makes no copy;
 *  - a GPU send held back by a slow copy keeps its place before a later
 *    host send, and is not posted before its copy completed;
 *  - an allocation that cannot be exported, and a range that reaches beyond
 *    its allocation, are refused with the reason; so are registrations when
 *    the copier cannot be found or its CUDA cannot load;
 *  - the copier killed mid-copy fails the request and the comm (sticky)
 *    within a bound, naming the copier, instead of hanging; so does a
 *    copier stopped (SIGSTOP) with a copy pending, within
 *    GDRTRACE_GPUMEM_COPIER_TIMEOUT, while a copy slower than that bound in
 *    a running copier, or an idle spell longer than it, fails nothing;
 *  - registrations and deregistrations in a burst are answered at once,
 *    not after the idle copier's 500 ms sleep;
 *  - with the rank bound to one core, the copier runs outside it whenever
 *    another CPU is allowed (unbound: everywhere), and it sleeps while a
 *    copy is pending and while idle instead of polling;
 *  - this process has no child (waitpid(-1)), the copier is not its child,
 *    it costs no CPU when idle, and it exits when the layer finalizes and
 *    when the application dies without finalizing, even while a child the
 *    application forked still runs.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/dl/gt_cuda.h"
#include "common/gt_net.h"
#include "plugin/gpumem/copier_client.h"
#include "plugin/gpumem/gpumem.h"
#include "tests/unit/net_pair.h"

extern const struct gt_net_ops gt_sock_ops;

/* ---- the fake GPU, as the application sees it ---------------------------- */

struct alloc_prop {
    int type;
    int requested_handle_types;
    int location_type;
    int location_id;
};

static struct {
    int (*alloc)(unsigned long long *, size_t);
    int (*free)(unsigned long long);
    int (*create)(unsigned long long *, size_t, const struct alloc_prop *, unsigned long long);
    int (*reserve)(unsigned long long *, size_t, size_t, unsigned long long, unsigned long long);
    int (*map)(unsigned long long, size_t, size_t, unsigned long long, unsigned long long);
    int (*unmap)(unsigned long long, size_t);
    int (*va_free)(unsigned long long, size_t);
    int (*release)(unsigned long long);
} fc;

static char exe_dir[PATH_MAX];

/* A cuMem allocation of n bytes mapped at *p; shareable: POSIX fd requested. */
static unsigned long long vmm_alloc(size_t n, int shareable)
{
    struct alloc_prop prop = {1, shareable ? GT_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : 0,
                              GT_CU_MEM_LOCATION_TYPE_DEVICE, 0};
    unsigned long long h = 0, p = 0;
    assert_int_equal(fc.create(&h, n, &prop, 0), 0);
    assert_int_equal(fc.reserve(&p, n, 0, 0, 0), 0);
    assert_int_equal(fc.map(p, n, 0, h, 0), 0);
    assert_int_equal(fc.release(h), 0); /* the mapping keeps it, as NCCL does */
    return p;
}

static void vmm_free(unsigned long long p, size_t n)
{
    assert_int_equal(fc.unmap(p, n), 0);
    assert_int_equal(fc.va_free(p, n), 0);
}

/* ---- helpers ------------------------------------------------------------- */

static const struct gt_net_ops *ops;
static void *ctx;

static void layer_up(void)
{
    ops = gt_gpumem_wrap(&gt_sock_ops);
    assert_int_equal(ops->init(&ctx, 1, 1, NULL, NULL, NULL), GT_OK);
}

static void layer_down(void)
{
    assert_int_equal(ops->finalize(ctx), GT_OK);
    ctx = NULL;
}

static void connect_pair(void **sc, void **rc)
{
    net_connect_pair(ops, ctx, sc, rc);
}

/* regMr(CUDA), emulated peermem (GDRTRACE_REG=peermem). */
static void *reg_gpu(void *comm, unsigned long long p, size_t n)
{
    void *mh = NULL;
    struct gt_reg_report rep = {0};
    assert_int_equal(ops->reg_mr(comm, (void *)(uintptr_t)p, n, GT_PTR_CUDA, &mh, &rep), GT_OK);
    assert_int_equal(rep.method, GT_METHOD_PEERMEM);
    return mh;
}

/* Tests `reqs` until each is done; fails after 10 s. */
static void wait_all(void **reqs, int *sizes, int n)
{
    int left = n;
    double t0 = now_s();
    while (left > 0) {
        for (int i = 0; i < n; i++) {
            if (!reqs[i])
                continue;
            int d = 0;
            assert_int_equal(ops->test(reqs[i], &d, sizes ? &sizes[i] : NULL), GT_OK);
            if (d) {
                reqs[i] = NULL;
                left--;
            }
        }
        if (now_s() - t0 > 10)
            fail_msg("%d request(s) not done in 10 s", left);
    }
}

/* 'R', 'S', 'Z' …: the state of process pid, or 0 when it is gone. */
static char proc_state(pid_t pid, long *ppid, unsigned long long *cpu_ticks)
{
    char p[64], buf[1024];
    snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *rp = strrchr(buf, ')');
    char st = 0;
    long pp = 0;
    unsigned long long ut = 0, stt = 0;
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (!rp || sscanf(rp + 2, "%c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &st, &pp, &ut,
                      &stt) != 4)
        return 0;
    if (ppid)
        *ppid = pp;
    if (cpu_ticks)
        *cpu_ticks = ut + stt;
    return st;
}

/* 1 once pid is gone (or a zombie nobody of ours can reap) within `s`. */
static int gone_within(pid_t pid, double s)
{
    double t0 = now_s();
    while (now_s() - t0 < s) {
        char st = proc_state(pid, NULL, NULL);
        if (st == 0 || st == 'Z' || st == 'X')
            return 1;
        usleep(10000);
    }
    return 0;
}

static void set_delay(const char *ms)
{
    if (ms)
        setenv("FAKECUDA_COPY_DELAY_MS", ms, 1);
    else
        unsetenv("FAKECUDA_COPY_DELAY_MS");
}

/* ---- data both ways ---------------------------------------------------- */

static void both_ways(unsigned long long src, unsigned long long dst, size_t n)
{
    layer_up();
    void *sc, *rc;
    connect_pair(&sc, &rc);
    unsigned char *s = (unsigned char *)(uintptr_t)src, *d = (unsigned char *)(uintptr_t)dst;
    for (size_t i = 0; i < n; i++)
        s[i] = (unsigned char)(i * 13 + 5);
    memset(d, 0, n);
    void *smh = reg_gpu(sc, src, n), *rmh = reg_gpu(rc, dst, n);
    pid_t pid = gt_gpumem_copier_pid();
    assert_true(pid > 0);
    /* no child of ours: the intermediate was reaped, the copier is not ours */
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
    long ppid = 0;
    assert_true(proc_state(pid, &ppid, NULL) != 0);
    assert_true(ppid != getpid());

    for (int round = 0; round < 3; round++) {
        size_t len = round == 0 ? n : n / (size_t)(round + 2);
        size_t off = round == 2 ? 4096 : 0; /* a range inside the registration */
        memset(d, 0, n);
        void *reqs[2] = {NULL, NULL};
        int sizes[2] = {0, 0};
        void *sp = s + off, *dp = d + off;
        assert_int_equal(ops->isend(sc, sp, len, 7, smh, NULL, &reqs[0]), GT_OK);
        assert_non_null(reqs[0]);
        size_t rlen = len;
        int tag = 7;
        assert_int_equal(ops->irecv(rc, 1, &dp, &rlen, &tag, &rmh, NULL, &reqs[1]), GT_OK);
        assert_non_null(reqs[1]);
        wait_all(reqs, sizes, 2);
        assert_int_equal(sizes[1], (int)len);
        assert_memory_equal(s + off, d + off, len);
        if (off)
            assert_int_equal(d[0], 0); /* nothing outside the range moved */
    }
    /* Idle: the copier sleeps on its futex (a few wake-ups a second). */
    unsigned long long t1 = 0, t2 = 0;
    usleep(100000);
    assert_true(proc_state(pid, NULL, &t1) != 0);
    usleep(1000000);
    assert_true(proc_state(pid, NULL, &t2) != 0);
    long hz = sysconf(_SC_CLK_TCK);
    if (t2 - t1 > (unsigned long long)hz / 10)
        fail_msg("the idle copier used %llu ticks of CPU in 1 s (hz %ld)", t2 - t1, hz);

    assert_int_equal(ops->dereg_mr(sc, smh), GT_OK);
    assert_int_equal(ops->dereg_mr(rc, rmh), GT_OK);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    /* the last finalize closes the socket: the copier exits */
    assert_int_equal(gt_gpumem_copier_pid(), 0);
    assert_true(gone_within(pid, 5));
}

static void test_vmm_both_ways(void **state)
{
    (void)state;
    set_delay(NULL);
    const size_t N = 1 << 20;
    unsigned long long a = vmm_alloc(N, 1), b = vmm_alloc(2 * N, 1);
    both_ways(a, b + N, N); /* the receive buffer at an offset in its allocation */
    vmm_free(a, N);
    vmm_free(b, 2 * N);
}

static void test_legacy_ipc_both_ways(void **state)
{
    (void)state;
    set_delay(NULL);
    const size_t N = 256 << 10;
    unsigned long long a = 0, b = 0;
    assert_int_equal(fc.alloc(&a, N), 0);
    assert_int_equal(fc.alloc(&b, N), 0);
    both_ways(a, b, N);
    assert_int_equal(fc.free(a), 0);
    assert_int_equal(fc.free(b), 0);
}

/* ---- order ---------------------------------------------------------------- */

static void test_send_order(void **state)
{
    (void)state;
    set_delay("300"); /* each copy takes 300 ms in the copier */
    const size_t N = 64 << 10;
    unsigned long long src = vmm_alloc(N, 1), dst = vmm_alloc(N, 1);
    layer_up();
    void *sc, *rc;
    connect_pair(&sc, &rc);
    memset((void *)(uintptr_t)src, 'g', N);
    memset((void *)(uintptr_t)dst, 0, N);
    void *smh = reg_gpu(sc, src, N), *rmh = reg_gpu(rc, dst, N);
    static char host_src[4096], host_dst[4096];
    memset(host_src, 'h', sizeof(host_src));
    memset(host_dst, 0, sizeof(host_dst));
    void *hsmh = NULL, *hrmh = NULL;
    assert_int_equal(ops->reg_mr(sc, host_src, sizeof(host_src), GT_PTR_HOST, &hsmh, NULL), GT_OK);
    assert_int_equal(ops->reg_mr(rc, host_dst, sizeof(host_dst), GT_PTR_HOST, &hrmh, NULL), GT_OK);
    void *s1 = NULL, *s2 = NULL, *r[2] = {NULL, NULL};
    assert_int_equal(ops->isend(sc, (void *)(uintptr_t)src, N, 1, smh, NULL, &s1), GT_OK);
    assert_int_equal(ops->isend(sc, host_src, sizeof(host_src), 2, hsmh, NULL, &s2), GT_OK);
    assert_non_null(s1);
    assert_non_null(s2);
    void *d1 = (void *)(uintptr_t)dst, *d2 = host_dst;
    size_t n1 = N, n2 = sizeof(host_dst);
    int t1 = 1, t2 = 2;
    assert_int_equal(ops->irecv(rc, 1, &d1, &n1, &t1, &rmh, NULL, &r[0]), GT_OK);
    assert_int_equal(ops->irecv(rc, 1, &d2, &n2, &t2, &hrmh, NULL, &r[1]), GT_OK);
    /* While the GPU send's copy is held back, neither send moves. */
    double t0 = now_s();
    while (now_s() - t0 < 0.15) {
        int d = 0;
        assert_int_equal(ops->test(s2, &d, NULL), GT_OK);
        assert_false(d);
        assert_int_equal(ops->test(s1, &d, NULL), GT_OK);
        assert_false(d);
        assert_int_equal(ops->test(r[1], &d, NULL), GT_OK);
        assert_false(d);
    }
    void *all[4] = {s1, s2, r[0], r[1]};
    int sizes[4];
    wait_all(all, sizes, 4);
    /* The GPU payload went first, into the GPU receive: issue order kept. */
    assert_int_equal(sizes[2], (int)N);
    assert_int_equal(sizes[3], (int)sizeof(host_src));
    assert_memory_equal((void *)(uintptr_t)src, (void *)(uintptr_t)dst, N);
    assert_memory_equal(host_src, host_dst, sizeof(host_src));
    assert_int_equal(ops->dereg_mr(sc, smh), GT_OK);
    assert_int_equal(ops->dereg_mr(rc, rmh), GT_OK);
    assert_int_equal(ops->dereg_mr(sc, hsmh), GT_OK);
    assert_int_equal(ops->dereg_mr(rc, hrmh), GT_OK);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    vmm_free(src, N);
    vmm_free(dst, N);
    set_delay(NULL);
}

/* ---- refusals --------------------------------------------------------------- */

static void expect_refusal(void *comm, unsigned long long p, size_t n, const char *needle)
{
    void *mh = NULL;
    struct gt_reg_report rep = {0};
    uint32_t mark = gt_net_fail_mark();
    assert_int_not_equal(ops->reg_mr(comm, (void *)(uintptr_t)p, n, GT_PTR_CUDA, &mh, &rep), GT_OK);
    assert_null(mh);
    assert_int_equal(rep.method, GT_METHOD_FAILED);
    struct gt_net_failure f;
    assert_int_equal(gt_net_failure_since(mark, &f), 1);
    if (!strstr(f.text, needle))
        fail_msg("refusal '%s' lacks '%s'", f.text, needle);
}

static void test_refusals(void **state)
{
    (void)state;
    set_delay(NULL);
    const size_t N = 64 << 10;
    unsigned long long priv = vmm_alloc(N, 0), ok = vmm_alloc(N, 1);
    layer_up();
    void *sc, *rc;
    connect_pair(&sc, &rc);
    expect_refusal(sc, priv, N, "cuMemExportToShareableHandle(POSIX_FILE_DESCRIPTOR) failed");
    expect_refusal(sc, ok + 4096, N, "reaches beyond its allocation");
    /* the comm still registers what can be shared */
    void *mh = reg_gpu(sc, ok, N);
    assert_int_equal(ops->dereg_mr(sc, mh), GT_OK);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    vmm_free(priv, N);
    vmm_free(ok, N);
}

/* A copier that cannot be found, or whose CUDA cannot load: the
 * registration is refused naming it; the next init tries again. */
static void test_copier_setup_failures(void **state)
{
    (void)state;
    set_delay(NULL);
    const size_t N = 64 << 10;
    unsigned long long p = vmm_alloc(N, 1);
    char copier[PATH_MAX], lib[PATH_MAX];
    snprintf(copier, sizeof(copier), "%s", getenv("GDRTRACE_GPUMEM_COPIER"));
    snprintf(lib, sizeof(lib), "%s", getenv("GDRTRACE_CUDA_LIB"));

    setenv("GDRTRACE_GPUMEM_COPIER", "/nonexistent/gdrtrace-gpumem-copier", 1);
    layer_up();
    void *sc, *rc;
    connect_pair(&sc, &rc);
    expect_refusal(sc, p, N,
                   "GDRTRACE_GPUMEM_COPIER=/nonexistent/gdrtrace-gpumem-copier is not an "
                   "executable file");
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    setenv("GDRTRACE_GPUMEM_COPIER", copier, 1);

    /* this process loaded its CUDA already: only the copier sees the change */
    setenv("GDRTRACE_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
    layer_up();
    connect_pair(&sc, &rc);
    expect_refusal(sc, p, N, "copier: CUDA unavailable: dlopen /nonexistent/libcuda.so.1 failed");
    expect_refusal(rc, p, N, "CUDA unavailable"); /* sticky until the next init */
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    setenv("GDRTRACE_CUDA_LIB", lib, 1);

    layer_up();
    connect_pair(&sc, &rc);
    void *mh = reg_gpu(sc, p, N);
    assert_int_equal(ops->dereg_mr(sc, mh), GT_OK);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    vmm_free(p, N);
}

/* ---- a dead copier ----------------------------------------------------------- */

static void test_copier_killed(void **state)
{
    (void)state;
    set_delay("2000"); /* the copy is still pending when the copier dies */
    const size_t N = 64 << 10;
    unsigned long long src = vmm_alloc(N, 1);
    layer_up();
    void *sc, *rc;
    connect_pair(&sc, &rc);
    void *smh = reg_gpu(sc, src, N);
    pid_t pid = gt_gpumem_copier_pid();
    assert_true(pid > 0);
    void *s = NULL;
    assert_int_equal(ops->isend(sc, (void *)(uintptr_t)src, N, 1, smh, NULL, &s), GT_OK);
    assert_non_null(s);
    usleep(50000);
    assert_int_equal(kill(pid, SIGKILL), 0);
    double t0 = now_s();
    gt_result r = GT_OK;
    int d = 0;
    uint32_t mark = gt_net_fail_mark();
    while (r == GT_OK && now_s() - t0 < 5) {
        r = ops->test(s, &d, NULL);
        assert_false(d);
    }
    if (r == GT_OK)
        fail_msg("a send whose copier died was still pending after 5 s");
    struct gt_net_failure f;
    assert_int_equal(gt_net_failure_since(mark, &f), 1);
    if (!strstr(f.text, "copier process") || !strstr(f.text, "exited"))
        fail_msg("the failure does not name the dead copier: '%s'", f.text);
    /* F4: the comm stays failed and says why again */
    mark = gt_net_fail_mark();
    void *s2 = NULL;
    assert_int_not_equal(ops->isend(sc, (void *)(uintptr_t)src, N, 1, smh, NULL, &s2), GT_OK);
    assert_int_equal(gt_net_failure_since(mark, &f), 1);
    assert_non_null(strstr(f.text, "copier process"));
    /* a new registration is refused with the same cause */
    expect_refusal(rc, src, N, "copier process");
    assert_int_equal(ops->dereg_mr(sc, smh), GT_OK);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    /* the next job's first registration starts a new copier */
    set_delay(NULL);
    layer_up();
    connect_pair(&sc, &rc);
    smh = reg_gpu(sc, src, N);
    assert_true(gt_gpumem_copier_pid() > 0 && gt_gpumem_copier_pid() != pid);
    assert_int_equal(ops->dereg_mr(sc, smh), GT_OK);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    vmm_free(src, N);
}

/* ---- a stopped copier --------------------------------------------------------- */

/* SIGSTOP: the copier's socket stays open, so only its heartbeat can tell.
 * A pending copy fails the comm within GDRTRACE_GPUMEM_COPIER_TIMEOUT (1 s
 * here), naming the copier and its state; a slow copy in a running copier,
 * longer than that bound, and an idle spell longer than it, do not. */
static void test_copier_stopped(void **state)
{
    (void)state;
    setenv("GDRTRACE_GPUMEM_COPIER_TIMEOUT", "1", 1);
    set_delay("1500"); /* the copier's environment: every copy takes 1.5 s */
    const size_t N = 64 << 10;
    unsigned long long src = vmm_alloc(N, 1), dst = vmm_alloc(N, 1);
    layer_up();
    void *sc, *rc;
    connect_pair(&sc, &rc);
    void *smh = reg_gpu(sc, src, N), *rmh = reg_gpu(rc, dst, N);
    pid_t pid = gt_gpumem_copier_pid();
    assert_true(pid > 0);
    /* idle for longer than the bound, then a copy slower than it: done */
    usleep(1300000);
    memset((void *)(uintptr_t)src, 'q', N);
    void *reqs[2] = {NULL, NULL};
    void *dp = (void *)(uintptr_t)dst;
    size_t rn = N;
    int tag = 3;
    assert_int_equal(ops->isend(sc, (void *)(uintptr_t)src, N, 3, smh, NULL, &reqs[0]), GT_OK);
    assert_int_equal(ops->irecv(rc, 1, &dp, &rn, &tag, &rmh, NULL, &reqs[1]), GT_OK);
    assert_non_null(reqs[0]);
    assert_non_null(reqs[1]);
    wait_all(reqs, NULL, 2);
    assert_memory_equal((void *)(uintptr_t)src, (void *)(uintptr_t)dst, N);
    /* stopped with a copy pending: the comm fails, naming the copier */
    void *s = NULL;
    assert_int_equal(ops->isend(sc, (void *)(uintptr_t)src, N, 4, smh, NULL, &s), GT_OK);
    assert_non_null(s);
    usleep(50000);
    assert_int_equal(kill(pid, SIGSTOP), 0);
    double t0 = now_s();
    gt_result r = GT_OK;
    int d = 0;
    uint32_t mark = gt_net_fail_mark();
    while (r == GT_OK && !d && now_s() - t0 < 10) {
        r = ops->test(s, &d, NULL);
        sched_yield();
    }
    kill(pid, SIGCONT);
    if (d)
        fail_msg("a send completed while its copier was stopped");
    if (r == GT_OK)
        fail_msg("a send whose copier is stopped was still pending after 10 s");
    struct gt_net_failure f;
    assert_int_equal(gt_net_failure_since(mark, &f), 1);
    char want[64];
    snprintf(want, sizeof(want), "copier process %d made no progress", (int)pid);
    if (!strstr(f.text, want) || !strstr(f.text, "stopped"))
        fail_msg("the failure does not name the stopped copier: '%s'", f.text);
    /* sticky, as for a dead copier */
    mark = gt_net_fail_mark();
    void *s2 = NULL;
    assert_int_not_equal(ops->isend(sc, (void *)(uintptr_t)src, N, 4, smh, NULL, &s2), GT_OK);
    assert_int_equal(gt_net_failure_since(mark, &f), 1);
    assert_non_null(strstr(f.text, want));
    assert_int_equal(ops->dereg_mr(sc, smh), GT_OK);
    assert_int_equal(ops->dereg_mr(rc, rmh), GT_OK);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    assert_true(gone_within(pid, 5)); /* continued, it saw the hang-up */
    set_delay(NULL);
    unsetenv("GDRTRACE_GPUMEM_COPIER_TIMEOUT");
    vmm_free(src, N);
    vmm_free(dst, N);
}

/* ---- control requests in a burst ------------------------------------------ */

/* NCCL registers its buffers back to back at connection setup: each
 * registration and deregistration is a request on the copier's socket,
 * answered at once even when the copier was about to sleep (it once slept
 * its idle 500 ms on a wake-up it had already seen). */
static void test_copier_control_burst(void **state)
{
    (void)state;
    const size_t N = 64 << 10;
    unsigned long long src = vmm_alloc(N, 1);
    layer_up();
    void *sc, *rc;
    connect_pair(&sc, &rc);
    void *mh = reg_gpu(sc, src, N);
    assert_int_equal(ops->dereg_mr(sc, mh), GT_OK);
    double worst = 0, t0 = now_s();
    for (int i = 0; i < 16; i++) {
        double t = now_s();
        mh = reg_gpu(sc, src, N);
        assert_int_equal(ops->dereg_mr(sc, mh), GT_OK);
        worst = now_s() - t > worst ? now_s() - t : worst;
    }
    if (now_s() - t0 > 5)
        fail_msg("16 registrations and deregistrations took %.1f s (the slowest pair %.3f s): "
                 "the copier sleeps on requests",
                 now_s() - t0, worst);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    vmm_free(src, N);
}

/* ---- where the copier runs, and that it does not spin ---------------------- */

/* Every thread of pid: its CPU set, all equal (0), else -1. */
static int copier_cpus(pid_t pid, cpu_set_t *out)
{
    char p[64];
    snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
    DIR *d = opendir(p);
    if (!d)
        return -1;
    int n = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        cpu_set_t s;
        if (sched_getaffinity(atoi(e->d_name), sizeof(s), &s) != 0)
            continue;
        if (n++ == 0)
            *out = s;
        else if (!CPU_EQUAL(&s, out))
            rc = -1;
    }
    closedir(d);
    return n ? rc : -1;
}

/* How many of `n` samples 10 ms apart found pid sleeping. */
static int sleeping_samples(pid_t pid, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += proc_state(pid, NULL, NULL) == 'S';
        usleep(10000);
    }
    return s;
}

/* The rank bound to one core (taskset -c N, srun --cpu-bind=cores,
 * mpirun --bind-to core): the copier runs outside that core whenever
 * another is allowed, and neither spins while a copy is pending nor while
 * idle.  An unbound rank leaves it unbound. */
static void test_copier_placement(void **state)
{
    (void)state;
    cpu_set_t all, one, got;
    assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
    int first = 0;
    while (!CPU_ISSET(first, &all))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
    const size_t N = 64 << 10;
    unsigned long long src = vmm_alloc(N, 1), dst = vmm_alloc(N, 1);
    set_delay("1000"); /* the copier's environment: every copy takes 1 s */
    layer_up();
    void *sc, *rc;
    connect_pair(&sc, &rc);
    void *smh = reg_gpu(sc, src, N), *rmh = reg_gpu(rc, dst, N);
    pid_t pid = gt_gpumem_copier_pid();
    assert_true(pid > 0);
    assert_int_equal(copier_cpus(pid, &got), 0);
    if (CPU_COUNT(&all) >= 2 && CPU_ISSET(first, &got))
        fail_msg("the copier may run on CPU %d, the only one of the rank it serves (%d CPUs "
                 "allowed, the copier has %d)",
                 first, CPU_COUNT(&all), CPU_COUNT(&got));
    if (CPU_COUNT(&all) == 1)
        assert_true(CPU_EQUAL(&got, &one));
    /* a copy pending for a second: the copier naps, it does not poll */
    void *s = NULL, *r = NULL, *dp = (void *)(uintptr_t)dst;
    size_t rn = N;
    int tag = 1;
    assert_int_equal(ops->isend(sc, (void *)(uintptr_t)src, N, 1, smh, NULL, &s), GT_OK);
    assert_int_equal(ops->irecv(rc, 1, &dp, &rn, &tag, &rmh, NULL, &r), GT_OK);
    assert_non_null(s);
    assert_non_null(r);
    int d = 0;
    for (int i = 0; i < 20 && !d; i++) {
        assert_int_equal(ops->test(s, &d, NULL), GT_OK);
        usleep(5000);
    }
    assert_false(d);
    int slept = sleeping_samples(pid, 40);
    if (slept < 20)
        fail_msg("the copier was asleep in %d of 40 samples while a copy was pending: it polls",
                 slept);
    void *reqs[2] = {s, r};
    wait_all(reqs, NULL, 2);
    set_delay(NULL);
    usleep(100000);
    slept = sleeping_samples(pid, 40);
    if (slept < 30)
        fail_msg("the idle copier was asleep in only %d of 40 samples", slept);
    assert_int_equal(ops->dereg_mr(rc, rmh), GT_OK);
    assert_int_equal(ops->dereg_mr(sc, smh), GT_OK);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    /* unbound: the copier keeps every CPU allowed (its GPU's NUMA node's
     * when the "GPU" has one) */
    assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
    layer_up();
    connect_pair(&sc, &rc);
    smh = reg_gpu(sc, src, N);
    pid = gt_gpumem_copier_pid();
    assert_int_equal(copier_cpus(pid, &got), 0);
    cpu_set_t both;
    CPU_AND(&both, &got, &all);
    assert_true(CPU_EQUAL(&both, &got) && CPU_COUNT(&got) >= 1);
    FILE *f = fopen("/sys/bus/pci/devices/0000:00:00.0/numa_node", "re");
    int node = -1;
    if (f) {
        if (fscanf(f, "%d", &node) != 1)
            node = -1;
        fclose(f);
    }
    if (node < 0 && !CPU_EQUAL(&got, &all))
        fail_msg("the copier of an unbound rank runs on %d of %d CPUs", CPU_COUNT(&got),
                 CPU_COUNT(&all));
    assert_int_equal(ops->dereg_mr(sc, smh), GT_OK);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    vmm_free(src, N);
    vmm_free(dst, N);
}

/* ---- the application dies without finalizing -------------------------------- */

static void test_exit_with_application(void **state)
{
    (void)state;
    set_delay(NULL);
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(pfd[0]);
        ops = gt_gpumem_wrap(&gt_sock_ops);
        void *c = NULL, *lc = NULL, *sc = NULL, *mh = NULL;
        char handle[GT_NET_HANDLE_MAXSIZE];
        if (ops->init(&c, 1, 1, NULL, NULL, NULL) != GT_OK ||
            ops->listen(c, 0, handle, &lc) != GT_OK)
            _exit(3);
        for (int i = 0; i < 1000 && !sc; i++)
            if (ops->connect(c, 0, handle, &sc, NULL) != GT_OK)
                _exit(4);
        unsigned long long p = vmm_alloc(4096, 1);
        if (!sc || ops->reg_mr(sc, (void *)(uintptr_t)p, 4096, GT_PTR_CUDA, &mh, NULL) != GT_OK)
            _exit(5);
        /* a worker the application forked outlives it (a data loader's) */
        pid_t pids[2] = {gt_gpumem_copier_pid(), fork()};
        if (pids[1] == 0) {
            sleep(10);
            _exit(0);
        }
        if (write(pfd[1], pids, sizeof(pids)) != sizeof(pids))
            _exit(6);
        _exit(0); /* no deregMr, no finalize: as a crash */
    }
    close(pfd[1]);
    pid_t pids[2] = {0, 0};
    ssize_t n = read(pfd[0], pids, sizeof(pids));
    close(pfd[0]);
    pid_t pid = pids[0];
    int st = 0;
    assert_int_equal(waitpid(child, &st, 0), child);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(n, (ssize_t)sizeof(pids));
    assert_true(pid > 0 && pids[1] > 0);
    int gone = gone_within(pid, 5);
    assert_true(proc_state(pids[1], NULL, NULL) != 0); /* the worker still runs */
    kill(pids[1], SIGKILL);
    if (!gone)
        fail_msg("copier %d still runs 5 s after its application exited", (int)pid);
}

/* ---- setup -------------------------------------------------------------------- */

static int setup(void **state)
{
    (void)state;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return 1;
    self[n] = 0;
    snprintf(exe_dir, sizeof(exe_dir), "%s", dirname(self)); /* build/<san>/tests */
    char lib[PATH_MAX + 32], copier[PATH_MAX + 32];
    snprintf(lib, sizeof(lib), "%s/libfakecuda.so", exe_dir);
    snprintf(copier, sizeof(copier), "%s/../gdrtrace-gpumem-copier", exe_dir);
    if (access(lib, R_OK) || access(copier, X_OK)) {
        fprintf(stderr, "FAIL: %s and %s must be built (make all tests)\n", lib, copier);
        return 1;
    }
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 1;
    *(void **)&fc.alloc = dlsym(h, "cuMemAlloc_v2");
    *(void **)&fc.free = dlsym(h, "cuMemFree_v2");
    *(void **)&fc.create = dlsym(h, "cuMemCreate");
    *(void **)&fc.reserve = dlsym(h, "cuMemAddressReserve");
    *(void **)&fc.map = dlsym(h, "cuMemMap");
    *(void **)&fc.unmap = dlsym(h, "cuMemUnmap");
    *(void **)&fc.va_free = dlsym(h, "cuMemAddressFree");
    *(void **)&fc.release = dlsym(h, "cuMemRelease");
    if (!fc.alloc || !fc.free || !fc.create || !fc.reserve || !fc.map || !fc.unmap || !fc.va_free ||
        !fc.release)
        return 1;
    setenv("GDRTRACE_CUDA_LIB", lib, 1);
    setenv("GDRTRACE_GPUMEM_COPIER", copier, 1);
    setenv("GDRTRACE_GPUMEM", "1", 1);
    setenv("GDRTRACE_REG", "peermem", 1);
    setenv("GDRTRACE_GPUMEM_PEERMEM", "1", 1);
    setenv("GDRTRACE_SOCKET_IFNAME", "lo", 1);
    return gt_cu_load() == 0 ? 0 : 1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmm_both_ways),
        cmocka_unit_test(test_legacy_ipc_both_ways),
        cmocka_unit_test(test_send_order),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_copier_setup_failures),
        cmocka_unit_test(test_copier_killed),
        cmocka_unit_test(test_copier_stopped),
        cmocka_unit_test(test_copier_placement),
        cmocka_unit_test(test_copier_control_burst),
        cmocka_unit_test(test_exit_with_application),
    };
    return cmocka_run_group_tests_name("gpumem_copier", tests, setup, NULL);
}
