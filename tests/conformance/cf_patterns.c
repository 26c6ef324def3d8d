/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cf_patterns.c — NCCL's call patterns against a net plugin (cf.h), as
 * NCCL's proxy makes them (src/transport/net.cc, v2.28 … v2.30):
 *
 *  - a connection carries "subs": the ops of one or more local senders to
 *    one remote rank (several with shared comms, NCCL's PXN path, only where
 *    maxRecvs > 1); the tag of every message is the sender's rank;
 *  - the receiver groups the subs of one recvComm into one irecv of up to
 *    maxRecvs entries (recvProxyProgress), each entry tagged with its peer;
 *    at most min(NCCL_STEPS, NCCL_SHARED_STEPS / nsubs) steps posted per
 *    sub, and NCCL_STEPS (8) without sharing;
 *  - the sender walks its subs in its own order, each sending when its GPU
 *    data is ready (here: every lag-th pass), one isend per step; a NULL
 *    request means "not now", and it asks again on a later pass; so one
 *    sender's next step may come before another's current one, and a send
 *    may come before the receiver's clear-to-send;
 *  - a NULL request from irecv is likewise "not now"; a request is tested
 *    until done and never again; the receiver's test gets an int per entry;
 *    after a receive of GPU data NCCL flushes with iflush (a NULL request
 *    means nothing to flush) and tests that;
 *  - the k-th message sent with a tag lands in the k-th receive entry of
 *    that tag (NCCL's IB matches the first unused entry of the head slot;
 *    its Socket matches in order): what every byte is checked against;
 *  - a receive reports min(bytes sent, bytes posted); a send larger than
 *    the posted receive is truncated (NCCL's IB) or refused with an error
 *    (NCCL's Socket): either passes, a write past the posted buffer fails;
 *  - close is called with requests still in flight (abort, a failed peer).
 *
 * A pattern runs in a child process of its own under a watchdog, so a hang
 * or a crash fails that pattern alone.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/conformance/cf.h"

#define NCCL_STEPS 8
#define NCCL_SHARED_STEPS 16
#define MAX_SUBS 16
#define CANARY 64
#define CANARY_BYTE 0xC5

static const char *g_pat = "?";

static int failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int failf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  [%s] FAIL: ", g_pat);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    return 1;
}

static void note(const struct cf_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(const struct cf_opts *o, const char *fmt, ...)
{
    if (!o->verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("  [%s] ", g_pat);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

/* ---- a connection ------------------------------------------------------ */

struct pair {
    void *lc, *sc, *rc;
};

/* listen, then connect and accept in turn until both give a comm, as the
 * two proxies do (a NULL comm: ask again). */
static int open_pair(struct cf_net *n, int dev, struct pair *p)
{
    char handle[CF_HANDLE];
    memset(p, 0, sizeof(*p));
    memset(handle, 0, sizeof(handle));
    int rc = n->listen(n, dev, handle, &p->lc);
    if (rc != 0 || !p->lc)
        return failf("listen(dev %d) returned %d, comm %p", dev, rc, p->lc);
    for (long i = 0; !p->sc || !p->rc; i++) {
        if (!p->sc && (rc = n->connect(n, dev, handle, &p->sc)) != 0)
            return failf("connect returned %d", rc);
        if (!p->rc && (rc = n->accept(n, p->lc, &p->rc)) != 0)
            return failf("accept returned %d", rc);
        if (i > 1000)
            usleep(100);
    }
    return 0;
}

static void close_pair(struct cf_net *n, struct pair *p)
{
    if (p->sc)
        n->close_send(n, p->sc);
    if (p->rc)
        n->close_recv(n, p->rc);
    if (p->lc)
        n->close_listen(n, p->lc);
    memset(p, 0, sizeof(*p));
}

/* ---- a flow: the subs of one connection, both proxies' loops ----------- */

struct flow_cfg {
    int nsubs;          /* senders sharing the connection */
    int tags[MAX_SUBS]; /* each sub's tag (its sender's rank) */
    int group;          /* receive entries per irecv (<= maxRecvs) */
    int nsteps;
    int reverse;         /* the sender walks its subs in the other order */
    int lag[MAX_SUBS];   /* a sub's data is ready every lag+1-th pass */
    int sender_first;    /* passes the sender makes before the receiver starts */
    int recv_lag;        /* the receiver's proxy tests only every recv_lag+1-th pass */
    int flush;           /* iflush after each receive with bytes */
    int rdepth;          /* receives posted ahead while the sender is open (0: as
                            the sender; 1: the receiving GPU busy elsewhere) */
    int close_sender;    /* the sender closes once its sends are done; the
                            receiver starts then (or after sender_first passes) */
    size_t rsize;        /* bytes posted per receive entry */
    const size_t *sizes; /* send sizes, taken in turn by (sub + step) */
    int nsizes;
};

struct flow {
    struct flow_cfg c;
    struct pair p;
    int depth, ngroups;
    char *sbuf, *rbuf;
    size_t smax, rslot;
    void *smh, *rmh;
    /* sender */
    int transmitted[MAX_SUBS], sdone[MAX_SUBS];
    void *sreq[MAX_SUBS][NCCL_STEPS];
    /* receiver, per group */
    int posted[MAX_SUBS], received[MAX_SUBS];
    void *rreq[MAX_SUBS][NCCL_STEPS];
    void *freq[MAX_SUBS]; /* the flush of the oldest received step */
    int flushing[MAX_SUBS];
    /* the k-th send of a tag: which sub and step (the matching rule) */
    int ntag, tagv[MAX_SUBS], tsent[MAX_SUBS], trecv[MAX_SUBS];
    int *tlog_sub[MAX_SUBS], *tlog_step[MAX_SUBS];
    long pass, null_sends, null_recvs, messages, bytes;
    int sender_closed;
};

static size_t send_size(const struct flow *f, int sub, int step)
{
    return f->c.sizes[(size_t)(sub + step) % (size_t)f->c.nsizes];
}

static uint8_t fill(int sub, int step, size_t j)
{
    return (uint8_t)(sub * 131 + step * 17 + (int)(j % 251) * 7 + 1);
}

static int tag_index(const struct flow *f, int tag)
{
    for (int i = 0; i < f->ntag; i++)
        if (f->tagv[i] == tag)
            return i;
    return -1;
}

static int flow_open(struct cf_net *n, int dev, struct flow *f, const struct flow_cfg *c)
{
    memset(f, 0, sizeof(*f));
    f->c = *c;
    if (c->nsubs < 1 || c->nsubs > MAX_SUBS || c->group < 1 || c->group > CF_MAX_RECVS)
        return failf("bad flow: %d subs, groups of %d", c->nsubs, c->group);
    f->depth = c->nsubs > 1 ? NCCL_SHARED_STEPS / c->nsubs : NCCL_STEPS;
    if (f->depth > NCCL_STEPS)
        f->depth = NCCL_STEPS;
    if (f->depth < 1)
        f->depth = 1;
    f->ngroups = (c->nsubs + c->group - 1) / c->group;
    for (int i = 0; i < c->nsizes; i++)
        if (c->sizes[i] > f->smax)
            f->smax = c->sizes[i];
    if (f->smax > c->rsize) /* NCCL posts what its peer sends; oversize is its own pattern */
        return failf("bad flow: sends up to %zu bytes into %zu-byte receives", f->smax, c->rsize);
    f->rslot = c->rsize + CANARY;
    size_t sbytes = (size_t)c->nsubs * (size_t)f->depth * (f->smax ? f->smax : 1);
    size_t rbytes = (size_t)c->nsubs * (size_t)f->depth * f->rslot;
    f->sbuf = malloc(sbytes);
    f->rbuf = malloc(rbytes);
    if (!f->sbuf || !f->rbuf)
        return failf("out of memory for %zu + %zu bytes", sbytes, rbytes);
    memset(f->rbuf, CANARY_BYTE, rbytes);
    for (int s = 0; s < c->nsubs; s++) {
        if (tag_index(f, c->tags[s]) < 0) {
            int t = f->ntag++;
            f->tagv[t] = c->tags[s];
            f->tlog_sub[t] = calloc((size_t)(c->nsubs * c->nsteps), sizeof(int));
            f->tlog_step[t] = calloc((size_t)(c->nsubs * c->nsteps), sizeof(int));
        }
    }
    if (open_pair(n, 0 + dev, &f->p))
        return 1;
    int rc = n->reg_mr(n, f->p.sc, f->sbuf, sbytes, &f->smh);
    if (rc != 0)
        return failf("regMr(sendComm, host, %zu bytes) returned %d", sbytes, rc);
    rc = n->reg_mr(n, f->p.rc, f->rbuf, rbytes, &f->rmh);
    if (rc != 0)
        return failf("regMr(recvComm, host, %zu bytes) returned %d", rbytes, rc);
    return 0;
}

static void flow_close(struct cf_net *n, struct flow *f)
{
    if (f->smh)
        n->dereg_mr(n, f->p.sc, f->smh);
    if (f->rmh)
        n->dereg_mr(n, f->p.rc, f->rmh);
    close_pair(n, &f->p);
    for (int t = 0; t < f->ntag; t++) {
        free(f->tlog_sub[t]);
        free(f->tlog_step[t]);
    }
    free(f->sbuf);
    free(f->rbuf);
    f->sbuf = f->rbuf = NULL;
}

static char *sslot(struct flow *f, int sub, int step)
{
    return f->sbuf + ((size_t)sub * (size_t)f->depth + (size_t)(step % f->depth)) * f->smax;
}
static char *rslot(struct flow *f, int sub, int step)
{
    return f->rbuf + ((size_t)sub * (size_t)f->depth + (size_t)(step % f->depth)) * f->rslot;
}

/* The sender's proxy: one pass over its subs (sendProxyProgress). */
static int send_pass(struct cf_net *n, struct flow *f, int *progress)
{
    if (f->sender_closed)
        return 0;
    for (int k = 0; k < f->c.nsubs; k++) {
        int s = f->c.reverse ? f->c.nsubs - 1 - k : k;
        if (f->sdone[s] == f->c.nsteps)
            continue;
        int ready = f->pass % (f->c.lag[s] + 1) == 0;
        if (ready && f->transmitted[s] < f->c.nsteps &&
            f->transmitted[s] < f->sdone[s] + f->depth) {
            int step = f->transmitted[s];
            size_t sz = send_size(f, s, step);
            char *b = sslot(f, s, step);
            for (size_t j = 0; j < sz; j++)
                b[j] = (char)fill(s, step, j);
            void **req = &f->sreq[s][step % NCCL_STEPS];
            *req = NULL;
            int rc = n->isend(n, f->p.sc, b, sz, f->c.tags[s], f->smh, req);
            if (rc != 0)
                return failf("isend(sub %d, step %d, %zu bytes, tag %d) returned %d", s, step, sz,
                             f->c.tags[s], rc);
            if (*req) {
                int t = tag_index(f, f->c.tags[s]);
                f->tlog_sub[t][f->tsent[t]] = s;
                f->tlog_step[t][f->tsent[t]++] = step;
                f->transmitted[s]++;
                *progress = 1;
                continue;
            }
            f->null_sends++;
        }
        if (f->sdone[s] < f->transmitted[s]) {
            int done = 0, size = -1;
            int rc = n->test(n, f->sreq[s][f->sdone[s] % NCCL_STEPS], &done, &size);
            if (rc != 0)
                return failf("test(send sub %d step %d) returned %d", s, f->sdone[s], rc);
            if (done) {
                f->sreq[s][f->sdone[s] % NCCL_STEPS] = NULL;
                f->sdone[s]++;
                *progress = 1;
            }
        }
    }
    return 0;
}

/* Checks a completed receive group step against the matching rule. */
static int check_recv(struct flow *f, int g, int step, const int *sizes)
{
    int first = g * f->c.group, cnt = f->c.nsubs - first;
    if (cnt > f->c.group)
        cnt = f->c.group;
    for (int i = 0; i < cnt; i++) {
        int s = first + i, t = tag_index(f, f->c.tags[s]);
        int k = f->trecv[t]++;
        if (k >= f->tsent[t])
            return failf("receive (group %d, step %d, entry %d, tag %d) completed before the "
                         "%d-th send of its tag was posted",
                         g, step, i, f->c.tags[s], k + 1);
        int ss = f->tlog_sub[t][k], st = f->tlog_step[t][k];
        size_t sent = send_size(f, ss, st);
        size_t want = sent < f->c.rsize ? sent : f->c.rsize;
        if (sizes[i] != (int)want)
            return failf("receive entry %d (tag %d) reports %d bytes; the %d-th send of tag %d "
                         "(sub %d step %d) had %zu into %zu posted",
                         i, f->c.tags[s], sizes[i], k + 1, f->c.tags[s], ss, st, sent, f->c.rsize);
        const uint8_t *b = (const uint8_t *)rslot(f, s, step);
        for (size_t j = 0; j < want; j++)
            if (b[j] != fill(ss, st, j))
                return failf("receive entry %d (tag %d, step %d): byte %zu is %#x, the %d-th "
                             "send of the tag (sub %d step %d) has %#x",
                             i, f->c.tags[s], step, j, b[j], k + 1, ss, st, fill(ss, st, j));
        for (size_t j = f->c.rsize; j < f->rslot; j++)
            if (b[j] != CANARY_BYTE)
                return failf("receive entry %d: byte %zu past the %zu posted was written", i, j,
                             f->c.rsize);
        f->messages++;
        f->bytes += (long)want;
    }
    return 0;
}

/* close_sender: the receiver holds back (rdepth, recv_lag) until the sender
 * closed, or for HOLD_PASSES when the sender cannot finish without it. */
#define HOLD_PASSES 300
static int holding(const struct flow *f)
{
    return !f->sender_closed && f->pass < HOLD_PASSES;
}

/* The receiver's proxy: one pass over its groups (recvProxyProgress). */
static int recv_pass(struct cf_net *n, struct flow *f, int *progress)
{
    if (f->pass < f->c.sender_first && !f->sender_closed)
        return 0;
    for (int g = 0; g < f->ngroups; g++) {
        int first = g * f->c.group, cnt = f->c.nsubs - first;
        if (cnt > f->c.group)
            cnt = f->c.group;
        int rdepth =
            f->c.rdepth > 0 && f->c.rdepth < f->depth && holding(f) ? f->c.rdepth : f->depth;
        if (f->posted[g] < f->c.nsteps && f->posted[g] < f->received[g] + rdepth) {
            int step = f->posted[g];
            void *d[CF_MAX_RECVS], *mh[CF_MAX_RECVS];
            size_t sz[CF_MAX_RECVS];
            int tags[CF_MAX_RECVS];
            for (int i = 0; i < cnt; i++) {
                char *b = rslot(f, first + i, step);
                memset(b, CANARY_BYTE, f->rslot);
                d[i] = b;
                sz[i] = f->c.rsize;
                tags[i] = f->c.tags[first + i];
                mh[i] = f->rmh;
            }
            void **req = &f->rreq[g][step % NCCL_STEPS];
            *req = NULL;
            int rc = n->irecv(n, f->p.rc, cnt, d, sz, tags, mh, req);
            if (rc != 0)
                return failf("irecv(group %d, step %d, n=%d) returned %d", g, step, cnt, rc);
            if (*req) {
                f->posted[g]++;
                *progress = 1;
            } else {
                f->null_recvs++;
            }
        }
    }
    if (f->pass % (f->c.recv_lag + 1) && (!f->c.close_sender || holding(f)))
        return 0;
    for (int g = 0; g < f->ngroups; g++) {
        int first = g * f->c.group, cnt = f->c.nsubs - first;
        if (cnt > f->c.group)
            cnt = f->c.group;
        int step = f->received[g];
        if (f->flushing[g]) {
            int done = 0;
            int rc = n->test(n, f->freq[g], &done, NULL);
            if (rc != 0)
                return failf("test(flush, group %d step %d) returned %d", g, step - 1, rc);
            if (done)
                f->flushing[g] = 0, *progress = 1;
            continue;
        }
        if (step >= f->posted[g])
            continue;
        int done = 0, sizes[CF_MAX_RECVS];
        for (int i = 0; i < CF_MAX_RECVS; i++)
            sizes[i] = 0;
        int rc = n->test(n, f->rreq[g][step % NCCL_STEPS], &done, sizes);
        if (rc != 0)
            return failf("test(recv group %d step %d) returned %d", g, step, rc);
        if (!done)
            continue;
        *progress = 1;
        f->rreq[g][step % NCCL_STEPS] = NULL;
        if (check_recv(f, g, step, sizes))
            return 1;
        f->received[g]++;
        long total = 0;
        for (int i = 0; i < cnt; i++)
            total += sizes[i];
        if (f->c.flush && total > 0) {
            void *d[CF_MAX_RECVS], *mh[CF_MAX_RECVS];
            for (int i = 0; i < cnt; i++)
                d[i] = rslot(f, first + i, step), mh[i] = f->rmh;
            f->freq[g] = NULL;
            rc = n->iflush(n, f->p.rc, cnt, d, sizes, mh, &f->freq[g]);
            if (rc != 0)
                return failf("iflush(group %d step %d) returned %d", g, step, rc);
            f->flushing[g] = f->freq[g] != NULL;
        }
    }
    return 0;
}

static int flow_done(const struct flow *f)
{
    for (int s = 0; s < f->c.nsubs; s++)
        if (f->sdone[s] < f->c.nsteps)
            return 0;
    for (int g = 0; g < f->ngroups; g++)
        if (f->received[g] < f->c.nsteps || f->flushing[g])
            return 0;
    return 1;
}

/* One pass of both proxies; 1 on failure. */
static int flow_pass(struct cf_net *n, struct flow *f, int *progress)
{
    if (send_pass(n, f, progress) || recv_pass(n, f, progress))
        return 1;
    f->pass++;
    if (f->c.close_sender && !f->sender_closed) {
        int all = 1;
        for (int s = 0; s < f->c.nsubs; s++)
            all &= f->sdone[s] == f->c.nsteps;
        if (all) { /* the rank is done: NCCL deregisters and closes its comm */
            n->dereg_mr(n, f->p.sc, f->smh);
            f->smh = NULL;
            int rc = n->close_send(n, f->p.sc);
            f->p.sc = NULL;
            f->sender_closed = 1;
            if (rc != 0)
                return failf("closeSend after every send completed returned %d", rc);
        }
    }
    return 0;
}

/* Drives `nf` flows (one proxy thread driving every connection) to the end. */
static int drive(struct cf_net *n, struct flow *f, int nf)
{
    long idle = 0;
    for (;;) {
        int all = 1, progress = 0;
        for (int i = 0; i < nf; i++) {
            if (flow_done(&f[i]))
                continue;
            all = 0;
            if (flow_pass(n, &f[i], &progress))
                return 1;
        }
        if (all)
            return 0;
        /* nothing moved: let the peer's bytes arrive (the watchdog ends a hang) */
        if (!progress && ++idle > 2000)
            usleep(50);
        else if (progress)
            idle = 0;
    }
}

static int run_flow(struct cf_net *n, const struct cf_opts *o, const struct flow_cfg *c,
                    const char *what)
{
    struct flow f;
    int rc = flow_open(n, o->dev, &f, c);
    if (!rc)
        rc = drive(n, &f, 1);
    if (!rc)
        note(o, "%s: %ld messages, %ld bytes, %ld NULL sends, %ld NULL receives, %ld passes", what,
             f.messages, f.bytes, f.null_sends, f.null_recvs, f.pass);
    else
        printf("  [%s] in: %s\n", g_pat, what);
    flow_close(n, &f);
    return rc;
}

static int max_recvs(struct cf_net *n, const struct cf_opts *o, struct cf_props *p)
{
    if (n->props(n, o->dev, p) != 0) {
        failf("getProperties(%d) failed", o->dev);
        return -1;
    }
    int m = p->max_recvs;
    if (m < 1 || m > CF_MAX_RECVS) {
        failf("maxRecvs %d (NCCL accepts 1 … %d)", m, CF_MAX_RECVS);
        return -1;
    }
    return m;
}

static const size_t mixed[] = {65536, 1, 4096, 0, 100000, 8, 262144, 17, 131072 + 13};
#define NMIXED ((int)(sizeof(mixed) / sizeof(mixed[0])))

/* ---- the patterns ------------------------------------------------------ */

static int p_grouped(struct cf_net *n, const struct cf_opts *o)
{
    struct cf_props p;
    int m = max_recvs(n, o, &p);
    if (m < 0)
        return 1;
    for (int cnt = 1; cnt <= m; cnt++) {
        for (int rev = 0; rev < 2; rev++) {
            struct flow_cfg c = {.nsubs = cnt,
                                 .group = cnt,
                                 .nsteps = 24,
                                 .reverse = rev,
                                 .rsize = 262144,
                                 .sizes = mixed,
                                 .nsizes = NMIXED};
            for (int s = 0; s < cnt; s++) {
                c.tags[s] = 100 + s;
                c.lag[s] = s % 3; /* the first sender's data is ready first */
            }
            char what[64];
            snprintf(what, sizeof(what), "n=%d distinct tags%s", cnt, rev ? ", reversed" : "");
            if (run_flow(n, o, &c, what))
                return 1;
        }
    }
    if (m == 1) {
        printf("  [%s] maxRecvs 1: NCCL never groups receives on this plugin; n=1 only\n", g_pat);
    }
    return 0;
}

static int p_repeated(struct cf_net *n, const struct cf_opts *o)
{
    struct cf_props p;
    int m = max_recvs(n, o, &p);
    if (m < 0)
        return 1;
    if (m < 2) {
        printf("  [%s] maxRecvs %d: NCCL groups no receives here\n", g_pat, m);
        return CF_SKIP;
    }
    for (int cnt = 2; cnt <= m; cnt++) {
        for (int rev = 0; rev < 2; rev++) {
            struct flow_cfg c = {.nsubs = cnt,
                                 .group = cnt,
                                 .nsteps = 16,
                                 .reverse = rev,
                                 .rsize = 65536,
                                 .sizes = mixed,
                                 .nsizes = 4};
            for (int s = 0; s < cnt; s++) {
                c.tags[s] = 7 + s / 2; /* pairs share a tag */
                c.lag[s] = (s + 1) % 2;
            }
            char what[64];
            snprintf(what, sizeof(what), "n=%d tags in pairs%s", cnt, rev ? ", reversed" : "");
            if (run_flow(n, o, &c, what))
                return 1;
        }
    }
    return 0;
}

static int p_before_cts(struct cf_net *n, const struct cf_opts *o)
{
    struct cf_props p;
    int m = max_recvs(n, o, &p);
    if (m < 0)
        return 1;
    int cnts[2] = {1, m};
    for (int k = 0; k < (m > 1 ? 2 : 1); k++) {
        struct flow_cfg c = {.nsubs = cnts[k],
                             .group = cnts[k],
                             .nsteps = 20,
                             .reverse = 1,
                             .sender_first = 200,
                             .rsize = 65536,
                             .sizes = mixed,
                             .nsizes = 3};
        for (int s = 0; s < cnts[k]; s++)
            c.tags[s] = 3 * s + 1;
        char what[64];
        snprintf(what, sizeof(what), "n=%d, 200 sender passes first, tags reversed", cnts[k]);
        if (run_flow(n, o, &c, what))
            return 1;
    }
    return 0;
}

static int p_shared(struct cf_net *n, const struct cf_opts *o)
{
    struct cf_props p;
    int m = max_recvs(n, o, &p);
    if (m < 0)
        return 1;
    if (m < 2) {
        printf("  [%s] maxRecvs 1: NCCL shares no connection (NCCL_NET_SHARED_COMMS needs "
               "maxRecvs > 1)\n",
               g_pat);
        return CF_SKIP;
    }
    /* 8 local ranks' proxies on one connection to a remote rank (PXN),
     * each ready at its own pace; the receiver groups by maxRecvs */
    int counts[2] = {8, 16};
    for (int k = 0; k < 2; k++) {
        struct flow_cfg c = {.nsubs = counts[k],
                             .group = m,
                             .nsteps = 24,
                             .rsize = 262144,
                             .sizes = mixed,
                             .nsizes = NMIXED};
        for (int s = 0; s < c.nsubs; s++) {
            c.tags[s] = s; /* the local senders' ranks */
            c.lag[s] = (s * 5) % 4;
        }
        char what[64];
        snprintf(what, sizeof(what), "%d senders on one connection", c.nsubs);
        if (run_flow(n, o, &c, what))
            return 1;
        c.reverse = 1;
        c.recv_lag = 3;
        snprintf(what, sizeof(what), "%d senders, reversed, slow receiver", c.nsubs);
        if (run_flow(n, o, &c, what))
            return 1;
    }
    return 0;
}

static int p_retry(struct cf_net *n, const struct cf_opts *o)
{
    /* a receiver that tests rarely and a sender far ahead: both sides see
     * NULL requests and ask again */
    static const size_t small[] = {8, 1024, 4096};
    struct flow_cfg c = {.nsubs = 1,
                         .group = 1,
                         .nsteps = 200,
                         .recv_lag = 7,
                         .sender_first = 20,
                         .rsize = 4096,
                         .sizes = small,
                         .nsizes = 3,
                         .tags = {42}};
    return run_flow(n, o, &c, "200 steps, receiver testing every 8th pass");
}

static int p_zero(struct cf_net *n, const struct cf_opts *o)
{
    struct cf_props p;
    int m = max_recvs(n, o, &p);
    if (m < 0)
        return 1;
    static const size_t zeros[] = {0, 0, 5, 0, 4096};
    struct flow_cfg c = {.nsubs = 1,
                         .group = 1,
                         .nsteps = 20,
                         .rsize = 4096,
                         .sizes = zeros,
                         .nsizes = 5,
                         .tags = {9}};
    if (run_flow(n, o, &c, "zero-byte sends among others"))
        return 1;
    static const size_t none[] = {0};
    c.rsize = 0;
    c.sizes = none;
    c.nsizes = 1;
    if (run_flow(n, o, &c, "zero-byte sends into zero-byte receives"))
        return 1;
    if (m > 1) {
        struct flow_cfg g = {
            .nsubs = m, .group = m, .nsteps = 16, .rsize = 4096, .sizes = zeros, .nsizes = 5};
        for (int s = 0; s < m; s++)
            g.tags[s] = s;
        if (run_flow(n, o, &g, "zero-byte entries in grouped receives"))
            return 1;
    }
    return 0;
}

static int p_flush(struct cf_net *n, const struct cf_opts *o)
{
    struct cf_props p;
    int m = max_recvs(n, o, &p);
    if (m < 0)
        return 1;
    struct flow_cfg c = {.nsubs = m,
                         .group = m,
                         .nsteps = 16,
                         .flush = 1,
                         .rsize = 262144,
                         .sizes = mixed,
                         .nsizes = NMIXED};
    for (int s = 0; s < m; s++)
        c.tags[s] = s + 1;
    return run_flow(n, o, &c, "iflush after every receive with bytes");
}

/* A send larger than the posted receive: truncated to it, or refused. */
static int p_oversize(struct cf_net *n, const struct cf_opts *o)
{
    struct pair pr;
    if (open_pair(n, o->dev, &pr))
        return 1;
    enum { POSTED = 1000, SENT = 4000 };
    char *s = malloc(SENT), *r = malloc(POSTED + CANARY);
    void *smh = NULL, *rmh = NULL;
    int rc = n->reg_mr(n, pr.sc, s, SENT, &smh);
    if (!rc)
        rc = n->reg_mr(n, pr.rc, r, POSTED + CANARY, &rmh);
    if (rc) {
        free(s), free(r);
        return failf("regMr returned %d", rc);
    }
    for (int j = 0; j < SENT; j++)
        s[j] = (char)fill(0, 0, (size_t)j);
    memset(r, CANARY_BYTE, POSTED + CANARY);
    void *rreq = NULL, *sreq = NULL, *d = r, *mh = rmh;
    size_t sz = POSTED;
    int tag = 5, result = 0, refused = 0, sdone = 0, rdone = 0, rsize = -1;
    while (!rreq && !(rc = n->irecv(n, pr.rc, 1, &d, &sz, &tag, &mh, &rreq)))
        ;
    if (rc)
        result = failf("irecv(1000 bytes) returned %d", rc);
    while (!result && !refused && (!sdone || !rdone)) {
        if (!sreq) {
            rc = n->isend(n, pr.sc, s, SENT, tag, smh, &sreq);
            if (rc)
                refused = 1;
            continue;
        }
        int sizes[CF_MAX_RECVS] = {0}, one = 0;
        if (!sdone && n->test(n, sreq, &sdone, &one))
            refused = 1;
        if (!rdone && n->test(n, rreq, &rdone, sizes))
            refused = 1;
        if (rdone)
            rsize = sizes[0];
    }
    if (!result && !refused) {
        if (rsize != POSTED)
            result = failf("a 4000-byte send into a 1000-byte receive reports %d bytes (NCCL's "
                           "IB: 1000, its Socket: an error)",
                           rsize);
        else if (memcmp(r, s, POSTED))
            result = failf("the first 1000 bytes of a truncated send differ");
    }
    for (int j = POSTED; !result && j < POSTED + CANARY; j++)
        if ((uint8_t)r[j] != CANARY_BYTE)
            result = failf("a 4000-byte send wrote past the 1000-byte receive (byte %d)", j);
    if (!result)
        note(o, "%s",
             refused ? "refused with an error (as NCCL's Socket)"
                     : "truncated to the posted size (as NCCL's IB)");
    /* a refused comm is closed with its requests in flight, as NCCL would */
    n->dereg_mr(n, pr.sc, smh);
    n->dereg_mr(n, pr.rc, rmh);
    close_pair(n, &pr);
    free(s);
    free(r);
    return result;
}

static int p_many_comms(struct cf_net *n, const struct cf_opts *o)
{
    struct cf_props p;
    int m = max_recvs(n, o, &p);
    if (m < 0)
        return 1;
    int nf = o->max_pairs > 0 ? o->max_pairs : 32;
    if (p.max_comms > 0 && p.max_comms < 2 * nf)
        nf = p.max_comms / 2;
    if (nf < 1)
        return failf("maxComms %d", p.max_comms);
    static const size_t sizes[] = {4096, 1, 32768, 0, 12345};
    struct flow *f = calloc((size_t)nf, sizeof(*f));
    int rc = 0, opened = 0;
    for (int i = 0; i < nf && !rc; i++) {
        struct flow_cfg c = {.nsubs = 1,
                             .group = 1,
                             .nsteps = 16,
                             .rsize = 32768,
                             .sizes = sizes,
                             .nsizes = 5,
                             .tags = {i}};
        rc = flow_open(n, o->dev, &f[i], &c);
        opened = i + 1;
    }
    if (!rc)
        rc = drive(n, f, nf);
    if (!rc)
        note(o, "%d connections open at once on device %d, driven by one loop", nf, o->dev);
    for (int i = 0; i < opened; i++)
        flow_close(n, &f[i]);
    free(f);
    return rc;
}

/* close with requests in flight (NCCL's abort): every close returns, and
 * the plugin still connects and moves data afterwards. */
static int p_close_in_flight(struct cf_net *n, const struct cf_opts *o)
{
    for (int round = 0; round < 3; round++) {
        struct pair pr;
        if (open_pair(n, o->dev, &pr))
            return 1;
        enum { SZ = 65536 };
        char *s = calloc(1, SZ), *r = calloc(4, SZ);
        void *smh = NULL, *rmh = NULL;
        if (n->reg_mr(n, pr.sc, s, SZ, &smh) || n->reg_mr(n, pr.rc, r, 4 * SZ, &rmh)) {
            free(s), free(r);
            return failf("regMr failed");
        }
        void *rreq[4] = {0}, *sreq = NULL;
        int tag = 1;
        for (int i = 0; i < 4; i++) {
            void *d = r + (size_t)i * SZ, *mh = rmh;
            size_t sz = SZ;
            for (int t = 0; t < 100 && !rreq[i]; t++)
                if (n->irecv(n, pr.rc, 1, &d, &sz, &tag, &mh, &rreq[i]))
                    break;
        }
        /* round 0: receives only; 1: one send in flight too; 2: a send and a
         * tested-once receive */
        if (round >= 1)
            for (int t = 0; t < 100 && !sreq; t++)
                if (n->isend(n, pr.sc, s, SZ, tag, smh, &sreq))
                    break;
        if (round == 2 && rreq[1]) {
            int done = 0, sizes[CF_MAX_RECVS];
            n->test(n, rreq[1], &done, sizes);
        }
        /* NCCL deregisters and closes without testing what is in flight */
        n->dereg_mr(n, pr.sc, smh);
        n->dereg_mr(n, pr.rc, rmh);
        if (round == 1) { /* the receiver first */
            n->close_recv(n, pr.rc);
            n->close_send(n, pr.sc);
        } else {
            n->close_send(n, pr.sc);
            n->close_recv(n, pr.rc);
        }
        n->close_listen(n, pr.lc);
        free(s);
        free(r);
    }
    static const size_t sizes[] = {4096};
    struct flow_cfg c = {.nsubs = 1,
                         .group = 1,
                         .nsteps = 8,
                         .rsize = 4096,
                         .sizes = sizes,
                         .nsizes = 1,
                         .tags = {1}};
    return run_flow(n, o, &c, "a new connection after three aborted ones");
}

/* A rank whose sends all completed closes its comm while its peer is still
 * posting the receives (one rank leaves the last collective first): the
 * receiver posts one receive, is busy until the sender has left, then posts
 * and tests the rest; every byte still arrives. */
static int p_sender_leaves(struct cf_net *n, const struct cf_opts *o)
{
    static const size_t sizes[] = {4096, 0, 100, 65536, 1};
    struct flow_cfg c = {.nsubs = 1,
                         .group = 1,
                         .nsteps = NCCL_STEPS,
                         .close_sender = 1,
                         .rdepth = 1,
                         .recv_lag = 1000,
                         .sender_first = 1,
                         .rsize = 65536,
                         .sizes = sizes,
                         .nsizes = 5,
                         .tags = {3}};
    for (int round = 0; round < 4; round++)
        if (run_flow(n, o, &c, "the sender closes once its sends are done"))
            return 1;
    return 0;
}

/* ---- two "nodes" of 8 ranks, processes over loopback ------------------- */

#define RANKS 16
#define PER_NODE 8
struct board {
    char handle[RANKS][RANKS][CF_HANDLE]; /* [receiver][sender] */
    volatile int ready[RANKS][RANKS];
};

static int rank_main(struct cf_net *n, const struct cf_opts *o, struct board *b, int me)
{
    if (n->init(n) != 0)
        return failf("rank %d: init failed", me);
    int node = me / PER_NODE, nf = PER_NODE;
    void *lc[PER_NODE] = {0};
    static const size_t sizes[] = {32768, 0, 777, 16384, 1};
    /* listen for each peer of the other node; then connect to each */
    for (int i = 0; i < nf; i++) {
        int peer = (1 - node) * PER_NODE + i;
        if (n->listen(n, o->dev, b->handle[me][peer], &lc[i]) != 0 || !lc[i])
            return failf("rank %d: listen failed", me);
        __atomic_store_n(&b->ready[me][peer], 1, __ATOMIC_RELEASE);
    }
    /* a flow per peer: our send comm to it and our recv comm from it, each
     * flow's sender and receiver in different processes, so the flow
     * struct drives only its half */
    struct half {
        void *sc, *rc, *smh, *rmh;
        char *sbuf, *rbuf;
        int sent, sdone, posted, rdone;
        void *sreq[NCCL_STEPS], *rreq[NCCL_STEPS];
    } h[PER_NODE];
    memset(h, 0, sizeof(h));
    enum { STEPS = 24, RS = 32768 };
    int want = 0;
    for (long it = 0; want < 2 * nf; it++) {
        want = 0;
        for (int i = 0; i < nf; i++) {
            int peer = (1 - node) * PER_NODE + i;
            if (!h[i].sc && __atomic_load_n(&b->ready[peer][me], __ATOMIC_ACQUIRE) &&
                n->connect(n, o->dev, b->handle[peer][me], &h[i].sc) != 0)
                return failf("rank %d: connect to %d failed", me, peer);
            if (!h[i].rc && n->accept(n, lc[i], &h[i].rc) != 0)
                return failf("rank %d: accept from %d failed", me, peer);
            want += !!h[i].sc + !!h[i].rc;
        }
        if (it > 1000)
            usleep(200);
    }
    for (int i = 0; i < nf; i++) {
        h[i].sbuf = malloc((size_t)NCCL_STEPS * RS);
        h[i].rbuf = malloc((size_t)NCCL_STEPS * RS);
        if (n->reg_mr(n, h[i].sc, h[i].sbuf, (size_t)NCCL_STEPS * RS, &h[i].smh) ||
            n->reg_mr(n, h[i].rc, h[i].rbuf, (size_t)NCCL_STEPS * RS, &h[i].rmh))
            return failf("rank %d: regMr failed", me);
    }
    /* alltoall across the nodes: every step, to and from every remote rank */
    long idle = 0;
    for (long pass = 0;; pass++) {
        int all = 1, progress = 0;
        for (int i = 0; i < nf; i++) {
            int peer = (1 - node) * PER_NODE + i;
            struct half *x = &h[i];
            if (x->sdone < STEPS || x->rdone < STEPS)
                all = 0;
            if (x->posted < STEPS && x->posted < x->rdone + NCCL_STEPS) {
                void *d = x->rbuf + (size_t)(x->posted % NCCL_STEPS) * RS, *mh = x->rmh;
                size_t sz = RS;
                int tag = peer;
                void **r = &x->rreq[x->posted % NCCL_STEPS];
                *r = NULL;
                if (n->irecv(n, x->rc, 1, &d, &sz, &tag, &mh, r))
                    return failf("rank %d: irecv from %d failed", me, peer);
                if (*r)
                    x->posted++, progress = 1;
            }
            if (x->sent < STEPS && x->sent < x->sdone + NCCL_STEPS &&
                (pass + i) % (me % 3 + 1) == 0) {
                size_t sz = sizes[(me + x->sent) % 5];
                char *s = x->sbuf + (size_t)(x->sent % NCCL_STEPS) * RS;
                for (size_t j = 0; j < sz; j++)
                    s[j] = (char)fill(me, x->sent, j);
                void **r = &x->sreq[x->sent % NCCL_STEPS];
                *r = NULL;
                if (n->isend(n, x->sc, s, sz, me, x->smh, r))
                    return failf("rank %d: isend to %d failed", me, peer);
                if (*r)
                    x->sent++, progress = 1;
            }
            if (x->sdone < x->sent) {
                int done = 0, sz = 0;
                if (n->test(n, x->sreq[x->sdone % NCCL_STEPS], &done, &sz))
                    return failf("rank %d: test(send to %d) failed", me, peer);
                if (done)
                    x->sdone++, progress = 1;
            }
            if (x->rdone < x->posted) {
                int done = 0, sz[CF_MAX_RECVS] = {0};
                if (n->test(n, x->rreq[x->rdone % NCCL_STEPS], &done, sz))
                    return failf("rank %d: test(recv from %d) failed", me, peer);
                if (done) {
                    size_t w = sizes[(peer + x->rdone) % 5];
                    const uint8_t *g =
                        (const uint8_t *)x->rbuf + (size_t)(x->rdone % NCCL_STEPS) * RS;
                    if (sz[0] != (int)w)
                        return failf("rank %d: step %d from %d reports %d bytes, sent %zu", me,
                                     x->rdone, peer, sz[0], w);
                    for (size_t j = 0; j < w; j++)
                        if (g[j] != fill(peer, x->rdone, j))
                            return failf("rank %d: step %d from %d: byte %zu differs", me, x->rdone,
                                         peer, j);
                    x->rdone++, progress = 1;
                }
            }
        }
        if (all)
            break;
        if (!progress && ++idle > 2000)
            usleep(100);
        else if (progress)
            idle = 0;
    }
    for (int i = 0; i < nf; i++) {
        n->dereg_mr(n, h[i].sc, h[i].smh);
        n->dereg_mr(n, h[i].rc, h[i].rmh);
        n->close_send(n, h[i].sc);
        n->close_recv(n, h[i].rc);
        n->close_listen(n, lc[i]);
        free(h[i].sbuf);
        free(h[i].rbuf);
    }
    n->finalize(n);
    return 0;
}

static int p_two_nodes(struct cf_net *n, const struct cf_opts *o)
{
    struct board *b =
        mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED)
        return failf("mmap: %s", strerror(errno));
    memset(b, 0, sizeof(*b));
    pid_t pid[RANKS];
    for (int r = 0; r < RANKS; r++) {
        pid[r] = fork();
        if (pid[r] == 0)
            _exit(rank_main(n, o, b, r));
        if (pid[r] < 0)
            return failf("fork: %s", strerror(errno));
    }
    int bad = 0;
    for (int r = 0; r < RANKS; r++) {
        int st = 0;
        waitpid(pid[r], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            bad++;
            printf("  [%s] rank %d ended with %s %d\n", g_pat, r, WIFEXITED(st) ? "exit" : "signal",
                   WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        }
    }
    munmap(b, sizeof(*b));
    if (bad)
        return failf("%d of %d ranks failed", bad, RANKS);
    note(o, "16 processes, 8 per node: 64 connections each way, alltoall, 24 steps");
    return 0;
}

const struct cf_pattern cf_patterns[] = {
    {"grouped",
     "grouped receives n = 1 … maxRecvs, distinct tags, senders ready at their own "
     "pace, in both orders",
     0, p_grouped},
    {"repeated-tags",
     "grouped receives whose entries share tags (k-th send of a tag -> k-th "
     "receive of it)",
     0, p_repeated},
    {"before-cts", "sends posted before the receiver's clear-to-send, in another tag order", 0,
     p_before_cts},
    {"shared-senders",
     "8 and 16 senders on one connection (shared comms, PXN), grouped by "
     "maxRecvs",
     0, p_shared},
    {"retry-null", "NULL requests from isend and irecv asked again (slow receiver, sender ahead)",
     0, p_retry},
    {"zero-byte", "zero-byte sends and receives, alone and inside grouped receives", 0, p_zero},
    {"flush", "iflush after every receive with bytes, its request tested", 0, p_flush},
    {"oversize", "a send larger than the posted receive: truncated or refused, never written past",
     0, p_oversize},
    {"many-comms", "32 connections (or --pairs) on one device driven by one proxy loop", 0,
     p_many_comms},
    {"close-in-flight", "close with receives and sends in flight, then a new connection works", 0,
     p_close_in_flight},
    {"sender-leaves",
     "a sender closes once its sends completed; the peer's receives still "
     "complete",
     0, p_sender_leaves},
    {"two-nodes", "16 processes (2 nodes x 8 ranks), alltoall across the nodes", 1, p_two_nodes},
};
const int cf_npatterns = (int)(sizeof(cf_patterns) / sizeof(cf_patterns[0]));

int cf_run_all(struct cf_net *n, const struct cf_opts *o)
{
    int pass = 0, fail = 0, skip = 0, matched = 0;
    printf("conformance: %s, device %d\n", n->label, o->dev);
    fflush(stdout);
    for (int i = 0; i < cf_npatterns; i++) {
        const struct cf_pattern *p = &cf_patterns[i];
        if (o->only && strcmp(o->only, p->name))
            continue;
        matched++;
        g_pat = p->name;
        if (p->needs_multiprocess && !n->multiprocess) {
            printf("SKIP %-16s (the transport lives in this process only)\n", p->name);
            skip++;
            continue;
        }
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
            alarm((unsigned)o->watchdog_s);
            int rc;
            if (p->needs_multiprocess) {
                rc = p->run(n, o);
            } else {
                if (n->init(n) != 0) {
                    printf("  [%s] FAIL: init failed\n", p->name);
                    _exit(1);
                }
                rc = p->run(n, o);
                int fr = n->finalize(n);
                if (fr != 0 && rc == 0) {
                    printf("  [%s] FAIL: finalize returned %d\n", p->name, fr);
                    rc = 1;
                }
            }
            fflush(stdout);
            _exit(rc);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
            printf("PASS %-16s %s\n", p->name, p->what);
            pass++;
        } else if (WIFEXITED(st) && WEXITSTATUS(st) == CF_SKIP) {
            printf("SKIP %-16s %s\n", p->name, p->what);
            skip++;
        } else {
            if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
                printf("FAIL %-16s no end within %d s (a hang): %s\n", p->name, o->watchdog_s,
                       p->what);
            else if (WIFSIGNALED(st))
                printf("FAIL %-16s killed by signal %d: %s\n", p->name, WTERMSIG(st), p->what);
            else
                printf("FAIL %-16s %s\n", p->name, p->what);
            fail++;
        }
        fflush(stdout);
    }
    if (o->only && !matched) {
        printf("no pattern named '%s' (--list names them)\n", o->only);
        return 2;
    }
    printf("%d passed, %d failed, %d skipped\n", pass, fail, skip);
    return fail == 0 && pass > 0 ? 0 : 1;
}
