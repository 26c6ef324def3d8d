/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccllog.c — see nccllog.h (its invariants 1-5 are kept here).
 *
 * Every NCCL line has the shape (src/debug.cc, 2.18 … 2.30)
 *     [TIMESTAMP ]HOST:PID:TID [DEV] NCCL INFO MESSAGE
 *     [TIMESTAMP ]HOST:PID:TID [DEV] FILE:LINE NCCL WARN MESSAGE
 * HOST cut at its first '.', TIMESTAMP optional (NCCL_DEBUG_TIMESTAMP_*; WARN
 * lines have one by default since 2.23).  The messages used are listed at
 * on_message(); each is matched from its fixed words, fields parsed with
 * overflow-checked helpers, never with sscanf.
 */
#include "tools/lib/nccllog.h"

#include "gdrtrace/recorder_format.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void copy(char *dst, size_t cap, const char *src, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

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
    copy(out, cap, *p, n);
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

/* ---- processes and communicators ---------------------------------------- */

static size_t short_len(const char *host)
{
    return strcspn(host, ".");
}

static uint64_t proc_hash(const char *host, size_t hl, int pid)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < hl; i++)
        h = (h ^ (unsigned char)host[i]) * 1099511628211ULL;
    return (h ^ (uint32_t)pid) * 1099511628211ULL;
}

static long proc_lookup(const struct gt_nlog *l, const char *host, int pid)
{
    if (!l->ptab_size)
        return -1;
    size_t hl = short_len(host), mask = l->ptab_size - 1;
    for (size_t i = proc_hash(host, hl, pid) & mask;; i = (i + 1) & mask) {
        uint32_t e = l->ptab[i];
        if (!e)
            return -1;
        const struct gt_nlog_proc *p = &l->procs[e - 1];
        if (p->pid == pid && strlen(p->host) == hl && !strncmp(p->host, host, hl))
            return (long)e - 1;
    }
}

const struct gt_nlog_proc *gt_nlog_proc_find(const struct gt_nlog *l, const char *host, int pid)
{
    long i = proc_lookup(l, host, pid);
    return i < 0 ? NULL : &l->procs[i];
}

static int ptab_grow(struct gt_nlog *l)
{
    size_t n = l->ptab_size ? l->ptab_size * 2 : 64;
    uint32_t *t = calloc(n, sizeof(*t));
    if (!t)
        return -1;
    for (size_t k = 0; k < l->nproc; k++) {
        const struct gt_nlog_proc *p = &l->procs[k];
        size_t i = proc_hash(p->host, strlen(p->host), p->pid) & (n - 1);
        while (t[i])
            i = (i + 1) & (n - 1);
        t[i] = (uint32_t)k + 1;
    }
    free(l->ptab);
    l->ptab = t;
    l->ptab_size = n;
    return 0;
}

/* The process (host, pid), created on first sight; -1 over the cap. */
static long proc_get(struct gt_nlog *l, const char *host, int pid)
{
    long i = proc_lookup(l, host, pid);
    if (i >= 0)
        return i;
    if (l->nproc >= GT_NLOG_MAX_PROCS)
        return -1;
    if ((l->nproc + 1) * 2 > l->ptab_size && ptab_grow(l))
        return -1;
    if (l->nproc == l->cap_proc) {
        size_t n = l->cap_proc ? l->cap_proc * 2 : 16;
        struct gt_nlog_proc *q = realloc(l->procs, n * sizeof(*q));
        if (!q)
            return -1;
        l->procs = q;
        l->cap_proc = n;
    }
    struct gt_nlog_proc *p = &l->procs[l->nproc];
    memset(p, 0, sizeof(*p));
    copy(p->host, sizeof(p->host), host, short_len(host));
    p->pid = pid;
    p->first_comm = -1;
    p->phase_first = p->phase_last = -1;
    p->unattr_ch = -1;
    p->pend_gdr = -1;
    size_t k = proc_hash(p->host, strlen(p->host), pid) & (l->ptab_size - 1);
    while (l->ptab[k])
        k = (k + 1) & (l->ptab_size - 1);
    l->ptab[k] = (uint32_t)l->nproc + 1;
    return (long)l->nproc++;
}

static struct gt_nlog_comm *comm_new(struct gt_nlog *l, long pi, int tid)
{
    struct gt_nlog_proc *p = &l->procs[pi];
    if (l->ncomm >= GT_NLOG_MAX_COMMS || p->ncomm >= GT_NLOG_MAX_PROC_COMMS) {
        l->dropped++;
        return NULL;
    }
    if (l->ncomm == l->cap_comm) {
        size_t n = l->cap_comm ? l->cap_comm * 2 : 16;
        struct gt_nlog_comm *q = realloc(l->comms, n * sizeof(*q));
        if (!q) {
            l->dropped++;
            return NULL;
        }
        l->comms = q;
        l->cap_comm = n;
    }
    struct gt_nlog_comm *c = &l->comms[l->ncomm];
    memset(c, 0, sizeof(*c));
    c->proc = (uint32_t)pi;
    c->prev = p->first_comm;
    c->parent = -1;
    c->tid = tid;
    c->seq = p->nseq++;
    c->rank = c->nranks = c->cuda_dev = c->nvml_dev = c->nnodes = -1;
    p->first_comm = (int32_t)l->ncomm++;
    p->ncomm++;
    return c;
}

/* The process's latest record of pointer ptr not destroyed (NCCL may reuse an
 * address after a destroy). */
static struct gt_nlog_comm *comm_by_ptr(struct gt_nlog *l, long pi, uint64_t ptr)
{
    for (int32_t i = l->procs[pi].first_comm; i >= 0; i = l->comms[i].prev)
        if (l->comms[i].ptr == ptr && !l->comms[i].destroyed)
            return &l->comms[i];
    return NULL;
}

/* The same among the records older than c. */
static struct gt_nlog_comm *comm_by_ptr_before(struct gt_nlog *l, uint64_t ptr,
                                               const struct gt_nlog_comm *c)
{
    for (int32_t i = c->prev; i >= 0; i = l->comms[i].prev)
        if (l->comms[i].ptr == ptr && !l->comms[i].destroyed)
            return &l->comms[i];
    return NULL;
}

static struct gt_nlog_comm *comm_open_on(struct gt_nlog *l, long pi, int tid)
{
    for (int32_t i = l->procs[pi].first_comm; i >= 0; i = l->comms[i].prev)
        if (l->comms[i].open && l->comms[i].tid == tid && !l->comms[i].destroyed)
            return &l->comms[i];
    return NULL;
}

/* ---- connection phases (invariant 4) ----------------------------------- */

/* Ends the open phase of thread tid, if it is the process's latest. */
static void phase_close(struct gt_nlog *l, long pi, int tid)
{
    struct gt_nlog_proc *p = &l->procs[pi];
    if (p->phase_last >= 0 && l->phases[p->phase_last].tid == tid)
        l->phases[p->phase_last].closed = 1;
}

/* The phase a channel line of thread tid joins: the process's latest if it
 * is open and of that thread, else a new one; NULL over a cap. */
static struct gt_nlog_phase *phase_of(struct gt_nlog *l, long pi, int tid)
{
    struct gt_nlog_proc *p = &l->procs[pi];
    if (p->phase_last >= 0) {
        struct gt_nlog_phase *h = &l->phases[p->phase_last];
        if (!h->closed && h->tid == tid)
            return h;
        h->closed = 1; /* a line of another thread: that phase cannot go on */
    }
    if (p->phase_dropped || p->nphase >= GT_NLOG_MAX_PHASES ||
        l->nphase >= GT_NLOG_MAX_ALL_PHASES) {
        /* a phase missing would shift every later one: none is kept after */
        if (!p->phase_dropped)
            l->dropped++;
        p->phase_dropped++;
        return NULL;
    }
    if (l->nphase == l->cap_phase) {
        size_t n = l->cap_phase ? l->cap_phase * 2 : 16;
        struct gt_nlog_phase *q = realloc(l->phases, n * sizeof(*q));
        if (!q) {
            l->dropped++;
            p->phase_dropped++;
            return NULL;
        }
        l->phases = q;
        l->cap_phase = n;
    }
    struct gt_nlog_phase *h = &l->phases[l->nphase];
    memset(h, 0, sizeof(*h));
    h->next = -1;
    h->tid = tid;
    h->rec = -1;
    if (p->phase_last >= 0)
        l->phases[p->phase_last].next = (int32_t)l->nphase;
    else
        p->phase_first = (int32_t)l->nphase;
    p->phase_last = (int32_t)l->nphase++;
    p->nphase++;
    return h;
}

/* ---- the messages --------------------------------------------------------- */

struct ctx {
    long pi;
    int tid, dev;
};

static void quote(char *dst, const char *msg)
{
    if (!dst[0])
        copy(dst, GT_NLOG_QUOTE, msg, strlen(msg));
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
        c = comm_by_ptr(l, x->pi, kv.u[K_COMM]);
        if (c && !c->open)
            c = NULL; /* a START never seen: this COMPLETE stands alone */
    }
    if (!c) {
        c = comm_new(l, x->pi, x->tid);
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
            struct gt_nlog_comm *pa = comm_by_ptr_before(l, kv.u[K_PARENT], c);
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
    struct gt_nlog_comm *c = g->kind == 0 ? comm_open_on(l, x->pi, x->tid) : NULL;
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
    copy(g.quote, sizeof(g.quote), m, strlen(m));
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
    struct gt_nlog_phase *ph = phase_of(l, x->pi, x->tid);
    if (ph) {
        ph->ch[ch]++;
        if (ch == GT_NLOG_CH_NET_OURS)
            *(recv ? &ph->ours_recv : &ph->ours_send) += 1;
    }
    struct gt_nlog_comm *c = comm_open_on(l, x->pi, x->tid);
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
            copy(c->net_name, sizeof(c->net_name), net, strlen(net));
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
    copy(p->quote_plugin, sizeof(p->quote_plugin), m, strlen(m));
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
        copy(p->plugin_name, sizeof(p->plugin_name), name, strlen(name));
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

/* Every NCCL message this reader takes a fact from. */
static int on_message(struct gt_nlog *l, const struct ctx *x, const char *m, int warn)
{
    struct gt_nlog_proc *p = &l->procs[x->pi];
    const char *s = m;
    if (warn) {
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
    if (lit(&s, "NCCL version ")) {
        word(&s, p->version, sizeof(p->version), " ");
        return 1;
    }
    if (strstr(m, "Init START") || strstr(m, "Init COMPLETE"))
        phase_close(l, x->pi, x->tid);
    if (strstr(m, "Init START"))
        return on_init(l, x, m, 0);
    if (strstr(m, "Init COMPLETE"))
        return on_init(l, x, m, 1);
    /* the lines that end a connection phase (generic.cc, nvls.cc,
     * coll_net.cc); "Connected to proxy …" is within one */
    if (lit(&s, "Connected ") && strncmp(s, "to proxy", 8)) {
        phase_close(l, x->pi, x->tid);
        return 1;
    }
    s = m;
    if (!strncmp(m, "Channel ", 8) || !strncmp(m, "CollNet ", 8))
        return on_channel(l, x, m);
    if (lit(&s, "Using network ")) {
        /* commAlloc logs it just before the Init START of this thread */
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
    if (strstr(m, "GPU Direct RDMA"))
        return on_gdr(l, x, m);
    s = m;
    if (lit(&s, "NVLS comm ")) { /* "NVLS comm P headRank …" (nvls.cc) */
        uint64_t ptr;
        if (!ptrval(&s, &ptr))
            return 0;
        struct gt_nlog_comm *c = comm_by_ptr(l, x->pi, ptr);
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
    s = m;
    if (lit(&s, "comm ")) {
        struct kv kv;
        scan_kv(m, &kv);
        if (!HAS(&kv, K_COMM))
            return 0;
        struct gt_nlog_comm *c = comm_by_ptr(l, x->pi, kv.u[K_COMM]);
        /* "comm P rank R nRanks N nNodes K localRanks …" (initTransportsRank) */
        if (HAS(&kv, K_NNODES)) {
            if (c)
                c->nnodes = kv.i[K_NNODES];
            return 1;
        }
        /* "comm P rank R nranks N cudaDev D busId B - Destroy|Abort COMPLETE" */
        if (strstr(m, "Destroy COMPLETE") || strstr(m, "Abort COMPLETE")) {
            phase_close(l, x->pi, x->tid);
            if (c) {
                c->destroyed = 1;
                c->open = 0;
            }
            return 1;
        }
        return 0;
    }
    if (on_plugin(l, x, m))
        return 1;
    s = m;
    if (lit(&s, "NET/")) { /* "NET/IB : Using [0]mlx5_0:1/IB …", our own lines */
        char net[24];
        word(&s, net, sizeof(net), " ");
        if (lit(&s, " : Using ") && !ours(net)) {
            uint32_t k = 0;
            while (k < p->nnets && strcmp(p->nets[k].net, net))
                k++;
            if (k == p->nnets && k < 4) {
                copy(p->nets[k].net, sizeof(p->nets[k].net), net, strlen(net));
                copy(p->nets[k].quote, sizeof(p->nets[k].quote), m, strlen(m));
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
        return ours(net);
    }
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
    copy(tmp, sizeof(tmp), c2, (size_t)(e - c2));
    q = tmp;
    if (!num(&q, tid) || *q)
        return 0;
    copy(tmp, sizeof(tmp), c1, (size_t)(c2 - 1 - c1));
    q = tmp;
    if (!num(&q, pid) || *q || *pid <= 0)
        return 0;
    const char *he = c1 - 1, *hb = he;
    while (hb > b && is_host_char(hb[-1]))
        hb--;
    if (hb == he)
        return 0;
    copy(host, hcap, hb, (size_t)(he - hb));
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
    long pi = proc_get(l, host, pid);
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

/* ---- GPU Direct decisions, run against run ---------------------------- */

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void gt_nlog_gdr_text(const struct gt_nlog *l, char *buf, size_t n)
{
    if (!n)
        return;
    buf[0] = 0;
    size_t total = 0;
    for (size_t i = 0; i < l->nproc; i++)
        total += l->procs[i].ngdr;
    char **v = malloc((total ? total : 1) * sizeof(*v));
    char(*t)[128] = malloc((total ? total : 1) * sizeof(*t));
    if (!v || !t) {
        snprintf(buf, n, "(out of memory)");
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < l->nproc; i++)
        for (uint32_t g = 0; g < l->procs[i].ngdr; g++) {
            const struct gt_nlog_gdr *d = &l->procs[i].gdr[g];
            if (d->kind)
                snprintf(t[k], sizeof(t[k]), "NET/%s HCA %s: %s", d->gpu, d->hca,
                         d->enabled ? "Enabled" : "Disabled");
            else
                snprintf(t[k], sizeof(t[k]), "GPU %s / HCA %s: %s (distance %d %s %d)", d->gpu,
                         d->hca, d->enabled ? "Enabled" : "Disabled", d->distance,
                         d->enabled ? "<=" : ">", d->level);
            v[k] = t[k];
            k++;
        }
    if (k > 1)
        qsort(v, k, sizeof(*v), str_cmp);
    size_t w = 0;
    for (size_t i = 0; i < k; i++) {
        if (i && !strcmp(v[i], v[i - 1]))
            continue;
        w += (size_t)snprintf(buf + (w < n ? w : n - 1), w < n ? n - w : 1, "%s%s", w ? "; " : "",
                              v[i]);
    }
    if (!k)
        snprintf(buf, n, "none");
out:
    free(v);
    free(t);
}

/* ---- streams, files, folders ---------------------------------------------- */

int gt_nlog_init(struct gt_nlog *l)
{
    memset(l, 0, sizeof(*l));
    l->line = malloc(GT_NLOG_LINE_MAX + 1);
    return l->line ? 0 : ENOMEM;
}

void gt_nlog_free(struct gt_nlog *l)
{
    free(l->procs);
    free(l->comms);
    free(l->phases);
    free(l->ptab);
    free(l->line);
    memset(l, 0, sizeof(*l));
}

void gt_nlog_feed(struct gt_nlog *l, const char *buf, size_t n)
{
    while (n) {
        const char *nl = memchr(buf, '\n', n);
        size_t k = nl ? (size_t)(nl - buf) : n;
        if (!l->overlong) {
            if (l->linelen + k > GT_NLOG_LINE_MAX) {
                l->overlong = 1;
            } else {
                memcpy(l->line + l->linelen, buf, k);
                l->linelen += k;
            }
        }
        if (!nl)
            return;
        if (l->overlong) {
            l->lines++;
            l->too_long++;
        } else {
            gt_nlog_line(l, l->line, l->linelen);
        }
        l->linelen = 0;
        l->overlong = 0;
        buf += k + 1;
        n -= k + 1;
    }
}

void gt_nlog_feed_end(struct gt_nlog *l)
{
    if (l->overlong) {
        l->lines++;
        l->too_long++;
    } else if (l->linelen) {
        gt_nlog_line(l, l->line, l->linelen);
    }
    l->linelen = 0;
    l->overlong = 0;
}

static int read_fd(struct gt_nlog *l, int fd)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            gt_nlog_feed_end(l);
            return e;
        }
        if (!n)
            break;
        gt_nlog_feed(l, buf, (size_t)n);
    }
    gt_nlog_feed_end(l);
    l->files++;
    return 0;
}

static int read_file_at(struct gt_nlog *l, int dirfd, const char *name, int nofollow)
{
    /* O_NONBLOCK: opening a FIFO named on the command line must not wait for
     * a writer; only a regular file is read (a FIFO, /dev/zero or a socket
     * would never end). */
    int fd = openat(dirfd, name,
                    O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0)
        return errno;
    struct stat st;
    int rc = fstat(fd, &st)         ? errno
             : S_ISDIR(st.st_mode)  ? EISDIR
             : !S_ISREG(st.st_mode) ? GT_NLOG_NOT_REGULAR
                                    : read_fd(l, fd);
    close(fd);
    return rc;
}

/* Recorders and dump archives share a folder with NCCL's log under `gdrtrace
 * run` (and in a job's gathered folder): they are not log files. */
static int ours_by_name(const char *name)
{
    size_t n = strlen(name), p = strlen(GTR_FILE_PREFIX), q = strlen(GTR_FILE_SUFFIX);
    return (n > p + q && !strncmp(name, GTR_FILE_PREFIX, p) &&
            !strcmp(name + n - q, GTR_FILE_SUFFIX)) ||
           (n > 4 && !strcmp(name + n - 4, ".zst"));
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int gt_nlog_add_path(struct gt_nlog *l, const char *path, const char **what)
{
    *what = path;
    struct stat st;
    if (stat(path, &st))
        return errno;
    if (!S_ISDIR(st.st_mode))
        return read_file_at(l, AT_FDCWD, path, 0);
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return errno;
    int dup_fd = dup(dfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        int e = errno;
        if (dup_fd >= 0)
            close(dup_fd);
        close(dfd);
        return e;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        struct stat es;
        if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
            continue;
        if (fstatat(dfd, de->d_name, &es, AT_SYMLINK_NOFOLLOW) || !S_ISREG(es.st_mode))
            continue; /* only regular files: no symlink followed, no FIFO waited on */
        if (ours_by_name(de->d_name)) {
            l->skipped++;
            continue;
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            char **q = realloc(names, nc * sizeof(*q));
            if (!q) {
                rc = ENOMEM;
                break;
            }
            names = q;
            cap = nc;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = ENOMEM;
            break;
        }
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof(*names), cmp_names);
    for (size_t i = 0; i < n && !rc; i++) {
        rc = read_file_at(l, dfd, names[i], 1);
        if (rc) {
            static char failed[4096];
            snprintf(failed, sizeof(failed), "%s/%s", path, names[i]);
            *what = failed;
        }
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    close(dfd);
    return rc;
}
