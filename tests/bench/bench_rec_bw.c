/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_rec_bw.c — `make bench`: sock bandwidth at 4 MiB with the recorder
 * on (the sock transport wrapped by the shim, as plugin/core does) versus
 * off (the bare transport, what GDRTRACE_DISABLE=1 gives), in the same two
 * processes, over connections set up side by side.  Runs are grouped in
 * blocks of BLOCK runs per variant, interleaved; a block's ratio is its best
 * "on" run over its best "off" run (best-of: the least disturbed run on a
 * machine shared with other jobs), and the median block ratio is the figure
 * checked against the >= 0.99 target.
 *
 * The child sends, the parent receives and times; buffers are registered
 * through reg_mr like NCCL does, BENCH_WINDOW (8, NCCL_STEPS) requests stay
 * in flight, the waiting side yields between test()s.  Finally the recorder's own counters
 * are checked against the messages sent, so "on" really recorded.
 *
 * Env: GDRTRACE_SOCKET_IFNAME (default here: lo), GDRTRACE_DIR (recorders
 * are created there and removed at the end), BENCH_MB (MiB per run, default
 * 64), BENCH_REPS (blocks, default 9), BENCH_AA=1 (both variants bare: the
 * noise floor of this machine).  Exit 0 when the runs complete; 1 on error.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/gt_net.h"
#include "shim/shim.h"
#include "shim/shim_internal.h"
#include "tests/bench/bench_util.h"

extern const struct gt_net_ops gt_sock_ops;

#define BENCH_WINDOW 8
#define SIZE (4u << 20)
#define MAXREPS 64
#define BLOCK 3 /* runs of each variant per block */

struct side {
    const struct gt_net_ops *ops;
    void *ctx, *lc, *sc, *rc;
    void *mh[BENCH_WINDOW];
};

static void wait_req(const struct gt_net_ops *ops, void *req)
{
    int done = 0;
    for (;;) {
        if (ops->test(req, &done, NULL) != GT_OK)
            DIE("test failed");
        if (done)
            return;
        sched_yield();
    }
}

static double stream(struct side *s, int sending, char **bufs, int count)
{
    void *req[BENCH_WINDOW] = {0};
    double t0 = 0;
    for (int i = 0; i < count + BENCH_WINDOW; i++) {
        int w = i % BENCH_WINDOW;
        if (req[w]) {
            wait_req(s->ops, req[w]);
            req[w] = NULL;
            if (i - BENCH_WINDOW == 0)
                t0 = now_s();
        }
        if (i >= count)
            continue;
        while (!req[w]) {
            gt_result rc;
            if (sending) {
                rc = s->ops->isend(s->sc, bufs[w], SIZE, 0, s->mh[w], NULL, &req[w]);
            } else {
                size_t sz = SIZE;
                int tag = 0;
                void *d = bufs[w];
                rc = s->ops->irecv(s->rc, 1, &d, &sz, &tag, &s->mh[w], NULL, &req[w]);
            }
            if (rc != GT_OK)
                DIE("%s failed (%d)", sending ? "isend" : "irecv", rc);
        }
    }
    return sending ? 0 : now_s() - t0;
}

static void setup(struct side *s, int rd, int wr, int sending, char **bufs)
{
    char mine[GT_NET_HANDLE_MAXSIZE], peer[GT_NET_HANDLE_MAXSIZE];
    if (s->ops->init(&s->ctx, 0x6264, 1, NULL, NULL, NULL) != GT_OK)
        DIE("init failed");
    if (s->ops->listen(s->ctx, 0, mine, &s->lc) != GT_OK)
        DIE("listen failed");
    xwrite(wr, mine, sizeof(mine));
    xread(rd, peer, sizeof(peer));
    double t0 = now_s();
    while (!s->sc || !s->rc) {
        if (!s->sc && s->ops->connect(s->ctx, 0, peer, &s->sc, NULL) != GT_OK)
            DIE("connect failed");
        if (!s->rc && s->ops->accept(s->lc, &s->rc, NULL) != GT_OK)
            DIE("accept failed");
        if (now_s() - t0 > 20)
            DIE("connect/accept timed out");
    }
    for (int w = 0; w < BENCH_WINDOW; w++)
        if (s->ops->reg_mr(sending ? s->sc : s->rc, bufs[w], SIZE, GT_PTR_HOST, &s->mh[w], NULL) !=
            GT_OK)
            DIE("reg_mr failed");
}

static void teardown(struct side *s, int sending)
{
    for (int w = 0; w < BENCH_WINDOW; w++)
        s->ops->dereg_mr(sending ? s->sc : s->rc, s->mh[w]);
    s->ops->close_send(s->sc);
    s->ops->close_recv(s->rc);
    s->ops->close_listen(s->lc);
    s->ops->finalize(s->ctx);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    setenv("GDRTRACE_SOCKET_IFNAME", "lo", 0);
    unsetenv("GDRTRACE_DISABLE");
    /* Many short pairs rather than a few long ones: the two runs of a pair
     * are then close in time, so load from other jobs on this machine hits
     * both alike and the median ratio stays put. */
    long mb = getenv("BENCH_MB") ? atol(getenv("BENCH_MB")) : 64;
    int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 9;
    if (mb < 1 || reps < 1)
        DIE("BENCH_MB and BENCH_REPS must be positive");
    if (reps > MAXREPS)
        reps = MAXREPS;
    int count = (int)(((size_t)mb << 20) / SIZE);
    if (count < 2 * BENCH_WINDOW)
        count = 2 * BENCH_WINDOW;

    pid_t pid;
    int rd, wr;
    int child = fork_pair(&pid, &rd, &wr);

    /* Each process its own recorder, like each NCCL rank. */
    const struct gt_net_ops *traced = gt_shim_wrap(&gt_sock_ops, "bench: sock", NULL);
    if (traced == &gt_sock_ops)
        DIE("the recorder could not be created (see the WARN above)");
    char *bufs[BENCH_WINDOW];
    for (int w = 0; w < BENCH_WINDOW; w++) {
        bufs[w] = malloc(SIZE);
        if (!bufs[w])
            DIE("out of memory");
        memset(bufs[w], w, SIZE);
    }
    /* BENCH_AA=1: both variants bare, to see this machine's noise floor. */
    int aa = getenv("BENCH_AA") && atoi(getenv("BENCH_AA"));
    struct side off = {.ops = &gt_sock_ops}, on = {.ops = aa ? &gt_sock_ops : traced};
    setup(&off, rd, wr, child, bufs);
    setup(&on, rd, wr, child, bufs);

    double best[2] = {0, 0}, ratio[MAXREPS];
    for (int r = 0; r < reps; r++) {
        /* One block: BLOCK runs of each variant, interleaved (order flips
         * every block); the block's figure per variant is its best run, the
         * one least disturbed by other jobs, and its ratio pairs two best
         * runs taken within the same second or so. */
        double blk[2] = {0, 0};
        for (int k = 0; k < 2 * BLOCK; k++) {
            int variant = (k + r) % 2; /* 0 = off, 1 = on */
            char go = 0;
            if (child)
                xread(rd, &go, 1);
            else
                xwrite(wr, &go, 1);
            double t = stream(variant ? &on : &off, child, bufs, count);
            if (!child) {
                double mbs = (double)SIZE * (count - 1) / t / 1e6;
                if (mbs > blk[variant])
                    blk[variant] = mbs;
                if (mbs > best[variant])
                    best[variant] = mbs;
            }
        }
        if (!child)
            ratio[r] = blk[1] / blk[0];
    }

    struct gt_recorder *rec = gt_shim_recorder();
    uint64_t recorded = 0, msgs = aa ? 0 : (uint64_t)reps * BLOCK * (uint64_t)count;
    for (uint32_t i = 0; i < rec->ncomms; i++)
        recorded += child ? rec->comms[i].send_count : rec->comms[i].recv_count;
    teardown(&off, child);
    teardown(&on, child);
    char path[sizeof(rec->path)];
    memcpy(path, rec->path, sizeof(path));
    for (int w = 0; w < BENCH_WINDOW; w++)
        free(bufs[w]);
    if (child) {
        unlink(path);
        _exit(recorded == msgs ? 0 : 3);
    }
    int status;
    waitpid(pid, &status, 0);
    unlink(path);
    qsort(ratio, (size_t)reps, sizeof(ratio[0]), cmp_d);
    double med = reps % 2 ? ratio[reps / 2] : (ratio[reps / 2 - 1] + ratio[reps / 2]) / 2;
    printf("sock bandwidth at 4 MiB, recorder on vs off (GDRTRACE_DISABLE=1), %d blocks of %d+%d "
           "interleaved runs of %ld MiB, same processes\n",
           reps, BLOCK, BLOCK, mb);
    printf("  best: off %.0f MB/s, on %.0f MB/s (best on/best off %.3f); median block ratio "
           "on/off %.3f, quartiles %.3f..%.3f (target >= 0.99: %s)\n",
           best[0], best[1], best[1] / best[0], med, ratio[reps / 4], ratio[(3 * reps) / 4],
           med >= 0.99 ? "met" : "NOT met");
    printf("  recorder counted %llu receives (sender: %s) for %llu messages sent traced\n",
           (unsigned long long)recorded,
           WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "matches" : "MISMATCH",
           (unsigned long long)msgs);
    return recorded == msgs && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
