/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.c — merged communicators and verdicts (rules in model.h).
 * Invariant: a verdict is a pure function of the recorded counters plus the
 * contributing recorders' identity and device records; nothing here reads
 * the machine, so an archive gives the same verdict as the live files.
 */
#include "tools/model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/gt_net.h"
#include "tools/hist.h"

static const char *vnames[GT_V_COUNT] = {
    "DIRECT-DMABUF", "DIRECT-PEERMEM", "HOST-STAGED", "MIXED", "FALLBACK", "ERROR", "NO-DATA",
    "BYPASSED",
};
static const int vexit[GT_V_COUNT] = {0, 10, 11, 12, 13, 14, 15, 16};

const char *gt_verdict_name(int v)
{
    return v >= 0 && v < GT_V_COUNT ? vnames[v] : "?";
}

const char *gt_verdict_label(int v, int emulated)
{
    static const char *const labels[GT_V_COUNT] = {
        "DIRECT-DMABUF (" GT_EMULATED_TEXT ")", "DIRECT-PEERMEM (" GT_EMULATED_TEXT ")",
        "HOST-STAGED (" GT_EMULATED_TEXT ")",   "MIXED (" GT_EMULATED_TEXT ")",
        "FALLBACK (" GT_EMULATED_TEXT ")",      "ERROR (" GT_EMULATED_TEXT ")",
        "NO-DATA (" GT_EMULATED_TEXT ")",       "BYPASSED (" GT_EMULATED_TEXT ")",
    };
    _Static_assert(GT_V_COUNT == 8, "a label per verdict");
    if (!emulated || v < 0 || v >= GT_V_COUNT)
        return gt_verdict_name(v);
    return labels[v];
}

int gt_rec_emulated(const struct gt_rec *r)
{
    if (strstr(r->id.transport, "gpumem"))
        return 1;
    for (uint32_t i = 0; r->settings && i < r->nset; i++) {
        const struct gtr_setting *s = &r->settings[i];
        if (s->in_use && !strcmp(s->key, "GDRTRACE_GPUMEM") && !strcmp(s->value, "1"))
            return 1;
    }
    return 0;
}

int gt_verdict_exit(int v)
{
    return v >= 0 && v < GT_V_COUNT ? vexit[v] : GT_EXIT_INPUT;
}

static void appendf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t n, const char *fmt, ...)
{
    size_t l = strnlen(buf, n);
    if (l + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + l, n - l, fmt, ap);
    va_end(ap);
}

void gt_comm_clear(struct gtr_comm *c)
{
    memset(c, 0, sizeof(*c));
    for (int i = 0; i < GTR_OP_COUNT; i++)
        gt_hist_init(&c->hist[i]);
    c->dev = -1;
}

void gt_comm_accumulate(struct gtr_comm *d, const struct gtr_comm *s)
{
    for (int a = 0; a < GTR_ASKED_COUNT; a++)
        for (int m = 0; m < GTR_METHOD_COUNT; m++) {
            d->reg_count[a][m] += s->reg_count[a][m];
            d->reg_bytes[a][m] += s->reg_bytes[a][m];
        }
    d->reg_exported_fd += s->reg_exported_fd;
    d->reg_cache_hits += s->reg_cache_hits;
    d->dereg_count += s->dereg_count;
    d->fallback_count += s->fallback_count;
    d->error_count += s->error_count;
    for (unsigned i = 0; i < GTR_REASON_SLOTS; i++) {
        *gtr_reason_counter(d, GTR_FALLBACKS, i) += gtr_reason_count(s, GTR_FALLBACKS, i);
        *gtr_reason_counter(d, GTR_ERRORS, i) += gtr_reason_count(s, GTR_ERRORS, i);
    }
    if (s->fallback_count) {
        d->fallback_last_errno = s->fallback_last_errno;
        d->fallback_last_reason = s->fallback_last_reason;
    }
    if (s->error_count) {
        d->error_last_errno = s->error_last_errno;
        d->error_last_reason = s->error_last_reason;
        if (s->error_last_text[0])
            memcpy(d->error_last_text, s->error_last_text, sizeof(d->error_last_text));
    }
    d->listen_count += s->listen_count;
    d->connect_count += s->connect_count;
    d->accept_count += s->accept_count;
    d->close_count += s->close_count;
    d->send_count += s->send_count;
    d->send_bytes += s->send_bytes;
    d->recv_count += s->recv_count;
    d->recv_bytes += s->recv_bytes;
    d->flush_count += s->flush_count;
    d->send_posted += s->send_posted;
    d->recv_posted += s->recv_posted;
    for (int i = 0; i < GTR_OP_COUNT; i++)
        gt_hist_merge(&d->hist[i], &s->hist[i]);
    if (d->dev < 0)
        d->dev = s->dev;
    if (s->abi_version > d->abi_version)
        d->abi_version = s->abi_version;
    if (s->state > d->state)
        d->state = s->state;
    d->has_comm_id = s->has_comm_id;
    d->comm_id = s->comm_id;
}

int gt_comm_used(const struct gtr_comm *c)
{
    if (c->state == GTR_COMM_FREE)
        return 0;
    if (c->has_comm_id != GT_COMM_OVERFLOW)
        return 1;
    return gt_comm_regs(c) || c->fallback_count || c->error_count || c->send_posted ||
           c->recv_posted || c->listen_count || c->connect_count || c->accept_count ||
           c->dereg_count || c->flush_count;
}

static int same_group(const struct gtr_comm *a, const struct gtr_comm *b)
{
    return a->has_comm_id == b->has_comm_id && (!a->has_comm_id || a->comm_id == b->comm_id);
}

int gt_rec_comm_group(const struct gt_rec *r, uint32_t s, struct gtr_comm *out, int *nsib)
{
    const struct gtr_comm *c = &r->comms[s];
    if (!gt_comm_used(c))
        return 0;
    for (uint32_t k = 0; k < s; k++)
        if (gt_comm_used(&r->comms[k]) && same_group(&r->comms[k], c))
            return 0;
    gt_comm_clear(out);
    int n = 0;
    for (uint32_t k = s; k < r->ncomm; k++)
        if (gt_comm_used(&r->comms[k]) && same_group(&r->comms[k], c)) {
            gt_comm_accumulate(out, &r->comms[k]);
            n++;
        }
    out->state = c->state;
    for (uint32_t k = s; k < r->ncomm; k++)
        if (gt_comm_used(&r->comms[k]) && same_group(&r->comms[k], c) &&
            r->comms[k].state == GTR_COMM_ACTIVE)
            out->state = GTR_COMM_ACTIVE;
    if (nsib)
        *nsib = n;
    return 1;
}

uint64_t gt_comm_regs(const struct gtr_comm *c)
{
    uint64_t t = 0;
    for (int a = 0; a < GTR_ASKED_COUNT; a++)
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            t += c->reg_count[a][m];
    return t;
}

static void reasons(char *why, size_t n, const struct gtr_comm *c, int kind, const char *skip_note)
{
    int first = 1;
    for (unsigned i = 0; i < GTR_REASON_SLOTS; i++) {
        uint64_t k = gtr_reason_count(c, kind, i);
        if (!k)
            continue;
        appendf(why, n, "%s%s x%llu", first ? "" : ", ", gt_reason_slot_name((int)i),
                (unsigned long long)k);
        first = 0;
    }
    if (first && skip_note)
        appendf(why, n, "%s", skip_note);
}

/* Why the GPU path was not taken, from what the producers recorded. */
static void why_not_direct(char *why, size_t n, const struct gt_rec *const *ctx, size_t nctx,
                           int dev, int gpu_asked)
{
    int gpu_advertised = 0, any_dev = 0;
    char seen[8][160];
    int nseen = 0;
    for (size_t i = 0; i < nctx; i++) {
        const struct gt_rec *r = ctx[i];
        for (uint32_t k = 0; k < r->ndev; k++) {
            const struct gtr_device *d = &r->devs[k];
            if (!d->in_use || (dev >= 0 && d->dev != dev))
                continue;
            any_dev = 1;
            if (d->ptr_support & (GT_PTR_CUDA | GT_PTR_DMABUF))
                gpu_advertised = 1;
            char line[160];
            char ptr[40];
            snprintf(line, sizeof(line), "dev %d %s: ptrSupport %s, dmabuf probe %s", d->dev,
                     d->name, gt_fmt_ptr(d->ptr_support, ptr, sizeof(ptr)),
                     gt_probe_name(d->probe_dmabuf));
            if (d->probe_dmabuf_errno)
                appendf(line, sizeof(line), " (errno %d %s)", d->probe_dmabuf_errno,
                        strerror(d->probe_dmabuf_errno));
            appendf(line, sizeof(line), ", peermem %s", gt_probe_name(d->probe_peermem));
            int dup = 0;
            for (int s = 0; s < nseen; s++)
                dup |= !strcmp(seen[s], line);
            if (!dup && nseen < 8) {
                snprintf(seen[nseen++], sizeof(seen[0]), "%s", line);
                appendf(why, n, " %s%s.", line, d->why[0] ? "" : "");
                if (d->why[0])
                    appendf(why, n, " Plugin: \"%s\".", d->why);
            }
        }
    }
    const struct gt_rec *r0 = nctx ? ctx[0] : NULL;
    if (r0) {
        if (!strcmp(r0->id.policy_reg, "host"))
            appendf(why, n, " Policy GDRTRACE_REG=host refuses GPU memory.");
        if (!strcmp(r0->id.policy_reg, "peermem"))
            appendf(why, n, " Policy GDRTRACE_REG=peermem chose peermem.");
        if (gt_rec_emulated(r0))
            appendf(why, n, " Emulated (GDRTRACE_GPUMEM=1): sock under the GPU-memory "
                            "validation layer; no NIC, GPU memory moved by CUDA copies.");
        else if (!strncmp(r0->id.transport, "sock", 4))
            appendf(why, n, " Transport sock carries host memory only (%s).",
                    r0->id.transport_why[0] ? r0->id.transport_why : "no reason recorded");
        if (r0->id.node.nvidia_flavour == GTR_NV_ABSENT)
            appendf(why, n, " No NVIDIA kernel module on %s.", r0->id.host);
        if (!r0->id.node.peermem_loaded && !r0->id.node.memory_peers)
            appendf(why, n, " nvidia_peermem is absent on %s.", r0->id.host);
    }
    if (!gpu_asked) {
        if (gpu_advertised)
            appendf(why, n,
                    " The plugin advertised GPU memory but NCCL never asked to register any: GDR "
                    "disabled by NCCL (GPU-NIC distance beyond NCCL_NET_GDR_LEVEL, "
                    "NCCL_NET_GDR_READ=0, or a GPU without GDR support).");
        else if (any_dev)
            appendf(why, n, " NCCL never asked for GPU memory: the plugin advertised host memory only.");
        else
            appendf(why, n, " NCCL never asked for GPU memory (no device record).");
    }
}

void gt_verdict_of(const struct gtr_comm *c, const struct gt_rec *const *ctx, size_t nctx,
                   struct gt_verdict *v)
{
    char *why = v->why;
    size_t n = sizeof(v->why);
    why[0] = 0;
    v->emulated = 0;
    for (size_t i = 0; i < nctx; i++)
        v->emulated |= gt_rec_emulated(ctx[i]);
    const uint64_t(*R)[GTR_METHOD_COUNT] = c->reg_count;
    uint64_t gpu_asked = 0, host_asked = 0, did[GTR_METHOD_COUNT] = {0};
    for (int m = 0; m < GTR_METHOD_COUNT; m++) {
        gpu_asked += R[GT_ASKED_DMABUF][m] + R[GT_ASKED_CUDA][m];
        host_asked += R[GT_ASKED_HOST][m];
        for (int a = 0; a < GTR_ASKED_COUNT; a++)
            did[m] += R[a][m];
    }
    uint64_t gpu_dmabuf = R[GT_ASKED_DMABUF][GT_METHOD_DMABUF] + R[GT_ASKED_CUDA][GT_METHOD_DMABUF];
    uint64_t gpu_peermem = R[GT_ASKED_DMABUF][GT_METHOD_PEERMEM] + R[GT_ASKED_CUDA][GT_METHOD_PEERMEM];
    uint64_t gpu_host = R[GT_ASKED_DMABUF][GT_METHOD_HOST] + R[GT_ASKED_CUDA][GT_METHOD_HOST];
    uint64_t policy_fb = gtr_reason_count(c, GTR_FALLBACKS, GT_REASON_POLICY_PEERMEM) +
                         gtr_reason_count(c, GTR_FALLBACKS, GT_REASON_POLICY_HOST);
    uint64_t real_fb = c->fallback_count > policy_fb ? c->fallback_count - policy_fb : 0;
    uint64_t total = gpu_asked + host_asked;

    if (total == 0 && c->error_count == 0 && c->fallback_count == 0) {
        v->code = GT_V_NO_DATA;
        appendf(why, n, "no registration recorded (NCCL opened no connection on it yet).");
        return;
    }
    if (did[GT_METHOD_FAILED] || c->error_count) {
        v->code = GT_V_ERROR;
        appendf(why, n, "%llu registration(s) failed, %llu error(s) recorded",
                (unsigned long long)did[GT_METHOD_FAILED], (unsigned long long)c->error_count);
        if (c->error_count) {
            appendf(why, n, " (");
            reasons(why, n, c, GTR_ERRORS, "no reason");
            appendf(why, n, ")");
        }
        if (c->error_last_errno)
            appendf(why, n, "; last errno %d (%s)", c->error_last_errno,
                    strerror(c->error_last_errno));
        if (c->error_last_text[0])
            appendf(why, n, "; last error: \"%s\"", c->error_last_text);
        appendf(why, n, ".");
        return;
    }
    if (real_fb) {
        v->code = GT_V_FALLBACK;
        appendf(why, n, "%llu of %llu GPU registration(s) fell back from DMA-BUF (",
                (unsigned long long)real_fb, (unsigned long long)gpu_asked);
        reasons(why, n, c, GTR_FALLBACKS, "no reason");
        appendf(why, n, ")");
        if (c->fallback_last_errno)
            appendf(why, n, "; last errno %d (%s)", c->fallback_last_errno,
                    strerror(c->fallback_last_errno));
        appendf(why, n, "; did: dmabuf %llu, peermem %llu, host %llu.",
                (unsigned long long)gpu_dmabuf, (unsigned long long)gpu_peermem,
                (unsigned long long)gpu_host);
        why_not_direct(why, n, ctx, nctx, c->dev, 1);
        return;
    }
    if (!gpu_dmabuf && !gpu_peermem) {
        v->code = GT_V_HOST_STAGED;
        appendf(why, n, "%llu host-memory registration(s)", (unsigned long long)host_asked);
        if (gpu_host)
            appendf(why, n, ", %llu GPU buffer(s) handled as host memory",
                    (unsigned long long)gpu_host);
        appendf(why, n, ", no GPU memory registered with the NIC: data staged through host memory.");
        why_not_direct(why, n, ctx, nctx, c->dev, gpu_asked != 0);
        return;
    }
    char b1[32];
    if (gpu_dmabuf && !gpu_peermem && !gpu_host) {
        v->code = GT_V_DIRECT_DMABUF;
        uint64_t bytes = c->reg_bytes[GT_ASKED_DMABUF][GT_METHOD_DMABUF] +
                         c->reg_bytes[GT_ASKED_CUDA][GT_METHOD_DMABUF];
        appendf(why, n, "%llu GPU registration(s) via DMA-BUF (%s)", (unsigned long long)gpu_dmabuf,
                gt_fmt_bytes(bytes, b1, sizeof(b1)));
        if (R[GT_ASKED_CUDA][GT_METHOD_DMABUF])
            appendf(why, n, ", %llu of them asked as regMr(CUDA) and exported by the plugin",
                    (unsigned long long)R[GT_ASKED_CUDA][GT_METHOD_DMABUF]);
        appendf(why, n, ", none via peermem.");
    } else if (gpu_peermem && !gpu_dmabuf && !gpu_host) {
        v->code = GT_V_DIRECT_PEERMEM;
        appendf(why, n, "%llu GPU registration(s) via peermem (ibv_reg_mr on GPU addresses), none via DMA-BUF",
                (unsigned long long)gpu_peermem);
        if (R[GT_ASKED_CUDA][GT_METHOD_PEERMEM] && !R[GT_ASKED_DMABUF][GT_METHOD_PEERMEM])
            appendf(why, n, "; NCCL asked regMr(NCCL_PTR_CUDA), never regMrDmaBuf "
                            "(NCCL_DMABUF_ENABLE=0, or NCCL without DMA-BUF support)");
        appendf(why, n, ".");
        why_not_direct(why, n, ctx, nctx, c->dev, 1);
    } else {
        v->code = GT_V_MIXED;
        appendf(why, n, "GPU memory registered by more than one path: dmabuf %llu, peermem %llu, "
                        "as host %llu.",
                (unsigned long long)gpu_dmabuf, (unsigned long long)gpu_peermem,
                (unsigned long long)gpu_host);
    }
    if (host_asked)
        appendf(why, n, " %llu host registration(s) beside them are NCCL's LL buffers "
                        "(host memory by design): expected.",
                (unsigned long long)host_asked);
    if (policy_fb)
        appendf(why, n, " %llu registration(s) took another path by policy.",
                (unsigned long long)policy_fb);
}

int gt_verdict_combine(const int *codes, size_t n)
{
    int seen[GT_V_COUNT] = {0}, kinds = 0, last = GT_V_NO_DATA;
    for (size_t i = 0; i < n; i++) {
        int c = codes[i];
        if (c < 0 || c >= GT_V_COUNT || c == GT_V_NO_DATA)
            continue;
        if (!seen[c]++) {
            kinds++;
            last = c;
        }
    }
    if (seen[GT_V_ERROR])
        return GT_V_ERROR;
    if (seen[GT_V_FALLBACK])
        return GT_V_FALLBACK;
    /* Part of the job's traffic went around gdrtrace: no path can be
     * claimed for the whole, whatever the rest shows. */
    if (seen[GT_V_BYPASSED])
        return GT_V_BYPASSED;
    if (kinds > 1)
        return GT_V_MIXED;
    return last;
}

/* ---- a process's fate (issues 23, 19.1) -------------------------------- */

#define OPEN_CALLS 64

static void fmt_wall(const struct gt_rec *r, uint64_t ticks, char *buf, size_t n)
{
    double rel = gt_rec_ts_rel_s(r, ticks);
    double wall = (double)r->id.start_wall_ns / 1e9 + rel;
    if (!(wall > 0 && wall < 4e10)) { /* hostile or unset: say so, never UB */
        snprintf(buf, n, "+%.3fs after the recorder opened", rel);
        return;
    }
    time_t sec = (time_t)wall;
    int ms = (int)((wall - (double)sec) * 1000.0);
    struct tm tm;
    gmtime_r(&sec, &tm);
    char d[32];
    strftime(d, sizeof(d), "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf, n, "%s.%03d UTC", d, ms < 0 ? 0 : ms > 999 ? 999 : ms);
}

static void who(const struct gt_rec *r, char *buf, size_t n)
{
    snprintf(buf, n, "host %s, pid %d", r->id.host, r->id.pid);
    if (r->id.rank >= 0)
        appendf(buf, n, ", rank %d", r->id.rank);
    if (r->id.job[0])
        appendf(buf, n, ", job %s", r->id.job);
}

/* "the inner plugin's init (PATH, ABI v8)" / "libibverbs' device
 * enumeration (PATH)" for an open CALLING event. */
static void call_text(const struct gt_rec *r, const struct gtr_event *e, char *buf, size_t n)
{
    const char *site = gt_call_site_name((int)e->a0);
    char sitebuf[24];
    if (!site) {
        snprintf(sitebuf, sizeof(sitebuf), "call#%llu", (unsigned long long)e->a0);
        site = sitebuf;
    }
    const struct gtr_callee *c =
        e->a2 < r->ncallee && r->callees[e->a2].in_use ? &r->callees[e->a2] : NULL;
    const char *kind = c && c->kind[0] ? c->kind : "code gdrtrace does not own";
    size_t kl = strlen(kind);
    if (!strcmp(kind, "inner plugin"))
        snprintf(buf, n, "the inner plugin's %s", site);
    else
        snprintf(buf, n, "%s%s %s", kind, kl && kind[kl - 1] == 's' ? "'" : "'s", site);
    if (e->a0 == GT_CALL_INNER_LOAD)
        appendf(buf, n, " (dlopen)");
    appendf(buf, n, " (%s", c && c->path[0] ? c->path : "library not recorded");
    if (e->aux)
        appendf(buf, n, ", ABI v%u", e->aux);
    if (e->dev >= 0)
        appendf(buf, n, ", device %d", e->dev);
    appendf(buf, n, ")");
}

void gt_rec_fate(const struct gt_rec *r, struct gt_fate *f)
{
    memset(f, 0, sizeof(*f));
    f->code = GT_V_NO_DATA;
    struct gtr_event open[OPEN_CALLS], refused = {0}, e;
    size_t nopen = 0;
    int have_refused = 0;
    uint64_t pos = 0;
    while (gt_rec_event_next(r, &pos, &e)) {
        switch (e.type) {
        case GTR_EV_CALLING:
            if (nopen == OPEN_CALLS) { /* keep the newest: drop the oldest */
                memmove(open, open + 1, (OPEN_CALLS - 1) * sizeof(open[0]));
                nopen--;
            }
            open[nopen++] = e;
            break;
        case GTR_EV_RETURNED:
            for (size_t i = nopen; i-- > 0;)
                if (open[i].a1 == e.a1) {
                    memmove(open + i, open + i + 1, (nopen - i - 1) * sizeof(open[0]));
                    nopen--;
                    break;
                }
            break;
        case GTR_EV_REFUSED:
            refused = e;
            have_refused = 1;
            break;
        case GTR_EV_TRANSPORT:
        case GTR_EV_INIT:
            have_refused = 0; /* a later init was served */
            break;
        default:
            break;
        }
    }
    char when[48], whom[256], what[640];
    if (nopen) {
        const struct gtr_event *c = &open[nopen - 1];
        call_text(r, c, what, sizeof(what));
        fmt_wall(r, c->ts, when, sizeof(when));
        who(r, whom, sizeof(whom));
        f->site = (int)c->a0;
        if (r->hdr.state == GTR_STATE_CLOSED) {
            f->kind = GT_FATE_EXITED_IN_CALL;
            f->code = GT_V_ERROR;
            snprintf(f->text, sizeof(f->text),
                     "exited inside %s, called at %s (thread %u), before it returned; %s", what,
                     when, c->tid, whom);
        } else if (r->liveness == GT_LIVE_LIVE) {
            f->kind = GT_FATE_IN_CALL;
            snprintf(f->text, sizeof(f->text),
                     "inside %s since %s (thread %u), still running; %s", what, when, c->tid,
                     whom);
        } else {
            f->kind = GT_FATE_CRASHED_IN_CALL;
            f->code = GT_V_ERROR;
            snprintf(f->text, sizeof(f->text),
                     "crashed inside %s, called at %s (thread %u), which never returned; %s",
                     what, when, c->tid, whom);
        }
        return;
    }
    if (have_refused) {
        fmt_wall(r, refused.ts, when, sizeof(when));
        who(r, whom, sizeof(whom));
        f->kind = GT_FATE_REFUSED;
        f->code = GT_V_BYPASSED;
        f->reason = (int)refused.aux;
        snprintf(f->text, sizeof(f->text),
                 "the plugin refused this process at %s: \"%s\" (%s); NCCL ran it on its "
                 "internal transports, unobserved; %s",
                 when, r->id.transport_why[0] ? r->id.transport_why : "no reason recorded",
                 gt_reason_name(f->reason), whom);
    }
}

static int find_comm(struct gt_job *j, const struct gtr_comm *c, const struct gt_rec *r)
{
    for (size_t i = 0; i < j->ncomm; i++) {
        struct gt_ccomm *x = &j->comms[i];
        if ((int)c->has_comm_id != x->has_comm_id)
            continue;
        if (c->has_comm_id == 1 && x->comm_id == c->comm_id)
            return (int)i;
        /* process-wide (ABI < v11) and overflow records stand for their process */
        if (c->has_comm_id != 1 && x->nmembers && &j->recs[x->members[0].rec] == r)
            return (int)i;
    }
    return -1;
}

static int build_nodes(struct gt_job *j)
{
    struct gtr_comm *grp = malloc(sizeof(*grp));
    j->nodes = calloc(j->nrec ? j->nrec : 1, sizeof(*j->nodes));
    int *codes = NULL;
    size_t ncodes = 0, capc = 0;
    if (!grp || !j->nodes)
        goto err;
    for (size_t i = 0; i < j->nrec; i++) {
        const struct gt_rec *r = &j->recs[i];
        struct gt_node *nd = NULL;
        for (size_t k = 0; k < j->nnodes; k++)
            if (!strcmp(j->nodes[k].host, r->id.host))
                nd = &j->nodes[k];
        if (!nd) {
            nd = &j->nodes[j->nnodes++];
            snprintf(nd->host, sizeof(nd->host), "%s", r->id.host);
        }
        nd->nproc++;
    }
    for (size_t k = 0; k < j->nnodes; k++) {
        struct gt_node *nd = &j->nodes[k];
        ncodes = 0;
        for (size_t i = 0; i < j->nrec; i++) {
            const struct gt_rec *r = &j->recs[i];
            if (strcmp(r->id.host, nd->host))
                continue;
            for (uint32_t s = 0; s < r->ncomm; s++) {
                if (!gt_rec_comm_group(r, s, grp, NULL))
                    continue;
                nd->ncomm++;
                for (int a = 0; a < GTR_ASKED_COUNT; a++)
                    for (int m = 0; m < GTR_METHOD_COUNT; m++)
                        nd->did[m] += grp->reg_count[a][m];
                struct gt_verdict v;
                gt_verdict_of(grp, &r, 1, &v);
                if (ncodes == capc) {
                    capc = capc ? capc * 2 : 64;
                    int *nc = realloc(codes, capc * sizeof(*nc));
                    if (!nc)
                        goto err;
                    codes = nc;
                }
                codes[ncodes++] = v.code;
            }
        }
        for (size_t f = 0; f < j->nfates; f++) {
            if (strcmp(j->recs[j->fates[f].rec].id.host, nd->host))
                continue;
            if (ncodes == capc) {
                capc = capc ? capc * 2 : 64;
                int *nc = realloc(codes, capc * sizeof(*nc));
                if (!nc)
                    goto err;
                codes = nc;
            }
            codes[ncodes++] = j->fates[f].f.code;
        }
        nd->code = gt_verdict_combine(codes, ncodes);
    }
    free(codes);
    free(grp);
    return 0;
err:
    free(codes);
    free(grp);
    return -1;
}

int gt_job_build(struct gt_job *j, struct gt_rec *recs, size_t nrec)
{
    memset(j, 0, sizeof(*j));
    j->recs = recs;
    j->nrec = nrec;
    size_t cap = 0;
    for (size_t ri = 0; ri < nrec; ri++) {
        struct gt_rec *r = &recs[ri];
        int new_job = 1, new_host = 1;
        for (size_t k = 0; k < ri; k++) {
            new_job &= strcmp(recs[k].id.job, r->id.job) != 0;
            new_host &= strcmp(recs[k].id.host, r->id.host) != 0;
        }
        j->njobs += new_job;
        j->nhosts += new_host;
        for (uint32_t s = 0; s < r->ncomm; s++) {
            const struct gtr_comm *c = &r->comms[s];
            if (!gt_comm_used(c))
                continue;
            int idx = find_comm(j, c, r);
            if (idx < 0) {
                if (j->ncomm == cap) {
                    cap = cap ? cap * 2 : 16;
                    struct gt_ccomm *nc = realloc(j->comms, cap * sizeof(*nc));
                    if (!nc)
                        goto err;
                    j->comms = nc;
                }
                struct gt_ccomm *x = &j->comms[j->ncomm];
                memset(x, 0, sizeof(*x));
                gt_comm_clear(&x->sum);
                x->has_comm_id = (int)c->has_comm_id;
                x->comm_id = c->comm_id;
                gt_fmt_comm(c, r, x->label, sizeof(x->label));
                idx = (int)j->ncomm++;
            }
            struct gt_ccomm *x = &j->comms[idx];
            struct gt_member *nm = realloc(x->members, (x->nmembers + 1) * sizeof(*nm));
            if (!nm)
                goto err;
            x->members = nm;
            x->members[x->nmembers].rec = ri;
            x->members[x->nmembers].slot = s;
            int new_h = 1, new_p = 1;
            for (size_t k = 0; k < x->nmembers; k++) {
                new_h &= strcmp(recs[x->members[k].rec].id.host, r->id.host) != 0;
                new_p &= x->members[k].rec != ri;
            }
            x->nhosts += new_h;
            x->nprocs += new_p;
            x->nmembers++;
            gt_comm_accumulate(&x->sum, c);
        }
    }
    int *codes = NULL;
    const struct gt_rec **ctx = NULL;
    j->fates = calloc(nrec ? nrec : 1, sizeof(*j->fates));
    if (!j->fates)
        goto err;
    for (size_t ri = 0; ri < nrec; ri++) {
        struct gt_pfate *pf = &j->fates[j->nfates];
        gt_rec_fate(&recs[ri], &pf->f);
        if (pf->f.kind != GT_FATE_NONE) {
            pf->rec = ri;
            j->nfates++;
        }
    }
    if (build_nodes(j))
        goto err;
    codes = calloc(j->ncomm + j->nfates + 1, sizeof(int));
    ctx = malloc((nrec ? nrec : 1) * sizeof(*ctx));
    if (!codes || !ctx) {
        free(codes);
        free(ctx);
        goto err;
    }
    for (size_t i = 0; i < j->ncomm; i++) {
        struct gt_ccomm *x = &j->comms[i];
        size_t nctx = 0;
        for (size_t k = 0; k < x->nmembers; k++) {
            const struct gt_rec *r = &recs[x->members[k].rec];
            int dup = 0;
            for (size_t q = 0; q < nctx; q++)
                dup |= ctx[q] == r;
            if (!dup)
                ctx[nctx++] = r;
        }
        gt_verdict_of(&x->sum, ctx, nctx, &x->v);
        codes[i] = x->v.code;
    }
    j->overall.emulated = 0;
    for (size_t i = 0; i < nrec; i++)
        j->overall.emulated |= gt_rec_emulated(&recs[i]);
    for (size_t i = 0; i < j->nfates; i++)
        codes[j->ncomm + i] = j->fates[i].f.code;
    j->overall.code = gt_verdict_combine(codes, j->ncomm + j->nfates);
    j->overall.why[0] = 0;
    {
        int count[GT_V_COUNT] = {0};
        for (size_t i = 0; i < j->ncomm; i++)
            count[codes[i]]++;
        appendf(j->overall.why, sizeof(j->overall.why), "%zu process(es) on %d host(s), %zu communicator(s):",
                nrec, j->nhosts, j->ncomm);
        for (int v = 0; v < GT_V_COUNT; v++)
            if (count[v])
                appendf(j->overall.why, sizeof(j->overall.why), " %s %d", gt_verdict_name(v), count[v]);
        if (!j->ncomm)
            appendf(j->overall.why, sizeof(j->overall.why), " none");
        appendf(j->overall.why, sizeof(j->overall.why), ".");
        int refused = 0, died = 0, inside = 0;
        for (size_t i = 0; i < j->nfates; i++) {
            int k = j->fates[i].f.kind;
            refused += k == GT_FATE_REFUSED;
            died += k == GT_FATE_CRASHED_IN_CALL || k == GT_FATE_EXITED_IN_CALL;
            inside += k == GT_FATE_IN_CALL;
        }
        if (refused)
            appendf(j->overall.why, sizeof(j->overall.why),
                    " %d process(es) BYPASSED: the plugin refused them.", refused);
        if (died)
            appendf(j->overall.why, sizeof(j->overall.why),
                    " %d process(es) died inside a call into code gdrtrace does not own (ERROR).",
                    died);
        if (inside)
            appendf(j->overall.why, sizeof(j->overall.why),
                    " %d process(es) still inside such a call.", inside);
    }
    free(codes);
    free(ctx);
    return 0;
err:
    gt_job_free(j);
    return -1;
}

void gt_job_free(struct gt_job *j)
{
    for (size_t i = 0; i < j->ncomm; i++)
        free(j->comms[i].members);
    free(j->comms);
    free(j->nodes);
    free(j->fates);
    j->comms = NULL;
    j->nodes = NULL;
    j->fates = NULL;
    j->nfates = 0;
    j->ncomm = j->nnodes = 0;
}

const char *gt_fmt_ns(uint64_t ns, char *buf, size_t n)
{
    if (ns < 1000)
        snprintf(buf, n, "%lluns", (unsigned long long)ns);
    else if (ns < 1000000)
        snprintf(buf, n, "%.1fus", ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, n, "%.2fms", ns / 1e6);
    else
        snprintf(buf, n, "%.2fs", ns / 1e9);
    return buf;
}

const char *gt_fmt_bytes(uint64_t b, char *buf, size_t n)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 6) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, n, "%llu B", (unsigned long long)b);
    else
        snprintf(buf, n, "%.1f %s", v, u[i]);
    return buf;
}

const char *gt_fmt_ptr(int bits, char *buf, size_t n)
{
    buf[0] = 0;
    if (bits & GT_PTR_HOST)
        appendf(buf, n, "HOST");
    if (bits & GT_PTR_CUDA)
        appendf(buf, n, "%sCUDA", buf[0] ? "|" : "");
    if (bits & GT_PTR_DMABUF)
        appendf(buf, n, "%sDMABUF", buf[0] ? "|" : "");
    if (!buf[0])
        snprintf(buf, n, "none");
    return buf;
}

const char *gt_fmt_comm(const struct gtr_comm *c, const struct gt_rec *r, char *buf, size_t n)
{
    if (c->has_comm_id == GT_COMM_OVERFLOW)
        snprintf(buf, n, "overflow %s:%d", r->id.host, r->id.pid);
    else if (c->has_comm_id)
        snprintf(buf, n, "0x%llx", (unsigned long long)c->comm_id);
    else
        snprintf(buf, n, "process %s:%d", r->id.host, r->id.pid);
    return buf;
}
