/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_dl_cuda.c — the dlopen'd CUDA table against a real driver, and the
 * registration policy's export path on real GPU memory: cuInit, device
 * attributes (DMA_BUF_SUPPORTED), cuMemAlloc, cuMemGetAddressRange,
 * cuPointerGetAttribute, a copy round trip, and cuMemGetHandleForAddressRange
 * giving a dma-buf fd of the right size; then gt_reg_register(regMr CUDA,
 * GDRTRACE_REG=dmabuf) with a fake NIC must export that fd itself, hand it to
 * ibv_reg_dmabuf_mr covering the buffer, close it, and report asked=CUDA
 * method=DMABUF exported_fd=1; the export flags are NCCL's (the PCIe mapping
 * type only on a C2C GPU) and a buffer past its allocation is refused.
 * Exit 77 (skip) on a host without libcuda or without a GPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"

#include "common/dl/gt_cuda.h"
#include "common/dl/gt_ibv.h"
#include "plugin/reg/gt_reg.h"

static int failures;

static int seen_fd = -1;
static off_t seen_fd_size = -1;
static uint64_t seen_iova, seen_off;
static size_t seen_len;
static struct ibv_mr the_mr;

static struct ibv_mr *fake_reg_dmabuf(struct ibv_pd *pd, uint64_t off, size_t len, uint64_t iova,
                                      int fd, int access)
{
    (void)pd, (void)access;
    if (fd < 0) {
        errno = EBADF; /* the probe: "supported" */
        return NULL;
    }
    seen_fd = fd;
    seen_fd_size = lseek(fd, 0, SEEK_END);
    seen_iova = iova, seen_off = off, seen_len = len;
    return &the_mr;
}
static int fake_dereg(struct ibv_mr *mr)
{
    (void)mr;
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = gt_cu_load();
    if (rc == ENOENT || rc == ENODEV) {
        printf("SKIP: %s\n", gt_cu.why);
        return 77;
    }
    CHECK(rc == 0 && gt_cu.loaded, "load: %s", gt_cu.why);
    int n = 0;
    CHECK(gt_cu.device_get_count(&n) == GT_CUDA_SUCCESS && n > 0, "count %d", n);
    gt_CUdevice dev;
    CHECK(gt_cu.device_get(&dev, 0) == GT_CUDA_SUCCESS, "device 0");
    int dmabuf = -1, gdr = -1;
    gt_cu.device_get_attribute(&dmabuf, GT_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev);
    gt_cu.device_get_attribute(&gdr, GT_CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, dev);
    char bus[32] = "";
    gt_cu.device_get_pci_bus_id(bus, sizeof(bus), dev);
    printf("driver %d, %d GPU(s), GPU 0 at %s: DMA_BUF_SUPPORTED=%d GPU_DIRECT_RDMA=%d, "
           "cuMemGetHandleForAddressRange %s\n",
           gt_cu.driver_version, n, bus, dmabuf, gdr,
           gt_cu.has_dmabuf_export ? "present" : gt_cu.why_dmabuf_export);
    gt_CUcontext ctx = NULL;
    CHECK(gt_cu.primary_ctx_retain(&ctx, dev) == GT_CUDA_SUCCESS && ctx, "primary ctx");
    CHECK(gt_cu.ctx_set_current(ctx) == GT_CUDA_SUCCESS, "set current");
    size_t size = 4 << 20;
    gt_CUdeviceptr p = 0;
    CHECK(gt_cu.mem_alloc(&p, size) == GT_CUDA_SUCCESS && p, "cuMemAlloc");
    gt_CUdeviceptr base = 0;
    size_t bsz = 0;
    CHECK(gt_cu.mem_get_address_range(&base, &bsz, p + 100) == GT_CUDA_SUCCESS && base == p &&
              bsz >= size,
          "address range %#llx+%zu", base, bsz);
    unsigned int mt = 0;
    CHECK(gt_cu.pointer_get_attribute(&mt, GT_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) ==
                  GT_CUDA_SUCCESS &&
              mt == GT_CU_MEMORYTYPE_DEVICE,
          "memory type %u", mt);
    char *h = malloc(size), *back = malloc(size);
    for (size_t i = 0; i < size; i++)
        h[i] = (char)(i * 13);
    CHECK(gt_cu.memcpy_htod(p, h, size) == GT_CUDA_SUCCESS, "HtoD");
    CHECK(gt_cu.memcpy_dtoh(back, p, size) == GT_CUDA_SUCCESS && !memcmp(h, back, size),
          "DtoH round trip");
    if (dmabuf == 1 && gt_cu.has_dmabuf_export) {
        int fd = -1;
        gt_CUresult r = gt_cu.mem_get_handle_for_address_range(
            &fd, p, size, GT_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
        off_t fsz = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
        printf("cuMemGetHandleForAddressRange: %s, fd %d, dma-buf size %lld\n", gt_cu_errstr(r), fd,
               (long long)fsz);
        CHECK(r == GT_CUDA_SUCCESS && fd >= 0 && fsz == (off_t)size, "export");
        if (fd >= 0)
            close(fd);

        /* The policy's own export for regMr(CUDA), with a fake NIC. */
        struct gt_ibv_fns t = {.reg_dmabuf_mr = fake_reg_dmabuf, .dereg_mr = fake_dereg};
        gt_ibv_install(&t);
        struct gt_reg_policy pol = {GT_REG_DMABUF, 0, 0};
        struct gt_reg_dev d;
        gt_reg_dev_init(&d, "fakenic0", (struct ibv_pd *)&d);
        gt_reg_probe(&d, &pol);
        CHECK(d.probe.cuda_dmabuf == GT_PROBE_SUPPORTED, "cuda probe %d", d.probe.cuda_dmabuf);
        CHECK((d.probe.advertised & (GT_PTR_CUDA | GT_PTR_DMABUF)) == (GT_PTR_CUDA | GT_PTR_DMABUF),
              "advertised %#x (%s)", d.probe.advertised, d.probe.why);
        struct gt_mr *m = NULL;
        struct gt_reg_report rep = {0};
        char err[512] = "";
        gt_result res = gt_reg_register(&d, &pol, (void *)(uintptr_t)(p + 4096), 65536, GT_PTR_CUDA,
                                        0, -1, &m, &rep, err, sizeof(err));
        printf("regMr(CUDA) under dmabuf: result %d asked=%d method=%s exported_fd=%d; "
               "ibv_reg_dmabuf_mr saw fd %d (size %lld) iova %#llx off %llu len %zu %s\n",
               res, rep.asked, gt_method_name(rep.method), rep.exported_fd, seen_fd,
               (long long)seen_fd_size, (unsigned long long)seen_iova, (unsigned long long)seen_off,
               seen_len, err);
        CHECK(res == GT_OK && rep.asked == GT_ASKED_CUDA && rep.method == GT_METHOD_DMABUF &&
                  rep.exported_fd == 1,
              "report");
        CHECK(seen_fd >= 0 && seen_iova <= p + 4096 && seen_iova + seen_len >= p + 4096 + 65536,
              "the registered range covers the buffer");
        CHECK(seen_fd_size >= (off_t)seen_len, "the fd covers the range");
        CHECK(fcntl(seen_fd, F_GETFD) == -1, "the exported fd was closed");
        if (m)
            gt_reg_deregister(&d, m);
        /* As NCCL: the PCIe mapping flag only where the GPU is C2C-attached
         * (ATS); 0 on a PCIe GPU such as an x86 H100/H200. */
        int ats = -1, ver = 0;
        gt_cu.device_get_attribute(
            &ats, GT_CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, dev);
        gt_cu.driver_get_version(&ver);
        unsigned long long fl = gt_reg_export_flags((uintptr_t)p);
        printf("export flags %#llx (driver %d, ATS %d)\n", fl, ver, ats);
        CHECK(fl == (ats == 1 && ver >= 12080 ? GT_CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE : 0),
              "export flags as NCCL's");
        /* A buffer running past its allocation: an error, no export. */
        seen_fd = -1;
        res = gt_reg_register(&d, &pol, (void *)(uintptr_t)(base + bsz - 4096), 65536, GT_PTR_CUDA,
                              0, -1, &m, &rep, err, sizeof(err));
        printf("regMr(CUDA) past the allocation: result %d: %s\n", res, err);
        CHECK(res != GT_OK && strstr(err, "extends past its CUDA allocation") && seen_fd == -1,
              "a range past the allocation is refused before exporting");
        gt_reg_dev_fini(&d);
        gt_ibv_reset();
    } else
        printf("note: DMA-BUF export not available on this GPU/driver: export path not run\n");
    gt_cu.mem_free(p);
    gt_cu.primary_ctx_release(dev);
    free(h);
    free(back);
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
