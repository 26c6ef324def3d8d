/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_sock_pressure.c — `make bench`: the sock transport under the
 * back-pressure NCCL puts on it when two ranks share one GPU, with a full
 * data socket retried at once (GDRTRACE_SOCKET_POLL_WRITABLE=0) and waited
 * for until poll() calls it writable (=1), side by side in one run.
 *
 * The emulation: 8 slots per side (NCCL_STEPS).  A slot's data is produced
 * (sender) or consumed (receiver) only while that side's "GPU" has the time
 * slice; slices alternate between the two processes every BENCH_SLICE_US
 * (default 1000) on a clock both share.  The "proxy" (this loop) runs all the
 * time, like NCCL's proxy thread: it posts isend for produced slots and
 * irecv for consumed ones and test()s what is in flight.  So while the
 * receiver's GPU is away, its posted receives fill and the rest of the data
 * backs up in the socket buffers, and the sender's sends meet a full socket:
 * what the GPU machine's counters showed for sendrecv.
 *
 * Figures: MB/s, and CPU seconds per GB moved of each process (getrusage),
 * for 128 KiB (NCCL's p2p chunk) and 512 KiB (a collective's slice)
 * messages; BENCH_REPS (3) interleaved runs of BENCH_MB (128) MiB each, best
 * MB/s and median CPU.  Exit 0 when the runs complete; 1 on error.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plugin/sock/sock.h"
#include "plugin/sock/sock_internal.h"

#define SLOTS 8
#define NSIZES 2
#define NCFG 2
static const size_t sizes[NSIZES] = {128 << 10, 512 << 10};
static const char *const gate_env[NCFG] = {"0", "1"};

static const struct gt_net_ops *ops = &gt_sock_ops;

#define DIE(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "bench_sock_pressure: " __VA_ARGS__);                                      \
        fprintf(stderr, "\n");                                                                     \
        exit(1);                                                                                   \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static void xwrite(int fd, const void *b, size_t n)
{
    if (write(fd, b, n) != (ssize_t)n)
        DIE("pipe write: %s", strerror(errno));
}

static void xread(int fd, void *b, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)b + got, n - got);
        if (r <= 0)
            DIE("pipe read: %s", r ? strerror(errno) : "EOF");
        got += (size_t)r;
    }
}

/* One connection from the child (sender) to the parent (receiver). */
static void *pair(void *ctx, int child, int rd, int wr)
{
    char h[GT_NET_HANDLE_MAXSIZE];
    void *lc = NULL, *comm = NULL;
    if (!child) {
        if (ops->listen(ctx, 0, h, &lc) != GT_OK)
            DIE("listen failed");
        xwrite(wr, h, sizeof(h));
    } else {
        xread(rd, h, sizeof(h));
    }
    double t0 = now_s();
    while (!comm) {
        gt_result r = child ? ops->connect(ctx, 0, h, &comm, NULL) : ops->accept(lc, &comm, NULL);
        if (r != GT_OK)
            DIE("%s failed", child ? "connect" : "accept");
        if (now_s() - t0 > 20)
            DIE("connect/accept timed out");
    }
    if (lc)
        ops->close_listen(lc);
    return comm;
}

enum { S_FREE, S_READY, S_POSTED, S_DONE };

/* The stream of one run; returns seconds from the first message to the last. */
static double run(void *comm, int sending, char **bufs, size_t size, int count, double epoch,
                  double slice)
{
    int state[SLOTS], produced = 0, posted = 0, finished = 0;
    void *req[SLOTS] = {0};
    for (int k = 0; k < SLOTS; k++)
        state[k] = sending ? S_FREE : S_READY; /* a receiver's free slot may be posted */
    double t0 = now_s();
    int next_post = 0, next_test = 0, next_gpu = 0;
    while (finished < count) {
        /* The GPU, in its slice: the sender fills free slots, the receiver
         * drains completed ones; both in slot order, like NCCL's kernels. */
        int mine = ((long)((now_s() - epoch) / slice) & 1) == (sending ? 0 : 1);
        while (mine && state[next_gpu] == (sending ? S_FREE : S_DONE) &&
               (sending ? produced < count : 1)) {
            state[next_gpu] = S_READY;
            produced += sending;
            if (!sending)
                finished++;
            next_gpu = (next_gpu + 1) % SLOTS;
        }
        /* The proxy: post what is ready, test the oldest in flight. */
        if (state[next_post] == S_READY && posted < count) {
            void *r = NULL;
            int tag = 0;
            size_t sz = size;
            void *b = bufs[next_post];
            gt_result rc = sending ? ops->isend(comm, b, size, 0, NULL, NULL, &r)
                                   : ops->irecv(comm, 1, &b, &sz, &tag, NULL, NULL, &r);
            if (rc != GT_OK)
                DIE("%s failed", sending ? "isend" : "irecv");
            if (r) {
                req[next_post] = r;
                state[next_post] = S_POSTED;
                posted++;
                next_post = (next_post + 1) % SLOTS;
            }
        }
        if (state[next_test] == S_POSTED) {
            int done = 0;
            if (ops->test(req[next_test], &done, NULL) != GT_OK)
                DIE("test failed");
            if (done) {
                state[next_test] = sending ? S_FREE : S_DONE;
                finished += sending;
                next_test = (next_test + 1) % SLOTS;
                continue;
            }
        }
        sched_yield(); /* nothing moved: idle, as NCCL's proxy would be */
    }
    return now_s() - t0;
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    setenv("GDRTRACE_SOCKET_IFNAME", "lo", 0);
    long mb = getenv("BENCH_MB") ? atol(getenv("BENCH_MB")) : 128;
    int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 3;
    double slice = (getenv("BENCH_SLICE_US") ? atof(getenv("BENCH_SLICE_US")) : 1000) * 1e-6;
    if (mb < 1 || reps < 1 || reps > 32 || slice <= 0)
        DIE("BENCH_MB, BENCH_REPS (1..32) and BENCH_SLICE_US must be positive");
    int p2c[2], c2p[2];
    if (pipe(p2c) || pipe(c2p))
        DIE("pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        DIE("fork: %s", strerror(errno));
    int child = pid == 0;
    int rd = child ? p2c[0] : c2p[0], wr = child ? c2p[1] : p2c[1];
    char *bufs[SLOTS];
    for (int k = 0; k < SLOTS; k++) {
        bufs[k] = malloc(sizes[NSIZES - 1]);
        if (!bufs[k])
            DIE("out of memory");
        memset(bufs[k], k, sizes[NSIZES - 1]);
    }
    double mbs[NSIZES][NCFG][32], cpu_tx[NSIZES][NCFG][32], cpu_rx[NSIZES][NCFG][32];
    for (int r = 0; r < reps; r++)
        for (int s = 0; s < NSIZES; s++)
            for (int g = 0; g < NCFG; g++) {
                /* The setting is read at the first init: a fresh context per run. */
                setenv("GDRTRACE_SOCKET_POLL_WRITABLE", gate_env[g], 1);
                void *ctx;
                if (ops->init(&ctx, 0, 0, NULL, NULL, NULL) != GT_OK)
                    DIE("sock init failed");
                void *comm = pair(ctx, child, rd, wr);
                int count = (int)(((size_t)mb << 20) / sizes[s]);
                double epoch;
                if (!child) {
                    epoch = now_s(); /* CLOCK_MONOTONIC is system-wide: one epoch */
                    xwrite(wr, &epoch, sizeof(epoch));
                } else {
                    xread(rd, &epoch, sizeof(epoch));
                }
                double c0 = cpu_s();
                double t = run(comm, child, bufs, sizes[s], count, epoch, slice);
                double c = cpu_s() - c0;
                double gb = (double)sizes[s] * count / 1e9;
                if (child) {
                    xwrite(wr, &c, sizeof(c));
                } else {
                    double ct;
                    xread(rd, &ct, sizeof(ct));
                    mbs[s][g][r] = (double)sizes[s] * count / t / 1e6;
                    cpu_tx[s][g][r] = ct / gb;
                    cpu_rx[s][g][r] = c / gb;
                }
                if (child)
                    ops->close_send(comm);
                else
                    ops->close_recv(comm);
                ops->finalize(ctx);
            }
    if (!child) {
        printf("sock under back-pressure (GPU slices of %.0f us alternating between the two "
               "processes), %d runs of %ld MiB\n",
               slice * 1e6, reps, mb);
        printf("%9s %22s %8s %10s %14s %14s\n", "size", "GDRTRACE_SOCKET_POLL_", "best", "median",
               "sender CPU", "receiver CPU");
        printf("%9s %22s %8s %10s %14s %14s\n", "", "WRITABLE", "MB/s", "MB/s", "s per GB",
               "s per GB");
        for (int s = 0; s < NSIZES; s++)
            for (int g = 0; g < NCFG; g++) {
                double best = 0;
                for (int r = 0; r < reps; r++)
                    best = mbs[s][g][r] > best ? mbs[s][g][r] : best;
                printf("%5zu KiB %22s %8.0f %10.0f %14.3f %14.3f\n", sizes[s] >> 10, gate_env[g],
                       best, median(mbs[s][g], reps), median(cpu_tx[s][g], reps),
                       median(cpu_rx[s][g], reps));
            }
        fflush(stdout);
    }
    for (int k = 0; k < SLOTS; k++)
        free(bufs[k]);
    if (child)
        _exit(0);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
