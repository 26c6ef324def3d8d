/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpumem_copier_so.c (test_gpumem_copier_so) — the copier process through
 * the built plugin as NCCL loads it: dlopen
 * libnccl-net-gdrtrace.so, take ncclNetPlugin_v10, connect a pair and move
 * "GPU" bytes both ways, with GDRTRACE_GPUMEM_COPIER unset.  It proves the
 * shared library, loaded through a link in a folder of its own (as `gdrtrace
 * run` loads it), finds gdrtrace-gpumem-copier beside its real file and says
 * which it started, and that the copies work
 * from the real .so (hidden symbols, its own copy of the CUDA table) over
 * the fake libcuda (tests/harness/fake_cuda.c), which this program dlopens
 * too to allocate the cuMem "device memory" (the loader hands back the copy
 * the plugin loads).  Exit 0 pass, 1 fail.
 *
 * With arguments PLUGIN PLANTED WHY (tests/harness/copier-trust.sh): loads
 * the plugin file PLUGIN as it is (a copy in another user's tree) and checks
 * that the copier PLANTED, found beside it but not trusted, is named in a
 * WARN saying WHY and never started: a registration either fails or runs in
 * another copier.  With PLUGIN +PATH: the trusted PATH must be started.
 *
 * Its recorder goes to GDRTRACE_DIR when set, else to a scratch folder of
 * its own, removed at exit: nothing is left in /dev/shm.
 */
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nccl/net.h"
#include "tests/check.h"
#include "tests/plugin_said.h"

static int failures;
static char recdir[64];

static void remove_recdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", recdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", recdir);
}

struct alloc_prop {
    int type, requested_handle_types, location_type, location_id;
};

/* Tests both requests until done (10 s at most); the receive's size. */
static int wait_pair(const ncclNet_v10_t *n, void *s, void *r, int *rsize)
{
    int sd = 0, rd = 0;
    time_t t0 = time(NULL);
    while ((!sd || !rd) && time(NULL) - t0 < 10) {
        if (!sd && n->test(s, &sd, NULL) != ncclSuccess)
            return -1;
        if (!rd && n->test(r, &rd, rsize) != ncclSuccess)
            return -1;
    }
    return sd && rd ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *planted = argc >= 3 ? argv[2] : NULL, *warned_why = argc >= 4 ? argv[3] : NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    char self[PATH_MAX], lib[PATH_MAX + 32], so[PATH_MAX + 48], copier[PATH_MAX + 48];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    REQUIRE(len > 0, "readlink /proc/self/exe: %s", strerror(errno));
    self[len] = 0;
    char *dir = dirname(self); /* build/<san>/tests */
    snprintf(lib, sizeof(lib), "%s/libfakecuda.so", dir);
    snprintf(so, sizeof(so), "%s/../libnccl-net-gdrtrace.so", dir);
    snprintf(copier, sizeof(copier), "%s/../gdrtrace-gpumem-copier", dir);
    REQUIRE(access(lib, R_OK) == 0 && access(so, R_OK) == 0 && access(copier, X_OK) == 0,
            "%s, %s and %s must be built (make all tests)", lib, so, copier);
    setenv("GDRTRACE_CUDA_LIB", lib, 1);
    unsetenv("GDRTRACE_GPUMEM_COPIER");
    setenv("GDRTRACE_GPUMEM", "1", 1);
    setenv("GDRTRACE_REG", "peermem", 1);
    setenv("GDRTRACE_GPUMEM_PEERMEM", "1", 1);
    setenv("GDRTRACE_SOCKET_IFNAME", "lo", 1);
    const char *dirvar = getenv("GDRTRACE_DIR");
    if (!dirvar || !*dirvar) {
        snprintf(recdir, sizeof(recdir), "/tmp/gt_copier_so_rec.XXXXXX");
        REQUIRE(mkdtemp(recdir), "mkdtemp: %s", strerror(errno));
        atexit(remove_recdir);
        setenv("GDRTRACE_DIR", recdir, 1);
    }

    void *fh = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(fh, "%s", dlerror());
    int (*create)(unsigned long long *, size_t, const struct alloc_prop *, unsigned long long);
    int (*reserve)(unsigned long long *, size_t, size_t, unsigned long long, unsigned long long);
    int (*map)(unsigned long long, size_t, size_t, unsigned long long, unsigned long long);
    *(void **)&create = dlsym(fh, "cuMemCreate");
    *(void **)&reserve = dlsym(fh, "cuMemAddressReserve");
    *(void **)&map = dlsym(fh, "cuMemMap");
    REQUIRE(create && reserve && map, "%s lacks the cuMem calls", lib);
    const size_t N = 1 << 20;
    unsigned long long gpu[2];
    for (int i = 0; i < 2; i++) {
        struct alloc_prop prop = {1, 1 /* POSIX_FILE_DESCRIPTOR */, 1, 0};
        unsigned long long h = 0;
        REQUIRE(create(&h, N, &prop, 0) == 0 && reserve(&gpu[i], N, 0, 0, 0) == 0 &&
                    map(gpu[i], N, 0, h, 0) == 0,
                "fake cuMem allocation %d", i);
    }

    /* Loaded as `gdrtrace run` and NCCL_NET_PLUGIN by name load it: through
     * a link in a plugin-only folder, where no copier lies beside it. */
    char tmp[] = "/tmp/gt_copier_so.XXXXXX", link[sizeof(tmp) + 64], real[PATH_MAX];
    REQUIRE(mkdtemp(tmp), "mkdtemp: %s", strerror(errno));
    REQUIRE(realpath(so, real), "realpath %s: %s", so, strerror(errno));
    snprintf(link, sizeof(link), "%s/libnccl-net-gdrtrace.so", tmp);
    REQUIRE(symlink(real, link) == 0, "symlink %s: %s", link, strerror(errno));
    void *ph = dlopen(planted ? argv[1] : link, RTLD_NOW | RTLD_LOCAL);
    unlink(link);
    rmdir(tmp);
    REQUIRE(ph, "%s", dlerror());
    const ncclNet_v10_t *n = dlsym(ph, "ncclNetPlugin_v10");
    REQUIRE(n, "no ncclNetPlugin_v10 in %s", so);
    REQUIRE(n->init(said_logger, NULL) == ncclSuccess, "init");
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL, *sc = NULL, *rc = NULL;
    REQUIRE(n->listen(0, handle, &lc) == ncclSuccess, "listen");
    time_t t0 = time(NULL);
    while ((!sc || !rc) && time(NULL) - t0 < 20) {
        REQUIRE(sc || n->connect(0, NULL, handle, &sc, NULL) == ncclSuccess, "connect");
        REQUIRE(rc || n->accept(lc, &rc, NULL) == ncclSuccess, "accept");
    }
    REQUIRE(sc && rc, "no connection in 20 s");
    unsigned char *a = (unsigned char *)(uintptr_t)gpu[0], *b = (unsigned char *)(uintptr_t)gpu[1];
    void *mh[2][2] = {{NULL, NULL}, {NULL, NULL}}; /* [buffer][0 send comm, 1 recv comm] */
    if (planted && planted[0] == '+') {
        /* "+PATH": PATH is trusted (ours, in a sticky tree) and must be started */
        int ok =
            n->regMr(sc, (void *)(uintptr_t)gpu[0], N, NCCL_PTR_CUDA, &mh[0][0]) == ncclSuccess;
        char want[PATH_MAX + 64];
        snprintf(want, sizeof(want), "(%s, found through the plugin's folder, trusted)",
                 planted + 1);
        pthread_mutex_lock(&said_lock);
        CHECK(ok && strstr(said, want), "the trusted %s was not started (regMr %s): %s",
              planted + 1, ok ? "ok" : "failed", said);
        pthread_mutex_unlock(&said_lock);
        if (ok)
            n->deregMr(sc, mh[0][0]);
        n->closeSend(sc);
        n->closeRecv(rc);
        n->closeListen(lc);
        printf(failures ? "FAIL\n" : "ok: %s started\n", planted + 1);
        return failures ? 1 : 0;
    }
    if (planted) {
        int ok =
            n->regMr(sc, (void *)(uintptr_t)gpu[0], N, NCCL_PTR_CUDA, &mh[0][0]) == ncclSuccess;
        char warned[2 * PATH_MAX + 64];
        snprintf(warned, sizeof(warned), "gpumem: not starting %s: not trusted: %s", planted,
                 warned_why ? warned_why : "");
        pthread_mutex_lock(&said_lock);
        CHECK(strstr(said, warned), "no WARN '%s…': %s", warned, said);
        CHECK(!strstr(said, "found through the plugin's folder"),
              "a copier found beside the plugin copy was started: %s", said);
        pthread_mutex_unlock(&said_lock);
        if (ok)
            n->deregMr(sc, mh[0][0]);
        n->closeSend(sc);
        n->closeRecv(rc);
        n->closeListen(lc);
        printf(failures ? "FAIL\n" : "ok: %s not started (registration %s)\n", planted,
               ok ? "ran in another, trusted copier" : "failed");
        return failures ? 1 : 0;
    }
    for (int i = 0; i < 2; i++)
        for (int c = 0; c < 2; c++)
            REQUIRE(n->regMr(c ? rc : sc, (void *)(uintptr_t)gpu[i], N, NCCL_PTR_CUDA, &mh[i][c]) ==
                        ncclSuccess,
                    "regMr(CUDA) of buffer %d on comm %d", i, c);
    pthread_mutex_lock(&said_lock);
    char want[PATH_MAX + 64];
    *strrchr(real, '/') = 0;
    snprintf(want, sizeof(want), "(%s/gdrtrace-gpumem-copier, found through", real);
    CHECK(strstr(said, "copies run in the copier process") && strstr(said, want),
          "the plugin, loaded through a link, did not say it started the copier beside its "
          "real file (%s): %s",
          want, said);
    pthread_mutex_unlock(&said_lock);
    errno = 0;
    CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "this process has a child: %s",
          strerror(errno));
    /* a -> b over the pair, then b's bytes (changed) -> a */
    for (int round = 0; round < 2; round++) {
        unsigned char *src = round ? b : a, *dst = round ? a : b;
        for (size_t i = 0; i < N; i++)
            src[i] = (unsigned char)(i * 31 + 7 + round);
        memset(dst, 0, N);
        void *s = NULL, *r = NULL, *d = dst;
        size_t sz = N;
        int tag = round, got = 0;
        REQUIRE(n->isend(sc, src, N, tag, mh[round][0], NULL, &s) == ncclSuccess && s, "isend");
        REQUIRE(n->irecv(rc, 1, &d, &sz, &tag, &mh[1 - round][1], NULL, &r) == ncclSuccess && r,
                "irecv");
        REQUIRE(wait_pair(n, s, r, &got) == 0, "round %d not done in 10 s", round);
        CHECK(got == (int)N, "round %d received %d bytes, sent %zu", round, got, N);
        CHECK(memcmp(src, dst, N) == 0, "round %d: the bytes differ", round);
    }
    for (int i = 0; i < 2; i++)
        for (int c = 0; c < 2; c++)
            CHECK(n->deregMr(c ? rc : sc, mh[i][c]) == ncclSuccess, "deregMr");
    n->closeSend(sc);
    n->closeRecv(rc);
    n->closeListen(lc);
    printf(failures ? "FAIL\n" : "ok: the built plugin's copier moved 2 x %zu bytes\n", N);
    return failures ? 1 : 0;
}
