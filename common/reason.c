/* SPDX-License-Identifier: Apache-2.0 */
/* reason.c — see reason.h.  Adding a reason: add it to enum gt_reason and here. */
#include "common/reason.h"

#include "common/gt_net.h"

const char *gt_reason_token(int r)
{
    static const char *const n[GT_REASON_COUNT] = {
        [GT_REASON_NONE] = "none",
        [GT_REASON_DMABUF_UNSUPPORTED] = "dmabuf-unsupported",
        [GT_REASON_DMABUF_REG_FAILED] = "dmabuf-reg-failed",
        [GT_REASON_NO_REG_DMABUF_SYMBOL] = "no-ibv_reg_dmabuf_mr",
        [GT_REASON_CUDA_UNAVAILABLE] = "cuda-unavailable",
        [GT_REASON_CUDA_EXPORT_FAILED] = "cuda-export-failed",
        [GT_REASON_PEERMEM_ABSENT] = "peermem-absent",
        [GT_REASON_PEERMEM_NOT_ALLOWED] = "peermem-not-allowed",
        [GT_REASON_PEERMEM_REG_FAILED] = "peermem-reg-failed",
        [GT_REASON_POLICY_PEERMEM] = "policy-peermem",
        [GT_REASON_POLICY_HOST] = "policy-host",
        [GT_REASON_HOST_MEMORY_ONLY] = "host-memory-only",
        [GT_REASON_HOST_REG_FAILED] = "host-reg-failed",
        [GT_REASON_BAD_ARGUMENT] = "bad-argument",
        [GT_REASON_TRANSPORT_ERROR] = "transport-error",
        [GT_REASON_PEER_GONE] = "peer-gone",
    };
    return (r >= 0 && r < GT_REASON_COUNT) ? n[r] : NULL;
}
