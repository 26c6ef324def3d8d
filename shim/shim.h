/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shim.h — the recorder's instrumentation layer.
 *
 * gt_shim_wrap() returns a gt_net_ops that forwards every call to `inner`
 * unchanged, timing it and recording its outcome in the process's recorder.
 * The caller (plugin/core) opens the recorder first (gt_shim_open), then
 * calls this once, after choosing the transport, unless GDRTRACE_DISABLE=1.  If the recorder cannot
 * be created the shim logs one WARN and returns `inner` itself: the job runs untraced.
 */
#ifndef GDRTRACE_SHIM_H
#define GDRTRACE_SHIM_H

#include "common/gt_net.h"

/* Tells the shim which ncclNetPlugin_vN NCCL is driving (for the recorder). */
void gt_shim_set_abi_version(int abi_version);

/* Opens the process's recorder (identity, fingerprint, settings in force)
 * unless GDRTRACE_DISABLE=1 or it is open already, and installs the sink of
 * common/callout.h, so that every later call into a transport, and a crash
 * inside one, is recorded.  plugin/core calls it before the first call into
 * any transport (issue 23).  A recorder that cannot be created means one
 * WARN and an untraced run, as for gt_shim_wrap. */
void gt_shim_open(gt_logger_fn logger);

/* Records that the plugin refuses to serve this process: transport `asked`
 * (enum gt_transport_id, its name `name`) could not be used, for `reason`
 * (enum gt_reason) and errno `err`; `why` is the one line NCCL's log also
 * gets.  The verdict reads it as BYPASSED.  No-op without a recorder. */
void gt_shim_refused(int asked, const char *name, gt_result res, int reason, int err,
                     const char *why);

/* Returns the instrumented table, or `inner` when tracing is off/unavailable.
 * `transport_why` is one line saying why this transport was chosen.
 * Thread-safe; idempotent for the same inner. */
const struct gt_net_ops *gt_shim_wrap(const struct gt_net_ops *inner, const char *transport_why,
                                      gt_logger_fn logger);

#endif
