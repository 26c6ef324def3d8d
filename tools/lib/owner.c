/* SPDX-License-Identifier: Apache-2.0 */
/*
 * owner.c — the names of the users who own recorders (owner.h).  Invariant:
 * never fails: a uid the system does not know is shown as its number.
 */
#include "tools/lib/owner.h"

#include <pwd.h>
#include <stdio.h>
#include <sys/types.h>

const char *gt_owner_name(long uid, char *buf, size_t n)
{
    struct passwd *pw = uid >= 0 ? getpwuid((uid_t)uid) : NULL;
    if (uid < 0)
        snprintf(buf, n, "unknown owner");
    else if (pw && pw->pw_name)
        snprintf(buf, n, "%s (uid %ld)", pw->pw_name, uid);
    else
        snprintf(buf, n, "uid %ld", uid);
    return buf;
}

const char *gt_owner_short(long uid, char *buf, size_t n)
{
    struct passwd *pw = uid >= 0 ? getpwuid((uid_t)uid) : NULL;
    if (uid < 0)
        snprintf(buf, n, "-");
    else if (pw && pw->pw_name)
        snprintf(buf, n, "%s", pw->pw_name);
    else
        snprintf(buf, n, "%ld", uid);
    return buf;
}
