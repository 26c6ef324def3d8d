/* SPDX-License-Identifier: Apache-2.0 */
/*
 * copier_proto.h — what the plugin (copier_client.c) and the copier process
 * (gdrtrace-gpumem-copier, copier_main.c) share: the control messages on
 * their socket and the layout of the shared command region
 * (docs/gpumem.md "The copier process").  Both sides are built from one tree: the version field
 * only catches a copier from another build found first on the search path.
 *
 * Control: a SOCK_SEQPACKET socketpair, one request and one reply at a time
 * (the plugin serializes), each one struct gmc_msg, fds by SCM_RIGHTS.
 * The copier's end is fd GMC_FD in the copier.  Its HUP or EOF means the
 * application is gone: the copier then exits.
 *
 * Data: the region (a memfd, GMC_REGION_SIZE bytes, mapped by both) holds a
 * header and GMC_CMDS command slots of one cache line each.  Invariants:
 *  1. A slot's fields belong to the plugin while its state is IDLE, DONE or
 *     FAILED; it writes them, then state = POSTED with a release store.
 *  2. The copier reads a POSTED slot after an acquire load, sets ISSUED
 *     when its copy and event are queued, and DONE or FAILED (cu, call set
 *     before) with a release store when the event completed or a call
 *     failed; the plugin reads them after an acquire load.
 *  3. The copier sleeps only after it stored sleeping = 1 and then found
 *     no POSTED slot (both seq_cst); a plugin that posts then reads
 *     sleeping = 1 (seq_cst) bumps `wake` and FUTEX_WAKEs it, so a post is
 *     never left unseen (the copier's futex wait compares `wake`).
 *  4. Slots [b * GMC_SLOTS_PER_BLOCK, (b + 1) * GMC_SLOTS_PER_BLOCK) belong
 *     to one comm (block b) from its creation to its close; `blocks` is
 *     the high-water mark of blocks ever used (the copier scans below it).
 *  5. While any copy is ISSUED the copier passes its loop, and bumps
 *     `beat`, at least every GMC_NAP_MAX_NS: a copy pending while `beat`
 *     stands still for seconds means the copier is not running (stopped,
 *     starved, or stuck in a call); the plugin then fails the comm
 *     (copier_client.h, gt_gpumem_copier_progress).
 */
#ifndef GDRTRACE_GPUMEM_COPIER_PROTO_H
#define GDRTRACE_GPUMEM_COPIER_PROTO_H

#include <stdatomic.h>
#include <stdint.h>

#define GMC_VERSION 2
#define GMC_FD 3 /* the copier's end of the socket */
#define GMC_SLOTS_PER_BLOCK 64
#define GMC_BLOCKS 256
#define GMC_CMDS (GMC_SLOTS_PER_BLOCK * GMC_BLOCKS)
#define GMC_TEXT 240
#define GMC_NAP_MAX_NS 250000LL /* the longest wait between passes while a copy is pending */

/* ---- control messages ---------------------------------------------------- */

enum gmc_op {
    GMC_HELLO = 1, /* fds: [region]; reply: status */
    GMC_IMPORT,    /* fds: [mirror memfd] + [allocation fd] for VMM; reply: reg */
    GMC_RELEASE,   /* reg; reply: status */
};

enum gmc_kind {
    GMC_KIND_VMM = 1, /* a cuMem allocation, exported as a POSIX fd */
    GMC_KIND_IPC,     /* a legacy (cudaMalloc) allocation, by cuIpcGetMemHandle */
};

struct gmc_msg {
    uint32_t op;
    uint32_t version;
    int32_t status; /* reply: 0, or a CUresult / errno as text says */
    uint32_t reg;   /* IMPORT reply, RELEASE: the registration's id (>= 1) */
    uint32_t kind;  /* IMPORT */
    uint32_t pad;
    uint64_t alloc_size; /* IMPORT: the allocation's size */
    uint64_t offset;     /* IMPORT: the registered range's offset in the allocation */
    uint64_t size;       /* IMPORT: the registered range's size (= the mirror's) */
    char bus_id[32];     /* IMPORT: the PCI bus id of the allocation's device */
    char ipc[64];        /* IMPORT, IPC: the CUipcMemHandle */
    char text[GMC_TEXT]; /* reply: why it failed, one line */
};

/* ---- the shared command region ------------------------------------------ */

enum gmc_state { GMC_IDLE = 0, GMC_POSTED, GMC_ISSUED, GMC_DONE, GMC_FAILED };
enum gmc_dir { GMC_DTOH = 1, GMC_HTOD };

/* The call a FAILED slot names. */
enum gmc_call {
    GMC_CALL_NONE = 0,
    GMC_CALL_DTOH,   /* cuMemcpyDtoHAsync */
    GMC_CALL_HTOD,   /* cuMemcpyHtoDAsync */
    GMC_CALL_RECORD, /* cuEventRecord */
    GMC_CALL_QUERY,  /* cuEventQuery */
    GMC_CALL_EVENT,  /* cuEventCreate */
    GMC_CALL_BADREG, /* no such registration, or the range is outside it */
};

struct gmc_cmd {
    _Atomic uint32_t state; /* enum gmc_state; invariants 1, 2 */
    uint32_t dir;           /* enum gmc_dir */
    uint32_t reg;           /* registration id */
    int32_t cu;             /* FAILED: the CUresult */
    uint32_t call;          /* FAILED: enum gmc_call */
    uint32_t pad;
    /* The copy: bytes [off, off + size) of the registration, to or from the
     * same offset of its mirror (a mirror is the registration's image). */
    uint64_t off;
    uint64_t size;
    char reserved[24];
};
_Static_assert(sizeof(struct gmc_cmd) == 64, "one command per cache line");

struct gmc_region {
    uint32_t magic; /* GMC_MAGIC */
    uint32_t version;
    char pad0[56];
    _Atomic uint32_t sleeping; /* the copier is (about to be) in its futex wait */
    _Atomic uint32_t wake;     /* the futex word: bumped by a plugin that saw sleeping */
    _Atomic uint32_t blocks;   /* invariant 4 */
    uint32_t pad2;
    _Atomic uint64_t beat;   /* invariant 5: bumped by every pass of the copier's loop */
    _Atomic uint64_t copied; /* bytes of the copies completed (DONE), for the log */
    _Atomic uint64_t copies; /* their number */
    char pad1[24];
    struct gmc_cmd cmd[GMC_CMDS];
};
#define GMC_MAGIC 0x474d4352u /* "GMCR" */
#define GMC_REGION_SIZE sizeof(struct gmc_region)

static inline const char *gmc_call_name(uint32_t call)
{
    switch (call) {
    case GMC_CALL_DTOH:
        return "cuMemcpyDtoHAsync";
    case GMC_CALL_HTOD:
        return "cuMemcpyHtoDAsync";
    case GMC_CALL_RECORD:
        return "cuEventRecord";
    case GMC_CALL_QUERY:
        return "cuEventQuery";
    case GMC_CALL_EVENT:
        return "cuEventCreate";
    case GMC_CALL_BADREG:
        return "a registration the copier does not hold";
    default:
        return "an unknown call";
    }
}

#endif
