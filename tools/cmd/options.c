/* SPDX-License-Identifier: Apache-2.0 */
/*
 * options.c — the shared options of the reader commands (options.h).  Each
 * value is checked here, once, with the one message its refusal prints;
 * which options a command takes is its own option table's business.
 */
#include "tools/cmd/options.h"

#include <string.h>

#include "tools/cmd/commands.h"
#include "tools/lib/model.h"

int gt_parse_expect(const char *cmd, const char *arg)
{
    if (!strcmp(arg, "dmabuf"))
        return GT_V_DIRECT_DMABUF;
    if (!strcmp(arg, "peermem"))
        return GT_V_DIRECT_PEERMEM;
    if (!strcmp(arg, "host"))
        return GT_V_HOST_STAGED;
    fprintf(stderr, "gdrtrace %s: --expect takes dmabuf, peermem or host, not '%s'\n", cmd, arg);
    return -1;
}

int gt_opts_default(struct gt_opts *o, int c, const char *arg, void (*usage)(FILE *))
{
    switch (c) {
    case GT_OPT_JSON:
        o->json = 1;
        return -1;
    case GT_OPT_FULL:
        o->full = 1;
        return -1;
    case GT_OPT_NO_BARS:
        o->no_bars = 1;
        return -1;
    case GT_OPT_FORCE:
        o->force = 1;
        return -1;
    case GT_OPT_OUTPUT:
        o->out = arg;
        return -1;
    case GT_OPT_JOB:
        o->job = arg;
        return -1;
    case GT_OPT_EXPECT:
        o->expect = gt_parse_expect(o->cmd, arg);
        o->expect_arg = arg;
        return o->expect < 0 ? GT_EXIT_USAGE : -1;
    case GT_OPT_ACCEPT_OWNER:
        return gt_inputs_accept_owner(&o->owners, arg, o->cmd) ? GT_EXIT_USAGE : -1;
    default: /* --help, or an option getopt refused */
        return gt_usage_exit(c, usage);
    }
}
