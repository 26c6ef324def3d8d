/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccllog.h — a streaming reader of NCCL's own log (NCCL_DEBUG=INFO,
 * NCCL_DEBUG_SUBSYS=INIT,NET; one NCCL_DEBUG_FILE=…%h.%p file per process, or
 * a launcher's merged output) that keeps only what `verdict --nccl-log`
 * joins to the recorders: per process, which net plugin NCCL loaded or why
 * none; per communicator and rank, its Init lines (commId, rank, nranks,
 * cudaDev, nvmlDev, busId, split parent), its nNodes, the network NCCL
 * assigned it, and its channel lines by transport; NCCL's GPU Direct RDMA
 * decisions.  The line formats are NCCL 2.18 … 2.30's (src/init.cc,
 * src/debug.cc, src/plugin/, src/transport/ (net, p2p, shm, coll_net, nvls), src/graph/paths.cc,
 * src/graph/topo.cc), described in docs/reader.md ("--nccl-log").
 *
 * Invariants (nccllog.c keeps them):
 *  1. Bounded memory.  A line longer than GT_NLOG_LINE_MAX bytes is counted
 *     and skipped (NCCL writes at most 1,024 bytes a line), so a file is
 *     read through a fixed buffer whatever its size or content; records
 *     are fixed-size and capped (GT_NLOG_MAX_PROCS, GT_NLOG_MAX_COMMS, per
 *     process GT_NLOG_MAX_PROC_COMMS, GT_NLOG_MAX_GDR): what is over a cap
 *     is counted as dropped, never stored.
 *  2. Never fatal.  Any byte sequence is a valid input: a line that is not
 *     NCCL's (no `host:pid:tid [dev] NCCL INFO|WARN` prefix), contains a NUL
 *     byte, or is an NCCL line this reader does not use is counted
 *     (foreign, binary, unused) and the reading goes on.
 *  3. Prefixes.  Whatever precedes NCCL's `host:pid:tid [dev]` (a launcher's
 *     `0: ` or `[1,0]<stdout>:`, NCCL's optional `[date time] ` timestamp)
 *     is ignored, so the same log reads the same with or without them.
 *  4. Attribution.  A channel line names no communicator: it is given to
 *     the communicator of its process (host, pid) whose init is open on its
 *     thread and has its rank; else to the one communicator of the process
 *     with its rank, a peer rank below nranks, its nvmlDev and cudaDev, and
 *     for a NET line the network its "Using network X" named; of several,
 *     the one initialised on its thread.  Otherwise it is counted
 *     as not attributed, per process and transport, with the first line
 *     quoted (and each candidate's `amb` count rises).
 *     Every channel line also joins a connection phase of its process
 *     (struct gt_nlog_phase): the lines of one thread up to NCCL's line that
 *     ends a connection phase ("Connected all rings…", "Connected all
 *     trees", "Connected binomial trees", "Connected NVLS tree",
 *     "Connected Collnet Chains…": src/transport/generic.cc, nvls.cc,
 *     coll_net.cc), an Init START/COMPLETE or Destroy of that thread, or a
 *     line of another thread.  NCCL connects one communicator at a time on
 *     a thread, so a phase is one communicator's: nccljoin.c gives the
 *     ambiguous lines of a phase by order against the recorder's
 *     connection runs (docs/reader.md, "--nccl-log").
 *  5. Strings kept are NUL-terminated and at most their field's size less
 *     one; quotes are NCCL's message text (after `NCCL INFO `), cut to fit.
 */
#ifndef GDRTRACE_TOOLS_NCCLLOG_H
#define GDRTRACE_TOOLS_NCCLLOG_H

#include <stddef.h>
#include <stdint.h>

#define GT_NLOG_LINE_MAX 4096             /* longer lines are not NCCL's: skipped */
#define GT_NLOG_MAX_PROCS 65536           /* processes (host, pid) */
#define GT_NLOG_MAX_COMMS (1u << 18)      /* communicator records, all processes */
#define GT_NLOG_MAX_PROC_COMMS 1024       /* communicator records of one process */
#define GT_NLOG_MAX_GDR 16                /* distinct GPU Direct decisions a process */
#define GT_NLOG_MAX_PHASES 256            /* connection phases of one process */
#define GT_NLOG_MAX_ALL_PHASES (1u << 20) /* … of all processes */
#define GT_NLOG_PHASE_CAND 16             /* candidates of an ambiguous line kept */
#define GT_NLOG_QUOTE 160                 /* a quoted NCCL message, NUL included */
#define GT_NLOG_OUR_NET "gdrtrace"        /* the name our plugin gives NCCL */

/* What NCCL said about loading a net plugin, per process, most telling last. */
enum gt_nlog_plugin {
    GT_NLOG_PLUGIN_UNKNOWN = 0, /* no NET/Plugin line seen */
    GT_NLOG_PLUGIN_LOADED,      /* ours loaded (and initialised, if NCCL says so) */
    GT_NLOG_PLUGIN_OTHER,       /* another external plugin was loaded instead */
    GT_NLOG_PLUGIN_NOT_FOUND,   /* no libnccl-net*.so found: internal transports */
    GT_NLOG_PLUGIN_LOAD_FAILED, /* dlopen failed (the loader's error quoted) */
    GT_NLOG_PLUGIN_UNSUPPORTED, /* opened, but no ncclNetPlugin_vN NCCL takes */
    GT_NLOG_PLUGIN_INIT_FAILED, /* ours loaded, its init failed: NCCL fell back */
    GT_NLOG_PLUGIN_DISABLED,    /* NCCL_NET_PLUGIN=none: NCCL was told to load none */
};
const char *gt_nlog_plugin_name(int state);

/* Channel line classes. */
enum gt_nlog_ch {
    GT_NLOG_CH_NET_OURS = 0, /* via NET/gdrtrace/… */
    GT_NLOG_CH_NET_OTHER,    /* via NET/IB, NET/Socket, another plugin */
    GT_NLOG_CH_COLLNET_OURS, /* CollNet … via COLLNET/gdrtrace */
    GT_NLOG_CH_COLLNET_OTHER,
    GT_NLOG_CH_P2P,   /* via P2P/… (intra-node) */
    GT_NLOG_CH_SHM,   /* via SHM/… (intra-node) */
    GT_NLOG_CH_NVLS,  /* NVLS comm … (intra-node NVLink SHARP) */
    GT_NLOG_CH_OTHER, /* via something this reader does not know */
    GT_NLOG_CH_COUNT
};
const char *gt_nlog_ch_name(int ch);
/* 1 for the classes that carry no network traffic (P2P, SHM, NVLS). */
int gt_nlog_ch_intra(int ch);

/* One of NCCL's GPU Direct RDMA decisions ("GPU Direct RDMA Enabled for GPU g
 * / HCA n (distance d <= l)…", src/graph/paths.cc), or an HCA's capability
 * ("NET/X : GPU Direct RDMA Enabled for HCA n 'name'", src/graph/topo.cc:
 * kind 1, gpu ""). */
struct gt_nlog_gdr {
    uint8_t kind;            /* 0 GPU/HCA distance decision, 1 HCA capability */
    uint8_t enabled;         /* 1 Enabled, 0 Disabled */
    int16_t distance, level; /* -1 unknown (kind 1) */
    uint32_t count;          /* times seen */
    char gpu[24], hca[40];   /* as NCCL printed them */
    char quote[GT_NLOG_QUOTE];
};

/* One connection phase (invariant 4): channel lines of one thread that NCCL
 * logged while connecting one communicator. */
struct gt_nlog_phase {
    int32_t next;        /* the process's next phase, -1 none */
    int32_t tid;         /* its thread */
    uint8_t closed;      /* a line that ends a phase ended it */
    uint8_t cand_differ; /* its ambiguous lines had different candidates, or too many */
    uint8_t ncand;
    int32_t rec;                      /* record its attributed lines went to: -1 none, -2 several */
    uint32_t ch[GT_NLOG_CH_COUNT];    /* its lines by class */
    uint32_t ours_recv, ours_send;    /* its NET/gdrtrace lines [receive], [send] */
    uint32_t amb[GT_NLOG_CH_COUNT];   /* of them not attributed, with several candidates */
    uint32_t orphan;                  /* … not attributed, with no candidate */
    uint32_t amb_gdrdma;              /* ambiguous NET/COLLNET lines with /GDRDMA */
    int32_t cand[GT_NLOG_PHASE_CAND]; /* the records its ambiguous lines could be */
};

struct gt_nlog_proc {
    char host[64]; /* NCCL's host name: cut at the first '.' */
    int32_t pid;
    int32_t ncomm;                    /* communicator records */
    int32_t first_comm;               /* index of its latest record, -1 none (chain by prev) */
    char version[32];                 /* "2.28.3+cuda12.9", "" unknown */
    int plugin;                       /* enum gt_nlog_plugin */
    int plugin_abi;                   /* N of "(vN)", 0 unknown */
    char plugin_name[32];             /* the plugin NCCL loaded ("gdrtrace", another), "" */
    char quote_plugin[GT_NLOG_QUOTE]; /* NCCL's line behind `plugin` */
    char quote_net[GT_NLOG_QUOTE];    /* "NET/X : Using …" of the network NCCL used */
    char quote_ours[GT_NLOG_QUOTE];   /* our plugin's WARN that it disabled itself */
    struct {
        char net[24];
        char quote[GT_NLOG_QUOTE];
    } nets[4]; /* "NET/X : Using …" of each internal network NCCL set up */
    uint32_t nnets;
    char last_net[24];    /* the latest "Using network X" */
    uint32_t init_failed; /* "Failed to initialize NET plugin gdrtrace" */
    uint32_t unattributed[GT_NLOG_CH_COUNT];
    char quote_unattr[GT_NLOG_QUOTE]; /* first channel line not attributed */
    int unattr_ch;                    /* its class */
    struct gt_nlog_gdr gdr[GT_NLOG_MAX_GDR];
    uint32_t ngdr, gdr_dropped;
    /* "Using network X" waiting for the Init START of its thread (commAlloc
     * logs it just before): a few threads may initialise at once. */
    struct {
        int32_t tid;
        char net[24];
    } pending[8];
    uint32_t npending;
    uint32_t nseq; /* init order counter */
    /* A GPU/HCA decision logged outside any open init (2.22+ connect at the
     * first collective: net.cc logs it just before the channel line of the
     * same thread): the next NET line of that thread takes it. */
    int32_t pend_tid;
    int pend_gdr; /* -1 none, else enabled (0/1) */
    char pend_quote[GT_NLOG_QUOTE];
    int32_t phase_first, phase_last; /* its connection phases (chain by next), -1 none */
    uint32_t nphase, phase_dropped;  /* … and those over a cap */
};

/* One communicator as one rank (process) saw it. */
struct gt_nlog_comm {
    uint32_t proc;    /* index into procs */
    int32_t prev;     /* the process's previous record, -1 none */
    int32_t parent;   /* split: the parent's record, -1 none or unknown */
    int32_t tid;      /* the thread that ran its init */
    uint32_t seq;     /* init order within the process */
    uint64_t ptr;     /* NCCL's ncclComm_t in that process */
    uint64_t comm_id; /* commId of its Init line (has_id) */
    uint64_t parent_ptr;
    int32_t split_count, color, key;
    uint8_t has_id, is_split, open, completed, destroyed;
    int32_t rank, nranks, cuda_dev, nvml_dev, nnodes; /* -1 unknown */
    uint64_t bus_id;
    char func[32]; /* ncclCommInitRank, ncclCommSplit… (2.28+), "" */
    char net[24];  /* "Using network X" for it, "" unknown */
    uint32_t ch[GT_NLOG_CH_COUNT];
    uint32_t ch_gdrdma;              /* NET lines with /GDRDMA */
    uint32_t amb;                    /* channel lines it was one of several candidates of */
    uint32_t gdr_on, gdr_off;        /* GPU Direct decisions logged during its init */
    char net_name[24];               /* net of its first NET line */
    char quote_net[GT_NLOG_QUOTE];   /* its first NET or COLLNET line */
    char quote_intra[GT_NLOG_QUOTE]; /* its first P2P/SHM/NVLS line */
    char quote_gdr[GT_NLOG_QUOTE];   /* its first GPU Direct decision (Disabled first) */
};

struct gt_nlog {
    struct gt_nlog_proc *procs;
    size_t nproc, cap_proc;
    struct gt_nlog_comm *comms;
    size_t ncomm, cap_comm;
    struct gt_nlog_phase *phases;
    size_t nphase, cap_phase;
    uint32_t *ptab; /* open-addressing table of procs (index + 1), 0 empty */
    size_t ptab_size;
    /* counts */
    uint64_t files, lines, bytes;
    uint64_t skipped; /* folder entries named as recorders or archives */
    /* Owners (set before gt_nlog_add_path; nowners 0: no rule): a log file
     * inside a folder is read only when its owner is one of owners[], as a
     * job's recorders have one owner (docs/reader.md "Owners"); the others
     * are left out and counted, the first named.  A file named by itself is
     * the operator's choice and always read. */
    long owners[12];
    int nowners;
    uint64_t owner_left;      /* folder entries left out by the owner rule */
    long owner_left_uid;      /* the first one's owner */
    char owner_left_eg[1024]; /* its path */
    uint64_t nccl_lines;      /* with NCCL's prefix */
    uint64_t used;            /* NCCL lines this reader took a fact from */
    uint64_t unused;          /* NCCL lines it does not use (most INFO lines) */
    uint64_t foreign;         /* non-empty lines without NCCL's prefix */
    uint64_t binary;          /* lines with a NUL byte */
    uint64_t too_long;        /* lines over GT_NLOG_LINE_MAX */
    uint64_t dropped;         /* facts over a cap */
    uint64_t channels, unattributed, ambiguous;
    uint64_t net_lines, net_gdrdma; /* NET and CollNet channel lines, those with /GDRDMA */
    char first_unused[GT_NLOG_QUOTE];
    /* the line being assembled by gt_nlog_feed */
    char *line;
    size_t linelen;
    int overlong;
};

/*! gt_nlog_init() : an empty log; 0 or ENOMEM. */
int gt_nlog_init(struct gt_nlog *l);
void gt_nlog_free(struct gt_nlog *l);

/*! gt_nlog_line() : takes one line (no newline; a trailing '\r' is
 *  ignored; len bytes, NULs allowed).  Never fails (invariant 2). */
void gt_nlog_line(struct gt_nlog *l, const char *s, size_t len);

/*! gt_nlog_feed() : bytes of a stream, in any split; gt_nlog_feed_end()
 *  takes the last line when the stream does not end with a newline. */
void gt_nlog_feed(struct gt_nlog *l, const char *buf, size_t n);
void gt_nlog_feed_end(struct gt_nlog *l);

/*! gt_nlog_add_path() : a log file, or a folder whose every regular file is
 *  one (sorted by name; symbolic links and other kinds are skipped, and so
 *  are recorders and dump archives by their names, gdrtrace.*.rec and *.zst,
 *  which `gdrtrace run` keeps beside NCCL's log).  0, or
 *  an errno with *what set to the path that failed (a file that cannot be
 *  opened or read, a folder that cannot be listed); what was read before
 *  the failure is kept.  A path named that is not a regular file or a
 *  folder (a FIFO, a device, a socket) is GT_NLOG_NOT_REGULAR, never read. */
#define GT_NLOG_NOT_REGULAR 0x10000 /* beyond every errno */
int gt_nlog_add_path(struct gt_nlog *l, const char *path, const char **what);

/*! gt_nlog_gdr_text() : NCCL's GPU Direct decisions of the whole log in one
 *  line, host and pid left out so that two runs compare: each distinct
 *  decision ("GPU 0 / HCA 0: Disabled (distance 8 > 5)", "NET/IB HCA 0
 *  'mlx5_0': Enabled"), sorted, joined by "; " ("none" when NCCL logged
 *  none); cut to n bytes. */
void gt_nlog_gdr_text(const struct gt_nlog *l, char *buf, size_t n);

/*! gt_nlog_proc_find() : the record of (host, pid), host compared up to its
 *  first '.' (NCCL logs the short name); NULL if none. */
const struct gt_nlog_proc *gt_nlog_proc_find(const struct gt_nlog *l, const char *host, int pid);

#endif /* GDRTRACE_TOOLS_NCCLLOG_H */
