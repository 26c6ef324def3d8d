/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gt_cuda.c — dlopen of libcuda.so.1 and the stubs that fill absent slots.
 *
 * Owns gt_cu (see gt_cuda.h).  We check our constants against cuda.h only
 * when the header happens to be installed (static checks, never a build
 * requirement).
 */
#include "common/dl/gt_cuda.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/env.h"
#include "common/log.h"

#if defined(__has_include)
#if __has_include(<cuda.h>)
#include <cuda.h>
_Static_assert(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED == GT_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
               "CUDA attribute value");
_Static_assert(CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD == GT_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
               "CUDA handle type value");
_Static_assert(CUDA_ERROR_NOT_SUPPORTED == GT_CUDA_ERROR_NOT_SUPPORTED, "CUresult value");
_Static_assert(CUDA_ERROR_NOT_READY == GT_CUDA_ERROR_NOT_READY, "CUresult value");
_Static_assert(CU_STREAM_NON_BLOCKING == GT_CU_STREAM_NON_BLOCKING, "CUDA flag value");
_Static_assert(CU_EVENT_DISABLE_TIMING == GT_CU_EVENT_DISABLE_TIMING, "CUDA flag value");
_Static_assert(CU_MEMHOSTALLOC_PORTABLE == GT_CU_MEMHOSTALLOC_PORTABLE, "CUDA flag value");
_Static_assert(CUDA_ERROR_NOT_PERMITTED == GT_CUDA_ERROR_NOT_PERMITTED, "CUresult value");
_Static_assert(CUDA_ERROR_INVALID_HANDLE == GT_CUDA_ERROR_INVALID_HANDLE, "CUresult value");
_Static_assert(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ==
                   GT_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
               "CUDA handle type value");
_Static_assert(CU_MEM_LOCATION_TYPE_DEVICE == GT_CU_MEM_LOCATION_TYPE_DEVICE, "CUDA value");
_Static_assert(CU_MEM_ACCESS_FLAGS_PROT_READWRITE == GT_CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
               "CUDA value");
_Static_assert(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS == GT_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS,
               "CUDA flag value");
_Static_assert(CU_MEMHOSTREGISTER_PORTABLE == GT_CU_MEMHOSTREGISTER_PORTABLE, "CUDA flag value");
_Static_assert(sizeof(CUmemAccessDesc) == sizeof(struct gt_CUmemAccessDesc), "CUDA struct size");
_Static_assert(sizeof(CUipcMemHandle) == sizeof(gt_CUipcMemHandle), "CUDA struct size");
#endif
#endif

struct gt_cu_fns gt_cu;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int load_done, load_rc; /* guarded by load_lock */

/* With no library the driver is "not initialized"; an optional entry point
 * missing from a present driver is "not supported". */
static gt_CUresult stub_ret = GT_CUDA_ERROR_NOT_INITIALIZED;

static gt_CUresult s_init(unsigned int f)
{
    (void)f;
    return stub_ret;
}
static gt_CUresult s_ver(int *v)
{
    if (v)
        *v = 0;
    return stub_ret;
}
static gt_CUresult s_dev_get(gt_CUdevice *d, int o)
{
    (void)d, (void)o;
    return stub_ret;
}
static gt_CUresult s_count(int *c)
{
    if (c)
        *c = 0;
    return stub_ret;
}
static gt_CUresult s_attr(int *v, int a, gt_CUdevice d)
{
    (void)v, (void)a, (void)d;
    return stub_ret;
}
static gt_CUresult s_busid(char *b, int l, gt_CUdevice d)
{
    (void)b, (void)l, (void)d;
    return stub_ret;
}
static gt_CUresult s_ptr_attr(void *x, int a, gt_CUdeviceptr p)
{
    (void)x, (void)a, (void)p;
    return stub_ret;
}
static gt_CUresult s_range(gt_CUdeviceptr *b, size_t *s, gt_CUdeviceptr p)
{
    (void)b, (void)s, (void)p;
    return stub_ret;
}
static gt_CUresult s_alloc(gt_CUdeviceptr *p, size_t n)
{
    (void)p, (void)n;
    return stub_ret;
}
static gt_CUresult s_free(gt_CUdeviceptr p)
{
    (void)p;
    return stub_ret;
}
static gt_CUresult s_htod(gt_CUdeviceptr d, const void *s, size_t n)
{
    (void)d, (void)s, (void)n;
    return stub_ret;
}
static gt_CUresult s_dtoh(void *d, gt_CUdeviceptr s, size_t n)
{
    (void)d, (void)s, (void)n;
    return stub_ret;
}
static gt_CUresult s_ctx_get(gt_CUcontext *c)
{
    if (c)
        *c = NULL;
    return stub_ret;
}
static gt_CUresult s_ctx_set(gt_CUcontext c)
{
    (void)c;
    return stub_ret;
}
static gt_CUresult s_retain(gt_CUcontext *c, gt_CUdevice d)
{
    (void)c, (void)d;
    return stub_ret;
}
static gt_CUresult s_release(gt_CUdevice d)
{
    (void)d;
    return stub_ret;
}
static gt_CUresult s_errstr(gt_CUresult e, const char **s)
{
    (void)e;
    if (s)
        *s = NULL;
    return stub_ret;
}
static gt_CUresult s_export_unsupported(void *h, gt_CUdeviceptr p, size_t n, int t,
                                        unsigned long long f)
{
    (void)h, (void)p, (void)n, (void)t, (void)f;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}

/* The asynchronous-copy set is optional as a whole: absent = NOT_SUPPORTED. */
static gt_CUresult s_sc(gt_CUstream *s, unsigned int f)
{
    if (s)
        *s = NULL;
    (void)f;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_sd(gt_CUstream s)
{
    (void)s;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_ec(gt_CUevent *e, unsigned int f)
{
    if (e)
        *e = NULL;
    (void)f;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_ed(gt_CUevent e)
{
    (void)e;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_er(gt_CUevent e, gt_CUstream s)
{
    (void)e, (void)s;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_htod_a(gt_CUdeviceptr d, const void *s, size_t n, gt_CUstream st)
{
    (void)d, (void)s, (void)n, (void)st;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_dtoh_a(void *d, gt_CUdeviceptr s, size_t n, gt_CUstream st)
{
    (void)d, (void)s, (void)n, (void)st;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_hal(void **p, size_t n, unsigned int f)
{
    if (p)
        *p = NULL;
    (void)n, (void)f;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_hfree(void *p)
{
    (void)p;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}

/* The memory-sharing set: each entry point optional on its own. */
static gt_CUresult s_by_bus(gt_CUdevice *d, const char *b)
{
    (void)d, (void)b;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_retain_h(gt_CUmemGenericAllocationHandle *h, void *a)
{
    (void)h, (void)a;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_export_h(void *o, gt_CUmemGenericAllocationHandle h, int t,
                              unsigned long long f)
{
    (void)o, (void)h, (void)t, (void)f;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_import_h(gt_CUmemGenericAllocationHandle *h, void *o, int t)
{
    (void)h, (void)o, (void)t;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_release_h(gt_CUmemGenericAllocationHandle h)
{
    (void)h;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_reserve(gt_CUdeviceptr *p, size_t n, size_t al, gt_CUdeviceptr a,
                             unsigned long long f)
{
    (void)p, (void)n, (void)al, (void)a, (void)f;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_va_free(gt_CUdeviceptr p, size_t n)
{
    (void)p, (void)n;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_map(gt_CUdeviceptr p, size_t n, size_t o, gt_CUmemGenericAllocationHandle h,
                         unsigned long long f)
{
    (void)p, (void)n, (void)o, (void)h, (void)f;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_access(gt_CUdeviceptr p, size_t n, const struct gt_CUmemAccessDesc *d,
                            size_t c)
{
    (void)p, (void)n, (void)d, (void)c;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_ipc_get(gt_CUipcMemHandle *h, gt_CUdeviceptr p)
{
    (void)h, (void)p;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_ipc_open(gt_CUdeviceptr *p, gt_CUipcMemHandle h, unsigned int f)
{
    (void)p, (void)h, (void)f;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_free_ns(gt_CUdeviceptr p)
{
    (void)p;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}
static gt_CUresult s_host_reg(void *p, size_t n, unsigned int f)
{
    (void)p, (void)n, (void)f;
    return GT_CUDA_ERROR_NOT_SUPPORTED;
}

static void fill_stubs(struct gt_cu_fns *t)
{
#define FILL(f, s)                                                                                 \
    do {                                                                                           \
        if (!t->f)                                                                                 \
            t->f = s;                                                                              \
    } while (0)
    FILL(init, s_init);
    FILL(driver_get_version, s_ver);
    FILL(device_get, s_dev_get);
    FILL(device_get_count, s_count);
    FILL(device_get_attribute, s_attr);
    FILL(device_get_pci_bus_id, s_busid);
    FILL(pointer_get_attribute, s_ptr_attr);
    FILL(mem_get_address_range, s_range);
    FILL(mem_alloc, s_alloc);
    FILL(mem_free, s_free);
    FILL(memcpy_htod, s_htod);
    FILL(memcpy_dtoh, s_dtoh);
    FILL(ctx_get_current, s_ctx_get);
    FILL(ctx_set_current, s_ctx_set);
    FILL(primary_ctx_retain, s_retain);
    FILL(primary_ctx_release, s_release);
    FILL(get_error_string, s_errstr);
    FILL(mem_get_handle_for_address_range, s_export_unsupported);
    FILL(stream_create, s_sc);
    FILL(stream_destroy, s_sd);
    FILL(stream_query, s_sd);
    FILL(event_create, s_ec);
    FILL(event_destroy, s_ed);
    FILL(event_record, s_er);
    FILL(event_query, s_ed);
    FILL(memcpy_htod_async, s_htod_a);
    FILL(memcpy_dtoh_async, s_dtoh_a);
    FILL(mem_host_alloc, s_hal);
    FILL(mem_free_host, s_hfree);
    FILL(device_get_by_pci_bus_id, s_by_bus);
    FILL(mem_retain_allocation_handle, s_retain_h);
    FILL(mem_export_to_shareable_handle, s_export_h);
    FILL(mem_import_from_shareable_handle, s_import_h);
    FILL(mem_release, s_release_h);
    FILL(mem_address_reserve, s_reserve);
    FILL(mem_address_free, s_va_free);
    FILL(mem_map, s_map);
    FILL(mem_unmap, s_va_free);
    FILL(mem_set_access, s_access);
    FILL(ipc_get_mem_handle, s_ipc_get);
    FILL(ipc_open_mem_handle, s_ipc_open);
    FILL(ipc_close_mem_handle, s_free_ns);
    FILL(mem_host_register, s_host_reg);
    FILL(mem_host_unregister, s_hfree);
#undef FILL
}

static void set_stub_table(const char *why)
{
    memset(&gt_cu, 0, sizeof(gt_cu));
    fill_stubs(&gt_cu);
    snprintf(gt_cu.why, sizeof(gt_cu.why), "%s", why);
    snprintf(gt_cu.why_dmabuf_export, sizeof(gt_cu.why_dmabuf_export), "libcuda not usable");
    snprintf(gt_cu.why_async, sizeof(gt_cu.why_async), "libcuda not usable");
}

/* An entry point and its slot in gt_cu. */
struct cu_sym {
    const char *name;
    size_t off;
};

static const struct cu_sym async_syms[] = {
    {"cuStreamCreate", offsetof(struct gt_cu_fns, stream_create)},
    {"cuStreamDestroy_v2", offsetof(struct gt_cu_fns, stream_destroy)},
    {"cuStreamQuery", offsetof(struct gt_cu_fns, stream_query)},
    {"cuEventCreate", offsetof(struct gt_cu_fns, event_create)},
    {"cuEventDestroy_v2", offsetof(struct gt_cu_fns, event_destroy)},
    {"cuEventRecord", offsetof(struct gt_cu_fns, event_record)},
    {"cuEventQuery", offsetof(struct gt_cu_fns, event_query)},
    {"cuMemcpyHtoDAsync_v2", offsetof(struct gt_cu_fns, memcpy_htod_async)},
    {"cuMemcpyDtoHAsync_v2", offsetof(struct gt_cu_fns, memcpy_dtoh_async)},
    {"cuMemHostAlloc", offsetof(struct gt_cu_fns, mem_host_alloc)},
    {"cuMemFreeHost", offsetof(struct gt_cu_fns, mem_free_host)},
};
#define N_ASYNC (sizeof(async_syms) / sizeof(async_syms[0]))

/* Each optional on its own: a missing one is a NOT_SUPPORTED stub. */
static const struct cu_sym optional_syms[] = {
    {"cuDeviceGetByPCIBusId", offsetof(struct gt_cu_fns, device_get_by_pci_bus_id)},
    {"cuMemRetainAllocationHandle", offsetof(struct gt_cu_fns, mem_retain_allocation_handle)},
    {"cuMemExportToShareableHandle", offsetof(struct gt_cu_fns, mem_export_to_shareable_handle)},
    {"cuMemImportFromShareableHandle",
     offsetof(struct gt_cu_fns, mem_import_from_shareable_handle)},
    {"cuMemRelease", offsetof(struct gt_cu_fns, mem_release)},
    {"cuMemAddressReserve", offsetof(struct gt_cu_fns, mem_address_reserve)},
    {"cuMemAddressFree", offsetof(struct gt_cu_fns, mem_address_free)},
    {"cuMemMap", offsetof(struct gt_cu_fns, mem_map)},
    {"cuMemUnmap", offsetof(struct gt_cu_fns, mem_unmap)},
    {"cuMemSetAccess", offsetof(struct gt_cu_fns, mem_set_access)},
    {"cuIpcGetMemHandle", offsetof(struct gt_cu_fns, ipc_get_mem_handle)},
    {"cuIpcOpenMemHandle_v2", offsetof(struct gt_cu_fns, ipc_open_mem_handle)},
    {"cuIpcCloseMemHandle", offsetof(struct gt_cu_fns, ipc_close_mem_handle)},
    {"cuMemHostRegister_v2", offsetof(struct gt_cu_fns, mem_host_register)},
    {"cuMemHostUnregister", offsetof(struct gt_cu_fns, mem_host_unregister)},
};
#define N_OPTIONAL (sizeof(optional_syms) / sizeof(optional_syms[0]))

/* All or none: a half-resolved set would mix real calls with stubs. */
static int async_complete(const struct gt_cu_fns *t, const char **missing)
{
    for (size_t i = 0; i < N_ASYNC; i++) {
        void *slot;
        memcpy(&slot, (const char *)t + async_syms[i].off, sizeof(slot));
        if (!slot) {
            *missing = async_syms[i].name;
            return 0;
        }
    }
    return 1;
}

static int resolve(void *h, const char *name, void *slot, size_t slot_size)
{
    void *p = dlsym(h, name);
    if (!p)
        return -1;
    memcpy(slot, &p, slot_size);
    return 0;
}

static int do_load(void)
{
    const char *env = gt_env_str("GDRTRACE_CUDA_LIB");
    const char *name = env ? env : "libcuda.so.1";
    char why[256];
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, sizeof(why), "dlopen %s failed: %s", name, dlerror());
        set_stub_table(why);
        return ENOENT;
    }
    memset(&gt_cu, 0, sizeof(gt_cu));
    static const struct cu_sym core[] = {
        {"cuInit", offsetof(struct gt_cu_fns, init)},
        {"cuDriverGetVersion", offsetof(struct gt_cu_fns, driver_get_version)},
        {"cuDeviceGet", offsetof(struct gt_cu_fns, device_get)},
        {"cuDeviceGetCount", offsetof(struct gt_cu_fns, device_get_count)},
        {"cuDeviceGetAttribute", offsetof(struct gt_cu_fns, device_get_attribute)},
        {"cuDeviceGetPCIBusId", offsetof(struct gt_cu_fns, device_get_pci_bus_id)},
        {"cuPointerGetAttribute", offsetof(struct gt_cu_fns, pointer_get_attribute)},
        {"cuMemGetAddressRange_v2", offsetof(struct gt_cu_fns, mem_get_address_range)},
        {"cuMemAlloc_v2", offsetof(struct gt_cu_fns, mem_alloc)},
        {"cuMemFree_v2", offsetof(struct gt_cu_fns, mem_free)},
        {"cuMemcpyHtoD_v2", offsetof(struct gt_cu_fns, memcpy_htod)},
        {"cuMemcpyDtoH_v2", offsetof(struct gt_cu_fns, memcpy_dtoh)},
        {"cuCtxGetCurrent", offsetof(struct gt_cu_fns, ctx_get_current)},
        {"cuCtxSetCurrent", offsetof(struct gt_cu_fns, ctx_set_current)},
        {"cuDevicePrimaryCtxRetain", offsetof(struct gt_cu_fns, primary_ctx_retain)},
        {"cuDevicePrimaryCtxRelease_v2", offsetof(struct gt_cu_fns, primary_ctx_release)},
        {"cuGetErrorString", offsetof(struct gt_cu_fns, get_error_string)},
    };
    for (size_t i = 0; i < sizeof(core) / sizeof(core[0]); i++) {
        if (resolve(h, core[i].name, (char *)&gt_cu + core[i].off, sizeof(void (*)(void)))) {
            snprintf(why, sizeof(why), "%s lacks %s", name, core[i].name);
            dlclose(h);
            set_stub_table(why);
            return ENOSYS;
        }
    }
    if (resolve(h, "cuMemGetHandleForAddressRange", &gt_cu.mem_get_handle_for_address_range,
                sizeof(gt_cu.mem_get_handle_for_address_range)) == 0)
        gt_cu.has_dmabuf_export = 1;
    else
        snprintf(gt_cu.why_dmabuf_export, sizeof(gt_cu.why_dmabuf_export),
                 "%s lacks cuMemGetHandleForAddressRange (driver < CUDA 11.7)", name);
    for (size_t i = 0; i < N_OPTIONAL; i++)
        resolve(h, optional_syms[i].name, (char *)&gt_cu + optional_syms[i].off,
                sizeof(void (*)(void)));
    for (size_t i = 0; i < N_ASYNC; i++)
        resolve(h, async_syms[i].name, (char *)&gt_cu + async_syms[i].off, sizeof(void (*)(void)));
    const char *missing = NULL;
    gt_cu.has_async = async_complete(&gt_cu, &missing);
    if (!gt_cu.has_async) {
        snprintf(gt_cu.why_async, sizeof(gt_cu.why_async), "%s lacks %s", name, missing);
        for (size_t i = 0; i < N_ASYNC; i++)
            memset((char *)&gt_cu + async_syms[i].off, 0, sizeof(void (*)(void)));
    }
    stub_ret = GT_CUDA_ERROR_NOT_SUPPORTED;
    fill_stubs(&gt_cu);
    gt_CUresult r = gt_cu.init(0);
    if (r != GT_CUDA_SUCCESS) {
        snprintf(why, sizeof(why), "cuInit(0) failed: %s (%d)", gt_cu_errstr(r), r);
        snprintf(gt_cu.why, sizeof(gt_cu.why), "%s", why);
        /* The library stays open (the driver may hold state); callers see
         * loaded = 0 and every call still goes to the real driver, which
         * answers NOT_INITIALIZED by itself. */
        return ENODEV;
    }
    gt_cu.driver_get_version(&gt_cu.driver_version);
    gt_cu.loaded = 1;
    return 0;
}

int gt_cu_load(void)
{
    pthread_mutex_lock(&load_lock);
    if (!load_done) {
        load_rc = do_load();
        load_done = 1;
        if (load_rc)
            GT_INFO(GT_LOGSUB_INIT, "CUDA unavailable: %s", gt_cu.why);
    }
    int rc = load_rc;
    pthread_mutex_unlock(&load_lock);
    return rc;
}

const char *gt_cu_errstr(gt_CUresult r)
{
    const char *s = NULL;
    if (gt_cu.get_error_string && gt_cu.get_error_string(r, &s) == GT_CUDA_SUCCESS && s)
        return s;
    switch (r) {
    case GT_CUDA_SUCCESS:
        return "CUDA_SUCCESS";
    case GT_CUDA_ERROR_INVALID_VALUE:
        return "CUDA_ERROR_INVALID_VALUE";
    case GT_CUDA_ERROR_NOT_INITIALIZED:
        return "CUDA_ERROR_NOT_INITIALIZED";
    case GT_CUDA_ERROR_NO_DEVICE:
        return "CUDA_ERROR_NO_DEVICE";
    case GT_CUDA_ERROR_NOT_SUPPORTED:
        return "CUDA_ERROR_NOT_SUPPORTED";
    default:
        return "CUDA error";
    }
}

void gt_cu_install(const struct gt_cu_fns *fns)
{
    pthread_mutex_lock(&load_lock);
    gt_cu = *fns;
    gt_cu.has_dmabuf_export = fns->mem_get_handle_for_address_range != NULL;
    if (!gt_cu.has_dmabuf_export)
        snprintf(gt_cu.why_dmabuf_export, sizeof(gt_cu.why_dmabuf_export),
                 "cuMemGetHandleForAddressRange not installed (test table)");
    const char *missing = NULL;
    gt_cu.has_async = async_complete(&gt_cu, &missing);
    if (!gt_cu.has_async) {
        snprintf(gt_cu.why_async, sizeof(gt_cu.why_async), "%s not installed (test table)",
                 missing);
        for (size_t i = 0; i < N_ASYNC; i++)
            memset((char *)&gt_cu + async_syms[i].off, 0, sizeof(void (*)(void)));
    }
    stub_ret = GT_CUDA_ERROR_NOT_SUPPORTED;
    fill_stubs(&gt_cu);
    gt_cu.loaded = 1;
    gt_cu.why[0] = 0;
    load_done = 1;
    load_rc = 0;
    pthread_mutex_unlock(&load_lock);
}

void gt_cu_reset(void)
{
    pthread_mutex_lock(&load_lock);
    memset(&gt_cu, 0, sizeof(gt_cu));
    stub_ret = GT_CUDA_ERROR_NOT_INITIALIZED;
    load_done = 0;
    load_rc = 0;
    pthread_mutex_unlock(&load_lock);
}
