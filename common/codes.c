/* SPDX-License-Identifier: Apache-2.0 */
/*
 * codes.c — names of the on-disk codes (contract in common/codes.h).
 * Adding a code: its value in include/gdrtrace/codes.h, its name here, its
 * line in docs/recorder-format.md ("Codes").  The tables are sized by the
 * enums' COUNT, so a code without a name is caught by the test of
 * tests/unit/test_codes.c, not shipped as NULL.
 */
#include "common/codes.h"

#include "gdrtrace/recorder_format.h"

static const char *const reason_tokens[GT_REASON_COUNT] = {
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
    [GT_REASON_NO_RDMA_DEVICE] = "no-rdma-device",
    [GT_REASON_INNER_LOAD_FAILED] = "inner-load-failed",
    [GT_REASON_INNER_INIT_FAILED] = "inner-init-failed",
};

const char *gt_reason_token(int r)
{
    return (r >= 0 && r < GT_REASON_COUNT) ? reason_tokens[r] : NULL;
}

const char *gt_reason_slot_token(int slot)
{
    if (slot == GTR_REASON_OTHER)
        return "other";
    return (slot >= 0 && slot < GTR_REASON_OTHER) ? gt_reason_token(slot) : NULL;
}

const char *gt_asked_name(int a)
{
    static const char *const n[GT_ASKED_COUNT] = {
        [GT_ASKED_DMABUF] = "dmabuf",
        [GT_ASKED_CUDA] = "cuda",
        [GT_ASKED_HOST] = "host",
    };
    return (a >= 0 && a < GT_ASKED_COUNT) ? n[a] : "?";
}

const char *gt_method_name(int m)
{
    static const char *const n[GT_METHOD_COUNT] = {
        [GT_METHOD_DMABUF] = "dmabuf",
        [GT_METHOD_PEERMEM] = "peermem",
        [GT_METHOD_HOST] = "host",
        [GT_METHOD_FAILED] = "failed",
    };
    return (m >= 0 && m < GT_METHOD_COUNT) ? n[m] : "?";
}

const char *gt_reg_mode_name(int m)
{
    static const char *const n[GT_REG_MODE_COUNT] = {
        [GT_REG_DMABUF] = "dmabuf",
        [GT_REG_PEERMEM] = "peermem",
        [GT_REG_HOST] = "host",
        [GT_REG_AUTO] = "auto",
    };
    return (m >= 0 && m < GT_REG_MODE_COUNT) ? n[m] : "?";
}

const char *gt_probe_name(int p)
{
    static const char *const n[GT_PROBE_COUNT] = {
        [GT_PROBE_UNKNOWN] = "unknown",
        [GT_PROBE_SUPPORTED] = "supported",
        [GT_PROBE_UNSUPPORTED] = "unsupported",
        [GT_PROBE_ABSENT] = "absent",
    };
    return (p >= 0 && p < GT_PROBE_COUNT) ? n[p] : "unknown";
}

const char *gt_setting_source_name(int s)
{
    static const char *const n[GT_SRC_COUNT] = {
        [GT_SRC_DEFAULT] = "default", [GT_SRC_GDRTRACE] = "gdrtrace", [GT_SRC_NCCL] = "nccl",
        [GT_SRC_INVALID] = "invalid", [GT_SRC_UNKNOWN] = "unknown",
    };
    return (s >= 0 && s < GT_SRC_COUNT) ? n[s] : NULL;
}

const char *gt_call_site_name(int site)
{
    static const char *const n[GT_CALL_COUNT] = {
        [GT_CALL_NONE] = "none",
        [GT_CALL_INNER_LOAD] = "load",
        [GT_CALL_INNER_INIT] = "init",
        [GT_CALL_INNER_LISTEN] = "listen",
        [GT_CALL_INNER_CONNECT] = "connect",
        [GT_CALL_INNER_ACCEPT] = "accept",
        [GT_CALL_IB_DEVICES] = "device enumeration",
    };
    return (site >= 0 && site < GT_CALL_COUNT) ? n[site] : NULL;
}
