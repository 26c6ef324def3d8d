/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run_collect.c — `gdrtrace run` after its command ended (run.h): waits for
 * a writer the command left running, archives the private folder (dump),
 * copies the NCCL logs of this run into DIR, prints the verdict of the
 * archive with those logs joined (verdict), and removes what the plugin and
 * NCCL wrote into the private folder.  cmd_run.c's invariants 3 (the exit
 * code: a failed command's status wins) and 4 (nothing removed before its
 * archive is written, nor under a writer that still runs) are kept here.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/env.h"
#include "tools/cmd/commands.h"
#include "tools/cmd/run.h"
#include "tools/cmd/runline.h"
#include "tools/lib/esc.h"
#include "tools/lib/inputs.h"
#include "tools/lib/model.h"

/* NCCL_DEBUG_FILE's pattern as a glob of the files NCCL wrote on this host:
 * %h is the host name, %p a pid; the rest is literal (glob's own characters
 * escaped). */
static void log_glob(const struct run *r, char *out, size_t n)
{
    size_t o = 0;
    for (const char *s = r->logpat; *s && o + 1 < n; s++) {
        const char *add = NULL;
        char one[3] = {0};
        if (s[0] == '%' && s[1] == 'h') {
            add = r->host, s++;
        } else if (s[0] == '%' && s[1] == 'p') {
            add = "[0-9]*", s++;
        } else if (strchr("*?[\\", *s)) {
            one[0] = '\\', one[1] = *s, add = one;
        } else {
            one[0] = *s, add = one;
        }
        o += (size_t)snprintf(out + o, n - o, "%s", add);
    }
    if (o >= n)
        o = n - 1;
    out[o] = '\0';
}

static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
        int e = errno;
        close(in);
        errno = e;
        return -1;
    }
    char buf[65536];
    ssize_t k;
    int rc = 0;
    while ((k = read(in, buf, sizeof(buf))) != 0) {
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            rc = -1;
            break;
        }
        for (ssize_t off = 0; off < k;) {
            ssize_t w = write(out, buf + off, (size_t)(k - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                rc = -1;
                break;
            }
            off += w;
        }
        if (rc)
            break;
    }
    int e = errno;
    close(in);
    if (close(out) != 0 && !rc)
        rc = -1, e = errno;
    if (rc)
        unlink(to);
    errno = e;
    return rc;
}

/* Copies the NCCL logs of this run into DIR as STEM.<their name>, listed in
 * r->logs.  Returns how many; -1 when one could not be copied. */
static int copy_logs(struct run *r)
{
    if (!r->logpat[0])
        return 0;
    char pat[PATH_MAX * 2];
    log_glob(r, pat, sizeof(pat));
    glob_t g;
    int grc = glob(pat, 0, NULL, &g);
    if (grc == GLOB_NOMATCH) {
        gt_run_say("NCCL wrote no log (%s): was NCCL initialised?", r->logpat);
        return 0;
    }
    if (grc != 0) {
        gt_run_say("cannot list NCCL's logs (%s)", r->logpat);
        return -1;
    }
    int n = 0, rc = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct stat st;
        /* a log of an earlier run (a pattern without %p, a shared folder) is not this run's */
        if (stat(g.gl_pathv[i], &st) != 0 || !S_ISREG(st.st_mode) || st.st_mtime < r->t0 - 1)
            continue;
        /* nor one another user wrote (a shared NCCL_DEBUG_FILE folder): the
         * job's processes write their logs as the job's user */
        if (st.st_uid != geteuid()) {
            char who[128];
            gt_run_say(
                "NCCL log %s is owned by %s, not by this job's user: not this run's, not copied",
                g.gl_pathv[i], gt_owner_name((long)st.st_uid, who, sizeof(who)));
            continue;
        }
        const char *b = strrchr(g.gl_pathv[i], '/');
        b = b ? b + 1 : g.gl_pathv[i];
        char to[PATH_MAX * 2];
        snprintf(to, sizeof(to), "%s.%s", r->stem, b);
        char **more = realloc(r->logs, (r->nlogs + 1) * sizeof(*more));
        if (more)
            r->logs = more;
        if (!more || !(r->logs[r->nlogs] = strdup(to))) {
            gt_run_say("out of memory copying NCCL's logs");
            rc = -1;
            break;
        }
        if (copy_file(g.gl_pathv[i], to) != 0) {
            gt_run_say("cannot copy NCCL's log %s to %s: %s", g.gl_pathv[i], to, strerror(errno));
            free(r->logs[r->nlogs]);
            rc = -1;
            continue;
        }
        r->nlogs++;
        n++;
    }
    globfree(&g);
    if (n)
        gt_run_note("NCCL's log: %d file(s) copied to %s.*", n, r->stem);
    return rc ? -1 : n;
}

/* The recorders in the private folder whose writer still runs (liveness.c:
 * live, the writer holds the file open; or still being created): how many,
 * one of their writers' pids in *pid. */
static int writers_left(const struct run *r, int *pid)
{
    char pat[PATH_MAX + 32];
    snprintf(pat, sizeof(pat), "%s/" GTR_FILE_PREFIX "*" GTR_FILE_SUFFIX, r->recdir);
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0)
        return 0;
    int n = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char err[256];
        int fd;
        struct gt_recfile rec;
        if (gt_open_file(g.gl_pathv[i], (size_t)1 << 34, &fd, err, sizeof(err)) != 0)
            continue;
        memset(&rec, 0, sizeof(rec));
        int rc = gt_recfile_read_fd(fd, g.gl_pathv[i], 0, &rec, err, sizeof(err));
        close(fd);
        if (rc != 0)
            continue;
        int l = gt_recfile_judge_liveness(&rec);
        if (l == GT_LIVE_LIVE || l == GT_LIVE_CREATING) {
            n++;
            *pid = rec.id.pid;
        }
        gt_recfile_free(&rec);
    }
    globfree(&g);
    return n;
}

/* What of the job still runs: a process the command started (its whole
 * tree, run_launch.c) or a writer of a recorder in the private folder.
 * Says it in `what` (empty when nothing runs); returns 1 when something runs. */
static int job_left(const struct run *r, char *what, size_t n)
{
    int tpid = 0, wpid = 0;
    int tree = gt_run_tree_left(&tpid);
    int writers = writers_left(r, &wpid);
    what[0] = '\0';
    if (tree && writers)
        snprintf(what, n, "processes %s started (pid %d …) and %d recorder(s) still being written",
                 r->cmd[0], tpid ? tpid : wpid, writers);
    else if (tree && tpid)
        snprintf(what, n, "processes %s started (pid %d …)", r->cmd[0], tpid);
    else if (tree)
        snprintf(what, n, "processes %s started", r->cmd[0]);
    else if (writers)
        snprintf(what, n, "%d recorder(s) still being written (pid %d …)", writers, wpid);
    return tree || writers;
}

/* After the command ended: a process it started may still run (a rank
 * started with `&` by a shell that exited) and its recorder not exist yet.
 * Waits for the command's whole process tree and for every writer of a
 * recorder in the private folder, at most GDRTRACE_RUN_WAIT seconds, or
 * until a forwarded signal comes; 0 when nothing is left, else 1 (the
 * folder is then kept). */
static int wait_job(const struct run *r)
{
    char what[512];
    if (!job_left(r, what, sizeof(what)))
        return 0;
    long limit = gt_env_long("GDRTRACE_RUN_WAIT", 60, 0, 86400);
    gt_run_say("%s ended; %s still run: waiting for them, at most %ld s (GDRTRACE_RUN_WAIT)",
               r->cmd[0], what, limit);
    struct timespec t0, now, tick = {0, 50 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (gt_run_late_signal() || now.tv_sec - t0.tv_sec >= limit)
            break;
        nanosleep(&tick, NULL);
        if (!job_left(r, what, sizeof(what)))
            return 0;
    }
    gt_run_say("%s still run %s: archived as they are now, the folder %s is kept", what,
               gt_run_late_signal() ? "when a signal came" : "at the end of the wait", r->recdir);
    return 1;
}

/* Calls a subcommand in this process with an argv built here, as the
 * command line would; getopt is restarted for it. */
static int call(int (*cmd)(int, char **), char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    optind = 0;
    fflush(NULL);
    int rc = cmd(argc, argv);
    fflush(NULL);
    return rc;
}

/* The verdict of this process's recorders, as `gdrtrace verdict` prints it:
 * read from the archive when it was written whole, so that the paths its
 * `next:` line names still exist after the private folder is removed. */
static int verdict(const struct run *r, int archived)
{
    char arc[PATH_MAX + 8];
    snprintf(arc, sizeof(arc), "%s.zst", r->stem);
    char **argv = calloc(8 + 2 * r->nlogs, sizeof(*argv));
    if (!argv) {
        gt_run_say("out of memory");
        return EXIT_SETUP;
    }
    int a = 0;
    argv[a++] = "verdict";
    /* NCCL's own log of this run, joined by commId: every communicator NCCL
     * made gets a verdict, also one that never reached the plugin. */
    for (size_t i = 0; i < r->nlogs; i++) {
        argv[a++] = "--nccl-log";
        argv[a++] = r->logs[i];
    }
    if (r->expect) {
        argv[a++] = "--expect";
        argv[a++] = (char *)r->expect;
    }
    if (r->allow_emulated)
        argv[a++] = "--allow-emulated";
    argv[a++] = archived ? arc : (char *)r->recdir;
    argv[a] = NULL;
    int rc = call(gt_cmd_verdict, argv);
    free(argv);
    return rc;
}

/* Whether the private folder holds a file named as a recorder: without
 * one dump is not called (it would refuse, exit GT_EXIT_EMPTY, and say so
 * once more per rank). */
static int any_recorder(const struct run *r)
{
    char pat[PATH_MAX + 32];
    snprintf(pat, sizeof(pat), "%s/" GTR_FILE_PREFIX "*" GTR_FILE_SUFFIX, r->recdir);
    glob_t g;
    int n = glob(pat, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    if (n)
        globfree(&g);
    return n > 0;
}

static int archive(const struct run *r)
{
    char out[PATH_MAX + 8];
    snprintf(out, sizeof(out), "%s.zst", r->stem);
    char *argv[] = {"dump", "-o", out, (char *)r->recdir, NULL};
    return call(gt_cmd_dump, argv);
}

/* Removes what the plugin and NCCL wrote into the private folder (invariant
 * 4), then the folder; anything else the job put there stays, and is said. */
static void clean(const struct run *r)
{
    char pat[PATH_MAX + 32];
    const char *const kinds[] = {GTR_FILE_PREFIX "*" GTR_FILE_SUFFIX, "nccl.*.log"};
    for (size_t k = 0; k < 2; k++) {
        if (k == 1 && !r->own_log)
            break;
        snprintf(pat, sizeof(pat), "%s/%s", r->recdir, kinds[k]);
        glob_t g;
        if (glob(pat, 0, NULL, &g) != 0)
            continue;
        for (size_t i = 0; i < g.gl_pathc; i++)
            unlink(g.gl_pathv[i]);
        globfree(&g);
    }
    if (rmdir(r->recdir) != 0)
        gt_run_say("left %s: %s", r->recdir,
                   errno == ENOTEMPTY ? "the job wrote other files into it" : strerror(errno));
}

/* What was done with the private folder, said once: kept (and why), or
 * removed (invariant 4).  arc is dump's code (GT_EXIT_EMPTY: no recorder,
 * so no archive: nothing to keep either). */
static void settle(const struct run *r, int arc, int nlogs, int busy)
{
    /* dump's 2: archived, but a file in the folder was not a readable
     * recorder; the verdict says 2 too, and the folder stays for a look. */
    int saved = arc == 0 || arc == GT_EXIT_INPUT || arc == GT_EXIT_EMPTY;
    if (!saved)
        gt_run_say("the archive %s.zst could not be written: the recorders stay in %s", r->stem,
                   r->recdir);
    else if (arc == GT_EXIT_INPUT)
        gt_run_say("a file in %s could not be archived (above): the folder stays", r->recdir);
    else if (nlogs < 0)
        gt_run_say("NCCL's log could not be copied into %s: the recorders and log stay in %s",
                   r->dir, r->recdir);
    else if (busy)
        ; /* said already: never deleted while anything of the job runs */
    else if (r->keep)
        gt_run_say("--keep: the recorders stay in %s", r->recdir);
    else
        clean(r);
}

int gt_run_collect(struct run *r, int st, const char *rank)
{
    int cmd_code = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WIFEXITED(st) ? WEXITSTATUS(st) : 0;
    if (WIFSIGNALED(st))
        gt_run_say("%s was killed by signal %d (%s): exit %d", r->cmd[0], WTERMSIG(st),
                   strsignal(WTERMSIG(st)), cmd_code);
    /* The verdict is the exit code only where asked for: on one node, or
     * under a launcher with --expect (a gate); else a rank exits with its
     * command's status, so that no launcher ends the job for a verdict
     * (invariant 3). */
    int gate = !r->command_status && (!rank || r->expect);

    /* Brief (under a launcher): dump's line and the verdict are held back;
     * the rank's line says both, the archive holds the details. */
    struct gt_capture cap_dump = {.saved = -1}, cap_v = {.saved = -1};
    if (gt_run_brief)
        gt_capture_begin(&cap_dump);
    int busy = wait_job(r);
    int arc = any_recorder(r) ? archive(r) : GT_EXIT_EMPTY;
    gt_capture_end(&cap_dump, arc != 0 && arc != GT_EXIT_EMPTY);
    int saved = arc == 0 || arc == GT_EXIT_INPUT;
    if (arc == GT_EXIT_EMPTY)
        gt_run_say("no recorder was written: %s never loaded the plugin (did it start NCCL?), or "
                   "the plugin recorded nothing; no archive written",
                   r->cmd[0]);
    /* Checked again before anything is removed: a process that started
     * after the wait (or outlived it) keeps the folder. */
    char what[512];
    if (!busy && job_left(r, what, sizeof(what))) {
        busy = 1;
        gt_run_say("%s still run after the archive was written: the folder %s is kept", what,
                   r->recdir);
    }
    int nlogs = copy_logs(r);
    if (gt_run_brief)
        gt_capture_begin(&cap_v);
    /* Brief and nothing recorded: the verdict is NO-DATA, said in the
     * rank's line, without verdict's explanation once per rank. */
    int vrc = gt_run_brief && arc == GT_EXIT_EMPTY
                  ? (r->expect ? GT_EXIT_EXPECT : gt_verdict_exit(GT_V_NO_DATA))
                  : verdict(r, arc == 0);
    int evidence_lost = !(saved || arc == GT_EXIT_EMPTY) || nlogs < 0;
    int final = cmd_code ? cmd_code : !gate ? 0 : evidence_lost ? EXIT_SETUP : vrc;
    if (gt_run_brief) {
        char v[128], a[PATH_MAX + 8];
        gt_capture_stop(&cap_v);
        gt_capture_verdict(&cap_v, v, sizeof(v));
        if (arc == GT_EXIT_EMPTY)
            snprintf(v, sizeof(v), "%s", gt_verdict_name(GT_V_NO_DATA));
        snprintf(a, sizeof(a), "%s.zst", r->stem);
        gt_run_rank_line(rank, r->host, v, final, saved ? a : NULL);
        gt_capture_end(&cap_v, 0);
        if (!strcmp(rank, "0"))
            gt_run_say(
                "the job's verdict, once every rank ended: gdrtrace verdict%s%s --nccl-log %s %s",
                r->expect ? " --expect " : "", r->expect ? r->expect : "", r->dir, r->dir);
    }
    settle(r, arc, nlogs, busy);

    for (size_t i = 0; i < r->nlogs; i++)
        free(r->logs[i]);
    free(r->logs);
    gt_run_restore_signals();
    int late = gt_run_late_signal();
    if (late)
        gt_run_say("signal %d (%s) came after %s ended: the archive was finished first", late,
                   strsignal(late), r->cmd[0]);
    if (cmd_code)
        gt_run_say("%s failed (exit %d): that is the exit code; the verdict's code is %d",
                   r->cmd[0], cmd_code, vrc);
    else if (!gate && evidence_lost)
        gt_run_say("exit 0 (the command's%s): the evidence above was not all kept",
                   r->command_status ? ", --command-status"
                                     : "; under a launcher without --expect");
    else if (!gate && vrc)
        gt_run_note("%s: exit 0 (the command's); the verdict's code is %d",
                    r->command_status ? "--command-status" : "under a launcher without --expect",
                    vrc);
    return final;
}
