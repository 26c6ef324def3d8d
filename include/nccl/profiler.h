/* SPDX-License-Identifier: Apache-2.0 */
/*
 * profiler.h — NCCL's profiler plugin ABI, versions 1 … 6 (symbols
 * ncclProfiler_v1 … ncclProfiler_v6), as far as gdrtrace uses it: the event
 * type bits of the activation mask, the event states, the event descriptors
 * and state arguments, and the five-function tables.
 *
 * Written by gdrtrace from the facts of NCCL's release sources (v2.23.4 …
 * v2.30.7: src/include/plugin/profiler/profiler_v*.h, src/plugin/profiler.cc,
 * ext-profiler/example); no NCCL header text is copied.  Names follow NCCL so
 * that a reader can hold this file against NCCL's documentation.
 *
 * Which NCCL asks for which version (it dlsym's the newest it knows first):
 *   v1 2.23  v2 2.24  v3 2.25  v4 2.26 … 2.27  v5 2.28  v6 2.29 …
 * From 2.28.3 NCCL takes the table from the net plugin's library when no
 * profiler library is named or found; before, only from the library
 * NCCL_PROFILER_PLUGIN names.
 *
 * Invariants: every struct here crosses the boundary by pointer, so member
 * offsets are fixed by NCCL; the _Static_asserts at the bottom pin the ones
 * gdrtrace reads on LP64.  Never reorder or insert members.  Members of the
 * descriptor unions that gdrtrace does not read are still declared, in
 * order, because they fix the offsets of those it does.
 */
#ifndef GDRTRACE_NCCL_PROFILER_H
#define GDRTRACE_NCCL_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nccl/types.h"

/* Event types: one bit each, so the same values form the activation mask
 * that init returns (NCCL keeps one mask per process: the last init's). */
enum {
    ncclProfileGroup = 1 << 0,
    ncclProfileColl = 1 << 1, /* a collective, from enqueue (host) */
    ncclProfileP2p = 1 << 2,
    ncclProfileProxyOp = 1 << 3, /* one channel x peer x direction of network work */
    ncclProfileProxyStep = 1 << 4,
    ncclProfileProxyCtrl = 1 << 5,
    ncclProfileKernelCh = 1 << 6, /* v3+: one channel of the kernel; v4+ with GPU timestamps */
    ncclProfileNetPlugin = 1 << 7,
    ncclProfileGroupApi = 1 << 8, /* v5+ */
    ncclProfileCollApi = 1 << 9,
    ncclProfileP2pApi = 1 << 10,
    ncclProfileKernelLaunch = 1 << 11,
    ncclProfileCeColl = 1 << 12, /* v6+ */
    ncclProfileCeSync = 1 << 13,
    ncclProfileCeBatch = 1 << 14,
};

/* The states recordEventState reports (one enum for every version; the
 * numbers are NCCL's).  Only the two gdrtrace acts on are named. */
typedef int ncclProfilerEventState_t;
#define ncclProfilerProxyOpInProgress_v4 19
#define ncclProfilerKernelChStop 22

/* ---- v1 (NCCL 2.23): function, type, algorithm, protocol as numbers ---- */

typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t commHash;
            uint64_t seqNumber;
            uint8_t func; /* ncclFunc_t of 2.23 */
            const void *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            uint8_t datatype; /* ncclDataType_t */
            uint32_t op;
            size_t trafficBytes;
            uint8_t nMaxChannels;
            uint8_t nWarps;
            uint8_t algo;  /* NCCL_ALGO_* number */
            uint8_t proto; /* NCCL_PROTO_* number */
            int isCollnet;
            int isNvls;
        } coll;
        struct {
            const char *name;
            uint64_t commHash;
            uint8_t func;
            void *buff;
            uint8_t datatype;
            size_t count;
            int peer;
        } p2p;
        struct {
            pid_t pid; /* the process whose proxy runs the op (PXN: another one) */
            uint8_t channelId;
            int peer;
            int nSteps;
            int chunkSize;
            int isSend;
        } proxyOp;
        struct {
            int step;
        } proxyStep;
    };
} ncclProfilerEventDescr_v1_t;

/* State arguments of v1 … v3. */
typedef union {
    struct {
        size_t transSize;
        int steps;
    } proxyOp;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
} ncclProfilerEventStateArgs_v1_t;

typedef ncclProfilerEventStateArgs_v1_t ncclProfilerEventStateArgs_v2_t;
typedef ncclProfilerEventStateArgs_v1_t ncclProfilerEventStateArgs_v3_t;

/* ---- v2 (NCCL 2.24): names as strings ---- */

typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t commHash;
            uint64_t seqNumber;
            const char *func;
            const void *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            const char *datatype;
            size_t trafficBytes;
            uint8_t nMaxChannels;
            uint8_t nWarps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *name;
            uint64_t commHash;
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
        } p2p;
        struct {
            pid_t pid;
            uint8_t channelId;
            int peer;
            int nSteps;
            int chunkSize;
            int isSend;
        } proxyOp;
        struct {
            int step;
        } proxyStep;
    };
} ncclProfilerEventDescr_v2_t;

/* ---- v3 (NCCL 2.25): trafficBytes gone, KernelCh and NetPlugin events ---- */

typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t commHash;
            uint64_t seqNumber;
            const char *func;
            const void *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t nMaxChannels;
            uint8_t nWarps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *name;
            uint64_t commHash;
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
        } p2p;
        struct {
            pid_t pid;
            uint8_t channelId;
            int peer;
            int nSteps;
            int chunkSize;
            int isSend;
        } proxyOp;
        struct {
            int step;
        } proxyStep;
        struct {
            uint8_t channelId;
        } kernelCh;
        struct {
            int64_t id;
            void *data;
        } netPlugin;
    };
} ncclProfilerEventDescr_v3_t;

/* ---- v4 (NCCL 2.26, 2.27): the communicator moves to init; GPU times ---- */

typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        struct {
            uint64_t seqNumber;
            const char *func;
            const void *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t nChannels;
            uint8_t nWarps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
            uint8_t nChannels;
        } p2p;
        struct {
            pid_t pid;
            uint8_t channelId;
            int peer;
            int nSteps;
            int chunkSize;
            int isSend;
        } proxyOp;
        struct {
            int step;
        } proxyStep;
        struct {
            uint8_t channelId;
            uint64_t pTimer; /* GPU globaltimer (ns) when the channel started */
        } kernelCh;
        struct {
            int64_t id;
            void *data;
        } netPlugin;
    };
} ncclProfilerEventDescr_v4_t;

/* State arguments of v4 … v6. */
typedef union {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
    struct {
        void *data;
    } netPlugin;
    struct {
        uint64_t pTimer; /* with ncclProfilerKernelChStop: GPU time the channel ended */
    } kernelCh;
} ncclProfilerEventStateArgs_v4_t;

typedef ncclProfilerEventStateArgs_v4_t ncclProfilerEventStateArgs_v5_t;
typedef ncclProfilerEventStateArgs_v4_t ncclProfilerEventStateArgs_v6_t;

/* ---- v5 (NCCL 2.28): 64-bit type, API events, parentGroup ---- */

/* The union members v5 and v6 share, in their order. */
#define GT_NCCL_PROFILER_V5_UNION_MEMBERS                                                          \
    struct {                                                                                       \
        bool graphCaptured;                                                                        \
        int groupDepth;                                                                            \
    } groupApi;                                                                                    \
    struct {                                                                                       \
        const char *func;                                                                          \
        size_t count;                                                                              \
        const char *datatype;                                                                      \
        int root;                                                                                  \
        void *stream;                                                                              \
        bool graphCaptured;                                                                        \
    } collApi;                                                                                     \
    struct {                                                                                       \
        const char *func;                                                                          \
        size_t count;                                                                              \
        const char *datatype;                                                                      \
        void *stream;                                                                              \
        bool graphCaptured;                                                                        \
    } p2pApi;                                                                                      \
    struct {                                                                                       \
        void *stream;                                                                              \
    } kernelLaunch;                                                                                \
    struct {                                                                                       \
        uint64_t seqNumber;                                                                        \
        const char *func;                                                                          \
        const void *sendBuff;                                                                      \
        void *recvBuff;                                                                            \
        size_t count;                                                                              \
        int root;                                                                                  \
        const char *datatype;                                                                      \
        uint8_t nChannels;                                                                         \
        uint8_t nWarps;                                                                            \
        const char *algo;                                                                          \
        const char *proto;                                                                         \
        void *parentGroup;                                                                         \
    } coll;                                                                                        \
    struct {                                                                                       \
        const char *func;                                                                          \
        void *buff;                                                                                \
        const char *datatype;                                                                      \
        size_t count;                                                                              \
        int peer;                                                                                  \
        uint8_t nChannels;                                                                         \
        void *parentGroup;                                                                         \
    } p2p;                                                                                         \
    struct {                                                                                       \
        pid_t pid;                                                                                 \
        uint8_t channelId;                                                                         \
        int peer;                                                                                  \
        int nSteps;                                                                                \
        int chunkSize;                                                                             \
        int isSend;                                                                                \
    } proxyOp;                                                                                     \
    struct {                                                                                       \
        int step;                                                                                  \
    } proxyStep;                                                                                   \
    struct {                                                                                       \
        uint8_t channelId;                                                                         \
        uint64_t pTimer;                                                                           \
    } kernelCh;                                                                                    \
    struct {                                                                                       \
        int64_t id;                                                                                \
        void *data;                                                                                \
    } netPlugin;

typedef struct {
    uint64_t type;
    void *parentObj;
    int rank;
    union {
        GT_NCCL_PROFILER_V5_UNION_MEMBERS
    };
} ncclProfilerEventDescr_v5_t;

/* ---- v6 (NCCL 2.29 …): copy-engine collectives appended to the union ---- */

typedef struct {
    uint64_t type;
    void *parentObj;
    int rank;
    union {
        GT_NCCL_PROFILER_V5_UNION_MEMBERS
        struct {
            uint64_t seqNumber;
            const char *func;
            const void *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            const char *datatype;
            const char *syncStrategy;
            bool intraBatchSync;
            uint32_t batchSize;
            uint32_t numBatches;
            uint32_t ceSeqNum;
            void *stream;
        } ceColl;
        struct {
            bool isComplete;
            int nRanks;
        } ceCollSync;
        struct {
            int numOps;
            size_t totalBytes;
            bool useIntraSync;
        } ceCollBatch;
    };
} ncclProfilerEventDescr_v6_t;

/* ---- the tables ---- */

/* v1 … v3: init knows nothing of the communicator (the Coll and P2p
 * descriptors carry commHash). */
#define GT_NCCL_PROFILER_TABLE_V1(D, S)                                                            \
    const char *name;                                                                              \
    ncclResult_t (*init)(void **context, int *eActivationMask);                                    \
    ncclResult_t (*startEvent)(void *context, void **eHandle, D *eDescr);                          \
    ncclResult_t (*stopEvent)(void *eHandle);                                                      \
    ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_t eState,               \
                                     S *eStateArgs);                                               \
    ncclResult_t (*finalize)(void *context);

typedef struct {
    GT_NCCL_PROFILER_TABLE_V1(ncclProfilerEventDescr_v1_t, ncclProfilerEventStateArgs_v1_t)
} ncclProfiler_v1_t;
typedef struct {
    GT_NCCL_PROFILER_TABLE_V1(ncclProfilerEventDescr_v2_t, ncclProfilerEventStateArgs_v2_t)
} ncclProfiler_v2_t;
typedef struct {
    GT_NCCL_PROFILER_TABLE_V1(ncclProfilerEventDescr_v3_t, ncclProfilerEventStateArgs_v3_t)
} ncclProfiler_v3_t;

/* v4: init gets the communicator, the mask pointer second and commHash
 * after commName. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(void **context, int *eActivationMask, const char *commName,
                         uint64_t commHash, int nNodes, int nranks, int rank,
                         ncclDebugLogger_t logfn);
    ncclResult_t (*startEvent)(void *context, void **eHandle, ncclProfilerEventDescr_v4_t *eDescr);
    ncclResult_t (*stopEvent)(void *eHandle);
    ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_t eState,
                                     ncclProfilerEventStateArgs_v4_t *eStateArgs);
    ncclResult_t (*finalize)(void *context);
} ncclProfiler_v4_t;

/* v5, v6: commId second (the value the net plugin's v11+ init gets). */
#define GT_NCCL_PROFILER_TABLE_V5(D, S)                                                            \
    const char *name;                                                                              \
    ncclResult_t (*init)(void **context, uint64_t commId, int *eActivationMask,                    \
                         const char *commName, int nNodes, int nranks, int rank,                   \
                         ncclDebugLogger_t logfn);                                                 \
    ncclResult_t (*startEvent)(void *context, void **eHandle, D *eDescr);                          \
    ncclResult_t (*stopEvent)(void *eHandle);                                                      \
    ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_t eState,               \
                                     S *eStateArgs);                                               \
    ncclResult_t (*finalize)(void *context);

typedef struct {
    GT_NCCL_PROFILER_TABLE_V5(ncclProfilerEventDescr_v5_t, ncclProfilerEventStateArgs_v5_t)
} ncclProfiler_v5_t;
typedef struct {
    GT_NCCL_PROFILER_TABLE_V5(ncclProfilerEventDescr_v6_t, ncclProfilerEventStateArgs_v6_t)
} ncclProfiler_v6_t;

/* ---- layout pins (LP64) ---- */
#define GT_PDESC_ASSERT(T, m, off) _Static_assert(offsetof(T, m) == (off), #T "." #m)
GT_PDESC_ASSERT(ncclProfilerEventDescr_v1_t, coll.func, 48);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v1_t, coll.count, 72);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v1_t, coll.datatype, 84);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v1_t, coll.algo, 106);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v1_t, coll.proto, 107);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v1_t, p2p.count, 64);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v1_t, proxyOp.pid, 24);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v2_t, coll.algo, 112);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v2_t, coll.proto, 120);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v3_t, coll.nMaxChannels, 96);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v3_t, coll.proto, 112);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v4_t, coll.nChannels, 80);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v4_t, coll.proto, 96);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v4_t, p2p.nChannels, 60);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v4_t, kernelCh.pTimer, 32);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v5_t, coll.func, 32);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v5_t, coll.count, 56);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v5_t, coll.datatype, 72);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v5_t, coll.nChannels, 80);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v5_t, coll.algo, 88);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v5_t, coll.proto, 96);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v5_t, p2p.count, 48);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v5_t, p2p.nChannels, 60);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v5_t, proxyOp.isSend, 44);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v5_t, kernelCh.pTimer, 32);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v6_t, coll.proto, 96);
GT_PDESC_ASSERT(ncclProfilerEventDescr_v6_t, ceColl.stream, 104);
_Static_assert(sizeof(ncclProfilerEventDescr_v5_t) == 112, "v5 descriptor: 24 + 88");
_Static_assert(sizeof(ncclProfilerEventDescr_v6_t) == 112, "v6 descriptor: ceColl is 88 too");
_Static_assert(sizeof(ncclProfilerEventStateArgs_v1_t) == 16, "v1 state args");
_Static_assert(sizeof(ncclProfilerEventStateArgs_v4_t) == 8, "v4 state args");
_Static_assert(sizeof(ncclProfiler_v1_t) == 6 * 8, "a table is name + 5 functions");
_Static_assert(sizeof(ncclProfiler_v6_t) == 6 * 8, "a table is name + 5 functions");
#undef GT_PDESC_ASSERT

#endif /* GDRTRACE_NCCL_PROFILER_H */
