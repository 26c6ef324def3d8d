/* SPDX-License-Identifier: Apache-2.0 */
/*
 * copier_client.c — the plugin's side of the copier process (contract in
 * copier_client.h; protocol and region invariants in copier_proto.h).
 *
 * Spawning: posix_spawn of `gdrtrace-gpumem-copier --detach`, which spawns
 * the copier and exits; we reap that intermediate by its pid only.  So the
 * application never has a child it did not start: a Python program's
 * os.wait() cannot take ours, and the copier, reparented, outlives no one —
 * it exits when its socket hangs up.  The socketpair and the region's memfd
 * are close-on-exec here; the copier's end becomes its fd GMC_FD by
 * dup2, and the copier closes every other fd it inherited.
 * The binary: $GDRTRACE_GPUMEM_COPIER, else GT_LIBEXECDIR/gdrtrace/ (the
 * path make compiled in), else beside the plugin's .so (dladdr: the build
 * tree) or in ../libexec/gdrtrace, ../../libexec/gdrtrace from it (an install
 * built for another PREFIX) — each from the folder NCCL loaded it from and
 * from the one its real file is in (a plugin-only folder holds a link).
 * Only a trusted file is started, and the file started is the file checked
 * (open_trusted(): the path walked one component at a time from "/" with
 * openat(O_PATH|O_NOFOLLOW), every folder entered, every symbolic link
 * crossed and the file owned by root or this process's uid, the folders and
 * the file writable by neither group nor others — a folder may be when
 * sticky, as /tmp: no one else can rename the entry below it — as ld.so and
 * sudo reason about secure paths; then /proc/self/fd/N of the open file is
 * spawned, never the name again): a plugin copied into a world-writable tree
 * must not start what another user put beside it (CWE-426), nor what another
 * user's link points at when the name is resolved a second time (CWE-367).
 * A candidate that exists but is not trusted is one WARN naming what on its
 * path is not, and whose; the one started is said with where it was found.
 *
 * A dead copier is sticky per generation: every later call of that
 * generation fails with the same line; a stop (last finalize) ends the
 * generation and the next import starts a new copier.
 */
#include "plugin/gpumem/copier_client.h"
#include "common/procid.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pwd.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/dl/gt_cuda.h"
#include "common/env.h"
#include "common/log.h"

#ifndef GT_LIBEXECDIR
#define GT_LIBEXECDIR "/usr/local/libexec"
#endif
#define COPIER_NAME "gdrtrace-gpumem-copier"
#define REPLY_TIMEOUT_MS 60000

extern char **environ;

static struct {
    pthread_mutex_t lock;
    /* sock and gen are read without the lock by alive() (a poll, and a
     * check that the caller's generation is the current one) */
    _Atomic int sock; /* -1: no copier */
    pid_t pid;        /* the copier's, from its greeting */
    struct gmc_region *region;
    _Atomic uint32_t gen; /* bumped at each start and stop */
    _Atomic int dead;     /* the copier of `gen` is gone: why says so */
    long long stall_ns;   /* GDRTRACE_GPUMEM_COPIER_TIMEOUT, read at start */
    char why[GMC_TEXT];
    unsigned char used[GMC_BLOCKS]; /* 1: a comm's; 2: never again (busy at put) */
} cl = {.lock = PTHREAD_MUTEX_INITIALIZER, .sock = -1};

static void mark_dead(const char *fmt, long a)
{
    if (atomic_load(&cl.dead))
        return;
    snprintf(cl.why, sizeof(cl.why), fmt, a);
    atomic_store(&cl.dead, 1);
}

/* ---- finding and starting the binary ------------------------------------- */

/* "nobody (uid 65534)", or "uid 1234" when the uid has no name. */
static void owner_name(uid_t uid, char *out, size_t n)
{
    struct passwd pw, *res = NULL;
    char buf[1024];
    if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_name)
        snprintf(out, n, "%s (uid %u)", res->pw_name, (unsigned)uid);
    else
        snprintf(out, n, "uid %u", (unsigned)uid);
}

/* 0 when what st describes (`name` in a folder already found trusted) may
 * lie on the copier's path: owned by root or us, and writable by neither
 * group nor others — a sticky folder (/tmp) excepted: no one else can
 * rename or remove an entry below it, whose owner is checked next.  A
 * symbolic link's own mode means nothing: only its owner counts (it is
 * what the kernel's fs.protected_symlinks checks in a sticky folder). */
static int entry_trusted(const struct stat *st, const char *name, char *why, size_t whylen)
{
    uid_t me = geteuid();
    if (st->st_uid != 0 && st->st_uid != me) {
        char who[160];
        owner_name(st->st_uid, who, sizeof(who));
        snprintf(why, whylen, "%.3000s is %sowned by %s, neither root nor this job's uid %u", name,
                 S_ISLNK(st->st_mode) ? "a symbolic link " : "", who, (unsigned)me);
        return EPERM;
    }
    if (!S_ISLNK(st->st_mode) && (st->st_mode & (S_IWGRP | S_IWOTH)) &&
        !(S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))) {
        snprintf(why, whylen, "%.3000s is writable by %s (mode %04o)", name,
                 st->st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st->st_mode & 07777));
        return EPERM;
    }
    return 0;
}

#define MAX_LINKS 40 /* as the kernel's ELOOP */

/* Opens the copier p as the kernel would resolve it, one component at a
 * time from "/" (a relative p from the current folder's real path), each
 * with openat(O_PATH|O_NOFOLLOW), a link read from its own fd and followed
 * by this walk; every folder entered, every link crossed and the file
 * itself must pass entry_trusted().  The file must be regular and
 * executable.  Returns its O_PATH fd (close-on-exec, above GMC_FD), which
 * is what start() executes: the file checked is the file that runs, and no
 * name is resolved twice.  real gets the path the walk took (no link).
 * On failure -1, errno and why: EPERM when something on the way is not
 * trusted (the first one from "/", named), else the reason the file is not
 * there or not executable (the walk goes on past an untrusted entry to tell
 * an absent candidate, said nowhere, from a refused one). */
static int open_trusted(const char *p, char *real, size_t realn, char *why, size_t whylen)
{
    char todo[2 * PATH_MAX], refused[PATH_MAX + 256] = "", name[NAME_MAX + 1];
    char cwd[PATH_MAX];
    if (p[0] == '/')
        snprintf(todo, sizeof(todo), "%s", p);
    else if (getcwd(cwd, sizeof(cwd)))
        snprintf(todo, sizeof(todo), "%s/%s", cwd, p);
    else {
        int e = errno;
        snprintf(why, whylen, "%.3000s: the current folder: %s", p, strerror(e));
        errno = e;
        return -1;
    }
    int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), e = 0, links = 0;
    struct stat st;
    snprintf(real, realn, "/");
    if (cur < 0 || fstat(cur, &st) != 0) {
        e = errno;
        snprintf(why, whylen, "/: %s", strerror(e));
        goto fail;
    }
    entry_trusted(&st, "/", refused, sizeof(refused));
    for (size_t pos = 0;;) {
        while (todo[pos] == '/')
            pos++;
        if (!todo[pos])
            break;
        size_t len = strcspn(todo + pos, "/");
        if (len > NAME_MAX) {
            e = ENAMETOOLONG;
            snprintf(why, whylen, "%.3000s: %s", p, strerror(e));
            goto fail;
        }
        memcpy(name, todo + pos, len);
        name[len] = 0;
        pos += len;
        if (!strcmp(name, "."))
            continue;
        int fd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) != 0) {
            e = errno;
            snprintf(why, whylen, "%.3000s%s%s: %s", real, real[1] ? "/" : "", name, strerror(e));
            if (fd >= 0)
                close(fd);
            goto fail;
        }
        char shown[PATH_MAX + NAME_MAX + 2];
        if (!strcmp(name, "..")) { /* the real parent: real is cur's path */
            char *slash = strrchr(real, '/');
            if (slash == real)
                real[1] = 0; /* "/a" -> "/"; "/" stays */
            else
                *slash = 0;
            snprintf(shown, sizeof(shown), "%s", real);
        } else {
            snprintf(shown, sizeof(shown), "%s%s%s", real, real[1] ? "/" : "", name);
        }
        if (!refused[0])
            entry_trusted(&st, shown, refused, sizeof(refused));
        if (S_ISLNK(st.st_mode)) {
            /* Read from the link's own fd: the link checked is the one
             * followed (a link's target never changes; only a rename
             * swaps it, which the folder's checks guard). */
            char tgt[PATH_MAX];
            ssize_t n = readlinkat(fd, "", tgt, sizeof(tgt) - 1);
            e = n < 0 ? errno : ++links > MAX_LINKS ? ELOOP : 0;
            close(fd);
            if (e) {
                snprintf(why, whylen, "%.3000s: %s", shown, strerror(e));
                goto fail;
            }
            tgt[n] = 0;
            char rest[2 * PATH_MAX];
            int w = snprintf(rest, sizeof(rest), "%s/%s", tgt, todo + pos);
            if (w < 0 || (size_t)w >= sizeof(todo)) {
                e = ENAMETOOLONG;
                snprintf(why, whylen, "%.3000s: %s", shown, strerror(e));
                goto fail;
            }
            memcpy(todo, rest, (size_t)w + 1);
            pos = 0;
            if (tgt[0] == '/') {
                int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (root < 0) {
                    e = errno;
                    snprintf(why, whylen, "/: %s", strerror(e));
                    goto fail;
                }
                close(cur);
                cur = root;
                snprintf(real, realn, "/");
            }
            continue;
        }
        snprintf(real, realn, "%s", shown);
        close(cur);
        cur = fd;
    }
    char exe[64];
    snprintf(exe, sizeof(exe), "/proc/self/fd/%d", cur);
    if (fstat(cur, &st) != 0) {
        e = errno;
        snprintf(why, whylen, "%.3000s: %s", real, strerror(e));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        e = S_ISDIR(st.st_mode) ? EISDIR : EACCES;
        snprintf(why, whylen, "%.3000s: %s", real,
                 e == EISDIR ? strerror(e) : "not a regular file");
        goto fail;
    }
    /* Executable by us (access: the real uid, as the exec checks), or
     * without /proc by its mode. */
    if (access(exe, X_OK) != 0 && (errno != ENOENT || !(st.st_mode & 0111))) {
        e = EACCES;
        snprintf(why, whylen, "%.3000s: not executable", real);
        goto fail;
    }
    if (refused[0]) {
        e = EPERM;
        snprintf(why, whylen, "%s", refused);
        goto fail;
    }
    /* Not GMC_FD, which the copier's socket takes in the child before the
     * exec resolves /proc/self/fd/N. */
    int fd = fcntl(cur, F_DUPFD_CLOEXEC, GMC_FD + 1);
    if (fd < 0) {
        e = errno;
        snprintf(why, whylen, "%.3000s: %s", real, strerror(e));
        goto fail;
    }
    close(cur);
    return fd;
fail:
    if (cur >= 0)
        close(cur);
    errno = e ? e : EIO;
    return -1;
}

/* The copier's fd as a path start() can spawn: /proc/self/fd/N, which the
 * child's exec resolves to the open file; without /proc, the path the walk
 * proved (every folder on it trusted: no one else can swap a name on it). */
static void exec_path(int fd, const char *real, char *out, size_t n)
{
    snprintf(out, n, "/proc/self/fd/%d", fd);
    if (access(out, F_OK) != 0)
        snprintf(out, n, "%s", real);
}

/* The candidate p, opened trusted (open_trusted): its fd, or -1.  One that
 * exists but is not trusted is said once per start; one that is absent or
 * not executable is passed over in silence. */
static int usable(const char *p, char *real, size_t realn)
{
    char why[PATH_MAX + 256];
    int fd = open_trusted(p, real, realn, why, sizeof(why));
    if (fd >= 0 || errno != EPERM)
        return fd;
    GT_WARN("gpumem: not starting %s: not trusted: %s (the copier, every folder above it and every "
            "symbolic link on the way must be owned by root or this job's uid, the file and the "
            "folders writable by neither group nor others)",
            p, why);
    return -1;
}

/* The file this code was mapped from, as the kernel names it in
 * /proc/self/maps: its real path even when the plugin was loaded through a
 * link that has gone since.  0, or -1 when not found. */
static int mapped_file(char *out, size_t n)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return -1;
    uintptr_t self = (uintptr_t)(void *)mapped_file;
    char line[PATH_MAX + 128];
    int rc = -1;
    while (rc && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        char *file = strchr(line, '/');
        if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || self < lo || self >= hi || !file)
            continue;
        file[strcspn(file, "\n")] = 0;
        snprintf(out, n, "%s", file);
        rc = 0;
    }
    fclose(f);
    return rc;
}

/* The copier to start: its path as found (said), *fd its O_PATH fd and
 * real the path the trust walk took.  0, or an errno with why. */
static int find_copier(char *path, size_t n, int *fd, char *real, size_t realn, const char **from,
                       char *why, size_t whylen)
{
    const char *env = gt_env_str("GDRTRACE_GPUMEM_COPIER");
    if (env && *env) {
        snprintf(path, n, "%s", env);
        *from = "GDRTRACE_GPUMEM_COPIER";
        char t[PATH_MAX + 256];
        *fd = open_trusted(path, real, realn, t, sizeof(t));
        if (*fd >= 0)
            return 0;
        int rc = errno;
        if (rc == EPERM)
            snprintf(why, whylen,
                     "GDRTRACE_GPUMEM_COPIER=%s is not trusted: %s (it, every folder above it and "
                     "every symbolic link on the way must be owned by root or this job's uid, the "
                     "file and the folders writable by neither group nor others)",
                     env, t);
        else
            snprintf(why, whylen, "GDRTRACE_GPUMEM_COPIER=%s is not an executable file: %s", env,
                     t);
        return rc;
    }
    /* The path make compiled in first: an installed plugin finds its own. */
    snprintf(path, n, "%s/gdrtrace/%s", GT_LIBEXECDIR, COPIER_NAME);
    *from = "the compiled-in LIBEXECDIR";
    if ((*fd = usable(path, real, realn)) >= 0)
        return 0;
    /* Beside the plugin (the build tree), then LIBEXECDIR relative to its
     * LIBDIR: PREFIX/lib or PREFIX/lib/<multiarch> (an install whose plugin
     * was built for another PREFIX still finds its own copier). */
    /* The folder NCCL loaded the plugin from, and the one the file really
     * is in: a plugin-only folder (`gdrtrace run`, NCCL_NET_PLUGIN by name)
     * holds a symbolic link to the .so, not the copier. */
    Dl_info di;
    char dir[2][PATH_MAX] = {"", ""};
    char mine[PATH_MAX];
    if (dladdr((void *)find_copier, &di) && di.dli_fname && strrchr(di.dli_fname, '/')) {
        snprintf(dir[0], sizeof(dir[0]), "%.*s", (int)(strrchr(di.dli_fname, '/') - di.dli_fname),
                 di.dli_fname);
        if ((mapped_file(mine, sizeof(mine)) == 0 || realpath(di.dli_fname, mine)) &&
            strrchr(mine, '/')) {
            *strrchr(mine, '/') = 0;
            if (strcmp(mine, dir[0]) != 0)
                snprintf(dir[1], sizeof(dir[1]), "%s", mine);
        }
    }
    static const char *const rel[] = {"", "/../libexec/gdrtrace", "/../../libexec/gdrtrace"};
    *from = "the plugin's folder";
    for (int d = 0; d < 2; d++)
        for (size_t i = 0; dir[d][0] && i < sizeof(rel) / sizeof(rel[0]); i++) {
            snprintf(path, n, "%s%s/%s", dir[d], rel[i], COPIER_NAME);
            if ((*fd = usable(path, real, realn)) >= 0)
                return 0;
        }
    snprintf(why, whylen,
             "no trusted %s: GDRTRACE_GPUMEM_COPIER unset, none in %s/gdrtrace, none beside the "
             "plugin (%s%s%s) or in its ../libexec/gdrtrace",
             COPIER_NAME, GT_LIBEXECDIR, dir[0][0] ? dir[0] : "dladdr failed",
             dir[1][0] ? ", really " : "", dir[1]);
    return ENOENT;
}

static void wake_copier(void)
{
    atomic_fetch_add(&cl.region->wake, 1);
    syscall(SYS_futex, &cl.region->wake, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* One request, one reply (cl.lock held).  0 or an errno, with why. */
static int request(struct gmc_msg *m, const int *fds, int nfds, char *why, size_t whylen)
{
    char cbuf[CMSG_SPACE(2 * sizeof(int))];
    memset(cbuf, 0, sizeof(cbuf));
    m->version = GMC_VERSION;
    struct iovec io = {m, sizeof(*m)};
    struct msghdr h = {.msg_iov = &io, .msg_iovlen = 1};
    if (nfds > 0) {
        h.msg_control = cbuf;
        h.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
    }
    if (sendmsg(cl.sock, &h, MSG_NOSIGNAL) != (ssize_t)sizeof(*m)) {
        mark_dead("copier process %ld is gone (its socket refused a request)", cl.pid);
        snprintf(why, whylen, "%s", cl.why);
        return EPIPE;
    }
    if (cl.region && m->op != GMC_HELLO)
        wake_copier();
    struct pollfd p = {cl.sock, POLLIN, 0};
    int n;
    do
        n = poll(&p, 1, REPLY_TIMEOUT_MS);
    while (n < 0 && errno == EINTR);
    ssize_t got = n == 1 && (p.revents & POLLIN) ? recv(cl.sock, m, sizeof(*m), 0) : -1;
    if (got != (ssize_t)sizeof(*m)) {
        if (n == 0)
            mark_dead("copier process %ld did not answer in 60 s", cl.pid);
        else
            mark_dead("copier process %ld exited (its socket hung up: it died or was killed)",
                      cl.pid);
        snprintf(why, whylen, "%s", cl.why);
        return EPIPE;
    }
    m->text[sizeof(m->text) - 1] = 0;
    if (m->status != 0) {
        snprintf(why, whylen, "%s", m->text);
        return EIO;
    }
    return 0;
}

static void drop_copier(void)
{
    if (cl.sock >= 0)
        close(cl.sock);
    cl.sock = -1;
    cl.pid = 0;
    int busy = 0;
    for (int i = 0; i < GMC_BLOCKS; i++)
        busy |= cl.used[i] != 0;
    /* Comms still holding blocks keep the old region mapped (they may read
     * their slots once more and fail on the dead generation); the next
     * copier gets a region, and blocks, of its own. */
    if (cl.region && !busy)
        munmap(cl.region, GMC_REGION_SIZE);
    memset(cl.used, 0, sizeof(cl.used));
    cl.region = NULL;
}

/* A child forked by the application (a data loader's worker) must not
 * hold the copier's socket open: the copier would outlive the application
 * until the last such child exits.  The child has no copier of its own. */
static void forked_child(void)
{
    pthread_mutex_init(&cl.lock, NULL);
    if (cl.sock >= 0)
        close(cl.sock);
    cl.sock = -1;
    cl.pid = 0;
    gt_helper_pid_set(0);
    cl.region = NULL; /* left mapped: the child's comms may still point into it */
    memset(cl.used, 0, sizeof(cl.used));
    cl.gen++;
}

/* Starts the copier (cl.lock held). */
static int start(char *why, size_t whylen)
{
    if (cl.sock >= 0 && !atomic_load(&cl.dead))
        return 0;
    if (cl.sock >= 0) {
        snprintf(why, whylen, "%s", cl.why);
        return EPIPE;
    }
    static int atfork;
    if (!atfork && pthread_atfork(NULL, NULL, forked_child) == 0)
        atfork = 1;
    char path[600], real[PATH_MAX], exe[PATH_MAX];
    const char *from = "";
    int xfd = -1;
    int rc = find_copier(path, sizeof(path), &xfd, real, sizeof(real), &from, why, whylen);
    if (rc)
        return rc;
    /* What runs is the file the walk checked: its fd, which the child's
     * exec resolves before close-on-exec shuts it (the copier never has it). */
    exec_path(xfd, real, exe, sizeof(exe));
    int sv[2] = {-1, -1}, rfd = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        rc = errno;
        snprintf(why, whylen, "socketpair for the copier failed: %s", strerror(rc));
        close(xfd);
        return rc;
    }
    if (sv[1] == GMC_FD) { /* dup2 onto itself would keep close-on-exec */
        int fd = fcntl(sv[1], F_DUPFD_CLOEXEC, GMC_FD + 1);
        close(sv[1]);
        sv[1] = fd;
    }
    rfd = memfd_create("gdrtrace-gpumem-region", MFD_CLOEXEC);
    struct gmc_region *r = MAP_FAILED;
    if (rfd >= 0 && ftruncate(rfd, (off_t)GMC_REGION_SIZE) == 0)
        r = mmap(NULL, GMC_REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
    if (sv[1] < 0 || r == MAP_FAILED) {
        rc = errno;
        snprintf(why, whylen, "the copier's command region (%zu bytes): %s", GMC_REGION_SIZE,
                 strerror(rc));
        goto err;
    }
    r->magic = GMC_MAGIC;
    r->version = GMC_VERSION;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], GMC_FD);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    char *argv[] = {COPIER_NAME, "--detach", NULL};
    pid_t mid = 0;
    rc = posix_spawn(&mid, exe, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(sv[1]);
    sv[1] = -1;
    close(xfd);
    xfd = -1;
    if (rc) {
        snprintf(why, whylen, "cannot start %s: %s", path, strerror(rc));
        goto err;
    }
    int st = 0;
    pid_t w;
    do
        w = waitpid(mid, &st, 0);
    while (w < 0 && errno == EINTR);
    /* ECHILD: SIGCHLD ignored, or the application reaped it; the greeting
     * below tells whether the copier is there. */
    if (w == mid && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        rc = ECHILD;
        snprintf(why, whylen, "%s --detach failed (%s %d)", path, WIFEXITED(st) ? "exit" : "signal",
                 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        goto err;
    }
    cl.sock = sv[0];
    sv[0] = -1;
    cl.region = r;
    cl.gen++;
    atomic_store(&cl.dead, 0);
    cl.why[0] = 0;
    struct gmc_msg m = {.op = GMC_HELLO};
    rc = request(&m, &rfd, 1, why, whylen);
    close(rfd);
    rfd = -1;
    if (rc) {
        if (rc == EIO) { /* the copier said why: it is gone after that */
            snprintf(cl.why, sizeof(cl.why), "%s", why);
            atomic_store(&cl.dead, 1);
        }
        return rc; /* the dead generation stays until stop(): sticky */
    }
    cl.pid = (pid_t)m.reg;
    gt_helper_pid_set((int)cl.pid); /* host pressure counts its CPU as ours */
    cl.stall_ns = gt_env_long("GDRTRACE_GPUMEM_COPIER_TIMEOUT", 10, 1, 3600) * 1000000000LL;
    GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET,
            "gpumem: copies run in the copier process %d (%s, found through %s, trusted), in "
            "a CUDA context of its own, on %s",
            (int)cl.pid, path, from, m.text[0] ? m.text : "the CPUs it inherited");
    return 0;
err:
    if (xfd >= 0)
        close(xfd);
    if (r != MAP_FAILED)
        munmap(r, GMC_REGION_SIZE);
    if (rfd >= 0)
        close(rfd);
    for (int i = 0; i < 2; i++)
        if (sv[i] >= 0)
            close(sv[i]);
    return rc ? rc : EIO;
}

/* ---- registrations -------------------------------------------------------- */

/* What to import for [a, a + size): fills m and *afd (VMM).  0 or errno. */
static int describe(uintptr_t a, size_t size, struct gmc_msg *m, int *afd, char *why, size_t whylen)
{
    gt_CUdeviceptr base = 0;
    size_t asz = 0;
    gt_CUresult r = gt_cu.mem_get_address_range(&base, &asz, (gt_CUdeviceptr)a);
    if (r != GT_CUDA_SUCCESS) {
        snprintf(why, whylen, "cuMemGetAddressRange(%#lx) failed: %s (%d)", (unsigned long)a,
                 gt_cu_errstr(r), r);
        return EFAULT;
    }
    if (a - base > asz || size > asz - (a - base)) {
        snprintf(why, whylen,
                 "[%#lx, +%zu) reaches beyond its allocation [%#llx, +%zu) "
                 "(cuMemGetAddressRange): the copier maps one allocation per registration",
                 (unsigned long)a, size, (unsigned long long)base, asz);
        return ERANGE;
    }
    int ordinal = 0;
    gt_CUdevice dev = 0;
    const char *call = "cuPointerGetAttribute(DEVICE_ORDINAL)";
    r = gt_cu.pointer_get_attribute(&ordinal, GT_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                    (gt_CUdeviceptr)a);
    if (r == GT_CUDA_SUCCESS) {
        call = "cuDeviceGet";
        r = gt_cu.device_get(&dev, ordinal);
    }
    if (r == GT_CUDA_SUCCESS) {
        call = "cuDeviceGetPCIBusId";
        r = gt_cu.device_get_pci_bus_id(m->bus_id, (int)sizeof(m->bus_id), dev);
    }
    if (r != GT_CUDA_SUCCESS) {
        snprintf(why, whylen, "%s failed: %s (%d)", call, gt_cu_errstr(r), r);
        return ENODEV;
    }
    m->bus_id[sizeof(m->bus_id) - 1] = 0;
    m->alloc_size = asz;
    m->offset = a - base;
    m->size = size;
    gt_CUmemGenericAllocationHandle h = 0;
    gt_CUresult rr = gt_cu.mem_retain_allocation_handle(&h, (void *)a);
    if (rr == GT_CUDA_SUCCESS) {
        int fd = -1;
        r = gt_cu.mem_export_to_shareable_handle(&fd, h,
                                                 GT_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
        gt_cu.mem_release(h); /* the retain's reference; the fd holds the memory */
        if (r != GT_CUDA_SUCCESS) {
            snprintf(why, whylen,
                     "cuMemExportToShareableHandle(POSIX_FILE_DESCRIPTOR) failed: %s (%d): the "
                     "cuMem allocation was not created shareable as a POSIX fd",
                     gt_cu_errstr(r), r);
            return ENOTSUP;
        }
        m->kind = GMC_KIND_VMM;
        *afd = fd;
        return 0;
    }
    gt_CUipcMemHandle ih;
    memset(&ih, 0, sizeof(ih));
    r = gt_cu.ipc_get_mem_handle(&ih, base);
    if (r != GT_CUDA_SUCCESS) {
        snprintf(why, whylen,
                 "neither a shareable cuMem allocation (cuMemRetainAllocationHandle: %s (%d)) "
                 "nor legacy IPC memory (cuIpcGetMemHandle: %s (%d))",
                 gt_cu_errstr(rr), rr, gt_cu_errstr(r), r);
        return ENOTSUP;
    }
    m->kind = GMC_KIND_IPC;
    memcpy(m->ipc, ih.reserved, sizeof(m->ipc));
    return 0;
}

int gt_gpumem_copier_import(uintptr_t a, size_t size, struct gt_gpumem_creg *out, char *why,
                            size_t whylen)
{
    struct gmc_msg m;
    memset(&m, 0, sizeof(m));
    memset(out, 0, sizeof(*out));
    int afd = -1, mfd = -1, rc = describe(a, size, &m, &afd, why, whylen);
    if (rc)
        return rc;
    void *mirror = MAP_FAILED;
    mfd = memfd_create("gdrtrace-gpumem-mirror", MFD_CLOEXEC);
    if (mfd >= 0 && ftruncate(mfd, (off_t)size) == 0)
        mirror = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (mirror == MAP_FAILED) {
        rc = errno;
        snprintf(why, whylen, "a %zu-byte shared staging mirror (memfd): %s", size, strerror(rc));
        goto out;
    }
    pthread_mutex_lock(&cl.lock);
    rc = start(why, whylen);
    if (!rc) {
        m.op = GMC_IMPORT;
        int fds[2] = {mfd, afd};
        rc = request(&m, fds, afd >= 0 ? 2 : 1, why, whylen);
        out->gen = cl.gen;
        if (!rc && m.text[0])
            GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET, "gpumem: the copier process %d %s", (int)cl.pid,
                    m.text);
    }
    pthread_mutex_unlock(&cl.lock);
    if (rc) {
        munmap(mirror, size);
        goto out;
    }
    out->reg = m.reg;
    out->mirror = mirror;
    out->size = size;
out:
    if (mfd >= 0)
        close(mfd);
    if (afd >= 0)
        close(afd);
    return rc;
}

void gt_gpumem_copier_release(struct gt_gpumem_creg *r)
{
    if (!r->mirror)
        return;
    pthread_mutex_lock(&cl.lock);
    if (r->gen == cl.gen && cl.sock >= 0 && !atomic_load(&cl.dead)) {
        struct gmc_msg m;
        char why[GMC_TEXT];
        memset(&m, 0, sizeof(m));
        m.op = GMC_RELEASE;
        m.reg = r->reg;
        if (request(&m, NULL, 0, why, sizeof(why)))
            GT_WARN("gpumem: the copier could not release registration %u: %s", r->reg, why);
    }
    pthread_mutex_unlock(&cl.lock);
    munmap(r->mirror, r->size);
    memset(r, 0, sizeof(*r));
}

/* ---- command slots ----------------------------------------------------------- */

struct gmc_cmd *gt_gpumem_copier_block_get(struct gmc_region **region, uint32_t *gen, char *why,
                                           size_t whylen)
{
    struct gmc_cmd *c = NULL;
    pthread_mutex_lock(&cl.lock);
    if (cl.sock < 0 || !cl.region || atomic_load(&cl.dead)) {
        snprintf(why, whylen, "%s", cl.why[0] ? cl.why : "no copier process");
    } else {
        int b = 0;
        while (b < GMC_BLOCKS && cl.used[b])
            b++;
        if (b == GMC_BLOCKS) {
            snprintf(why, whylen, "all %d comm blocks of the copier's region are in use",
                     GMC_BLOCKS);
        } else {
            cl.used[b] = 1;
            c = &cl.region->cmd[b * GMC_SLOTS_PER_BLOCK];
            for (int i = 0; i < GMC_SLOTS_PER_BLOCK; i++)
                atomic_store(&c[i].state, GMC_IDLE);
            if (atomic_load(&cl.region->blocks) < (uint32_t)b + 1)
                atomic_store_explicit(&cl.region->blocks, (uint32_t)b + 1, memory_order_release);
            *gen = cl.gen;
            *region = cl.region;
        }
    }
    pthread_mutex_unlock(&cl.lock);
    return c;
}

void gt_gpumem_copier_block_put(struct gmc_cmd *first, uint32_t gen)
{
    pthread_mutex_lock(&cl.lock);
    int live = gen == cl.gen && cl.region && !atomic_load(&cl.dead);
    int b = live ? (int)(first - cl.region->cmd) / GMC_SLOTS_PER_BLOCK : -1;
    pthread_mutex_unlock(&cl.lock);
    if (b < 0)
        return; /* a generation that is gone: its region went with it */
    /* Copies of an aborted comm may still run into its mirrors. */
    int busy = 1;
    for (int tries = 0; busy && tries < 5000; tries++) {
        busy = 0;
        for (int i = 0; i < GMC_SLOTS_PER_BLOCK; i++) {
            uint32_t s = gt_gpumem_copier_state(&first[i]);
            busy |= s == GMC_POSTED || s == GMC_ISSUED;
        }
        char why[8];
        if (busy && !gt_gpumem_copier_alive(gen, why, sizeof(why)))
            busy = 0;
        else if (busy)
            usleep(1000);
    }
    pthread_mutex_lock(&cl.lock);
    if (gen == cl.gen && cl.region)
        cl.used[b] = busy ? 2 : 0;
    pthread_mutex_unlock(&cl.lock);
}

void gt_gpumem_copier_post(struct gmc_region *r, struct gmc_cmd *c, uint32_t dir, uint32_t reg,
                           uint64_t off, uint64_t size)
{
    c->dir = dir;
    c->reg = reg;
    c->off = off;
    c->size = size;
    c->cu = 0;
    c->call = GMC_CALL_NONE;
    /* seq_cst store then load: copier_proto.h invariant 3 */
    atomic_store(&c->state, GMC_POSTED);
    if (atomic_load(&r->sleeping)) {
        atomic_fetch_add(&r->wake, 1);
        syscall(SYS_futex, &r->wake, FUTEX_WAKE, 1, NULL, NULL, 0);
    }
}

int gt_gpumem_copier_alive(uint32_t gen, char *why, size_t whylen)
{
    if (gen == cl.gen && !atomic_load(&cl.dead)) {
        struct pollfd p = {atomic_load(&cl.sock), 0, 0};
        if (p.fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL))) {
            pthread_mutex_lock(&cl.lock);
            if (gen == cl.gen)
                mark_dead("copier process %ld exited (its socket hung up: it died or was killed)",
                          cl.pid);
            pthread_mutex_unlock(&cl.lock);
        }
    }
    if (gen == cl.gen && !atomic_load(&cl.dead))
        return 1;
    snprintf(why, whylen, "%s",
             gen == cl.gen ? cl.why : "the copier process was stopped (the layer finalized)");
    return 0;
}

/* utime + stime of pid in seconds (/proc/<pid>/stat), -1 when unknown. */
static double proc_cpu_s(pid_t pid)
{
    uint64_t ut, st;
    if (gt_proc_cpu_ns((int)pid, &ut, &st) != 0)
        return -1;
    return (double)(ut + st) / 1e9;
}

/* "T (stopped)": the state /proc says the process is in, for a message. */
static void proc_state(pid_t pid, char *out, size_t n)
{
    char p[64], buf[512];
    snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
    snprintf(out, n, "unknown");
    FILE *f = fopen(p, "re");
    if (!f)
        return;
    size_t got = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[got] = 0;
    char *rp = strrchr(buf, ')');
    if (!rp || !rp[1] || !rp[2])
        return;
    static const char *const names[] = {"R (running)",
                                        "S (sleeping)",
                                        "D (in the kernel)",
                                        "T (stopped)",
                                        "t (stopped by a tracer)",
                                        "Z (exited)"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i][0] == rp[2]) {
            snprintf(out, n, "%s", names[i]);
            return;
        }
    snprintf(out, n, "%c", rp[2]);
}

int gt_gpumem_copier_progress(uint32_t gen, struct gmc_region *r, struct gt_gpumem_watch *w,
                              char *why, size_t whylen)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long t = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    uint64_t b = atomic_load_explicit(&r->beat, memory_order_relaxed);
    if (!w->since || b != w->beat) {
        w->beat = b;
        w->since = t;
        return 1;
    }
    long long limit = cl.stall_ns > 0 ? cl.stall_ns : 10000000000LL;
    if (t - w->since < limit)
        return 1;
    pthread_mutex_lock(&cl.lock);
    if (gen == cl.gen && !atomic_load(&cl.dead)) {
        char st[32];
        proc_state(cl.pid, st, sizeof(st));
        snprintf(cl.why, sizeof(cl.why),
                 "copier process %d made no progress for %lld s with a copy pending (state %s; "
                 "GDRTRACE_GPUMEM_COPIER_TIMEOUT)",
                 (int)cl.pid, limit / 1000000000LL, st);
        atomic_store(&cl.dead, 1);
    }
    pthread_mutex_unlock(&cl.lock);
    return gt_gpumem_copier_alive(gen, why, whylen);
}

void gt_gpumem_copier_stop(void)
{
    pthread_mutex_lock(&cl.lock);
    if (cl.sock >= 0) {
        /* What it cost, while it still runs: CPU per GB moved
         * (docs/results/copier-binding.md reads these lines). */
        double cpu = proc_cpu_s(cl.pid);
        uint64_t bytes = cl.region ? atomic_load(&cl.region->copied) : 0;
        uint64_t n = cl.region ? atomic_load(&cl.region->copies) : 0;
        GT_INFO(GT_LOGSUB_INIT,
                "gpumem: stopping the copier process %d: %llu copies, %.3f GB, CPU %.2f s "
                "(%.3f s per GB)",
                (int)cl.pid, (unsigned long long)n, (double)bytes / 1e9, cpu,
                bytes ? cpu / ((double)bytes / 1e9) : 0.0);
        drop_copier();
        cl.gen++; /* what the old generation held is gone with it */
    }
    pthread_mutex_unlock(&cl.lock);
}

pid_t gt_gpumem_copier_pid(void)
{
    pthread_mutex_lock(&cl.lock);
    pid_t p = cl.sock >= 0 && !atomic_load(&cl.dead) ? cl.pid : 0;
    pthread_mutex_unlock(&cl.lock);
    return p;
}
