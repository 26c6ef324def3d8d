/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccl_cfg.h — NCCL's own settings that decide GPU Direct and which
 * transport carries the traffic (issue 19, point 2): the one table of them,
 * read as NCCL 2.18 … 2.30 reads them (through common/nccl_env.h: the
 * environment, then the conf-file chain) for the recorder's settings
 * section, and the names the readers judge them by.
 *
 * gdrtrace never acts on these: NCCL does.  They are recorded so that a
 * verdict can name the setting that explains it and `gdrtrace diff` can say
 * when two runs differ in one.
 *
 * A recorded entry (struct gt_setting): key = the NCCL name; value = what
 * NCCL makes of the text ("LOC" for NCCL_NET_GDR_LEVEL=0, "0" for
 * NCCL_DMABUF_ENABLE=0x0), "" while NCCL's default is in force (NCCL's
 * defaults differ between versions and machines: the table says which);
 * source GT_SRC_NCCL with origin "NAME=text" (environment) or
 * "NAME=text (PATH)" (a conf file), GT_SRC_DEFAULT when unset,
 * GT_SRC_INVALID when NCCL ignores the text (its default in force; origin
 * keeps the text), GT_SRC_UNKNOWN under an NCCL environment plugin.
 *
 * Threads: as nccl_env.h.
 */
#ifndef GDRTRACE_COMMON_NCCL_CFG_H
#define GDRTRACE_COMMON_NCCL_CFG_H

#include <stddef.h>

#include "common/settings.h"

enum gt_nccl_cfg_kind {
    GT_NCFG_INT = 0, /* NCCL_PARAM: strtoll base 0 of a non-empty value */
    GT_NCFG_LEVEL,   /* a path level: LOC … SYS by name (exact case), or an old number 0 … 5 */
    GT_NCFG_TEXT,    /* a name, a list or a path, used as written */
};

enum gt_nccl_cfg_role {
    GT_NCFG_GDR = 0,   /* decides whether NCCL hands the plugin GPU memory, and how */
    GT_NCFG_TRANSPORT, /* decides which transport (network, P2P, SHM …) carries the traffic */
    GT_NCFG_LEGACY,    /* no NCCL 2.18 … 2.30 reads it: recorded only when set */
};

struct gt_nccl_cfg {
    const char *name;
    int kind;              /* enum gt_nccl_cfg_kind */
    int role;              /* enum gt_nccl_cfg_role */
    long dflt;             /* GT_NCFG_INT: what an invalid value falls back to */
    const char *dflt_text; /* NCCL's default, as the readers show it */
    const char *what;      /* one line: what NCCL does with it */
};

/*! gt_nccl_cfg_table() : the table (in recording order) and its length. */
const struct gt_nccl_cfg *gt_nccl_cfg_table(size_t *n);

/*! gt_nccl_cfg_find() : the table's entry for key, or NULL. */
const struct gt_nccl_cfg *gt_nccl_cfg_find(const char *key);

/* At most this many entries (the table's length, with room to grow). */
#define GT_NCCL_CFG_MAX 24

/*! gt_nccl_cfg_read() : every setting of the table as in force now, into
 *  out[0 .. max); legacy ones only when set.  Quiet: NCCL, not gdrtrace,
 *  acts on them.  Returns how many were written. */
int gt_nccl_cfg_read(struct gt_setting *out, int max);

/*! gt_nccl_level_parse() : NCCL's reading of a path level (ncclGetLevel):
 *  the canonical name ("PXB"), or NULL when NCCL ignores the text. */
const char *gt_nccl_level_parse(const char *text);

#endif
