// SPDX-License-Identifier: Apache-2.0
/*
 * nccl_check.c — real NCCL, two "nodes" on one GPU: every collective checked
 * and timed, for the GPU-machine runbook (tests/gpu/run-all.sh).
 *
 * What it checks: all_reduce, all_gather, reduce_scatter, broadcast and
 * send/recv, out of place, float32, over message sizes from -b to -e bytes
 * (growing by -f), each result compared element by element on the host with
 * the value it must have.  It prints one parseable line per (op, size):
 *
 *   RESULT op=<op> bytes=<n> iters=<n> time_us=<per iter> algbw_GBps=<x>
 *          busbw_GBps=<x> errors=<n> check=OK|FAIL avg_time_us=<x>
 *          busbw_avg_GBps=<x> busbw_slowest_GBps=<x>
 *
 * time_us/algbw/busbw are rank 0's own clock (GPU events around the timed
 * loop); the avg_* figures use the mean of every rank's time, as nccl-tests
 * reports by default, and busbw_slowest the slowest rank's.
 *
 * and exits 0 only if every check of every rank passed (1 otherwise, 77 when
 * there is no GPU).
 *
 * How it runs: the parent forks -n ranks before anything touches CUDA or NCCL
 * (a CUDA context does not survive fork).  Each child sets NCCL_HOSTID to a
 * value of its own unless GT_SAME_HOSTID=1 — NCCL then treats the ranks as
 * separate hosts and connects them through the NET transport (the plugin
 * under test) even though they share the one GPU.  Rank 0 writes the
 * ncclUniqueId to a file (write + rename, so the others never read half of
 * it); the others poll for it.
 *
 * Invariants: element values are small integers (|v| < 2^12), so every float
 * sum over ≤ 64 ranks is exact and the check is equality, not a tolerance.
 * The counts of errors seen by each rank are summed through NCCL itself so
 * rank 0 can print one verdict per line; if that sum cannot be made the
 * process fails anyway.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nccl.h>

#define CUDA_OK(call)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "rank %d: %s failed: %s (%s:%d)\n", g_rank, #call,                     \
                    cudaGetErrorString(e_), __FILE__, __LINE__);                                   \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

#define NCCL_OK(call)                                                                              \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != ncclSuccess) {                                                                   \
            fprintf(stderr, "rank %d: %s failed: %s (%s:%d)\n", g_rank, #call,                     \
                    ncclGetErrorString(r_), __FILE__, __LINE__);                                   \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

enum op { OP_ALL_REDUCE, OP_ALL_GATHER, OP_REDUCE_SCATTER, OP_BROADCAST, OP_SENDRECV, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"all_reduce", "all_gather", "reduce_scatter",
                                               "broadcast", "sendrecv"};

struct opts {
    int nranks;
    size_t min_bytes, max_bytes;
    int factor;
    unsigned ops; /* bit per enum op */
    int device;
    double iter_scale;
    const char *idfile;
};

static int g_rank = -1;

/* The value rank r contributes at element i.  Small integers: sums are exact. */
static inline float val(int r, size_t i)
{
    return (float)((int)((i * 7u + (size_t)r * 13u) % 251u) - 100 + r);
}

static size_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return 0;
    switch (*end) {
    case 'K':
    case 'k':
        v <<= 10;
        break;
    case 'M':
    case 'm':
        v <<= 20;
        break;
    case 'G':
    case 'g':
        v <<= 30;
        break;
    case '\0':
        break;
    default:
        return 0;
    }
    return (size_t)v;
}

/* Iterations per size: many at small sizes (latency), few at large ones so a
 * 1 GiB run over TCP stays within seconds.  -s scales them. */
static int iters_for(size_t bytes, double scale)
{
    int n;
    if (bytes <= (1u << 20))
        n = 20;
    else if (bytes <= (32u << 20))
        n = 10;
    else if (bytes <= (128u << 20))
        n = 5;
    else if (bytes <= (512u << 20))
        n = 3;
    else
        n = 2;
    n = (int)(n * scale + 0.5);
    return n < 1 ? 1 : n;
}

/* The size after `b`: grown by the factor, but the sweep always ends on max
 * itself (8 B * 4^k never hits 1 GiB); 0 once max has been done. */
static size_t next_size(size_t b, const struct opts *o)
{
    if (b >= o->max_bytes)
        return 0;
    return b > o->max_bytes / (size_t)o->factor ? o->max_bytes : b * (size_t)o->factor;
}

static double bus_factor(enum op op, int n)
{
    switch (op) {
    case OP_ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case OP_ALL_GATHER:
    case OP_REDUCE_SCATTER:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

/*
 * Buffer sizes follow nccl-tests: `bytes` is the total — the recv buffer for
 * all_gather, the send buffer for reduce_scatter, the message for the others.
 */
static ncclResult_t launch(enum op op, ncclComm_t comm, int rank, int n, const float *sbuf,
                           float *rbuf, size_t count, cudaStream_t st)
{
    ncclResult_t r = ncclSuccess;
    switch (op) {
    case OP_ALL_REDUCE:
        return ncclAllReduce(sbuf, rbuf, count, ncclFloat, ncclSum, comm, st);
    case OP_ALL_GATHER:
        return ncclAllGather(sbuf, rbuf, count / n, ncclFloat, comm, st);
    case OP_REDUCE_SCATTER:
        return ncclReduceScatter(sbuf, rbuf, count / n, ncclFloat, ncclSum, comm, st);
    case OP_BROADCAST:
        return ncclBroadcast(sbuf, rbuf, count, ncclFloat, 0, comm, st);
    case OP_SENDRECV: {
        /* A ring: send to rank+1, receive from rank-1 (for 2 ranks: exchange). */
        int to = (rank + 1) % n, from = (rank - 1 + n) % n;
        if ((r = ncclGroupStart()) != ncclSuccess)
            return r;
        r = ncclSend(sbuf, count, ncclFloat, to, comm, st);
        if (r == ncclSuccess)
            r = ncclRecv(rbuf, count, ncclFloat, from, comm, st);
        ncclResult_t r2 = ncclGroupEnd();
        return r != ncclSuccess ? r : r2;
    }
    default:
        return ncclInvalidArgument;
    }
}

/* Fills the send buffer's host image for `op`. */
static void fill(enum op op, int rank, int n, float *h, size_t count)
{
    size_t send_count = op == OP_ALL_GATHER ? count / n : count;
    size_t base = op == OP_ALL_GATHER ? (size_t)rank * send_count : 0;
    for (size_t i = 0; i < send_count; i++)
        h[i] = val(rank, base + i);
}

/* Counts the elements of the result that differ from what they must be. */
static uint64_t check(enum op op, int rank, int n, const float *h, size_t count)
{
    uint64_t bad = 0;
    size_t shown = 0;
    size_t rcount = op == OP_REDUCE_SCATTER ? count / n : count;
    size_t base = op == OP_REDUCE_SCATTER ? (size_t)rank * rcount : 0;
    int from = (rank - 1 + n) % n;
    for (size_t i = 0; i < rcount; i++) {
        float want = 0;
        size_t gi = base + i;
        switch (op) {
        case OP_ALL_REDUCE:
        case OP_REDUCE_SCATTER:
            for (int r = 0; r < n; r++)
                want += val(r, gi);
            break;
        case OP_ALL_GATHER:
            want = val((int)(gi / (count / n)), gi);
            break;
        case OP_BROADCAST:
            want = val(0, gi);
            break;
        case OP_SENDRECV:
            want = val(from, gi);
            break;
        default:
            break;
        }
        if (h[i] != want) {
            if (shown++ < 4)
                fprintf(stderr, "rank %d: %s count %zu: element %zu is %g, must be %g\n", rank,
                        op_names[op], count, i, (double)h[i], (double)want);
            bad++;
        }
    }
    return bad;
}

static int write_id(const char *path, const ncclUniqueId *id)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        fprintf(stderr, "rank 0: cannot create %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    if (fwrite(id, sizeof(*id), 1, f) != 1 || fclose(f) != 0) {
        fprintf(stderr, "rank 0: cannot write %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "rank 0: cannot rename %s to %s: %s\n", tmp, path, strerror(errno));
        return -1;
    }
    return 0;
}

static int read_id(const char *path, ncclUniqueId *id, int rank)
{
    for (int tries = 0; tries < 1200; tries++) { /* 60 s */
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t got = fread(id, sizeof(*id), 1, f);
            fclose(f);
            if (got == 1)
                return 0;
        }
        usleep(50 * 1000);
    }
    fprintf(stderr, "rank %d: no ncclUniqueId in %s after 60 s\n", rank, path);
    return -1;
}

static int run_rank(const struct opts *o, int rank)
{
    int rc = 1;
    int n = o->nranks;
    ncclComm_t comm = NULL;
    cudaStream_t st = NULL;
    cudaEvent_t ev0 = NULL, ev1 = NULL;
    float *dsend = NULL, *drecv = NULL, *hbuf = NULL;
    int *derr = NULL;
    float *dtime = NULL; /* [0] sum, [1] max of the ranks' timed-loop ms */
    uint64_t total_bad = 0;
    ncclUniqueId id;

    g_rank = rank;
    if (!getenv("GT_SAME_HOSTID") || strcmp(getenv("GT_SAME_HOSTID"), "1") != 0) {
        char host[64];
        snprintf(host, sizeof(host), "gdrtrace-node%d", rank);
        setenv("NCCL_HOSTID", host, 1);
    }

    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP: no CUDA device visible\n");
        return 77;
    }
    CUDA_OK(cudaSetDevice(o->device % ndev));

    if (rank == 0) {
        NCCL_OK(ncclGetUniqueId(&id));
        if (write_id(o->idfile, &id) != 0)
            goto fail;
    } else if (read_id(o->idfile, &id, rank) != 0) {
        goto fail;
    }

    size_t max_count = o->max_bytes / sizeof(float);
    CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CUDA_OK(cudaEventCreate(&ev0));
    CUDA_OK(cudaEventCreate(&ev1));
    CUDA_OK(cudaMalloc((void **)&dsend, o->max_bytes));
    CUDA_OK(cudaMalloc((void **)&drecv, o->max_bytes));
    CUDA_OK(cudaMalloc((void **)&derr, sizeof(int)));
    CUDA_OK(cudaMalloc((void **)&dtime, 2 * sizeof(float)));
    hbuf = malloc(o->max_bytes);
    if (!hbuf) {
        fprintf(stderr, "rank %d: cannot allocate %zu host bytes\n", rank, o->max_bytes);
        goto fail;
    }

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    NCCL_OK(ncclCommInitRank(&comm, n, id, rank));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rank == 0) {
        int v = 0;
        ncclGetVersion(&v);
        printf("# nccl_version=%d nranks=%d init_ms=%.1f\n", v, n,
               (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
        printf("# %-14s %12s %6s %12s %10s %10s %8s\n", "op", "bytes", "iters", "time_us", "algbw",
               "busbw", "check");
        fflush(stdout);
    }

    for (int op = 0; op < OP_COUNT; op++) {
        if (!(o->ops & (1u << op)))
            continue;
        for (size_t bytes = o->min_bytes; bytes; bytes = next_size(bytes, o)) {
            size_t count = bytes / sizeof(float);
            /* all_gather / reduce_scatter need a count divisible by n */
            if (op == OP_ALL_GATHER || op == OP_REDUCE_SCATTER)
                count -= count % (size_t)n;
            if (count == 0 || count > max_count)
                continue;
            size_t send_count = op == OP_ALL_GATHER ? count / n : count;
            size_t recv_count = op == OP_REDUCE_SCATTER ? count / n : count;
            int iters = iters_for(bytes, o->iter_scale);

            fill((enum op)op, rank, n, hbuf, count);
            CUDA_OK(cudaMemcpy(dsend, hbuf, send_count * sizeof(float), cudaMemcpyHostToDevice));
            /* A poisoned receive buffer: a collective that writes nothing fails. */
            CUDA_OK(cudaMemset(drecv, 0xff, recv_count * sizeof(float)));

            /* One untimed warm-up (connections, buffers), then a barrier (a
             * 1-int all_reduce) so every rank starts the timed loop together,
             * as nccl-tests does: without it the root of a broadcast can start
             * its clock while the receiver is still filling its host image. */
            NCCL_OK(launch((enum op)op, comm, rank, n, dsend, drecv, count, st));
            NCCL_OK(ncclAllReduce(derr, derr, 1, ncclInt, ncclSum, comm, st));
            CUDA_OK(cudaStreamSynchronize(st));
            CUDA_OK(cudaEventRecord(ev0, st));
            for (int it = 0; it < iters; it++)
                NCCL_OK(launch((enum op)op, comm, rank, n, dsend, drecv, count, st));
            CUDA_OK(cudaEventRecord(ev1, st));
            CUDA_OK(cudaStreamSynchronize(st));
            float ms = 0;
            CUDA_OK(cudaEventElapsedTime(&ms, ev0, ev1));

            CUDA_OK(cudaMemcpy(hbuf, drecv, recv_count * sizeof(float), cudaMemcpyDeviceToHost));
            uint64_t bad = check((enum op)op, rank, n, hbuf, count);
            total_bad += bad;

            /* Sum every rank's error count through NCCL so rank 0 can judge. */
            int mine = bad > INT_MAX / 64 ? INT_MAX / 64 : (int)bad, all = -1;
            CUDA_OK(cudaMemcpy(derr, &mine, sizeof(int), cudaMemcpyHostToDevice));
            NCCL_OK(ncclAllReduce(derr, derr, 1, ncclInt, ncclSum, comm, st));
            CUDA_OK(cudaStreamSynchronize(st));
            CUDA_OK(cudaMemcpy(&all, derr, sizeof(int), cudaMemcpyDeviceToHost));
            if (all != 0 && bad == 0)
                total_bad++; /* another rank's failure fails this one too */

            /* Every rank's time, summed and maximised through NCCL: nccl-tests
             * reports the mean over ranks (its default -a 1).  Rank 0's own time
             * stays the headline figure so older runs remain comparable; for a
             * broadcast it is the root's, which is released as soon as its data
             * is buffered, while the receiver finishes later. */
            float times[2] = {ms, ms}; /* [0] summed, [1] maximised over the ranks */
            CUDA_OK(cudaMemcpy(dtime, times, sizeof(times), cudaMemcpyHostToDevice));
            NCCL_OK(ncclAllReduce(dtime, dtime, 1, ncclFloat, ncclSum, comm, st));
            NCCL_OK(ncclAllReduce(dtime + 1, dtime + 1, 1, ncclFloat, ncclMax, comm, st));
            CUDA_OK(cudaStreamSynchronize(st));
            CUDA_OK(cudaMemcpy(times, dtime, sizeof(times), cudaMemcpyDeviceToHost));
            float tsum = times[0], tmax = times[1];

            if (rank == 0) {
                double us = ms * 1e3 / iters;
                double algbw = (double)(count * sizeof(float)) / (us * 1e3); /* GB/s */
                double avg_us = (double)tsum * 1e3 / n / iters;
                double max_us = (double)tmax * 1e3 / iters;
                double bytes_d = (double)(count * sizeof(float));
                double bf = bus_factor((enum op)op, n);
                printf("RESULT op=%s bytes=%zu iters=%d time_us=%.2f algbw_GBps=%.4f "
                       "busbw_GBps=%.4f errors=%d check=%s avg_time_us=%.2f "
                       "busbw_avg_GBps=%.4f busbw_slowest_GBps=%.4f\n",
                       op_names[op], count * sizeof(float), iters, us, algbw, algbw * bf, all,
                       all == 0 ? "OK" : "FAIL", avg_us, bytes_d / (avg_us * 1e3) * bf,
                       bytes_d / (max_us * 1e3) * bf);
                fflush(stdout);
            }
        }
    }
    rc = total_bad ? 1 : 0;
    if (rc)
        fprintf(stderr, "rank %d: %" PRIu64 " wrong elements or failed peers\n", rank, total_bad);
fail:
    if (comm) {
        if (rc == 0) {
            ncclResult_t fr = ncclCommFinalize(comm);
            if (fr != ncclSuccess) {
                fprintf(stderr, "rank %d: ncclCommFinalize failed: %s\n", rank,
                        ncclGetErrorString(fr));
                rc = 1;
            }
            ncclCommDestroy(comm);
        } else {
            ncclCommAbort(comm);
        }
    }
    free(hbuf);
    if (derr)
        cudaFree(derr);
    if (dtime)
        cudaFree(dtime);
    if (drecv)
        cudaFree(drecv);
    if (dsend)
        cudaFree(dsend);
    if (ev0)
        cudaEventDestroy(ev0);
    if (ev1)
        cudaEventDestroy(ev1);
    if (st)
        cudaStreamDestroy(st);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: nccl_check [-n ranks] [-b min] [-e max] [-f factor] [-o ops] [-s scale]\n"
               "                  [-d device] [-i idfile]\n"
               "  sizes take K/M/G; ops: comma list of all_reduce,all_gather,reduce_scatter,\n"
               "  broadcast,sendrecv or 'all'; -s scales the iteration counts.\n");
}

static int parse_ops(const char *s, unsigned *out)
{
    char buf[256];
    unsigned m = 0;
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = 0;
        if (!strcmp(t, "all")) {
            m |= (1u << OP_COUNT) - 1;
            continue;
        }
        for (int i = 0; i < OP_COUNT; i++)
            if (!strcmp(t, op_names[i])) {
                m |= 1u << i;
                found = 1;
            }
        if (!found) {
            fprintf(stderr, "nccl_check: unknown op '%s'\n", t);
            return -1;
        }
    }
    *out = m;
    return m ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct opts o = {.nranks = 2,
                     .min_bytes = 8,
                     .max_bytes = 1u << 30,
                     .factor = 4,
                     .ops = (1u << OP_COUNT) - 1,
                     .device = 0,
                     .iter_scale = 1.0};
    char idpath[PATH_MAX];
    int c;
    while ((c = getopt(argc, argv, "n:b:e:f:o:s:d:i:h")) != -1) {
        switch (c) {
        case 'n':
            o.nranks = atoi(optarg);
            break;
        case 'b':
            o.min_bytes = parse_size(optarg);
            break;
        case 'e':
            o.max_bytes = parse_size(optarg);
            break;
        case 'f':
            o.factor = atoi(optarg);
            break;
        case 'o':
            if (parse_ops(optarg, &o.ops) != 0)
                return 2;
            break;
        case 's':
            o.iter_scale = atof(optarg);
            break;
        case 'd':
            o.device = atoi(optarg);
            break;
        case 'i':
            o.idfile = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (o.nranks < 1 || o.nranks > 64 || o.min_bytes < sizeof(float) || o.max_bytes < o.min_bytes ||
        o.factor < 2 || o.iter_scale <= 0) {
        fprintf(stderr, "nccl_check: bad arguments (need 1<=n<=64, 4<=min<=max, factor>=2)\n");
        usage(stderr);
        return 2;
    }
    if (!o.idfile) {
        snprintf(idpath, sizeof(idpath), "/tmp/nccl_check.%d.id", (int)getpid());
        o.idfile = idpath;
    }
    unlink(o.idfile);

    pid_t pids[64];
    for (int r = 0; r < o.nranks; r++) {
        pids[r] = fork();
        if (pids[r] < 0) {
            fprintf(stderr, "nccl_check: fork: %s\n", strerror(errno));
            return 1;
        }
        if (pids[r] == 0) {
            fflush(stdout);
            _exit(run_rank(&o, r));
        }
    }
    int failed = 0, skipped = 0;
    for (int r = 0; r < o.nranks; r++) {
        int status = 0;
        if (waitpid(pids[r], &status, 0) < 0) {
            fprintf(stderr, "nccl_check: waitpid rank %d: %s\n", r, strerror(errno));
            failed = 1;
            continue;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
            skipped = 1;
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "nccl_check: rank %d %s %d\n", r,
                    WIFEXITED(status) ? "exited with" : "killed by signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            failed = 1;
        }
    }
    unlink(o.idfile);
    if (failed) {
        printf("FAIL: at least one rank failed (see stderr)\n");
        return 1;
    }
    if (skipped) {
        printf("SKIP: no CUDA device visible\n");
        return 77;
    }
    printf("PASS: every result of every rank matched\n");
    return 0;
}
