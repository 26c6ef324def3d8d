/* SPDX-License-Identifier: Apache-2.0 */
/*
 * callout.h — announcing calls into code gdrtrace does not own (an inner
 * plugin's load, init, listen, connect and accept; ib's device enumeration
 * through libibverbs), so that a crash inside one is a recorded fact: the
 * last event of the recorder says which call never returned (issue 23).
 *
 * The transports (plugin/inner, plugin/ib) announce; the shim, which owns the
 * recorder, is the sink.  The transports cannot include the shim (layers), so
 * the sink is installed here, at the bottom, by the shim once its recorder is
 * open.  With no sink installed (GDRTRACE_DISABLE=1, no recorder, unit tests)
 * every call is a no-op.
 *
 * Contract:
 *  - gt_callout_begin() before the foreign call, gt_callout_end() with its
 *    token after it, on the same thread, also when the call failed.  A token
 *    of 0 means "not recorded"; gt_callout_end(0, ...) does nothing.
 *  - kind and path are read during gt_callout_begin() only (the sink copies
 *    them); they are never NULL-dereferenced (NULL reads as "").
 *  - Neither call fails, blocks on I/O or touches errno-visible state that
 *    the caller relies on: they preserve errno.
 *  - Threads: any; the sink serialises what needs it.  Cost: a few events
 *    (~15 ns each) per call; connect/accept polls are announced too, since
 *    a crash in the fiftieth poll is as real as one in the first.
 */
#ifndef GDRTRACE_COMMON_CALLOUT_H
#define GDRTRACE_COMMON_CALLOUT_H

#include <stdint.h>

#include "gdrtrace/codes.h"

struct gt_callout_sink {
    /* Records "calling `site` of `kind` `path` (ABI `version`, device `dev`
     * or -1)"; returns a non-zero token, or 0 when nothing was recorded. */
    uint64_t (*calling)(int site, const char *kind, const char *path, int version, int dev);
    /* Records "the call of `token` returned `result`". */
    void (*returned)(uint64_t token, int site, int result);
};

/* Installs (or, with NULL, removes) the process's sink.  The sink must live
 * for the process. */
void gt_callout_set_sink(const struct gt_callout_sink *sink);

uint64_t gt_callout_begin(int site, const char *kind, const char *path, int version, int dev);
void gt_callout_end(uint64_t token, int site, int result);

#endif /* GDRTRACE_COMMON_CALLOUT_H */
