/* SPDX-License-Identifier: Apache-2.0 */
/* env.c — see env.h. */
#include "common/env.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "common/settings.h"

const char *gt_env_str(const char *name)
{
    const char *v = getenv(name);
    return (v && *v) ? v : NULL;
}

int gt_env_bool(const char *name, int dflt)
{
    static const char *const choices[] = {"0",   "1",   "false", "true", "no",
                                          "yes", "off", "on",    NULL};
    int i = gt_env_choice(name, choices, -1);
    return i < 0 ? dflt : (i & 1);
}

int gt_parse_long(const char *s, long min, long max, long *out)
{
    if (!s || !(isdigit((unsigned char)*s) || *s == '-' || *s == '+'))
        return -1; /* strtol would skip leading blanks */
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || *end || end == s || x < min || x > max)
        return -1;
    *out = x;
    return 0;
}

long gt_env_long(const char *name, long dflt, long min, long max)
{
    const char *v = gt_env_str(name);
    if (!v)
        return dflt;
    long x;
    if (gt_parse_long(v, min, max, &x)) {
        GT_WARN("%s='%s' is not an integer in [%ld, %ld]; using %ld", name, v, min, max, dflt);
        return dflt;
    }
    return x;
}

int gt_env_choice(const char *name, const char *const *choices, int dflt)
{
    return gt_setting_choice(NULL, name, choices, dflt, 1);
}

int gt_env_retired(const char *name, const char *instead)
{
    const char *v = gt_env_str(name);
    if (!v)
        return 0;
    GT_WARN("%s is retired and ignored (set to '%s'): %s (see docs/configuration.md)", name, v,
            instead);
    return 1;
}
