/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inputs.c — path → recorders (see inputs.h).  A file is classified by its
 * first bytes, never by its name: "GDRTRACE" is a recorder, a zstd frame is
 * an archive.  Folders are scanned for gdrtrace.*.rec and *.zst entries only,
 * so stray files in /dev/shm are not reported as broken recorders.
 */
#include "tools/lib/inputs.h"

#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/env.h"
#include "tools/lib/archive.h"
#include "tools/lib/esc.h"
#include "tools/lib/htab.h"
#include "tools/lib/model.h"
#include "tools/lib/recfile_parse.h"

#define GT_REC_FILE_MAX (1ull << 34)

const char *gt_default_dir(void)
{
    const char *d = getenv("GDRTRACE_DIR");
    return d && *d ? d : "/dev/shm";
}

size_t gt_archive_max(void)
{
    /* Read once: one WARN per run for a bad value, not one per archive. */
    static long max;
    if (!max)
        max = gt_env_long("GDRTRACE_ARCHIVE_MAX", GT_ARCHIVE_MAX_DEFAULT, 1, GT_ARCHIVE_MAX_LIMIT);
    return (size_t)max;
}

int gt_inputs_accept_owner(struct gt_inputs *in, const char *arg, const char *cmd)
{
    char *end;
    errno = 0;
    long uid = strtol(arg, &end, 10);
    if (!*arg || *end || errno || uid < 0) {
        struct passwd *pw = getpwnam(arg);
        if (!pw) {
            fprintf(stderr, "gdrtrace %s: --accept-owner '%s' is neither a user nor a uid\n", cmd,
                    gt_esc(arg));
            return -1;
        }
        uid = (long)pw->pw_uid;
    }
    if (in->naccept == (int)(sizeof(in->accept) / sizeof(in->accept[0]))) {
        fprintf(stderr, "gdrtrace %s: --accept-owner: at most %zu owners\n", cmd,
                sizeof(in->accept) / sizeof(in->accept[0]));
        return -1;
    }
    in->accept[in->naccept++] = uid;
    return 0;
}

void gt_inputs_take_owners(struct gt_inputs *in, const struct gt_inputs *from)
{
    memcpy(in->accept, from->accept, sizeof(in->accept));
    in->naccept = from->naccept;
}

/* Why root counts a job's recorders of one owner (gt_job_owner.why). */
enum gt_owner_why {
    OWN_ONLY,     /* the job's only owner */
    OWN_CALLER,   /* root's own recorders of the job */
    OWN_LAUNCHER, /* SLURM_JOB_UID names the owner of SLURM_JOB_ID */
    OWN_FOLDER,   /* a folder writable by its owner alone holds them */
    OWN_CONFLICT, /* several owners, none named: none counted */
    OWN_LATE,     /* not there when the owners were settled */
};

static struct gt_job_owner *job_owner_find(const struct gt_inputs *in, const char *job);

/* root without --accept-owner: the owners were settled (owners_settled) */
static int root_rule(const struct gt_inputs *in)
{
    return !in->all_owners && !in->naccept && geteuid() == 0;
}

/* Tallies one recorder (or file, job unknown) left out for its owner. */
static void skip_tally(struct gt_inputs *in, long uid, const char *job, int job_known, long kept,
                       int why, const char *src)
{
    int k = 0;
    for (; k < in->nskip_owner &&
           (in->skip_owner[k].uid != uid || in->skip_owner[k].job_known != job_known ||
            strcmp(in->skip_owner[k].job, job));
         k++)
        ;
    if (k == in->nskip_owner) {
        if (k == (int)(sizeof(in->skip_owner) / sizeof(in->skip_owner[0]))) {
            in->skip_owner_more++;
            return;
        }
        struct gt_owner_skip *o = &in->skip_owner[in->nskip_owner++];
        o->uid = uid;
        o->n = 0;
        o->kept = kept;
        o->why = why;
        o->job_known = job_known;
        snprintf(o->job, sizeof(o->job), "%s", job);
        snprintf(o->eg, sizeof(o->eg), "%s", src);
    }
    in->skip_owner[k].n++;
}

/* Whether a file of owner uid may be read at all, before anything in it is:
 * not root (or with --accept-owner) only the caller's and accepted owners'
 * are; otherwise every file is (root settles by job). */
static int owner_file_ok(struct gt_inputs *in, long uid)
{
    if (in->all_owners || uid < 0 || root_rule(in))
        return 1;
    if (uid == (long)geteuid())
        return 1;
    for (int i = 0; i < in->naccept; i++)
        if (in->accept[i] == uid)
            return 1;
    return 0;
}

/* The owner rule for one recorder of job `job` owned by uid (inputs.h). */
static int owner_job_ok(struct gt_inputs *in, long uid, const char *job, const char *src)
{
    if (in->all_owners || uid < 0)
        return 1;
    if (!root_rule(in)) {
        if (owner_file_ok(in, uid))
            return 1;
        skip_tally(in, uid, job, 1, -1, OWN_ONLY, src);
        return 0;
    }
    if (!in->owners_settled)
        return 1;
    if (in->owners_one) { /* one owner, of every file read */
        if (uid == in->owners_uid)
            return 1;
        skip_tally(in, uid, job, 1, -1, OWN_LATE, src);
        return 0;
    }
    const struct gt_job_owner *jo = job_owner_find(in, job);
    if (jo && jo->uid == uid)
        return 1;
    if (!jo)
        skip_tally(in, uid, job, 1, -1, OWN_LATE, src);
    else
        skip_tally(in, uid, job, 1, jo->uid, jo->why, src);
    return 0;
}

int gt_inputs_owner_ok(struct gt_inputs *in, const struct gt_recfile *r)
{
    return owner_job_ok(in, r->owner, r->id.job, r->source);
}

/* Names what the owner rule left out; root's conflicts count as unreadable
 * inputs (exit 2). */
void gt_inputs_explain_owners(struct gt_inputs *in)
{
    for (size_t i = 0; i < in->njob_owner; i++)
        if (in->job_owner[i].why == OWN_CONFLICT)
            in->owner_conflict = 1;
    if (in->owner_conflict)
        in->nbad++;
    if (in->quiet)
        return;
    for (size_t i = 0; i < in->njob_owner; i++) {
        const struct gt_job_owner *jo = &in->job_owner[i];
        if (jo->why != OWN_CONFLICT)
            continue;
        char list[512] = "", who[128];
        for (int k = 0; k < jo->nothers; k++) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof(list) - l, "%s%s",
                     k ? (k + 1 == jo->nothers ? " and " : ", ") : "",
                     gt_owner_name(jo->others[k], who, sizeof(who)));
        }
        fprintf(stderr,
                "gdrtrace: job %s has recorders of more than one owner (%s%s) and none is named "
                "the job's: none of them counted (exit 2); --accept-owner USER names the owner\n",
                jo->job[0] ? gt_esc(jo->job) : GT_JOB_NONE, list, jo->nothers == 4 ? ", …" : "");
    }
    static const char *const why[] = {
        [OWN_ONLY] = "its only owner",
        [OWN_CALLER] = "your own recorders are of that job",
        [OWN_LAUNCHER] = "SLURM_JOB_UID names it",
        [OWN_FOLDER] = "the folder that holds them is that owner's alone",
        [OWN_CONFLICT] = "",
        [OWN_LATE] = "",
    };
    for (int k = 0; k < in->nskip_owner; k++) {
        const struct gt_owner_skip *o = &in->skip_owner[k];
        char who[128], kept[128], job[160];
        snprintf(job, sizeof(job), "%s", o->job[0] ? gt_esc(o->job) : GT_JOB_NONE);
        gt_owner_name(o->uid, who, sizeof(who));
        if (!o->job_known)
            fprintf(stderr,
                    "gdrtrace: left out %d file(s) owned by %s, not by you, unread (e.g. %s): "
                    "--accept-owner %ld counts them\n",
                    o->n, who, gt_esc(o->eg), o->uid);
        else if (o->why == OWN_CONFLICT)
            continue; /* said above */
        else if (o->why == OWN_LATE)
            fprintf(stderr,
                    "gdrtrace: left out %d recorder(s) of job %s owned by %s, which appeared "
                    "while reading (e.g. %s)\n",
                    o->n, job, who, gt_esc(o->eg));
        else if (o->kept >= 0)
            fprintf(stderr,
                    "gdrtrace: left out %d recorder(s) of job %s owned by %s: the job's owner is "
                    "%s (%s) (e.g. %s); --accept-owner %ld counts them\n",
                    o->n, job, who, gt_owner_name(o->kept, kept, sizeof(kept)), why[o->why],
                    gt_esc(o->eg), o->uid);
        else
            fprintf(stderr,
                    "gdrtrace: left out %d recorder(s) of job %s owned by %s, not by you (e.g. "
                    "%s): --accept-owner %ld counts them\n",
                    o->n, job, who, gt_esc(o->eg), o->uid);
    }
    if (in->skip_owner_more)
        fprintf(stderr, "gdrtrace: and %d more recorder(s) of other owners left out\n",
                in->skip_owner_more);
}

/* ---- settling each job's owner (root) before anything is parsed ---- */

static int job_eq(size_t v, const void *arg)
{
    const struct gt_job_owner *const *k = arg;
    return !strcmp(k[0][v].job, (const char *)k[1]);
}

static uint64_t job_rehash(size_t v, const void *arg)
{
    const struct gt_job_owner *t = arg;
    return gt_hash_bytes(t[v].job, strlen(t[v].job), 0xcbf29ce484222325ull);
}

static struct gt_job_owner *job_owner_find(const struct gt_inputs *in, const char *job)
{
    if (!in->job_ix || !in->job_ix->cap)
        return NULL;
    const void *k[2] = {in->job_owner, job};
    size_t *slot =
        gt_ht_find(in->job_ix, gt_hash_bytes(job, strlen(job), 0xcbf29ce484222325ull), job_eq, k);
    return *slot == SIZE_MAX ? NULL : &in->job_owner[*slot];
}

/* Notes that job has a recorder of uid, in a folder naming owner folder
 * (-1 none).  Out of memory: the job is left unsettled (a conflict). */
static void job_note(struct gt_inputs *in, const char *job, long uid, long folder)
{
    struct gt_job_owner *jo = job_owner_find(in, job);
    if (!jo) {
        size_t cap = in->njob_owner; /* job_owner grows by gt_grow: its cap is kept here */
        if (!in->job_ix && !(in->job_ix = calloc(1, sizeof(*in->job_ix))))
            return;
        if (gt_ht_reserve(in->job_ix, job_rehash, in->job_owner))
            return;
        cap = in->job_owner_cap;
        if (gt_grow((void **)&in->job_owner, &cap, in->njob_owner + 1, sizeof(*in->job_owner)))
            return;
        in->job_owner_cap = cap;
        const void *k[2] = {in->job_owner, job};
        size_t *slot = gt_ht_find(
            in->job_ix, gt_hash_bytes(job, strlen(job), 0xcbf29ce484222325ull), job_eq, k);
        jo = &in->job_owner[in->njob_owner];
        memset(jo, 0, sizeof(*jo));
        snprintf(jo->job, sizeof(jo->job), "%s", job);
        jo->folder = -1;
        *slot = in->njob_owner++;
        in->job_ix->n++;
    }
    int k = 0, lim = jo->nothers < 4 ? jo->nothers : 4;
    while (k < lim && jo->others[k] != uid)
        k++;
    if (k == lim && jo->nothers < 4)
        jo->others[jo->nothers++] = uid;
    else if (k == lim)
        jo->nothers = 5; /* more than the four kept */
    if (folder >= 0) {
        if (jo->folder >= 0 && jo->folder != folder)
            jo->folder_mixed = 1;
        jo->folder = folder;
    }
}

/* Where the identity's job field lies in a recorder whose header is h:
 * its offset in the file, or -1 when there is no identity or it is too
 * short for the field. */
static long long job_field_at(const struct gtr_header *h, size_t *n)
{
    size_t at = offsetof(struct gtr_identity, job);
    *n = sizeof(((struct gtr_identity *)0)->job);
    for (unsigned i = 0; i < h->section_count; i++) {
        const struct gtr_section *sec = &h->sections[i];
        if (sec->id != GTR_SEC_IDENTITY)
            continue;
        if (sec->size < at + *n)
            return -1;
        return (long long)(sec->offset + at);
    }
    return -1;
}

/* The job of a recorder from its header and identity alone, buf[0, len)
 * (an archive member's image); 0, or -1 when it is no recorder. */
static int peek_job_buf(const unsigned char *b, size_t len, char job[128])
{
    struct gtr_header h;
    char err[GT_ERRLEN];
    size_t n;
    if (gt_recfile_parse_header(b, len, "", &h, err, sizeof(err)))
        return -1;
    long long at = job_field_at(&h, &n);
    if (at < 0 || (unsigned long long)at > len || len - (size_t)at < n)
        return -1;
    memcpy(job, b + at, n);
    job[n - 1] = 0;
    return 0;
}

/* The same from a file: its header (checked against the file's size, as
 * the parser does; only the header's bytes are read), then its identity's
 * job field. */
static int peek_job_fd(int fd, char job[128])
{
    unsigned char hb[sizeof(struct gtr_header)];
    struct stat st;
    struct gtr_header h;
    char err[GT_ERRLEN];
    size_t n;
    if (fstat(fd, &st) || st.st_size < (off_t)sizeof(hb) ||
        pread(fd, hb, sizeof(hb), 0) != (ssize_t)sizeof(hb) ||
        gt_recfile_parse_header(hb, (size_t)st.st_size, "", &h, err, sizeof(err)))
        return -1;
    long long at = job_field_at(&h, &n);
    if (at < 0 || pread(fd, job, n, (off_t)at) != (ssize_t)n)
        return -1;
    job[n - 1] = 0;
    return 0;
}

/* The owner a folder names for the files it holds: its owner, when that is
 * not root and no one else may write into it; else -1. */
static long folder_names(const struct stat *st)
{
    return st->st_uid != 0 && !(st->st_mode & (S_IWGRP | S_IWOTH)) ? (long)st->st_uid : -1;
}

struct settle_arc {
    struct gt_inputs *in;
    long uid, folder;
};

static int settle_member(struct gt_archive_member *m, void *arg)
{
    struct settle_arc *c = arg;
    char job[128];
    if (peek_job_buf(m->data, m->len, job) == 0)
        job_note(c->in, job, c->uid, c->folder);
    return 0;
}

/* pass 0: the owners of the files; 1: each recorder's job */
static void settle_file(struct gt_inputs *in, int dfd, const char *name, const char *path,
                        long folder, int pass)
{
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
        return;
    if (pass == 0) {
        if (!in->owners_one) {
            in->owners_one = 1;
            in->owners_uid = (long)st.st_uid;
        } else if (in->owners_uid != (long)st.st_uid) {
            in->owners_one = 2; /* more than one */
        }
        return;
    }
    int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return;
    unsigned char b[4];
    char job[128];
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if (pread(fd, b, sizeof(b), 0) == (ssize_t)sizeof(b) && gt_archive_sniff(b, sizeof(b))) {
            struct settle_arc c = {in, (long)st.st_uid, folder};
            char err[GT_ERRLEN];
            gt_archive_stream_fd(fd, gt_archive_max(), path, settle_member, &c, err, sizeof(err));
        } else if (peek_job_fd(fd, job) == 0) {
            job_note(in, job, (long)st.st_uid, folder);
        }
    }
    close(fd);
}

static int wanted(const char *name);

static void settle_walk(struct gt_inputs *in, char **paths, int n, int pass)
{
    const char *dflt = gt_default_dir();
    for (int i = 0; i < (n ? n : 1); i++) {
        const char *path = n ? paths[i] : dflt;
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (!S_ISDIR(st.st_mode)) {
            settle_file(in, AT_FDCWD, path, path, -1, pass);
            continue;
        }
        DIR *d = opendir(path);
        if (!d)
            continue;
        long folder = folder_names(&st);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!wanted(e->d_name))
                continue;
            char p[4096];
            snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
            settle_file(in, dirfd(d), e->d_name, p, folder, pass);
        }
        closedir(d);
    }
}

/* SLURM_JOB_UID when SLURM_JOB_ID is job (the launcher says whose it is). */
static long launcher_owner(const char *job)
{
    const char *id = getenv("SLURM_JOB_ID"), *u = getenv("SLURM_JOB_UID");
    if (!id || !u || !*id || !*u || strcmp(id, job))
        return -1;
    char *end;
    errno = 0;
    long uid = strtol(u, &end, 10);
    return *end || errno || uid < 0 ? -1 : uid;
}

void gt_inputs_settle_owners(struct gt_inputs *in, char **paths, int n)
{
    if (!root_rule(in) || in->owners_settled)
        return;
    in->owners_settled = 1;
    in->owners_one = 0;
    settle_walk(in, paths, n, 0);
    if (in->owners_one <= 1) /* none, or one owner: every recorder is theirs */
        return;
    in->owners_one = 0;
    settle_walk(in, paths, n, 1);
    for (size_t i = 0; i < in->njob_owner; i++) {
        struct gt_job_owner *jo = &in->job_owner[i];
        long l = launcher_owner(jo->job);
        int mine = 0;
        for (int k = 0; k < jo->nothers && k < 4; k++)
            mine |= jo->others[k] == (long)geteuid();
        if (mine) {
            jo->uid = (long)geteuid();
            jo->why = OWN_CALLER;
        } else if (l >= 0) {
            jo->uid = l;
            jo->why = OWN_LAUNCHER;
        } else if (jo->folder >= 0 && !jo->folder_mixed) {
            jo->uid = jo->folder;
            jo->why = OWN_FOLDER;
        } else if (jo->nothers == 1) {
            jo->uid = jo->others[0];
            jo->why = OWN_ONLY;
        } else {
            jo->uid = -1;
            jo->why = OWN_CONFLICT;
            if (jo->nothers > 4)
                jo->nothers = 4;
        }
    }
}

static void problem(struct gt_inputs *in, const char *msg)
{
    in->nbad++;
    if (!in->quiet)
        fprintf(stderr, "gdrtrace: %s\n", gt_esc(msg));
}

static struct gt_recfile *slot(struct gt_inputs *in)
{
    if (in->discard) { /* list mode: one recorder at a time, in recs[0] */
        if (!in->cap && !(in->recs = calloc(1, sizeof(*in->recs))))
            return NULL;
        in->cap = 1;
        return in->recs;
    }
    if (in->n == in->cap) {
        size_t nc = in->cap ? in->cap * 2 : 16;
        struct gt_recfile *nr = realloc(in->recs, nc * sizeof(*nr));
        if (!nr)
            return NULL;
        in->recs = nr;
        in->cap = nc;
    }
    return &in->recs[in->n];
}

/* A process's identity across a live recorder and its archived copy: host,
 * pid, start time, boot and job.  Two recorder files are never merged (one
 * process writes one file): only where at least one is an archive member. */
struct pkey {
    const char *host, *boot, *job;
    int32_t pid;
    int arc;
    int64_t wall, mono;
};

/* List mode's copy of a kept recorder's identity (inputs.h keys). */
struct gt_proc_key {
    char *s; /* host, boot id and job, each NUL-terminated */
    int32_t pid;
    int arc;
    int64_t wall, mono;
};

static struct pkey view_rec(const struct gt_recfile *r)
{
    return (struct pkey){r->id.host,      r->id.node.boot_id,  r->id.job,          r->id.pid,
                         r->from_archive, r->id.start_wall_ns, r->id.start_mono_ns};
}

static struct pkey view_at(const struct gt_inputs *in, size_t i)
{
    if (!in->discard)
        return view_rec(&in->recs[i]);
    const struct gt_proc_key *k = &in->keys[i];
    const char *boot = k->s + strlen(k->s) + 1;
    return (struct pkey){k->s, boot, boot + strlen(boot) + 1, k->pid, k->arc, k->wall, k->mono};
}

static int same_key(const struct pkey *a, const struct pkey *b)
{
    return a->pid == b->pid && a->wall == b->wall && a->mono == b->mono &&
           !strcmp(a->host, b->host) && !strcmp(a->boot, b->boot) && !strcmp(a->job, b->job);
}

static size_t proc_hash(const struct pkey *k)
{
    uint64_t h = 1469598103934665603ull;
    h = gt_hash_bytes(k->host, strlen(k->host), h);
    h = gt_hash_bytes(k->boot, strlen(k->boot), h);
    h = gt_hash_bytes(k->job, strlen(k->job), h);
    h = (h ^ (uint64_t)(uint32_t)k->pid) * 1099511628211ull;
    h = (h ^ (uint64_t)k->wall) * 1099511628211ull;
    h = (h ^ (uint64_t)k->mono) * 1099511628211ull;
    return (size_t)h;
}

/* Index of an earlier recorder of the same process, or in->n; records r as
 * seen (index in->n) otherwise.  A recorder file identical in identity to
 * one seen is not recorded again: the first stands for both, so that a
 * folder of identical files (anyone can make them) costs no probing chain.
 * Out of memory: no dedup (counted twice rather than lost). */
static size_t seen_before(struct gt_inputs *in, const struct gt_recfile *r)
{
    if (2 * (in->n + 1) > in->seen_cap) {
        size_t nc = in->seen_cap ? in->seen_cap * 2 : 64;
        size_t *ns = calloc(nc, sizeof(*ns));
        if (!ns)
            return in->n;
        for (size_t i = 0; i < in->seen_cap; i++)
            if (in->seen[i]) {
                struct pkey v = view_at(in, in->seen[i] - 1);
                size_t k = proc_hash(&v) & (nc - 1);
                while (ns[k])
                    k = (k + 1) & (nc - 1);
                ns[k] = in->seen[i];
            }
        free(in->seen);
        in->seen = ns;
        in->seen_cap = nc;
    }
    struct pkey pk = view_rec(r);
    size_t k = proc_hash(&pk) & (in->seen_cap - 1);
    for (; in->seen[k]; k = (k + 1) & (in->seen_cap - 1)) {
        struct pkey v = view_at(in, in->seen[k] - 1);
        if (same_key(&v, &pk))
            return v.arc || pk.arc ? in->seen[k] - 1 : in->n; /* two files: two processes */
    }
    in->seen[k] = in->n + 1;
    return in->n;
}

/* The pool of device tables: each distinct (ndev, devs) once, found by
 * hash; reduced recorders share them (gt_recfile.devs_shared).  A job's
 * ranks on one node see the same NICs: 1.1 KB a recorder otherwise. */
struct gt_devs_pool {
    struct gt_htab ix; /* indices into t */
    struct pool_devs {
        uint64_t h;
        uint32_t n;
        struct gtr_device *d;
    } * t;
    size_t n, cap;
};

struct devs_key {
    const struct gt_devs_pool *p;
    uint64_t h;
    uint32_t n;
    const struct gtr_device *d;
};

static int devs_eq(size_t v, const void *arg)
{
    const struct devs_key *k = arg;
    const struct pool_devs *e = &k->p->t[v];
    return e->h == k->h && e->n == k->n && !memcmp(e->d, k->d, k->n * sizeof(*k->d));
}

static uint64_t devs_rehash(size_t v, const void *arg)
{
    return ((const struct gt_devs_pool *)arg)->t[v].h;
}

/* Makes r->devs a shared table of the pool: its own is freed when the pool
 * has the same, else handed to the pool.  Out of memory: r keeps its own. */
static void share_devs(struct gt_inputs *in, struct gt_recfile *r)
{
    if (!r->ndev || r->devs_shared)
        return;
    struct gt_devs_pool *p = in->devs_pool;
    if (!p && !(p = in->devs_pool = calloc(1, sizeof(*p))))
        return;
    struct devs_key k = {p,
                         gt_hash_bytes(r->devs, r->ndev * sizeof(*r->devs), 0xcbf29ce484222325ull),
                         r->ndev, r->devs};
    if (gt_ht_reserve(&p->ix, devs_rehash, p) ||
        gt_grow((void **)&p->t, &p->cap, p->n + 1, sizeof(*p->t)))
        return;
    size_t *slot = gt_ht_find(&p->ix, k.h, devs_eq, &k);
    if (*slot != SIZE_MAX) {
        free(r->devs);
        r->devs = p->t[*slot].d;
    } else {
        p->t[p->n] = (struct pool_devs){k.h, r->ndev, r->devs};
        *slot = p->n++;
        p->ix.n++;
    }
    r->devs_shared = 1;
}

static void devs_pool_free(struct gt_devs_pool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->t[i].d);
    free(p->t);
    free(p->ix.v);
    free(p);
}

/* What a kept recorder leaves behind in release mode: its fate when asked
 * for (computed from the events before they go), then the reduced recorder. */
static void reduce(struct gt_inputs *in, size_t at)
{
    struct gt_recfile *r = &in->recs[at];
    if (in->keep_fates) {
        struct gt_fate f;
        gt_recfile_fate(r, &f);
        free(in->fates[at]);
        in->fates[at] = NULL;
        if (f.kind != GT_FATE_NONE) {
            in->fates[at] = malloc(sizeof(f));
            if (in->fates[at])
                *in->fates[at] = f;
            else /* the fate is lost, and the exit status says an input was not read whole */
                problem(in, "out of memory keeping what became of a process");
        }
    }
    gt_recfile_reduce(r, in->keep_settings);
    share_devs(in, r);
    if (in->fold_lean) { /* a lean job reads no host pressure: 1.2 KB a recorder */
        free(r->host);
        r->host = NULL;
        r->has_host = 0;
    }
}

/* Grows fates[] to in->cap (keep_fates): NULL entries, no fate. */
static int fates_fit(struct gt_inputs *in)
{
    if (!in->keep_fates || in->fates_cap >= in->cap)
        return 0;
    struct gt_fate **nf = realloc(in->fates, in->cap * sizeof(*nf));
    if (!nf)
        return -1;
    memset(nf + in->fates_cap, 0, (in->cap - in->fates_cap) * sizeof(*nf));
    in->fates = nf;
    in->fates_cap = in->cap;
    return 0;
}

/* Takes the recorder just parsed into in->recs[in->n]: drops it when --job
 * wants another job or live_only a live one; in fold mode folds it into
 * in->fold; then calls in->each, and in fold or release mode keeps only its
 * digest (gt_recfile_reduce). */
/* List mode: keeps r's identity as keys[at] (dedup), 0 or -1. */
static int key_keep(struct gt_inputs *in, size_t at, const struct gt_recfile *r)
{
    if (at >= in->nkeys) {
        size_t nc = in->nkeys ? in->nkeys * 2 : 64;
        struct gt_proc_key *nk = realloc(in->keys, nc * sizeof(*nk));
        if (!nk)
            return -1;
        in->keys = nk;
        in->nkeys = nc;
    }
    size_t lh = strlen(r->id.host) + 1, lb = strlen(r->id.node.boot_id) + 1,
           lj = strlen(r->id.job) + 1;
    char *str = malloc(lh + lb + lj);
    if (!str)
        return -1;
    memcpy(str, r->id.host, lh);
    memcpy(str + lh, r->id.node.boot_id, lb);
    memcpy(str + lh + lb, r->id.job, lj);
    in->keys[at] = (struct gt_proc_key){str, r->id.pid, r->from_archive, r->id.start_wall_ns,
                                        r->id.start_mono_ns};
    return 0;
}

static void keep(struct gt_inputs *in)
{
    struct gt_recfile *r = in->discard ? in->recs : &in->recs[in->n];
    if (in->job && strcmp(r->id.job, strcmp(in->job, GT_JOB_NONE) ? in->job : "")) {
        if (!in->skip_job++)
            snprintf(in->other_job, sizeof(in->other_job), "%s", r->id.job);
        gt_recfile_free(r);
        return;
    }
    if (!gt_inputs_owner_ok(in, r)) {
        gt_recfile_free(r);
        return;
    }
    /* before folding: the job's verdict is then over the live processes only */
    if (in->live_only && r->liveness != GT_LIVE_LIVE) {
        in->skip_dead++;
        gt_recfile_free(r);
        return;
    }
    if (fates_fit(in)) {
        gt_recfile_free(r);
        problem(in, "out of memory");
        return;
    }
    if (in->discard) { /* list mode: `each` takes what it lists, nothing is held */
        /* keys[n] first: seen_before may record it */
        if (key_keep(in, in->n, r)) {
            problem(in, "out of memory");
            gt_recfile_free(r);
            return;
        }
        size_t prev = seen_before(in, r);
        in->each_rec = r;
        if (prev != in->n) {
            in->dups++;
            free(in->keys[in->n].s);
            if (in->keys[prev].arc && !r->from_archive) { /* the live one is listed */
                in->keys[prev].arc = 0;
                if (in->each)
                    in->each(in, prev, in->each_arg);
            }
        } else {
            if (in->each)
                in->each(in, in->n, in->each_arg);
            in->n++;
        }
        in->each_rec = NULL;
        gt_recfile_free(r);
        return;
    }
    size_t prev = seen_before(in, r);
    if (prev != in->n) {
        /* Keep the live one.  Folded recorders cannot be taken back, so a
         * folder is read live-first (add_dir); here the later one goes unless
         * it is live and the earlier one, not folded, came from an archive. */
        in->dups++;
        if (!in->fold && in->recs[prev].from_archive && !r->from_archive) {
            gt_recfile_free(&in->recs[prev]);
            in->recs[prev] = *r;
            in->each_rec = &in->recs[prev];
            if (in->each)
                in->each(in, prev, in->each_arg);
            if (in->release)
                reduce(in, prev);
        } else {
            gt_recfile_free(r);
        }
        return;
    }
    if (in->fold) {
        in->fold->lean = in->fold_lean;
        if (in->fold_failed || gt_job_add(in->fold, in->recs, in->n)) {
            gt_recfile_free(r);
            if (!in->fold_failed)
                problem(in, "out of memory folding the recorders");
            in->fold_failed = 1;
            return;
        }
    }
    in->each_rec = r;
    if (in->each)
        in->each(in, in->n, in->each_arg);
    if (in->fold || in->release)
        reduce(in, in->n);
    in->n++;
}

struct arc_ctx {
    struct gt_inputs *in;
    const char *path;
    long owner; /* the archive file's uid */
};

/* A member held as a sparse image is adopted, its holes never read; one
 * held by its first bytes only is parsed (and refused) from them. */
int gt_inputs_parse_member(struct gt_archive_member *m, const char *src, struct gt_recfile *r,
                           char *err, size_t errlen)
{
    unsigned char *img, *present;
    size_t maplen;
    if (gt_archive_member_take(m, &img, &maplen, &present) == 0)
        return gt_recfile_adopt_image(img, maplen, m->len, present, GT_REC_EVENTS, src, r, err,
                                      errlen);
    return gt_recfile_parse(m->data, m->len, src, r, err, errlen);
}

static int add_member(struct gt_archive_member *m, void *arg)
{
    struct arc_ctx *c = arg;
    char src[1024], err[GT_ERRLEN];
    snprintf(src, sizeof(src), "%s:%s", c->path, m->name);
    int liveness = m->liveness;
    char job[128];
    /* root, owners differing: a member of an owner not counted for its job
     * is left out from its identity, never parsed */
    if (c->in->owners_settled && !c->in->owners_one && peek_job_buf(m->data, m->len, job) == 0 &&
        !owner_job_ok(c->in, c->owner, job, src))
        return 0;
    struct gt_recfile *r = slot(c->in);
    if (!r) {
        problem(c->in, "out of memory");
        return 0;
    }
    if (gt_inputs_parse_member(m, src, r, err, sizeof(err)) != 0) {
        problem(c->in, err);
        return 0;
    }
    r->liveness =
        liveness >= GT_LIVE_CREATING && liveness <= GT_LIVE_CRASHED ? liveness : GT_LIVE_UNKNOWN;
    r->from_archive = 1;
    r->owner = c->owner;
    keep(c->in);
    return 0;
}

/* A file is classified by its first bytes, read from the descriptor it is
 * then read through: it is never read whole to learn what it is. */
static int add_file(struct gt_inputs *in, const char *path)
{
    char err[GT_ERRLEN];
    int fd;
    if (gt_open_file(path, GT_REC_FILE_MAX, &fd, err, sizeof(err))) {
        if (in->phase == 2) /* said in the first pass */
            return -1;
        problem(in, err);
        return -1;
    }
    if (in->phase != 2)
        in->nfiles++;
    struct stat fst;
    long owner = fstat(fd, &fst) == 0 ? (long)fst.st_uid : -1;
    unsigned char b[4];
    int rc = 0;
    int arc = pread(fd, b, sizeof(b), 0) == (ssize_t)sizeof(b) && gt_archive_sniff(b, sizeof(b));
    if (in->phase && arc != (in->phase == 2)) { /* the other pass reads it */
        close(fd);
        return 0;
    }
    /* the owner rule before anything is parsed: another owner's file is
     * left out by its uid, or (root) by its identity's job */
    char job[128];
    if (!owner_file_ok(in, owner)) {
        skip_tally(in, owner, "", 0, -1, OWN_ONLY, path);
        close(fd);
        return 0;
    }
    if (!arc && in->owners_settled && !in->owners_one && peek_job_fd(fd, job) == 0 &&
        !owner_job_ok(in, owner, job, path)) {
        close(fd);
        return 0;
    }
    in->nparsed++;
    if (arc) {
        struct arc_ctx c = {in, path, owner};
        int before = in->nbad;
        if (gt_archive_stream_fd(fd, gt_archive_max(), path, add_member, &c, err, sizeof(err))) {
            problem(in, err);
            rc = -1;
        }
        close(fd);
        return rc || in->nbad != before ? -1 : 0;
    }
    struct gt_recfile *r = slot(in);
    if (!r) {
        close(fd);
        problem(in, "out of memory");
        return -1;
    }
    /* with its events: the fold reads them (gt_recfile_fate) before releasing */
    rc = gt_recfile_read_fd(fd, path, GT_REC_EVENTS, r, err, sizeof(err));
    close(fd);
    if (rc != 0) {
        problem(in, err);
        return -1;
    }
    r->liveness = gt_recfile_judge_liveness_why(r, &r->liveness_why);
    r->owner = owner;
    keep(in);
    return 0;
}

static int is_zst(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".zst");
}

static int wanted(const char *name)
{
    size_t n = strlen(name);
    size_t pl = strlen(GTR_FILE_PREFIX), sl = strlen(GTR_FILE_SUFFIX);
    if (n > pl + sl && !strncmp(name, GTR_FILE_PREFIX, pl) &&
        !strcmp(name + n - sl, GTR_FILE_SUFFIX))
        return 1;
    return is_zst(name);
}

/* A folder entry with another name that holds a recorder (its magic) or a
 * zstd frame (a dump archive renamed, e.g. the old *.gtz): said when nothing
 * was found, since the operator meant it.  Reads 8 bytes, never blocks on a
 * FIFO (O_NONBLOCK) and follows no link to a non-regular file. */
static int looks_like_ours(int dfd, const char *name)
{
    int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return 0;
    struct stat st;
    unsigned char b[GTR_MAGIC_LEN];
    int ours = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, b, sizeof(b)) == (ssize_t)sizeof(b))
        ours = memcmp(b, GTR_MAGIC, GTR_MAGIC_LEN) == 0 ||
               (b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd);
    close(fd);
    return ours;
}

/* GDRTRACE_FOLDER_MAX: the most recorder and archive files read from one
 * folder (read once: one WARN per run for a bad value). */
size_t gt_folder_max(void)
{
    static long max;
    if (!max)
        max = gt_env_long("GDRTRACE_FOLDER_MAX", GT_FOLDER_MAX_DEFAULT, 1, GT_FOLDER_MAX_LIMIT);
    return (size_t)max;
}

struct dir_ent {
    char *name;
    int mine; /* the caller's own file: read first when the folder is capped */
};

/* Recorders before archives (the live copy of a process is the one kept),
 * then by name; capped: the caller's own first. */
static int ent_cmp(const void *a, const void *b)
{
    const struct dir_ent *x = a, *y = b;
    return is_zst(x->name) != is_zst(y->name) ? is_zst(x->name) - is_zst(y->name)
                                              : strcmp(x->name, y->name);
}

static int ent_mine_cmp(const void *a, const void *b)
{
    const struct dir_ent *x = a, *y = b;
    return x->mine != y->mine ? y->mine - x->mine : ent_cmp(a, b);
}

/* Keeps the first max of ents[0..n) in ent_mine_cmp order, frees the rest
 * (the first of them named in eg); returns max. */
static size_t ents_cut(struct dir_ent *ents, size_t n, size_t max, char *eg, size_t egn)
{
    qsort(ents, n, sizeof(*ents), ent_mine_cmp);
    if (!eg[0])
        snprintf(eg, egn, "%s", ents[max].name);
    for (size_t i = max; i < n; i++)
        free(ents[i].name);
    return max;
}

static int add_dir(struct gt_inputs *in, const char *path)
{
    DIR *d = opendir(path);
    if (!d && in->phase == 2) /* said in the first pass */
        return -1;
    if (!d) {
        char msg[GT_ERRLEN];
        snprintf(msg, sizeof(msg), "%s: cannot open folder: %s", path, strerror(errno));
        problem(in, msg);
        return -1;
    }
    if (in->phase != 2 && in->ndirs < (int)(sizeof(in->dirs) / sizeof(in->dirs[0])))
        in->dirs[in->ndirs] = path;
    in->ndirs += in->phase != 2;
    struct dir_ent *ents = NULL;
    size_t nn = 0, cap = 0, nwant = 0, max = gt_folder_max();
    long me = (long)geteuid();
    char eg_over[256] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!wanted(e->d_name)) {
            if (e->d_name[0] == '.' || in->phase == 2) /* counted in the first pass */
                continue;
            if (!strncmp(e->d_name, "gdrtrace-run.", 13)) { /* a folder, not a file */
                if (!in->skip_run++)
                    snprintf(in->skip_run_eg, sizeof(in->skip_run_eg), "%s", e->d_name);
                continue;
            }
            if (!in->skip_name++)
                snprintf(in->skip_name_eg, sizeof(in->skip_name_eg), "%s", e->d_name);
            if (looks_like_ours(dirfd(d), e->d_name) && !in->skip_ours++)
                snprintf(in->skip_ours_eg, sizeof(in->skip_ours_eg), "%s", e->d_name);
            continue;
        }
        /* no link followed (a symlink planted in a shared folder), and the
         * owner known before the file is opened */
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
            continue;
        if (!owner_file_ok(in, (long)st.st_uid)) { /* never opened */
            if (in->phase != 2) {                  /* counted in the first pass */
                char p[4096];
                snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
                skip_tally(in, (long)st.st_uid, "", 0, -1, OWN_ONLY, p);
            }
            continue;
        }
        int mine = (long)st.st_uid == me;
        nwant++;
        if (nn == 2 * max) /* the best max of what was read so far: bounded memory */
            nn = ents_cut(ents, nn, max, eg_over, sizeof(eg_over));
        if (nn == cap) {
            cap = cap ? cap * 2 : 32;
            struct dir_ent *nv = realloc(ents, cap * sizeof(*ents));
            if (!nv)
                break;
            ents = nv;
        }
        ents[nn].name = strdup(e->d_name);
        ents[nn].mine = mine;
        if (ents[nn].name)
            nn++;
    }
    closedir(d);
    if (nn > max) /* the caller's own first, then by name */
        nn = ents_cut(ents, nn, max, eg_over, sizeof(eg_over));
    if (nwant > max && in->phase != 2) {
        char msg[GT_ERRLEN];
        snprintf(msg, sizeof(msg),
                 "%s: holds %zu recorder or archive files, more than GDRTRACE_FOLDER_MAX (%zu): "
                 "read %zu (yours first, then by name), left out %zu (e.g. %s); raise "
                 "GDRTRACE_FOLDER_MAX or prune the folder",
                 path, nwant, max, max, nwant - max, eg_over);
        problem(in, msg);
        in->folder_capped++;
    }
    if (nn)
        qsort(ents, nn, sizeof(*ents), ent_cmp);
    int rc = 0;
    for (size_t i = 0; i < nn; i++) {
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", path, ents[i].name);
        struct stat st;
        /* lstat again: the entry may have been swapped for a link since */
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && add_file(in, p))
            rc = -1;
        free(ents[i].name);
    }
    free(ents);
    return rc;
}

int gt_inputs_add(struct gt_inputs *in, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (in->phase == 2) /* said in the first pass */
            return -1;
        char msg[GT_ERRLEN];
        snprintf(msg, sizeof(msg), "%s: %s", path, strerror(errno));
        problem(in, msg);
        return -1;
    }
    if (S_ISDIR(st.st_mode))
        return add_dir(in, path);
    return add_file(in, path);
}

int gt_inputs_load(struct gt_inputs *in, char **paths, int n)
{
    gt_inputs_settle_owners(in, paths, n);
    /* A folded recorder cannot be taken back for the live copy of its
     * process found later (keep()): in fold mode every recorder file is read
     * first, then every archive, whatever the order given, so that the fold
     * keeps the copy a full load keeps. */
    for (in->phase = in->fold ? 1 : 0; in->phase <= (in->fold ? 2 : 0); in->phase++) {
        if (n == 0)
            gt_inputs_add(in, gt_default_dir());
        for (int i = 0; i < n; i++)
            gt_inputs_add(in, paths[i]);
    }
    in->phase = 0;
    if (!in->fold) /* in fold mode gt_job_finish() sorts */
        gt_inputs_sort(in);
    gt_inputs_explain_owners(in);
    gt_inputs_explain(in, stderr);
    return in->nbad;
}

int gt_inputs_empty_cause(const struct gt_inputs *in, char *buf, size_t n)
{
    if (in->n)
        return 0;
    if (in->nbad)
        snprintf(buf, n, "%d input(s) named above could not be read: check the path(s)", in->nbad);
    else if (in->skip_job && in->job)
        snprintf(buf, n, "--job %s matched none of the recorders read (e.g. --job %s: gdrtrace ls)",
                 gt_esc(in->job), in->other_job[0] ? gt_esc(in->other_job) : GT_JOB_NONE);
    else
        return 0;
    return 1;
}

void gt_inputs_note_run_dirs(const struct gt_inputs *in, FILE *f)
{
    if (in->skip_run)
        fprintf(f,
                "  %d folder(s) left by gdrtrace run (e.g. %s): name one as a PATH to read it; "
                "gdrtrace prune removes what is gone in them\n",
                in->skip_run, gt_esc(in->skip_run_eg));
}

void gt_inputs_explain(const struct gt_inputs *in, FILE *f)
{
    if (in->n || in->quiet || in->quiet_empty)
        return;
    if (in->owner_conflict) /* the conflict is what there is to say (above) */
        return;
    fprintf(f, "gdrtrace: no recorders found\n");
    for (int i = 0; i < in->ndirs && i < (int)(sizeof(in->dirs) / sizeof(in->dirs[0])); i++)
        fprintf(f, "  read folder %s\n", gt_esc(in->dirs[i]));
    fprintf(f, "  %d folder(s), %d file(s) read; job filter: %s\n", in->ndirs, in->nfiles,
            in->job ? gt_esc(in->job) : "none (every job)");
    if (in->skip_job)
        fprintf(f, "  skipped %d recorder(s) of another job (e.g. --job %s)\n", in->skip_job,
                in->other_job[0] ? gt_esc(in->other_job) : GT_JOB_NONE);
    if (in->nskip_owner)
        fprintf(f, "  left out recorder(s) of other owners (above; --accept-owner)\n");
    if (in->skip_dead)
        fprintf(f, "  skipped %d recorder(s) whose process is not running\n", in->skip_dead);
    if (in->skip_name)
        fprintf(f, "  skipped %d file(s) not named gdrtrace.*.rec or *.zst (e.g. %s)\n",
                in->skip_name, gt_esc(in->skip_name_eg));
    gt_inputs_note_run_dirs(in, f);
    if (in->skip_ours)
        fprintf(f,
                "  %d of them hold a recorder or a zstd archive by their content (e.g. %s):\n"
                "    name them on the command line, or rename them *.zst\n",
                in->skip_ours, gt_esc(in->skip_ours_eg));
    if (in->nbad)
        fprintf(f, "  skipped %d input(s) unreadable or not a recorder (above)\n", in->nbad);
    char cause[512];
    if (gt_inputs_empty_cause(in, cause, sizeof(cause))) {
        fprintf(f, "  cause: %s\n", cause);
        return;
    }
    fprintf(f,
            "  likely causes, most likely first:\n"
            "    1. NCCL did not load the plugin: look for \"NET/Plugin\" in NCCL's log\n"
            "       (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET)\n"
            "    2. the job wrote to another GDRTRACE_DIR (this run read %s)\n"
            "    3. the recorders were pruned (gdrtrace prune, the job's epilog)\n",
            in->ndirs ? gt_esc(in->dirs[0]) : "the paths given");
}

static int rec_cmp(const void *a, const void *b)
{
    return gt_recfile_cmp(a, b);
}

static const struct gt_recfile *sort_base;
static int ix_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = gt_recfile_cmp(&sort_base[x], &sort_base[y]);
    return c ? c : (x > y) - (x < y);
}

void gt_inputs_sort(struct gt_inputs *in)
{
    if (in->n < 2 || in->discard)
        return;
    if (!in->keep_fates) {
        qsort(in->recs, in->n, sizeof(*in->recs), rec_cmp);
        return;
    }
    /* fates[] follows its recorder: sort indices, then move both */
    size_t *perm = malloc(in->n * sizeof(*perm));
    struct gt_recfile *nr = malloc(in->n * sizeof(*nr));
    struct gt_fate **nf = malloc(in->n * sizeof(*nf));
    if (!perm || !nr || !nf) { /* unsorted is still every recorder; say so */
        free(perm);
        free(nr);
        free(nf);
        problem(in, "out of memory sorting the recorders: listed as read");
        return;
    }
    for (size_t i = 0; i < in->n; i++)
        perm[i] = i;
    sort_base = in->recs;
    qsort(perm, in->n, sizeof(*perm), ix_cmp);
    for (size_t i = 0; i < in->n; i++) {
        nr[i] = in->recs[perm[i]];
        nf[i] = in->fates[perm[i]];
    }
    memcpy(in->recs, nr, in->n * sizeof(*nr));
    memcpy(in->fates, nf, in->n * sizeof(*nf));
    free(perm);
    free(nr);
    free(nf);
}

void gt_inputs_free(struct gt_inputs *in)
{
    for (size_t i = 0; i < in->n && !in->discard; i++)
        gt_recfile_free(&in->recs[i]);
    for (size_t i = 0; in->discard && i < in->n; i++)
        free(in->keys[i].s);
    free(in->keys);
    free(in->job_ix ? in->job_ix->v : NULL);
    free(in->job_ix);
    for (size_t i = 0; i < in->fates_cap; i++)
        free(in->fates[i]);
    free(in->fates);
    free(in->recs);
    free(in->seen);
    free(in->job_owner);
    devs_pool_free(in->devs_pool);
    memset(in, 0, sizeof(*in));
}
