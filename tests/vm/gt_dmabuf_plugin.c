/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gt_dmabuf_plugin.c — the DMA-BUF registration path through the built
 * plugin, as NCCL calls it: dlopen libnccl-net-gdrtrace.so, take
 * ncclNetPlugin_v10, connect rxe1 -> rxe0, then regMrDmaBuf on a real vgem
 * dma-buf fd (closed right after, as NCCL does) and regMr(HOST).  The
 * policy decides the outcome; the recorder (read afterwards with `gdrtrace
 * summary` by run-vm.sh) must show it.
 *   gt_dmabuf_plugin PLUGIN.so fail|ok
 * Exit 0 when regMrDmaBuf failed (fail) or succeeded (ok) as expected.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

#include "nccl/net.h"
#include "tests/vm/vgem.h"

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    (void)flags, (void)file, (void)line;
    if (level > NCCL_LOG_WARN)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("plugin: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 3) {
        fprintf(stderr, "usage: %s PLUGIN.so fail|ok\n", argv[0]);
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    const ncclNet_v10_t *n = h ? dlsym(h, "ncclNetPlugin_v10") : NULL;
    if (!n) {
        printf("FAIL: %s\n", dlerror());
        return 1;
    }
    int ndev = 0;
    if (n->init(logger, NULL) != ncclSuccess || n->devices(&ndev) != ncclSuccess || ndev < 1) {
        printf("FAIL: init/devices (%d devices)\n", ndev);
        return 1;
    }
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL, *sc = NULL, *rc = NULL;
    if (n->listen(0, handle, &lc) != ncclSuccess)
        return 1;
    time_t t0 = time(NULL);
    while ((!sc || !rc) && time(NULL) - t0 < 20) {
        if (!sc && n->connect(ndev > 1 ? 1 : 0, NULL, handle, &sc, NULL) != ncclSuccess)
            return 1;
        if (!rc && n->accept(lc, &rc, NULL) != ncclSuccess)
            return 1;
    }
    if (!sc || !rc) {
        printf("FAIL: no connection\n");
        return 1;
    }
    size_t size = 1 << 20;
    void *cpu = NULL;
    int fd = vgem_dmabuf(size, &cpu);
    if (fd < 0)
        return 1;
    void *mh = NULL;
    void *host = NULL;
    if (posix_memalign(&host, 4096, size) != 0)
        return 1;
    /* With a fallback configured, host memory stands in for the GPU memory
     * that nvidia_peermem would pin; else the vgem mapping itself. */
    void *addr = !strcmp(argv[2], "ok") ? host : cpu;
    ncclResult_t r = n->regMrDmaBuf(rc, addr, size, NCCL_PTR_CUDA, 0, fd, &mh);
    close(fd);
    printf("regMrDmaBuf(vgem fd) -> %d\n", r);
    void *hmh = NULL;
    ncclResult_t r2 = n->regMr(sc, host, size, NCCL_PTR_HOST, &hmh);
    printf("regMr(HOST) -> %d\n", r2);
    if (mh)
        n->deregMr(rc, mh);
    if (hmh)
        n->deregMr(sc, hmh);
    n->closeSend(sc);
    n->closeRecv(rc);
    n->closeListen(lc);
    int want_ok = !strcmp(argv[2], "ok");
    if ((r == ncclSuccess) != want_ok || r2 != ncclSuccess) {
        printf("FAIL: regMrDmaBuf %s, expected %s\n", r == ncclSuccess ? "succeeded" : "failed",
               argv[2]);
        return 1;
    }
    printf("ok\n");
    return 0;
}
