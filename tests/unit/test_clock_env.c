/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_clock_env.c — GDRTRACE_CLOCK is validated like every variable
 * (shim/clock.c): an unknown value gives one WARN naming the variable, the
 * value and tsc|monotonic, and the default (tsc when usable); `monotonic`
 * forces CLOCK_MONOTONIC without a WARN; `tsc` gives no WARN.  The clock is
 * chosen once per process, so each case runs in a child.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "shim/clock.h"
#include "tests/unit/capture_log.h"

/* 0 if the clock chosen under GDRTRACE_CLOCK=value behaves as expected. */
static int child(const char *value, int want_warns, int want_monotonic)
{
    gt_log_set_logger(capture_logger);
    setenv("GDRTRACE_CLOCK", value, 1);
    gt_clock_init();
    if (g_warns != want_warns) {
        printf("FAIL GDRTRACE_CLOCK=%s: %d WARN(s), want %d (%s)\n", value, g_warns, want_warns,
               g_last);
        return 1;
    }
    if (want_warns && !(strstr(g_last, "GDRTRACE_CLOCK='") && strstr(g_last, value) &&
                        strstr(g_last, "tsc|monotonic"))) {
        printf("FAIL GDRTRACE_CLOCK=%s: the WARN does not name variable, value, choices: %s\n",
               value, g_last);
        return 1;
    }
    if (want_monotonic && gt_clock_g.kind != GTR_CLOCK_MONOTONIC) {
        printf("FAIL GDRTRACE_CLOCK=%s: clock kind %d, want monotonic\n", value, gt_clock_g.kind);
        return 1;
    }
    printf("ok   GDRTRACE_CLOCK=%s: %d WARN(s), clock kind %d\n", value, g_warns, gt_clock_g.kind);
    return 0;
}

int main(void)
{
    static const struct {
        const char *value;
        int warns, monotonic;
    } cases[] = {{"hpet", 1, 0}, {"monotonic", 0, 1}, {"MONOTONIC", 0, 1}, {"tsc", 0, 0}};
    int failed = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            int rc = child(cases[i].value, cases[i].warns, cases[i].monotonic);
            fflush(stdout);
            _exit(rc);
        }
        int st;
        failed += waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    printf("%d failed\n", failed);
    return failed != 0;
}
