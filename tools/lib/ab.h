/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ab.h — the runbook's A/B judgement as a measuring instrument: k runs a
 * side (a run is the unit of evidence), the three groups of figures side by
 * side (application SLO, NCCL/RDMA evidence, host pressure), each figure's
 * per-run values compared with an interval (tools/lib/abstat.h: Welch's t
 * over runs, Holm over the rows that are evidence of an effect, family-wise
 * false-alarm rate GT_AB_ALPHA), and the one conclusion computed from
 * exactly the decisions of those rows.  Used by `gdrtrace diff` (text,
 * --json) and the report's A/B; a pure function of the runs.  Renderers:
 * tools/render/ab_text.h, tools/render/json_ab.h.  The rules: docs/diff.md.
 *
 * Roles of a row: an EFFECT row (the SLO's figures, the host's CPU and
 * memory) is evidence of an effect and is one of Holm's family; a MECHANISM
 * row (the verdict, the method shares) says whether the registration path
 * changed (a fact of each run, no statistics: a share moves when the means
 * differ by more than 5 points); an INFO row (fallbacks, errors, reg p50,
 * the data-path threads' share) and a PEER row (send/recv latency: they
 * include waiting on the peer) are shown with their interval but are not
 * evidence of anything.
 *
 * Conclusion, first rule that fires (ab->rule names it):
 *  not-comparable  the confounder guard found differences -> no conclusion;
 *  emulated        either side moved GPU memory by the emulation (CUDA
 *                  copies, the copier process) and the mechanism changed,
 *                  an effect row moved or a side has one run -> the
 *                  application and host-pressure effects are not measurable
 *                  on an emulated NIC, the copier's share of host CPU shown;
 *  one-run         a side has one run -> the noise is unknown: repeat;
 *  no-difference   the mechanism unchanged and no EFFECT row beyond noise;
 *  runbook         "mechanism changed|unchanged, host path ..., application
 *                  SLO ...: JUDGEMENT"; faster/slower only when an SLO row
 *                  moved; host rows alone are "host path unloaded|loaded
 *                  more".
 */
#ifndef GDRTRACE_TOOLS_AB_H
#define GDRTRACE_TOOLS_AB_H

#include <stdio.h>

#include "tools/lib/hostp.h"
#include "tools/lib/model.h"

/* The application's pace, recorded with or without collectives: bytes
 * moved per second of the data path (first data-path call to last sample),
 * summed over processes. */
#define GT_AB_PACE "data moved per data-path second (MB/s)"

/* The family-wise false-alarm rate of the EFFECT rows of one diff. */
#define GT_AB_ALPHA 0.05

enum gt_ab_state {
    GT_AB_NA = 0,  /* not recorded on one side or both */
    GT_AB_SAME,    /* every run of both sides equal */
    GT_AB_NOISE,   /* different, within noise (or within the resolution) */
    GT_AB_UP,      /* B above A beyond noise (mechanism rows: changed) */
    GT_AB_DOWN,    /* B below A beyond noise */
    GT_AB_UNKNOWN, /* a side has one run: the noise is unknown */
    GT_AB_NOTEVID, /* shown, not evidence (info and peer rows) */
};
const char *gt_ab_state_name(int s);

enum gt_ab_group { GT_AB_SLO = 0, GT_AB_EVIDENCE, GT_AB_HOST, GT_AB_GROUPS };
const char *gt_ab_group_name(int g); /* "application SLO", ... */

enum gt_ab_role { GT_AB_EFFECT = 0, GT_AB_MECH, GT_AB_INFO, GT_AB_PEER };
const char *gt_ab_role_name(int r); /* effect, mechanism, info, waits on the peer */

enum gt_ab_fmt {
    GT_AB_F_NS = 0, /* a duration in ns */
    GT_AB_F_S2,     /* seconds, %.2f */
    GT_AB_F_S3,     /* %.3f */
    GT_AB_F_PCT,    /* a share in percent, compared in points */
    GT_AB_F_BYTES,
    GT_AB_F_G3, /* %.3g */
    GT_AB_F_COUNT,
    GT_AB_F_TEXT, /* the verdict */
};

#define GT_AB_ROWS 64
#define GT_AB_MAXRUNS 64

/* One figure of one run. */
struct gt_ab_val {
    int group, role, fmt;
    int better;   /* +1 higher is better, -1 lower is better, 0 neither */
    double v;     /* NAN: not recorded */
    double floor; /* resolution: a difference this small is never beyond noise */
    char name[48];
    char text[40]; /* GT_AB_F_TEXT */
};

/* One run's figures (gt_ab_run_of). */
struct gt_ab_run {
    int nval;
    struct gt_ab_val val[GT_AB_ROWS];
    int emulated;      /* GPU memory moved by the emulation (recfact: r->emulated) */
    int slo_recorded;  /* collective-level records (format 1.6) */
    char slo_why[256]; /* why not */
    double cpu_s, helper_s;
    struct gt_hostp host;
};

struct gt_ab_row {
    int group, role, fmt, better;
    char name[48];
    char a[40], b[40], delta[24], ci[40]; /* as printed */
    double va, vb;                        /* the sides' centers (NAN: none) */
    int na, nb;                           /* runs with a value */
    int logscale;                         /* delta and interval relative (ratio - 1) */
    double diff, lo, hi;                  /* B-A and its interval on the compared scale; NAN none */
    double p;                             /* Welch's two-sided p; NAN: not tested */
    double level;                         /* the interval's two-sided miss level (Holm's step) */
    int family;                           /* one of Holm's family */
    int below_floor; /* interval excludes 0, difference within the resolution */
    int state;       /* enum gt_ab_state */
};

struct gt_ab {
    struct gt_ab_row row[GT_AB_ROWS];
    int nrow;
    int k[2];      /* runs a side */
    int ndiffs;    /* the confounder guard's differences */
    int mechanism; /* 1: the registration mechanism changed */
    int emulated[2];
    double copier_share[2]; /* copier CPU over host CPU (process + copier); NAN none */
    int slo;                /* enum gt_ab_state of the SLO; GT_AB_NA: not recorded */
    char slo_why[256];
    int host; /* UP: loaded more, DOWN: unloaded, NOISE: held, NA */
    int nfamily;
    double alpha;
    struct gt_hostp hostp[2]; /* the first run of each side */
    char rule[24];
    char conclusion[640];
};

/* One run's figures from its job (every communicator summed). */
void gt_ab_run_of(const struct gt_job *j, struct gt_ab_run *r);
/* Judges runs a[0..ka) against b[0..kb) (k <= GT_AB_MAXRUNS); ndiffs: the
 * confounders the guard found. */
void gt_ab_build(struct gt_ab *ab, const struct gt_ab_run *a, int ka, const struct gt_ab_run *b,
                 int kb, int ndiffs);
/* One run a side (the report's --baseline): builds both runs' figures. */
int gt_ab_build_jobs(struct gt_ab *ab, const struct gt_job *a, const struct gt_job *b, int ndiffs);

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
