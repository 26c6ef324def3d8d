/* SPDX-License-Identifier: Apache-2.0 */
/*
 * env_known.c — the names of every GDRTRACE_* variable, for the WARN about
 * one that is none (gt_env_check_unknown, common/env.h).
 */
#include <stddef.h>

/* Every GDRTRACE_* name docs/configuration.md lists (live, retired, and the
 * build's and tests' knobs): tests/docs/check-config-doc.sh checks this table
 * against that page both ways, so a new variable is added here with its row. */
const char *const gt_env_known[] = {
    "GDRTRACE_ALLOW_PEERMEM",
    "GDRTRACE_ARCHIVE_DIR",
    "GDRTRACE_ARCHIVE_MAX",
    "GDRTRACE_BENCH_EVENTS_LOG2",
    "GDRTRACE_BIN",
    "GDRTRACE_BUFINFO",
    "GDRTRACE_CLOCK",
    "GDRTRACE_COLL",
    "GDRTRACE_CUDA_LIB",
    "GDRTRACE_DEBUG",
    "GDRTRACE_DIR",
    "GDRTRACE_DISABLE",
    "GDRTRACE_EPILOG_SYSLOG",
    "GDRTRACE_EPILOG_TIMEOUT",
    "GDRTRACE_EVENTS",
    "GDRTRACE_FOLDER_MAX",
    "GDRTRACE_FUZZ_SECONDS",
    "GDRTRACE_GPUMEM",
    "GDRTRACE_GPUMEM_COPIER",
    "GDRTRACE_GPUMEM_COPIER_TIMEOUT",
    "GDRTRACE_GPUMEM_COPY_CONTEXT",
    "GDRTRACE_GPUMEM_DMABUF_ERRNO",
    "GDRTRACE_GPUMEM_FORCE_FLUSH",
    "GDRTRACE_GPUMEM_PEERMEM",
    "GDRTRACE_IBVERBS_LIB",
    "GDRTRACE_IB_GID_INDEX",
    "GDRTRACE_IB_HCA",
    "GDRTRACE_IB_OOB_IF",
    "GDRTRACE_IB_QPS",
    "GDRTRACE_IB_RELAXED_ORDERING",
    "GDRTRACE_IB_RETRY_CNT",
    "GDRTRACE_IB_SL",
    "GDRTRACE_IB_TC",
    "GDRTRACE_IB_TIMEOUT",
    "GDRTRACE_INNER",
    "GDRTRACE_INNER_VERSION",
    "GDRTRACE_JOB",
    "GDRTRACE_MODE",
    "GDRTRACE_OOB_TIMEOUT_MS",
    "GDRTRACE_REG",
    "GDRTRACE_RUN_WAIT",
    "GDRTRACE_SOCKET_FAMILY",
    "GDRTRACE_SOCKET_IFNAME",
    "GDRTRACE_SOCKET_MAXRECVS",
    "GDRTRACE_SOCKET_NSOCKS",
    "GDRTRACE_SOCKET_POLL_WRITABLE",
    "GDRTRACE_SOCKET_PROGRESS",
    "GDRTRACE_SOCKET_RCVBUF",
    "GDRTRACE_SOCKET_SNDBUF",
    "GDRTRACE_SYSFS_ROOT",
    "GDRTRACE_TEST_EXCLUDE",
    "GDRTRACE_TEST_FILTER",
    "GDRTRACE_TEST_TIMEOUT",
    "GDRTRACE_TRANSPORT",
};
const size_t gt_env_nknown = sizeof(gt_env_known) / sizeof(gt_env_known[0]);
