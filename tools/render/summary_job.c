/* SPDX-License-Identifier: Apache-2.0 */
/*
 * summary_job.c — the compact summary's job lines: what the processes run
 * (each identity field tallied), their ranks and owners, how many nodes show
 * each verdict and those that differ from the most common, the registrations
 * of the whole job, the fates of processes.  Invariant: each list is capped
 * at GT_REPORT_LIST_MAX with the count of what was left out and the command
 * that lists it all.
 */
#include <stdlib.h>
#include <string.h>

#include "tools/lib/alike.h"
#include "tools/lib/esc.h"
#include "tools/lib/owner.h"
#include "tools/render/summary.h"
#include "tools/render/summary_parts.h"

#define TALLY_MAX 6

/* Distinct values of one identity field and how many processes show each. */
struct tally {
    char v[TALLY_MAX][160];
    size_t n[TALLY_MAX];
    size_t nv, other;
};

static void tally_add(struct tally *t, const char *v)
{
    for (size_t i = 0; i < t->nv; i++)
        if (!strcmp(t->v[i], v)) {
            t->n[i]++;
            return;
        }
    if (t->nv == TALLY_MAX) {
        t->other++;
        return;
    }
    snprintf(t->v[t->nv], sizeof(t->v[0]), "%s", v);
    t->n[t->nv++] = 1;
}

/* "NAME V" when every process agrees, else "NAME V1 xN1, V2 xN2" most first. */
static void tally_text(const struct tally *t, const char *name, char *buf, size_t n)
{
    size_t ord[TALLY_MAX];
    for (size_t i = 0; i < t->nv; i++)
        ord[i] = i;
    for (size_t i = 1; i < t->nv; i++)
        for (size_t k = i; k > 0 && t->n[ord[k]] > t->n[ord[k - 1]]; k--) {
            size_t x = ord[k];
            ord[k] = ord[k - 1];
            ord[k - 1] = x;
        }
    size_t l = (size_t)snprintf(buf, n, "%s", name);
    for (size_t i = 0; i < t->nv && l < n; i++) {
        if (t->nv == 1 && !t->other)
            l += (size_t)snprintf(buf + l, n - l, " %s", t->v[ord[i]]);
        else
            l += (size_t)snprintf(buf + l, n - l, "%s %s x%zu", i ? "," : "", t->v[ord[i]],
                                  t->n[ord[i]]);
    }
    if (t->other && l < n)
        snprintf(buf + l, n - l, ", %zu other(s)", t->other);
}

/* The job's identity fields tallied over its processes, its ranks and states. */
struct job_view {
    struct tally t[6]; /* plugin, NCCL, net ABI, transport, kernel, launcher */
    size_t states[8], unknown_rank, known_rank;
    int rmin, rmax;
    const struct gt_recfile *unk; /* the first process without a rank */
};

static void job_view(const struct gt_job *j, struct job_view *v)
{
    memset(v, 0, sizeof(*v));
    for (size_t i = 0; i < j->nrec; i++) {
        const struct gt_recfile *r = &j->recs[i];
        char b[160];
        tally_add(&v->t[0], r->id.plugin_version[0] ? gt_esc(r->id.plugin_version) : "?");
        gt_sum_fmt_nccl(r->id.nccl_version, b, sizeof(b));
        tally_add(&v->t[1], b);
        if (r->id.abi_version > 0)
            snprintf(b, sizeof(b), "v%d", r->id.abi_version);
        else
            snprintf(b, sizeof(b), "?");
        tally_add(&v->t[2], b);
        tally_add(&v->t[3], r->id.transport[0] ? gt_esc(r->id.transport) : "?");
        tally_add(&v->t[4], r->id.node.kernel_release[0] ? gt_esc(r->id.node.kernel_release) : "?");
        tally_add(&v->t[5], r->id.launcher[0] ? gt_esc(r->id.launcher) : "none");
        if ((unsigned)r->liveness < 8)
            v->states[r->liveness]++;
        if (r->id.rank < 0) {
            if (!v->unknown_rank++)
                v->unk = r;
        } else {
            if (!v->known_rank++ || r->id.rank < v->rmin)
                v->rmin = r->id.rank;
            if (v->known_rank == 1 || r->id.rank > v->rmax)
                v->rmax = r->id.rank;
        }
    }
}

/* "== job ...: N process(es) on M node(s) ...", software, ranks. */
static void job_head(FILE *f, const struct gt_job *j, const struct job_view *v)
{
    char line[1024], b[512];
    if (j->njobs == 1)
        snprintf(b, sizeof(b), "job %s", j->recs[0].id.job[0] ? gt_esc(j->recs[0].id.job) : "-");
    else
        snprintf(b, sizeof(b), "%d jobs", j->njobs);
    snprintf(line, sizeof(line), "== %s: %zu process(es) on %zu node(s), %zu communicator(s);", b,
             j->nrec, j->nnodes, j->ncomm);
    for (int s = 0; s < 8; s++)
        if (v->states[s])
            snprintf(line + strlen(line), sizeof(line) - strlen(line), " %s %zu",
                     gt_liveness_name(s), v->states[s]);
    gt_report_wrap(f, 0, 6, line);
    static const char *const names[] = {"plugin",    "NCCL",   "net ABI",
                                        "transport", "kernel", "launcher"};
    line[0] = 0;
    for (int k = 0; k < 6; k++) {
        tally_text(&v->t[k], names[k], b, sizeof(b));
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s", k ? "; " : "", b);
    }
    fprintf(f, "   software ");
    gt_report_wrap(f, 12, 12, line);
    if (v->known_rank)
        snprintf(line, sizeof(line), "%d..%d (%zu process(es) with a rank)", v->rmin, v->rmax,
                 v->known_rank);
    else
        line[0] = 0;
    if (v->unknown_rank) {
        gt_sum_rank_unknown_why(v->unk, 0, b, sizeof(b));
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s? for %zu process(es) (%s)",
                 v->known_rank ? "; " : "", v->unknown_rank, b);
    }
    fprintf(f, "   ranks    ");
    gt_report_wrap(f, 12, 12, line);
}

/* Whose files these are: one owner per job unless --accept-owner took more. */
static void job_owners(FILE *f, const struct gt_job *j)
{
    long owners[4];
    size_t nown[4] = {0}, no = 0, more = 0;
    for (size_t i = 0; i < j->nrec; i++) {
        size_t k = 0;
        while (k < no && owners[k] != j->recs[i].owner)
            k++;
        if (k == no && no == 4) {
            more++;
            continue;
        }
        if (k == no)
            owners[no++] = j->recs[i].owner;
        nown[k]++;
    }
    char line[1024];
    line[0] = 0;
    for (size_t k = 0; k < no; k++) {
        char o[64];
        gt_owner_short(owners[k], o, sizeof(o));
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s", k ? "; " : "", o);
        if (no > 1)
            snprintf(line + strlen(line), sizeof(line) - strlen(line), " (%zu)", nown[k]);
    }
    if (more)
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "; %zu more", more);
    if (no) {
        fprintf(f, "   owner    ");
        gt_report_wrap(f, 12, 12, gt_esc(line));
    }
}

/* Why NCCL's version or the net ABI is "?" where a process shows it so. */
static void job_unknowns(FILE *f, const struct job_view *v)
{
    for (int k = 1; k < 3; k++)
        for (size_t i = 0; i < v->t[k].nv; i++)
            if (!strcmp(v->t[k].v[i], "?")) {
                fprintf(f, "   ?        ");
                gt_report_wrap(f, 12, 12,
                               k == 1 ? "NCCL: " GT_SUM_NCCL_UNKNOWN_WHY
                                      : "net ABI: NCCL had not called the plugin's init");
            }
}

/* The node tally: how many nodes show each verdict; those that differ from
 * the most common one (as verdict's alike nodes). */
static void job_nodes(FILE *f, const struct gt_job *j)
{
    char line[1024];
    size_t seen[GT_V_COUNT] = {0};
    for (size_t i = 0; i < j->nnodes; i++)
        if ((unsigned)j->nodes[i].code < GT_V_COUNT)
            seen[j->nodes[i].code]++;
    int maj = gt_alike_majority(seen, GT_V_COUNT);
    snprintf(line, sizeof(line), "%zu (%s", j->nnodes, gt_esc(j->nodes[0].host));
    if (j->nnodes > 1)
        snprintf(line + strlen(line), sizeof(line) - strlen(line), " .. %s",
                 gt_esc(j->nodes[j->nnodes - 1].host));
    snprintf(line + strlen(line), sizeof(line) - strlen(line), "):");
    for (int v = 0; v < GT_V_COUNT; v++)
        if (seen[v])
            snprintf(line + strlen(line), sizeof(line) - strlen(line), " %s %zu",
                     gt_verdict_label(v, j->overall.emulated), seen[v]);
    fprintf(f, "   nodes    ");
    gt_report_wrap(f, 12, 12, line);
    size_t shown = 0;
    for (size_t i = 0; i < j->nnodes; i++) {
        const struct gt_node *nd = &j->nodes[i];
        if (nd->code == maj)
            continue;
        if (shown++ == GT_REPORT_LIST_MAX)
            continue;
        snprintf(line, sizeof(line), "%s: %s (%d process(es), %d communicator(s))",
                 gt_esc(nd->host), gt_verdict_label(nd->code, j->overall.emulated), nd->nproc,
                 nd->ncomm);
        fprintf(f, "            ");
        gt_report_wrap(f, 12, 14, line);
    }
    if (shown > GT_REPORT_LIST_MAX)
        fprintf(f, "            and %zu more node(s) (gdrtrace verdict lists every node)\n",
                shown - GT_REPORT_LIST_MAX);
}

/* The registrations, fallbacks and errors of every communicator summed. */
static void job_regs(FILE *f, const struct gt_job *j)
{
    uint64_t did[GTR_METHOD_COUNT] = {0}, fb = 0, err = 0;
    for (size_t i = 0; i < j->ncomm; i++) {
        for (int a = 0; a < GTR_ASKED_COUNT; a++)
            for (int m = 0; m < GTR_METHOD_COUNT; m++)
                did[m] += j->comms[i].sum->reg_count[a][m];
        fb += j->comms[i].sum->fallback_count;
        err += j->comms[i].sum->error_count;
    }
    fprintf(f,
            "   regs     dmabuf %llu, peermem %llu, host %llu, failed %llu; fallbacks %llu, "
            "errors %llu\n",
            (unsigned long long)did[0], (unsigned long long)did[1], (unsigned long long)did[2],
            (unsigned long long)did[3], (unsigned long long)fb, (unsigned long long)err);
}

/* The processes with a fate (died in a call, exited early ...). */
static void job_fates(FILE *f, const struct gt_job *j)
{
    char line[1024];
    for (size_t i = 0; i < j->nfates; i++) {
        if (i == GT_REPORT_LIST_MAX) {
            fprintf(f, "   and %zu more process(es) with a fate (gdrtrace verdict lists them)\n",
                    j->nfates - i);
            break;
        }
        const struct gt_recfile *r = &j->recs[j->fates[i].rec];
        snprintf(line, sizeof(line), "proc %s:%d %s: ", gt_esc(r->id.host), r->id.pid,
                 j->fates[i].f.kind == GT_FATE_IN_CALL
                     ? "-"
                     : gt_verdict_label(j->fates[i].f.code, j->overall.emulated));
        fprintf(f, "   ");
        char all[1400];
        snprintf(all, sizeof(all), "%s%s", line, gt_esc(j->fates[i].f.text));
        gt_report_wrap(f, 3, 8, all);
    }
}

void gt_sum_job(FILE *f, const struct gt_job *j)
{
    struct job_view *v = malloc(sizeof(*v));
    if (!v)
        return;
    job_view(j, v);
    job_head(f, j, v);
    job_owners(f, j);
    job_unknowns(f, v);
    free(v);
    job_nodes(f, j);
    job_regs(f, j);
    job_fates(f, j);
}
