/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verdict.c — the verdict rules (model.h): the verdict of one communicator
 * record with its evidence, the precedence that combines verdicts, the sums
 * of communicator records, and the norm a rank is measured against.
 * Invariant: a verdict is a pure function of the recorded counters plus the
 * contributing recorders' identity and device records; nothing here reads
 * the machine, so an archive gives the same verdict as the live files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/nccl_cfg.h"
#include "tools/lib/hist.h"
#include "tools/lib/model.h"
#include "tools/lib/ncclcfg.h"
#include "tools/lib/recfact.h"

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

int gt_verdict_exit(int v)
{
    return v >= 0 && v < GT_V_COUNT ? vexit[v] : GT_EXIT_INPUT;
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

int gt_comm_same_group(const struct gtr_comm *a, const struct gtr_comm *b)
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
        if (gt_comm_used(&r->comms[k]) && gt_comm_same_group(&r->comms[k], c))
            return 0;
    gt_comm_clear(out);
    int n = 0;
    for (uint32_t k = at; k < r->nheld; k++)
        if (gt_comm_used(&r->comms[k]) && gt_comm_same_group(&r->comms[k], c)) {
            gt_comm_accumulate(out, &r->comms[k]);
            n++;
        }
    out->state = c->state;
    for (uint32_t k = at; k < r->nheld; k++)
        if (gt_comm_used(&r->comms[k]) && gt_comm_same_group(&r->comms[k], c) &&
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
        if (r0->reg_mode == GT_REG_HOST)
            gt_appendf(why, n, " Policy GDRTRACE_REG=host refuses GPU memory.");
        if (r0->reg_mode == GT_REG_PEERMEM)
            gt_appendf(why, n, " Policy GDRTRACE_REG=peermem chose peermem.");
        if (r0->emulated)
            gt_appendf(why, n,
                       " Emulated (GDRTRACE_GPUMEM=1): sock under the GPU-memory "
                       "validation layer; no NIC, GPU memory moved by CUDA copies.");
        else if (gt_rec_sock(r0))
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
        v->emulated |= ctx[i]->emulated;
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
