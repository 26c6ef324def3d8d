/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shim.h — the recorder's instrumentation layer.
 *
 * gt_shim_wrap() returns a gt_net_ops that forwards every call to `inner`
 * unchanged, timing it and recording its outcome in the process's recorder.
 * The caller (plugin/core) calls it once, after choosing the transport, unless
 * GDRTRACE_DISABLE=1.  If the recorder cannot be created the shim logs one
 * WARN and returns `inner` itself: the job runs untraced.
 */
#ifndef GDRTRACE_SHIM_H
#define GDRTRACE_SHIM_H

#include "common/gt_net.h"

/* Tells the shim which ncclNetPlugin_vN NCCL is driving (for the recorder). */
void gt_shim_set_abi_version(int abi_version);

/* Returns the instrumented table, or `inner` when tracing is off/unavailable.
 * `transport_why` is one line saying why this transport was chosen.
 * Thread-safe; idempotent for the same inner. */
const struct gt_net_ops *gt_shim_wrap(const struct gt_net_ops *inner, const char *transport_why,
                                      gt_logger_fn logger);

#endif
