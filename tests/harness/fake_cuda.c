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
 * "Device memory" is host memory that another process can map, as CUDA's
 * is: every allocation is a memfd.  cuMemAlloc_v2 ("cudaMalloc", legacy)
 * maps one; the virtual memory calls (cuMemCreate, cuMemAddressReserve,
 * cuMemMap, cuMemSetAccess, cuMemUnmap, cuMemAddressFree, cuMemRelease,
 * cuMemRetainAllocationHandle) map a handle's memfd into a reserved range;
 * cuMemExportToShareableHandle(POSIX_FILE_DESCRIPTOR) hands out a duplicate
 * of the memfd, and only for a handle created with that type requested
 * (else CUDA_ERROR_NOT_PERMITTED); cuMemImportFromShareableHandle takes one
 * in.  cuIpcGetMemHandle encodes {pid, fd, size} of a legacy allocation and
 * cuIpcOpenMemHandle_v2 maps /proc/PID/fd/FD.  The pointer queries
 * (cuPointerGetAttribute, cuMemGetAddressRange_v2) report exactly the mapped
 * ranges as device memory of device 0 (PCI 0000:00:00.0, also what
 * cuDeviceGetByPCIBusId finds); every other address is unknown to the
 * "driver" (CUDA_ERROR_INVALID_VALUE, as the real one says for host memory
 * it does not know).  A test that dlopens this same library (the one
 * GDRTRACE_CUDA_LIB names: the loader hands back the one copy) gets
 * addresses the plugin takes for GPU memory, e.g. to pass a real non-NVIDIA
 * dma-buf over them (tests/vm/gt_gpumem_vgem.c).
 *
 * Asynchronous copies really copy, later: cuMemcpy{HtoD,DtoH}Async_v2 queue
 * the copy (one queue per process, in order), cuEventRecord marks the queue's
 * end, and each cuEventQuery performs at most one queued copy, so a caller
 * that does not poll never sees its data.  FAKECUDA_COPY_DELAY_MS=N holds
 * each copy back N ms after it was queued (a slow "GPU", for tests that kill
 * the copier mid-copy).  cuMemHostRegister_v2 records the range it pins.
 * Synchronous copies, cuMemHostAlloc and dma-buf export still fail.
 * Test-only; never installed.
 *
 * The signatures are the driver API's in shape only (int results, pointer
 * and integer arguments), enough for gt_cuda.c's table.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

#define OK 0
#define INVALID_VALUE 1
#define OUT_OF_MEMORY 2
#define NOT_READY 600
#define HOST_MEMORY_NOT_REGISTERED 713
#define NOT_PERMITTED 800
#define NOT_SUPPORTED 801
#define DMA_BUF_SUPPORTED 124
#define PTR_CONTEXT 1
#define PTR_MEMORY_TYPE 2
#define PTR_DEVICE_ORDINAL 9
#define MEMORYTYPE_DEVICE 2
#define HANDLE_TYPE_POSIX_FD 1
#define BUS_ID "0000:00:00.0"

static int ctx_obj, stream_obj;

/* One lock for all of the "driver": the plugin's threads, the copier and
 * the test call in at once. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Physical allocations (cuMemCreate, imports): a memfd and its size; value
 * of a handle = index + 1.  refs: the creator's, each mapping's, each
 * cuMemRetainAllocationHandle's. */
#define MAX_HANDLES 64
static struct {
    int fd;
    size_t size;
    int types; /* requestedHandleTypes */
    int refs;
} handles[MAX_HANDLES];

/* Mapped "device memory": [base, base + size), size 0 = free slot. */
enum { LEGACY, VMM, IPC };
#define MAX_ALLOCS 64
static struct {
    uintptr_t base;
    size_t size;
    int kind;
    int fd;                  /* LEGACY: the memfd (exported by IPC handles) */
    unsigned long long hndl; /* VMM: the handle mapped */
} allocs[MAX_ALLOCS];

/* Pinned (registered) host ranges. */
#define MAX_PINNED 64
static struct {
    void *p;
    size_t n;
} pinned[MAX_PINNED];

/* The copy queue: copies run in order, one per cuEventQuery. */
#define QLEN 4096
static struct {
    void *dst;
    const void *src;
    size_t n;
    struct timespec at; /* when it was queued */
} queue[QLEN];
static unsigned long long queued, done;

struct event {
    unsigned long long target; /* copies queued before the record */
};

/* The slot of the mapping holding [p, p + n), or -1.  Caller holds lock. */
static int alloc_of(unsigned long long p, size_t n)
{
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (allocs[i].size && p >= allocs[i].base && p - allocs[i].base < allocs[i].size &&
            n <= allocs[i].size - (p - allocs[i].base))
            return i;
    return -1;
}

static int new_alloc(uintptr_t base, size_t size, int kind, int fd, unsigned long long h)
{
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (!allocs[i].size) {
            allocs[i].base = base;
            allocs[i].size = size;
            allocs[i].kind = kind;
            allocs[i].fd = fd;
            allocs[i].hndl = h;
            return i;
        }
    return -1;
}

static int handle_ok(unsigned long long h)
{
    return h >= 1 && h <= MAX_HANDLES && handles[h - 1].refs > 0;
}

static void handle_put(unsigned long long h)
{
    if (--handles[h - 1].refs == 0) {
        close(handles[h - 1].fd);
        handles[h - 1].size = 0;
    }
}

static unsigned long long new_handle(int fd, size_t size, int types)
{
    for (int i = 0; i < MAX_HANDLES; i++)
        if (!handles[i].refs) {
            handles[i].fd = fd;
            handles[i].size = size;
            handles[i].types = types;
            handles[i].refs = 1;
            return (unsigned long long)i + 1;
        }
    return 0;
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
    snprintf(id, (size_t)len, BUS_ID);
    return OK;
}

EXPORT int cuDeviceGetByPCIBusId(int *dev, const char *id)
{
    if (strcasecmp(id, BUS_ID) != 0)
        return INVALID_VALUE;
    *dev = 0;
    return OK;
}

/* Only mapped "device" ranges are device memory; other addresses get what
 * the driver answers for host memory it does not know. */
EXPORT int cuPointerGetAttribute(void *data, int attr, unsigned long long p)
{
    pthread_mutex_lock(&lock);
    int i = alloc_of(p, 1);
    pthread_mutex_unlock(&lock);
    if (i < 0)
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
    pthread_mutex_lock(&lock);
    int i = alloc_of(p, 1);
    if (i >= 0) {
        if (base)
            *base = allocs[i].base;
        if (size)
            *size = allocs[i].size;
    }
    pthread_mutex_unlock(&lock);
    return i < 0 ? INVALID_VALUE : OK;
}

static int memfd_of(size_t n)
{
    int fd = memfd_create("fakecuda-device-memory", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, (off_t)n) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

EXPORT int cuMemAlloc_v2(unsigned long long *p, size_t n)
{
    if (n == 0)
        return INVALID_VALUE;
    int fd = memfd_of(n);
    if (fd < 0)
        return OUT_OF_MEMORY;
    void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        close(fd);
        return OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&lock);
    int i = new_alloc((uintptr_t)m, n, LEGACY, fd, 0);
    pthread_mutex_unlock(&lock);
    if (i < 0) {
        munmap(m, n);
        close(fd);
        return OUT_OF_MEMORY;
    }
    *p = (uintptr_t)m;
    return OK;
}

EXPORT int cuMemFree_v2(unsigned long long p)
{
    pthread_mutex_lock(&lock);
    int i = alloc_of(p, 1);
    int ok = i >= 0 && allocs[i].kind == LEGACY && allocs[i].base == p;
    size_t n = ok ? allocs[i].size : 0;
    int fd = ok ? allocs[i].fd : -1;
    if (ok)
        allocs[i].size = 0;
    pthread_mutex_unlock(&lock);
    if (!ok)
        return INVALID_VALUE;
    munmap((void *)(uintptr_t)p, n);
    close(fd);
    return OK;
}

/* ---- virtual memory management ---------------------------------------- */

/* CUmemAllocationProp's head: type, requestedHandleTypes, location. */
struct alloc_prop {
    int type;
    int requested_handle_types;
    int location_type;
    int location_id;
};

EXPORT int cuMemCreate(unsigned long long *h, size_t n, const struct alloc_prop *prop,
                       unsigned long long flags)
{
    (void)flags;
    if (!n || !prop)
        return INVALID_VALUE;
    int fd = memfd_of(n);
    if (fd < 0)
        return OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    *h = new_handle(fd, n, prop->requested_handle_types);
    pthread_mutex_unlock(&lock);
    if (!*h) {
        close(fd);
        return OUT_OF_MEMORY;
    }
    return OK;
}

EXPORT int cuMemRelease(unsigned long long h)
{
    pthread_mutex_lock(&lock);
    int ok = handle_ok(h);
    if (ok)
        handle_put(h);
    pthread_mutex_unlock(&lock);
    return ok ? OK : INVALID_VALUE;
}

EXPORT int cuMemAddressReserve(unsigned long long *p, size_t n, size_t align,
                               unsigned long long addr, unsigned long long flags)
{
    (void)align, (void)addr, (void)flags;
    void *m = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return OUT_OF_MEMORY;
    *p = (uintptr_t)m;
    return OK;
}

EXPORT int cuMemAddressFree(unsigned long long p, size_t n)
{
    return munmap((void *)(uintptr_t)p, n) == 0 ? OK : INVALID_VALUE;
}

EXPORT int cuMemMap(unsigned long long p, size_t n, size_t off, unsigned long long h,
                    unsigned long long flags)
{
    (void)flags;
    pthread_mutex_lock(&lock);
    int rc = INVALID_VALUE;
    if (handle_ok(h) && off <= handles[h - 1].size && n <= handles[h - 1].size - off &&
        alloc_of(p, 1) < 0) {
        void *m = mmap((void *)(uintptr_t)p, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                       handles[h - 1].fd, (off_t)off);
        if (m != MAP_FAILED && new_alloc(p, n, VMM, -1, h) >= 0) {
            handles[h - 1].refs++;
            rc = OK;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT int cuMemUnmap(unsigned long long p, size_t n)
{
    pthread_mutex_lock(&lock);
    int i = alloc_of(p, 1);
    int ok = i >= 0 && allocs[i].kind == VMM && allocs[i].base == p && allocs[i].size == n;
    if (ok) {
        /* back to a reservation, as the real driver leaves it */
        mmap((void *)(uintptr_t)p, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        handle_put(allocs[i].hndl);
        allocs[i].size = 0;
    }
    pthread_mutex_unlock(&lock);
    return ok ? OK : INVALID_VALUE;
}

EXPORT int cuMemSetAccess(unsigned long long p, size_t n, const void *desc, size_t count)
{
    (void)desc;
    pthread_mutex_lock(&lock);
    int i = count ? alloc_of(p, n) : -1;
    pthread_mutex_unlock(&lock);
    return i >= 0 ? OK : INVALID_VALUE;
}

EXPORT int cuMemRetainAllocationHandle(unsigned long long *h, void *addr)
{
    pthread_mutex_lock(&lock);
    int i = alloc_of((uintptr_t)addr, 1);
    int ok = i >= 0 && allocs[i].kind == VMM;
    if (ok) {
        *h = allocs[i].hndl;
        handles[*h - 1].refs++;
    }
    pthread_mutex_unlock(&lock);
    return ok ? OK : INVALID_VALUE;
}

EXPORT int cuMemExportToShareableHandle(void *out, unsigned long long h, int type,
                                        unsigned long long flags)
{
    (void)flags;
    pthread_mutex_lock(&lock);
    int rc = INVALID_VALUE;
    if (handle_ok(h)) {
        rc = NOT_PERMITTED; /* not requested at cuMemCreate */
        if (type == HANDLE_TYPE_POSIX_FD && (handles[h - 1].types & HANDLE_TYPE_POSIX_FD)) {
            int fd = fcntl(handles[h - 1].fd, F_DUPFD_CLOEXEC, 0);
            rc = fd < 0 ? OUT_OF_MEMORY : OK;
            *(int *)out = fd;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT int cuMemImportFromShareableHandle(unsigned long long *h, void *os, int type)
{
    int fd = (int)(intptr_t)os;
    struct stat st;
    if (type != HANDLE_TYPE_POSIX_FD || fstat(fd, &st) != 0 || st.st_size <= 0)
        return INVALID_VALUE;
    int mine = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (mine < 0)
        return OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    *h = new_handle(mine, (size_t)st.st_size, HANDLE_TYPE_POSIX_FD);
    pthread_mutex_unlock(&lock);
    if (!*h) {
        close(mine);
        return OUT_OF_MEMORY;
    }
    return OK;
}

/* ---- legacy IPC ---------------------------------------------------------- */

struct ipc {
    char magic[8]; /* "FAKEIPC" */
    int pid;
    int fd;
    unsigned long long size;
    char pad[40];
};
_Static_assert(sizeof(struct ipc) == 64, "CUipcMemHandle is 64 bytes");

EXPORT int cuIpcGetMemHandle(struct ipc *h, unsigned long long p)
{
    pthread_mutex_lock(&lock);
    int i = alloc_of(p, 1);
    int ok = i >= 0 && allocs[i].kind == LEGACY && allocs[i].base == p;
    if (ok) {
        memset(h, 0, sizeof(*h));
        memcpy(h->magic, "FAKEIPC", 8);
        h->pid = (int)getpid();
        h->fd = allocs[i].fd;
        h->size = allocs[i].size;
    }
    pthread_mutex_unlock(&lock);
    return ok ? OK : INVALID_VALUE;
}

EXPORT int cuIpcOpenMemHandle_v2(unsigned long long *p, struct ipc h, unsigned flags)
{
    (void)flags;
    if (memcmp(h.magic, "FAKEIPC", 8) != 0 || !h.size)
        return INVALID_VALUE;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", h.pid, h.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return INVALID_VALUE;
    void *m = mmap(NULL, h.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    int i = new_alloc((uintptr_t)m, h.size, IPC, -1, 0);
    pthread_mutex_unlock(&lock);
    if (i < 0) {
        munmap(m, h.size);
        return OUT_OF_MEMORY;
    }
    *p = (uintptr_t)m;
    return OK;
}

EXPORT int cuIpcCloseMemHandle(unsigned long long p)
{
    pthread_mutex_lock(&lock);
    int i = alloc_of(p, 1);
    int ok = i >= 0 && allocs[i].kind == IPC && allocs[i].base == p;
    size_t n = ok ? allocs[i].size : 0;
    if (ok)
        allocs[i].size = 0;
    pthread_mutex_unlock(&lock);
    if (ok)
        munmap((void *)(uintptr_t)p, n);
    return ok ? OK : INVALID_VALUE;
}

/* ---- pinned host memory -------------------------------------------------- */

EXPORT int cuMemHostRegister_v2(void *p, size_t n, unsigned flags)
{
    (void)flags;
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < MAX_PINNED && pinned[i].p)
        i++;
    if (i < MAX_PINNED) {
        pinned[i].p = p;
        pinned[i].n = n;
    }
    pthread_mutex_unlock(&lock);
    return i < MAX_PINNED && p && n ? OK : OUT_OF_MEMORY;
}

EXPORT int cuMemHostUnregister(void *p)
{
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < MAX_PINNED && pinned[i].p != p)
        i++;
    if (i < MAX_PINNED)
        pinned[i].p = NULL;
    pthread_mutex_unlock(&lock);
    return i < MAX_PINNED && p ? OK : HOST_MEMORY_NOT_REGISTERED;
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
    if (dev != 0)
        return INVALID_VALUE;
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
    switch (err) {
    case OK:
        *s = "CUDA_SUCCESS (fake)";
        break;
    case NOT_PERMITTED:
        *s = "operation not permitted (fake)";
        break;
    case NOT_READY:
        *s = "not ready (fake)";
        break;
    default:
        *s = "fake libcuda: no device memory";
    }
    return OK;
}

EXPORT int cuMemGetHandleForAddressRange(void *h, unsigned long long p, size_t n, int type,
                                         unsigned long long flags)
{
    (void)h, (void)p, (void)n, (void)type, (void)flags;
    return INVALID_VALUE;
}

/* ---- streams, events, asynchronous copies -------------------------------- */

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
    pthread_mutex_lock(&lock);
    int idle = done == queued;
    pthread_mutex_unlock(&lock);
    return idle ? OK : NOT_READY;
}

EXPORT int cuEventCreate(void **e, unsigned flags)
{
    (void)flags;
    *e = calloc(1, sizeof(struct event));
    return *e ? OK : OUT_OF_MEMORY;
}

EXPORT int cuEventDestroy_v2(void *e)
{
    free(e);
    return OK;
}

EXPORT int cuEventRecord(void *e, void *s)
{
    (void)s;
    pthread_mutex_lock(&lock);
    ((struct event *)e)->target = queued;
    pthread_mutex_unlock(&lock);
    return OK;
}

static long delay_ms(void)
{
    const char *v = getenv("FAKECUDA_COPY_DELAY_MS");
    return v ? atol(v) : 0;
}

/* Runs the oldest queued copy if it is due.  Caller holds lock. */
static void run_one(void)
{
    if (done == queued)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    unsigned i = (unsigned)(done % QLEN);
    long ms =
        (now.tv_sec - queue[i].at.tv_sec) * 1000 + (now.tv_nsec - queue[i].at.tv_nsec) / 1000000;
    if (ms < delay_ms())
        return;
    memcpy(queue[i].dst, queue[i].src, queue[i].n);
    done++;
}

EXPORT int cuEventQuery(void *e)
{
    pthread_mutex_lock(&lock);
    run_one();
    int ready = done >= ((struct event *)e)->target;
    pthread_mutex_unlock(&lock);
    return ready ? OK : NOT_READY;
}

static int enqueue(void *d, const void *s, size_t n, unsigned long long dev, size_t devn)
{
    pthread_mutex_lock(&lock);
    int rc = INVALID_VALUE;
    if (alloc_of(dev, devn) >= 0) {
        rc = OUT_OF_MEMORY;
        if (queued - done < QLEN) {
            unsigned i = (unsigned)(queued % QLEN);
            queue[i].dst = d;
            queue[i].src = s;
            queue[i].n = n;
            clock_gettime(CLOCK_MONOTONIC, &queue[i].at);
            queued++;
            rc = OK;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT int cuMemcpyHtoDAsync_v2(unsigned long long d, const void *s, size_t n, void *st)
{
    (void)st;
    return enqueue((void *)(uintptr_t)d, s, n, d, n);
}

EXPORT int cuMemcpyDtoHAsync_v2(void *d, unsigned long long s, size_t n, void *st)
{
    (void)st;
    return enqueue(d, (const void *)(uintptr_t)s, n, s, n);
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
