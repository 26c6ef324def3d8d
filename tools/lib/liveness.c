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

static int read_boot_id(char *out, size_t n)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (!f)
        return -1;
    int ok = fgets(out, (int)n, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    out[strcspn(out, "\n")] = 0;
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

/* 1 when process pid has the file (dev, ino) open, 0 when it has not, -1
 * when its fd table cannot be read. */
static int proc_holds_file(int pid, dev_t dev, ino_t ino)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd", pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int found = 0;
    struct dirent *e;
    errno = 0;
    while (!found && (e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, 0) == 0 && st.st_dev == dev &&
            st.st_ino == ino)
            found = 1;
        errno = 0;
    }
    int readerr = !found && errno != 0;
    closedir(d);
    return readerr ? -1 : found;
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
    return proc_holds_file(pid, st.st_dev, st.st_ino) == 1 ? GT_LIVE_LIVE : GT_LIVE_UNKNOWN;
}

int gt_recfile_judge_liveness(const struct gt_recfile *r)
{
    return gt_recfile_judge_liveness_why(r, NULL);
}
