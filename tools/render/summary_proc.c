/* SPDX-License-Identifier: Apache-2.0 */
/*
 * summary_proc.c — summary --full's section of one process: identity and
 * where it was read from, the settings in force, the node's fingerprint, the
 * devices and their probes, the event ring, each communicator in detail; and
 * a communicator's counts, which --full's communicators across processes
 * print too.  Invariant: an unknown value prints as "?" with a line saying
 * why, never as -1.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/nccl_cfg.h"
#include "tools/lib/esc.h"
#include "tools/lib/hist.h"
#include "tools/lib/ncclcfg.h"
#include "tools/render/summary.h"
#include "tools/render/summary_parts.h"

static const double qs[] = {0.50, 0.95, 0.99};

/* ---- Unknown values: "?" and why, never -1 ---- */

/* Which launcher variable the writer read the rank from (shim/recorder.c
 * fill_launcher): the net plugin API gives the plugin no rank. */
static const char *rank_var(const struct gt_recfile *r, int which)
{
    static const char *const v[][3] = {
        {"RANK", "LOCAL_RANK", "WORLD_SIZE"},
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
    };
    const char *l = r->id.launcher;
    int k = !strcmp(l, "torchrun") ? 0 : !strcmp(l, "openmpi") ? 1 : !strcmp(l, "slurm") ? 2 : -1;
    return k < 0 ? NULL : v[k][which];
}

void gt_sum_rank_unknown_why(const struct gt_recfile *r, int which, char *buf, size_t n)
{
    const char *var = rank_var(r, which);
    if (var)
        snprintf(buf, n, "%s unset or not a number (launcher %s)", var, gt_esc(r->id.launcher));
    else
        snprintf(buf, n,
                 "no launcher variable (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID); the net "
                 "plugin API passes no rank");
}

#define CUDA_UNKNOWN_WHY "libcuda.so.1 not loadable or cuDriverGetVersion failed"

const char *gt_sum_fmt_int(int v, char *buf, size_t n)
{
    if (v < 0)
        snprintf(buf, n, "?");
    else
        snprintf(buf, n, "%d", v);
    return buf;
}

/* NCCL's version code: 22803 -> 2.28.3 (2.9+: M*10000+m*100+p; older M*1000+m*100+p). */
const char *gt_sum_fmt_nccl(int v, char *buf, size_t n)
{
    if (v <= 0)
        snprintf(buf, n, "?");
    else if (v >= 10000)
        snprintf(buf, n, "%d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
    else
        snprintf(buf, n, "%d.%d.%d", v / 1000, v % 1000 / 100, v % 100);
    return buf;
}

/* One line naming each unknown identity value of r and why, or nothing. */
static void text_unknowns(FILE *f, const struct gt_recfile *r, const char *ind)
{
    char why[1024] = "", b[200];
    if (r->id.rank < 0 || r->id.world_size < 0 || r->id.local_rank < 0) {
        gt_sum_rank_unknown_why(r, r->id.rank < 0 ? 0 : r->id.world_size < 0 ? 2 : 1, b, sizeof(b));
        snprintf(why + strlen(why), sizeof(why) - strlen(why), "rank: %s. ", b);
    }
    if (r->id.nccl_version <= 0)
        snprintf(why + strlen(why), sizeof(why) - strlen(why), "NCCL: %s. ",
                 GT_SUM_NCCL_UNKNOWN_WHY);
    if (r->id.abi_version <= 0)
        snprintf(why + strlen(why), sizeof(why) - strlen(why),
                 "net ABI: NCCL has not called init yet. ");
    if (r->id.node.cuda_driver_version < 0)
        snprintf(why + strlen(why), sizeof(why) - strlen(why), "CUDA driver: %s.",
                 CUDA_UNKNOWN_WHY);
    if (!why[0])
        return;
    fprintf(f, "%s?        ", ind);
    gt_report_wrap(f, (int)strlen(ind) + 9, (int)strlen(ind) + 9, why);
}

/* ---- A communicator's counts ---- */

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

void gt_sum_comm_body(FILE *f, const struct gtr_comm *c, const char *ind, int flags)
{
    char b1[32], b2[32];
    int in = (int)strlen(ind) + 16;
    text_matrix(f, c, ind);
    char *txt = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&txt, &len);
    if (!m)
        return;
    fprintf(m, "%llu", (unsigned long long)c->fallback_count);
    text_reasons(m, c, GTR_FALLBACKS);
    if (c->fallback_count && c->fallback_last_errno)
        fprintf(m, "; last errno %d (%s)", c->fallback_last_errno,
                strerror(c->fallback_last_errno));
    fflush(m);
    fprintf(f, "%sfallbacks       ", ind);
    gt_report_wrap(f, in, in, txt);
    rewind(m);
    fprintf(m, "%llu", (unsigned long long)c->error_count);
    text_reasons(m, c, GTR_ERRORS);
    if (c->error_count && c->error_last_errno)
        fprintf(m, "; last errno %d (%s)", c->error_last_errno, strerror(c->error_last_errno));
    if (c->error_last_text[0])
        fprintf(m, "; last: \"%s\"", gt_esc(c->error_last_text));
    fputc(0, m);
    fclose(m);
    fprintf(f, "%serrors          ", ind);
    gt_report_wrap(f, in, in, txt);
    free(txt);
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
    if (c->hist[GTR_OP_SEND].count || c->hist[GTR_OP_RECV].count)
        fprintf(f,
                "%s                send, recv: post (isend/irecv) to the test() that finds it "
                "done,\n%s                including the wait for the peer (not a wire time)\n",
                ind, ind);
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

/* ---- --full's section of one process ---- */

/* "== process ...", where it was read from, its format, plugin, transport. */
static void proc_head(FILE *f, const struct gt_recfile *r)
{
    const struct gtr_identity *id = &r->id;
    char rk[3][16], line[1200];
    snprintf(line, sizeof(line), "== process %s pid %d  job %s  rank %s/%s (local %s)  %s",
             gt_esc(id->host), id->pid, id->job[0] ? gt_esc(id->job) : "-",
             gt_sum_fmt_int(id->rank, rk[0], sizeof(rk[0])),
             gt_sum_fmt_int(id->world_size, rk[1], sizeof(rk[1])),
             gt_sum_fmt_int(id->local_rank, rk[2], sizeof(rk[2])), gt_liveness_name(r->liveness));
    fputc('\n', f);
    gt_report_wrap(f, 0, 11, line);
    fprintf(f, "   source   ");
    gt_report_wrap(f, 12, 12, gt_esc(r->source));
    fprintf(f, "   format   %u.%u, %llu bytes\n", r->hdr.version_major, r->hdr.version_minor,
            (unsigned long long)r->hdr.file_size);
    char nv[24], abi[16];
    if (id->abi_version > 0)
        snprintf(abi, sizeof(abi), "v%d", id->abi_version);
    else
        snprintf(abi, sizeof(abi), "?");
    snprintf(line, sizeof(line), "%s  NCCL %s  net ABI %s  launcher %s",
             id->plugin_version[0] ? gt_esc(id->plugin_version) : "?",
             gt_sum_fmt_nccl(id->nccl_version, nv, sizeof(nv)), abi,
             id->launcher[0] ? gt_esc(id->launcher) : "-");
    fprintf(f, "   plugin   ");
    gt_report_wrap(f, 12, 12, line);
    text_unknowns(f, r, "   ");
    snprintf(line, sizeof(line), "%s (%s)", id->transport[0] ? gt_esc(id->transport) : "?",
             id->transport_why[0] ? gt_esc(id->transport_why) : "no reason recorded");
    fprintf(f, "   transport ");
    gt_report_wrap(f, 13, 13, line);
}

/* One "KEY=VALUE [source]" of the settings line, at column *at: after two
 * spaces when it fits, else on a line of its own, wrapped when even that is
 * too narrow; k: items already on the settings lines. */
static void settings_item(FILE *f, const char *item, int k, int *at)
{
    int w = gt_text_cols(item);
    if (!k) {
        fprintf(f, "   settings ");
        *at = 12;
    } else if (*at + 2 + w > GT_REPORT_COLS) {
        fprintf(f, "\n            ");
        *at = 12;
    } else {
        fprintf(f, "  ");
        *at += 2;
    }
    if (*at + w <= GT_REPORT_COLS) {
        fputs(item, f);
        *at += w;
        return;
    }
    /* alone on its line and still too long */
    char *nl = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&nl, &len);
    if (m) {
        gt_report_wrap(m, *at, 14, item);
        fclose(m);
        if (len && nl[len - 1] == '\n')
            nl[len - 1] = 0;
        fputs(nl, f);
        const char *last = strrchr(nl, '\n');
        *at = last ? gt_text_cols(last + 1) : *at + gt_text_cols(nl);
    }
    free(nl);
}

/* The "nccl" lines of r (nothing when r records none): each setting NCCL
 * read, with where from, then how many stayed at NCCL's defaults. */
static void proc_nccl_settings(FILE *f, const struct gt_recfile *r)
{
    if (!gt_ncclcfg_recorded(r))
        return;
    int shown = 0, dflt = 0;
    char t[320];
    for (uint32_t i = 0; i < r->nset; i++) {
        const struct gtr_setting *s = &r->settings[i];
        if (!s->in_use || !gt_nccl_cfg_find(s->key))
            continue;
        if (s->source == GT_SRC_DEFAULT) {
            dflt++;
            continue;
        }
        fprintf(f, "%s%s\n", shown ? "            " : "   nccl     ",
                gt_esc(gt_ncclcfg_text(s, t, sizeof(t))));
        shown++;
    }
    fprintf(f,
            "%s%s%d other NCCL setting(s) deciding GPU Direct and the transport unset "
            "(NCCL's defaults)\n",
            shown ? "            " : "   nccl     ", shown ? "" : "none set: ", dflt);
}

/* The settings in force (1.2+), as many to a line as fit, each with its
 * source, then NCCL's own; older recorders: the policy line. */
static void proc_settings(FILE *f, const struct gt_recfile *r)
{
    const struct gtr_identity *id = &r->id;
    if (!r->nset) {
        char line[1200];
        snprintf(line, sizeof(line), "GDRTRACE_REG=%s GDRTRACE_ALLOW_PEERMEM=%u%s%s",
                 id->policy_reg[0] ? gt_esc(id->policy_reg) : "?", id->policy_allow_peermem,
                 id->policy_text[0] ? "  set: " : "", gt_esc(id->policy_text));
        fprintf(f, "   policy   ");
        gt_report_wrap(f, 12, 12, line);
        return;
    }
    int k = 0, at = 0;
    for (uint32_t i = 0; i < r->nset; i++) {
        const struct gtr_setting *s = &r->settings[i];
        if (!s->in_use || gt_nccl_cfg_find(s->key)) /* NCCL's own: their lines below */
            continue;
        char src[112], item[600];
        gt_setting_source_text(s, src, sizeof(src));
        snprintf(item, sizeof(item), "%s=%s [%s]", gt_esc(s->key), gt_esc(s->value), gt_esc(src));
        settings_item(f, item, k++, &at);
    }
    if (k)
        fputc('\n', f);
    proc_nccl_settings(f, r);
    if (id->policy_text[0]) {
        fprintf(f, "   set      ");
        gt_report_wrap(f, 12, 12, gt_esc(id->policy_text));
    }
}

/* The node's fingerprint: kernel, driver, peermem, CUDA, RDMA devices, GPUs. */
static void proc_node(FILE *f, const struct gt_recfile *r)
{
    const struct gtr_fingerprint *fp = &r->id.node;
    static const char *flav[] = {"unknown", "open", "proprietary", "absent"};
    char cu[16], line[1200];
    snprintf(line, sizeof(line), "kernel %s, nvidia %s %s, peermem %s, CUDA driver %s",
             fp->kernel_release[0] ? gt_esc(fp->kernel_release) : "?",
             fp->nvidia_flavour <= GTR_NV_ABSENT ? flav[fp->nvidia_flavour] : "unknown",
             fp->nvidia_version[0] ? gt_esc(fp->nvidia_version) : "-",
             fp->peermem_loaded ? "loaded"
             : fp->memory_peers ? "memory_peers"
                                : "absent",
             gt_sum_fmt_int(fp->cuda_driver_version, cu, sizeof(cu)));
    fprintf(f, "   node     ");
    gt_report_wrap(f, 12, 12, line);
    snprintf(line, sizeof(line), "rdma %s; gpus %s",
             fp->rdma_devices[0] ? gt_esc(fp->rdma_devices) : "none",
             fp->gpus[0] ? gt_esc(fp->gpus) : "none");
    fprintf(f, "            ");
    gt_report_wrap(f, 12, 14, line);
}

/* The devices the plugin exposed, their probes and why. */
static void proc_devices(FILE *f, const struct gt_recfile *r)
{
    char b[64];
    int hdr = 0;
    for (uint32_t k = 0; k < r->ndev; k++) {
        const struct gtr_device *d = &r->devs[k];
        if (!d->in_use)
            continue;
        if (!hdr++)
            fprintf(f, "   devices  %-3s %-12s %-9s %-16s %-15s %-11s %s\n", "dev", "name",
                    "transport", "ptrSupport", "dmabuf", "peermem", "cuda-dmabuf");
        char e[16] = "";
        if (d->probe_dmabuf_errno)
            snprintf(e, sizeof(e), "(%d)", d->probe_dmabuf_errno);
        char pd[64];
        snprintf(pd, sizeof(pd), "%s%s", gt_probe_name(d->probe_dmabuf), e);
        fprintf(f, "            %-3d ", d->dev);
        gt_text_cell(f, gt_esc(d->name), 12, 16);
        gt_text_cell(f, gt_esc(d->transport), 9, 29);
        fprintf(f, "%-16s %-15s %-11s %s\n", gt_fmt_ptr(d->ptr_support, b, sizeof(b)), pd,
                gt_probe_name(d->probe_peermem), gt_probe_name(d->probe_cuda_dmabuf));
        if (d->why[0]) {
            fprintf(f, "                why ");
            gt_report_wrap(f, 20, 20, gt_esc(d->why));
        }
    }
    if (!hdr)
        fprintf(f, "   devices  none recorded\n");
}

/* With GT_REPORT_EVENTS: the last few fallbacks and errors, newest last. */
static void proc_last_events(FILE *f, const struct gt_recfile *r)
{
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
    for (size_t i = 0; i < nlast; i++) {
        char line[1200];
        snprintf(line, sizeof(line), "%+.6fs %s dev %d comm-slot %u errno %d (%s) reason %s",
                 gt_recfile_ts_rel_s(r, last[i].ts), gt_event_name(last[i].type), last[i].dev,
                 last[i].comm_slot, last[i].err, strerror(last[i].err),
                 gt_reason_name((int)last[i].aux));
        fprintf(f, "            ");
        gt_report_wrap(f, 12, 14, line);
    }
}

/* The event ring: its counts, by kind, and the recent problems. */
static void proc_events(FILE *f, const struct gt_recfile *r, int flags)
{
    if (!r->has_ring)
        return;
    const struct gt_ring_stats *rs = &r->rs;
    fprintf(f, "   events   %llu slots, %llu written: %llu complete, %llu torn, %llu overwritten",
            (unsigned long long)rs->capacity, (unsigned long long)rs->head,
            (unsigned long long)rs->complete, (unsigned long long)rs->torn,
            (unsigned long long)rs->overwritten);
    if (rs->bad)
        fprintf(f, ", %llu invalid", (unsigned long long)rs->bad);
    fputc('\n', f);
    /* counts by kind, wrapped under themselves (a run with every kind
     * is about 150 columns) */
    char kinds[1024];
    size_t kl = 0;
    kinds[0] = '\0';
    for (int t = 1; t < GTR_EV_COUNT; t++)
        if (rs->by_type[t] && kl < sizeof(kinds))
            kl += (size_t)snprintf(kinds + kl, sizeof(kinds) - kl, "%s%s %llu", kl ? ", " : "",
                                   gt_event_name(t), (unsigned long long)rs->by_type[t]);
    if (kl) {
        fputs("            ", f);
        gt_report_wrap(f, 12, 12, kinds);
    }
    if (flags & GT_REPORT_EVENTS)
        proc_last_events(f, r);
}

/* Each communicator the process holds, in detail, with its verdict. */
static void proc_comms(FILE *f, const struct gt_recfile *r, int flags)
{
    struct gtr_comm *c = malloc(sizeof(*c));
    if (!c)
        return;
    for (uint32_t h = 0; h < r->nheld; h++) {
        uint32_t s = r->comm_slot[h];
        int nsib;
        if (!gt_recfile_comm_group(r, s, c, &nsib))
            continue;
        struct gt_verdict v;
        const struct gt_recfile *ctx = r;
        gt_verdict_of(c, &ctx, 1, &v);
        char sib[32] = "", b[64], line[1200];
        if (nsib > 1)
            snprintf(sib, sizeof(sib), " + %d sibling slot(s)", nsib - 1);
        char dv[48], ab[16];
        if (c->dev >= 0)
            snprintf(dv, sizeof(dv), "dev %d", c->dev);
        else
            snprintf(dv, sizeof(dv), "dev ? (no connection yet)");
        if (c->abi_version > 0)
            snprintf(ab, sizeof(ab), "v%d", c->abi_version);
        else
            snprintf(ab, sizeof(ab), "?");
        snprintf(line, sizeof(line), "comm %s  (slot %u%s, net ABI %s, %s, %s)",
                 gt_esc(gt_fmt_comm(c, r, b, sizeof(b))), s, sib, ab, dv,
                 c->state == GTR_COMM_FINALIZED ? "finalized" : "active");
        fprintf(f, "\n   ");
        gt_report_wrap(f, 3, 8, line);
        gt_sum_comm_body(f, c, "     ", flags);
        snprintf(line, sizeof(line), "%s: %s", gt_verdict_label(v.code, v.emulated), gt_esc(v.why));
        fprintf(f, "     verdict         ");
        gt_report_wrap(f, 21, 21, line);
    }
    free(c);
}

void gt_report_process(FILE *f, const struct gt_recfile *r, int flags)
{
    proc_head(f, r);
    proc_settings(f, r);
    proc_node(f, r);
    proc_devices(f, r);
    proc_events(f, r, flags);
    proc_comms(f, r, flags);
}
