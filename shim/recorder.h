/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recorder.h — the recorder file writer: creates, lays out, fills and
 * closes one process's shared-memory recorder (include/gdrtrace/
 * recorder_format.h), and emits events into its ring.
 *
 * Threads: gt_rec_open/close/set_* are cold-path calls; the caller (shim.c)
 * serialises them.  gt_rec_event() and everything reached through
 * gt_rec_comm() may be called from any thread once gt_rec_open() returned.
 *
 * Errors: int-returning functions return 0 or a positive errno and write a
 * one-line reason (naming the path, variable or value) into err[errlen].
 */
#ifndef GDRTRACE_SHIM_RECORDER_H
#define GDRTRACE_SHIM_RECORDER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrtrace/recorder_format.h"
#include "common/gt_net.h"
#include "common/settings.h"
#include "shim/clock.h"
#include "shim/ring.h"

/* comm.has_comm_id values.  0 and 1 are the format's; 2 marks the overflow
 * slot (the last one), which aggregates communicators that found no free
 * slot. */
#define GT_REC_COMM_PROCESS 0
#define GT_REC_COMM_ID 1
#define GT_REC_COMM_OVERFLOW 2

struct gt_rec_config {
    const char *dir;      /* NULL: GDRTRACE_DIR or /dev/shm */
    int mode;             /* file mode; -1: GDRTRACE_MODE or 0600 */
    uint32_t ndevs;       /* 0: GTR_DEFAULT_DEVICES */
    uint32_t ncomms;      /* 0: GTR_DEFAULT_COMMS (>= 2) */
    uint64_t ring_events; /* 0: GTR_DEFAULT_RING_EVENTS; rounded up to a power of two */
    int events_all;       /* -1: GDRTRACE_EVENTS */
    uint32_t ncolls;      /* 0: GTR_DEFAULT_COLL_COMMS */
};

struct gt_recorder {
    char path[PATH_MAX];
    int fd;
    uint8_t *base;
    size_t size;
    struct gtr_header *hdr;
    struct gtr_identity *id;
    struct gtr_device *devs;
    uint32_t ndevs;
    struct gtr_comm *comms;
    uint32_t ncomms;
    struct gtr_setting *settings; /* the settings section (1.2) */
    uint32_t nsettings;
    struct gtr_callee *callees; /* the callees section (1.3) */
    uint32_t ncallees;
    struct gtr_host *host; /* the host-pressure section (1.5; shim/rec_host.h) */
    uint64_t host_due;     /* clock ticks of the next periodic sample */
    int host_busy;         /* a sample is being taken */
    /* The helper process's CPU (gtr_host.helper_*), under host_busy: what
     * helpers before the current one used, and the current one's last read. */
    int helper_pid;
    uint64_t helper_base_u, helper_base_s, helper_last_u, helper_last_s;
    uint32_t next_comm;                  /* slots [0, next_comm) handed out; the last is overflow */
    struct gtr_coll_status *coll_status; /* 1.6 */
    struct gtr_coll_comm *colls;         /* 1.6: ncolls entries */
    uint32_t ncolls;
    uint32_t next_coll; /* coll entries [0, next_coll) handed out */
    struct gt_ring ring;
    int events_all;
};

int gt_rec_open(struct gt_recorder *r, const struct gt_rec_config *cfg, char *err, size_t errlen);

/* Takes the closing host-pressure sample and marks the file CLOSED with its
 * end time (idempotent).  Leaves the mapping
 * in place: threads that still hold comm pointers may write harmlessly. */
void gt_rec_close(struct gt_recorder *r);
/* Back to LIVE after a close (NCCL initialised again after its last
 * finalize). */
void gt_rec_reopen(struct gt_recorder *r);
/* Unmaps and closes the descriptor; for tests and for the fork child. */
void gt_rec_unmap(struct gt_recorder *r);

/* 1 once the file was truncated under the mapping (shim/sigbus.c): the
 * pages are anonymous memory now, events go nowhere a reader can see. */
int gt_rec_lost(const struct gt_recorder *r);

void gt_rec_set_transport(struct gt_recorder *r, const char *name, const char *why);
/* Records a setting in force: replaces the entry with the same key, else
 * takes the first free one (ignored when the section is full).  Cold path;
 * callers serialise, as for every gt_rec_set_*. */
void gt_rec_set_setting(struct gt_recorder *r, const struct gt_setting *s);
void gt_rec_set_abi_version(struct gt_recorder *r, int abi_version);
void gt_rec_set_device(struct gt_recorder *r, int dev, const struct gt_props *props,
                       const struct gt_dev_probe *probe, const char *transport);

/* The index of the callee entry for (kind, path, version), claimed on first
 * use; GTR_NO_CALLEE when the section is full.  Callers serialise. */
uint64_t gt_rec_callee(struct gt_recorder *r, const char *kind, const char *path, int version);

/* Claims the next free comm slot, filled and ACTIVE; NULL when only the
 * overflow slot is left (use gt_rec_overflow_comm).  *slot = its index.
 * Any thread. */
struct gtr_comm *gt_rec_new_comm(struct gt_recorder *r, uint64_t comm_id, int has_comm_id,
                                 int abi_version, int64_t init_ns, uint32_t *slot);
/* The overflow slot, activated on first use; callers serialise. */
struct gtr_comm *gt_rec_overflow_comm(struct gt_recorder *r, int abi_version, uint32_t *slot);

/* Collectives (1.6).  The status entry's NCCL_PROFILER_PLUGIN, from the
 * environment (at open).  */
void gt_rec_coll_status_init(struct gt_recorder *r);
/* Claims the next free collective entry (zeroed, FREE); NULL when none is
 * left.  The caller fills it and stores state ACTIVE with release.  Any
 * thread. */
struct gtr_coll_comm *gt_rec_new_coll_comm(struct gt_recorder *r, uint32_t *slot);
/* The cell of (func, size_log2) in c, claimed on first use; the overflow cell
 * when all are taken.  Lock-free, allocation-free; any thread. */
struct gtr_coll_cell *gt_rec_coll_cell(struct gtr_coll_comm *c, unsigned func, unsigned size_log2);

/* The calling thread's id, cached per thread (one gettid the first time). */
uint32_t gt_rec_tid_slow(void);
extern __thread uint32_t gt_rec_tid_cache __attribute__((tls_model("initial-exec")));

static inline uint32_t gt_rec_tid(void)
{
    uint32_t t = gt_rec_tid_cache;
    return __builtin_expect(t != 0, 1) ? t : gt_rec_tid_slow();
}

static inline int gt_rec_event(struct gt_recorder *r, uint16_t type, uint16_t slot, int16_t dev,
                               int32_t result, int32_t err, uint64_t a0, uint64_t a1, uint64_t a2,
                               uint32_t aux)
{
    struct gtr_event e;
    e.seq = 0;
    e.ts = gt_clock_now();
    e.type = type;
    e.comm_slot = slot;
    e.dev = dev;
    e.flags = 0;
    e.result = result;
    e.err = err;
    e.a0 = a0;
    e.a1 = a1;
    e.a2 = a2;
    e.tid = gt_rec_tid();
    e.aux = aux;
    return gt_ring_emit(&r->ring, &e, NULL);
}

/* Now, in the recorder's CLOCK_MONOTONIC ns (as stored in init_ns). */
static inline int64_t gt_rec_now_ns(const struct gt_recorder *r)
{
    return gt_clock_ticks_to_ns(r->id, gt_clock_now());
}

/* Every GDRTRACE_* variable of the environment as "K=V K=V", cut at a
 * variable boundary to fit. */
void gt_rec_policy_text(char *out, size_t n);

/* The file name the recorder would use, without directory:
 * gdrtrace.<job|nojob>.<host>.<pid>.rec with job and host sanitised to
 * [A-Za-z0-9_-]. */
void gt_rec_file_name(char *out, size_t n, const char *job, const char *host, int pid);

#endif /* GDRTRACE_SHIM_RECORDER_H */
