/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recfact.c — see recfact.h.  The names compared are the plugin's own
 * (gt_reg_mode_name, common/codes.c), so the writer and the reader cannot
 * drift apart.
 */
#include "tools/lib/recfact.h"

#include <string.h>

/* Files before 1.8 (or a writer that left a fact's bit clear) carry these
 * facts as strings only; the rules below are the ones the reader always had. */

/* The policy's name in identity.policy_reg, -1 for none this build knows. */
static int reg_mode_of_name(const char *name)
{
    for (int m = 0; m < GT_REG_MODE_COUNT; m++)
        if (!strcmp(name, gt_reg_mode_name(m)))
            return m;
    return -1;
}

/* The GPU-memory validation mode, from the transport's name or the setting
 * GDRTRACE_GPUMEM=1 (recorded only when it is on). */
static int emulated_of_strings(const struct gt_recfile *r)
{
    if (strstr(r->id.transport, "gpumem"))
        return 1;
    for (uint32_t i = 0; r->settings && i < r->nset; i++) {
        const struct gtr_setting *s = &r->settings[i];
        if (s->in_use && !strcmp(s->key, "GDRTRACE_GPUMEM") && !strcmp(s->value, "1"))
            return 1;
    }
    return 0;
}

/* 1 when the writer recorded the fact of bit `has` as a code (format 1.8). */
static int coded(const struct gt_recfile *r, unsigned has)
{
    return r->hdr.version_minor >= 8 && (r->id.facts & has);
}

void gt_rec_decide_facts(struct gt_recfile *r)
{
    if (coded(r, GTR_ID_HAS_REG_MODE)) /* a newer writer's code: unknown here */
        r->reg_mode = r->id.reg_mode < GT_REG_MODE_COUNT ? r->id.reg_mode : -1;
    else
        r->reg_mode = reg_mode_of_name(r->id.policy_reg);
    r->emulated = coded(r, GTR_ID_HAS_EMULATED) ? r->id.emulated != 0 : emulated_of_strings(r);
}

const char *gt_rec_reg_name(const struct gt_recfile *r)
{
    return r->reg_mode >= 0 ? gt_reg_mode_name(r->reg_mode) : r->id.policy_reg;
}

int gt_rec_sock(const struct gt_recfile *r)
{
    return !strncmp(r->id.transport, "sock", 4);
}
