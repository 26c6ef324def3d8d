/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prune_race.c — `reader_prune`: the races that cmd_prune.c's order of
 * checks closes, forced deterministically by wrapping two system calls of
 * the file under test (it is included, not linked, so the wrappers reach its
 * static functions only):
 *  1. after a crashed recorder is judged, its name is taken by a new file
 *     (a concurrent prune removed it and a process with the same pid created
 *     its recorder): the newcomer stays under its name, untouched, and no
 *     private ".gdrtrace-prune.*" name is left behind;
 *  2. someone opens the judged recorder for writing after the lease was
 *     granted: nothing is removed;
 *  3. with no interference the same recorder is removed;
 *  4. DURATION parsing is strict: exact values for valid input, every
 *     malformed or overflowing one refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/check.h"

#include "tests/reader/fixture.h"

static int race_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                          unsigned int flags);
static int race_fcntl(int fd, int cmd, ...);
#define renameat2 race_renameat2
#define fcntl race_fcntl
#include "tools/cmd/cmd_prune.c"
#undef renameat2
#undef fcntl

static int failures; /* tests/check.h counts here */
enum { RACE_NONE, RACE_REPLACE_NAME, RACE_OPEN_FOR_WRITE };
static int g_race;
static char g_path[4096]; /* the recorder under test */
static pid_t g_child = -1;
static int g_newcomer_fd = -1;

/* Race 1: just before the rename, swap the judged file for a new live one. */
static int race_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                          unsigned int flags)
{
    if (g_race == RACE_REPLACE_NAME &&
        !strncmp(oldpath, GTR_FILE_PREFIX, strlen(GTR_FILE_PREFIX))) {
        g_race = RACE_NONE;
        unlink(g_path);
        /* a live writer: created now by this process, which holds it open */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        struct fx_opts o = {.kind = FX_DMABUF,
                            .pid = (int)getpid(),
                            .state = GTR_STATE_LIVE,
                            .host = "newcomer",
                            .start_mono_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec};
        if (fx_write(&o, g_path) != 0 || (g_newcomer_fd = open(g_path, O_RDWR)) < 0)
            printf("FAIL: cannot write the newcomer %s: %s\n", g_path, strerror(errno));
    }
    return renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
}

/* Race 2: just before the lease is checked again, a child opens the file for
 * writing (it blocks until the lease is released) and the break is awaited. */
static int race_fcntl(int fd, int cmd, ...)
{
    if (cmd != F_GETLEASE) { /* cmd_prune.c passes an int to every other command it uses */
        va_list ap;
        va_start(ap, cmd);
        int arg = va_arg(ap, int);
        va_end(ap);
        return fcntl(fd, cmd, arg);
    }
    if (g_race == RACE_OPEN_FOR_WRITE) {
        g_race = RACE_NONE;
        g_child = fork();
        if (g_child == 0) {
            close(fd); /* the inherited lease must be ours alone */
            int w = open(g_path, O_RDWR);
            _exit(w >= 0 ? 0 : 1);
        }
        for (int i = 0; i < 500 && fcntl(fd, F_GETLEASE) == F_RDLCK; i++)
            usleep(10000);
    }
    return fcntl(fd, cmd);
}

static int leftovers(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += !strncmp(e->d_name, ".gdrtrace-prune.", 16);
    if (d)
        closedir(d);
    return n;
}

static void one(struct prune *pr, const char *dir, const char *name)
{
    pr->dirfd = open(dir, O_RDONLY | O_DIRECTORY);
    pr->dir = dir;
    prune_one(pr, name);
    close(pr->dirfd);
}

static void test_races(const char *dir)
{
    const char *name = "gdrtrace.job42.node-a.99999991.rec";
    snprintf(g_path, sizeof(g_path), "%s/%s", dir, name);
    struct fx_opts crashed = {.kind = FX_DMABUF, .pid = 99999991, .state = GTR_STATE_LIVE};
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;

    /* 1 */
    CHECK(fx_write(&crashed, g_path) == 0, "%s", strerror(errno));
    struct prune pr = {.older_ns = -1, .now_ns = now};
    g_race = RACE_REPLACE_NAME;
    one(&pr, dir, name);
    struct gt_recfile r;
    char err[GT_ERRLEN];
    int rc = gt_recfile_load_file(g_path, &r, err, sizeof(err));
    CHECK(rc == 0, "the newcomer is gone from its name: %s", err);
    if (rc == 0) {
        CHECK(r.id.pid == getpid() && !strcmp(r.id.host, "newcomer"),
              "the name holds pid %d host %s, want the newcomer (pid %d)", r.id.pid, r.id.host,
              (int)getpid());
        CHECK(r.liveness == GT_LIVE_LIVE, "newcomer judged %s", gt_liveness_name(r.liveness));
        gt_recfile_free(&r);
    }
    CHECK(pr.removed == 0 && pr.failed == 0, "removed %u failed %u", pr.removed, pr.failed);
    CHECK(leftovers(dir) == 0, "a private .gdrtrace-prune.* name was left in %s", dir);
    close(g_newcomer_fd);

    /* 2 */
    unlink(g_path);
    CHECK(fx_write(&crashed, g_path) == 0, "%s", strerror(errno));
    pr = (struct prune){.older_ns = -1, .now_ns = now};
    g_race = RACE_OPEN_FOR_WRITE;
    one(&pr, dir, name);
    int st = 0;
    if (g_child > 0)
        waitpid(g_child, &st, 0);
    CHECK(g_child > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the writing child failed");
    CHECK(access(g_path, F_OK) == 0, "removed although opened for writing after the lease");
    CHECK(pr.removed == 0 && pr.kept == 1, "removed %u kept %u", pr.removed, pr.kept);

    /* 3 */
    pr = (struct prune){.older_ns = -1, .now_ns = now};
    one(&pr, dir, name);
    CHECK(access(g_path, F_OK) != 0 && pr.removed == 1, "control: the crashed recorder stayed");
    CHECK(leftovers(dir) == 0, "control left a private name in %s", dir);
}

static void test_durations(void)
{
    static const struct {
        const char *s;
        int64_t sec;
    } ok[] = {{"0s", 0},      {"45s", 45},     {"30m", 1800},    {"12h", 43200},
              {"7d", 604800}, {"2w", 1209600}, {"007d", 604800}, {"106751d", 106751LL * 86400}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        int64_t ns = -1;
        CHECK(gt_parse_duration(ok[i].s, &ns) == 0 && ns == ok[i].sec * 1000000000,
              "'%s' -> %lld ns", ok[i].s, (long long)ns);
    }
    static const char *bad[] = {"",
                                "12",
                                "m",
                                "12x",
                                "-5m",
                                "+5m",
                                "5 m",
                                " 5m",
                                "5m ",
                                "1.5h",
                                "5mm",
                                "5M",
                                "0x10s",
                                "1e3s",
                                "106752d",
                                "99999999999999999999s",
                                "9223372036854775807s"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t ns = -1;
        CHECK(gt_parse_duration(bad[i], &ns) != 0, "'%s' accepted as %lld ns", bad[i],
              (long long)ns);
    }
}

int main(void)
{
    signal(SIGIO, SIG_IGN);
    char dir[] = "/dev/shm/gdrtrace-prune-test.XXXXXX";
    if (!mkdtemp(dir)) {
        /* no /dev/shm: the lease works on any local filesystem */
        snprintf(dir, sizeof(dir), "/tmp/gdrtrace-prune-test.XXXXXX");
        if (!mkdtemp(dir)) {
            printf("skip: cannot create a temporary folder: %s\n", strerror(errno));
            return 77;
        }
    }
    test_durations();
    test_races(dir);
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", dir);
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("prune: a name reused after the judgement is put back, a file opened for writing after "
           "the lease is kept, durations are parsed strictly\n");
    return 0;
}
