/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_plugin_unload.c — NCCL dlcloses its net plugin after the last
 * communicator; the plugin's SIGBUS guard must leave with it.  The test
 * installs an application SIGBUS handler, dlopens the built plugin, inits it
 * through ncclNetPlugin_v6 (which creates the recorder and installs the
 * guard over the application's handler), dlcloses it, and checks: the
 * plugin is really unmapped (else skip), SIGBUS's disposition is the
 * application's handler again, and a SIGBUS from a truncated file of the
 * application reaches that handler with its siginfo — on the old code the
 * disposition still pointed into the unmapped library and the process died
 * of SIGSEGV.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nccl/net_v6.h"

/* Under ASan: the plugin's per-process state (its recorder, comm slots)
 * stays allocated when it is unloaded without a finalize (v6 has none), as
 * it would under NCCL; that is not what this test checks. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}

static sigjmp_buf g_jmp;
static volatile sig_atomic_t g_calls;
static void *volatile g_addr;

static void app_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    g_calls++;
    g_addr = si->si_addr;
    siglongjmp(g_jmp, 1);
}

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    (void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

static int mapped(const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[PATH_MAX + 256];
    int found = 0;
    while (f && fgets(line, sizeof(line), f))
        found |= strstr(line, path) != NULL;
    if (f)
        fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    (void)argc;
    char plugin[PATH_MAX], self[PATH_MAX];
    snprintf(self, sizeof(self), "%s", argv[0]);
    snprintf(plugin, sizeof(plugin), "%s/../libnccl-net-gdrtrace.so", dirname(self));
    char real[PATH_MAX];
    if (!realpath(plugin, real)) {
        printf("FAIL: no plugin at %s\n", plugin);
        return 1;
    }
    char dir[] = "/tmp/gt-unload-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("GDRTRACE_DIR", dir, 1);
    setenv("GDRTRACE_TRANSPORT", "sock", 1);
    setenv("GDRTRACE_SOCKET_IFNAME", "lo", 1);

    struct sigaction app, cur;
    memset(&app, 0, sizeof(app));
    app.sa_sigaction = app_handler;
    app.sa_flags = SA_SIGINFO;
    sigemptyset(&app.sa_mask);
    sigaction(SIGBUS, &app, NULL);

    void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("FAIL: dlopen(%s): %s\n", real, dlerror());
        return 1;
    }
    ncclNet_v6_t *net = dlsym(h, "ncclNetPlugin_v6");
    if (!net || net->init(logger) != ncclSuccess) {
        printf("FAIL: ncclNetPlugin_v6 init\n");
        return 1;
    }
    sigaction(SIGBUS, NULL, &cur);
    int guarded = cur.sa_sigaction != app_handler;
    dlclose(h);
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    if (!guarded) {
        printf("FAIL: the plugin's init did not install its SIGBUS guard\n");
        return 1;
    }
    if (mapped(real)) {
        printf("skip: the plugin stayed mapped after dlclose, nothing to check\n");
        return 77;
    }
    sigaction(SIGBUS, NULL, &cur);
    if (!(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != app_handler) {
        printf("FAIL: after dlclose SIGBUS's handler is %p, not the application's %p\n",
               (void *)cur.sa_sigaction, (void *)app_handler);
        return 1;
    }
    /* A genuine fault of the application's own: a truncated file's page. */
    char path[] = "/tmp/gt-unload-file-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || ftruncate(fd, 8192) != 0)
        return 1;
    volatile char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    unlink(path);
    if (m == MAP_FAILED || ftruncate(fd, 0) != 0)
        return 1;
    if (sigsetjmp(g_jmp, 1) == 0)
        m[4096] = 1;
    if (g_calls != 1 || g_addr != (void *)(m + 4096)) {
        printf("FAIL: the application's handler ran %d time(s), si_addr %p\n", (int)g_calls,
               g_addr);
        return 1;
    }
    printf("ok   after dlclose the application's SIGBUS handler is back and gets its faults\n");
    return 0;
}
