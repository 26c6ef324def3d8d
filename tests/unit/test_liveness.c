/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_liveness.c — whether a recorder's writer still runs, judged from
 * this machine (tools/lib/liveness.c), with this test process as the
 * writer of hand-made headers, one rule of liveness.c's list at a time:
 * closed is exited and creating is creating whatever else; another boot
 * id is crashed (1); an unreadable or another pid namespace is unknown,
 * with the word why (2); no pid, or a pid no process has, is crashed (3);
 * another start tick is crashed, a pid reused (4), and before format 1.4
 * a process started after the recorder was created is crashed too; the
 * writer holding the file open is live (5), not holding it unknown (6); a
 * member of an archive is never live.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/procid.h"
#include "tools/lib/recfile.h"

static struct gt_recfile g_r;
static char g_path[64];
static int g_fd = -1;

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A 1.4 header whose writer is this process, holding g_path open. */
static int setup(void **state)
{
    (void)state;
    memset(&g_r, 0, sizeof(g_r));
    snprintf(g_path, sizeof(g_path), "/tmp/gt_liveness_XXXXXX");
    g_fd = mkstemp(g_path);
    if (g_fd < 0)
        return -1;
    g_r.source = g_path; /* not owned: g_r is never freed */
    g_r.hdr.state = GTR_STATE_LIVE;
    g_r.hdr.version_minor = 4;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f || !fgets(g_r.id.node.boot_id, sizeof(g_r.id.node.boot_id), f))
        return -1;
    fclose(f);
    g_r.id.node.boot_id[strcspn(g_r.id.node.boot_id, "\n")] = 0;
    gt_proc_ns("pid", &g_r.id.pidns_dev, &g_r.id.pidns_ino);
    gt_proc_ns("time", &g_r.id.timens_dev, &g_r.id.timens_ino);
    int64_t t = gt_proc_start_ticks(0);
    if (!g_r.id.pidns_ino || t < 0)
        return -1;
    g_r.id.proc_start_ticks = (uint64_t)t;
    g_r.id.pid = (int32_t)getpid();
    g_r.id.start_mono_ns = mono_ns();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (g_fd >= 0)
        close(g_fd);
    g_fd = -1;
    unlink(g_path);
    return 0;
}

static int judge(const char **why)
{
    return gt_recfile_judge_liveness_why(&g_r, why);
}

static void live_while_held(void **state)
{
    (void)state;
    const char *why = "x";
    assert_int_equal(judge(&why), GT_LIVE_LIVE);
    assert_string_equal(why, "");
    assert_int_equal(gt_recfile_judge_liveness(&g_r), GT_LIVE_LIVE);
    close(g_fd); /* (6) the writer runs but holds no longer: cannot be told */
    g_fd = -1;
    assert_int_equal(judge(&why), GT_LIVE_UNKNOWN);
    assert_string_equal(why, "");
}

static void states_first(void **state)
{
    (void)state;
    g_r.id.node.boot_id[0] = 'X'; /* would be crashed if judged */
    g_r.hdr.state = GTR_STATE_CLOSED;
    assert_int_equal(judge(NULL), GT_LIVE_EXITED);
    g_r.hdr.state = GTR_STATE_CREATING;
    assert_int_equal(judge(NULL), GT_LIVE_CREATING);
}

static void other_boot(void **state)
{
    (void)state;
    g_r.id.node.boot_id[0] = g_r.id.node.boot_id[0] == '0' ? '1' : '0';
    assert_int_equal(judge(NULL), GT_LIVE_CRASHED);
    /* no boot id recorded: not judged by it */
    g_r.id.node.boot_id[0] = 0;
    assert_int_equal(judge(NULL), GT_LIVE_LIVE);
}

static void namespaces(void **state)
{
    (void)state;
    const char *why = NULL;
    g_r.id.pidns_ino++;
    assert_int_equal(judge(&why), GT_LIVE_UNKNOWN);
    assert_string_equal(why, GT_LIVE_WHY_OTHER_NS);
    g_r.id.pidns_ino = 0; /* the writer could not read its own */
    assert_int_equal(judge(&why), GT_LIVE_UNKNOWN);
    assert_string_equal(why, GT_LIVE_WHY_NS_UNREADABLE);
    /* before 1.4 no namespace is recorded: not asked */
    g_r.hdr.version_minor = 3;
    assert_int_equal(judge(&why), GT_LIVE_LIVE);
}

static void gone_or_reused(void **state)
{
    (void)state;
    g_r.id.pid = 0;
    assert_int_equal(judge(NULL), GT_LIVE_CRASHED);
    g_r.id.pid = -5;
    assert_int_equal(judge(NULL), GT_LIVE_CRASHED);
    /* a child that exited and was reaped: no process has its pid now */
    pid_t c = fork();
    assert_true(c >= 0);
    if (c == 0)
        _exit(0);
    assert_int_equal(waitpid(c, NULL, 0), c);
    g_r.id.pid = c;
    assert_int_equal(judge(NULL), GT_LIVE_CRASHED);
    /* our pid, another start tick: the pid was reused */
    g_r.id.pid = (int32_t)getpid();
    g_r.id.proc_start_ticks++;
    assert_int_equal(judge(NULL), GT_LIVE_CRASHED);
    g_r.id.proc_start_ticks -= 2;
    assert_int_equal(judge(NULL), GT_LIVE_CRASHED);
}

static void before_1_4_by_creation_time(void **state)
{
    (void)state;
    g_r.hdr.version_minor = 3;
    g_r.id.proc_start_ticks = 0;
    /* created now, by a process that started earlier: can be its writer */
    assert_int_equal(judge(NULL), GT_LIVE_LIVE);
    /* created 1 ns after boot: this process started later, not its writer */
    g_r.id.start_mono_ns = 1;
    assert_int_equal(judge(NULL), GT_LIVE_CRASHED);
}

static void archive_member_never_live(void **state)
{
    (void)state;
    g_r.from_archive = 1;
    assert_int_equal(judge(NULL), GT_LIVE_UNKNOWN);
}

static void names(void **state)
{
    (void)state;
    assert_string_equal(gt_liveness_name(GT_LIVE_LIVE), "live");
    assert_string_equal(gt_liveness_name(GT_LIVE_EXITED), "exited");
    assert_string_equal(gt_liveness_name(GT_LIVE_CRASHED), "crashed");
    assert_string_equal(gt_liveness_name(GT_LIVE_CREATING), "creating");
    assert_string_equal(gt_liveness_name(GT_LIVE_UNKNOWN), "unknown");
    assert_string_equal(gt_liveness_name(99), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(live_while_held, setup, teardown),
        cmocka_unit_test_setup_teardown(states_first, setup, teardown),
        cmocka_unit_test_setup_teardown(other_boot, setup, teardown),
        cmocka_unit_test_setup_teardown(namespaces, setup, teardown),
        cmocka_unit_test_setup_teardown(gone_or_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(before_1_4_by_creation_time, setup, teardown),
        cmocka_unit_test_setup_teardown(archive_member_never_live, setup, teardown),
        cmocka_unit_test(names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
