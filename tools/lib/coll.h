/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coll.h — the reader's model of the collective sections (format 1.6, what
 * NCCL's profiler interface reported).  Its renderers: summary's table and
 * verdict's evidence line (tools/render/coll_text.h), the JSON object
 * (tools/render/json_coll.h), the Prometheus series.
 *
 * The model is folded one recorder at a time (gt_coll_fold, from
 * gt_job_add while the recorder is whole), so memory is one record per
 * communicator, not per process: each communicator's cells (function x
 * message-size bucket) are summed over its ranks, histograms bucket by
 * bucket.  A process whose recorder has the collective status section but
 * no communicator in it is counted with the reason its metrics are absent
 * (gt_coll_absent_why).  Recorders older than 1.6 leave no trace: every
 * renderer prints nothing when no recorder had the status section, so
 * output of older runs is unchanged.
 */
#ifndef GDRTRACE_TOOLS_COLL_H
#define GDRTRACE_TOOLS_COLL_H

#include <stdint.h>
#include <stdio.h>

#include "tools/lib/recfile.h"

struct gt_coll_mcell {
    uint8_t func, size_log2;
    uint64_t count, bytes, unsized;
    uint64_t algo_proto[GTR_COLL_ALGOS][GTR_COLL_PROTOS];
    struct gtr_hist hist;
};

#define GT_COLL_RANKS_KEPT 16

struct gt_coll_mcomm {
    int has_id;
    uint64_t comm_id;
    char name[128];
    int nranks, nnodes; /* from NCCL (0: unknown, v1-v3) */
    int version, mode;
    int nprocs;
    int ranks[GT_COLL_RANKS_KEPT]; /* the first ranks seen, ascending */
    int nranks_kept;
    int64_t first_max_ns;   /* max over ranks: profiler init -> first operation (-1 none) */
    int64_t netinit_max_ns; /* max over ranks: net init -> profiler init (-1 unknown) */
    uint64_t busy_ns, inflight_full, foreign;
    uint64_t stale_child; /* children of an operation whose slot was reused (1.9): not timed */
    struct gt_coll_mcell *cells;
    size_t ncell, cap;
};

#define GT_COLL_WHYS 8

struct gt_coll_model {
    int nstatus; /* recorders with the status section */
    int nwith;   /* of those, with a collective communicator */
    struct gt_coll_mcomm *comms;
    size_t ncomm, cap;
    struct {
        char why[256];
        char example[96]; /* host:pid */
        int n;
    } absent[GT_COLL_WHYS];
    int nabsent;
    int oom;
};

/* Folds recorder r into *m (allocated on the first recorder with the status
 * section).  0, or -1 out of memory (m->oom also set). */
int gt_coll_fold(struct gt_coll_model **m, const struct gt_recfile *r);
void gt_coll_free(struct gt_coll_model *m);

/* Why a recorder with the status section holds no collective communicator:
 * one sentence into buf. */
void gt_coll_absent_why(const struct gt_recfile *r, char *buf, size_t n);

const struct gt_coll_mcomm *gt_coll_find(const struct gt_coll_model *m, uint64_t comm_id);
const char *gt_coll_func_name(int f); /* NCCL's names: AllReduce, ... */
const char *gt_coll_algo_name(int a); /* RING, ... */
const char *gt_coll_proto_name(int p);
/* The bus-bandwidth factor of function f over n ranks (nccl-tests'). */
double gt_coll_busbw_factor(int f, int n);
/* A cell's throughput from its summed bytes and durations: algorithm and
 * bus bandwidth in GB/s (0 when nothing was timed). */
void gt_coll_bw(const struct gt_coll_mcomm *c, const struct gt_coll_mcell *x, double *algbw,
                double *busbw);
/* The most frequent algorithm_protocol of a cell ("RING_LL"), NCCL
 * Inspector's algo_proto label. */
void gt_coll_algo_proto(const struct gt_coll_mcell *x, char *buf, size_t n);
/* NCCL Inspector's message_size label of a bucket ("1-2MB"). */
void gt_coll_size_label(unsigned size_log2, char *buf, size_t n);

/* "proxy", "kernel" or "off": the profiler's mode. */
const char *gt_coll_mode_name(int m);
/* A communicator's label: "0x<commId>", or "(commId not yet known)". */
void gt_coll_comm_label(const struct gt_coll_mcomm *c, char *buf, size_t n);

#endif
