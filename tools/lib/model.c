/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.c — merged communicators and verdicts (rules in model.h).
 * Invariant: a verdict is a pure function of the recorded counters plus the
 * contributing recorders' identity and device records; nothing here reads
 * the machine, so an archive gives the same verdict as the live files.
 */
#include "tools/lib/model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/gt_net.h"
#include "common/nccl_cfg.h"
#include "tools/lib/coll.h"
#include "tools/lib/hist.h"
#include "tools/lib/ncclcfg.h"

static const char *vnames[GT_V_COUNT] = {
    "DIRECT-DMABUF", "DIRECT-PEERMEM", "HOST-STAGED", "MIXED",
    "FALLBACK",      "ERROR",          "NO-DATA",     "BYPASSED",
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

int gt_recfile_emulated(const struct gt_recfile *r)
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

void gt_appendf(char *buf, size_t n, const char *fmt, ...)
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

int gt_recfile_comm_group(const struct gt_recfile *r, uint32_t s, struct gtr_comm *out, int *nsib)
{
    const struct gtr_comm *c = gt_recfile_comm(r, s);
    if (!c || !gt_comm_used(c))
        return 0;
    uint32_t at = r->comm_at[s] - 1; /* held entries are in slot order */
    for (uint32_t k = 0; k < at; k++)
        if (gt_comm_used(&r->comms[k]) && same_group(&r->comms[k], c))
            return 0;
    gt_comm_clear(out);
    int n = 0;
    for (uint32_t k = at; k < r->nheld; k++)
        if (gt_comm_used(&r->comms[k]) && same_group(&r->comms[k], c)) {
            gt_comm_accumulate(out, &r->comms[k]);
            n++;
        }
    out->state = c->state;
    for (uint32_t k = at; k < r->nheld; k++)
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
        gt_appendf(why, n, "%s%s x%llu", first ? "" : ", ", gt_reason_slot_name((int)i),
                   (unsigned long long)k);
        first = 0;
    }
    if (first && skip_note)
        gt_appendf(why, n, "%s", skip_note);
}

/* 1 when a device record of ctx (device dev, or any when dev < 0) offered
 * NCCL GPU memory. */
static int gpu_offered(const struct gt_recfile *const *ctx, size_t nctx, int dev)
{
    for (size_t i = 0; i < nctx; i++)
        for (uint32_t k = 0; k < ctx[i]->ndev; k++) {
            const struct gtr_device *d = &ctx[i]->devs[k];
            if (d->in_use && (dev < 0 || d->dev == dev) &&
                (d->ptr_support & (GT_PTR_CUDA | GT_PTR_DMABUF)))
                return 1;
        }
    return 0;
}

/* Why the GPU path was not taken, from what the producers recorded. */
static void why_not_direct(char *why, size_t n, const struct gt_recfile *const *ctx, size_t nctx,
                           int dev, int gpu_asked)
{
    /* GPU memory offered, none asked: the NCCL setting (or NCCL's topology)
     * that explains it is the answer, so it goes first, before the device
     * lines that could fill the evidence on a node of many NICs. */
    int named = !gpu_asked && gpu_offered(ctx, nctx, dev) && gt_ncclcfg_why_host(why, n, ctx, nctx);
    int gpu_advertised = 0, any_dev = 0;
    char seen[8][160];
    int nseen = 0;
    for (size_t i = 0; i < nctx; i++) {
        const struct gt_recfile *r = ctx[i];
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
                gt_appendf(line, sizeof(line), " (errno %d %s)", d->probe_dmabuf_errno,
                           strerror(d->probe_dmabuf_errno));
            gt_appendf(line, sizeof(line), ", peermem %s", gt_probe_name(d->probe_peermem));
            int dup = 0;
            for (int s = 0; s < nseen; s++)
                dup |= !strcmp(seen[s], line);
            if (!dup && nseen < 8) {
                snprintf(seen[nseen++], sizeof(seen[0]), "%s", line);
                gt_appendf(why, n, " %s%s.", line, d->why[0] ? "" : "");
                if (d->why[0])
                    gt_appendf(why, n, " Plugin: \"%s\".", d->why);
            }
        }
    }
    const struct gt_recfile *r0 = nctx ? ctx[0] : NULL;
    if (r0) {
        if (!strcmp(r0->id.policy_reg, "host"))
            gt_appendf(why, n, " Policy GDRTRACE_REG=host refuses GPU memory.");
        if (!strcmp(r0->id.policy_reg, "peermem"))
            gt_appendf(why, n, " Policy GDRTRACE_REG=peermem chose peermem.");
        if (gt_recfile_emulated(r0))
            gt_appendf(why, n,
                       " Emulated (GDRTRACE_GPUMEM=1): sock under the GPU-memory "
                       "validation layer; no NIC, GPU memory moved by CUDA copies.");
        else if (!strncmp(r0->id.transport, "sock", 4))
            gt_appendf(why, n, " Transport sock carries host memory only (%s).",
                       r0->id.transport_why[0] ? r0->id.transport_why : "no reason recorded");
        if (r0->id.node.nvidia_flavour == GTR_NV_ABSENT)
            gt_appendf(why, n, " No NVIDIA kernel module on %s.", r0->id.host);
        if (!r0->id.node.peermem_loaded && !r0->id.node.memory_peers)
            gt_appendf(why, n, " nvidia_peermem is absent on %s.", r0->id.host);
    }
    if (!gpu_asked) {
        if (named)
            ; /* named the NCCL setting, or NCCL's topology, and how to confirm */
        else if (gpu_advertised)
            gt_appendf(
                why, n,
                " The plugin advertised GPU memory but NCCL never asked to register any: GDR "
                "disabled by NCCL (GPU-NIC distance beyond NCCL_NET_GDR_LEVEL, "
                "NCCL_NET_GDR_READ=0, or a GPU without GDR support).");
        else if (any_dev)
            gt_appendf(why, n,
                       " NCCL never asked for GPU memory: the plugin advertised host memory only.");
        else
            gt_appendf(why, n, " NCCL never asked for GPU memory (no device record).");
    }
}

void gt_verdict_of(const struct gtr_comm *c, const struct gt_recfile *const *ctx, size_t nctx,
                   struct gt_verdict *v)
{
    char *why = v->why;
    size_t n = sizeof(v->why);
    why[0] = 0;
    v->emulated = 0;
    for (size_t i = 0; i < nctx; i++)
        v->emulated |= gt_recfile_emulated(ctx[i]);
    const uint64_t(*R)[GTR_METHOD_COUNT] = c->reg_count;
    uint64_t gpu_asked = 0, host_asked = 0, did[GTR_METHOD_COUNT] = {0};
    for (int m = 0; m < GTR_METHOD_COUNT; m++) {
        gpu_asked += R[GT_ASKED_DMABUF][m] + R[GT_ASKED_CUDA][m];
        host_asked += R[GT_ASKED_HOST][m];
        for (int a = 0; a < GTR_ASKED_COUNT; a++)
            did[m] += R[a][m];
    }
    uint64_t gpu_dmabuf = R[GT_ASKED_DMABUF][GT_METHOD_DMABUF] + R[GT_ASKED_CUDA][GT_METHOD_DMABUF];
    uint64_t gpu_peermem =
        R[GT_ASKED_DMABUF][GT_METHOD_PEERMEM] + R[GT_ASKED_CUDA][GT_METHOD_PEERMEM];
    uint64_t gpu_host = R[GT_ASKED_DMABUF][GT_METHOD_HOST] + R[GT_ASKED_CUDA][GT_METHOD_HOST];
    uint64_t policy_fb = gtr_reason_count(c, GTR_FALLBACKS, GT_REASON_POLICY_PEERMEM) +
                         gtr_reason_count(c, GTR_FALLBACKS, GT_REASON_POLICY_HOST);
    uint64_t real_fb = c->fallback_count > policy_fb ? c->fallback_count - policy_fb : 0;
    uint64_t total = gpu_asked + host_asked;

    if (total == 0 && c->error_count == 0 && c->fallback_count == 0) {
        v->code = GT_V_NO_DATA;
        gt_appendf(why, n, "no registration recorded (NCCL opened no connection on it yet).");
        return;
    }
    if (did[GT_METHOD_FAILED] || c->error_count) {
        v->code = GT_V_ERROR;
        gt_appendf(why, n, "%llu registration(s) failed, %llu error(s) recorded",
                   (unsigned long long)did[GT_METHOD_FAILED], (unsigned long long)c->error_count);
        if (c->error_count) {
            gt_appendf(why, n, " (");
            reasons(why, n, c, GTR_ERRORS, "no reason");
            gt_appendf(why, n, ")");
        }
        if (c->error_last_errno)
            gt_appendf(why, n, "; last errno %d (%s)", c->error_last_errno,
                       strerror(c->error_last_errno));
        if (c->error_last_text[0])
            gt_appendf(why, n, "; last error: \"%s\"", c->error_last_text);
        gt_appendf(why, n, ".");
        return;
    }
    if (real_fb) {
        v->code = GT_V_FALLBACK;
        gt_appendf(why, n, "%llu of %llu GPU registration(s) fell back from DMA-BUF (",
                   (unsigned long long)real_fb, (unsigned long long)gpu_asked);
        reasons(why, n, c, GTR_FALLBACKS, "no reason");
        gt_appendf(why, n, ")");
        if (c->fallback_last_errno)
            gt_appendf(why, n, "; last errno %d (%s)", c->fallback_last_errno,
                       strerror(c->fallback_last_errno));
        gt_appendf(why, n, "; did: dmabuf %llu, peermem %llu, host %llu.",
                   (unsigned long long)gpu_dmabuf, (unsigned long long)gpu_peermem,
                   (unsigned long long)gpu_host);
        why_not_direct(why, n, ctx, nctx, c->dev, 1);
        return;
    }
    if (!gpu_dmabuf && !gpu_peermem) {
        v->code = GT_V_HOST_STAGED;
        gt_appendf(why, n, "%llu host-memory registration(s)", (unsigned long long)host_asked);
        if (gpu_host)
            gt_appendf(why, n, ", %llu GPU buffer(s) handled as host memory",
                       (unsigned long long)gpu_host);
        gt_appendf(why, n,
                   ", no GPU memory registered with the NIC: data staged through host memory.");
        why_not_direct(why, n, ctx, nctx, c->dev, gpu_asked != 0);
        return;
    }
    char b1[32];
    if (gpu_dmabuf && !gpu_peermem && !gpu_host) {
        v->code = GT_V_DIRECT_DMABUF;
        uint64_t bytes = c->reg_bytes[GT_ASKED_DMABUF][GT_METHOD_DMABUF] +
                         c->reg_bytes[GT_ASKED_CUDA][GT_METHOD_DMABUF];
        gt_appendf(why, n, "%llu GPU registration(s) via DMA-BUF (%s)",
                   (unsigned long long)gpu_dmabuf, gt_fmt_bytes(bytes, b1, sizeof(b1)));
        if (R[GT_ASKED_CUDA][GT_METHOD_DMABUF]) {
            gt_appendf(why, n, ", %llu of them asked as regMr(CUDA) and exported by the plugin",
                       (unsigned long long)R[GT_ASKED_CUDA][GT_METHOD_DMABUF]);
            gt_ncclcfg_why_cuda(why, n, ctx, nctx);
        }
        gt_appendf(why, n, ", none via peermem.");
    } else if (gpu_peermem && !gpu_dmabuf && !gpu_host) {
        v->code = GT_V_DIRECT_PEERMEM;
        gt_appendf(
            why, n,
            "%llu GPU registration(s) via peermem (ibv_reg_mr on GPU addresses), none via DMA-BUF",
            (unsigned long long)gpu_peermem);
        if (R[GT_ASKED_CUDA][GT_METHOD_PEERMEM] && !R[GT_ASKED_DMABUF][GT_METHOD_PEERMEM] &&
            !gt_ncclcfg_why_cuda(why, n, ctx, nctx))
            gt_appendf(why, n,
                       "; NCCL asked regMr(NCCL_PTR_CUDA), never regMrDmaBuf "
                       "(NCCL_DMABUF_ENABLE=0, or NCCL without DMA-BUF support)");
        gt_appendf(why, n, ".");
        why_not_direct(why, n, ctx, nctx, c->dev, 1);
    } else {
        v->code = GT_V_MIXED;
        gt_appendf(why, n,
                   "GPU memory registered by more than one path: dmabuf %llu, peermem %llu, "
                   "as host %llu.",
                   (unsigned long long)gpu_dmabuf, (unsigned long long)gpu_peermem,
                   (unsigned long long)gpu_host);
    }
    if (host_asked) {
        gt_appendf(why, n,
                   " %llu host registration(s) beside them are NCCL's LL buffers "
                   "(host memory by design): expected.",
                   (unsigned long long)host_asked);
        gt_ncclcfg_why_read(why, n, ctx, nctx);
    }
    if (policy_fb)
        gt_appendf(why, n, " %llu registration(s) took another path by policy.",
                   (unsigned long long)policy_fb);
}

int gt_verdict_combine(const int *codes, size_t n)
{
    int seen[GT_V_COUNT] = {0};
    for (size_t i = 0; i < n; i++)
        if (codes[i] >= 0 && codes[i] < GT_V_COUNT)
            seen[codes[i]]++;
    return gt_verdict_combine_counts(seen);
}

int gt_verdict_combine_counts(const int *seen_in)
{
    int seen[GT_V_COUNT], kinds = 0, last = GT_V_NO_DATA;
    for (int c = 0; c < GT_V_COUNT; c++) {
        seen[c] = c == GT_V_NO_DATA ? 0 : seen_in[c];
        if (seen[c]) {
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

static void fmt_wall(const struct gt_recfile *r, uint64_t ticks, char *buf, size_t n)
{
    double rel = gt_recfile_ts_rel_s(r, ticks);
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

static void who(const struct gt_recfile *r, char *buf, size_t n)
{
    snprintf(buf, n, "host %s, pid %d", r->id.host, r->id.pid);
    if (r->id.rank >= 0)
        gt_appendf(buf, n, ", rank %d", r->id.rank);
    if (r->id.job[0])
        gt_appendf(buf, n, ", job %s", r->id.job);
}

/* "the inner plugin's init (PATH, ABI v8)" / "libibverbs' device
 * enumeration (PATH)" for an open CALLING event. */
static void call_text(const struct gt_recfile *r, const struct gtr_event *e, char *buf, size_t n)
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
        gt_appendf(buf, n, " (dlopen)");
    gt_appendf(buf, n, " (%s", c && c->path[0] ? c->path : "library not recorded");
    if (e->aux)
        gt_appendf(buf, n, ", ABI v%u", e->aux);
    if (e->dev >= 0)
        gt_appendf(buf, n, ", device %d", e->dev);
    gt_appendf(buf, n, ")");
}

void gt_recfile_fate(const struct gt_recfile *r, struct gt_fate *f)
{
    memset(f, 0, sizeof(*f));
    f->code = GT_V_NO_DATA;
    struct gtr_event open[OPEN_CALLS], refused = {0}, e;
    size_t nopen = 0;
    int have_refused = 0;
    uint64_t pos = 0;
    while (gt_recfile_event_next(r, &pos, &e)) {
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
            snprintf(f->text, sizeof(f->text), "inside %s since %s (thread %u), still running; %s",
                     what, when, c->tid, whom);
        } else {
            f->kind = GT_FATE_CRASHED_IN_CALL;
            f->code = GT_V_ERROR;
            snprintf(f->text, sizeof(f->text),
                     "crashed inside %s, called at %s (thread %u), which never returned; %s", what,
                     when, c->tid, whom);
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

int gt_natcmp(const char *a, const char *b)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    while (*x && *y) {
        if (*x >= '0' && *x <= '9' && *y >= '0' && *y <= '9') {
            /* a run of digits each: by value (leading zeros skipped, then the
             * longer run is the larger number, then digit by digit) */
            const unsigned char *xs = x, *ys = y;
            while (*xs == '0')
                xs++;
            while (*ys == '0')
                ys++;
            const unsigned char *xe = xs, *ye = ys;
            while (*xe >= '0' && *xe <= '9')
                xe++;
            while (*ye >= '0' && *ye <= '9')
                ye++;
            if (xe - xs != ye - ys)
                return xe - xs < ye - ys ? -1 : 1;
            for (; xs < xe; xs++, ys++)
                if (*xs != *ys)
                    return *xs < *ys ? -1 : 1;
            x = xe;
            y = ye;
            continue;
        }
        if (*x != *y)
            return *x < *y ? -1 : 1;
        x++;
        y++;
    }
    if (*x || *y)
        return *x ? 1 : -1;
    /* equal by value ("node02" and "node2"): bytes decide, so the order is total */
    int c = strcmp(a, b);
    return (c > 0) - (c < 0);
}

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

/* Open-addressing table of indices (SIZE_MAX: empty); the caller compares. */
struct htab {
    size_t *v;
    size_t cap, n;
};

struct gt_fold {
    struct htab comm_ix, host_ix, job_ix;
    struct cstate *cs;            /* parallel to j->comms */
    size_t *node_first;           /* parallel to j->nodes: first recorder of the host */
    int (*node_seen)[GT_V_COUNT]; /* per node: codes of its processes' communicators */
    size_t *rec_node;             /* recorder -> node */
    size_t nrec_cap, comm_cap, node_cap, ranks_cap, fates_cap;
    struct gtr_comm *grp; /* scratch */
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
    free(f);
    j->fold = NULL;
}

void gt_job_free(struct gt_job *j)
{
    fold_free(j);
    gt_coll_free(j->coll);
    j->coll = NULL;
    for (size_t i = 0; i < j->ncomm; i++)
        free(j->comms[i].members);
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
    /* settings: only those a verdict reads (gt_recfile_emulated, NCCL's own
     * in tools/lib/ncclcfg.c) unless all are asked for (diff compares them); the
     * policy in force stays in the identity's policy_* */
    uint32_t ks = 0;
    for (uint32_t i = 0; i < r->nset; i++)
        if (r->settings[i].in_use &&
            (all_settings || !strcmp(r->settings[i].key, "GDRTRACE_GPUMEM") ||
             gt_nccl_cfg_find(r->settings[i].key)))
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
    gt_recfile_drop_events(r); /* r->rs stays */
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

static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t hash_str(const char *s)
{
    return hash_bytes(s, strlen(s), 0xcbf29ce484222325ull);
}

/* Finds the slot for key hash h; eq(v, arg) says whether index v matches.
 * Returns the slot: holding a match, or empty. */
static size_t *ht_find(struct htab *t, uint64_t h, int (*eq)(size_t, const void *), const void *arg)
{
    size_t mask = t->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask)
        if (t->v[i] == SIZE_MAX || eq(t->v[i], arg))
            return &t->v[i];
}

/* Grows t so one more entry fits; rehash(v) gives the hash of entry v. */
static int ht_reserve(struct htab *t, uint64_t (*rehash)(size_t, const void *), const void *arg)
{
    if ((t->n + 1) * 2 <= t->cap)
        return 0;
    size_t ncap = t->cap ? t->cap * 2 : 64;
    size_t *nv = malloc(ncap * sizeof(*nv));
    if (!nv)
        return -1;
    for (size_t i = 0; i < ncap; i++)
        nv[i] = SIZE_MAX;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->v[i] == SIZE_MAX)
            continue;
        size_t k = (size_t)rehash(t->v[i], arg) & (ncap - 1);
        while (nv[k] != SIZE_MAX)
            k = (k + 1) & (ncap - 1);
        nv[k] = t->v[i];
    }
    free(t->v);
    t->v = nv;
    t->cap = ncap;
    return 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *np = realloc(*p, nc * size);
    if (!np)
        return -1;
    *p = np;
    *cap = nc;
    return 0;
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
    uint64_t h = hash_bytes(&has, sizeof(has), 0xcbf29ce484222325ull);
    return has == 1 ? hash_bytes(&id, sizeof(id), h) : hash_bytes(&rec, sizeof(rec), h);
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
    return hash_str(((const struct gt_job *)arg)->nodes[v].host);
}

static int job_eq(size_t v, const void *arg)
{
    const struct skey *k = arg;
    return !strcmp(k->j->recs[v].id.job, k->s);
}

static uint64_t job_rehash(size_t v, const void *arg)
{
    return hash_str(((const struct gt_job *)arg)->recs[v].id.job);
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
    if (!j->fold->grp) {
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
    if (ht_reserve(&f->comm_ix, ckey_rehash, j))
        return -1;
    size_t *hs = ht_find(&f->comm_ix, ckey_hash(key.has, key.id, ri), ckey_eq, &key);
    struct at me = {ri, s};
    if (*hs == SIZE_MAX) {
        size_t cap = f->comm_cap;
        if (grow((void **)&j->comms, &cap, j->ncomm + 1, sizeof(*j->comms)) ||
            grow((void **)&f->cs, &f->comm_cap, j->ncomm + 1, sizeof(*f->cs)))
            return -1;
        f->comm_cap = cap < f->comm_cap ? cap : f->comm_cap;
        struct gt_ccomm *x = &j->comms[j->ncomm];
        memset(x, 0, sizeof(*x));
        gt_comm_clear(&x->sum);
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
    struct gtr_comm *d = &x->sum;
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
            if (same_group(gt_recfile_comm(r, d[k].slot), &r->comms[h]))
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
    if (grow((void **)&f->rec_node, &f->nrec_cap, ri + 1, sizeof(*f->rec_node)))
        return -1;
    /* jobs: a recorder stands for its job in the table */
    struct skey jk = {j, r->id.job};
    if (ht_reserve(&f->job_ix, job_rehash, j))
        return -1;
    size_t *js = ht_find(&f->job_ix, hash_str(r->id.job), job_eq, &jk);
    if (*js == SIZE_MAX) {
        *js = ri;
        f->job_ix.n++;
        j->njobs++;
    }
    /* hosts: one node each */
    struct skey hk = {j, r->id.host};
    if (ht_reserve(&f->host_ix, host_rehash, j))
        return -1;
    size_t *hs = ht_find(&f->host_ix, hash_str(r->id.host), host_eq, &hk);
    if (*hs == SIZE_MAX) {
        size_t cap = f->node_cap, cap2 = f->node_cap;
        if (grow((void **)&j->nodes, &cap, j->nnodes + 1, sizeof(*j->nodes)) ||
            grow((void **)&f->node_first, &cap2, j->nnodes + 1, sizeof(*f->node_first)) ||
            grow((void **)&f->node_seen, &f->node_cap, j->nnodes + 1, sizeof(*f->node_seen)))
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
        if (grow((void **)&j->ranks, &f->ranks_cap, j->nranks + 1, sizeof(*j->ranks)))
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
        if (grow((void **)&j->fates, &f->fates_cap, j->nfates + 1, sizeof(*j->fates)))
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

int gt_job_finish(struct gt_job *j, struct gt_recfile *recs, size_t nrec)
{
    struct gt_fold *f = j->fold;
    j->recs = recs;
    j->nrec = nrec;
    size_t *perm = malloc((nrec ? nrec : 1) * sizeof(*perm));
    size_t *inv = malloc((nrec ? nrec : 1) * sizeof(*inv));
    size_t *stamp = calloc(j->nnodes ? j->nnodes : 1, sizeof(*stamp));
    int *codes = calloc(j->ncomm + j->nfates + 1, sizeof(int));
    const struct gt_recfile **ctx = malloc((nrec ? nrec : 1) * sizeof(*ctx));
    struct node_ord *no = malloc((j->nnodes ? j->nnodes : 1) * sizeof(*no));
    int rc = -1;
    if (!perm || !inv || !stamp || !codes || !ctx || !no)
        goto out;
    /* Put the recorders in report order (a no-op when they were folded
     * sorted) and renumber every reference to them. */
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
    if (moved) {
        struct gt_recfile *tmp = malloc((nrec ? nrec : 1) * sizeof(*tmp));
        if (!tmp)
            goto out;
        for (size_t i = 0; i < nrec; i++)
            tmp[i] = recs[perm[i]];
        memcpy(recs, tmp, nrec * sizeof(*tmp));
        free(tmp);
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
        size_t *rn = malloc((nrec ? nrec : 1) * sizeof(*rn));
        if (!rn)
            goto out;
        for (size_t i = 0; i < nrec; i++)
            rn[i] = f->rec_node[perm[i]];
        memcpy(f->rec_node, rn, nrec * sizeof(*rn));
        free(rn);
    }
    /* Nodes in order of their first recorder. */
    for (size_t i = 0; i < j->nnodes; i++) {
        no[i].nd = j->nodes[i];
        no[i].nd.code = gt_verdict_combine_counts(f->node_seen[i]);
        no[i].first = f->node_first[i];
    }
    if (j->nnodes > 1)
        qsort(no, j->nnodes, sizeof(*no), node_cmp);
    /* node indices change with the sort: rec_node follows */
    size_t *renode = malloc((j->nnodes ? j->nnodes : 1) * sizeof(*renode));
    if (!renode)
        goto out;
    for (size_t i = 0; i < j->nnodes; i++) {
        renode[f->rec_node[no[i].first]] = i;
        j->nodes[i] = no[i].nd;
    }
    for (size_t i = 0; i < nrec; i++)
        f->rec_node[i] = renode[f->rec_node[i]];
    free(renode);
    /* Communicators in order of their first member, members in order. */
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
        gt_verdict_of(&x->sum, ctx, nctx, &x->v);
        codes[i] = x->v.code;
    }
    if (index_ranks(j))
        goto out;
    j->overall.emulated = 0;
    for (size_t i = 0; i < nrec; i++)
        j->overall.emulated |= gt_recfile_emulated(&recs[i]);
    for (size_t i = 0; i < j->nfates; i++)
        codes[j->ncomm + i] = j->fates[i].f.code;
    j->overall.code = gt_verdict_combine(codes, j->ncomm + j->nfates);
    j->overall.why[0] = 0;
    {
        int count[GT_V_COUNT] = {0};
        for (size_t i = 0; i < j->ncomm; i++)
            count[codes[i]]++;
        gt_appendf(j->overall.why, sizeof(j->overall.why),
                   "%zu process(es) on %d host(s), %zu communicator(s):", nrec, j->nhosts,
                   j->ncomm);
        for (int v = 0; v < GT_V_COUNT; v++)
            if (count[v])
                gt_appendf(j->overall.why, sizeof(j->overall.why), " %s %d", gt_verdict_name(v),
                           count[v]);
        if (!j->ncomm)
            gt_appendf(j->overall.why, sizeof(j->overall.why), " none");
        gt_appendf(j->overall.why, sizeof(j->overall.why), ".");
        int refused = 0, died = 0, inside = 0;
        for (size_t i = 0; i < j->nfates; i++) {
            int k = j->fates[i].f.kind;
            refused += k == GT_FATE_REFUSED;
            died += k == GT_FATE_CRASHED_IN_CALL || k == GT_FATE_EXITED_IN_CALL;
            inside += k == GT_FATE_IN_CALL;
        }
        if (refused)
            gt_appendf(j->overall.why, sizeof(j->overall.why),
                       " %d process(es) BYPASSED: the plugin refused them.", refused);
        if (died)
            gt_appendf(
                j->overall.why, sizeof(j->overall.why),
                " %d process(es) died inside a call into code gdrtrace does not own (ERROR).",
                died);
        if (inside)
            gt_appendf(j->overall.why, sizeof(j->overall.why),
                       " %d process(es) still inside such a call.", inside);
    }
    j->rec_pos = inv; /* kept: callers that gathered by read index (export) */
    inv = NULL;
    rc = 0;
out:
    free(perm);
    free(inv);
    free(stamp);
    free(codes);
    free(ctx);
    free(no);
    fold_free(j);
    if (rc)
        gt_job_free(j);
    return rc;
}

/* ---- Ranks that differ from their communicator (rules in model.h) ---- */

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The median of v[0, n), n > 0 (sorts v): the mean of the two middle
 * values when n is even, so that a communicator split half and half has a
 * MAD as wide as the split (the lower middle would make it 0 and flag the
 * slower half as outliers of a majority that does not exist). */
static uint64_t median_of(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof(*v), u64_cmp);
    return n % 2 ? v[n / 2]
                 : v[n / 2 - 1] / 2 + v[n / 2] / 2 + (v[n / 2 - 1] % 2 + v[n / 2] % 2) / 2;
}

int gt_comm_norm(const struct gt_job *j, size_t ci, struct gt_comm_norm *n)
{
    const struct gt_ccomm *x = &j->comms[ci];
    memset(n, 0, sizeof(*n));
    n->nranks = x->nrix;
    n->majority = GT_V_NO_DATA;
    size_t seen[GT_V_COUNT] = {0};
    for (size_t k = 0; k < x->nrix; k++) {
        const struct gt_rank_comm *d = &j->ranks[j->rank_ix[x->rix + k]];
        if (d->verdict >= 0 && d->verdict < GT_V_COUNT)
            seen[d->verdict]++;
        n->nfallback += d->fallbacks != 0;
        n->nerror += d->errors != 0;
    }
    for (int v = 0; v < GT_V_COUNT; v++)
        if (seen[v] > n->nmajority) { /* strictly more: a tie keeps the lower code */
            n->nmajority = seen[v];
            n->majority = v;
        }
    if (!x->nrix)
        return 0;
    uint64_t *vals = malloc(x->nrix * sizeof(*vals));
    if (!vals)
        return -1;
    for (int op = 0; op < GTR_OP_COUNT; op++) {
        size_t m = 0;
        for (size_t k = 0; k < x->nrix; k++) {
            uint64_t p = j->ranks[j->rank_ix[x->rix + k]].p50_ns[op];
            if (p)
                vals[m++] = p;
        }
        n->nop[op] = m;
        if (!m)
            continue;
        uint64_t med = median_of(vals, m);
        for (size_t k = 0; k < m; k++)
            vals[k] = vals[k] > med ? vals[k] - med : med - vals[k];
        n->median[op] = med;
        n->mad[op] = median_of(vals, m);
    }
    free(vals);
    return 0;
}

unsigned gt_rank_differs(const struct gt_comm_norm *n, const struct gt_rank_comm *d,
                         unsigned *slow_ops)
{
    unsigned bits = 0, slow = 0;
    if (d->verdict != n->majority)
        bits |= GT_DIFF_VERDICT;
    if (d->fallbacks && 2 * n->nfallback < n->nranks)
        bits |= GT_DIFF_FALLBACK;
    if (d->errors && 2 * n->nerror < n->nranks)
        bits |= GT_DIFF_ERROR;
    for (int op = 0; op < GTR_OP_COUNT; op++) {
        uint64_t p = d->p50_ns[op], m = n->median[op];
        if (!p || n->nop[op] < GT_OUTLIER_MIN || p <= m)
            continue;
        /* K x 1.4826 x MAD: the robust standard deviation, K of them */
        long double spread = (long double)n->mad[op] * GT_OUTLIER_K * 14826 / 10000;
        if (p > GT_OUTLIER_RATIO * m && (long double)(p - m) > spread &&
            p - m >= GT_OUTLIER_FLOOR_NS)
            slow |= 1u << op;
    }
    if (slow)
        bits |= GT_DIFF_SLOW;
    if (slow_ops)
        *slow_ops = slow;
    return bits;
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
        gt_appendf(buf, n, "HOST");
    if (bits & GT_PTR_CUDA)
        gt_appendf(buf, n, "%sCUDA", buf[0] ? "|" : "");
    if (bits & GT_PTR_DMABUF)
        gt_appendf(buf, n, "%sDMABUF", buf[0] ? "|" : "");
    if (!buf[0])
        snprintf(buf, n, "none");
    return buf;
}

const char *gt_fmt_comm(const struct gtr_comm *c, const struct gt_recfile *r, char *buf, size_t n)
{
    if (c->has_comm_id == GT_COMM_OVERFLOW)
        snprintf(buf, n, "overflow %s:%d", r->id.host, r->id.pid);
    else if (c->has_comm_id)
        snprintf(buf, n, "0x%llx", (unsigned long long)c->comm_id);
    else
        snprintf(buf, n, "process %s:%d", r->id.host, r->id.pid);
    return buf;
}
