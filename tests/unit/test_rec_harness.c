/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_rec_harness.c — integration: the NCCL-like harness (tests/harness)
 * drives the built plugin through ncclNetPlugin_v11 and _v8 in two
 * processes, and this test reads the two recorders it leaves and holds them
 * against what the harness says it did.  Checks, per version: exactly two
 * recorders, valid and CLOSED, with the ABI version, transport and pid of
 * their process; per process, the messages it sent and received and its
 * flushes equal the harness's own counts; the bytes one process sent equal
 * the bytes the other received (exact, cross-process); every posted request
 * completed; every registration (host, method host) was deregistered; no
 * error, no fallback; listens/connects/accepts all closed; with v11 every
 * communicator finalized and the file CLOSED (v8 has no finalize, and the
 * harness's processes leave with _exit, so LIVE is right there); v11 communicators
 * carry NCCL commIds (two of them: the harness inits a second communicator)
 * and v8 has the one process record; with GDRTRACE_EVENTS=all the ring holds
 * one SEND event per completed send and one REG event per registration.
 * Skips (77) when the harness or the plugin is not built.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"

#include "tools/lib/recfile.h"
#include "shim/recorder.h"

static int failures;

struct said { /* what the harness printed for one process */
    int out, in, multi, optional, flushes;
    int seen;
};

struct rec_sum {
    uint64_t send_count, send_bytes, send_posted, recv_count, recv_bytes, recv_posted, flushes;
    uint64_t reg, reg_host_host, dereg, errors, fallbacks, listens, connects, accepts, closes;
    uint64_t send_events, reg_events, head, capacity;
    int comm_records, with_id, finalized;
    uint64_t ids[8];
    int nids;
};

static int summarise(const char *path, int abi, struct rec_sum *s)
{
    memset(s, 0, sizeof(*s));
    struct gt_recfile rr, *v = &rr;
    char err[GT_ERRLEN];
    if (gt_recfile_load_file(path, v, err, sizeof(err)) != 0) {
        CHECK(0, "%s refused: %s", path, err);
        return -1;
    }
    /* ABI >= 11 finalizes: CLOSED.  Older ABIs have no finalize, so only the
     * exit handler closes the file, and the harness's processes leave with
     * _exit: LIVE is right for them (the reader then checks the pid). */
    if (abi >= 11)
        CHECK(v->hdr.state == GTR_STATE_CLOSED, "%s: state %u, expected CLOSED", path,
              v->hdr.state);
    else
        CHECK(v->hdr.state == GTR_STATE_LIVE || v->hdr.state == GTR_STATE_CLOSED, "%s: state %u",
              path, v->hdr.state);
    CHECK(v->id.abi_version == abi, "%s: abi %d, expected %d", path, v->id.abi_version, abi);
    CHECK(strcmp(v->id.transport, "sock") == 0, "%s: transport '%.16s'", path, v->id.transport);
    CHECK(v->id.transport_why[0] != '\0', "%s: no transport reason", path);
    CHECK(v->id.policy_events_all == 1, "%s: GDRTRACE_EVENTS=all not recorded", path);
    char pidpart[32];
    snprintf(pidpart, sizeof(pidpart), ".%d.rec", v->id.pid);
    CHECK(strstr(path, pidpart) != NULL, "%s: pid %d not in the name", path, v->id.pid);
    for (uint32_t i = 0; i < v->nheld; i++) {
        const struct gtr_comm *c = &v->comms[i];
        if (c->state == GTR_COMM_FREE)
            continue;
        if (c->has_comm_id == GT_REC_COMM_OVERFLOW && c->send_posted + c->recv_posted == 0 &&
            c->reg_count[GT_ASKED_HOST][GT_METHOD_HOST] == 0)
            continue; /* the always-active overflow slot, unused */
        s->comm_records++;
        s->with_id += c->has_comm_id == GT_REC_COMM_ID;
        s->finalized += c->state == GTR_COMM_FINALIZED;
        int known = 0;
        for (int k = 0; k < s->nids; k++)
            known |= s->ids[k] == c->comm_id;
        if (!known && s->nids < 8)
            s->ids[s->nids++] = c->comm_id;
        s->send_count += c->send_count;
        s->send_bytes += c->send_bytes;
        s->send_posted += c->send_posted;
        s->recv_count += c->recv_count;
        s->recv_bytes += c->recv_bytes;
        s->recv_posted += c->recv_posted;
        s->flushes += c->flush_count;
        for (int a = 0; a < GTR_ASKED_COUNT; a++)
            for (int m = 0; m < GTR_METHOD_COUNT; m++)
                s->reg += c->reg_count[a][m];
        s->reg_host_host += c->reg_count[GT_ASKED_HOST][GT_METHOD_HOST];
        s->dereg += c->dereg_count;
        s->errors += c->error_count;
        s->fallbacks += c->fallback_count;
        s->listens += c->listen_count;
        s->connects += c->connect_count;
        s->accepts += c->accept_count;
        s->closes += c->close_count;
        CHECK(c->hist[GTR_OP_SEND].count <= c->send_count, "histogram beyond counter");
    }
    s->head = v->ring.head;
    s->capacity = v->ring.capacity;
    struct gtr_event e;
    for (uint64_t pos = 0; gt_recfile_event_next(v, &pos, &e);) {
        s->send_events += e.type == GTR_EV_SEND;
        s->reg_events += e.type == GTR_EV_REG;
    }
    gt_recfile_free(v);
    return 0;
}

static int run_version(const char *harness, int abi)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/gt-harness-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char cmd[PATH_MAX * 2 + 128];
    snprintf(cmd, sizeof(cmd),
             "GDRTRACE_EVENTS=all GDRTRACE_TRANSPORT=sock '%s' --abi %d --dir '%s' --data-only "
             "--iters 12 --max-size 2M 2>&1",
             harness, abi, dir);
    FILE *p = popen(cmd, "r");
    if (!p) {
        perror("popen");
        return 1;
    }
    struct said said[2] = {0};
    char line[1024];
    while (fgets(line, sizeof(line), p)) {
        fputs(line, stdout);
        int v;
        char who;
        double mo, mi;
        struct said x = {0};
        if (sscanf(line,
                   "[v%d %c] moved %d messages (%lf MiB) out and %d (%lf MiB, %d multi-receives, "
                   "%d optional-completion, %d flushes) in",
                   &v, &who, &x.out, &mo, &x.in, &mi, &x.multi, &x.optional, &x.flushes) == 9 &&
            (who == 'A' || who == 'B')) {
            x.seen = 1;
            said[who - 'A'] = x;
        }
    }
    int rc = pclose(p);
    CHECK(rc == 0, "harness --abi %d exited with status %d", abi, rc);
    CHECK(said[0].seen && said[1].seen, "harness did not report both processes' counts");

    struct rec_sum sum[2];
    int nrec = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    char paths[2][PATH_MAX + 256];
    while (d && (de = readdir(d))) {
        if (strncmp(de->d_name, GTR_FILE_PREFIX, strlen(GTR_FILE_PREFIX)) != 0)
            continue;
        if (nrec < 2)
            snprintf(paths[nrec], sizeof(paths[nrec]), "%s/%s", dir, de->d_name);
        nrec++;
    }
    if (d)
        closedir(d);
    CHECK(nrec == 2, "%d recorders in %s, expected 2 (one per process)", nrec, dir);
    if (nrec == 2 && said[0].seen && said[1].seen && !failures) {
        summarise(paths[0], abi, &sum[0]);
        summarise(paths[1], abi, &sum[1]);
        /* Which file is A: the one whose counts are what A says (sends,
         * receives and flushes: with single receives both sides may well
         * send the same number of messages). */
        int fit0 = (sum[0].send_count == (uint64_t)said[0].out) +
                   (sum[0].recv_count == (uint64_t)said[0].in) +
                   (sum[0].flushes == (uint64_t)said[0].flushes);
        int fit1 = (sum[1].send_count == (uint64_t)said[0].out) +
                   (sum[1].recv_count == (uint64_t)said[0].in) +
                   (sum[1].flushes == (uint64_t)said[0].flushes);
        int a = fit0 >= fit1 ? 0 : 1, b = 1 - a;
        struct rec_sum *r[2] = {&sum[a], &sum[b]};
        for (int k = 0; k < 2; k++) {
            const char *who = k ? "B" : "A";
            struct rec_sum *s = r[k];
            CHECK(s->send_count == (uint64_t)said[k].out, "%s sent %d, recorder says %llu", who,
                  said[k].out, (unsigned long long)s->send_count);
            CHECK(s->recv_count == (uint64_t)said[k].in, "%s received %d, recorder says %llu", who,
                  said[k].in, (unsigned long long)s->recv_count);
            CHECK(s->flushes == (uint64_t)said[k].flushes, "%s flushed %d, recorder says %llu", who,
                  said[k].flushes, (unsigned long long)s->flushes);
            CHECK(s->send_posted == s->send_count, "%s: %llu sends posted, %llu completed", who,
                  (unsigned long long)s->send_posted, (unsigned long long)s->send_count);
            CHECK(s->recv_posted <= s->recv_count && s->recv_posted > 0,
                  "%s: %llu receive requests for %llu messages", who,
                  (unsigned long long)s->recv_posted, (unsigned long long)s->recv_count);
            CHECK(s->reg > 0 && s->reg == s->reg_host_host,
                  "%s: %llu registrations, %llu host/host", who, (unsigned long long)s->reg,
                  (unsigned long long)s->reg_host_host);
            CHECK(s->dereg == s->reg, "%s: %llu registrations, %llu deregistrations", who,
                  (unsigned long long)s->reg, (unsigned long long)s->dereg);
            CHECK(s->errors == 0 && s->fallbacks == 0, "%s: %llu errors, %llu fallbacks", who,
                  (unsigned long long)s->errors, (unsigned long long)s->fallbacks);
            CHECK(s->listens >= 1 && s->connects >= 1 && s->accepts >= 1 &&
                      s->closes == s->listens + s->connects + s->accepts,
                  "%s: %llu listen %llu connect %llu accept, %llu closed", who,
                  (unsigned long long)s->listens, (unsigned long long)s->connects,
                  (unsigned long long)s->accepts, (unsigned long long)s->closes);
            if (abi >= 11)
                CHECK(s->finalized == s->comm_records, "%s: %d of %d comm records finalized", who,
                      s->finalized, s->comm_records);
            if (abi >= 11)
                CHECK(s->with_id == s->comm_records && s->nids >= 2,
                      "%s: %d records with a commId, %d ids (expected every record, >= 2 ids)", who,
                      s->with_id, s->nids);
            else
                CHECK(s->with_id == 0 && s->nids == 1,
                      "%s: v%d must have one process record, not %d ids", who, abi, s->nids);
            if (s->head <= s->capacity) {
                CHECK(s->send_events == s->send_count, "%s: %llu SEND events, %llu sends", who,
                      (unsigned long long)s->send_events, (unsigned long long)s->send_count);
                CHECK(s->reg_events == s->reg, "%s: %llu REG events, %llu registrations", who,
                      (unsigned long long)s->reg_events, (unsigned long long)s->reg);
            }
        }
        CHECK(r[0]->send_bytes == r[1]->recv_bytes, "A sent %llu bytes, B received %llu",
              (unsigned long long)r[0]->send_bytes, (unsigned long long)r[1]->recv_bytes);
        CHECK(r[1]->send_bytes == r[0]->recv_bytes, "B sent %llu bytes, A received %llu",
              (unsigned long long)r[1]->send_bytes, (unsigned long long)r[0]->recv_bytes);
        printf("v%d: recorders agree with the harness: A %llu out / %llu in, B %llu out / %llu "
               "in, %llu + %llu bytes\n",
               abi, (unsigned long long)r[0]->send_count, (unsigned long long)r[0]->recv_count,
               (unsigned long long)r[1]->send_count, (unsigned long long)r[1]->recv_count,
               (unsigned long long)r[0]->send_bytes, (unsigned long long)r[1]->send_bytes);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return failures ? 1 : 0;
}

int main(void)
{
    printf("checks: the recorders of a harness run hold every call it made, with the right "
           "methods and counts\n");
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build/default";
    char harness[PATH_MAX], plugin[PATH_MAX];
    snprintf(harness, sizeof(harness), "%s/harness/harness", build);
    snprintf(plugin, sizeof(plugin), "%s/libnccl-net-gdrtrace.so", build);
    if (access(harness, X_OK) != 0 || access(plugin, R_OK) != 0) {
        printf("skip: %s or %s is not built\n", harness, plugin);
        return 77;
    }
    unsetenv("GDRTRACE_DISABLE");
    setenv("BUILD", build, 1);
    run_version(harness, 11);
    run_version(harness, 8);
    printf(failures ? "FAILED\n" : "PASS\n");
    return failures ? 1 : 0;
}
