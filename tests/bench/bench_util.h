/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_util.h — what the two-process benchmarks (bench_sock, bench_rec_bw,
 * bench_sock_pressure) share: a monotonic clock, dying with a message that
 * names the program, whole reads and writes on the pipes the parent and the
 * child coordinate over, and a median.  Header-only (static inline): each
 * bench is one program built from its own file.
 */
#ifndef GDRTRACE_BENCH_UTIL_H
#define GDRTRACE_BENCH_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DIE(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "%s: ", program_invocation_short_name);                                    \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        exit(1);                                                                                   \
    } while (0)

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline void xwrite(int fd, const void *b, size_t n)
{
    if (write(fd, b, n) != (ssize_t)n)
        DIE("pipe write: %s", strerror(errno));
}

static inline void xread(int fd, void *b, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)b + got, n - got);
        if (r <= 0)
            DIE("pipe read: %s", r ? strerror(errno) : "EOF");
        got += (size_t)r;
    }
}

/* Forks the bench's two processes with a pipe each way; returns 1 in the
 * child, 0 in the parent, and this process's ends of the pipes in rd/wr.
 * The pid of the child is in *pid (parent). */
static inline int fork_pair(pid_t *pid, int *rd, int *wr)
{
    int p2c[2], c2p[2];
    if (pipe(p2c) || pipe(c2p))
        DIE("pipe: %s", strerror(errno));
    *pid = fork();
    if (*pid < 0)
        DIE("fork: %s", strerror(errno));
    int child = *pid == 0;
    *rd = child ? p2c[0] : c2p[0];
    *wr = child ? c2p[1] : p2c[1];
    return child;
}

/* Ends fork_pair's two processes: the child exits 0; the parent waits for it
 * and returns 0 if it exited 0, 1 otherwise. */
static inline int join_pair(int child, pid_t pid)
{
    if (child)
        _exit(0);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

/* Sorts v[0..n) in place (n is small: insertion sort) and returns its median. */
static inline double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
