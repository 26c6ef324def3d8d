/* SPDX-License-Identifier: Apache-2.0 */
/*
 * owner.c — the names of the users who own recorders (owner.h).  Invariant:
 * never fails: a uid the system does not know is shown as its number.
 * Single-threaded (a small cache of names, as the reader is).
 */
#include "tools/lib/owner.h"

#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* The names of the last few uids asked for: `ls` names an owner per
 * recorder, and getpwuid() reads the user database each time. */
#define NAME_CACHE 8
static struct {
    long uid;
    int known; /* 1: name holds the user's name; 0: not a known user */
    char name[64];
    int used;
} cache[NAME_CACHE];
static unsigned cache_next;

/* The user name of uid, or NULL when the system does not know it. */
static const char *user_name(long uid)
{
    for (int i = 0; i < NAME_CACHE; i++)
        if (cache[i].used && cache[i].uid == uid)
            return cache[i].known ? cache[i].name : NULL;
    struct passwd *pw = getpwuid((uid_t)uid);
    int k = (int)(cache_next++ % NAME_CACHE);
    cache[k].used = 0;
    if (pw && pw->pw_name && strlen(pw->pw_name) < sizeof(cache[k].name)) {
        snprintf(cache[k].name, sizeof(cache[k].name), "%s", pw->pw_name);
        cache[k].known = 1;
    } else if (pw && pw->pw_name) {
        return pw->pw_name; /* too long to keep: not cached */
    } else {
        cache[k].known = 0;
    }
    cache[k].uid = uid;
    cache[k].used = 1;
    return cache[k].known ? cache[k].name : NULL;
}

const char *gt_owner_name(long uid, char *buf, size_t n)
{
    const char *name = uid >= 0 ? user_name(uid) : NULL;
    if (uid < 0)
        snprintf(buf, n, "unknown owner");
    else if (name)
        snprintf(buf, n, "%s (uid %ld)", name, uid);
    else
        snprintf(buf, n, "uid %ld", uid);
    return buf;
}

const char *gt_owner_short(long uid, char *buf, size_t n)
{
    const char *name = uid >= 0 ? user_name(uid) : NULL;
    if (uid < 0)
        snprintf(buf, n, "-");
    else if (name)
        snprintf(buf, n, "%s", name);
    else
        snprintf(buf, n, "%ld", uid);
    return buf;
}
