/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inputs.h — turns command-line paths into parsed recorders: recorder files,
 * dump archives (every member), and folders of either.  No path given means
 * every recorder in GDRTRACE_DIR (default /dev/shm).  Each unreadable input
 * is reported on stderr as "gdrtrace: PROBLEM" and counted in nbad; the
 * others are still read.  Single-threaded.
 */
#ifndef GDRTRACE_TOOLS_INPUTS_H
#define GDRTRACE_TOOLS_INPUTS_H

#include <stddef.h>
#include <stdio.h>

#include "tools/lib/owner.h"
#include "tools/lib/recfile.h"

struct gt_job;

struct gt_devs_pool;
struct gt_htab;

struct gt_inputs {
    struct gt_recfile *recs;
    size_t n, cap;
    int nbad;        /* inputs that could not be read */
    int quiet;       /* 1: do not print problems (watch) */
    int quiet_empty; /* 1: no gt_inputs_explain() note (export --quiet: an idle node) */
    const char *job; /* non-NULL: keep only recorders of this job (--job) */
    int live_only;   /* 1: keep only recorders judged live (watch without --all) */
    /* Fold mode (memory bounded by the digests, not the recorders): set to
     * a gt_job_begin()'d job; each recorder is folded into it as it is read
     * and reduced to its digest (gt_recfile_release), and recs stay unsorted
     * until gt_job_finish().  For consumers of the merged view only
     * (communicator sums and verdicts, nodes), never of recs[].comms. */
    struct gt_job *fold;
    int fold_failed; /* out of memory while folding */
    int fold_lean;   /* the fold keeps no communicator sums (gt_job.lean: verdict),
                      * and the kept recorders no host section (has_host 0) */
    int phase;       /* gt_inputs_load in fold mode: 1 recorder files, 2 archives; 0 both */
    /* Release mode (no fold): each kept recorder is reduced as in fold mode
     * (gt_recfile_reduce) once each has seen it, for commands that list or
     * compare identities only (ls, diff).  keep_settings: the reduced
     * recorder keeps every setting in use (diff), not only a verdict's. */
    int release, keep_settings;
    /* keep_fates: fates[i] is recs[i]'s gt_recfile_fate() (computed before
     * the events are released), NULL when GT_FATE_NONE; it follows recs[i]
     * through the sort. */
    int keep_fates;
    struct gt_fate **fates;
    size_t fates_cap;
    /* Called for each recorder kept, with its index, while recs[i] is still
     * whole (before fold or release mode reduces it); in fold mode i is the
     * index gt_job_finish()'s rec_pos maps to report order. */
    void (*each)(struct gt_inputs *in, size_t i, void *arg);
    void *each_arg;
    /* What was looked at, for gt_inputs_explain() when nothing was kept. */
    const char *dirs[4];    /* the first folders read (argv or gt_default_dir: not owned) */
    int ndirs, nfiles;      /* folders opened, files read */
    int skip_job;           /* recorders of another job than --job */
    int skip_dead;          /* recorders not live, left out by live_only */
    char other_job[128];    /* one of them ("" = no job id) */
    int skip_name;          /* folder entries not named gdrtrace.*.rec or *.zst */
    char skip_name_eg[256]; /* NAME_MAX + 1 */
    int skip_run;           /* folders gdrtrace run left (gdrtrace-run.*: not files) */
    char skip_run_eg[256];
    int skip_ours; /* of those, files holding a recorder or zstd frame */
    char skip_ours_eg[256];
    int dups; /* the same process seen twice (live and archived): counted once */
    /* Owners (a job's recorders have one; docs/reader.md "Owners"): a
     * recorder file's owner is its uid, an archive member's the archive's.
     * all_owners: keep every owner (ls lists them).  Else, before anything
     * is parsed (gt_inputs_load): not root, or with accept[]
     * (--accept-owner), only the files of the caller's uid and accept[] are
     * read, the others left out unread; root without accept[] settles each
     * job's owner, whatever the names and the order of the files: root's own
     * recorders of the job, else the owner the launcher names (SLURM_JOB_UID
     * for SLURM_JOB_ID's job), else the owner a folder names (a folder not
     * root's, writable by its owner alone, names its owner for what it
     * holds), else the job's only owner; a job of several owners and none of
     * these is a conflict: none of its recorders is counted (nbad: exit 2).
     * Where owners differ, root reads each file's identity first (its
     * header and identity, 2 KB) and parses only the files of counted
     * owners.  What was left out is named on stderr by gt_inputs_load. */
    int all_owners;
    long accept[8];
    int naccept;
    int owner_conflict;
    struct gt_owner_skip {
        long uid;
        int n;
        char job[128]; /* "" with job_known 0: skipped by owner before reading */
        int job_known;
        char eg[1024]; /* a recorder's source */
        long kept;     /* root: the job's owner counted instead, -1 none (conflict) */
        int why;       /* root: enum gt_owner_why of kept (inputs.c) */
    } skip_owner[8];
    int nskip_owner, skip_owner_more;
    /* root: each job's owner as settled (uid -1: a conflict, none counted) */
    struct gt_job_owner {
        char job[128];
        long uid;       /* settled: the owner counted, -1 none */
        int why;        /* enum gt_owner_why (inputs.c) */
        long others[4]; /* the owners seen (the first four) */
        int nothers;
        long folder;      /* the owner a folder holding some of them names, -1 none */
        int folder_mixed; /* folders name different owners */
    } * job_owner;
    size_t njob_owner, job_owner_cap;
    struct gt_htab *job_ix; /* job_owner[] by job */
    int owners_settled;     /* root's pre-pass ran (gt_inputs_settle_owners) */
    int owners_one;         /* it found files of one owner only: owners_uid */
    long owners_uid;
    int nparsed; /* recorder files and archives read past their identity */
    /* A folder holding more recorder and archive files than
     * GDRTRACE_FOLDER_MAX: the first that many are read (the caller's own
     * first, then by name), the rest left out and said (nbad). */
    int folder_capped;
    /* List mode (ls): each kept recorder is handed to `each` (each_rec) and
     * freed at once; n counts them, recs[] holds none. */
    int discard;
    const struct gt_recfile *each_rec; /* the recorder `each` is called for */
    struct gt_proc_key *keys;          /* list mode: the identities seen (dedup) */
    size_t nkeys;
    /* open-addressing set of recs[] indices + 1 by process identity */
    size_t *seen, seen_cap;
    /* reduced recorders' device tables, one copy of each distinct table
     * (a node's ranks see the same NICs): r->devs points here, devs_shared */
    struct gt_devs_pool *devs_pool;
};

/* --accept-owner USER|UID: adds it to in->accept.  0, or -1 with a message
 * on stderr (an unknown user, too many). */
int gt_inputs_accept_owner(struct gt_inputs *in, const char *arg, const char *cmd);
/* Copies --accept-owner's owners gathered in from (by the option parser)
 * into in. */
void gt_inputs_take_owners(struct gt_inputs *in, const struct gt_inputs *from);
/* Whether recorder r (r->owner set) may be counted, by the owner rule
 * above; one left out is tallied for gt_inputs_explain_owners(), which names
 * them on stderr and counts a root's conflict in nbad (gt_inputs_load calls
 * both; dump, which reads files itself, calls them too). */
int gt_inputs_owner_ok(struct gt_inputs *in, const struct gt_recfile *r);
/* Root without --accept-owner: settles each job's owner over the inputs
 * (paths[0..n), or the default folder) before any is parsed, reading only
 * file owners and, where they differ, each recorder's header and identity
 * (gt_inputs_load calls it; dump, which reads files itself, too).  A no-op
 * otherwise. */
void gt_inputs_settle_owners(struct gt_inputs *in, char **paths, int n);
void gt_inputs_explain_owners(struct gt_inputs *in);
/* The usage line of --accept-owner, for each command that reads recorders. */
#define GT_ACCEPT_OWNER_USAGE                                                                      \
    "  --accept-owner USER|UID  count recorders owned by USER too (repeatable); by\n"              \
    "              default only your own count; as root, each job's owner\n"

/* Directory used when no path is given. */
const char *gt_default_dir(void);

/* Adds one path (file, archive or folder). Returns 0, or -1 if it was unreadable. */
int gt_inputs_add(struct gt_inputs *in, const char *path);

struct gt_archive_member;
/*! gt_inputs_parse_member() : an archive member into r, the way every command
 *  reads one: a member held as a sparse image (tools/lib/archive.h) is adopted
 *  with its events and its holes are never read; one held by its first
 *  bytes only is parsed (and refused) from them.  0, or -1 with err. */
int gt_inputs_parse_member(struct gt_archive_member *m, const char *src, struct gt_recfile *r,
                           char *err, size_t errlen);
/* Adds paths[0..n); when n == 0, the default directory.  Returns the
 * number of unreadable inputs. */
int gt_inputs_load(struct gt_inputs *in, char **paths, int n);
/* Sorts recorders by job, host, rank, pid so every output is stable. */
void gt_inputs_sort(struct gt_inputs *in);
void gt_inputs_free(struct gt_inputs *in);
/* When no recorder was kept and not quiet: says on f where it looked, the
 * --job filter, what it skipped and why, and the likely causes in order. */
/* When nothing was read for a known reason (an input that could not be
 * read, a --job that matched none of the recorders there): that reason as
 * one sentence in buf, 1; else 0 (the usual causes are only likely). */
int gt_inputs_empty_cause(const struct gt_inputs *in, char *buf, size_t n);
/* When a folder read held folders `gdrtrace run` left (gdrtrace-run.*):
 * one line on f naming them and what to do; nothing otherwise. */
void gt_inputs_note_run_dirs(const struct gt_inputs *in, FILE *f);
void gt_inputs_explain(const struct gt_inputs *in, FILE *f);
/* --job value that selects recorders written without a job id (what `ls`
 * prints for them). */
#define GT_JOB_NONE "-"

/* Maximum decompressed archive size: GDRTRACE_ARCHIVE_MAX bytes, 1 .. 16 GiB
 * (the largest recorder file the reader reads), default 4 GiB; any other
 * value (0, -1, "4G", garbage) is one WARN and the default. */
#define GT_ARCHIVE_MAX_DEFAULT (4L << 30)
#define GT_ARCHIVE_MAX_LIMIT (16L << 30)
size_t gt_archive_max(void);

/* Most recorder and archive files read from one folder:
 * GDRTRACE_FOLDER_MAX, 1 .. 16,777,216, default 262,144; over it the
 * caller's own are read first, then by name, and the rest is one problem
 * naming the folder (nbad). */
#define GT_FOLDER_MAX_DEFAULT 262144L
#define GT_FOLDER_MAX_LIMIT 16777216L
size_t gt_folder_max(void);

#endif
