/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_recfile_read.c — the reader's copy of a live recorder
 * (tools/lib/recfile_read.c) never holds a torn event.  A writer thread
 * laps a 64-slot ring as fast as it can, each event carrying its own position (a0) and two words
 * derived from it; the main thread snapshots the file with gt_recfile_load_file() over and over,
 * and every event the validator accepts must be exactly the one the writer committed at that
 * position.  ce69281's reader checked the sequence word once, on the read() copy, and accepted
 * events whose payload came from a later lap.  Runs under TSan too: the writer and the reader share
 * the file only through the kernel (read/pread), as in production.
 *
 * GT_LIVE_TEST_SECONDS (default 2) sets how long the two race.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/lib/recfile.h"
#include "shim/recorder.h"

#define CAP 64
#define K 2654435761ull

static struct gt_recorder g_rec;
static int g_stop;

static void *writer(void *arg)
{
    (void)arg;
    /* position 0 is RECORDER_OPEN; event i (from 1) is at position i.  A
     * 50 us pause every 4096 events (a few per cent of the time) lets some
     * snapshots find the ring still: under TSan a copy can take longer than
     * a whole lap, and one run accepted no event in 1,121 snapshots, which
     * proves nothing either way.  The rest of the time the writer laps the
     * ring as fast as it can. */
    for (uint64_t i = 1; !__atomic_load_n(&g_stop, __ATOMIC_RELAXED); i++) {
        gt_rec_event(&g_rec, GTR_EV_SEND, GTR_NO_COMM, 3, 0, 0, i, i * K, ~i,
                     (uint32_t)(i ^ 0x5a5a));
        if ((i & 4095) == 0)
            usleep(50);
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/gt-live-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return 1;
    struct gt_rec_config cfg = {
        .dir = dir, .mode = -1, .ndevs = 1, .ncomms = 2, .ring_events = CAP, .events_all = 0};
    char err[GT_ERRLEN];
    if (gt_rec_open(&g_rec, &cfg, err, sizeof(err))) {
        printf("FAIL cannot open a recorder: %s\n", err);
        return 1;
    }
    double secs = 2;
    const char *e = getenv("GT_LIVE_TEST_SECONDS");
    if (e && atof(e) > 0)
        secs = atof(e);
    pthread_t t;
    if (pthread_create(&t, NULL, writer, NULL)) {
        printf("FAIL pthread_create\n");
        return 1;
    }
    uint64_t snaps = 0, accepted = 0, torn = 0, wrong = 0;
    /* Run `secs`, then on until 10 snapshots and 100 accepted events (at
     * most 30 s more): under TSan on a loaded 2-core machine the writer can
     * lap the ring during every copy for the whole 2 s (one CI run: 1,309
     * snapshots, 0 accepted), or a copy can take half a second (one run: 4
     * snapshots in 2 s), which says nothing about correctness. */
    double end = now_s() + secs, hard_end = end + 30;
    while (now_s() < end || ((snaps < 10 || accepted < 100) && now_s() < hard_end)) {
        struct gt_recfile r;
        if (gt_recfile_load_file(g_rec.path, &r, err, sizeof(err))) {
            printf("FAIL the reader refused a live recorder: %s\n", err);
            wrong++;
            break;
        }
        snaps++;
        torn += r.rs.torn;
        struct gtr_event ev;
        for (uint64_t next = 0; gt_recfile_event_next(&r, &next, &ev);) {
            uint64_t pos = next - 1;
            accepted++;
            if (pos == 0)
                continue; /* RECORDER_OPEN */
            if (ev.type != GTR_EV_SEND || ev.a0 != pos || ev.a1 != pos * K || ev.a2 != ~pos ||
                ev.aux != (uint32_t)(pos ^ 0x5a5a) || ev.dev != 3) {
                if (wrong < 5)
                    printf("FAIL accepted at position %llu an event of position %llu "
                           "(a1 %s, aux %s)\n",
                           (unsigned long long)pos, (unsigned long long)ev.a0,
                           ev.a1 == ev.a0 * K ? "consistent" : "torn",
                           ev.aux == (uint32_t)(ev.a0 ^ 0x5a5a) ? "consistent" : "torn");
                wrong++;
            }
        }
        gt_recfile_free(&r);
    }
    __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
    pthread_join(t, NULL);
    printf("%llu snapshots, %llu events accepted, %llu slots skipped as torn, %llu wrong, "
           "writer at position %llu\n",
           (unsigned long long)snaps, (unsigned long long)accepted, (unsigned long long)torn,
           (unsigned long long)wrong, (unsigned long long)g_rec.ring.hdr->head);
    unlink(g_rec.path);
    gt_rec_unmap(&g_rec);
    rmdir(dir);
    if (wrong)
        return 1;
    /* Enough accepted events that "0 wrong" means something.  Not one per
     * snapshot: under a sanitizer on a loaded machine the writer laps the
     * ring during most copies, and those snapshots rightly accept nothing
     * (one run: 30,667 snapshots, 6,937 events accepted, 0 wrong). */
    if (snaps < 10 || accepted < 100) {
        printf("FAIL the reader made no progress (%llu snapshots, %llu events accepted)\n",
               (unsigned long long)snaps, (unsigned long long)accepted);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
