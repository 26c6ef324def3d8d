/* SPDX-License-Identifier: Apache-2.0 */
/*
 * settings.h — gdrtrace's settings as they are in force, and where each value
 * came from.
 *
 * The one place where the policy and selection variables are parsed
 * (GDRTRACE_REG, GDRTRACE_ALLOW_PEERMEM, GDRTRACE_IB_RELAXED_ORDERING,
 * GDRTRACE_TRANSPORT, GDRTRACE_EVENTS): the transport (plugin/reg,
 * plugin/core) uses the values, and the shim writes the same effective values
 * into the recorder's settings section (recorder_format.h), so the record
 * cannot say something other than what the code did (issue 17, item 7).
 *
 * A setting's source (enum gt_setting_source, gdrtrace/codes.h): the
 * default, a GDRTRACE_* variable, an NCCL variable (for settings that follow
 * NCCL's own; none yet), or invalid: the variable was set to something not
 * accepted, so the default is in force and `origin` keeps what was set.
 *
 * One snapshot per process (gt_settings_get): the variables above are read
 * once, at the first use (plugin/core's first init, or the profiler's shim
 * open when that comes first), each invalid value WARNed once then, and every
 * user (plugin/core, plugin/reg, plugin/gpumem, the ib transport, the
 * recorder) reads that snapshot.  So the recorder, written once per process
 * (shim/shim.c, S5), says what the code used even if the environment changes
 * later.  It is not re-taken when the plugin is finalized and initialised
 * again in the same process: the one recorder would then describe a policy
 * no longer in force, and NCCL itself reads its parameters once per process.
 *
 * Threads: gt_settings_get() is callable from any thread (the plugin runs on
 * NCCL's threads).  The gt_*_read() parsers read the environment only and
 * are for the snapshot and for tests of the parsing; warn = 1 logs one WARN
 * per invalid variable.
 */
#ifndef GDRTRACE_COMMON_SETTINGS_H
#define GDRTRACE_COMMON_SETTINGS_H

#include "common/codes.h"

/* One setting in force.  Sizes equal the recorder's struct gtr_setting. */
struct gt_setting {
    char key[48];    /* the GDRTRACE_* name of the setting */
    char value[64];  /* the effective value, canonical spelling ("dmabuf", "1") */
    char origin[96]; /* "NAME=text" as set in the environment; "" for a default */
    int source;      /* enum gt_setting_source */
};

/*! gt_setting_choice() : the variable `name` as one of `choices`
 *  (NULL-terminated, case-insensitive).  Returns the index in force (dflt
 *  when unset or invalid); fills *out (may be NULL) with the canonical
 *  choice and its source. */
int gt_setting_choice(struct gt_setting *out, const char *name, const char *const *choices,
                      int dflt, int warn);
/*! gt_setting_bool() : 0/1 (also false/true, no/yes, off/on); value "0"/"1". */
int gt_setting_bool(struct gt_setting *out, const char *name, int dflt, int warn);

/* ---- registration policy (plugin/reg) ---------------------------------- */

/* enum gt_reg_mode is an on-disk code: gdrtrace/codes.h; its names common/codes.h. */
struct gt_reg_policy {
    int mode;             /* enum gt_reg_mode */
    int allow_peermem;    /* fallback to peermem allowed */
    int relaxed_ordering; /* add IBV_ACCESS_RELAXED_ORDERING when ibv_reg_mr_iova2 exists */
};

#define GT_REG_POLICY_SETTINGS 3
/*! gt_reg_policy_read() : GDRTRACE_REG (default dmabuf), GDRTRACE_ALLOW_PEERMEM
 *  (default 1 under GDRTRACE_REG=auto, else 0), GDRTRACE_IB_RELAXED_ORDERING
 *  (else NCCL_IB_PCI_RELAXED_ORDERING: 0 off, 1 or 2 on; default 1).  Fills *p and, when s is not
 * NULL, s[0..2] in that order. */
void gt_reg_policy_read(struct gt_reg_policy *p, struct gt_setting s[GT_REG_POLICY_SETTINGS],
                        int warn);

/* ---- transport selection (plugin/core) --------------------------------- */

enum gt_transport_id {
    GT_TRANSPORT_AUTO = 0,
    GT_TRANSPORT_IB = 1,
    GT_TRANSPORT_SOCK = 2,
    GT_TRANSPORT_INNER = 3,
    GT_TRANSPORT_COUNT
};

/*! gt_transport_read() : GDRTRACE_TRANSPORT (auto, ib, sock, inner; default
 *  auto): the transport asked for. */
int gt_transport_read(struct gt_setting *s, int warn);
const char *gt_transport_name(int id); /* auto, ib, sock, inner; "?" */

/* ---- GPU-memory validation mode (plugin/gpumem) ----------------------- */

/* Off by default.  When on, everything recorded is emulated: no NIC moves
 * GPU memory, CUDA copies do (docs/gpumem.md).  The shim records these
 * settings only when GDRTRACE_GPUMEM=1, and readers mark such a run. */
struct gt_gpumem_cfg {
    int on;           /* GDRTRACE_GPUMEM (default 0) */
    int peermem;      /* GDRTRACE_GPUMEM_PEERMEM: emulate nvidia_peermem present (default 0) */
    int force_flush;  /* GDRTRACE_GPUMEM_FORCE_FLUSH: the device's forceFlush (default 0) */
    int dmabuf_errno; /* GDRTRACE_GPUMEM_DMABUF_ERRNO: test switch, every dma-buf import
                       * fails with this errno (1..4095; default 0 = off) */
};
#define GT_GPUMEM_SETTINGS 4
/*! gt_gpumem_read() : the four settings above, into *c and, when s is not
 *  NULL, s[0..3] in that order.  Returns c->on. */
int gt_gpumem_read(struct gt_gpumem_cfg *c, struct gt_setting s[GT_GPUMEM_SETTINGS], int warn);

/* ---- the recorder ------------------------------------------------------- */

/*! gt_events_read() : GDRTRACE_EVENTS (control, all; default control):
 *  1 for all. */
int gt_events_read(struct gt_setting *s, int warn);

/* ---- the process-wide snapshot ----------------------------------------- */

struct gt_settings {
    struct gt_reg_policy reg;
    struct gt_setting reg_set[GT_REG_POLICY_SETTINGS];
    int transport; /* enum gt_transport_id asked for */
    struct gt_setting transport_set;
    int events_all;
    struct gt_setting events_set;
    struct gt_gpumem_cfg gpumem;
    struct gt_setting gpumem_set[GT_GPUMEM_SETTINGS];
};

/*! gt_settings_get() : the snapshot, taken (and its invalid values WARNed)
 *  by the first call in the process.  Never NULL; immutable afterwards. */
const struct gt_settings *gt_settings_get(void);

/*! gt_settings_reset_for_test() : tests only (unit tests that setenv between
 *  cases): the next gt_settings_get() takes a new snapshot.  Not thread-safe
 *  against readers; the plugin never calls it (the .so exports only NCCL's
 *  symbols, plugin/exports.map). */
void gt_settings_reset_for_test(void);

#endif
