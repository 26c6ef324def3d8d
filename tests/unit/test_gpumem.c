/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gpumem.c — the GPU-memory validation layer (plugin/gpumem) over the
 * real sock transport on loopback, with a fake CUDA table installed through
 * the dl seam (gt_cu_install).  "GPU memory" is a host arena the fake calls
 * device memory; dma-bufs are memfds whose /proc/self/fdinfo is faked in a
 * temporary tree (gt_gpumem_procroot).  The fake's asynchronous copies run
 * only when the test calls gpu_progress(), so the tests can prove:
 *  - the dma-buf check: not a dma-buf, another exporter (vgem), size and
 *    offset bounds, host memory, an fd that is not open;
 *  - every policy outcome through the layer: DIRECT-DMABUF (NCCL's fd kept
 *    as a duplicate until deregMr; regMr(CUDA) upgraded by export),
 *    DIRECT-PEERMEM (emulated), FALLBACK (the errno test switch), ERROR, and
 *    the refusal next to an ACTIVE RDMA port;
 *  - asynchronous completion: a GPU send is not posted before its copy
 *    completed and keeps its place before a later host send; a GPU receive
 *    is not done before its host-to-GPU copy completed; copies go on a
 *    non-blocking stream of the layer's own; forceFlush is the switch.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/dl/gt_cuda.h"
#include "common/gt_net.h"
#include "plugin/gpumem/gpumem.h"
#include "tests/unit/net_pair.h"
#include "common/settings.h"

extern const struct gt_net_ops gt_sock_ops;

/* ---- the fake GPU ------------------------------------------------------ */

#define ARENA (8u << 20)
static unsigned char *arena; /* "device memory" */
static char tree[256];       /* fake /proc and /sys roots */
static int fake_ctx_obj, fake_stream_obj;
static __thread gt_CUcontext cur_ctx;

struct copy {
    void *dst;
    const void *src;
    size_t n;
};
static struct copy queue[256];
static int queued, completed;
static int stream_flags = -1, legacy_stream_used, exports;

struct fake_event {
    int target;
};

static int in_arena(gt_CUdeviceptr p)
{
    return (uintptr_t)p >= (uintptr_t)arena && (uintptr_t)p < (uintptr_t)arena + ARENA;
}

static void gpu_progress(void)
{
    for (; completed < queued; completed++)
        memcpy(queue[completed].dst, queue[completed].src, queue[completed].n);
}

static gt_CUresult f_count(int *n)
{
    *n = 1;
    return 0;
}
static gt_CUresult f_dev(gt_CUdevice *d, int o)
{
    *d = o;
    return 0;
}
static gt_CUresult f_attr(int *v, int a, gt_CUdevice d)
{
    (void)d;
    *v = a == GT_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED;
    return 0;
}
static gt_CUresult f_ptr_attr(void *out, int a, gt_CUdeviceptr p)
{
    if (!in_arena(p))
        return GT_CUDA_ERROR_INVALID_VALUE;
    if (a == GT_CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
        *(int *)out = GT_CU_MEMORYTYPE_DEVICE;
    else if (a == GT_CU_POINTER_ATTRIBUTE_CONTEXT)
        *(gt_CUcontext *)out = (gt_CUcontext)&fake_ctx_obj;
    else if (a == GT_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
        *(int *)out = 0;
    else
        return GT_CUDA_ERROR_INVALID_VALUE;
    return 0;
}
static gt_CUresult f_range(gt_CUdeviceptr *b, size_t *s, gt_CUdeviceptr p)
{
    if (!in_arena(p))
        return GT_CUDA_ERROR_INVALID_VALUE;
    *b = (gt_CUdeviceptr)(uintptr_t)arena;
    *s = ARENA;
    return 0;
}
static gt_CUresult f_ctx_get(gt_CUcontext *c)
{
    *c = cur_ctx;
    return 0;
}
static gt_CUresult f_ctx_set(gt_CUcontext c)
{
    cur_ctx = c;
    return 0;
}

/* A memfd posing as a dma-buf of `exporter`, `size` bytes. */
static int fake_dmabuf(const char *exporter, size_t size)
{
    int fd = memfd_create("fake-dmabuf", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    char p[512];
    snprintf(p, sizeof(p), "%s/proc/self/fdinfo/%d", tree, fd);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fprintf(f,
            "pos:\t0\nflags:\t02\nmnt_id:\t9\nino:\t1\nsize:\t%zu\ncount:\t1\n"
            "exp_name:\t%s\n",
            size, exporter);
    fclose(f);
    return fd;
}

static gt_CUresult f_export(void *h, gt_CUdeviceptr p, size_t n, int t, unsigned long long fl)
{
    (void)fl;
    if (!in_arena(p) || t != GT_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD)
        return GT_CUDA_ERROR_INVALID_VALUE;
    exports++;
    *(int *)h = fake_dmabuf("nv_dmabuf", n);
    return 0;
}
static gt_CUresult f_sc(gt_CUstream *s, unsigned int flags)
{
    stream_flags = (int)flags;
    *s = (gt_CUstream)&fake_stream_obj;
    return 0;
}
static gt_CUresult f_sd(gt_CUstream s)
{
    (void)s;
    return 0;
}
static gt_CUresult f_ec(gt_CUevent *e, unsigned int f)
{
    (void)f;
    *e = (gt_CUevent)calloc(1, sizeof(struct fake_event));
    return 0;
}
static gt_CUresult f_ed(gt_CUevent e)
{
    free(e);
    return 0;
}
static gt_CUresult f_er(gt_CUevent e, gt_CUstream s)
{
    if (!s)
        legacy_stream_used++;
    ((struct fake_event *)e)->target = queued;
    return 0;
}
static gt_CUresult f_eq(gt_CUevent e)
{
    return completed >= ((struct fake_event *)e)->target ? 0 : GT_CUDA_ERROR_NOT_READY;
}
static void enqueue(void *d, const void *s, size_t n, gt_CUstream st)
{
    if (!st)
        legacy_stream_used++;
    assert_true(queued < 256);
    queue[queued++] = (struct copy){d, s, n};
}
static gt_CUresult f_htod(gt_CUdeviceptr d, const void *s, size_t n, gt_CUstream st)
{
    if (!in_arena(d))
        return GT_CUDA_ERROR_INVALID_VALUE;
    enqueue((void *)(uintptr_t)d, s, n, st);
    return 0;
}
static gt_CUresult f_dtoh(void *d, gt_CUdeviceptr s, size_t n, gt_CUstream st)
{
    if (!in_arena(s))
        return GT_CUDA_ERROR_INVALID_VALUE;
    enqueue(d, (const void *)(uintptr_t)s, n, st);
    return 0;
}
static int host_allocs, host_frees, fail_host_alloc;
static gt_CUresult f_hal(void **p, size_t n, unsigned int f)
{
    (void)f;
    host_allocs++;
    if (fail_host_alloc) {
        *p = NULL;
        return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    }
    *p = malloc(n);
    return *p ? 0 : 2;
}
static gt_CUresult f_hfree(void *p)
{
    host_frees++;
    free(p);
    return 0;
}

static void install_cuda(void)
{
    struct gt_cu_fns t = {0};
    t.device_get_count = f_count;
    t.device_get = f_dev;
    t.device_get_attribute = f_attr;
    t.pointer_get_attribute = f_ptr_attr;
    t.mem_get_address_range = f_range;
    t.ctx_get_current = f_ctx_get;
    t.ctx_set_current = f_ctx_set;
    t.mem_get_handle_for_address_range = f_export;
    t.stream_create = f_sc;
    t.stream_destroy = f_sd;
    t.stream_query = f_sd;
    t.event_create = f_ec;
    t.event_destroy = f_ed;
    t.event_record = f_er;
    t.event_query = f_eq;
    t.memcpy_htod_async = f_htod;
    t.memcpy_dtoh_async = f_dtoh;
    t.mem_host_alloc = f_hal;
    t.mem_free_host = f_hfree;
    gt_cu_install(&t);
}

/* ---- helpers ------------------------------------------------------------ */

static const struct gt_net_ops *ops;
static void *ctx;

static void clear_env(void)
{
    static const char *const v[] = {"GDRTRACE_REG", "GDRTRACE_ALLOW_PEERMEM",
                                    "GDRTRACE_GPUMEM_PEERMEM", "GDRTRACE_GPUMEM_FORCE_FLUSH",
                                    "GDRTRACE_GPUMEM_DMABUF_ERRNO"};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        unsetenv(v[i]);
    /* This test's fake driver is installed in-process (gt_cu_install): the
     * copier process (the layer's one copy mode) is tested by
     * test_gpumem_copier. */
    gt_gpumem_test_copies_in_process = 1;
}

static void layer_up(void)
{
    gt_settings_reset_for_test(); /* the environment each case set */
    ops = gt_gpumem_wrap(&gt_sock_ops);
    assert_int_equal(ops->init(&ctx, 1, 1, NULL, NULL, NULL), GT_OK);
}

static void layer_down(void)
{
    assert_int_equal(ops->finalize(ctx), GT_OK);
    ctx = NULL;
}

static void connect_pair(void **sc, void **rc)
{
    net_connect_pair(ops, ctx, sc, rc);
}

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* ---- the dma-buf check --------------------------------------------------- */

static void test_fd_checks(void **state)
{
    (void)state;
    char why[256];
    void *a = arena + 65536;
    /* a memfd in the real /proc: not a dma-buf */
    gt_gpumem_procroot = "";
    int m = memfd_create("plain", MFD_CLOEXEC);
    assert_int_equal(gt_gpumem_check_dmabuf(m, 0, (uintptr_t)a, 4096, why, sizeof(why)), ENOTSUP);
    assert_non_null(strstr(why, "not a dma-buf"));
    close(m);
    gt_gpumem_procroot = tree;
    int v = fake_dmabuf("vgem", 65536);
    assert_int_equal(gt_gpumem_check_dmabuf(v, 0, (uintptr_t)a, 4096, why, sizeof(why)), ENOTSUP);
    assert_non_null(strstr(why, "'vgem'"));
    close(v);
    int fd = fake_dmabuf("nv_dmabuf", 65536);
    assert_int_equal(gt_gpumem_check_dmabuf(fd, 0, (uintptr_t)a, 65536, why, sizeof(why)), 0);
    assert_int_equal(gt_gpumem_check_dmabuf(fd, 4096, (uintptr_t)a + 4096, 61440, why, sizeof(why)),
                     0);
    /* bounds: past the dma-buf's size */
    assert_int_equal(gt_gpumem_check_dmabuf(fd, 4096, (uintptr_t)a, 65536, why, sizeof(why)),
                     ERANGE);
    assert_non_null(strstr(why, "65536 bytes"));
    assert_int_equal(gt_gpumem_check_dmabuf(fd, 70000, (uintptr_t)a, 1, why, sizeof(why)), ERANGE);
    /* host memory */
    char host[64];
    assert_int_equal(gt_gpumem_check_dmabuf(fd, 0, (uintptr_t)host, 64, why, sizeof(why)), EFAULT);
    assert_non_null(strstr(why, "not CUDA device memory"));
    /* the dma-buf would start before the allocation */
    assert_int_equal(gt_gpumem_check_dmabuf(fd, 4096, (uintptr_t)arena, 4096, why, sizeof(why)),
                     EFAULT);
    close(fd);
    /* not open */
    assert_int_equal(gt_gpumem_check_dmabuf(fd, 0, (uintptr_t)a, 4096, why, sizeof(why)), EBADF);
    assert_int_equal(gt_gpumem_check_dmabuf(-1, 0, (uintptr_t)a, 4096, why, sizeof(why)), EBADF);
}

/* ---- policy outcomes through the layer ------------------------------------ */

struct outcome {
    const char *label;
    const char *reg, *allow, *peermem, *errno_;
    int how; /* 0 regMrDmaBuf(nv_dmabuf fd), 1 regMr(CUDA), 2 regMrDmaBuf(vgem fd) */
    int ptr; /* expected ptrSupport */
    gt_result rc;
    int method, fell_back, reason, err, exported;
    const char *words; /* in the failure text */
};

#define ALL (GT_PTR_HOST | GT_PTR_CUDA | GT_PTR_DMABUF)
static const struct outcome outcomes[] = {
    {"DIRECT-DMABUF: NCCL's fd", NULL, NULL, NULL, NULL, 0, ALL, GT_OK, GT_METHOD_DMABUF, 0,
     GT_REASON_NONE, 0, 0, NULL},
    {"DIRECT-DMABUF: regMr(CUDA) upgraded", NULL, NULL, NULL, NULL, 1, ALL, GT_OK, GT_METHOD_DMABUF,
     0, GT_REASON_NONE, 0, 1, NULL},
    {"DIRECT-PEERMEM (emulated)", "peermem", NULL, "1", NULL, 1, GT_PTR_HOST | GT_PTR_CUDA, GT_OK,
     GT_METHOD_PEERMEM, 0, GT_REASON_POLICY_PEERMEM, 0, 0, NULL},
    {"peermem asked, not emulated", "peermem", NULL, NULL, NULL, 1, GT_PTR_HOST, GT_SYSTEM_ERROR,
     GT_METHOD_FAILED, 0, GT_REASON_PEERMEM_ABSENT, 0, 0, "nvidia_peermem"},
    {"FALLBACK: import fails, peermem allowed", NULL, "1", "1", "5", 0, ALL, GT_OK,
     GT_METHOD_PEERMEM, 1, GT_REASON_DMABUF_REG_FAILED, 5, 0, NULL},
    {"FALLBACK: regMr(CUDA), import fails", "auto", NULL, "1", "12", 1, ALL, GT_OK,
     GT_METHOD_PEERMEM, 1, GT_REASON_DMABUF_REG_FAILED, 12, 0, NULL},
    {"ERROR: import fails, peermem not allowed", NULL, NULL, "1", "5", 0, ALL, GT_SYSTEM_ERROR,
     GT_METHOD_FAILED, 0, GT_REASON_DMABUF_REG_FAILED, 5, 0, "GDRTRACE_GPUMEM_DMABUF_ERRNO=5"},
    {"ERROR: a vgem dma-buf", NULL, NULL, NULL, NULL, 2, ALL, GT_SYSTEM_ERROR, GT_METHOD_FAILED, 0,
     GT_REASON_DMABUF_REG_FAILED, ENOTSUP, 0, "'vgem'"},
    {"host policy", "host", NULL, NULL, NULL, 1, GT_PTR_HOST, GT_INVALID_USAGE, GT_METHOD_FAILED, 0,
     GT_REASON_POLICY_HOST, 0, 0, "GDRTRACE_REG=host"},
};

static void set(const char *k, const char *v)
{
    if (v)
        setenv(k, v, 1);
    else
        unsetenv(k);
}

static void test_outcomes(void **state)
{
    (void)state;
    gt_gpumem_procroot = tree;
    for (size_t i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++) {
        const struct outcome *o = &outcomes[i];
        clear_env();
        set("GDRTRACE_REG", o->reg);
        set("GDRTRACE_ALLOW_PEERMEM", o->allow);
        set("GDRTRACE_GPUMEM_PEERMEM", o->peermem);
        set("GDRTRACE_GPUMEM_DMABUF_ERRNO", o->errno_);
        layer_up();
        struct gt_props p;
        assert_int_equal(ops->get_properties(0, &p), GT_OK);
        if (p.ptr_support != o->ptr)
            fail_msg("%s: ptrSupport %#x, want %#x", o->label, p.ptr_support, o->ptr);
        struct gt_dev_probe pr;
        assert_int_equal(ops->get_probe(0, &pr), GT_OK);
        assert_non_null(strstr(pr.why, "emulated"));
        void *sc, *rc;
        connect_pair(&sc, &rc);
        void *buf = arena + 4096 * (i + 1);
        int fd = -1;
        if (o->how != 1)
            fd = fake_dmabuf(o->how == 2 ? "vgem" : "nv_dmabuf", 65536);
        int fds0 = open_fds(), exports0 = exports;
        struct gt_reg_report rep = {0};
        void *mh = NULL;
        uint32_t mark = gt_net_fail_mark();
        gt_result r = o->how == 1
                          ? ops->reg_mr(rc, buf, 65536, GT_PTR_CUDA, &mh, &rep)
                          : ops->reg_mr_dmabuf(rc, buf, 65536, GT_PTR_CUDA, 0, fd, &mh, &rep);
        if (r != o->rc || rep.method != o->method || rep.fell_back != o->fell_back ||
            rep.reason != o->reason || rep.err != o->err || rep.exported_fd != o->exported)
            fail_msg("%s: rc %d method %d fell_back %d reason %d err %d exported %d", o->label, r,
                     rep.method, rep.fell_back, rep.reason, rep.err, rep.exported_fd);
        if (r == GT_OK) {
            assert_non_null(mh);
            /* NCCL's fd is kept as a duplicate (an exported one too) until deregMr. */
            int kept = rep.method == GT_METHOD_DMABUF;
            assert_int_equal(open_fds(), fds0 + kept);
            if (o->exported)
                assert_int_equal(exports, exports0 + 1);
            if (fd >= 0) {
                close(fd);
                fd = -1;
            }
            int fds1 = open_fds();
            assert_int_equal(ops->dereg_mr(rc, mh), GT_OK);
            assert_int_equal(open_fds(), fds1 - kept);
        } else {
            assert_null(mh);
            assert_int_equal(open_fds(), fds0); /* nothing kept on failure */
            struct gt_net_failure f;
            assert_int_equal(gt_net_failure_since(mark, &f), 1);
            assert_int_equal(f.reason, o->reason);
            if (!strstr(f.text, o->words))
                fail_msg("%s: failure text lacks '%s': %s", o->label, o->words, f.text);
            /* NCCL 2.28's sendProxyFree/recvProxyFree (src/transport/net.cc) then call
             * deregMr with the NULL handle the failed registration left: a no-op, as in
             * sock and ib, not a second error that hides the first (GPU run, step 3b). */
            uint32_t mark2 = gt_net_fail_mark();
            assert_int_equal(ops->dereg_mr(rc, NULL), GT_OK);
            assert_int_equal(gt_net_failure_since(mark2, &f), 0);
        }
        if (fd >= 0)
            close(fd);
        assert_int_equal(ops->close_send(sc), GT_OK);
        assert_int_equal(ops->close_recv(rc), GT_OK);
        layer_down();
    }
    clear_env();
}

static void test_refuses_next_to_rdma(void **state)
{
    (void)state;
    char p[512];
    snprintf(p, sizeof(p), "%s/sys/class/infiniband/mlx5_0/ports/1", tree);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "mkdir -p %s", p);
    assert_int_equal(system(cmd), 0);
    strcat(p, "/state");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("4: ACTIVE\n", f);
    fclose(f);
    gt_reg_sysroot = tree;
    ops = gt_gpumem_wrap(&gt_sock_ops);
    uint32_t mark = gt_net_fail_mark();
    void *c = NULL;
    assert_int_not_equal(ops->init(&c, 1, 1, NULL, NULL, NULL), GT_OK);
    struct gt_net_failure fl;
    assert_int_equal(gt_net_failure_since(mark, &fl), 1);
    assert_non_null(strstr(fl.text, "mlx5_0 port 1 is ACTIVE"));
    /* a port that is DOWN does not count */
    f = fopen(p, "w");
    fputs("1: DOWN\n", f);
    fclose(f);
    assert_int_equal(ops->init(&c, 1, 1, NULL, NULL, NULL), GT_OK);
    assert_int_equal(ops->finalize(c), GT_OK);
    gt_reg_sysroot = "";
}

/* ---- asynchronous completion ------------------------------------------------ */

static void *reg_gpu(void *comm, void *buf, size_t n)
{
    int fd = fake_dmabuf("nv_dmabuf", n);
    void *mh = NULL;
    struct gt_reg_report rep = {0};
    assert_int_equal(ops->reg_mr_dmabuf(comm, buf, n, GT_PTR_CUDA, 0, fd, &mh, &rep), GT_OK);
    assert_int_equal(rep.method, GT_METHOD_DMABUF);
    close(fd);
    return mh;
}

/* Polls `req` `n` times; returns done. */
static int poll(void *req, int n, int *size)
{
    int done = 0;
    for (int i = 0; i < n && !done; i++) {
        assert_int_equal(ops->test(req, &done, size), GT_OK);
        if (!done)
            usleep(1000);
    }
    return done;
}

/* mirrors = 0: the pinned mirrors cannot be allocated at registration, so
 * every GPU request is staged in its slot's own buffer. */
static void async_completion(int mirrors)
{
    gt_gpumem_procroot = tree;
    clear_env();
    setenv("GDRTRACE_GPUMEM_FORCE_FLUSH", "1", 1);
    layer_up();
    struct gt_props p;
    assert_int_equal(ops->get_properties(0, &p), GT_OK);
    assert_int_equal(p.force_flush, 1);
    void *sc, *rc;
    connect_pair(&sc, &rc);
    const size_t N = 1 << 20;
    unsigned char *src = arena + (1u << 20), *dst = arena + (3u << 20);
    for (size_t i = 0; i < N; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    memset(dst, 0, N);
    fail_host_alloc = !mirrors;
    int allocs0 = host_allocs;
    stream_flags = -1;
    void *smh = reg_gpu(sc, src, N), *rmh = reg_gpu(rc, dst, N);
    fail_host_alloc = 0;
    /* one pinned mirror per GPU registration, made now (connection setup) */
    assert_int_equal(host_allocs - allocs0, 2);
    /* ... and the comm's non-blocking stream */
    assert_int_equal(stream_flags, GT_CU_STREAM_NON_BLOCKING);
    int allocs_reg = host_allocs, frees_reg = host_frees;
    static char host_src[4096], host_dst[4096];
    memset(host_src, 'h', sizeof(host_src));
    void *hsmh = NULL, *hrmh = NULL;
    assert_int_equal(ops->reg_mr(sc, host_src, sizeof(host_src), GT_PTR_HOST, &hsmh, NULL), GT_OK);
    assert_int_equal(ops->reg_mr(rc, host_dst, sizeof(host_dst), GT_PTR_HOST, &hrmh, NULL), GT_OK);

    /* GPU send (copy pending), then a host send on the same comm. */
    void *s1 = NULL, *s2 = NULL, *r1 = NULL, *r2 = NULL;
    assert_int_equal(ops->isend(sc, src, N, 1, smh, NULL, &s1), GT_OK);
    assert_non_null(s1);
    assert_int_equal(ops->isend(sc, host_src, sizeof(host_src), 2, hsmh, NULL, &s2), GT_OK);
    assert_non_null(s2);
    void *d1 = dst;
    size_t n1 = N;
    int t1 = 1;
    assert_int_equal(ops->irecv(rc, 1, &d1, &n1, &t1, &rmh, NULL, &r1), GT_OK);
    assert_non_null(r1);
    /* Nothing may move while the GPU-to-host copy is pending: not the GPU
     * send, nor the host send queued behind it. */
    assert_false(poll(s2, 50, NULL));
    assert_false(poll(s1, 5, NULL));
    assert_false(poll(r1, 50, NULL));
    assert_int_equal(stream_flags, GT_CU_STREAM_NON_BLOCKING);
    gpu_progress(); /* the send's copy completes */
    int sz = 0;
    double t0 = now_s();
    int sent = 0;
    /* The receive's payload arrives; its copy into GPU memory is then queued
     * but not complete: the receive is not done yet. */
    while (queued == completed && now_s() - t0 < 10) {
        int d = 0;
        assert_int_equal(ops->test(s1, &d, NULL), GT_OK);
        sent |= d;
        assert_int_equal(ops->test(r1, &d, &sz), GT_OK);
        assert_false(d);
    }
    assert_true(queued > completed);
    assert_false(poll(r1, 20, &sz));
    assert_int_equal(dst[0], 0); /* the fake really holds the data back */
    gpu_progress();
    assert_true(poll(r1, 100, &sz));
    assert_int_equal(sz, (int)N);
    assert_memory_equal(src, dst, N);
    assert_true(sent || poll(s1, 1000, NULL));
    /* The host send went second, as issued. */
    void *d2 = host_dst;
    size_t n2 = sizeof(host_dst);
    int t2 = 2;
    assert_int_equal(ops->irecv(rc, 1, &d2, &n2, &t2, &hrmh, NULL, &r2), GT_OK);
    int rdone = 0, sdone = 0; /* as NCCL: every outstanding request is tested */
    t0 = now_s();
    while ((!rdone || !sdone) && now_s() - t0 < 10) {
        if (!rdone)
            assert_int_equal(ops->test(r2, &rdone, &sz), GT_OK);
        if (!sdone)
            assert_int_equal(ops->test(s2, &sdone, NULL), GT_OK);
    }
    assert_true(rdone && sdone);
    assert_int_equal(sz, (int)sizeof(host_src));
    assert_memory_equal(host_src, host_dst, sizeof(host_src));
    /* forceFlush: NCCL flushes GPU receives; nothing is left to wait for. */
    void *fl = NULL;
    int fsz = (int)N;
    assert_int_equal(ops->iflush(rc, 1, &d1, &fsz, &rmh, &fl), GT_OK);
    assert_non_null(fl);
    assert_true(poll(fl, 1, NULL));
    assert_int_equal(legacy_stream_used, 0);
    /* The data path allocated and freed no pinned memory when the mirrors
     * exist: such calls can wait for NCCL's running kernel. */
    if (mirrors)
        assert_int_equal(host_allocs, allocs_reg);
    else
        assert_true(host_allocs > allocs_reg);
    assert_int_equal(host_frees, frees_reg);

    assert_int_equal(ops->dereg_mr(sc, smh), GT_OK);
    assert_int_equal(ops->dereg_mr(rc, rmh), GT_OK);
    assert_int_equal(ops->dereg_mr(sc, hsmh), GT_OK);
    assert_int_equal(ops->dereg_mr(rc, hrmh), GT_OK);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
    clear_env();
}

static void test_async_completion(void **state)
{
    (void)state;
    async_completion(1);
}

static void test_async_completion_slot_staging(void **state)
{
    (void)state;
    async_completion(0);
}

/* A failing copy fails the comm for good, and says which CUDA call failed. */
static gt_CUresult f_dtoh_fails(void *d, gt_CUdeviceptr s, size_t n, gt_CUstream st)
{
    (void)d, (void)s, (void)n, (void)st;
    return 999;
}

static void test_copy_failure(void **state)
{
    (void)state;
    gt_gpumem_procroot = tree;
    clear_env();
    layer_up();
    void *sc, *rc;
    connect_pair(&sc, &rc);
    void *smh = reg_gpu(sc, arena, 4096);
    gt_cu.memcpy_dtoh_async = f_dtoh_fails;
    void *s = NULL;
    uint32_t mark = gt_net_fail_mark();
    assert_int_equal(ops->isend(sc, arena, 4096, 1, smh, NULL, &s), GT_UNHANDLED_CUDA_ERROR);
    struct gt_net_failure f;
    assert_int_equal(gt_net_failure_since(mark, &f), 1);
    assert_non_null(strstr(f.text, "cuMemcpyDtoHAsync"));
    mark = gt_net_fail_mark();
    assert_int_equal(ops->isend(sc, arena, 4096, 1, smh, NULL, &s), GT_UNHANDLED_CUDA_ERROR);
    assert_int_equal(gt_net_failure_since(mark, &f), 1); /* F4: described again */
    assert_non_null(strstr(f.text, "cuMemcpyDtoHAsync"));
    gt_cu.memcpy_dtoh_async = f_dtoh;
    assert_int_equal(ops->dereg_mr(sc, smh), GT_OK);
    assert_int_equal(ops->close_send(sc), GT_OK);
    assert_int_equal(ops->close_recv(rc), GT_OK);
    layer_down();
}

static int setup(void **state)
{
    (void)state;
    arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(arena != MAP_FAILED);
    snprintf(tree, sizeof(tree), "/tmp/test_gpumem.XXXXXX");
    assert_non_null(mkdtemp(tree));
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "mkdir -p %s/proc/self/fdinfo", tree);
    assert_int_equal(system(cmd), 0);
    install_cuda();
    cur_ctx = (gt_CUcontext)&fake_ctx_obj;
    setenv("GDRTRACE_GPUMEM", "1", 1);
    setenv("GDRTRACE_SOCKET_IFNAME", "lo", 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tree);
    if (system(cmd) != 0)
        return 1;
    munmap(arena, ARENA);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_checks),
        cmocka_unit_test(test_outcomes),
        cmocka_unit_test(test_refuses_next_to_rdma),
        cmocka_unit_test(test_async_completion),
        cmocka_unit_test(test_async_completion_slot_staging),
        cmocka_unit_test(test_copy_failure),
    };
    return cmocka_run_group_tests_name("gpumem", tests, setup, teardown);
}
