/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_nccllog.c — the NCCL log reader (tools/lib/nccllog.h) on the fixtures of
 * tests/reader/nccl-logs/ (synthetic-* ones written from NCCL's formats, real
 * captures where present).  Checks: each fixture's facts (plugin state and
 * its quote, NCCL version, commIds, ranks, nNodes, the network assigned,
 * channel lines by transport, GPU Direct decisions, splits and their parent,
 * destroys); the same facts with a launcher's prefix on every line (srun
 * --label, padded; mpirun --tag-output) and with NCCL's timestamp; the same
 * facts whatever the stream's split into reads; channel attribution (open
 * init on the thread, one candidate, the initialising thread, ambiguity,
 * a pointer reused after a destroy); bounded memory on junk (NUL bytes,
 * random bytes, a 1 MiB line, a cut last line); the per-process cap;
 * connection phases (their boundaries, ambiguous lines and candidates).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/nccllog.h"

#define FIX "tests/reader/nccl-logs/"

static void load(struct gt_nlog *l, const char *path)
{
    const char *what;
    assert_int_equal(gt_nlog_init(l), 0);
    int e = gt_nlog_add_path(l, path, &what);
    if (e)
        fail_msg("%s: %s", what, strerror(e));
}

static const struct gt_nlog_comm *comm_of(const struct gt_nlog *l, const char *host, int pid,
                                          uint64_t ptr)
{
    const struct gt_nlog_proc *p = gt_nlog_proc_find(l, host, pid);
    assert_non_null(p);
    for (int32_t i = p->first_comm; i >= 0; i = l->comms[i].prev)
        if (l->comms[i].ptr == ptr)
            return &l->comms[i];
    fail_msg("no comm %#llx in %s:%d", (unsigned long long)ptr, host, pid);
    return NULL;
}

/* A digest of everything the reader kept, to compare two readings. */
static void digest(const struct gt_nlog *l, char *out, size_t n)
{
    size_t k = 0;
    k += (size_t)snprintf(out + k, n - k,
                          "nccl %llu used %llu unused %llu ch %llu un %llu amb %llu|",
                          (unsigned long long)l->nccl_lines, (unsigned long long)l->used,
                          (unsigned long long)l->unused, (unsigned long long)l->channels,
                          (unsigned long long)l->unattributed, (unsigned long long)l->ambiguous);
    for (size_t i = 0; i < l->nproc && k < n; i++) {
        const struct gt_nlog_proc *p = &l->procs[i];
        k += (size_t)snprintf(out + k, n - k, "%s:%d %s %d %s v%d [%s] [%s] g%u|", p->host, p->pid,
                              p->version, p->plugin, p->plugin_name, p->plugin_abi, p->quote_plugin,
                              p->quote_net, p->ngdr);
    }
    for (size_t i = 0; i < l->ncomm && k < n; i++) {
        const struct gt_nlog_comm *c = &l->comms[i];
        k += (size_t)snprintf(out + k, n - k, "%u %llx %llx r%d/%d n%d %s d%d p%d %u %u %u %u %u|",
                              c->proc, (unsigned long long)c->ptr, (unsigned long long)c->comm_id,
                              c->rank, c->nranks, c->nnodes, c->net, c->destroyed, c->parent,
                              c->ch[GT_NLOG_CH_NET_OURS], c->ch[GT_NLOG_CH_NET_OTHER],
                              c->ch[GT_NLOG_CH_P2P], c->ch_gdrdma, c->amb);
    }
}

/* Every line of the files of folder dir, concatenated ("" joins files). */
static char *slurp_dir(const char *dir, size_t *len)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "cat %s/* 2>/dev/null", dir);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t cap = 1 << 16, n = 0, k;
    char *b = malloc(cap);
    while ((k = fread(b + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap)
            b = realloc(b, cap *= 2);
    }
    pclose(f);
    *len = n;
    return b;
}

static void feed_prefixed(struct gt_nlog *l, const char *buf, size_t n, int style)
{
    static const char *const pre[] = {"",
                                      "0: ",
                                      " 12: ",
                                      "[1,0]<stdout>:",
                                      "[2026-12-03 10:08:41] ",
                                      "7: [2026-12-03 10:08:41] "};
    size_t i = 0, line = 0;
    while (i < n) {
        const char *nl = memchr(buf + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - buf) : n;
        char tmp[GT_NLOG_LINE_MAX + 64];
        int k = snprintf(tmp, sizeof(tmp), "%s", e > i ? pre[style] : "");
        memcpy(tmp + k, buf + i, e - i);
        gt_nlog_line(l, tmp, (size_t)k + (e - i));
        i = e + 1;
        line++;
    }
    (void)line;
}

static void test_2node_gdrtrace(void **state)
{
    (void)state;
    struct gt_nlog l;
    load(&l, FIX "synthetic-2.28-gdrtrace-2node");
    assert_int_equal(l.files, 2);
    assert_int_equal(l.nproc, 2);
    assert_int_equal(l.ncomm, 4);
    assert_int_equal(l.foreign, 0);
    const struct gt_nlog_proc *a = gt_nlog_proc_find(&l, "nodeA.cluster.example", 1111);
    assert_non_null(a); /* a recorder's full host name finds NCCL's short one */
    assert_string_equal(a->version, "2.28.3+cuda12.9");
    assert_int_equal(a->plugin, GT_NLOG_PLUGIN_LOADED);
    assert_string_equal(a->plugin_name, "gdrtrace");
    assert_int_equal(a->plugin_abi, 11);
    assert_int_equal(a->ngdr, 2); /* the HCA's capability, the GPU/HCA decision */
    const struct gt_nlog_comm *w = comm_of(&l, "nodeA", 1111, 0x55d5c1a0c8f0ULL);
    assert_true(w->has_id);
    assert_int_equal(w->comm_id, 0x9f3c6a7e2b1d4c58ULL);
    assert_int_equal(w->rank, 0);
    assert_int_equal(w->nranks, 2);
    assert_int_equal(w->nnodes, 2);
    assert_int_equal(w->bus_id, 0x1b000);
    assert_string_equal(w->net, "gdrtrace");
    assert_string_equal(w->func, "ncclCommInitRank");
    /* after Init COMPLETE (runtime connect), the only comm of rank 0 then */
    assert_int_equal(w->ch[GT_NLOG_CH_NET_OURS], 4);
    assert_int_equal(w->ch_gdrdma, 4);
    assert_int_equal(w->gdr_on, 1);
    assert_true(w->destroyed);
    assert_string_equal(w->quote_net,
                        "Channel 00/0 : 0[0] -> 1[0] [send] via NET/gdrtrace/0/GDRDMA");
    const struct gt_nlog_comm *s = comm_of(&l, "nodeB", 2222, 0x55d5c1f3a010ULL);
    assert_false(s->has_id);
    assert_true(s->is_split);
    assert_int_equal(s->parent_ptr, 0x55d5c1a0c8f0ULL);
    assert_int_equal(l.comms[s->parent].ptr, 0x55d5c1a0c8f0ULL);
    assert_int_equal(s->split_count, 1);
    assert_int_equal(s->color, 0);
    assert_int_equal(s->key, 1);
    assert_int_equal(s->rank, 1);
    /* the world and the split have rank 1, both initialised on this thread:
     * the split's lines cannot be told apart */
    assert_int_equal(s->ch[GT_NLOG_CH_NET_OURS], 0);
    assert_int_equal(s->amb, 2);
    assert_int_equal(l.ambiguous, 4);
    assert_int_equal(gt_nlog_proc_find(&l, "nodeB", 2222)->unattributed[GT_NLOG_CH_NET_OURS], 2);
    gt_nlog_free(&l);
}

static void test_bypass_ib(void **state)
{
    (void)state;
    struct gt_nlog l;
    load(&l, FIX "synthetic-2.28-bypass-ib");
    const struct gt_nlog_proc *p = gt_nlog_proc_find(&l, "nodeC", 5555);
    assert_int_equal(p->plugin, GT_NLOG_PLUGIN_INIT_FAILED);
    assert_string_equal(p->quote_plugin, "Failed to initialize NET plugin gdrtrace");
    assert_int_equal(p->init_failed, 1);
    assert_string_equal(p->quote_net, "NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB eth0:10.0.1.1<0>");
    /* the WARN line behind NCCL's timestamp is NCCL's; the blank line before it nobody's */
    assert_int_equal(l.nccl_lines, l.lines - 2);
    assert_int_equal(l.foreign, 0);
    const struct gt_nlog_comm *c = comm_of(&l, "nodeC", 5555, 0x560f1e2d3a40ULL);
    assert_string_equal(c->net, "IB");
    assert_int_equal(c->ch[GT_NLOG_CH_NET_OTHER], 2);
    assert_string_equal(c->net_name, "IB");
    assert_int_equal(c->gdr_off, 1);
    assert_string_equal(c->quote_gdr,
                        "GPU Direct RDMA Disabled for GPU 0 / HCA 0 (distance 5 > 4)");
    int seen = 0;
    for (uint32_t i = 0; i < p->ngdr; i++)
        if (p->gdr[i].kind == 0) {
            assert_false(p->gdr[i].enabled);
            assert_int_equal(p->gdr[i].distance, 5);
            assert_int_equal(p->gdr[i].level, 4);
            assert_string_equal(p->gdr[i].gpu, "0");
            assert_string_equal(p->gdr[i].hca, "0");
            seen++;
        }
    assert_int_equal(seen, 1);
    gt_nlog_free(&l);
}

static void test_218_not_found(void **state)
{
    (void)state;
    struct gt_nlog l;
    load(&l, FIX "synthetic-2.18-notfound-socket");
    const struct gt_nlog_proc *p = gt_nlog_proc_find(&l, "nodeE", 7777);
    assert_int_equal(p->plugin, GT_NLOG_PLUGIN_NOT_FOUND);
    assert_string_equal(p->quote_plugin,
                        "NET/Plugin : No plugin found, using internal implementation");
    assert_string_equal(p->version, "2.18.3+cuda12.2");
    const struct gt_nlog_comm *c = comm_of(&l, "nodeE", 7777, 0x5600aa10b2c0ULL);
    /* 2.18 connects during init: the open init of the thread takes the lines */
    assert_int_equal(c->ch[GT_NLOG_CH_NET_OTHER], 4);
    assert_string_equal(c->func, "");
    assert_int_equal(c->nnodes, -1);
    assert_true(c->completed);
    assert_int_equal(l.unattributed, 0);
    gt_nlog_free(&l);
}

static void test_intra(void **state)
{
    (void)state;
    struct gt_nlog l;
    load(&l, FIX "synthetic-2.28-intra");
    const struct gt_nlog_comm *c = comm_of(&l, "nodeF", 3334, 0x5621d3c0a2b0ULL);
    assert_int_equal(c->nnodes, 1);
    assert_int_equal(c->cuda_dev, 1);
    assert_int_equal(c->ch[GT_NLOG_CH_P2P], 2);
    assert_string_equal(c->quote_intra, "Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read");
    gt_nlog_free(&l);
}

/* A real capture: PyTorch 2.11 (NCCL 2.28.9), world + two new_group splits. */
static void test_real_torch_splits(void **state)
{
    (void)state;
    struct gt_nlog l;
    load(&l, FIX "real-2.28.9-t-multi");
    assert_int_equal(l.files, 3); /* two logs and command.txt; recorders.zst skipped */
    assert_int_equal(l.skipped, 1);
    assert_int_equal(l.foreign, 1);
    assert_int_equal(l.nproc, 2);
    assert_int_equal(l.ncomm, 6);
    const struct gt_nlog_proc *p = gt_nlog_proc_find(&l, "vm", 1794);
    assert_string_equal(p->version, "2.28.9+cuda13.0");
    assert_int_equal(p->plugin, GT_NLOG_PLUGIN_LOADED);
    const struct gt_nlog_comm *w = comm_of(&l, "vm", 1794, 0x1dd93ea0);
    assert_int_equal(w->comm_id, 0x4fce265b94d2f17eULL);
    assert_int_equal(w->nnodes, 2);
    assert_int_equal(w->ch[GT_NLOG_CH_NET_OURS], 4);
    const struct gt_nlog_comm *s1 = comm_of(&l, "vm", 1794, 0x273c0bb0);
    const struct gt_nlog_comm *s2 = comm_of(&l, "vm", 1794, 0x275ed360);
    assert_true(s1->is_split && s2->is_split);
    assert_int_equal(s1->color, 2130503744); /* ten digits: any int */
    assert_int_equal(s1->split_count, 1);
    assert_int_equal(s2->split_count, 2);
    assert_ptr_equal(&l.comms[s1->parent], w);
    assert_ptr_equal(&l.comms[s2->parent], w);
    assert_true(s1->seq < s2->seq);
    /* the splits' lines come after both exist, on the one thread: ambiguous */
    assert_true(l.ambiguous > 0);
    gt_nlog_free(&l);
}

/* Every fixture reads the same with each launcher prefix, NCCL's timestamp,
 * and in any split of its bytes. */
static void test_prefixes_and_splits(void **state)
{
    (void)state;
    static const char *const dirs[] = {
        FIX "synthetic-2.28-gdrtrace-2node", FIX "synthetic-2.28-bypass-ib",
        FIX "synthetic-2.18-notfound-socket", FIX "synthetic-2.28-intra"};
    static char ref[1 << 16], got[1 << 16];
    for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
        size_t n;
        char *buf = slurp_dir(dirs[d], &n);
        struct gt_nlog l;
        assert_int_equal(gt_nlog_init(&l), 0);
        gt_nlog_feed(&l, buf, n);
        gt_nlog_feed_end(&l);
        digest(&l, ref, sizeof(ref));
        assert_true(l.used > 10);
        gt_nlog_free(&l);
        for (int style = 1; style < 6; style++) {
            assert_int_equal(gt_nlog_init(&l), 0);
            feed_prefixed(&l, buf, n, style);
            digest(&l, got, sizeof(got));
            if (strcmp(ref, got))
                fail_msg("%s, prefix style %d:\n%s\n%s", dirs[d], style, ref, got);
            gt_nlog_free(&l);
        }
        unsigned seed = 7;
        for (int pass = 0; pass < 3; pass++) {
            assert_int_equal(gt_nlog_init(&l), 0);
            for (size_t i = 0; i < n;) {
                seed = seed * 1103515245u + 12345u;
                size_t k = pass == 0 ? 1 : 1 + (seed >> 8) % (pass == 1 ? 7 : 300);
                if (k > n - i)
                    k = n - i;
                gt_nlog_feed(&l, buf + i, k);
                i += k;
            }
            gt_nlog_feed_end(&l);
            digest(&l, got, sizeof(got));
            assert_string_equal(ref, got);
            gt_nlog_free(&l);
        }
        free(buf);
    }
}

static void lines(struct gt_nlog *l, const char *text)
{
    gt_nlog_feed(l, text, strlen(text));
    gt_nlog_feed_end(l);
}

static void test_attribution(void **state)
{
    (void)state;
    struct gt_nlog l;
    assert_int_equal(gt_nlog_init(&l), 0);
    lines(&l,
          /* two communicators, rank 0 of each, initialised on two threads */
          "h:9:10 [0] NCCL INFO ncclCommInitRank comm 0xa rank 0 nranks 4 cudaDev 0 nvmlDev 0 "
          "busId 1000 commId 0x111 - Init START\n"
          "h:9:10 [0] NCCL INFO ncclCommInitRank comm 0xa rank 0 nranks 4 cudaDev 0 nvmlDev 0 "
          "busId 1000 commId 0x111 - Init COMPLETE\n"
          "h:9:20 [0] NCCL INFO ncclCommInitRank comm 0xb rank 0 nranks 2 cudaDev 0 nvmlDev 0 "
          "busId 1000 commId 0x222 - Init START\n"
          /* open on thread 20, rank 0: comm 0xb's */
          "h:9:20 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/gdrtrace/0\n"
          "h:9:20 [0] NCCL INFO ncclCommInitRank comm 0xb rank 0 nranks 2 cudaDev 0 nvmlDev 0 "
          "busId 1000 commId 0x222 - Init COMPLETE\n"
          /* peer 3 >= 0xb's nranks 2: only 0xa fits */
          "h:9:30 [0] NCCL INFO Channel 00/0 : 0[0] -> 3[0] [send] via NET/IB/0\n"
          /* peer 1: both fit; thread 10 initialised 0xa */
          "h:9:10 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via NET/gdrtrace/0/GDRDMA\n"
          /* peer 1 on a third thread: ambiguous */
          "h:9:30 [0] NCCL INFO Channel 02/0 : 1[0] -> 0[0] [receive] via NET/Socket/0\n"
          /* another process: no Init line seen */
          "h:8:8 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n"
          /* 0xb destroyed, 0xb reused by a new communicator (an NVLS line by pointer) */
          "h:9:20 [0] NCCL INFO comm 0xb rank 0 nranks 2 cudaDev 0 busId 1000 - Destroy COMPLETE\n"
          "h:9:40 [0] NCCL INFO ncclCommInitRank comm 0xb rank 0 nranks 8 cudaDev 0 nvmlDev 0 "
          "busId 1000 commId 0x333 - Init START\n"
          "h:9:40 [0] NCCL INFO NVLS comm 0xb headRank 0 nHeads 1 nvlsRanks 8 buffSize 1048576\n"
          "h:9:40 [0] NCCL INFO comm 0xb rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL "
          "0\n");
    const struct gt_nlog_comm *a = &l.comms[0], *b = &l.comms[1], *b2 = &l.comms[2];
    assert_int_equal(a->comm_id, 0x111);
    assert_int_equal(b->comm_id, 0x222);
    assert_int_equal(b2->comm_id, 0x333);
    assert_int_equal(b->ch[GT_NLOG_CH_NET_OURS], 1);
    assert_int_equal(a->ch[GT_NLOG_CH_NET_OTHER], 1);
    assert_int_equal(a->ch[GT_NLOG_CH_NET_OURS], 1);
    assert_int_equal(a->ch_gdrdma, 1);
    assert_int_equal(a->amb, 1);
    assert_int_equal(b->amb, 1);
    assert_int_equal(l.ambiguous, 1);
    assert_int_equal(l.unattributed, 2);
    const struct gt_nlog_proc *p = gt_nlog_proc_find(&l, "h", 9);
    assert_int_equal(p->unattributed[GT_NLOG_CH_NET_OTHER], 1);
    assert_string_equal(p->quote_unattr, "Channel 02/0 : 1[0] -> 0[0] [receive] via NET/Socket/0");
    assert_int_equal(gt_nlog_proc_find(&l, "h", 8)->unattributed[GT_NLOG_CH_SHM], 1);
    assert_true(b->destroyed);
    assert_int_equal(b2->ch[GT_NLOG_CH_NVLS], 1);
    assert_int_equal(b2->nnodes, 1);
    assert_int_equal(b->nnodes, -1);
    gt_nlog_free(&l);
}

/* Two communicators of one rank on one thread after init (runtime connect):
 * a NET line goes to the one whose "Using network X" names its network. */
static void test_attribution_by_network(void **state)
{
    (void)state;
    struct gt_nlog l;
    assert_int_equal(gt_nlog_init(&l), 0);
    lines(&l, "h:9:9 [0] NCCL INFO Using network gdrtrace\n"
              "h:9:9 [0] NCCL INFO ncclCommInitRank comm 0xa rank 0 nranks 2 cudaDev 0 nvmlDev 0 "
              "busId 1000 commId 0x111 - Init START\n"
              "h:9:9 [0] NCCL INFO ncclCommInitRank comm 0xa rank 0 nranks 2 cudaDev 0 nvmlDev 0 "
              "busId 1000 commId 0x111 - Init COMPLETE\n"
              "h:9:9 [0] NCCL INFO Using network IB\n"
              "h:9:9 [0] NCCL INFO ncclCommInitRank comm 0xb rank 0 nranks 2 cudaDev 0 nvmlDev 0 "
              "busId 1000 commId 0x222 - Init START\n"
              "h:9:9 [0] NCCL INFO ncclCommInitRank comm 0xb rank 0 nranks 2 cudaDev 0 nvmlDev 0 "
              "busId 1000 commId 0x222 - Init COMPLETE\n"
              "h:9:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n"
              "h:9:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/gdrtrace/0\n"
              "h:9:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n");
    assert_string_equal(l.comms[0].net, "gdrtrace");
    assert_string_equal(l.comms[1].net, "IB");
    assert_int_equal(l.comms[1].ch[GT_NLOG_CH_NET_OTHER], 1);
    assert_int_equal(l.comms[0].ch[GT_NLOG_CH_NET_OURS], 1);
    assert_int_equal(l.comms[0].ch[GT_NLOG_CH_NET_OTHER], 0);
    assert_int_equal(l.ambiguous, 1); /* P2P names no network */
    assert_int_equal(l.comms[0].amb + l.comms[1].amb, 2);
    gt_nlog_free(&l);
}

/* Connection phases (invariant 4): the lines of one thread up to NCCL's
 * "Connected all …" line.  On the real t-multi capture (world, 2 splits,
 * send/recv; NCCL 2.28.9 connects at the first collective): the world's
 * ring lines come before the splits' inits (attributed to it), then two
 * rings and the send/recv lines come after every init: ambiguous, each
 * phase with the same candidates.  On the lazy 4-communicator fixture:
 * every line ambiguous among all four, one phase per communicator. */
static void test_phases(void **state)
{
    (void)state;
    struct gt_nlog l;
    load(&l, FIX "real-2.28.9-t-multi");
    const struct gt_nlog_proc *p = gt_nlog_proc_find(&l, "vm", 1794);
    assert_non_null(p);
    assert_int_equal(p->nphase, 4);
    assert_int_equal(p->phase_dropped, 0);
    const uint32_t lines[4] = {4, 4, 4, 2}, amb[4] = {0, 4, 4, 2}, recv[4] = {2, 2, 2, 0};
    const struct gt_nlog_comm *world = comm_of(&l, "vm", 1794, 0x1dd93ea0);
    int k = 0;
    for (int32_t h = p->phase_first; h >= 0; h = l.phases[h].next, k++) {
        const struct gt_nlog_phase *ph = &l.phases[h];
        assert_int_equal(ph->ch[GT_NLOG_CH_NET_OURS], lines[k]);
        assert_int_equal(ph->amb[GT_NLOG_CH_NET_OURS], amb[k]);
        /* [receive] and [send] lines: the recorder's listens and connects */
        assert_int_equal(ph->ours_recv, recv[k]);
        assert_int_equal(ph->ours_send, lines[k] - recv[k]);
        assert_int_equal(ph->closed, 1); /* the send/recv phase by the Destroy */
        assert_int_equal(ph->tid, 1794);
        assert_int_equal(ph->cand_differ, 0);
        assert_int_equal(ph->rec, k ? -1 : (int32_t)(world - l.comms));
        assert_int_equal(ph->ncand, k ? 3 : 0); /* the world and both splits */
    }
    assert_int_equal(k, 4);
    /* an ambiguous line counts once on each of its candidates */
    assert_int_equal(world->amb, 10);
    gt_nlog_free(&l);

    load(&l, FIX "synthetic-2.28-lazy-4comm");
    p = gt_nlog_proc_find(&l, "node-c", 3001);
    assert_non_null(p);
    const uint32_t lazy[4] = {4, 2, 6, 1}, gdr[4] = {4, 2, 6, 1};
    k = 0;
    for (int32_t h = p->phase_first; h >= 0; h = l.phases[h].next, k++) {
        const struct gt_nlog_phase *ph = &l.phases[h];
        assert_int_equal(ph->amb[GT_NLOG_CH_NET_OURS], lazy[k]);
        assert_int_equal(ph->amb_gdrdma, gdr[k]);
        assert_int_equal(ph->ncand, 4);
        assert_int_equal(ph->closed, 1);
        assert_int_equal(ph->rec, -1);
    }
    assert_int_equal(k, 4);
    gt_nlog_free(&l);

    /* another thread's line ends a phase; a line with other candidates
     * makes the phase's candidates differ */
    assert_int_equal(gt_nlog_init(&l), 0);
    const char *text[] = {
        "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xa rank 0 nranks 2 cudaDev 0 nvmlDev 0 "
        "busId 1 commId 0x1 - Init START",
        "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xa rank 0 nranks 2 cudaDev 0 nvmlDev 0 "
        "busId 1 commId 0x1 - Init COMPLETE",
        "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xb rank 0 nranks 4 cudaDev 0 nvmlDev 0 "
        "busId 1 commId 0x2 - Init START",
        "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xb rank 0 nranks 4 cudaDev 0 nvmlDev 0 "
        "busId 1 commId 0x2 - Init COMPLETE",
        "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/gdrtrace/0",
        "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/gdrtrace/0",
        "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 3[0] [send] via NET/gdrtrace/0",
        "h:1:2 [0] NCCL INFO Connected all trees",
        "h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via NET/gdrtrace/0",
    };
    for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++)
        gt_nlog_line(&l, text[i], strlen(text[i]));
    p = gt_nlog_proc_find(&l, "h", 1);
    assert_int_equal(p->nphase, 3);
    const struct gt_nlog_phase *a = &l.phases[p->phase_first], *b = &l.phases[a->next],
                               *c = &l.phases[b->next];
    assert_true(a->closed && a->tid == 1 && a->amb[GT_NLOG_CH_NET_OURS] == 1 && !a->cand_differ);
    /* the peer 3 line has one candidate (nranks 4): attributed to 0xb */
    assert_true(b->closed && b->tid == 2 && b->amb[GT_NLOG_CH_NET_OURS] == 1 && b->rec >= 0);
    assert_true(!c->closed && c->ch[GT_NLOG_CH_NET_OURS] == 1 && c->ncand == 2);
    gt_nlog_free(&l);
}

static void test_junk_bounded(void **state)
{
    (void)state;
    struct gt_nlog l;
    assert_int_equal(gt_nlog_init(&l), 0);
    unsigned seed = 1;
    char buf[4096];
    for (int r = 0; r < 4096; r++) { /* 16 MiB of random bytes, NULs and newlines included */
        for (size_t i = 0; i < sizeof(buf); i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (char)(seed >> 16);
        }
        gt_nlog_feed(&l, buf, sizeof(buf));
    }
    gt_nlog_feed_end(&l);
    assert_true(l.binary > 0);
    assert_true(l.foreign > 0);
    assert_int_equal(l.nproc, 0);
    assert_int_equal(l.ncomm, 0);
    /* a 1 MiB line without a newline, then a real line: the long one is
     * skipped, the next read */
    uint64_t tl = l.too_long;
    memset(buf, 'x', sizeof(buf));
    for (int r = 0; r < 256; r++)
        gt_nlog_feed(&l, buf, sizeof(buf));
    lines(&l, "\nh:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda12.9\n"
              "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev");
    assert_int_equal(l.too_long, tl + 1);
    assert_string_equal(gt_nlog_proc_find(&l, "h", 1)->version, "2.28.9+cuda12.9");
    /* the cut last line (no commId, no " - Init") is counted, not fatal */
    assert_int_equal(l.ncomm, 0);
    /* hostile numbers: 20-digit ranks, a 17-digit pointer, a huge commId */
    lines(&l, "h:1:1 [0] NCCL INFO comm 0x11111111111111111 rank 99999999999999999999 nranks 2 "
              "cudaDev 0 commId 0xffffffffffffffffff - Init START\n"
              "h:99999999999:1 [0] NCCL INFO NCCL version x\n"
              "h:1:1 [0] NCCL INFO Channel 99999999999/0 : 0[0] -> 1[0] via P2P/IPC\n"
              "h:1:1 [0] NCCL INFO GPU Direct RDMA Enabled for GPU 0 / HCA 0 (distance "
              "99999999999 <= 4)\n");
    assert_int_equal(l.ncomm, 0);
    gt_nlog_free(&l);
}

static void test_caps(void **state)
{
    (void)state;
    struct gt_nlog l;
    assert_int_equal(gt_nlog_init(&l), 0);
    char line[256];
    for (int i = 0; i < GT_NLOG_MAX_PROC_COMMS + 10; i++) {
        int n = snprintf(line, sizeof(line),
                         "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0x%x rank 0 nranks 2 cudaDev 0 "
                         "nvmlDev 0 busId 1000 commId 0x%x - Init START",
                         i + 16, i + 1);
        gt_nlog_line(&l, line, (size_t)n);
    }
    for (int i = 0; i < 40; i++) {
        int n = snprintf(line, sizeof(line),
                         "h:1:1 [0] NCCL INFO GPU Direct RDMA Enabled for GPU %d / HCA 0 "
                         "(distance 3 <= 4), read 0 mode Default",
                         i);
        gt_nlog_line(&l, line, (size_t)n);
    }
    assert_int_equal(l.ncomm, GT_NLOG_MAX_PROC_COMMS);
    const struct gt_nlog_proc *p = gt_nlog_proc_find(&l, "h", 1);
    assert_int_equal(p->ngdr, GT_NLOG_MAX_GDR);
    assert_int_equal(p->gdr_dropped, 40 - GT_NLOG_MAX_GDR);
    assert_int_equal(l.dropped, 10 + 40 - GT_NLOG_MAX_GDR);
    gt_nlog_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_2node_gdrtrace),
        cmocka_unit_test(test_bypass_ib),
        cmocka_unit_test(test_218_not_found),
        cmocka_unit_test(test_intra),
        cmocka_unit_test(test_real_torch_splits),
        cmocka_unit_test(test_prefixes_and_splits),
        cmocka_unit_test(test_attribution),
        cmocka_unit_test(test_attribution_by_network),
        cmocka_unit_test(test_junk_bounded),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_phases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
