/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fixture.h — builds recorder files with known content, written from
 * include/gdrtrace/recorder_format.h directly (not through shim/), so the
 * reader is tested against the format contract rather than against the
 * writer's interpretation of it.
 */
#ifndef GDRTRACE_TESTS_READER_FIXTURE_H
#define GDRTRACE_TESTS_READER_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

/* Content kinds: one per verdict. */
enum fx_kind {
    FX_DMABUF,
    FX_PEERMEM,
    FX_HOST,
    FX_MIXED,
    FX_FALLBACK,
    FX_ERROR,
    FX_NODATA,
    FX_KIND_COUNT
};

struct fx_opts {
    int kind;
    const char *host;      /* default "node-a" */
    const char *job;       /* default "job42" */
    int pid;               /* default 4242 */
    int rank, world;       /* default 0, 2 */
    uint64_t comm_id;      /* default 0x1234abcd5678ef00 */
    int state;             /* GTR_STATE_*; default CLOSED */
    const char *kernel;    /* default "6.1.0-test" */
    const char *reg;       /* policy_reg; default by kind */
    uint64_t ring_cap;     /* default 1024 */
    uint64_t events;       /* events written (head); default 300 */
    int torn;              /* make this many of the newest events torn */
    int nccl_version;      /* default 22803 */
    int scale;             /* multiply every count (default 1) */
    int ncomm;             /* comm slots (default 4; slot 0 carries the data) */
    int lat_pct;           /* latency values in percent of the defaults (default 100) */
    int64_t start_mono_ns; /* CLOCK_MONOTONIC at creation (default 1000: just after boot) */
    int64_t end_wall_ns;   /* last activity (close, or newest event) at this wall time;
                              0: the fixed dates of 2025-12-02 */
    const char *setting;   /* "KEY=VALUE": one more setting in force (source gdrtrace; nccl
                            * for an NCCL_* key), or replaces the fixture's entry of that key */
    int no_settings;       /* write no settings section (a file of format 1.1 or older) */
    const char *invalid;   /* "KEY=TEXT": that entry keeps its value (the default in force),
                            * source invalid, origin KEY=TEXT */
    int fate;              /* enum fx_fate: what the newest events say became of the process */
    uint64_t flushes;      /* iflush calls on slot 0 (default 0: sm90 NCCL flushes none) */
    /* Format 1.4's writer identity (identity.pidns_*, timens_*, proc_start_ticks). */
    int pidns;                     /* enum fx_pidns */
    uint64_t pidns_dev, pidns_ino; /* FX_PIDNS_GIVEN */
    int64_t start_ticks;           /* proc_start_ticks; 0: not recorded (as a writer that could
                                    * not read it), -1: this process's own */
    int minor;                     /* version_minor to write; 0: the current one.  3 writes a 1.3
                                    * file: no 1.4 identity fields */
    int abi;                       /* the communicators' ABI version (default 12); below 11
                                    * NCCL gives no commId: has_comm_id 0 */
    int no_dev;                    /* device -1: not known */
    const char *coll; /* the 1.6 collective sections: NULL none (a 1.4 file); "data" one
                       * communicator (comm_id, rank/world, "fx") with AllReduce at 1 MiB and
                       * 64 MiB and AllGather at 8 MiB; "env:TEXT" no communicator and
                       * NCCL_PROFILER_PLUGIN=TEXT in the status; "unset" neither */
    /* Format 1.8's coded facts (identity.reg_mode, emulated, facts): 0 writes
     * none; else the code + 1 (reg_code: enum gt_reg_mode, or a value this
     * build does not know; emulated_code: 0 or 1), its facts bit set, and
     * version 1.8 unless minor says otherwise.  The strings stay as --reg
     * and --setting make them, so a test can make the two disagree. */
    int reg_code, emulated_code;
    const char *conn; /* connection runs, oldest first (fx_conn_parse), as NCCL >= 2.22
                       * connects communicators at their first collective: each slot named
                       * is a communicator of commId comm_id + slot; its runs' events
                       * come right after the ring's first event */
};

/* One connection run of fx_opts.conn: slot's listen, connect and accept
 * (one a listen) events. */
struct fx_conn_run {
    int slot, listens, connects;
};
#define FX_CONN_MAX 64
/* Parses "0213" (a slot digit a run, one listen and one connect each) or
 * "0:2/2,2:1/1,3:0/1" (SLOT:LISTENS/CONNECTS a run) into r[0..FX_CONN_MAX);
 * the number of runs, or -1 when malformed or a slot is not below ncomm. */
int fx_conn_parse(const char *s, int ncomm, struct fx_conn_run *r);

/* Whose pid namespace a fixture records as its writer's. */
enum fx_pidns {
    FX_PIDNS_SELF = 0, /* this process's pid and time namespaces (as the writer would) */
    FX_PIDNS_NONE,     /* zeros: the writer could not read /proc/self/ns/pid */
    FX_PIDNS_GIVEN,    /* pidns_dev:pidns_ino, and this process's time namespace */
};

/* Format 1.3's facts about a process, as the newest events of the ring (and
 * the callees section, written whenever the settings section is). */
enum fx_fate {
    FX_FATE_NONE = 0,
    FX_FATE_REFUSED,  /* REFUSED (ib, no-rdma-device); comm slot 0 left FREE */
    FX_FATE_CRASHED,  /* the inner plugin's init returned, its connect never did */
    FX_FATE_RETURNED, /* the same calls, both returned */
};
#define FX_INNER_PATH "/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so"
#define FX_REFUSED_WHY "GDRTRACE_TRANSPORT=ib: ib unavailable (ib: no active RDMA port)"

/* Names accepted by fx_kind_parse: dmabuf peermem host mixed fallback error nodata. */
int fx_kind_parse(const char *s);
const char *fx_kind_name(int k);
/* The verdict name the reader must print for a kind. */
const char *fx_kind_verdict(int k);

/* A malloc'd recorder image and its length. */
unsigned char *fx_build(const struct fx_opts *o, size_t *len);
/* Writes it to path; 0 or -1 (errno). */
int fx_write(const struct fx_opts *o, const char *path);

/* Known counts for tests: registrations of comm slot 0 (all cells summed). */
uint64_t fx_expected_regs(const struct fx_opts *o);
/* Offsets in the image, for hostile mutations. */
size_t fx_off_identity(void);
size_t fx_off_devices(void);
size_t fx_off_comms(void);
size_t fx_off_ring(void);
/* The settings section's entries (32 of them) follow the
 * ring, 64-byte aligned. */

#endif
