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
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/hist.h"
#include "tools/lib/coll.h"
#include "tools/cmd/commands.h"
#include "tools/lib/duration.h"
#include "tools/lib/esc.h"
#include "tools/lib/hist.h"
#include "tools/lib/outfile.h"
#include "tools/render/summary.h"

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

struct lab {
    const char *k;
    char v[160];
};

/* Sets label n to key = the formatted value; returns n + 1. */
__attribute__((format(printf, 4, 5))) static int label(struct lab *l, int n, const char *key,
                                                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    l[n].k = key;
    vsnprintf(l[n].v, sizeof(l[n].v), fmt, ap);
    va_end(ap);
    return n + 1;
}

/* One buffered sample: key is "name\0k\0v\0k\0v\0..." (klen bytes).  Its
 * place in first-seen order is (pos, seq): the recorder's report position and
 * the order of emission; rec is the read index it was emitted under while
 * folding (SIZE_MAX: emitted after the fold, pos already final). */
struct smp {
    size_t fam, rec, pos, seq;
    char *key;
    size_t klen;
    int nl;
    double v;
};

struct fam {
    const char *name, *type, *help;
};

struct sink {
    FILE *f;
    int json, oom;
    struct gt_json js;
    struct fam fams[24];
    size_t nfam;
    struct smp *s;
    size_t ns, cap;
    size_t rec, pos, seq; /* stamped on the next sample */
};

/* Label values: escape \\ " and newline as the format requires; other control
 * bytes and invalid UTF-8 (untrusted recorder strings) become '?'. */
static void prom_escape(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        if (*p == '\\' || *p == '"')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20 || *p == 0x7f)
            fputc('?', f);
        else if (*p >= 0x80) {
            size_t n = gj_utf8_len(p);
            if (n)
                fwrite(p, 1, n, f);
            else
                fputc('?', f);
            p += n ? n : 1;
            continue;
        } else
            fputc(*p, f);
        p++;
    }
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

static const struct fam fams[F_COUNT] = {
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

static const struct fam host_fams[F_HOST_END - F_COUNT] = {
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

static void family(struct sink *k, const char *name, const char *type, const char *help)
{
    if (k->nfam < sizeof(k->fams) / sizeof(k->fams[0]))
        k->fams[k->nfam++] = (struct fam){name, type, help};
}

static void sample(struct sink *k, size_t fam, const char *suffix, const struct lab *l, int nl,
                   double v)
{
    if (k->oom || fam >= k->nfam)
        return;
    char name[128];
    snprintf(name, sizeof(name), "%s%s", k->fams[fam].name, suffix ? suffix : "");
    size_t len = strlen(name) + 1;
    for (int i = 0; i < nl; i++)
        len += strlen(l[i].k) + strlen(l[i].v) + 2;
    if (k->ns == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 256;
        struct smp *n = realloc(k->s, cap * sizeof(*n));
        if (!n) {
            k->oom = 1;
            return;
        }
        k->s = n;
        k->cap = cap;
    }
    char *key = malloc(len), *p = key;
    if (!key) {
        k->oom = 1;
        return;
    }
    p = stpcpy(p, name) + 1;
    for (int i = 0; i < nl; i++) {
        p = stpcpy(p, l[i].k) + 1;
        p = stpcpy(p, l[i].v) + 1;
    }
    k->s[k->ns] = (struct smp){fam, k->rec, k->pos, k->seq++, key, len, nl, v};
    k->ns++;
}

/* First-seen order: the recorder's report position, then emission. */
static int order_cmp(const struct smp *x, const struct smp *y)
{
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_key(const void *a, const void *b)
{
    const struct smp *x = a, *y = b;
    if (x->fam != y->fam)
        return x->fam < y->fam ? -1 : 1;
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp(x->key, y->key, n);
    if (c || x->klen == y->klen)
        return c ? c : order_cmp(x, y);
    return x->klen < y->klen ? -1 : 1;
}

static int by_seq(const void *a, const void *b)
{
    const struct smp *x = a, *y = b;
    if (x->fam != y->fam)
        return x->fam < y->fam ? -1 : 1;
    return order_cmp(x, y);
}

static void put(struct sink *k, const struct smp *m)
{
    const char *name = m->key, *p = name + strlen(name) + 1;
    if (k->json) {
        gj_obj(&k->js, NULL);
        gj_str(&k->js, "name", name);
        gj_obj(&k->js, "labels");
        for (int i = 0; i < m->nl; i++, p += strlen(p) + 1, p += strlen(p) + 1)
            gj_str(&k->js, p, p + strlen(p) + 1);
        gj_end(&k->js, '}');
        gj_dbl(&k->js, "value", m->v);
        gj_end(&k->js, '}');
        return;
    }
    fputs(name, k->f);
    if (m->nl) {
        fputc('{', k->f);
        for (int i = 0; i < m->nl; i++) {
            fprintf(k->f, "%s%s=\"", i ? "," : "", p);
            p += strlen(p) + 1;
            prom_escape(k->f, p);
            p += strlen(p) + 1;
            fputc('"', k->f);
        }
        fputc('}', k->f);
    }
    if (m->v == (double)(uint64_t)m->v && m->v < 1e18)
        fprintf(k->f, " %llu\n", (unsigned long long)m->v);
    else
        fprintf(k->f, " %.9g\n", m->v);
}

/* Sums samples of equal name and labels (first-seen order kept), prints
 * every family whole, and frees the buffer. */
static void flush_all(struct sink *k)
{
    size_t n = 0;
    if (k->ns)
        qsort(k->s, k->ns, sizeof(*k->s), by_key);
    for (size_t i = 0; i < k->ns; i++) {
        if (n && k->s[n - 1].fam == k->s[i].fam && k->s[n - 1].klen == k->s[i].klen &&
            !memcmp(k->s[n - 1].key, k->s[i].key, k->s[i].klen)) {
            k->s[n - 1].v += k->s[i].v;
            free(k->s[i].key);
            continue;
        }
        k->s[n++] = k->s[i];
    }
    if (n)
        qsort(k->s, n, sizeof(*k->s), by_seq);
    for (size_t f = 0; f < k->nfam; f++) {
        if (!k->json)
            fprintf(k->f, "# HELP %s %s\n# TYPE %s %s\n", k->fams[f].name, k->fams[f].help,
                    k->fams[f].name, k->fams[f].type);
        for (size_t i = 0; i < n; i++)
            if (k->s[i].fam == f)
                put(k, &k->s[i]);
    }
    for (size_t i = 0; i < n; i++)
        free(k->s[i].key);
    free(k->s);
    k->s = NULL;
    k->ns = k->cap = 0;
}

/* Base labels of one process (+ comm, device). */
static int per_process;

/* An integer label whose -1 means "not known" (device, nccl_version, rank):
 * `unknown`, not a number that reads like one. */
static int label_int(struct lab *l, int n, const char *key, int v)
{
    return v < 0 ? label(l, n, key, "unknown") : label(l, n, key, "%d", v);
}

/* The comm label.  A communicator without an id from NCCL (ABI <= v10, or
 * past the recorder's table) is named after its process by the reader
 * ("process host:pid"): a new series each run.  Without --per-process such
 * communicators of one host, job and device are summed under `none` or
 * `overflow`, like every other per-process difference. */
static void comm_label(struct lab *l, const struct gt_recfile *r, const struct gtr_comm *c)
{
    l->k = "comm";
    if (!c->has_comm_id && !per_process)
        snprintf(l->v, sizeof(l->v), "none");
    else if (c->has_comm_id == GT_COMM_OVERFLOW && !per_process)
        snprintf(l->v, sizeof(l->v), "overflow");
    else
        gt_fmt_comm(c, r, l->v, sizeof(l->v));
}

static int base_labels(struct lab *l, const struct gt_recfile *r, const struct gtr_comm *c)
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
static void emit_comms(struct sink *k, const struct gt_recfile *r, struct gtr_comm *grp, int *seen)
{
    struct lab l[12];
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
                    sample(k, bytes ? F_REG_BYTES : F_REGS, NULL, l, n,
                           (double)(bytes ? c->reg_bytes[a][m] : c->reg_count[a][m]));
                }
        for (int kind = 0; kind < 2; kind++) /* fallbacks, errors: by reason */
            for (unsigned i = 0; i < GTR_REASON_SLOTS; i++) {
                int rk = kind ? GTR_ERRORS : GTR_FALLBACKS;
                if (!gtr_reason_count(c, rk, i))
                    continue;
                n = base_labels(l, r, c);
                n = label(l, n, "reason", "%s", gt_reason_slot_name((int)i));
                sample(k, kind ? F_ERRORS : F_FALLBACKS, NULL, l, n,
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
                sample(k, F_LATENCY, NULL, l, n + 1, (double)gt_hist_quantile(h, q[i]) / 1e9);
            }
            sample(k, F_LATENCY, "_sum", l, n, (double)h->sum_ns / 1e9);
            sample(k, F_LATENCY, "_count", l, n, (double)h->count);
        }
        const uint64_t v[3] = {c->send_count, c->recv_count, c->flush_count};
        static const char *ops[3] = {"send", "recv", "flush"};
        for (int i = 0; i < 3; i++) {
            n = base_labels(l, r, c);
            n = label(l, n, "op", "%s", ops[i]);
            sample(k, F_MSGS, NULL, l, n, (double)v[i]);
        }
        n = base_labels(l, r, c);
        l[n].k = "op";
        snprintf(l[n].v, sizeof(l[0].v), "send");
        sample(k, F_MSG_BYTES, NULL, l, n + 1, (double)c->send_bytes);
        snprintf(l[n].v, sizeof(l[0].v), "recv");
        sample(k, F_MSG_BYTES, NULL, l, n + 1, (double)c->recv_bytes);
        struct gt_verdict vd;
        gt_verdict_of(c, &r, 1, &vd);
        if (vd.code >= 0 && vd.code < GT_V_COUNT)
            seen[vd.code]++;
        n = base_labels(l, r, c);
        n = label(l, n, "verdict", "%s", gt_verdict_label(vd.code, vd.emulated));
        sample(k, F_VERDICT, NULL, l, n, 1);
    }
}

/* One process's host pressure (format 1.5; the section survives the fold):
 * counters of CPU seconds, gauges of bytes; summed like every family when
 * processes share their labels (per host and job). */
static void emit_host(struct sink *k, const struct gt_recfile *r)
{
    struct lab l[12];
    const struct gtr_host *h = &r->host;
    int n = base_labels(l, r, NULL);
    l[n].k = "mode";
    snprintf(l[n].v, sizeof(l[0].v), "user");
    sample(k, F_HOST_CPU, NULL, l, n + 1, (double)h->utime_ns / 1e9);
    snprintf(l[n].v, sizeof(l[0].v), "system");
    sample(k, F_HOST_CPU, NULL, l, n + 1, (double)h->stime_ns / 1e9);
    double thr = 0;
    for (uint32_t i = 0; i < h->nthreads && i < GTR_HOST_THREADS; i++)
        if (h->threads[i].tid && h->threads[i].cpu_ns > h->threads[i].cpu_first_ns)
            thr += (double)(h->threads[i].cpu_ns - h->threads[i].cpu_first_ns) / 1e9;
    sample(k, F_HOST_THREAD_CPU, NULL, l, n, thr);
    sample(k, F_HOST_STAGING, NULL, l, n, (double)h->staging_bytes);
    sample(k, F_HOST_STAGING_HWM, NULL, l, n, (double)h->staging_hwm_bytes);
    sample(k, F_HOST_RSS_HWM, NULL, l, n, (double)h->rss_hwm_bytes);
    sample(k, F_HOST_LOCKED_HWM, NULL, l, n, (double)h->locked_hwm_bytes);
    sample(k, F_HOST_PINNED_HWM, NULL, l, n, (double)h->pinned_hwm_bytes);
}

/* The families read from the reduced recorders, after the fold: the
 * recorders and their events (those kept: out[i] 0), the job's verdict. */
static void emit_rest(struct sink *k, const struct gt_job *j, const unsigned char *out,
                      const struct gt_verdict *overall)
{
    struct lab l[12];
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
        n = label(l, n, "policy_reg", "%s", r->id.policy_reg);
        n = label(l, n, "kernel", "%s", r->id.node.kernel_release);
        sample(k, F_RECORDERS, NULL, l, n, 1);
        if (r->has_ring) {
            const uint64_t v[3] = {r->rs.complete, r->rs.torn, r->rs.overwritten};
            static const char *cls[3] = {"complete", "torn", "overwritten"};
            for (int q = 0; q < 3; q++) {
                n = base_labels(l, r, NULL);
                n = label(l, n, "class", "%s", cls[q]);
                sample(k, F_EVENTS, NULL, l, n, (double)v[q]);
            }
        }
        if (r->has_host)
            emit_host(k, r);
    }
    k->pos = 0;
    n = label(l, 0, "verdict", "%s", gt_verdict_label(overall->code, overall->emulated));
    sample(k, F_JOB_VERDICT, NULL, l, n, 1);
}

/* Collective metrics (format 1.6, tools/lib/coll.h), communicator-wide: the
 * histograms were merged across ranks, so these quantiles need no summing.
 * Where a series means what NCCL Inspector's Prometheus mode exports, its
 * name and labels (comm_name, n_nodes, nranks, collective, message_size,
 * algo_proto), plus `registration`: the communicator's verdict.  Families
 * are added only when some recorder has the collective sections, so the
 * output of older runs is unchanged. */
static void emit_coll(struct sink *k, const struct gt_job *j)
{
    const struct gt_coll_model *m = j->coll;
    if (!m)
        return;
    size_t f0 = k->nfam;
    family(k, "nccl_bus_bandwidth_gbs", "gauge",
           "Bus bandwidth (GB/s) per collective and message size, from the mean duration "
           "(NCCL Inspector's name and labels; registration: gdrtrace's verdict).");
    family(k, "nccl_collective_exec_time_microseconds", "gauge",
           "Mean duration of a collective (microseconds), as NCCL Inspector names it.");
    family(k, "gdrtrace_collective_latency_seconds", "summary",
           "Collective and point-to-point durations per communicator, function and message "
           "size (quantiles of the ranks' merged histograms).");
    family(k, "gdrtrace_collectives_total", "counter",
           "Collective and point-to-point operations NCCL started, per communicator, function "
           "and message size.");
    family(k, "gdrtrace_collective_bytes_total", "counter", "Their message bytes.");
    family(k, "gdrtrace_collective_metrics_absent", "gauge",
           "Processes whose recorder holds no collective metrics, by why.");
    k->rec = SIZE_MAX;
    k->pos = 0;
    struct lab l[12];
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
                sample(k, f0, NULL, l, n, bus);
                sample(k, f0 + 1, NULL, l, n, (double)h->sum_ns / (double)h->count / 1e3);
            }
            n = label(l, 0, "comm", "0x%llx", (unsigned long long)c->comm_id);
            n = label(l, n, "collective", "%s", gt_coll_func_name(y->func));
            n = label(l, n, "message_size", "%s", ms);
            static const double qs[3] = {50, 95, 99};
            static const char *const qn[3] = {"0.5", "0.95", "0.99"};
            for (int q = 0; q < 3 && h->count; q++) {
                int nq = label(l, n, "quantile", "%s", qn[q]);
                sample(k, f0 + 2, NULL, l, nq,
                       (double)gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, qs[q]) / 1e9);
            }
            sample(k, f0 + 2, "_sum", l, n, (double)h->sum_ns / 1e9);
            sample(k, f0 + 2, "_count", l, n, (double)h->count);
            sample(k, f0 + 3, NULL, l, n, (double)y->count);
            sample(k, f0 + 4, NULL, l, n, (double)y->bytes);
        }
    }
    for (int a = 0; a < m->nabsent; a++) {
        int n = label(l, 0, "why", "%s", m->absent[a].why);
        sample(k, f0 + 5, NULL, l, n, m->absent[a].n);
    }
}

/* What the fold keeps of each recorder for the --exited-within view, by the
 * index it was read under. */
struct exrec {
    int64_t act;          /* last activity (gt_last_activity_ns), unclamped */
    int seen[GT_V_COUNT]; /* its communicators' verdicts */
};

struct exfold {
    struct sink *k;
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

/* Gives the samples emitted while folding their report position and drops
 * those of recorders left out (out[], by report position). */
static void place_samples(struct sink *k, const struct gt_job *j, const unsigned char *out)
{
    size_t w = 0;
    for (size_t i = 0; i < k->ns; i++) {
        struct smp *m = &k->s[i];
        if (m->rec != SIZE_MAX) {
            if (!j->rec_pos || m->rec >= j->nrec || out[j->rec_pos[m->rec]]) {
                free(m->key);
                continue;
            }
            m->pos = j->rec_pos[m->rec];
        }
        k->s[w++] = *m;
    }
    k->ns = w;
}

int gt_cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {
        {"prometheus", no_argument, 0, 'p'},   {"json", no_argument, 0, 'j'},
        {"output", required_argument, 0, 'o'}, {"job", required_argument, 0, 'J'},
        {"per-process", no_argument, 0, 'P'},  {"exited-within", required_argument, 0, 'E'},
        {"quiet", no_argument, 0, 'q'},        {"accept-owner", required_argument, 0, 'O'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    struct gt_inputs owners = {0};
    int json = 0, quiet = 0, c;
    int64_t within = 15LL * 60 * 1000000000;
    const char *out = NULL;
    const char *job = NULL;
    while ((c = getopt_long(argc, argv, "hjpqo:", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            json = 0;
            break;
        case 'j':
            json = 1;
            break;
        case 'o':
            out = optarg;
            break;
        case 'J':
            job = optarg;
            break;
        case 'O':
            if (gt_inputs_accept_owner(&owners, optarg, "export"))
                return GT_EXIT_USAGE;
            break;
        case 'P':
            per_process = 1;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'E':
            if (gt_parse_duration(optarg, &within) != 0) {
                fprintf(stderr,
                        "gdrtrace export: --exited-within '%s' is not a duration: want a whole "
                        "number and a unit s, m, h, d or w (15m, 12h)\n",
                        gt_esc(optarg));
                return 64;
            }
            break;
        default: /* --help, or an option getopt refused */
            return gt_usage_exit(c, usage);
        }
    }
    char err[GT_ERRLEN];
    if (out && gt_out_check(out, 1, err, sizeof(err))) {
        fprintf(stderr, "gdrtrace export: %s\n", gt_esc(err));
        return 1;
    }
    /* Each recorder's communicator samples are taken while it is whole and
     * it is then reduced to its digest (fold mode): memory is the samples
     * and the digests, not the recorders. */
    struct gt_job j;
    struct sink k = {.json = json};
    for (size_t f = 0; f < F_COUNT; f++)
        family(&k, fams[f].name, fams[f].type, fams[f].help);
    struct exfold x = {.k = &k, .grp = malloc(sizeof(struct gtr_comm))};
    struct gt_inputs in = {.job = job, .quiet_empty = quiet, .each = each_rec, .each_arg = &x};
    gt_inputs_take_owners(&in, &owners);
    in.fold = &j;
    unsigned char *gone = NULL;
    FILE *f = stdout;
    char tmp[4200];
    if (!x.grp) {
        fprintf(stderr, "gdrtrace export: out of memory\n");
        return 1;
    }
    int rc = gt_load_job(argv + optind, argc - optind, &in, &j);
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
    k.f = f;
    if (json) {
        gj_init(&k.js, f);
        gj_obj(&k.js, NULL);
        gj_arr(&k.js, "metrics");
    }
    /* The view: live recorders, and exited/crashed ones of the last `within`.
     * Archive members are a snapshot taken at dump time, so they all stay. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    size_t left_out = 0;
    for (size_t ri = 0; ri < j.nrec && j.rec_pos; ri++) {
        size_t i = j.rec_pos[ri];
        gone[i] = (unsigned char)left_out_rec(&j.recs[i], x.r[ri].act, now, within);
        left_out += gone[i];
    }
    struct gt_verdict overall = j.overall;
    if (left_out) { /* the model's verdict counted them: combine what is kept */
        int seen[GT_V_COUNT] = {0};
        overall.emulated = 0;
        for (size_t ri = 0; ri < j.nrec; ri++) {
            size_t i = j.rec_pos[ri];
            if (gone[i])
                continue;
            overall.emulated |= gt_recfile_emulated(&j.recs[i]);
            for (int v = 0; v < GT_V_COUNT; v++)
                seen[v] += x.r[ri].seen[v];
        }
        for (size_t i = 0; i < j.nfates; i++) { /* fates of the processes kept */
            int code = j.fates[i].f.code;
            if (j.fates[i].rec >= j.nrec || gone[j.fates[i].rec])
                continue;
            if (code >= 0 && code < GT_V_COUNT)
                seen[code]++;
        }
        overall.code = gt_verdict_combine_counts(seen);
    }
    if (!json && left_out) /* nothing to say when none was left out */
        fprintf(f,
                "# gdrtrace: %zu exited or crashed recorder(s) left out: last activity older "
                "than --exited-within\n",
                left_out);
    int any_host = 0; /* host pressure's families: only when some kept recorder has it */
    for (size_t i = 0; i < j.nrec; i++)
        any_host |= j.recs[i].has_host && !(gone && gone[i]);
    for (size_t f = 0; any_host && f < F_HOST_END - F_COUNT; f++)
        family(&k, host_fams[f].name, host_fams[f].type, host_fams[f].help);
    place_samples(&k, &j, gone);
    emit_rest(&k, &j, gone, &overall);
    emit_coll(&k, &j);
    flush_all(&k);
    if (k.oom) {
        fprintf(stderr, "gdrtrace export: out of memory\n");
        rc = 1;
    }
    if (json) {
        gj_end(&k.js, ']');
        gj_end(&k.js, '}');
        gj_done(&k.js);
    }
    if (out) {
        int bad = ferror(f) | (fclose(f) != 0);
        if (bad) {
            fprintf(stderr, "gdrtrace export: writing %s failed: %m\n", tmp);
            unlink(tmp);
            rc = 1;
        } else if (gt_out_commit(tmp, out, 1, err, sizeof(err))) {
            fprintf(stderr, "gdrtrace export: %s\n", gt_esc(err));
            unlink(tmp);
            rc = 1;
        }
    }
done:
    for (size_t i = 0; i < k.ns; i++)
        free(k.s[i].key);
    free(k.s);
    free(gone);
    free(x.r);
    free(x.grp);
    gt_job_free(&j);
    gt_inputs_free(&in);
    return rc;
}
