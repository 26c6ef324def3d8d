/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.c — the fold of recorders into a job (model.h): communicators merged
 * by commId, nodes, processes' digests and fates, then report order.  The
 * verdict rules are verdict.c's, a process's fate fate.c's.
 * Invariant: the merged view depends on the recorders, never on the order
 * they were folded in (first/last contributors follow gt_recfile_cmp), and
 * nothing here reads the machine, so an archive gives the same job as the
 * live files.
 */
#include "tools/lib/model.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/nccl_cfg.h"
#include "tools/lib/coll.h"
#include "tools/lib/hist.h"
#include "tools/lib/htab.h"
#include "tools/lib/ncclcfg.h"

/* ---- Folding recorders into a job ------------------------------------
 *
 * Recorders are folded one at a time (gt_job_add), in any order; what the
 * report shows is independent of that order, so `verdict` can fold each
 * recorder as it is read and release it (inputs.h, fold mode).  Order
 * enters only through "first"/"last" fields: the label and context of a
 * communicator come from its first member, a merged record's last errno,
 * reason and error text from its last contributor and its device from the
 * first with one, where first/last follow gt_recfile_cmp() then the slot, as
 * when the recorders were folded sorted.  Lookups (communicator by id, host,
 * job) go through open-addressing hash tables: linear in the recorders. */

int gt_recfile_cmp(const struct gt_recfile *x, const struct gt_recfile *y)
{
    int c = gt_natcmp(x->id.job, y->id.job);
    if (c)
        return c;
    if ((c = gt_natcmp(x->id.host, y->id.host)))
        return c;
    if (x->id.rank != y->id.rank)
        return x->id.rank < y->id.rank ? -1 : 1;
    if (x->id.pid != y->id.pid)
        return x->id.pid < y->id.pid ? -1 : 1;
    return strcmp(x->source, y->source);
}

/* A lean job's communicator sum: the counters of struct gtr_comm without
 * its histograms (which lie between them). */
#define LITE_HEAD offsetof(struct gtr_comm, hist)
#define LITE_TAIL (offsetof(struct gtr_comm, hist) + sizeof(((struct gtr_comm *)0)->hist))
struct gt_comm_lite {
    unsigned char head[LITE_HEAD];
    unsigned char tail[sizeof(struct gtr_comm) - LITE_TAIL];
};

static void lite_unpack(const struct gt_comm_lite *l, struct gtr_comm *c)
{
    memcpy(c, l->head, sizeof(l->head));
    for (int op = 0; op < GTR_OP_COUNT; op++)
        gt_hist_init(&c->hist[op]);
    memcpy((unsigned char *)c + LITE_TAIL, l->tail, sizeof(l->tail));
}

static void lite_pack(const struct gtr_comm *c, struct gt_comm_lite *l)
{
    memcpy(l->head, c, sizeof(l->head));
    memcpy(l->tail, (const unsigned char *)c + LITE_TAIL, sizeof(l->tail));
}

/* A contributor: recorder index and comm slot. */
struct at {
    size_t rec;
    uint32_t slot;
};

/* Per communicator: who supplied each order-dependent field. */
struct cstate {
    struct at first, dev, fb, err, text;
    size_t last_rec; /* nprocs: a recorder's slots are folded together */
};

struct gt_fold {
    struct gt_htab comm_ix, host_ix, job_ix;
    struct cstate *cs;            /* parallel to j->comms */
    size_t *node_first;           /* parallel to j->nodes: first recorder of the host */
    int (*node_seen)[GT_V_COUNT]; /* per node: codes of its processes' communicators */
    size_t *rec_node;             /* recorder -> node */
    size_t nrec_cap, comm_cap, node_cap, ranks_cap, fates_cap;
    struct gtr_comm *grp;  /* scratch */
    struct gtr_comm *lsum; /* scratch: a lean communicator's sum, unpacked */
};

static void fold_free(struct gt_job *j)
{
    struct gt_fold *f = j->fold;
    if (!f)
        return;
    free(f->comm_ix.v);
    free(f->host_ix.v);
    free(f->job_ix.v);
    free(f->cs);
    free(f->node_first);
    free(f->node_seen);
    free(f->rec_node);
    free(f->grp);
    free(f->lsum);
    free(f);
    j->fold = NULL;
}

void gt_job_free(struct gt_job *j)
{
    fold_free(j);
    gt_coll_free(j->coll);
    j->coll = NULL;
    for (size_t i = 0; i < j->ncomm; i++) {
        free(j->comms[i].members);
        free(j->comms[i].sum);
        free(j->comms[i].lite);
    }
    free(j->comms);
    free(j->nodes);
    free(j->ranks);
    free(j->rank_ix);
    j->rank_ix = NULL;
    free(j->conn);
    j->conn = NULL;
    j->nconn = j->conn_cap = 0;
    free(j->fates);
    j->fates = NULL;
    j->nfates = 0;
    free(j->rec_pos);
    j->rec_pos = NULL;
    j->comms = NULL;
    j->nodes = NULL;
    j->ranks = NULL;
    j->ncomm = j->nnodes = j->nranks = 0;
}

void gt_recfile_release(struct gt_recfile *r)
{
    gt_recfile_reduce(r, 0);
}

void gt_recfile_reduce(struct gt_recfile *r, int all_settings)
{
    free(r->comms);
    free(r->comm_slot);
    free(r->comm_at);
    r->comms = NULL;
    r->comm_slot = r->comm_at = NULL;
    r->ncomm = r->nheld = 0;
    /* settings: only those a verdict reads (NCCL's own, tools/lib/ncclcfg.c)
     * unless all are asked for (diff compares them); the policy in force and
     * emulated were decided at parse (r->reg_mode, r->emulated) */
    uint32_t ks = 0;
    for (uint32_t i = 0; i < r->nset; i++)
        if (r->settings[i].in_use && (all_settings || gt_nccl_cfg_find(r->settings[i].key)))
            r->settings[ks++] = r->settings[i];
    r->nset = ks;
    if (!ks) {
        free(r->settings);
        r->settings = NULL;
    } else {
        struct gtr_setting *st = realloc(r->settings, ks * sizeof(*st));
        if (st)
            r->settings = st;
    }
    free(r->callees); /* read by gt_recfile_fate() during the fold */
    r->callees = NULL;
    r->ncallee = 0;
    /* the collective sections: read by the fold only (gt_coll_fold); up
     * to 16 tables of 170 KB each in a recorder of NCCL's collectives */
    free(r->colls);
    r->colls = NULL;
    r->ncoll = 0;
    free(r->coll_status);
    r->coll_status = NULL;
    gt_recfile_drop_events(r); /* r->rs stays */
    if (r->devs_shared)        /* reduced already: a pool's table (inputs.c) */
        return;
    uint32_t k = 0;
    for (uint32_t i = 0; i < r->ndev; i++)
        if (r->devs[i].in_use)
            r->devs[k++] = r->devs[i];
    r->ndev = k;
    if (!k) {
        free(r->devs);
        r->devs = NULL;
    } else {
        struct gtr_device *d = realloc(r->devs, k * sizeof(*d));
        if (d)
            r->devs = d;
    }
}

/* Key of a merged communicator: NCCL's commId, or (process-wide and
 * overflow records) the recorder itself. */
struct ckey {
    const struct gt_job *j;
    int has;
    uint64_t id;
    size_t rec;
};

static uint64_t ckey_hash(int has, uint64_t id, size_t rec)
{
    uint64_t h = gt_hash_bytes(&has, sizeof(has), 0xcbf29ce484222325ull);
    return has == 1 ? gt_hash_bytes(&id, sizeof(id), h) : gt_hash_bytes(&rec, sizeof(rec), h);
}

static int ckey_eq(size_t v, const void *arg)
{
    const struct ckey *k = arg;
    const struct gt_ccomm *x = &k->j->comms[v];
    if (x->has_comm_id != k->has)
        return 0;
    return k->has == 1 ? x->comm_id == k->id : k->j->fold->cs[v].first.rec == k->rec;
}

static uint64_t ckey_rehash(size_t v, const void *arg)
{
    const struct gt_job *j = arg;
    return ckey_hash(j->comms[v].has_comm_id, j->comms[v].comm_id, j->fold->cs[v].first.rec);
}

struct skey {
    const struct gt_job *j;
    const char *s;
};

static int host_eq(size_t v, const void *arg)
{
    const struct skey *k = arg;
    return !strcmp(k->j->nodes[v].host, k->s);
}

static uint64_t host_rehash(size_t v, const void *arg)
{
    return gt_hash_str(((const struct gt_job *)arg)->nodes[v].host);
}

static int job_eq(size_t v, const void *arg)
{
    const struct skey *k = arg;
    return !strcmp(k->j->recs[v].id.job, k->s);
}

static uint64_t job_rehash(size_t v, const void *arg)
{
    return gt_hash_str(((const struct gt_job *)arg)->recs[v].id.job);
}

/* 1 if contributor a comes after b in the report's order. */
static int later(const struct gt_job *j, struct at a, struct at b)
{
    if (a.rec != b.rec) {
        int c = gt_recfile_cmp(&j->recs[a.rec], &j->recs[b.rec]);
        if (c)
            return c > 0;
        return a.rec > b.rec;
    }
    return a.slot > b.slot;
}

/* 1 (and *holder = me) if no member supplied the field yet or me comes later. */
static int take(const struct gt_job *j, struct at *holder, struct at me)
{
    if (holder->rec != SIZE_MAX && !later(j, me, *holder))
        return 0;
    *holder = me;
    return 1;
}

int gt_job_begin(struct gt_job *j)
{
    memset(j, 0, sizeof(*j));
    j->fold = calloc(1, sizeof(*j->fold));
    if (!j->fold)
        return -1;
    j->fold->grp = malloc(sizeof(*j->fold->grp));
    j->fold->lsum = malloc(sizeof(*j->fold->lsum));
    if (!j->fold->grp || !j->fold->lsum) {
        free(j->fold->grp);
        free(j->fold->lsum);
        free(j->fold);
        j->fold = NULL;
        return -1;
    }
    return 0;
}

/* Adds slot s of recorder ri to its merged communicator. */
static int fold_comm(struct gt_job *j, size_t ri, uint32_t s)
{
    struct gt_fold *f = j->fold;
    const struct gt_recfile *r = &j->recs[ri];
    const struct gtr_comm *c = gt_recfile_comm(r, s); /* a held slot (caller) */
    struct ckey key = {j, (int)c->has_comm_id, c->comm_id, ri};
    if (gt_ht_reserve(&f->comm_ix, ckey_rehash, j))
        return -1;
    size_t *hs = gt_ht_find(&f->comm_ix, ckey_hash(key.has, key.id, ri), ckey_eq, &key);
    struct at me = {ri, s};
    if (*hs == SIZE_MAX) {
        size_t cap = f->comm_cap;
        if (gt_grow((void **)&j->comms, &cap, j->ncomm + 1, sizeof(*j->comms)) ||
            gt_grow((void **)&f->cs, &f->comm_cap, j->ncomm + 1, sizeof(*f->cs)))
            return -1;
        f->comm_cap = cap < f->comm_cap ? cap : f->comm_cap;
        struct gt_ccomm *x = &j->comms[j->ncomm];
        memset(x, 0, sizeof(*x));
        if (j->lean) {
            x->lite = malloc(sizeof(*x->lite));
            if (!x->lite)
                return -1;
            gt_comm_clear(f->lsum);
            lite_pack(f->lsum, x->lite);
        } else {
            x->sum = malloc(sizeof(*x->sum));
            if (!x->sum)
                return -1;
            gt_comm_clear(x->sum);
        }
        x->has_comm_id = (int)c->has_comm_id;
        x->comm_id = c->comm_id;
        gt_fmt_comm(c, r, x->label, sizeof(x->label));
        struct cstate *cs = &f->cs[j->ncomm];
        cs->first = cs->dev = me;
        cs->fb = cs->err = cs->text = (struct at){SIZE_MAX, 0};
        cs->last_rec = SIZE_MAX;
        *hs = j->ncomm++;
        f->comm_ix.n++;
    }
    size_t idx = *hs;
    struct gt_ccomm *x = &j->comms[idx];
    struct cstate *cs = &f->cs[idx];
    if (x->nmembers && later(j, cs->first, me)) {
        cs->first = me;
        gt_fmt_comm(c, r, x->label, sizeof(x->label));
    }
    /* the sums are order-free; the last-of fields are taken from c only
     * when c comes later than the member that supplied them */
    struct gtr_comm *d = x->sum;
    if (x->lite) {
        d = f->lsum;
        lite_unpack(x->lite, d);
    }
    int32_t fb_errno = d->fallback_last_errno, err_errno = d->error_last_errno, dev = d->dev;
    uint32_t fb_reason = d->fallback_last_reason, err_reason = d->error_last_reason;
    char text[sizeof(d->error_last_text)];
    memcpy(text, d->error_last_text, sizeof(text));
    gt_comm_accumulate(d, c);
    if (c->fallback_count && !take(j, &cs->fb, me)) {
        d->fallback_last_errno = fb_errno;
        d->fallback_last_reason = fb_reason;
    }
    if (c->error_count && !take(j, &cs->err, me)) {
        d->error_last_errno = err_errno;
        d->error_last_reason = err_reason;
    }
    if (c->error_count && c->error_last_text[0] && !take(j, &cs->text, me))
        memcpy(d->error_last_text, text, sizeof(text));
    /* the device: the first member's that has one */
    d->dev = dev;
    if (c->dev >= 0 && (dev < 0 || later(j, cs->dev, me))) {
        d->dev = c->dev;
        cs->dev = me;
    }
    if (x->lite)
        lite_pack(d, x->lite);
    if ((x->nmembers & (x->nmembers - 1)) == 0) { /* capacity: the next power of two */
        struct gt_member *nm =
            realloc(x->members, (x->nmembers ? 2 * x->nmembers : 1) * sizeof(*nm));
        if (!nm)
            return -1;
        x->members = nm;
    }
    x->members[x->nmembers].rec = ri;
    x->members[x->nmembers].slot = s;
    x->nmembers++;
    if (cs->last_rec != ri) {
        x->nprocs++;
        cs->last_rec = ri;
    }
    return 0;
}

struct conn_ev {
    uint64_t ts, pos;
    size_t d; /* the digest */
    uint16_t type;
};

static int conn_ev_cmp(const void *a, const void *b)
{
    const struct conn_ev *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Fills the connection runs of r's digests d[0..nd) (gt_rank_comm) into
 * j->conn: from its events, so before they are released.  0, or -1 out of
 * memory. */
static int conn_runs(struct gt_job *j, const struct gt_recfile *r, struct gt_rank_comm *d,
                     size_t nd)
{
    if (!nd || !r->ncomm)
        return 0;
    size_t *of = malloc(r->ncomm * sizeof(*of)); /* slot -> digest, SIZE_MAX none */
    uint64_t(*seen)[3] = calloc(nd, sizeof(*seen));
    size_t cap = 256, n = 0;
    struct conn_ev *ev = malloc(cap * sizeof(*ev));
    int rc = -1;
    if (!of || !seen || !ev)
        goto out;
    for (uint32_t s = 0; s < r->ncomm; s++)
        of[s] = SIZE_MAX;
    for (uint32_t h = 0; h < r->nheld; h++) {
        uint32_t s = r->comm_slot[h];
        if (!gt_comm_used(&r->comms[h]))
            continue;
        for (size_t k = 0; k < nd && of[s] == SIZE_MAX; k++)
            if (gt_comm_same_group(gt_recfile_comm(r, d[k].slot), &r->comms[h]))
                of[s] = k; /* sibling slots: their group's digest */
    }
    uint64_t pos = 0;
    struct gtr_event e;
    while (gt_recfile_event_next(r, &pos, &e)) {
        if ((e.type != GTR_EV_LISTEN && e.type != GTR_EV_CONNECT && e.type != GTR_EV_ACCEPT) ||
            e.comm_slot >= r->ncomm || of[e.comm_slot] == SIZE_MAX)
            continue;
        if (n == cap) {
            struct conn_ev *t = realloc(ev, (cap *= 2) * sizeof(*ev));
            if (!t)
                goto out;
            ev = t;
        }
        ev[n++] = (struct conn_ev){e.ts, pos, of[e.comm_slot], e.type};
        seen[of[e.comm_slot]][e.type - GTR_EV_LISTEN]++;
    }
    qsort(ev, n, sizeof(*ev), conn_ev_cmp);
    struct {
        size_t d;
        uint32_t listens, connects;
    } run[GT_CONN_RUNS_MAX];
    uint32_t runs = 0;
    for (size_t i = 0; i < n; i++) {
        if (!i || ev[i].d != ev[i - 1].d) {
            if (runs < GT_CONN_RUNS_MAX)
                run[runs].d = ev[i].d, run[runs].listens = run[runs].connects = 0;
            runs++;
        }
        if (runs <= GT_CONN_RUNS_MAX) {
            run[runs - 1].listens += ev[i].type == GTR_EV_LISTEN;
            run[runs - 1].connects += ev[i].type == GTR_EV_CONNECT;
        }
    }
    uint32_t kept = runs < GT_CONN_RUNS_MAX ? runs : GT_CONN_RUNS_MAX;
    if (j->nconn + kept > j->conn_cap) {
        size_t cap = j->conn_cap ? j->conn_cap : 64;
        while (cap < j->nconn + kept)
            cap *= 2;
        struct gt_conn_run *t = realloc(j->conn, cap * sizeof(*t));
        if (!t)
            goto out;
        j->conn = t;
        j->conn_cap = cap;
    }
    for (size_t k = 0; k < nd; k++) { /* each digest's runs, contiguous, by place */
        d[k].conn_at = j->nconn;
        for (uint32_t q = 0; q < kept; q++)
            if (run[q].d == k)
                j->conn[j->nconn++] = (struct gt_conn_run){q, run[q].listens, run[q].connects};
        d[k].conn_n = (uint32_t)(j->nconn - d[k].conn_at);
    }
    for (size_t k = 0; k < nd; k++) {
        uint64_t want[3] = {0, 0, 0};
        for (uint32_t h = 0; h < r->nheld; h++)
            if (of[r->comm_slot[h]] == k) {
                want[0] += r->comms[h].listen_count;
                want[1] += r->comms[h].connect_count;
                want[2] += r->comms[h].accept_count;
            }
        d[k].conn_nruns = runs;
        d[k].conn_lost = seen[k][0] < want[0] || seen[k][1] < want[1] || seen[k][2] < want[2];
    }
    rc = 0;
out:
    free(of);
    free(seen);
    free(ev);
    return rc;
}

int gt_job_add(struct gt_job *j, struct gt_recfile *recs, size_t ri)
{
    struct gt_fold *f = j->fold;
    j->recs = recs;
    if (ri + 1 > j->nrec)
        j->nrec = ri + 1;
    const struct gt_recfile *r = &recs[ri];
    if (gt_coll_fold(&j->coll, r))
        return -1;
    if (gt_grow((void **)&f->rec_node, &f->nrec_cap, ri + 1, sizeof(*f->rec_node)))
        return -1;
    /* jobs: a recorder stands for its job in the table */
    struct skey jk = {j, r->id.job};
    if (gt_ht_reserve(&f->job_ix, job_rehash, j))
        return -1;
    size_t *js = gt_ht_find(&f->job_ix, gt_hash_str(r->id.job), job_eq, &jk);
    if (*js == SIZE_MAX) {
        *js = ri;
        f->job_ix.n++;
        j->njobs++;
    }
    /* hosts: one node each */
    struct skey hk = {j, r->id.host};
    if (gt_ht_reserve(&f->host_ix, host_rehash, j))
        return -1;
    size_t *hs = gt_ht_find(&f->host_ix, gt_hash_str(r->id.host), host_eq, &hk);
    if (*hs == SIZE_MAX) {
        size_t cap = f->node_cap, cap2 = f->node_cap;
        if (gt_grow((void **)&j->nodes, &cap, j->nnodes + 1, sizeof(*j->nodes)) ||
            gt_grow((void **)&f->node_first, &cap2, j->nnodes + 1, sizeof(*f->node_first)) ||
            gt_grow((void **)&f->node_seen, &f->node_cap, j->nnodes + 1, sizeof(*f->node_seen)))
            return -1;
        struct gt_node *nd = &j->nodes[j->nnodes];
        memset(nd, 0, sizeof(*nd));
        snprintf(nd->host, sizeof(nd->host), "%s", r->id.host);
        memset(f->node_seen[j->nnodes], 0, sizeof(f->node_seen[0]));
        f->node_first[j->nnodes] = ri;
        *hs = j->nnodes++;
        f->host_ix.n++;
        j->nhosts++;
    }
    size_t ni = *hs;
    f->rec_node[ri] = ni;
    struct gt_node *nd = &j->nodes[ni];
    if (gt_recfile_cmp(r, &recs[f->node_first[ni]]) < 0)
        f->node_first[ni] = ri;
    nd->nproc++;
    /* the node's view: this process's communicators, sibling slots summed,
     * each judged with this process's own context */
    size_t first_digest = j->nranks;
    for (uint32_t h = 0; h < r->nheld; h++) {
        uint32_t s = r->comm_slot[h];
        if (!gt_recfile_comm_group(r, s, f->grp, NULL))
            continue;
        for (int a = 0; a < GTR_ASKED_COUNT; a++)
            for (int m = 0; m < GTR_METHOD_COUNT; m++)
                nd->did[m] += f->grp->reg_count[a][m];
        struct gt_verdict v;
        gt_verdict_of(f->grp, &r, 1, &v);
        f->node_seen[ni][v.code]++;
        if (gt_grow((void **)&j->ranks, &f->ranks_cap, j->nranks + 1, sizeof(*j->ranks)))
            return -1;
        struct gt_rank_comm *rc = &j->ranks[j->nranks++];
        memset(rc, 0, sizeof(*rc));
        rc->rec = ri;
        rc->slot = s;
        rc->has_comm_id = (int)f->grp->has_comm_id;
        rc->comm_id = f->grp->comm_id;
        for (int a = 0; a < GTR_ASKED_COUNT; a++)
            for (int m = 0; m < GTR_METHOD_COUNT; m++)
                rc->did[m] += f->grp->reg_count[a][m];
        rc->fallbacks = f->grp->fallback_count;
        rc->errors = f->grp->error_count;
        rc->msgs = f->grp->send_count + f->grp->recv_count;
        rc->bytes = f->grp->send_bytes + f->grp->recv_bytes;
        rc->deregs = f->grp->dereg_count;
        for (int op = 0; op < GTR_OP_COUNT; op++) {
            rc->p50_ns[op] = gt_hist_quantile(&f->grp->hist[op], 0.50);
            rc->p99_ns[op] = gt_hist_quantile(&f->grp->hist[op], 0.99);
        }
        rc->verdict = v.code;
    }
    /* j->ranks is NULL until a first digest: no pointer arithmetic on it then */
    if (j->nranks > first_digest &&
        conn_runs(j, r, j->ranks + first_digest, j->nranks - first_digest))
        return -1;
    /* what became of the process (refused, died inside a call): from its
     * events, so before they are released */
    struct gt_fate fate;
    gt_recfile_fate(r, &fate);
    if (fate.kind != GT_FATE_NONE) {
        if (gt_grow((void **)&j->fates, &f->fates_cap, j->nfates + 1, sizeof(*j->fates)))
            return -1;
        j->fates[j->nfates].rec = ri;
        j->fates[j->nfates++].f = fate;
        if (fate.code >= 0 && fate.code < GT_V_COUNT)
            f->node_seen[ni][fate.code]++;
    }
    for (uint32_t h = 0; h < r->nheld; h++)
        if (gt_comm_used(&r->comms[h]) && fold_comm(j, ri, r->comm_slot[h]))
            return -1;
    return 0;
}

static const struct gt_recfile *sort_recs;
static int idx_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = gt_recfile_cmp(&sort_recs[x], &sort_recs[y]);
    return c ? c : (x > y) - (x < y);
}

static int member_cmp(const void *a, const void *b)
{
    const struct gt_member *x = a, *y = b;
    if (x->rec != y->rec)
        return x->rec < y->rec ? -1 : 1;
    return (x->slot > y->slot) - (x->slot < y->slot);
}

static int comm_cmp(const void *a, const void *b)
{
    return member_cmp(((const struct gt_ccomm *)a)->members, ((const struct gt_ccomm *)b)->members);
}

static int fate_cmp(const void *a, const void *b)
{
    size_t x = ((const struct gt_pfate *)a)->rec, y = ((const struct gt_pfate *)b)->rec;
    return (x > y) - (x < y);
}

static int rank_cmp(const void *a, const void *b)
{
    const struct gt_rank_comm *x = a, *y = b;
    if (x->rec != y->rec)
        return x->rec < y->rec ? -1 : 1;
    return (x->slot > y->slot) - (x->slot < y->slot);
}

/* Each digest's communicator (the member with its recorder and first slot),
 * and j->rank_ix: the digests grouped by communicator, in (rec, slot) order
 * within each (x->rix, x->nrix).  Linear after one sort. */
static int index_ranks(struct gt_job *j)
{
    if (j->nranks > 1)
        qsort(j->ranks, j->nranks, sizeof(*j->ranks), rank_cmp);
    for (size_t i = 0; i < j->nranks; i++)
        j->ranks[i].comm = SIZE_MAX;
    for (size_t i = 0; i < j->ncomm; i++) {
        struct gt_ccomm *x = &j->comms[i];
        x->nrix = 0;
        for (size_t k = 0; k < x->nmembers; k++) {
            struct gt_rank_comm key = {.rec = x->members[k].rec, .slot = x->members[k].slot};
            struct gt_rank_comm *d =
                bsearch(&key, j->ranks, j->nranks, sizeof(*j->ranks), rank_cmp);
            if (d && d->comm == SIZE_MAX) { /* sibling slots have no digest of their own */
                d->comm = i;
                x->nrix++;
            }
        }
    }
    free(j->rank_ix);
    j->rank_ix = malloc((j->nranks ? j->nranks : 1) * sizeof(*j->rank_ix));
    if (!j->rank_ix)
        return -1;
    size_t at = 0;
    for (size_t i = 0; i < j->ncomm; i++) {
        j->comms[i].rix = at;
        at += j->comms[i].nrix;
        j->comms[i].nrix = 0;
    }
    for (size_t i = 0; i < j->nranks; i++) {
        size_t c = j->ranks[i].comm;
        if (c != SIZE_MAX)
            j->rank_ix[j->comms[c].rix + j->comms[c].nrix++] = i;
    }
    return 0;
}

struct node_ord {
    struct gt_node nd;
    size_t first;
};

static int node_cmp(const void *a, const void *b)
{
    const struct node_ord *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

/* Moves recs into report order (a no-op when they were folded sorted) and
 * renumbers every reference to them; *inv: old index -> new.  The move is
 * done in place, cycle by cycle, so that no second array of recorders is
 * ever held (at job scale that copy was the peak). */
static int sort_recs_in_place(struct gt_job *j, struct gt_recfile *recs, size_t nrec, size_t *inv)
{
    struct gt_fold *f = j->fold;
    size_t *perm = malloc((nrec ? nrec : 1) * sizeof(*perm));
    if (!perm)
        return -1;
    for (size_t i = 0; i < nrec; i++)
        perm[i] = i;
    sort_recs = recs;
    if (nrec > 1)
        qsort(perm, nrec, sizeof(*perm), idx_cmp);
    int moved = 0;
    for (size_t i = 0; i < nrec; i++) {
        inv[perm[i]] = i;
        moved |= perm[i] != i;
    }
    if (!moved) {
        free(perm);
        return 0;
    }
    /* new[i] = old[perm[i]]: follow each cycle once, marking done ones
     * with perm[i] = i; rec_node moves along */
    for (size_t i = 0; i < nrec; i++) {
        if (perm[i] == i)
            continue;
        struct gt_recfile hold = recs[i];
        size_t hold_node = f->rec_node[i], k = i;
        while (perm[k] != i) {
            size_t from = perm[k];
            recs[k] = recs[from];
            f->rec_node[k] = f->rec_node[from];
            perm[k] = k;
            k = from;
        }
        recs[k] = hold;
        f->rec_node[k] = hold_node;
        perm[k] = k;
    }
    free(perm);
    for (size_t i = 0; i < j->ncomm; i++)
        for (size_t k = 0; k < j->comms[i].nmembers; k++)
            j->comms[i].members[k].rec = inv[j->comms[i].members[k].rec];
    for (size_t i = 0; i < j->nnodes; i++)
        f->node_first[i] = inv[f->node_first[i]];
    for (size_t i = 0; i < j->nfates; i++)
        j->fates[i].rec = inv[j->fates[i].rec];
    if (j->nfates > 1)
        qsort(j->fates, j->nfates, sizeof(*j->fates), fate_cmp);
    for (size_t i = 0; i < j->nranks; i++)
        j->ranks[i].rec = inv[j->ranks[i].rec];
    return 0;
}

/* Nodes in order of their first recorder, each with its combined verdict;
 * rec_node follows the new node indices. */
static int order_nodes(struct gt_job *j, size_t nrec)
{
    struct gt_fold *f = j->fold;
    struct node_ord *no = malloc((j->nnodes ? j->nnodes : 1) * sizeof(*no));
    size_t *renode = malloc((j->nnodes ? j->nnodes : 1) * sizeof(*renode));
    if (!no || !renode) {
        free(no);
        free(renode);
        return -1;
    }
    for (size_t i = 0; i < j->nnodes; i++) {
        no[i].nd = j->nodes[i];
        no[i].nd.code = gt_verdict_combine_counts(f->node_seen[i]);
        no[i].first = f->node_first[i];
    }
    if (j->nnodes > 1)
        qsort(no, j->nnodes, sizeof(*no), node_cmp);
    for (size_t i = 0; i < j->nnodes; i++) {
        renode[f->rec_node[no[i].first]] = i;
        j->nodes[i] = no[i].nd;
    }
    for (size_t i = 0; i < nrec; i++)
        f->rec_node[i] = renode[f->rec_node[i]];
    free(renode);
    free(no);
    return 0;
}

/* Communicators in order of their first member, members in order; each
 * judged with its members' recorders as context (codes[i]: its verdict),
 * its hosts counted and each node's communicators. */
static int judge_comms(struct gt_job *j, const struct gt_recfile *recs, size_t nrec, int *codes)
{
    struct gt_fold *f = j->fold;
    size_t *stamp = malloc((j->nnodes ? j->nnodes : 1) * sizeof(*stamp));
    const struct gt_recfile **ctx = malloc((nrec ? nrec : 1) * sizeof(*ctx));
    if (!stamp || !ctx) {
        free(stamp);
        free(ctx);
        return -1;
    }
    for (size_t i = 0; i < j->ncomm; i++)
        if (j->comms[i].nmembers > 1)
            qsort(j->comms[i].members, j->comms[i].nmembers, sizeof(struct gt_member), member_cmp);
    if (j->ncomm > 1)
        qsort(j->comms, j->ncomm, sizeof(*j->comms), comm_cmp);
    for (size_t i = 0; i < j->nnodes; i++)
        stamp[i] = SIZE_MAX;
    for (size_t i = 0; i < j->ncomm; i++) {
        struct gt_ccomm *x = &j->comms[i];
        size_t nctx = 0;
        x->nhosts = 0;
        for (size_t k = 0; k < x->nmembers; k++) {
            size_t ri = x->members[k].rec;
            if (!nctx || ctx[nctx - 1] != &recs[ri])
                ctx[nctx++] = &recs[ri];
            size_t nd = f->rec_node[ri];
            if (stamp[nd] != i) { /* a communicator counts once per host it spans */
                stamp[nd] = i;
                x->nhosts++;
                j->nodes[nd].ncomm++;
            }
        }
        const struct gtr_comm *sum = x->sum;
        if (x->lite) { /* judged, then only the verdict is kept */
            lite_unpack(x->lite, j->fold->lsum);
            sum = j->fold->lsum;
            free(x->lite);
            x->lite = NULL;
        }
        gt_verdict_of(sum, ctx, nctx, &x->v);
        codes[i] = x->v.code;
    }
    free(stamp);
    free(ctx);
    return 0;
}

/* The job's verdict and its sentence, from the communicators' codes and
 * the processes' fates (codes[ncomm + i]). */
static void judge_overall(struct gt_job *j, int *codes, size_t nrec)
{
    struct gt_verdict *o = &j->overall;
    o->emulated = 0;
    for (size_t i = 0; i < nrec; i++)
        o->emulated |= j->recs[i].emulated;
    for (size_t i = 0; i < j->nfates; i++)
        codes[j->ncomm + i] = j->fates[i].f.code;
    o->code = gt_verdict_combine(codes, j->ncomm + j->nfates);
    o->why[0] = 0;
    int count[GT_V_COUNT] = {0};
    for (size_t i = 0; i < j->ncomm; i++)
        count[codes[i]]++;
    gt_appendf(o->why, sizeof(o->why), "%zu process(es) on %d host(s), %zu communicator(s):", nrec,
               j->nhosts, j->ncomm);
    for (int v = 0; v < GT_V_COUNT; v++)
        if (count[v])
            gt_appendf(o->why, sizeof(o->why), " %s %d", gt_verdict_name(v), count[v]);
    if (!j->ncomm)
        gt_appendf(o->why, sizeof(o->why), " none");
    gt_appendf(o->why, sizeof(o->why), ".");
    int refused = 0, died = 0, inside = 0;
    for (size_t i = 0; i < j->nfates; i++) {
        int k = j->fates[i].f.kind;
        refused += k == GT_FATE_REFUSED;
        died += k == GT_FATE_CRASHED_IN_CALL || k == GT_FATE_EXITED_IN_CALL;
        inside += k == GT_FATE_IN_CALL;
    }
    if (refused)
        gt_appendf(o->why, sizeof(o->why), " %d process(es) BYPASSED: the plugin refused them.",
                   refused);
    if (died)
        gt_appendf(o->why, sizeof(o->why),
                   " %d process(es) died inside a call into code gdrtrace does not own (ERROR).",
                   died);
    if (inside)
        gt_appendf(o->why, sizeof(o->why), " %d process(es) still inside such a call.", inside);
}

int gt_job_finish(struct gt_job *j, struct gt_recfile *recs, size_t nrec)
{
    j->recs = recs;
    j->nrec = nrec;
    size_t *inv = malloc((nrec ? nrec : 1) * sizeof(*inv));
    int *codes = calloc(j->ncomm + j->nfates + 1, sizeof(int));
    int rc = -1;
    if (inv && codes && !sort_recs_in_place(j, recs, nrec, inv) && !order_nodes(j, nrec) &&
        !judge_comms(j, recs, nrec, codes) && !index_ranks(j)) {
        judge_overall(j, codes, nrec);
        j->rec_pos = inv; /* kept: callers that gathered by read index (export) */
        inv = NULL;
        rc = 0;
    }
    free(inv);
    free(codes);
    fold_free(j);
    if (rc)
        gt_job_free(j);
    return rc;
}

int gt_job_build(struct gt_job *j, struct gt_recfile *recs, size_t nrec)
{
    if (gt_job_begin(j))
        return -1;
    for (size_t i = 0; i < nrec; i++)
        if (gt_job_add(j, recs, i)) {
            gt_job_free(j);
            return -1;
        }
    return gt_job_finish(j, recs, nrec);
}
