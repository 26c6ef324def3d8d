/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abguard.c — the A/B's confounder guard (abguard.h): everything but the
 * registration path compared between two recorders, and NCCL's GPU Direct
 * decisions between two runs' logs.  Each difference is one line naming the
 * field and both values; the judge (ab.c) concludes nothing when any.
 */
#include "tools/lib/abguard.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fingerprint.h"
#include "common/nccl_cfg.h"
#include "tools/lib/nccljoin.h"
#include "tools/lib/nccllog.h"
#include "tools/lib/ncclcfg.h"
#include "tools/lib/recfact.h"

void gt_abguard_warn(struct gt_abguard *ws, const char *fmt, ...)
{
    if (ws->n == ws->cap) {
        int nc = ws->cap ? ws->cap * 2 : 16;
        void *p = realloc(ws->w, (size_t)nc * sizeof(*ws->w));
        if (!p)
            return;
        ws->w = p;
        ws->cap = nc;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ws->w[ws->n++], sizeof(ws->w[0]), fmt, ap);
    va_end(ap);
}

struct fpctx {
    struct gt_abguard *ws;
    const char *la, *lb;
};

static void fp_cb(const char *field, const char *a, const char *b, void *arg)
{
    struct fpctx *c = arg;
    gt_abguard_warn(c->ws, "node.%s: %s \"%s\" vs %s \"%s\"", field, c->la, a, c->lb, b);
}

/* The settings an A/B canary varies: everything else must be equal. */
static int is_reg_path(const char *key)
{
    return !strcmp(key, "GDRTRACE_REG") || !strcmp(key, "GDRTRACE_ALLOW_PEERMEM");
}

static const struct gtr_setting *find_setting(const struct gt_recfile *r, const char *key,
                                              size_t klen)
{
    for (uint32_t i = 0; i < r->nset; i++)
        if (r->settings[i].in_use && strlen(r->settings[i].key) == klen &&
            !strncmp(r->settings[i].key, key, klen))
            return &r->settings[i];
    return NULL;
}

/* 1.2+: the settings in force, key by key: every one but the registration
 * path must have the same value on both sides, and an invalid one (the
 * default was in force, not what the operator wrote) is named on its own. */
static void compare_settings(struct gt_abguard *ws, const struct gt_recfile *a,
                             const struct gt_recfile *b, const char *la, const char *lb)
{
    const struct gt_recfile *side[2] = {a, b};
    const char *lab[2] = {la, lb};
    for (int s = 0; s < 2; s++)
        for (uint32_t i = 0; i < side[s]->nset; i++) {
            const struct gtr_setting *x = &side[s]->settings[i];
            if (!x->in_use)
                continue;
            if (x->source == GT_SRC_INVALID && !gt_nccl_cfg_find(x->key))
                gt_abguard_warn(
                    ws, "setting %s: %s has the invalid %s; the default \"%s\" was in force",
                    x->key, lab[s], x->origin, x->value);
            if (is_reg_path(x->key) || gt_nccl_cfg_find(x->key))
                continue; /* NCCL's own: compare_nccl_settings() */
            const struct gtr_setting *y = find_setting(side[1 - s], x->key, strlen(x->key));
            if (!y)
                gt_abguard_warn(ws, "setting %s: %s \"%s\", %s does not record it", x->key, lab[s],
                                x->value, lab[1 - s]);
            else if (s == 0 && strcmp(x->value, y->value))
                gt_abguard_warn(ws, "setting %s: %s \"%s\" vs %s \"%s\"", x->key, la, x->value, lb,
                                y->value);
        }
}

/* NCCL's own settings that decide GPU Direct and the transport
 * (common/nccl_cfg.h), by what NCCL made of them: NCCL, not gdrtrace, acts
 * on these, so a difference changes what NCCL hands the plugin, and the
 * runs no longer differ in the registration path only.  A side whose
 * recorder predates their recording is said once. */
static void compare_nccl_settings(struct gt_abguard *ws, const struct gt_recfile *a,
                                  const struct gt_recfile *b, const char *la, const char *lb)
{
    int ra = gt_ncclcfg_recorded(a), rb = gt_ncclcfg_recorded(b);
    if (!ra && !rb)
        return;
    if (!ra || !rb) {
        gt_abguard_warn(
            ws,
            "NCCL settings: %s records NCCL's GPU Direct and transport settings, %s's recorder "
            "(plugin %s) does not: whether NCCL ran both the same way is unknown",
            ra ? la : lb, ra ? lb : la, (ra ? b : a)->id.plugin_version);
        return;
    }
    size_t n;
    const struct gt_nccl_cfg *t = gt_nccl_cfg_table(&n);
    static const char *const role[] = {"decides GPU Direct", "decides the transport",
                                       "ignored by NCCL 2.4 and later"};
    for (size_t i = 0; i < n; i++) {
        const struct gtr_setting *x = gt_ncclcfg_get(a, t[i].name);
        const struct gtr_setting *y = gt_ncclcfg_get(b, t[i].name);
        const struct gtr_setting *side[2] = {x, y};
        const char *lab[2] = {la, lb};
        char tx[320], ty[320];
        for (int k = 0; k < 2; k++)
            if (side[k] && side[k]->source == GT_SRC_INVALID)
                gt_abguard_warn(ws, "NCCL setting %s: %s has %s", t[i].name, lab[k],
                                gt_ncclcfg_text(side[k], tx, sizeof(tx)));
        const char *vx = x ? x->value : "", *vy = y ? y->value : "";
        if (!strcmp(vx, vy))
            continue;
        if (x)
            gt_ncclcfg_text(x, tx, sizeof(tx));
        else
            snprintf(tx, sizeof(tx), "%s unset", t[i].name);
        if (y)
            gt_ncclcfg_text(y, ty, sizeof(ty));
        else
            snprintf(ty, sizeof(ty), "%s unset", t[i].name);
        gt_abguard_warn(ws, "NCCL setting %s (%s): %s %s vs %s %s", t[i].name,
                        role[t[i].role < 3 ? t[i].role : 0], la, tx, lb, ty);
    }
}

/* GDRTRACE_* variables set, other than the registration path and those the
 * settings sections of a or b (either may be NULL) record, sorted, "K=V K=V". */
static void other_policy(const char *text, const struct gt_recfile *a, const struct gt_recfile *b,
                         char *out, size_t n)
{
    char buf[512], *save = NULL, *toks[64];
    int nt = 0;
    snprintf(buf, sizeof(buf), "%s", text);
    for (char *t = strtok_r(buf, " ", &save); t && nt < 64; t = strtok_r(NULL, " ", &save)) {
        size_t klen = strcspn(t, "=");
        if (!strncmp(t, "GDRTRACE_REG=", 13) || !strncmp(t, "GDRTRACE_ALLOW_PEERMEM=", 23) ||
            !strncmp(t, "GDRTRACE_DIR=", 13) || !strncmp(t, "GDRTRACE_JOB=", 13) ||
            (a && find_setting(a, t, klen)) || (b && find_setting(b, t, klen)))
            continue;
        toks[nt++] = t;
    }
    for (int i = 1; i < nt; i++)
        for (int k = i; k > 0 && strcmp(toks[k - 1], toks[k]) > 0; k--) {
            char *x = toks[k];
            toks[k] = toks[k - 1];
            toks[k - 1] = x;
        }
    out[0] = 0;
    for (int i = 0; i < nt; i++) {
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%s", i ? " " : "", toks[i]);
    }
}

static void devices_text(const struct gt_recfile *r, char *out, size_t n)
{
    out[0] = 0;
    for (uint32_t k = 0; k < r->ndev; k++) {
        const struct gtr_device *d = &r->devs[k];
        if (!d->in_use)
            continue;
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%d:%s/%s", l ? "," : "", d->dev, d->name, d->transport);
    }
}

/* Everything but the registration path, between two recorders. */
void gt_abguard_recs(struct gt_abguard *ws, const struct gt_recfile *a, const struct gt_recfile *b,
                     const char *la, const char *lb)
{
    struct fpctx fc = {ws, la, lb};
    gt_fingerprint_diff(&a->id.node, &b->id.node, fp_cb, &fc);
#define CMP_INT(f, name)                                                                           \
    if (a->id.f != b->id.f)                                                                        \
    gt_abguard_warn(ws, "%s: %s %d vs %s %d", name, la, (int)a->id.f, lb, (int)b->id.f)
#define CMP_STR(f, name)                                                                           \
    if (strcmp(a->id.f, b->id.f))                                                                  \
    gt_abguard_warn(ws, "%s: %s \"%s\" vs %s \"%s\"", name, la, a->id.f, lb, b->id.f)
    CMP_INT(nccl_version, "NCCL version");
    CMP_STR(plugin_version, "plugin version");
    CMP_INT(abi_version, "net plugin ABI");
    CMP_STR(transport, "transport");
    CMP_INT(world_size, "world size");
    char x[512], y[512];
    /* Settings key by key when both files have the section (1.2+); else, and
     * for the variables no section records, the variables as set. */
    const struct gt_recfile *sa = NULL, *sb = NULL;
    if (a->nset && b->nset) {
        compare_settings(ws, a, b, la, lb);
        compare_nccl_settings(ws, a, b, la, lb);
        sa = a;
        sb = b;
    }
    other_policy(a->id.policy_text, sa, sb, x, sizeof(x));
    other_policy(b->id.policy_text, sa, sb, y, sizeof(y));
    if (strcmp(x, y))
        gt_abguard_warn(ws, "other GDRTRACE_* settings: %s \"%s\" vs %s \"%s\"", la, x, lb, y);
    devices_text(a, x, sizeof(x));
    devices_text(b, y, sizeof(y));
    if (strcmp(x, y))
        gt_abguard_warn(ws, "devices: %s \"%s\" vs %s \"%s\"", la, x, lb, y);
#undef CMP_INT
#undef CMP_STR
}

/* NCCL's GPU Direct decisions and GDRDMA channels of two runs' logs; a
 * difference is one more reason A and B are not comparable.  0, or
 * GT_EXIT_INPUT when a log could not be read. */
int gt_abguard_gdr(struct gt_abguard *ws, char **logs[2], const int nlog[2])
{
    struct gt_nlog l[2];
    char t[2][400];
    uint64_t lines[2], gdr[2];
    int bad = 0;
    for (int s = 0; s < 2; s++) {
        if (gt_nlog_init(&l[s]))
            return GT_EXIT_INPUT;
        bad += gt_nccl_log_load(&l[s], logs[s], nlog[s]);
        gt_nlog_gdr_text(&l[s], t[s], sizeof(t[s]));
        lines[s] = l[s].net_lines;
        gdr[s] = l[s].net_gdrdma;
        gt_nlog_free(&l[s]);
    }
    if (strcmp(t[0], t[1]))
        gt_abguard_warn(ws, "nccl-log GPU Direct decisions: A \"%s\" vs B \"%s\"", t[0], t[1]);
    if ((gdr[0] > 0) != (gdr[1] > 0) || (gdr[0] < lines[0]) != (gdr[1] < lines[1]))
        gt_abguard_warn(ws, "nccl-log NET channels with GDRDMA: A %llu of %llu vs B %llu of %llu",
                        (unsigned long long)gdr[0], (unsigned long long)lines[0],
                        (unsigned long long)gdr[1], (unsigned long long)lines[1]);
    return bad ? GT_EXIT_INPUT : 0;
}
