/* SPDX-License-Identifier: Apache-2.0 */
/* env.c — see env.h. */
#include "common/env.h"

#include <ctype.h>
#include <stdatomic.h>
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

/* The names every GDRTRACE_* variable may have: common/env_known.c. */
extern const char *const gt_env_known[];
extern const size_t gt_env_nknown;

size_t gt_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < c)
                c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c)
                c = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < c)
                c = d[i - 2][j - 2] + 1;
            d[i][j] = c;
        }
    return d[la][lb];
}

extern char **environ;

int gt_env_check_unknown(void)
{
    static _Atomic int done;
    if (atomic_exchange(&done, 1))
        return 0;
    int n = 0;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "GDRTRACE_", 9) != 0)
            continue;
        size_t len = strcspn(*e, "=");
        char name[64];
        if (len >= sizeof(name))
            len = sizeof(name) - 1;
        memcpy(name, *e, len);
        name[len] = 0;
        const char *best = NULL;
        size_t bd = 64;
        for (size_t i = 0; i < gt_env_nknown; i++) {
            size_t dd = gt_edit_distance(name, gt_env_known[i]);
            if (dd < bd)
                bd = dd, best = gt_env_known[i];
        }
        if (bd == 0)
            continue;
        n++;
        if (best && bd <= 3)
            GT_WARN("%s is not a gdrtrace variable and is ignored: did you mean %s? (see "
                    "docs/configuration.md)",
                    name, best);
        else
            GT_WARN("%s is not a gdrtrace variable and is ignored (docs/configuration.md lists "
                    "them)",
                    name);
    }
    return n;
}
