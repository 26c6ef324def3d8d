/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gt_ibv.c — dlopen of libibverbs and the stubs that fill absent slots.
 *
 * Owns the table gt_ibv (see gt_ibv.h for its invariants).  The stubs follow
 * rdma-core's own conventions, so callers handle a missing feature exactly
 * like a provider that lacks it: pointer-returning calls set errno =
 * EOPNOTSUPP and return NULL; int-returning calls return EOPNOTSUPP.
 */
#include "common/dl/gt_ibv.h"

#include <dlfcn.h>
#include <stddef.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/env.h"
#include "common/nccl_env.h"
#include "common/log.h"

struct gt_ibv_fns gt_ibv;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int load_done;    /* guarded by load_lock */
static int load_rc;      /* guarded by load_lock */
static void *lib_handle; /* kept open for the life of the process */

/* ---- stubs: one per signature ---------------------------------------- */
static struct ibv_device **stub_get_device_list(int *n)
{
    if (n)
        *n = 0;
    errno = EOPNOTSUPP;
    return NULL;
}
static void stub_free_device_list(struct ibv_device **l)
{
    (void)l;
}
static const char *stub_get_device_name(struct ibv_device *d)
{
    (void)d;
    return "(no libibverbs)";
}
static __be64 stub_get_device_guid(struct ibv_device *d)
{
    (void)d;
    return 0;
}
static struct ibv_context *stub_open_device(struct ibv_device *d)
{
    (void)d;
    errno = EOPNOTSUPP;
    return NULL;
}
static int stub_close_device(struct ibv_context *c)
{
    (void)c;
    return EOPNOTSUPP;
}
static int stub_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
    (void)c, (void)a;
    return EOPNOTSUPP;
}
static int stub_query_port(struct ibv_context *c, uint8_t p, struct ibv_port_attr *a)
{
    (void)c, (void)p, (void)a;
    return EOPNOTSUPP;
}
static int stub_query_gid(struct ibv_context *c, uint8_t p, int i, union ibv_gid *g)
{
    (void)c, (void)p, (void)i, (void)g;
    return EOPNOTSUPP;
}
static struct ibv_pd *stub_alloc_pd(struct ibv_context *c)
{
    (void)c;
    errno = EOPNOTSUPP;
    return NULL;
}
static int stub_dealloc_pd(struct ibv_pd *pd)
{
    (void)pd;
    return EOPNOTSUPP;
}
static struct ibv_mr *stub_reg_mr(struct ibv_pd *pd, void *a, size_t l, int acc)
{
    (void)pd, (void)a, (void)l, (void)acc;
    errno = EOPNOTSUPP;
    return NULL;
}
static int stub_dereg_mr(struct ibv_mr *mr)
{
    (void)mr;
    return EOPNOTSUPP;
}
static struct ibv_cq *stub_create_cq(struct ibv_context *c, int n, void *x,
                                     struct ibv_comp_channel *ch, int v)
{
    (void)c, (void)n, (void)x, (void)ch, (void)v;
    errno = EOPNOTSUPP;
    return NULL;
}
static int stub_destroy_cq(struct ibv_cq *cq)
{
    (void)cq;
    return EOPNOTSUPP;
}
static struct ibv_qp *stub_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
    (void)pd, (void)a;
    errno = EOPNOTSUPP;
    return NULL;
}
static int stub_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int m)
{
    (void)qp, (void)a, (void)m;
    return EOPNOTSUPP;
}
static int stub_destroy_qp(struct ibv_qp *qp)
{
    (void)qp;
    return EOPNOTSUPP;
}
static const char *stub_wc_status_str(enum ibv_wc_status s)
{
    /* Only reached with no library; the numeric status is still useful. */
    static __thread char buf[32];
    snprintf(buf, sizeof(buf), "wc status %d", (int)s);
    return buf;
}
static int stub_fork_init(void)
{
    return EOPNOTSUPP;
}
static struct ibv_mr *stub_reg_mr_iova2(struct ibv_pd *pd, void *a, size_t l, uint64_t iova,
                                        unsigned int acc)
{
    (void)pd, (void)a, (void)l, (void)iova, (void)acc;
    errno = EOPNOTSUPP;
    return NULL;
}
static struct ibv_mr *stub_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t off, size_t l, uint64_t iova,
                                         int fd, int acc)
{
    (void)pd, (void)off, (void)l, (void)iova, (void)fd, (void)acc;
    /* What NCCL's wrapper does too, so the DMA-BUF probe reads "unsupported". */
    errno = EOPNOTSUPP;
    return NULL;
}
/* The inline data path of verbs.h, as table entries (see gt_ibv.h). */
static int dp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    return ibv_post_send(qp, wr, bad);
}
static int dp_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    return ibv_post_recv(qp, wr, bad);
}
static int dp_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    return ibv_poll_cq(cq, n, wc);
}
static int stub_get_async_event(struct ibv_context *c, struct ibv_async_event *e)
{
    (void)c, (void)e;
    errno = EAGAIN; /* no event: what a non-blocking async_fd says */
    return -1;
}
static void stub_ack_async_event(struct ibv_async_event *e)
{
    (void)e;
}
static const char *stub_event_type_str(enum ibv_event_type t)
{
    (void)t;
    return "unknown async event";
}
static int stub_ece(struct ibv_qp *qp, struct ibv_ece *e)
{
    (void)qp, (void)e;
    return EOPNOTSUPP;
}

static int stub_query_port_speed(struct ibv_context *c, uint8_t port, uint64_t *speed)
{
    (void)c, (void)port, (void)speed;
    return EOPNOTSUPP;
}

static const struct gt_ibv_fns stubs = {
    .get_device_list = stub_get_device_list,
    .free_device_list = stub_free_device_list,
    .get_device_name = stub_get_device_name,
    .get_device_guid = stub_get_device_guid,
    .open_device = stub_open_device,
    .close_device = stub_close_device,
    .query_device = stub_query_device,
    .query_port = stub_query_port,
    .query_gid = stub_query_gid,
    .alloc_pd = stub_alloc_pd,
    .dealloc_pd = stub_dealloc_pd,
    .reg_mr = stub_reg_mr,
    .dereg_mr = stub_dereg_mr,
    .create_cq = stub_create_cq,
    .destroy_cq = stub_destroy_cq,
    .create_qp = stub_create_qp,
    .modify_qp = stub_modify_qp,
    .destroy_qp = stub_destroy_qp,
    .wc_status_str = stub_wc_status_str,
    .fork_init = stub_fork_init,
    .get_async_event = stub_get_async_event,
    .ack_async_event = stub_ack_async_event,
    .event_type_str = stub_event_type_str,
    .reg_mr_iova2 = stub_reg_mr_iova2,
    .reg_dmabuf_mr = stub_reg_dmabuf_mr,
    .query_ece = stub_ece,
    .set_ece = stub_ece,
    .query_port_speed = stub_query_port_speed,
    .post_send = dp_post_send,
    .post_recv = dp_post_recv,
    .poll_cq = dp_poll_cq,
};

/* Fill every NULL function slot of *t from the stubs. */
static void fill_stubs(struct gt_ibv_fns *t)
{
#define FILL(f)                                                                                    \
    do {                                                                                           \
        if (!t->f)                                                                                 \
            t->f = stubs.f;                                                                        \
    } while (0)
    FILL(get_device_list);
    FILL(free_device_list);
    FILL(get_device_name);
    FILL(get_device_guid);
    FILL(open_device);
    FILL(close_device);
    FILL(query_device);
    FILL(query_port);
    FILL(query_gid);
    FILL(alloc_pd);
    FILL(dealloc_pd);
    FILL(reg_mr);
    FILL(dereg_mr);
    FILL(create_cq);
    FILL(destroy_cq);
    FILL(create_qp);
    FILL(modify_qp);
    FILL(destroy_qp);
    FILL(wc_status_str);
    FILL(fork_init);
    FILL(get_async_event);
    FILL(ack_async_event);
    FILL(event_type_str);
    FILL(reg_mr_iova2);
    FILL(reg_dmabuf_mr);
    FILL(query_ece);
    FILL(set_ece);
    FILL(query_port_speed);
    FILL(post_send);
    FILL(post_recv);
    FILL(poll_cq);
#undef FILL
}

static void set_stub_table(const char *why)
{
    memset(&gt_ibv, 0, sizeof(gt_ibv));
    fill_stubs(&gt_ibv);
    snprintf(gt_ibv.why, sizeof(gt_ibv.why), "%s", why);
    snprintf(gt_ibv.why_reg_dmabuf_mr, sizeof(gt_ibv.why_reg_dmabuf_mr), "libibverbs not loaded");
    snprintf(gt_ibv.why_reg_mr_iova2, sizeof(gt_ibv.why_reg_mr_iova2), "libibverbs not loaded");
    snprintf(gt_ibv.why_ece, sizeof(gt_ibv.why_ece), "libibverbs not loaded");
}

/* dlvsym into a slot; the cast from void* goes through memcpy because ISO C
 * has no object-to-function pointer conversion. */
static int resolve(void *h, const char *name, const char *ver, void *slot, size_t slot_size)
{
    void *p = dlvsym(h, name, ver);
    if (!p)
        return -1;
    memcpy(slot, &p, slot_size);
    return 0;
}
#define RESOLVE(h, field, name, ver)                                                               \
    resolve((h), (name), (ver), &gt_ibv.field, sizeof(gt_ibv.field))

static int do_load(void)
{
    const char *cands[3];
    int nc = 0;
    /* Our twin names the one library to use; NCCL_IBVERBS_LIB, as in NCCL,
     * is tried first and the usual names after it. */
    struct gt_setting lib;
    const char *env = gt_nccl_str(&lib, "NCCL_IBVERBS_LIB", "GDRTRACE_IBVERBS_LIB");
    if (!env)
        snprintf(lib.value, sizeof(lib.value), "libibverbs.so.1");
    gt_nccl_note(&lib);
    if (env)
        cands[nc++] = env;
    if (!env || lib.source != GT_SRC_GDRTRACE) {
        cands[nc++] = "libibverbs.so.1";
        cands[nc++] = "libibverbs.so";
    }
    char errs[200] = "";
    void *h = NULL;
    const char *used = NULL;
    for (int i = 0; i < nc && !h; i++) {
        h = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            used = cands[i];
        else if (!errs[0])
            snprintf(errs, sizeof(errs), "%s", dlerror());
    }
    if (!h) {
        char why[256];
        snprintf(why, sizeof(why), "dlopen %s failed: %s%s", cands[0], errs,
                 env ? (lib.source == GT_SRC_GDRTRACE ? " (from GDRTRACE_IBVERBS_LIB)"
                                                      : " (from NCCL_IBVERBS_LIB)")
                     : "");
        set_stub_table(why);
        return ENOENT;
    }

    memset(&gt_ibv, 0, sizeof(gt_ibv));
    static const struct {
        const char *name;
        size_t off;
    } core[] = {
#define C(f) {"ibv_" #f, offsetof(struct gt_ibv_fns, f)}
        C(get_device_list), C(free_device_list), C(get_device_name), C(get_device_guid),
        C(open_device),     C(close_device),     C(query_device),    C(query_port),
        C(query_gid),       C(alloc_pd),         C(dealloc_pd),      C(reg_mr),
        C(dereg_mr),        C(create_cq),        C(destroy_cq),      C(create_qp),
        C(modify_qp),       C(destroy_qp),       C(wc_status_str),   C(fork_init),
        C(get_async_event), C(ack_async_event),  C(event_type_str),
#undef C
    };
    for (size_t i = 0; i < sizeof(core) / sizeof(core[0]); i++) {
        if (resolve(h, core[i].name, "IBVERBS_1.1", (char *)&gt_ibv + core[i].off,
                    sizeof(void (*)(void))) != 0) {
            char why[256];
            snprintf(why, sizeof(why), "%s lacks %s@IBVERBS_1.1", used, core[i].name);
            dlclose(h);
            set_stub_table(why);
            return ENOSYS;
        }
    }
    if (RESOLVE(h, reg_mr_iova2, "ibv_reg_mr_iova2", "IBVERBS_1.8") == 0)
        gt_ibv.has_reg_mr_iova2 = 1;
    else
        snprintf(gt_ibv.why_reg_mr_iova2, sizeof(gt_ibv.why_reg_mr_iova2),
                 "%s lacks ibv_reg_mr_iova2@IBVERBS_1.8 (rdma-core < 29): no relaxed ordering",
                 used);
    if (RESOLVE(h, reg_dmabuf_mr, "ibv_reg_dmabuf_mr", "IBVERBS_1.12") == 0)
        gt_ibv.has_reg_dmabuf_mr = 1;
    else
        snprintf(gt_ibv.why_reg_dmabuf_mr, sizeof(gt_ibv.why_reg_dmabuf_mr),
                 "%s lacks ibv_reg_dmabuf_mr@IBVERBS_1.12 (rdma-core < 34)", used);
    if (RESOLVE(h, query_ece, "ibv_query_ece", "IBVERBS_1.10") == 0 &&
        RESOLVE(h, set_ece, "ibv_set_ece", "IBVERBS_1.10") == 0)
        gt_ibv.has_ece = 1;
    else {
        gt_ibv.query_ece = NULL;
        gt_ibv.set_ece = NULL;
        snprintf(gt_ibv.why_ece, sizeof(gt_ibv.why_ece),
                 "%s lacks ibv_query_ece/ibv_set_ece@IBVERBS_1.10", used);
    }
    if (RESOLVE(h, query_port_speed, "ibv_query_port_speed", "IBVERBS_1.16") == 0)
        gt_ibv.has_query_port_speed = 1;
    fill_stubs(&gt_ibv);
    snprintf(gt_ibv.lib, sizeof(gt_ibv.lib), "%s", used);
    gt_ibv.loaded = 1;
    lib_handle = h;
    return 0;
}

int gt_ibv_load(void)
{
    pthread_mutex_lock(&load_lock);
    if (!load_done) {
        load_rc = do_load();
        load_done = 1;
        if (load_rc)
            GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET, "verbs unavailable: %s", gt_ibv.why);
    }
    int rc = load_rc;
    pthread_mutex_unlock(&load_lock);
    return rc;
}

void gt_ibv_install(const struct gt_ibv_fns *fns)
{
    pthread_mutex_lock(&load_lock);
    gt_ibv = *fns;
    gt_ibv.has_reg_mr_iova2 = fns->reg_mr_iova2 != NULL;
    gt_ibv.has_reg_dmabuf_mr = fns->reg_dmabuf_mr != NULL;
    gt_ibv.has_ece = fns->query_ece != NULL && fns->set_ece != NULL;
    gt_ibv.has_query_port_speed = fns->query_port_speed != NULL;
    if (!gt_ibv.has_reg_dmabuf_mr)
        snprintf(gt_ibv.why_reg_dmabuf_mr, sizeof(gt_ibv.why_reg_dmabuf_mr),
                 "ibv_reg_dmabuf_mr not installed (test table)");
    if (!gt_ibv.has_reg_mr_iova2)
        snprintf(gt_ibv.why_reg_mr_iova2, sizeof(gt_ibv.why_reg_mr_iova2),
                 "ibv_reg_mr_iova2 not installed (test table)");
    fill_stubs(&gt_ibv);
    gt_ibv.loaded = 1;
    gt_ibv.why[0] = 0;
    snprintf(gt_ibv.lib, sizeof(gt_ibv.lib), "(installed by test)");
    load_done = 1;
    load_rc = 0;
    pthread_mutex_unlock(&load_lock);
}

void gt_ibv_reset(void)
{
    pthread_mutex_lock(&load_lock);
    memset(&gt_ibv, 0, sizeof(gt_ibv));
    load_done = 0;
    load_rc = 0;
    pthread_mutex_unlock(&load_lock);
}
