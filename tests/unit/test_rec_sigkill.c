/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_rec_sigkill.c — a producer killed with SIGKILL mid-run leaves a
 * readable, complete recorder.  A forked child records continuously from two
 * threads (each: bump its comm slot's counter and histogram, then emit an
 * event carrying the counter) until the parent kills it with SIGKILL.  The
 * parent then reads the file and checks: it validates; its state is still
 * LIVE (no clean close happened) and its pid is the dead child's; every
 * position of the ring's last lap is an intact record except at most one per
 * producer thread (the records in flight at the kill) plus those counted as
 * dropped; every intact record is self-consistent; per thread, positions
 * follow program order and counters are consecutive; and each slot's
 * counter and histogram count are at least its thread's last committed
 * value and at most one more.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/check.h"

#include "common/hist.h"
#include "tools/lib/recfile.h"
#include "shim/recorder.h"

#define THREADS 2
#define CAP 4096

static struct gt_recorder g_rec;
static struct gtr_comm *g_comm[THREADS];
static uint32_t g_slot[THREADS];

static void *produce(void *arg)
{
    int t = (int)(intptr_t)arg;
    struct gtr_comm *c = g_comm[t];
    for (uint64_t i = 1;; i++) {
        __atomic_store_n(&c->send_count, i, __ATOMIC_RELAXED);
        gt_hist_add_owned(&c->hist[GTR_OP_SEND], i & 1023);
        gt_rec_event(&g_rec, GTR_EV_SEND, (uint16_t)g_slot[t], (int16_t)t, 0, 0, i, i * 2654435761u,
                     (uint64_t)t, (uint32_t)(i ^ 0x5a5a));
    }
    return NULL;
}

static int child(const char *dir, int ready_fd)
{
    struct gt_rec_config cfg = {.dir = dir,
                                .mode = -1,
                                .ndevs = 1,
                                .ncomms = THREADS + 1,
                                .ring_events = CAP,
                                .events_all = 1};
    char err[512];
    if (gt_rec_open(&g_rec, &cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "child: %s\n", err);
        return 1;
    }
    for (int t = 0; t < THREADS; t++)
        g_comm[t] = gt_rec_new_comm(&g_rec, 0x100 + (uint64_t)t, 1, 12, 0, &g_slot[t]);
    pthread_t th[THREADS];
    for (intptr_t t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, produce, (void *)t);
    /* Tell the parent where the file is once the ring has lapped a few times. */
    while (__atomic_load_n(&g_rec.ring.hdr->head, __ATOMIC_RELAXED) < 8 * CAP)
        sched_yield();
    size_t n = strlen(g_rec.path) + 1;
    if (write(ready_fd, g_rec.path, n) != (ssize_t)n)
        return 1;
    for (;;)
        pause();
}

static char g_dir[PATH_MAX], g_path[PATH_MAX];

/* Runs on every exit of the parent, pass or fail: no files left behind. */
static void cleanup(void)
{
    if (g_path[0])
        unlink(g_path);
    if (g_dir[0])
        rmdir(g_dir);
}

int main(void)
{
    printf("checks: a SIGKILLed producer's recorder is readable and complete up to its last "
           "committed record\n");
    char *dir = g_dir;
    snprintf(dir, sizeof(g_dir), "%s/gt-kill-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    int p[2];
    REQUIRE(pipe(p) == 0, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    REQUIRE(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(p[0]);
        _exit(child(dir, p[1]));
    }
    close(p[1]);
    char *path = g_path;
    ssize_t k = read(p[0], path, sizeof(g_path) - 1);
    if (k <= 0)
        g_path[0] = '\0';
    atexit(cleanup);
    REQUIRE(k > 0, "child exited before it was ready");
    struct timespec nap = {0, 20 * 1000 * 1000};
    nanosleep(&nap, NULL); /* killed while writing at full speed */
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    REQUIRE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child status %d", status);

    struct gt_recfile rr, *v = &rr;
    char err[GT_ERRLEN];
    REQUIRE(gt_recfile_load_file(path, v, err, sizeof(err)) == 0, "reader refused: %s", err);
    REQUIRE(v->liveness == GT_LIVE_CRASHED, "liveness %s, expected crashed",
            gt_liveness_name(v->liveness));
    REQUIRE(v->ring.capacity == CAP, "ring capacity %llu, expected %d",
            (unsigned long long)v->ring.capacity, CAP);
    REQUIRE(v->hdr.state == GTR_STATE_LIVE, "state %u, expected LIVE", v->hdr.state);
    REQUIRE(v->id.pid == pid, "pid %d, expected %d", v->id.pid, pid);
    REQUIRE(v->id.end_wall_ns == 0, "end time set without a close");

    uint64_t head = v->ring.head, intact = 0;
    REQUIRE(head >= CAP && v->ring_first == head - CAP, "head %llu, first %llu",
            (unsigned long long)head, (unsigned long long)v->ring_first);
    uint64_t last_i[THREADS] = {0}, last_pos[THREADS] = {0};
    struct gtr_event e;
    for (uint64_t next = 0; gt_recfile_event_next(v, &next, &e);) {
        uint64_t pos = next - 1;
        intact++;
        int t = (int)e.a2;
        REQUIRE(e.type == GTR_EV_SEND && t >= 0 && t < THREADS, "foreign record at %llu",
                (unsigned long long)pos);
        REQUIRE(e.a1 == e.a0 * 2654435761u && e.aux == (uint32_t)(e.a0 ^ 0x5a5a) && e.dev == t &&
                    e.comm_slot == (uint16_t)t /* slots are handed out in order */,
                "torn record accepted at %llu", (unsigned long long)pos);
        /* consecutive unless a lapped producer discarded one (counted) */
        REQUIRE(last_i[t] == 0 || (pos > last_pos[t] && (e.a0 == last_i[t] + 1 ||
                                                         (e.a0 > last_i[t] && v->ring.dropped))),
                "thread %d: record %llu after %llu", t, (unsigned long long)e.a0,
                (unsigned long long)last_i[t]);
        last_i[t] = e.a0;
        last_pos[t] = pos;
    }
    uint64_t missing = CAP - intact;
    printf("killed at head %llu: %llu intact of the last %d, %llu missing, %llu dropped\n",
           (unsigned long long)head, (unsigned long long)intact, CAP, (unsigned long long)missing,
           (unsigned long long)v->ring.dropped);
    REQUIRE(v->rs.bad == 0, "%llu committed records with an invalid type or comm slot",
            (unsigned long long)v->rs.bad);
    REQUIRE(missing <= THREADS + v->ring.dropped, "%llu records missing from the last lap",
            (unsigned long long)missing);
    REQUIRE(last_i[0] || last_i[1], "no intact record at all");
    for (int t = 0; t < THREADS; t++) {
        if (!last_i[t]) {
            /* preempted for the whole last lap (a loaded 2-core machine) */
            printf("thread %d has no record in the last lap\n", t);
            continue;
        }
        REQUIRE((uint32_t)t < v->ncomm, "no comm slot %d", t);
        const struct gtr_comm *c = gt_recfile_comm(v, (uint32_t)t);
        REQUIRE(c != NULL, "comm slot %d holds nothing", t);
        REQUIRE(c->comm_id == 0x100 + (uint64_t)t, "slot %d holds comm 0x%llx", t,
                (unsigned long long)c->comm_id);
        REQUIRE(c->send_count >= last_i[t] && c->send_count <= last_i[t] + 1,
                "thread %d counter %llu vs last record %llu", t, (unsigned long long)c->send_count,
                (unsigned long long)last_i[t]);
        REQUIRE(c->hist[GTR_OP_SEND].count == c->send_count ||
                    c->hist[GTR_OP_SEND].count + 1 == c->send_count,
                "thread %d histogram count %llu vs counter %llu", t,
                (unsigned long long)c->hist[GTR_OP_SEND].count, (unsigned long long)c->send_count);
    }
    gt_recfile_free(v);
    printf("PASS\n");
    return 0;
}
