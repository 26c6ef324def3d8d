/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_export.c — `gdrtrace export [--prometheus|--json] [-o FILE] [PATH...]`:
 * metrics for node_exporter's textfile collector (Prometheus text exposition
 * format 0.0.4) or as JSON.  Every family is printed whole (HELP, TYPE, then
 * its samples), label values are escaped (\\ \" \n), and -o writes through a
 * temporary file in FILE's folder and rename() so the collector never reads a
 * half file; FILE must be absent or a regular file (a FIFO or device node is
 * refused, tools/outfile.h).  Exit: 0, 1 output not written, 2 unreadable input, 64 usage.
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

#include "tools/commands.h"
#include "tools/duration.h"
#include "tools/esc.h"
#include "tools/hist.h"
#include "tools/outfile.h"
#include "tools/report.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gdrtrace export [--prometheus|--json] [-o FILE] [--job J] [--per-process]\n"
               "                       [--exited-within DURATION] [--quiet] [PATH...]\n"
               "  Metrics of every recorder (default: $GDRTRACE_DIR) in Prometheus text format\n"
               "  (for node_exporter's textfile collector; -o FILE replaces FILE atomically,\n"
               "  and only if it is a regular file) or JSON.  Families:\n"
               "  gdrtrace_registrations_total, gdrtrace_registered_bytes_total,\n"
               "  gdrtrace_fallbacks_total, gdrtrace_errors_total, gdrtrace_latency_seconds\n"
               "  (summary, quantiles 0.5/0.95/0.99), gdrtrace_messages_total,\n"
               "  gdrtrace_message_bytes_total, gdrtrace_verdict, gdrtrace_job_verdict,\n"
               "  gdrtrace_events_total, gdrtrace_recorders.  Labels: host, gdrtrace_job, comm,\n"
               "  device, ...; samples of one host, job and communicator are summed.\n"
               "  --per-process         add rank and pid labels (a new series per process and\n"
               "                        run) and the latency quantiles\n"
               "  --exited-within D     leave out exited or crashed recorders whose last\n"
               "                        activity is older than D (default 15m: a whole number\n"
               "                        and a unit s, m, h, d or w); archives keep them all\n"
               "  --quiet               no note on stderr when no recorder is found (for a\n"
               "                        timer: an idle node is normal); errors still printed\n"
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

/* One buffered sample: key is "name\0k\0v\0k\0v\0..." (klen bytes). */
struct smp {
    size_t fam, seq;
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
    struct fam fams[16];
    size_t nfam;
    struct smp *s;
    size_t ns, cap;
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

static void family(struct sink *k, const char *name, const char *type, const char *help)
{
    if (k->nfam < sizeof(k->fams) / sizeof(k->fams[0]))
        k->fams[k->nfam++] = (struct fam){name, type, help};
}

static void sample(struct sink *k, const char *suffix, const struct lab *l, int nl, double v)
{
    if (k->oom || !k->nfam)
        return;
    char name[128];
    snprintf(name, sizeof(name), "%s%s", k->fams[k->nfam - 1].name, suffix ? suffix : "");
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
    k->s[k->ns] = (struct smp){k->nfam - 1, k->ns, key, len, nl, v};
    k->ns++;
}

static int by_key(const void *a, const void *b)
{
    const struct smp *x = a, *y = b;
    if (x->fam != y->fam)
        return x->fam < y->fam ? -1 : 1;
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp(x->key, y->key, n);
    if (c || x->klen == y->klen)
        return c ? c : (x->seq < y->seq ? -1 : x->seq > y->seq);
    return x->klen < y->klen ? -1 : 1;
}

static int by_seq(const void *a, const void *b)
{
    const struct smp *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
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

static int base_labels(struct lab *l, const struct gt_recfile *r, const struct gtr_comm *c)
{
    int n = 0;
    n = label(l, n, "host", "%s", r->id.host);
    n = label(l, n, "gdrtrace_job", "%s", r->id.job);
    if (per_process) {
        n = label(l, n, "rank", "%d", r->id.rank);
        n = label(l, n, "pid", "%d", r->id.pid);
    }
    if (c) {
        l[n].k = "comm";
        gt_fmt_comm(c, r, l[n++].v, sizeof(l[0].v));
        n = label(l, n, "device", "%d", c->dev);
    }
    return n;
}

/* Every communicator of every process, sibling slots summed (into grp). */
#define EACH_COMM(j, r, c)                                                                         \
    for (size_t ri_ = 0; ri_ < (j)->nrec; ri_++)                                                   \
        for (uint32_t s_ = 0; s_ < (j)->recs[ri_].ncomm; s_++)                                     \
            if ((r = &(j)->recs[ri_]), (c = grp), gt_recfile_comm_group(r, s_, grp, NULL))

/* Registrations by what NCCL asked and what the plugin did: their count, or
 * (bytes) their bytes.  Pairs never used are left out, in both families. */
static void emit_regs(struct sink *k, const struct gt_job *j, struct gtr_comm *grp, int bytes)
{
    const struct gt_recfile *r;
    const struct gtr_comm *c;
    struct lab l[12];
    EACH_COMM(j, r, c)
    for (int a = 0; a < GTR_ASKED_COUNT; a++)
        for (int m = 0; m < GTR_METHOD_COUNT; m++) {
            if (!c->reg_count[a][m])
                continue;
            int n = base_labels(l, r, c);
            n = label(l, n, "asked", "%s", gt_asked_name(a));
            n = label(l, n, "method", "%s", gt_method_name(m));
            sample(k, NULL, l, n, (double)(bytes ? c->reg_bytes[a][m] : c->reg_count[a][m]));
        }
}

/* Fallbacks or errors (kind: enum gtr_reason_kind), by reason. */
static void emit_reasons(struct sink *k, const struct gt_job *j, struct gtr_comm *grp, int kind)
{
    const struct gt_recfile *r;
    const struct gtr_comm *c;
    struct lab l[12];
    EACH_COMM(j, r, c) for (unsigned i = 0; i < GTR_REASON_SLOTS; i++)
    {
        if (!gtr_reason_count(c, kind, i))
            continue;
        int n = base_labels(l, r, c);
        n = label(l, n, "reason", "%s", gt_reason_slot_name((int)i));
        sample(k, NULL, l, n, (double)gtr_reason_count(c, kind, i));
    }
}

static void emit_all(struct sink *k, const struct gt_job *j, struct gtr_comm *grp,
                     const struct gt_verdict *overall)
{
    const struct gt_recfile *r;
    const struct gtr_comm *c;
    struct lab l[12];
    int n;

    family(k, "gdrtrace_recorders", "gauge",
           "Recorders exported, by identity and state of the producer.");
    for (size_t i = 0; i < j->nrec; i++) {
        r = &j->recs[i];
        n = base_labels(l, r, NULL);
        n = label(l, n, "state", "%s", gt_liveness_name(r->liveness));
        n = label(l, n, "nccl_version", "%d", r->id.nccl_version);
        n = label(l, n, "plugin_version", "%s", r->id.plugin_version);
        n = label(l, n, "transport", "%s", r->id.transport);
        n = label(l, n, "policy_reg", "%s", r->id.policy_reg);
        n = label(l, n, "kernel", "%s", r->id.node.kernel_release);
        sample(k, NULL, l, n, 1);
    }
    family(k, "gdrtrace_registrations_total", "counter",
           "Memory registrations: what NCCL asked (dmabuf, cuda, host) and what the plugin did "
           "(method).");
    emit_regs(k, j, grp, 0);
    family(k, "gdrtrace_registered_bytes_total", "counter",
           "Bytes registered, by asked and method.");
    emit_regs(k, j, grp, 1);
    family(k, "gdrtrace_fallbacks_total", "counter",
           "Registrations that fell back from DMA-BUF, by reason.");
    emit_reasons(k, j, grp, GTR_FALLBACKS);
    family(k, "gdrtrace_errors_total", "counter", "Errors recorded, by reason.");
    emit_reasons(k, j, grp, GTR_ERRORS);
    family(k, "gdrtrace_latency_seconds", "summary",
           "Latency per operation (reg, dereg, send, recv, flush) from the recorder's histograms "
           "(quantiles with --per-process only: they cannot be summed).");
    EACH_COMM(j, r, c) for (int op = 0; op < GTR_OP_COUNT; op++)
    {
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
            sample(k, NULL, l, n + 1, (double)gt_hist_quantile(h, q[i]) / 1e9);
        }
        sample(k, "_sum", l, n, (double)h->sum_ns / 1e9);
        sample(k, "_count", l, n, (double)h->count);
    }
    family(k, "gdrtrace_messages_total", "counter", "Completed sends, receives and flushes.");
    EACH_COMM(j, r, c)
    {
        const uint64_t v[3] = {c->send_count, c->recv_count, c->flush_count};
        static const char *ops[3] = {"send", "recv", "flush"};
        for (int i = 0; i < 3; i++) {
            n = base_labels(l, r, c);
            n = label(l, n, "op", "%s", ops[i]);
            sample(k, NULL, l, n, (double)v[i]);
        }
    }
    family(k, "gdrtrace_message_bytes_total", "counter", "Bytes sent and received.");
    EACH_COMM(j, r, c)
    {
        n = base_labels(l, r, c);
        l[n].k = "op";
        snprintf(l[n].v, sizeof(l[0].v), "send");
        sample(k, NULL, l, n + 1, (double)c->send_bytes);
        snprintf(l[n].v, sizeof(l[0].v), "recv");
        sample(k, NULL, l, n + 1, (double)c->recv_bytes);
    }
    family(k, "gdrtrace_verdict", "gauge", "Processes whose communicator has this verdict.");
    EACH_COMM(j, r, c)
    {
        struct gt_verdict v;
        gt_verdict_of(c, &r, 1, &v);
        n = base_labels(l, r, c);
        n = label(l, n, "verdict", "%s", gt_verdict_label(v.code, v.emulated));
        sample(k, NULL, l, n, 1);
    }
    family(k, "gdrtrace_job_verdict", "gauge",
           "1 for the verdict of everything exported (all jobs given, recorders left out by "
           "--exited-within not counted).");
    n = 0;
    n = label(l, n, "verdict", "%s", gt_verdict_label(overall->code, overall->emulated));
    sample(k, NULL, l, n, 1);
    family(k, "gdrtrace_events_total", "counter", "Event ring records by class (invariant 6).");
    for (size_t i = 0; i < j->nrec; i++) {
        r = &j->recs[i];
        if (!r->has_ring)
            continue;
        const uint64_t v[3] = {r->rs.complete, r->rs.torn, r->rs.overwritten};
        static const char *cls[3] = {"complete", "torn", "overwritten"};
        for (int q = 0; q < 3; q++) {
            n = base_labels(l, r, NULL);
            n = label(l, n, "class", "%s", cls[q]);
            sample(k, NULL, l, n, (double)v[q]);
        }
    }
}

/* Appends code to codes (nc used of cap); NULL (codes freed) when out of memory. */
static int *push_code(int *codes, size_t *nc, size_t *cap, int code)
{
    if (*nc == *cap) {
        int *n = realloc(codes, 2 * *cap * sizeof(int));
        if (!n) {
            free(codes);
            return NULL;
        }
        codes = n;
        *cap *= 2;
    }
    codes[(*nc)++] = code;
    return codes;
}

/* Exited or crashed, not from an archive, and last active before now - within. */
static int left_out_rec(const struct gt_recfile *r, int64_t now, int64_t within)
{
    int gone = r->liveness == GT_LIVE_EXITED || r->liveness == GT_LIVE_CRASHED;
    return gone && !r->from_archive && now - gt_last_activity_ns(r, now) > within;
}

int gt_cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {{"prometheus", no_argument, 0, 'p'},
                                         {"json", no_argument, 0, 'j'},
                                         {"output", required_argument, 0, 'o'},
                                         {"job", required_argument, 0, 'J'},
                                         {"per-process", no_argument, 0, 'P'},
                                         {"exited-within", required_argument, 0, 'E'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
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
    struct gt_inputs in = {.job = job, .quiet_empty = quiet};
    struct gt_job j;
    int rc = gt_load_job(argv + optind, argc - optind, &in, &j);
    char tmp[4200];
    FILE *f = stdout;
    if (out) {
        snprintf(tmp, sizeof(tmp), "%s.tmp.%d", out, (int)getpid());
        f = fopen(tmp, "wx");
        if (!f) {
            fprintf(stderr, "gdrtrace export: %s: %m\n", tmp);
            rc = 1;
            goto done;
        }
    }
    struct sink k = {.f = f, .json = json};
    if (json) {
        gj_init(&k.js, f);
        gj_obj(&k.js, NULL);
        gj_arr(&k.js, "metrics");
    }
    struct gtr_comm *grp = malloc(sizeof(*grp));
    if (!grp) {
        fprintf(stderr, "gdrtrace export: out of memory\n");
        rc = 1;
        if (out) {
            fclose(f);
            unlink(tmp);
        }
        goto done;
    }
    /* The view: live recorders, and exited/crashed ones of the last `within`.
     * Archive members are a snapshot taken at dump time, so they all stay. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    struct gt_job view = j;
    size_t left_out = 0;
    view.recs = j.nrec ? malloc(j.nrec * sizeof(*j.recs)) : NULL;
    if (j.nrec && !view.recs) {
        fprintf(stderr, "gdrtrace export: out of memory\n");
        rc = 1;
        free(grp);
        if (out) {
            fclose(f);
            unlink(tmp);
        }
        goto done;
    }
    view.nrec = 0;
    for (size_t i = 0; i < j.nrec; i++) {
        const struct gt_recfile *r = &j.recs[i];
        if (left_out_rec(r, now, within))
            left_out++;
        else
            view.recs[view.nrec++] = *r;
    }
    struct gt_verdict overall = j.overall;
    if (left_out) { /* the model's verdict counted them: combine what is kept */
        int *codes = calloc(1, sizeof(int));
        size_t nc = 0, cap = 1;
        overall.emulated = 0;
        for (size_t i = 0; codes && i < view.nrec; i++) {
            const struct gt_recfile *r = &view.recs[i];
            overall.emulated |= gt_recfile_emulated(r);
            for (uint32_t s = 0; codes && s < r->ncomm; s++) {
                if (!gt_recfile_comm_group(r, s, grp, NULL))
                    continue;
                struct gt_verdict v;
                gt_verdict_of(grp, &r, 1, &v);
                codes = push_code(codes, &nc, &cap, v.code);
            }
        }
        for (size_t i = 0; codes && i < j.nfates; i++) { /* fates of the processes kept */
            if (j.fates[i].rec >= j.nrec || left_out_rec(&j.recs[j.fates[i].rec], now, within))
                continue;
            codes = push_code(codes, &nc, &cap, j.fates[i].f.code);
        }
        if (!codes) {
            fprintf(stderr, "gdrtrace export: out of memory\n");
            rc = 1;
        } else
            overall.code = gt_verdict_combine(codes, nc);
        free(codes);
    }
    if (!json)
        fprintf(f,
                "# gdrtrace: %zu exited or crashed recorder(s) left out: last activity older "
                "than --exited-within\n",
                left_out);
    emit_all(&k, &view, grp, &overall);
    flush_all(&k);
    if (k.oom) {
        fprintf(stderr, "gdrtrace export: out of memory\n");
        rc = 1;
    }
    free(view.recs);
    free(grp);
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
    gt_job_free(&j);
    gt_inputs_free(&in);
    return rc;
}
