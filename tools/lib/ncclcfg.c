/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ncclcfg.c — NCCL's recorded settings, as the readers explain them
 * (contract in ncclcfg.h; what NCCL does with each: common/nccl_cfg.c).
 *
 * Invariant: a sentence names a setting only as recorded (value, and where
 * NCCL got it), never from this machine's environment.  The facts it relies
 * on, from NCCL 2.18 … 2.30's ncclTopoCheckGdr: NCCL hands a net plugin GPU
 * memory only when the plugin offers NCCL_PTR_CUDA, the GPU supports GPU
 * Direct, and the GPU-NIC path is no farther than NCCL_NET_GDR_LEVEL (for
 * sends also NCCL_NET_GDR_READ); it then registers by regMrDmaBuf when
 * NCCL_DMABUF_ENABLE is not 0, CUDA says the GPU can export DMA-BUF and the
 * plugin offers NCCL_PTR_DMABUF, else by regMr(NCCL_PTR_CUDA).
 */
#include "tools/lib/ncclcfg.h"

#include <stdio.h>
#include <string.h>

#include "common/nccl_cfg.h"
#include "tools/lib/text_util.h"

const struct gtr_setting *gt_ncclcfg_get(const struct gt_recfile *r, const char *name)
{
    for (uint32_t i = 0; r->settings && i < r->nset; i++) {
        const struct gtr_setting *s = &r->settings[i];
        if (s->in_use && strncmp(s->key, name, sizeof(s->key)) == 0)
            return s;
    }
    return NULL;
}

int gt_ncclcfg_recorded(const struct gt_recfile *r)
{
    /* A writer that records them records every one of the table, set or
     * not; any GPU Direct one is enough to tell.  (NCCL_IB_DISABLE alone is
     * what older writers noted when it turned ib off: not enough.) */
    for (uint32_t i = 0; r->settings && i < r->nset; i++) {
        const struct gt_nccl_cfg *c =
            r->settings[i].in_use ? gt_nccl_cfg_find(r->settings[i].key) : NULL;
        if (c && c->role == GT_NCFG_GDR)
            return 1;
    }
    return 0;
}

int gt_ncclcfg_is_set(const struct gtr_setting *s)
{
    return s && (s->source == GT_SRC_NCCL || s->source == GT_SRC_UNKNOWN) && s->value[0];
}

/* From origin "NAME=text" or "NAME=text (PATH)" (common/nccl_env.c's
 * convention): the text NCCL read and where from.  A path is what ends the
 * origin in parentheses; a value holding " (" itself is rare enough that
 * reading the last one is the right guess. */
static void origin_parts(const struct gtr_setting *s, char *raw, size_t rn, char *where, size_t wn)
{
    char o[sizeof(s->origin) + 1];
    snprintf(o, sizeof(o), "%.*s", (int)sizeof(s->origin), s->origin);
    snprintf(where, wn, "environment");
    const char *eq = strchr(o, '=');
    const char *text = eq ? eq + 1 : o;
    size_t len = strlen(text);
    const char *open = NULL;
    for (const char *p = strstr(text, " ("); p; p = strstr(p + 1, " ("))
        open = p;
    if (open && len && text[len - 1] == ')') {
        snprintf(where, wn, "%.*s", (int)(text + len - 1 - (open + 2)), open + 2);
        len = (size_t)(open - text);
    }
    snprintf(raw, rn, "%.*s", (int)len, text);
}

const char *gt_ncclcfg_text(const struct gtr_setting *s, char *buf, size_t n)
{
    char key[sizeof(s->key) + 1], val[sizeof(s->value) + 1];
    snprintf(key, sizeof(key), "%.*s", (int)sizeof(s->key), s->key);
    snprintf(val, sizeof(val), "%.*s", (int)sizeof(s->value), s->value);
    const struct gt_nccl_cfg *c = gt_nccl_cfg_find(key);
    char raw[128], where[128];
    origin_parts(s, raw, sizeof(raw), where, sizeof(where));
    switch (s->source) {
    case GT_SRC_NCCL:
    case GT_SRC_UNKNOWN:
        if (strcmp(raw, val) != 0)
            snprintf(buf, n, "%s=%s (from %s, as %s=%s)", key, val, where, key, raw);
        else
            snprintf(buf, n, "%s=%s (from %s)", key, val, where);
        if (s->source == GT_SRC_UNKNOWN)
            gt_appendf(buf, n,
                       ", though an NCCL environment plugin may have given NCCL another "
                       "value");
        break;
    case GT_SRC_INVALID:
        snprintf(buf, n, "%s=%s (from %s), which NCCL ignores: its default (%s) in force", key, raw,
                 where, c ? c->dflt_text : "?");
        break;
    default:
        snprintf(buf, n, "%s unset (NCCL's default: %s)", key, c ? c->dflt_text : "?");
        break;
    }
    return buf;
}

/* The first recorder of ctx that records NCCL's settings. */
static const struct gt_recfile *first_recorded(const struct gt_recfile *const *ctx, size_t nctx)
{
    for (size_t i = 0; i < nctx; i++)
        if (gt_ncclcfg_recorded(ctx[i]))
            return ctx[i];
    return NULL;
}

static const char confirm[] =
    " To confirm, rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET: NCCL 2.18 to 2.29 print "
    "\"GPU Direct RDMA Disabled for GPU <g> / HCA <n> (distance X > Y)\" (2.30 only in TRACE "
    "builds; X and Y are path levels in NCCL's order LOC, NVL, NVB, [C2C,] PIX, PXB, [P2C,] PXN, "
    "PHB, SYS), and channel lines \"via NET/<plugin>/<dev>\" without \"/GDRDMA\".";

int gt_ncclcfg_why_host(char *why, size_t n, const struct gt_recfile *const *ctx, size_t nctx)
{
    const struct gt_recfile *r = first_recorded(ctx, nctx);
    if (!r)
        return 0;
    const struct gtr_setting *lvl = gt_ncclcfg_get(r, "NCCL_NET_GDR_LEVEL");
    const struct gtr_setting *rd = gt_ncclcfg_get(r, "NCCL_NET_GDR_READ");
    const struct gtr_setting *topo = gt_ncclcfg_get(r, "NCCL_TOPO_FILE");
    const struct gtr_setting *old = gt_ncclcfg_get(r, "NCCL_IB_GDR_LEVEL");
    char t[256], t2[256];
    gt_appendf(why, n, " The plugin offered GPU memory but NCCL never asked to register any:");
    if (gt_ncclcfg_is_set(lvl)) {
        gt_ncclcfg_text(lvl, t, sizeof(t));
        if (!strcmp(lvl->value, "LOC"))
            gt_appendf(why, n, " %s turns GPU Direct RDMA off for every NIC (no NIC is at LOC).",
                       t);
        else
            gt_appendf(why, n,
                       " %s: NCCL uses GPU Direct only up to that GPU-NIC path, and this GPU's "
                       "path to the NIC is farther.",
                       t);
    } else {
        if (lvl && lvl->source == GT_SRC_INVALID)
            gt_appendf(why, n, " %s.", gt_ncclcfg_text(lvl, t, sizeof(t)));
        if (gt_ncclcfg_is_set(topo))
            gt_appendf(why, n,
                       " NCCL's topology, read from %s, decided: the GPU-NIC path it gives is "
                       "beyond NCCL_NET_GDR_LEVEL's default (%s).",
                       gt_ncclcfg_text(topo, t2, sizeof(t2)),
                       gt_nccl_cfg_find("NCCL_NET_GDR_LEVEL")->dflt_text);
        else
            gt_appendf(why, n,
                       " no setting explains it (NCCL_NET_GDR_LEVEL unset): NCCL's topology "
                       "decided: the GPU-NIC PCI path is beyond NCCL_NET_GDR_LEVEL's default (%s), "
                       "or the GPU does not support GPU Direct RDMA.",
                       gt_nccl_cfg_find("NCCL_NET_GDR_LEVEL")->dflt_text);
    }
    if (rd && rd->source != GT_SRC_DEFAULT && !strcmp(rd->value, "0"))
        gt_appendf(why, n, " %s also keeps sends off GPU memory.",
                   gt_ncclcfg_text(rd, t, sizeof(t)));
    if (gt_ncclcfg_is_set(old) && !gt_ncclcfg_is_set(lvl))
        gt_appendf(why, n,
                   " %s is set, but NCCL 2.4 and later ignore that name: NCCL_NET_GDR_LEVEL is "
                   "the one read.",
                   gt_ncclcfg_text(old, t, sizeof(t)));
    gt_appendf(why, n, "%s", confirm);
    return 1;
}

int gt_ncclcfg_why_cuda(char *why, size_t n, const struct gt_recfile *const *ctx, size_t nctx)
{
    const struct gt_recfile *r = first_recorded(ctx, nctx);
    if (!r)
        return 0;
    const struct gtr_setting *dm = gt_ncclcfg_get(r, "NCCL_DMABUF_ENABLE");
    char t[256];
    if (dm && dm->source != GT_SRC_DEFAULT && !strcmp(dm->value, "0")) {
        gt_appendf(why, n, "; %s made NCCL call regMr(NCCL_PTR_CUDA), never regMrDmaBuf",
                   gt_ncclcfg_text(dm, t, sizeof(t)));
        return 1;
    }
    int offered = 0;
    for (size_t i = 0; i < nctx; i++)
        for (uint32_t k = 0; k < ctx[i]->ndev; k++)
            offered |= ctx[i]->devs[k].in_use && (ctx[i]->devs[k].ptr_support & GT_PTR_DMABUF);
    if (!offered)
        gt_appendf(why, n, "; the plugin did not offer NCCL_PTR_DMABUF, so NCCL could not use it");
    else
        gt_appendf(why, n,
                   "; %s, so NCCL itself found DMA-BUF unusable on this GPU (CUDA driver older "
                   "than 11.7, or the GPU reports no DMA-BUF support; NCCL's INFO line \"DMA-BUF "
                   "is available on GPU device <n>\" is missing then)",
                   dm ? gt_ncclcfg_text(dm, t, sizeof(t)) : "NCCL_DMABUF_ENABLE not recorded");
    return 1;
}

void gt_ncclcfg_why_read(char *why, size_t n, const struct gt_recfile *const *ctx, size_t nctx)
{
    const struct gt_recfile *r = first_recorded(ctx, nctx);
    const struct gtr_setting *rd = r ? gt_ncclcfg_get(r, "NCCL_NET_GDR_READ") : NULL;
    char t[256];
    if (rd && rd->source != GT_SRC_DEFAULT && !strcmp(rd->value, "0"))
        gt_appendf(why, n,
                   " %s: NCCL keeps its send buffers in host memory, so sends are staged through "
                   "host; only receives use GPU Direct.",
                   gt_ncclcfg_text(rd, t, sizeof(t)));
}
