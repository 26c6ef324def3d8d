/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inputs.c — path → recorders (see inputs.h).  A file is classified by its
 * first bytes, never by its name: "GDRTRACE" is a recorder, a zstd frame is
 * an archive.  Folders are scanned for gdrtrace.*.rec and *.zst entries only,
 * so stray files in /dev/shm are not reported as broken recorders.
 */
#include "tools/lib/inputs.h"

#include <dirent.h>
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

int gt_inputs_owner_ok(struct gt_inputs *in, const struct gt_recfile *r)
{
    if (in->all_owners || r->owner < 0)
        return 1;
    long me = (long)geteuid(), kept = -1;
    /* root's own files are not special: a job root ran is one owner, and a
     * recorder another user planted beside it is a second one */
    if (r->owner == me && (me != 0 || in->naccept))
        return 1;
    for (int i = 0; i < in->naccept; i++)
        if (in->accept[i] == r->owner)
            return 1;
    if (me == 0 && !in->naccept) {
        /* root: the job's owner is the first owner read for it */
        size_t i = 0;
        for (; i < in->njob_owner && strcmp(in->job_owner[i].job, r->id.job); i++)
            ;
        if (i < in->njob_owner && in->job_owner[i].uid == r->owner)
            return 1;
        if (i == in->njob_owner) {
            struct gt_job_owner *nj = realloc(in->job_owner, (in->njob_owner + 1) * sizeof(*nj));
            if (!nj)
                return 1; /* out of memory: counted, as before owners were judged */
            in->job_owner = nj;
            snprintf(nj[i].job, sizeof(nj[i].job), "%s", r->id.job);
            nj[i].uid = r->owner;
            in->njob_owner++;
            return 1;
        }
        kept = in->job_owner[i].uid;
        in->owner_conflict = 1;
    }
    int k = 0;
    for (; k < in->nskip_owner &&
           (in->skip_owner[k].uid != r->owner || strcmp(in->skip_owner[k].job, r->id.job));
         k++)
        ;
    if (k == in->nskip_owner) {
        if (k == (int)(sizeof(in->skip_owner) / sizeof(in->skip_owner[0]))) {
            in->skip_owner_more++;
            return 0;
        }
        struct gt_owner_skip *o = &in->skip_owner[in->nskip_owner++];
        o->uid = r->owner;
        o->n = 0;
        o->kept = kept;
        snprintf(o->job, sizeof(o->job), "%s", r->id.job);
        snprintf(o->eg, sizeof(o->eg), "%s", r->source);
    }
    in->skip_owner[k].n++;
    return 0;
}

/* Names what gt_inputs_owner_ok() left out; root's conflicts count as unreadable
 * inputs (exit 2). */
void gt_inputs_explain_owners(struct gt_inputs *in)
{
    if (in->owner_conflict)
        in->nbad++;
    if (in->quiet)
        return;
    for (int k = 0; k < in->nskip_owner; k++) {
        const struct gt_owner_skip *o = &in->skip_owner[k];
        char who[128], kept[128], job[160];
        snprintf(job, sizeof(job), "%s", o->job[0] ? gt_esc(o->job) : GT_JOB_NONE);
        gt_owner_name(o->uid, who, sizeof(who));
        if (o->kept >= 0)
            fprintf(stderr,
                    "gdrtrace: job %s has recorders of more than one owner: counted those of %s "
                    "(read first), left out %d of %s (e.g. %s); which owner is the job's is not "
                    "known (exit 2): --accept-owner USER names it\n",
                    job, gt_owner_name(o->kept, kept, sizeof(kept)), o->n, who, gt_esc(o->eg));
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

static void problem(struct gt_inputs *in, const char *msg)
{
    in->nbad++;
    if (!in->quiet)
        fprintf(stderr, "gdrtrace: %s\n", gt_esc(msg));
}

static struct gt_recfile *slot(struct gt_inputs *in)
{
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
static int same_proc(const struct gt_recfile *a, const struct gt_recfile *b)
{
    return (a->from_archive || b->from_archive) && a->id.pid == b->id.pid &&
           a->id.start_wall_ns == b->id.start_wall_ns &&
           a->id.start_mono_ns == b->id.start_mono_ns && !strcmp(a->id.host, b->id.host) &&
           !strcmp(a->id.node.boot_id, b->id.node.boot_id) && !strcmp(a->id.job, b->id.job);
}

static size_t proc_hash(const struct gt_recfile *r)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = r->id.host; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h = (h ^ (uint64_t)(uint32_t)r->id.pid) * 1099511628211ull;
    h = (h ^ (uint64_t)r->id.start_wall_ns) * 1099511628211ull;
    return (size_t)h;
}

/* Index of an earlier recorder of the same process, or in->n; records
 * in->recs[in->n] as seen otherwise.  Out of memory: no dedup (counted twice
 * rather than lost). */
static size_t seen_before(struct gt_inputs *in)
{
    if (2 * (in->n + 1) > in->seen_cap) {
        size_t nc = in->seen_cap ? in->seen_cap * 2 : 64;
        size_t *ns = calloc(nc, sizeof(*ns));
        if (!ns)
            return in->n;
        for (size_t i = 0; i < in->seen_cap; i++)
            if (in->seen[i]) {
                size_t k = proc_hash(&in->recs[in->seen[i] - 1]) & (nc - 1);
                while (ns[k])
                    k = (k + 1) & (nc - 1);
                ns[k] = in->seen[i];
            }
        free(in->seen);
        in->seen = ns;
        in->seen_cap = nc;
    }
    const struct gt_recfile *r = &in->recs[in->n];
    size_t k = proc_hash(r) & (in->seen_cap - 1);
    for (; in->seen[k]; k = (k + 1) & (in->seen_cap - 1))
        if (same_proc(&in->recs[in->seen[k] - 1], r))
            return in->seen[k] - 1;
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
static void keep(struct gt_inputs *in)
{
    struct gt_recfile *r = &in->recs[in->n];
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
    size_t prev = seen_before(in);
    if (prev != in->n) {
        /* Keep the live one.  Folded recorders cannot be taken back, so a
         * folder is read live-first (add_dir); here the later one goes unless
         * it is live and the earlier one, not folded, came from an archive. */
        in->dups++;
        if (!in->fold && in->recs[prev].from_archive && !r->from_archive) {
            gt_recfile_free(&in->recs[prev]);
            in->recs[prev] = *r;
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

/* Recorders before archives, so the live copy of a process is the one kept. */
static int name_cmp(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    return is_zst(x) != is_zst(y) ? is_zst(x) - is_zst(y) : strcmp(x, y);
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
    char **names = NULL;
    size_t nn = 0, cap = 0;
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
        if (nn == cap) {
            cap = cap ? cap * 2 : 32;
            char **nv = realloc(names, cap * sizeof(*names));
            if (!nv)
                break;
            names = nv;
        }
        names[nn] = strdup(e->d_name);
        if (names[nn])
            nn++;
    }
    closedir(d);
    if (nn)
        qsort(names, nn, sizeof(*names), name_cmp);
    int rc = 0;
    for (size_t i = 0; i < nn; i++) {
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", path, names[i]);
        struct stat st;
        /* lstat: a symlink planted in a shared folder is not followed. */
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && add_file(in, p))
            rc = -1;
        free(names[i]);
    }
    free(names);
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
    if (in->n < 2)
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
    for (size_t i = 0; i < in->n; i++)
        gt_recfile_free(&in->recs[i]);
    for (size_t i = 0; i < in->fates_cap; i++)
        free(in->fates[i]);
    free(in->fates);
    free(in->recs);
    free(in->seen);
    free(in->job_owner);
    devs_pool_free(in->devs_pool);
    memset(in, 0, sizeof(*in));
}
