/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run.h — what the three files of `gdrtrace run` share (internal to it):
 * cmd_run.c sets the job's environment up and drives the steps;
 * run_launch.c runs the command (launcher's job id and rank, process group,
 * terminal, signals forwarded); run_collect.c takes the evidence afterwards
 * (waits for writers left behind, archives, copies NCCL's logs, prints the
 * verdict, cleans up) and decides the exit code.  The invariants are listed
 * in cmd_run.c.  Single-threaded, one run per process.
 */
#ifndef GDRTRACE_TOOLS_CMD_RUN_H
#define GDRTRACE_TOOLS_CMD_RUN_H

#include <limits.h>
#include <stddef.h>
#include <time.h>

#define EXIT_SETUP 125    /* gdrtrace run could not set up, or could not archive */
#define EXIT_NOEXEC 126   /* COMMAND found but not executable */
#define EXIT_NOTFOUND 127 /* COMMAND not found */

struct run {
    const char *expect; /* --expect's word, passed on to verdict */
    int allow_emulated, inner, keep;
    int full, command_status;
    const char *dir; /* --dir */
    char **cmd;
    char host[256];
    char job[128];
    char stem[PATH_MAX]; /* DIR/JOB.HOST.rRANK (or .pPID), without ".zst" */
    char plugindir[PATH_MAX];
    char recdir[PATH_MAX];      /* the private folder (GDRTRACE_DIR of the command) */
    char logpat[PATH_MAX + 64]; /* NCCL_DEBUG_FILE as NCCL sees it; "" if NCCL logs to stdout */
    int own_log;                /* logpat is ours, inside recdir */
    char **logs;                /* this run's NCCL logs as copied into DIR */
    size_t nlogs;
    time_t t0;
};

/* Under a launcher (a rank variable set, no --full) each rank prints one
 * line: its notes (what was found and done, nothing the job set) are left
 * out, as they would be N times alike in the job's log.  Decisions on the
 * job's settings and every problem still use gt_run_say(). */
extern int gt_run_brief;

/* "gdrtrace run: TEXT" on stderr, TEXT escaped; gt_run_note() not when brief. */
void gt_run_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_run_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The variable's value, NULL when unset or empty. */
const char *gt_run_env(const char *name);
/* setenv, said when it fails: 0 or -1. */
int gt_run_set(const char *name, const char *value);

/* run_launch.c */
/* GDRTRACE_JOB: the job's, else the launcher's job id, else one made up;
 * into r->job and the environment. */
void gt_run_pick_job(struct run *r);
/* This process's rank, for the archive's name: the launcher's own variable;
 * NULL when not under a launcher. */
const char *gt_run_pick_rank(void);
/* Runs the command in its own process group, the signals forwarded to it;
 * returns its wait status, or -1 when it could not be started (*exit_code
 * set: 126, 127 or 125). */
int gt_run_command(struct run *r, int *exit_code);
/* The caller's signal dispositions back (gt_run_command changed them). */
void gt_run_restore_signals(void);
/* Whether a process the command started still runs (the command made this
 * process a child subreaper, so its whole tree stays below it); those that
 * ended are reaped.  *pid: one of them, when known (else 0). */
int gt_run_tree_left(int *pid);
/* A forwarded signal that came after the command ended, 0 when none. */
int gt_run_late_signal(void);

/* run_collect.c */
/* After the command ended with wait status st (rank: the launcher's, or
 * NULL): the evidence archived, the verdict printed, the private folder
 * removed or kept; returns the exit code (invariant 3). */
int gt_run_collect(struct run *r, int st, const char *rank);

#endif
