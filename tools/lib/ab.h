/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ab.h — the runbook's A/B judgement: the three groups of metrics side by
 * side (application SLO, NCCL/RDMA evidence, host pressure), each delta
 * marked when it is within noise, and the one-line conclusion.  Used by
 * `gdrtrace diff` (text and --json); a pure function of the two jobs.
 * Renderers: tools/render/ab_text.h, tools/render/json_ab.h.
 *
 * Noise rules (docs/reader.md, "A/B: the three groups"):
 *  N1 latency quantiles (p50/p95/p99 of a histogram of n values): each side's
 *     distribution-free confidence interval of the quantile, the values at
 *     ranks q +- 3 sqrt(q(1-q)/n), widened by the histogram's resolution
 *     (1/16 of a value); within noise when the two intervals overlap.
 *  N2 CPU figures (process CPU, CPU s per GB): within noise when |B-A| <= the
 *     largest of: 40 % of the larger side (identical runs on a shared host
 *     differ by that much: docs/results/hostp.md); 3 standard errors of the
 *     difference from the per-process spread (each side >= 2 processes);
 *     the CPU accounting's resolution, 2 clock ticks (20 ms) per process,
 *     carried into the figure's unit.  The data-path threads' share of the
 *     CPU: 25 points, or 3 standard errors.
 *  N3 memory figures (host memory in the data path, resident, locked,
 *     pinned high-water): within noise when |B-A| <= max(5 % of the larger,
 *     1 MiB per process).
 *  N4 shares of the method mix: within noise when they move by 5 points or
 *     less.
 *  N5 the SLO (collective sections, format 1.6): per function p50/p95/p99 by
 *     N1; algbw within max(5 %, the p50 interval's relative half-width);
 *     init (net init -> profiler init) by N2's 40 %.  Improved: some figure
 *     better beyond noise, none worse; regressed: any worse.
 * Conclusion (first match): A and B not comparable (the confounder guard of
 * cmd_diff.c found differences) -> no conclusion; nothing beyond noise ->
 * "no difference (within noise)"; else "mechanism changed|unchanged, host
 * pressure X %, application SLO ...: <judgement>", where "faster" needs the
 * SLO to have improved beyond noise, never host pressure alone.
 */
#ifndef GDRTRACE_TOOLS_AB_H
#define GDRTRACE_TOOLS_AB_H

#include <stdio.h>

#include "tools/lib/hostp.h"
#include "tools/lib/model.h"

enum gt_ab_state {
    GT_AB_NA = 0, /* not recorded on one side or both */
    GT_AB_SAME,   /* equal */
    GT_AB_NOISE,  /* different, within noise */
    GT_AB_UP,     /* B above A beyond noise */
    GT_AB_DOWN,   /* B below A beyond noise */
};
const char *gt_ab_state_name(int s); /* n/a, same, within noise, up, down */

enum gt_ab_group { GT_AB_SLO = 0, GT_AB_EVIDENCE, GT_AB_HOST, GT_AB_GROUPS };
const char *gt_ab_group_name(int g); /* "application SLO", ... */

#define GT_AB_ROWS 48

struct gt_ab_row {
    int group; /* enum gt_ab_group */
    char name[48];
    char a[32], b[32], delta[24]; /* as printed */
    double va, vb;                /* the values (NAN: none) */
    int state;                    /* enum gt_ab_state */
};

struct gt_ab {
    struct gt_ab_row row[GT_AB_ROWS];
    int nrow;
    int ndiffs;    /* the confounder guard's differences */
    int mechanism; /* 1: the registration mechanism changed */
    int slo;       /* enum gt_ab_state of the SLO; GT_AB_NA: not recorded */
    char slo_why[256];
    int hp;        /* state of the headline host-pressure figure (CPU s per GB) */
    double hp_rel; /* its (B-A)/A */
    int mem;       /* state of host memory in the data path */
    double mem_rel;
    struct gt_hostp host[2];
    char conclusion[384];
};

/* Fills ab for sides a and b (tot: their communicators summed); ndiffs: the
 * number of confounders cmd_diff.c found. */
void gt_ab_build(struct gt_ab *ab, const struct gt_job *a, const struct gtr_comm *ta,
                 const struct gt_job *b, const struct gtr_comm *tb, int ndiffs);
/* The application SLO of a job or of one communicator (NCCL's profiler
 * interface, format 1.6): per function, every communicator's cells summed
 * (tools/lib/coll.h); init: the longest net init -> profiler init of its
 * communicators.  recorded 0 with why when there is none. */
struct gt_ab_slo_fn {
    struct gtr_hist h;
    double timed_bytes, timed_ns; /* of the timed operations: throughput */
    int present;
};

struct gt_ab_slo {
    int recorded;
    char why[256];
    int64_t init_ns; /* -1: unknown */
    struct gt_ab_slo_fn fn[GTR_COLL_FUNC_COUNT];
};

/* comm_id: one communicator's; UINT64_MAX: the whole job. */
void gt_ab_slo_of(const struct gt_job *j, uint64_t comm_id, struct gt_ab_slo *s);
/* Algorithm throughput of a function in GB/s; NaN when nothing was timed or
 * no size is known (P2p without a datatype). */
double gt_ab_slo_gbs(const struct gt_ab_slo_fn *f);

#endif
