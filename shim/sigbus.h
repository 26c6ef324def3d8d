/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sigbus.h — keeps the host job alive when someone truncates its recorder
 * file while it is mapped (a /dev/shm cleaner, `: > file`): a SIGBUS whose
 * address lies in a guarded mapping replaces that mapping with anonymous
 * memory and lets the faulting store retry; every other SIGBUS goes to the
 * application's handler (or default action) exactly as without us.
 * The invariants and what is lost when the application later replaces our
 * handler are at the top of sigbus.c and in docs/security.md.
 *
 * Threads: guard/unguard/installed are cold-path calls, any thread; lost()
 * is one atomic load, any thread.
 */
#ifndef GDRTRACE_SHIM_SIGBUS_H
#define GDRTRACE_SHIM_SIGBUS_H

#include <stddef.h>

/* Guards the mapping [base, base + size); installs the process's SIGBUS
 * handler on first use.  Returns 0, or ENOSPC (every guard slot taken) or
 * the errno of a failed sigaction; the mapping then stays unguarded. */
int gt_sigbus_guard(void *base, size_t size);
/* Stops guarding the mapping at base; call before unmapping it. */
void gt_sigbus_unguard(void *base);
/* 1 once the mapping at base was replaced by anonymous memory (its file was
 * truncated): what is written there no longer reaches any reader. */
int gt_sigbus_lost(const void *base);
/* Puts back the disposition found at install if ours is still installed
 * (an application's later handler is left alone).  Runs by itself when the
 * library is unloaded: NCCL dlcloses its net plugin after the last
 * communicator, and a handler left pointing into unmapped code would turn
 * the next SIGBUS into a crash. */
void gt_sigbus_uninstall(void);
/* 1 while our handler is SIGBUS's disposition; 0 before the first guard and
 * after the application replaced it (truncation then kills again). */
int gt_sigbus_installed(void);

#endif /* GDRTRACE_SHIM_SIGBUS_H */
