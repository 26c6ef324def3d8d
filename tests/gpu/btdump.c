// SPDX-License-Identifier: Apache-2.0
/*
 * btdump.c — an LD_PRELOAD helper for the GPU machine (which has no gdb):
 * on SIGRTMIN+3 the receiving thread appends its native backtrace to
 * $GT_BTDUMP_DIR/bt.<pid>.txt, so a stalled job's threads can be read one by
 * one (tests/gpu/ddp-hang.sh sends the signal to each thread with tgkill).
 *
 * Invariant: the handler uses only open/write/close and backtrace (whose
 * unwinder is loaded in the constructor, so the handler never dlopens); it
 * restores errno.  CI never builds or runs it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static char path[512];

static void put(int fd, const char *s)
{
    ssize_t r = write(fd, s, strlen(s));
    (void)r;
}

static void utoa(unsigned long v, char *buf)
{
    char t[24];
    int n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++)
        buf[i] = t[n - 1 - i];
    buf[n] = 0;
}

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        void *frames[64];
        int n = backtrace(frames, 64);
        char num[24];
        char name[32] = "?";
        utoa((unsigned long)syscall(SYS_gettid), num);
        put(fd, "=== tid ");
        put(fd, num);
        int cf = -1;
        char cpath[64] = "/proc/self/task/";
        strcat(cpath, num);
        strcat(cpath, "/comm");
        if ((cf = open(cpath, O_RDONLY)) >= 0) {
            ssize_t k = read(cf, name, sizeof(name) - 1);
            name[k > 0 ? k : 0] = 0;
            close(cf);
        }
        put(fd, " ");
        put(fd, name);
        backtrace_symbols_fd(frames, n, fd);
        close(fd);
    }
    errno = saved;
}

__attribute__((constructor)) static void btdump_init(void)
{
    const char *dir = getenv("GT_BTDUMP_DIR");
    if (!dir)
        return;
    snprintf(path, sizeof(path), "%s/bt.%ld.txt", dir, (long)getpid());
    void *warm[2];
    backtrace(warm, 2); /* loads the unwinder now, not in the handler */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGRTMIN + 3, &sa, NULL);
}
