/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coll.h — the collective recorder: what NCCL's profiler interface reports,
 * in version-neutral terms, turned into the recorder's collective sections
 * (struct gtr_coll_comm, recorder_format.h 1.6).  The per-version adapters
 * (plugin/abi/prof_v*.c) translate NCCL's descriptors into struct
 * gt_coll_desc and call these functions; nothing here knows a version.
 *
 * What a duration is (docs/collectives.md): an operation (a Coll or P2p
 * event) starts when NCCL enqueues it, or when the previous operation of the
 * same communicator ended if that is later (NCCL runs a communicator's
 * operations in order); it ends when its last child event stops — ProxyOp
 * in mode `proxy` (the network work of the plugin), KernelCh in mode
 * `kernel`, whose GPU timestamps then give the duration instead.  An
 * operation with no child (one that did not use the network in mode proxy)
 * is counted, not timed.
 *
 * Invariants:
 *  C1. The event path takes no lock, allocates nothing and makes no system
 *      call: operations live in a fixed per-context table of
 *      GT_COLL_INFLIGHT slots, cells are claimed lock-free in the mapped
 *      file, counters are relaxed atomics (events of one communicator come
 *      from the application thread and the proxy thread).
 *  C2. A handle given to NCCL names an operation: its context, slot and
 *      the slot's generation, tagged in its low bits for a child (1:
 *      ProxyOp, 2: KernelCh); NULL for events we do not follow (NCCL passes
 *      NULL handles to nobody).  It is never an address: a handle of a
 *      finalized context, or of a slot reused since, names nothing, and a
 *      child carrying one is counted (stale_child), never attached.
 *  C3. A child whose descriptor names another process (PXN: its parent
 *      lives in that process) is never dereferenced; it is counted in
 *      gtr_coll_comm.foreign.
 *  C4. Never an error to NCCL from an event: a lost operation is a counter
 *      (inflight_full), not a failure of the job.
 */
#ifndef GDRTRACE_SHIM_COLL_H
#define GDRTRACE_SHIM_COLL_H

#include <stdint.h>

#include "common/gt_net.h"
#include "gdrtrace/recorder_format.h"

#define GT_COLL_INFLIGHT 1024 /* operations of one communicator in flight, a power of two */

enum gt_coll_kind {
    GT_COLL_EV_OTHER = 0, /* an event type we do not follow */
    GT_COLL_EV_OP,        /* Coll or P2p: an operation */
    GT_COLL_EV_PROXYOP,   /* child: network work of an operation */
    GT_COLL_EV_KERNELCH,  /* child: one channel of an operation's kernel */
    GT_COLL_EV_GROUP,     /* v5+: one kernel plan, the parentGroup of its operations */
    GT_COLL_EV_CE,        /* v6+: a collective run by copy engines (CeColl): counted */
};

/* One event start, whatever the version. */
struct gt_coll_desc {
    int kind;           /* enum gt_coll_kind */
    void *parent;       /* children: NCCL's parentObj (our operation handle, or NULL) */
    void *group;        /* OP, P2p, v5+: NCCL's parentGroup (our group handle, or NULL) */
    int pid;            /* ProxyOp: the process whose proxy runs it; 0 unknown */
    unsigned func;      /* OP: enum gtr_coll_func */
    unsigned algo;      /* OP: enum gtr_coll_algo */
    unsigned proto;     /* OP: enum gtr_coll_proto */
    uint64_t count;     /* OP: elements */
    unsigned type_size; /* OP: bytes per element, 0 unknown */
    int rank;           /* OP: the descriptor's rank, -1 unknown */
    /* OP, v1-v3 only: the communicator (their init does not say) */
    int has_comm;
    uint64_t comm_hash;
    const char *comm_name;
    uint64_t gpu_ns; /* KERNELCH: GPU start timestamp, 0 unknown (v3) */
};

/* GDRTRACE_COLL: enum gtr_coll_mode (off, proxy, kernel; default proxy). */
int gt_coll_mode(void);

/* init: a context for one communicator (NULL when there is no recorder or
 * mode off), and the activation mask to give NCCL.  comm_id/has_comm_id
 * unknown for v1-v3 (has 0); nranks/nnodes 0 when unknown.  Opens the
 * process's recorder if the net plugin has not yet (the profiler may be
 * initialised first). */
void *gt_coll_init(int version, int has_comm_id, uint64_t comm_id, const char *comm_name,
                   int nnodes, int nranks, int rank, gt_logger_fn logger, int *mask);
void gt_coll_finalize(void *ctx);

/* Event calls: return the handle for NCCL (possibly NULL). */
void *gt_coll_start(void *ctx, const struct gt_coll_desc *d);
void gt_coll_stop(void *handle);
/* A KernelCh's end (state ncclProfilerKernelChStop): GPU timestamp. */
void gt_coll_kernel_end(void *handle, uint64_t gpu_ns);

/* Names to enum values (NCCL's strings; unknown: OTHER/UNKNOWN). */
unsigned gt_coll_func_from_name(const char *s);
unsigned gt_coll_algo_from_name(const char *s);
unsigned gt_coll_proto_from_name(const char *s);
/* bytes per element of NCCL's datatype name ("ncclFloat32"), 0 unknown */
unsigned gt_coll_type_size_from_name(const char *s);
/* The same from NCCL 2.23's numbers (ncclFunc_t, NCCL_ALGO_*, NCCL_PROTO_*,
 * ncclDataType_t). */
unsigned gt_coll_func_from_v1(unsigned f);
unsigned gt_coll_algo_from_v1(unsigned a);
unsigned gt_coll_proto_from_v1(unsigned p);
unsigned gt_coll_type_size_from_v1(unsigned t);

/* The message-size bucket of b bytes: floor(log2(b)), 0 for b <= 1. */
static inline unsigned gt_coll_size_log2(uint64_t b)
{
    return b <= 1 ? 0u : 63u - (unsigned)__builtin_clzll(b);
}

#endif /* GDRTRACE_SHIM_COLL_H */
