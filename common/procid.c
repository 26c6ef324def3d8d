/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procid.c — a process's namespaces and start time from /proc (procid.h).
 * Shared by the writer (shim/recorder.c) and the reader's liveness judgement,
 * so both read the same fields the same way.
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

int64_t gt_proc_start_ticks(int pid)
{
    char path[64], buf[2048];
    if (pid > 0)
        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    else
        snprintf(path, sizeof(path), "/proc/self/stat");
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
    if (errno || end == p + 1 || ticks > (unsigned long long)INT64_MAX)
        return -1;
    return (int64_t)ticks;
}
