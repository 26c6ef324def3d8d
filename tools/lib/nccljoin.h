/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccljoin.h — NCCL's log (tools/lib/nccllog.h) joined to the recorders' merged
 * view (tools/lib/model.h): every communicator NCCL created gets a verdict, and
 * the whole input's verdict takes them in (docs/reader.md, "--nccl-log").
 *
 * The join, in order (nccljoin.c keeps it):
 *  1. NCCL's per-rank records become communicators by commId.  A split's
 *     Init lines name its parent instead (2.28+): its ranks are grouped by
 *     (parent's communicator, splitCount, color), which is what NCCL derives
 *     the child's commId from.
 *  2. A recorder of ABI v11+ holds NCCL's commId (the value NCCL passes to
 *     init(), the one its Init lines print): a communicator joins the
 *     recorder communicator with its commId.  A split gets its commId by
 *     elimination: in a process whose recorder holds exactly one commId
 *     the log does not name, and whose log has exactly one split without
 *     one, they are the same communicator.
 *  3. A recorder of ABI <= v10 has one record per process (NCCL calls
 *     init once per process): a communicator NCCL carried through gdrtrace
 *     joins the record of its processes (host, pid), and says so.
 *  3b. Channel lines by order: with NCCL >= 2.22 a communicator connects
 *     at its first collective, so a process's channel lines often come
 *     after the Init lines of all its communicators and name none of them
 *     (ambiguous, nccllog.h invariant 4).  NCCL connects one communicator
 *     at a time on a thread, and so does the recorder see it: in a process
 *     whose NET/gdrtrace connection phases (nccllog.h) are all on one
 *     thread, none mixes in another network's lines, and whose one
 *     recorder kept every listen/connect/accept event, the recorder's
 *     connection runs (gt_rank_comm.conn_at) are matched in order to those
 *     phases: each run takes the next phases whose [receive] and [send]
 *     lines are as many as its listen and connect events (NCCL: one each
 *     a line), every run and phase taken; each run's communicator must
 *     have one record in the process's log, among its phases' candidates,
 *     and their lines already attributed must be that record's.  Their
 *     ambiguous NET/gdrtrace lines then count as that communicator's;
 *     anything less and they stay ambiguous, the counts line saying why.
 *  4. What NCCL's channel lines say decides, first match wins: a NET or
 *     CollNet line through another network (IB, Socket, another plugin):
 *     BYPASSED, the line quoted; a line through gdrtrace: the recorder's
 *     verdict; one rank, nNodes 1, all ranks on one host, or only P2P, SHM
 *     or NVLS lines: INTRA-NODE (code NO-DATA: no network, nothing to
 *     judge), the line quoted; no channel line: "Using network X" of
 *     another network on a communicator of several nodes is BYPASSED, else
 *     the recorder's verdict if joined.
 *  5. Per process: a plugin NCCL did not load, could not load or whose
 *     init failed, or channel lines through another network that no single
 *     communicator could be given, is a `nccl HOST:PID` line, BYPASSED with
 *     NCCL's line quoted (NO-DATA when every communicator of the process is
 *     intra-node: nothing went around gdrtrace).
 *  6. Recorder communicators no log line names stay as they were.
 *  7. The whole input: gt_verdict_combine of the recorders' verdict, every
 *     communicator's and every `nccl` line's.
 * The join decides and says why; its text is tools/render/nccljoin_text.h's
 * and its JSON tools/render/json_nccljoin.h's.
 */
#ifndef GDRTRACE_TOOLS_NCCLJOIN_H
#define GDRTRACE_TOOLS_NCCLJOIN_H

#include <stddef.h>

#include "tools/lib/inputs.h"
#include "tools/lib/model.h"
#include "tools/lib/nccllog.h"

enum gt_nj_kind {
    GT_NJ_THROUGH = 0, /* NCCL's network traffic went through gdrtrace */
    GT_NJ_BYPASSED,    /* through an internal transport or another plugin */
    GT_NJ_INTRA,       /* intra-node only: no network */
    GT_NJ_UNKNOWN,     /* no channel line, or not in the log */
};
const char *gt_nj_kind_name(int kind);

struct gt_nj_comm {
    char label[96];
    int has_comm_id;
    uint64_t comm_id;
    int kind;     /* enum gt_nj_kind */
    int code;     /* GT_V_* */
    int intra;    /* print INTRA-NODE (code NO-DATA) */
    int emulated; /* the recorder it joined ran the GPU-memory validation mode */
    char why[2048];
    long ccomm;            /* index into the job's comms, -1 none */
    const char *joined_by; /* "commId", "elimination", "process (net ABI <= v10)", "" */
    /* NCCL's facts (0 / -1 / "" when not in the log) */
    int in_log;
    int nranks, ranks_seen, nnodes, nhosts;
    size_t nprocs;
    char hosts[192]; /* distinct hosts, comma-separated, cut with "…" */
    char net[24];    /* "Using network X" (the first rank's) */
    uint32_t ch[GT_NLOG_CH_COUNT], ch_gdrdma, amb, gdr_on, gdr_off;
};

struct gt_nj_proc {
    char host[64];
    int pid;
    int code; /* GT_V_BYPASSED or GT_V_NO_DATA */
    char why[1024];
};

/* Step 3b per process of the log (index as in log->procs). */
struct gt_nj_order {
    uint32_t lines; /* ambiguous channel lines attributed by order */
    char why[256];  /* why its ambiguous NET/gdrtrace lines were not, "" */
};

struct gt_nccl_join {
    const struct gt_nlog *log;
    struct gt_nj_order *order; /* log->nproc entries */
    uint64_t by_order;         /* channel lines attributed by order, all processes */
    struct gt_nj_comm *comms;
    size_t ncomm;
    struct gt_nj_proc *procs;
    size_t nproc;
    int code; /* the whole input's verdict with the log */
    char why[2048];
};

/*! gt_nccl_log_load() : reads each of paths[0..n) (files, folders) into l
 *  (gt_nlog_init first); says on stderr "gdrtrace: PATH: cannot read NCCL
 *  log: …" for each that fails and returns how many did (the rest is read). */
int gt_nccl_log_load(struct gt_nlog *l, char *const *paths, int n);

/*! gt_nccl_log_owners() : the owner rule of l (struct gt_nlog) from the
 *  recorders' loading: the caller's uid, --accept-owner's owners, and the
 *  owner of each job's recorders in counted.  Call after gt_load_job and
 *  before gt_nccl_log_load, which names on stderr what the rule left out. */
void gt_nccl_log_owners(struct gt_nlog *l, const struct gt_inputs *in);

/*! gt_nccl_join() : joins l to the job j (after gt_job_finish or
 *  gt_job_build; j must outlive out).  0, or -1 out of memory (out then
 *  needs only gt_nccl_join_free).  Callable by any command that built a job
 *  (`gdrtrace run` writes NCCL's log beside the recorders and joins it). */
int gt_nccl_join(const struct gt_nlog *l, const struct gt_job *j, struct gt_nccl_join *out);
void gt_nccl_join_free(struct gt_nccl_join *nj);

/*! gt_nccl_join_next() : the next step when NCCL's log changed the outcome
 *  the recorders alone give (j's), in buf; 0 when it did not (the
 *  recorders' next step stands, gt_next_step). */
int gt_nccl_join_next(const struct gt_nccl_join *nj, const struct gt_job *j, char *buf, size_t n);

/* "INTRA-NODE", else gt_verdict_label(code, emulated). */
const char *gt_nj_label(const struct gt_nj_comm *c);

#endif /* GDRTRACE_TOOLS_NCCLJOIN_H */
