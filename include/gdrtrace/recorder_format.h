/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recorder_format.h — the gdrtrace flight-recorder file format, version 1.8.
 *
 * This header is the one contract between the writer (shim/, inside the NCCL
 * job) and the readers (tools/gdrtrace).  The human spec is
 * docs/recorder-format.md; keep both in step.
 *
 * Layout of a recorder file (one per process, in GDRTRACE_DIR):
 *
 *   offset 0           struct gtr_header        (GTR_HEADER_SIZE bytes)
 *   sections[i].offset one section per entry of header.sections[], each
 *                      an array of `count` entries of `entry_size` bytes
 *
 * Invariants (the reader checks every one; the writer may have been killed
 * or corrupted):
 *  1. magic == GTR_MAGIC, endian == GTR_ENDIAN_MARK in the writer's native
 *     order (a reader on the other endianness refuses the file), word_size 8.
 *  2. version_major == GTR_VERSION_MAJOR to read at all; a higher
 *     version_minor only appends fields/sections, so a reader uses
 *     min(entry_size, sizeof(known struct)) and skips unknown section ids.
 *  3. Every section lies inside [header_size, file_size); entry_size*count
 *     equals the section size.  Sections never overlap.
 *  4. Strings are fixed arrays, NUL-terminated within their array by the
 *     writer; a reader must still bound every string by its array size.
 *  5. Counters and histogram buckets are monotonic 64-bit values updated
 *     with relaxed atomics; they never wrap and are exact even when the
 *     event ring has overwritten older events.
 *  6. The event ring's records carry a sequence word: 2*pos+1 while being
 *     written, 2*pos+2 once committed (pos = the record's absolute index).
 *     A record whose sequence is odd, or not 2*pos+2 for the position the
 *     reader expects, is torn or overwritten and must be skipped.
 *  7. header.state is GTR_STATE_LIVE from creation until the process closes
 *     the recorder cleanly (GTR_STATE_CLOSED).  LIVE with a dead pid (or a
 *     different boot id) means the producer crashed.
 *
 * All multi-byte integers are in the writer's native byte order (marked by
 * endian).  All times are in nanoseconds unless a field says otherwise.
 */
#ifndef GDRTRACE_RECORDER_FORMAT_H
#define GDRTRACE_RECORDER_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "gdrtrace/codes.h"

#define GTR_MAGIC "GDRTRACE" /* 8 bytes, no NUL stored */
#define GTR_MAGIC_LEN 8
#define GTR_VERSION_MAJOR 1
/* Minor versions (each only appends; docs/recorder-format.md, "Versions"):
 *  0  the first format
 *  1  reason counter slots 16..31 appended to struct gtr_comm (slot 31 =
 *     GTR_REASON_OTHER); comms entry_size grew from GTR_COMM_SIZE_1_0
 *  2  the settings section (GTR_SEC_SETTINGS): the settings in force, which
 *     supersedes identity.policy_* (still written, with the same effective
 *     values, for 1.0/1.1 readers)
 *  3  the callees section (GTR_SEC_CALLEES) and events CALLING, RETURNED,
 *     REFUSED: a crash inside code gdrtrace calls, and a refusal, are
 *     recorded facts
 *  4  identity.pidns_*, timens_*, proc_start_ticks (in reserved bytes): the
 *     writer's pid namespace and process start, so a reader tells a reused
 *     pid and another namespace's pid from the writer
 *  5  the host-pressure section (GTR_SEC_HOST): process and data-path
 *     threads' CPU time, host memory registered for staging, resident and
 *     locked/pinned high-water, sampled from calls that already happen
 *  6  the collective sections (GTR_SEC_COLL_COMMS, GTR_SEC_COLL_STATUS):
 *     what NCCL's profiler interface reported, per communicator
 *  7  gtr_host.helper_* (in reserved bytes): the CPU time of the process
 *     that does the process's work elsewhere (the GPU-memory copier), so
 *     host pressure counts CPU moved out of the process
 *  8  identity.reg_mode, emulated, facts (in reserved bytes): the
 *     registration policy and the GPU-memory validation mode as codes, so
 *     a reader decides neither from strings (policy_reg, transport, the
 *     GDRTRACE_GPUMEM setting: the rules for older files) */
#define GTR_VERSION_MINOR 9
#define GTR_ENDIAN_MARK 0x01020304u
#define GTR_HEADER_SIZE 4096u
#define GTR_MAX_SECTIONS 16

enum gtr_state {
    GTR_STATE_CREATING = 0, /* file exists, not yet initialised */
    GTR_STATE_LIVE = 1,
    GTR_STATE_CLOSED = 2,
};

enum gtr_section_id {
    GTR_SEC_IDENTITY = 1,    /* 1 x struct gtr_identity */
    GTR_SEC_DEVICES = 2,     /* n x struct gtr_device */
    GTR_SEC_COMMS = 3,       /* n x struct gtr_comm */
    GTR_SEC_RING = 4,        /* 1 x struct gtr_ring_header, then capacity x struct gtr_event */
    GTR_SEC_SETTINGS = 5,    /* 1.2: n x struct gtr_setting (optional: absent before 1.2) */
    GTR_SEC_CALLEES = 6,     /* 1.3: n x struct gtr_callee (optional: absent before 1.3) */
    GTR_SEC_COLL_COMMS = 7,  /* 1.6: n x struct gtr_coll_comm (optional) */
    GTR_SEC_COLL_STATUS = 8, /* 1.6: 1 x struct gtr_coll_status (optional) */
    GTR_SEC_HOST = 9,        /* 1.5: 1 x struct gtr_host (optional: absent before 1.5) */
};
/* The highest section id this version knows; readers skip higher ones. */
#define GTR_SEC_LAST_KNOWN GTR_SEC_HOST

struct gtr_section {
    uint32_t id;         /* enum gtr_section_id; 0 = unused slot */
    uint32_t entry_size; /* bytes per entry (struct size of the writer) */
    uint64_t offset;     /* from the start of the file */
    uint64_t size;       /* bytes; == entry_size * count (ring: header + events) */
    uint64_t count;      /* number of entries */
};

struct gtr_header {
    char magic[GTR_MAGIC_LEN];
    uint16_t version_major;
    uint16_t version_minor;
    uint32_t endian;      /* GTR_ENDIAN_MARK, native order */
    uint32_t word_size;   /* sizeof(void *) of the writer: 8 */
    uint32_t header_size; /* GTR_HEADER_SIZE */
    uint64_t file_size;   /* total bytes of the file */
    uint32_t state;       /* enum gtr_state; written with release order */
    uint32_t section_count;
    struct gtr_section sections[GTR_MAX_SECTIONS];
    uint64_t reserved[16];
};

/* ---- identity ---------------------------------------------------------- */

enum gtr_clock {
    GTR_CLOCK_MONOTONIC = 1, /* timestamps are CLOCK_MONOTONIC ns */
    GTR_CLOCK_TSC = 2,       /* timestamps are TSC ticks; see calibration */
};

enum gtr_nvidia_flavour {
    GTR_NV_UNKNOWN = 0,
    GTR_NV_OPEN = 1,        /* "NVIDIA UNIX Open Kernel Module" */
    GTR_NV_PROPRIETARY = 2, /* license NVIDIA */
    GTR_NV_ABSENT = 3,      /* no nvidia kernel module loaded */
};

/* The node fingerprint: the same fields `gdrtrace doctor --json` prints. */
struct gtr_fingerprint {
    char kernel_release[65]; /* uname -r */
    char boot_id[37];        /* /proc/sys/kernel/random/boot_id */
    char nvidia_version[32]; /* NVIDIA kernel module version, "" if absent */
    uint8_t nvidia_flavour;  /* enum gtr_nvidia_flavour */
    uint8_t peermem_loaded;  /* /sys/module/nvidia_peermem exists */
    uint8_t memory_peers;    /* /sys/kernel/mm/memory_peers/<nv_mem*> exists */
    uint8_t reserved0;
    int32_t cuda_driver_version; /* cuDriverGetVersion, -1 if unknown */
    char rdma_devices[256];      /* "mlx5_0@0000:17:00.0,rxe0@-" sorted by PCI address */
    char gpus[256];              /* GPU PCI BDFs, comma-separated, sorted */
    char cpu_model[64];
    uint8_t reserved[64];
};

struct gtr_identity {
    char host[64];
    char job[128];      /* GDRTRACE_JOB, SLURM_JOB_ID, ... ("" if none) */
    char launcher[16];  /* "slurm", "openmpi", "torchrun", "gdrtrace", "" */
    int32_t rank;       /* -1 when unknown */
    int32_t local_rank; /* -1 when unknown */
    int32_t world_size; /* -1 when unknown */
    int32_t pid;
    int64_t start_wall_ns; /* CLOCK_REALTIME at creation */
    int64_t start_mono_ns; /* CLOCK_MONOTONIC at creation */
    int64_t end_wall_ns;   /* CLOCK_REALTIME at clean close, 0 while live */
    /* Timestamp clock: ns = mono0_ns + ((ticks - tick0) * mult) >> shift */
    uint32_t clock; /* enum gtr_clock */
    uint32_t clock_shift;
    uint64_t clock_mult;
    uint64_t clock_tick0;
    int64_t clock_mono0_ns;
    uint64_t clock_hz; /* ticks per second (1e9 for MONOTONIC) */
    char plugin_version[32];
    int32_t nccl_version; /* ncclGetVersion code (e.g. 22803), -1 unknown */
    int32_t abi_version;  /* ncclNetPlugin_vN that NCCL loaded, 0 until init */
    char transport[16];   /* "sock", "ib", "inner:<name>" */
    char transport_why[128];
    /* The registration policy in force (since 1.2 the settings section says
     * more: the source of each value, and invalid ones). */
    char policy_reg[16]; /* dmabuf | peermem | host | auto */
    uint8_t policy_allow_peermem;
    uint8_t policy_events_all; /* GDRTRACE_EVENTS=all */
    /* 1.8: two facts as codes, each valid only where its GTR_ID_HAS_* bit
     * of `facts` is set (zero in older files: the reader's string rules). */
    uint8_t reg_mode; /* enum gt_reg_mode in force (gdrtrace/codes.h), as policy_reg */
    uint8_t emulated; /* 1: the GPU-memory validation mode (GDRTRACE_GPUMEM=1) was on:
                       * no NIC moves the bytes, CUDA copies do */
    uint8_t facts;    /* GTR_ID_HAS_REG_MODE | GTR_ID_HAS_EMULATED */
    uint8_t reserved0[3];
    char policy_text[256]; /* every GDRTRACE_* variable set, "K=V K=V" */
    struct gtr_fingerprint node;
    /* 1.4: who the writer is beyond its pid (common/procid.h); zero in older
     * files, and in a 1.4 file where /proc could not tell. */
    uint64_t pidns_dev;  /* st_dev of /proc/self/ns/pid; 0 with pidns_ino: unreadable */
    uint64_t pidns_ino;  /* st_ino of /proc/self/ns/pid */
    uint64_t timens_dev; /* the same for /proc/self/ns/time (0: none, kernel < 5.6) */
    uint64_t timens_ino;
    /* field 22 of /proc/self/stat: clock ticks since boot (node.boot_id) as
     * the writer's time namespace sees it; 0 unreadable */
    uint64_t proc_start_ticks;
    uint8_t reserved[88];
};

/* identity.facts (1.8): which of identity's coded facts the writer set. */
#define GTR_ID_HAS_REG_MODE 0x1u
#define GTR_ID_HAS_EMULATED 0x2u

/* ---- devices ----------------------------------------------------------- */

/* Probe states are enum gt_probe_state (gdrtrace/codes.h); these older
 * names stay for the code that uses them. */
#define GTR_PROBE_UNKNOWN GT_PROBE_UNKNOWN
#define GTR_PROBE_SUPPORTED GT_PROBE_SUPPORTED
#define GTR_PROBE_UNSUPPORTED GT_PROBE_UNSUPPORTED
#define GTR_PROBE_ABSENT GT_PROBE_ABSENT

struct gtr_device {
    uint32_t in_use; /* 1 once filled */
    int32_t dev;     /* NCCL device index */
    char name[64];
    char pci_path[256];
    char transport[16];
    int32_t ptr_support; /* advertised to NCCL (NCCL_PTR_* bits) */
    int32_t speed_mbps;
    uint8_t probe_dmabuf; /* enum gt_probe_state */
    uint8_t probe_peermem;
    uint8_t probe_cuda_dmabuf;
    uint8_t reserved0;
    int32_t probe_dmabuf_errno;
    char why[128]; /* why that ptrSupport */
    uint8_t reserved[64];
};

/* ---- communicators ----------------------------------------------------- */

/* Histograms: log-linear.  Values < 2^GTR_HIST_SUB_BITS are exact; above,
 * each power of two [2^e, 2^(e+1)) is split into 2^GTR_HIST_SUB_BITS equal
 * buckets, so a bucket's width is at most 1/16 = 6.25% of its lower bound.
 * Index of value v (ns), with m = floor(log2(v)):
 *     v < 16:  idx = v
 *     else:    idx = (m - 3) * 16 + ((v >> (m - 4)) - 16)
 * Covers values below 2^(GTR_HIST_MAX_LOG2 + 1) ns (~2.4 hours); larger values go to the
 * last bucket (count, sum and max stay exact). */
#define GTR_HIST_SUB_BITS 4
#define GTR_HIST_SUB (1u << GTR_HIST_SUB_BITS)
#define GTR_HIST_MAX_LOG2 42
#define GTR_HIST_BUCKETS ((GTR_HIST_MAX_LOG2 - 3 + 1) * GTR_HIST_SUB) /* 640 */

struct gtr_hist {
    uint64_t count;
    uint64_t sum_ns;
    uint64_t min_ns; /* UINT64_MAX while count == 0 */
    uint64_t max_ns;
    uint64_t buckets[GTR_HIST_BUCKETS];
};

enum gtr_op {
    GTR_OP_REG = 0,
    GTR_OP_DEREG = 1,
    GTR_OP_SEND = 2,  /* isend -> test done */
    GTR_OP_RECV = 3,  /* irecv -> test done */
    GTR_OP_FLUSH = 4, /* iflush -> test done */
    GTR_OP_COUNT
};

/* Registration matrix dimensions: what NCCL asked x what we did.  Literal
 * numbers, because they fix the layout; the asserts at the end tie them to
 * the codes. */
#define GTR_ASKED_COUNT 3  /* dmabuf, cuda, host (enum gt_reg_asked) */
#define GTR_METHOD_COUNT 4 /* dmabuf, peermem, host, failed (enum gt_reg_method) */

/* Per-reason counters: one slot per enum gt_reason value below
 * GTR_REASON_OTHER; the last slot counts every other value (a code >= 31,
 * or a negative one from a broken transport).  Slots 0..15 are where 1.0
 * put them (fallback_by_reason_lo), 16..31 were appended in 1.1
 * (fallback_by_reason_hi); read and write them through gtr_reason_count()
 * and gtr_reason_counter(), never by index. */
#define GTR_REASON_SLOTS 32
#define GTR_REASON_SLOTS_1_0 16
#define GTR_REASON_OTHER (GTR_REASON_SLOTS - 1)

enum gtr_comm_state {
    GTR_COMM_FREE = 0,
    GTR_COMM_ACTIVE = 1,
    GTR_COMM_FINALIZED = 2,
};

struct gtr_comm {
    /* cold: identity (written once at init, before state is set ACTIVE
     * with release order) */
    uint32_t state;       /* enum gtr_comm_state */
    uint32_t has_comm_id; /* 0: ABI < v11, the record stands for the process */
    uint64_t comm_id;     /* NCCL's commId (printed as 0x%lx, like NCCL) */
    int32_t abi_version;
    int32_t dev;         /* first device used, -1 until known */
    int64_t init_ns;     /* timestamp (ns, converted) */
    int64_t finalize_ns; /* 0 until finalize */
    uint8_t pad0[24];    /* keep the hot counters on their own cache line */

    /* hot: counters */
    uint64_t reg_count[GTR_ASKED_COUNT][GTR_METHOD_COUNT];
    uint64_t reg_bytes[GTR_ASKED_COUNT][GTR_METHOD_COUNT];
    uint64_t reg_exported_fd; /* DMA-BUF fds the plugin exported itself (CUDA) */
    uint64_t reg_cache_hits;
    uint64_t dereg_count;
    uint64_t fallback_count;
    uint64_t fallback_by_reason_lo[GTR_REASON_SLOTS_1_0]; /* slots 0..15 */
    int32_t fallback_last_errno;
    int32_t fallback_last_reason;
    uint64_t error_count;
    uint64_t error_by_reason_lo[GTR_REASON_SLOTS_1_0]; /* slots 0..15 */
    int32_t error_last_errno;
    int32_t error_last_reason;
    uint64_t listen_count, connect_count, accept_count;
    uint64_t close_count;
    uint64_t send_count, send_bytes; /* completed sends */
    uint64_t recv_count, recv_bytes; /* completed receives (bytes received) */
    uint64_t flush_count;
    uint64_t send_posted, recv_posted; /* isend/irecv calls that returned a request */
    char error_last_text[128];         /* last error message, for the reader */
    uint8_t reserved[64];
    struct gtr_hist hist[GTR_OP_COUNT];
    /* ---- 1.1 ---- */
    uint64_t fallback_by_reason_hi[GTR_REASON_SLOTS - GTR_REASON_SLOTS_1_0]; /* slots 16..31 */
    uint64_t error_by_reason_hi[GTR_REASON_SLOTS - GTR_REASON_SLOTS_1_0];    /* slots 16..31 */
};

/* The size of a 1.0 comm record: the smallest comms entry_size a reader
 * accepts (a 1.0 file's slots 16..31 then read as zero). */
#define GTR_COMM_SIZE_1_0 offsetof(struct gtr_comm, fallback_by_reason_hi)

/* The counter slot of reason code `code` (enum gt_reason). */
static inline unsigned gtr_reason_slot(int64_t code)
{
    return (code >= 0 && code < GTR_REASON_OTHER) ? (unsigned)code : GTR_REASON_OTHER;
}

enum gtr_reason_kind { GTR_FALLBACKS = 0, GTR_ERRORS = 1 };

/* The counter of slot `slot` (< GTR_REASON_SLOTS) of fallbacks or errors. */
static inline uint64_t *gtr_reason_counter(struct gtr_comm *c, int kind, unsigned slot)
{
    uint64_t *lo = kind == GTR_ERRORS ? c->error_by_reason_lo : c->fallback_by_reason_lo;
    uint64_t *hi = kind == GTR_ERRORS ? c->error_by_reason_hi : c->fallback_by_reason_hi;
    return slot < GTR_REASON_SLOTS_1_0 ? &lo[slot] : &hi[(slot - GTR_REASON_SLOTS_1_0) % 16];
}

static inline uint64_t gtr_reason_count(const struct gtr_comm *c, int kind, unsigned slot)
{
    return *gtr_reason_counter((struct gtr_comm *)c, kind, slot);
}

/* ---- settings in force (1.2) ------------------------------------------- */

/* One entry per setting, filled at creation (and, by later writers, when a
 * setting becomes known, e.g. at init): in_use is stored last with release
 * order.  A later version adds settings as new entries, never new fields:
 * a reader shows every entry, known key or not. */
struct gtr_setting {
    uint32_t in_use; /* 1 once filled */
    uint32_t source; /* enum gt_setting_source (gdrtrace/codes.h) */
    char key[48];    /* "GDRTRACE_REG": the setting's GDRTRACE_* name */
    char value[64];  /* the effective value, as the code uses it */
    char origin[96]; /* "NAME=text" as set in the environment; "" for a default */
    uint8_t reserved[40];
};

/* ---- callees (1.3) ----------------------------------------------------- */

/* Code gdrtrace calls but does not own (an inner plugin, libibverbs), one
 * entry per library and ABI version, claimed on the first CALLING event that
 * names it; in_use is stored last with release order.  CALLING events name
 * their callee by index. */
struct gtr_callee {
    uint32_t in_use; /* 1 once filled */
    int32_t version; /* the ABI the calls go through (ncclNetPlugin_vN), 0 none */
    char kind[24];   /* "inner plugin", "libibverbs" */
    char path[480];  /* as loaded (GDRTRACE_INNER, the libibverbs dlopen'd) */
};

/* ---- host pressure (1.5) ------------------------------------------------ */

/* What the process costs its host, sampled by the writer with no thread of
 * its own: at the recorder's creation, at each connection set up, at most
 * once a second from the data path's test() calls, and at close, so a
 * crashed process keeps its last sample.  One writer at a time per sample
 * (a flag); fields are stored one by one with relaxed atomics, so a reader
 * of a live file may see one field of the next sample beside the others of
 * the last (each is a value that was true).  Times are ns; CPU times are
 * cumulative since the process (thread) started, as /proc/<pid>/stat counts
 * them; *_at_open: at the recorder's creation. */
#define GTR_HOST_THREADS 16

/* A thread that drove the data path (isend/irecv/test: NCCL's proxy
 * threads), claimed on its first sampled call (tid stored last with
 * release order); never reused. */
struct gtr_host_thread {
    uint32_t tid;          /* 0: free */
    uint32_t gone;         /* 1: its CPU clock no longer reads (the thread exited) */
    uint64_t cpu_first_ns; /* CLOCK_THREAD_CPUTIME_ID when claimed */
    uint64_t cpu_ns;       /* at the latest sample */
    int64_t first_mono_ns; /* CLOCK_MONOTONIC when claimed */
    int64_t last_mono_ns;  /* of the latest sample that read it */
    uint8_t reserved[24];
};

enum gtr_host_flags {
    GTR_HOST_STATUS_UNREADABLE = 1, /* /proc/self/status could not be read: Vm* are 0 */
    GTR_HOST_RUSAGE_FAILED = 2,     /* getrusage failed: CPU times are 0 */
    GTR_HOST_HELPER_UNREADABLE = 4, /* 1.7: /proc/<helper_pid>/stat could not be read */
};

struct gtr_host {
    uint64_t samples;      /* process samples taken */
    int64_t first_mono_ns; /* CLOCK_MONOTONIC of the first sample (creation) */
    int64_t last_mono_ns;  /* of the latest */
    uint64_t utime_at_open_ns, stime_at_open_ns;
    uint64_t utime_ns, stime_ns; /* process user and system CPU (getrusage RUSAGE_SELF) */
    uint64_t rss_hwm_bytes;      /* VmHWM: resident high-water */
    uint64_t rss_bytes;          /* VmRSS at the latest sample */
    uint64_t locked_bytes, locked_hwm_bytes; /* VmLck now, and its maximum over samples */
    uint64_t pinned_bytes, pinned_hwm_bytes; /* VmPin now, and its maximum over samples */
    /* Host memory in the data path: buffers NCCL registered with the
     * transport as host memory (regMr NCCL_PTR_HOST), i.e. staging;
     * updated at each registration and deregistration. */
    uint64_t staging_bytes;       /* registered now */
    uint64_t staging_hwm_bytes;   /* the most registered at once */
    uint64_t staging_regs;        /* registrations alive now */
    uint64_t staging_total_bytes; /* every byte ever registered */
    uint32_t nthreads;            /* thread slots claimed */
    uint32_t threads_untracked;   /* data-path threads that found no free slot */
    uint32_t flags;               /* enum gtr_host_flags, of the latest sample */
    uint32_t reserved0;
    uint64_t sample_cost_ns; /* CPU time the samplers spent sampling, all samples together */
    /* 1.7: the helper process doing this process's data-path work (the
     * GPU-memory copier, GDRTRACE_GPUMEM=1): its user and system CPU from
     * /proc/<pid>/stat, summed over every helper the process had (a
     * restarted copier adds to what the last one used).  0 when none ran. */
    uint64_t helper_utime_ns, helper_stime_ns;
    uint32_t helper_pid;   /* of the latest sample; 0: none running */
    uint32_t helper_count; /* helper processes seen */
    uint8_t reserved[8];
    struct gtr_host_thread threads[GTR_HOST_THREADS];
};

/* ---- collectives (1.6) ------------------------------------------------- */

/* What NCCL's profiler interface reports, per profiler context (one per
 * communicator NCCL initialised with the profiler loaded).  The reader joins
 * an entry to the net plugin's comm record by comm_id (NCCL's commHash, the
 * commId of the net ABI v11+).
 *
 * Cells: one per (function, message-size bucket) seen, claimed on first use
 * (in_use stored last with release order) and never freed; when every cell
 * is taken, further (function, size) pairs go to the last cell, marked
 * func = GTR_COLL_FUNC_OTHER, size_log2 = GTR_COLL_SIZE_ANY.  count, bytes and
 * the algorithm/protocol mix are added when NCCL starts the collective; the
 * histogram when its duration is known (docs/collectives.md says which
 * events bound it), so count - hist.count collectives had no duration. */
enum gtr_coll_func {
    GTR_COLL_FUNC_ALLREDUCE = 0,
    GTR_COLL_FUNC_ALLGATHER = 1,
    GTR_COLL_FUNC_REDUCESCATTER = 2,
    GTR_COLL_FUNC_BROADCAST = 3,
    GTR_COLL_FUNC_REDUCE = 4,
    GTR_COLL_FUNC_ALLTOALL = 5,
    GTR_COLL_FUNC_GATHER = 6,
    GTR_COLL_FUNC_SCATTER = 7,
    GTR_COLL_FUNC_SEND = 8, /* a P2p event */
    GTR_COLL_FUNC_RECV = 9, /* a P2p event */
    GTR_COLL_FUNC_SENDRECV = 10,
    GTR_COLL_FUNC_OTHER = 11, /* a name this writer did not know */
    GTR_COLL_FUNC_COUNT
};

/* NCCL's algorithms and protocols, by NCCL's names; the last of each is
 * "unknown" (a name this writer did not know, or none given). */
enum gtr_coll_algo {
    GTR_ALGO_TREE = 0,
    GTR_ALGO_RING = 1,
    GTR_ALGO_COLLNET_DIRECT = 2,
    GTR_ALGO_COLLNET_CHAIN = 3,
    GTR_ALGO_NVLS = 4,
    GTR_ALGO_NVLS_TREE = 5,
    GTR_ALGO_PAT = 6,
    GTR_ALGO_UNKNOWN = 7,
};
enum gtr_coll_proto {
    GTR_PROTO_LL = 0,
    GTR_PROTO_LL128 = 1,
    GTR_PROTO_SIMPLE = 2,
    GTR_PROTO_UNKNOWN = 3,
};
#define GTR_COLL_ALGOS 8
#define GTR_COLL_PROTOS 4
#define GTR_COLL_CELLS 32
#define GTR_COLL_SIZE_ANY 0xff /* the overflow cell's size_log2 */
/* size_log2 of a message of b bytes: floor(log2(b)), 0 for b <= 1 (the
 * bucket [2^k, 2^(k+1)) bytes). */

struct gtr_coll_cell {
    uint32_t in_use;   /* 1 once func/size_log2 are set (release) */
    uint8_t func;      /* enum gtr_coll_func */
    uint8_t size_log2; /* message-size bucket, GTR_COLL_SIZE_ANY in the overflow cell */
    uint8_t reserved0[2];
    uint64_t count;   /* collectives started */
    uint64_t bytes;   /* their message bytes (count x datatype size; all ranks' for AllGather) */
    uint64_t unsized; /* of count, those whose datatype size was unknown (bytes 0) */
    uint64_t algo_proto[GTR_COLL_ALGOS][GTR_COLL_PROTOS]; /* collectives per (algo, proto) */
    struct gtr_hist hist;                                 /* durations, ns */
};

enum gtr_coll_mode {
    GTR_COLL_MODE_OFF = 0,    /* GDRTRACE_COLL=off: init returned an empty mask */
    GTR_COLL_MODE_PROXY = 1,  /* Coll/P2p + ProxyOp (host clock) */
    GTR_COLL_MODE_KERNEL = 2, /* Coll/P2p + KernelCh (GPU timestamps) */
};

struct gtr_coll_comm {
    uint32_t state;         /* enum gtr_comm_state (FREE/ACTIVE/FINALIZED) */
    uint32_t has_comm_id;   /* 0 until known (v1-v3 learn it from the first event) */
    uint64_t comm_id;       /* NCCL's commHash = the net ABI's commId */
    int32_t version;        /* ncclProfiler_vN NCCL called */
    int32_t rank;           /* -1 unknown */
    int32_t nranks;         /* 0 unknown (v1-v3) */
    int32_t nnodes;         /* 0 unknown (v1-v3) */
    char comm_name[128];    /* NCCL's commName ("" when none) */
    uint32_t mode;          /* enum gtr_coll_mode */
    uint32_t mask;          /* the activation mask init returned */
    int64_t init_ns;        /* profiler init (recorder clock, ns) */
    int64_t first_ns;       /* first collective or p2p started, 0 none */
    int64_t last_end_ns;    /* end of the latest timed operation */
    int64_t finalize_ns;    /* 0 until finalize */
    uint64_t busy_ns;       /* union of the timed operations' intervals */
    uint64_t inflight_full; /* operations not timed: every in-flight slot was busy */
    uint64_t foreign;       /* children from another process (PXN), ignored */
    uint64_t stale_child;   /* 1.9: children of an operation whose slot was reused, ignored */
    uint64_t reserved[7];
    struct gtr_coll_cell cells[GTR_COLL_CELLS];
};

/* Why collective metrics may be absent: the setting NCCL acted on and ours,
 * recorded when the recorder opens and when NCCL calls the profiler. */
struct gtr_coll_status {
    uint32_t mode;             /* enum gtr_coll_mode from GDRTRACE_COLL */
    uint32_t profiler_env_set; /* NCCL_PROFILER_PLUGIN was set */
    char profiler_env[256];    /* its value */
    int32_t version;           /* last ncclProfiler_vN NCCL called init on, 0 none */
    uint32_t inits;            /* profiler inits seen */
    uint32_t full;             /* inits that found no free entry */
    uint32_t reserved0;
    uint64_t reserved[8];
};

#define GTR_DEFAULT_COLL_COMMS 16

/* ---- event ring -------------------------------------------------------- */

enum gtr_ring_mode {
    GTR_RING_OVERWRITE = 0, /* flight recorder: newest events win */
};

struct gtr_ring_header {
    uint64_t capacity;   /* number of event slots, a power of two */
    uint32_t event_size; /* sizeof(struct gtr_event) of the writer */
    uint32_t mode;       /* enum gtr_ring_mode */
    uint64_t head;       /* next absolute position to reserve (atomic) */
    uint64_t dropped;    /* events not recorded (reserved for non-overwrite modes) */
    uint8_t reserved[32];
};

enum gtr_event_type {
    GTR_EV_NONE = 0,
    GTR_EV_RECORDER_OPEN = 1, /* a0: capacity */
    GTR_EV_INIT = 2,          /* comm init; a0: comm_id, aux: abi version */
    GTR_EV_FINALIZE = 3,
    GTR_EV_PROBE = 4,     /* dev; a0: ptr_support, err: dmabuf errno, aux: probe bits */
    GTR_EV_TRANSPORT = 5, /* transport chosen; a0: ndev */
    GTR_EV_LISTEN = 6,
    GTR_EV_CONNECT = 7,   /* emitted when connect returned a comm */
    GTR_EV_ACCEPT = 8,    /* emitted when accept returned a comm */
    GTR_EV_REG = 9,       /* a0: addr, a1: size, a2: duration ns, aux: asked<<8|method */
    GTR_EV_DEREG = 10,    /* a0: addr, a1: size, a2: duration ns, aux: method */
    GTR_EV_FALLBACK = 11, /* a0: addr, a1: size, err: errno, aux: reason */
    GTR_EV_ERROR = 12,    /* result, err, aux: reason, a0: op (enum gtr_op or 0xff) */
    GTR_EV_CLOSE_SEND = 13,
    GTR_EV_CLOSE_RECV = 14,
    GTR_EV_CLOSE_LISTEN = 15,
    GTR_EV_SEND = 16,  /* per message (GDRTRACE_EVENTS=all): a0: bytes, a2: ns, aux: tag */
    GTR_EV_RECV = 17,  /* per message: a0: bytes, a2: ns */
    GTR_EV_FLUSH = 18, /* per message: a2: ns */
    /* 1.3: around each call into code gdrtrace does not own (common/callout.h):
     * a0: site (enum gt_call_site), a1: call serial (RETURNED repeats it),
     * a2: callee index (callees section; GTR_NO_CALLEE none), aux: ABI version */
    GTR_EV_CALLING = 19,
    GTR_EV_RETURNED = 20, /* a0: site, a1: serial of its CALLING, result */
    GTR_EV_REFUSED = 21,  /* the plugin refused the process: result, err, aux: reason,
                           * a0: transport asked (0 auto, 1 ib, 2 sock, 3 inner);
                           * identity.transport_why says why */
    GTR_EV_COUNT
};

#define GTR_NO_COMM 0xffffu
#define GTR_NO_CALLEE UINT64_MAX

struct gtr_event {
    uint64_t seq;       /* commit word, see invariant 6 */
    uint64_t ts;        /* ticks of identity.clock */
    uint16_t type;      /* enum gtr_event_type */
    uint16_t comm_slot; /* index into the comms section, GTR_NO_COMM if none */
    int16_t dev;        /* -1 if none */
    uint16_t flags;
    int32_t result; /* ncclResult_t of the call */
    int32_t err;    /* errno, 0 if none */
    uint64_t a0, a1, a2;
    uint32_t tid;
    uint32_t aux;
};

/* Default sizes (the header records the real ones). */
#define GTR_DEFAULT_DEVICES 32
#define GTR_DEFAULT_COMMS 64
#define GTR_DEFAULT_RING_EVENTS 16384
/* Settings entries: 32 at first; 64 since NCCL's own GPU Direct and
 * transport settings are recorded too.  A reader takes the count from the
 * section, so files of either size read everywhere. */
#define GTR_DEFAULT_SETTINGS 64
#define GTR_DEFAULT_CALLEES 4

/* File name: <GDRTRACE_DIR>/gdrtrace.<job|nojob>.<host>.<pid>.rec */
#define GTR_FILE_PREFIX "gdrtrace."
#define GTR_FILE_SUFFIX ".rec"

_Static_assert(sizeof(struct gtr_section) == 32, "gtr_section layout");
_Static_assert(sizeof(struct gtr_header) <= GTR_HEADER_SIZE, "header fits its page");
_Static_assert(sizeof(struct gtr_event) == 64, "one event is one cache line");
_Static_assert(offsetof(struct gtr_event, seq) == 0, "seq first");
_Static_assert(offsetof(struct gtr_comm, reg_count) % 64 == 0, "hot counters start a cache line");
_Static_assert(sizeof(struct gtr_comm) % 8 == 0, "comm record 8-byte multiple");
_Static_assert(sizeof(struct gtr_ring_header) == 64, "ring header one cache line");
_Static_assert(GTR_HIST_BUCKETS == 640, "histogram bucket count");
_Static_assert(sizeof(struct gtr_setting) == 256, "a setting is 256 bytes");
_Static_assert(sizeof(struct gtr_callee) == 512, "a callee is 512 bytes");
_Static_assert(sizeof(struct gtr_coll_cell) % 8 == 0, "coll cell 8-byte multiple");
_Static_assert(sizeof(struct gtr_coll_comm) % 8 == 0, "coll comm 8-byte multiple");
_Static_assert(GTR_COLL_ALGOS == GTR_ALGO_UNKNOWN + 1 && GTR_COLL_PROTOS == GTR_PROTO_UNKNOWN + 1,
               "algo/proto dimensions");
_Static_assert(sizeof(struct gtr_identity) == 1664, "1.4 fills identity's reserved bytes");
_Static_assert(offsetof(struct gtr_identity, reg_mode) == 490 &&
                   offsetof(struct gtr_identity, emulated) == 491 &&
                   offsetof(struct gtr_identity, facts) == 492 &&
                   offsetof(struct gtr_identity, policy_text) == 496,
               "1.8 codes take the first 3 of reserved0's 6 bytes; nothing else moved");
_Static_assert(sizeof(struct gtr_host_thread) == 64, "a host thread slot is 64 bytes");
_Static_assert(sizeof(struct gtr_host) == 192 + GTR_HOST_THREADS * 64, "host section layout");
_Static_assert(offsetof(struct gtr_host, helper_utime_ns) == 160, "1.7 helper fields at 160");
/* The matrix and counter dimensions against the codes they are indexed by. */
_Static_assert((int)GTR_ASKED_COUNT == (int)GT_ASKED_COUNT, "asked dimension");
_Static_assert((int)GTR_METHOD_COUNT == (int)GT_METHOD_COUNT, "method dimension");
_Static_assert((int)GT_REASON_COUNT <= GTR_REASON_OTHER, "every known reason has its own slot");
_Static_assert(GTR_REASON_SLOTS - GTR_REASON_SLOTS_1_0 == 16, "the hi slots are 16");
_Static_assert(GTR_COMM_SIZE_1_0 == 26608, "1.0 comm record size");
_Static_assert(sizeof(struct gtr_comm) == GTR_COMM_SIZE_1_0 + 2 * 16 * 8, "1.1 appends 256 bytes");

#endif /* GDRTRACE_RECORDER_FORMAT_H */
