/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_cuda.c — a stand-in libcuda (libfakecuda.so) for the dl seam of
 * common/dl/gt_cuda.c in a process that loads the built plugin, where a
 * test cannot call gt_cu_install(): GDRTRACE_CUDA_LIB points at it.  It has
 * one "GPU" that says it supports DMA-BUF export, so the GPU-memory
 * validation layer (GDRTRACE_GPUMEM=1) offers NCCL_PTR_CUDA|NCCL_PTR_DMABUF
 * on a machine without a GPU; it holds no device memory (every allocation,
 * copy and pointer query fails), so nothing can be registered or moved as
 * GPU memory: a run through it shows what happens when NCCL, offered GPU
 * memory, uses host memory only (tests/reader/test-nccl-settings.sh).
 * Test-only; never installed.
 *
 * The signatures are the driver API's in shape only (int results, pointer
 * and integer arguments), enough for gt_cuda.c's table.
 */
#include <stddef.h>
#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

#define OK 0
#define INVALID_VALUE 1
#define NOT_SUPPORTED 801
#define DMA_BUF_SUPPORTED 124

static int ctx_obj, stream_obj, event_obj;

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

/* No pointer is device memory here: as the driver answers for host memory
 * it does not know. */
EXPORT int cuPointerGetAttribute(void *data, int attr, unsigned long long p)
{
    (void)data, (void)attr, (void)p;
    return INVALID_VALUE;
}

EXPORT int cuMemGetAddressRange_v2(unsigned long long *base, size_t *size, unsigned long long p)
{
    (void)base, (void)size, (void)p;
    return INVALID_VALUE;
}

EXPORT int cuMemAlloc_v2(unsigned long long *p, size_t n)
{
    (void)p, (void)n;
    return NOT_SUPPORTED;
}

EXPORT int cuMemFree_v2(unsigned long long p)
{
    (void)p;
    return INVALID_VALUE;
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
