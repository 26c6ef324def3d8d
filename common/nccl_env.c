/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccl_env.c — NCCL's variables with NCCL's meaning (contract in
 * nccl_env.h).
 *
 * Invariants: `files` holds the variables of the conf-file chain, first
 * file first, each name once (the first file naming it wins, as NCCL's
 * setenv(..., 0) makes it); `noted` holds one entry per key.  Both, and the
 * once-only flags, change only under `lock`.
 */
#include "common/nccl_env.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/env.h"
#include "common/log.h"

const char *gt_nccl_etc_conf = "/etc/nccl.conf";
const char *gt_nccl_proc_environ = "/proc/self/environ";

#define MAX_FILE_VARS 256
#define MAX_NOTED 32

struct file_var {
    char name[128];
    char value[1024];
    char path[256];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int files_read;
static struct file_var *files;
static int nfiles;
/* The environment the process started with ("A=1\0B=2\0"), NULL when
 * unreadable: NCCL's setenv(..., 0) of conf-file values does not change it. */
static char *initial_env;
static size_t initial_len;
static struct gt_setting noted[MAX_NOTED];
static int nnoted;
static int plugin_checked;
static const char *plugin_name;
static unsigned long warned; /* bit i: unhonored[i] said */

/* One conf file, NCCL's line syntax; names already known keep their value. */
static void read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[4096];
    while (fgets(line, (int)sizeof(line), f)) {
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
            line[--len] = '\0';
        if (len && line[len - 1] == '\r')
            line[--len] = '\0';
        char *eq = strchr(line, '=');
        if (line[0] == '#' || !eq || eq == line)
            continue; /* setenv refuses an empty name */
        *eq = '\0';
        if (strlen(line) >= sizeof(files[0].name))
            continue; /* longer than any variable we read */
        int known = 0;
        for (int i = 0; i < nfiles && !known; i++)
            known = strcmp(files[i].name, line) == 0;
        if (known || nfiles >= MAX_FILE_VARS)
            continue;
        struct file_var *v = &files[nfiles++];
        /* lengths checked above (name) or cut as NCCL cuts them (value) */
        memcpy(v->name, line, strlen(line) + 1);
        size_t vl = strnlen(eq + 1, sizeof(v->value) - 1);
        memcpy(v->value, eq + 1, vl);
        v->value[vl] = '\0';
        size_t pl = strnlen(path, sizeof(v->path) - 1);
        memcpy(v->path, path, pl);
        v->path[pl] = '\0';
    }
    fclose(f);
}

/* Caller holds lock.  /proc/self/environ is the block exec() gave the
 * process; setenv() builds new strings elsewhere, so a name missing here
 * but present in getenv() was set by the process itself (NCCL's initEnv()
 * for conf-file values, before any plugin is loaded). */
static void read_initial_env(void)
{
    free(initial_env);
    initial_env = NULL;
    initial_len = 0;
    FILE *f = fopen(gt_nccl_proc_environ, "r");
    if (!f)
        return;
    size_t cap = 0, len = 0;
    char *buf = NULL;
    for (;;) {
        if (len == cap) {
            size_t nc = cap ? 2 * cap : 8192;
            char *nb = nc > (64u << 20) ? NULL : realloc(buf, nc + 1);
            if (!nb) { /* absurdly large or no memory: say nothing rather than guess */
                free(buf);
                fclose(f);
                return;
            }
            buf = nb;
            cap = nc;
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        if (r == 0)
            break;
        len += r;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return;
    }
    buf[len] = '\0';
    initial_env = buf;
    initial_len = len;
}

/* Caller holds lock: 1 when `name` was in the environment at exec, 0 when
 * not, -1 when that is unknown. */
static int in_initial_env(const char *name)
{
    if (!initial_env)
        return -1;
    size_t nl = strlen(name);
    for (size_t i = 0; i < initial_len;) {
        const char *e = initial_env + i;
        size_t el = strnlen(e, initial_len - i);
        if (el > nl && e[nl] == '=' && memcmp(e, name, nl) == 0)
            return 1;
        i += el + 1;
    }
    return 0;
}

/* Caller holds lock. */
static void load_files(void)
{
    if (files_read)
        return;
    files_read = 1;
    if (!files)
        files = calloc(MAX_FILE_VARS, sizeof(*files));
    if (!files)
        return;
    char path[1024];
    const char *user = getenv("NCCL_CONF_FILE");
    if (user && *user)
        read_file(user);
    else if (getenv("HOME")) {
        snprintf(path, sizeof(path), "%s/.nccl.conf", getenv("HOME"));
        read_file(path);
    }
    read_file(gt_nccl_etc_conf);
    read_initial_env();
}

const char *gt_nccl_raw(const char *name, const char **where)
{
    const char *env = getenv(name);
    const char *v = NULL, *path = NULL;
    pthread_mutex_lock(&lock);
    load_files();
    for (int i = 0; i < nfiles; i++)
        if (strcmp(files[i].name, name) == 0) {
            v = files[i].value;
            path = files[i].path;
            break;
        }
    /* In the environment now: the environment's, unless NCCL put it there
     * from the file that names it with this very value (it was not in the
     * environment the process started with). */
    if (env && !(v && strcmp(env, v) == 0 && in_initial_env(name) == 0)) {
        v = env;
        path = "environment";
    }
    pthread_mutex_unlock(&lock);
    if (where)
        *where = v ? path : NULL;
    return v;
}

const char *gt_nccl_env_plugin(void)
{
    pthread_mutex_lock(&lock);
    if (!plugin_checked) {
        plugin_checked = 1;
        const char *e = getenv("NCCL_ENV_PLUGIN");
        if (e && strcasecmp(e, "none") != 0)
            plugin_name = e;
        else if (!e) {
            /* NCCL opens libnccl-env.so by default: if it is in the
             * process, NCCL asked it, not the environment. */
            void *h = dlopen("libnccl-env.so", RTLD_LAZY | RTLD_NOLOAD);
            if (h) {
                dlclose(h);
                plugin_name = "libnccl-env.so";
            }
        }
        if (plugin_name)
            GT_WARN("NCCL environment plugin '%s' in use: NCCL may see values for NCCL_* "
                    "variables that we cannot read; we use the process environment and the "
                    "conf files, and record the source of those settings as unknown",
                    plugin_name);
    }
    const char *r = plugin_name;
    pthread_mutex_unlock(&lock);
    return r;
}

static void fill(struct gt_setting *out, const char *key, const char *value, const char *var,
                 const char *set, const char *where, int source)
{
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    snprintf(out->key, sizeof(out->key), "%s", key);
    snprintf(out->value, sizeof(out->value), "%s", value ? value : "");
    if (set && where && strcmp(where, "environment") != 0)
        snprintf(out->origin, sizeof(out->origin), "%s=%s (%s)", var, set, where);
    else if (set)
        snprintf(out->origin, sizeof(out->origin), "%s=%s", var, set);
    if (source == GT_SRC_NCCL && gt_nccl_env_plugin())
        source = GT_SRC_UNKNOWN;
    out->source = source;
}

/* NCCL's integer reading: strtoll base 0 on a non-empty value; an overflow
 * means the default.  Returns 0 and *x, 1 when text followed the number
 * (*x is still what NCCL uses), -1 on overflow. */
static int nccl_strtol(const char *s, long *x)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || v < -0x7fffffffL - 1 || v > 0x7fffffffL)
        return -1;
    *x = (long)v;
    return *end ? 1 : 0;
}

long gt_nccl_long(struct gt_setting *out, const char *nccl, const char *twin, long dflt, long min,
                  long max, int warn)
{
    const char *key = twin ? twin : nccl;
    char num[32];
    const char *tv = twin ? gt_env_str(twin) : NULL;
    long x;
    if (tv) {
        if (gt_parse_long(tv, min, max, &x) == 0) {
            snprintf(num, sizeof(num), "%ld", x);
            fill(out, key, num, twin, tv, NULL, GT_SRC_GDRTRACE);
            return x;
        }
        if (warn)
            GT_WARN("%s='%s' is not an integer in [%ld, %ld]; ignoring it", twin, tv, min, max);
    }
    const char *where = NULL;
    const char *nv = gt_nccl_raw(nccl, &where);
    if (nv && *nv) {
        int rc = nccl_strtol(nv, &x);
        if (rc >= 0 && x >= min && x <= max) {
            if (rc == 1 && warn)
                GT_WARN("%s='%s' (%s): NCCL reads the leading number only; using %ld as NCCL "
                        "does",
                        nccl, nv, where, x);
            snprintf(num, sizeof(num), "%ld", x);
            fill(out, key, num, nccl, nv, where, GT_SRC_NCCL);
            return x;
        }
        if (warn)
            GT_WARN("%s='%s' (%s) is not an integer in [%ld, %ld]; using %ld", nccl, nv, where, min,
                    max, dflt);
        snprintf(num, sizeof(num), "%ld", dflt);
        fill(out, key, num, nccl, nv, where, GT_SRC_INVALID);
        return dflt;
    }
    snprintf(num, sizeof(num), "%ld", dflt);
    if (tv) /* the twin was invalid and nothing else is set */
        fill(out, key, num, twin, tv, NULL, GT_SRC_INVALID);
    else
        fill(out, key, num, NULL, NULL, NULL, GT_SRC_DEFAULT);
    return dflt;
}

const char *gt_nccl_str(struct gt_setting *out, const char *nccl, const char *twin)
{
    const char *key = twin ? twin : nccl;
    const char *tv = twin ? gt_env_str(twin) : NULL;
    if (tv) {
        fill(out, key, tv, twin, tv, NULL, GT_SRC_GDRTRACE);
        return tv;
    }
    const char *where = NULL;
    const char *nv = gt_nccl_raw(nccl, &where);
    if (nv && *nv) {
        fill(out, key, nv, nccl, nv, where, GT_SRC_NCCL);
        return nv;
    }
    fill(out, key, "", NULL, NULL, NULL, GT_SRC_DEFAULT);
    return NULL;
}

void gt_nccl_note(const struct gt_setting *s)
{
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < nnoted && strcmp(noted[i].key, s->key) != 0)
        i++;
    if (i < MAX_NOTED) {
        noted[i] = *s;
        if (i == nnoted)
            nnoted++;
    }
    pthread_mutex_unlock(&lock);
}

void gt_nccl_unnote(const char *prefix)
{
    pthread_mutex_lock(&lock);
    int k = 0;
    for (int i = 0; i < nnoted; i++)
        if (strncmp(noted[i].key, prefix, strlen(prefix)) != 0)
            noted[k++] = noted[i];
    nnoted = k;
    pthread_mutex_unlock(&lock);
}

int gt_nccl_noted(struct gt_setting *out, int max)
{
    pthread_mutex_lock(&lock);
    int n = nnoted < max ? nnoted : max;
    memcpy(out, noted, (size_t)n * sizeof(*out));
    pthread_mutex_unlock(&lock);
    return n;
}

/* NCCL variables we do not honor.  `same` is the value (compared as NCCL
 * reads it) that asks for what we do anyway: no WARN then. */
static const struct {
    const char *transport;
    const char *name;
    const char *same;
    const char *instead;
} unhonored[] = {
    {"ib", "NCCL_IB_USE_INLINE", "0", "no work request is posted inline"},
    {"ib", "NCCL_IB_MERGE_NICS", "0", "each port is its own device; ports are never merged"},
    {"ib", "NCCL_IB_RESILIENCY_PORT_FAILOVER", "0",
     "no port failover: a failed port fails its connections, with the reason"},
    {"sock", "NCCL_SOCKET_NTHREADS", NULL,
     "one TCP socket per connection and no helper threads (plugin/sock/README.md)"},
    {"sock", "NCCL_NSOCKS_PERTHREAD", NULL,
     "one TCP socket per connection and no helper threads (plugin/sock/README.md)"},
};

int gt_nccl_warn_unhonored(const char *which)
{
    int n = 0;
    for (size_t i = 0; i < sizeof(unhonored) / sizeof(unhonored[0]); i++) {
        if (strcmp(unhonored[i].transport, which) != 0)
            continue;
        const char *where = NULL;
        const char *v = gt_nccl_raw(unhonored[i].name, &where);
        if (!v || !*v)
            continue;
        n++;
        long x, same;
        if (unhonored[i].same && nccl_strtol(v, &x) >= 0 &&
            nccl_strtol(unhonored[i].same, &same) == 0 && x == same)
            continue;
        pthread_mutex_lock(&lock);
        int said = (warned >> i) & 1;
        warned |= 1ul << i;
        pthread_mutex_unlock(&lock);
        if (!said)
            GT_WARN("%s='%s' (%s) is not honored by gdrtrace's %s transport: %s "
                    "(docs/ib-vs-nccl.md)",
                    unhonored[i].name, v, where, which, unhonored[i].instead);
    }
    return n;
}

void gt_nccl_env_reload(void)
{
    pthread_mutex_lock(&lock);
    files_read = 0;
    nfiles = 0;
    free(initial_env);
    initial_env = NULL;
    initial_len = 0;
    nnoted = 0;
    plugin_checked = 0;
    plugin_name = NULL;
    warned = 0;
    pthread_mutex_unlock(&lock);
}
