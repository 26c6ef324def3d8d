/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shim.c — the instrumenting gt_net_ops (see shim.h): forwards every call to
 * the inner transport unchanged, times it, and records its outcome in the
 * process's recorder.
 *
 * Objects: every context, listen/send/recv comm and mhandle the inner
 * transport returns is handed to NCCL inside a small wrapper that carries
 * the inner pointer and the comm record it belongs to, so no call needs a
 * lookup.  Requests come from a per-comm preallocated pool (an atomic
 * bitmap), so the data path never allocates.
 *
 * Invariants:
 *  S1. Results and out-parameters seen by NCCL are the inner transport's,
 *      except that object pointers are our wrappers.  The only exception is
 *      a failed malloc of a control-path wrapper: listen/reg report
 *      GT_SYSTEM_ERROR, connect/accept report "not yet", without calling the
 *      inner transport; a data-path call whose pool and heap are both
 *      exhausted reports "no slot, retry" (isend/irecv) or GT_SYSTEM_ERROR
 *      (iflush), also before calling it.
 *  S2. The data path (isend, irecv, iflush, test, irecv_consumed) takes no
 *      lock, allocates nothing while the pool has room, and makes no system
 *      call (timestamps: see clock.h; thread id: cached after the first),
 *      except test()'s host-pressure sample, at most once a second on the
 *      one thread that finds the second gone (rec_host.h, H1).
 *  S3. Data-path counters and the SEND/RECV/FLUSH histograms of a comm slot
 *      have exactly one writer thread (its owner), so they are updated with
 *      relaxed loads and stores, no RMW.  A second thread driving the same
 *      communicator gets its own sibling slot (same comm_id); readers sum
 *      slots with equal (has_comm_id, comm_id).  The overflow slot has no
 *      owner and uses RMWs.  Registration, control and error counters may
 *      be written by any thread and always use relaxed RMWs.
 *  S4. Control events (init, finalize, probe, listen/connect/accept,
 *      reg/dereg, fallback, error, close) are always recorded; per-message
 *      events only with GDRTRACE_EVENTS=all.
 *  S5. The recorder is created once per process, before plugin/core's
 *      first call into a transport (gt_shim_open), and never unmapped while
 *      the process runs; its state is LIVE from creation and while any init
 *      is not finalized, and CLOSED after the last finalize, after a refusal
 *      with no init alive (gt_shim_refused), or at exit.
 *  S7. Calls into code gdrtrace does not own (common/callout.h) are
 *      bracketed by CALLING and RETURNED events of one serial, so a CALLING
 *      without its RETURNED is where the process died (or is now).
 *  S6. A truncated recorder file does not kill the job (shim/sigbus.c); its
 *      loss, and an application that replaced our SIGBUS handler, are each
 *      reported by one WARN from a cold path (init, finalize, exit), never
 *      from the signal handler.
 */
#include "shim/shim.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/callout.h"
#include "common/nccl_env.h"
#include "common/codes.h"
#include "common/env.h"
#include "common/log.h"
#include "common/hist.h"
#include "shim/rec_host.h"
#include "shim/recorder.h"
#include "shim/shim_internal.h"
#include "shim/sigbus.h"

/* ---- process-wide state ------------------------------------------------ */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* cold path only */
/* Callee claims only: a foreign call may be announced while g_lock is held
 * elsewhere (never while this one is). */
static pthread_mutex_t g_callee_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gt_recorder g_rec;
static struct gt_recorder *g_recp;       /* non-NULL once open (acquire/release) */
static int g_failed;                     /* creation failed: never retry, one WARN */
static const struct gt_net_ops *g_inner; /* the wrapped transport (acquire/release) */
static struct shim_slot *g_slots;        /* one per comm slot */
static int g_active_inits;               /* under g_lock */
static int g_abi_version;
static int g_devs_filled;
static int g_atexit_done;
static int g_lost_warned;  /* under g_lock: the one "recorder lost" WARN */
static int g_guard_warned; /* under g_lock: the one "guard replaced" WARN */
static struct gt_net_ops g_ops;

/* The key of the calling thread for slot ownership (S3): the address of a
 * thread-local, unique among live threads, known without a system call. */
static __thread char tls_key __attribute__((tls_model("initial-exec")));
static __thread struct shim_slot *tls_last_primary __attribute__((tls_model("initial-exec")));
static __thread struct shim_slot *tls_last_slot __attribute__((tls_model("initial-exec")));

struct gt_recorder *gt_shim_recorder(void)
{
    return __atomic_load_n(&g_recp, __ATOMIC_ACQUIRE);
}

static inline struct gtr_comm *rec_comm(const struct shim_slot *s)
{
    return s->c;
}

static inline void ctr_add_shared(uint64_t *p, uint64_t v)
{
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/* Data-path counter of slot s: single writer unless s is shared (S3). */
static inline void ctr_add_dp(const struct shim_slot *s, uint64_t *p, uint64_t v)
{
    if (__builtin_expect(s->shared, 0))
        __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    else
        __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static inline void hist_dp(const struct shim_slot *s, int op, uint64_t ns)
{
    if (__builtin_expect(s->shared, 0))
        gt_hist_add_shared(&s->c->hist[op], ns);
    else
        gt_hist_add_owned(&s->c->hist[op], ns);
}

/* Slow path of dp_slot: find or make this thread's sibling of primary p. */
static struct shim_slot *dp_slot_slow(struct shim_slot *p)
{
    void *key = &tls_key;
    void *none = NULL;
    struct shim_slot *s = p;
    if (p->shared)
        goto found;
    if (__atomic_load_n(&p->owner, __ATOMIC_ACQUIRE) == key ||
        __atomic_compare_exchange_n(&p->owner, &none, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        goto found;
    for (s = __atomic_load_n(&p->sibling, __ATOMIC_ACQUIRE); s;
         s = __atomic_load_n(&s->sibling, __ATOMIC_ACQUIRE))
        if (__atomic_load_n(&s->owner, __ATOMIC_ACQUIRE) == key)
            goto found;
    /* A new sibling: a fresh slot with the primary's identity, owned by us
     * before anyone can see it, pushed on the primary's list (CAS). */
    uint32_t idx;
    struct gtr_comm *c = gt_rec_new_comm(&g_rec, p->c->comm_id, (int)p->c->has_comm_id,
                                         p->c->abi_version, p->c->init_ns, &idx);
    if (!c) {
        s = &g_slots[g_rec.ncomms - 1]; /* overflow: shared, activated at open */
        goto found;
    }
    __atomic_store_n(&c->dev, __atomic_load_n(&p->c->dev, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    s = &g_slots[idx];
    s->owner = key;
    s->primary = p;
    struct shim_slot *head = __atomic_load_n(&p->sibling, __ATOMIC_ACQUIRE);
    do {
        s->sibling = head;
    } while (
        !__atomic_compare_exchange_n(&p->sibling, &head, s, 1, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
found:
    tls_last_primary = p;
    tls_last_slot = s;
    return s;
}

/* The slot this thread writes data-path records of primary p into. */
static inline struct shim_slot *dp_slot(struct shim_slot *p)
{
    if (__builtin_expect(tls_last_primary == p, 1))
        return tls_last_slot;
    return dp_slot_slow(p);
}

/* ---- recording helpers (cold unless said) ------------------------------ */

static void set_text(char *dst, size_t n, const char *src)
{
    /* Last-error text: written byte by byte with relaxed atomics, since two
     * threads failing at once may interleave (benign: it is "a recent
     * error", bounded by its array, NUL-terminated). */
    size_t i = 0;
    for (; src[i] && i + 1 < n; i++)
        __atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
    __atomic_store_n(&dst[i], '\0', __ATOMIC_RELAXED);
}

static void record_error(struct shim_slot *p, int op, int dev, gt_result res, int err, int reason,
                         const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void record_error(struct shim_slot *p, int op, int dev, gt_result res, int err, int reason,
                         const char *fmt, ...)
{
    struct gt_recorder *r = &g_rec;
    uint16_t slot = GTR_NO_COMM;
    if (p) {
        struct gtr_comm *c = rec_comm(p);
        slot = p->idx;
        ctr_add_shared(&c->error_count, 1);
        /* the code itself goes to last_reason and the event; a code this
         * format has no slot for is counted in the "other" slot */
        ctr_add_shared(gtr_reason_counter(c, GTR_ERRORS, gtr_reason_slot(reason)), 1);
        __atomic_store_n(&c->error_last_errno, err, __ATOMIC_RELAXED);
        __atomic_store_n(&c->error_last_reason, reason, __ATOMIC_RELAXED);
        char text[128];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        set_text(c->error_last_text, sizeof(c->error_last_text), text);
    }
    gt_rec_event(r, GTR_EV_ERROR, slot, (int16_t)dev, res, err, (uint64_t)op, 0, 0,
                 (uint32_t)reason);
}

/* Records the inner transport's failure of the call that began at `mark`:
 * its reason and errno as it described them (gt_net.h, failure rule F3;
 * errno after the call is never read, F2), its text after ours.  The
 * description stays this call's for our own caller (F1). */
static void record_failure(struct shim_slot *p, int op, int dev, gt_result res, uint32_t mark,
                           const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void record_failure(struct shim_slot *p, int op, int dev, gt_result res, uint32_t mark,
                           const char *fmt, ...)
{
    struct gt_net_failure f;
    gt_net_failure_since(mark, &f);
    char what[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    record_error(p, op, dev, res, f.err, f.reason, "%s: %s", what, f.text);
    gt_net_fail(res, f.reason, f.err, "%s", f.text);
}

static void set_comm_dev(struct shim_slot *p, int dev)
{
    int32_t unknown = -1;
    __atomic_compare_exchange_n(&p->c->dev, &unknown, dev, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Devices section and PROBE events, once the transport can answer. */
static void fill_devices_locked(const struct gt_net_ops *inner)
{
    if (g_devs_filled)
        return;
    int ndev = 0;
    if (inner->devices(&ndev) != GT_OK || ndev <= 0)
        return;
    for (int d = 0; d < ndev; d++) {
        struct gt_props props;
        struct gt_dev_probe probe;
        memset(&props, 0, sizeof(props));
        memset(&probe, 0, sizeof(probe));
        int have_props = inner->get_properties(d, &props) == GT_OK;
        int have_probe = inner->get_probe && inner->get_probe(d, &probe) == GT_OK;
        gt_rec_set_device(&g_rec, d, have_props ? &props : NULL, have_probe ? &probe : NULL,
                          inner->name);
        uint32_t bits = (uint32_t)(probe.dmabuf & 0xff) | (uint32_t)(probe.peermem & 0xff) << 8 |
                        (uint32_t)(probe.cuda_dmabuf & 0xff) << 16;
        gt_rec_event(
            &g_rec, GTR_EV_PROBE, GTR_NO_COMM, (int16_t)d, GT_OK, probe.dmabuf_errno,
            (uint64_t)(have_probe && probe.advertised ? probe.advertised : props.ptr_support), 0, 0,
            bits);
    }
    gt_rec_event(&g_rec, GTR_EV_TRANSPORT, GTR_NO_COMM, -1, GT_OK, 0, (uint64_t)ndev, 0, 0, 0);
    g_devs_filled = 1;
}

/* ---- requests ----------------------------------------------------------- */

/* Heap requests of a comm: a spin lock, since only the never-expected
 * overflow path takes it, and only for a few instructions. */
static uint64_t g_heap_reqs; /* live heap requests, all comms (tests) */

uint64_t gt_shim_heap_reqs(void)
{
    return __atomic_load_n(&g_heap_reqs, __ATOMIC_RELAXED);
}

static void heap_lock(struct shim_comm *w)
{
    while (__atomic_exchange_n(&w->heap_lock, 1, __ATOMIC_ACQUIRE))
        ;
}

static void heap_unlock(struct shim_comm *w)
{
    __atomic_store_n(&w->heap_lock, 0, __ATOMIC_RELEASE);
}

/* At close: requests still in flight die with their comm. */
static void heap_free_all(struct shim_comm *w)
{
    for (struct shim_req *q = w->heap, *next; q; q = next) {
        next = q->hnext;
        __atomic_fetch_sub(&g_heap_reqs, 1, __ATOMIC_RELAXED);
        free(q);
    }
    w->heap = NULL;
}

static struct shim_req *req_get(struct shim_comm *w)
{
    for (unsigned i = 0; i < SHIM_POOL_WORDS; i++) {
        uint64_t bits = __atomic_load_n(&w->free_bits[i], __ATOMIC_RELAXED);
        while (bits) {
            unsigned b = (unsigned)__builtin_ctzll(bits);
            /* acquire: pairs with req_put's release, so the previous
             * user's writes to the wrapper are done before ours. */
            if (__atomic_compare_exchange_n(&w->free_bits[i], &bits, bits & ~(1ull << b), 1,
                                            __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                return &w->pool[i * 64 + b];
        }
    }
    /* Pool exhausted (NCCL exceeded its own request limit): heap, off the
     * fast path; never expected.  Listed on the comm, so that its close
     * frees the ones still in flight (gt_net.h: requests die with their
     * comm). */
    struct shim_req *q = malloc(sizeof(*q));
    if (!q)
        return NULL;
    q->index = SHIM_REQ_HEAP;
    heap_lock(w);
    q->hprev = NULL;
    q->hnext = w->heap;
    if (w->heap)
        w->heap->hprev = q;
    w->heap = q;
    heap_unlock(w);
    __atomic_fetch_add(&g_heap_reqs, 1, __ATOMIC_RELAXED);
    return q;
}

static void req_put(struct shim_comm *w, struct shim_req *q)
{
    if (q->index == SHIM_REQ_HEAP) {
        heap_lock(w);
        if (q->hprev)
            q->hprev->hnext = q->hnext;
        else
            w->heap = q->hnext;
        if (q->hnext)
            q->hnext->hprev = q->hprev;
        heap_unlock(w);
        __atomic_fetch_sub(&g_heap_reqs, 1, __ATOMIC_RELAXED);
        free(q);
        return;
    }
    /* release: our last reads of *q happen before the next owner's writes. */
    __atomic_fetch_or(&w->free_bits[q->index / 64], 1ull << (q->index % 64), __ATOMIC_RELEASE);
}

static struct shim_comm *comm_new(int kind, struct shim_slot *slot, const struct gt_net_ops *ops,
                                  int dev)
{
    struct shim_comm *w = malloc(sizeof(*w));
    if (!w)
        return NULL;
    w->kind = kind;
    w->inner = NULL;
    w->ops = ops;
    w->slot = slot;
    w->dev = dev;
    w->defer_free = 0;
    w->spare = NULL;
    w->heap = NULL;
    w->heap_lock = 0;
    for (unsigned i = 0; i < SHIM_POOL; i++)
        w->pool[i].index = (uint16_t)i;
    for (unsigned i = 0; i < SHIM_POOL_WORDS; i++)
        w->free_bits[i] = ~0ull;
    return w;
}

/* A wrapper for a comm that connect/accept may or may not return this call:
 * NCCL polls them, so one spare is kept per parent instead of a malloc per
 * poll. */
static struct shim_comm *spare_take(struct shim_comm **spare, int kind, struct shim_slot *slot,
                                    const struct gt_net_ops *ops, int dev)
{
    struct shim_comm *w = __atomic_exchange_n(spare, NULL, __ATOMIC_ACQUIRE);
    if (!w)
        return comm_new(kind, slot, ops, dev);
    w->kind = kind;
    w->slot = slot;
    w->ops = ops;
    w->dev = dev;
    return w;
}

static void spare_return(struct shim_comm **spare, struct shim_comm *w)
{
    struct shim_comm *none = NULL;
    if (!__atomic_compare_exchange_n(spare, &none, w, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        free(w);
}

/* ---- the wrapped operations -------------------------------------------- */

static const struct gt_net_ops *inner_ops(void)
{
    return __atomic_load_n(&g_inner, __ATOMIC_ACQUIRE);
}

static struct shim_slot *slot_for_init(uint64_t comm_id, int has_comm_id, int64_t now)
{
    /* Under g_lock.  The same communicator initialised twice shares its
     * slot; v<11 has one process record. */
    uint32_t n = __atomic_load_n(&g_rec.next_comm, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < n; i++) {
        struct shim_slot *s = &g_slots[i];
        /* refs first: only primaries have refs, and only this lock writes
         * them, so siblings' racily written fields are never read here. */
        if (s->refs > 0 && s->primary == s && s->c->has_comm_id == (uint32_t)has_comm_id &&
            s->c->comm_id == comm_id) {
            s->refs++;
            return s;
        }
    }
    uint32_t idx;
    struct gtr_comm *c = gt_rec_new_comm(&g_rec, comm_id, has_comm_id, g_abi_version, now, &idx);
    struct shim_slot *s = &g_slots[c ? idx : g_rec.ncomms - 1];
    if (!c)
        gt_rec_overflow_comm(&g_rec, g_abi_version, &idx);
    s->refs++;
    return s;
}

/* Cold path, under g_lock: says once that the recorder was lost to a
 * truncation (the guard kept the job alive, shim/sigbus.c), and once that
 * the application replaced our SIGBUS handler (a truncation would kill). */
static void check_guard_locked(void)
{
    if (!g_recp)
        return;
    if (!g_lost_warned && gt_rec_lost(&g_rec)) {
        g_lost_warned = 1;
        GT_WARN("flight recorder %s lost: the file was truncated while the job ran; recording "
                "continues into private memory no reader sees (the job is unaffected)",
                g_rec.path);
    }
    if (!g_guard_warned && !g_lost_warned && !gt_sigbus_installed()) {
        g_guard_warned = 1;
        GT_WARN("the application replaced gdrtrace's SIGBUS handler: truncating the flight "
                "recorder %s while the job runs would now kill the job",
                g_rec.path);
    }
}

/* The transport settings in force (NCCL's variables and our twins, noted by
 * the transport as it read them) into the recorder's settings section. */
static void record_transport_settings_locked(void)
{
    struct gt_setting noted[GTR_DEFAULT_SETTINGS];
    int n = gt_nccl_noted(noted, GTR_DEFAULT_SETTINGS);
    for (int i = 0; i < n; i++)
        gt_rec_set_setting(&g_rec, &noted[i]);
}

static gt_result shim_init(void **ctx, uint64_t comm_id, int has_comm_id,
                           const struct gt_comm_config *config, gt_logger_fn logger,
                           gt_profiler_fn profiler)
{
    const struct gt_net_ops *inner = inner_ops();
    struct shim_ctx *x = malloc(sizeof(*x));
    if (!x) /* S1 */
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                           "gdrtrace shim: init: out of memory");
    void *ictx = NULL;
    uint32_t mark = gt_net_fail_mark();
    gt_result res = inner->init(&ictx, comm_id, has_comm_id, config, logger, profiler);
    pthread_mutex_lock(&g_lock);
    if (res != GT_OK) {
        record_failure(NULL, 0xff, -1, res, mark, "init: result %d", res);
        pthread_mutex_unlock(&g_lock);
        free(x);
        return res;
    }
    check_guard_locked();
    int64_t now = gt_rec_now_ns(&g_rec);
    if (g_active_inits++ == 0)
        gt_rec_reopen(&g_rec);
    fill_devices_locked(inner);
    record_transport_settings_locked();
    x->inner = ictx;
    x->ops = inner;
    x->slot = slot_for_init(comm_id, has_comm_id != 0, now);
    x->spare = NULL;
    gt_rec_event(&g_rec, GTR_EV_INIT, x->slot->idx, -1, GT_OK, 0, comm_id, 0, 0,
                 (uint32_t)g_abi_version);
    pthread_mutex_unlock(&g_lock);
    *ctx = x;
    return GT_OK;
}

static gt_result shim_finalize(void *ctx)
{
    struct shim_ctx *x = ctx;
    uint32_t mark = gt_net_fail_mark();
    gt_result res = x->ops->finalize(x->inner);
    pthread_mutex_lock(&g_lock);
    struct shim_slot *p = x->slot;
    gt_rec_event(&g_rec, GTR_EV_FINALIZE, p->idx, -1, res, 0, p->c->comm_id, 0, 0, 0);
    if (res != GT_OK)
        record_failure(p, 0xff, -1, res, mark, "finalize: result %d", res);
    if (p->refs > 0 && --p->refs == 0 && !p->shared) {
        int64_t now = gt_rec_now_ns(&g_rec);
        for (struct shim_slot *s = p; s; s = __atomic_load_n(&s->sibling, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&s->c->finalize_ns, now, __ATOMIC_RELAXED);
            __atomic_store_n(&s->c->state, GTR_COMM_FINALIZED, __ATOMIC_RELEASE);
        }
    }
    if (g_active_inits > 0 && --g_active_inits == 0)
        gt_rec_close(&g_rec);
    check_guard_locked();
    pthread_mutex_unlock(&g_lock);
    free(x->spare);
    free(x);
    return res;
}

static gt_result shim_devices(int *ndev)
{
    return inner_ops()->devices(ndev);
}

static gt_result shim_get_properties(int dev, struct gt_props *props)
{
    return inner_ops()->get_properties(dev, props);
}

static gt_result shim_get_probe(int dev, struct gt_dev_probe *probe)
{
    return inner_ops()->get_probe(dev, probe);
}

static gt_result shim_set_net_attr(void *ctx, void *attr)
{
    struct shim_ctx *x = ctx;
    return x->ops->set_net_attr(x->inner, attr);
}

static gt_result shim_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
    struct shim_ctx *x = ctx;
    struct shim_comm *w = comm_new(SHIM_LISTEN, x->slot, x->ops, dev);
    if (!w) /* S1 */
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                           "gdrtrace shim: listen: out of memory");
    void *ilc = NULL;
    uint32_t mark = gt_net_fail_mark();
    gt_result res = x->ops->listen(x->inner, dev, handle, &ilc);
    if (res != GT_OK || !ilc) {
        free(w);
        *listen_comm = ilc;
        if (res != GT_OK)
            record_failure(x->slot, 0xff, dev, res, mark, "listen(dev %d): result %d", dev, res);
        return res;
    }
    w->inner = ilc;
    set_comm_dev(x->slot, dev);
    ctr_add_shared(&x->slot->c->listen_count, 1);
    gt_rec_event(&g_rec, GTR_EV_LISTEN, x->slot->idx, (int16_t)dev, GT_OK, 0, 0, 0, 0, 0);
    *listen_comm = w;
    return GT_OK;
}

static gt_result shim_connect(void *ctx, int dev, void *handle, void **send_comm,
                              void **send_dev_comm)
{
    struct shim_ctx *x = ctx;
    struct shim_comm *w = spare_take(&x->spare, SHIM_SEND, x->slot, x->ops, dev);
    if (!w) {
        *send_comm = NULL; /* S1: "not yet" */
        return GT_OK;
    }
    void *isc = NULL;
    uint32_t mark = gt_net_fail_mark();
    gt_result res = x->ops->connect(x->inner, dev, handle, &isc, send_dev_comm);
    if (res != GT_OK || !isc) {
        spare_return(&x->spare, w);
        *send_comm = NULL;
        if (res != GT_OK)
            record_failure(x->slot, 0xff, dev, res, mark, "connect(dev %d): result %d", dev, res);
        return res;
    }
    w->inner = isc;
    set_comm_dev(x->slot, dev);
    ctr_add_shared(&x->slot->c->connect_count, 1);
    gt_rec_event(&g_rec, GTR_EV_CONNECT, x->slot->idx, (int16_t)dev, GT_OK, 0, 0, 0, 0, 0);
    gt_rec_host_sample(&g_rec); /* host pressure at connection setup */
    *send_comm = w;
    return GT_OK;
}

static gt_result shim_accept(void *listen_comm, void **recv_comm, void **recv_dev_comm)
{
    struct shim_comm *l = listen_comm;
    struct shim_comm *w = spare_take(&l->spare, SHIM_RECV, l->slot, l->ops, l->dev);
    if (!w) {
        *recv_comm = NULL; /* S1: "not yet" */
        return GT_OK;
    }
    void *irc = NULL;
    uint32_t mark = gt_net_fail_mark();
    gt_result res = l->ops->accept(l->inner, &irc, recv_dev_comm);
    if (res != GT_OK || !irc) {
        spare_return(&l->spare, w);
        *recv_comm = NULL;
        if (res != GT_OK)
            record_failure(l->slot, 0xff, l->dev, res, mark, "accept(dev %d): result %d", l->dev,
                           res);
        return res;
    }
    w->inner = irc;
    /* A device-offload receiver (non-NULL device handle) gets irecv_consumed
     * after test: keep request wrappers until then. */
    w->defer_free = recv_dev_comm && *recv_dev_comm;
    ctr_add_shared(&l->slot->c->accept_count, 1);
    gt_rec_event(&g_rec, GTR_EV_ACCEPT, l->slot->idx, (int16_t)l->dev, GT_OK, 0, 0, 0, 0, 0);
    gt_rec_host_sample(&g_rec); /* host pressure at connection setup */
    *recv_comm = w;
    return GT_OK;
}

static int asked_from_call(int type, int fd, int is_dmabuf_call)
{
    return gt_asked_of(type, is_dmabuf_call ? fd : -1);
}

static gt_result reg_common(struct shim_comm *w, void *data, size_t size, int type, uint64_t offset,
                            int fd, int is_dmabuf, void **mhandle, struct gt_reg_report *report)
{
    struct shim_mr *m = malloc(sizeof(*m));
    if (!m) /* S1 */
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_HOST_REG_FAILED, ENOMEM,
                           "gdrtrace shim: registration: out of memory");
    struct gt_reg_report rep;
    memset(&rep, 0, sizeof(rep));
    /* Sentinels: an inner plugin that does not report leaves them, and we
     * infer (asked from the call, method from success). */
    rep.asked = -1;
    rep.method = -1;
    void *imh = NULL;
    uint32_t mark = gt_net_fail_mark();
    uint64_t t0 = gt_clock_now();
    gt_result res = is_dmabuf
                        ? w->ops->reg_mr_dmabuf(w->inner, data, size, type, offset, fd, &imh, &rep)
                        : w->ops->reg_mr(w->inner, data, size, type, &imh, &rep);
    uint64_t t1 = gt_clock_now();
    /* A failure's reason and errno are the transport's description (F5);
     * the report's say why a success fell back. */
    struct gt_net_failure f = {.reason = GT_REASON_NONE};
    if (res != GT_OK) {
        gt_net_failure_since(mark, &f);
        gt_net_fail(res, f.reason, f.err, "%s", f.text); /* still this call's (F1) */
    }
    int asked = rep.asked;
    if (asked < 0 || asked >= GTR_ASKED_COUNT)
        asked = asked_from_call(type, fd, is_dmabuf);
    int method = rep.method;
    if (res != GT_OK)
        method = GT_METHOD_FAILED;
    else if (method < 0 || method >= GT_METHOD_FAILED)
        method = gt_method_assumed(asked);
    if (report) {
        *report = rep;
        report->asked = asked;
        report->method = method;
    }
    uint64_t ns = gt_clock_delta_ns(t1 - t0);
    struct shim_slot *p = w->slot;
    struct gtr_comm *c = rec_comm(p);
    ctr_add_shared(&c->reg_count[asked][method], 1);
    ctr_add_shared(&c->reg_bytes[asked][method], size);
    if (rep.exported_fd)
        ctr_add_shared(&c->reg_exported_fd, 1);
    if (rep.cache_hit)
        ctr_add_shared(&c->reg_cache_hits, 1);
    gt_hist_add_shared(&c->hist[GTR_OP_REG], ns);
    gt_rec_event(&g_rec, GTR_EV_REG, p->idx, (int16_t)w->dev, res, res != GT_OK ? f.err : rep.err,
                 (uint64_t)data, size, ns, (uint32_t)(asked << 8 | method));
    int reason = rep.reason;
    if (rep.fell_back) {
        ctr_add_shared(&c->fallback_count, 1);
        ctr_add_shared(gtr_reason_counter(c, GTR_FALLBACKS, gtr_reason_slot(reason)), 1);
        __atomic_store_n(&c->fallback_last_errno, rep.err, __ATOMIC_RELAXED);
        __atomic_store_n(&c->fallback_last_reason, reason, __ATOMIC_RELAXED);
        gt_rec_event(&g_rec, GTR_EV_FALLBACK, p->idx, (int16_t)w->dev, res, rep.err, (uint64_t)data,
                     size, 0, (uint32_t)reason);
    }
    if (res != GT_OK) {
        record_error(p, GTR_OP_REG, w->dev, res, f.err, f.reason,
                     "%s(%s, %zu bytes%s): result %d: %s", is_dmabuf ? "regMrDmaBuf" : "regMr",
                     gt_asked_name(asked), size, is_dmabuf && fd >= 0 ? ", fd" : "", res, f.text);
        free(m);
        *mhandle = NULL; /* a failed call's handle is never used; ours must not be */
        return res;
    }
    if (asked == GT_ASKED_HOST) /* host memory in the data path: staging */
        gt_rec_host_staging(&g_rec, (int64_t)size);
    m->inner = imh;
    m->addr = (uint64_t)data;
    m->size = size;
    m->asked = (uint8_t)asked;
    m->method = (uint8_t)method;
    *mhandle = m;
    return GT_OK;
}

static gt_result shim_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle,
                             struct gt_reg_report *report)
{
    return reg_common(comm, data, size, type, 0, -1, 0, mhandle, report);
}

static gt_result shim_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                                    int fd, void **mhandle, struct gt_reg_report *report)
{
    return reg_common(comm, data, size, type, offset, fd, 1, mhandle, report);
}

static gt_result shim_dereg_mr(void *comm, void *mhandle)
{
    struct shim_comm *w = comm;
    struct shim_mr *m = mhandle;
    uint32_t mark = gt_net_fail_mark();
    uint64_t t0 = gt_clock_now();
    gt_result res = w->ops->dereg_mr(w->inner, m ? m->inner : NULL);
    uint64_t ns = gt_clock_delta_ns(gt_clock_now() - t0);
    struct shim_slot *p = w->slot;
    struct gtr_comm *c = rec_comm(p);
    ctr_add_shared(&c->dereg_count, 1);
    gt_hist_add_shared(&c->hist[GTR_OP_DEREG], ns);
    gt_rec_event(&g_rec, GTR_EV_DEREG, p->idx, (int16_t)w->dev, res, 0, m ? m->addr : 0,
                 m ? m->size : 0, ns, m ? m->method : GT_METHOD_FAILED);
    if (res != GT_OK) {
        /* NCCL will not use the handle again; keep our wrapper alive anyway
         * in case it retries the deregistration. */
        record_failure(p, GTR_OP_DEREG, w->dev, res, mark, "deregMr(%zu bytes): result %d",
                       m ? (size_t)m->size : 0, res);
        return res;
    }
    if (m && m->asked == GT_ASKED_HOST)
        gt_rec_host_staging(&g_rec, -(int64_t)m->size);
    free(m);
    return GT_OK;
}

static inline void *mh_inner(void *mhandle)
{
    return mhandle ? ((struct shim_mr *)mhandle)->inner : NULL;
}

static gt_result shim_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
                            void *phandle, void **request)
{
    struct shim_comm *w = send_comm;
    struct shim_req *q = req_get(w);
    if (__builtin_expect(!q, 0)) {
        *request = NULL; /* S1: "no slot, retry" */
        return GT_OK;
    }
    void *ireq = NULL;
    uint32_t mark = gt_net_fail_mark();
    uint64_t t0 = gt_clock_now();
    gt_result res = w->ops->isend(w->inner, data, size, tag, mh_inner(mhandle), phandle, &ireq);
    if (__builtin_expect(res != GT_OK, 0)) {
        req_put(w, q);
        *request = NULL;
        record_failure(w->slot, GTR_OP_SEND, w->dev, res, mark, "isend(%zu bytes): result %d", size,
                       res);
        return res;
    }
    if (!ireq) {
        req_put(w, q);
        *request = NULL;
        return GT_OK;
    }
    q->inner = ireq;
    q->comm = w;
    q->t0 = t0;
    q->bytes = size;
    q->op = GTR_OP_SEND;
    q->n = 1;
    q->tag = tag;
    struct shim_slot *s = dp_slot(w->slot);
    ctr_add_dp(s, &s->c->send_posted, 1);
    *request = q;
    return GT_OK;
}

static gt_result shim_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
                            void **mhandles, void **phandles, void **request)
{
    struct shim_comm *w = recv_comm;
    if (__builtin_expect(n < 0 || n > SHIM_MAX_RECVS, 0)) {
        /* S1: more sub-receives than NCCL ever posts (<= 8); refused before
         * the inner transport sees them, since we could not unwrap them. */
        record_error(w->slot, GTR_OP_RECV, w->dev, GT_INTERNAL_ERROR, EINVAL,
                     GT_REASON_BAD_ARGUMENT, "irecv(n=%d): more than %d sub-receives", n,
                     SHIM_MAX_RECVS);
        return gt_net_fail(GT_INTERNAL_ERROR, GT_REASON_BAD_ARGUMENT, EINVAL,
                           "gdrtrace shim: irecv(n=%d): more than %d sub-receives", n,
                           SHIM_MAX_RECVS);
    }
    struct shim_req *q = req_get(w);
    if (__builtin_expect(!q, 0)) {
        *request = NULL;
        return GT_OK;
    }
    void *imh[SHIM_MAX_RECVS];
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++) {
        imh[i] = mhandles ? mh_inner(mhandles[i]) : NULL;
        bytes += sizes ? sizes[i] : 0;
    }
    /* NCCL may preset *request (GT_NET_OPTIONAL_RECV_COMPLETION): the inner
     * transport must see it. */
    void *ireq = *request;
    uint32_t mark = gt_net_fail_mark();
    uint64_t t0 = gt_clock_now();
    gt_result res =
        w->ops->irecv(w->inner, n, data, sizes, tags, mhandles ? imh : NULL, phandles, &ireq);
    if (__builtin_expect(res != GT_OK, 0)) {
        req_put(w, q);
        *request = NULL;
        record_failure(w->slot, GTR_OP_RECV, w->dev, res, mark, "irecv(n=%d): result %d", n, res);
        return res;
    }
    if (!ireq) {
        req_put(w, q);
        *request = NULL;
        return GT_OK;
    }
    q->inner = ireq;
    q->comm = w;
    q->t0 = t0;
    q->bytes = bytes;
    q->op = GTR_OP_RECV;
    q->n = (uint8_t)n;
    q->tag = n > 0 && tags ? tags[0] : 0;
    struct shim_slot *s = dp_slot(w->slot);
    ctr_add_dp(s, &s->c->recv_posted, 1);
    *request = q;
    return GT_OK;
}

static gt_result shim_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
                             void **request)
{
    struct shim_comm *w = recv_comm;
    if (__builtin_expect(n < 0 || n > SHIM_MAX_RECVS, 0)) {
        record_error(w->slot, GTR_OP_FLUSH, w->dev, GT_INTERNAL_ERROR, EINVAL,
                     GT_REASON_BAD_ARGUMENT, "iflush(n=%d): more than %d sub-receives", n,
                     SHIM_MAX_RECVS);
        return gt_net_fail(GT_INTERNAL_ERROR, GT_REASON_BAD_ARGUMENT, EINVAL,
                           "gdrtrace shim: iflush(n=%d): more than %d sub-receives", n,
                           SHIM_MAX_RECVS);
    }
    struct shim_req *q = req_get(w);
    if (__builtin_expect(!q, 0)) /* S1: a NULL flush request would mean "done" */
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                           "gdrtrace shim: iflush: no request wrapper left");
    void *imh[SHIM_MAX_RECVS];
    for (int i = 0; i < n; i++)
        imh[i] = mhandles ? mh_inner(mhandles[i]) : NULL;
    void *ireq = NULL;
    uint32_t mark = gt_net_fail_mark();
    uint64_t t0 = gt_clock_now();
    gt_result res = w->ops->iflush(w->inner, n, data, sizes, mhandles ? imh : NULL, &ireq);
    if (__builtin_expect(res != GT_OK, 0)) {
        req_put(w, q);
        *request = NULL;
        record_failure(w->slot, GTR_OP_FLUSH, w->dev, res, mark, "iflush(n=%d): result %d", n, res);
        return res;
    }
    if (!ireq) { /* nothing to flush */
        req_put(w, q);
        *request = NULL;
        return GT_OK;
    }
    q->inner = ireq;
    q->comm = w;
    q->t0 = t0;
    q->bytes = 0;
    q->op = GTR_OP_FLUSH;
    q->n = (uint8_t)n;
    q->tag = 0;
    *request = q;
    return GT_OK;
}

static gt_result shim_test(void *request, int *done, int *sizes)
{
    struct shim_req *q = request;
    struct shim_comm *w = q->comm;
    gt_rec_host_tick(&g_rec);
    uint32_t mark = gt_net_fail_mark();
    gt_result res = w->ops->test(q->inner, done, sizes);
    if (__builtin_expect(res != GT_OK, 0)) {
        record_failure(w->slot, q->op, w->dev, res, mark, "test(%s): result %d",
                       q->op == GTR_OP_SEND   ? "send"
                       : q->op == GTR_OP_RECV ? "recv"
                                              : "flush",
                       res);
        return res;
    }
    if (!*done)
        return GT_OK;
    uint64_t ns = gt_clock_delta_ns(gt_clock_now() - q->t0);
    struct shim_slot *s = dp_slot(w->slot);
    struct gtr_comm *c = s->c;
    uint64_t bytes = q->bytes;
    switch (q->op) {
    case GTR_OP_SEND:
        ctr_add_dp(s, &c->send_count, 1);
        ctr_add_dp(s, &c->send_bytes, bytes);
        hist_dp(s, GTR_OP_SEND, ns);
        if (__builtin_expect(g_rec.events_all, 0))
            gt_rec_event(&g_rec, GTR_EV_SEND, s->idx, (int16_t)w->dev, GT_OK, 0, bytes, 0, ns,
                         (uint32_t)q->tag);
        break;
    case GTR_OP_RECV:
        if (sizes) {
            bytes = 0;
            for (int i = 0; i < q->n; i++)
                bytes += sizes[i] > 0 ? (uint64_t)sizes[i] : 0;
        }
        /* recv_count counts messages (sub-receives), so it matches the
         * peer's send_count; hist[RECV] counts completed requests. */
        ctr_add_dp(s, &c->recv_count, q->n);
        ctr_add_dp(s, &c->recv_bytes, bytes);
        hist_dp(s, GTR_OP_RECV, ns);
        if (__builtin_expect(g_rec.events_all, 0))
            gt_rec_event(&g_rec, GTR_EV_RECV, s->idx, (int16_t)w->dev, GT_OK, 0, bytes, 0, ns,
                         (uint32_t)q->tag);
        break;
    default:
        ctr_add_dp(s, &c->flush_count, 1);
        hist_dp(s, GTR_OP_FLUSH, ns);
        if (__builtin_expect(g_rec.events_all, 0))
            gt_rec_event(&g_rec, GTR_EV_FLUSH, s->idx, (int16_t)w->dev, GT_OK, 0, 0, 0, ns, 0);
        break;
    }
    if (!(q->op == GTR_OP_RECV && w->defer_free))
        req_put(w, q);
    return GT_OK;
}

static gt_result shim_irecv_consumed(void *recv_comm, int n, void *request)
{
    struct shim_comm *w = recv_comm;
    struct shim_req *q = request;
    gt_result res = w->ops->irecv_consumed(w->inner, n, q ? q->inner : NULL);
    if (q && w->defer_free)
        req_put(w, q);
    return res;
}

static gt_result close_common(struct shim_comm *w, gt_result (*fn)(void *), uint16_t ev,
                              const char *what)
{
    uint32_t mark = gt_net_fail_mark();
    gt_result res = fn(w->inner);
    struct shim_slot *p = w->slot;
    ctr_add_shared(&p->c->close_count, 1);
    gt_rec_event(&g_rec, ev, p->idx, (int16_t)w->dev, res, 0, 0, 0, 0, 0);
    /* the data-path threads' last CPU before they exit (rec_host.h) */
    gt_rec_host_sample_aged(&g_rec, 10 * 1000 * 1000);
    if (res != GT_OK)
        record_failure(p, 0xff, w->dev, res, mark, "%s: result %d", what, res);
    heap_free_all(w);
    free(w->spare);
    free(w);
    return res;
}

static gt_result shim_close_send(void *send_comm)
{
    struct shim_comm *w = send_comm;
    return close_common(w, w->ops->close_send, GTR_EV_CLOSE_SEND, "closeSend");
}

static gt_result shim_close_recv(void *recv_comm)
{
    struct shim_comm *w = recv_comm;
    return close_common(w, w->ops->close_recv, GTR_EV_CLOSE_RECV, "closeRecv");
}

static gt_result shim_close_listen(void *listen_comm)
{
    struct shim_comm *w = listen_comm;
    return close_common(w, w->ops->close_listen, GTR_EV_CLOSE_LISTEN, "closeListen");
}

static gt_result shim_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle)
{
    struct shim_comm *w = comm;
    return w->ops->get_device_mr(w->inner, mh_inner(mhandle), dptr_mhandle);
}

static struct gt_net_ops g_ops = {
    .name = "gdrtrace",
    .init = shim_init,
    .devices = shim_devices,
    .get_properties = shim_get_properties,
    .listen = shim_listen,
    .connect = shim_connect,
    .accept = shim_accept,
    .reg_mr = shim_reg_mr,
    .reg_mr_dmabuf = shim_reg_mr_dmabuf,
    .dereg_mr = shim_dereg_mr,
    .isend = shim_isend,
    .irecv = shim_irecv,
    .iflush = shim_iflush,
    .test = shim_test,
    .close_send = shim_close_send,
    .close_recv = shim_close_recv,
    .close_listen = shim_close_listen,
    .get_device_mr = shim_get_device_mr,
    .irecv_consumed = shim_irecv_consumed,
    .finalize = shim_finalize,
    .set_net_attr = shim_set_net_attr,
    .get_probe = shim_get_probe,
};

/* ---- lifecycle ---------------------------------------------------------- */

static void at_exit(void)
{
    pthread_mutex_lock(&g_lock);
    if (g_recp) {
        gt_rec_close(&g_rec);
        check_guard_locked();
    }
    pthread_mutex_unlock(&g_lock);
}

/* A forked child must not write into its parent's file: swap the shared
 * mapping for private anonymous memory at the same address, so wrappers the
 * child inherited keep working and record into nothing. */
static void at_fork_child(void)
{
    if (g_recp && g_rec.base)
        mmap(g_rec.base, g_rec.size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    pthread_mutex_init(&g_lock, NULL);
    pthread_mutex_init(&g_callee_lock, NULL);
}

void gt_shim_set_abi_version(int abi_version)
{
    pthread_mutex_lock(&g_lock);
    g_abi_version = abi_version;
    if (g_recp)
        gt_rec_set_abi_version(&g_rec, abi_version);
    pthread_mutex_unlock(&g_lock);
}

static int open_locked(const struct gt_rec_config *cfg)
{
    char err[512];
    int e = gt_rec_open(&g_rec, cfg, err, sizeof(err));
    if (e) {
        GT_WARN("flight recorder disabled, running untraced: %s", err);
        return e;
    }
    g_slots = calloc(g_rec.ncomms, sizeof(*g_slots));
    if (!g_slots) {
        GT_WARN("flight recorder disabled, running untraced: no memory for %u comm slots",
                g_rec.ncomms);
        gt_rec_close(&g_rec);
        unlink(g_rec.path);
        gt_rec_unmap(&g_rec);
        return ENOMEM;
    }
    for (uint32_t i = 0; i < g_rec.ncomms; i++) {
        g_slots[i].c = &g_rec.comms[i];
        g_slots[i].idx = (uint16_t)i;
        g_slots[i].primary = &g_slots[i];
    }
    uint32_t idx;
    g_slots[g_rec.ncomms - 1].shared = 1;
    gt_rec_overflow_comm(&g_rec, g_abi_version, &idx); /* active from the start: always valid */
    if (g_abi_version)
        gt_rec_set_abi_version(&g_rec, g_abi_version);
    if (!g_atexit_done) {
        atexit(at_exit);
        pthread_atfork(NULL, NULL, at_fork_child);
        g_atexit_done = 1;
    }
    __atomic_store_n(&g_recp, &g_rec, __ATOMIC_RELEASE);
    return 0;
}

/* ---- foreign calls and refusals (issue 23, issue 19.1) ---------------- */

static uint64_t g_call_serial;

/* The sink of common/callout.h: CALLING before, RETURNED after.  A crash in
 * between leaves CALLING as the caller's last event (the reader's proof). */
static uint64_t sink_calling(int site, const char *kind, const char *path, int version, int dev)
{
    struct gt_recorder *r = gt_shim_recorder();
    if (!r)
        return 0;
    pthread_mutex_lock(&g_callee_lock);
    uint64_t callee = gt_rec_callee(r, kind, path, version);
    pthread_mutex_unlock(&g_callee_lock);
    uint64_t serial = __atomic_add_fetch(&g_call_serial, 1, __ATOMIC_RELAXED);
    gt_rec_event(r, GTR_EV_CALLING, GTR_NO_COMM, (int16_t)dev, 0, 0, (uint64_t)site, serial, callee,
                 (uint32_t)version);
    return serial;
}

static void sink_returned(uint64_t token, int site, int result)
{
    struct gt_recorder *r = gt_shim_recorder();
    if (r)
        gt_rec_event(r, GTR_EV_RETURNED, GTR_NO_COMM, -1, result, 0, (uint64_t)site, token, 0, 0);
}

static const struct gt_callout_sink g_sink = {.calling = sink_calling, .returned = sink_returned};

static void open_cfg(gt_logger_fn logger, const struct gt_rec_config *cfg)
{
    if (logger)
        gt_log_set_logger(logger);
    if (gt_env_bool("GDRTRACE_DISABLE", 0))
        return;
    pthread_mutex_lock(&g_lock);
    if (!g_failed && !g_recp && open_locked(cfg) != 0)
        g_failed = 1;
    if (g_recp)
        gt_callout_set_sink(&g_sink);
    pthread_mutex_unlock(&g_lock);
}

void gt_shim_open(gt_logger_fn logger)
{
    open_cfg(logger, NULL);
}

void gt_shim_refused(int asked, const char *name, gt_result res, int reason, int err,
                     const char *why)
{
    pthread_mutex_lock(&g_lock);
    if (g_recp) {
        gt_rec_set_transport(&g_rec, name, why);
        gt_rec_event(&g_rec, GTR_EV_REFUSED, GTR_NO_COMM, -1, res, err, (uint64_t)asked, 0, 0,
                     (uint32_t)reason);
        /* S5: nothing initialised, nothing more to record until NCCL tries
         * again (shim_init reopens). */
        if (g_active_inits == 0)
            gt_rec_close(&g_rec);
    }
    pthread_mutex_unlock(&g_lock);
}

const struct gt_net_ops *gt_shim_wrap_cfg(const struct gt_net_ops *inner, const char *transport_why,
                                          gt_logger_fn logger, const struct gt_rec_config *cfg)
{
    if (!inner)
        return inner;
    open_cfg(logger, cfg);
    pthread_mutex_lock(&g_lock);
    if (!g_recp) {
        pthread_mutex_unlock(&g_lock);
        return inner;
    }
    if (inner != g_inner) {
        gt_rec_set_transport(&g_rec, inner->name, transport_why);
        g_ops.name = inner->name;
        g_devs_filled = 0;
        __atomic_store_n(&g_inner, inner, __ATOMIC_RELEASE);
    }
    fill_devices_locked(inner);
    pthread_mutex_unlock(&g_lock);
    return &g_ops;
}

const struct gt_net_ops *gt_shim_wrap(const struct gt_net_ops *inner, const char *transport_why,
                                      gt_logger_fn logger)
{
    return gt_shim_wrap_cfg(inner, transport_why, logger, NULL);
}
