/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccllog.c — see nccllog.h: NCCL's lines read into facts (its invariants
 * 2-4; nccllog_state.c keeps the facts within their caps, invariant 1, and
 * nccllog_read.c turns streams and files into lines).
 *
 * Every NCCL line has the shape (src/debug.cc, 2.18 … 2.30)
 *     [TIMESTAMP ]HOST:PID:TID [DEV] NCCL INFO MESSAGE
 *     [TIMESTAMP ]HOST:PID:TID [DEV] FILE:LINE NCCL WARN MESSAGE
 * HOST cut at its first '.', TIMESTAMP optional (NCCL_DEBUG_TIMESTAMP_*; WARN
 * lines have one by default since 2.23).  The messages used are listed at
 * on_message(); each is matched from its fixed words, fields parsed with
 * overflow-checked helpers, never with sscanf.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tools/lib/nccllog_int.h"

const char *gt_nlog_plugin_name(int state)
{
    static const char *const n[] = {"unknown",     "loaded",      "other-plugin", "not-found",
                                    "load-failed", "unsupported", "init-failed",  "disabled"};
    return state >= 0 && state < (int)(sizeof(n) / sizeof(n[0])) ? n[state] : "?";
}

const char *gt_nlog_ch_name(int ch)
{
    static const char *const n[] = {"net-gdrtrace",  "net-other", "collnet-gdrtrace",
                                    "collnet-other", "p2p",       "shm",
                                    "nvls",          "other"};
    return ch >= 0 && ch < GT_NLOG_CH_COUNT ? n[ch] : "?";
}

int gt_nlog_ch_intra(int ch)
{
    return ch == GT_NLOG_CH_P2P || ch == GT_NLOG_CH_SHM || ch == GT_NLOG_CH_NVLS;
}

/* ---- small parsers over a NUL-terminated message --------------------- */

static int lit(const char **p, const char *s)
{
    size_t n = strlen(s);
    if (strncmp(*p, s, n))
        return 0;
    *p += n;
    return 1;
}

/* A decimal int32 (NCCL's %d fields: a split's color is any int), optional
 * '-'; more digits or a value out of range is no number. */
static int num(const char **p, int32_t *v)
{
    const char *s = *p;
    int neg = *s == '-';
    s += neg;
    int64_t x = 0;
    int k = 0;
    while (*s >= '0' && *s <= '9' && k < 11)
        x = x * 10 + (*s++ - '0'), k++;
    if (!k || (*s >= '0' && *s <= '9') || x > (int64_t)INT32_MAX + neg)
        return 0;
    *v = (int32_t)(neg ? -x : x);
    *p = s;
    return 1;
}

/* Hexadecimal, optional 0x, at most 16 digits. */
static int hexnum(const char **p, uint64_t *v)
{
    const char *s = *p;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2;
    uint64_t x = 0;
    int k = 0;
    for (;; s++, k++) {
        int d = *s >= '0' && *s <= '9'   ? *s - '0'
                : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
                : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
                                         : -1;
        if (d < 0)
            break;
        if (k == 16)
            return 0;
        x = x << 4 | (uint64_t)d;
    }
    if (!k)
        return 0;
    *v = x;
    *p = s;
    return 1;
}

/* %p as glibc prints it: 0x… or (nil). */
static int ptrval(const char **p, uint64_t *v)
{
    if (lit(p, "(nil)")) {
        *v = 0;
        return 1;
    }
    return hexnum(p, v);
}

/* Copies up to the first byte of stops (or NUL) into out; its length. */
static size_t word(const char **p, char *out, size_t cap, const char *stops)
{
    size_t n = strcspn(*p, stops);
    gt_nlog_copy(out, cap, *p, n);
    *p += n;
    return n;
}

/* Key-value fields of NCCL's comm lines: "comm P rank R nranks N …". */
enum {
    K_COMM,
    K_RANK,
    K_NRANKS,
    K_CUDADEV,
    K_NVMLDEV,
    K_BUSID,
    K_COMMID,
    K_PARENT,
    K_SPLIT,
    K_COLOR,
    K_KEY,
    K_NNODES,
    K_COUNT
};
struct kv {
    unsigned have; /* 1 << K_* */
    uint64_t u[K_COUNT];
    int32_t i[K_COUNT];
};

static void scan_kv(const char *m, struct kv *kv)
{
    static const char *const keys[K_COUNT] = {"comm",       "rank",  "nranks", "cudaDev",
                                              "nvmlDev",    "busId", "commId", "parent",
                                              "splitCount", "color", "key",    "nNodes"};
    memset(kv, 0, sizeof(*kv));
    const char *p = m;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *t = p;
        size_t n = strcspn(p, " ");
        p += n;
        if (!*p)
            break;
        for (int k = 0; k < K_COUNT; k++) {
            /* nRanks (2.20+'s transport line) is nranks */
            if (strlen(keys[k]) != n || strncasecmp(t, keys[k], n) || (kv->have & (1u << k)))
                continue;
            const char *v = p + 1;
            int ok = k == K_COMM || k == K_PARENT    ? ptrval(&v, &kv->u[k])
                     : k == K_BUSID || k == K_COMMID ? hexnum(&v, &kv->u[k])
                                                     : num(&v, &kv->i[k]);
            if (ok)
                kv->have |= 1u << k;
            break;
        }
    }
}
#define HAS(kv, k) ((kv)->have & (1u << (k)))

/* ---- the messages --------------------------------------------------------- */

struct ctx {
    long pi;
    int tid, dev;
};

static void quote(char *dst, const char *msg)
{
    if (!dst[0])
        gt_nlog_copy(dst, GT_NLOG_QUOTE, msg, strlen(msg));
}

static int ours(const char *name)
{
    return !strcasecmp(name, GT_NLOG_OUR_NET);
}

static void fill_comm(struct gt_nlog_comm *c, const struct kv *kv, const char *m)
{
    if (HAS(kv, K_COMM))
        c->ptr = kv->u[K_COMM];
    if (HAS(kv, K_RANK))
        c->rank = kv->i[K_RANK];
    if (HAS(kv, K_NRANKS))
        c->nranks = kv->i[K_NRANKS];
    if (HAS(kv, K_CUDADEV))
        c->cuda_dev = kv->i[K_CUDADEV];
    if (HAS(kv, K_NVMLDEV))
        c->nvml_dev = kv->i[K_NVMLDEV];
    if (HAS(kv, K_BUSID))
        c->bus_id = kv->u[K_BUSID];
    if (HAS(kv, K_COMMID)) {
        c->comm_id = kv->u[K_COMMID];
        c->has_id = 1;
    }
    if (HAS(kv, K_PARENT)) {
        c->is_split = 1;
        c->parent_ptr = kv->u[K_PARENT];
        c->split_count = HAS(kv, K_SPLIT) ? kv->i[K_SPLIT] : -1;
        c->color = HAS(kv, K_COLOR) ? kv->i[K_COLOR] : -1;
        c->key = HAS(kv, K_KEY) ? kv->i[K_KEY] : -1;
    }
    /* 2.28+ name the API first: "ncclCommInitRank comm 0x…" */
    if (!c->func[0] && strncmp(m, "comm ", 5)) {
        const char *p = m;
        word(&p, c->func, sizeof(c->func), " ");
    }
}

/* "[FUNC ]comm P rank R nranks N cudaDev D nvmlDev V busId B commId 0xH - Init
 * START|COMPLETE" (init.cc; a split names "parent P splitCount S color C key
 * K" instead of commId). */
static int on_init(struct gt_nlog *l, const struct ctx *x, const char *m, int complete)
{
    struct kv kv;
    scan_kv(m, &kv);
    if (!HAS(&kv, K_COMM) || !HAS(&kv, K_RANK))
        return 0;
    struct gt_nlog_comm *c = NULL;
    if (complete) {
        c = gt_nlog_comm_by_ptr(l, x->pi, kv.u[K_COMM]);
        if (c && !c->open)
            c = NULL; /* a START never seen: this COMPLETE stands alone */
    }
    if (!c) {
        c = gt_nlog_comm_new(l, x->pi, x->tid);
        if (!c)
            return 1;
        c->ptr = kv.u[K_COMM];
        c->open = 1;
        /* "Using network X" precedes START on its thread (commAlloc) */
        struct gt_nlog_proc *p = &l->procs[x->pi];
        for (uint32_t k = p->npending; k-- > 0;)
            if (p->pending[k].tid == x->tid) {
                memcpy(c->net, p->pending[k].net, sizeof(c->net));
                p->pending[k] = p->pending[--p->npending];
                break;
            }
        if (HAS(&kv, K_PARENT)) {
            /* the parent is an older record (a line naming itself is not) */
            struct gt_nlog_comm *pa = gt_nlog_comm_by_ptr_before(l, kv.u[K_PARENT], c);
            c->parent = pa ? (int32_t)(pa - l->comms) : -1;
        }
    }
    fill_comm(c, &kv, m);
    if (complete) {
        c->open = 0;
        c->completed = 1;
    }
    return 1;
}

static void comm_gdr(struct gt_nlog_comm *c, int enabled, const char *q)
{
    if (!enabled && !c->gdr_off)
        c->quote_gdr[0] = 0; /* a Disabled decision explains more */
    if (enabled)
        c->gdr_on++;
    else
        c->gdr_off++;
    quote(c->quote_gdr, q);
}

static void add_gdr(struct gt_nlog *l, const struct ctx *x, const struct gt_nlog_gdr *g)
{
    struct gt_nlog_proc *p = &l->procs[x->pi];
    struct gt_nlog_comm *c = g->kind == 0 ? gt_nlog_comm_open_on(l, x->pi, x->tid) : NULL;
    if (c) {
        comm_gdr(c, g->enabled, g->quote);
    } else if (g->kind == 0) {
        p->pend_tid = x->tid;
        p->pend_gdr = g->enabled;
        memcpy(p->pend_quote, g->quote, sizeof(p->pend_quote));
    }
    for (uint32_t i = 0; i < p->ngdr; i++) {
        struct gt_nlog_gdr *e = &p->gdr[i];
        if (e->kind == g->kind && e->enabled == g->enabled && e->distance == g->distance &&
            e->level == g->level && !strcmp(e->gpu, g->gpu) && !strcmp(e->hca, g->hca)) {
            e->count++;
            return;
        }
    }
    if (p->ngdr == GT_NLOG_MAX_GDR) {
        p->gdr_dropped++;
        l->dropped++;
        return;
    }
    p->gdr[p->ngdr] = *g;
    p->gdr[p->ngdr++].count = 1;
}

/* "GPU Direct RDMA Enabled|Disabled for GPU G / HCA H (distance D <= L)…"
 * (paths.cc: G a busId in 2.18, a rank since 2.24; H the reverse);
 * "NET/X : GPU Direct RDMA Enabled|Disabled for HCA N 'name'" (topo.cc). */
static int on_gdr(struct gt_nlog *l, const struct ctx *x, const char *m)
{
    struct gt_nlog_gdr g;
    memset(&g, 0, sizeof(g));
    g.distance = g.level = -1;
    const char *p = m;
    if (lit(&p, "NET/")) {
        char net[24];
        word(&p, net, sizeof(net), " ");
        if (!lit(&p, " : GPU Direct RDMA "))
            return 0;
        g.kind = 1;
        snprintf(g.gpu, sizeof(g.gpu), "%s", net);
    } else if (!lit(&p, "GPU Direct RDMA ")) {
        return 0;
    }
    if (lit(&p, "Enabled"))
        g.enabled = 1;
    else if (!lit(&p, "Disabled"))
        return 0;
    if (g.kind == 1) {
        if (!lit(&p, " for HCA "))
            return 0;
        word(&p, g.hca, sizeof(g.hca), "\n");
    } else {
        int32_t d, lv;
        if (!lit(&p, " for GPU "))
            return 0;
        word(&p, g.gpu, sizeof(g.gpu), " ");
        if (!lit(&p, " / HCA "))
            return 0;
        word(&p, g.hca, sizeof(g.hca), " ");
        if (!lit(&p, " (distance ") || !num(&p, &d))
            return 0;
        if (!lit(&p, " <= ") && !lit(&p, " > "))
            return 0;
        if (!num(&p, &lv))
            return 0;
        g.distance = (int16_t)(d < -1 ? -1 : d > 999 ? 999 : d);
        g.level = (int16_t)(lv < -1 ? -1 : lv > 999 ? 999 : lv);
    }
    gt_nlog_copy(g.quote, sizeof(g.quote), m, strlen(m));
    add_gdr(l, x, &g);
    return 1;
}

/* Gives a channel line to a communicator (invariant 4). */
static void on_channel_line(struct gt_nlog *l, const struct ctx *x, int ch, int myrank, int peer,
                            int mynvml, const char *net, int gdrdma, int recv, const char *m)
{
    l->channels++;
    if (net) {
        l->net_lines++;
        l->net_gdrdma += gdrdma != 0;
    }
    struct gt_nlog_proc *p = &l->procs[x->pi];
    /* the GPU Direct decision just before this line on its thread is its */
    int gdr = p->pend_gdr >= 0 && p->pend_tid == x->tid && net ? p->pend_gdr : -1;
    if (net)
        p->pend_gdr = -1;
    struct gt_nlog_phase *ph = gt_nlog_phase_of(l, x->pi, x->tid);
    if (ph) {
        ph->ch[ch]++;
        if (ch == GT_NLOG_CH_NET_OURS)
            *(recv ? &ph->ours_recv : &ph->ours_send) += 1;
    }
    struct gt_nlog_comm *c = gt_nlog_comm_open_on(l, x->pi, x->tid);
    int32_t cand[GT_NLOG_PHASE_CAND];
    int ncand = 0, nthread = 0;
    struct gt_nlog_comm *on_thread = NULL;
    /* A NET line names comm->ncclNet, which "Using network X" printed for
     * the communicator: a communicator of another network is not it. */
    if (c && !(c->rank == myrank && (peer < 0 || c->nranks < 0 || peer < c->nranks) &&
               (!net || !c->net[0] || !strcasecmp(c->net, net))))
        c = NULL;
#define NOT_CAND(k)                                                                                \
    ((k)->destroyed || (k)->rank != myrank ||                                                      \
     (peer >= 0 && (k)->nranks >= 0 && peer >= (k)->nranks) ||                                     \
     (mynvml >= 0 && (k)->nvml_dev >= 0 && (k)->nvml_dev != mynvml) ||                             \
     ((k)->cuda_dev >= 0 && (k)->cuda_dev != x->dev) ||                                            \
     (net && (k)->net[0] && strcasecmp((k)->net, net)))
    if (!c) {
        for (int32_t i = p->first_comm; i >= 0; i = l->comms[i].prev) {
            struct gt_nlog_comm *k = &l->comms[i];
            if (NOT_CAND(k))
                continue;
            if (ncand < GT_NLOG_PHASE_CAND)
                cand[ncand] = i;
            ncand++;
            if (k->tid == x->tid) {
                on_thread = k;
                nthread++;
            }
        }
        if (ncand == 1)
            c = &l->comms[cand[0]];
        else if (ncand > 1 && nthread == 1)
            c = on_thread;
    }
    if (!c) {
        l->unattributed++;
        p->unattributed[ch]++;
        if (ncand > 1) {
            l->ambiguous++;
            for (int32_t i = p->first_comm; i >= 0; i = l->comms[i].prev)
                if (!NOT_CAND(&l->comms[i]))
                    l->comms[i].amb++;
            if (ph) {
                ph->amb[ch]++;
                ph->amb_gdrdma += gdrdma != 0;
                /* a phase is one communicator's: its ambiguous lines have
                 * the same candidates, else it is not told by order */
                int same = ncand <= GT_NLOG_PHASE_CAND;
                if (same && ph->ncand)
                    same = ph->ncand == ncand && !memcmp(ph->cand, cand, ncand * sizeof(*cand));
                else if (same) {
                    memcpy(ph->cand, cand, ncand * sizeof(*cand));
                    ph->ncand = (uint8_t)ncand;
                }
                if (!same)
                    ph->cand_differ = 1;
            }
        } else if (ph) {
            ph->orphan++;
        }
#undef NOT_CAND
        /* a network line around gdrtrace outranks an intra-node one as the
         * quote: it is what the verdict reports */
        int net_other = ch == GT_NLOG_CH_NET_OTHER || ch == GT_NLOG_CH_COLLNET_OTHER;
        if (net_other && p->unattr_ch != GT_NLOG_CH_NET_OTHER &&
            p->unattr_ch != GT_NLOG_CH_COLLNET_OTHER)
            p->quote_unattr[0] = 0;
        if (!p->quote_unattr[0])
            p->unattr_ch = ch;
        quote(p->quote_unattr, m);
        return;
    }
    c->ch[ch]++;
    if (gdrdma)
        c->ch_gdrdma++;
    if (ph) {
        int32_t ci = (int32_t)(c - l->comms);
        ph->rec = ph->rec == -1 || ph->rec == ci ? ci : -2;
    }
    if (gdr >= 0)
        comm_gdr(c, gdr, p->pend_quote);
    if (gt_nlog_ch_intra(ch)) {
        quote(c->quote_intra, m);
    } else if (ch != GT_NLOG_CH_OTHER) {
        /* quote the first line around gdrtrace if there is one (counted above) */
        int first_other = (ch == GT_NLOG_CH_NET_OTHER || ch == GT_NLOG_CH_COLLNET_OTHER) &&
                          c->ch[GT_NLOG_CH_NET_OTHER] + c->ch[GT_NLOG_CH_COLLNET_OTHER] == 1;
        if (first_other)
            c->quote_net[0] = 0;
        if (!c->quote_net[0] && net)
            gt_nlog_copy(c->net_name, sizeof(c->net_name), net, strlen(net));
        quote(c->quote_net, m);
    }
}

/* "Channel CC/I : A[a] -> B[b] [send|receive] via NET/NAME/DEV[(PROXY)][/GDRDMA…]"
 * (net.cc), "Channel CC/I : A[a] -> B[b] via P2P/…" (p2p.cc, sender's side),
 * "Channel CC : A[a] -> B[b] via SHM/…" (shm.cc);
 * "CollNet CC/I : R [send|receive] via COLLNET/NAME/DEV…" (coll_net.cc). */
static int on_channel(struct gt_nlog *l, const struct ctx *x, const char *m)
{
    const char *p = m;
    int32_t cc, ci, a, na, b, nb;
    char net[24] = "";
    if (lit(&p, "CollNet ")) {
        if (!num(&p, &cc) || !lit(&p, "/") || !num(&p, &ci) || !lit(&p, " : ") || !num(&p, &a))
            return 0;
        if (!lit(&p, " [send] via COLLNET/") && !lit(&p, " [receive] via COLLNET/"))
            return 0;
        word(&p, net, sizeof(net), "/");
        on_channel_line(l, x, ours(net) ? GT_NLOG_CH_COLLNET_OURS : GT_NLOG_CH_COLLNET_OTHER, a, -1,
                        -1, net, strstr(p, "/GDRDMA") != NULL, 0, m);
        return 1;
    }
    if (!lit(&p, "Channel ") || !num(&p, &cc))
        return 0;
    if (lit(&p, "/") && !num(&p, &ci))
        return 0;
    if (!lit(&p, " : ") || !num(&p, &a) || !lit(&p, "[") || !num(&p, &na) || !lit(&p, "] -> ") ||
        !num(&p, &b) || !lit(&p, "[") || !num(&p, &nb) || !lit(&p, "]"))
        return 0;
    int recv = 0;
    if (lit(&p, " [receive]"))
        recv = 1;
    else
        lit(&p, " [send]");
    if (!lit(&p, " via "))
        return 0;
    int me = recv ? b : a, peer = recv ? a : b, mynvml = recv ? nb : na;
    if (lit(&p, "NET/")) {
        word(&p, net, sizeof(net), "/");
        on_channel_line(l, x, ours(net) ? GT_NLOG_CH_NET_OURS : GT_NLOG_CH_NET_OTHER, me, peer,
                        mynvml, net, strstr(p, "/GDRDMA") != NULL, recv, m);
    } else {
        int ch = !strncmp(p, "P2P/", 4)   ? GT_NLOG_CH_P2P
                 : !strncmp(p, "SHM/", 4) ? GT_NLOG_CH_SHM
                                          : GT_NLOG_CH_OTHER;
        on_channel_line(l, x, ch, me, peer, mynvml, NULL, 0, recv, m);
    }
    return 1;
}

static void set_plugin(struct gt_nlog_proc *p, int state, const char *m)
{
    /* A failure after our plugin loaded (its init) is the fact that matters;
     * otherwise the latest word wins (NCCL tries names in turn). */
    if (p->plugin == GT_NLOG_PLUGIN_INIT_FAILED)
        return;
    if (p->plugin == state && p->quote_plugin[0])
        return;
    p->plugin = state;
    gt_nlog_copy(p->quote_plugin, sizeof(p->quote_plugin), m, strlen(m));
}

/* The plugin loader's lines (src/net.cc ≤ 2.25, src/plugin/ 2.26+). */
static int on_plugin(struct gt_nlog *l, const struct ctx *x, const char *m)
{
    struct gt_nlog_proc *p = &l->procs[x->pi];
    const char *s = m;
    char name[32];
    int32_t v;
    if (lit(&s, "NET/Plugin: Loaded net plugin ") || lit(&s, "NET/Plugin : Loaded net plugin ")) {
        word(&s, name, sizeof(name), " ");
        p->plugin_abi = lit(&s, " (v") && num(&s, &v) ? v : 0;
        gt_nlog_copy(p->plugin_name, sizeof(p->plugin_name), name, strlen(name));
        set_plugin(p, ours(name) ? GT_NLOG_PLUGIN_LOADED : GT_NLOG_PLUGIN_OTHER, m);
        return 1;
    }
    /* the loader of every plugin kind says "X/Plugin: Could not find: …"
     * (PROFILER, TUNER, ENV): only NET's are about the net plugin */
    int net_loader = !strncmp(m, "NET/Plugin", 10);
    if (net_loader && (strstr(m, "No plugin found") || strstr(m, "Could not find:") ||
                       strstr(m, "Using internal network plugin"))) {
        /* after a dlopen error that is not "no such file" (an undefined
         * symbol…), that error is what to quote */
        if (p->plugin == GT_NLOG_PLUGIN_LOAD_FAILED && !strstr(p->quote_plugin, "No such file"))
            return 1;
        if (p->plugin != GT_NLOG_PLUGIN_LOADED && p->plugin != GT_NLOG_PLUGIN_OTHER)
            set_plugin(p, GT_NLOG_PLUGIN_NOT_FOUND, m);
        return 1;
    }
    s = m;
    if (lit(&s, "NCCL_NET_PLUGIN set by environment to ")) {
        if (!strcasecmp(s, "none"))
            set_plugin(p, GT_NLOG_PLUGIN_DISABLED, m);
        return 1;
    }
    s = m;
    if (lit(&s, "External network plugin ") && strstr(s, " is unsupported")) {
        set_plugin(p, GT_NLOG_PLUGIN_UNSUPPORTED, m);
        return 1;
    }
    if (lit(&s, "Failed to initialize NET plugin ")) {
        if (ours(s)) {
            p->init_failed++;
            set_plugin(p, GT_NLOG_PLUGIN_INIT_FAILED, m);
        }
        return 1;
    }
    s = m;
    if (lit(&s, "Initialized NET plugin ") || lit(&s, "Assigned NET plugin ") ||
        lit(&s, "Successfully loaded external network plugin ") ||
        lit(&s, "Disabling external plugins: ") || lit(&s, "Unloading plugin "))
        return 1;
    s = m;
    if (lit(&s, "NET/Plugin")) {
        /* version probing ("Failed to find ncclNetPlugin_v8 symbol."), collnet,
         * closing, "name set by env": facts of no consequence here */
        if (strstr(s, "Failed to find") || strstr(s, "collnet") || strstr(s, "coll plugin") ||
            strstr(s, "Closing") || strstr(s, "Plugin name set by env"))
            return 1;
        /* anything else the loader says is dlopen's error ("Plugin load (X)
         * returned …", "X: undefined symbol …") */
        if (p->plugin != GT_NLOG_PLUGIN_LOADED && p->plugin != GT_NLOG_PLUGIN_OTHER)
            set_plugin(p, GT_NLOG_PLUGIN_LOAD_FAILED, m);
        return 1;
    }
    return 0;
}

/* A WARN line: our plugin's refusal, or why NCCL has no network plugin. */
static int on_warn(struct gt_nlog_proc *p, const char *m)
{
    const char *s = m;
    /* our plugin saying why it refused this process (plugin/core.c) */
    if (lit(&s, "NET/" GT_NLOG_OUR_NET " : ") && strstr(s, "disabled for this process")) {
        quote(p->quote_ours, m);
        return 1;
    }
    /* "Failed to initialize any NET plugin", "Error: network X not found." */
    if (strstr(m, "NET plugin") || strstr(m, "network")) {
        quote(p->quote_plugin, m);
        return 1;
    }
    return 0;
}

/* "Using network X" (s after those words): commAlloc logs it just before the
 * Init START of this thread. */
static int on_using_network(struct gt_nlog_proc *p, const struct ctx *x, const char *s)
{
    {
        const char *t = s;
        word(&t, p->last_net, sizeof(p->last_net), " ");
        for (uint32_t k = 0; k < p->nnets; k++) /* its "NET/X : Using …" is the one */
            if (!strcasecmp(p->nets[k].net, p->last_net))
                memcpy(p->quote_net, p->nets[k].quote, sizeof(p->quote_net));
    }
    if (p->npending == 8)
        memmove(p->pending, p->pending + 1, 7 * sizeof(p->pending[0])), p->npending = 7;
    p->pending[p->npending].tid = x->tid;
    word(&s, p->pending[p->npending].net, sizeof(p->pending[0].net), " ");
    p->npending++;
    return 1;
}

/* "NVLS comm P headRank …" (nvls.cc; s after "NVLS comm "): an intra-node
 * channel line that names its communicator. */
static int on_nvls(struct gt_nlog *l, const struct ctx *x, const char *m, const char *s)
{
    struct gt_nlog_proc *p = &l->procs[x->pi];
    uint64_t ptr;
    if (!ptrval(&s, &ptr))
        return 0;
    struct gt_nlog_comm *c = gt_nlog_comm_by_ptr(l, x->pi, ptr);
    l->channels++;
    if (!c) {
        l->unattributed++;
        p->unattributed[GT_NLOG_CH_NVLS]++;
        if (!p->quote_unattr[0])
            p->unattr_ch = GT_NLOG_CH_NVLS;
        quote(p->quote_unattr, m);
    } else {
        c->ch[GT_NLOG_CH_NVLS]++;
        quote(c->quote_intra, m);
    }
    return 1;
}

/* "comm P …" lines other than Init's: nNodes, Destroy, Abort. */
static int on_comm(struct gt_nlog *l, const struct ctx *x, const char *m)
{
    struct kv kv;
    scan_kv(m, &kv);
    if (!HAS(&kv, K_COMM))
        return 0;
    struct gt_nlog_comm *c = gt_nlog_comm_by_ptr(l, x->pi, kv.u[K_COMM]);
    /* "comm P rank R nRanks N nNodes K localRanks …" (initTransportsRank) */
    if (HAS(&kv, K_NNODES)) {
        if (c)
            c->nnodes = kv.i[K_NNODES];
        return 1;
    }
    /* "comm P rank R nranks N cudaDev D busId B - Destroy|Abort COMPLETE" */
    if (strstr(m, "Destroy COMPLETE") || strstr(m, "Abort COMPLETE")) {
        gt_nlog_phase_close(l, x->pi, x->tid);
        if (c) {
            c->destroyed = 1;
            c->open = 0;
        }
        return 1;
    }
    return 0;
}

/* "NET/IB : Using [0]mlx5_0:1/IB …" (s after "NET/"): an internal network
 * NCCL set up; our own NET/gdrtrace lines are used, and say nothing here. */
static int on_net(struct gt_nlog_proc *p, const char *m, const char *s)
{
    char net[24];
    word(&s, net, sizeof(net), " ");
    if (!lit(&s, " : Using ") || ours(net))
        return ours(net);
    uint32_t k = 0;
    while (k < p->nnets && strcmp(p->nets[k].net, net))
        k++;
    if (k == p->nnets && k < 4) {
        gt_nlog_copy(p->nets[k].net, sizeof(p->nets[k].net), net, strlen(net));
        gt_nlog_copy(p->nets[k].quote, sizeof(p->nets[k].quote), m, strlen(m));
        p->nnets++;
    }
    /* the network NCCL went on with (its "Using network X") if known,
     * else the first one set up */
    for (k = 0; k < p->nnets; k++)
        if (p->last_net[0] && !strcasecmp(p->nets[k].net, p->last_net))
            memcpy(p->quote_net, p->nets[k].quote, sizeof(p->quote_net));
    quote(p->quote_net, m);
    return 1;
}

/* Every NCCL message this reader takes a fact from, by its fixed words. */
static int on_message(struct gt_nlog *l, const struct ctx *x, const char *m, int warn)
{
    struct gt_nlog_proc *p = &l->procs[x->pi];
    const char *s = m;
    if (warn)
        return on_warn(p, m);
    if (lit(&s, "NCCL version ")) {
        word(&s, p->version, sizeof(p->version), " ");
        return 1;
    }
    if (strstr(m, "Init START") || strstr(m, "Init COMPLETE"))
        gt_nlog_phase_close(l, x->pi, x->tid);
    if (strstr(m, "Init START"))
        return on_init(l, x, m, 0);
    if (strstr(m, "Init COMPLETE"))
        return on_init(l, x, m, 1);
    /* the lines that end a connection phase (generic.cc, nvls.cc,
     * coll_net.cc); "Connected to proxy …" is within one */
    if (lit(&s, "Connected ") && strncmp(s, "to proxy", 8)) {
        gt_nlog_phase_close(l, x->pi, x->tid);
        return 1;
    }
    s = m;
    if (!strncmp(m, "Channel ", 8) || !strncmp(m, "CollNet ", 8))
        return on_channel(l, x, m);
    if (lit(&s, "Using network "))
        return on_using_network(p, x, s);
    if (strstr(m, "GPU Direct RDMA"))
        return on_gdr(l, x, m);
    s = m;
    if (lit(&s, "NVLS comm "))
        return on_nvls(l, x, m, s);
    s = m;
    if (lit(&s, "comm "))
        return on_comm(l, x, m);
    if (on_plugin(l, x, m))
        return 1;
    s = m;
    if (lit(&s, "NET/"))
        return on_net(p, m, s);
    return 0;
}

/* ---- the line prefix (invariant 3) ------------------------------------- */

static int is_host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
}

/* "HOST:PID:TID" ending at e (exclusive), whatever precedes HOST. */
static int parse_hpt(const char *b, const char *e, char *host, size_t hcap, int32_t *pid,
                     int32_t *tid)
{
    const char *c2 = e;
    while (c2 > b && c2[-1] != ':')
        c2--;
    if (c2 == b)
        return 0;
    const char *c1 = c2 - 1;
    while (c1 > b && c1[-1] != ':')
        c1--;
    if (c1 == b)
        return 0;
    char tmp[16];
    const char *q;
    if ((size_t)(e - c2) >= sizeof(tmp) || (size_t)(c2 - 1 - c1) >= sizeof(tmp))
        return 0;
    gt_nlog_copy(tmp, sizeof(tmp), c2, (size_t)(e - c2));
    q = tmp;
    if (!num(&q, tid) || *q)
        return 0;
    gt_nlog_copy(tmp, sizeof(tmp), c1, (size_t)(c2 - 1 - c1));
    q = tmp;
    if (!num(&q, pid) || *q || *pid <= 0)
        return 0;
    const char *he = c1 - 1, *hb = he;
    while (hb > b && is_host_char(hb[-1]))
        hb--;
    if (hb == he)
        return 0;
    gt_nlog_copy(host, hcap, hb, (size_t)(he - hb));
    return 1;
}

/* A line that is only a launcher's prefix ("0: ", "[1,0]<stdout>:"): the
 * empty line NCCL writes before a WARN, prefixed; not a foreign line. */
static int launcher_only(const char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (!n || s[n - 1] != ':')
        return n == 0;
    if (strspn(s, " 0123456789") == n - 1)
        return 1;
    return s[0] == '[' && n > 2 && s[n - 2] == '>' && strstr(s, "]<std") != NULL;
}

void gt_nlog_line(struct gt_nlog *l, const char *s, size_t len)
{
    l->lines++;
    l->bytes += len;
    if (len && s[len - 1] == '\r')
        len--;
    if (!len)
        return;
    if (len > GT_NLOG_LINE_MAX) {
        l->too_long++;
        return;
    }
    if (memchr(s, 0, len)) {
        l->binary++;
        return;
    }
    char buf[GT_NLOG_LINE_MAX + 1];
    memcpy(buf, s, len);
    buf[len] = 0;
    int warn = 0;
    char *mk = strstr(buf, " NCCL INFO ");
    if (!mk) {
        mk = strstr(buf, " NCCL WARN ");
        warn = 1;
    }
    if (!mk) {
        if (!launcher_only(buf))
            l->foreign++;
        return;
    }
    const char *msg = mk + 11;
    /* the tokens before the marker: "[DEV]" last (INFO) or before FILE:LINE (WARN) */
    const char *end = mk, *tok[3][2];
    int nt = 0;
    while (nt < 3) {
        while (end > buf && end[-1] == ' ')
            end--;
        const char *b = end;
        while (b > buf && b[-1] != ' ')
            b--;
        if (b == end)
            break;
        tok[nt][0] = b;
        tok[nt][1] = end;
        nt++;
        end = b;
    }
    char host[64];
    int32_t pid = 0, tid = 0, dev = -1;
    int found = 0;
    for (int i = 0; i + 1 < nt && i < 2 && !found; i++) {
        const char *d = tok[i][0];
        if (*d != '[' || tok[i][1][-1] != ']')
            continue;
        d++;
        if (!num(&d, &dev) || d != tok[i][1] - 1)
            continue;
        found = parse_hpt(tok[i + 1][0], tok[i + 1][1], host, sizeof(host), &pid, &tid);
    }
    if (!found) {
        l->foreign++;
        return;
    }
    l->nccl_lines++;
    long pi = gt_nlog_proc_get(l, host, pid);
    if (pi < 0) {
        l->dropped++;
        return;
    }
    struct ctx x = {pi, tid, dev};
    if (on_message(l, &x, msg, warn)) {
        l->used++;
    } else {
        l->unused++;
        quote(l->first_unused, msg);
    }
}
