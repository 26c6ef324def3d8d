/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core.c — process-wide plugin state: reference count, transport selection
 * (GDRTRACE_TRANSPORT), the anchor context and the shim wrapping.  See core.h
 * for the contract.
 *
 * Invariants:
 *  1. g.refs > 0  <=>  g.raw != NULL and the anchor context is initialised.
 *  2. g_ops (read lock-free by the data path) only ever holds NULL or a
 *     pointer to a table with static lifetime (a transport's, or what
 *     gt_shim_wrap returned, which the shim keeps for the process).
 *  3. Every field of g except g_ops is read and written under g.lock.
 */
#include "plugin/core.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/env.h"
#include "common/log.h"
#include "plugin/gpumem/gpumem.h"
#include "shim/shim.h"

/* The transports, each from its own folder; every one is always linked in
 * (a test that links core.c defines stand-ins for all three). */
extern const struct gt_net_ops gt_sock_ops;
extern const struct gt_net_ops gt_ib_ops;
extern const struct gt_net_ops gt_inner_ops;

static struct {
    pthread_mutex_t lock;
    int refs;
    int transport;                /* enum gt_transport_id */
    const struct gt_net_ops *raw; /* the chosen transport */
    void *anchor;                 /* raw->init context held while refs > 0 */
    int abi_told;                 /* last ABI version given to the shim */
    char why[384];
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const struct gt_net_ops *g_ops;

const char *gt_core_transport_name(int id)
{
    return gt_transport_name(id);
}

/* GDRTRACE_GPUMEM=1: sock under the GPU-memory validation layer, which
 * refuses to start next to an active RDMA port (plugin/gpumem). */
static int gpumem_on(void)
{
    return gt_settings_get()->gpumem.on;
}

static const struct gt_net_ops *transport_ops(int id)
{
    switch (id) {
    case GT_TRANSPORT_IB:
        return &gt_ib_ops;
    case GT_TRANSPORT_SOCK:
        return gpumem_on() ? gt_gpumem_wrap(&gt_sock_ops) : &gt_sock_ops;
    case GT_TRANSPORT_INNER:
        return &gt_inner_ops;
    default:
        return NULL;
    }
}

/* Initialises transport `id` as the anchor and counts its devices.  On
 * success *ctx holds the anchor; otherwise `why` says what failed and *fail
 * the transport's reason and errno (for the recorded refusal). */
static gt_result try_transport(int id, gt_logger_fn logger, gt_profiler_fn profiler, void **ctx,
                               int *ndev, char *why, size_t whylen, struct gt_net_failure *fail)
{
    const struct gt_net_ops *ops = transport_ops(id);
    const char *name = gt_core_transport_name(id);
    *ctx = NULL;
    *ndev = 0;
    /* The transport says why it cannot serve (gt_net.h, failure rule F3):
     * "ib unavailable (ib: no active RDMA port)" beats an error number. */
    struct gt_net_failure f;
    uint32_t mark = gt_net_fail_mark();
    gt_result rc = ops->init(ctx, 0, 0, NULL, logger, profiler);
    if (rc != GT_OK) {
        int said = gt_net_failure_since(mark, &f);
        *fail = f;
        if (said)
            snprintf(why, whylen, "%s unavailable (%s)", name, f.text);
        else
            snprintf(why, whylen, "%s init failed (error %d)", name, (int)rc);
        return rc;
    }
    mark = gt_net_fail_mark();
    rc = ops->devices(ndev);
    if (rc != GT_OK || *ndev < 1) {
        int said = rc != GT_OK && gt_net_failure_since(mark, &f);
        *fail = said ? f
                     : (struct gt_net_failure){.reason = id == GT_TRANSPORT_IB
                                                             ? GT_REASON_NO_RDMA_DEVICE
                                                             : GT_REASON_TRANSPORT_ERROR};
        if (said)
            snprintf(why, whylen, "%s could not list devices (%s)", name, f.text);
        else if (rc != GT_OK)
            snprintf(why, whylen, "%s could not list devices (error %d)", name, (int)rc);
        else
            snprintf(why, whylen, "%s found no usable device", name);
        ops->finalize(*ctx);
        *ctx = NULL;
        return rc != GT_OK ? rc : GT_SYSTEM_ERROR;
    }
    struct gt_props p;
    memset(&p, 0, sizeof(p));
    const char *dev0 = "?";
    if (ops->get_properties(0, &p) == GT_OK && p.name)
        dev0 = p.name;
    snprintf(why, whylen, "%s has %d device%s (first: %s)", name, *ndev, *ndev == 1 ? "" : "s",
             dev0);
    return GT_OK;
}

/* Chooses and initialises the transport; fills g.raw, g.anchor, g.why.  On
 * failure g.why says why and *asked / *fail what was refused. */
static gt_result select_transport(gt_logger_fn logger, gt_profiler_fn profiler, int *asked,
                                  struct gt_net_failure *fail)
{
    gt_env_check_unknown(); /* a misspelt variable is said, not silently unused */
    int want = gt_settings_get()->transport;
    char why_ib[160] = "", why[160] = "";
    int ndev = 0;
    void *ctx = NULL;
    gt_result rc;

    *asked = want;
    if (want != GT_TRANSPORT_AUTO && want != GT_TRANSPORT_SOCK && gpumem_on()) {
        snprintf(g.why, sizeof(g.why),
                 "GDRTRACE_GPUMEM=1 is a layer over the sock transport, but GDRTRACE_TRANSPORT=%s",
                 gt_core_transport_name(want));
        fail->reason = GT_REASON_TRANSPORT_ERROR;
        fail->err = 0;
        snprintf(fail->text, sizeof(fail->text), "GDRTRACE_GPUMEM=1 needs sock, not %s",
                 gt_core_transport_name(want));
        GT_WARN("%s; the plugin is disabled for this process", g.why);
        return GT_INVALID_USAGE;
    }
    if (want != GT_TRANSPORT_AUTO) {
        rc = try_transport(want, logger, profiler, &ctx, &ndev, why, sizeof(why), fail);
        if (rc != GT_OK) {
            snprintf(g.why, sizeof(g.why), "GDRTRACE_TRANSPORT=%s: %s",
                     gt_core_transport_name(want), why);
            /* The operator asked for this transport: quietly using another
             * would falsify the A/B run they are doing. */
            GT_WARN("GDRTRACE_TRANSPORT=%s: %s; the plugin is disabled for this process (NCCL "
                    "falls back to its internal transports)",
                    gt_core_transport_name(want), why);
            return rc;
        }
        g.transport = want;
        snprintf(g.why, sizeof(g.why), "GDRTRACE_TRANSPORT=%s set by the operator; %s",
                 gt_core_transport_name(want), why);
        goto chosen;
    }
    /* auto: ib when it initialises and has an active device, else sock. */
    if (gpumem_on()) {
        rc =
            try_transport(GT_TRANSPORT_SOCK, logger, profiler, &ctx, &ndev, why, sizeof(why), fail);
        if (rc != GT_OK) {
            snprintf(g.why, sizeof(g.why), "GDRTRACE_GPUMEM=1: %s", why);
            GT_WARN("GDRTRACE_GPUMEM=1: %s; the plugin is disabled for this process", why);
            return rc;
        }
        g.transport = GT_TRANSPORT_SOCK;
        snprintf(g.why, sizeof(g.why),
                 "GDRTRACE_GPUMEM=1: sock under the GPU-memory validation layer (emulated); %s",
                 why);
        goto chosen;
    }
    rc =
        try_transport(GT_TRANSPORT_IB, logger, profiler, &ctx, &ndev, why_ib, sizeof(why_ib), fail);
    if (rc == GT_OK) {
        g.transport = GT_TRANSPORT_IB;
        snprintf(g.why, sizeof(g.why), "auto: %s", why_ib);
        goto chosen;
    }
    rc = try_transport(GT_TRANSPORT_SOCK, logger, profiler, &ctx, &ndev, why, sizeof(why), fail);
    if (rc != GT_OK) {
        snprintf(g.why, sizeof(g.why), "auto: %s; %s", why_ib, why);
        GT_WARN("no usable transport: %s; %s; the plugin is disabled for this process", why_ib,
                why);
        return rc;
    }
    g.transport = GT_TRANSPORT_SOCK;
    snprintf(g.why, sizeof(g.why), "auto: %s, so sock; %s", why_ib, why);
chosen:
    g.raw = transport_ops(g.transport);
    g.anchor = ctx;
    return GT_OK;
}

gt_result gt_core_acquire(int abi_version, gt_logger_fn logger, gt_profiler_fn profiler,
                          const struct gt_net_ops **ops)
{
    gt_result rc = GT_OK;
    pthread_mutex_lock(&g.lock);
    gt_log_set_logger(logger);
    if (g.refs == 0) {
        /* The settings snapshot is taken here at the latest (the profiler's
         * shim open may come first), once per process: common/settings.h. */
        (void)gt_settings_get();
        int disabled = gt_env_bool("GDRTRACE_DISABLE", 0);
        if (!disabled) {
            /* The recorder before the first call into any transport (issue
             * 23): a refusal, or a crash inside a transport, is then on disk
             * with the process's identity and settings. */
            gt_shim_set_abi_version(abi_version);
            g.abi_told = abi_version;
            gt_shim_open(logger);
        }
        int asked = GT_TRANSPORT_AUTO;
        struct gt_net_failure fail = {.reason = GT_REASON_TRANSPORT_ERROR};
        rc = select_transport(logger, profiler, &asked, &fail);
        if (rc != GT_OK) {
            if (!disabled)
                gt_shim_refused(asked, gt_core_transport_name(asked), rc, fail.reason, fail.err,
                                g.why);
            goto out;
        }
        const struct gt_net_ops *use = g.raw;
        if (!disabled) {
            const struct gt_net_ops *w = gt_shim_wrap(g.raw, g.why, logger);
            if (w)
                use = w;
        }
        __atomic_store_n(&g_ops, use, __ATOMIC_RELEASE);
        GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET, "ABI v%d, transport %s (%s)%s", abi_version,
                gt_core_transport_name(g.transport), g.why,
                disabled ? "; tracing off (GDRTRACE_DISABLE=1)" : "");
    } else if (abi_version != g.abi_told && !gt_env_bool("GDRTRACE_DISABLE", 0)) {
        /* Only a test drives two ABI versions in one process; keep the
         * shim's label right anyway. */
        gt_shim_set_abi_version(abi_version);
        g.abi_told = abi_version;
    }
    g.refs++;
    if (ops)
        *ops = g_ops;
out:
    pthread_mutex_unlock(&g.lock);
    return rc;
}

void gt_core_release(void)
{
    pthread_mutex_lock(&g.lock);
    if (g.refs <= 0) {
        GT_WARN("finalize called more often than init; ignored");
        goto out;
    }
    if (--g.refs == 0) {
        gt_result rc = g.raw->finalize(g.anchor);
        if (rc != GT_OK)
            GT_WARN("%s finalize failed (error %d)", gt_core_transport_name(g.transport), (int)rc);
        g.anchor = NULL;
        g.raw = NULL;
        g.transport = GT_TRANSPORT_AUTO;
        g.abi_told = 0;
    }
out:
    pthread_mutex_unlock(&g.lock);
}

const struct gt_net_ops *gt_core_ops(void)
{
    return __atomic_load_n(&g_ops, __ATOMIC_ACQUIRE);
}

int gt_core_refs(void)
{
    pthread_mutex_lock(&g.lock);
    int r = g.refs;
    pthread_mutex_unlock(&g.lock);
    return r;
}

int gt_core_transport(void)
{
    pthread_mutex_lock(&g.lock);
    int t = g.transport;
    pthread_mutex_unlock(&g.lock);
    return t;
}

const char *gt_core_transport_why(void)
{
    return g.why;
}
