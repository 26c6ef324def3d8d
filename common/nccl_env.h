/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccl_env.h — NCCL's own variables, read the way NCCL reads them, and the
 * transport settings they put in force.
 *
 * Where NCCL finds a value (src/misc/param.cc, read 2026-12-03):
 *  1. the process environment: a variable present there, even empty, is
 *     never replaced by a file;
 *  2. the file named by NCCL_CONF_FILE (environment only, non-empty), or,
 *     when that is unset or empty, $HOME/.nccl.conf;
 *  3. /etc/nccl.conf.
 * The first of these that names the variable wins.  NCCL applies 2 and 3
 * with setenv(name, value, 0) before it loads a net plugin, so inside a job
 * a file's value is in the environment by the time we look: a variable
 * that is in the environment but was not in the one the process started
 * with (/proc/self/environ), and that a file names with the same value, is
 * attributed to that file.  A file line is
 * NAME=VALUE up to the end of the line (a trailing CR dropped); nothing is
 * trimmed; a line starting with '#' or without '=' is skipped.  A value that
 * is empty means "unset" to every consumer here, as it does to NCCL.
 *
 * Precedence of a setting (docs/configuration.md): a GDRTRACE_* twin, where
 * we keep one and it is set to a valid value, overrides the NCCL variable;
 * else the NCCL variable with NCCL's meaning; else NCCL's default.
 *
 * An environment plugin (NCCL_ENV_PLUGIN other than "none", or a
 * libnccl-env.so already loaded in the process) may answer NCCL with values
 * we cannot see: then every NCCL-sourced setting is recorded with source
 * GT_SRC_UNKNOWN and one WARN says so.
 *
 * Invariant: the conf files are read once per process (gt_nccl_env_reload()
 * re-reads them, for tests); the noted settings table keeps the last value
 * per key.  Threads: every function may be called from any thread that does
 * not race setenv(); the tables are guarded by one mutex.
 */
#ifndef GDRTRACE_COMMON_NCCL_ENV_H
#define GDRTRACE_COMMON_NCCL_ENV_H

#include <stddef.h>

#include "common/settings.h"

/*! gt_nccl_raw() : the text NCCL would see for `name` (NULL when no source
 *  names it).  *where (may be NULL) is "environment" or the file's path. */
const char *gt_nccl_raw(const char *name, const char **where);

/*! gt_nccl_env_plugin() : the environment plugin NCCL may consult instead
 *  of the environment ("libnccl-env.so", the NCCL_ENV_PLUGIN value), or
 *  NULL.  WARNs once per process when not NULL. */
const char *gt_nccl_env_plugin(void);

/*! gt_nccl_long() : an integer setting.  `twin` (GDRTRACE_*, may be NULL)
 *  is read strictly (base 10, gt_parse_long); the NCCL variable as NCCL
 *  reads it: strtoll base 0 ("0x6a" is 106, "010" is 8), its leading number
 *  when text follows (WARNed: NCCL ignores the rest).  A value outside
 *  [min, max] is invalid: one WARN (when warn), the default, source
 *  GT_SRC_INVALID.  Fills *out (may be NULL); key is twin, else nccl. */
long gt_nccl_long(struct gt_setting *out, const char *nccl, const char *twin, long dflt, long min,
                  long max, int warn);

/*! gt_nccl_str() : a text setting (a list, a path, a family name): the
 *  twin when set and non-empty, else the NCCL variable when non-empty, else
 *  NULL (the caller's default).  The returned pointer is valid until the next
 *  setenv() or gt_nccl_env_reload(). */
const char *gt_nccl_str(struct gt_setting *out, const char *nccl, const char *twin);

/*! gt_nccl_note() : keeps `s` (by key) among the transport settings in
 *  force; the shim copies them into the recorder (gt_nccl_noted()). */
void gt_nccl_note(const struct gt_setting *s);
/*! gt_nccl_unnote() : forgets the noted settings whose key starts with
 *  `prefix` (a transport that refused init: its settings were not in force). */
void gt_nccl_unnote(const char *prefix);
/*! gt_nccl_noted() : copies at most max noted settings into out; returns
 *  how many. */
int gt_nccl_noted(struct gt_setting *out, int max);

/*! gt_nccl_warn_unhonored() : one WARN per process for each NCCL variable
 *  of the transport `which` ("ib" or "sock") that is set but that we do not
 *  honor, saying what we do instead (docs/ib-vs-nccl.md).  Returns how many
 *  were set. */
int gt_nccl_warn_unhonored(const char *which);

/*! gt_nccl_env_reload() : forget the conf files, the noted settings and the
 *  once-only WARNs (tests, after changing NCCL_CONF_FILE or HOME). */
void gt_nccl_env_reload(void);

/* Where the system-wide file is (tests point it at a temporary file). */
extern const char *gt_nccl_etc_conf;
/* The environment the process started with (tests point it at a file). */
extern const char *gt_nccl_proc_environ;

#endif
