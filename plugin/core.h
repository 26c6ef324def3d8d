/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core.h — the plugin's process-wide state: a reference count, the chosen
 * transport and the (possibly shim-wrapped) gt_net_ops every ABI adapter
 * calls.
 *
 * Contract:
 *  - gt_core_acquire() takes one reference.  The first reference (0 -> 1)
 *    reads GDRTRACE_TRANSPORT / GDRTRACE_DISABLE, chooses the transport,
 *    initialises it once as the process "anchor" context (so a transport's
 *    global state lives as long as any communicator does), tells the shim the
 *    ABI version and wraps the transport with gt_shim_wrap().  On failure no
 *    reference is taken and the error is returned (NCCL then falls back to its
 *    internal transports).
 *  - gt_core_release() drops one reference; the last one finalizes the
 *    anchor.  A later acquire selects again.
 *  - gt_core_ops() is what the data path uses: one acquire-load of a pointer
 *    to a static table.  It stays valid after the last release (tables are
 *    never freed), so a late call from NCCL cannot touch freed memory.
 *  - All functions are thread-safe; acquire/release serialize on one mutex
 *    and are never on the data path.
 */
#ifndef GDRTRACE_CORE_H
#define GDRTRACE_CORE_H

#include "common/gt_net.h"
#include "common/settings.h" /* enum gt_transport_id, parsed there for the recorder too */

gt_result gt_core_acquire(int abi_version, gt_logger_fn logger, gt_profiler_fn profiler,
                          const struct gt_net_ops **ops);
void gt_core_release(void);
/* NULL before the first successful acquire. */
const struct gt_net_ops *gt_core_ops(void);
/* Current reference count (tests, diagnostics). */
int gt_core_refs(void);
/* The chosen transport (enum gt_transport_id, AUTO when none) and the one
 * line saying why; valid while a reference is held. */
int gt_core_transport(void);
const char *gt_core_transport_why(void);
/* "auto", "ib", "sock", "inner". */
const char *gt_core_transport_name(int id);

#endif /* GDRTRACE_CORE_H */
