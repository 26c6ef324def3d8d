/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_export.c — `gdrtrace export [--prometheus|--json] [-o FILE] [PATH...]`:
 * metrics for node_exporter's textfile collector (Prometheus text exposition
 * format 0.0.4) or as JSON.  Every family is printed whole (HELP, TYPE, then
 * its samples), label values are escaped (\\ \" \n), and -o writes through a
 * temporary file in FILE's folder and rename() so the collector never reads a
 * half file; FILE must be absent or a regular file (a FIFO or device node is
 * refused, tools/lib/outfile.h).  Exit: 0, 1 output not written, 2 unreadable input, 64 usage.
 *
 * Labels follow Prometheus' conventions: no label named like a target label
 * (job, instance: the job is `gdrtrace_job`), and by default no per-process
 * label (pid, rank), because each run would make new series: samples with
 * equal names and labels are summed (per host, job, communicator, device).
 * Every sample is buffered, merged, and printed in first-seen order, so each
 * family stays whole.  Exited or crashed recorders whose last activity is
 * older than --exited-within are left out (a comment line counts them).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/hist.h"
#include "tools/lib/coll.h"
#include "tools/cmd/commands.h"
#include "tools/cmd/options.h"
#include "tools/lib/duration.h"
#include "tools/lib/esc.h"
#include "tools/lib/hist.h"
#include "tools/lib/outfile.h"
#include "tools/lib/recfact.h"
#include "tools/render/json_export.h"
#include "tools/render/prom.h"
#include "tools/lib/load.h"
#include "tools/render/json.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gdrtrace export [--prometheus|--json] [-o FILE] [--job J] [--per-process]\n"
            "                       [--exited-within DURATION] [--quiet] [PATH...]\n"
            "  Metrics of every recorder (default: $GDRTRACE_DIR) in Prometheus text format\n"
            "  (for node_exporter's textfile collector; -o FILE replaces FILE atomically,\n"
            "  and only if it is a regular file) or JSON.  Families:\n"
            "  gdrtrace_registrations_total, gdrtrace_registered_bytes_total,\n"
            "  gdrtrace_fallbacks_total, gdrtrace_errors_total, gdrtrace_latency_seconds\n"
            "  (summary: _sum, _count; quantiles 0.5/0.95/0.99 with --per-process),\n"
            "  gdrtrace_messages_total,\n"
            "  gdrtrace_message_bytes_total, gdrtrace_verdict, gdrtrace_job_verdict,\n"
            "  gdrtrace_events_total, gdrtrace_recorders; with host pressure (format 1.5)\n"
            "  gdrtrace_host_cpu_seconds_total, gdrtrace_host_data_path_thread_cpu_seconds_total,\n"
            "  gdrtrace_host_staging_bytes, gdrtrace_host_staging_high_water_bytes,\n"
            "  gdrtrace_host_{resident,locked,pinned}_high_water_bytes.  Labels: host,\n"
            "  gdrtrace_job, comm, device, ...; samples of one host, job and communicator\n"
            "  are summed.\n"
            "  --per-process         add rank and pid labels (a new series per process and\n"
            "                        run) and the latency quantiles\n"
            "  --exited-within D     leave out exited or crashed recorders whose last\n"
            "                        activity is older than D (default 15m: a whole number\n"
            "                        and a unit s, m, h, d or w); archives keep them all\n"
            "  --quiet               no note on stderr when no recorder is found (for a\n"
            "                        timer: an idle node is normal); errors still "
            "printed\n" GT_ACCEPT_OWNER_USAGE
            "exit: 0 ok, 1 output not written, 2 an input could not be read, 64 usage\n");
}

/* Sets label n to key = the formatted value; returns n + 1. */
__attribute__((format(printf, 4, 5))) static int label(struct gt_prom_label *l, int n,
                                                       const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    l[n].k = key;
    vsnprintf(l[n].v, sizeof(l[n].v), fmt, ap);
    va_end(ap);
    return n + 1;
}

/* The families, in the order they are printed (each whole). */
enum {
    F_RECORDERS,
    F_REGS,
    F_REG_BYTES,
    F_FALLBACKS,
    F_ERRORS,
    F_LATENCY,
    F_MSGS,
    F_MSG_BYTES,
    F_VERDICT,
    F_JOB_VERDICT,
    F_EVENTS,
    F_COUNT,
    /* host pressure (format 1.5): registered after the others, and only
     * when some recorder has a host section */
    F_HOST_CPU = F_COUNT,
    F_HOST_THREAD_CPU,
    F_HOST_STAGING,
    F_HOST_STAGING_HWM,
    F_HOST_RSS_HWM,
    F_HOST_LOCKED_HWM,
    F_HOST_PINNED_HWM,
    F_HOST_END
};

static const struct gt_prom_family fams[F_COUNT] = {
    [F_RECORDERS] = {"gdrtrace_recorders", "gauge",
                     "Recorders exported, by identity and state of the producer."},
    [F_REGS] = {"gdrtrace_registrations_total", "counter",
                "Memory registrations: what NCCL asked (dmabuf, cuda, host) and what the plugin "
                "did (method)."},
    [F_REG_BYTES] = {"gdrtrace_registered_bytes_total", "counter",
                     "Bytes registered, by asked and method."},
    [F_FALLBACKS] = {"gdrtrace_fallbacks_total", "counter",
                     "Registrations that fell back from DMA-BUF, by reason."},
    [F_ERRORS] = {"gdrtrace_errors_total", "counter", "Errors recorded, by reason."},
    [F_LATENCY] = {"gdrtrace_latency_seconds", "summary",
                   "Latency per operation (reg, dereg, send, recv, flush) from the recorder's "
                   "histograms (quantiles with --per-process only: they cannot be summed)."},
    [F_MSGS] = {"gdrtrace_messages_total", "counter", "Completed sends, receives and flushes."},
    [F_MSG_BYTES] = {"gdrtrace_message_bytes_total", "counter", "Bytes sent and received."},
    [F_VERDICT] = {"gdrtrace_verdict", "gauge", "Processes whose communicator has this verdict."},
    [F_JOB_VERDICT] = {"gdrtrace_job_verdict", "gauge",
                       "1 for the verdict of everything exported (all jobs given, recorders left "
                       "out by --exited-within not counted)."},
    [F_EVENTS] = {"gdrtrace_events_total", "counter",
                  "Event ring records by class: complete, torn (a writer died mid-record), "
                  "overwritten (the ring wrapped)."},
};

static const struct gt_prom_family host_fams[F_HOST_END - F_COUNT] = {
    [F_HOST_CPU - F_COUNT] = {"gdrtrace_host_cpu_seconds_total", "counter",
                              "CPU time of the traced processes since each started, by mode "
                              "(user, system), at their recorders' last host-pressure sample."},
    [F_HOST_THREAD_CPU - F_COUNT] = {"gdrtrace_host_data_path_thread_cpu_seconds_total", "counter",
                                     "CPU time of the threads that drove the data path "
                                     "(isend/irecv/test: NCCL's proxy threads) since each was "
                                     "first seen."},
    [F_HOST_STAGING - F_COUNT] = {"gdrtrace_host_staging_bytes", "gauge",
                                  "Host memory registered for the data path (NCCL_PTR_HOST: "
                                  "staging) now."},
    [F_HOST_STAGING_HWM - F_COUNT] = {"gdrtrace_host_staging_high_water_bytes", "gauge",
                                      "The most host memory registered for the data path at "
                                      "once, summed over processes."},
    [F_HOST_RSS_HWM - F_COUNT] = {"gdrtrace_host_resident_high_water_bytes", "gauge",
                                  "Resident memory high-water (VmHWM), summed over processes."},
    [F_HOST_LOCKED_HWM - F_COUNT] = {"gdrtrace_host_locked_high_water_bytes", "gauge",
                                     "Locked memory high-water (VmLck), summed over processes."},
    [F_HOST_PINNED_HWM - F_COUNT] = {"gdrtrace_host_pinned_high_water_bytes", "gauge",
                                     "Pinned memory high-water (VmPin), summed over processes."},
};

/* Base labels of one process (+ comm, device). */
static int per_process;

/* An integer label whose -1 means "not known" (device, nccl_version, rank):
 * `unknown`, not a number that reads like one. */
static int label_int(struct gt_prom_label *l, int n, const char *key, int v)
{
    return v < 0 ? label(l, n, key, "unknown") : label(l, n, key, "%d", v);
}

/* The comm label.  A communicator without an id from NCCL (ABI <= v10, or
 * past the recorder's table) is named after its process by the reader
 * ("process host:pid"): a new series each run.  Without --per-process such
 * communicators of one host, job and device are summed under `none` or
 * `overflow`, like every other per-process difference. */
static void comm_label(struct gt_prom_label *l, const struct gt_recfile *r,
                       const struct gtr_comm *c)
{
    l->k = "comm";
    if (!c->has_comm_id && !per_process)
        snprintf(l->v, sizeof(l->v), "none");
    else if (c->has_comm_id == GT_COMM_OVERFLOW && !per_process)
        snprintf(l->v, sizeof(l->v), "overflow");
    else
        gt_fmt_comm(c, r, l->v, sizeof(l->v));
}

static int base_labels(struct gt_prom_label *l, const struct gt_recfile *r,
                       const struct gtr_comm *c)
{
    int n = 0;
    n = label(l, n, "host", "%s", r->id.host);
    n = label(l, n, "gdrtrace_job", "%s", r->id.job);
    if (per_process) {
        n = label_int(l, n, "rank", r->id.rank);
        n = label(l, n, "pid", "%d", r->id.pid);
    }
    if (c) {
        comm_label(&l[n++], r, c);
        n = label_int(l, n, "device", c->dev);
    }
    return n;
}

/* The samples of one recorder's communicators (sibling slots summed into
 * grp), emitted while it is whole (the fold's each hook): every family but
 * the recorders, the job's verdict and the events.  seen[] counts its
 * communicators' verdicts, for the job's verdict when some are left out. */
static void emit_comms(struct gt_prom *k, const struct gt_recfile *r, struct gtr_comm *grp,
                       int *seen)
{
    struct gt_prom_label l[12];
    int n;
    for (uint32_t h = 0; h < r->nheld; h++) {
        uint32_t s = r->comm_slot[h];
        if (!gt_recfile_comm_group(r, s, grp, NULL))
            continue;
        const struct gtr_comm *c = grp;
        /* registrations by what NCCL asked and what the plugin did: their
         * count, and their bytes; pairs never used are left out of both */
        for (int bytes = 0; bytes < 2; bytes++)
            for (int a = 0; a < GTR_ASKED_COUNT; a++)
                for (int m = 0; m < GTR_METHOD_COUNT; m++) {
                    if (!c->reg_count[a][m])
                        continue;
                    n = base_labels(l, r, c);
                    n = label(l, n, "asked", "%s", gt_asked_name(a));
                    n = label(l, n, "method", "%s", gt_method_name(m));
                    gt_prom_sample(k, bytes ? F_REG_BYTES : F_REGS, NULL, l, n,
                                   (double)(bytes ? c->reg_bytes[a][m] : c->reg_count[a][m]));
                }
        for (int kind = 0; kind < 2; kind++) /* fallbacks, errors: by reason */
            for (unsigned i = 0; i < GTR_REASON_SLOTS; i++) {
                int rk = kind ? GTR_ERRORS : GTR_FALLBACKS;
                if (!gtr_reason_count(c, rk, i))
                    continue;
                n = base_labels(l, r, c);
                n = label(l, n, "reason", "%s", gt_reason_slot_name((int)i));
                gt_prom_sample(k, kind ? F_ERRORS : F_FALLBACKS, NULL, l, n,
                               (double)gtr_reason_count(c, rk, i));
            }
        for (int op = 0; op < GTR_OP_COUNT; op++) {
            const struct gtr_hist *h = &c->hist[op];
            if (!h->count)
                continue;
            static const double q[] = {0.5, 0.95, 0.99};
            static const char *qs[] = {"0.5", "0.95", "0.99"};
            n = base_labels(l, r, c);
            n = label(l, n, "op", "%s", gt_op_name(op));
            for (int i = 0; per_process && i < 3; i++) {
                l[n].k = "quantile";
                snprintf(l[n].v, sizeof(l[0].v), "%s", qs[i]);
                gt_prom_sample(k, F_LATENCY, NULL, l, n + 1,
                               (double)gt_hist_quantile(h, q[i]) / 1e9);
            }
            gt_prom_sample(k, F_LATENCY, "_sum", l, n, (double)h->sum_ns / 1e9);
            gt_prom_sample(k, F_LATENCY, "_count", l, n, (double)h->count);
        }
        const uint64_t v[3] = {c->send_count, c->recv_count, c->flush_count};
        static const char *ops[3] = {"send", "recv", "flush"};
        for (int i = 0; i < 3; i++) {
            n = base_labels(l, r, c);
            n = label(l, n, "op", "%s", ops[i]);
            gt_prom_sample(k, F_MSGS, NULL, l, n, (double)v[i]);
        }
        n = base_labels(l, r, c);
        l[n].k = "op";
        snprintf(l[n].v, sizeof(l[0].v), "send");
        gt_prom_sample(k, F_MSG_BYTES, NULL, l, n + 1, (double)c->send_bytes);
        snprintf(l[n].v, sizeof(l[0].v), "recv");
        gt_prom_sample(k, F_MSG_BYTES, NULL, l, n + 1, (double)c->recv_bytes);
        struct gt_verdict vd;
        gt_verdict_of(c, &r, 1, &vd);
        if (vd.code >= 0 && vd.code < GT_V_COUNT)
            seen[vd.code]++;
        n = base_labels(l, r, c);
        n = label(l, n, "verdict", "%s", gt_verdict_label(vd.code, vd.emulated));
        gt_prom_sample(k, F_VERDICT, NULL, l, n, 1);
    }
}

/* One process's host pressure (format 1.5; the section survives the fold):
 * counters of CPU seconds, gauges of bytes; summed like every family when
 * processes share their labels (per host and job). */
static void emit_host(struct gt_prom *k, const struct gt_recfile *r)
{
    struct gt_prom_label l[12];
    const struct gtr_host *h = r->host;
    int n = base_labels(l, r, NULL);
    l[n].k = "mode";
    snprintf(l[n].v, sizeof(l[0].v), "user");
    gt_prom_sample(k, F_HOST_CPU, NULL, l, n + 1, (double)h->utime_ns / 1e9);
    snprintf(l[n].v, sizeof(l[0].v), "system");
    gt_prom_sample(k, F_HOST_CPU, NULL, l, n + 1, (double)h->stime_ns / 1e9);
    double thr = 0;
    for (uint32_t i = 0; i < h->nthreads && i < GTR_HOST_THREADS; i++)
        if (h->threads[i].tid && h->threads[i].cpu_ns > h->threads[i].cpu_first_ns)
            thr += (double)(h->threads[i].cpu_ns - h->threads[i].cpu_first_ns) / 1e9;
    gt_prom_sample(k, F_HOST_THREAD_CPU, NULL, l, n, thr);
    gt_prom_sample(k, F_HOST_STAGING, NULL, l, n, (double)h->staging_bytes);
    gt_prom_sample(k, F_HOST_STAGING_HWM, NULL, l, n, (double)h->staging_hwm_bytes);
    gt_prom_sample(k, F_HOST_RSS_HWM, NULL, l, n, (double)h->rss_hwm_bytes);
    gt_prom_sample(k, F_HOST_LOCKED_HWM, NULL, l, n, (double)h->locked_hwm_bytes);
    gt_prom_sample(k, F_HOST_PINNED_HWM, NULL, l, n, (double)h->pinned_hwm_bytes);
}

/* The families read from the reduced recorders, after the fold: the
 * recorders and their events (those kept: out[i] 0), the job's verdict. */
static void emit_rest(struct gt_prom *k, const struct gt_job *j, const unsigned char *out,
                      const struct gt_verdict *overall)
{
    struct gt_prom_label l[12];
    int n;
    k->rec = SIZE_MAX;
    for (size_t i = 0; i < j->nrec; i++) {
        const struct gt_recfile *r = &j->recs[i];
        if (out[i])
            continue;
        k->pos = i;
        n = base_labels(l, r, NULL);
        n = label(l, n, "state", "%s", gt_liveness_name(r->liveness));
        n = label_int(l, n, "nccl_version", r->id.nccl_version);
        n = label(l, n, "plugin_version", "%s", r->id.plugin_version);
        n = label(l, n, "transport", "%s", r->id.transport);
        n = label(l, n, "policy_reg", "%s", gt_rec_reg_name(r));
        n = label(l, n, "kernel", "%s", r->id.node.kernel_release);
        gt_prom_sample(k, F_RECORDERS, NULL, l, n, 1);
        if (r->has_ring) {
            const uint64_t v[3] = {r->rs.complete, r->rs.torn, r->rs.overwritten};
            static const char *cls[3] = {"complete", "torn", "overwritten"};
            for (int q = 0; q < 3; q++) {
                n = base_labels(l, r, NULL);
                n = label(l, n, "class", "%s", cls[q]);
                gt_prom_sample(k, F_EVENTS, NULL, l, n, (double)v[q]);
            }
        }
        if (r->has_host)
            emit_host(k, r);
    }
    k->pos = 0;
    n = label(l, 0, "verdict", "%s", gt_verdict_label(overall->code, overall->emulated));
    gt_prom_sample(k, F_JOB_VERDICT, NULL, l, n, 1);
}

/* Collective metrics (format 1.6, tools/lib/coll.h), communicator-wide: the
 * histograms were merged across ranks, so these quantiles need no summing.
 * Where a series means what NCCL Inspector's Prometheus mode exports, its
 * name and labels (comm_name, n_nodes, nranks, collective, message_size,
 * algo_proto), plus `registration`: the communicator's verdict.  Families
 * are added only when some recorder has the collective sections, so the
 * output of older runs is unchanged. */
static void emit_coll(struct gt_prom *k, const struct gt_job *j)
{
    const struct gt_coll_model *m = j->coll;
    if (!m)
        return;
    size_t f0 = k->nfam;
    gt_prom_family(k, "nccl_bus_bandwidth_gbs", "gauge",
                   "Bus bandwidth (GB/s) per collective and message size, from the mean duration "
                   "(NCCL Inspector's name and labels; registration: gdrtrace's verdict).");
    gt_prom_family(k, "nccl_collective_exec_time_microseconds", "gauge",
                   "Mean duration of a collective (microseconds), as NCCL Inspector names it.");
    gt_prom_family(k, "gdrtrace_collective_latency_seconds", "summary",
                   "Collective and point-to-point durations per communicator, function and message "
                   "size (quantiles of the ranks' merged histograms).");
    gt_prom_family(
        k, "gdrtrace_collectives_total", "counter",
        "Collective and point-to-point operations NCCL started, per communicator, function "
        "and message size.");
    gt_prom_family(k, "gdrtrace_collective_bytes_total", "counter", "Their message bytes.");
    gt_prom_family(k, "gdrtrace_collective_metrics_absent", "gauge",
                   "Processes whose recorder holds no collective metrics, by why.");
    k->rec = SIZE_MAX;
    k->pos = 0;
    struct gt_prom_label l[12];
    for (size_t i = 0; i < m->ncomm; i++) {
        const struct gt_coll_mcomm *c = &m->comms[i];
        const char *reg = "unknown";
        for (size_t q = 0; q < j->ncomm; q++)
            if (c->has_id && j->comms[q].has_comm_id == 1 && j->comms[q].comm_id == c->comm_id)
                reg = gt_verdict_name(j->comms[q].v.code);
        for (size_t x = 0; x < c->ncell; x++) {
            const struct gt_coll_mcell *y = &c->cells[x];
            const struct gtr_hist *h = &y->hist;
            char ms[32], ap[40];
            gt_coll_size_label(y->size_log2, ms, sizeof(ms));
            gt_coll_algo_proto(y, ap, sizeof(ap));
            int n = 0;
            if (c->name[0])
                n = label(l, n, "comm_name", "%s", c->name);
            else
                n = label(l, n, "comm_name", "0x%llx", (unsigned long long)c->comm_id);
            n = label(l, n, "n_nodes", "%d", c->nnodes);
            n = label(l, n, "nranks", "%d", c->nranks);
            n = label(l, n, "collective", "%s", gt_coll_func_name(y->func));
            n = label(l, n, "message_size", "%s", ms);
            n = label(l, n, "algo_proto", "%s", ap);
            n = label(l, n, "registration", "%s", reg);
            double alg, bus;
            gt_coll_bw(c, y, &alg, &bus);
            if (h->count) {
                gt_prom_sample(k, f0, NULL, l, n, bus);
                gt_prom_sample(k, f0 + 1, NULL, l, n, (double)h->sum_ns / (double)h->count / 1e3);
            }
            n = label(l, 0, "comm", "0x%llx", (unsigned long long)c->comm_id);
            n = label(l, n, "collective", "%s", gt_coll_func_name(y->func));
            n = label(l, n, "message_size", "%s", ms);
            static const double qs[3] = {50, 95, 99};
            static const char *const qn[3] = {"0.5", "0.95", "0.99"};
            for (int q = 0; q < 3 && h->count; q++) {
                int nq = label(l, n, "quantile", "%s", qn[q]);
                gt_prom_sample(k, f0 + 2, NULL, l, nq,
                               (double)gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, qs[q]) /
                                   1e9);
            }
            gt_prom_sample(k, f0 + 2, "_sum", l, n, (double)h->sum_ns / 1e9);
            gt_prom_sample(k, f0 + 2, "_count", l, n, (double)h->count);
            gt_prom_sample(k, f0 + 3, NULL, l, n, (double)y->count);
            gt_prom_sample(k, f0 + 4, NULL, l, n, (double)y->bytes);
        }
    }
    for (int a = 0; a < m->nabsent; a++) {
        int n = label(l, 0, "why", "%s", m->absent[a].why);
        gt_prom_sample(k, f0 + 5, NULL, l, n, m->absent[a].n);
    }
}

/* What the fold keeps of each recorder for the --exited-within view, by the
 * index it was read under. */
struct exrec {
    int64_t act;          /* last activity (gt_last_activity_ns), unclamped */
    int seen[GT_V_COUNT]; /* its communicators' verdicts */
};

struct exfold {
    struct gt_prom *k;
    struct gtr_comm *grp;
    struct exrec *r;
    size_t cap;
    int oom;
};

/* inputs.h's each hook: recorder i is still whole here. */
static void each_rec(struct gt_inputs *in, size_t i, void *arg)
{
    struct exfold *x = arg;
    if (i >= x->cap) {
        size_t nc = x->cap ? 2 * x->cap : 64;
        while (nc <= i)
            nc *= 2;
        struct exrec *nr = realloc(x->r, nc * sizeof(*nr));
        if (!nr) {
            x->oom = 1;
            return;
        }
        x->r = nr;
        x->cap = nc;
    }
    const struct gt_recfile *r = &in->recs[i];
    memset(&x->r[i], 0, sizeof(x->r[i]));
    x->r[i].act = gt_last_activity_ns(r, INT64_MAX);
    x->k->rec = i;
    emit_comms(x->k, r, x->grp, x->r[i].seen);
}

/* Exited or crashed, not from an archive, and last active (act) before now - within. */
static int left_out_rec(const struct gt_recfile *r, int64_t act, int64_t now, int64_t within)
{
    int gone = r->liveness == GT_LIVE_EXITED || r->liveness == GT_LIVE_CRASHED;
    return gone && !r->from_archive && now - (act > now ? now : act) > within;
}

/* -1: go on; else the exit code */
static int parse(struct gt_opts *o, int64_t *within, int *quiet, int argc, char **argv)
{
    static const struct option opts[] = {{"prometheus", no_argument, 0, 'p'},
                                         GT_LONG_JSON,
                                         GT_LONG_OUTPUT,
                                         GT_LONG_JOB,
                                         {"per-process", no_argument, 0, 'P'},
                                         {"exited-within", required_argument, 0, 'E'},
                                         {"quiet", no_argument, 0, 'q'},
                                         GT_LONG_ACCEPT_OWNER,
                                         GT_LONG_HELP,
                                         {0, 0, 0, 0}};
    int c, rc;
    while ((c = getopt_long(argc, argv, "hjpqo:", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            o->json = 0;
            break;
        case 'P':
            per_process = 1;
            break;
        case 'q':
            *quiet = 1;
            break;
        case 'E':
            if (gt_parse_duration(optarg, within) != 0) {
                fprintf(stderr,
                        "gdrtrace export: --exited-within '%s' is not a duration: want a whole "
                        "number and a unit s, m, h, d or w (15m, 12h)\n",
                        gt_esc(optarg));
                return 64;
            }
            break;
        default:
            if ((rc = gt_opts_default(o, c, optarg, usage)) >= 0)
                return rc;
        }
    }
    return -1;
}

/* The view: live recorders, and exited/crashed ones of the last `within`
 * (gone[i] 0, by report position; the count of the others returned).
 * Archive members are a snapshot taken at dump time, so they all stay.
 * *overall: the verdict of what is kept. */
static size_t view(const struct gt_job *j, const struct exfold *x, int64_t within,
                   unsigned char *gone, struct gt_verdict *overall)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    size_t left_out = 0;
    for (size_t ri = 0; ri < j->nrec && j->rec_pos; ri++) {
        size_t i = j->rec_pos[ri];
        gone[i] = (unsigned char)left_out_rec(&j->recs[i], x->r[ri].act, now, within);
        left_out += gone[i];
    }
    *overall = j->overall;
    if (!left_out)
        return 0;
    /* the model's verdict counted them: combine what is kept */
    int seen[GT_V_COUNT] = {0};
    overall->emulated = 0;
    for (size_t ri = 0; ri < j->nrec; ri++) {
        size_t i = j->rec_pos[ri];
        if (gone[i])
            continue;
        overall->emulated |= j->recs[i].emulated;
        for (int v = 0; v < GT_V_COUNT; v++)
            seen[v] += x->r[ri].seen[v];
    }
    for (size_t i = 0; i < j->nfates; i++) { /* fates of the processes kept */
        int code = j->fates[i].f.code;
        if (j->fates[i].rec >= j->nrec || gone[j->fates[i].rec])
            continue;
        if (code >= 0 && code < GT_V_COUNT)
            seen[code]++;
    }
    overall->code = gt_verdict_combine_counts(seen);
    return left_out;
}

/* The samples read after the fold, merged, written to f as text or JSON;
 * 0, or 1 out of memory (said). */
static int write_metrics(FILE *f, int json, struct gt_prom *k, const struct gt_job *j,
                         const struct exfold *x, int64_t within, unsigned char *gone)
{
    struct gt_verdict overall;
    size_t left_out = view(j, x, within, gone, &overall);
    if (!json && left_out) /* nothing to say when none was left out */
        fprintf(f,
                "# gdrtrace: %zu exited or crashed recorder(s) left out: last activity older "
                "than --exited-within\n",
                left_out);
    int any_host = 0; /* host pressure's families: only when some kept recorder has it */
    for (size_t i = 0; i < j->nrec; i++)
        any_host |= j->recs[i].has_host && !(gone && gone[i]);
    for (size_t h = 0; any_host && h < F_HOST_END - F_COUNT; h++)
        gt_prom_family(k, host_fams[h].name, host_fams[h].type, host_fams[h].help);
    gt_prom_place(k, j->rec_pos, j->nrec, gone);
    emit_rest(k, j, gone, &overall);
    emit_coll(k, j);
    gt_prom_merge(k);
    if (json)
        gt_json_export(f, k);
    else
        gt_prom_text(f, k);
    if (!k->oom)
        return 0;
    fprintf(stderr, "gdrtrace export: out of memory\n");
    return 1;
}

/* -o FILE: written to tmp, then renamed over FILE; 0, or 1 (said) */
static int commit_out(FILE *f, const char *tmp, const char *out)
{
    char err[GT_ERRLEN];
    int bad = ferror(f) | (fclose(f) != 0);
    if (bad) {
        fprintf(stderr, "gdrtrace export: writing %s failed: %m\n", tmp);
        unlink(tmp);
        return 1;
    }
    if (gt_out_commit(tmp, out, 1, err, sizeof(err))) {
        fprintf(stderr, "gdrtrace export: %s\n", gt_esc(err));
        unlink(tmp);
        return 1;
    }
    return 0;
}

int gt_cmd_export(int argc, char **argv)
{
    struct gt_opts o = GT_OPTS_INIT("export");
    int quiet = 0;
    int64_t within = 15LL * 60 * 1000000000;
    int rc = parse(&o, &within, &quiet, argc, argv);
    if (rc >= 0)
        return rc;
    const char *out = o.out;
    char err[GT_ERRLEN];
    if (out && gt_out_check(out, 1, err, sizeof(err))) {
        fprintf(stderr, "gdrtrace export: %s\n", gt_esc(err));
        return 1;
    }
    /* Each recorder's communicator samples are taken while it is whole and
     * it is then reduced to its digest (fold mode): memory is the samples
     * and the digests, not the recorders. */
    struct gt_job j;
    struct gt_prom k = {0};
    for (size_t f = 0; f < F_COUNT; f++)
        gt_prom_family(&k, fams[f].name, fams[f].type, fams[f].help);
    struct exfold x = {.k = &k, .grp = malloc(sizeof(struct gtr_comm))};
    struct gt_inputs in = {.job = o.job, .quiet_empty = quiet, .each = each_rec, .each_arg = &x};
    gt_inputs_take_owners(&in, &o.owners);
    in.fold = &j;
    unsigned char *gone = NULL;
    FILE *f = stdout;
    char tmp[4200];
    if (!x.grp) {
        fprintf(stderr, "gdrtrace export: out of memory\n");
        return 1;
    }
    rc = gt_load_job(argv + optind, argc - optind, &in, &j);
    if (x.oom || (j.nrec && !(gone = calloc(j.nrec, 1)))) {
        fprintf(stderr, "gdrtrace export: out of memory\n");
        rc = 1;
        goto done;
    }
    if (out) {
        snprintf(tmp, sizeof(tmp), "%s.tmp.%d", out, (int)getpid());
        f = fopen(tmp, "wx");
        if (!f) {
            fprintf(stderr, "gdrtrace export: %s: %m\n", tmp);
            rc = 1;
            goto done;
        }
    }
    if (write_metrics(f, o.json, &k, &j, &x, within, gone))
        rc = 1;
    if (out && commit_out(f, tmp, out))
        rc = 1;
done:
    gt_prom_free(&k);
    free(gone);
    free(x.r);
    free(x.grp);
    gt_job_free(&j);
    gt_inputs_free(&in);
    return rc;
}
