/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_sock_pressure.c — `make bench`: the sock transport under the
 * back-pressure NCCL puts on it when two ranks share one GPU, next to a
 * reference transport shaped like NCCL's own Socket on such a host (one TCP
 * socket per connection, no helper threads: each message is its size then
 * its payload, requests progressed strictly in order from test()), side by
 * side in one run.  sock has one mode (its retired alternatives, data
 * sockets, waiting for a writable socket and progress of everything, were
 * measured here beside it: docs/results/sock-history.md).
 *
 * The emulation: 8 slots per side (NCCL_STEPS).  A slot's data is produced
 * (sender) or consumed (receiver) only while that side's "GPU" has the time
 * slice; slices alternate between the two processes every BENCH_SLICE_US
 * on a clock both share (a comma list, default 300,1000,3000: which
 * transport wins depends on the slice length, so one length alone would
 * mislead).  The "proxy" (this loop) runs all the time, like NCCL's proxy
 * thread: it posts isend for produced slots and
 * irecv for consumed ones and test()s what is in flight.  So while the
 * receiver's GPU is away, its posted receives fill and the rest of the data
 * backs up in the socket buffers, and the sender's sends meet a full socket:
 * what the GPU machine's counters showed for sendrecv.
 *
 * Figures: MB/s, and CPU seconds per GB moved of each process (getrusage),
 * for 128 KiB (NCCL's p2p chunk) and 512 KiB (a collective's slice)
 * messages; BENCH_REPS (3) interleaved runs of BENCH_MB (128) MiB each: best
 * and median MB/s, median CPU, and the median of each run's ratio to the
 * reference run next to it.  Exit 0 when the runs complete; 1 on error.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plugin/sock/sock.h"
#include "plugin/sock/sock_internal.h"
#include "tests/bench/bench_util.h"

#define SLOTS 8
#define NSIZES 2
#define NCFG 2
static const size_t sizes[NSIZES] = {128 << 10, 512 << 10};
/* cfg 0 is the reference, cfg 1 sock. */
static const char *const cfg_names[NCFG] = {"reference (NCCL Socket's shape)", "sock"};

static const struct gt_net_ops *ops = &gt_sock_ops;

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
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

/* ---- the reference transport ------------------------------------------- */

struct ref_req {
    int used, sending, stage; /* stage 0: size, 1: payload, 2: done */
    uint64_t seq, hdr;
    size_t size, off;
    char *buf;
};

struct ref_comm {
    int fd;
    uint64_t next_seq;
    struct ref_req r[SLOTS];
};

/* One non-blocking step of a byte range; 1 when it is all through. */
static int ref_io(int fd, int sending, char *p, size_t len, size_t *off)
{
    while (*off < len) {
        ssize_t n = sending ? send(fd, p + *off, len - *off, MSG_DONTWAIT | MSG_NOSIGNAL)
                            : recv(fd, p + *off, len - *off, MSG_DONTWAIT);
        if (n > 0) {
            *off += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return 0;
        DIE("reference %s: %s", sending ? "send" : "recv", n ? strerror(errno) : "EOF");
    }
    return 1;
}

/* Every request in order; a request moves only once those before it are through. */
static void ref_progress(struct ref_comm *c)
{
    for (;;) {
        struct ref_req *q = NULL;
        for (int k = 0; k < SLOTS; k++)
            if (c->r[k].used && c->r[k].stage < 2 && (!q || c->r[k].seq < q->seq))
                q = &c->r[k];
        if (!q)
            return;
        if (q->stage == 0) {
            if (!ref_io(c->fd, q->sending, (char *)&q->hdr, sizeof(q->hdr), &q->off))
                return;
            if (!q->sending && q->hdr > q->size)
                DIE("reference: %llu-byte message into %zu", (unsigned long long)q->hdr, q->size);
            q->size = (size_t)q->hdr;
            q->stage = 1;
            q->off = 0;
        }
        if (!ref_io(c->fd, q->sending, q->buf, q->size, &q->off))
            return;
        q->stage = 2;
    }
}

static void *ref_post(struct ref_comm *c, int sending, void *buf, size_t size)
{
    for (int k = 0; k < SLOTS; k++)
        if (!c->r[k].used) {
            c->r[k] = (struct ref_req){.used = 1,
                                       .sending = sending,
                                       .seq = c->next_seq++,
                                       .hdr = size,
                                       .size = size,
                                       .buf = buf};
            return &c->r[k];
        }
    return NULL;
}

static int ref_test(struct ref_comm *c, struct ref_req *q)
{
    ref_progress(c);
    if (q->stage < 2)
        return 0;
    q->used = 0;
    return 1;
}

/* A connected TCP socket from the child to the parent, on loopback. */
static int ref_pair(int child, int rd, int wr)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    int fd, one = 1;
    if (!child) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        if (l < 0 || bind(l, (struct sockaddr *)&a, al) || listen(l, 1) ||
            getsockname(l, (struct sockaddr *)&a, &al))
            DIE("reference listen: %s", strerror(errno));
        xwrite(wr, &a, sizeof(a));
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        xread(rd, &a, sizeof(a));
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, al) != 0)
            DIE("reference connect: %s", strerror(errno));
    }
    if (fd < 0)
        DIE("reference socket: %s", strerror(errno));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* ---- the emulated NCCL pipeline ------------------------------------------ */

enum { S_FREE, S_READY, S_POSTED, S_DONE };

/* Either transport behind one face: ref != NULL selects the reference. */
static void *post(struct ref_comm *ref, void *comm, int sending, void *b, size_t size)
{
    if (ref)
        return ref_post(ref, sending, b, size);
    void *r = NULL;
    int tag = 0;
    size_t sz = size;
    gt_result rc = sending ? ops->isend(comm, b, size, 0, NULL, NULL, &r)
                           : ops->irecv(comm, 1, &b, &sz, &tag, NULL, NULL, &r);
    if (rc != GT_OK)
        DIE("%s failed", sending ? "isend" : "irecv");
    return r;
}

static int tested(struct ref_comm *ref, void *req)
{
    if (ref)
        return ref_test(ref, req);
    int done = 0;
    if (ops->test(req, &done, NULL) != GT_OK)
        DIE("test failed");
    return done;
}

/* The stream of one run; returns seconds from the first message to the last. */
static double run(struct ref_comm *ref, void *comm, int sending, char **bufs, size_t size,
                  int count, double epoch, double slice)
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
            void *r = post(ref, comm, sending, bufs[next_post], size);
            if (r) {
                req[next_post] = r;
                state[next_post] = S_POSTED;
                posted++;
                next_post = (next_post + 1) % SLOTS;
            }
        }
        if (state[next_test] == S_POSTED) {
            if (tested(ref, req[next_test])) {
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

/* One table: every size and configuration, `reps` interleaved runs each. */
static void measure(int child, int rd, int wr, char **bufs, long mb, int reps, double slice)
{
    double mbs[NSIZES][NCFG][32], cpu_tx[NSIZES][NCFG][32], cpu_rx[NSIZES][NCFG][32];
    for (int r = 0; r < reps; r++)
        for (int s = 0; s < NSIZES; s++)
            for (int g = 0; g < NCFG; g++) {
                void *ctx = NULL, *comm = NULL;
                struct ref_comm ref = {.fd = -1};
                if (g > 0) {
                    /* A fresh context per run, as a new NCCL communicator has. */
                    if (ops->init(&ctx, 0, 0, NULL, NULL, NULL) != GT_OK)
                        DIE("sock init failed");
                    comm = pair(ctx, child, rd, wr);
                } else {
                    ref.fd = ref_pair(child, rd, wr);
                }
                int count = (int)(((size_t)mb << 20) / sizes[s]);
                double epoch;
                if (!child) {
                    epoch = now_s(); /* CLOCK_MONOTONIC is system-wide: one epoch */
                    xwrite(wr, &epoch, sizeof(epoch));
                } else {
                    xread(rd, &epoch, sizeof(epoch));
                }
                double c0 = cpu_s();
                double t =
                    run(comm ? NULL : &ref, comm, child, bufs, sizes[s], count, epoch, slice);
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
                if (comm) {
                    if (child)
                        ops->close_send(comm);
                    else
                        ops->close_recv(comm);
                    ops->finalize(ctx);
                } else {
                    close(ref.fd);
                }
                /* Both sides end the run before the next one connects. */
                char go = 0;
                if (child)
                    xwrite(wr, &go, 1);
                else
                    xread(rd, &go, 1);
            }
    if (!child) {
        printf("under back-pressure (GPU slices of %.0f us alternating between the two "
               "processes), %d runs of %ld MiB\n",
               slice * 1e6, reps, mb);
        printf("%9s %-32s %7s %7s %9s %11s %11s\n", "size", "transport", "best", "median", "median",
               "sender CPU", "recv CPU");
        printf("%9s %-32s %7s %7s %9s %11s %11s\n", "", "", "MB/s", "MB/s", "/ ref", "s per GB",
               "s per GB");
        for (int s = 0; s < NSIZES; s++)
            for (int g = 0; g < NCFG; g++) {
                double best = 0, ratio[32];
                for (int r = 0; r < reps; r++) {
                    best = mbs[s][g][r] > best ? mbs[s][g][r] : best;
                    ratio[r] = mbs[s][g][r] / mbs[s][0][r];
                }
                printf("%5zu KiB %-32s %7.0f %7.0f %9.2f %11.3f %11.3f\n", sizes[s] >> 10,
                       cfg_names[g], best, median(mbs[s][g], reps), median(ratio, reps),
                       median(cpu_tx[s][g], reps), median(cpu_rx[s][g], reps));
            }
        fflush(stdout);
    }
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    setenv("GDRTRACE_SOCKET_IFNAME", "lo", 0);
    long mb = getenv("BENCH_MB") ? atol(getenv("BENCH_MB")) : 128;
    int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 3;
    const char *sl = getenv("BENCH_SLICE_US") ? getenv("BENCH_SLICE_US") : "300,1000,3000";
    double slices[8];
    int nslices = 0;
    for (const char *q = sl; *q && nslices < 8;) {
        char *end;
        double us = strtod(q, &end);
        if (end == q || us <= 0)
            DIE("BENCH_SLICE_US: '%s' is not a comma list of positive microseconds", sl);
        slices[nslices++] = us * 1e-6;
        q = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            DIE("BENCH_SLICE_US: '%s' is not a comma list of positive microseconds", sl);
    }
    if (mb < 1 || reps < 1 || reps > 32)
        DIE("BENCH_MB and BENCH_REPS (1..32) must be positive");
    pid_t pid;
    int rd, wr;
    int child = fork_pair(&pid, &rd, &wr);
    char *bufs[SLOTS];
    for (int k = 0; k < SLOTS; k++) {
        bufs[k] = malloc(sizes[NSIZES - 1]);
        if (!bufs[k])
            DIE("out of memory");
        memset(bufs[k], k, sizes[NSIZES - 1]);
    }
    for (int i = 0; i < nslices; i++)
        measure(child, rd, wr, bufs, mb, reps, slices[i]);
    for (int k = 0; k < SLOTS; k++)
        free(bufs[k]);
    return join_pair(child, pid);
}
