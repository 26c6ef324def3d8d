/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gt_ibv.h — libibverbs loaded at run time (never linked), as NCCL does.
 *
 * Owns: the one process-wide verbs function table `gt_ibv`.
 * Invariants:
 *  - After gt_ibv_load() returns, every slot of gt_ibv is non-NULL, whether
 *    or not the library was found: a missing core library fills every slot
 *    with a stub that fails with EOPNOTSUPP (pointer calls: NULL + errno;
 *    int calls: return EOPNOTSUPP), a missing optional symbol fills its slot
 *    the same way and records why in gt_ibv.why_<name>.  Callers never test
 *    for NULL; they test gt_ibv.loaded and gt_ibv.has_<feature>.
 *  - Core symbols are resolved with dlvsym(..., "IBVERBS_1.1") (the ABI every
 *    rdma-core since 2016 exports); optional ones with the version that
 *    introduced them (ibv_reg_mr_iova2 1.8, ibv_query_ece 1.10,
 *    ibv_reg_dmabuf_mr 1.12).
 *  - The data path (post_send, post_recv, poll_cq) is verbs.h's inline code
 *    going through the provider's context ops, which needs no libibverbs
 *    symbol; the table holds wrappers of it so tests can inject failures.
 *
 * Fault-injection seam: gt_ibv is writable on purpose.  Tests either call
 * gt_ibv_install() with a table of fakes (marks the table loaded), or load
 * the real library and overwrite single slots.  Production code only reads it.
 *
 * Threads: gt_ibv_load() may be called from any thread, any number of times;
 * the first call does the work under a mutex.  The table must not be written
 * while the plugin is running (tests write it before driving the plugin).
 */
#ifndef GDRTRACE_DL_GT_IBV_H
#define GDRTRACE_DL_GT_IBV_H

#include <infiniband/verbs.h>
#include <stdint.h>

struct gt_ibv_fns {
    /* core, IBVERBS_1.1 */
    struct ibv_device **(*get_device_list)(int *num_devices);
    void (*free_device_list)(struct ibv_device **list);
    const char *(*get_device_name)(struct ibv_device *device);
    __be64 (*get_device_guid)(struct ibv_device *device);
    struct ibv_context *(*open_device)(struct ibv_device *device);
    int (*close_device)(struct ibv_context *context);
    int (*query_device)(struct ibv_context *context, struct ibv_device_attr *attr);
    /* The exported 1.1 symbol takes the compat port struct, a prefix of
     * struct ibv_port_attr; the provider fills the whole struct (as NCCL relies
     * on).  Callers pass a zeroed struct ibv_port_attr. */
    int (*query_port)(struct ibv_context *context, uint8_t port, struct ibv_port_attr *attr);
    int (*query_gid)(struct ibv_context *context, uint8_t port, int index, union ibv_gid *gid);
    struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
    int (*dealloc_pd)(struct ibv_pd *pd);
    struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access);
    int (*dereg_mr)(struct ibv_mr *mr);
    struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe, void *cq_context,
                                struct ibv_comp_channel *channel, int comp_vector);
    int (*destroy_cq)(struct ibv_cq *cq);
    struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
    int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
    int (*destroy_qp)(struct ibv_qp *qp);
    const char *(*wc_status_str)(enum ibv_wc_status status);
    int (*fork_init)(void);
    /* The device's async events: read on calls NCCL already makes, from a
     * non-blocking async_fd (plugin/ib), never by a thread of ours. */
    int (*get_async_event)(struct ibv_context *context, struct ibv_async_event *event);
    void (*ack_async_event)(struct ibv_async_event *event);
    const char *(*event_type_str)(enum ibv_event_type event);
    /* optional */
    struct ibv_mr *(*reg_mr_iova2)(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
                                   unsigned int access); /* IBVERBS_1.8 */
    struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset, size_t length,
                                    uint64_t iova, int fd, int access); /* IBVERBS_1.12 */
    int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);           /* IBVERBS_1.10 */
    int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);             /* IBVERBS_1.10 */
    /* the port's speed in units of 100 Mb/s (rdma-core 56) */
    int (*query_port_speed)(struct ibv_context *context, uint8_t port,
                            uint64_t *speed); /* IBVERBS_1.16 */
    /* The data path: verbs.h's inline calls through the provider's context
     * ops (no libibverbs symbol).  In the table only so that tests can make
     * posts or completions fail on cue; production never replaces them. */
    int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
    int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
    int (*poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);

    /* State, written by gt_ibv_load()/gt_ibv_install() only. */
    int loaded;           /* core symbols resolved from a real library or installed */
    int has_reg_mr_iova2; /* relaxed ordering possible */
    int has_reg_dmabuf_mr;
    int has_ece;
    int has_query_port_speed;
    char lib[256]; /* the path that was dlopen'd ("" if none) */
    char why[256]; /* why not loaded ("" when loaded) */
    char why_reg_dmabuf_mr[128];
    char why_reg_mr_iova2[128];
    char why_ece[128];
};

/* The table.  Read-only for production code (see the seam note above). */
extern struct gt_ibv_fns gt_ibv;

/*! gt_ibv_load() :
 *  Loads $GDRTRACE_IBVERBS_LIB, else libibverbs.so.1, else libibverbs.so, once.
 *  Returns 0 when the core symbols are usable, else an errno-style code
 *  (ENOENT: no library; ENOSYS: a core symbol missing) with gt_ibv.why set.
 *  Never fails the process: on failure every slot is a stub. */
int gt_ibv_load(void);

/*! gt_ibv_install() :
 *  Tests only: replaces the whole table by `fns` (NULL slots become stubs),
 *  marks it loaded, and sets has_* from which optional slots were given. */
void gt_ibv_install(const struct gt_ibv_fns *fns);

/*! gt_ibv_reset() :
 *  Tests only: back to the state before the first gt_ibv_load() (the library
 *  handle, if any, is kept open: dlclose of a verbs provider is unsafe). */
void gt_ibv_reset(void);

#endif
