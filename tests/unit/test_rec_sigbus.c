/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_rec_sigbus.c — what is done to a live recorder's file does not kill
 * the job, and the SIGBUS guard (shim/sigbus.c) changes nothing for faults
 * that are not ours.  Each case runs in its own child process (with a time
 * limit) and the parent checks how it ended.  Checks:
 *  - truncating the file (`: > file`, or to half its size while two threads
 *    write) and writing on: the process lives and the recorder is marked
 *    lost; unlinking, replacing (rename over) and chmod 000 do not kill
 *    either and lose nothing;
 *  - through the shim: one WARN naming the file when the recorder was lost,
 *    one WARN when the application replaced our handler, none twice;
 *  - a foreign SIGBUS (another file's truncated mapping) reaches an
 *    application handler installed before ours with the same siginfo
 *    (si_signo, si_code, si_addr), under the mask the kernel would set (its
 *    sa_mask plus SIGBUS), also a plain (non-SA_SIGINFO) handler, also on an
 *    alternate signal stack, and SA_RESETHAND is honoured once;
 *  - without an application handler (SIG_DFL) or with SIG_IGN, a foreign
 *    fault and a raise(SIGBUS) end the process exactly as they do without
 *    the guard (same signal, same core-dump flag): each such case runs once
 *    guarded and once unguarded and the two endings must match;
 *  - a handler installed after ours replaces the guard: the foreign fault
 *    reaches it and a truncation kills again (documented in
 *    docs/security.md);
 *  - gt_sigbus_uninstall (run at dlclose) puts the application's handler
 *    back, and the next recorder installs the guard again;
 *  - GDRTRACE_MODE granting write to group or others (0666, 0620) gives a
 *    0600 file and one WARN; 0640 is kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/check.h"

#include "common/log.h"
#include "shim/recorder.h"
#include "shim/shim.h"
#include "shim/shim_internal.h"
#include "shim/sigbus.h"
#include "tests/unit/capture_log.h"

static char g_dir[PATH_MAX];

/* ---- helpers ------------------------------------------------------------ */

static int open_rec(struct gt_recorder *r)
{
    struct gt_rec_config cfg = {
        .dir = g_dir, .mode = -1, .ndevs = 1, .ncomms = 4, .ring_events = 1024, .events_all = 1};
    char err[512];
    if (gt_rec_open(r, &cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "gt_rec_open: %s\n", err);
        return 1;
    }
    return 0;
}

/* Touches every page of the mapping and the structures the shim writes. */
static void write_all(struct gt_recorder *r, uint64_t n)
{
    for (size_t off = 0; off < r->size; off += 4096)
        __atomic_fetch_add(&r->base[off], 1, __ATOMIC_RELAXED); /* writers may share the page */
    for (uint64_t i = 0; i < n; i++) {
        __atomic_fetch_add(&r->comms[0].send_count, 1, __ATOMIC_RELAXED);
        gt_rec_event(r, GTR_EV_SEND, 0, 0, 0, 0, i, 0, 0, 0);
    }
    gt_rec_close(r);
    gt_rec_reopen(r);
}

static void truncate_path(const char *path, off_t len)
{
    int fd = open(path, O_WRONLY | (len ? 0 : O_TRUNC)); /* `: > file` when len == 0 */
    if (fd >= 0) {
        if (len && ftruncate(fd, len) != 0)
            perror("ftruncate");
        close(fd);
    }
}

/* A foreign mapping whose file is truncated: touching it raises a SIGBUS
 * (BUS_ADRERR) that is not the recorder's. */
static volatile uint8_t *g_foreign;
static volatile uint8_t *foreign_fault_addr(void)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/foreign", g_dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, 2 * 4096) != 0)
        return NULL;
    void *m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED || ftruncate(fd, 0) != 0)
        return NULL;
    close(fd);
    g_foreign = m;
    return g_foreign + 4096 + 24;
}

/* Makes the foreign mapping valid again so a returning handler resumes. */
static void repair_foreign(void)
{
    mmap((void *)g_foreign, 2 * 4096, PROT_READ | PROT_WRITE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

static void set_handler(int flags, void (*h)(int), void (*sa)(int, siginfo_t *, void *),
                        int mask_sig)
{
    struct sigaction a;
    memset(&a, 0, sizeof(a));
    sigemptyset(&a.sa_mask);
    if (mask_sig)
        sigaddset(&a.sa_mask, mask_sig);
    a.sa_flags = flags;
    if (flags & SA_SIGINFO)
        a.sa_sigaction = sa;
    else
        a.sa_handler = h;
    sigaction(SIGBUS, &a, NULL);
}

/* ---- what an application handler saw ----------------------------------- */

static sigjmp_buf g_jmp;
static volatile sig_atomic_t g_calls, g_signo, g_code, g_bus_blocked, g_usr1_blocked, g_on_altstack;
static void *volatile g_addr;
static char *g_alt;
static size_t g_alt_size;

static void note_mask(void)
{
    sigset_t m;
    sigprocmask(SIG_SETMASK, NULL, &m);
    g_bus_blocked = sigismember(&m, SIGBUS);
    g_usr1_blocked = sigismember(&m, SIGUSR1);
}

static void app_siginfo(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    char here;
    g_calls++;
    g_signo = sig == si->si_signo ? sig : -1;
    g_code = si->si_code;
    g_addr = si->si_addr;
    g_on_altstack = g_alt && &here >= g_alt && &here < g_alt + g_alt_size;
    note_mask();
    siglongjmp(g_jmp, 1);
}

static void app_plain(int sig)
{
    g_calls++;
    g_signo = sig;
    note_mask();
    repair_foreign();
}

/* ---- cases: the recorder's own file ------------------------------------- */

static int case_truncate(void)
{
    struct gt_recorder r;
    if (open_rec(&r))
        return 1;
    write_all(&r, 100);
    REQUIRE(!gt_rec_lost(&r), "lost before anything happened");
    truncate_path(r.path, 0);
    write_all(&r, 5000);
    REQUIRE(gt_rec_lost(&r), "a truncated recorder must be marked lost");
    REQUIRE(gt_rec_event(&r, GTR_EV_SEND, 0, 0, 0, 0, 1, 0, 0, 0) == 1, "events still commit");
    return 0;
}

static struct gt_recorder g_rec2;
static volatile int g_stop;
static void *writer(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED)) {
        __atomic_fetch_add(&g_rec2.comms[1].recv_count, 1, __ATOMIC_RELAXED);
        gt_rec_event(&g_rec2, GTR_EV_RECV, 1, 0, 0, 0, 0, 0, 0, 0);
    }
    return NULL;
}

static int case_truncate_half_threads(void)
{
    if (open_rec(&g_rec2))
        return 1;
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, writer, NULL);
    usleep(20000);
    truncate_path(g_rec2.path, (off_t)(g_rec2.size / 2 / 4096 * 4096));
    usleep(50000);
    write_all(&g_rec2, 1000);
    __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    REQUIRE(gt_rec_lost(&g_rec2), "truncated to half: lost");
    return 0;
}

static int case_unlink_replace_chmod(void)
{
    struct gt_recorder r;
    if (open_rec(&r))
        return 1;
    REQUIRE(unlink(r.path) == 0, "unlink: %s", strerror(errno));
    write_all(&r, 1000);
    REQUIRE(!gt_rec_lost(&r), "unlink loses nothing: the mapping keeps the inode");
    gt_rec_unmap(&r);

    if (open_rec(&r))
        return 1;
    char other[PATH_MAX + 16];
    snprintf(other, sizeof(other), "%s/other", g_dir);
    int fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0 && write(fd, "x", 1) == 1, "other file");
    close(fd);
    REQUIRE(rename(other, r.path) == 0, "rename over the recorder: %s", strerror(errno));
    write_all(&r, 1000);
    REQUIRE(chmod(r.path, 0) == 0, "chmod: %s", strerror(errno));
    write_all(&r, 1000);
    REQUIRE(!gt_rec_lost(&r), "replace/chmod lose nothing");
    gt_rec_unmap(&r);

    if (open_rec(&r))
        return 1;
    REQUIRE(chmod(r.path, 0) == 0, "chmod: %s", strerror(errno));
    write_all(&r, 1000);
    REQUIRE(!gt_rec_lost(&r), "chmod 000 of the live file loses nothing");
    return 0;
}

/* ---- cases: through the shim -------------------------------------------- */

static int fake_ctx;
static gt_result f_init(void **ctx, uint64_t id, int has, const struct gt_comm_config *c,
                        gt_logger_fn l, gt_profiler_fn p)
{
    (void)id, (void)has, (void)c, (void)l, (void)p;
    *ctx = &fake_ctx;
    return GT_OK;
}
static gt_result f_finalize(void *ctx)
{
    (void)ctx;
    return GT_OK;
}
static gt_result f_devices(int *n)
{
    *n = 0;
    return GT_OK;
}
static const struct gt_net_ops fake = {
    .name = "fake", .init = f_init, .finalize = f_finalize, .devices = f_devices};

static const struct gt_net_ops *shim_open(void)
{
    struct gt_rec_config cfg = {.dir = g_dir, .mode = -1, .ring_events = 1024, .events_all = -1};
    const struct gt_net_ops *ops = gt_shim_wrap_cfg(&fake, "test", capture_logger, &cfg);
    return ops != &fake && gt_shim_recorder() ? ops : NULL;
}

static int case_shim_warns_lost(void)
{
    const struct gt_net_ops *ops = shim_open();
    REQUIRE(ops, "shim did not wrap");
    void *ctx;
    REQUIRE(ops->init(&ctx, 1, 1, NULL, capture_logger, NULL) == GT_OK, "init");
    REQUIRE(g_warns == 0, "no WARN yet, got: %s", g_last);
    truncate_path(gt_shim_recorder()->path, 0);
    write_all(gt_shim_recorder(), 10);
    REQUIRE(ops->finalize(ctx) == GT_OK, "finalize");
    REQUIRE(g_warns == 1, "one WARN after the loss, got %d", g_warns);
    REQUIRE(strstr(g_last, "lost") && strstr(g_last, gt_shim_recorder()->path),
            "the WARN says lost and names the file: %s", g_last);
    REQUIRE(ops->init(&ctx, 1, 1, NULL, capture_logger, NULL) == GT_OK, "init again");
    REQUIRE(ops->finalize(ctx) == GT_OK, "finalize again");
    REQUIRE(g_warns == 1, "no second WARN, got %d: %s", g_warns, g_last);
    return 0;
}

static int case_shim_warns_replaced(void)
{
    const struct gt_net_ops *ops = shim_open();
    REQUIRE(ops, "shim did not wrap");
    REQUIRE(gt_sigbus_installed(), "the guard is installed once the recorder exists");
    set_handler(SA_SIGINFO, NULL, app_siginfo, 0);
    REQUIRE(!gt_sigbus_installed(), "an application handler installed after ours replaces it");
    void *ctx;
    REQUIRE(ops->init(&ctx, 1, 1, NULL, capture_logger, NULL) == GT_OK, "init");
    REQUIRE(g_warns == 1 && strstr(g_last, "SIGBUS handler"), "one WARN: %d %s", g_warns, g_last);
    REQUIRE(ops->finalize(ctx) == GT_OK, "finalize");
    REQUIRE(g_warns == 1, "no second WARN, got %d", g_warns);
    return 0;
}

/* gt_sigbus_uninstall (what the library's destructor runs at dlclose) puts
 * the application's handler back; the next recorder installs the guard again. */
static int case_uninstall_reinstall(void)
{
    set_handler(SA_SIGINFO, NULL, app_siginfo, 0);
    struct gt_recorder r;
    if (open_rec(&r))
        return 1;
    REQUIRE(gt_sigbus_installed(), "installed");
    gt_sigbus_uninstall();
    struct sigaction cur;
    sigaction(SIGBUS, NULL, &cur);
    REQUIRE((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == app_siginfo,
            "uninstall puts the application's handler back");
    REQUIRE(!gt_sigbus_installed(), "not installed after uninstall");
    struct gt_recorder r2;
    if (open_rec(&r2))
        return 1;
    REQUIRE(gt_sigbus_installed(), "the next recorder installs the guard again");
    truncate_path(r2.path, 0);
    write_all(&r2, 100);
    REQUIRE(gt_rec_lost(&r2) && g_calls == 0, "guarded again: lost, the application saw nothing");
    return 0;
}

/* ---- cases: foreign faults ---------------------------------------------- */

static int foreign_to_app(int guard, int flags)
{
    if (!guard)
        set_handler(flags, NULL, app_siginfo, SIGUSR1);
    struct gt_recorder r;
    if (open_rec(&r))
        return 1;
    if (guard)
        set_handler(flags, NULL, app_siginfo, SIGUSR1);
    volatile uint8_t *a = foreign_fault_addr();
    REQUIRE(a, "foreign mapping");
    if (sigsetjmp(g_jmp, 1) == 0) {
        *a = 1;
        REQUIRE(0, "the foreign store did not fault");
    }
    REQUIRE(g_calls == 1, "the application handler ran once, ran %d", (int)g_calls);
    REQUIRE(g_signo == SIGBUS, "si_signo %d", (int)g_signo);
    REQUIRE(g_code == BUS_ADRERR, "si_code %d, want BUS_ADRERR %d", (int)g_code, BUS_ADRERR);
    REQUIRE(g_addr == (void *)a, "si_addr %p, want %p", g_addr, (void *)a);
    REQUIRE(g_bus_blocked && g_usr1_blocked, "handler mask: SIGBUS %d SIGUSR1 %d",
            (int)g_bus_blocked, (int)g_usr1_blocked);
    write_all(&r, 100);
    REQUIRE(!gt_rec_lost(&r), "a foreign fault does not touch the recorder");
    return 0;
}

static int case_foreign_before(void)
{
    return foreign_to_app(0, SA_SIGINFO);
}

/* A handler installed after ours replaces the guard (docs/security.md):
 * the recorder's own fault then goes to the application, not to us. */
static int case_after_replaces_guard(void)
{
    if (foreign_to_app(1, SA_SIGINFO))
        return 1;
    REQUIRE(!gt_sigbus_installed(), "replaced");
    struct gt_recorder r;
    if (open_rec(&r))
        return 1;
    truncate_path(r.path, 0);
    g_calls = 0;
    volatile uint8_t *p = r.base + r.size - 1;
    if (sigsetjmp(g_jmp, 1) == 0) {
        *p = 1;
        REQUIRE(0, "the truncated recorder did not fault");
    }
    REQUIRE(g_calls == 1 && g_addr == (void *)p,
            "the application's handler got the recorder's fault");
    REQUIRE(!gt_rec_lost(&r), "the guard did not run");
    return 0;
}

static int case_after_default_kills(void)
{
    struct gt_recorder r;
    if (open_rec(&r))
        return 1;
    signal(SIGBUS, SIG_DFL);
    truncate_path(r.path, 0);
    write_all(&r, 10); /* no guard any more: dies of SIGBUS */
    return 0;
}

static int case_foreign_plain(void)
{
    set_handler(0, app_plain, NULL, 0);
    struct gt_recorder r;
    if (open_rec(&r))
        return 1;
    volatile uint8_t *a = foreign_fault_addr();
    REQUIRE(a, "foreign mapping");
    *a = 7; /* the handler repairs the mapping and returns: the store retries */
    REQUIRE(*a == 7, "store retried");
    REQUIRE(g_calls == 1 && g_signo == SIGBUS, "plain handler: calls %d signo %d", (int)g_calls,
            (int)g_signo);
    REQUIRE(g_bus_blocked, "SIGBUS blocked in the plain handler");
    return 0;
}

static int case_altstack(void)
{
    g_alt_size = 64 * 1024;
    g_alt = malloc(g_alt_size);
    stack_t ss = {.ss_sp = g_alt, .ss_size = g_alt_size, .ss_flags = 0};
    REQUIRE(sigaltstack(&ss, NULL) == 0, "sigaltstack: %s", strerror(errno));
    set_handler(SA_SIGINFO | SA_ONSTACK, NULL, app_siginfo, SIGUSR1);
    struct gt_recorder r;
    if (open_rec(&r))
        return 1;
    struct sigaction cur;
    sigaction(SIGBUS, NULL, &cur);
    REQUIRE(cur.sa_flags & SA_ONSTACK, "the guard runs on the alternate stack");
    volatile uint8_t *a = foreign_fault_addr();
    REQUIRE(a, "foreign mapping");
    if (sigsetjmp(g_jmp, 1) == 0)
        *a = 1;
    REQUIRE(g_calls == 1 && g_addr == (void *)a, "application handler: calls %d", (int)g_calls);
    REQUIRE(g_on_altstack, "the application handler ran on its alternate stack");
    truncate_path(r.path, 0);
    write_all(&r, 1000);
    REQUIRE(gt_rec_lost(&r), "truncation on the alternate stack: lost, alive");
    return 0;
}

static int case_resethand(void)
{
    set_handler(SA_RESETHAND, app_plain, NULL, 0);
    struct gt_recorder r;
    if (open_rec(&r))
        return 1;
    volatile uint8_t *a = foreign_fault_addr();
    REQUIRE(a, "foreign mapping");
    *a = 1;
    REQUIRE(g_calls == 1, "first fault reaches the SA_RESETHAND handler");
    a = foreign_fault_addr();
    *a = 1; /* the handler was reset: default action, death by SIGBUS */
    return 0;
}

/* Scenarios run guarded and unguarded; both must end the same way. */
static void prepare_core(void)
{
    struct rlimit l = {RLIM_INFINITY, RLIM_INFINITY};
    if (setrlimit(RLIMIT_CORE, &l) != 0) {
        getrlimit(RLIMIT_CORE, &l);
        l.rlim_cur = l.rlim_max;
        setrlimit(RLIMIT_CORE, &l);
    }
    if (chdir(g_dir) != 0)
        perror("chdir");
}

static int g_guarded;
static int maybe_guard(void)
{
    struct gt_recorder r;
    return g_guarded ? open_rec(&r) : 0;
}

static int scen_default_fault(void)
{
    prepare_core();
    signal(SIGBUS, SIG_DFL);
    if (maybe_guard())
        return 1;
    *foreign_fault_addr() = 1;
    return 0;
}

static int scen_default_raise(void)
{
    prepare_core();
    signal(SIGBUS, SIG_DFL);
    if (maybe_guard())
        return 1;
    raise(SIGBUS);
    return 0;
}

static int scen_ignored_kill(void)
{
    signal(SIGBUS, SIG_IGN);
    if (maybe_guard())
        return 1;
    kill(getpid(), SIGBUS);
    return 0;
}

static int scen_ignored_fault(void)
{
    prepare_core();
    signal(SIGBUS, SIG_IGN);
    if (maybe_guard())
        return 1;
    *foreign_fault_addr() = 1;
    return 0;
}

/* ---- mode --------------------------------------------------------------- */

static int case_mode(void)
{
    gt_log_set_logger(capture_logger);
    umask(0);
    static const struct {
        const char *env;
        int want, warns;
    } cases[] = {{"0666", 0600, 1},
                 {"0620", 0600, 1},
                 {"0602", 0600, 1},
                 {"0640", 0640, 0},
                 {"0644", 0644, 0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        setenv("GDRTRACE_MODE", cases[i].env, 1);
        g_warns = 0;
        struct gt_recorder r;
        if (open_rec(&r))
            return 1;
        struct stat st;
        REQUIRE(stat(r.path, &st) == 0, "stat");
        REQUIRE((int)(st.st_mode & 0777) == cases[i].want, "GDRTRACE_MODE=%s gave %o, want %o",
                cases[i].env, st.st_mode & 0777, cases[i].want);
        REQUIRE(g_warns == cases[i].warns, "GDRTRACE_MODE=%s: %d WARNs, want %d", cases[i].env,
                g_warns, cases[i].warns);
        if (cases[i].warns)
            REQUIRE(strstr(g_last, "GDRTRACE_MODE") && strstr(g_last, cases[i].env),
                    "the WARN names the variable and value: %s", g_last);
        gt_rec_unmap(&r);
        unlink(r.path);
    }
    return 0;
}

/* ---- runner ------------------------------------------------------------- */

/* How a child ended, as one number: exit code, or 1000 + signal (+ 100 if
 * a core was dumped). */
static int run_child(int (*fn)(void), int guarded)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(30);
        g_guarded = guarded;
        _exit(fn());
    }
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 1000 + WTERMSIG(st) + (WCOREDUMP(st) ? 100 : 0);
}

static void describe(char *buf, size_t n, int end)
{
    if (end < 1000)
        snprintf(buf, n, "exit %d", end);
    else
        snprintf(buf, n, "signal %d (%s)%s", (end - 1000) % 100, strsignal((end - 1000) % 100),
                 end >= 1100 ? ", core dumped" : "");
}

int main(void)
{
    snprintf(g_dir, sizeof(g_dir), "%s/gt-sigbus-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    unsetenv("GDRTRACE_MODE");
    static const struct {
        const char *name;
        int (*fn)(void);
        int want_sig; /* 0: must exit 0 */
    } cases[] = {
        {"truncate (`: > file`) a live recorder: survives, marked lost", case_truncate, 0},
        {"truncate to half while two threads write: survives, lost", case_truncate_half_threads, 0},
        {"unlink, rename over, chmod 000 of a live recorder: survives", case_unlink_replace_chmod,
         0},
        {"shim: one WARN naming the lost recorder", case_shim_warns_lost, 0},
        {"shim: one WARN when the application replaced our handler", case_shim_warns_replaced, 0},
        {"foreign SIGBUS reaches a handler installed before ours, same siginfo",
         case_foreign_before, 0},
        {"plain handler installed before ours gets it and may return", case_foreign_plain, 0},
        {"alternate signal stack: app handler on it, truncation survived", case_altstack, 0},
        {"handler installed after ours replaces the guard: it gets the recorder's fault",
         case_after_replaces_guard, 0},
        {"SIG_DFL set after ours: the guard is gone, truncation kills as before",
         case_after_default_kills, SIGBUS},
        {"SA_RESETHAND handler honoured once, then the default action", case_resethand, SIGBUS},
        {"uninstall (dlclose) restores the app's handler; next open re-guards",
         case_uninstall_reinstall, 0},
        {"GDRTRACE_MODE writable by group/others: 0600 and one WARN", case_mode, 0},
    };
    int failed = 0;
    char got[128];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int end = run_child(cases[i].fn, 1);
        int ok =
            cases[i].want_sig ? end >= 1000 && (end - 1000) % 100 == cases[i].want_sig : end == 0;
        describe(got, sizeof(got), end);
        printf("%s %s (%s)\n", ok ? "ok  " : "FAIL", cases[i].name, got);
        failed += !ok;
    }
    static const struct {
        const char *name;
        int (*fn)(void);
        int want_sig;
    } same[] = {
        {"SIG_DFL, foreign fault: killed by SIGBUS as without the guard", scen_default_fault,
         SIGBUS},
        {"SIG_DFL, raise(SIGBUS): killed by SIGBUS as without the guard", scen_default_raise,
         SIGBUS},
        {"SIG_IGN, kill(SIGBUS): ignored as without the guard", scen_ignored_kill, 0},
        {"SIG_IGN, foreign fault: killed by SIGBUS as without the guard", scen_ignored_fault,
         SIGBUS},
    };
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        int plain = run_child(same[i].fn, 0), guarded = run_child(same[i].fn, 1);
        int ok = plain == guarded &&
                 (same[i].want_sig ? plain >= 1000 && (plain - 1000) % 100 == same[i].want_sig
                                   : plain == 0);
        char want[128];
        describe(want, sizeof(want), plain);
        describe(got, sizeof(got), guarded);
        printf("%s %s (without guard: %s; with: %s)\n", ok ? "ok  " : "FAIL", same[i].name, want,
               got);
        failed += !ok;
    }
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    printf("%d failed\n", failed);
    return failed ? 1 : 0;
}
