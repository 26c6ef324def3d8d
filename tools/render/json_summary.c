/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_summary.c — `summary --json`: every process (identity, devices,
 * events, each communicator), every node, every communicator across
 * processes with its norm and the processes that differ from it, the three
 * groups, the collectives, the kernel's corroboration, the verdict.
 * Invariant: like the text, a function of the model alone (plus the
 * kernel's bufinfo, read now); keys and their order are the schema scripts
 * read (docs/reader.md).
 */
#include "tools/render/json_summary.h"

#include <stdlib.h>
#include <string.h>

#include "tools/lib/esc.h"
#include "tools/lib/hist.h"
#include "tools/lib/kcorr.h"
#include "tools/lib/owner.h"
#include "tools/lib/recfact.h"
#include "tools/render/json_ab.h"
#include "tools/render/json_coll.h"

static void kc_json(struct gt_json *js, const struct gt_job *j)
{
    struct gt_kcorr_job *v = malloc(sizeof(*v));
    if (!v || !gt_kcorr_of_job(j, v)) {
        free(v);
        return;
    }
    gj_obj(js, "kernel");
    gj_str(js, "bufinfo", v->k.path);
    gj_bool(js, "readable", v->k.readable);
    if (!v->k.readable)
        gj_str(js, "error", gt_kcorr_error(&v->k));
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

void gt_json_owner(struct gt_json *js, const struct gt_recfile *r)
{
    char o[64];
    gj_str(js, "owner", gt_owner_short(r->owner, o, sizeof(o)));
    gj_i64(js, "owner_uid", r->owner);
}

void gt_json_identity(struct gt_json *js, const struct gt_recfile *r)
{
    const struct gtr_identity *id = &r->id;
    gt_json_owner(js, r);
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
    gj_str(js, "policy_reg", gt_rec_reg_name(r));
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

/* The communicator's norm and the processes that differ from it (the
 * compact report's lines, whole: no limit). */
static void json_differing(struct gt_json *js, const struct gt_job *j, size_t ci)
{
    const struct gt_ccomm *x = &j->comms[ci];
    struct gt_comm_norm nm;
    if (gt_comm_norm(j, ci, &nm))
        return;
    gj_obj(js, "norm");
    gj_str(js, "verdict", gt_verdict_name(nm.majority));
    gj_u64(js, "processes_with_it", nm.nmajority);
    gj_obj(js, "p50_median_ns");
    for (int op = 0; op < GTR_OP_COUNT; op++)
        if (nm.nop[op])
            gj_u64(js, gt_op_name(op), nm.median[op]);
    gj_end(js, '}');
    gj_obj(js, "p50_mad_ns");
    for (int op = 0; op < GTR_OP_COUNT; op++)
        if (nm.nop[op])
            gj_u64(js, gt_op_name(op), nm.mad[op]);
    gj_end(js, '}');
    gj_end(js, '}');
    gj_arr(js, "differing");
    for (size_t k = 0; k < x->nrix; k++) {
        const struct gt_rank_comm *d = &j->ranks[j->rank_ix[x->rix + k]];
        unsigned slow;
        unsigned bits = gt_rank_differs(&nm, d, &slow);
        if (!bits)
            continue;
        const struct gt_recfile *r = &j->recs[d->rec];
        gj_obj(js, NULL);
        gj_i64(js, "rank", r->id.rank);
        gj_str(js, "host", r->id.host);
        gj_i64(js, "pid", r->id.pid);
        gj_str(js, "verdict", gt_verdict_name(d->verdict));
        gj_u64(js, "fallbacks", d->fallbacks);
        gj_u64(js, "errors", d->errors);
        gj_arr(js, "why");
        if (bits & GT_DIFF_VERDICT)
            gj_str(js, NULL, "verdict");
        if (bits & GT_DIFF_FALLBACK)
            gj_str(js, NULL, "fallbacks");
        if (bits & GT_DIFF_ERROR)
            gj_str(js, NULL, "errors");
        for (int op = 0; op < GTR_OP_COUNT; op++)
            if (slow & (1u << op)) {
                char w[32];
                snprintf(w, sizeof(w), "slow %s", gt_op_name(op));
                gj_str(js, NULL, w);
            }
        gj_end(js, ']');
        gj_obj(js, "p50_ns");
        for (int op = 0; op < GTR_OP_COUNT; op++)
            if (d->p50_ns[op])
                gj_u64(js, gt_op_name(op), d->p50_ns[op]);
        gj_end(js, '}');
        gj_end(js, '}');
    }
    gj_end(js, ']');
}

void gt_report_json(struct gt_json *js, const struct gt_job *j)
{
    gt_report_json_ex(js, j, NULL, NULL);
}

void gt_report_json_process(struct gt_json *js, const struct gt_recfile *r)
{
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
    for (uint32_t h = 0; c && h < r->nheld; h++) {
        uint32_t s = r->comm_slot[h];
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

void gt_report_json_ex(struct gt_json *js, const struct gt_job *j,
                       void (*extra)(struct gt_json *js, const void *arg), const void *arg)
{
    gt_report_json_procs(js, j, extra, arg, NULL);
}

void gt_report_json_procs(struct gt_json *js, const struct gt_job *j,
                          void (*extra)(struct gt_json *js, const void *arg), const void *arg,
                          char *const *procs)
{
    gj_obj(js, NULL);
    gj_arr(js, "processes");
    for (size_t i = 0; i < j->nrec; i++) {
        if (!procs) {
            gt_report_json_process(js, &j->recs[i]);
            continue;
        }
        /* written at this depth as a first item (gt_report_json_process):
         * the comma between items is ours */
        if (i)
            fputc(',', js->f);
        fputs(procs[i] ? procs[i] : "{}", js->f);
    }
    if (procs)
        js->count[js->depth] = (int)j->nrec;
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
        gj_arr(js, "ranks"); /* one digest per process, in report order */
        for (size_t k = 0; k < x->nrix; k++)
            gj_i64(js, NULL, j->recs[j->ranks[j->rank_ix[x->rix + k]].rec].id.rank);
        gj_end(js, ']');
        gt_json_comm_counts(js, x->sum);
        gt_json_latency(js, x->sum);
        json_verdict(js, &x->v);
        json_differing(js, j, i);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gt_ab_summary_json(js, j); /* nothing before format 1.5 */
    gt_coll_json(js, j->coll); /* nothing before format 1.6 */
    gj_i64(js, "hosts", j->nhosts);
    kc_json(js, j);
    json_verdict(js, &j->overall);
    if (extra)
        extra(js, arg);
    gj_end(js, '}');
    gj_done(js);
}
