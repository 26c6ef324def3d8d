/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_run.c — `gdrtrace run [--expect X] [--dir DIR] [--inner] [--keep] -- COMMAND...`:
 * one command for a canary job.  It makes NCCL load the plugin installed with
 * this gdrtrace (NCCL_NET_PLUGIN=gdrtrace and the plugin-only folder first on
 * LD_LIBRARY_PATH: the name works on every NCCL version, dist/module.mk), has
 * the recorders written into a folder of its own under GDRTRACE_DIR and
 * NCCL's INFO log for INIT,NET beside them, runs COMMAND, archives the
 * recorders (tools/cmd/cmd_dump.c) and copies the log into DIR, prints the verdict
 * (tools/cmd/cmd_verdict.c) and exits with the command's failure or the verdict.
 * Under a launcher it runs once per rank and judges only its own recorders;
 * `gdrtrace verdict DIR` judges the job.  This file sets the job's
 * environment up and drives the steps; run_launch.c runs the command,
 * run_collect.c takes the evidence afterwards (run.h).
 *
 * Invariants:
 *  1. Nothing the job set is overridden silently.  NCCL_NET_PLUGIN naming
 *     another plugin is refused, or wrapped with --inner (the plugin's inner
 *     transport); NCCL_NET and NCCL_DEBUG* are kept as set; each such
 *     decision is one "gdrtrace run:" line on stderr, and the log is read
 *     where the job's NCCL_DEBUG_FILE puts it.
 *  2. Recorders go only into a folder this process created (mkdtemp, 0700)
 *     under a GDRTRACE_DIR that is not on a network filesystem (netfs.h): a
 *     recorder is a shared mapping the job stores into.
 *  3. A failed command's status wins (128+N for a death by signal N, as a
 *     shell reports it); only a command that succeeded exits with the
 *     verdict's code, and under a launcher only with --expect (a gate the
 *     operator asked for): else a rank's exit is its command's, so that no
 *     launcher ends a job for a verdict; the job is judged afterwards.  gdrtrace's own failures use
 * 125, 126, 127 as env(1) and timeout(1) do, so they cannot be taken for a verdict.
 *  4. The recorders are removed only after their archive was written, and
 *     only what the plugin and NCCL wrote into the private folder, and never
 *     while anything of the job still runs: the command's whole process tree
 *     (this process is its child subreaper) and every writer of a recorder
 *     are waited for (GDRTRACE_RUN_WAIT s at most), checked again after the
 *     archive, and if anything outlasts the wait the folder stays and this
 *     is said.  No recorder: no archive (never an empty one).
 *  5. SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 sent to gdrtrace
 *     reach the command's process group (the command and what it started);
 *     a signal the caller ignored stays ignored for the command too.  Once
 *     the command ended they are only noted: the archive is finished first.
 *  6. The private folder is locked (an exclusive flock on its fd, close-on-
 *     exec so the command does not inherit it) from its creation until this
 *     process ends, however it ends: `gdrtrace prune` leaves a locked
 *     folder alone and prunes an unlocked one (a --keep, a failed archive, a
 *     SIGKILL) like any folder of recorders.
 *  7. NCCL_PROFILER_PLUGIN is set only when the job set none and the NCCL
 *     the job would load (libnccl.so.2 on its library path, probed in a
 *     child) is older than 2.28.3, which takes no profiler from the net
 *     plugin; a site's default profiler (libnccl-profiler.so, which 2.28.3+
 *     loads when the variable is unset) is never displaced.  Each decision
 *     is one "gdrtrace run:" line.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/env.h"
#include "tools/cmd/commands.h"
#include "tools/cmd/options.h"
#include "tools/cmd/run.h"
#include "tools/lib/esc.h"
#include "tools/lib/inputs.h"
#include "tools/lib/model.h"
#include "tools/lib/netfs.h"

#define PLUGIN_SO "libnccl-net-gdrtrace.so"
#define PLUGIN_SUBDIR "nccl-net-gdrtrace"
#define LOG_NAME "nccl.%h.%p.log"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: gdrtrace run [--expect dmabuf|peermem|host] [--dir DIR] [OPTION...] -- COMMAND...\n"
        "  One command for a canary job: runs COMMAND with NCCL loading the plugin\n"
        "  installed with this gdrtrace (NCCL_NET_PLUGIN=gdrtrace, its plugin-only folder\n"
        "  first on LD_LIBRARY_PATH), the recorders in a private folder under\n"
        "  $GDRTRACE_DIR (default /dev/shm; a network filesystem is refused) and NCCL's\n"
        "  INFO log for INIT,NET beside them; then archives both into DIR, prints the\n"
        "  verdict of these recorders with that log joined (verdict --nccl-log) and\n"
        "  removes them.  Under mpirun, srun or torchrun, run it per rank (a launcher\n"
        "  given as COMMAND is refused, exit 64, with the line to use): each rank\n"
        "  archives only its own (DIR/JOB.HOST.rRANK.zst, or .pPID without a rank),\n"
        "  and 'gdrtrace verdict --nccl-log DIR DIR' judges the whole job.  Under a\n"
        "  launcher (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID, or RANK\n"
        "  with WORLD_SIZE set) each rank prints one line (rank, host, verdict, exit,\n"
        "  archive) and exits with its command's status: a verdict ends no rank\n"
        "  unless --expect makes it a gate.\n"
        "  NCCL_NET_PLUGIN, NCCL_NET and NCCL_DEBUG* set by the job are kept and said\n"
        "  on stderr; GDRTRACE_JOB is set from the launcher's job id when unset.\n"
        "  --expect X  as verdict: exit 0 if the recorders are\n"
        "              DIRECT-DMABUF (dmabuf), DIRECT-PEERMEM (peermem) or\n"
        "              HOST-STAGED (host), else 20\n"
        "  --allow-emulated  as verdict: let --expect match a GDRTRACE_GPUMEM=1 run\n"
        "  --dir DIR   where the archive and NCCL's log go (default: the current\n"
        "              folder; created if missing)\n"
        "  --inner     when the job's NCCL_NET_PLUGIN names another plugin, trace\n"
        "              that one through the plugin (GDRTRACE_TRANSPORT=inner); else\n"
        "              such a job is refused\n"
        "  --keep      keep the private folder of recorders and log after archiving\n"
        "  Every process COMMAND started (its whole tree) and every writer of a\n"
        "  recorder is waited for, GDRTRACE_RUN_WAIT seconds at most (default 60);\n"
        "  what outlasts it is archived as it is and the private folder is kept.\n"
        "  No recorder written: no archive (never an empty one), verdict NO-DATA.\n"
        "  --full      under a launcher, every rank prints its whole verdict and notes\n"
        "              (default there: one line per rank; the details are in its archive)\n"
        "  --command-status  exit with the command's status only (0 when it\n"
        "              succeeded), not the verdict's (the default under a launcher\n"
        "              without --expect); judge the job with 'gdrtrace verdict DIR'\n"
        "exit: the command's status when it failed (128+N when signal N killed it),\n"
        "      else the verdict's code (0, 10-16; with --expect 0, 20 or 21; 2 an\n"
        "      unreadable recorder) -- under a launcher without --expect, and with\n"
        "      --command-status, 0; 125 run could not set up or archive (the\n"
        "      recorders are kept), 126 COMMAND cannot be executed, 127 COMMAND not\n"
        "      found, 64 usage or COMMAND is a launcher (nothing run)\n");
}

void gt_run_say(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fprintf(stderr, "gdrtrace run: %s\n", gt_esc(buf));
}

int gt_run_brief;

void gt_run_note(const char *fmt, ...)
{
    if (gt_run_brief)
        return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fprintf(stderr, "gdrtrace run: %s\n", gt_esc(buf));
}

const char *gt_run_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int gt_run_set(const char *name, const char *value)
{
    if (setenv(name, value, 1) == 0)
        return 0;
    gt_run_say("cannot set %s: %s", name, strerror(errno));
    return -1;
}

/* Letters, digits, '-', '_' and '.' stay; anything else (a '/' of a job id)
 * becomes '_', so a name built from it stays one entry of DIR. */
static void name_part(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < n; i++) {
        char c = src[i];
        dst[i] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || c == '.')
                     ? c
                     : '_';
    }
    dst[i] = '\0';
}

/* ---- where the plugin is ---------------------------------------------- */

/* A folder fit for LD_LIBRARY_PATH: it holds the plugin and no entry named
 * "gdrtrace" (NCCL <= 2.26 first dlopens the bare NCCL_NET_PLUGIN value). */
static int plugin_only(const char *dir)
{
    char p[PATH_MAX + 32];
    struct stat st;
    snprintf(p, sizeof(p), "%s/" PLUGIN_SO, dir);
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    snprintf(p, sizeof(p), "%s/gdrtrace", dir);
    return lstat(p, &st) != 0;
}

/* The plugin installed with this executable: $BINDIR/../lib[/<multiarch>]/
 * nccl-net-gdrtrace (make install, the Debian package), or, in the build
 * tree, the plugin-only folder beside the executable. */
static int find_plugin(struct run *r)
{
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (k <= 0) {
        gt_run_say("cannot read /proc/self/exe to find the plugin installed with gdrtrace: %s",
                   strerror(errno));
        return -1;
    }
    exe[k] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    static const char *const rel[] = {
        "../lib/" PLUGIN_SUBDIR,
#ifdef GT_MULTIARCH
        "../lib/" GT_MULTIARCH "/" PLUGIN_SUBDIR,
#endif
        "../lib64/" PLUGIN_SUBDIR, PLUGIN_SUBDIR, /* the build tree */
    };
    char tried[1024] = "";
    size_t tl = 0;
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        char p[PATH_MAX * 2];
        snprintf(p, sizeof(p), "%s/%s", exe, rel[i]);
        char *real = realpath(p, NULL);
        if (real && strlen(real) < sizeof(r->plugindir) && plugin_only(real)) {
            snprintf(r->plugindir, sizeof(r->plugindir), "%s", real);
            free(real);
            return 0;
        }
        free(real);
        if (tl < sizeof(tried))
            tl += (size_t)snprintf(tried + tl, sizeof(tried) - tl, "%s%s", tl ? ", " : "", p);
    }
    gt_run_say(
        "no plugin installed with this gdrtrace (%s): no folder holding %s and nothing named "
        "gdrtrace among %s",
        exe, PLUGIN_SO, tried);
    return -1;
}

/* ---- the job's environment -------------------------------------------- */

static int names_gdrtrace(const char *v)
{
    const char *b = strrchr(v, '/');
    b = b ? b + 1 : v;
    return !strcmp(v, "gdrtrace") || !strcmp(b, PLUGIN_SO);
}

/* NCCL_NET_PLUGIN and the inner transport (invariant 1).  0, or the exit code. */
static int pick_plugin(struct run *r)
{
    const char *v = gt_run_env("NCCL_NET_PLUGIN");
    if (v && names_gdrtrace(v)) {
        /* A path is a file of its own: it may be another build, or another
         * user's copy, not the plugin installed with this gdrtrace. */
        char mine[PATH_MAX + 32], *a = NULL, *b = NULL;
        snprintf(mine, sizeof(mine), "%s/" PLUGIN_SO, r->plugindir);
        struct stat st;
        if (strchr(v, '/') &&
            (!(a = realpath(v, NULL)) || !(b = realpath(mine, NULL)) || strcmp(a, b) != 0)) {
            char owner[64] = "";
            if (a && stat(a, &st) == 0 && st.st_uid != 0 && st.st_uid != geteuid())
                snprintf(owner, sizeof(owner), ", owned by another user (uid %u)",
                         (unsigned)st.st_uid);
            gt_run_say(
                "NCCL_NET_PLUGIN=%s (the job's) is another file than the plugin installed with "
                "this gdrtrace (%s)%s%s: kept, NCCL loads that one",
                v, mine, a ? "" : ", and cannot be resolved", owner);
        } else {
            gt_run_say("NCCL_NET_PLUGIN=%s (the job's) names gdrtrace already: kept", v);
        }
        free(a);
        free(b);
        if (r->inner)
            gt_run_say("--inner: the job names no other plugin to wrap; ignored");
        return 0;
    }
    if (!v && !r->inner)
        return gt_run_set("NCCL_NET_PLUGIN", "gdrtrace") ? EXIT_SETUP : 0;
    if (v && !r->inner && !strcasecmp(v, "none")) {
        gt_run_say(
            "the job sets NCCL_NET_PLUGIN=none: NCCL loads no external net plugin, so not "
            "gdrtrace either; unset NCCL_NET_PLUGIN to trace gdrtrace's own transports; nothing "
            "was run");
        return EXIT_SETUP;
    }
    if (v && !r->inner) {
        gt_run_say(
            "the job sets NCCL_NET_PLUGIN=%s (another net plugin) and NCCL loads one: run "
            "with --inner to trace that plugin through gdrtrace (GDRTRACE_TRANSPORT=inner), or "
            "unset NCCL_NET_PLUGIN to trace gdrtrace's own transports; nothing was run",
            v);
        return EXIT_SETUP;
    }
    /* --inner */
    const char *t = gt_run_env("GDRTRACE_TRANSPORT");
    if (t && strcmp(t, "inner") != 0) {
        gt_run_say("--inner conflicts with the job's GDRTRACE_TRANSPORT=%s; nothing was run", t);
        return EXIT_SETUP;
    }
    char lib[PATH_MAX];
    const char *set_inner = gt_run_env("GDRTRACE_INNER");
    if (!v) {
        if (!set_inner) {
            gt_run_say(
                "--inner: the job sets no NCCL_NET_PLUGIN (nor GDRTRACE_INNER) naming a plugin "
                "to wrap");
            return GT_EXIT_USAGE;
        }
        snprintf(lib, sizeof(lib), "%s", set_inner);
    } else {
        if (strchr(v, ',') || !strcasecmp(v, "none") || !strcmp(v, "STATIC_PLUGIN")) {
            gt_run_say("--inner wraps one plugin library, and the job's NCCL_NET_PLUGIN=%s is %s; "
                       "nothing was run",
                       v,
                       strchr(v, ',')           ? "a list"
                       : !strcasecmp(v, "none") ? "none (no external plugin)"
                                                : "the executable's own plugin");
            return EXIT_SETUP;
        }
        /* NCCL's lookup: a path or a lib*.so name as is, else libnccl-net-NAME.so. */
        size_t n = strlen(v);
        if (strchr(v, '/') || (!strncmp(v, "lib", 3) && n > 3 && strstr(v, ".so")))
            snprintf(lib, sizeof(lib), "%s", v);
        else
            snprintf(lib, sizeof(lib), "libnccl-net-%s.so", v);
        if (set_inner && strcmp(set_inner, lib) != 0) {
            gt_run_say(
                "--inner: the job sets both NCCL_NET_PLUGIN=%s and GDRTRACE_INNER=%s; which one "
                "to wrap is unclear; nothing was run",
                v, set_inner);
            return EXIT_SETUP;
        }
    }
    if (gt_run_set("NCCL_NET_PLUGIN", "gdrtrace") || gt_run_set("GDRTRACE_TRANSPORT", "inner") ||
        gt_run_set("GDRTRACE_INNER", lib))
        return EXIT_SETUP;
    if (v)
        gt_run_say("the job's NCCL_NET_PLUGIN=%s is wrapped: NCCL_NET_PLUGIN=gdrtrace "
                   "GDRTRACE_TRANSPORT=inner GDRTRACE_INNER=%s",
                   v, lib);
    else
        gt_run_say("the job's GDRTRACE_INNER=%s is wrapped: NCCL_NET_PLUGIN=gdrtrace "
                   "GDRTRACE_TRANSPORT=inner",
                   lib);
    return 0;
}

/* The version of the NCCL a process with this environment would load
 * (dlopen "libnccl.so.2", ncclGetVersion), probed in a child so nothing of
 * it stays in gdrtrace; *where is its file.  0 when none was found or it
 * did not answer within 5 s. */
static int probe_nccl(char *where, size_t n)
{
    int fd[2];
    where[0] = '\0';
    if (pipe(fd))
        return 0;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return 0;
    }
    if (pid == 0) {
        close(fd[0]);
        alarm(5);
        struct {
            int v;
            char path[PATH_MAX];
        } out = {0};
        void *h = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_LOCAL);
        int (*get)(int *) = h ? (int (*)(int *))dlsym(h, "ncclGetVersion") : NULL;
        Dl_info di;
        if (get && get(&out.v) == 0 && dladdr((void *)get, &di) && di.dli_fname)
            snprintf(out.path, sizeof(out.path), "%s", di.dli_fname);
        ssize_t w = write(fd[1], &out, sizeof(out));
        _exit(w == (ssize_t)sizeof(out) ? 0 : 1);
    }
    close(fd[1]);
    struct {
        int v;
        char path[PATH_MAX];
    } in = {0};
    ssize_t k = read(fd[0], &in, sizeof(in));
    close(fd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (k != (ssize_t)sizeof(in) || in.v <= 0)
        return 0;
    in.path[sizeof(in.path) - 1] = '\0';
    snprintf(where, n, "%s", in.path);
    return in.v;
}

/* NCCL_PROFILER_PLUGIN (invariant 7). */
static int pick_profiler(struct run *r)
{
    const char *v = gt_run_env("NCCL_PROFILER_PLUGIN");
    if (v) {
        if (strstr(v, "gdrtrace"))
            gt_run_say("NCCL_PROFILER_PLUGIN=%s (the job's) names gdrtrace's library: kept", v);
        else
            gt_run_say("NCCL_PROFILER_PLUGIN=%s (the job's) kept: NCCL loads that %s, so gdrtrace "
                       "records no collective metrics",
                       v, strcasecmp(v, "none") ? "profiler" : "(no profiler)");
        return 0;
    }
    char where[PATH_MAX];
    int ver = probe_nccl(where, sizeof(where));
    if (ver <= 0) {
        gt_run_note(
            "NCCL_PROFILER_PLUGIN left unset: the job's NCCL is not on its library path "
            "(libnccl.so.2), so its version is not known here; NCCL 2.28.3 and later take "
            "gdrtrace's profiler from the net plugin, older ones record no collective metrics "
            "unless NCCL_PROFILER_PLUGIN=%s/" PLUGIN_SO " is set",
            r->plugindir);
        return 0;
    }
    if (ver >= 22803) {
        gt_run_note("NCCL %d.%d.%d (%s) takes gdrtrace's profiler from the net plugin: "
                    "NCCL_PROFILER_PLUGIN left unset",
                    ver / 10000, ver / 100 % 100, ver % 100, where);
        return 0;
    }
    char so[PATH_MAX + 32];
    snprintf(so, sizeof(so), "%s/" PLUGIN_SO, r->plugindir);
    if (gt_run_set("NCCL_PROFILER_PLUGIN", so))
        return EXIT_SETUP;
    gt_run_say("NCCL %d.%d.%d (%s) loads a profiler only when NCCL_PROFILER_PLUGIN names one: "
               "NCCL_PROFILER_PLUGIN=%s set, for collective metrics",
               ver / 10000, ver / 100 % 100, ver % 100, where, so);
    return 0;
}

/* NCCL_NET and NCCL_DEBUG* (invariant 1): kept when set, ours when not. */
static int pick_nccl_env(struct run *r)
{
    const char *net = gt_run_env("NCCL_NET");
    if (net && strcasecmp(net, "gdrtrace") != 0)
        gt_run_say("NCCL_NET=%s (the job's) kept: NCCL uses only the network named %s, so the "
                   "plugin (named gdrtrace) may carry no traffic (verdict NO-DATA)",
                   net, net);
    else if (net)
        gt_run_say("NCCL_NET=%s (the job's) kept", net);

    const char *dbg = gt_run_env("NCCL_DEBUG"), *sub = gt_run_env("NCCL_DEBUG_SUBSYS"),
               *file = gt_run_env("NCCL_DEBUG_FILE");
    char own[sizeof(r->logpat)];
    snprintf(own, sizeof(own), "%.*s/%s", PATH_MAX, r->recdir, LOG_NAME);
    if (!dbg) {
        /* NCCL_DEBUG unset: the job logs nothing; ours adds INFO for INIT,NET,
         * into the job's own file if it names one. */
        if (gt_run_set("NCCL_DEBUG", "INFO") ||
            (!sub && gt_run_set("NCCL_DEBUG_SUBSYS", "INIT,NET")) ||
            (!file && gt_run_set("NCCL_DEBUG_FILE", own)))
            return EXIT_SETUP;
        if (sub)
            gt_run_say("NCCL_DEBUG_SUBSYS=%s (the job's) kept%s", sub,
                       strstr(sub, "INIT") && strstr(sub, "NET")
                           ? ""
                           : ": NCCL's INIT and NET lines are logged only if it selects them");
        if (file)
            gt_run_say(
                "NCCL_DEBUG_FILE=%s (the job's) kept: NCCL_DEBUG=INFO logs there, read from there",
                file);
    } else {
        /* The job chose its log: every NCCL_DEBUG* stays as set. */
        gt_run_say("NCCL_DEBUG=%s%s%s (the job's) kept; NCCL's log %s%s", dbg,
                   sub ? " NCCL_DEBUG_SUBSYS=" : "", sub ? sub : "",
                   file ? "is read from NCCL_DEBUG_FILE="
                        : "goes to the job's output (no NCCL_DEBUG_FILE): "
                          "not archived",
                   file ? file : "");
    }
    const char *pat = dbg ? file : (file ? file : own);
    if (pat && strlen(pat) >= sizeof(r->logpat)) {
        gt_run_say("NCCL_DEBUG_FILE is longer than %zu bytes; nothing was run",
                   sizeof(r->logpat) - 1);
        return EXIT_SETUP;
    }
    snprintf(r->logpat, sizeof(r->logpat), "%s", pat ? pat : "");
    r->own_log = !dbg && !file;
    return 0;
}

static int prepend_ld_path(const char *dir)
{
    const char *old = gt_run_env("LD_LIBRARY_PATH");
    size_t n = strlen(dir) + (old ? strlen(old) + 1 : 0) + 1;
    char *v = malloc(n);
    if (!v) {
        gt_run_say("out of memory");
        return -1;
    }
    snprintf(v, n, "%s%s%s", dir, old ? ":" : "", old ? old : "");
    int rc = gt_run_set("LD_LIBRARY_PATH", v);
    free(v);
    return rc;
}

/* mkdir -p DIR, then a writable folder: checked before the job runs, so a
 * long job never ends with nowhere to put its evidence. */
static int make_dir(const char *dir)
{
    /* A link another user owns decides where the evidence goes: refused, as
     * the kernel's protected_symlinks refuses one in a sticky folder. */
    struct stat lst;
    if (lstat(dir, &lst) == 0 && S_ISLNK(lst.st_mode) && lst.st_uid != 0 &&
        lst.st_uid != geteuid()) {
        gt_run_say(
            "--dir %s: a symbolic link owned by another user (uid %u): refused; name the folder "
            "it points to if it is meant",
            dir, (unsigned)lst.st_uid);
        return -1;
    }
    char p[PATH_MAX];
    if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p)) {
        gt_run_say("--dir %s: path too long", dir);
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            gt_run_say("--dir %s: cannot create %s: %s", dir, p, strerror(errno));
            return -1;
        }
        *s = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        gt_run_say("--dir %s: cannot create it: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
        gt_run_say("--dir %s: not a folder", dir);
        return -1;
    }
    if (access(p, W_OK | X_OK) != 0) {
        gt_run_say("--dir %s: cannot write into it: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* The archive's name, DIR/JOB.HOST.rRANK (.pPID without a rank): ranks of
 * one job never collide in DIR; a second run of the same rank into the same
 * DIR gets .2, .3 … rather than replacing the first's evidence. */
static int pick_stem(struct run *r)
{
    char j[128], h[128], who[32];
    name_part(j, sizeof(j), r->job);
    name_part(h, sizeof(h), r->host);
    const char *rank = gt_run_pick_rank();
    if (rank)
        snprintf(who, sizeof(who), "r%s", rank);
    else
        snprintf(who, sizeof(who), "p%d", (int)getpid());
    for (int i = 1; i < 1000; i++) {
        char suffix[16] = "";
        if (i > 1)
            snprintf(suffix, sizeof(suffix), ".%d", i);
        char p[PATH_MAX + 8];
        snprintf(r->stem, sizeof(r->stem), "%s/%s.%s.%s%s", r->dir, j, h, who, suffix);
        snprintf(p, sizeof(p), "%s.zst", r->stem);
        if (access(p, F_OK) != 0 && errno == ENOENT)
            return 0;
    }
    gt_run_say("--dir %s holds %s.%s.%s.zst and 998 more runs of it: choose another DIR", r->dir, j,
               h, who);
    return -1;
}

/* ---- a launcher given as COMMAND ---------------------------------------- */

/* A launcher's options that take arguments, as " -opt --opt … " lists:
 * one argument (one1), two (one2: --mca NAME VALUE); any other option is
 * taken for a flag, and a long one written --opt=value takes none. */
struct lopt {
    const char *one1, *one2;
};

static const struct lopt mpirun_opts = {
    " -n -np -c -N -H -host --host -hosts -hostfile --hostfile -machinefile --machinefile -f -x "
    "-npernode --npernode -ppn --map-by -map-by --bind-to -bind-to --rank-by -rank-by -wdir "
    "--wdir -wd --prefix -prefix --output-filename -output-filename --timeout -launcher "
    "-bootstrap -iface --app -app -am --am --tune -tune ",
    " -mca --mca -gmca --gmca -genv -env "};
static const struct lopt srun_opts = {
    " -n -N -c -p -t -J -o -e -i -w -x -A -q -D -m -B -G -C -d -L --ntasks --nodes "
    "--cpus-per-task --partition --time --job-name --output --error --input --nodelist --exclude "
    "--account --qos --chdir --distribution --gpus --gpus-per-node --gpus-per-task --gres --mem "
    "--mem-per-cpu --mem-per-gpu --mpi --export --cpu-bind --ntasks-per-node --constraint "
    "--reservation --jobid --dependency --licenses --signal ",
    ""};
static const struct lopt torchrun_opts = {
    " --nnodes --nproc-per-node --nproc_per_node --rdzv-backend --rdzv_backend --rdzv-endpoint "
    "--rdzv_endpoint --rdzv-id --rdzv_id --rdzv-conf --rdzv_conf --max-restarts --max_restarts "
    "--monitor-interval --monitor_interval --start-method --start_method --role --node-rank "
    "--node_rank --master-addr --master_addr --master-port --master_port --local-addr "
    "--local_addr --log-dir --log_dir -r --redirects -t --tee --local-ranks-filter "
    "--local_ranks_filter --logs-specs --logs_specs ",
    ""};

static int in_list(const char *list, const char *a)
{
    size_t n = strlen(a);
    for (const char *p = strstr(list, a); p; p = strstr(p + 1, a))
        if (p > list && p[-1] == ' ' && p[n] == ' ')
            return 1;
    return 0;
}

/* How many arguments follow option a of a launcher (0: a flag, or --opt=v). */
static int opt_args(const struct lopt *t, const char *a)
{
    if (a[0] == '-' && a[1] == '-' && strchr(a, '='))
        return 0;
    return in_list(t->one2, a) ? 2 : in_list(t->one1, a) ? 1 : 0;
}

/* The index in cmd of the launched program (the first argument that is not
 * an option of the launcher nor an option's value); n when none. */
static int program_at(char **cmd, int n, const struct lopt *t)
{
    int i = 1;
    while (i < n && cmd[i][0] == '-') {
        if (!strcmp(cmd[i], "--"))
            return i + 1;
        i += 1 + opt_args(t, cmd[i]);
    }
    return i < n ? i : n;
}

/* torchrun's --nnodes: N or MIN:MAX; several nodes when the most is > 1. */
static int torchrun_nodes(char **cmd, int n)
{
    for (int i = 1; i < n && cmd[i][0] == '-'; i++) {
        const char *v = NULL;
        if (!strncmp(cmd[i], "--nnodes=", 9))
            v = cmd[i] + 9;
        else if (!strcmp(cmd[i], "--nnodes") && i + 1 < n)
            v = cmd[i + 1];
        if (v) {
            const char *c = strchr(v, ':');
            return atoi(c ? c + 1 : v);
        }
        i += opt_args(&torchrun_opts, cmd[i]);
    }
    return 1;
}

/* One word for a shell: as it is when it needs no quotes, else in single quotes. */
static size_t shell_word(char *out, size_t n, const char *w)
{
    if (*w &&
        strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") ==
            strlen(w))
        return (size_t)snprintf(out, n, " %s", w);
    size_t o = (size_t)snprintf(out, n, " '");
    for (; *w && o + 5 < n; w++)
        o += *w == '\'' ? (size_t)snprintf(out + o, n - o, "'\\''")
                        : (size_t)snprintf(out + o, n - o, "%c", *w);
    if (o < n)
        o += (size_t)snprintf(out + o, n - o, "'");
    return o;
}

/* COMMAND is a launcher (mpirun, mpiexec, srun; torchrun on several nodes):
 * under one gdrtrace run only this node would be traced.  Says so with the
 * line that runs gdrtrace per rank; returns GT_EXIT_USAGE then, else 0. */
static int refuse_launcher(struct run *r, int argc, char **argv)
{
    int n = 0;
    while (r->cmd[n])
        n++;
    const char *b = strrchr(r->cmd[0], '/');
    b = b ? b + 1 : r->cmd[0];
    const struct lopt *t = NULL;
    int torch = 0;
    if (!strncmp(b, "mpirun", 6) || !strncmp(b, "mpiexec", 7) || !strncmp(b, "orterun", 7) ||
        !strncmp(b, "prterun", 7))
        t = &mpirun_opts;
    else if (!strcmp(b, "srun"))
        t = &srun_opts;
    else if (!strcmp(b, "torchrun") && torchrun_nodes(r->cmd, n) > 1)
        t = &torchrun_opts, torch = 1;
    if (!t)
        return 0;
    int p = program_at(r->cmd, n, t);
    static char line[8192];
    size_t o = 0;
    for (int i = 0; i < p && o < sizeof(line); i++)
        if (!torch || (strcmp(r->cmd[i], "-m") != 0 && strcmp(r->cmd[i], "--module") != 0))
            o += shell_word(line + o, sizeof(line) - o, r->cmd[i]); /* -m: python's, below */
    int no_python = 0, module = 0;
    for (int i = 1; torch && i < p; i++) {
        no_python |= !strcmp(r->cmd[i], "--no-python") || !strcmp(r->cmd[i], "--no_python");
        module |= !strcmp(r->cmd[i], "-m") || !strcmp(r->cmd[i], "--module");
    }
    if (torch && !no_python && o < sizeof(line))
        o += (size_t)snprintf(line + o, sizeof(line) - o, " --no-python");
    if (o < sizeof(line))
        o += (size_t)snprintf(line + o, sizeof(line) - o, " gdrtrace run");
    /* our own options, as given (argv[optind - 1] may be the "--") */
    int ours = (int)(r->cmd - argv);
    for (int i = 1; i < ours && i < argc && o < sizeof(line); i++)
        if (strcmp(argv[i], "--") != 0)
            o += shell_word(line + o, sizeof(line) - o, argv[i]);
    if (o < sizeof(line))
        o += (size_t)snprintf(line + o, sizeof(line) - o, " --");
    if (torch && !no_python && o < sizeof(line))
        o += (size_t)snprintf(line + o, sizeof(line) - o, " python%s", module ? " -m" : "");
    for (int i = p; i < n && o < sizeof(line); i++)
        o += shell_word(line + o, sizeof(line) - o, r->cmd[i]);
    if (p >= n && o < sizeof(line))
        snprintf(line + o, sizeof(line) - o, " <your program and its arguments>");
    fprintf(stderr,
            "gdrtrace run: %s is a launcher%s: under one gdrtrace run only this node would be "
            "traced (ranks on other nodes get neither the plugin nor a recorder folder), and the "
            "verdict would be one for the whole launch; nothing was run.  Run gdrtrace per rank, "
            "under the launcher (exit %d):\n ",
            gt_esc(b), torch ? " on several nodes (--nnodes)" : "", GT_EXIT_USAGE);
    fprintf(stderr, "%s\n", gt_esc(line));
    fprintf(stderr,
            "  then judge the job once every rank ended: gdrtrace verdict --nccl-log %s %s\n",
            gt_esc(r->dir), gt_esc(r->dir));
    return GT_EXIT_USAGE;
}

/* -1: go on; else the exit code */
static int parse(struct run *r, int argc, char **argv)
{
    static const struct option opts[] = {GT_LONG_EXPECT,
                                         {"allow-emulated", no_argument, 0, 'E'},
                                         {"dir", required_argument, 0, 'd'},
                                         {"inner", no_argument, 0, 'i'},
                                         {"keep", no_argument, 0, 'k'},
                                         GT_LONG_FULL,
                                         {"command-status", no_argument, 0, 'C'},
                                         GT_LONG_HELP,
                                         {0, 0, 0, 0}};
    struct gt_opts o = GT_OPTS_INIT("run");
    int c, rc;
    /* '+': the options end at COMMAND, whose own options are not ours. */
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'E':
            r->allow_emulated = 1;
            break;
        case 'd':
            if (!*optarg) {
                fprintf(stderr, "gdrtrace run: --dir needs a folder, not ''\n");
                return GT_EXIT_USAGE;
            }
            r->dir = optarg;
            break;
        case 'i':
            r->inner = 1;
            break;
        case 'k':
            r->keep = 1;
            break;
        case 'C':
            r->command_status = 1;
            break;
        default:
            if ((rc = gt_opts_default(&o, c, optarg, usage)) >= 0)
                return rc;
        }
    }
    r->expect = o.expect_arg;
    r->full = o.full;
    if (optind >= argc) {
        fprintf(stderr, "gdrtrace run: no COMMAND to run (gdrtrace run [options] -- COMMAND)\n");
        usage(stderr);
        return GT_EXIT_USAGE;
    }
    r->cmd = argv + optind;
    return -1;
}

/* The private folder for the recorders under GDRTRACE_DIR (invariants 2
 * and 6), then the command's environment pointing into it: 0, or the exit
 * code (nothing was run). */
static int private_folder(struct run *r)
{
    /* Absolute, so that a command that changes folder still finds it. */
    const char *dir_var = gt_run_env("GDRTRACE_DIR") ? gt_run_env("GDRTRACE_DIR") : "/dev/shm";
    char base[PATH_MAX];
    if (!realpath(dir_var, base)) {
        gt_run_say("GDRTRACE_DIR=%s: %s; nothing was run", dir_var, strerror(errno));
        return EXIT_SETUP;
    }
    char err[PATH_MAX + 128];
    int nfs = gt_netfs_check(base, err, sizeof(err));
    if (nfs) {
        gt_run_say("GDRTRACE_DIR: %s%s; nothing was run", err,
                   nfs > 0 ? ": a recorder is a shared memory mapping and must be node-local (set "
                             "GDRTRACE_DIR to a local folder; the default is /dev/shm)"
                           : "");
        return EXIT_SETUP;
    }
    if (snprintf(r->recdir, sizeof(r->recdir), "%s/gdrtrace-run.XXXXXX", base) >=
            (int)sizeof(r->recdir) ||
        !mkdtemp(r->recdir)) {
        gt_run_say("cannot create a folder for the recorders in GDRTRACE_DIR=%s: %s", base,
                   strerror(errno));
        return EXIT_SETUP;
    }
    /* invariant 6: held until exit (never closed: the kernel releases it) */
    int lockfd = open(r->recdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lockfd < 0 || flock(lockfd, LOCK_EX | LOCK_NB) != 0)
        gt_run_say("cannot lock %s (%s): gdrtrace prune may take it for a folder left behind",
                   r->recdir, strerror(errno));
    int rc = 0;
    if (gt_run_set("GDRTRACE_DIR", r->recdir) || (rc = pick_nccl_env(r)) != 0 ||
        prepend_ld_path(r->plugindir) || (rc = pick_profiler(r)) != 0) {
        rmdir(r->recdir);
        return rc ? rc : EXIT_SETUP;
    }
    return 0;
}

int gt_cmd_run(int argc, char **argv)
{
    struct run r = {.dir = "."};
    int rc = parse(&r, argc, argv);
    if (rc >= 0)
        return rc;
    if ((rc = refuse_launcher(&r, argc, argv)) != 0)
        return rc;
    const char *rank = gt_run_pick_rank();
    gt_run_brief = rank && !r.full;
    if (gethostname(r.host, sizeof(r.host) - 1) != 0)
        snprintf(r.host, sizeof(r.host), "nohost");

    /* Everything that can refuse, before the job runs. */
    if (find_plugin(&r) || make_dir(r.dir))
        return EXIT_SETUP;
    if ((rc = pick_plugin(&r)) != 0)
        return rc;
    gt_run_pick_job(&r);
    if (pick_stem(&r))
        return EXIT_SETUP;
    if ((rc = private_folder(&r)) != 0)
        return rc;
    if (gt_run_env("GDRTRACE_DISABLE") && strcmp(gt_run_env("GDRTRACE_DISABLE"), "0") != 0)
        gt_run_say(
            "GDRTRACE_DISABLE=%s (the job's) kept: the plugin records nothing (verdict NO-DATA)",
            gt_run_env("GDRTRACE_DISABLE"));
    gt_run_note("plugin %s/%s, recorders in %s, archive %s.zst", r.plugindir, PLUGIN_SO, r.recdir,
                r.stem);

    r.t0 = time(NULL);
    int code = 0;
    int st = gt_run_command(&r, &code);
    if (st == -1) {
        gt_run_restore_signals();
        rmdir(r.recdir);
        return code;
    }
    return gt_run_collect(&r, st, rank);
}
