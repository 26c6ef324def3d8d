/* SPDX-License-Identifier: Apache-2.0 */
/*
 * codes.h — the one table of names for the codes of include/gdrtrace/codes.h
 * (and the recorder's per-reason counter slots), shared by the plugin's log
 * messages, the shim and the reader, so a code reads the same in NCCL's log,
 * in `gdrtrace summary`, in JSON and in Prometheus labels.
 *
 * Every function is thread-safe, never fails and returns a static string.
 */
#ifndef GDRTRACE_COMMON_CODES_H
#define GDRTRACE_COMMON_CODES_H

#include "gdrtrace/codes.h"

/* "dmabuf-unsupported", ...; NULL for a value this build does not know
 * (a newer writer's): the caller decides how to print it. */
const char *gt_reason_token(int reason);
/* The name of counter slot `slot` of fallback_by_reason/error_by_reason:
 * the reason's token, "other" for GTR_REASON_OTHER, NULL for a slot this
 * build has no code for. */
const char *gt_reason_slot_token(int slot);
const char *gt_asked_name(int asked);   /* dmabuf, cuda, host; "?" if unknown */
const char *gt_method_name(int method); /* dmabuf, peermem, host, failed; "?" if unknown */
const char *gt_probe_name(int state);   /* unknown, supported, unsupported, absent */
/* dmabuf, peermem, host, auto (GDRTRACE_REG's values); "?" if unknown */
const char *gt_reg_mode_name(int mode);
/* default, gdrtrace, nccl, invalid; NULL for a value this build does not know. */
const char *gt_setting_source_name(int source);
/* The call a CALLING event announces: load, init, listen, connect, accept,
 * "device enumeration"; NULL for a value this build does not know. */
const char *gt_call_site_name(int site);

#endif
