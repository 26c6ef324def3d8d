/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sigbus.c — the SIGBUS guard of the recorder mappings (see sigbus.h).
 *
 * Why: a MAP_SHARED mapping of a file faults with SIGBUS once the file is
 * truncated under it, and the default action kills the job (exit 135).  File
 * seals would prevent the truncation but exist only for memfds, which do not
 * outlive a crash, so the recorder survives truncation by this handler.
 *
 * Invariants:
 *  G1. One handler per process, installed by the first gt_sigbus_guard() and
 *      never removed by us (unguarding a mapping only frees its slot).  It
 *      runs on the alternate signal stack when the thread has one
 *      (SA_ONSTACK) and keeps the previous disposition's SA_RESTART.
 *  G2. A SIGBUS sent by the kernel (si_code > 0) whose si_addr lies in a
 *      guarded mapping is ours: the first thread to see it swaps the whole
 *      mapping for private anonymous memory at the same address in one
 *      mmap(MAP_FIXED) (no window where the range is unmapped), marks the
 *      slot LOST and returns, so the faulting store retries and succeeds.
 *      A thread faulting meanwhile sees REPLACING and retries until done.
 *      If the mmap fails the slot is FAILED and the fault is treated as
 *      foreign (the process dies as it would have without us).
 *  G3. Every other SIGBUS (another address, kill/raise/sigqueue) goes to the
 *      disposition that was in force when we installed, with the same
 *      siginfo and ucontext, under the signal mask the kernel would have set
 *      for it (its sa_mask, and SIGBUS itself unless it had SA_NODEFER), and
 *      honouring its SA_RESETHAND once.  SIG_DFL: the default is restored
 *      and the fault re-executes (synchronous codes) or the same siginfo is
 *      queued again (others), so the default action — core dump included —
 *      happens as without us.  SIG_IGN: ignored, except a synchronous fault,
 *      which the kernel would deliver with the default action anyway.
 *  G4. The handler calls only async-signal-safe system calls (mmap through
 *      syscall(2), sigaction, sigprocmask, getpid/gettid,
 *      rt_tgsigqueueinfo) and touches only the slot table (atomics) and the
 *      saved previous action (written before the handler is installed).
 *
 *  G5. When the library is unloaded (NCCL dlcloses the plugin after its last
 *      communicator) or gt_sigbus_uninstall() is called, the previous
 *      disposition is put back if ours is still installed; from then on a
 *      truncation of a recorder that is still mapped kills as without us.
 *
 * Not defended (docs/security.md): an application that installs its own
 * SIGBUS handler after ours replaces it, and a thread that blocks SIGBUS
 * makes the kernel force the default action; in both cases a truncation
 * kills as before.  gt_sigbus_installed() lets the shim WARN about the first.
 */
#include "shim/sigbus.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define GUARDS 16

enum { G_ACTIVE = 0, G_REPLACING, G_LOST, G_FAILED };

struct guard {
    uintptr_t base; /* 0: free slot; stored with release after size/state */
    size_t size;
    int state;
};

static struct guard g_guards[GUARDS];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* guard/unguard/install */
static int g_installed;                                    /* under g_lock */
static struct sigaction g_prev; /* written before our handler is installed (G4) */
static int g_prev_spent;        /* SA_RESETHAND previous handler already called once */

static void on_sigbus(int sig, siginfo_t *si, void *uc);

static void *map_anon(void *addr, size_t size)
{
#ifdef SYS_mmap
    /* The raw system call: no sanitizer interceptor runs inside the handler. */
    return (void *)syscall(SYS_mmap, addr, size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
#else
    return mmap(addr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
#endif
}

/* Codes of a fault that happens again when the instruction is re-executed. */
static int refaults(const siginfo_t *si)
{
    switch (si->si_code) {
    case BUS_ADRALN:
    case BUS_ADRERR:
    case BUS_OBJERR:
#ifdef BUS_MCEERR_AR
    case BUS_MCEERR_AR:
#endif
        return 1;
    default:
        return 0;
    }
}

static void act_default(int sig, siginfo_t *si)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (refaults(si))
        return; /* the instruction faults again, into the default action */
    /* Same siginfo again; SIGBUS is blocked in this handler, so it is
     * delivered (to the default action) as the handler returns. */
    if (syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid), sig, si) != 0)
        raise(sig);
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *p = &g_prev;
    if (p->sa_handler == SIG_IGN) {
        /* The kernel delivers an ignored synchronous fault with the
         * default action (force_sig_fault); anything else is ignored. */
        if (refaults(si))
            act_default(sig, si);
        return;
    }
    if (p->sa_handler == SIG_DFL || ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction == on_sigbus) ||
        ((p->sa_flags & SA_RESETHAND) && __atomic_exchange_n(&g_prev_spent, 1, __ATOMIC_ACQ_REL))) {
        act_default(sig, si);
        return;
    }
    /* The mask the kernel would have set for the previous handler. */
    sigset_t m, old;
    if (uc)
        m = ((ucontext_t *)uc)->uc_sigmask;
    else
        sigprocmask(SIG_SETMASK, NULL, &m);
    sigorset(&m, &m, &p->sa_mask);
    if (p->sa_flags & SA_NODEFER)
        sigdelset(&m, sig);
    else
        sigaddset(&m, sig);
    sigprocmask(SIG_SETMASK, &m, &old);
    if (p->sa_flags & SA_SIGINFO)
        p->sa_sigaction(sig, si, uc);
    else
        p->sa_handler(sig);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    if (si && si->si_code > 0) {
        uintptr_t a = (uintptr_t)si->si_addr;
        for (int i = 0; i < GUARDS; i++) {
            struct guard *g = &g_guards[i];
            uintptr_t b = __atomic_load_n(&g->base, __ATOMIC_ACQUIRE);
            if (!b || a - b >= g->size)
                continue;
            int st = G_ACTIVE;
            if (__atomic_compare_exchange_n(&g->state, &st, G_REPLACING, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                void *p = map_anon((void *)b, g->size);
                st = p == (void *)b ? G_LOST : G_FAILED;
                __atomic_store_n(&g->state, st, __ATOMIC_RELEASE);
            }
            if (st != G_FAILED) {
                errno = saved_errno;
                return; /* G2: the store retries on the new pages */
            }
            break;
        }
    }
    chain(sig, si, uc);
    errno = saved_errno;
}

static int install_locked(void)
{
    if (g_installed)
        return 0;
    struct sigaction cur, sa, old;
    if (sigaction(SIGBUS, NULL, &cur) != 0)
        return errno;
    g_prev = cur;
    __atomic_store_n(&g_prev_spent, 0, __ATOMIC_RELAXED); /* a new previous disposition */
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_sigbus;
    /* No SA_NODEFER: SIGBUS stays blocked in our handler, and chain() sets
     * the previous handler's own mask (NODEFER included) before calling it. */
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | (cur.sa_flags & SA_RESTART);
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &old) != 0)
        return errno;
    if (old.sa_handler != cur.sa_handler || old.sa_flags != cur.sa_flags)
        g_prev = old; /* changed by another thread between the two calls */
    g_installed = 1;
    return 0;
}

int gt_sigbus_guard(void *base, size_t size)
{
    if (!base || !size)
        return EINVAL;
    pthread_mutex_lock(&g_lock);
    int e = install_locked();
    if (e)
        goto out;
    e = ENOSPC;
    for (int i = 0; i < GUARDS; i++) {
        struct guard *g = &g_guards[i];
        if (__atomic_load_n(&g->base, __ATOMIC_RELAXED))
            continue;
        g->size = size;
        __atomic_store_n(&g->state, G_ACTIVE, __ATOMIC_RELAXED);
        /* release: size and state before the handler can match base. */
        __atomic_store_n(&g->base, (uintptr_t)base, __ATOMIC_RELEASE);
        e = 0;
        break;
    }
out:
    pthread_mutex_unlock(&g_lock);
    return e;
}

void gt_sigbus_unguard(void *base)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < GUARDS; i++)
        if (base && __atomic_load_n(&g_guards[i].base, __ATOMIC_RELAXED) == (uintptr_t)base)
            __atomic_store_n(&g_guards[i].base, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_lock);
}

int gt_sigbus_lost(const void *base)
{
    for (int i = 0; i < GUARDS; i++)
        if (base && __atomic_load_n(&g_guards[i].base, __ATOMIC_ACQUIRE) == (uintptr_t)base)
            return __atomic_load_n(&g_guards[i].state, __ATOMIC_ACQUIRE) == G_LOST;
    return 0;
}

void gt_sigbus_uninstall(void)
{
    pthread_mutex_lock(&g_lock);
    struct sigaction cur;
    if (g_installed && sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
        cur.sa_sigaction == on_sigbus) {
        struct sigaction prev = g_prev;
        if ((prev.sa_flags & SA_RESETHAND) && __atomic_load_n(&g_prev_spent, __ATOMIC_ACQUIRE)) {
            memset(&prev, 0, sizeof(prev)); /* the one delivery it allowed is spent */
            prev.sa_handler = SIG_DFL;
            sigemptyset(&prev.sa_mask);
        }
        sigaction(SIGBUS, &prev, NULL);
    }
    g_installed = 0; /* a later guard installs afresh */
    pthread_mutex_unlock(&g_lock);
}

/* G5: NCCL dlcloses the plugin after its last communicator: our handler's
 * code must not stay installed once it is unmapped (the next SIGBUS, ours
 * or not, would jump into nothing). */
__attribute__((destructor)) static void sigbus_unload(void)
{
    gt_sigbus_uninstall();
}

int gt_sigbus_installed(void)
{
    struct sigaction cur;
    pthread_mutex_lock(&g_lock);
    int ours = g_installed && sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
               cur.sa_sigaction == on_sigbus;
    pthread_mutex_unlock(&g_lock);
    return ours;
}
