/* SPDX-License-Identifier: Apache-2.0 */
/*
 * liveness.c — whether the process that wrote a recorder still runs, judged
 * from this machine (`ls`, `watch`, `dump`, kernel corroboration, prune).
 *
 * The header names its writer by pid (as the writer's own pid namespace
 * numbers it), the boot id, and the CLOCK_MONOTONIC time the recorder was
 * created; it does not name the writer's pid namespace.  A pid that exists
 * here is therefore no proof: it may be another process of our namespace
 * (the pid was reused) or the writer's number in a container's namespace
 * that happens to exist on the host.  So a LIVE header is judged, in order:
 *
 *   1. another boot id: crashed (the writer's kernel is gone);
 *   2. pid <= 0, or no process with that pid here: crashed;
 *   3. that process started after the recorder was created: crashed (the pid
 *      was reused: the writer held it from before it created the recorder);
 *   4. that process holds this very file open (the writer keeps its fd until
 *      the clean close): live;
 *   5. it does not: unknown (it is someone else: the writer's pid is from
 *      another pid namespace);
 *   6. its start or its fd table cannot be read (another user's process,
 *      /proc mounted with hidepid, not a file): unknown.
 *
 * Invariant: "live" only with the proof of 4.  2 and 3 assume the writer
 * shared our pid namespace, as the reader always has; with the writer's
 * pid-namespace id in the header they could say unknown for another
 * namespace instead (docs/reader.md).
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

#include "common/recfile.h"

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

/* When process pid started, as CLOCK_BOOTTIME ns (field 22 of
 * /proc/<pid>/stat, in clock ticks since boot), truncated to a tick; -1 when
 * it cannot be read. */
static int64_t proc_start_boot_ns(int pid, int64_t *tick_ns)
{
    char path[64], buf[2048];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    /* comm (field 2) is in parentheses and may hold spaces and ')': the
     * fields after it start after the last ')' */
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    p++;
    for (int field = 3; field < 22; field++) {
        p = strchr(p + 1, ' ');
        if (!p)
            return -1;
    }
    char *end;
    errno = 0;
    unsigned long long ticks = strtoull(p + 1, &end, 10);
    long hz = sysconf(_SC_CLK_TCK);
    if (errno || end == p + 1 || hz <= 0 || ticks > (unsigned long long)INT64_MAX / 1000000000)
        return -1;
    *tick_ns = 1000000000 / hz;
    return (int64_t)ticks * *tick_ns;
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

int gt_recfile_judge_liveness(const struct gt_recfile *r)
{
    if (r->hdr.state == GTR_STATE_CLOSED)
        return GT_LIVE_EXITED;
    if (r->hdr.state == GTR_STATE_CREATING)
        return GT_LIVE_CREATING;
    char boot[64];
    if (r->id.node.boot_id[0] && read_boot_id(boot, sizeof(boot)) == 0 &&
        strcmp(boot, r->id.node.boot_id) != 0)
        return GT_LIVE_CRASHED;
    int pid = r->id.pid;
    if (pid <= 0)
        return GT_LIVE_CRASHED;
    if (kill(pid, 0) != 0 && errno != EPERM)
        return GT_LIVE_CRASHED;

    int64_t tick = 0, started = proc_start_boot_ns(pid, &tick);
    if (started < 0)
        return GT_LIVE_UNKNOWN;
    /* The recorder's time is CLOCK_MONOTONIC, the process's CLOCK_BOOTTIME:
     * they differ by the time suspended since boot, which only grows, so
     * "started later" is certain beyond today's difference and a tick. */
    int64_t suspended = clock_ns(CLOCK_BOOTTIME) - clock_ns(CLOCK_MONOTONIC);
    if (suspended < 0)
        suspended = 0;
    if (started - suspended - tick > r->id.start_mono_ns)
        return GT_LIVE_CRASHED;

    struct stat st;
    if (r->from_archive || stat(r->source, &st) != 0)
        return GT_LIVE_UNKNOWN;
    return proc_holds_file(pid, st.st_dev, st.st_ino) == 1 ? GT_LIVE_LIVE : GT_LIVE_UNKNOWN;
}
