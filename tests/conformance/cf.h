/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cf.h — the conformance suite's view of a net plugin: one table with
 * NCCL's v12 shapes (size_t sizes, a context), filled either by cf_dl.c
 * from any plugin library's ncclNetPlugin_vN (the highest version it
 * exports that include/nccl/ declares), or by a test from an in-process
 * transport (test_conform_ib.c: ib over a verbs model).  The patterns
 * (cf_patterns.c) are NCCL's call patterns, written from NCCL's proxy
 * (src/transport/net.cc: sendProxyProgress, recvProxyProgress, the shared
 * comms of sendProxyConnect) and nothing of ours: they call only this
 * table, as NCCL calls the plugin's.
 *
 * Every function returns ncclResult_t's value (0 success).  A pattern
 * returns 0 (pass), 1 (fail: it printed why) or CF_SKIP (it printed why
 * the plugin cannot be asked this, e.g. maxRecvs 1 for grouped receives).
 */
#ifndef GDRTRACE_TESTS_CF_H
#define GDRTRACE_TESTS_CF_H

#include <stddef.h>
#include <stdint.h>

#define CF_SKIP 77
#define CF_HANDLE 128  /* NCCL_NET_HANDLE_MAXSIZE */
#define CF_MAX_RECVS 8 /* NCCL_NET_IB_MAX_RECVS, NCCL_PROXY_MAX_SUBS's grouping */

struct cf_props {
    const char *name;
    int ptr_support, speed, max_comms, max_recvs;
    size_t max_p2p; /* 0: the version has none (v6 … v8) */
};

struct cf_net {
    const char *label; /* "libfoo.so v10", "ib (in-process)" */
    int abi;           /* the table's version; 0 for an in-process one */
    int multiprocess;  /* 0: the transport lives in this process only (fork-free patterns) */
    void *impl;        /* the adapter's */
    int (*init)(struct cf_net *n);
    int (*finalize)(struct cf_net *n);
    int (*devices)(struct cf_net *n, int *ndev);
    int (*props)(struct cf_net *n, int dev, struct cf_props *p);
    int (*listen)(struct cf_net *n, int dev, void *handle, void **lc);
    int (*connect)(struct cf_net *n, int dev, void *handle, void **sc);
    int (*accept)(struct cf_net *n, void *lc, void **rc);
    int (*reg_mr)(struct cf_net *n, void *comm, void *data, size_t size, void **mh);
    int (*dereg_mr)(struct cf_net *n, void *comm, void *mh);
    int (*isend)(struct cf_net *n, void *sc, void *data, size_t size, int tag, void *mh,
                 void **req);
    int (*irecv)(struct cf_net *n, void *rc, int cnt, void **data, size_t *sizes, int *tags,
                 void **mhs, void **req);
    int (*iflush)(struct cf_net *n, void *rc, int cnt, void **data, int *sizes, void **mhs,
                  void **req);
    int (*test)(struct cf_net *n, void *req, int *done, int *sizes);
    int (*close_send)(struct cf_net *n, void *c);
    int (*close_recv)(struct cf_net *n, void *c);
    int (*close_listen)(struct cf_net *n, void *c);
};

/* cf_dl.c: loads PATH (dlopen), takes the highest ncclNetPlugin_vN it
 * knows (or `abi` when > 0) into `n`.  0, or 1 with the reason printed. */
int cf_dl_open(struct cf_net *n, const char *path, int abi);

struct cf_opts {
    int dev;          /* the device every comm uses */
    int verbose;      /* print each pattern's figures */
    int watchdog_s;   /* a pattern that makes no progress this long fails (hang) */
    const char *only; /* a pattern name, or NULL for all */
    int max_pairs;    /* connections many-comms opens at once (0: 32) */
};

/* The patterns, by name, in the order they run. */
struct cf_pattern {
    const char *name;
    const char *what;       /* one line: NCCL's behaviour it plays */
    int needs_multiprocess; /* forks processes that each load the plugin */
    int (*run)(struct cf_net *n, const struct cf_opts *o);
};
extern const struct cf_pattern cf_patterns[];
extern const int cf_npatterns;

/* Runs every pattern (or o->only); prints "PASS|FAIL|SKIP name: …" lines
 * and a summary.  Returns 0 if none failed and at least one passed. */
int cf_run_all(struct cf_net *n, const struct cf_opts *o);

#endif /* GDRTRACE_TESTS_CF_H */
