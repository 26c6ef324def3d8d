/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hostp.h — host pressure, the third of the runbook's groups, as the reader
 * computes it from the recorders' host sections (format 1.5, struct
 * gtr_host): per process, summed over a communicator's processes, a node's
 * or a whole run's.
 *
 * Figures (docs/reader.md, "Host pressure"):
 *   process CPU      user + system CPU over the traced window: from the
 *                    recorder's creation to its last sample, summed over
 *                    the processes;
 *   CPU s per GB     that CPU over the bytes the processes moved (completed
 *                    sends + receives, in 10^9 bytes);
 *   data-path share  the CPU of the threads that drove the data path (NCCL's
 *                    proxy threads) since each was first seen, over the
 *                    process CPU of the window;
 *   host memory in   the high-water of host memory registered for the data
 *   the data path    path (staging), summed over processes (each process's
 *                    own high-water: an upper bound of the simultaneous sum);
 *   resident, locked, pinned high-water: VmHWM, VmLck, VmPin maxima, summed;
 *   helper CPU       (format 1.7) the CPU of the process that did a process's
 *                    copies elsewhere (the GPU-memory copier), summed; it is
 *                    host CPU spent for the data path, so CPU s per GB
 *                    counts it beside the process CPU (moving the copies to
 *                    another process must not read as CPU saved).
 * Per-process CPU s per GB and share are also kept as a mean and variance
 * (Welford), the spread the A/B's noise rule uses (tools/lib/ab.c).
 * Pure functions of the job (no I/O); recorders without the section count in
 * nproc_without and nothing else.  Renderers: tools/render/hostp_text.h,
 * tools/render/json_hostp.h.
 */
#ifndef GDRTRACE_TOOLS_HOSTP_H
#define GDRTRACE_TOOLS_HOSTP_H

#include <stddef.h>
#include <stdint.h>

#include "tools/lib/model.h"

/* Mean and variance, one value at a time (Welford). */
struct gt_spread {
    double n, mean, m2;
};
void gt_spread_add(struct gt_spread *s, double x);
double gt_spread_sd(const struct gt_spread *s); /* sample standard deviation; 0 below 2 */

struct gt_hostp {
    size_t nproc;                /* processes with a host section */
    size_t nproc_without;        /* processes whose recorder has none (format < 1.5) */
    double cpu_s, user_s, sys_s; /* process CPU over the traced window */
    double cpu_total_s;          /* since each process started, as /proc/<pid>/stat counts */
    double thread_s;             /* data-path threads' CPU since each was first seen */
    double helper_s;             /* helper processes' CPU (the copier), format 1.7 */
    size_t nhelper;              /* processes that had a helper */
    double window_s;             /* traced windows, summed (process-seconds) */
    uint64_t bytes;              /* bytes moved (sends + receives) */
    uint64_t staging_hwm, staging_now, staging_total;
    uint64_t rss_hwm, locked_hwm, pinned_hwm;
    uint32_t threads, untracked;
    uint64_t samples;
    double sample_cost_s;
    int flags;                      /* enum gtr_host_flags seen on any process */
    struct gt_spread per_gb, share; /* per process (those that moved bytes / used CPU) */
};

void gt_hostp_clear(struct gt_hostp *h);
/* Adds process r (its host section, if any) that moved `bytes`. */
void gt_hostp_add(struct gt_hostp *h, const struct gt_recfile *r, uint64_t bytes);
/* CPU seconds (process and helper) per 10^9 bytes moved; -1 when nothing
 * moved or no CPU known. */
double gt_hostp_cpu_per_gb(const struct gt_hostp *h);
/* Data-path threads' CPU over process CPU, 0..1; -1 when unknown. */
double gt_hostp_share(const struct gt_hostp *h);

/* Bytes moved by recorder `rec` of j (its digests, every communicator). */
uint64_t gt_hostp_rec_bytes(const struct gt_job *j, size_t rec);
/* The whole job; a communicator's processes; a node's processes. */
void gt_hostp_of_job(const struct gt_job *j, struct gt_hostp *h);
void gt_hostp_of_comm(const struct gt_job *j, size_t ci, struct gt_hostp *h);
void gt_hostp_of_node(const struct gt_job *j, const char *host, struct gt_hostp *h);
/* 1 when any recorder of j has a host section. */
int gt_hostp_recorded(const struct gt_job *j);

#endif
