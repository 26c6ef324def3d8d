/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procid.c — a process's namespaces and start time from /proc (procid.h).
 * Shared by the writer (shim/recorder.c) and the reader's liveness judgement,
 * so both read the same fields the same way; also the CPU time of the
 * helper process (the copier) the host-pressure sampler adds to the process's.
 */
#include "common/procid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void gt_proc_ns(const char *name, uint64_t *dev, uint64_t *ino)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
    *dev = *ino = 0;
    if (stat(path, &st) == 0 && st.st_ino != 0) {
        *dev = (uint64_t)st.st_dev;
        *ino = (uint64_t)st.st_ino;
    }
}

static int helper_pid;

void gt_helper_pid_set(int pid)
{
    __atomic_store_n(&helper_pid, pid, __ATOMIC_RELEASE);
}

int gt_helper_pid(void)
{
    return __atomic_load_n(&helper_pid, __ATOMIC_ACQUIRE);
}

/* Field `want` (>= 3) of /proc/<pid>/stat (pid <= 0: this process) as an
 * unsigned number, after the last ')' (comm, field 2, is in parentheses and
 * may hold spaces and ')').  snprintf/strtoull only: no allocation. */
static int stat_fields(int pid, const int *want, unsigned long long *out, int n)
{
    char path[64], buf[2048];
    if (pid > 0)
        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    else
        snprintf(path, sizeof(path), "/proc/self/stat");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (got <= 0)
        return -1;
    buf[got] = 0;
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    p++;
    int field = 3; /* p is at the space before field `field` */
    for (int i = 0; i < n; i++) {
        for (; field < want[i]; field++) {
            p = strchr(p + 1, ' ');
            if (!p)
                return -1;
        }
        char *end;
        errno = 0;
        out[i] = strtoull(p + 1, &end, 10);
        if (errno || end == p + 1)
            return -1;
    }
    return 0;
}

int64_t gt_proc_start_ticks(int pid)
{
    static const int want[] = {22};
    unsigned long long ticks;
    if (stat_fields(pid, want, &ticks, 1) || ticks > (unsigned long long)INT64_MAX)
        return -1;
    return (int64_t)ticks;
}

int gt_proc_cpu_ns(int pid, uint64_t *utime_ns, uint64_t *stime_ns)
{
    static const int want[] = {14, 15};
    unsigned long long t[2];
    long hz = sysconf(_SC_CLK_TCK); /* from the auxiliary vector: no system call */
    if (hz <= 0 || stat_fields(pid, want, t, 2))
        return -1;
    *utime_ns = (uint64_t)(t[0] * (1000000000ull / (unsigned long long)hz));
    *stime_ns = (uint64_t)(t[1] * (1000000000ull / (unsigned long long)hz));
    return 0;
}
