/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_cuda.c — a stand-in libcuda (libfakecuda.so) for the dl seam of
 * common/dl/gt_cuda.c in a process that loads the built plugin, where a
 * test cannot call gt_cu_install(): GDRTRACE_CUDA_LIB points at it.  It has
 * one "GPU" that says it supports DMA-BUF export, so the GPU-memory
 * validation layer (GDRTRACE_GPUMEM=1) offers NCCL_PTR_CUDA|NCCL_PTR_DMABUF
 * on a machine without a GPU.  A run that only registers host memory shows
 * what happens when NCCL, offered GPU memory, uses host memory only
 * (tests/reader/test-nccl-settings.sh).
 *
 * "Device memory": cuMemAlloc_v2 maps anonymous host pages and the pointer
 * queries (cuPointerGetAttribute, cuMemGetAddressRange_v2) report exactly
 * those ranges as device memory of device 0; every other address is
 * unknown to the "driver" (CUDA_ERROR_INVALID_VALUE, as the real one says
 * for host memory it does not know).  A test that dlopens this same library
 * (the one GDRTRACE_CUDA_LIB names: the loader hands back the one copy)
 * gets addresses the plugin takes for GPU memory, e.g. to pass a real
 * non-NVIDIA dma-buf over them (tests/vm/gt_gpumem_vgem.c).  Copies,
 * pinned host memory and dma-buf export still fail: nothing moves as GPU
 * memory.  Test-only; never installed.
 *
 * The signatures are the driver API's in shape only (int results, pointer
 * and integer arguments), enough for gt_cuda.c's table.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#define EXPORT __attribute__((visibility("default")))

#define OK 0
#define INVALID_VALUE 1
#define NOT_SUPPORTED 801
#define OUT_OF_MEMORY 2
#define DMA_BUF_SUPPORTED 124
#define PTR_CONTEXT 1
#define PTR_MEMORY_TYPE 2
#define PTR_DEVICE_ORDINAL 9
#define MEMORYTYPE_DEVICE 2

static int ctx_obj, stream_obj, event_obj;

/* The "device" allocations: [base, base + size), size 0 = free slot.  A
 * lock because the plugin's threads query while the test allocates. */
#define MAX_ALLOCS 16
static struct {
    uintptr_t base;
    size_t size;
} allocs[MAX_ALLOCS];
static pthread_mutex_t allocs_lock = PTHREAD_MUTEX_INITIALIZER;

/* 1 when an allocation holds p, with its base and size; else 0. */
static int alloc_of(unsigned long long p, uintptr_t *base, size_t *size)
{
    int found = 0;
    pthread_mutex_lock(&allocs_lock);
    for (int i = 0; i < MAX_ALLOCS && !found; i++)
        if (allocs[i].size && p >= allocs[i].base && p - allocs[i].base < allocs[i].size) {
            *base = allocs[i].base;
            *size = allocs[i].size;
            found = 1;
        }
    pthread_mutex_unlock(&allocs_lock);
    return found;
}

EXPORT int cuInit(unsigned flags)
{
    (void)flags;
    return OK;
}

EXPORT int cuDriverGetVersion(int *v)
{
    *v = 12040;
    return OK;
}

EXPORT int cuDeviceGet(int *dev, int ordinal)
{
    if (ordinal != 0)
        return INVALID_VALUE;
    *dev = 0;
    return OK;
}

EXPORT int cuDeviceGetCount(int *n)
{
    *n = 1;
    return OK;
}

EXPORT int cuDeviceGetAttribute(int *v, int attr, int dev)
{
    (void)dev;
    *v = attr == DMA_BUF_SUPPORTED;
    return OK;
}

EXPORT int cuDeviceGetPCIBusId(char *id, int len, int dev)
{
    (void)dev;
    snprintf(id, (size_t)len, "0000:00:00.0");
    return OK;
}

/* Only cuMemAlloc_v2's ranges are device memory; other addresses get what
 * the driver answers for host memory it does not know. */
EXPORT int cuPointerGetAttribute(void *data, int attr, unsigned long long p)
{
    uintptr_t base;
    size_t size;
    if (!alloc_of(p, &base, &size))
        return INVALID_VALUE;
    switch (attr) {
    case PTR_MEMORY_TYPE:
        *(unsigned *)data = MEMORYTYPE_DEVICE;
        return OK;
    case PTR_CONTEXT:
        *(void **)data = &ctx_obj;
        return OK;
    case PTR_DEVICE_ORDINAL:
        *(int *)data = 0;
        return OK;
    default:
        return INVALID_VALUE;
    }
}

EXPORT int cuMemGetAddressRange_v2(unsigned long long *base, size_t *size, unsigned long long p)
{
    uintptr_t b;
    size_t n;
    if (!alloc_of(p, &b, &n))
        return INVALID_VALUE;
    if (base)
        *base = b;
    if (size)
        *size = n;
    return OK;
}

EXPORT int cuMemAlloc_v2(unsigned long long *p, size_t n)
{
    if (n == 0)
        return INVALID_VALUE;
    void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return OUT_OF_MEMORY;
    pthread_mutex_lock(&allocs_lock);
    int i = 0;
    while (i < MAX_ALLOCS && allocs[i].size)
        i++;
    if (i < MAX_ALLOCS) {
        allocs[i].base = (uintptr_t)m;
        allocs[i].size = n;
    }
    pthread_mutex_unlock(&allocs_lock);
    if (i == MAX_ALLOCS) {
        munmap(m, n);
        return OUT_OF_MEMORY;
    }
    *p = (uintptr_t)m;
    return OK;
}

EXPORT int cuMemFree_v2(unsigned long long p)
{
    pthread_mutex_lock(&allocs_lock);
    int i = 0;
    while (i < MAX_ALLOCS && !(allocs[i].size && allocs[i].base == p))
        i++;
    size_t n = i < MAX_ALLOCS ? allocs[i].size : 0;
    if (n)
        allocs[i].size = 0;
    pthread_mutex_unlock(&allocs_lock);
    if (!n)
        return INVALID_VALUE;
    munmap((void *)(uintptr_t)p, n);
    return OK;
}

EXPORT int cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n)
{
    (void)d, (void)s, (void)n;
    return NOT_SUPPORTED;
}

EXPORT int cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n)
{
    (void)d, (void)s, (void)n;
    return NOT_SUPPORTED;
}

EXPORT int cuCtxGetCurrent(void **ctx)
{
    *ctx = &ctx_obj;
    return OK;
}

EXPORT int cuCtxSetCurrent(void *ctx)
{
    (void)ctx;
    return OK;
}

EXPORT int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    (void)dev;
    *ctx = &ctx_obj;
    return OK;
}

EXPORT int cuDevicePrimaryCtxRelease_v2(int dev)
{
    (void)dev;
    return OK;
}

EXPORT int cuGetErrorString(int err, const char **s)
{
    *s = err == OK ? "CUDA_SUCCESS (fake)" : "fake libcuda: no device memory";
    return OK;
}

EXPORT int cuMemGetHandleForAddressRange(void *h, unsigned long long p, size_t n, int type,
                                         unsigned long long flags)
{
    (void)h, (void)p, (void)n, (void)type, (void)flags;
    return INVALID_VALUE;
}

EXPORT int cuStreamCreate(void **s, unsigned flags)
{
    (void)flags;
    *s = &stream_obj;
    return OK;
}

EXPORT int cuStreamDestroy_v2(void *s)
{
    (void)s;
    return OK;
}

EXPORT int cuStreamQuery(void *s)
{
    (void)s;
    return OK;
}

EXPORT int cuEventCreate(void **e, unsigned flags)
{
    (void)flags;
    *e = &event_obj;
    return OK;
}

EXPORT int cuEventDestroy_v2(void *e)
{
    (void)e;
    return OK;
}

EXPORT int cuEventRecord(void *e, void *s)
{
    (void)e, (void)s;
    return OK;
}

EXPORT int cuEventQuery(void *e)
{
    (void)e;
    return OK;
}

EXPORT int cuMemcpyHtoDAsync_v2(unsigned long long d, const void *s, size_t n, void *st)
{
    (void)d, (void)s, (void)n, (void)st;
    return NOT_SUPPORTED;
}

EXPORT int cuMemcpyDtoHAsync_v2(void *d, unsigned long long s, size_t n, void *st)
{
    (void)d, (void)s, (void)n, (void)st;
    return NOT_SUPPORTED;
}

EXPORT int cuMemHostAlloc(void **p, size_t n, unsigned flags)
{
    (void)p, (void)n, (void)flags;
    return NOT_SUPPORTED;
}

EXPORT int cuMemFreeHost(void *p)
{
    (void)p;
    return INVALID_VALUE;
}
