/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recfile.h — the strict, safe reader of gdrtrace recorder files: the one
 * validator of the format, used by the `gdrtrace` command (tools/) and by the
 * writer's own tests (tests/unit/test_rec_*.c, test_shim*.c).
 *
 * Contract: every byte handed to gt_recfile_parse() is hostile.  The parser works
 * on a private snapshot (a file is read() into our own buffer, never mapped),
 * so a concurrent writer or a truncating attacker cannot move memory under
 * us; it checks every invariant of include/gdrtrace/recorder_format.h and
 * copies each entry into a zero-filled struct of the size this reader knows
 * (min(entry_size, sizeof known), invariant 2).  After a successful parse
 * every string in the copies is NUL-terminated within its array and every
 * index (comm_slot, enum values used as indices) has been bounded.
 *
 * Error convention: functions returning int return 0 on success and -1 on a
 * problem, with one line in err (naming the source and the problem).
 * Single-threaded; no global state.
 */
#ifndef GDRTRACE_COMMON_RECFILE_H
#define GDRTRACE_COMMON_RECFILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/codes.h"
#include "gdrtrace/recorder_format.h"

#define GT_ERRLEN 512

/* What the reader judged about the producer (ls: live / exited / crashed /
 * unknown); the rules are in liveness.c. */
enum gt_liveness {
    GT_LIVE_UNKNOWN = 0, /* state LIVE, and whether the writer runs cannot be told from here */
    GT_LIVE_CREATING,    /* header state CREATING */
    GT_LIVE_LIVE,        /* state LIVE and the process with the pid holds this file open */
    GT_LIVE_EXITED,      /* state CLOSED */
    GT_LIVE_CRASHED,     /* state LIVE but another boot, or the pid is gone or was reused */
};
const char *gt_liveness_name(int l);

/* What the event ring held, classified per invariant 6. */
struct gt_ring_stats {
    uint64_t capacity;
    uint64_t head;        /* absolute positions reserved so far */
    uint64_t complete;    /* committed records with the expected sequence */
    uint64_t torn;        /* odd sequence (being written) or never committed */
    uint64_t overwritten; /* slot already reused by a later lap, or older than one lap */
    uint64_t bad;         /* committed but with an out-of-range type or comm slot */
    uint64_t by_type[GTR_EV_COUNT];
};

/* What the reader keeps of a recorder's header once it is checked; the
 * sections' table, 640 of its 680 bytes, serves the parse alone. */
struct gt_rec_head {
    uint16_t version_major;
    uint16_t version_minor;
    uint32_t state;     /* enum gtr_state, as found */
    uint64_t file_size; /* total bytes of the file, as declared */
};

/* A source name is kept to this many bytes, its NUL included. */
#define GT_SOURCE_MAX 1024

struct gt_recfile {
    /* owned: path, or "ARCHIVE:MEMBER", at most GT_SOURCE_MAX - 1 bytes; by
     * pointer, as names are tens of bytes and a job's reduced recorders are
     * all held at once (a 1 KB array was a fifth of each at job scale) */
    char *source;
    uint64_t size;            /* bytes read */
    struct gt_rec_head hdr;   /* the header's facts (validated) */
    struct gtr_identity id;   /* zero-filled past the writer's entry size */
    int liveness;             /* enum gt_liveness */
    const char *liveness_why; /* NULL/"" or GT_LIVE_WHY_* (gt_recfile_judge_liveness_why) */
    int from_archive;         /* read from a dump archive (liveness judged at dump time) */
    int64_t owner;            /* the file's uid (a member's: its archive's); -1 unknown */
    /* Facts decided once, at parse (tools/lib/recfact.h): read these, never
     * the identity's strings again. */
    int reg_mode; /* enum gt_reg_mode (GDRTRACE_REG) in force; -1 unknown */
    int emulated; /* 1: the GPU-memory validation mode (no NIC moves the bytes) */
    uint32_t ndev;
    struct gtr_device *devs; /* ndev entries */
    int devs_shared;         /* devs belongs to someone else (inputs.c's pool of
                              * alike device tables), not freed with r */
    /* The comm table, compact: a file may declare up to 65,534 slots of
     * ~26 KB each (1.7 GB) and use a handful, so only the slots that hold
     * anything (not all zeros) are kept, in slot order; every other slot
     * reads as a zero record (FREE).  Look one up by slot with
     * gt_recfile_comm(). */
    uint32_t ncomm;         /* slots the file declares: the bound of an event's comm_slot */
    uint32_t nheld;         /* entries in comms[] */
    struct gtr_comm *comms; /* nheld entries, ascending slot */
    uint16_t *comm_slot;    /* nheld: the slot of comms[k] */
    uint16_t *comm_at;      /* ncomm: k + 1 where comms[k] is that slot, 0 for a zero slot */
    uint32_t nset;
    struct gtr_setting *settings; /* nset entries (1.2+; in_use 0 = empty); 0 before 1.2 */
    uint32_t ncallee;
    struct gtr_callee *callees; /* ncallee entries (1.3+; in_use 0 = empty); 0 before 1.3 */
    int has_host;               /* 1.5+: the host-pressure section was there */
    struct gtr_host *host;      /* owned: its copy (nthreads bounded); NULL without it
                                 * (1.2 KB: held by pointer, not inline, so that a
                                 * recorder without it, or folded lean, costs none) */
    uint32_t ncoll;
    struct gtr_coll_comm *colls; /* ncoll entries (1.5+; state FREE = empty); 0 before 1.5 */
    /* owned: the coll status section's copy (1.5+), NULL without it (344
     * bytes: by pointer, as host, so that a reduced recorder holds none) */
    struct gtr_coll_status *coll_status;
    int has_ring;
    struct gtr_ring_header ring;
    struct gt_ring_stats rs;
    /* The ring's slots, privately owned (never the writer's memory): read
     * them with gt_recfile_event_next(). */
    unsigned char *snap; /* owned: the ring slots or the whole snapshot */
    size_t snap_maplen;  /* 0: snap is malloc'd; else an anonymous mapping this long */
    /* owned, or NULL: one bit per 4 KiB page of the image snap (when it is
     * a mapping) that holds bytes read; the other pages are zeros that are
     * never read, so that what the reader touches follows what the file
     * holds, whatever the kernel does on a read fault of an untouched page
     * (some count it in the resident set). */
    unsigned char *present;
    size_t ring_slots_off; /* ring_slots - snap, when present is set */
    unsigned char *ring_slots;
    uint64_t ring_first; /* first absolute position still in the ring */
};

/*! gt_recfile_event_next() : the next complete, valid event at or after *pos
 *  (start with *pos = 0), oldest first; copies it to *ev, advances *pos past
 *  it and returns 1, or returns 0 at the end.  Torn, overwritten and invalid
 *  records are skipped (invariant 6). */
int gt_recfile_event_next(const struct gt_recfile *r, uint64_t *pos, struct gtr_event *ev);

/*! gt_recfile_parse() : validates buf[0, len) as a recorder and fills *r.
 *  source names it in messages.  Keeps no pointer into buf.  On failure *r
 *  holds nothing to free and err says what was wrong. */
int gt_recfile_parse(const void *buf, size_t len, const char *source, struct gt_recfile *r,
                     char *err, size_t errlen);

/*! gt_recfile_parse_sparse() : as gt_recfile_parse() over an image whose
 *  pages marked absent in present (one bit per 4 KiB page of buf, set =
 *  holds data; NULL = every page does) are zeros that are never read: the
 *  comm table is compacted and the ring classified without faulting them
 *  in.  Keeps no event (r->ring_slots NULL) and no pointer into buf. */
int gt_recfile_parse_sparse(const unsigned char *buf, size_t len, const unsigned char *present,
                            const char *source, struct gt_recfile *r, char *err, size_t errlen);

/*! gt_recfile_adopt_image() : as gt_recfile_parse_sparse(), taking ownership
 *  of img (an anonymous mapping of maplen >= len bytes) and of present
 *  (malloc'd, or NULL): with GT_REC_EVENTS they become r->snap and
 *  r->present, and the events are read in place, holes skipped; otherwise,
 *  and on failure, they are released. */
int gt_recfile_adopt_image(unsigned char *img, size_t maplen, size_t len, unsigned char *present,
                           int flags, const char *source, struct gt_recfile *r, char *err,
                           size_t errlen);

/*! gt_recfile_comm() : the record of comm slot `slot`, or NULL when the
 *  slot is out of range or holds only zeros (a FREE slot never used). */
static inline const struct gtr_comm *gt_recfile_comm(const struct gt_recfile *r, uint32_t slot)
{
    return slot < r->ncomm && r->comm_at[slot] ? &r->comms[r->comm_at[slot] - 1] : NULL;
}

/* Pages of a sparse image: one bit per GT_IMAGE_PAGE bytes. */
#define GT_IMAGE_PAGE_SHIFT 12
#define GT_IMAGE_PAGE ((size_t)1 << GT_IMAGE_PAGE_SHIFT)
/*! gt_image_all_hole() : 1 when [off, off + n) of a sparse image lies wholly
 *  in pages present marks absent (never when present is NULL or n is 0). */
int gt_image_all_hole(const unsigned char *present, uint64_t off, uint64_t n);

/*! gt_recfile_parse_owned() : as gt_recfile_parse(), but takes ownership of the
 *  malloc'd buf (freed on failure, or by gt_recfile_free()), which avoids a copy
 *  of the event ring. */
int gt_recfile_parse_owned(unsigned char *buf, size_t len, const char *source, struct gt_recfile *r,
                           char *err, size_t errlen);

/*! gt_recfile_load_file() : snapshot of a live or closed recorder file, then
 *  gt_recfile_parse(); judges liveness against this machine. */
int gt_recfile_load_file(const char *path, struct gt_recfile *r, char *err, size_t errlen);

/*! gt_recfile_read_fd() : the recorder in the regular file open on fd, read
 *  header first: the header is read and checked (invariants 1-3) before
 *  anything else, then only the sections it declares, holes skipped; memory
 *  is what those sections hold, whatever the file's size.  flags:
 *  GT_REC_EVENTS keeps the ring's slots for gt_recfile_event_next() (without it
 *  the ring is classified into r->rs and released); then r->snap is the
 *  image (r->snap_maplen bytes, the file's layout, zeros where nothing was
 *  read).  GT_REC_ALL_SECTIONS also reads the whole header and the sections
 *  this reader does not know (a newer writer's), so the image carries
 *  everything the file declares (dump).  Does not judge liveness.  path
 *  names the file in messages. */
#define GT_REC_EVENTS 1
#define GT_REC_ALL_SECTIONS 2
int gt_recfile_read_fd(int fd, const char *path, int flags, struct gt_recfile *r, char *err,
                       size_t errlen);

/* Liveness of a parsed recorder as seen from this machine (liveness.c): boot
 * id, the writer's pid namespace (1.4), the pid, its process's start time
 * against the writer's (1.4) or the recorder's creation, and whether that
 * process holds the file r->source open. */
int gt_recfile_judge_liveness(const struct gt_recfile *r);
/* The same; *why (why may be NULL) is "" or, for an unknown that the pid
 * cannot settle, one of these words (shown as "unknown (WHY)"). */
#define GT_LIVE_WHY_OTHER_NS "other pid namespace"
#define GT_LIVE_WHY_NS_UNREADABLE "pid namespace unreadable"
int gt_recfile_judge_liveness_why(const struct gt_recfile *r, const char **why);

void gt_recfile_free(struct gt_recfile *r);
/* Frees the ring's slots only (gt_recfile_event_next() then finds none; r->rs
 * keeps the counts). */
void gt_recfile_drop_events(struct gt_recfile *r);

/* Opens a regular file of at most max bytes for reading (*fd), refusing
 * symlinks and anything else with a message. */
int gt_open_file(const char *path, size_t max, int *fd, char *err, size_t errlen);
/* Reads a whole regular file into a malloc'd buffer, at most max bytes. */
int gt_read_file(const char *path, size_t max, unsigned char **out, size_t *outlen, char *err,
                 size_t errlen);

/* An event timestamp as seconds since the recorder was created (identity
 * clock conversion; display precision, never UB on hostile values). */
double gt_recfile_ts_rel_s(const struct gt_recfile *r, uint64_t ticks);

/* Names used by every command. */
/* Writes "<source>: <message>" into err (when err/errlen allow) and returns
 * -1: the one error convention of the parser and the archive code. */
int gt_source_error(char *err, size_t errlen, const char *source, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* gt_asked_name, gt_method_name, gt_probe_name: common/codes.h */
const char *gt_reason_name(int r);         /* short token, "reason#N" for unknown codes */
const char *gt_reason_slot_name(int slot); /* a counter slot's name: token, "other" */
/* Where a setting's value came from, for text output: "default", "gdrtrace",
 * "nccl: NCCL_X=v", "invalid: GDRTRACE_REG=bogus", "source#N". */
void gt_setting_source_text(const struct gtr_setting *s, char *out, size_t n);
const char *gt_op_name(int op); /* reg, dereg, send, recv, flush */
const char *gt_event_name(int t);

#endif
