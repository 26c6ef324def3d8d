/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_abi.c — unit tests of plugin/core.c and the ncclNetPlugin_v6 … _v12
 * adapters (plugin/abi/), over fake transports and a fake shim defined here.
 *
 * What it checks: transport selection (auto / forced / bad value / forced
 * but failing), GDRTRACE_DISABLE bypassing the shim, the reference count
 * (v11+ per communicator, <= v10 once per process), per-communicator
 * contexts and commIds, v10's traffic-class contexts, property conversion
 * into every version's struct (every field written, NCCL's limits met), the
 * int-size ABIs' size checks, and pass-through of the optional-receive flag.
 *
 * Order matters: the <= v10 adapters hold their core reference for the life
 * of the process, so the selection tests (which need the count to reach 0)
 * run first, with v11/v12 only.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nccl/net.h"
#include "plugin/core.h"
#include "common/gt_net.h"
#include "common/log.h"
#include "common/settings.h"

extern const ncclNet_v6_t ncclNetPlugin_v6;
extern const ncclNet_v7_t ncclNetPlugin_v7;
extern const ncclNet_v8_t ncclNetPlugin_v8;
extern const ncclNet_v9_t ncclNetPlugin_v9;
extern const ncclNet_v10_t ncclNetPlugin_v10;
extern const ncclNet_v11_t ncclNetPlugin_v11;
extern const ncclNet_v12_t ncclNetPlugin_v12;

/* ---------------- fake transports ---------------- */

#define CTX_MAGIC 0x6374786du
struct fake_ctx {
    unsigned magic;
    const char *transport;
    uint64_t comm_id;
    int has_comm_id;
    int tc;
};

static struct {
    int sock_inits, ib_inits, sock_finalizes, ib_finalizes;
    int sock_ndev, ib_ndev;
    int ib_init_fails; /* 1: ib init fails and says why, as plugin/ib does; 2: silently */
    int inner_inits;
    struct gt_props props;
    void *last_ctx;             /* ctx given to listen/connect */
    struct fake_ctx *last_init; /* ctx made by the last init */
    int reg_calls;
    size_t last_reg_size;
    int isend_calls;
    size_t last_isend_size;
    int irecv_calls, last_irecv_n;
    size_t last_irecv_sizes[8];
    void *last_irecv_req_in; /* *request as irecv saw it */
} F;

static gt_result fake_init(const char *which, int *count, void **ctx, uint64_t comm_id,
                           int has_comm_id, const struct gt_comm_config *config)
{
    struct fake_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return GT_SYSTEM_ERROR;
    c->magic = CTX_MAGIC;
    c->transport = which;
    c->comm_id = comm_id;
    c->has_comm_id = has_comm_id;
    c->tc = config ? config->traffic_class : -2; /* -2: no config given */
    *ctx = c;
    __atomic_store_n(&F.last_init, c, __ATOMIC_RELAXED);
    __atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
    return GT_OK;
}

static gt_result sock_init(void **ctx, uint64_t comm_id, int has_comm_id,
                           const struct gt_comm_config *config, gt_logger_fn l, gt_profiler_fn p)
{
    (void)l;
    (void)p;
    return fake_init("sock", &F.sock_inits, ctx, comm_id, has_comm_id, config);
}

static gt_result ib_init(void **ctx, uint64_t comm_id, int has_comm_id,
                         const struct gt_comm_config *config, gt_logger_fn l, gt_profiler_fn p)
{
    (void)l;
    (void)p;
    if (F.ib_init_fails) {
        /* A log line that is not the reason: the core must not scrape it. */
        GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET, "ib: looked at 3 devices");
        if (F.ib_init_fails == 2)
            return GT_SYSTEM_ERROR; /* breaks gt_net.h's F1: says nothing */
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, 0,
                           "ib: no active RDMA port");
    }
    return fake_init("ib", &F.ib_inits, ctx, comm_id, has_comm_id, config);
}

static gt_result fake_finalize(void *ctx)
{
    struct fake_ctx *c = ctx;
    assert_non_null(c);
    assert_int_equal(c->magic, CTX_MAGIC);
    if (strcmp(c->transport, "ib") == 0)
        __atomic_add_fetch(&F.ib_finalizes, 1, __ATOMIC_RELAXED);
    else
        __atomic_add_fetch(&F.sock_finalizes, 1, __ATOMIC_RELAXED);
    c->magic = 0;
    free(c);
    return GT_OK;
}

static gt_result sock_devices(int *n)
{
    *n = F.sock_ndev;
    return GT_OK;
}
static gt_result ib_devices(int *n)
{
    *n = F.ib_ndev;
    return GT_OK;
}
static gt_result fake_get_properties(int dev, struct gt_props *p)
{
    (void)dev;
    *p = F.props;
    return GT_OK;
}
static gt_result fake_listen(void *ctx, int dev, void *handle, void **lc)
{
    (void)dev;
    (void)handle;
    F.last_ctx = ctx;
    *lc = (void *)0x11;
    return GT_OK;
}
static gt_result fake_connect(void *ctx, int dev, void *handle, void **sc, void **sdc)
{
    (void)dev;
    (void)handle;
    F.last_ctx = ctx;
    *sc = (void *)0x22;
    *sdc = NULL;
    return GT_OK;
}
static gt_result fake_accept(void *lc, void **rc, void **rdc)
{
    (void)lc;
    *rc = (void *)0x33;
    *rdc = NULL;
    return GT_OK;
}
static gt_result fake_reg_mr(void *comm, void *data, size_t size, int type, void **mh,
                             struct gt_reg_report *r)
{
    (void)comm, (void)data, (void)type, (void)r;
    F.reg_calls++;
    F.last_reg_size = size;
    *mh = (void *)0x44;
    return GT_OK;
}
static gt_result fake_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t off,
                                    int fd, void **mh, struct gt_reg_report *r)
{
    (void)off, (void)fd;
    return fake_reg_mr(comm, data, size, type, mh, r);
}
static gt_result fake_ok1(void *a)
{
    (void)a;
    return GT_OK;
}
static gt_result fake_ok2(void *a, void *b)
{
    (void)a, (void)b;
    return GT_OK;
}
static gt_result fake_isend(void *sc, void *data, size_t size, int tag, void *mh, void *ph,
                            void **req)
{
    (void)sc, (void)data, (void)tag, (void)mh, (void)ph;
    F.isend_calls++;
    F.last_isend_size = size;
    *req = (void *)0x55;
    return GT_OK;
}
static gt_result fake_irecv(void *rc, int n, void **data, size_t *sizes, int *tags, void **mhs,
                            void **phs, void **req)
{
    (void)rc, (void)data, (void)tags, (void)mhs, (void)phs;
    F.irecv_calls++;
    F.last_irecv_n = n;
    for (int i = 0; i < n && i < 8; i++)
        F.last_irecv_sizes[i] = sizes[i];
    F.last_irecv_req_in = *req;
    *req = (void *)0x66;
    return GT_OK;
}
static gt_result fake_iflush(void *rc, int n, void **data, int *sizes, void **mhs, void **req)
{
    (void)rc, (void)n, (void)data, (void)sizes, (void)mhs;
    *req = NULL;
    return GT_OK;
}
static gt_result fake_test(void *req, int *done, int *sizes)
{
    (void)req;
    *done = 1;
    if (sizes)
        sizes[0] = 7;
    return GT_OK;
}
static gt_result fake_get_device_mr(void *c, void *mh, void **d)
{
    (void)c, (void)mh;
    *d = NULL;
    return GT_OK;
}
static gt_result fake_irecv_consumed(void *rc, int n, void *req)
{
    (void)rc, (void)n, (void)req;
    return GT_OK;
}
static gt_result fake_get_probe(int dev, struct gt_dev_probe *p)
{
    (void)dev;
    memset(p, 0, sizeof(*p));
    return GT_OK;
}

#define FAKE_OPS(nm, ini, devs)                                                                    \
    {                                                                                              \
        .name = nm, .init = ini, .devices = devs, .get_properties = fake_get_properties,           \
        .listen = fake_listen, .connect = fake_connect, .accept = fake_accept,                     \
        .reg_mr = fake_reg_mr, .reg_mr_dmabuf = fake_reg_mr_dmabuf, .dereg_mr = fake_ok2,          \
        .isend = fake_isend, .irecv = fake_irecv, .iflush = fake_iflush, .test = fake_test,        \
        .close_send = fake_ok1, .close_recv = fake_ok1, .close_listen = fake_ok1,                  \
        .get_device_mr = fake_get_device_mr, .irecv_consumed = fake_irecv_consumed,                \
        .finalize = fake_finalize, .set_net_attr = fake_ok2, .get_probe = fake_get_probe,          \
    }

/* Stand-ins for plugin/ib, plugin/sock and plugin/inner: core.c links all
 * three.  inner's init always fails, as the real one does without
 * GDRTRACE_INNER. */
static gt_result inner_init(void **ctx, uint64_t comm_id, int has_comm_id,
                            const struct gt_comm_config *config, gt_logger_fn l, gt_profiler_fn p)
{
    (void)ctx, (void)comm_id, (void)has_comm_id, (void)config, (void)l, (void)p;
    F.inner_inits++;
    return gt_net_fail(GT_INVALID_USAGE, GT_REASON_BAD_ARGUMENT, 0,
                       "GDRTRACE_TRANSPORT=inner needs GDRTRACE_INNER=/path/to/libnccl-net-X.so");
}

const struct gt_net_ops gt_sock_ops = FAKE_OPS("sock", sock_init, sock_devices);
const struct gt_net_ops gt_ib_ops = FAKE_OPS("ib", ib_init, ib_devices);
const struct gt_net_ops gt_inner_ops = FAKE_OPS("inner", inner_init, sock_devices);
/* plugin/gpumem is not linked: its wrap counts and hands back sock. */
static int gpumem_wraps;
const struct gt_net_ops *gt_gpumem_wrap(const struct gt_net_ops *inner)
{
    gpumem_wraps++;
    return inner;
}

/* ---------------- fake shim ---------------- */

static struct {
    int wraps, abi;
    char why[256];
    int isend_calls;
    int opens, inits_at_open; /* gt_shim_open calls; transport inits before the first */
    int refusals, refused_asked, refused_reason;
    char refused_why[384];
} S;
/* Like the real shim's, the wrapped table lives for the process: the core
 * keeps handing it out after reset() clears the counters. */
static const struct gt_net_ops *shim_inner;
static struct gt_net_ops shim_wrapped;

static gt_result shim_isend(void *sc, void *data, size_t size, int tag, void *mh, void *ph,
                            void **req)
{
    S.isend_calls++;
    return shim_inner->isend(sc, data, size, tag, mh, ph, req);
}

void gt_shim_set_abi_version(int abi_version)
{
    S.abi = abi_version;
}

void gt_shim_open(gt_logger_fn logger)
{
    (void)logger;
    if (S.opens++ == 0)
        S.inits_at_open = F.sock_inits + F.ib_inits + F.inner_inits;
}

void gt_shim_refused(int asked, const char *name, gt_result res, int reason, int err,
                     const char *why)
{
    (void)name, (void)res, (void)err;
    S.refusals++;
    S.refused_asked = asked;
    S.refused_reason = reason;
    snprintf(S.refused_why, sizeof(S.refused_why), "%s", why);
}

const struct gt_net_ops *gt_shim_wrap(const struct gt_net_ops *inner, const char *why,
                                      gt_logger_fn logger)
{
    (void)logger;
    S.wraps++;
    snprintf(S.why, sizeof(S.why), "%s", why);
    shim_inner = inner;
    shim_wrapped = *inner;
    shim_wrapped.isend = shim_isend;
    return &shim_wrapped;
}

/* ---------------- logger ---------------- */

static struct {
    int warns, infos;
    char last_warn[512];
    char last_info[512];
} L;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    (void)file, (void)line;
    if (level == NCCL_LOG_WARN) {
        L.warns++;
        snprintf(L.last_warn, sizeof(L.last_warn), "%s", buf);
        assert_true(flags == NCCL_ALL); /* NCCL's WARN convention */
    } else if (level == NCCL_LOG_INFO) {
        L.infos++;
        snprintf(L.last_info, sizeof(L.last_info), "%s", buf);
        assert_true(flags != 0 && flags != NCCL_ALL);
    }
    assert_non_null(strstr(buf, "NET/gdrtrace"));
}

static int reset(void **state)
{
    (void)state;
    memset(&F, 0, sizeof(F));
    memset(&S, 0, sizeof(S));
    memset(&L, 0, sizeof(L));
    F.sock_ndev = 1;
    F.props.name = "fake0";
    F.props.ptr_support = GT_PTR_HOST;
    F.props.max_recvs = 1;
    unsetenv("GDRTRACE_TRANSPORT");
    unsetenv("GDRTRACE_DISABLE");
    unsetenv("GDRTRACE_GPUMEM");
    gpumem_wraps = 0;
    gt_settings_reset_for_test(); /* each case's setenv is read by its first init */
    return 0;
}

/* ---------------- selection and refcount (v11/v12 only) ---------------- */

static void test_call_before_init_is_refused(void **state)
{
    (void)state;
    int n = -1;
    assert_int_equal(ncclNetPlugin_v9.devices(&n), ncclInternalError);
    assert_int_equal(n, -1);
}

static void test_auto_picks_sock_without_ib_devices(void **state)
{
    (void)state;
    F.ib_ndev = 0;
    void *ctx = NULL;
    ncclNetCommConfig_v11_t cfg = {.trafficClass = -1};
    assert_int_equal(ncclNetPlugin_v11.init(&ctx, 42, &cfg, logger, NULL), ncclSuccess);
    assert_int_equal(gt_core_transport(), GT_TRANSPORT_SOCK);
    assert_int_equal(gt_core_refs(), 1);
    assert_int_equal(F.ib_inits, 1);     /* probed */
    assert_int_equal(F.ib_finalizes, 1); /* and let go */
    assert_int_equal(S.wraps, 1);
    assert_int_equal(S.abi, 11);
    assert_non_null(strstr(S.why, "ib found no usable device"));
    assert_non_null(strstr(S.why, "sock"));
    assert_non_null(strstr(L.last_info, "transport sock"));
    assert_int_equal(ncclNetPlugin_v11.finalize(ctx), ncclSuccess);
    assert_int_equal(gt_core_refs(), 0);
    /* the per-comm context and the anchor */
    assert_int_equal(F.sock_finalizes, 2);
    assert_int_equal(F.sock_inits, 2);
}

static void test_auto_picks_ib_with_a_device(void **state)
{
    (void)state;
    F.ib_ndev = 2;
    void *ctx = NULL;
    assert_int_equal(ncclNetPlugin_v12.init(&ctx, 7, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(gt_core_transport(), GT_TRANSPORT_IB);
    assert_non_null(strstr(S.why, "ib has 2 devices"));
    assert_int_equal(S.abi, 12);
    assert_int_equal(F.sock_inits, 0);
    assert_int_equal(ncclNetPlugin_v12.finalize(ctx), ncclSuccess);
    assert_int_equal(F.ib_inits, F.ib_finalizes);
}

static void test_auto_reason_names_why_ib_failed(void **state)
{
    (void)state;
    F.ib_init_fails = 1;
    void *ctx = NULL;
    assert_int_equal(ncclNetPlugin_v11.init(&ctx, 5, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(gt_core_transport(), GT_TRANSPORT_SOCK);
    /* the transport's own words, handed back by init, not an error number
     * nor the last line it logged */
    assert_non_null(strstr(S.why, "ib unavailable (ib: no active RDMA port)"));
    assert_null(strstr(S.why, "looked at"));
    /* and NCCL's logger is back in place after the probe */
    assert_int_equal(ncclNetPlugin_v11.finalize(ctx), ncclSuccess);
    int infos = L.infos;
    GT_INFO(GT_LOGSUB_NET, "after the probe");
    assert_int_equal(L.infos, infos + 1);
}

static void test_silent_init_failure_is_not_explained_by_its_log(void **state)
{
    (void)state;
    F.ib_init_fails = 2;
    void *ctx = NULL;
    assert_int_equal(ncclNetPlugin_v11.init(&ctx, 5, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(gt_core_transport(), GT_TRANSPORT_SOCK);
    assert_non_null(strstr(S.why, "ib init failed (error 2)"));
    assert_null(strstr(S.why, "looked at"));
    assert_int_equal(ncclNetPlugin_v11.finalize(ctx), ncclSuccess);
}

static void test_forced_sock_ignores_ib(void **state)
{
    (void)state;
    F.ib_ndev = 2;
    setenv("GDRTRACE_TRANSPORT", "sock", 1);
    void *ctx = NULL;
    assert_int_equal(ncclNetPlugin_v11.init(&ctx, 1, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(gt_core_transport(), GT_TRANSPORT_SOCK);
    assert_int_equal(F.ib_inits, 0);
    assert_non_null(strstr(S.why, "GDRTRACE_TRANSPORT=sock"));
    assert_int_equal(ncclNetPlugin_v11.finalize(ctx), ncclSuccess);
}

/* The settings are a snapshot taken at the plugin's first init in the
 * process and kept after a full finalize (common/settings.h says why): a
 * second init after GDRTRACE_TRANSPORT changed still chooses as the first
 * did, and as the one recorder says. */
static void test_reinit_keeps_the_snapshot(void **state)
{
    (void)state;
    F.ib_ndev = 2;
    setenv("GDRTRACE_TRANSPORT", "sock", 1);
    void *ctx = NULL;
    assert_int_equal(ncclNetPlugin_v11.init(&ctx, 1, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(gt_core_transport(), GT_TRANSPORT_SOCK);
    assert_int_equal(ncclNetPlugin_v11.finalize(ctx), ncclSuccess);
    assert_int_equal(gt_core_refs(), 0);
    setenv("GDRTRACE_TRANSPORT", "ib", 1);
    assert_int_equal(ncclNetPlugin_v11.init(&ctx, 1, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(gt_core_transport(), GT_TRANSPORT_SOCK);
    assert_int_equal(F.ib_inits, 0);
    assert_int_equal(ncclNetPlugin_v11.finalize(ctx), ncclSuccess);
}

static void test_bad_transport_value_warns_and_uses_auto(void **state)
{
    (void)state;
    F.ib_ndev = 0;
    setenv("GDRTRACE_TRANSPORT", "carrier-pigeon", 1);
    void *ctx = NULL;
    assert_int_equal(ncclNetPlugin_v11.init(&ctx, 1, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(gt_core_transport(), GT_TRANSPORT_SOCK);
    assert_true(L.warns >= 1);
    assert_non_null(strstr(L.last_warn, "GDRTRACE_TRANSPORT"));
    assert_non_null(strstr(L.last_warn, "carrier-pigeon"));
    assert_int_equal(ncclNetPlugin_v11.finalize(ctx), ncclSuccess);
}

/* GDRTRACE_GPUMEM=1: sock under the layer, even where ib has a device (the
 * layer itself refuses next to an ACTIVE RDMA port); ib is never tried. */
static void test_gpumem_wraps_sock_and_skips_ib(void **state)
{
    (void)state;
    F.ib_ndev = 2;
    setenv("GDRTRACE_GPUMEM", "1", 1);
    void *ctx = NULL;
    assert_int_equal(ncclNetPlugin_v11.init(&ctx, 3, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(gt_core_transport(), GT_TRANSPORT_SOCK);
    assert_int_equal(F.ib_inits, 0);
    assert_true(gpumem_wraps >= 1);
    assert_non_null(strstr(S.why, "GDRTRACE_GPUMEM=1"));
    assert_int_equal(ncclNetPlugin_v11.finalize(ctx), ncclSuccess);
    assert_int_equal(F.sock_inits, F.sock_finalizes);
}

/* ... and it is a layer over sock: with another transport asked for, the
 * plugin refuses rather than trace a run that is not what was asked. */
static void test_gpumem_with_forced_ib_fails_init(void **state)
{
    (void)state;
    F.ib_ndev = 2;
    setenv("GDRTRACE_GPUMEM", "1", 1);
    setenv("GDRTRACE_TRANSPORT", "ib", 1);
    void *ctx = (void *)0x1;
    assert_int_not_equal(ncclNetPlugin_v11.init(&ctx, 4, NULL, logger, NULL), ncclSuccess);
    assert_null(ctx);
    assert_int_equal(gt_core_refs(), 0);
    assert_int_equal(F.ib_inits, 0);
    assert_int_equal(F.sock_inits, 0);
    assert_non_null(strstr(L.last_warn, "GDRTRACE_GPUMEM=1"));
}

static void test_forced_ib_without_device_fails_init(void **state)
{
    (void)state;
    F.ib_ndev = 0;
    setenv("GDRTRACE_TRANSPORT", "ib", 1);
    void *ctx = (void *)0x1;
    assert_int_not_equal(ncclNetPlugin_v11.init(&ctx, 1, NULL, logger, NULL), ncclSuccess);
    assert_null(ctx);
    assert_int_equal(gt_core_refs(), 0);
    assert_int_equal(F.sock_inits, 0); /* no silent switch to sock */
    assert_non_null(strstr(L.last_warn, "GDRTRACE_TRANSPORT=ib"));
    assert_int_equal(F.ib_inits, F.ib_finalizes);
}

static void test_forced_inner_that_fails_disables_the_plugin(void **state)
{
    (void)state;
    setenv("GDRTRACE_TRANSPORT", "inner", 1);
    void *ctx = (void *)0x1;
    assert_int_not_equal(ncclNetPlugin_v11.init(&ctx, 1, NULL, logger, NULL), ncclSuccess);
    assert_null(ctx);
    assert_int_equal(F.inner_inits, 1);
    assert_int_equal(gt_core_refs(), 0);
    assert_int_equal(F.sock_inits, 0); /* no silent switch to sock */
    assert_int_equal(F.ib_inits, 0);
    assert_non_null(strstr(L.last_warn, "GDRTRACE_TRANSPORT=inner: inner unavailable "
                                        "(GDRTRACE_TRANSPORT=inner needs GDRTRACE_INNER="));
}

/* Issue 23: the recorder is open before the first call into any transport,
 * so a crash inside one (or a refusal) is on disk. */
static void test_recorder_opens_before_any_transport(void **state)
{
    (void)state;
    F.ib_ndev = 0;
    void *ctx = NULL;
    assert_int_equal(ncclNetPlugin_v11.init(&ctx, 3, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(S.opens, 1);
    assert_int_equal(S.inits_at_open, 0);
    assert_int_equal(S.refusals, 0);
    assert_int_equal(ncclNetPlugin_v11.finalize(ctx), ncclSuccess);
}

/* Issue 19.1: a refusal is recorded with the transport's reason and the
 * line NCCL's log gets. */
static void test_refusal_is_recorded_with_its_reason(void **state)
{
    (void)state;
    F.ib_ndev = 0;
    setenv("GDRTRACE_TRANSPORT", "ib", 1);
    void *ctx = NULL;
    assert_int_not_equal(ncclNetPlugin_v11.init(&ctx, 1, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(S.opens, 1);
    assert_int_equal(S.inits_at_open, 0);
    assert_int_equal(S.refusals, 1);
    assert_int_equal(S.refused_asked, GT_TRANSPORT_IB);
    assert_int_equal(S.refused_reason, GT_REASON_NO_RDMA_DEVICE);
    assert_non_null(strstr(S.refused_why, "GDRTRACE_TRANSPORT=ib: ib found no usable device"));
    /* the inner transport's own reason travels as given (gt_net.h F3) */
    setenv("GDRTRACE_TRANSPORT", "inner", 1);
    gt_settings_reset_for_test();
    assert_int_not_equal(ncclNetPlugin_v11.init(&ctx, 1, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(S.refusals, 2);
    assert_int_equal(S.refused_asked, GT_TRANSPORT_INNER);
    assert_int_equal(S.refused_reason, GT_REASON_BAD_ARGUMENT);
    assert_non_null(strstr(S.refused_why, "needs GDRTRACE_INNER"));
    /* an invalid value is not a refusal: WARN and the default (auto) */
    setenv("GDRTRACE_TRANSPORT", "carrier-pigeon", 1);
    gt_settings_reset_for_test();
    F.sock_ndev = 1;
    assert_int_equal(ncclNetPlugin_v11.init(&ctx, 1, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(S.refusals, 2);
    assert_int_equal(ncclNetPlugin_v11.finalize(ctx), ncclSuccess);
}

static void test_disable_bypasses_shim(void **state)
{
    (void)state;
    setenv("GDRTRACE_DISABLE", "1", 1);
    void *ctx = NULL, *sc = NULL, *req = NULL;
    assert_int_equal(ncclNetPlugin_v11.init(&ctx, 1, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(S.wraps, 0);
    assert_int_equal(S.opens, 0); /* no recorder at all */
    assert_int_equal(ncclNetPlugin_v11.connect(ctx, 0, NULL, &sc, NULL), ncclSuccess);
    assert_int_equal(ncclNetPlugin_v11.isend(sc, NULL, 10, 0, NULL, NULL, &req), ncclSuccess);
    assert_int_equal(S.isend_calls, 0);
    assert_int_equal(F.isend_calls, 1);
    assert_int_equal(ncclNetPlugin_v11.finalize(ctx), ncclSuccess);
}

static void test_shim_sees_the_data_path(void **state)
{
    (void)state;
    void *ctx = NULL, *sc = NULL, *req = NULL;
    ncclNetDeviceHandle_v11_t *dh = NULL;
    assert_int_equal(ncclNetPlugin_v11.init(&ctx, 1, NULL, logger, NULL), ncclSuccess);
    assert_int_equal(ncclNetPlugin_v11.connect(ctx, 0, NULL, &sc, &dh), ncclSuccess);
    assert_int_equal(ncclNetPlugin_v11.isend(sc, NULL, 10, 0, NULL, NULL, &req), ncclSuccess);
    assert_int_equal(S.isend_calls, 1);
    assert_int_equal(F.isend_calls, 1);
    assert_int_equal(ncclNetPlugin_v11.finalize(ctx), ncclSuccess);
}

static void test_v11_contexts_are_per_communicator(void **state)
{
    (void)state;
    void *a = NULL, *b = NULL, *lc = NULL;
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    ncclNetCommConfig_v11_t cfg = {.trafficClass = 3};
    assert_int_equal(ncclNetPlugin_v11.init(&a, 0xAAAA, &cfg, logger, NULL), ncclSuccess);
    assert_int_equal(ncclNetPlugin_v11.init(&b, 0xBBBB, NULL, logger, NULL), ncclSuccess);
    assert_ptr_not_equal(a, b);
    assert_int_equal(gt_core_refs(), 2);
    struct fake_ctx *ca = a, *cb = b;
    assert_int_equal(ca->comm_id, 0xAAAA);
    assert_int_equal(ca->has_comm_id, 1);
    assert_int_equal(ca->tc, 3);
    assert_int_equal(cb->comm_id, 0xBBBB);
    assert_int_equal(cb->tc, -1); /* no config: undefined class */
    assert_int_equal(ncclNetPlugin_v11.listen(b, 0, handle, &lc), ncclSuccess);
    assert_ptr_equal(F.last_ctx, b);
    assert_int_equal(ncclNetPlugin_v11.finalize(a), ncclSuccess);
    assert_int_equal(gt_core_refs(), 1);
    assert_int_equal(F.sock_finalizes, 1);
    assert_int_equal(ncclNetPlugin_v11.finalize(b), ncclSuccess);
    assert_int_equal(gt_core_refs(), 0);
    assert_int_equal(F.sock_finalizes, 3); /* a, b, anchor */
    /* one finalize too many is a WARN, not a crash or a negative count */
    ncclNetPlugin_v12.finalize(NULL);
    assert_int_equal(gt_core_refs(), 0);
}

/* NCCL creates communicators from many threads at once: the count and the
 * anchor must survive concurrent init/finalize. */
#define RACE_THREADS 8
#define RACE_ROUNDS 200
static void *race_body(void *arg)
{
    (void)arg;
    for (int i = 0; i < RACE_ROUNDS; i++) {
        void *ctx = NULL;
        if (ncclNetPlugin_v12.init(&ctx, (uint64_t)i, NULL, logger, NULL) != ncclSuccess)
            return (void *)1;
        ncclNetProperties_v12_t p;
        if (ncclNetPlugin_v12.getProperties(0, &p) != ncclSuccess)
            return (void *)1;
        if (ncclNetPlugin_v12.finalize(ctx) != ncclSuccess)
            return (void *)1;
    }
    return NULL;
}

static void test_concurrent_init_finalize(void **state)
{
    (void)state;
    pthread_t t[RACE_THREADS];
    for (int i = 0; i < RACE_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, race_body, NULL), 0);
    for (int i = 0; i < RACE_THREADS; i++) {
        void *ret = (void *)1;
        assert_int_equal(pthread_join(t[i], &ret), 0);
        assert_null(ret);
    }
    assert_int_equal(gt_core_refs(), 0);
    assert_int_equal(__atomic_load_n(&F.sock_inits, __ATOMIC_RELAXED),
                     __atomic_load_n(&F.sock_finalizes, __ATOMIC_RELAXED));
    assert_true(F.sock_inits >= RACE_THREADS * RACE_ROUNDS);
}

/* ---------------- <= v10: once per process ---------------- */

static void test_old_abi_inits_once_per_process(void **state)
{
    (void)state;
    assert_int_equal(ncclNetPlugin_v6.init(logger), ncclSuccess);
    int refs = gt_core_refs();
    int inits = F.sock_inits;
    assert_int_equal(ncclNetPlugin_v6.init(logger), ncclSuccess);
    assert_int_equal(gt_core_refs(), refs);
    assert_int_equal(F.sock_inits, inits);
    struct fake_ctx *c = F.last_init;
    assert_int_equal(c->has_comm_id, 0);
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL;
    assert_int_equal(ncclNetPlugin_v6.listen(0, handle, &lc), ncclSuccess);
    assert_ptr_equal(F.last_ctx, c);
}

static void test_v10_traffic_class_contexts(void **state)
{
    (void)state;
    assert_int_equal(ncclNetPlugin_v10.init(logger, NULL), ncclSuccess);
    struct fake_ctx *proc_ctx = F.last_init;
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {0};
    void *sc = NULL;
    ncclNetDeviceHandle_v10_t *dh = NULL;
    ncclNetCommConfig_v10_t c5 = {.trafficClass = 5}, cu = {.trafficClass = -1};
    assert_int_equal(ncclNetPlugin_v10.connect(0, &c5, handle, &sc, &dh), ncclSuccess);
    struct fake_ctx *t5 = F.last_ctx;
    assert_ptr_not_equal(t5, proc_ctx);
    assert_int_equal(t5->tc, 5);
    int inits = F.sock_inits;
    assert_int_equal(ncclNetPlugin_v10.connect(0, &c5, handle, &sc, &dh), ncclSuccess);
    assert_ptr_equal(F.last_ctx, t5);
    assert_int_equal(F.sock_inits, inits); /* reused, not re-made */
    assert_int_equal(ncclNetPlugin_v10.connect(0, &cu, handle, &sc, &dh), ncclSuccess);
    assert_ptr_equal(F.last_ctx, proc_ctx);
    assert_int_equal(ncclNetPlugin_v10.connect(0, NULL, handle, &sc, &dh), ncclSuccess);
    assert_ptr_equal(F.last_ctx, proc_ctx);
}

/* ---------------- properties ---------------- */

static void fancy_props(void)
{
    memset(&F.props, 0, sizeof(F.props));
    F.props.name = "fake0";
    F.props.pci_path = "/sys/devices/pci0000:00/0000:00:03.0";
    F.props.guid = 0x1234abcd;
    F.props.ptr_support = GT_PTR_HOST | GT_PTR_DMABUF;
    F.props.reg_is_global = 1;
    F.props.force_flush = 1;
    F.props.speed_mbps = 25000;
    F.props.port = 2;
    F.props.latency_us = 1.5f;
    F.props.max_comms = 77;
    F.props.max_recvs = 4;
    F.props.net_device_type = 1; /* UNPACK: we must report HOST */
    F.props.net_device_version = 7;
    F.props.vdev_count = 0;                             /* -> {1, [dev]} */
    F.props.max_p2p_bytes = 0;                          /* -> 1 TiB */
    F.props.max_coll_bytes = GT_MAX_NET_SIZE_BYTES * 2; /* -> 1 TiB */
    F.props.max_multi_request_size = 0;                 /* -> 1 */
    F.props.rail_id = 3;
    F.props.plane_id = -9; /* -> -1 */
}

#define CHECK_BASE(p)                                                                              \
    do {                                                                                           \
        assert_string_equal((p).name, "fake0");                                                    \
        assert_string_equal((p).pciPath, "/sys/devices/pci0000:00/0000:00:03.0");                  \
        assert_int_equal((p).guid, 0x1234abcd);                                                    \
        assert_int_equal((p).ptrSupport, NCCL_PTR_HOST | NCCL_PTR_DMABUF);                         \
        assert_int_equal((p).speed, 25000);                                                        \
        assert_int_equal((p).port, 2);                                                             \
        assert_true((p).latency == 1.5f);                                                          \
        assert_int_equal((p).maxComms, 77);                                                        \
        assert_int_equal((p).maxRecvs, 4);                                                         \
    } while (0)

#define CHECK_V9(p, dev)                                                                           \
    do {                                                                                           \
        assert_int_equal((p).regIsGlobal, 1);                                                      \
        assert_int_equal((p).forceFlush, 1);                                                       \
        assert_int_equal((p).netDeviceType, NCCL_NET_DEVICE_HOST);                                 \
        assert_int_equal((p).netDeviceVersion, 0);                                                 \
        assert_int_equal((p).vProps.ndevs, 1);                                                     \
        assert_int_equal((p).vProps.devs[0], (dev));                                               \
        assert_int_equal((p).maxP2pBytes, NCCL_MAX_NET_SIZE_BYTES);                                \
        assert_int_equal((p).maxCollBytes, NCCL_MAX_NET_SIZE_BYTES);                               \
    } while (0)

static void test_properties_every_version(void **state)
{
    (void)state;
    fancy_props();
    ncclNetProperties_v6_t p6;
    ncclNetProperties_v7_t p7;
    ncclNetProperties_v8_t p8;
    ncclNetProperties_v9_t p9;
    ncclNetProperties_v10_t p10;
    ncclNetProperties_v11_t p11;
    ncclNetProperties_v12_t p12;
    /* Poison first so a field the adapter forgets shows up. */
    memset(&p6, 0xA5, sizeof(p6));
    memset(&p7, 0xA5, sizeof(p7));
    memset(&p8, 0xA5, sizeof(p8));
    memset(&p9, 0xA5, sizeof(p9));
    memset(&p10, 0xA5, sizeof(p10));
    memset(&p11, 0xA5, sizeof(p11));
    memset(&p12, 0xA5, sizeof(p12));
    assert_int_equal(ncclNetPlugin_v6.getProperties(0, &p6), ncclSuccess);
    CHECK_BASE(p6);
    assert_int_equal(ncclNetPlugin_v7.getProperties(0, &p7), ncclSuccess);
    CHECK_BASE(p7);
    assert_int_equal(p7.netDeviceType, NCCL_NET_DEVICE_HOST);
    assert_int_equal(p7.netDeviceVersion, 0);
    assert_int_equal(ncclNetPlugin_v8.getProperties(0, &p8), ncclSuccess);
    CHECK_BASE(p8);
    assert_int_equal(p8.regIsGlobal, 1);
    assert_int_equal(p8.netDeviceType, NCCL_NET_DEVICE_HOST);
    assert_int_equal(p8.netDeviceVersion, 0);
    assert_int_equal(ncclNetPlugin_v9.getProperties(2, &p9), ncclSuccess);
    CHECK_BASE(p9);
    CHECK_V9(p9, 2);
    for (int i = 1; i < NCCL_NET_MAX_DEVS_PER_NIC_V9; i++)
        assert_int_equal(p9.vProps.devs[i], 0);
    assert_int_equal(ncclNetPlugin_v10.getProperties(1, &p10), ncclSuccess);
    CHECK_BASE(p10);
    CHECK_V9(p10, 1);
    assert_int_equal(ncclNetPlugin_v11.getProperties(0, &p11), ncclSuccess);
    CHECK_BASE(p11);
    CHECK_V9(p11, 0);
    assert_int_equal(p11.maxMultiRequestSize, 1);
    assert_int_equal(ncclNetPlugin_v12.getProperties(0, &p12), ncclSuccess);
    CHECK_BASE(p12);
    CHECK_V9(p12, 0);
    assert_int_equal(p12.maxMultiRequestSize, 1);
    assert_int_equal(p12.railId, 3);
    assert_int_equal(p12.planeId, -1);
    for (int i = 1; i < NCCL_NET_MAX_DEVS_PER_NIC_V12; i++)
        assert_int_equal(p12.vProps.devs[i], 0);
}

static void test_properties_clamps(void **state)
{
    (void)state;
    fancy_props();
    F.props.max_recvs = 100;
    F.props.max_p2p_bytes = 1 << 20;
    F.props.vdev_count = 6;
    for (int i = 0; i < 6; i++)
        F.props.vdevs[i] = 10 + i;
    F.props.name = NULL;
    ncclNetProperties_v11_t p11;
    ncclNetProperties_v12_t p12;
    assert_int_equal(ncclNetPlugin_v11.getProperties(0, &p11), ncclSuccess);
    assert_int_equal(p11.maxRecvs, 8);
    assert_int_equal(p11.maxP2pBytes, 1 << 20); /* a real limit is kept */
    assert_int_equal(p11.vProps.ndevs, 4);      /* v11 holds 4 */
    assert_int_equal(p11.vProps.devs[3], 13);
    assert_non_null(p11.name);
    assert_int_equal(ncclNetPlugin_v12.getProperties(0, &p12), ncclSuccess);
    assert_int_equal(p12.vProps.ndevs, 6); /* v12 holds 8 */
    assert_int_equal(p12.vProps.devs[5], 15);
    assert_int_equal(p12.vProps.devs[6], 0);
}

/* ---------------- size checks ---------------- */

static void test_int_abi_size_limits(void **state)
{
    (void)state;
    void *mh = NULL, *req = NULL;
    int warns = L.warns;
    /* v6/v7 regMr: negative int */
    assert_int_equal(ncclNetPlugin_v6.regMr((void *)1, NULL, -1, NCCL_PTR_HOST, &mh),
                     ncclInternalError);
    assert_int_equal(ncclNetPlugin_v7.regMr((void *)1, NULL, -2, NCCL_PTR_HOST, &mh),
                     ncclInternalError);
    assert_int_equal(F.reg_calls, 0);
    assert_int_equal(L.warns, warns + 2);
    assert_non_null(strstr(L.last_warn, "negative"));
    assert_int_equal(ncclNetPlugin_v7.regMr((void *)1, NULL, 0x7fffffff, NCCL_PTR_HOST, &mh),
                     ncclSuccess);
    assert_int_equal(F.last_reg_size, 0x7fffffff);
    /* v8 regMr is size_t: 3 GiB passes */
    assert_int_equal(ncclNetPlugin_v8.regMr((void *)1, NULL, 3ULL << 30, NCCL_PTR_HOST, &mh),
                     ncclSuccess);
    assert_int_equal(F.last_reg_size, 3ULL << 30);
    /* <= v8 isend: 1 GiB cap, negative refused */
    assert_int_equal(ncclNetPlugin_v6.isend((void *)1, NULL, (1 << 30) + 1, 0, mh, &req),
                     ncclInternalError);
    assert_non_null(strstr(L.last_warn, "exceeds ABI v6"));
    assert_int_equal(ncclNetPlugin_v8.isend((void *)1, NULL, -5, 0, mh, &req), ncclInternalError);
    assert_int_equal(F.isend_calls, 0);
    assert_int_equal(ncclNetPlugin_v8.isend((void *)1, NULL, 1 << 30, 0, mh, &req), ncclSuccess);
    assert_int_equal(F.last_isend_size, 1 << 30);
    /* <= v8 irecv: every size checked, then widened */
    void *data[3] = {0};
    void *mhs[3] = {mh, mh, mh};
    int tags[3] = {1, 2, 3};
    int bad[2] = {10, -1};
    assert_int_equal(ncclNetPlugin_v7.irecv((void *)1, 2, data, bad, tags, mhs, &req),
                     ncclInternalError);
    int good[3] = {0, 1, 0x40000000};
    assert_int_equal(ncclNetPlugin_v7.irecv((void *)1, 3, data, good, tags, mhs, &req),
                     ncclSuccess);
    assert_int_equal(F.last_irecv_n, 3);
    assert_int_equal(F.last_irecv_sizes[0], 0);
    assert_int_equal(F.last_irecv_sizes[2], 0x40000000);
    /* n outside [1, 8] */
    int many[9] = {0};
    void *mdata[9] = {0}, *mmh[9] = {0};
    int mtags[9] = {0};
    int calls = F.irecv_calls;
    assert_int_equal(ncclNetPlugin_v6.irecv((void *)1, 0, mdata, many, mtags, mmh, &req),
                     ncclInternalError);
    assert_int_equal(ncclNetPlugin_v6.irecv((void *)1, 9, mdata, many, mtags, mmh, &req),
                     ncclInternalError);
    size_t msz[9] = {0};
    assert_int_equal(ncclNetPlugin_v9.irecv((void *)1, 9, mdata, msz, mtags, mmh, &req),
                     ncclInternalError);
    assert_int_equal(F.irecv_calls, calls);
    /* v9+ isend is size_t: 4 GiB passes through unchanged */
    assert_int_equal(ncclNetPlugin_v9.isend((void *)1, NULL, 4ULL << 30, 0, mh, &req), ncclSuccess);
    assert_int_equal(F.last_isend_size, 4ULL << 30);
    assert_int_equal(ncclNetPlugin_v12.isend((void *)1, NULL, 5ULL << 30, 0, mh, NULL, &req),
                     ncclSuccess);
    assert_int_equal(F.last_isend_size, 5ULL << 30);
}

static void test_optional_recv_flag_passes_through(void **state)
{
    (void)state;
    void *data[1] = {0}, *mhs[1] = {0};
    int tags[1] = {0}, sizes[1] = {64};
    size_t zs[1] = {64};
    void *req = (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION;
    assert_int_equal(ncclNetPlugin_v6.irecv((void *)1, 1, data, sizes, tags, mhs, &req),
                     ncclSuccess);
    assert_ptr_equal(F.last_irecv_req_in, (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION);
    req = (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION;
    assert_int_equal(ncclNetPlugin_v12.irecv((void *)1, 1, data, zs, tags, mhs, NULL, &req),
                     ncclSuccess);
    assert_ptr_equal(F.last_irecv_req_in, (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION);
    assert_ptr_equal(req, (void *)0x66);
    int done = 0, got[1] = {0};
    assert_int_equal(ncclNetPlugin_v8.test(req, &done, got), ncclSuccess);
    assert_int_equal(done, 1);
    assert_int_equal(got[0], 7);
}

static void test_tables_are_complete(void **state)
{
    (void)state;
    /* Every member but makeVDevice is filled: NCCL calls them unguarded. */
    const void *const *t;
    size_t n;
#define ALL_SET(tab)                                                                               \
    t = (const void *const *)&(tab);                                                               \
    n = sizeof(tab) / sizeof(void *);                                                              \
    for (size_t i = 0; i < n; i++)                                                                 \
        if (i != offsetof(__typeof__(tab), makeVDevice) / sizeof(void *))                          \
            assert_non_null(t[i]);
#define ALL_SET_OLD(tab)                                                                           \
    t = (const void *const *)&(tab);                                                               \
    n = sizeof(tab) / sizeof(void *);                                                              \
    for (size_t i = 0; i < n; i++)                                                                 \
        assert_non_null(t[i]);
    ALL_SET_OLD(ncclNetPlugin_v6);
    ALL_SET_OLD(ncclNetPlugin_v7);
    ALL_SET_OLD(ncclNetPlugin_v8);
    ALL_SET(ncclNetPlugin_v9);
    ALL_SET(ncclNetPlugin_v10);
    ALL_SET(ncclNetPlugin_v11);
    ALL_SET(ncclNetPlugin_v12);
    assert_null(ncclNetPlugin_v9.makeVDevice);
    assert_null(ncclNetPlugin_v12.makeVDevice);
    assert_string_equal(ncclNetPlugin_v12.name, "gdrtrace");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_call_before_init_is_refused, reset),
        cmocka_unit_test_setup(test_auto_picks_sock_without_ib_devices, reset),
        cmocka_unit_test_setup(test_auto_picks_ib_with_a_device, reset),
        cmocka_unit_test_setup(test_reinit_keeps_the_snapshot, reset),
        cmocka_unit_test_setup(test_auto_reason_names_why_ib_failed, reset),
        cmocka_unit_test_setup(test_silent_init_failure_is_not_explained_by_its_log, reset),
        cmocka_unit_test_setup(test_forced_sock_ignores_ib, reset),
        cmocka_unit_test_setup(test_bad_transport_value_warns_and_uses_auto, reset),
        cmocka_unit_test_setup(test_forced_ib_without_device_fails_init, reset),
        cmocka_unit_test_setup(test_gpumem_wraps_sock_and_skips_ib, reset),
        cmocka_unit_test_setup(test_gpumem_with_forced_ib_fails_init, reset),
        cmocka_unit_test_setup(test_forced_inner_that_fails_disables_the_plugin, reset),
        cmocka_unit_test_setup(test_recorder_opens_before_any_transport, reset),
        cmocka_unit_test_setup(test_refusal_is_recorded_with_its_reason, reset),
        cmocka_unit_test_setup(test_disable_bypasses_shim, reset),
        cmocka_unit_test_setup(test_shim_sees_the_data_path, reset),
        cmocka_unit_test_setup(test_v11_contexts_are_per_communicator, reset),
        cmocka_unit_test_setup(test_concurrent_init_finalize, reset),
        /* from here on <= v10 adapters hold references for the process */
        cmocka_unit_test_setup(test_old_abi_inits_once_per_process, reset),
        cmocka_unit_test_setup(test_v10_traffic_class_contexts, reset),
        cmocka_unit_test_setup(test_properties_every_version, reset),
        cmocka_unit_test_setup(test_properties_clamps, reset),
        cmocka_unit_test_setup(test_int_abi_size_limits, reset),
        cmocka_unit_test_setup(test_optional_recv_flag_passes_through, reset),
        cmocka_unit_test_setup(test_tables_are_complete, reset),
    };
    return cmocka_run_group_tests_name("abi adapters and core", tests, NULL, NULL);
}
