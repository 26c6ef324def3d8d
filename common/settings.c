/* SPDX-License-Identifier: Apache-2.0 */
/*
 * settings.c — parsing of the settings in force (contract in settings.h).
 * Invariants: a parser's return value and the `value` it writes are the
 * same choice; the snapshot is filled once (per gt_settings_reset_for_test
 * in tests) and never written after it is published, so what the recorder
 * stores is what every user uses.
 */
#include "common/settings.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/env.h"
#include "common/log.h"
#include "common/nccl_env.h"

static void fill(struct gt_setting *out, const char *name, const char *value, const char *set,
                 int source)
{
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    snprintf(out->key, sizeof(out->key), "%s", name);
    snprintf(out->value, sizeof(out->value), "%s", value);
    if (set)
        snprintf(out->origin, sizeof(out->origin), "%s=%s", name, set);
    out->source = source;
}

int gt_setting_choice(struct gt_setting *out, const char *name, const char *const *choices,
                      int dflt, int warn)
{
    const char *v = gt_env_str(name);
    if (v) {
        for (int i = 0; choices[i]; i++)
            if (strcasecmp(v, choices[i]) == 0) {
                fill(out, name, choices[i], v, GT_SRC_GDRTRACE);
                return i;
            }
        if (warn) {
            char list[256] = "";
            for (int i = 0; choices[i]; i++)
                if (strlen(list) + strlen(choices[i]) + 2 < sizeof(list)) {
                    if (i)
                        strcat(list, "|");
                    strcat(list, choices[i]);
                }
            GT_WARN("%s='%s' is not one of %s; using the default", name, v, list);
        }
    }
    fill(out, name, dflt >= 0 ? choices[dflt] : "", v, v ? GT_SRC_INVALID : GT_SRC_DEFAULT);
    return dflt;
}

int gt_setting_bool(struct gt_setting *out, const char *name, int dflt, int warn)
{
    static const char *const choices[] = {"0",   "1",   "false", "true", "no",
                                          "yes", "off", "on",    NULL};
    int i = gt_setting_choice(out, name, choices, dflt ? 1 : 0, warn);
    int b = i & 1;
    if (out) /* canonical spelling: "yes" is in force as "1" */
        snprintf(out->value, sizeof(out->value), "%d", b);
    return b;
}

void gt_reg_policy_read(struct gt_reg_policy *p, struct gt_setting s[GT_REG_POLICY_SETTINGS],
                        int warn)
{
    /* the accepted values are the codes' names (common/codes.c): what the
     * recorder writes and the reader shows are the same words */
    const char *reg_modes[GT_REG_MODE_COUNT + 1] = {NULL};
    for (int m = 0; m < GT_REG_MODE_COUNT; m++)
        reg_modes[m] = gt_reg_mode_name(m);
    p->mode = gt_setting_choice(s ? &s[0] : NULL, "GDRTRACE_REG", reg_modes, GT_REG_DMABUF, warn);
    /* auto means "DMA-BUF, else peermem": its default allows the fallback */
    p->allow_peermem =
        gt_setting_bool(s ? &s[1] : NULL, "GDRTRACE_ALLOW_PEERMEM", p->mode == GT_REG_AUTO, warn);
    struct gt_setting ro;
    p->relaxed_ordering = gt_setting_bool(&ro, "GDRTRACE_IB_RELAXED_ORDERING", 1, warn);
    if (ro.source != GT_SRC_GDRTRACE) {
        /* NCCL's 0 is off, 1 on, 2 (its default) on where supported: ours is
         * always "where ibv_reg_mr_iova2 exists", so 1 and 2 both mean on. */
        struct gt_setting n;
        long v = gt_nccl_long(&n, "NCCL_IB_PCI_RELAXED_ORDERING", NULL, 2, 0, 2, warn);
        if (n.source != GT_SRC_DEFAULT &&
            (ro.source == GT_SRC_DEFAULT || n.source != GT_SRC_INVALID)) {
            p->relaxed_ordering = v != 0;
            snprintf(ro.value, sizeof(ro.value), "%d", p->relaxed_ordering);
            snprintf(ro.origin, sizeof(ro.origin), "%s", n.origin);
            ro.source = n.source;
        }
    }
    if (s)
        s[2] = ro;
}

static const char *const transports[GT_TRANSPORT_COUNT + 1] = {"auto", "ib", "sock", "inner", NULL};

const char *gt_transport_name(int id)
{
    return (id >= 0 && id < GT_TRANSPORT_COUNT) ? transports[id] : "?";
}

int gt_transport_read(struct gt_setting *s, int warn)
{
    return gt_setting_choice(s, "GDRTRACE_TRANSPORT", transports, GT_TRANSPORT_AUTO, warn);
}

int gt_events_read(struct gt_setting *s, int warn)
{
    static const char *const choices[] = {"control", "all", NULL};
    return gt_setting_choice(s, "GDRTRACE_EVENTS", choices, 0, warn) == 1;
}

int gt_gpumem_read(struct gt_gpumem_cfg *c, struct gt_setting s[GT_GPUMEM_SETTINGS], int warn)
{
    c->on = gt_setting_bool(s ? &s[0] : NULL, "GDRTRACE_GPUMEM", 0, warn);
    c->peermem = gt_setting_bool(s ? &s[1] : NULL, "GDRTRACE_GPUMEM_PEERMEM", 0, warn);
    c->force_flush = gt_setting_bool(s ? &s[2] : NULL, "GDRTRACE_GPUMEM_FORCE_FLUSH", 0, warn);
    const char *name = "GDRTRACE_GPUMEM_DMABUF_ERRNO";
    const char *v = gt_env_str(name);
    char *end = NULL;
    long e = v ? strtol(v, &end, 10) : 0;
    int ok = v && end != v && *end == 0 && e >= 0 && e < 4096;
    c->dmabuf_errno = ok ? (int)e : 0;
    if (v && !ok && warn)
        GT_WARN("%s='%s' is not an errno number (0..4095); the test switch stays off", name, v);
    char val[16];
    snprintf(val, sizeof(val), "%d", c->dmabuf_errno);
    fill(s ? &s[3] : NULL, name, val, v,
         !v   ? GT_SRC_DEFAULT
         : ok ? GT_SRC_GDRTRACE
              : GT_SRC_INVALID);
    return c->on;
}

/* The snapshot: written once under g_set_lock, published by the release
 * store of g_set_taken, read lock-free after the acquire load. */
static struct gt_settings g_set;
static int g_set_taken;
static pthread_mutex_t g_set_lock = PTHREAD_MUTEX_INITIALIZER;

const struct gt_settings *gt_settings_get(void)
{
    if (__atomic_load_n(&g_set_taken, __ATOMIC_ACQUIRE))
        return &g_set;
    pthread_mutex_lock(&g_set_lock);
    if (!__atomic_load_n(&g_set_taken, __ATOMIC_RELAXED)) {
        struct gt_settings *s = &g_set;
        memset(s, 0, sizeof(*s));
        gt_reg_policy_read(&s->reg, s->reg_set, 1);
        s->transport = gt_transport_read(&s->transport_set, 1);
        s->events_all = gt_events_read(&s->events_set, 1);
        gt_gpumem_read(&s->gpumem, s->gpumem_set, 1);
        __atomic_store_n(&g_set_taken, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g_set_lock);
    return &g_set;
}

void gt_settings_reset_for_test(void)
{
    pthread_mutex_lock(&g_set_lock);
    __atomic_store_n(&g_set_taken, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_set_lock);
}
