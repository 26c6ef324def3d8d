/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recfact.c — see recfact.h.  The names compared are the plugin's own
 * (gt_reg_mode_name, common/codes.c), so the writer and the reader cannot
 * drift apart.
 */
#include "tools/lib/recfact.h"

#include <string.h>

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

void gt_rec_decide_facts(struct gt_recfile *r)
{
    r->reg_mode = reg_mode_of_name(r->id.policy_reg);
    r->emulated = emulated_of_strings(r);
}

int gt_rec_sock(const struct gt_recfile *r)
{
    return !strncmp(r->id.transport, "sock", 4);
}
