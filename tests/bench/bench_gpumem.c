/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_gpumem.c — `make bench`: the GPU-memory validation layer's copier
 * next to host memory through sock, in one process bound as a launcher
 * binds a rank (one core), and unbound; the fake libcuda
 * (tests/harness/fake_cuda.c) stands in for the GPU, so no GPU is needed.
 *
 * One connected pair on loopback, one thread driving both ends as NCCL's
 * proxy does (up to BENCH_WINDOW = 8 sends and receives in flight, test()
 * in a loop, sched_yield() when a pass completed nothing), 1 MiB messages.
 * "host": malloc'ed buffers, which the layer hands to sock as they are;
 * "copier": fake-GPU buffers (cuMem, shareable), whose every message is
 * copied out and in by the copier process.  Each (binding, memory) pair is
 * run BENCH_REPS times, interleaved; the best run is reported with the
 * median of the per-rep copier/host ratios.
 * The copier's CPU time (utime + stime from /proc/<pid>/stat) is reported
 * per GB moved and over BENCH_IDLE_S seconds of idleness.  With the fake
 * libcuda a "GPU copy" is a memcpy made by the copier on the CPU, so its CPU
 * per GB includes two memcpys of every byte (a real GPU's DMA costs none).
 *
 * Env: BENCH_MB (MiB per run, default 256), BENCH_REPS (default 3),
 * BENCH_IDLE_S (default 2).  Exit 0 when the runs complete (figures are for
 * reading); 1 on error.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/dl/gt_cuda.h"
#include "common/gt_net.h"
#include "plugin/gpumem/copier_client.h"
#include "plugin/gpumem/gpumem.h"
#include "tests/bench/bench_util.h"

extern const struct gt_net_ops gt_sock_ops;

#define BENCH_WINDOW 8
#define MSG ((size_t)1 << 20)
#define SPAN (BENCH_WINDOW * MSG)

struct alloc_prop {
    int type;
    int requested_handle_types;
    int location_type;
    int location_id;
};

static struct {
    int (*create)(unsigned long long *, size_t, const struct alloc_prop *, unsigned long long);
    int (*reserve)(unsigned long long *, size_t, size_t, unsigned long long, unsigned long long);
    int (*map)(unsigned long long, size_t, size_t, unsigned long long, unsigned long long);
} fc;

static const struct gt_net_ops *ops;
static void *ctx;

static void *gpu_alloc(size_t n)
{
    struct alloc_prop prop = {1, GT_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                              GT_CU_MEM_LOCATION_TYPE_DEVICE, 0};
    unsigned long long h = 0, p = 0;
    if (fc.create(&h, n, &prop, 0) || fc.reserve(&p, n, 0, 0, 0) || fc.map(p, n, 0, h, 0))
        DIE("fake GPU allocation of %zu bytes failed", n);
    return (void *)(uintptr_t)p;
}

static double cpu_s(pid_t pid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        DIE("%s: %s", p, strerror(errno));
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *rp = strrchr(buf, ')');
    unsigned long long ut = 0, st = 0;
    if (!rp ||
        sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        DIE("cannot parse %s", p);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

struct pair {
    void *sc, *rc, *smh, *rmh;
    char *src, *dst;
};

static void pair_up(struct pair *p, int gpu)
{
    char handle[GT_NET_HANDLE_MAXSIZE];
    void *lc = NULL;
    if (ops->listen(ctx, 0, handle, &lc) != GT_OK)
        DIE("listen failed");
    p->sc = p->rc = NULL;
    double t0 = now_s();
    while (!p->sc || !p->rc) {
        if (!p->sc && ops->connect(ctx, 0, handle, &p->sc, NULL) != GT_OK)
            DIE("connect failed");
        if (!p->rc && ops->accept(lc, &p->rc, NULL) != GT_OK)
            DIE("accept failed");
        if (now_s() - t0 > 10)
            DIE("connect/accept did not complete in 10 s");
    }
    ops->close_listen(lc);
    if (gpu) {
        p->src = gpu_alloc(SPAN);
        p->dst = gpu_alloc(SPAN);
    } else if (!(p->src = malloc(SPAN)) || !(p->dst = malloc(SPAN))) {
        DIE("out of memory");
    }
    memset(p->src, 0x5a, SPAN);
    int type = gpu ? GT_PTR_CUDA : GT_PTR_HOST;
    if (ops->reg_mr(p->sc, p->src, SPAN, type, &p->smh, NULL) != GT_OK ||
        ops->reg_mr(p->rc, p->dst, SPAN, type, &p->rmh, NULL) != GT_OK)
        DIE("registration failed (%s memory)", gpu ? "fake GPU" : "host");
}

/* Moves `total` bytes in 1 MiB messages; returns seconds. */
static double run(struct pair *p, size_t total)
{
    size_t n = total / MSG, sent = 0, rcvd = 0, sdone = 0, rdone = 0;
    void *sreq[BENCH_WINDOW] = {0}, *rreq[BENCH_WINDOW] = {0};
    double t0 = now_s();
    while (sdone < n || rdone < n) {
        int progress = 0;
        for (int i = 0; i < BENCH_WINDOW; i++) {
            if (!rreq[i] && rcvd < n && rcvd - rdone < BENCH_WINDOW) {
                void *d = p->dst + (rcvd % BENCH_WINDOW) * MSG;
                size_t sz = MSG;
                int tag = 1;
                if (ops->irecv(p->rc, 1, &d, &sz, &tag, &p->rmh, NULL, &rreq[i]) != GT_OK)
                    DIE("irecv failed");
                rcvd += rreq[i] != NULL;
            }
            if (!sreq[i] && sent < n && sent - sdone < BENCH_WINDOW) {
                if (ops->isend(p->sc, p->src + (sent % BENCH_WINDOW) * MSG, MSG, 1, p->smh, NULL,
                               &sreq[i]) != GT_OK)
                    DIE("isend failed");
                sent += sreq[i] != NULL;
            }
            int d = 0;
            if (rreq[i]) {
                if (ops->test(rreq[i], &d, NULL) != GT_OK)
                    DIE("test (receive) failed");
                if (d) {
                    rreq[i] = NULL;
                    rdone++;
                    progress = 1;
                }
            }
            if (sreq[i]) {
                if (ops->test(sreq[i], &d, NULL) != GT_OK)
                    DIE("test (send) failed");
                if (d) {
                    sreq[i] = NULL;
                    sdone++;
                    progress = 1;
                }
            }
        }
        if (!progress)
            sched_yield();
        if (now_s() - t0 > 300)
            DIE("a run did not complete in 300 s");
    }
    return now_s() - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void setup(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        DIE("readlink /proc/self/exe");
    self[n] = 0;
    char dir[PATH_MAX], lib[PATH_MAX + 32], copier[PATH_MAX + 32];
    snprintf(dir, sizeof(dir), "%s", dirname(self)); /* build/<x>/bench */
    snprintf(lib, sizeof(lib), "%s/../tests/libfakecuda.so", dir);
    snprintf(copier, sizeof(copier), "%s/../gdrtrace-gpumem-copier", dir);
    if (access(lib, R_OK) || access(copier, X_OK))
        DIE("%s and %s must be built (make all tests)", lib, copier);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        DIE("dlopen %s: %s", lib, dlerror());
    *(void **)&fc.create = dlsym(h, "cuMemCreate");
    *(void **)&fc.reserve = dlsym(h, "cuMemAddressReserve");
    *(void **)&fc.map = dlsym(h, "cuMemMap");
    if (!fc.create || !fc.reserve || !fc.map)
        DIE("%s lacks the cuMem calls", lib);
    setenv("GDRTRACE_CUDA_LIB", lib, 1);
    setenv("GDRTRACE_GPUMEM_COPIER", copier, 1);
    setenv("GDRTRACE_GPUMEM", "1", 1);
    setenv("GDRTRACE_REG", "peermem", 1);
    setenv("GDRTRACE_GPUMEM_PEERMEM", "1", 1);
    if (!getenv("GDRTRACE_SOCKET_IFNAME"))
        setenv("GDRTRACE_SOCKET_IFNAME", "lo", 1);
    if (gt_cu_load() != 0)
        DIE("the fake libcuda did not load: %s", gt_cu.why);
}

/* One binding: host and copier pairs, reps interleaved. */
static void measure(const char *label, size_t total, int reps, double idle_s)
{
    ops = gt_gpumem_wrap(&gt_sock_ops);
    if (ops->init(&ctx, 1, 1, NULL, NULL, NULL) != GT_OK)
        DIE("init failed");
    struct pair host, gpu;
    pair_up(&host, 0);
    pair_up(&gpu, 1);
    pid_t cp = gt_gpumem_copier_pid();
    if (cp <= 0)
        DIE("no copier process");
    char aff[128] = "?", path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)cp);
    FILE *f = fopen(path, "re");
    char line[256];
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "Cpus_allowed_list:", 18))
            snprintf(aff, sizeof(aff), "%s", line + 19 + strspn(line + 19, " \t"));
    if (f)
        fclose(f);
    aff[strcspn(aff, "\n")] = 0;
    run(&host, 16 * MSG); /* warm both */
    run(&gpu, 16 * MSG);
    double best_h = 1e9, best_g = 1e9, ratio[16], cpu = 0;
    for (int r = 0; r < reps; r++) {
        double th = run(&host, total);
        double c0 = cpu_s(cp);
        double tg = run(&gpu, total);
        cpu += cpu_s(cp) - c0;
        best_h = th < best_h ? th : best_h;
        best_g = tg < best_g ? tg : best_g;
        ratio[r] = th / tg;
    }
    qsort(ratio, (size_t)reps, sizeof(double), cmp_double);
    double c0 = cpu_s(cp);
    usleep((useconds_t)(idle_s * 1e6));
    double idle = cpu_s(cp) - c0;
    double gb = (double)total * reps / 1e9;
    printf("%-10s host sock %8.0f MB/s | copier %8.0f MB/s | copier/host %.2f (median of %d) | "
           "copier CPU %.2f s/GB moved, %.3f s idle over %.0f s | copier CPUs %s\n",
           label, total / best_h / 1e6, total / best_g / 1e6, ratio[reps / 2], reps, cpu / gb, idle,
           idle_s, aff);
    ops->dereg_mr(host.sc, host.smh);
    ops->dereg_mr(host.rc, host.rmh);
    ops->dereg_mr(gpu.sc, gpu.smh);
    ops->dereg_mr(gpu.rc, gpu.rmh);
    ops->close_send(host.sc);
    ops->close_recv(host.rc);
    ops->close_send(gpu.sc);
    ops->close_recv(gpu.rc);
    ops->finalize(ctx);
    free(host.src);
    free(host.dst);
}

int main(void)
{
    setup();
    long mb = getenv("BENCH_MB") ? atol(getenv("BENCH_MB")) : 256;
    int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 3;
    double idle_s = getenv("BENCH_IDLE_S") ? atof(getenv("BENCH_IDLE_S")) : 2;
    if (mb < 8 || reps < 1 || reps > 16 || idle_s < 0)
        DIE("BENCH_MB >= 8, 1 <= BENCH_REPS <= 16, BENCH_IDLE_S >= 0");
    size_t total = (size_t)mb << 20;
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof(all), &all))
        DIE("sched_getaffinity: %s", strerror(errno));
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &all))
        first++;
    printf("the GPU-memory layer's copier (fake libcuda) vs host memory through sock, one "
           "thread driving a pair, 1 MiB messages, %ld MiB per run, best of %d; %d CPU(s) "
           "allowed\n",
           mb, reps, CPU_COUNT(&all));
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof(one), &one))
        DIE("sched_setaffinity: %s", strerror(errno));
    char label[32];
    snprintf(label, sizeof(label), "cpu %d", first);
    measure(label, total, reps, idle_s);
    if (sched_setaffinity(0, sizeof(all), &all))
        DIE("sched_setaffinity: %s", strerror(errno));
    measure("unbound", total, reps, idle_s);
    return 0;
}
