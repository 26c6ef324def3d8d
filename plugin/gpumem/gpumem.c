/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpumem.c — the GPU-memory validation layer (contract in gpumem.h).
 *
 * Comms: send and receive comms are wrapped (struct gm_comm) around the
 * inner transport's; listen comms and contexts pass through.  Requests are
 * the comm's slots (struct gm_req).  Memory handles are struct gm_mh: the
 * policy's gt_mr, plus the inner transport's handle for host memory.
 *
 * Staging: each GPU registration gets a pinned host mirror of its range,
 * allocated at regMr (connection setup, as NCCL allocates its own buffers)
 * and freed at deregMr, so the data path allocates nothing (a pinned
 * allocation or free there could wait for NCCL's running kernel, which waits
 * for this data).  Only a buffer outside every mirror (a registration over
 * GM_MIRROR_MAX) is staged in a per-slot buffer, grown on demand; buffers it
 * outgrows are kept until the comm closes, never freed on the data path.
 * Send: GPU data is copied to its pinned staging buffer with
 * cuMemcpyDtoHAsync on the comm's non-blocking stream, an event recorded
 * after it; pump() posts the comm's sends to the inner transport strictly in
 * issue order, each once its copy's event completed.  A synchronous copy (or
 * one on the legacy stream) would wait for NCCL's running kernel, which
 * waits for this send.
 * Receive: GPU receives land in staging; when the inner receive is done,
 * cuMemcpyHtoDAsync + an event; test() says done only when that event has
 * completed.
 * Failure (gt_net.h F4): the first failure of a comm is kept in c->fail and
 * described again by every later call on it.
 *
 * The copier process: no CUDA call of the data path is made in this
 * process (only the test seam gt_gpumem_test_copies_in_process makes the
 * copies above, in this process, with a driver a test installed).  A GPU registration is imported
 * by the copier process (copier_client.c) and its mirror is a shared memfd the copier pins; a comm
 * holds one block of the shared command region, slot i for request slot i.  isend posts the
 * GPU-to-host copy to slot i, test() posts the host-to-GPU copy of a finished receive; completion
 * is the slot's DONE (acquire load), and every 1024th poll of a pending copy asks whether the
 * copier still runs and still makes progress (its heartbeat), so a dead or stopped copier fails the
 * comm instead of hanging it.  Registrations above GM_MIRROR_MAX are refused in this mode
 * (docs/gpumem.md says why).
 */
#include "plugin/gpumem/gpumem.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl/gt_cuda.h"
#include "common/env.h"
#include "common/log.h"
#include "common/settings.h"
#include "plugin/gpumem/copier_client.h"

#define GM_MAX_DEVS 16
#define GM_SLOTS 64                       /* requests per comm; NCCL keeps at most 32 outstanding */
#define GM_MIRROR_MAX ((size_t)256 << 20) /* larger registrations: per-slot staging */
#define COMM_MAGIC 0x474d434du
#define MH_MAGIC 0x474d4d48u
_Static_assert(GM_SLOTS == GMC_SLOTS_PER_BLOCK, "one copier command slot per request slot");
#define GM_ALIVE_EVERY 1024 /* polls of a pending copier copy between liveness checks */

enum { R_FREE, R_COPY_OUT, R_WAIT_POST, R_POSTED, R_COPY_IN, R_FLUSH };

struct gm_comm;

struct gm_req {
    int state;
    int send;
    int gpu;
    struct gm_comm *c;
    uint64_t seq; /* sends: issue order */
    void *data;
    size_t size;
    int tag;
    void *inner_mh;
    void *phandle;
    void *inner_req;
    int recvd;
    void *buf;   /* the staging copy of data: in a mirror, or stage */
    void *stage; /* pinned, stage_cap bytes; kept across uses of the slot */
    size_t stage_cap;
    gt_CUevent ev;
    uint32_t reg; /* process: the registration's id in the copier */
    uint64_t off; /* process: data's offset in it (and in its mirror) */
    unsigned polls;
    struct gt_gpumem_watch watch; /* process: the copier's heartbeat as this copy saw it */
};

struct gm_comm {
    uint32_t magic;
    int send;
    void *inner;
    gt_CUcontext ctx; /* the GPU buffers' context, from the first GPU handle */
    gt_CUstream stream;
    uint64_t issued, posted; /* sends */
    gt_result fail_res;      /* GT_OK until the comm failed for good */
    struct gt_net_failure fail;
    void **retired; /* outgrown slot buffers, freed at close */
    int nretired, cap_retired;
    struct gmc_region *region; /* process: the copier's, and this comm's block in it */
    struct gmc_cmd *cmds;
    uint32_t gen;
    struct gm_req r[GM_SLOTS];
};

struct gm_mh {
    uint32_t magic;
    int dev;
    int gpu;
    struct gt_mr *m;
    void *inner_mh;
    gt_CUcontext ctx;
    uintptr_t base; /* the registered range [base, base + size) */
    size_t size;
    void *mirror;               /* pinned, size bytes; NULL: per-slot staging */
    struct gt_gpumem_creg creg; /* process: the copier's import; creg.mirror = mirror */
};

static struct {
    pthread_mutex_t lock;
    const struct gt_net_ops *inner;
    struct gt_gpumem_cfg cfg;
    struct gt_reg_policy pol;
    int ndev; /* probed devices */
    int probed;
    int refs; /* live contexts: the first re-reads the settings and re-probes */
    struct gt_reg_dev reg[GM_MAX_DEVS];
    int in_process; /* gt_gpumem_test_copies_in_process, read at the first init */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

int gt_gpumem_test_copies_in_process;

/* ---- refusing next to a real NIC ---------------------------------------- */

int gt_gpumem_rdma_active(char *why, size_t whylen)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/sys/class/infiniband", gt_reg_sysroot);
    DIR *d = opendir(p);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        for (int port = 1; port <= 8 && !found; port++) {
            char sp[1100], st[64] = "";
            snprintf(sp, sizeof(sp), "%s/%s/ports/%d/state", p, e->d_name, port);
            FILE *f = fopen(sp, "re");
            if (!f)
                continue;
            if (fgets(st, sizeof(st), f) && strstr(st, "ACTIVE")) {
                snprintf(why, whylen, "RDMA device %s port %d is ACTIVE", e->d_name, port);
                found = 1;
            }
            fclose(f);
        }
    }
    closedir(d);
    return found;
}

/* ---- CUDA helpers -------------------------------------------------------- */

static gt_result failed(struct gm_comm *c);

/* A CUDA call of comm c failed: the comm has failed for good (F4). */
static gt_result cuda_fail(struct gm_comm *c, const char *call, gt_CUresult r)
{
    if (c->fail_res == GT_OK) {
        c->fail_res = GT_UNHANDLED_CUDA_ERROR;
        c->fail.reason = GT_REASON_TRANSPORT_ERROR;
        c->fail.err = 0;
        snprintf(c->fail.text, sizeof(c->fail.text), "gpumem: %s failed: %s (%d)", call,
                 gt_cu_errstr(r), r);
    }
    return failed(c);
}

/* Makes ctx current for the duration of a CUDA sequence (NULL: the calling
 * thread's, as NCCL's proxy threads have one); *prev restores. */
static void ctx_in(gt_CUcontext ctx, gt_CUcontext *prev)
{
    *prev = NULL;
    gt_cu.ctx_get_current(prev);
    if (ctx && *prev != ctx)
        gt_cu.ctx_set_current(ctx);
}

static void ctx_out(gt_CUcontext ctx, gt_CUcontext prev)
{
    if (ctx && prev != ctx)
        gt_cu.ctx_set_current(prev);
}

static void ctx_enter(struct gm_comm *c, gt_CUcontext *prev)
{
    ctx_in(c->ctx, prev);
}

static void ctx_leave(struct gm_comm *c, gt_CUcontext prev)
{
    ctx_out(c->ctx, prev);
}

/* The comm's stream, the slot's event and q->buf for q->data: in h's
 * mirror, else the slot's own buffer of `size` bytes. */
static gt_CUresult slot_ready(struct gm_comm *c, struct gm_req *q, const struct gm_mh *h,
                              size_t size, const char **call)
{
    gt_CUresult r;
    if (!c->stream) {
        *call = "cuStreamCreate(CU_STREAM_NON_BLOCKING)";
        if ((r = gt_cu.stream_create(&c->stream, GT_CU_STREAM_NON_BLOCKING)) != GT_CUDA_SUCCESS)
            return r;
    }
    if (!q->ev) {
        *call = "cuEventCreate";
        if ((r = gt_cu.event_create(&q->ev, GT_CU_EVENT_DISABLE_TIMING)) != GT_CUDA_SUCCESS)
            return r;
    }
    uintptr_t a = (uintptr_t)q->data;
    if (h->mirror && a >= h->base && size <= h->size && a - h->base <= h->size - size) {
        q->buf = (char *)h->mirror + (a - h->base);
        return GT_CUDA_SUCCESS;
    }
    if (q->stage_cap < size) {
        if (q->stage) {
            if (c->nretired == c->cap_retired) {
                int cap = c->cap_retired ? 2 * c->cap_retired : 8;
                void **x = realloc(c->retired, (size_t)cap * sizeof(*x));
                *call = "keeping an outgrown staging buffer (out of memory)";
                if (!x)
                    return GT_CUDA_ERROR_INVALID_VALUE;
                c->retired = x;
                c->cap_retired = cap;
            }
            c->retired[c->nretired++] = q->stage;
        }
        q->stage = NULL;
        q->stage_cap = 0;
        size_t cap = size < 65536 ? 65536 : size;
        *call = "cuMemHostAlloc";
        if ((r = gt_cu.mem_host_alloc(&q->stage, cap, GT_CU_MEMHOSTALLOC_PORTABLE)) !=
            GT_CUDA_SUCCESS)
            return r;
        q->stage_cap = cap;
    }
    q->buf = q->stage;
    return GT_CUDA_SUCCESS;
}

/* ---- device and context calls ------------------------------------------ */

static gt_result probe_devices(void)
{
    for (int i = 0; g.probed && i < g.ndev; i++)
        gt_reg_dev_fini(&g.reg[i]);
    g.probed = 0;
    g.ndev = 0;
    int n = 0;
    gt_result rc = g.inner->devices(&n);
    if (rc != GT_OK)
        return rc;
    if (n > GM_MAX_DEVS)
        n = GM_MAX_DEVS;
    for (int i = 0; i < n; i++) {
        struct gt_props p;
        memset(&p, 0, sizeof(p));
        char name[64];
        snprintf(name, sizeof(name), "gpumem:%s",
                 g.inner->get_properties(i, &p) == GT_OK && p.name ? p.name : "?");
        gt_reg_dev_init_registrar(&g.reg[i], name, &gt_gpumem_registrar, &g.cfg);
        gt_reg_probe(&g.reg[i], &g.pol);
        char why[sizeof(g.reg[i].probe.why)];
        snprintf(why, sizeof(why), "emulated (no NIC): %s", g.reg[i].probe.why);
        memcpy(g.reg[i].probe.why, why, sizeof(why));
        GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET,
                "gpumem: %s offers ptrSupport %#x (%s); GPU memory moves by CUDA copies, "
                "peermem %s, forceFlush %d",
                name, g.reg[i].probe.advertised, g.reg[i].probe.why,
                g.cfg.peermem ? "emulated present" : "absent", g.cfg.force_flush);
    }
    g.ndev = n;
    g.probed = 1;
    return GT_OK;
}

static gt_result gm_init(void **ctx, uint64_t comm_id, int has_comm_id,
                         const struct gt_comm_config *config, gt_logger_fn logger,
                         gt_profiler_fn profiler)
{
    pthread_mutex_lock(&g.lock);
    if (g.refs == 0) {
        g.cfg = gt_settings_get()->gpumem;
        g.in_process = gt_gpumem_test_copies_in_process;
        static int retired_said;
        if (!retired_said++)
            gt_env_retired("GDRTRACE_GPUMEM_COPY_CONTEXT", "every copy runs in the copier process");
        g.pol = gt_settings_get()->reg;
    }
    char why[160];
    if (!g.cfg.on) {
        pthread_mutex_unlock(&g.lock);
        return gt_net_fail(GT_INVALID_USAGE, GT_REASON_TRANSPORT_ERROR, 0,
                           "gpumem: the layer is off (GDRTRACE_GPUMEM=1 turns it on)");
    }
    if (gt_gpumem_rdma_active(why, sizeof(why))) {
        pthread_mutex_unlock(&g.lock);
        return gt_net_fail(GT_INVALID_USAGE, GT_REASON_TRANSPORT_ERROR, 0,
                           "gpumem: refusing to emulate GPU Direct: %s (use the ib transport "
                           "there; unset GDRTRACE_GPUMEM)",
                           why);
    }
    gt_result rc = g.inner->init(ctx, comm_id, has_comm_id, config, logger, profiler);
    if (rc == GT_OK && g.refs == 0) {
        rc = probe_devices();
        if (rc != GT_OK) {
            g.inner->finalize(*ctx);
            *ctx = NULL;
        }
    }
    if (rc == GT_OK)
        g.refs++;
    pthread_mutex_unlock(&g.lock);
    return rc;
}

static gt_result gm_devices(int *ndev)
{
    return g.inner->devices(ndev);
}

static int dev_ok(int dev)
{
    return g.probed && dev >= 0 && dev < g.ndev;
}

static gt_result gm_get_properties(int dev, struct gt_props *p)
{
    gt_result rc = g.inner->get_properties(dev, p);
    if (rc != GT_OK || !dev_ok(dev))
        return rc;
    p->ptr_support = g.reg[dev].probe.advertised;
    p->force_flush = g.cfg.force_flush;
    return GT_OK;
}

static gt_result gm_get_probe(int dev, struct gt_dev_probe *probe)
{
    if (!dev_ok(dev) || !probe)
        return gt_net_fail(GT_INVALID_ARGUMENT, GT_REASON_BAD_ARGUMENT, 0,
                           "gpumem: getProbe of unknown device %d", dev);
    *probe = g.reg[dev].probe;
    return GT_OK;
}

static gt_result gm_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
    return g.inner->listen(ctx, dev, handle, listen_comm);
}

static struct gm_comm *wrap_comm(void *inner, int send)
{
    struct gm_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->magic = COMM_MAGIC;
    c->send = send;
    c->inner = inner;
    for (int i = 0; i < GM_SLOTS; i++)
        c->r[i].c = c;
    return c;
}

/* Wraps a comm sock just made; on failure closes it again, so neither
 * connect nor accept leaves a comm NCCL was never given. */
static gt_result adopt_comm(void *in, int send, void **out)
{
    struct gm_comm *c = wrap_comm(in, send);
    if (!c) {
        (send ? g.inner->close_send : g.inner->close_recv)(in);
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_TRANSPORT_ERROR, ENOMEM,
                           "gpumem: out of memory for a %s comm", send ? "send" : "receive");
    }
    *out = c;
    return GT_OK;
}

static gt_result gm_connect(void *ctx, int dev, void *handle, void **send_comm,
                            void **send_dev_comm)
{
    void *in = NULL;
    gt_result rc = g.inner->connect(ctx, dev, handle, &in, send_dev_comm);
    *send_comm = NULL;
    if (rc != GT_OK || !in)
        return rc;
    return adopt_comm(in, 1, send_comm);
}

static gt_result gm_accept(void *listen_comm, void **recv_comm, void **recv_dev_comm)
{
    void *in = NULL;
    gt_result rc = g.inner->accept(listen_comm, &in, recv_dev_comm);
    *recv_comm = NULL;
    if (rc != GT_OK || !in)
        return rc;
    return adopt_comm(in, 0, recv_comm);
}

static struct gm_comm *comm_of(void *p)
{
    struct gm_comm *c = p;
    return c && c->magic == COMM_MAGIC ? c : NULL;
}

static gt_result bad(const char *call)
{
    return gt_net_fail(GT_INVALID_ARGUMENT, GT_REASON_BAD_ARGUMENT, 0,
                       "gpumem: %s: not a gpumem comm, handle or request", call);
}

/* ---- registration ------------------------------------------------------- */

/* Registrations go to device 0's cache: every device has the same registrar
 * and policy (no NIC is involved), and sock's comms do not say their device. */
static int comm_dev(struct gm_comm *c)
{
    (void)c;
    return 0;
}

/* Process mode: the copier imports [a, a + size) and pins its shared
 * mirror; the comm gets its block of command slots on its first GPU
 * registration.  On failure the registration is refused, the cause named. */
static gt_result reg_in_copier(struct gm_comm *c, struct gm_mh *h, uintptr_t a, size_t size,
                               struct gt_reg_report *report)
{
    char why[GMC_TEXT + 64];
    int err = 0;
    if (size > GM_MIRROR_MAX) {
        snprintf(why, sizeof(why),
                 "%zu bytes is over the %zu-byte staging limit of the copier process", size,
                 GM_MIRROR_MAX);
        err = EFBIG;
    } else {
        err = gt_gpumem_copier_import(a, size, &h->creg, why, sizeof(why));
    }
    if (!err && !c->cmds) {
        c->cmds = gt_gpumem_copier_block_get(&c->region, &c->gen, why, sizeof(why));
        if (!c->cmds) {
            gt_gpumem_copier_release(&h->creg);
            err = EBUSY;
        }
    }
    if (!err && h->creg.gen != c->gen) {
        snprintf(why, sizeof(why),
                 "the copier process was restarted after this comm's first "
                 "GPU registration");
        gt_gpumem_copier_release(&h->creg);
        err = ESTALE;
    }
    if (err) {
        report->reason = report->method == GT_METHOD_DMABUF ? GT_REASON_DMABUF_REG_FAILED
                                                            : GT_REASON_PEERMEM_REG_FAILED;
        report->method = GT_METHOD_FAILED;
        report->err = err;
        /* the copier's own lines say "copier: " already */
        const char *cause = strncmp(why, "copier: ", 8) ? why : why + 8;
        GT_WARN("gpumem: GPU buffer %p (%zu bytes) refused for the copier process: %s", (void *)a,
                size, cause);
        return gt_net_fail(GT_SYSTEM_ERROR, report->reason, err, "gpumem copier: %s", cause);
    }
    h->mirror = h->creg.mirror;
    h->base = a;
    h->size = size;
    return GT_OK;
}

static gt_result do_reg(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
                        void **mhandle, struct gt_reg_report *report)
{
    struct gm_comm *c = comm_of(comm);
    if (!c || !mhandle)
        return bad("regMr");
    *mhandle = NULL;
    int dev = comm_dev(c);
    if (!dev_ok(dev))
        return bad("regMr");
    struct gm_mh *h = calloc(1, sizeof(*h));
    if (!h)
        return gt_net_fail(GT_SYSTEM_ERROR, GT_REASON_HOST_REG_FAILED, ENOMEM,
                           "gpumem: out of memory for a memory handle");
    struct gt_reg_report mine;
    if (!report)
        report = &mine;
    char err[512];
    gt_gpumem_refusal[0] = 0;
    gt_result rc = gt_reg_register(&g.reg[dev], &g.pol, data, size, type, offset, fd, &h->m, report,
                                   err, sizeof(err));
    if (rc != GT_OK) {
        free(h);
        /* The whole message went to the WARN log; the record keeps the cause. */
        if (gt_gpumem_refusal[0])
            return gt_net_fail(rc, report->reason, report->err, "gpumem: GPU buffer refused: %s",
                               gt_gpumem_refusal);
        return gt_net_fail(rc, report->reason, report->err, "gpumem: %s", err);
    }
    h->magic = MH_MAGIC;
    h->dev = dev;
    h->gpu = h->m->gpu;
    if (h->gpu && !g.in_process) {
        rc = reg_in_copier(c, h, (uintptr_t)data, size, report);
        if (rc != GT_OK) {
            gt_reg_deregister(&g.reg[dev], h->m);
            free(h);
            return rc;
        }
    } else if (h->gpu) { /* the test seam: copies in this process */
        gt_CUcontext ctx = NULL;
        if (gt_cu.pointer_get_attribute(&ctx, GT_CU_POINTER_ATTRIBUTE_CONTEXT,
                                        (gt_CUdeviceptr)(uintptr_t)data) == GT_CUDA_SUCCESS)
            h->ctx = ctx;
        if (!c->ctx)
            c->ctx = h->ctx;
        h->base = (uintptr_t)data;
        h->size = size;
        /* The comm's stream and events too, here rather than on the data
         * path (slot_ready retries whatever fails now). */
        gt_CUcontext prev0;
        ctx_in(h->ctx, &prev0);
        if (!c->stream &&
            gt_cu.stream_create(&c->stream, GT_CU_STREAM_NON_BLOCKING) != GT_CUDA_SUCCESS)
            c->stream = NULL;
        for (int i = 0; i < GM_SLOTS; i++)
            if (!c->r[i].ev &&
                gt_cu.event_create(&c->r[i].ev, GT_CU_EVENT_DISABLE_TIMING) != GT_CUDA_SUCCESS)
                c->r[i].ev = NULL;
        ctx_out(h->ctx, prev0);
        if (size <= GM_MIRROR_MAX) {
            gt_CUcontext prev;
            ctx_in(h->ctx, &prev);
            gt_CUresult r = gt_cu.mem_host_alloc(&h->mirror, size, GT_CU_MEMHOSTALLOC_PORTABLE);
            ctx_out(h->ctx, prev);
            if (r != GT_CUDA_SUCCESS) {
                h->mirror = NULL; /* per-slot staging instead */
                GT_INFO(GT_LOGSUB_NET,
                        "gpumem: no pinned mirror of %zu bytes (%s); staging per "
                        "request",
                        size, gt_cu_errstr(r));
            }
        }
    } else {
        rc = g.inner->reg_mr(c->inner, data, size, GT_PTR_HOST, &h->inner_mh, NULL);
        if (rc != GT_OK) {
            gt_reg_deregister(&g.reg[dev], h->m);
            free(h);
            report->method = GT_METHOD_FAILED;
            return rc; /* the inner transport described it (F1) */
        }
    }
    *mhandle = h;
    return GT_OK;
}

static gt_result gm_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle,
                           struct gt_reg_report *report)
{
    return do_reg(comm, data, size, type, 0, -1, mhandle, report);
}

static gt_result gm_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                                  int fd, void **mhandle, struct gt_reg_report *report)
{
    if (fd < 0)
        return gt_net_fail(GT_INVALID_ARGUMENT, GT_REASON_BAD_ARGUMENT, EBADF,
                           "gpumem: regMrDmaBuf with fd %d", fd);
    return do_reg(comm, data, size, type, offset, fd, mhandle, report);
}

static gt_result gm_dereg_mr(void *comm, void *mhandle)
{
    struct gm_comm *c = comm_of(comm);
    struct gm_mh *h = mhandle;
    /* NCCL frees a connection whose registration failed with deregMr(comm,
     * NULL) (src/transport/net.cc sendProxyFree): a no-op, as in sock and ib. */
    if (c && !h)
        return GT_OK;
    if (!c || !h || h->magic != MH_MAGIC)
        return bad("deregMr");
    gt_result rc = GT_OK;
    if (h->inner_mh)
        rc = g.inner->dereg_mr(c->inner, h->inner_mh);
    gt_result r2 = gt_reg_deregister(&g.reg[h->dev], h->m);
    if (h->creg.mirror) {
        gt_gpumem_copier_release(&h->creg);
    } else if (h->mirror) {
        /* NCCL deregisters after its requests on the buffer completed. */
        gt_CUcontext prev;
        ctx_in(h->ctx, &prev);
        gt_cu.mem_free_host(h->mirror);
        ctx_out(h->ctx, prev);
    }
    h->magic = 0;
    free(h);
    if (rc == GT_OK && r2 != GT_OK)
        return gt_net_fail(r2, GT_REASON_BAD_ARGUMENT, 0,
                           "gpumem: deregMr: the handle was not registered");
    return rc;
}

/* ---- data path ---------------------------------------------------------- */

static gt_result failed(struct gm_comm *c)
{
    return gt_net_fail(c->fail_res, c->fail.reason, c->fail.err, "%s", c->fail.text);
}

/* Records the inner transport's failure (it described it: F1) on c. */
static gt_result inner_failed(struct gm_comm *c, gt_result rc, uint32_t mark)
{
    if (c->fail_res == GT_OK) {
        c->fail_res = rc;
        gt_net_failure_since(mark, &c->fail);
    }
    return failed(c);
}

static struct gm_req *slot(struct gm_comm *c)
{
    for (int i = 0; i < GM_SLOTS; i++)
        if (c->r[i].state == R_FREE)
            return &c->r[i];
    return NULL;
}

static void release(struct gm_req *q)
{
    q->state = R_FREE;
    q->inner_req = NULL;
}

/* ---- process mode: copies by the copier ---------------------------------- */

/* q's range in its registration h (and in h's mirror); 0 when inside. */
static int copier_range(struct gm_req *q, const struct gm_mh *h, size_t size)
{
    uintptr_t a = (uintptr_t)q->data;
    if (!h->creg.mirror || a < h->base || size > h->size || a - h->base > h->size - size)
        return -1;
    q->reg = h->creg.reg;
    q->off = a - h->base;
    q->buf = (char *)h->mirror + q->off;
    q->polls = 0;
    return 0;
}

__attribute__((format(printf, 2, 3))) static gt_result copier_fail(struct gm_comm *c,
                                                                   const char *fmt, ...)
{
    if (c->fail_res == GT_OK) {
        c->fail_res = GT_UNHANDLED_CUDA_ERROR;
        c->fail.reason = GT_REASON_TRANSPORT_ERROR;
        c->fail.err = 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->fail.text, sizeof(c->fail.text), fmt, ap);
        va_end(ap);
    }
    return failed(c);
}

/* 1 when slot q's copy completed, 0 while pending; else the comm failed
 * (*rc).  No system call but one poll() every GM_ALIVE_EVERY polls. */
static int copier_done(struct gm_comm *c, struct gm_req *q, gt_result *rc)
{
    struct gmc_cmd *cmd = &c->cmds[q - c->r];
    uint32_t st = gt_gpumem_copier_state(cmd);
    if (st == GMC_DONE)
        return 1;
    if (st == GMC_FAILED) {
        if (cmd->call == GMC_CALL_BADREG)
            *rc = copier_fail(c, "gpumem: copier: %s (registration %u)", gmc_call_name(cmd->call),
                              q->reg);
        else
            *rc = copier_fail(c, "gpumem: copier: %s failed: %s (%d)", gmc_call_name(cmd->call),
                              gt_cu_errstr(cmd->cu), cmd->cu);
        return -1;
    }
    char why[GMC_TEXT];
    if (++q->polls % GM_ALIVE_EVERY == 0 &&
        (!gt_gpumem_copier_alive(c->gen, why, sizeof(why)) ||
         !gt_gpumem_copier_progress(c->gen, c->region, &q->watch, why, sizeof(why)))) {
        *rc = copier_fail(c, "gpumem: %s", why);
        return -1;
    }
    return 0;
}

/* Posts q's copy to the copier (its range set by copier_range).  A dead
 * copier is noticed by copier_done. */
static void copier_post(struct gm_comm *c, struct gm_req *q, uint32_t dir, size_t size)
{
    memset(&q->watch, 0, sizeof(q->watch));
    gt_gpumem_copier_post(c->region, &c->cmds[q - c->r], dir, q->reg, q->off, size);
}

/* Posts the comm's sends in issue order while their copies are complete and
 * the inner transport takes them. */
static gt_result pump(struct gm_comm *c)
{
    while (c->posted < c->issued) {
        struct gm_req *q = NULL;
        for (int i = 0; i < GM_SLOTS && !q; i++)
            if (c->r[i].state != R_FREE && c->r[i].send && c->r[i].seq == c->posted)
                q = &c->r[i];
        if (!q)
            break; /* cannot happen: every issued send holds a slot until posted */
        if (q->state == R_COPY_OUT && c->cmds) {
            gt_result rc = GT_OK;
            int d = copier_done(c, q, &rc);
            if (d <= 0)
                return rc;
            q->state = R_WAIT_POST;
        } else if (q->state == R_COPY_OUT) {
            gt_CUcontext prev;
            ctx_enter(c, &prev);
            gt_CUresult r = gt_cu.event_query(q->ev);
            ctx_leave(c, prev);
            if (r == GT_CUDA_ERROR_NOT_READY)
                return GT_OK;
            if (r != GT_CUDA_SUCCESS)
                return cuda_fail(c, "cuEventQuery (GPU to host copy)", r);
            q->state = R_WAIT_POST;
        }
        if (q->state != R_WAIT_POST)
            break;
        void *ir = NULL;
        uint32_t mark = gt_net_fail_mark();
        gt_result rc = g.inner->isend(c->inner, q->gpu ? q->buf : q->data, q->size, q->tag,
                                      q->inner_mh, q->phandle, &ir);
        if (rc != GT_OK)
            return inner_failed(c, rc, mark);
        if (!ir)
            return GT_OK; /* no slot in the inner transport now */
        q->inner_req = ir;
        q->state = R_POSTED;
        c->posted++;
    }
    return GT_OK;
}

static gt_result gm_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
                          void *phandle, void **request)
{
    struct gm_comm *c = comm_of(send_comm);
    struct gm_mh *h = mhandle;
    if (!c || !c->send || !request || (h && h->magic != MH_MAGIC))
        return bad("isend");
    *request = NULL;
    if (c->fail_res != GT_OK)
        return failed(c);
    struct gm_req *q = slot(c);
    if (!q)
        return GT_OK;
    q->send = 1;
    q->gpu = h && h->gpu;
    q->data = data;
    q->size = size;
    q->tag = tag;
    q->inner_mh = h ? h->inner_mh : NULL;
    q->phandle = phandle;
    q->state = R_WAIT_POST;
    if (q->gpu && size > 0 && h->creg.mirror) {
        if (!c->cmds || copier_range(q, h, size) != 0) {
            q->state = R_FREE;
            return bad("isend (a GPU buffer outside its registration on this comm)");
        }
        copier_post(c, q, GMC_DTOH, size);
        q->state = R_COPY_OUT;
    } else if (q->gpu && size > 0) {
        if (!c->ctx)
            c->ctx = h->ctx;
        gt_CUcontext prev;
        ctx_enter(c, &prev);
        const char *call = "";
        gt_CUresult r = slot_ready(c, q, h, size, &call);
        if (r == GT_CUDA_SUCCESS) {
            call = "cuMemcpyDtoHAsync";
            r = gt_cu.memcpy_dtoh_async(q->buf, (gt_CUdeviceptr)(uintptr_t)data, size, c->stream);
        }
        if (r == GT_CUDA_SUCCESS) {
            call = "cuEventRecord";
            r = gt_cu.event_record(q->ev, c->stream);
        }
        ctx_leave(c, prev);
        if (r != GT_CUDA_SUCCESS) {
            q->state = R_FREE;
            return cuda_fail(c, call, r);
        }
        q->state = R_COPY_OUT;
    }
    q->seq = c->issued++;
    *request = q;
    return pump(c);
}

static gt_result gm_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
                          void **mhandles, void **phandles, void **request)
{
    struct gm_comm *c = comm_of(recv_comm);
    if (!c || c->send || !request || n != 1 || !data || !sizes || !tags)
        return bad("irecv (gpumem takes one buffer per receive, as sock)");
    *request = NULL;
    struct gm_mh *h = mhandles ? mhandles[0] : NULL;
    if (h && h->magic != MH_MAGIC)
        return bad("irecv");
    if (c->fail_res != GT_OK)
        return failed(c);
    struct gm_req *q = slot(c);
    if (!q)
        return GT_OK;
    q->send = 0;
    q->gpu = h && h->gpu;
    q->data = data[0];
    q->size = sizes[0];
    q->tag = tags[0];
    q->inner_mh = h ? h->inner_mh : NULL;
    q->phandle = phandles ? phandles[0] : NULL;
    void *buf = q->data;
    if (q->gpu && h->creg.mirror) {
        if (!c->cmds || copier_range(q, h, q->size) != 0)
            return bad("irecv (a GPU buffer outside its registration on this comm)");
        buf = q->buf;
    } else if (q->gpu) {
        if (!c->ctx)
            c->ctx = h->ctx;
        gt_CUcontext prev;
        ctx_enter(c, &prev);
        const char *call = "";
        gt_CUresult r = slot_ready(c, q, h, q->size, &call);
        ctx_leave(c, prev);
        if (r != GT_CUDA_SUCCESS)
            return cuda_fail(c, call, r);
        buf = q->buf;
    }
    void *ir = NULL;
    size_t sz = q->size;
    int tag = q->tag;
    void *imh = q->inner_mh, *ph = q->phandle;
    uint32_t mark = gt_net_fail_mark();
    gt_result rc = g.inner->irecv(c->inner, 1, &buf, &sz, &tag, &imh, &ph, &ir);
    if (rc != GT_OK)
        return inner_failed(c, rc, mark);
    if (!ir)
        return GT_OK;
    q->inner_req = ir;
    q->state = R_POSTED;
    *request = q;
    return GT_OK;
}

static gt_result gm_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
                           void **request)
{
    struct gm_comm *c = comm_of(recv_comm);
    if (!c || c->send || !request)
        return bad("iflush");
    *request = NULL;
    if (c->fail_res != GT_OK)
        return failed(c);
    int gpu = 0;
    for (int i = 0; i < n && mhandles; i++) {
        struct gm_mh *h = mhandles[i];
        gpu |= h && h->magic == MH_MAGIC && h->gpu;
    }
    if (!gpu) {
        void *ir = NULL, *imh[GT_NET_MAX_REQUESTS] = {0};
        for (int i = 0; i < n && i < GT_NET_MAX_REQUESTS && mhandles; i++) {
            struct gm_mh *h = mhandles[i];
            imh[i] = h && h->magic == MH_MAGIC ? h->inner_mh : NULL;
        }
        uint32_t mark = gt_net_fail_mark();
        gt_result rc = g.inner->iflush(c->inner, n, data, sizes, imh, &ir);
        if (rc != GT_OK)
            return inner_failed(c, rc, mark);
        if (!ir)
            return GT_OK;
        struct gm_req *q = slot(c);
        if (!q) /* cannot happen with NCCL's limits; the inner request is dropped */
            return gt_net_fail(GT_INTERNAL_ERROR, GT_REASON_TRANSPORT_ERROR, 0,
                               "gpumem: no request slot for a flush");
        q->send = 0;
        q->gpu = 0;
        q->inner_req = ir;
        q->state = R_POSTED;
        *request = q;
        return GT_OK;
    }
    /* The receive was reported done only after its copy into GPU memory had
     * completed: nothing is left to flush, but NCCL gets a request to test. */
    struct gm_req *q = slot(c);
    if (!q)
        return GT_OK;
    q->send = 0;
    q->state = R_FLUSH;
    *request = q;
    return GT_OK;
}

static gt_result gm_test(void *request, int *done, int *sizes)
{
    struct gm_req *q = request;
    struct gm_comm *c = q ? comm_of(q->c) : NULL;
    if (!c || !done || q->state == R_FREE)
        return bad("test");
    *done = 0;
    if (c->fail_res != GT_OK) {
        release(q);
        return failed(c);
    }
    if (c->send) {
        gt_result rc = pump(c);
        if (rc != GT_OK) {
            release(q);
            return rc;
        }
    }
    switch (q->state) {
    case R_FLUSH:
        *done = 1;
        release(q);
        return GT_OK;
    case R_POSTED: {
        int d = 0, sz = 0;
        uint32_t mark = gt_net_fail_mark();
        gt_result rc = g.inner->test(q->inner_req, &d, &sz);
        if (rc != GT_OK) {
            release(q);
            return inner_failed(c, rc, mark);
        }
        if (!d)
            return GT_OK;
        q->inner_req = NULL;
        q->recvd = sz;
        if (c->send || !q->gpu || sz <= 0) {
            *done = 1;
            if (sizes)
                sizes[0] = c->send ? (int)q->size : sz;
            release(q);
            return GT_OK;
        }
        if (c->cmds) {
            copier_post(c, q, GMC_HTOD, (size_t)sz);
            q->state = R_COPY_IN;
            return GT_OK; /* the copier has not even seen it yet */
        }
        gt_CUcontext prev;
        ctx_enter(c, &prev);
        const char *call = "cuMemcpyHtoDAsync";
        gt_CUresult r = gt_cu.memcpy_htod_async((gt_CUdeviceptr)(uintptr_t)q->data, q->buf,
                                                (size_t)sz, c->stream);
        if (r == GT_CUDA_SUCCESS) {
            call = "cuEventRecord";
            r = gt_cu.event_record(q->ev, c->stream);
        }
        ctx_leave(c, prev);
        if (r != GT_CUDA_SUCCESS) {
            release(q);
            return cuda_fail(c, call, r);
        }
        q->state = R_COPY_IN;
        /* the copy may be complete already */
        __attribute__((fallthrough));
    }
    case R_COPY_IN: {
        if (c->cmds) {
            gt_result rc = GT_OK;
            int d = copier_done(c, q, &rc);
            if (d < 0)
                release(q);
            if (d <= 0)
                return rc;
            *done = 1;
            if (sizes)
                sizes[0] = q->recvd;
            release(q);
            return GT_OK;
        }
        gt_CUcontext prev;
        ctx_enter(c, &prev);
        gt_CUresult r = gt_cu.event_query(q->ev);
        ctx_leave(c, prev);
        if (r == GT_CUDA_ERROR_NOT_READY)
            return GT_OK;
        if (r != GT_CUDA_SUCCESS) {
            release(q);
            return cuda_fail(c, "cuEventQuery (host to GPU copy)", r);
        }
        *done = 1;
        if (sizes)
            sizes[0] = q->recvd;
        release(q);
        return GT_OK;
    }
    default: /* R_COPY_OUT, R_WAIT_POST: pump() posts it when its turn comes */
        return GT_OK;
    }
}

static void free_comm(struct gm_comm *c)
{
    gt_CUcontext prev;
    int cuda = c->stream != NULL || c->nretired;
    for (int i = 0; i < GM_SLOTS; i++)
        cuda |= c->r[i].ev != NULL || c->r[i].stage != NULL;
    if (cuda) {
        ctx_enter(c, &prev);
        /* Copies may still run on the stream (abort path): the driver defers
         * freeing pinned memory and events until they are complete. */
        for (int i = 0; i < GM_SLOTS; i++) {
            if (c->r[i].ev)
                gt_cu.event_destroy(c->r[i].ev);
            if (c->r[i].stage)
                gt_cu.mem_free_host(c->r[i].stage);
        }
        for (int i = 0; i < c->nretired; i++)
            gt_cu.mem_free_host(c->retired[i]);
        if (c->stream)
            gt_cu.stream_destroy(c->stream);
        ctx_leave(c, prev);
    }
    if (c->cmds)
        gt_gpumem_copier_block_put(c->cmds, c->gen);
    free(c->retired);
    c->magic = 0;
    free(c);
}

static gt_result gm_close_send(void *send_comm)
{
    struct gm_comm *c = comm_of(send_comm);
    if (!c || !c->send)
        return bad("closeSend");
    gt_result rc = g.inner->close_send(c->inner);
    free_comm(c);
    return rc;
}

static gt_result gm_close_recv(void *recv_comm)
{
    struct gm_comm *c = comm_of(recv_comm);
    if (!c || c->send)
        return bad("closeRecv");
    gt_result rc = g.inner->close_recv(c->inner);
    free_comm(c);
    return rc;
}

static gt_result gm_close_listen(void *listen_comm)
{
    return g.inner->close_listen(listen_comm);
}

static gt_result gm_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle)
{
    struct gm_comm *c = comm_of(comm);
    struct gm_mh *h = mhandle;
    if (!c || (h && h->magic != MH_MAGIC))
        return bad("getDeviceMr");
    return g.inner->get_device_mr(c->inner, h ? h->inner_mh : NULL, dptr_mhandle);
}

static gt_result gm_irecv_consumed(void *recv_comm, int n, void *request)
{
    struct gm_comm *c = comm_of(recv_comm);
    if (!c)
        return bad("irecvConsumed");
    struct gm_req *q = request;
    return g.inner->irecv_consumed(c->inner, n, q ? q->inner_req : NULL);
}

static gt_result gm_finalize(void *ctx)
{
    pthread_mutex_lock(&g.lock);
    if (g.refs > 0)
        g.refs--;
    /* The last context: the copier exits when its socket closes. */
    if (g.refs == 0)
        gt_gpumem_copier_stop();
    pthread_mutex_unlock(&g.lock);
    return g.inner->finalize(ctx);
}

static gt_result gm_set_net_attr(void *ctx, void *net_attr)
{
    return g.inner->set_net_attr(ctx, net_attr);
}

static const struct gt_net_ops gm_ops = {
    .name = "sock+gpumem",
    .init = gm_init,
    .devices = gm_devices,
    .get_properties = gm_get_properties,
    .listen = gm_listen,
    .connect = gm_connect,
    .accept = gm_accept,
    .reg_mr = gm_reg_mr,
    .reg_mr_dmabuf = gm_reg_mr_dmabuf,
    .dereg_mr = gm_dereg_mr,
    .isend = gm_isend,
    .irecv = gm_irecv,
    .iflush = gm_iflush,
    .test = gm_test,
    .close_send = gm_close_send,
    .close_recv = gm_close_recv,
    .close_listen = gm_close_listen,
    .get_device_mr = gm_get_device_mr,
    .irecv_consumed = gm_irecv_consumed,
    .finalize = gm_finalize,
    .set_net_attr = gm_set_net_attr,
    .get_probe = gm_get_probe,
};

const struct gt_net_ops *gt_gpumem_wrap(const struct gt_net_ops *inner)
{
    pthread_mutex_lock(&g.lock);
    g.inner = inner;
    pthread_mutex_unlock(&g.lock);
    return &gm_ops;
}
