/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.h — what the commands compute from parsed recorders: communicator
 * records merged across processes and nodes (NCCL's commId is the same on
 * every rank of a communicator), the verdict of each with its evidence, and
 * the verdict of the whole input.
 *
 * Verdict rules (docs/reader.md explains them; first match wins):
 *   (a process)    refused by the plugin: BYPASSED; died inside a call into
 *                  code gdrtrace does not own: ERROR (gt_recfile_fate)
 *   NO-DATA        no registration, fallback or error recorded
 *   ERROR          a registration failed or an error was recorded
 *   FALLBACK       a DMA-BUF registration fell back (policy choices excluded)
 *   HOST-STAGED    no GPU memory registered by DMA-BUF or peermem
 *   DIRECT-DMABUF  GPU memory registered by DMA-BUF only
 *   DIRECT-PEERMEM GPU memory registered by peermem only
 *   MIXED          both
 * Host registrations beside GPU ones are NCCL's LL buffers (sender LL, the
 * receiver's p2p LL buffer stay in host memory when GDR is on,
 * nccl-net-abi.md §3.5): expected, never MIXED by themselves.
 */
#ifndef GDRTRACE_TOOLS_MODEL_H
#define GDRTRACE_TOOLS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "tools/lib/recfile.h"
#include "tools/lib/text_util.h" /* gt_appendf, gt_natcmp, gt_fmt_*: once declared here */

enum gt_verdict_code {
    GT_V_DIRECT_DMABUF = 0,
    GT_V_DIRECT_PEERMEM,
    GT_V_HOST_STAGED,
    GT_V_MIXED,
    GT_V_FALLBACK,
    GT_V_ERROR,
    GT_V_NO_DATA,
    GT_V_BYPASSED, /* NCCL's traffic did not go through gdrtrace: the plugin refused */
    GT_V_COUNT
};

/* Exit codes of `gdrtrace verdict` (documented in docs/reader.md). */
#define GT_EXIT_INPUT 2     /* an input could not be read */
#define GT_EXIT_EXPECT 20   /* --expect did not match */
#define GT_EXIT_EMULATED 21 /* --expect dmabuf|peermem on an emulated run (no --allow-emulated) */

/* A run of the GPU-memory validation mode (GDRTRACE_GPUMEM=1, plugin/gpumem):
 * no NIC moved GPU memory, CUDA copies did.  Every output that names a
 * verdict of such a run uses gt_verdict_label, never the bare name. */
#define GT_EMULATED_TEXT "emulated: no NIC; GPU memory moved by CUDA copies"

const char *gt_verdict_name(int v);

/*! gt_verdict_label() : the name, with " (" GT_EMULATED_TEXT ")" when
 *  emulated (every verdict of such a run: none of them involved a NIC). */
const char *gt_verdict_label(int v, int emulated);
int gt_verdict_exit(int v);

struct gt_verdict {
    int code;
    int emulated;   /* some recorder it rests on ran the GPU-memory validation mode */
    char why[2048]; /* the evidence, one or more sentences */
};

struct gt_comm_lite;

/* One communicator (or, for ABI < v11, one process standing for itself). */
struct gt_member {
    size_t rec;    /* index into the recorder array */
    uint32_t slot; /* index into that recorder's comms */
};

struct gt_ccomm {
    int has_comm_id;
    uint64_t comm_id;
    char label[96]; /* "0x..." or "process HOST:PID" */
    /* counters and histograms summed over members (owned); NULL in a lean
     * job (gt_job.lean), whose communicators keep only their counters
     * (lite, model.c's) until judged: 27 KB of histograms a communicator
     * was most of verdict's memory at job scale (16,385 communicators at
     * 131,072 ranks: 440 MB) */
    struct gtr_comm *sum;
    struct gt_comm_lite *lite;
    struct gt_member *members;
    size_t nmembers; /* comm slots (a process may hold sibling slots) */
    size_t nprocs;   /* distinct processes */
    int nhosts;
    struct gt_verdict v;
    size_t rix, nrix; /* its processes' digests: j->ranks[j->rank_ix[rix .. rix + nrix)] */
};

/* One host: its processes' communicators (sibling slots summed), judged with
 * each process's own context and combined. */
struct gt_node {
    char host[64];
    int nproc; /* processes */
    int ncomm; /* distinct communicators with a member here (as the verdict counts them) */
    uint64_t did[GTR_METHOD_COUNT]; /* registrations by method */
    int code;                       /* combined verdict */
};

/* What became of a process, from its recorder alone (issues 23, 19.1): the
 * plugin refused it, or it died (or still is) inside a call into code
 * gdrtrace does not own — the last CALLING event without its RETURNED. */
enum gt_fate_kind {
    GT_FATE_NONE = 0,
    GT_FATE_REFUSED,         /* REFUSED, and no transport chosen after it: BYPASSED */
    GT_FATE_CRASHED_IN_CALL, /* state LIVE, the writer not running here: ERROR */
    GT_FATE_EXITED_IN_CALL,  /* state CLOSED (exit() ran) inside the call: ERROR */
    GT_FATE_IN_CALL,         /* the writer runs and is inside the call now: no verdict */
};

struct gt_fate {
    int kind;        /* enum gt_fate_kind */
    int code;        /* the verdict it gives (GT_V_*), GT_V_NO_DATA when none */
    int site;        /* enum gt_call_site of the open call */
    int reason;      /* the refusal's enum gt_reason */
    char text[1024]; /* one line: what happened, where, when, to whom */
};

/* Fills *f for recorder r; kind GT_FATE_NONE when nothing happened. */
void gt_recfile_fate(const struct gt_recfile *r, struct gt_fate *f);

struct gt_pfate {
    size_t rec; /* index into the recorder array */
    struct gt_fate f;
};

struct gt_fold;
struct gt_coll_model;

/* A process's digest of one of its communicators (sibling slots summed):
 * what outlier detection and joining NCCL's log need, kept when the
 * recorder itself is released (fold mode). */
struct gt_rank_comm {
    size_t rec;    /* index into the recorder array */
    uint32_t slot; /* first slot of the group */
    int has_comm_id;
    uint64_t comm_id;
    uint64_t did[GTR_METHOD_COUNT]; /* registrations by method */
    uint64_t fallbacks, errors;
    uint64_t msgs, bytes; /* completed sends + receives, and their bytes (watch's rates) */
    uint64_t deregs;      /* deregistrations (kernel check) */
    uint64_t p50_ns[GTR_OP_COUNT], p99_ns[GTR_OP_COUNT]; /* latency; 0: none */
    int verdict;                                         /* judged with this process's context */
    size_t comm;                                         /* index into j->comms */
    /* Connection runs, for joining NCCL's channel lines by order
     * (nccljoin.c): the process's listen/connect/accept events by time,
     * consecutive ones of one communicator making a run.  This
     * communicator's runs are j->conn[conn_at, conn_at + conn_n), by
     * place; conn_nruns: the process's runs (the same in each of its
     * digests; only the first GT_CONN_RUNS_MAX are kept).  conn_lost: its
     * ring holds fewer of this communicator's listen/connect/accept events
     * than its counters (the ring overwrote them, or GDRTRACE_EVENTS kept
     * none): its runs are not all known. */
    size_t conn_at;
    uint32_t conn_n, conn_nruns;
    int conn_lost;
};
#define GT_CONN_RUNS_MAX 64

/* One connection run of a process (gt_rank_comm.conn_at). */
struct gt_conn_run {
    uint32_t k;        /* its place among the process's runs, from 0 */
    uint32_t listens;  /* its listen events (NCCL: one a [receive] channel line) */
    uint32_t connects; /* its connect events (NCCL: one a [send] line, bar shared comms) */
};

struct gt_job {
    struct gt_recfile *recs; /* not owned */
    size_t nrec;
    struct gt_ccomm *comms;
    size_t ncomm;
    struct gt_node *nodes;
    size_t nnodes;
    int njobs, nhosts;
    struct gt_pfate *fates; /* processes with a fate (refused, died in a call) */
    size_t nfates;
    struct gt_verdict overall;
    struct gt_rank_comm *ranks; /* per process and communicator, in (rec, slot) order */
    size_t nranks;
    size_t *rank_ix;          /* indices into ranks grouped by communicator (gt_ccomm.rix) */
    struct gt_conn_run *conn; /* the digests' connection runs (gt_rank_comm.conn_at) */
    size_t nconn, conn_cap;
    struct gt_fold *fold; /* between gt_job_begin and gt_job_finish */
    /* set before the first gt_job_add: the caller reads no communicator's
     * sum (gt_ccomm.sum stays NULL; verdicts, counts and digests as ever) */
    int lean;
    /* what NCCL's profiler interface reported (tools/lib/coll.h), folded by
     * gt_job_add; NULL when no recorder has the collective sections */
    struct gt_coll_model *coll;
    /* after gt_job_finish: rec_pos[i] is where the recorder added as recs[i]
     * now sits (report order); for callers that gathered by that index */
    size_t *rec_pos;
    /* gt_load_job: when no recorder was read for a known reason, that reason
     * (gt_inputs_empty_cause), the next step in its place; else "" */
    char empty_why[512];
};

/* ---- Ranks that differ from their communicator (summary, issue 21) ----
 *
 * A communicator's norm is what most of its processes show.  A process
 * differs when (bits of gt_rank_differs):
 *   VERDICT   its own verdict (judged with its context) is not the most
 *             frequent one among the communicator's processes (ties: the
 *             better verdict, lower code, is the norm, so the worse is named);
 *   FALLBACK  it fell back while fewer than half of them did;
 *   ERROR     it recorded errors while fewer than half of them did;
 *   SLOW      for some operation, its p50 is an outlier among the p50s of the
 *             processes that have that operation (at least GT_OUTLIER_MIN of
 *             them): more than GT_OUTLIER_RATIO x their median, more than
 *             GT_OUTLIER_K scaled MADs (1.4826 x the median absolute deviation,
 *             the robust standard deviation) above it, and at least
 *             GT_OUTLIER_FLOOR_NS above it.  The ratio alone would flag a
 *             communicator whose ranks spread widely (no majority to differ
 *             from); the MAD alone would flag a 1 ns step when all agree (MAD 0:
 *             the histograms' buckets make equal p50s common).  Only slow
 *             outliers: a rank faster than its peers is nothing to chase. */
#define GT_OUTLIER_MIN 3
#define GT_OUTLIER_RATIO 2
#define GT_OUTLIER_K 3
#define GT_OUTLIER_FLOOR_NS 1000

#define GT_DIFF_VERDICT 0x1
#define GT_DIFF_FALLBACK 0x2
#define GT_DIFF_ERROR 0x4
#define GT_DIFF_SLOW 0x8

struct gt_comm_norm {
    size_t nranks;                 /* digests (processes) of the communicator */
    int majority;                  /* the norm's verdict (GT_V_*) */
    size_t nmajority;              /* processes with it */
    size_t nfallback, nerror;      /* processes with fallbacks, with errors */
    size_t nop[GTR_OP_COUNT];      /* processes with data for the operation */
    uint64_t median[GTR_OP_COUNT]; /* median of their p50s (ns); 0: none */
    uint64_t mad[GTR_OP_COUNT];    /* median absolute deviation of the same (ns) */
};

/*! gt_comm_norm() : the norm of communicator j->comms[ci]; 0, or -1 (out of
 *  memory).  Time O(n log n) in its processes. */
int gt_comm_norm(const struct gt_job *j, size_t ci, struct gt_comm_norm *n);
/*! gt_rank_differs() : GT_DIFF_* bits for digest d against its
 *  communicator's norm; *slow_ops (may be NULL): bit op set for each
 *  operation (enum gt_op) whose p50 is an outlier. */
unsigned gt_rank_differs(const struct gt_comm_norm *n, const struct gt_rank_comm *d,
                         unsigned *slow_ops);

/* Builds the merged view; 0 or -1 (out of memory).  overall.emulated: any
 * recorder of the job is emulated.  Linear in the recorders and their
 * communicator slots (hash tables, no pairwise comparisons). */
int gt_job_build(struct gt_job *j, struct gt_recfile *recs, size_t nrec);

/* The same in steps, for folding recorders as they are read:
 * gt_job_begin(), gt_job_add() for each recorder recs[ri] (any order; recs
 * may have moved since the last call, indices are stable), then
 * gt_job_finish(), which sorts recs[0, nrec) into report order
 * (gt_recfile_cmp) and renumbers every reference.  After gt_job_add(recs, ri)
 * returns, the job needs only recs[ri]'s identity, devices in use and
 * source: the rest may be released (inputs.c, fold mode); the merged view
 * is the same as gt_job_build() of the whole recorders.  0 or -1 (out of
 * memory; after a failed add or finish, only gt_job_free). */
int gt_job_begin(struct gt_job *j);
int gt_job_add(struct gt_job *j, struct gt_recfile *recs, size_t ri);
int gt_job_finish(struct gt_job *j, struct gt_recfile *recs, size_t nrec);

/* Reduces a folded recorder to what the job keeps (identity, source, ring
 * statistics, devices in use, NCCL's settings): frees its communicator
 * slots, other settings, callees, collective sections and events. */
void gt_recfile_release(struct gt_recfile *r);
/* The same; all_settings 1 keeps every setting in use (diff compares them
 * key by key: about 256 bytes each, a few dozen a recorder). */
void gt_recfile_reduce(struct gt_recfile *r, int all_settings);

/* The report order of recorders: job, host (both natural), rank, pid, source. */
int gt_recfile_cmp(const struct gt_recfile *x, const struct gt_recfile *y);
void gt_job_free(struct gt_job *j);

/* Verdict of one (possibly merged) communicator record; ctx are the
 * recorders that contributed (for probes, policy, transport). */
void gt_verdict_of(const struct gtr_comm *c, const struct gt_recfile *const *ctx, size_t nctx,
                   struct gt_verdict *v);
/* Verdict of a set (docs/reader.md, "Precedence"): ignores NO-DATA; ERROR >
 * FALLBACK > BYPASSED > disagreement = MIXED > the one kind seen. */
int gt_verdict_combine(const int *codes, size_t n);
/* The same from how many of each code were seen (seen[GT_V_COUNT]). */
int gt_verdict_combine_counts(const int *seen);

/* has_comm_id value of the writer's overflow slot: shared by communicators
 * that found no free slot (shim/recorder.h GT_REC_COMM_OVERFLOW). */
#define GT_COMM_OVERFLOW 2

/* Comm slots worth reporting: not FREE, and not an overflow slot that
 * nothing was ever recorded in (the writer activates it at open). */
int gt_comm_used(const struct gtr_comm *c);

/* The writer gives a second thread driving the same communicator its own
 * sibling slot (same has_comm_id, comm_id); readers sum them.  For slot s:
 * returns 0 if s is unused or not the first slot of its group, else 1 with
 * *out = the sum of every slot of the group and *nsib = how many. */
int gt_recfile_comm_group(const struct gt_recfile *r, uint32_t s, struct gtr_comm *out, int *nsib);
/* 1 when records a and b are slots of one group (same has_comm_id and commId). */
int gt_comm_same_group(const struct gtr_comm *a, const struct gtr_comm *b);

/* dst += src for every counter and histogram; last errno/reason/text kept
 * from src when src has any. */
void gt_comm_accumulate(struct gtr_comm *dst, const struct gtr_comm *src);
void gt_comm_clear(struct gtr_comm *c);

/* Registration totals. */
uint64_t gt_comm_regs(const struct gtr_comm *c);

/* The label of comm record c of recorder r: "0x..", "process HOST:PID", "overflow HOST:PID". */
const char *gt_fmt_comm(const struct gtr_comm *c, const struct gt_recfile *r, char *buf, size_t n);

/* One recorder as `ls` lists it: what it shows of a recorder, held for
 * every one at once (a reduced gt_recfile is 2.2 KB, a row about 200 bytes). */
struct gt_ls_row {
    char *source; /* owned: one allocation holding source, host and job */
    const char *host, *job;
    int32_t pid, rank;
    int liveness;             /* enum gt_liveness */
    const char *liveness_why; /* static, or NULL */
    int64_t owner;            /* uid, -1 unknown */
    uint64_t size;
    int64_t start_wall_ns;
    char *fate; /* owned: gt_fate's text, NULL when nothing became of it */
};

#endif
