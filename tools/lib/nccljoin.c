/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccljoin.c — see nccljoin.h (the join's steps 1-7 are kept here).
 * Linear in the log's records and the job's communicators up to sorting:
 * lookups are sorted arrays and binary searches, never pairwise scans.
 */
#include "tools/lib/nccljoin_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tools/lib/esc.h"

const char *gt_nj_kind_name(int kind)
{
    static const char *const n[] = {"through-gdrtrace", "bypassed", "intra-node", "unknown"};
    return kind >= 0 && kind <= GT_NJ_UNKNOWN ? n[kind] : "?";
}

const char *gt_nj_label(const struct gt_nj_comm *c)
{
    return c->intra ? "INTRA-NODE" : gt_verdict_label(c->code, c->emulated);
}

int gt_nccl_log_load(struct gt_nlog *l, char *const *paths, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        const char *what;
        int e = gt_nlog_add_path(l, paths[i], &what);
        if (e) {
            fprintf(stderr, "gdrtrace: %s: cannot read NCCL log: %s\n", gt_esc(what),
                    e == GT_NLOG_NOT_REGULAR
                        ? "not a regular file (a FIFO, a device or a socket): refused"
                        : strerror(e));
            bad++;
        }
    }
    if (l->owner_left) {
        char who[160];
        fprintf(stderr,
                "gdrtrace: left out %llu NCCL log file(s) of another owner than the job's, e.g. "
                "%s owned by %s (--accept-owner to read them)\n",
                (unsigned long long)l->owner_left, gt_esc(l->owner_left_eg),
                gt_owner_name(l->owner_left_uid, who, sizeof(who)));
    }
    return bad;
}

static void add_owner(struct gt_nlog *l, long uid)
{
    int n = (int)(sizeof(l->owners) / sizeof(l->owners[0]));
    for (int i = 0; i < l->nowners; i++)
        if (l->owners[i] == uid)
            return;
    if (uid >= 0 && l->nowners < n)
        l->owners[l->nowners++] = uid;
}

void gt_nccl_log_owners(struct gt_nlog *l, const struct gt_inputs *in)
{
    add_owner(l, (long)geteuid());
    for (int i = 0; i < in->naccept; i++)
        add_owner(l, in->accept[i]);
    for (size_t i = 0; i < in->njob_owner; i++)
        add_owner(l, in->job_owner[i].uid);
    if (in->owners_settled && in->owners_one == 1) /* root: every recorder was one owner's */
        add_owner(l, in->owners_uid);
}

/* ---- step 1: the communicator key of each record ----------------------- */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static void record_keys(const struct gt_nlog *l, struct rkey *k)
{
    for (size_t i = 0; i < l->ncomm; i++) {
        const struct gt_nlog_comm *c = &l->comms[i];
        k[i].idx = i;
        k[i].by_elim = 0;
        if (c->has_id) {
            k[i].key = c->comm_id;
            k[i].is_id = 1;
        } else if (c->is_split && c->parent >= 0 && (size_t)c->parent < i) {
            /* the child's commId derives from (parent's, splitCount, color) */
            const struct rkey *p = &k[c->parent];
            k[i].key = mix(mix(mix(p->key, p->is_id), (uint64_t)(uint32_t)c->split_count),
                           (uint64_t)(uint32_t)c->color);
            k[i].is_id = 0;
        } else { /* nothing to group it by: a communicator of its own */
            k[i].key = mix(mix(0x6e636c6fULL, i), c->ptr);
            k[i].is_id = 0;
        }
    }
}

/* ---- the job's communicators by commId ---------------------------------- */

struct idref {
    uint64_t id;
    size_t i;
};

static int idref_cmp(const void *a, const void *b)
{
    const struct idref *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static long idref_find(const struct idref *v, size_t n, uint64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].id == id ? (long)lo : -1;
}

struct grp {
    size_t at, n, first; /* its records s[at, at+n), the first in log order */
};

/* ---- step 2: splits by elimination ------------------------------------ */

struct prop {
    uint64_t key, id;
    int how; /* 1: the only one left, 2: by init order */
};

static int prop_cmp(const void *a, const void *b)
{
    const struct prop *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int prop_id_cmp(const void *a, const void *b)
{
    const struct prop *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

/* In each process: its splits the log gives no commId (U, in init order) and
 * the commIds its recorder holds that its log does not name (M, in slot
 * order: the writer takes a slot per init, in call order).  |U| == |M| == 1:
 * they are the same communicator; |U| == |M| > 1: the i-th of each, by init
 * order.  A proposal is kept only when every process agrees: a key given two
 * commIds, or a commId given to two keys, is dropped. */
static int eliminate(const struct ctx *x, struct rkey *k)
{
    const struct gt_nlog *l = x->l;
    const struct gt_job *j = x->j;
    size_t cap = 64, np = 0;
    struct prop *pr = malloc(cap * sizeof(*pr));
    uint64_t *u = malloc(GT_NLOG_MAX_PROC_COMMS * sizeof(*u));
    size_t mcap = 64;
    uint64_t *mi = malloc(mcap * sizeof(*mi));
    int rc = -1;
    if (!pr || !u || !mi)
        goto out;
    for (size_t pi = 0; pi < l->nproc; pi++) {
        const struct gt_nlog_proc *p = &l->procs[pi];
        size_t nu = 0, nm = 0;
        /* the chain runs newest first: collect, then reverse */
        for (int32_t i = p->first_comm; i >= 0 && nu < GT_NLOG_MAX_PROC_COMMS; i = l->comms[i].prev)
            if (!k[i].is_id && l->comms[i].is_split)
                u[nu++] = k[i].key;
        for (size_t a = 0; a < nu / 2; a++) {
            uint64_t t = u[a];
            u[a] = u[nu - 1 - a];
            u[nu - 1 - a] = t;
        }
        size_t w = 0; /* distinct, first sight kept */
        for (size_t a = 0; a < nu; a++) {
            size_t b = 0;
            while (b < w && u[b] != u[a])
                b++;
            if (b == w)
                u[w++] = u[a];
        }
        nu = w;
        if (!nu)
            continue;
        size_t r0 = rproc_find(x->rp, x->nrp, p->host, p->pid);
        for (size_t r = r0; r < x->nrp && !rproc_cmp(&x->rp[r], &x->rp[r0]); r++) {
            size_t ri = x->rp[r].rec;
            for (size_t q = x->rank_start[ri]; q < x->rank_start[ri + 1]; q++) {
                const struct gt_rank_comm *rc2 = &j->ranks[q];
                if (rc2->has_comm_id != 1)
                    continue;
                int named = 0;
                for (int32_t i = p->first_comm; i >= 0 && !named; i = l->comms[i].prev)
                    named = k[i].is_id && k[i].key == rc2->comm_id;
                for (size_t b = 0; b < nm && !named; b++)
                    named = mi[b] == rc2->comm_id;
                if (named)
                    continue;
                if (nm == mcap) {
                    uint64_t *t = realloc(mi, (mcap *= 2) * sizeof(*mi));
                    if (!t)
                        goto out;
                    mi = t;
                }
                mi[nm++] = rc2->comm_id;
            }
        }
        if (nm != nu)
            continue;
        for (size_t a = 0; a < nu; a++) {
            if (np == cap) {
                struct prop *t = realloc(pr, (cap *= 2) * sizeof(*pr));
                if (!t)
                    goto out;
                pr = t;
            }
            pr[np++] = (struct prop){u[a], mi[a], nu == 1 ? 1 : 2};
        }
    }
    /* drop every key or commId with two different partners */
    qsort(pr, np, sizeof(*pr), prop_id_cmp);
    for (size_t a = 0; a + 1 < np; a++)
        if (pr[a].id == pr[a + 1].id && pr[a].key != pr[a + 1].key)
            for (size_t b = a; b < np && pr[b].id == pr[a].id; b++)
                pr[b].how = 0;
    qsort(pr, np, sizeof(*pr), prop_cmp);
    for (size_t a = 0; a + 1 < np; a++)
        if (pr[a].key == pr[a + 1].key && pr[a].id != pr[a + 1].id)
            for (size_t b = a; b < np && pr[b].key == pr[a].key; b++)
                pr[b].how = 0;
    for (size_t a = 0; a < np; a++) /* a key proposed and dropped elsewhere stays dropped */
        for (size_t b = a + 1; b < np && pr[b].key == pr[a].key; b++)
            if (!pr[b].how)
                pr[a].how = 0;
    for (size_t i = 0; i < l->ncomm; i++) {
        if (k[i].is_id)
            continue;
        struct prop key = {k[i].key, 0, 0};
        size_t lo = 0, hi = np;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (pr[mid].key < key.key)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < np && pr[lo].key == key.key && pr[lo].how) {
            int how = pr[lo].how;
            for (size_t b = lo; b < np && pr[b].key == key.key; b++)
                if (pr[b].how > how)
                    how = pr[b].how; /* any process that needed the order says so */
            k[i].key = pr[lo].id;
            k[i].is_id = 1;
            k[i].by_elim = (uint8_t)how;
        }
    }
    rc = 0;
out:
    free(pr);
    free(u);
    free(mi);
    return rc;
}

/* ---- steps 3-4: one communicator of NCCL's --------------------------- */

static int rkey_cmp(const void *a, const void *b)
{
    const struct rkey *x = a, *y = b;
    if (x->is_id != y->is_id)
        return x->is_id > y->is_id ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void where(const struct gt_nlog *l, const struct gt_nlog_comm *c, char *buf, size_t n)
{
    const struct gt_nlog_proc *p = &l->procs[c->proc];
    snprintf(buf, n, "%s:%d", p->host, p->pid);
}

/* Fills c from the group's records g[0..n) (sorted by record index). */
static void fill_group(const struct ctx *x, const struct rkey *g, size_t n, struct gt_nj_comm *c,
                       const char **hosts)
{
    const struct gt_nlog *l = x->l;
    const struct gt_nlog_comm *first = &l->comms[g[0].idx];
    c->in_log = 1;
    c->nranks = c->nnodes = -1;
    c->ccomm = -1;
    c->joined_by = "";
    if (g[0].is_id) {
        c->has_comm_id = 1;
        c->comm_id = g[0].key;
        snprintf(c->label, sizeof(c->label), "0x%llx", (unsigned long long)g[0].key);
    } else if (first->is_split && first->parent >= 0) {
        const struct gt_nlog_comm *pa = &l->comms[first->parent];
        char w[96];
        where(l, first, w, sizeof(w));
        if (pa->has_id)
            snprintf(c->label, sizeof(c->label), "split:0x%llx/%d/%d",
                     (unsigned long long)pa->comm_id, first->split_count, first->color);
        else
            snprintf(c->label, sizeof(c->label), "split:%.60s/0x%llx", w,
                     (unsigned long long)first->ptr);
    } else {
        char w[96];
        where(l, first, w, sizeof(w));
        snprintf(c->label, sizeof(c->label), "comm:%.60s/0x%llx", w,
                 (unsigned long long)first->ptr);
    }
    size_t nh = 0;
    for (size_t i = 0; i < n; i++) {
        const struct gt_nlog_comm *r = &l->comms[g[i].idx];
        if (r->nranks > c->nranks)
            c->nranks = r->nranks;
        if (r->nnodes > c->nnodes)
            c->nnodes = r->nnodes;
        const struct rextra *e = &x->ex[g[i].idx];
        for (int k = 0; k < GT_NLOG_CH_COUNT; k++)
            c->ch[k] += r->ch[k] + e->ch[k];
        c->ch_gdrdma += r->ch_gdrdma + e->gdrdma;
        c->amb += r->amb - (e->amb_resolved < r->amb ? e->amb_resolved : r->amb);
        c->gdr_on += r->gdr_on;
        c->gdr_off += r->gdr_off;
        if (!c->net[0] && r->net[0])
            memcpy(c->net, r->net, sizeof(c->net));
        hosts[nh++] = l->procs[r->proc].host;
    }
    c->ranks_seen = (int)n;
    /* distinct processes and hosts */
    qsort(hosts, nh, sizeof(*hosts), str_cmp);
    for (size_t i = 0; i < nh; i++)
        if (!i || strcmp(hosts[i], hosts[i - 1])) {
            gt_appendf(c->hosts, sizeof(c->hosts) - 4, "%s%s", c->nhosts ? "," : "", hosts[i]);
            c->nhosts++;
        }
    if (strlen(c->hosts) >= sizeof(c->hosts) - 5)
        strcat(c->hosts, "...");
    uint32_t seen_proc = UINT32_MAX;
    for (size_t i = 0; i < n; i++) /* records of one process are few and adjacent in practice */
        if (l->comms[g[i].idx].proc != seen_proc) {
            seen_proc = l->comms[g[i].idx].proc;
            c->nprocs++;
        }
}

/* The record of the group to quote for a class set: its first with lines of
 * one of the classes in mask (bit per enum gt_nlog_ch). */
static const struct gt_nlog_comm *quote_rec(const struct gt_nlog *l, const struct rkey *g, size_t n,
                                            unsigned mask)
{
    for (size_t i = 0; i < n; i++) {
        const struct gt_nlog_comm *r = &l->comms[g[i].idx];
        for (int k = 0; k < GT_NLOG_CH_COUNT; k++)
            if ((mask & (1u << k)) && r->ch[k])
                return r;
    }
    return NULL;
}

#define BIT(k) (1u << (k))
#define NET_OTHER_MASK (BIT(GT_NLOG_CH_NET_OTHER) | BIT(GT_NLOG_CH_COLLNET_OTHER))
#define OURS_MASK (BIT(GT_NLOG_CH_NET_OURS) | BIT(GT_NLOG_CH_COLLNET_OURS))
#define INTRA_MASK (BIT(GT_NLOG_CH_P2P) | BIT(GT_NLOG_CH_SHM) | BIT(GT_NLOG_CH_NVLS))

/* Which recorder communicator(s) the group joins (steps 2-3): by commId, else
 * the ABI <= v10 records of its processes (their verdicts combined; each is
 * marked in joined[]).  Returns how many process records it joined. */
static int join_recorders(const struct ctx *x, const struct rkey *g, size_t n, struct gt_nj_comm *c,
                          unsigned char *joined)
{
    const struct gt_job *j = x->j;
    if (c->has_comm_id) {
        long f = idref_find(x->cid, x->ncid, c->comm_id);
        if (f >= 0) {
            c->ccomm = (long)x->cid[f].i;
            c->joined_by = g[0].by_elim == 2 ? "elimination (init order)"
                           : g[0].by_elim    ? "elimination"
                                             : "commId";
            joined[c->ccomm] = 1;
            return 0;
        }
    }
    int codes[GT_V_COUNT] = {0}, nproc = 0;
    long first = -1;
    for (size_t i = 0; i < n; i++) {
        const struct gt_nlog_proc *p = &x->l->procs[x->l->comms[g[i].idx].proc];
        size_t r0 = rproc_find(x->rp, x->nrp, p->host, p->pid);
        for (size_t r = r0; r < x->nrp && !rproc_cmp(&x->rp[r], &x->rp[r0]); r++) {
            long pc = x->proc_comm[x->rp[r].rec];
            if (pc < 0)
                continue;
            if (first < 0)
                first = pc;
            joined[pc] = 1;
            codes[j->comms[pc].v.code]++;
            nproc++;
        }
    }
    if (first < 0)
        return 0;
    c->ccomm = first;
    c->joined_by = "process (net ABI <= v10)";
    c->code = gt_verdict_combine_counts(codes);
    return nproc;
}

/* Step 4: what NCCL's channel lines (and "Using network X") say of the
 * group's communicator, first match wins (nccljoin.h). */
static int channel_kind(const struct gt_nlog *l, const struct rkey *g, size_t n,
                        const struct gt_nj_comm *c)
{
    unsigned have = 0;
    for (int k = 0; k < GT_NLOG_CH_COUNT; k++)
        if (c->ch[k])
            have |= BIT(k);
    int multi = c->nnodes > 1 || c->nhosts > 1;
    /* NCCL's nNodes (2.20+) over our count of hosts: a test may run many
     * "nodes" on one host (NCCL_HOSTID) */
    int one_node = c->nranks == 1 || c->nnodes == 1 ||
                   (c->nnodes < 0 && c->nhosts == 1 && c->nranks > 0 && c->ranks_seen >= c->nranks);
    if (have & NET_OTHER_MASK)
        return GT_NJ_BYPASSED;
    if (have & OURS_MASK)
        return GT_NJ_THROUGH;
    if (one_node || (have & INTRA_MASK))
        return GT_NJ_INTRA;
    if (c->net[0] && strcasecmp(c->net, GT_NLOG_OUR_NET) && multi)
        return GT_NJ_BYPASSED;
    if (c->amb) {
        /* its lines could not be told from another communicator's of the
         * same process: what those lines were still says something */
        uint32_t un[GT_NLOG_CH_COUNT] = {0};
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < GT_NLOG_CH_COUNT; k++)
                un[k] += l->procs[l->comms[g[i].idx].proc].unattributed[k];
        return un[GT_NLOG_CH_NET_OTHER] || un[GT_NLOG_CH_COLLNET_OTHER] ? GT_NJ_UNKNOWN
               : un[GT_NLOG_CH_NET_OURS]                                ? GT_NJ_THROUGH
                                                                        : GT_NJ_UNKNOWN;
    }
    return c->net[0] && !strcasecmp(c->net, GT_NLOG_OUR_NET) ? GT_NJ_THROUGH : GT_NJ_UNKNOWN;
}

/* Steps 2-4 for one group of NCCL's records: its kind, the recorder
 * communicator it joins, its verdict and why. */
static void judge(const struct ctx *x, const struct rkey *g, size_t n, struct gt_nj_comm *c,
                  unsigned char *joined)
{
    const struct gt_nlog *l = x->l;
    const struct gt_job *j = x->j;
    char w[96];
    c->kind = channel_kind(l, g, n, c);
    int nbyproc = join_recorders(x, g, n, c, joined);
    const struct gt_ccomm *rc = c->ccomm >= 0 ? &j->comms[c->ccomm] : NULL;
    int by_proc = rc && !rc->has_comm_id;
    if (rc) {
        c->emulated = rc->v.emulated;
        if (!by_proc)
            c->code = rc->v.code;
    } else {
        c->code = GT_V_NO_DATA;
    }
    switch (c->kind) {
    case GT_NJ_BYPASSED: {
        const struct gt_nlog_comm *q = quote_rec(l, g, n, NET_OTHER_MASK);
        c->code = GT_V_BYPASSED;
        if (q) {
            where(l, q, w, sizeof(w));
            gt_appendf(c->why, sizeof(c->why),
                       "NCCL carried it around gdrtrace: \"%s\" (%s; %u such channel line(s)).",
                       q->quote_net, w,
                       c->ch[GT_NLOG_CH_NET_OTHER] + c->ch[GT_NLOG_CH_COLLNET_OTHER]);
        } else {
            where(l, &l->comms[g[0].idx], w, sizeof(w));
            gt_appendf(c->why, sizeof(c->why),
                       "NCCL assigned it another network: \"Using network %s\" (%s) and it spans "
                       "%d node(s).",
                       c->net, w, c->nnodes > c->nhosts ? c->nnodes : c->nhosts);
        }
        break;
    }
    case GT_NJ_INTRA: {
        const struct gt_nlog_comm *q = quote_rec(l, g, n, INTRA_MASK);
        if (c->code == GT_V_NO_DATA)
            c->intra = 1;
        if (c->nranks == 1)
            gt_appendf(c->why, sizeof(c->why), "1 rank: no connection, no network.");
        else if (q) {
            where(l, q, w, sizeof(w));
            gt_appendf(c->why, sizeof(c->why), "intra-node, no network used: \"%s\" (%s).",
                       q->quote_intra, w);
        } else
            gt_appendf(c->why, sizeof(c->why), "intra-node (%s), no network used.",
                       c->nnodes == 1 ? "NCCL: nNodes 1" : "all its ranks on one host");
        if (rc && !c->intra && !by_proc)
            gt_appendf(c->why, sizeof(c->why), " The recorder: %s", rc->v.why);
        break;
    }
    case GT_NJ_THROUGH:
        if (by_proc)
            gt_appendf(c->why, sizeof(c->why), "NCCL carried it through gdrtrace.");
        else if (rc)
            gt_appendf(c->why, sizeof(c->why), "%s", rc->v.why);
        else {
            where(l, &l->comms[g[0].idx], w, sizeof(w));
            gt_appendf(c->why, sizeof(c->why),
                       "NCCL carried it through gdrtrace but no recorder of its processes has it "
                       "(%s …): recorders in another GDRTRACE_DIR, pruned, or not given.",
                       w);
        }
        if (c->ch[GT_NLOG_CH_NET_OURS] || c->ch[GT_NLOG_CH_COLLNET_OURS])
            gt_appendf(c->why, sizeof(c->why),
                       " NCCL: %u channel line(s) via NET/gdrtrace, %u with GDRDMA.",
                       c->ch[GT_NLOG_CH_NET_OURS] + c->ch[GT_NLOG_CH_COLLNET_OURS], c->ch_gdrdma);
        else if (c->amb)
            gt_appendf(c->why, sizeof(c->why),
                       " NCCL: its channel lines cannot be told from another communicator's of the "
                       "same process; those all went via NET/gdrtrace.");
        break;
    default:
        if (rc && !by_proc)
            gt_appendf(c->why, sizeof(c->why), "%s", rc->v.why);
        else
            gt_appendf(c->why, sizeof(c->why), "no recorder has it.");
        gt_appendf(c->why, sizeof(c->why), " NCCL's log shows %s.",
                   c->amb ? "channel lines that could be this or another communicator's"
                          : "no channel line of it");
        break;
    }
    if (c->gdr_off) {
        for (size_t i = 0; i < n; i++) {
            const struct gt_nlog_comm *r = &l->comms[g[i].idx];
            if (r->gdr_off) {
                where(l, r, w, sizeof(w));
                gt_appendf(c->why, sizeof(c->why), " NCCL: \"%s\" (%s).", r->quote_gdr, w);
                break;
            }
        }
    }
    if (by_proc)
        gt_appendf(c->why, sizeof(c->why),
                   " Joined by process (net ABI <= v10: the plugin sees no commId; %d process "
                   "record(s), verdicts combined; the first): %s",
                   nbyproc, rc->v.why);
}

/* ---- step 5: processes -------------------------------------------------- */

static int proc_line(const struct gt_nlog *l, size_t pi, const unsigned char *all_intra,
                     struct gt_nj_proc *out)
{
    const struct gt_nlog_proc *p = &l->procs[pi];
    int plugin_bad = p->plugin >= GT_NLOG_PLUGIN_OTHER;
    uint32_t around =
        p->unattributed[GT_NLOG_CH_NET_OTHER] + p->unattributed[GT_NLOG_CH_COLLNET_OTHER];
    if (!plugin_bad && !around)
        return 0;
    memset(out, 0, sizeof(*out));
    snprintf(out->host, sizeof(out->host), "%s", p->host);
    out->pid = p->pid;
    out->code = all_intra[pi] ? GT_V_NO_DATA : GT_V_BYPASSED;
    if (plugin_bad) {
        static const char *const what[] = {
            [GT_NLOG_PLUGIN_OTHER] = "NCCL loaded another net plugin",
            [GT_NLOG_PLUGIN_NOT_FOUND] = "NCCL found no net plugin",
            [GT_NLOG_PLUGIN_LOAD_FAILED] = "NCCL could not load the net plugin",
            [GT_NLOG_PLUGIN_UNSUPPORTED] = "NCCL found no net plugin version it takes",
            [GT_NLOG_PLUGIN_INIT_FAILED] = "gdrtrace's init failed and NCCL fell back",
            [GT_NLOG_PLUGIN_DISABLED] = "NCCL was told to load no net plugin",
        };
        gt_appendf(out->why, sizeof(out->why), "%s: \"%s\"", what[p->plugin], p->quote_plugin);
        if (p->plugin == GT_NLOG_PLUGIN_INIT_FAILED && p->quote_ours[0])
            gt_appendf(out->why, sizeof(out->why), "; \"%s\"", p->quote_ours);
        if (p->quote_net[0])
            gt_appendf(out->why, sizeof(out->why), "; \"%s\"", p->quote_net);
        gt_appendf(out->why, sizeof(out->why), ".");
    }
    if (around)
        gt_appendf(out->why, sizeof(out->why),
                   "%s%u channel line(s) around gdrtrace not attributable to one communicator: "
                   "\"%s\".",
                   out->why[0] ? " " : "", around, p->quote_unattr);
    if (all_intra[pi])
        gt_appendf(out->why, sizeof(out->why),
                   " Every communicator of this process was intra-node: nothing went around it.");
    return 1;
}

/* ---- the join ---------------------------------------------------------------- */

/* The job's lookups (struct ctx) and step 3b's per-record additions; 0, or
 * -1 out of memory (ctx_free still frees what was taken). */
static int ctx_build(struct ctx *x, const struct gt_nlog *l, const struct gt_job *j)
{
    *x = (struct ctx){.l = l, .j = j};
    x->rp = malloc((j->nrec ? j->nrec : 1) * sizeof(*x->rp));
    x->cid = malloc((j->ncomm ? j->ncomm : 1) * sizeof(*x->cid));
    x->proc_comm = malloc((j->nrec ? j->nrec : 1) * sizeof(*x->proc_comm));
    x->rank_start = calloc(j->nrec + 1, sizeof(*x->rank_start));
    x->ex = calloc(l->ncomm ? l->ncomm : 1, sizeof(*x->ex));
    if (!x->rp || !x->cid || !x->proc_comm || !x->rank_start || !x->ex)
        return -1;
    for (size_t i = 0; i < j->nrec; i++) {
        x->rp[i] = (struct rproc){j->recs[i].id.host, strcspn(j->recs[i].id.host, "."),
                                  j->recs[i].id.pid, i};
        x->proc_comm[i] = -1;
    }
    x->nrp = j->nrec;
    qsort(x->rp, x->nrp, sizeof(*x->rp), rproc_cmp);
    for (size_t i = 0; i < j->ncomm; i++) {
        const struct gt_ccomm *cc = &j->comms[i];
        if (cc->has_comm_id == 1)
            x->cid[x->ncid++] = (struct idref){cc->comm_id, i};
        else if (!cc->has_comm_id)
            for (size_t m = 0; m < cc->nmembers; m++)
                if (cc->members[m].rec < j->nrec)
                    x->proc_comm[cc->members[m].rec] = (long)i;
    }
    qsort(x->cid, x->ncid, sizeof(*x->cid), idref_cmp);
    for (size_t q = 0; q < j->nranks; q++)
        if (j->ranks[q].rec < j->nrec)
            x->rank_start[j->ranks[q].rec + 1]++;
    for (size_t i = 0; i < j->nrec; i++)
        x->rank_start[i + 1] += x->rank_start[i];
    /* j->ranks is in (rec, slot) order (model.h), so the prefix sums index it */
    return 0;
}

static void ctx_free(struct ctx *x)
{
    free(x->rp);
    free(x->cid);
    free(x->proc_comm);
    free(x->rank_start);
    free(x->ex);
}

/* Step 1's groups: the runs of one key in s (sorted by rkey_cmp), in the
 * order of their first record (NCCL's init order); NULL out of memory. */
static struct grp *make_groups(const struct rkey *s, size_t n, size_t *ng_out)
{
    size_t ng = 0;
    struct grp *grp = malloc((n ? n : 1) * sizeof(*grp));
    if (!grp)
        return NULL;
    for (size_t i = 0; i < n;) {
        size_t e = i + 1;
        while (e < n && s[e].key == s[i].key && s[e].is_id == s[i].is_id)
            e++;
        grp[ng].at = i;
        grp[ng].n = e - i;
        grp[ng].first = s[i].idx;
        ng++;
        i = e;
    }
    for (size_t a = 1; a < ng; a++) { /* insertion by first record: stable, few moves */
        struct grp t = grp[a];
        size_t b = a;
        for (; b > 0 && grp[b - 1].first > t.first; b--)
            grp[b] = grp[b - 1];
        grp[b] = t;
    }
    *ng_out = ng;
    return grp;
}

/* Step 6: the recorders' communicators no line names, as they were. */
static void add_unnamed(const struct gt_job *j, const unsigned char *joined,
                        struct gt_nccl_join *out)
{
    for (size_t i = 0; i < j->ncomm; i++) {
        if (joined[i])
            continue;
        const struct gt_ccomm *cc = &j->comms[i];
        struct gt_nj_comm *c = &out->comms[out->ncomm++];
        snprintf(c->label, sizeof(c->label), "%s", cc->label);
        c->has_comm_id = cc->has_comm_id == 1;
        c->comm_id = cc->comm_id;
        c->kind = GT_NJ_UNKNOWN;
        c->code = cc->v.code;
        c->emulated = cc->v.emulated;
        c->ccomm = (long)i;
        c->joined_by = "";
        c->nranks = c->nnodes = -1;
        c->nprocs = cc->nprocs;
        c->nhosts = cc->nhosts;
        gt_appendf(c->why, sizeof(c->why), "%s (not in NCCL's log.)", cc->v.why);
    }
}

/* Step 7: the whole input's verdict and why. */
static void combine(const struct gt_job *j, struct gt_nccl_join *out)
{
    int seen[GT_V_COUNT] = {0}, count[GT_V_COUNT] = {0}, nintra = 0;
    seen[j->overall.code]++;
    for (size_t i = 0; i < out->ncomm; i++) {
        seen[out->comms[i].code]++;
        if (out->comms[i].intra)
            nintra++;
        else
            count[out->comms[i].code]++;
    }
    for (size_t i = 0; i < out->nproc; i++)
        seen[out->procs[i].code]++;
    out->code = gt_verdict_combine_counts(seen);
    gt_appendf(out->why, sizeof(out->why), "%zu communicator(s) with NCCL's log:", out->ncomm);
    for (int v = 0; v < GT_V_COUNT; v++)
        if (count[v])
            gt_appendf(out->why, sizeof(out->why), " %s %d", gt_verdict_name(v), count[v]);
    if (nintra)
        gt_appendf(out->why, sizeof(out->why), " INTRA-NODE %d", nintra);
    if (!out->ncomm)
        gt_appendf(out->why, sizeof(out->why), " none");
    gt_appendf(out->why, sizeof(out->why), ".");
    int nb = 0;
    for (size_t i = 0; i < out->nproc; i++)
        nb += out->procs[i].code == GT_V_BYPASSED;
    if (nb)
        gt_appendf(out->why, sizeof(out->why),
                   " %d process(es) BYPASSED by NCCL's own word (the nccl lines).", nb);
    gt_appendf(out->why, sizeof(out->why), " Recorders: %s", j->overall.why);
}

int gt_nccl_join(const struct gt_nlog *l, const struct gt_job *j, struct gt_nccl_join *out)
{
    memset(out, 0, sizeof(*out));
    out->log = l;
    int rc = -1;
    struct ctx x;
    struct grp *grp = NULL;
    size_t ng = 0;
    struct rkey *k = malloc((l->ncomm ? l->ncomm : 1) * sizeof(*k));
    struct rkey *s = malloc((l->ncomm ? l->ncomm : 1) * sizeof(*s));
    const char **hosts = malloc((l->ncomm ? l->ncomm : 1) * sizeof(*hosts));
    unsigned char *joined = calloc(j->ncomm ? j->ncomm : 1, 1);
    unsigned char *all_intra = malloc(l->nproc ? l->nproc : 1);
    out->comms = calloc(l->ncomm + j->ncomm + 1, sizeof(*out->comms));
    out->procs = calloc(l->nproc ? l->nproc : 1, sizeof(*out->procs));
    out->order = calloc(l->nproc ? l->nproc : 1, sizeof(*out->order));
    if (ctx_build(&x, l, j) || !k || !s || !hosts || !joined || !all_intra || !out->comms ||
        !out->procs || !out->order)
        goto done;
    /* steps 1-3b: each record's key, splits by elimination, lines by order */
    record_keys(l, k);
    if (eliminate(&x, k))
        goto done;
    gt_nj_by_order(&x, k, out);
    memcpy(s, k, l->ncomm * sizeof(*s));
    qsort(s, l->ncomm, sizeof(*s), rkey_cmp);
    grp = make_groups(s, l->ncomm, &ng);
    if (!grp)
        goto done;
    /* steps 2-4, a communicator of NCCL's a group */
    memset(all_intra, 1, l->nproc ? l->nproc : 1);
    for (size_t gi = 0; gi < ng; gi++) {
        struct gt_nj_comm *c = &out->comms[out->ncomm++];
        const struct rkey *g = &s[grp[gi].at];
        fill_group(&x, g, grp[gi].n, c, hosts);
        judge(&x, g, grp[gi].n, c, joined);
        if (c->kind != GT_NJ_INTRA)
            for (size_t i = 0; i < grp[gi].n; i++)
                all_intra[l->comms[g[i].idx].proc] = 0;
    }
    add_unnamed(j, joined, out);
    /* step 5 */
    for (size_t pi = 0; pi < l->nproc; pi++) {
        if (!l->procs[pi].ncomm)
            all_intra[pi] = 0;
        if (proc_line(l, pi, all_intra, &out->procs[out->nproc]))
            out->nproc++;
    }
    combine(j, out);
    rc = 0;
done:
    free(grp);
    free(k);
    free(s);
    free(hosts);
    free(joined);
    free(all_intra);
    ctx_free(&x);
    if (rc)
        gt_nccl_join_free(out);
    return rc;
}

int gt_nccl_join_next(const struct gt_nccl_join *nj, const struct gt_job *j, char *buf, size_t n)
{
    int through = 0, intra = 0;
    for (size_t i = 0; i < nj->ncomm; i++) {
        through += nj->comms[i].kind == GT_NJ_THROUGH;
        intra += nj->comms[i].intra;
    }
    if (nj->code == GT_V_BYPASSED && j->overall.code != GT_V_BYPASSED)
        snprintf(buf, n,
                 "NCCL carried traffic around gdrtrace (the BYPASSED lines quote it): have NCCL "
                 "load it for every communicator (NCCL_NET_PLUGIN=gdrtrace, no netName of "
                 "another network) and check the node (gdrtrace doctor, gate 1)");
    else if (nj->code == GT_V_NO_DATA && !j->nrec && through)
        snprintf(buf, n,
                 "NCCL used gdrtrace but no recorder was given: pass the job's recorders "
                 "(its GDRTRACE_DIR, or a dump of each node)");
    else if (nj->code == GT_V_NO_DATA && intra && intra == (int)nj->ncomm)
        snprintf(buf, n,
                 "every communicator was intra-node (no network used): run across nodes to "
                 "judge GPUDirect RDMA");
    else
        return 0;
    return 1;
}

void gt_nccl_join_free(struct gt_nccl_join *nj)
{
    free(nj->comms);
    free(nj->procs);
    free(nj->order);
    memset(nj, 0, sizeof(*nj));
}
