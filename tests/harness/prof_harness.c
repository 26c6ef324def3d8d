/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prof_harness.c — drives the built plugin's ncclProfiler_vN as NCCL does
 * (dlopen, dlsym the table, init, Coll/P2p events stopped by the host before
 * their children start, children from "the proxy thread", finalize), with a
 * fixed script of events, so tests/harness/harness_prof.sh can compare the
 * recorder's collective tables with what the script implies.
 *
 *   prof_harness PLUGIN.so VERSION
 * GDRTRACE_COLL picks the mode as in a job; the recorder goes to
 * GDRTRACE_DIR.  In mode kernel (v4+) every duration comes from the GPU
 * timestamps given here, so the histograms are exact; in mode proxy each
 * child lives SLEEP_US microseconds of host time (a lower bound only).
 *
 * The script (per communicator; NRANKS 4, rank 1, commId 0xc0ffee01):
 *   AllReduce of 1 KiB << i (float32), i = 0..9: RING, LL below 32 KiB else
 *     SIMPLE; 2 children; GPU duration (i+1) x 10 us + 100 ns
 *   AllGather of 1024 float32 x 3: TREE_LL128, 1 child, GPU duration 5 us
 *   Send of 100 int8: 1 child, GPU duration 3 us
 *   Broadcast of 64 float64: no child (not timed)
 *   ReduceScatter of 2048 bfloat16: RING_SIMPLE, 2 children, GPU 7 us (+100 ns)
 *   Reduce of 512 float16: TREE_LL, 1 child, GPU 9 us
 *   v5+, one Group (a kernel plan) holding a Send and a Recv of 1 MiB
 *     (float32) to peer 2 and a Send of 1 MiB to itself, each naming the
 *     group as parentGroup; the host stops the three and the group, then
 *     the proxy runs the Send's child (GPU 3 us; in mode proxy it stops at
 *     once) and the Recv's (GPU 50 us; in mode proxy after SLEEP_US): both
 *     timed as the group, 50 us (kernel) or >= SLEEP_US (proxy); the self
 *     Send has no child (counted, not timed)
 *   v6, a CeColl AllGather of 4096 float32: counted, not timed
 *   a ProxyOp of another process (PXN) under the last AllReduce: ignored
 *   a Group event with no operation: nothing recorded
 * Exit 0 when every call returned ncclSuccess, else 1 (message on stderr).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl/profiler.h"

#define SLEEP_US 2000
#define COMM_ID 0xc0ffee01ull

static int fails;
static void ok(ncclResult_t r, const char *what)
{
    if (r != ncclSuccess) {
        fprintf(stderr, "prof_harness: %s returned %d\n", what, (int)r);
        fails++;
    }
}

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    (void)level;
    (void)flags;
    (void)file;
    (void)line;
    (void)fmt;
}

static void nap(void)
{
    struct timespec ts = {0, SLEEP_US * 1000L};
    nanosleep(&ts, NULL);
}

/* One operation in version-neutral form; each version's filler writes it
 * into that version's descriptor. */
struct op {
    const char *func;
    int func_v1; /* NCCL 2.23's ncclFunc_t */
    int p2p;
    size_t count;
    const char *dtype;
    int dtype_v1;
    const char *algo, *proto;
    int algo_v1, proto_v1;
    int nchild;
    uint64_t gpu_dur; /* per child c: gpu_dur + 100 * c */
};

static const struct op script[] = {
#define AR(i)                                                                                      \
    {                                                                                              \
        "AllReduce", 4, 0, 256u << (i), "ncclFloat32", 7, "RING", (i) < 5 ? "LL" : "SIMPLE", 1,    \
            (i) < 5 ? 0 : 2, 2, (uint64_t)((i) + 1) * 10000                                        \
    }
    AR(0),
    AR(1),
    AR(2),
    AR(3),
    AR(4),
    AR(5),
    AR(6),
    AR(7),
    AR(8),
    AR(9),
    {"AllGather", 2, 0, 1024, "ncclFloat32", 7, "TREE", "LL128", 0, 1, 1, 5000},
    {"AllGather", 2, 0, 1024, "ncclFloat32", 7, "TREE", "LL128", 0, 1, 1, 5000},
    {"AllGather", 2, 0, 1024, "ncclFloat32", 7, "TREE", "LL128", 0, 1, 1, 5000},
    {"Send", 6, 1, 100, "ncclInt8", 0, NULL, NULL, 0, 0, 1, 3000},
    {"Broadcast", 0, 0, 64, "ncclFloat64", 8, "RING", "SIMPLE", 1, 2, 0, 0},
    {"ReduceScatter", 3, 0, 2048, "ncclBfloat16", 9, "RING", "SIMPLE", 1, 2, 2, 7000},
    {"Reduce", 1, 0, 512, "ncclFloat16", 6, "TREE", "LL", 0, 0, 1, 9000},
#undef AR
};
#define NOPS (sizeof(script) / sizeof(script[0]))

/* Fills the Coll/P2p part of a v2+ descriptor D (string names). */
#define FILL_OP_STR(D, o, hasComm)                                                                 \
    do {                                                                                           \
        (D).type = (o)->p2p ? ncclProfileP2p : ncclProfileColl;                                    \
        (D).rank = 1;                                                                              \
        if ((o)->p2p) {                                                                            \
            (D).p2p.func = (o)->func;                                                              \
            (D).p2p.count = (o)->count;                                                            \
            (D).p2p.datatype = (o)->dtype;                                                         \
            (D).p2p.peer = 2;                                                                      \
            hasComm(D, p2p);                                                                       \
        } else {                                                                                   \
            (D).coll.func = (o)->func;                                                             \
            (D).coll.count = (o)->count;                                                           \
            (D).coll.datatype = (o)->dtype;                                                        \
            (D).coll.algo = (o)->algo;                                                             \
            (D).coll.proto = (o)->proto;                                                           \
            hasComm(D, coll);                                                                      \
        }                                                                                          \
    } while (0)
#define COMM_IN_EVENT(D, part)                                                                     \
    do {                                                                                           \
        (D).part.commHash = COMM_ID;                                                               \
        (D).part.name = "harness";                                                                 \
    } while (0)
#define COMM_IN_INIT(D, part) ((void)0)

static void *g_parent_group; /* v5+: the parentGroup a P2p names */
#define P2P_GROUP(D, o)                                                                            \
    do {                                                                                           \
        if ((o)->p2p)                                                                              \
            (D).p2p.parentGroup = g_parent_group;                                                  \
    } while (0)

struct table {
    int version;
    ncclResult_t (*stop)(void *);
    ncclResult_t (*finalize)(void *);
    void *t;
};

/* start one event of kind k (0 op, 1 proxy child, 2 kernel child, 3 group) */
static void *start(struct table *tb, void *ctx, const struct op *o, int k, void *parent,
                   uint64_t ptimer, int pid)
{
    void *h = (void *)0x1; /* must be overwritten */
    ncclResult_t r = ncclSuccess;
    int type = k == 1 ? ncclProfileProxyOp : k == 2 ? ncclProfileKernelCh : ncclProfileGroup;
    switch (tb->version) {
    case 1: {
        ncclProfilerEventDescr_v1_t d;
        memset(&d, 0, sizeof(d));
        if (k == 0) {
            d.type = o->p2p ? ncclProfileP2p : ncclProfileColl;
            d.rank = 1;
            if (o->p2p) {
                d.p2p.func = (uint8_t)o->func_v1;
                d.p2p.count = o->count;
                d.p2p.datatype = (uint8_t)o->dtype_v1;
                d.p2p.commHash = COMM_ID;
                d.p2p.name = "harness";
            } else {
                d.coll.func = (uint8_t)o->func_v1;
                d.coll.count = o->count;
                d.coll.datatype = (uint8_t)o->dtype_v1;
                d.coll.algo = (uint8_t)o->algo_v1;
                d.coll.proto = (uint8_t)o->proto_v1;
                d.coll.commHash = COMM_ID;
                d.coll.name = "harness";
            }
        } else {
            d.type = (uint8_t)type;
            d.parentObj = parent;
            d.proxyOp.pid = pid;
        }
        r = ((ncclProfiler_v1_t *)tb->t)->startEvent(ctx, &h, &d);
        break;
    }
#define CASE_STR(V, hasComm, ptimerField, group)                                                   \
    case V: {                                                                                      \
        ncclProfilerEventDescr_v##V##_t d;                                                         \
        memset(&d, 0, sizeof(d));                                                                  \
        if (k == 0) {                                                                              \
            FILL_OP_STR(d, o, hasComm);                                                            \
            group;                                                                                 \
        } else {                                                                                   \
            d.type = type;                                                                         \
            d.parentObj = parent;                                                                  \
            if (k == 1)                                                                            \
                d.proxyOp.pid = pid;                                                               \
            ptimerField;                                                                           \
        }                                                                                          \
        r = ((ncclProfiler_v##V##_t *)tb->t)->startEvent(ctx, &h, &d);                             \
        break;                                                                                     \
    }
        CASE_STR(2, COMM_IN_EVENT, (void)ptimer, (void)0)
        CASE_STR(3, COMM_IN_EVENT, (void)ptimer, (void)0)
        CASE_STR(4, COMM_IN_INIT, if (k == 2) d.kernelCh.pTimer = ptimer, (void)0)
        CASE_STR(5, COMM_IN_INIT, if (k == 2) d.kernelCh.pTimer = ptimer, P2P_GROUP(d, o))
        CASE_STR(6, COMM_IN_INIT, if (k == 2) d.kernelCh.pTimer = ptimer, P2P_GROUP(d, o))
#undef CASE_STR
    }
    ok(r, "startEvent");
    if (h == (void *)0x1) {
        fprintf(stderr, "prof_harness: startEvent left the handle unset\n");
        fails++;
        h = NULL;
    }
    return h;
}

/* v6: a collective on the copy engines (CeColl), as NCCL describes it */
static void *start_ce(struct table *tb, void *ctx, const char *func, size_t count,
                      const char *dtype)
{
    ncclProfilerEventDescr_v6_t d;
    memset(&d, 0, sizeof(d));
    d.type = ncclProfileCeColl;
    d.rank = 1;
    d.ceColl.func = func;
    d.ceColl.count = count;
    d.ceColl.datatype = dtype;
    d.ceColl.syncStrategy = "UC";
    void *h = (void *)0x1;
    ok(((ncclProfiler_v6_t *)tb->t)->startEvent(ctx, &h, &d), "startEvent(CeColl)");
    return h == (void *)0x1 ? NULL : h;
}

static void kernel_stop(struct table *tb, void *h, uint64_t ptimer)
{
    if (tb->version < 4) {
        ncclProfilerEventStateArgs_v1_t a;
        memset(&a, 0, sizeof(a));
        ok(((ncclProfiler_v1_t *)tb->t)->recordEventState(h, ncclProfilerKernelChStop, &a),
           "recordEventState");
        return;
    }
    ncclProfilerEventStateArgs_v4_t a;
    memset(&a, 0, sizeof(a));
    a.kernelCh.pTimer = ptimer;
    /* the v4..v6 tables have the same recordEventState shape */
    ok(((ncclProfiler_v4_t *)tb->t)->recordEventState(h, ncclProfilerKernelChStop, &a),
       "recordEventState");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: prof_harness PLUGIN.so VERSION(1..6)\n");
        return 2;
    }
    int v = atoi(argv[2]);
    if (v < 1 || v > 6) {
        fprintf(stderr, "prof_harness: version '%s' is not 1..6\n", argv[2]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "prof_harness: %s\n", dlerror());
        return 1;
    }
    char sym[32];
    snprintf(sym, sizeof(sym), "ncclProfiler_v%d", v);
    void *t = dlsym(lib, sym);
    if (!t) {
        fprintf(stderr, "prof_harness: %s not exported\n", sym);
        return 1;
    }
    struct table tb = {.version = v, .t = t};
    void *ctx = NULL;
    int mask = -1;
    switch (v) {
    case 1:
    case 2:
    case 3: /* same init shape */
        ok(((ncclProfiler_v1_t *)t)->init(&ctx, &mask), "init");
        tb.stop = ((ncclProfiler_v1_t *)t)->stopEvent;
        tb.finalize = ((ncclProfiler_v1_t *)t)->finalize;
        break;
    case 4:
        ok(((ncclProfiler_v4_t *)t)->init(&ctx, &mask, "harness", COMM_ID, 2, 4, 1, logger),
           "init");
        tb.stop = ((ncclProfiler_v4_t *)t)->stopEvent;
        tb.finalize = ((ncclProfiler_v4_t *)t)->finalize;
        break;
    default: /* v5, v6: same init shape */
        ok(((ncclProfiler_v5_t *)t)->init(&ctx, COMM_ID, &mask, "harness", 2, 4, 1, logger),
           "init");
        tb.stop = ((ncclProfiler_v5_t *)t)->stopEvent;
        tb.finalize = ((ncclProfiler_v5_t *)t)->finalize;
        break;
    }
    printf("mask=0x%x\n", mask);
    int kernel = (mask & ncclProfileKernelCh) != 0;
    uint64_t gpu = 1000000;
    void *last = NULL;
    for (size_t i = 0; i < NOPS; i++) {
        const struct op *o = &script[i];
        void *h = start(&tb, ctx, o, 0, NULL, 0, 0);
        ok(tb.stop(h), "stopEvent(op)"); /* the host stops it before any child starts */
        if (!mask)
            continue;
        void *ch[4];
        for (int c = 0; c < o->nchild; c++)
            ch[c] = start(&tb, ctx, o, kernel ? 2 : 1, h, gpu, (int)getpid());
        if (!kernel)
            nap();
        for (int c = 0; c < o->nchild; c++) {
            if (kernel)
                kernel_stop(&tb, ch[c], gpu + o->gpu_dur + 100u * (unsigned)c);
            ok(tb.stop(ch[c]), "stopEvent(child)");
        }
        gpu += 1000000;
        if (!o->p2p && strcmp(o->func, "AllReduce") == 0)
            last = h;
    }
    if (v >= 5 && mask) {
        /* a group: Send and Recv to peer 2, a Send to itself (no child) */
        static const struct op send = {"Send", 6, 1, 262144, "ncclFloat32", 7, NULL, NULL,
                                       0,      0, 1, 0};
        static const struct op recv = {"Recv", 7, 1, 262144, "ncclFloat32", 7, NULL, NULL,
                                       0,      0, 1, 0};
        void *g = start(&tb, ctx, &send, 3, NULL, 0, 0);
        g_parent_group = g;
        void *hs = start(&tb, ctx, &send, 0, NULL, 0, 0);
        void *hr = start(&tb, ctx, &recv, 0, NULL, 0, 0);
        void *hself = start(&tb, ctx, &send, 0, NULL, 0, 0);
        g_parent_group = NULL;
        ok(tb.stop(hs), "stopEvent(send)");
        ok(tb.stop(hr), "stopEvent(recv)");
        ok(tb.stop(hself), "stopEvent(self send)");
        ok(tb.stop(g), "stopEvent(group)");
        void *cs = start(&tb, ctx, &send, kernel ? 2 : 1, hs, gpu, (int)getpid());
        void *cr = start(&tb, ctx, &recv, kernel ? 2 : 1, hr, gpu, (int)getpid());
        if (kernel)
            kernel_stop(&tb, cs, gpu + 3000);
        ok(tb.stop(cs), "stopEvent(send child)");
        if (!kernel)
            nap();
        else
            kernel_stop(&tb, cr, gpu + 50000);
        ok(tb.stop(cr), "stopEvent(recv child)");
        gpu += 1000000;
    }
    if (v >= 6 && mask) {
        void *ce = start_ce(&tb, ctx, "AllGather", 4096, "ncclFloat32");
        if (ce)
            ok(tb.stop(ce), "stopEvent(CeColl)");
    }
    /* PXN: another process's proxy op names a parent of that process */
    void *f = start(&tb, ctx, &script[0], 1, last, 0, (int)getpid() + 1);
    if (f)
        ok(tb.stop(f), "stopEvent(foreign)");
    void *g = start(&tb, ctx, &script[0], 3, NULL, 0, 0);
    if (g)
        ok(tb.stop(g), "stopEvent(group)");
    ok(tb.stop(NULL), "stopEvent(NULL)");
    ok(tb.finalize(ctx), "finalize");
    printf("prof_harness v%d: %s\n", v, fails ? "FAILED" : "done");
    return fails ? 1 : 0;
}
