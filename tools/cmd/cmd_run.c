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
 * `gdrtrace verdict DIR` judges the job.
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
 *     verdict's code.  gdrtrace's own failures use 125, 126, 127 as env(1)
 *     and timeout(1) do, so they cannot be taken for a verdict.
 *  4. The recorders are removed only after their archive was written, and
 *     only what the plugin and NCCL wrote into the private folder, and never
 *     while a writer still runs: a process the command left behind is waited
 *     for (GDRTRACE_RUN_WAIT s at most), and if it outlasts the wait the
 *     folder stays and this is said.
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
#include "tools/lib/esc.h"
#include "tools/lib/inputs.h"
#include "tools/lib/model.h"
#include "tools/lib/netfs.h"
#include "tools/cmd/runline.h"

#define EXIT_SETUP 125    /* gdrtrace run could not set up, or could not archive */
#define EXIT_NOEXEC 126   /* COMMAND found but not executable */
#define EXIT_NOTFOUND 127 /* COMMAND not found */

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
        "  removes them.  Under mpirun or srun, run it per rank: each rank archives\n"
        "  only its own (DIR/JOB.HOST.rRANK.zst, or .pPID without a rank), and\n"
        "  'gdrtrace verdict --nccl-log DIR DIR' judges the whole job.  Under a\n"
        "  launcher (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID set)\n"
        "  each rank prints one line: rank, host, verdict, exit, archive.\n"
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
        "  A process COMMAND left running that still writes its recorder is waited\n"
        "  for, GDRTRACE_RUN_WAIT seconds at most (default 60); one that outlasts it\n"
        "  is archived as it is and the private folder is kept.\n"
        "  --full      under a launcher, every rank prints its whole verdict and notes\n"
        "              (default there: one line per rank, the whole verdict only for a\n"
        "              rank whose exit is not 0)\n"
        "  --command-status  exit with the command's status only (0 when it\n"
        "              succeeded), not the verdict's: a launcher then aborts no rank for\n"
        "              a verdict; judge the job with 'gdrtrace verdict DIR'\n"
        "exit: the command's status when it failed (128+N when signal N killed it),\n"
        "      else the verdict's code (0, 10-16; with --expect 0, 20 or 21; 2 an\n"
        "      unreadable recorder); 125 run could not set up or archive (the\n"
        "      recorders are kept), 126 COMMAND cannot be executed, 127 COMMAND not\n"
        "      found, 64 usage\n");
}

struct run {
    const char *expect;
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

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fprintf(stderr, "gdrtrace run: %s\n", gt_esc(buf));
}

/* Under a launcher (a rank variable set, no --full) each rank prints one
 * line: its notes (what was found and done, nothing the job set) are left
 * out, as they would be N times alike in the job's log.  Decisions on the
 * job's settings and every problem still use say(). */
static int g_brief;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    if (g_brief)
        return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fprintf(stderr, "gdrtrace run: %s\n", gt_esc(buf));
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int set(const char *name, const char *value)
{
    if (setenv(name, value, 1) == 0)
        return 0;
    say("cannot set %s: %s", name, strerror(errno));
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
        say("cannot read /proc/self/exe to find the plugin installed with gdrtrace: %s",
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
    say("no plugin installed with this gdrtrace (%s): no folder holding %s and nothing named "
        "gdrtrace among %s",
        exe, PLUGIN_SO, tried);
    return -1;
}

/* ---- the job's environment -------------------------------------------- */

static void pick_job(struct run *r)
{
    const char *v = env("GDRTRACE_JOB");
    if (v) {
        snprintf(r->job, sizeof(r->job), "%s", v);
        note("job %s (GDRTRACE_JOB, as the job set it)", r->job);
        return;
    }
    /* The plugin's own order (shim/recorder.c), so the recorders and the
     * archive name agree with a run without gdrtrace run. */
    static const char *const from[] = {"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID",
                                       "OMPI_MCA_orte_ess_jobid", "PMIX_NAMESPACE"};
    for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
        if ((v = env(from[i])) != NULL) {
            snprintf(r->job, sizeof(r->job), "%s", v);
            if (set("GDRTRACE_JOB", r->job) == 0)
                note("job %s (GDRTRACE_JOB set from %s)", r->job, from[i]);
            return;
        }
    }
    struct tm tm;
    time_t now = time(NULL);
    char when[32];
    strftime(when, sizeof(when), "%Y%m%dT%H%M%S", gmtime_r(&now, &tm));
    snprintf(r->job, sizeof(r->job), "run-%s-%d", when, (int)getpid());
    if (set("GDRTRACE_JOB", r->job) == 0)
        note("job %s (GDRTRACE_JOB generated: no launcher job id in the environment)", r->job);
}

/* This process's rank, for the archive's name: the launcher's own variable. */
static const char *pick_rank(void)
{
    static const char *const from[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
        const char *v = env(from[i]);
        if (v && strspn(v, "0123456789") == strlen(v) && strlen(v) < 12)
            return v;
    }
    return NULL;
}

static int names_gdrtrace(const char *v)
{
    const char *b = strrchr(v, '/');
    b = b ? b + 1 : v;
    return !strcmp(v, "gdrtrace") || !strcmp(b, PLUGIN_SO);
}

/* NCCL_NET_PLUGIN and the inner transport (invariant 1).  0, or the exit code. */
static int pick_plugin(struct run *r)
{
    const char *v = env("NCCL_NET_PLUGIN");
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
            say("NCCL_NET_PLUGIN=%s (the job's) is another file than the plugin installed with "
                "this gdrtrace (%s)%s%s: kept, NCCL loads that one",
                v, mine, a ? "" : ", and cannot be resolved", owner);
        } else {
            say("NCCL_NET_PLUGIN=%s (the job's) names gdrtrace already: kept", v);
        }
        free(a);
        free(b);
        if (r->inner)
            say("--inner: the job names no other plugin to wrap; ignored");
        return 0;
    }
    if (!v && !r->inner)
        return set("NCCL_NET_PLUGIN", "gdrtrace") ? EXIT_SETUP : 0;
    if (v && !r->inner && !strcasecmp(v, "none")) {
        say("the job sets NCCL_NET_PLUGIN=none: NCCL loads no external net plugin, so not "
            "gdrtrace either; unset NCCL_NET_PLUGIN to trace gdrtrace's own transports; nothing "
            "was run");
        return EXIT_SETUP;
    }
    if (v && !r->inner) {
        say("the job sets NCCL_NET_PLUGIN=%s (another net plugin) and NCCL loads one: run "
            "with --inner to trace that plugin through gdrtrace (GDRTRACE_TRANSPORT=inner), or "
            "unset NCCL_NET_PLUGIN to trace gdrtrace's own transports; nothing was run",
            v);
        return EXIT_SETUP;
    }
    /* --inner */
    const char *t = env("GDRTRACE_TRANSPORT");
    if (t && strcmp(t, "inner") != 0) {
        say("--inner conflicts with the job's GDRTRACE_TRANSPORT=%s; nothing was run", t);
        return EXIT_SETUP;
    }
    char lib[PATH_MAX];
    const char *set_inner = env("GDRTRACE_INNER");
    if (!v) {
        if (!set_inner) {
            say("--inner: the job sets no NCCL_NET_PLUGIN (nor GDRTRACE_INNER) naming a plugin "
                "to wrap");
            return GT_EXIT_USAGE;
        }
        snprintf(lib, sizeof(lib), "%s", set_inner);
    } else {
        if (strchr(v, ',') || !strcasecmp(v, "none") || !strcmp(v, "STATIC_PLUGIN")) {
            say("--inner wraps one plugin library, and the job's NCCL_NET_PLUGIN=%s is %s; "
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
            say("--inner: the job sets both NCCL_NET_PLUGIN=%s and GDRTRACE_INNER=%s; which one "
                "to wrap is unclear; nothing was run",
                v, set_inner);
            return EXIT_SETUP;
        }
    }
    if (set("NCCL_NET_PLUGIN", "gdrtrace") || set("GDRTRACE_TRANSPORT", "inner") ||
        set("GDRTRACE_INNER", lib))
        return EXIT_SETUP;
    if (v)
        say("the job's NCCL_NET_PLUGIN=%s is wrapped: NCCL_NET_PLUGIN=gdrtrace "
            "GDRTRACE_TRANSPORT=inner GDRTRACE_INNER=%s",
            v, lib);
    else
        say("the job's GDRTRACE_INNER=%s is wrapped: NCCL_NET_PLUGIN=gdrtrace "
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
    const char *v = env("NCCL_PROFILER_PLUGIN");
    if (v) {
        if (strstr(v, "gdrtrace"))
            say("NCCL_PROFILER_PLUGIN=%s (the job's) names gdrtrace's library: kept", v);
        else
            say("NCCL_PROFILER_PLUGIN=%s (the job's) kept: NCCL loads that %s, so gdrtrace "
                "records no collective metrics",
                v, strcasecmp(v, "none") ? "profiler" : "(no profiler)");
        return 0;
    }
    char where[PATH_MAX];
    int ver = probe_nccl(where, sizeof(where));
    if (ver <= 0) {
        note("NCCL_PROFILER_PLUGIN left unset: the job's NCCL is not on its library path "
             "(libnccl.so.2), so its version is not known here; NCCL 2.28.3 and later take "
             "gdrtrace's profiler from the net plugin, older ones record no collective metrics "
             "unless NCCL_PROFILER_PLUGIN=%s/" PLUGIN_SO " is set",
             r->plugindir);
        return 0;
    }
    if (ver >= 22803) {
        note("NCCL %d.%d.%d (%s) takes gdrtrace's profiler from the net plugin: "
             "NCCL_PROFILER_PLUGIN left unset",
             ver / 10000, ver / 100 % 100, ver % 100, where);
        return 0;
    }
    char so[PATH_MAX + 32];
    snprintf(so, sizeof(so), "%s/" PLUGIN_SO, r->plugindir);
    if (set("NCCL_PROFILER_PLUGIN", so))
        return EXIT_SETUP;
    say("NCCL %d.%d.%d (%s) loads a profiler only when NCCL_PROFILER_PLUGIN names one: "
        "NCCL_PROFILER_PLUGIN=%s set, for collective metrics",
        ver / 10000, ver / 100 % 100, ver % 100, where, so);
    return 0;
}

/* NCCL_NET and NCCL_DEBUG* (invariant 1): kept when set, ours when not. */
static int pick_nccl_env(struct run *r)
{
    const char *net = env("NCCL_NET");
    if (net && strcasecmp(net, "gdrtrace") != 0)
        say("NCCL_NET=%s (the job's) kept: NCCL uses only the network named %s, so the "
            "plugin (named gdrtrace) may carry no traffic (verdict NO-DATA)",
            net, net);
    else if (net)
        say("NCCL_NET=%s (the job's) kept", net);

    const char *dbg = env("NCCL_DEBUG"), *sub = env("NCCL_DEBUG_SUBSYS"),
               *file = env("NCCL_DEBUG_FILE");
    char own[sizeof(r->logpat)];
    snprintf(own, sizeof(own), "%.*s/%s", PATH_MAX, r->recdir, LOG_NAME);
    if (!dbg) {
        /* NCCL_DEBUG unset: the job logs nothing; ours adds INFO for INIT,NET,
         * into the job's own file if it names one. */
        if (set("NCCL_DEBUG", "INFO") || (!sub && set("NCCL_DEBUG_SUBSYS", "INIT,NET")) ||
            (!file && set("NCCL_DEBUG_FILE", own)))
            return EXIT_SETUP;
        if (sub)
            say("NCCL_DEBUG_SUBSYS=%s (the job's) kept%s", sub,
                strstr(sub, "INIT") && strstr(sub, "NET")
                    ? ""
                    : ": NCCL's INIT and NET lines are logged only if it selects them");
        if (file)
            say("NCCL_DEBUG_FILE=%s (the job's) kept: NCCL_DEBUG=INFO logs there, read from there",
                file);
    } else {
        /* The job chose its log: every NCCL_DEBUG* stays as set. */
        say("NCCL_DEBUG=%s%s%s (the job's) kept; NCCL's log %s%s", dbg,
            sub ? " NCCL_DEBUG_SUBSYS=" : "", sub ? sub : "",
            file ? "is read from NCCL_DEBUG_FILE="
                 : "goes to the job's output (no NCCL_DEBUG_FILE): "
                   "not archived",
            file ? file : "");
    }
    const char *pat = dbg ? file : (file ? file : own);
    if (pat && strlen(pat) >= sizeof(r->logpat)) {
        say("NCCL_DEBUG_FILE is longer than %zu bytes; nothing was run", sizeof(r->logpat) - 1);
        return EXIT_SETUP;
    }
    snprintf(r->logpat, sizeof(r->logpat), "%s", pat ? pat : "");
    r->own_log = !dbg && !file;
    return 0;
}

static int prepend_ld_path(const char *dir)
{
    const char *old = env("LD_LIBRARY_PATH");
    size_t n = strlen(dir) + (old ? strlen(old) + 1 : 0) + 1;
    char *v = malloc(n);
    if (!v) {
        say("out of memory");
        return -1;
    }
    snprintf(v, n, "%s%s%s", dir, old ? ":" : "", old ? old : "");
    int rc = set("LD_LIBRARY_PATH", v);
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
        say("--dir %s: a symbolic link owned by another user (uid %u): refused; name the folder "
            "it points to if it is meant",
            dir, (unsigned)lst.st_uid);
        return -1;
    }
    char p[PATH_MAX];
    if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p)) {
        say("--dir %s: path too long", dir);
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            say("--dir %s: cannot create %s: %s", dir, p, strerror(errno));
            return -1;
        }
        *s = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        say("--dir %s: cannot create it: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
        say("--dir %s: not a folder", dir);
        return -1;
    }
    if (access(p, W_OK | X_OK) != 0) {
        say("--dir %s: cannot write into it: %s", dir, strerror(errno));
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
    const char *rank = pick_rank();
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
    say("--dir %s holds %s.%s.%s.zst and 998 more runs of it: choose another DIR", r->dir, j, h,
        who);
    return -1;
}

/* ---- running the command ---------------------------------------------- */

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

static void restore_signals(void)
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

/* Runs the command; returns its wait status, or -1 when it could not be
 * started (*exit_code set: 126, 127 or 125). */
static int run_command(struct run *r, int *exit_code)
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

    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        say("pipe: %s", strerror(errno));
        *exit_code = EXIT_SETUP;
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        say("fork: %s", strerror(errno));
        *exit_code = EXIT_SETUP;
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        close(pfd[0]);
        setpgid(0, 0);
        give_tty(getpid());
        restore_signals();
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
            say("waitpid: %s", strerror(errno));
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
        say("cannot run %s: %s", r->cmd[0], strerror(e));
        *exit_code = e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
        return -1;
    }
    return st;
}

/* ---- after the command ------------------------------------------------ */

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
        say("NCCL wrote no log (%s): was NCCL initialised?", r->logpat);
        return 0;
    }
    if (grc != 0) {
        say("cannot list NCCL's logs (%s)", r->logpat);
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
            say("NCCL log %s is owned by %s, not by this job's user: not this run's, not copied",
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
            say("out of memory copying NCCL's logs");
            rc = -1;
            break;
        }
        if (copy_file(g.gl_pathv[i], to) != 0) {
            say("cannot copy NCCL's log %s to %s: %s", g.gl_pathv[i], to, strerror(errno));
            free(r->logs[r->nlogs]);
            rc = -1;
            continue;
        }
        r->nlogs++;
        n++;
    }
    globfree(&g);
    if (n)
        note("NCCL's log: %d file(s) copied to %s.*", n, r->stem);
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

/* After the command ended: a process it left running (a backgrounded
 * rank) may still write its recorder.  Waits for the writers, at most
 * GDRTRACE_RUN_WAIT seconds, or until a forwarded signal comes; 0 when
 * none is left, else how many still write (the folder is then kept). */
static int wait_writers(const struct run *r)
{
    int pid = 0, n = writers_left(r, &pid);
    if (!n)
        return 0;
    long limit = gt_env_long("GDRTRACE_RUN_WAIT", 60, 0, 86400);
    say("%d recorder(s) still being written after %s ended (pid %d …): waiting for their "
        "writers, at most %ld s (GDRTRACE_RUN_WAIT)",
        n, r->cmd[0], pid, limit);
    struct timespec t0, now, tick = {0, 100 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (g_late || now.tv_sec - t0.tv_sec >= limit)
            break;
        nanosleep(&tick, NULL);
        if (!(n = writers_left(r, &pid)))
            return 0;
    }
    say("%d recorder(s) still being written (pid %d …) %s: archived as they are now (live), "
        "the folder %s is kept",
        n, pid, g_late ? "when a signal came" : "at the end of the wait", r->recdir);
    return n;
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
        say("out of memory");
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
        say("left %s: %s", r->recdir,
            errno == ENOTEMPTY ? "the job wrote other files into it" : strerror(errno));
}

int gt_cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {{"expect", required_argument, 0, 'x'},
                                         {"allow-emulated", no_argument, 0, 'E'},
                                         {"dir", required_argument, 0, 'd'},
                                         {"inner", no_argument, 0, 'i'},
                                         {"keep", no_argument, 0, 'k'},
                                         {"full", no_argument, 0, 'f'},
                                         {"command-status", no_argument, 0, 'C'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    struct run r = {.dir = "."};
    int c;
    /* '+': the options end at COMMAND, whose own options are not ours. */
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'x':
            if (strcmp(optarg, "dmabuf") && strcmp(optarg, "peermem") && strcmp(optarg, "host")) {
                fprintf(stderr, "gdrtrace run: --expect takes dmabuf, peermem or host, not '%s'\n",
                        optarg);
                return GT_EXIT_USAGE;
            }
            r.expect = optarg;
            break;
        case 'E':
            r.allow_emulated = 1;
            break;
        case 'd':
            if (!*optarg) {
                fprintf(stderr, "gdrtrace run: --dir needs a folder, not ''\n");
                return GT_EXIT_USAGE;
            }
            r.dir = optarg;
            break;
        case 'i':
            r.inner = 1;
            break;
        case 'k':
            r.keep = 1;
            break;
        case 'f':
            r.full = 1;
            break;
        case 'C':
            r.command_status = 1;
            break;
        default: /* --help, or an option getopt refused */
            return gt_usage_exit(c, usage);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "gdrtrace run: no COMMAND to run (gdrtrace run [options] -- COMMAND)\n");
        usage(stderr);
        return GT_EXIT_USAGE;
    }
    r.cmd = argv + optind;
    const char *rank = pick_rank();
    g_brief = rank && !r.full;
    if (gethostname(r.host, sizeof(r.host) - 1) != 0)
        snprintf(r.host, sizeof(r.host), "nohost");

    /* Everything that can refuse, before the job runs. */
    if (find_plugin(&r) || make_dir(r.dir))
        return EXIT_SETUP;
    int rc = pick_plugin(&r);
    if (rc)
        return rc;
    pick_job(&r);
    if (pick_stem(&r))
        return EXIT_SETUP;
    /* Absolute, so that a command that changes folder still finds it. */
    const char *dir_var = env("GDRTRACE_DIR") ? env("GDRTRACE_DIR") : "/dev/shm";
    char base[PATH_MAX];
    if (!realpath(dir_var, base)) {
        say("GDRTRACE_DIR=%s: %s; nothing was run", dir_var, strerror(errno));
        return EXIT_SETUP;
    }
    char err[PATH_MAX + 128];
    int nfs = gt_netfs_check(base, err, sizeof(err));
    if (nfs) {
        say("GDRTRACE_DIR: %s%s; nothing was run", err,
            nfs > 0 ? ": a recorder is a shared memory mapping and must be node-local (set "
                      "GDRTRACE_DIR to a local folder; the default is /dev/shm)"
                    : "");
        return EXIT_SETUP;
    }
    if (snprintf(r.recdir, sizeof(r.recdir), "%s/gdrtrace-run.XXXXXX", base) >=
            (int)sizeof(r.recdir) ||
        !mkdtemp(r.recdir)) {
        say("cannot create a folder for the recorders in GDRTRACE_DIR=%s: %s", base,
            strerror(errno));
        return EXIT_SETUP;
    }
    /* invariant 6: held until exit (never closed: the kernel releases it) */
    int lockfd = open(r.recdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lockfd < 0 || flock(lockfd, LOCK_EX | LOCK_NB) != 0)
        say("cannot lock %s (%s): gdrtrace prune may take it for a folder left behind", r.recdir,
            strerror(errno));
    if (set("GDRTRACE_DIR", r.recdir) || (rc = pick_nccl_env(&r)) != 0 ||
        prepend_ld_path(r.plugindir) || (rc = pick_profiler(&r)) != 0) {
        rmdir(r.recdir);
        return rc ? rc : EXIT_SETUP;
    }
    if (env("GDRTRACE_DISABLE") && strcmp(env("GDRTRACE_DISABLE"), "0") != 0)
        say("GDRTRACE_DISABLE=%s (the job's) kept: the plugin records nothing (verdict NO-DATA)",
            env("GDRTRACE_DISABLE"));
    note("plugin %s/%s, recorders in %s, archive %s.zst", r.plugindir, PLUGIN_SO, r.recdir, r.stem);

    r.t0 = time(NULL);
    int code = 0;
    int st = run_command(&r, &code);
    if (st == -1) {
        restore_signals();
        rmdir(r.recdir);
        return code;
    }
    int cmd_code = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WIFEXITED(st) ? WEXITSTATUS(st) : 0;
    if (WIFSIGNALED(st))
        say("%s was killed by signal %d (%s): exit %d", r.cmd[0], WTERMSIG(st),
            strsignal(WTERMSIG(st)), cmd_code);

    /* Brief (under a launcher): dump's line and the verdict are held back,
     * and printed only for a rank whose exit is not 0 (below). */
    struct gt_capture cap_dump = {.saved = -1}, cap_v = {.saved = -1};
    if (g_brief)
        gt_capture_begin(&cap_dump);
    int busy = wait_writers(&r);
    int arc = archive(&r);
    gt_capture_end(&cap_dump, arc != 0);
    int nlogs = copy_logs(&r);
    if (g_brief)
        gt_capture_begin(&cap_v);
    int vrc = verdict(&r, arc == 0);
    int final = cmd_code                                           ? cmd_code
                : !(arc == 0 || arc == GT_EXIT_INPUT) || nlogs < 0 ? EXIT_SETUP
                : r.command_status                                 ? 0
                                                                   : vrc;
    if (g_brief) {
        char v[128], a[PATH_MAX + 8];
        gt_capture_stop(&cap_v);
        gt_capture_verdict(&cap_v, v, sizeof(v));
        snprintf(a, sizeof(a), "%s.zst", r.stem);
        gt_run_rank_line(rank, r.host, v, final, arc == 0 || arc == GT_EXIT_INPUT ? a : NULL);
        gt_capture_end(&cap_v, final != 0 || vrc != 0);
        if (!strcmp(rank, "0"))
            say("the job's verdict, once every rank ended: gdrtrace verdict%s%s --nccl-log %s %s",
                r.expect ? " --expect " : "", r.expect ? r.expect : "", r.dir, r.dir);
    }
    /* dump's 2: archived, but a file in the folder was not a readable
     * recorder; the verdict says 2 too, and the folder stays for a look. */
    int saved = arc == 0 || arc == GT_EXIT_INPUT;
    if (!saved)
        say("the archive %s.zst could not be written: the recorders stay in %s", r.stem, r.recdir);
    else if (arc == GT_EXIT_INPUT)
        say("a file in %s could not be archived (above): the folder stays", r.recdir);
    else if (nlogs < 0)
        say("NCCL's log could not be copied into %s: the recorders and log stay in %s", r.dir,
            r.recdir);
    else if (busy)
        ; /* said by wait_writers: still written, never deleted under a writer */
    else if (r.keep)
        say("--keep: the recorders stay in %s", r.recdir);
    else
        clean(&r);

    for (size_t i = 0; i < r.nlogs; i++)
        free(r.logs[i]);
    free(r.logs);
    restore_signals();
    if (g_late)
        say("signal %d (%s) came after %s ended: the archive was finished first", (int)g_late,
            strsignal((int)g_late), r.cmd[0]);
    if (cmd_code)
        say("%s failed (exit %d): that is the exit code; the verdict above is %d", r.cmd[0],
            cmd_code, vrc);
    else if (r.command_status && vrc && final == 0)
        note("--command-status: exit 0 (the command's); the verdict's code is %d", vrc);
    return final;
}
