/* SPDX-License-Identifier: Apache-2.0 */
/*
 * codes.h — every code gdrtrace writes into a recorder file.
 *
 * These numbers leave the process: they sit in recorder files that readers
 * of other builds open, in archives, in Prometheus labels.  So, as in zstd's
 * zstd_errors.h, each one has an explicit value here, and:
 *  1. A value is never renumbered and never reused for another meaning; a
 *     retired code keeps its line, marked retired.
 *  2. A new code takes the lowest free value of its enum and gets its name
 *     in common/codes.c (the one names table) and a line in
 *     docs/recorder-format.md ("Codes").  Nothing else changes: the layout
 *     has room for it (see each enum's "room" note).
 *  3. A reader meets codes newer than itself: it prints them as
 *     "reason#N" (etc.) and never indexes an array with one unchecked.
 *
 * The plugin's internal interface (common/gt_net.h) uses these enums
 * directly; there is no second definition.
 */
#ifndef GDRTRACE_CODES_H
#define GDRTRACE_CODES_H

/* ---- pointer kinds ----------------------------------------------------- */
/* Bits equal to NCCL_PTR_* (NCCL's ABI fixes them).  On disk: gtr_device.
 * ptr_support, PROBE events' a0.  Room: NCCL owns this space. */
#define GT_PTR_HOST 0x1
#define GT_PTR_CUDA 0x2
#define GT_PTR_DMABUF 0x4

/* ---- registrations: what NCCL asked x what the plugin did -------------- */
/* On disk: the first index of gtr_comm.reg_count/reg_bytes, REG events' aux
 * (asked << 8 | method).  Room: none in the 1.x matrix (3 x 4); a new kind
 * needs a new section (a minor version), the events already carry 8 bits. */
enum gt_reg_asked {
    GT_ASKED_DMABUF = 0, /* regMrDmaBuf with fd >= 0 */
    GT_ASKED_CUDA = 1,   /* regMr(NCCL_PTR_CUDA) or regMrDmaBuf(fd = -1, CUDA): peermem style */
    GT_ASKED_HOST = 2,   /* regMr(NCCL_PTR_HOST) */
    GT_ASKED_COUNT = 3
};

/* What NCCL asked for, from a registration's pointer type and dma-buf fd
 * (-1 for regMr): decided here only, for every transport, the shim and the
 * reader alike.  A type with the CUDA bit is GPU memory whatever else it
 * carries; a fd makes it a DMA-BUF request. */
static inline int gt_asked_of(int type, int fd)
{
    return fd >= 0 ? GT_ASKED_DMABUF : (type & GT_PTR_CUDA) ? GT_ASKED_CUDA : GT_ASKED_HOST;
}

/* On disk: the second index of reg_count/reg_bytes, REG/DEREG events' aux. */
enum gt_reg_method {
    GT_METHOD_DMABUF = 0,  /* ibv_reg_dmabuf_mr on a dma-buf fd */
    GT_METHOD_PEERMEM = 1, /* ibv_reg_mr on a GPU virtual address (nvidia-peermem) */
    GT_METHOD_HOST = 2,    /* host memory registered (or accepted, for sock) */
    GT_METHOD_FAILED = 3,  /* nothing registered; the call returned an error */
    GT_METHOD_COUNT = 4
};

/* The method a registration that succeeded is taken to have used when its
 * transport does not say (an inner plugin; a transport that left the
 * report empty): what was asked for, DMA-BUF for a dma-buf, peermem for
 * CUDA memory without one, host for host memory.  Decided here only. */
static inline int gt_method_assumed(int asked)
{
    return asked == GT_ASKED_DMABUF ? GT_METHOD_DMABUF
           : asked == GT_ASKED_CUDA ? GT_METHOD_PEERMEM
                                    : GT_METHOD_HOST;
}

/* ---- registration policy ----------------------------------------------- */
/* The policy in force (GDRTRACE_REG, parsed by common/settings.c).  On disk:
 * gtr_identity.reg_mode (format 1.8; before, only the name in policy_reg).
 * Room: 4..254 (uint8_t on disk). */
enum gt_reg_mode {
    GT_REG_DMABUF = 0,  /* DMA-BUF only (the default) */
    GT_REG_PEERMEM = 1, /* nvidia-peermem only */
    GT_REG_HOST = 2,    /* host memory only: GPU memory refused */
    GT_REG_AUTO = 3,    /* DMA-BUF, else peermem */
    GT_REG_MODE_COUNT = 4
};

/* ---- device probes ----------------------------------------------------- */
/* On disk: gtr_device.probe_* (uint8_t), PROBE events' aux (8 bits each).
 * Room: 4..255. */
enum gt_probe_state {
    GT_PROBE_UNKNOWN = 0,
    GT_PROBE_SUPPORTED = 1,
    GT_PROBE_UNSUPPORTED = 2,
    GT_PROBE_ABSENT = 3, /* the library/module/device needed for it is not there */
    GT_PROBE_COUNT = 4
};

/* ---- reasons ----------------------------------------------------------- */
/* Why something fell back or failed.  On disk: gtr_comm.fallback_by_reason /
 * error_by_reason (one counter slot per value; see GTR_REASON_SLOTS in
 * recorder_format.h), *_last_reason and FALLBACK/ERROR events' aux (both
 * keep the exact value).
 * Room: values 0..30 each have their own counter slot; 17..30 are free.
 * Values >= 31 (GTR_REASON_OTHER) are legal too: they share the "other"
 * counter slot while events and *_last_reason keep them exactly. */
enum gt_reason {
    GT_REASON_NONE = 0,
    /* registration: why DMA-BUF was not used or failed */
    GT_REASON_DMABUF_UNSUPPORTED = 1,   /* device probe: EOPNOTSUPP / EPROTONOSUPPORT */
    GT_REASON_DMABUF_REG_FAILED = 2,    /* ibv_reg_dmabuf_mr on a real fd failed */
    GT_REASON_NO_REG_DMABUF_SYMBOL = 3, /* libibverbs lacks ibv_reg_dmabuf_mr */
    GT_REASON_CUDA_UNAVAILABLE = 4,     /* libcuda.so.1 could not be loaded */
    GT_REASON_CUDA_EXPORT_FAILED = 5,   /* cuMemGetHandleForAddressRange failed */
    /* registration: why peermem was not used or failed */
    GT_REASON_PEERMEM_ABSENT = 6,      /* nvidia_peermem not loaded */
    GT_REASON_PEERMEM_NOT_ALLOWED = 7, /* GDRTRACE_ALLOW_PEERMEM=0 */
    GT_REASON_PEERMEM_REG_FAILED = 8,  /* ibv_reg_mr on the GPU address failed */
    /* registration: the policy chose */
    GT_REASON_POLICY_PEERMEM = 9, /* GDRTRACE_REG=peermem chose it */
    GT_REASON_POLICY_HOST = 10,   /* GDRTRACE_REG=host refused GPU memory */
    /* registration: host memory, arguments */
    GT_REASON_HOST_MEMORY_ONLY = 11, /* transport supports host memory only (sock) */
    GT_REASON_HOST_REG_FAILED = 12,  /* registering host memory failed */
    GT_REASON_BAD_ARGUMENT = 13,     /* NCCL passed something we reject (size, type) */
    /* data path */
    GT_REASON_TRANSPORT_ERROR = 14, /* a send/recv/test failed */
    GT_REASON_PEER_GONE = 15,       /* the peer closed or died */
    /* transport selection (format 1.1) */
    GT_REASON_NO_RDMA_DEVICE = 16, /* ib refused at init: no RDMA device with an active port */
    /* the plugin refused to serve the process (format 1.3) */
    GT_REASON_INNER_LOAD_FAILED = 17, /* GDRTRACE_INNER unset, not loadable, no ncclNetPlugin_vN */
    GT_REASON_INNER_INIT_FAILED = 18, /* the inner plugin's own init returned an error */
    /* 19..30: free, each with its own counter slot */
    GT_REASON_COUNT = 19 /* 1 + the highest value this build knows */
};

/* ---- calls into code gdrtrace does not own ------------------------------ */
/* Announced before and after (common/callout.h), so a crash inside one is a
 * recorded fact.  On disk: CALLING/RETURNED events' a0 (format 1.3).
 * Room: 7..2^32-1. */
enum gt_call_site {
    GT_CALL_NONE = 0,
    GT_CALL_INNER_LOAD = 1, /* dlopen of GDRTRACE_INNER: its constructors run */
    GT_CALL_INNER_INIT = 2, /* the inner plugin's init */
    GT_CALL_INNER_LISTEN = 3,
    GT_CALL_INNER_CONNECT = 4,
    GT_CALL_INNER_ACCEPT = 5,
    GT_CALL_IB_DEVICES = 6, /* ib's device enumeration and probes through libibverbs */
    GT_CALL_COUNT = 7
};

/* ---- settings in force ------------------------------------------------ */
/* Where the value of a setting came from.  On disk: gtr_setting.source
 * (format 1.2).  Room: 5..2^32-1. */
enum gt_setting_source {
    GT_SRC_DEFAULT = 0,  /* nothing set: the built-in default */
    GT_SRC_GDRTRACE = 1, /* a GDRTRACE_* variable */
    GT_SRC_NCCL = 2,     /* an NCCL_* variable the setting follows */
    GT_SRC_INVALID = 3,  /* set to a value not accepted: the default is in force */
    GT_SRC_UNKNOWN = 4,  /* an NCCL_* variable while an NCCL environment plugin was in use */
    GT_SRC_COUNT = 5
};

#endif /* GDRTRACE_CODES_H */
