/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c — the summary report: per node, per process (identity, node
 * fingerprint, devices and probes, event ring, communicators), then per
 * communicator across processes and nodes, then the verdict of the input.
 * Invariant: output depends only on the parsed recorders (plus the liveness
 * judged at load or dump time), so a dump archive reports exactly like the
 * live files it was made from; the only line naming where a recorder was read
 * from starts with "source".
 */
#include "tools/report.h"

#include <stdlib.h>
#include <string.h>

#include "common/gt_net.h"
#include "common/nccl_cfg.h"
#include "tools/esc.h"
#include "tools/hist.h"
#include "tools/kcorr.h"
#include "tools/ncclcfg.h"

#include <unistd.h>

static const double qs[] = {0.50, 0.95, 0.99};

/* Recorders whose buffers the kernel can show now: read from a file (not an
 * archive), judged live, written on this host. */
static int live_here(const struct gt_recfile *r)
{
    char h[256];
    if (r->from_archive || r->liveness != GT_LIVE_LIVE || gethostname(h, sizeof(h)) != 0)
        return 0;
    h[sizeof(h) - 1] = 0;
    return !strcmp(h, r->id.host);
}

struct kc_view {
    int nlive;
    uint64_t dmabuf_regs, deregs;
    struct gt_kcorr k;
};

/* 0 when no recorder is live here (nothing to corroborate). */
static int kc_collect(const struct gt_job *j, struct kc_view *v)
{
    memset(v, 0, sizeof(*v));
    for (size_t i = 0; i < j->nrec; i++) {
        const struct gt_recfile *r = &j->recs[i];
        if (!live_here(r))
            continue;
        v->nlive++;
        for (uint32_t s = 0; s < r->ncomm; s++) {
            const struct gtr_comm *c = &r->comms[s];
            if (!gt_comm_used(c))
                continue;
            for (int a = 0; a < GTR_ASKED_COUNT; a++)
                v->dmabuf_regs += c->reg_count[a][GT_METHOD_DMABUF];
            v->deregs += c->dereg_count;
        }
    }
    if (!v->nlive)
        return 0;
    gt_kcorr_read(&v->k);
    return 1;
}

static void kc_text(FILE *f, const struct gt_job *j)
{
    struct kc_view *v = malloc(sizeof(*v));
    if (!v || !kc_collect(j, v)) {
        free(v);
        return;
    }
    char b[32];
    fprintf(f, "\n== kernel corroboration (%s, read now)\n", gt_esc(v->k.path));
    fprintf(f,
            "   %d live recorder(s) on this host: %llu DMA-BUF registration(s) recorded, %llu "
            "deregistration(s) of any kind\n",
            v->nlive, (unsigned long long)v->dmabuf_regs, (unsigned long long)v->deregs);
    if (!v->k.readable) {
        fprintf(f, "   not readable: %s (debugfs must be mounted and readable, usually root)\n",
                strerror(v->k.err_no));
        free(v);
        return;
    }
    fprintf(f, "   kernel: %llu dma-buf object(s), %llu exported by nv_dmabuf (%s)\n",
            (unsigned long long)v->k.objects, (unsigned long long)v->k.nv_objects,
            gt_fmt_bytes(v->k.nv_bytes, b, sizeof(b)));
    int shown = 0;
    for (size_t i = 0; i < j->nrec; i++) {
        const struct gt_recfile *r = &j->recs[i];
        if (!live_here(r))
            continue;
        for (uint32_t d = 0; d < r->ndev; d++) {
            const struct gtr_device *dv = &r->devs[d];
            if (!dv->in_use || !dv->pci_path[0])
                continue;
            const char *bdf = strrchr(dv->pci_path, '/');
            bdf = bdf ? bdf + 1 : dv->pci_path;
            int dup = 0;
            for (size_t q = 0; q < i && !dup; q++)
                for (uint32_t e = 0; live_here(&j->recs[q]) && e < j->recs[q].ndev; e++)
                    dup |= j->recs[q].devs[e].in_use &&
                           !strcmp(j->recs[q].devs[e].pci_path, dv->pci_path);
            for (uint32_t e = 0; e < d; e++)
                dup |= r->devs[e].in_use && !strcmp(r->devs[e].pci_path, dv->pci_path);
            if (dup)
                continue;
            fprintf(f, "   NIC %-12s %-14s nv_dmabuf objects attached: %llu\n", gt_esc(dv->name),
                    gt_esc(bdf), (unsigned long long)gt_kcorr_attached(&v->k, dv->pci_path));
            shown++;
        }
    }
    if (!shown)
        fprintf(f, "   (no device with a PCI address recorded)\n");
    if (v->dmabuf_regs && !v->k.nv_objects)
        fprintf(f,
                "   WARNING: DMA-BUF registrations were recorded but the kernel lists no nv_dmabuf "
                "object now (released, or not GPU memory)\n");
    free(v);
}

static void kc_json(struct gt_json *js, const struct gt_job *j)
{
    struct kc_view *v = malloc(sizeof(*v));
    if (!v || !kc_collect(j, v)) {
        free(v);
        return;
    }
    gj_obj(js, "kernel");
    gj_str(js, "bufinfo", v->k.path);
    gj_bool(js, "readable", v->k.readable);
    if (!v->k.readable)
        gj_str(js, "error", strerror(v->k.err_no));
    gj_i64(js, "live_recorders", v->nlive);
    gj_u64(js, "dmabuf_registrations_recorded", v->dmabuf_regs);
    gj_u64(js, "objects", v->k.objects);
    gj_u64(js, "nv_dmabuf_objects", v->k.nv_objects);
    gj_u64(js, "nv_dmabuf_bytes", v->k.nv_bytes);
    gj_obj(js, "attached");
    for (int i = 0; i < v->k.ndevs; i++)
        gj_u64(js, v->k.devs[i].name, v->k.devs[i].nv_objects);
    gj_end(js, '}');
    gj_end(js, '}');
    free(v);
}

int gt_load_job(char **paths, int n, struct gt_inputs *in, struct gt_job *j)
{
    if (in->fold) {
        if (gt_job_begin(j)) {
            fprintf(stderr, "gdrtrace: out of memory building the report\n");
            in->fold = NULL;
            gt_job_build(j, NULL, 0);
            return GT_EXIT_INPUT;
        }
        in->fold = j;
        int bad = gt_inputs_load(in, paths, n);
        in->fold = NULL;
        if (in->fold_failed || gt_job_finish(j, in->recs, in->n)) {
            if (!in->fold_failed)
                fprintf(stderr, "gdrtrace: out of memory building the report\n");
            gt_job_free(j);
            gt_job_build(j, NULL, 0);
            return GT_EXIT_INPUT;
        }
        return bad ? GT_EXIT_INPUT : 0;
    }
    int bad = gt_inputs_load(in, paths, n);
    if (gt_job_build(j, in->recs, in->n)) {
        fprintf(stderr, "gdrtrace: out of memory building the report\n");
        return GT_EXIT_INPUT;
    }
    return bad ? GT_EXIT_INPUT : 0;
}

void gt_report_hist_bars(FILE *f, const struct gtr_hist *h, const char *indent, int width)
{
    /* One row per power of two: the 16 sub-buckets summed. */
    enum { ROWS = GTR_HIST_BUCKETS / GTR_HIST_SUB };
    uint64_t row[ROWS] = {0}, maxrow = 0;
    int lo = -1, hi = -1;
    for (int r = 0; r < ROWS; r++) {
        for (int s = 0; s < (int)GTR_HIST_SUB; s++)
            row[r] += h->buckets[r * GTR_HIST_SUB + s];
        if (row[r]) {
            if (lo < 0)
                lo = r;
            hi = r;
            if (row[r] > maxrow)
                maxrow = row[r];
        }
    }
    if (lo < 0)
        return;
    for (int r = lo; r <= hi; r++) {
        char a[24], b[24];
        uint64_t from = gt_hist_bucket_lo((unsigned)(r * GTR_HIST_SUB));
        uint64_t to = gt_hist_bucket_hi((unsigned)(r * GTR_HIST_SUB + GTR_HIST_SUB - 1));
        int len = (int)((double)row[r] * width / (double)maxrow + 0.5);
        if (row[r] && len == 0)
            len = 1;
        fprintf(f, "%s%9s..%-9s |", indent, gt_fmt_ns(from, a, sizeof(a)),
                to == UINT64_MAX ? "inf" : gt_fmt_ns(to, b, sizeof(b)));
        for (int i = 0; i < len; i++)
            fputc('#', f);
        fprintf(f, "%*s %llu\n", width - len, "", (unsigned long long)row[r]);
    }
}

static void text_matrix(FILE *f, const struct gtr_comm *c, const char *ind)
{
    char b[32];
    fprintf(f, "%sregistrations   asked \\ did    %10s %10s %10s %10s\n", ind, "dmabuf", "peermem",
            "host", "failed");
    for (int a = 0; a < GTR_ASKED_COUNT; a++) {
        uint64_t row = 0;
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            row += c->reg_count[a][m];
        if (!row)
            continue;
        fprintf(f, "%s                %-14s", ind,
                a == GT_ASKED_DMABUF ? "regMrDmaBuf"
                : a == GT_ASKED_CUDA ? "regMr(CUDA)"
                                     : "regMr(HOST)");
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            fprintf(f, " %10llu", (unsigned long long)c->reg_count[a][m]);
        fprintf(f, "\n%s                %-14s", ind, "  bytes");
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            fprintf(f, " %10s",
                    c->reg_count[a][m] ? gt_fmt_bytes(c->reg_bytes[a][m], b, sizeof(b)) : "-");
        fputc('\n', f);
    }
    if (c->reg_exported_fd || c->reg_cache_hits)
        fprintf(f, "%s                plugin-exported dma-buf fds %llu, MR cache hits %llu\n", ind,
                (unsigned long long)c->reg_exported_fd, (unsigned long long)c->reg_cache_hits);
}

static void text_reasons(FILE *f, const struct gtr_comm *c, int kind)
{
    int first = 1;
    for (unsigned i = 0; i < GTR_REASON_SLOTS; i++) {
        uint64_t k = gtr_reason_count(c, kind, i);
        if (k) {
            fprintf(f, "%s%s x%llu", first ? " (" : ", ", gt_reason_slot_name((int)i),
                    (unsigned long long)k);
            first = 0;
        }
    }
    if (!first)
        fputc(')', f);
}

static void text_comm_body(FILE *f, const struct gtr_comm *c, const char *ind, int flags)
{
    char b1[32], b2[32];
    text_matrix(f, c, ind);
    fprintf(f, "%sfallbacks       %llu", ind, (unsigned long long)c->fallback_count);
    text_reasons(f, c, GTR_FALLBACKS);
    if (c->fallback_count && c->fallback_last_errno)
        fprintf(f, "; last errno %d (%s)", c->fallback_last_errno,
                strerror(c->fallback_last_errno));
    fprintf(f, "\n%serrors          %llu", ind, (unsigned long long)c->error_count);
    text_reasons(f, c, GTR_ERRORS);
    if (c->error_count && c->error_last_errno)
        fprintf(f, "; last errno %d (%s)", c->error_last_errno, strerror(c->error_last_errno));
    if (c->error_last_text[0])
        fprintf(f, "; last: \"%s\"", gt_esc(c->error_last_text));
    fputc('\n', f);
    fprintf(f, "%sconnections     listen %llu, connect %llu, accept %llu, close %llu, dereg %llu\n",
            ind, (unsigned long long)c->listen_count, (unsigned long long)c->connect_count,
            (unsigned long long)c->accept_count, (unsigned long long)c->close_count,
            (unsigned long long)c->dereg_count);
    fprintf(f, "%straffic         sent %llu (%s), received %llu (%s), flushes %llu\n", ind,
            (unsigned long long)c->send_count, gt_fmt_bytes(c->send_bytes, b1, sizeof(b1)),
            (unsigned long long)c->recv_count, gt_fmt_bytes(c->recv_bytes, b2, sizeof(b2)),
            (unsigned long long)c->flush_count);
    int any = 0;
    for (int op = 0; op < GTR_OP_COUNT; op++)
        any |= c->hist[op].count != 0;
    if (!any)
        return;
    fprintf(f, "%slatency         %-6s %10s %10s %10s %10s %10s\n", ind, "op", "count", "p50",
            "p95", "p99", "max");
    for (int op = 0; op < GTR_OP_COUNT; op++) {
        const struct gtr_hist *h = &c->hist[op];
        if (!h->count)
            continue;
        fprintf(f, "%s                %-6s %10llu", ind, gt_op_name(op),
                (unsigned long long)h->count);
        for (unsigned q = 0; q < 3; q++)
            fprintf(f, " %10s", gt_fmt_ns(gt_hist_quantile(h, qs[q]), b1, sizeof(b1)));
        fprintf(f, " %10s\n", gt_fmt_ns(h->max_ns, b1, sizeof(b1)));
    }
    if (flags & GT_REPORT_BARS) {
        char ind2[64];
        snprintf(ind2, sizeof(ind2), "%s    ", ind);
        for (int op = 0; op < GTR_OP_COUNT; op++) {
            if (!c->hist[op].count)
                continue;
            fprintf(f, "%shistogram %s\n", ind, gt_op_name(op));
            gt_report_hist_bars(f, &c->hist[op], ind2, 40);
        }
    }
}

static void text_process(FILE *f, const struct gt_job *j, size_t ri, int flags)
{
    const struct gt_recfile *r = &j->recs[ri];
    const struct gtr_identity *id = &r->id;
    char b[64];
    fprintf(f, "\n== process %s pid %d  job %s  rank %d/%d (local %d)  %s\n", gt_esc(id->host),
            id->pid, id->job[0] ? gt_esc(id->job) : "-", id->rank, id->world_size, id->local_rank,
            gt_liveness_name(r->liveness));
    fprintf(f, "   source   %s\n", gt_esc(r->source));
    fprintf(f, "   format   %u.%u, %llu bytes\n", r->hdr.version_major, r->hdr.version_minor,
            (unsigned long long)r->hdr.file_size);
    fprintf(f, "   plugin   %s  NCCL %d  net ABI v%d  launcher %s\n",
            id->plugin_version[0] ? gt_esc(id->plugin_version) : "?", id->nccl_version,
            id->abi_version, id->launcher[0] ? gt_esc(id->launcher) : "-");
    fprintf(f, "   transport %s (%s)\n", id->transport[0] ? gt_esc(id->transport) : "?",
            id->transport_why[0] ? gt_esc(id->transport_why) : "no reason recorded");
    if (r->nset) {
        /* 1.2+: the settings in force, two to a line, each with its source */
        int k = 0;
        for (uint32_t i = 0; i < r->nset; i++) {
            const struct gtr_setting *s = &r->settings[i];
            if (!s->in_use || gt_nccl_cfg_find(s->key)) /* NCCL's own: their lines below */
                continue;
            char src[112];
            gt_setting_source_text(s, src, sizeof(src));
            fprintf(f, "%s%s=%s [%s]", k % 2 == 0 ? (k ? "\n            " : "   settings ") : "  ",
                    gt_esc(s->key), gt_esc(s->value), gt_esc(src));
            k++;
        }
        if (k)
            fputc('\n', f);
        gt_ncclcfg_print(f, r);
        if (id->policy_text[0])
            fprintf(f, "   set      %s\n", gt_esc(id->policy_text));
    } else {
        fprintf(f, "   policy   GDRTRACE_REG=%s GDRTRACE_ALLOW_PEERMEM=%u%s%s\n",
                id->policy_reg[0] ? gt_esc(id->policy_reg) : "?", id->policy_allow_peermem,
                id->policy_text[0] ? "  set: " : "", gt_esc(id->policy_text));
    }
    const struct gtr_fingerprint *fp = &id->node;
    static const char *flav[] = {"unknown", "open", "proprietary", "absent"};
    fprintf(f, "   node     kernel %s, nvidia %s %s, peermem %s, CUDA driver %d\n",
            fp->kernel_release[0] ? gt_esc(fp->kernel_release) : "?",
            fp->nvidia_flavour <= GTR_NV_ABSENT ? flav[fp->nvidia_flavour] : "unknown",
            fp->nvidia_version[0] ? gt_esc(fp->nvidia_version) : "-",
            fp->peermem_loaded ? "loaded"
            : fp->memory_peers ? "memory_peers"
                               : "absent",
            fp->cuda_driver_version);
    fprintf(f, "            rdma %s; gpus %s\n",
            fp->rdma_devices[0] ? gt_esc(fp->rdma_devices) : "none",
            fp->gpus[0] ? gt_esc(fp->gpus) : "none");
    int hdr = 0;
    for (uint32_t k = 0; k < r->ndev; k++) {
        const struct gtr_device *d = &r->devs[k];
        if (!d->in_use)
            continue;
        if (!hdr++)
            fprintf(f, "   devices  %-3s %-12s %-9s %-18s %-12s %-12s %-12s %s\n", "dev", "name",
                    "transport", "ptrSupport", "dmabuf", "peermem", "cuda-dmabuf", "why");
        char e[16] = "";
        if (d->probe_dmabuf_errno)
            snprintf(e, sizeof(e), "(%d)", d->probe_dmabuf_errno);
        char pd[64];
        snprintf(pd, sizeof(pd), "%s%s", gt_probe_name(d->probe_dmabuf), e);
        fprintf(f, "            %-3d %-12s %-9s %-18s %-12s %-12s %-12s %s\n", d->dev,
                gt_esc(d->name), gt_esc(d->transport), gt_fmt_ptr(d->ptr_support, b, sizeof(b)), pd,
                gt_probe_name(d->probe_peermem), gt_probe_name(d->probe_cuda_dmabuf),
                gt_esc(d->why));
    }
    if (!hdr)
        fprintf(f, "   devices  none recorded\n");
    if (r->has_ring) {
        const struct gt_ring_stats *rs = &r->rs;
        fprintf(f,
                "   events   %llu slots, %llu written: %llu complete, %llu torn, %llu overwritten",
                (unsigned long long)rs->capacity, (unsigned long long)rs->head,
                (unsigned long long)rs->complete, (unsigned long long)rs->torn,
                (unsigned long long)rs->overwritten);
        if (rs->bad)
            fprintf(f, ", %llu invalid", (unsigned long long)rs->bad);
        fputc('\n', f);
        int first = 1;
        for (int t = 1; t < GTR_EV_COUNT; t++)
            if (rs->by_type[t]) {
                fprintf(f, "%s%s %llu", first ? "            " : ", ", gt_event_name(t),
                        (unsigned long long)rs->by_type[t]);
                first = 0;
            }
        if (!first)
            fputc('\n', f);
        if (flags & GT_REPORT_EVENTS) {
            /* the last few fallbacks and errors, newest last */
            struct gtr_event last[5], e;
            size_t nlast = 0;
            uint64_t pos = 0;
            while (gt_recfile_event_next(r, &pos, &e)) {
                if (e.type != GTR_EV_FALLBACK && e.type != GTR_EV_ERROR)
                    continue;
                if (nlast == 5)
                    memmove(last, last + 1, 4 * sizeof(last[0]));
                else
                    nlast++;
                last[nlast - 1] = e;
            }
            for (size_t i = 0; i < nlast; i++)
                fprintf(f, "            %+.6fs %s dev %d comm-slot %u errno %d (%s) reason %s\n",
                        gt_recfile_ts_rel_s(r, last[i].ts), gt_event_name(last[i].type),
                        last[i].dev, last[i].comm_slot, last[i].err, strerror(last[i].err),
                        gt_reason_name((int)last[i].aux));
        }
    }
    struct gtr_comm *c = malloc(sizeof(*c));
    if (!c)
        return;
    for (uint32_t s = 0; s < r->ncomm; s++) {
        int nsib;
        if (!gt_recfile_comm_group(r, s, c, &nsib))
            continue;
        struct gt_verdict v;
        const struct gt_recfile *ctx = r;
        gt_verdict_of(c, &ctx, 1, &v);
        char sib[32] = "";
        if (nsib > 1)
            snprintf(sib, sizeof(sib), " + %d sibling slot(s)", nsib - 1);
        fprintf(f, "\n   comm %s  (slot %u%s, net ABI v%d, dev %d, %s)\n",
                gt_esc(gt_fmt_comm(c, r, b, sizeof(b))), s, sib, c->abi_version, c->dev,
                c->state == GTR_COMM_FINALIZED ? "finalized" : "active");
        text_comm_body(f, c, "     ", flags);
        fprintf(f, "     verdict         %s: %s\n", gt_verdict_label(v.code, v.emulated),
                gt_esc(v.why));
    }
    free(c);
}

void gt_report_text(FILE *f, const struct gt_job *j, int flags)
{
    if (!j->nrec) {
        fprintf(f, "no recorders found\n");
        return;
    }
    /* per node */
    fprintf(f, "== nodes\n   %-24s %9s %6s %10s %10s %10s %10s  %s\n", "host", "processes", "comms",
            "dmabuf", "peermem", "host", "failed", "verdict");
    for (size_t i = 0; i < j->nnodes; i++) {
        const struct gt_node *nd = &j->nodes[i];
        fprintf(f, "   %-24s %9d %6d %10llu %10llu %10llu %10llu  %s\n", gt_esc(nd->host),
                nd->nproc, nd->ncomm, (unsigned long long)nd->did[0],
                (unsigned long long)nd->did[1], (unsigned long long)nd->did[2],
                (unsigned long long)nd->did[3], gt_verdict_label(nd->code, j->overall.emulated));
    }
    for (size_t i = 0; i < j->nrec; i++)
        text_process(f, j, i, flags);

    fprintf(f, "\n== communicators across %zu process(es) on %d host(s)\n", j->nrec, j->nhosts);
    fprintf(f, "   %-20s %5s %5s %10s %10s %10s %10s %9s %7s  %s\n", "comm", "procs", "hosts",
            "dmabuf", "peermem", "host", "failed", "fallbacks", "errors", "verdict");
    for (size_t i = 0; i < j->ncomm; i++) {
        const struct gt_ccomm *x = &j->comms[i];
        uint64_t did[GTR_METHOD_COUNT] = {0};
        for (int a = 0; a < GTR_ASKED_COUNT; a++)
            for (int m = 0; m < GTR_METHOD_COUNT; m++)
                did[m] += x->sum.reg_count[a][m];
        fprintf(f, "   %-20s %5zu %5d %10llu %10llu %10llu %10llu %9llu %7llu  %s\n",
                gt_esc(x->label), x->nprocs, x->nhosts, (unsigned long long)did[0],
                (unsigned long long)did[1], (unsigned long long)did[2], (unsigned long long)did[3],
                (unsigned long long)x->sum.fallback_count, (unsigned long long)x->sum.error_count,
                gt_verdict_label(x->v.code, x->v.emulated));
    }
    for (size_t i = 0; i < j->ncomm; i++) {
        const struct gt_ccomm *x = &j->comms[i];
        if (x->nprocs < 2)
            continue;
        fprintf(f, "\n   comm %s across %zu process(es) on %d host(s)\n", gt_esc(x->label),
                x->nprocs, x->nhosts);
        text_comm_body(f, &x->sum, "     ", 0);
    }
    fprintf(f, "\n== verdict\n");
    for (size_t i = 0; i < j->ncomm; i++)
        fprintf(f, "   comm %-20s %-15s %s\n", gt_esc(j->comms[i].label),
                gt_verdict_label(j->comms[i].v.code, j->comms[i].v.emulated),
                gt_esc(j->comms[i].v.why));
    fprintf(f, "   %-25s %-15s %s\n", "all", gt_verdict_label(j->overall.code, j->overall.emulated),
            gt_esc(j->overall.why));
    kc_text(f, j);
}

void gt_json_identity(struct gt_json *js, const struct gt_recfile *r)
{
    const struct gtr_identity *id = &r->id;
    gj_str(js, "host", id->host);
    gj_i64(js, "pid", id->pid);
    gj_str(js, "job", id->job);
    gj_i64(js, "rank", id->rank);
    gj_i64(js, "local_rank", id->local_rank);
    gj_i64(js, "world_size", id->world_size);
    gj_str(js, "state", gt_liveness_name(r->liveness));
    gj_str(js, "launcher", id->launcher);
    gj_str(js, "plugin_version", id->plugin_version);
    gj_i64(js, "nccl_version", id->nccl_version);
    gj_i64(js, "abi_version", id->abi_version);
    gj_str(js, "transport", id->transport);
    gj_str(js, "transport_why", id->transport_why);
    gj_str(js, "policy_reg", id->policy_reg);
    gj_bool(js, "policy_allow_peermem", id->policy_allow_peermem);
    gj_str(js, "policy_text", id->policy_text);
    gj_arr(js, "settings"); /* 1.2+: [] for older files */
    for (uint32_t i = 0; i < r->nset; i++) {
        const struct gtr_setting *s = &r->settings[i];
        if (!s->in_use)
            continue;
        gj_obj(js, NULL);
        gj_str(js, "key", s->key);
        gj_str(js, "value", s->value);
        const char *sn = gt_setting_source_name((int)s->source);
        char num[24];
        snprintf(num, sizeof(num), "source#%u", s->source);
        gj_str(js, "source", sn ? sn : num);
        gj_str(js, "origin", s->origin);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_i64(js, "start_wall_ns", id->start_wall_ns);
    gj_i64(js, "end_wall_ns", id->end_wall_ns);
    gj_obj(js, "node");
    const struct gtr_fingerprint *fp = &id->node;
    gj_str(js, "kernel_release", fp->kernel_release);
    gj_str(js, "boot_id", fp->boot_id);
    gj_str(js, "nvidia_version", fp->nvidia_version);
    gj_i64(js, "nvidia_flavour", fp->nvidia_flavour);
    gj_bool(js, "peermem_loaded", fp->peermem_loaded);
    gj_bool(js, "memory_peers", fp->memory_peers);
    gj_i64(js, "cuda_driver_version", fp->cuda_driver_version);
    gj_str(js, "rdma_devices", fp->rdma_devices);
    gj_str(js, "gpus", fp->gpus);
    gj_str(js, "cpu_model", fp->cpu_model);
    gj_end(js, '}');
}

static void json_reasons(struct gt_json *js, const char *key, const struct gtr_comm *c, int kind)
{
    gj_obj(js, key);
    for (unsigned i = 0; i < GTR_REASON_SLOTS; i++) {
        uint64_t k = gtr_reason_count(c, kind, i);
        if (k)
            gj_u64(js, gt_reason_slot_name((int)i), k);
    }
    gj_end(js, '}');
}

void gt_json_comm_counts(struct gt_json *js, const struct gtr_comm *c)
{
    gj_obj(js, "registrations");
    for (int a = 0; a < GTR_ASKED_COUNT; a++) {
        gj_obj(js, gt_asked_name(a));
        for (int m = 0; m < GTR_METHOD_COUNT; m++) {
            gj_obj(js, gt_method_name(m));
            gj_u64(js, "count", c->reg_count[a][m]);
            gj_u64(js, "bytes", c->reg_bytes[a][m]);
            gj_end(js, '}');
        }
        gj_end(js, '}');
    }
    gj_end(js, '}');
    gj_u64(js, "exported_fds", c->reg_exported_fd);
    gj_u64(js, "cache_hits", c->reg_cache_hits);
    gj_u64(js, "deregistrations", c->dereg_count);
    gj_obj(js, "fallbacks");
    gj_u64(js, "count", c->fallback_count);
    json_reasons(js, "by_reason", c, GTR_FALLBACKS);
    gj_i64(js, "last_errno", c->fallback_last_errno);
    gj_str(js, "last_reason", gt_reason_name(c->fallback_last_reason));
    gj_end(js, '}');
    gj_obj(js, "errors");
    gj_u64(js, "count", c->error_count);
    json_reasons(js, "by_reason", c, GTR_ERRORS);
    gj_i64(js, "last_errno", c->error_last_errno);
    gj_str(js, "last_reason", gt_reason_name(c->error_last_reason));
    gj_str(js, "last_text", c->error_last_text);
    gj_end(js, '}');
    gj_obj(js, "connections");
    gj_u64(js, "listen", c->listen_count);
    gj_u64(js, "connect", c->connect_count);
    gj_u64(js, "accept", c->accept_count);
    gj_u64(js, "close", c->close_count);
    gj_end(js, '}');
    gj_obj(js, "traffic");
    gj_u64(js, "sends", c->send_count);
    gj_u64(js, "send_bytes", c->send_bytes);
    gj_u64(js, "recvs", c->recv_count);
    gj_u64(js, "recv_bytes", c->recv_bytes);
    gj_u64(js, "flushes", c->flush_count);
    gj_u64(js, "send_posted", c->send_posted);
    gj_u64(js, "recv_posted", c->recv_posted);
    gj_end(js, '}');
}

void gt_json_latency(struct gt_json *js, const struct gtr_comm *c)
{
    gj_obj(js, "latency_ns");
    for (int op = 0; op < GTR_OP_COUNT; op++) {
        const struct gtr_hist *h = &c->hist[op];
        gj_obj(js, gt_op_name(op));
        gj_u64(js, "count", h->count);
        gj_u64(js, "sum", h->sum_ns);
        gj_u64(js, "min", h->count ? h->min_ns : 0);
        gj_u64(js, "p50", gt_hist_quantile(h, 0.50));
        gj_u64(js, "p95", gt_hist_quantile(h, 0.95));
        gj_u64(js, "p99", gt_hist_quantile(h, 0.99));
        gj_u64(js, "max", h->max_ns);
        gj_end(js, '}');
    }
    gj_end(js, '}');
}

static void json_verdict(struct gt_json *js, const struct gt_verdict *v)
{
    gj_obj(js, "verdict");
    gj_str(js, "code", gt_verdict_label(v->code, v->emulated));
    gj_i64(js, "exit", gt_verdict_exit(v->code));
    if (v->emulated)
        gj_str(js, "emulated", GT_EMULATED_TEXT);
    gj_str(js, "why", v->why);
    gj_end(js, '}');
}

void gt_report_json(struct gt_json *js, const struct gt_job *j)
{
    gj_obj(js, NULL);
    gj_arr(js, "processes");
    for (size_t i = 0; i < j->nrec; i++) {
        const struct gt_recfile *r = &j->recs[i];
        gj_obj(js, NULL);
        gj_str(js, "source", r->source);
        char fmt[16];
        snprintf(fmt, sizeof(fmt), "%u.%u", r->hdr.version_major, r->hdr.version_minor);
        gj_str(js, "format", fmt);
        gj_u64(js, "file_size", r->hdr.file_size);
        gt_json_identity(js, r);
        gj_arr(js, "devices");
        for (uint32_t k = 0; k < r->ndev; k++) {
            const struct gtr_device *d = &r->devs[k];
            if (!d->in_use)
                continue;
            gj_obj(js, NULL);
            gj_i64(js, "dev", d->dev);
            gj_str(js, "name", d->name);
            gj_str(js, "pci_path", d->pci_path);
            gj_str(js, "transport", d->transport);
            gj_i64(js, "ptr_support", d->ptr_support);
            gj_i64(js, "speed_mbps", d->speed_mbps);
            gj_str(js, "probe_dmabuf", gt_probe_name(d->probe_dmabuf));
            gj_i64(js, "probe_dmabuf_errno", d->probe_dmabuf_errno);
            gj_str(js, "probe_peermem", gt_probe_name(d->probe_peermem));
            gj_str(js, "probe_cuda_dmabuf", gt_probe_name(d->probe_cuda_dmabuf));
            gj_str(js, "why", d->why);
            gj_end(js, '}');
        }
        gj_end(js, ']');
        if (r->has_ring) {
            gj_obj(js, "events");
            gj_u64(js, "capacity", r->rs.capacity);
            gj_u64(js, "written", r->rs.head);
            gj_u64(js, "complete", r->rs.complete);
            gj_u64(js, "torn", r->rs.torn);
            gj_u64(js, "overwritten", r->rs.overwritten);
            gj_u64(js, "invalid", r->rs.bad);
            gj_obj(js, "by_type");
            for (int t = 1; t < GTR_EV_COUNT; t++)
                if (r->rs.by_type[t])
                    gj_u64(js, gt_event_name(t), r->rs.by_type[t]);
            gj_end(js, '}');
            gj_end(js, '}');
        }
        gj_arr(js, "comms");
        struct gtr_comm *c = malloc(sizeof(*c));
        for (uint32_t s = 0; c && s < r->ncomm; s++) {
            int nsib;
            if (!gt_recfile_comm_group(r, s, c, &nsib))
                continue;
            char b[96];
            gj_obj(js, NULL);
            gj_str(js, "comm", gt_fmt_comm(c, r, b, sizeof(b)));
            gj_u64(js, "slot", s);
            gj_i64(js, "slots", nsib);
            gj_bool(js, "has_comm_id", c->has_comm_id);
            gj_i64(js, "abi_version", c->abi_version);
            gj_i64(js, "dev", c->dev);
            gj_str(js, "state", c->state == GTR_COMM_FINALIZED ? "finalized" : "active");
            gt_json_comm_counts(js, c);
            gt_json_latency(js, c);
            struct gt_verdict v;
            gt_verdict_of(c, &r, 1, &v);
            json_verdict(js, &v);
            gj_end(js, '}');
        }
        free(c);
        gj_end(js, ']');
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_arr(js, "nodes");
    for (size_t i = 0; i < j->nnodes; i++) {
        const struct gt_node *nd = &j->nodes[i];
        gj_obj(js, NULL);
        gj_str(js, "host", nd->host);
        gj_i64(js, "processes", nd->nproc);
        gj_i64(js, "comms", nd->ncomm);
        gj_obj(js, "registrations");
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            gj_u64(js, gt_method_name(m), nd->did[m]);
        gj_end(js, '}');
        gj_str(js, "verdict", gt_verdict_label(nd->code, j->overall.emulated));
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_arr(js, "communicators");
    for (size_t i = 0; i < j->ncomm; i++) {
        const struct gt_ccomm *x = &j->comms[i];
        gj_obj(js, NULL);
        gj_str(js, "comm", x->label);
        gj_u64(js, "processes", x->nprocs);
        gj_i64(js, "hosts", x->nhosts);
        gj_arr(js, "ranks");
        for (size_t k = 0; k < x->nmembers; k++) {
            int dup = 0;
            for (size_t q = 0; q < k; q++)
                dup |= x->members[q].rec == x->members[k].rec;
            if (!dup)
                gj_i64(js, NULL, j->recs[x->members[k].rec].id.rank);
        }
        gj_end(js, ']');
        gt_json_comm_counts(js, &x->sum);
        gt_json_latency(js, &x->sum);
        json_verdict(js, &x->v);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_i64(js, "hosts", j->nhosts);
    kc_json(js, j);
    json_verdict(js, &j->overall);
    gj_end(js, '}');
    gj_done(js);
}
