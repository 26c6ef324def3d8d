/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpumem.h — the GPU-memory validation mode: a layer over the sock transport
 * that lets real NCCL take its GPU Direct path on a machine without an RDMA
 * NIC (issue 20; docs/gpumem.md).  Off unless GDRTRACE_GPUMEM=1.
 *
 * Owns: a gt_net_ops decorator (gt_gpumem_wrap) whose devices are the inner
 * transport's, offering NCCL_PTR_CUDA / NCCL_PTR_DMABUF as the registration
 * policy (plugin/reg) allows, and its registrar (gt_gpumem_registrar): it
 * accepts only dma-bufs the NVIDIA driver exported for the range, keeps a
 * duplicate of NCCL's fd until deregMr, and emulates nvidia_peermem when
 * GDRTRACE_GPUMEM_PEERMEM=1.  Nothing here is GPUDirect RDMA: GPU memory
 * moves by asynchronous CUDA copies through pinned host staging buffers on a
 * non-blocking stream of the copier process (copier_client.h), so no CUDA
 * call of the data path is made in this process: made on NCCL's proxy
 * thread (the first design; now only the test seam below), a copy can wait for a driver lock held
 * by an application thread that waits for NCCL's kernel, which waits for the copy (PyTorch DDP did;
 * docs/gpumem.md).  The recorder and every reader output say "emulated".
 *
 * Invariants:
 *  - A send is posted to the inner transport only after its GPU→host copy
 *    completed, and a comm's sends are posted in the order NCCL issued them.
 *  - A receive into GPU memory is done only after its host→GPU copy
 *    completed (so no iflush is needed; forceFlush is a switch).
 *  - Completion is polled in test() (cuEventQuery, or the copier's command
 *    slot); nothing blocks on CUDA or on the copier.
 *  - The layer refuses to start when a real RDMA port is ACTIVE.
 * Threads: as gt_net.h (one proxy thread per comm's data path).
 */
#ifndef GDRTRACE_GPUMEM_GPUMEM_H
#define GDRTRACE_GPUMEM_GPUMEM_H

#include <stddef.h>
#include <stdint.h>

#include "common/gt_net.h"
#include "plugin/reg/gt_reg.h"

/*! gt_gpumem_wrap() : the layer over `inner`; one instance per process. */
const struct gt_net_ops *gt_gpumem_wrap(const struct gt_net_ops *inner);

/*! gt_gpumem_rdma_active() : 1 when some /sys/class/infiniband/<dev>/ports/
 *  <n>/state (under gt_reg_sysroot) says ACTIVE; `why` names it. */
int gt_gpumem_rdma_active(char *why, size_t whylen);

/* Test seam (tests/unit/test_gpumem.c only; nothing in the plugin sets it):
 * 1 makes the layer copy in this process, through the CUDA table the test
 * installed, on a stream and events of its own, instead of in the copier
 * process.  Read at the first init.  Real applications deadlock that way
 * (docs/gpumem.md, the DDP stall): it exists so the layer's policy,
 * ordering and failure paths can be tested against a fake driver in one
 * process. */
extern int gt_gpumem_test_copies_in_process;

/* Where /proc/self/fdinfo is read ("" = the real root; tests point it at a
 * tree holding proc/self/fdinfo/<fd>). */
extern const char *gt_gpumem_procroot;

/*! gt_gpumem_check_dmabuf() :
 *  0 when `fd` is a dma-buf exported by the NVIDIA driver (fdinfo exp_name
 *  nv_dmabuf) whose `size` covers [offset, offset+len), and [a, a+len) lies
 *  is CUDA device memory whose allocation (when CUDA reports its range)
 *  also holds the whole dma-buf (it starts at a - offset).  Else an errno with one line in `why`:
 * EBADF (not an open fd), ENOTSUP (not a dma-buf, or another exporter such as vgem), ERANGE
 * (offset/size out of bounds), EFAULT (not GPU memory, or the dma-buf reaches outside the
 * allocation). */
int gt_gpumem_check_dmabuf(int fd, uint64_t offset, uintptr_t a, size_t len, char *why,
                           size_t whylen);

/* The calling thread's last dma-buf refusal, one line (the failure text of a
 * registration has room for the cause, not for the policy's whole message). */
extern __thread char gt_gpumem_refusal[200];

/* The registrar (rctx = const struct gt_gpumem_cfg *). */
extern const struct gt_registrar gt_gpumem_registrar;

#endif
