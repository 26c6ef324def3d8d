/* SPDX-License-Identifier: Apache-2.0 */
/*
 * liveness.c — whether the process that wrote a recorder still runs, judged
 * from this machine (`ls`, `watch`, `dump`, kernel corroboration, prune).
 *
 * The header names its writer by pid (as the writer's own pid namespace
 * numbers it), the boot id, the CLOCK_MONOTONIC time the recorder was
 * created and, since format 1.4, the writer's pid namespace, time namespace
 * and process start time (common/procid.h).  A LIVE header is judged, in
 * order:
 *
 *   1. another boot id: crashed (the writer's kernel is gone);
 *   2. (1.4) the writer's pid namespace was not recorded, ours cannot be
 *      read, or /proc is not our namespace's: unknown (pid namespace
 *      unreadable); it is not ours: unknown (other pid namespace) — its pid
 *      number means nothing here, whether or not it exists;
 *   3. pid <= 0, or no process with that pid here: crashed;
 *   4. (1.4, the same time namespace, the start recorded) that process
 *      started at another tick than the writer did: crashed (the pid was
 *      reused), exactly; without these, that process started after the
 *      recorder was created: crashed (the writer held the pid from before);
 *   5. that process holds this very file open (the writer keeps its fd until
 *      the clean close): live;
 *   6. it does not: unknown (before 1.4: the writer's pid may be from another
 *      pid namespace);
 *   7. its start or its fd table cannot be read (another user's process,
 *      /proc mounted with hidepid, not a file): unknown.
 *
 * Invariant: "live" only with the proof of 5; "crashed" by pid (3, 4) only
 * where the writer shared our pid namespace — known since 1.4, assumed
 * before (as the reader always had).  Start times are compared only within
 * one time namespace: /proc/<pid>/stat shows them shifted by the reader's
 * boottime offset.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/procid.h"
#include "tools/lib/recfile.h"

/* This machine's boot id, read once: it cannot change under a running
 * reader, and every recorder of a folder is judged against it. */
static int read_boot_id(char *out, size_t n)
{
    static char boot[64];
    static int state; /* 0 unread, 1 read, -1 unreadable */
    if (!state) {
        FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
        state = f && fgets(boot, (int)sizeof(boot), f) ? 1 : -1;
        if (f)
            fclose(f);
        boot[strcspn(boot, "\n")] = 0;
    }
    if (state < 0)
        return -1;
    snprintf(out, n, "%s", boot);
    return 0;
}

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* When process pid started, as CLOCK_BOOTTIME ns truncated to a tick (*tick_ns);
 * -1 when it cannot be read. */
static int64_t proc_start_boot_ns(int pid, int64_t *tick_ns)
{
    int64_t ticks = gt_proc_start_ticks(pid);
    long hz = sysconf(_SC_CLK_TCK);
    if (ticks < 0 || hz <= 0 || ticks > INT64_MAX / 1000000000)
        return -1;
    *tick_ns = 1000000000 / hz;
    return ticks * *tick_ns;
}

/* The fd tables of writers, by pid: one scan of /proc/PID/fd serves every
 * recorder that process holds.  A scan per recorder cost a process holding
 * N recorders N scans of N entries (quadratic: 100,000 live recorders of one
 * writer are 10^10 fstatat calls).  A table answers "holds" for at most
 * FDTAB_MAX_AGE_NS, and "does not hold" only for a file whose status changed
 * before the scan (less a margin for the kernel's coarse file clock): the
 * writer holds its recorder from the moment it creates it and never opens it
 * again, so a newer file is looked for in a fresh scan. */
#define FDTAB_SLOTS 16
#define FDTAB_MAX_AGE_NS 2000000000ll
#define FDTAB_MARGIN_NS 200000000ll
struct fd_id {
    dev_t dev;
    ino_t ino;
    int fd; /* its number in the writer's table */
};
static struct fdtab {
    int pid;      /* 0: free */
    int64_t mono; /* when scanned (CLOCK_MONOTONIC) */
    int64_t wall; /* and by CLOCK_REALTIME, the clock of st_ctim */
    size_t n;
    struct fd_id *f; /* n entries, sorted */
} fdtabs[FDTAB_SLOTS];
static unsigned fdtab_next;

static int fd_id_cmp(const void *a, const void *b)
{
    const struct fd_id *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Scans /proc/pid/fd into t (sorted); 0, or -1 when it cannot be read. */
static int fdtab_scan(struct fdtab *t, int pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd", pid);
    int64_t mono = clock_ns(CLOCK_MONOTONIC), wall = clock_ns(CLOCK_REALTIME);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct fd_id *f = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, 0) == 0) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 64;
                struct fd_id *nf = realloc(f, nc * sizeof(*nf));
                if (!nf) {
                    free(f);
                    closedir(d);
                    return -1;
                }
                f = nf;
                cap = nc;
            }
            f[n].dev = st.st_dev;
            f[n].ino = st.st_ino;
            f[n++].fd = atoi(e->d_name);
        }
        errno = 0;
    }
    int readerr = errno != 0;
    closedir(d);
    if (readerr) {
        free(f);
        return -1;
    }
    if (n > 1)
        qsort(f, n, sizeof(*f), fd_id_cmp);
    free(t->f);
    t->pid = pid;
    t->mono = mono;
    t->wall = wall;
    t->n = n;
    t->f = f;
    return 0;
}

/* 1 when process pid has the file st (dev, ino, ctime) open, 0 when it has
 * not, -1 when its fd table cannot be read. */
static int proc_holds_file(int pid, const struct stat *st)
{
    struct fdtab *t = NULL;
    for (unsigned i = 0; i < FDTAB_SLOTS && !t; i++)
        if (fdtabs[i].pid == pid)
            t = &fdtabs[i];
    int64_t ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
    struct fd_id key = {st->st_dev, st->st_ino, 0};
    for (int pass = 0; pass < 2; pass++) {
        const struct fd_id *hit =
            t && t->n ? bsearch(&key, t->f, t->n, sizeof(*t->f), fd_id_cmp) : NULL;
        if (hit) {
            /* still that file under that fd (one fstatat), whatever the
             * table's age: a file closed and its inode number reused since
             * the scan are not taken for it */
            char fdp[64];
            struct stat now;
            snprintf(fdp, sizeof(fdp), "/proc/%d/fd/%d", pid, hit->fd);
            if (stat(fdp, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino)
                return 1;
        } else if (t && ctime_ns < t->wall - FDTAB_MARGIN_NS &&
                   clock_ns(CLOCK_MONOTONIC) - t->mono <= FDTAB_MAX_AGE_NS) {
            return 0; /* older than a recent scan, and not in it */
        }
        if (pass)
            return 0;
        if (!t)
            t = &fdtabs[fdtab_next++ % FDTAB_SLOTS];
        struct fdtab fresh = {0};
        if (fdtab_scan(&fresh, pid)) {
            free(t->f);
            memset(t, 0, sizeof(*t));
            return -1;
        }
        free(t->f);
        *t = fresh;
    }
    return 0;
}

/* Whether /proc numbers pids as our pid namespace does (a /proc mounted by
 * another namespace, e.g. unshare --pid without --mount-proc, does not: the
 * pid numbers below would name other processes). */
static int proc_is_ours(void)
{
    char link[32];
    ssize_t n = readlink("/proc/self", link, sizeof(link) - 1);
    if (n <= 0)
        return 0;
    link[n] = 0;
    return atoi(link) == (int)getpid();
}

int gt_recfile_judge_liveness_why(const struct gt_recfile *r, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    *why = "";
    if (r->hdr.state == GTR_STATE_CLOSED)
        return GT_LIVE_EXITED;
    if (r->hdr.state == GTR_STATE_CREATING)
        return GT_LIVE_CREATING;
    char boot[64];
    if (r->id.node.boot_id[0] && read_boot_id(boot, sizeof(boot)) == 0 &&
        strcmp(boot, r->id.node.boot_id) != 0)
        return GT_LIVE_CRASHED;
    const struct gtr_identity *id = &r->id;
    int has_ns = r->hdr.version_minor >= 4; /* the writer says which namespace */
    int same_timens = 0;
    if (has_ns) {
        uint64_t dev, ino;
        gt_proc_ns("pid", &dev, &ino);
        if (!id->pidns_ino || !ino || !proc_is_ours()) {
            *why = GT_LIVE_WHY_NS_UNREADABLE;
            return GT_LIVE_UNKNOWN;
        }
        if (dev != id->pidns_dev || ino != id->pidns_ino) {
            *why = GT_LIVE_WHY_OTHER_NS;
            return GT_LIVE_UNKNOWN;
        }
        gt_proc_ns("time", &dev, &ino);
        same_timens = dev == id->timens_dev && ino == id->timens_ino;
    }
    int pid = id->pid;
    if (pid <= 0)
        return GT_LIVE_CRASHED;
    if (kill(pid, 0) != 0 && errno != EPERM)
        return GT_LIVE_CRASHED;

    if (has_ns && same_timens && id->proc_start_ticks) {
        int64_t ticks = gt_proc_start_ticks(pid);
        if (ticks < 0)
            return GT_LIVE_UNKNOWN;
        if ((uint64_t)ticks != id->proc_start_ticks)
            return GT_LIVE_CRASHED;
    } else {
        int64_t tick = 0, started = proc_start_boot_ns(pid, &tick);
        if (started < 0)
            return GT_LIVE_UNKNOWN;
        /* The recorder's time is CLOCK_MONOTONIC, the process's
         * CLOCK_BOOTTIME: they differ by the time suspended since boot, which
         * only grows, so "started later" is certain beyond today's difference
         * and a tick. */
        int64_t suspended = clock_ns(CLOCK_BOOTTIME) - clock_ns(CLOCK_MONOTONIC);
        if (suspended < 0)
            suspended = 0;
        if (started - suspended - tick > id->start_mono_ns)
            return GT_LIVE_CRASHED;
    }

    struct stat st;
    if (r->from_archive || stat(r->source, &st) != 0)
        return GT_LIVE_UNKNOWN;
    return proc_holds_file(pid, &st) == 1 ? GT_LIVE_LIVE : GT_LIVE_UNKNOWN;
}

int gt_recfile_judge_liveness(const struct gt_recfile *r)
{
    return gt_recfile_judge_liveness_why(r, NULL);
}
