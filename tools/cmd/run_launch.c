/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run_launch.c — `gdrtrace run`'s command (run.h): the launcher's job id and
 * rank (GDRTRACE_JOB in the plugin's own order of launcher variables), the
 * command in a process group of its own that holds the terminal when
 * gdrtrace did, and the signals forwarded to that group (cmd_run.c's
 * invariant 5): SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 reach the
 * command and what it started; one the caller ignored stays ignored; once
 * the command ended they are only noted, so that the archive is finished
 * first.  ^Z stops gdrtrace with the command and continues both.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "tools/cmd/run.h"

void gt_run_pick_job(struct run *r)
{
    const char *v = gt_run_env("GDRTRACE_JOB");
    if (v) {
        snprintf(r->job, sizeof(r->job), "%s", v);
        gt_run_note("job %s (GDRTRACE_JOB, as the job set it)", r->job);
        return;
    }
    /* The plugin's own order (shim/recorder.c), so the recorders and the
     * archive name agree with a run without gdrtrace run. */
    static const char *const from[] = {"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID",
                                       "OMPI_MCA_orte_ess_jobid", "PMIX_NAMESPACE"};
    for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
        if ((v = gt_run_env(from[i])) != NULL) {
            snprintf(r->job, sizeof(r->job), "%s", v);
            if (gt_run_set("GDRTRACE_JOB", r->job) == 0)
                gt_run_note("job %s (GDRTRACE_JOB set from %s)", r->job, from[i]);
            return;
        }
    }
    struct tm tm;
    time_t now = time(NULL);
    char when[32];
    strftime(when, sizeof(when), "%Y%m%dT%H%M%S", gmtime_r(&now, &tm));
    snprintf(r->job, sizeof(r->job), "run-%s-%d", when, (int)getpid());
    if (gt_run_set("GDRTRACE_JOB", r->job) == 0)
        gt_run_note("job %s (GDRTRACE_JOB generated: no launcher job id in the environment)",
                    r->job);
}

/* This process's rank, for the archive's name: the launcher's own variable;
 * torchrun's RANK only beside its WORLD_SIZE (a bare RANK is too common a
 * name to mean a launcher). */
const char *gt_run_pick_rank(void)
{
    static const char *const from[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID", "RANK"};
    for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
        const char *v = gt_run_env(from[i]);
        if (!strcmp(from[i], "RANK") && !gt_run_env("WORLD_SIZE"))
            continue;
        if (v && strspn(v, "0123456789") == strlen(v) && strlen(v) < 12)
            return v;
    }
    return NULL;
}

static const int fwd_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define NFWD (sizeof(fwd_sigs) / sizeof(fwd_sigs[0]))
static volatile sig_atomic_t g_child; /* the command's pid = its process group; 0 before */
static volatile sig_atomic_t g_late;  /* a signal that came after the command ended */
static struct sigaction g_old[NFWD];  /* the caller's dispositions, restored at the end */

/* While the command runs: to its group.  After it ended, while its evidence
 * is archived (milliseconds): noted, so that the scheduler's SIGTERM that
 * follows a job's end does not leave a half-written archive behind. */
static void forward(int sig)
{
    int e = errno;
    pid_t c = (pid_t)g_child;
    if (c <= 0)
        g_late = sig;
    else if (kill(-c, sig) != 0)
        kill(c, sig); /* its group is gone: the command alone, if still there */
    errno = e;
}

void gt_run_restore_signals(void)
{
    for (size_t i = 0; i < NFWD; i++)
        sigaction(fwd_sigs[i], &g_old[i], NULL);
}

/* The terminal goes to the command's process group when gdrtrace holds it,
 * so that ^C, ^Z and reads reach the command as if the shell had started it;
 * SIGTTOU is blocked around the handover, which a background group makes. */
static int tty_fd = -1;

static void give_tty(pid_t pgrp)
{
    if (tty_fd < 0)
        return;
    sigset_t m, old;
    sigemptyset(&m);
    sigaddset(&m, SIGTTOU);
    sigprocmask(SIG_BLOCK, &m, &old);
    tcsetpgrp(tty_fd, pgrp);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

int gt_run_command(struct run *r, int *exit_code)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    sigset_t block, prev;
    sigemptyset(&block);
    for (size_t i = 0; i < NFWD; i++)
        sigaddset(&block, fwd_sigs[i]);
    sigprocmask(SIG_BLOCK, &block, &prev);
    for (size_t i = 0; i < NFWD; i++) {
        sigaction(fwd_sigs[i], NULL, &g_old[i]);
        if (g_old[i].sa_handler != SIG_IGN) /* ignored by the caller: ignored by the job too */
            sigaction(fwd_sigs[i], &sa, NULL);
    }
    if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp())
        tty_fd = STDIN_FILENO;

    /* Every process the command starts stays this process's descendant: one
     * whose parent ended (a rank started with `&` by a shell that exited) is
     * re-parented here, not to init, so gt_run_wait_tree() sees the whole
     * tree, setsid() or not. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
        gt_run_say("prctl(PR_SET_CHILD_SUBREAPER): %s: a process the command leaves behind is "
                   "seen only while its recorder is written",
                   strerror(errno));
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        gt_run_say("pipe: %s", strerror(errno));
        *exit_code = EXIT_SETUP;
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        gt_run_say("fork: %s", strerror(errno));
        *exit_code = EXIT_SETUP;
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        close(pfd[0]);
        setpgid(0, 0);
        give_tty(getpid());
        gt_run_restore_signals();
        sigprocmask(SIG_SETMASK, &prev, NULL);
        execvp(r->cmd[0], r->cmd);
        int e = errno;
        if (write(pfd[1], &e, sizeof(e)) < 0) {
            /* the parent reads a short pipe as "exec failed, cause unknown" */
        }
        _exit(EXIT_NOTFOUND);
    }
    close(pfd[1]);
    setpgid(pid, pid); /* also here: whichever of the two runs first */
    give_tty(pid);
    g_child = pid;
    sigprocmask(SIG_SETMASK, &prev, NULL);

    int e = 0;
    ssize_t n;
    while ((n = read(pfd[0], &e, sizeof(e))) < 0 && errno == EINTR)
        ;
    close(pfd[0]);

    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WUNTRACED);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            gt_run_say("waitpid: %s", strerror(errno));
            st = -1;
            break;
        }
        if (!WIFSTOPPED(st))
            break;
        /* ^Z stopped the command: stop too, so the shell sees its job stopped;
         * when continued (fg or bg) continue the command, in the foreground if
         * gdrtrace is. */
        if (tty_fd < 0)
            continue; /* stopped by someone else (a scheduler's suspend): theirs to continue */
        give_tty(getpgrp());
        raise(SIGTSTP);
        if (tcgetpgrp(tty_fd) == getpgrp())
            give_tty(pid);
        kill(-pid, SIGCONT);
    }
    give_tty(getpgrp());
    g_child = 0;

    if (n > 0) {
        gt_run_say("cannot run %s: %s", r->cmd[0], strerror(e));
        *exit_code = e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
        return -1;
    }
    return st;
}

/* One child of this process (a descendant re-parented here), 0 when none:
 * /proc/<pid>/stat's fourth field is the parent. */
static int one_child(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    pid_t me = getpid();
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char p[300], buf[512];
        snprintf(p, sizeof(p), "/proc/%s/stat", e->d_name);
        FILE *f = fopen(p, "re");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *rp = strrchr(buf, ')'); /* the name may hold spaces and ')' */
        int ppid = 0;
        if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 && ppid == (int)me)
            found = atoi(e->d_name);
    }
    closedir(d);
    return found;
}

int gt_run_tree_left(int *pid)
{
    int st;
    pid_t w;
    while ((w = waitpid(-1, &st, WNOHANG)) > 0)
        ; /* reaped: a descendant that ended */
    if (w < 0 && errno == ECHILD)
        return 0;
    int c = one_child();
    if (pid)
        *pid = c;
    return 1;
}

int gt_run_late_signal(void)
{
    return (int)g_late;
}
