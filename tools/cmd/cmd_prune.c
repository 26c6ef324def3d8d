/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_prune.c — `gdrtrace prune [DIR] [--older-than D] [--job J] [--dry-run]
 * [--json]`: removes the recorders of processes that are gone (exited or
 * crashed) from one folder ($GDRTRACE_DIR, default /dev/shm), so they stop
 * holding tmpfs memory that NCCL's SHM transport needs.
 *
 * Invariants:
 *  1. Only entries named gdrtrace.*.rec are looked at (never archives or
 *     other files); an entry is removed only if it is a regular file (never
 *     a symlink: every step works on the folder's fd with O_NOFOLLOW /
 *     AT_SYMLINK_NOFOLLOW), owned by the caller unless the caller is root,
 *     that parses as a recorder (magic, header, sections) and that `ls`'s
 *     judgement (gt_recfile_judge_liveness) calls exited or crashed — or,
 *     with --older-than, unknown (a writer in another pid namespace) and
 *     older than that, the lease (3) proving nobody writes it.  Anything
 *     else — live, creating, unknown, unreadable — is kept.
 *  2. An exited recorder whose writer still runs and holds it (the same
 *     judgement, asked of a copy whose header says LIVE) is kept: the
 *     writer reopens a closed recorder when NCCL initialises again
 *     (gt_rec_reopen), so "closed" alone does not mean "done".
 *  3. No file that a process still has open for writing is removed: a
 *     read lease (F_SETLEASE F_RDLCK) is granted by the kernel only when
 *     no one holds the inode open for writing, and a writer's MAP_SHARED
 *     mapping counts as such until its process (and any child that
 *     inherited the fd) is gone.  This holds where the pid judgement cannot
 *     see (a writer in another pid namespace).  Where the lease cannot be
 *     taken (neither the owner nor CAP_LEASE, leases disabled) the file is
 *     left in place and reported as failed: fail closed, and say so.
 *  4. The file unlinked is the inode that was judged: it is renamed (no
 *     replace) to a private name first and unlinked only if that name holds
 *     the judged inode.  (A filesystem without RENAME_NOREPLACE: the inode
 *     under the name is compared just before unlinking it.)
 *
 * Why this order is safe against a writer (re)creating or reopening it:
 *  - The writer creates its recorder with O_CREAT|O_EXCL|O_NOFOLLOW under a
 *    name holding its pid (shim/recorder.c), trying "<pid>-1".. when the name
 *    exists; it never opens an existing file.  Its only way back into a
 *    recorder is the mapping it still holds (gt_rec_reopen).
 *  - Order: lstat, open (O_NOFOLLOW), fstat (the inode we judge), lease,
 *    read, parse, judge, F_GETLEASE, rename, compare, unlink.  The lease is
 *    taken before reading: once granted, nobody holds the inode open for
 *    writing, so nobody can change it without opening it for writing (or
 *    truncating it), which breaks the lease; F_GETLEASE right before the
 *    rename sees such a break.  So what we read and judged still holds when
 *    we remove it: the judgement cannot go stale, whatever pids do.
 *  - A live recorder can appear under the same name only after the judged
 *    file's name was removed by someone else (a concurrent prune or rm) and
 *    a new process with the same job, host and pid created it.  The rename
 *    to a private name plus the inode comparison means we unlink only the
 *    judged inode; a newcomer caught by the rename is put back (no replace).
 *
 * Exit: 0 done, 1 a recorder to remove could not be removed, 2 the folder or
 * a gdrtrace.*.rec entry could not be read (kept; one that reads but is not a
 * recorder is named and kept with exit 0), 64 usage.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/lib/recfile.h"
#include "tools/cmd/commands.h"
#include "tools/cmd/options.h"
#include "tools/lib/duration.h"
#include "tools/lib/esc.h"
#include "tools/lib/inputs.h"
#include "tools/render/json_prune.h"
#include "tools/lib/model.h"

/* The writer's recorder is ~2.7 MB; a file far above that is not judged. */
#define PRUNE_READ_MAX ((size_t)256 << 20)

struct prune {
    int dirfd;
    const char *dir;
    const char *job;
    int64_t older_ns; /* -1: no age limit */
    const char *older_arg;
    int dry, json;
    struct gt_json js;
    int64_t now_ns;
    /* tallies */
    unsigned removed, kept, unreadable, failed;
    unsigned junk; /* of unreadable: files named like recorders that are not */
    uint64_t bytes_removed;
};

/* One file's outcome. */
struct outcome {
    const char *action; /* removed, would-remove, kept, failed */
    const char *state;  /* liveness name, or what the entry is */
    char reason[512];
    const struct gt_recfile *rec; /* NULL when not parsed */
    uint64_t size;
    int64_t age_s; /* -1 unknown */
};

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: gdrtrace prune [--older-than DURATION] [--job J] [--dry-run] [--json] [DIR]\n"
        "  Removes the recorders (gdrtrace.*.rec) of exited and crashed processes from DIR\n"
        "  (default $GDRTRACE_DIR, /dev/shm).  Never removes a live recorder, one being\n"
        "  created, one still open for writing, a closed one its writer still holds, a file that\n"
        "  is not a recorder, a symlink, or (unless run as root) another user's file.\n"
        "  Folders gdrtrace run left (gdrtrace-run.*, not in use by a run) are pruned\n"
        "  alike; one left empty goes, with the NCCL logs run wrote there.\n"
        "  --older-than D  only recorders whose last activity is older than D: a whole number\n"
        "                  and a unit s, m, h, d or w (30m, 12h, 7d); also takes an\n"
        "                  unknown one (its writer in another pid namespace) that no\n"
        "                  process holds open for writing\n"
        "  --job J         only recorders of job J (-: those without a job id)\n"
        "  --dry-run       say what would be removed, remove nothing\n"
        "  --json          one object: {dir, dry_run, files: [{path, action, state, reason,\n"
        "                  job, pid, size, age_s}], removed|would_remove, kept, unreadable,\n"
        "                  failed, bytes, exit}\n"
        "exit: 0 ok (a gdrtrace.*.rec that is not a recorder is named and kept), 1 a\n"
        "      recorder could not be removed, 2 DIR or an entry could not be read, 64 usage\n");
}

static void fmt_age(char *out, size_t n, int64_t s)
{
    if (s < 120)
        snprintf(out, n, "%llds", (long long)s);
    else if (s < 7200)
        snprintf(out, n, "%lldm", (long long)(s / 60));
    else if (s < 2 * 86400)
        snprintf(out, n, "%lldh", (long long)(s / 3600));
    else
        snprintf(out, n, "%lldd", (long long)(s / 86400));
}

static void report(struct prune *pr, const char *name, const struct outcome *o)
{
    if (!strcmp(o->action, "removed") || !strcmp(o->action, "would-remove")) {
        pr->removed++;
        pr->bytes_removed += o->size;
    } else if (!strcmp(o->action, "failed")) {
        pr->failed++;
    } else {
        pr->kept++;
    }
    if (pr->json) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", pr->dir, name);
        struct gt_prune_item it = {path, o->action, o->state, o->reason, o->rec, o->size, o->age_s};
        gt_json_prune_file(&pr->js, &it);
        return;
    }
    /* names come from a shared folder, reasons from recorders */
    printf("%-12s %-12s %s/%s  %s\n", o->action, o->state, gt_esc(pr->dir), gt_esc(name),
           gt_esc(o->reason));
}

/* Reads the whole regular file behind fd (at most max bytes). */
static int read_fd(int fd, size_t size, size_t max, unsigned char **out, size_t *outlen, char *err,
                   size_t errlen)
{
    if (size > max) {
        snprintf(err, errlen, "%zu bytes, more than the %zu prune reads to judge a recorder", size,
                 max);
        return -1;
    }
    unsigned char *b = malloc(size ? size : 1);
    if (!b) {
        snprintf(err, errlen, "out of memory for %zu bytes", size);
        return -1;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = pread(fd, b + got, size - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "read failed: %s", strerror(errno));
            free(b);
            return -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    *out = b;
    *outlen = got;
    return 0;
}

/* When the recorder last showed activity (wall ns): its clean close, else
 * its newest complete event, else its creation.  Clamped to [start, now]:
 * the values come from a file anyone with write access could have forged. */
/* The writer's process, as `ls` judges it, independent of the header state
 * (invariant 2): the same judgement on a copy that says LIVE. */
static int writer_runs(const struct gt_recfile *r)
{
    struct gt_recfile probe = *r;
    probe.hdr.state = GTR_STATE_LIVE;
    return gt_recfile_judge_liveness(&probe) == GT_LIVE_LIVE;
}

/* Invariant 4: move the judged inode aside, check it, unlink it. */
static int remove_judged(struct prune *pr, const char *name, const struct stat *judged,
                         struct outcome *o)
{
    char tmp[128];
    snprintf(tmp, sizeof(tmp), ".gdrtrace-prune.%ld.%llu", (long)getpid(),
             (unsigned long long)judged->st_ino);
    struct stat st;
    if (renameat2(pr->dirfd, name, pr->dirfd, tmp, RENAME_NOREPLACE) != 0) {
        if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) {
            o->action = "failed";
            snprintf(o->reason, sizeof(o->reason), "cannot move aside to remove it: %s",
                     strerror(errno));
            return -1;
        }
        /* A filesystem without RENAME_NOREPLACE (NFS): compare the inode
         * under the name just before unlinking it; the window is the two
         * calls apart instead of none. */
        if (fstatat(pr->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            st.st_dev != judged->st_dev || st.st_ino != judged->st_ino) {
            o->action = "kept";
            snprintf(o->reason, sizeof(o->reason), "replaced by another file while pruning");
            return 0;
        }
        if (unlinkat(pr->dirfd, name, 0) != 0) {
            o->action = "failed";
            snprintf(o->reason, sizeof(o->reason), "cannot remove: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    if (fstatat(pr->dirfd, tmp, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != judged->st_dev ||
        st.st_ino != judged->st_ino) {
        /* Someone else's file took the name after we judged ours: put it
         * back, never over a file that took the name in the meantime. */
        if (renameat2(pr->dirfd, tmp, pr->dirfd, name, RENAME_NOREPLACE) == 0) {
            o->action = "kept";
            snprintf(o->reason, sizeof(o->reason), "replaced by another file while pruning");
            return 0;
        }
        o->action = "failed";
        snprintf(o->reason, sizeof(o->reason),
                 "replaced by another file while pruning, which is now %s/%s (%s): rename it back",
                 pr->dir, tmp, strerror(errno));
        return -1;
    }
    if (unlinkat(pr->dirfd, tmp, 0) != 0) {
        int e = errno;
        renameat2(pr->dirfd, tmp, pr->dirfd, name, RENAME_NOREPLACE);
        o->action = "failed";
        snprintf(o->reason, sizeof(o->reason), "cannot remove: %s", strerror(e));
        return -1;
    }
    return 0;
}

/* The entry opened for judging: a regular file of the caller's (root: of
 * anyone), opened without following a link.  Returns its fd; -1 with *o
 * saying why it is kept; -2 when it is gone since the listing (nothing to
 * say). */
static int open_entry(struct prune *pr, const char *name, struct stat *st, struct outcome *o)
{
    uid_t me = geteuid();
    if (fstatat(pr->dirfd, name, st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return -2;
        o->state = "unreadable";
        snprintf(o->reason, sizeof(o->reason), "cannot stat: %s", strerror(errno));
        pr->unreadable++;
        return -1;
    }
    if (S_ISLNK(st->st_mode)) {
        o->state = "symlink";
        snprintf(o->reason, sizeof(o->reason), "a symbolic link, never followed");
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        o->state = "not-regular";
        snprintf(o->reason, sizeof(o->reason), "not a regular file");
        return -1;
    }
    if (me != 0 && st->st_uid != me) {
        o->state = "not-yours";
        snprintf(o->reason, sizeof(o->reason),
                 "owned by uid %u, not by you (uid %u); only root prunes other users' recorders",
                 (unsigned)st->st_uid, (unsigned)me);
        return -1;
    }
    int fd = openat(pr->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, st) != 0) {
        if (errno == ENOENT)
            return fd >= 0 ? (close(fd), -2) : -2;
        o->state = "unreadable";
        snprintf(o->reason, sizeof(o->reason), "cannot open: %s", strerror(errno));
        pr->unreadable++;
        return fd >= 0 ? (close(fd), -1) : -1;
    }
    /* the entry may have been swapped between the two stats */
    if (!S_ISREG(st->st_mode) || (me != 0 && st->st_uid != me)) {
        o->state = "changed";
        snprintf(o->reason, sizeof(o->reason), "replaced by another kind of file while pruning");
        close(fd);
        return -1;
    }
    o->size = (uint64_t)st->st_size;
    return fd;
}

/* The recorder in fd, parsed into *rec: 0, or -1 with *o saying why not. */
static int read_entry(struct prune *pr, const char *name, int fd, const struct stat *st,
                      struct gt_recfile *rec, struct outcome *o)
{
    char err[GT_ERRLEN];
    unsigned char *buf;
    size_t len;
    if (read_fd(fd, (size_t)st->st_size, PRUNE_READ_MAX, &buf, &len, err, sizeof(err)) != 0) {
        o->state = "unreadable";
        snprintf(o->reason, sizeof(o->reason), "%s", err);
        pr->unreadable++;
        return -1;
    }
    /* The full path: the liveness judgement looks for the writer holding
     * the file at this path open. */
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", pr->dir, name);
    if (gt_recfile_parse_owned(buf, len, path, rec, err, sizeof(err)) != 0) {
        o->state = "not-recorder";
        /* err starts with the source, which the line already shows */
        const char *e = err;
        size_t pl = strlen(path);
        if (!strncmp(e, path, pl) && !strncmp(e + pl, ": ", 2))
            e += pl + 2;
        snprintf(o->reason, sizeof(o->reason), "%s", e);
        pr->unreadable++;
        pr->junk++; /* named, kept; not the epilog's failure (exit 0) */
        return -1;
    }
    return 0;
}

/* Whether the writer is gone by its liveness l: 1 yes (*unknown_old: an
 * unknown one taken by --older-than), 0 kept with o->reason said. */
static int writer_gone(const struct prune *pr, const struct gt_recfile *rec, int l,
                       const char *lwhy, int64_t last, int lease_errno, int *unknown_old,
                       struct outcome *o)
{
    int pid = rec->id.pid;
    switch (l) {
    case GT_LIVE_LIVE:
        snprintf(o->reason, sizeof(o->reason), "pid %d runs and holds it", pid);
        return 0;
    case GT_LIVE_CREATING:
        snprintf(o->reason, sizeof(o->reason), "being created by pid %d", pid);
        return 0;
    case GT_LIVE_EXITED:
        if (writer_runs(rec)) {
            snprintf(o->reason, sizeof(o->reason),
                     "closed, but pid %d still holds it and reopens it if NCCL initialises again",
                     pid);
            return 0;
        }
        return 1;
    case GT_LIVE_CRASHED:
        return 1;
    }
    /* A writer the pid cannot settle (another pid namespace): --older-than
     * is the operator's word that an old one is done, and the lease below
     * the proof that no process, in any namespace, still holds it open for
     * writing. */
    if (pr->older_ns >= 0 && pr->now_ns - last > pr->older_ns && lease_errno == 0) {
        *unknown_old = 1;
        return 1;
    }
    if (!strcmp(lwhy, GT_LIVE_WHY_OTHER_NS))
        snprintf(o->reason, sizeof(o->reason),
                 "unknown (%s): pid %d is its writer's number in another pid namespace", lwhy, pid);
    else if (lwhy[0])
        snprintf(o->reason, sizeof(o->reason),
                 "unknown (%s): cannot tell which process its writer's pid %d is", lwhy, pid);
    else
        snprintf(o->reason, sizeof(o->reason),
                 "cannot tell whether pid %d is its writer (another pid namespace, or a "
                 "process whose /proc cannot be read)",
                 pid);
    return 0;
}

/* Whether the parsed recorder may go: 1 with o->reason the line's why, 0
 * kept (o->action "failed" when the lease could not be taken). */
static int judge(struct prune *pr, const struct gt_recfile *rec, int lease_errno, struct outcome *o)
{
    const char *lwhy = "";
    int l = gt_recfile_judge_liveness_why(rec, &lwhy);
    o->state = gt_liveness_name(l);
    int64_t last = gt_last_activity_ns(rec, pr->now_ns);
    o->age_s = (pr->now_ns - last) / 1000000000;
    char age[32];
    fmt_age(age, sizeof(age), o->age_s);
    int pid = rec->id.pid, unknown_old = 0;

    /* --job -: the recorders without a job id, as ls, verdict and export
     * write them */
    const char *want = pr->job && !strcmp(pr->job, GT_JOB_NONE) ? "" : pr->job;
    if (want && strcmp(rec->id.job, want) != 0) {
        snprintf(o->reason, sizeof(o->reason), "job '%s', not '%s'",
                 rec->id.job[0] ? rec->id.job : GT_JOB_NONE, pr->job);
        return 0;
    }
    if (!writer_gone(pr, rec, l, lwhy, last, lease_errno, &unknown_old, o))
        return 0;
    if (pr->older_ns >= 0 && pr->now_ns - last <= pr->older_ns) {
        snprintf(o->reason, sizeof(o->reason), "last activity %s ago, not older than %s", age,
                 pr->older_arg);
        return 0;
    }
    if (lease_errno == EAGAIN || lease_errno == EBUSY) {
        snprintf(o->reason, sizeof(o->reason),
                 "judged %s, but a process still has it open for writing (pid %d in another pid "
                 "namespace?)",
                 o->state, pid);
        return 0;
    }
    if (lease_errno) {
        /* Fail closed (invariant 3), and say so with exit 1: without the
         * lease nothing shows the writer is gone where the pid judgement
         * cannot see.  The file is left as it is. */
        o->action = "failed";
        snprintf(o->reason, sizeof(o->reason),
                 "judged %s, left in place: cannot check that no process still writes it: "
                 "F_SETLEASE: %s (prune as the file's owner, or with CAP_LEASE)",
                 o->state, strerror(lease_errno));
        return 0;
    }
    const char *why = l == GT_LIVE_EXITED ? "closed cleanly, its writer (pid %d) no longer holds it"
                      : unknown_old ? "unknown writer (pid %d here means nothing), no process "
                                      "holds it open for writing, older than --older-than"
                                    : "never closed, its writer (pid %d) is gone";
    char whyp[160];
    snprintf(whyp, sizeof(whyp), why, pid);
    snprintf(o->reason, sizeof(o->reason), "%s, job '%s', last activity %s ago", whyp,
             rec->id.job[0] ? rec->id.job : "-", age);
    return 1;
}

static void prune_one(struct prune *pr, const char *name)
{
    struct outcome o = {.action = "kept", .state = "-", .age_s = -1};
    struct stat st;
    struct gt_recfile rec;
    int parsed = 0;
    int fd = open_entry(pr, name, &st, &o);
    if (fd == -2)
        return; /* gone since the listing: nothing to say */
    if (fd < 0)
        goto out;
    /* Invariant 3, taken before reading so that what we read cannot change
     * without breaking the lease. */
    int lease_errno = fcntl(fd, F_SETLEASE, F_RDLCK) == 0 ? 0 : errno;
    if (read_entry(pr, name, fd, &st, &rec, &o))
        goto out;
    parsed = 1;
    o.rec = &rec;
    if (!judge(pr, &rec, lease_errno, &o))
        goto out;
    if (pr->dry) {
        o.action = "would-remove";
        goto out;
    }
    /* Someone opened it for writing since the lease was granted? */
    if (fcntl(fd, F_GETLEASE) != F_RDLCK) {
        snprintf(o.reason, sizeof(o.reason), "opened for writing while being pruned");
        goto out;
    }
    o.action = "removed";
    remove_judged(pr, name, &st, &o);

out:
    report(pr, name, &o);
    if (parsed)
        gt_recfile_free(&rec);
    if (fd >= 0)
        close(fd); /* releases the lease */
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_recorder_name(const char *n)
{
    size_t len = strlen(n), pl = strlen(GTR_FILE_PREFIX), sl = strlen(GTR_FILE_SUFFIX);
    return len > pl + sl && !strncmp(n, GTR_FILE_PREFIX, pl) &&
           !strcmp(n + len - sl, GTR_FILE_SUFFIX);
}

/* Names first, then one at a time in sorted order: the output is stable and
 * the folder may change under readdir. */
static int list_names(struct prune *pr, char ***out, size_t *nout)
{
    int fd2 = dup(pr->dirfd);
    DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;
    if (!d) {
        if (fd2 >= 0)
            close(fd2);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (!is_recorder_name(e->d_name))
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            char **nv = realloc(names, nc * sizeof(*nv));
            if (!nv) {
                rc = -1;
                break;
            }
            names = nv;
            cap = nc;
        }
        if (!(names[n] = strdup(e->d_name))) {
            rc = -1;
            break;
        }
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), name_cmp);
    *out = names;
    *nout = n;
    return rc;
}

/* The private folders of `gdrtrace run` (gdrtrace-run.XXXXXX) that a run
 * left behind: --keep, an archive or log not written, a run killed by
 * SIGKILL.  A run holds an exclusive flock on its folder for its whole life
 * (tools/cmd/cmd_run.c, invariant 6), released by the kernel however it ends:
 * a folder whose lock is taken is in use and skipped.  Else its recorders
 * are judged by the rules of the folder's own (invariants 1-4, through
 * prune_one on the subfolder's fd, the lock held meanwhile); when none is
 * left, the NCCL logs run wrote beside them (nccl.*.log) and the folder go
 * (rmdir: anything else the job put there keeps it, and is said). */
static int is_run_dir_name(const char *n)
{
    return !strncmp(n, "gdrtrace-run.", 13) && n[13];
}

static void prune_run_dir(struct prune *pr, const char *name)
{
    struct stat st;
    struct outcome o = {.action = "kept", .state = "run-folder", .age_s = -1};
    if (fstatat(pr->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
        return; /* gone, or a file of that name: not a folder run made */
    if (geteuid() != 0 && st.st_uid != geteuid()) {
        snprintf(o.reason, sizeof(o.reason), "owned by uid %u, not the caller",
                 (unsigned)st.st_uid);
        report(pr, name, &o);
        return;
    }
    int fd = openat(pr->dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        o.state = "unreadable";
        snprintf(o.reason, sizeof(o.reason), "cannot open: %s", strerror(errno));
        pr->unreadable++;
        report(pr, name, &o);
        return;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        snprintf(o.reason, sizeof(o.reason), "a gdrtrace run still uses it");
        report(pr, name, &o);
        close(fd);
        return;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", pr->dir, name);
    struct prune sub = *pr;
    sub.dirfd = fd;
    sub.dir = path;
    sub.removed = sub.kept = sub.unreadable = sub.failed = 0;
    sub.bytes_removed = 0;
    char **names = NULL;
    size_t n = 0;
    int listed = list_names(&sub, &names, &n) == 0;
    for (size_t i = 0; i < n; i++) {
        prune_one(&sub, names[i]);
        free(names[i]);
    }
    free(names);
    pr->js = sub.js; /* the JSON writer went on in sub */
    pr->removed += sub.removed;
    pr->kept += sub.kept;
    pr->unreadable += sub.unreadable;
    pr->failed += sub.failed;
    pr->bytes_removed += sub.bytes_removed;
    if (!listed) {
        o.state = "unreadable";
        snprintf(o.reason, sizeof(o.reason), "cannot list: %s", strerror(errno));
        pr->unreadable++;
    } else if (sub.kept || sub.failed || sub.unreadable) {
        snprintf(o.reason, sizeof(o.reason), "%u recorder(s) in it kept",
                 sub.kept + sub.failed + sub.unreadable);
    } else if (pr->dry) {
        o.action = "would-remove";
        snprintf(o.reason, sizeof(o.reason), "left by gdrtrace run: its NCCL logs and itself");
    } else {
        /* NCCL's logs run wrote there, then the folder if that emptied it */
        int fd2 = dup(fd);
        DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;
        struct dirent *e;
        if (d)
            rewinddir(d);
        while (d && (e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            if (!strncmp(e->d_name, "nccl.", 5) && len > 9 && !strcmp(e->d_name + len - 4, ".log"))
                unlinkat(fd, e->d_name, 0);
        }
        if (d)
            closedir(d);
        else if (fd2 >= 0)
            close(fd2);
        if (unlinkat(pr->dirfd, name, AT_REMOVEDIR) == 0) {
            o.action = "removed";
            snprintf(o.reason, sizeof(o.reason), "left by gdrtrace run: its NCCL logs and itself");
        } else {
            snprintf(o.reason, sizeof(o.reason), "not removed: %s",
                     errno == ENOTEMPTY ? "the job wrote other files into it" : strerror(errno));
        }
    }
    /* the folder's line is not a recorder: not in the recorder tallies */
    if (pr->json) {
        struct gt_prune_item it = {path, o.action, o.state, o.reason, NULL, 0, -1};
        gt_json_prune_run_dir(&pr->js, &it);
    } else {
        printf("%-12s %-12s %s/  %s\n", o.action, o.state, gt_esc(path), gt_esc(o.reason));
    }
    close(fd); /* releases the lock */
}

/* The names of the run folders in pr's folder, sorted. */
static void prune_run_dirs(struct prune *pr)
{
    int fd2 = dup(pr->dirfd);
    DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;
    if (!d) {
        if (fd2 >= 0)
            close(fd2);
        return;
    }
    rewinddir(d); /* a dup shares the offset list_names read to the end */
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_run_dir_name(e->d_name))
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            char **nv = realloc(names, nc * sizeof(*nv));
            if (!nv)
                break;
            names = nv;
            cap = nc;
        }
        if (!(names[n] = strdup(e->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), name_cmp);
    for (size_t i = 0; i < n; i++) {
        prune_run_dir(pr, names[i]);
        free(names[i]);
    }
    free(names);
}

int gt_cmd_prune(int argc, char **argv)
{
    static const struct option opts[] = {{"older-than", required_argument, 0, 'T'},
                                         GT_LONG_JOB,
                                         {"dry-run", no_argument, 0, 'n'},
                                         GT_LONG_JSON,
                                         GT_LONG_HELP,
                                         {0, 0, 0, 0}};
    struct gt_opts op = GT_OPTS_INIT("prune");
    struct prune pr = {.dirfd = -1, .older_ns = -1};
    int c, rc;
    while ((c = getopt_long(argc, argv, "hnj", opts, NULL)) != -1) {
        switch (c) {
        case 'T':
            pr.older_arg = optarg;
            if (gt_parse_duration(optarg, &pr.older_ns) != 0) {
                fprintf(stderr,
                        "gdrtrace prune: --older-than '%s' is not a duration: want a whole number "
                        "and one unit s, m, h, d or w (30m, 12h, 7d)\n",
                        optarg);
                return GT_EXIT_USAGE;
            }
            break;
        case 'n':
            pr.dry = 1;
            break;
        default:
            if ((rc = gt_opts_default(&op, c, optarg, usage)) >= 0)
                return rc;
        }
    }
    pr.job = op.job;
    pr.json = op.json;
    if (argc - optind > 1) {
        fprintf(stderr, "gdrtrace prune: one folder at most, got %d\n", argc - optind);
        usage(stderr);
        return GT_EXIT_USAGE;
    }
    pr.dir = argc - optind == 1 ? argv[optind] : gt_default_dir();
    /* A lease broken under us signals SIGIO, whose default action would
     * kill us mid-prune; F_GETLEASE reports the break instead. */
    signal(SIGIO, SIG_IGN);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    pr.now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;

    pr.dirfd = open(pr.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char **names = NULL;
    size_t n = 0;
    if (pr.dirfd < 0 || list_names(&pr, &names, &n) != 0) {
        fprintf(stderr, "gdrtrace: %s: cannot read folder: %s\n", pr.dir, strerror(errno));
        if (pr.dirfd >= 0)
            close(pr.dirfd);
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        free(names);
        return GT_EXIT_INPUT;
    }
    if (pr.json)
        gt_json_prune_begin(&pr.js, stdout, pr.dir, pr.dry);
    for (size_t i = 0; i < n; i++) {
        prune_one(&pr, names[i]);
        free(names[i]);
    }
    free(names);
    prune_run_dirs(&pr);
    close(pr.dirfd);

    /* A file named like a recorder that is not one (anyone may put one in a
     * shared folder) is named and kept, but does not fail every epilog. */
    rc = pr.failed ? 1 : pr.unreadable > pr.junk ? GT_EXIT_INPUT : 0;
    if (pr.json) {
        struct gt_prune_totals t = {pr.dry,    pr.removed,       pr.kept, pr.unreadable,
                                    pr.failed, pr.bytes_removed, rc};
        gt_json_prune_end(&pr.js, &t);
    } else {
        printf("prune %s: %u %s (%.1f MB), %u kept (%u unreadable), %u failed%s\n", gt_esc(pr.dir),
               pr.removed, pr.dry ? "would be removed" : "removed", (double)pr.bytes_removed / 1e6,
               pr.kept, pr.unreadable, pr.failed, pr.dry ? " [dry run: nothing removed]" : "");
    }
    return rc;
}
