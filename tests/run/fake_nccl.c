/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_nccl.c — a stand-in libnccl.so.2 for test-run-profiler.sh: only
 * ncclGetVersion, answering FAKE_NCCL_VERSION (e.g. 22703), so `gdrtrace
 * run`'s probe of the job's NCCL can be driven without NCCL installed.
 */
#include <stdlib.h>

__attribute__((visibility("default"))) int ncclGetVersion(int *version)
{
    const char *v = getenv("FAKE_NCCL_VERSION");
    *version = v ? atoi(v) : 0;
    return 0;
}
