/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gt_cuda.h — the CUDA driver API loaded at run time (libcuda.so.1, never
 * linked), with our own minimal declarations: cuda.h is not required.
 *
 * Owns: the process-wide table `gt_cu` and the few CUDA types/constants we
 * use (values are the driver ABI's, fixed since they were introduced).
 * Invariants (same as gt_ibv.h):
 *  - After gt_cu_load() every slot is non-NULL.  With no library, or for an
 *    optional entry point the driver lacks, the slot is a stub returning
 *    GT_CUDA_ERROR_NOT_SUPPORTED (or GT_CUDA_ERROR_NOT_INITIALIZED when the
 *    library is missing altogether) and gt_cu.why / why_<name> say why.
 *  - Versioned entry points are resolved by their _v2 names where the driver
 *    has them (cuMemAlloc_v2 …), like the runtime does.
 *  - gt_cu_load() calls cuInit(0) once; a failing cuInit leaves the table
 *    loaded = 0 with the CUresult in why (a host without a GPU).
 *
 * Fault-injection seam: gt_cu is writable for tests (gt_cu_install()).
 */
#ifndef GDRTRACE_DL_GT_CUDA_H
#define GDRTRACE_DL_GT_CUDA_H

#include <stddef.h>
#include <stdint.h>

typedef int gt_CUresult;
typedef int gt_CUdevice;
typedef unsigned long long gt_CUdeviceptr;
typedef struct gt_CUctx_opaque *gt_CUcontext;
typedef struct gt_CUstream_opaque *gt_CUstream;
typedef struct gt_CUevent_opaque *gt_CUevent;

#define GT_CUDA_SUCCESS 0
#define GT_CUDA_ERROR_INVALID_VALUE 1
#define GT_CUDA_ERROR_NOT_INITIALIZED 3
#define GT_CUDA_ERROR_NO_DEVICE 100
#define GT_CUDA_ERROR_NOT_READY 600
#define GT_CUDA_ERROR_NOT_SUPPORTED 801

/* CUdevice_attribute values we read. */
#define GT_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID 33
#define GT_CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID 34
#define GT_CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID 50
#define GT_CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED 116
#define GT_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED 124
/* 1 with ATS over C2C (Grace Hopper/Blackwell) */
#define GT_CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES 100

/* CUpointer_attribute values. */
#define GT_CU_POINTER_ATTRIBUTE_CONTEXT 1
#define GT_CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define GT_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9
#define GT_CU_MEMORYTYPE_HOST 1
#define GT_CU_MEMORYTYPE_DEVICE 2

/* Flags of the asynchronous-copy calls. */
#define GT_CU_STREAM_NON_BLOCKING 0x1
#define GT_CU_EVENT_DISABLE_TIMING 0x2
#define GT_CU_MEMHOSTALLOC_PORTABLE 0x1

/* CUmemRangeHandleType */
#define GT_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD 1
#define GT_CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE 0x1 /* CUDA 12.8 */

/* Sharing GPU memory with another process (plugin/gpumem's copier). */
#define GT_CUDA_ERROR_INVALID_HANDLE 400
#define GT_CUDA_ERROR_NOT_PERMITTED 800
#define GT_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR 0x1 /* CUmemAllocationHandleType */
#define GT_CU_MEM_LOCATION_TYPE_DEVICE 0x1
#define GT_CU_MEM_ACCESS_FLAGS_PROT_READWRITE 0x3
#define GT_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS 0x1
#define GT_CU_MEMHOSTREGISTER_PORTABLE 0x1
typedef unsigned long long gt_CUmemGenericAllocationHandle;
/* CUmemAccessDesc: {CUmemLocation {type, id}, CUmemAccess_flags} */
struct gt_CUmemAccessDesc {
    int location_type;
    int location_id;
    int flags;
};
/* CUipcMemHandle: 64 opaque bytes, passed by value to cuIpcOpenMemHandle */
typedef struct {
    char reserved[64];
} gt_CUipcMemHandle;

struct gt_cu_fns {
    gt_CUresult (*init)(unsigned int flags);
    gt_CUresult (*driver_get_version)(int *version);
    gt_CUresult (*device_get)(gt_CUdevice *dev, int ordinal);
    gt_CUresult (*device_get_count)(int *count);
    gt_CUresult (*device_get_attribute)(int *value, int attrib, gt_CUdevice dev);
    gt_CUresult (*device_get_pci_bus_id)(char *bus_id, int len, gt_CUdevice dev);
    gt_CUresult (*pointer_get_attribute)(void *data, int attribute, gt_CUdeviceptr ptr);
    gt_CUresult (*mem_get_address_range)(gt_CUdeviceptr *base, size_t *size, gt_CUdeviceptr ptr);
    gt_CUresult (*mem_alloc)(gt_CUdeviceptr *dptr, size_t bytes);
    gt_CUresult (*mem_free)(gt_CUdeviceptr dptr);
    gt_CUresult (*memcpy_htod)(gt_CUdeviceptr dst, const void *src, size_t bytes);
    gt_CUresult (*memcpy_dtoh)(void *dst, gt_CUdeviceptr src, size_t bytes);
    gt_CUresult (*ctx_get_current)(gt_CUcontext *ctx);
    gt_CUresult (*ctx_set_current)(gt_CUcontext ctx);
    gt_CUresult (*primary_ctx_retain)(gt_CUcontext *ctx, gt_CUdevice dev);
    gt_CUresult (*primary_ctx_release)(gt_CUdevice dev);
    gt_CUresult (*get_error_string)(gt_CUresult err, const char **str);
    /* optional: CUDA 11.7+ */
    gt_CUresult (*mem_get_handle_for_address_range)(void *handle, gt_CUdeviceptr ptr, size_t size,
                                                    int handle_type, unsigned long long flags);
    /* optional: asynchronous copies on a stream of our own (plugin/gpumem).
     * has_async = 1 when every one of them resolved; else why_async names
     * the first missing symbol and all of them are NOT_SUPPORTED stubs. */
    gt_CUresult (*stream_create)(gt_CUstream *stream, unsigned int flags);
    gt_CUresult (*stream_destroy)(gt_CUstream stream);
    gt_CUresult (*stream_query)(gt_CUstream stream);
    gt_CUresult (*event_create)(gt_CUevent *event, unsigned int flags);
    gt_CUresult (*event_destroy)(gt_CUevent event);
    gt_CUresult (*event_record)(gt_CUevent event, gt_CUstream stream);
    gt_CUresult (*event_query)(gt_CUevent event); /* NOT_READY while pending */
    gt_CUresult (*memcpy_htod_async)(gt_CUdeviceptr dst, const void *src, size_t bytes,
                                     gt_CUstream stream);
    gt_CUresult (*memcpy_dtoh_async)(void *dst, gt_CUdeviceptr src, size_t bytes,
                                     gt_CUstream stream);
    gt_CUresult (*mem_host_alloc)(void **p, size_t bytes, unsigned int flags);
    gt_CUresult (*mem_free_host)(void *p);
    /* optional: sharing GPU memory with the copier process (plugin/gpumem,
     * docs/gpumem.md "The copier process").  Each is resolved on its own;
     * a missing one is a NOT_SUPPORTED stub and the caller names the call. */
    gt_CUresult (*device_get_by_pci_bus_id)(gt_CUdevice *dev, const char *bus_id);
    gt_CUresult (*mem_retain_allocation_handle)(gt_CUmemGenericAllocationHandle *h, void *addr);
    gt_CUresult (*mem_export_to_shareable_handle)(void *shareable,
                                                  gt_CUmemGenericAllocationHandle h, int type,
                                                  unsigned long long flags);
    gt_CUresult (*mem_import_from_shareable_handle)(gt_CUmemGenericAllocationHandle *h,
                                                    void *os_handle, int type);
    gt_CUresult (*mem_release)(gt_CUmemGenericAllocationHandle h);
    gt_CUresult (*mem_address_reserve)(gt_CUdeviceptr *ptr, size_t size, size_t alignment,
                                       gt_CUdeviceptr addr, unsigned long long flags);
    gt_CUresult (*mem_address_free)(gt_CUdeviceptr ptr, size_t size);
    gt_CUresult (*mem_map)(gt_CUdeviceptr ptr, size_t size, size_t offset,
                           gt_CUmemGenericAllocationHandle h, unsigned long long flags);
    gt_CUresult (*mem_unmap)(gt_CUdeviceptr ptr, size_t size);
    gt_CUresult (*mem_set_access)(gt_CUdeviceptr ptr, size_t size,
                                  const struct gt_CUmemAccessDesc *desc, size_t count);
    gt_CUresult (*ipc_get_mem_handle)(gt_CUipcMemHandle *h, gt_CUdeviceptr ptr);
    gt_CUresult (*ipc_open_mem_handle)(gt_CUdeviceptr *ptr, gt_CUipcMemHandle h,
                                       unsigned int flags);
    gt_CUresult (*ipc_close_mem_handle)(gt_CUdeviceptr ptr);
    gt_CUresult (*mem_host_register)(void *p, size_t bytes, unsigned int flags);
    gt_CUresult (*mem_host_unregister)(void *p);

    int loaded;            /* library present and cuInit(0) succeeded */
    int driver_version;    /* e.g. 12040, 0 if unknown */
    int has_dmabuf_export; /* cuMemGetHandleForAddressRange resolved */
    int has_async;         /* every asynchronous-copy entry point resolved */
    char why[256];         /* why not loaded */
    char why_dmabuf_export[128];
    char why_async[128];
};

extern struct gt_cu_fns gt_cu;

/*! gt_cu_load() :
 *  dlopen $GDRTRACE_CUDA_LIB or libcuda.so.1 once, resolve, cuInit(0).
 *  Returns 0 when usable, else ENOENT (no library), ENOSYS (core symbol
 *  missing) or ENODEV (cuInit failed: no GPU / driver mismatch); gt_cu.why
 *  says which.  Never fails the process. */
int gt_cu_load(void);

/*! gt_cu_errstr() : a printable name for a CUresult (never NULL). */
const char *gt_cu_errstr(gt_CUresult r);

/*! gt_cu_install() / gt_cu_reset() : tests only, as for gt_ibv. */
void gt_cu_install(const struct gt_cu_fns *fns);
void gt_cu_reset(void);

#endif
