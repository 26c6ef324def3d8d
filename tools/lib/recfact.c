/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recfact.c — see recfact.h.  The names compared are the plugin's own
 * (gt_reg_mode_name), so the writer and the reader cannot drift apart.
 */
#include "tools/lib/recfact.h"

#include <string.h>

int gt_rec_reg_mode(const struct gt_recfile *r)
{
    for (int m = GT_REG_DMABUF; m <= GT_REG_AUTO; m++)
        if (!strcmp(r->id.policy_reg, gt_reg_mode_name(m)))
            return m;
    return -1;
}

int gt_rec_sock(const struct gt_recfile *r)
{
    return !strncmp(r->id.transport, "sock", 4);
}
