/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gt_gpumem_vgem.c — the GPU-memory validation layer (GDRTRACE_GPUMEM=1,
 * plugin/gpumem) on a real dma-buf that the NVIDIA driver did not export,
 * through the built plugin as NCCL calls it: dlopen libnccl-net-gdrtrace.so,
 * take ncclNetPlugin_v10, listen/connect/accept a pair, then regMrDmaBuf
 * with a real vgem dma-buf fd over a "GPU" address.  There is no CUDA in the
 * Soft-RoCE VM: GDRTRACE_CUDA_LIB names tests/harness/fake_cuda.c's library,
 * which this program dlopens too (the loader hands back the same copy) to
 * allocate the "device memory" the plugin then sees as GPU memory.
 *   gt_gpumem_vgem PLUGIN.so disabled|refused|fallback
 *   disabled  init must fail, the WARN naming an ACTIVE RDMA port (run where
 *             rxe ports are ACTIVE);
 *   refused   the device offers CUDA|DMABUF, and regMrDmaBuf(vgem fd, GPU
 *             address) fails with the exporter named as the kernel names it
 *             in /proc/self/fdinfo; regMr(HOST) on the pair still works;
 *   fallback  (GDRTRACE_ALLOW_PEERMEM=1 GDRTRACE_GPUMEM_PEERMEM=1) the same
 *             regMrDmaBuf succeeds through the emulated peermem fallback.
 * The outcome in the recorder is judged by guest.d/70-gpumem-vgem.sh.
 * Exit 0 when everything happened as the mode expects, 1 otherwise.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "nccl/net.h"
#include "tests/plugin_said.h"
#include "tests/vm/vgem.h"

static int logged(const char *what)
{
    int found = said_has(what);
    if (!found)
        printf("FAIL: the plugin logged no line containing \"%s\"\n", what);
    return found;
}

/* The exporter the kernel names for fd (fdinfo's exp_name), or "". */
static void exp_name(int fd, char *name, size_t len)
{
    char p[64], line[256];
    snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
    name[0] = 0;
    FILE *f = fopen(p, "re");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        char v[128];
        if (sscanf(line, "exp_name: %127s", v) == 1)
            snprintf(name, len, "%s", v);
    }
    fclose(f);
}

/* The fake libcuda's entry points this program uses (driver API shapes). */
struct fake_cuda {
    int (*init)(unsigned);
    int (*alloc)(unsigned long long *, size_t);
    int (*free)(unsigned long long);
    int (*attr)(void *, int, unsigned long long);
};

static int load_cuda(struct fake_cuda *cu)
{
    const char *lib = getenv("GDRTRACE_CUDA_LIB");
    if (!lib || !*lib) {
        printf("FAIL: GDRTRACE_CUDA_LIB must name the fake libcuda (libfakecuda.so)\n");
        return -1;
    }
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("FAIL: %s\n", dlerror());
        return -1;
    }
    *(void **)&cu->init = dlsym(h, "cuInit");
    *(void **)&cu->alloc = dlsym(h, "cuMemAlloc_v2");
    *(void **)&cu->free = dlsym(h, "cuMemFree_v2");
    *(void **)&cu->attr = dlsym(h, "cuPointerGetAttribute");
    if (!cu->init || !cu->alloc || !cu->free || !cu->attr) {
        printf("FAIL: %s lacks cuInit/cuMemAlloc_v2/cuMemFree_v2/cuPointerGetAttribute\n", lib);
        return -1;
    }
    return cu->init(0) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc == 3 ? argv[2] : "";
    if (strcmp(mode, "disabled") && strcmp(mode, "refused") && strcmp(mode, "fallback")) {
        fprintf(stderr, "usage: %s PLUGIN.so disabled|refused|fallback\n", argv[0]);
        return 2;
    }
    struct fake_cuda cu;
    if (load_cuda(&cu) != 0)
        return 1;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    const ncclNet_v10_t *n = h ? dlsym(h, "ncclNetPlugin_v10") : NULL;
    if (!n) {
        printf("FAIL: %s\n", dlerror());
        return 1;
    }
    ncclResult_t r = n->init(said_logger, NULL);
    if (!strcmp(mode, "disabled")) {
        if (r == ncclSuccess) {
            printf("FAIL: init succeeded next to an ACTIVE RDMA port\n");
            return 1;
        }
        if (!logged("refusing to emulate GPU Direct") || !logged("port 1 is ACTIVE"))
            return 1;
        printf("ok: init refused (%d) next to an ACTIVE RDMA port\n", r);
        return 0;
    }
    int ndev = 0;
    if (r != ncclSuccess || n->devices(&ndev) != ncclSuccess || ndev < 1) {
        printf("FAIL: init %d, devices %d\n", r, ndev);
        return 1;
    }
    /* Without CUDA|DMABUF NCCL would never call regMrDmaBuf. */
    ncclNetProperties_v10_t props;
    memset(&props, 0, sizeof(props));
    int want_ptr = NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF;
    if (n->getProperties(0, &props) != ncclSuccess || (props.ptrSupport & want_ptr) != want_ptr) {
        printf("FAIL: device 0 offers ptrSupport %#x, expected %#x\n", props.ptrSupport, want_ptr);
        return 1;
    }
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL, *sc = NULL, *rc = NULL;
    if (n->listen(0, handle, &lc) != ncclSuccess)
        return 1;
    time_t t0 = time(NULL);
    while ((!sc || !rc) && time(NULL) - t0 < 20) {
        if (!sc && n->connect(0, NULL, handle, &sc, NULL) != ncclSuccess)
            return 1;
        if (!rc && n->accept(lc, &rc, NULL) != ncclSuccess)
            return 1;
    }
    if (!sc || !rc) {
        printf("FAIL: no connection\n");
        return 1;
    }
    size_t size = 1 << 20;
    unsigned long long gpu = 0;
    unsigned mt = 0;
    if (cu.alloc(&gpu, size) != 0 || cu.attr(&mt, 2 /* MEMORY_TYPE */, gpu) != 0 ||
        mt != 2 /* DEVICE */) {
        printf("FAIL: the fake libcuda gave no device memory (%#llx, type %u)\n", gpu, mt);
        return 1;
    }
    void *cpu = NULL;
    int fd = vgem_dmabuf(size, &cpu);
    if (fd < 0)
        return 1;
    char exporter[128];
    exp_name(fd, exporter, sizeof(exporter));
    printf("vgem dma-buf fd %d: exp_name: %s\n", fd, exporter);
    if (!exporter[0] || !strcmp(exporter, "nv_dmabuf")) {
        printf("FAIL: fd %d is not a non-NVIDIA dma-buf (exp_name '%s')\n", fd, exporter);
        return 1;
    }
    void *mh = NULL;
    r = n->regMrDmaBuf(rc, (void *)(uintptr_t)gpu, size, NCCL_PTR_CUDA, 0, fd, &mh);
    printf("regMrDmaBuf(vgem fd %d, GPU %#llx) -> %d\n", fd, gpu, r);
    int ok = 1;
    char want[256];
    snprintf(want, sizeof(want),
             "fd %d is a dma-buf exported by '%s', not by the NVIDIA driver (nv_dmabuf)", fd,
             exporter);
    if (!strcmp(mode, "refused")) {
        if (r == ncclSuccess || mh) {
            printf("FAIL: a %s dma-buf was accepted as GPU memory\n", exporter);
            ok = 0;
        }
    } else if (r != ncclSuccess || !mh) {
        printf("FAIL: no fallback to the emulated peermem\n");
        ok = 0;
    }
    /* Refused or fallen back, the reason is the exporter. */
    ok = logged(want) && ok;
    close(fd); /* as NCCL does once the call returns */
    void *host = NULL, *hmh = NULL;
    if (posix_memalign(&host, 4096, size) != 0)
        return 1;
    ncclResult_t r2 = n->regMr(sc, host, size, NCCL_PTR_HOST, &hmh);
    printf("regMr(HOST) -> %d\n", r2);
    if (r2 != ncclSuccess) {
        printf("FAIL: the pair no longer registers host memory\n");
        ok = 0;
    }
    if (mh && n->deregMr(rc, mh) != ncclSuccess)
        ok = 0;
    if (hmh && n->deregMr(sc, hmh) != ncclSuccess)
        ok = 0;
    n->closeSend(sc);
    n->closeRecv(rc);
    n->closeListen(lc);
    cu.free(gpu);
    free(host);
    if (cpu)
        munmap(cpu, size);
    printf(ok ? "ok\n" : "FAIL\n");
    return ok ? 0 : 1;
}
