// SPDX-License-Identifier: Apache-2.0
/*
 * regcount_plugin.c — an independent witness of the registrations NCCL makes,
 * for the GPU runbook's reader check (tests/gpu/run-all.sh).
 *
 * It is itself a net plugin (ncclNetPlugin_v11, for NCCL 2.28): it dlopens the
 * plugin named by GT_REGCOUNT_INNER (our libnccl-net-gdrtrace.so), hands NCCL
 * that plugin's own v11 table with only the control calls replaced, and counts
 * every regMr / regMrDmaBuf / deregMr per communicator (commId), by what NCCL
 * asked for: host, cuda (peermem style) or dmabuf (an fd).  The counts are
 * written to $GT_REGCOUNT_DIR/regcount.<pid>.txt at every finalize and at exit:
 *
 *   comm 0x<commId> reg_host N reg_cuda N reg_dmabuf N reg_failed N dereg N
 *
 * so that the recorder's counts can be held against what NCCL really called,
 * without trusting the recorder.  The data path (isend/irecv/test/...) is the
 * inner plugin's own function pointers: zero cost on the timed path.
 *
 * Invariants: every comm pointer is mapped to the commId of the init() whose
 * ctx created it (listen/connect) or of the listen comm it was accepted on;
 * a registration on an unknown comm is counted under commId 0 ("unmapped"),
 * which the checker treats as a failure.  Tables are small and guarded by one
 * mutex: control calls are rare, never on the data path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/gpu/inner_v11.h"

#define MAX_COMMS 256
#define MAX_PTRS 8192

struct counts {
    uint64_t comm_id;
    uint64_t reg_host, reg_cuda, reg_dmabuf, reg_failed, dereg;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct counts comms[MAX_COMMS];
static int ncomms;
static struct {
    void *p;
    uint64_t comm_id;
} ptrs[MAX_PTRS];
static int nptrs;

/* What NCCL reads after dlopen (the constructor below has filled it by then). */
__attribute__((visibility("default"))) ncclNet_v11_t ncclNetPlugin_v11;
#define table ncclNetPlugin_v11
static const ncclNet_v11_t *inner;

/* Locked by the caller. */
static struct counts *counts_for(uint64_t id)
{
    for (int i = 0; i < ncomms; i++)
        if (comms[i].comm_id == id)
            return &comms[i];
    if (ncomms == MAX_COMMS)
        return &comms[0]; /* overflow lands on the first slot; the dump says so */
    comms[ncomms].comm_id = id;
    return &comms[ncomms++];
}

static void map_ptr(void *p, uint64_t id)
{
    if (!p)
        return;
    pthread_mutex_lock(&mu);
    int i;
    for (i = 0; i < nptrs && ptrs[i].p != p; i++)
        ;
    if (i == nptrs && nptrs < MAX_PTRS)
        nptrs++;
    if (i < MAX_PTRS) {
        ptrs[i].p = p;
        ptrs[i].comm_id = id;
    }
    counts_for(id);
    pthread_mutex_unlock(&mu);
}

/* Locked by the caller.  0 = unmapped. */
static uint64_t id_of(void *p)
{
    for (int i = 0; i < nptrs; i++)
        if (ptrs[i].p == p)
            return ptrs[i].comm_id;
    return 0;
}

static void unmap_ptr(void *p)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nptrs; i++)
        if (ptrs[i].p == p) {
            ptrs[i] = ptrs[--nptrs];
            break;
        }
    pthread_mutex_unlock(&mu);
}

static void dump(void)
{
    const char *dir = getenv("GT_REGCOUNT_DIR");
    char path[4096], tmp[4200];
    if (!dir || !*dir)
        return;
    snprintf(path, sizeof(path), "%s/regcount.%d.txt", dir, (int)getpid());
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "regcount: cannot write %s\n", tmp);
        return;
    }
    pthread_mutex_lock(&mu);
    if (ncomms == MAX_COMMS)
        fprintf(f, "overflow %d\n", MAX_COMMS);
    for (int i = 0; i < ncomms; i++)
        fprintf(f, "comm 0x%lx reg_host %lu reg_cuda %lu reg_dmabuf %lu reg_failed %lu dereg %lu\n",
                (unsigned long)comms[i].comm_id, (unsigned long)comms[i].reg_host,
                (unsigned long)comms[i].reg_cuda, (unsigned long)comms[i].reg_dmabuf,
                (unsigned long)comms[i].reg_failed, (unsigned long)comms[i].dereg);
    pthread_mutex_unlock(&mu);
    fclose(f);
    rename(tmp, path);
}

__attribute__((destructor)) static void at_unload(void)
{
    dump();
}

static ncclResult_t rc_init(void **ctx, uint64_t commId, ncclNetCommConfig_v11_t *config,
                            ncclDebugLogger_t log, ncclProfilerCallback_t prof)
{
    ncclResult_t r = inner->init(ctx, commId, config, log, prof);
    if (r == ncclSuccess)
        map_ptr(*ctx, commId);
    return r;
}

static ncclResult_t rc_listen(void *ctx, int dev, void *handle, void **listenComm)
{
    ncclResult_t r = inner->listen(ctx, dev, handle, listenComm);
    if (r == ncclSuccess) {
        pthread_mutex_lock(&mu);
        uint64_t id = id_of(ctx);
        pthread_mutex_unlock(&mu);
        map_ptr(*listenComm, id);
    }
    return r;
}

static ncclResult_t rc_connect(void *ctx, int dev, void *handle, void **sendComm,
                               ncclNetDeviceHandle_v11_t **sendDevComm)
{
    ncclResult_t r = inner->connect(ctx, dev, handle, sendComm, sendDevComm);
    if (r == ncclSuccess && *sendComm) {
        pthread_mutex_lock(&mu);
        uint64_t id = id_of(ctx);
        pthread_mutex_unlock(&mu);
        map_ptr(*sendComm, id);
    }
    return r;
}

static ncclResult_t rc_accept(void *listenComm, void **recvComm,
                              ncclNetDeviceHandle_v11_t **recvDevComm)
{
    ncclResult_t r = inner->accept(listenComm, recvComm, recvDevComm);
    if (r == ncclSuccess && *recvComm) {
        pthread_mutex_lock(&mu);
        uint64_t id = id_of(listenComm);
        pthread_mutex_unlock(&mu);
        map_ptr(*recvComm, id);
    }
    return r;
}

static void count_reg(void *comm, int kind, ncclResult_t r)
{
    pthread_mutex_lock(&mu);
    struct counts *c = counts_for(id_of(comm));
    if (r != ncclSuccess)
        c->reg_failed++;
    else if (kind == 0)
        c->reg_host++;
    else if (kind == 1)
        c->reg_cuda++;
    else
        c->reg_dmabuf++;
    pthread_mutex_unlock(&mu);
}

static ncclResult_t rc_regMr(void *comm, void *data, size_t size, int type, void **mhandle)
{
    ncclResult_t r = inner->regMr(comm, data, size, type, mhandle);
    count_reg(comm, type == NCCL_PTR_CUDA ? 1 : 0, r);
    return r;
}

static ncclResult_t rc_regMrDmaBuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                                   int fd, void **mhandle)
{
    ncclResult_t r = inner->regMrDmaBuf(comm, data, size, type, offset, fd, mhandle);
    count_reg(comm, fd >= 0 ? 2 : (type == NCCL_PTR_CUDA ? 1 : 0), r);
    return r;
}

static ncclResult_t rc_deregMr(void *comm, void *mhandle)
{
    ncclResult_t r = inner->deregMr(comm, mhandle);
    pthread_mutex_lock(&mu);
    counts_for(id_of(comm))->dereg++;
    pthread_mutex_unlock(&mu);
    return r;
}

static ncclResult_t rc_closeSend(void *c)
{
    unmap_ptr(c);
    return inner->closeSend(c);
}

static ncclResult_t rc_closeRecv(void *c)
{
    unmap_ptr(c);
    return inner->closeRecv(c);
}

static ncclResult_t rc_closeListen(void *c)
{
    unmap_ptr(c);
    return inner->closeListen(c);
}

static ncclResult_t rc_finalize(void *ctx)
{
    ncclResult_t r = inner->finalize(ctx);
    unmap_ptr(ctx);
    dump();
    return r;
}

__attribute__((constructor)) static void at_load(void)
{
    const char *path = getenv("GT_REGCOUNT_INNER");
    table.name = "regcount-broken";
    table.init = broken_init;
    if (!path || !*path) {
        fprintf(stderr, "regcount: GT_REGCOUNT_INNER is not set; exporting nothing usable\n");
        return;
    }
    inner = load_inner_v11("regcount", path);
    if (!inner)
        return;
    table = *inner;
    table.init = rc_init;
    table.listen = rc_listen;
    table.connect = rc_connect;
    table.accept = rc_accept;
    if (inner->regMr)
        table.regMr = rc_regMr;
    if (inner->regMrDmaBuf)
        table.regMrDmaBuf = rc_regMrDmaBuf;
    table.deregMr = rc_deregMr;
    table.closeSend = rc_closeSend;
    table.closeRecv = rc_closeRecv;
    table.closeListen = rc_closeListen;
    if (inner->finalize)
        table.finalize = rc_finalize;
}
