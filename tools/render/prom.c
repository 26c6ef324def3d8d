/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prom.c — the metric set of `gdrtrace export` and its Prometheus text
 * (prom.h).  Label values are escaped as the format requires (\\ \" \n);
 * other control bytes and invalid UTF-8 (untrusted recorder strings) become
 * '?'.  A value that is a whole number below 1e18 prints as an integer, any
 * other with 9 significant digits.
 */
#include "tools/render/prom.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hist.h"
#include "tools/lib/coll.h"
#include "tools/lib/hist.h"
#include "tools/lib/model.h"
#include "tools/lib/recfact.h"
#include "tools/lib/recfile.h"
#include "tools/render/json.h"

void gt_prom_family(struct gt_prom *k, const char *name, const char *type, const char *help)
{
    if (k->nfam < sizeof(k->fams) / sizeof(k->fams[0]))
        k->fams[k->nfam++] = (struct gt_prom_family){name, type, help};
}

void gt_prom_sample(struct gt_prom *k, size_t fam, const char *suffix,
                    const struct gt_prom_label *l, int nl, double v)
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
        struct gt_prom_sample *n = realloc(k->s, cap * sizeof(*n));
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
    k->s[k->ns] = (struct gt_prom_sample){fam, k->rec, k->pos, k->seq++, key, len, nl, v};
    k->ns++;
}

void gt_prom_place(struct gt_prom *k, const size_t *rec_pos, size_t nrec, const unsigned char *out)
{
    size_t w = 0;
    for (size_t i = 0; i < k->ns; i++) {
        struct gt_prom_sample *m = &k->s[i];
        if (m->rec != SIZE_MAX) {
            if (!rec_pos || m->rec >= nrec || out[rec_pos[m->rec]]) {
                free(m->key);
                continue;
            }
            m->pos = rec_pos[m->rec];
        }
        k->s[w++] = *m;
    }
    k->ns = w;
}

/* First-seen order: the recorder's report position, then emission. */
static int order_cmp(const struct gt_prom_sample *x, const struct gt_prom_sample *y)
{
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_key(const void *a, const void *b)
{
    const struct gt_prom_sample *x = a, *y = b;
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
    const struct gt_prom_sample *x = a, *y = b;
    if (x->fam != y->fam)
        return x->fam < y->fam ? -1 : 1;
    return order_cmp(x, y);
}

void gt_prom_merge(struct gt_prom *k)
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
    k->ns = n;
}

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

static void put(FILE *f, const struct gt_prom_sample *m)
{
    const char *name = m->key, *p = name + strlen(name) + 1;
    fputs(name, f);
    if (m->nl) {
        fputc('{', f);
        for (int i = 0; i < m->nl; i++) {
            fprintf(f, "%s%s=\"", i ? "," : "", p);
            p += strlen(p) + 1;
            prom_escape(f, p);
            p += strlen(p) + 1;
            fputc('"', f);
        }
        fputc('}', f);
    }
    if (m->v == (double)(uint64_t)m->v && m->v < 1e18)
        fprintf(f, " %llu\n", (unsigned long long)m->v);
    else
        fprintf(f, " %.9g\n", m->v);
}

void gt_prom_text(FILE *f, const struct gt_prom *k)
{
    for (size_t fam = 0; fam < k->nfam; fam++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", k->fams[fam].name, k->fams[fam].help,
                k->fams[fam].name, k->fams[fam].type);
        for (size_t i = 0; i < k->ns; i++)
            if (k->s[i].fam == fam)
                put(f, &k->s[i]);
    }
}

void gt_prom_free(struct gt_prom *k)
{
    for (size_t i = 0; i < k->ns; i++)
        free(k->s[i].key);
    free(k->s);
    k->s = NULL;
    k->ns = k->cap = 0;
}

/* ---- the metric set of `gdrtrace export`, built from the model ---- */

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
                       "1 for each job's verdict, with the registration policy its recorders "
                       "recorded (recorders left out by --exited-within not counted; nothing "
                       "exported: one NO-DATA series without a job)."},
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
static void comm_label(const struct gt_prom *k, struct gt_prom_label *l, const struct gt_recfile *r,
                       const struct gtr_comm *c)
{
    l->k = "comm";
    if (!c->has_comm_id && !k->per_process)
        snprintf(l->v, sizeof(l->v), "none");
    else if (c->has_comm_id == GT_COMM_OVERFLOW && !k->per_process)
        snprintf(l->v, sizeof(l->v), "overflow");
    else
        gt_fmt_comm(c, r, l->v, sizeof(l->v));
}

static int base_labels(const struct gt_prom *k, struct gt_prom_label *l, const struct gt_recfile *r,
                       const struct gtr_comm *c)
{
    int n = 0;
    n = label(l, n, "host", "%s", r->id.host);
    n = label(l, n, "gdrtrace_job", "%s", r->id.job);
    if (k->per_process) {
        n = label_int(l, n, "rank", r->id.rank);
        n = label(l, n, "pid", "%d", r->id.pid);
    }
    if (c) {
        comm_label(k, &l[n++], r, c);
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
                    n = base_labels(k, l, r, c);
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
                n = base_labels(k, l, r, c);
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
            n = base_labels(k, l, r, c);
            n = label(l, n, "op", "%s", gt_op_name(op));
            for (int i = 0; k->per_process && i < 3; i++) {
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
            n = base_labels(k, l, r, c);
            n = label(l, n, "op", "%s", ops[i]);
            gt_prom_sample(k, F_MSGS, NULL, l, n, (double)v[i]);
        }
        n = base_labels(k, l, r, c);
        l[n].k = "op";
        snprintf(l[n].v, sizeof(l[0].v), "send");
        gt_prom_sample(k, F_MSG_BYTES, NULL, l, n + 1, (double)c->send_bytes);
        snprintf(l[n].v, sizeof(l[0].v), "recv");
        gt_prom_sample(k, F_MSG_BYTES, NULL, l, n + 1, (double)c->recv_bytes);
        struct gt_verdict vd;
        gt_verdict_of(c, &r, 1, &vd);
        if (vd.code >= 0 && vd.code < GT_V_COUNT)
            seen[vd.code]++;
        n = base_labels(k, l, r, c);
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
    int n = base_labels(k, l, r, NULL);
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

/* gdrtrace_job_verdict: one series per job of the recorders kept (out[i]
 * 0), labelled with the job and its recorded registration policy
 * (policy_reg; "mixed" when its processes differ), so that an alert can
 * tell a planned baseline (policy peermem or host) from a finding.  A job
 * none of whose recorders was left out is judged as `gdrtrace verdict
 * --job` judges it: its communicators (merged across processes) and its
 * processes' fates; otherwise from the kept processes' own communicator
 * verdicts (j->ranks) and fates.  The recorders are in report order, job
 * first, so each job is one run of them.  Returns how many series. */
static size_t emit_job_verdicts(struct gt_prom *k, const struct gt_job *j, const unsigned char *out)
{
    enum { NV = GT_V_COUNT, W = 2 * GT_V_COUNT + 1 };
    struct gt_prom_label l[4];
    size_t nser = 0, njob = 0;
    size_t *jix = malloc((j->nrec ? j->nrec : 1) * sizeof(*jix)); /* recorder -> its job */
    int *seen = NULL; /* per job, W ints: [0, NV) whole, [NV, 2NV) kept only, [2NV] partial */
    if (!jix)
        goto oom;
    for (size_t i = 0; i < j->nrec; i++) {
        njob += !i || strcmp(j->recs[i].id.job, j->recs[i - 1].id.job);
        jix[i] = njob - 1;
    }
    if (!(seen = calloc(njob ? njob : 1, W * sizeof(*seen))))
        goto oom;
    for (size_t c = 0; c < j->ncomm; c++) {
        int v = j->comms[c].v.code;
        if (j->comms[c].nmembers && v >= 0 && v < NV)
            seen[jix[j->comms[c].members[0].rec] * W + (size_t)v]++;
    }
    for (size_t i = 0; i < j->nranks; i++) {
        size_t q = j->ranks[i].rec;
        int v = j->ranks[i].verdict;
        if (q < j->nrec && !out[q] && v >= 0 && v < NV)
            seen[jix[q] * W + NV + (size_t)v]++;
    }
    for (size_t f = 0; f < j->nfates; f++) {
        size_t q = j->fates[f].rec;
        int v = j->fates[f].f.code;
        if (q >= j->nrec || v < 0 || v >= NV)
            continue;
        seen[jix[q] * W + (size_t)v]++;
        if (!out[q])
            seen[jix[q] * W + NV + (size_t)v]++;
    }
    for (size_t q = 0; q < j->nrec; q++)
        seen[jix[q] * W + 2 * NV] |= out[q];
    for (size_t i = 0, e; i < j->nrec; i = e) {
        const char *pol = NULL;
        int emulated = 0;
        for (e = i; e < j->nrec && jix[e] == jix[i]; e++) {
            if (out[e])
                continue;
            emulated |= j->recs[e].emulated;
            const char *p = gt_rec_reg_name(&j->recs[e]);
            pol = !pol || !strcmp(pol, p) ? p : "mixed";
        }
        if (!pol) /* all of its recorders left out */
            continue;
        const int *s = &seen[jix[i] * W];
        int code = gt_verdict_combine_counts(s[2 * NV] ? s + NV : s);
        int n = label(l, 0, "gdrtrace_job", "%s", j->recs[i].id.job);
        n = label(l, n, "policy_reg", "%s", pol[0] ? pol : "unknown");
        n = label(l, n, "verdict", "%s", gt_verdict_label(code, emulated));
        gt_prom_sample(k, F_JOB_VERDICT, NULL, l, n, 1);
        nser++;
    }
    goto done;
oom:
    k->oom = 1;
done:
    free(jix);
    free(seen);
    return nser;
}

/* The families read from the reduced recorders, after the fold: the
 * recorders and their events (those kept: out[i] 0), the jobs' verdicts. */
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
        n = base_labels(k, l, r, NULL);
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
                n = base_labels(k, l, r, NULL);
                n = label(l, n, "class", "%s", cls[q]);
                gt_prom_sample(k, F_EVENTS, NULL, l, n, (double)v[q]);
            }
        }
        if (r->has_host)
            emit_host(k, r);
    }
    k->pos = 0;
    if (!emit_job_verdicts(k, j, out)) { /* nothing kept: the node's NO-DATA */
        n = label(l, 0, "verdict", "%s", gt_verdict_label(overall->code, overall->emulated));
        gt_prom_sample(k, F_JOB_VERDICT, NULL, l, n, 1);
    }
}

/* Collective metrics (format 1.6, tools/lib/coll.h), communicator-wide
 * (the ranks' cells were merged by the fold), all under gdrtrace_* names:
 * a series named like NCCL Inspector's would have to mean what Inspector's
 * means (a 30-s window's mean, per-rank message sizes in one-unit buckets,
 * node and GPU labels), which lifetime histograms cannot give; as a
 * Prometheus histogram, rate() over any window gives Inspector's statistic
 * and histogram_quantile() any quantile (docs/export.md).  Families are
 * added only when some recorder has the collective sections, so the output
 * of older runs is unchanged. */
enum { C_INFO, C_DURATION, C_OPS, C_BYTES, C_ABSENT, C_COUNT };

static const struct gt_prom_family coll_fams[C_COUNT] = {
    [C_INFO] = {"gdrtrace_collective_info", "gauge",
                "1 per communicator NCCL's profiler interface reported: its name (unknown when "
                "NCCL gave none), nodes, ranks, profiler mode and registration verdict."},
    [C_DURATION] = {"gdrtrace_collective_duration_seconds", "histogram",
                    "Durations of collective and point-to-point operations per communicator, "
                    "function and message size, as the application waits for them "
                    "(docs/collectives.md); ranks merged."},
    [C_OPS] = {"gdrtrace_collectives_total", "counter",
               "Collective and point-to-point operations NCCL started, per communicator, "
               "function and message size (timed or not)."},
    [C_BYTES] = {"gdrtrace_collective_bytes_total", "counter", "Their message bytes."},
    [C_ABSENT] = {"gdrtrace_collective_metrics_absent", "gauge",
                  "Processes whose recorder holds no collective metrics, by why."},
};

/* The histogram's upper bounds: 2^k ns, k = 10 (1.024 us) .. 36 (68.7 s),
 * each a bound of the recorder's buckets, so every count is exact. */
#define LE_LO 10
#define LE_HI 36

/* A cell's message-size range, [2^k, 2^(k+1)) bytes: "1-2MB", "2-4MB",
 * "512-1024KB" (units of 1024). */
static void size_range(unsigned size_log2, char *buf, size_t n)
{
    if (size_log2 == GTR_COLL_SIZE_ANY) {
        snprintf(buf, n, "any");
        return;
    }
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    unsigned u = size_log2 / 10 < 5 ? size_log2 / 10 : 5;
    unsigned long long lo = 1ull << (size_log2 - 10 * u);
    snprintf(buf, n, "%llu-%llu%s", lo, 2 * lo, units[u]);
}

static void emit_duration(struct gt_prom *k, struct gt_prom_label *l, int n,
                          const struct gtr_hist *h)
{
    uint64_t cum = 0;
    unsigned i = 0;
    for (int e = LE_LO; e <= LE_HI; e++) {
        uint64_t le = 1ull << e;
        for (; i < GTR_HIST_BUCKETS && gt_hist_bucket_hi(i) <= le; i++)
            cum += h->buckets[i];
        int nb = label(l, n, "le", "%.12g", (double)le / 1e9); /* exact: 2^k ns */
        gt_prom_sample(k, k->coll0 + C_DURATION, "_bucket", l, nb, (double)cum);
    }
    for (; i < GTR_HIST_BUCKETS; i++)
        cum += h->buckets[i];
    int nb = label(l, n, "le", "+Inf");
    gt_prom_sample(k, k->coll0 + C_DURATION, "_bucket", l, nb, (double)cum);
    gt_prom_sample(k, k->coll0 + C_DURATION, "_sum", l, n, (double)h->sum_ns / 1e9);
    gt_prom_sample(k, k->coll0 + C_DURATION, "_count", l, n, (double)cum);
}

static void emit_coll(struct gt_prom *k, const struct gt_job *j)
{
    const struct gt_coll_model *m = j->coll;
    if (!m)
        return;
    k->coll0 = k->nfam;
    for (int f = 0; f < C_COUNT; f++)
        gt_prom_family(k, coll_fams[f].name, coll_fams[f].type, coll_fams[f].help);
    k->rec = SIZE_MAX;
    k->pos = 0;
    struct gt_prom_label l[12];
    for (size_t i = 0; i < m->ncomm; i++) {
        const struct gt_coll_mcomm *c = &m->comms[i];
        const char *reg = "unknown";
        for (size_t q = 0; q < j->ncomm; q++)
            if (c->has_id && j->comms[q].has_comm_id == 1 && j->comms[q].comm_id == c->comm_id)
                reg = gt_verdict_name(j->comms[q].v.code);
        int n = label(l, 0, "comm", "0x%llx", (unsigned long long)c->comm_id);
        n = label(l, n, "comm_name", "%s", c->name[0] ? c->name : "unknown");
        n = label(l, n, "n_nodes", "%d", c->nnodes);
        n = label(l, n, "nranks", "%d", c->nranks);
        n = label(l, n, "mode", "%s", gt_coll_mode_name(c->mode));
        n = label(l, n, "registration", "%s", reg);
        gt_prom_sample(k, k->coll0 + C_INFO, NULL, l, n, 1);
        for (size_t x = 0; x < c->ncell; x++) {
            const struct gt_coll_mcell *y = &c->cells[x];
            char ms[32];
            size_range(y->size_log2, ms, sizeof(ms));
            n = label(l, 0, "comm", "0x%llx", (unsigned long long)c->comm_id);
            n = label(l, n, "collective", "%s", gt_coll_func_name(y->func));
            n = label(l, n, "message_size", "%s", ms);
            emit_duration(k, l, n, &y->hist);
            gt_prom_sample(k, k->coll0 + C_OPS, NULL, l, n, (double)y->count);
            gt_prom_sample(k, k->coll0 + C_BYTES, NULL, l, n, (double)y->bytes);
        }
    }
    for (int a = 0; a < m->nabsent; a++) {
        int n = label(l, 0, "why", "%s", m->absent[a].why);
        gt_prom_sample(k, k->coll0 + C_ABSENT, NULL, l, n, m->absent[a].n);
    }
}

void gt_prom_export_begin(struct gt_prom *k, int per_process)
{
    k->per_process = per_process;
    for (size_t f = 0; f < F_COUNT; f++)
        gt_prom_family(k, fams[f].name, fams[f].type, fams[f].help);
}

void gt_prom_export_recorder(struct gt_prom *k, const struct gt_recfile *r, struct gtr_comm *grp,
                             int *seen)
{
    emit_comms(k, r, grp, seen);
}

void gt_prom_export_job(struct gt_prom *k, const struct gt_job *j, const unsigned char *gone,
                        const struct gt_verdict *overall)
{
    int any_host = 0; /* host pressure's families: only when some kept recorder has it */
    for (size_t i = 0; i < j->nrec; i++)
        any_host |= j->recs[i].has_host && !(gone && gone[i]);
    for (size_t h = 0; any_host && h < F_HOST_END - F_COUNT; h++)
        gt_prom_family(k, host_fams[h].name, host_fams[h].type, host_fams[h].help);
    gt_prom_place(k, j->rec_pos, j->nrec, gone);
    emit_rest(k, j, gone, overall);
    emit_coll(k, j);
}
