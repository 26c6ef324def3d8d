/* SPDX-License-Identifier: Apache-2.0 */
/*
 * copier_main.c — gdrtrace-gpumem-copier: the process that moves GPU memory
 * for the GPU-memory validation layer, GDRTRACE_GPUMEM=1 (docs/gpumem.md
 * "The copier process"; protocol and the shared region's invariants in
 * copier_proto.h).
 *
 * Why a process: the layer's CUDA copies, made on NCCL's proxy thread in the
 * application's context, can wait for an application thread that waits for
 * NCCL's kernel, which waits for the copy (the DDP stall).  Here the copies
 * run in this process's own context (the primary context of the device the
 * plugin names by PCI bus id), so nothing of the data path is a CUDA call in
 * the application's process: as with a NIC, its memory is written from
 * outside.
 *
 * Owns: the imported GPU allocations (cuMem handles or IPC mappings), the
 * pinned mirrors (the plugin's memfds, cuMemHostRegister'ed here), one
 * non-blocking stream per device and one event per command slot.
 * Where it runs (place()): never on the CPUs of the rank it serves when
 * others are allowed.  It starts with the affinity of the thread that
 * spawned it (NCCL's proxy thread: the rank's binding), widens to every CPU
 * its cpuset allows (the kernel intersects what sched_setaffinity asks for
 * with the cgroup's cpuset, so a launcher's cgroup still holds it), takes
 * the rank's CPUs out, and at its first GPU keeps the CPUs of that GPU's
 * NUMA node when any remain.  A rank that is not bound (its set is every
 * allowed CPU) leaves the copier unbound too.  Other ranks' cores are not
 * excluded (they are not known here): the scheduler moves the copier off a
 * core that a busy-polling thread holds when an idle one exists.
 * How it waits (serve_loop): one thread.  A pass over the command region
 * issues what was posted and completes what finished; for GMC_SPIN_NS after
 * a pass that moved something it looks again at once (a burst's next post
 * or completion is usually that near: the GPU machine's sendrecv measured
 * 0.77-0.89x host staging without it); after that it waits on the region's
 * futex word: while copies are pending for a nap that grows from
 * GMC_NAP_MIN_NS by half each empty pass up to GMC_NAP_MAX_NS (a copy is
 * seen done at most ~1.5x its duration, and at most GMC_NAP_MAX_NS, late),
 * while idle for GMC_SLEEP_NS; a post or a control request wakes it at
 * once.  It reads the control socket at least every GMC_SOCK_NS while busy and every
 * GMC_SLEEP_NS while idle, and exits when the socket hangs up (the
 * application finalized or died).
 *
 * Started as `gdrtrace-gpumem-copier --detach` by the plugin with its socket
 * on fd GMC_FD: that intermediate spawns `--serve` and exits at once, so the
 * copier is reparented and the application never has a child it did not
 * start (copier_client.c).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <dirent.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/dl/gt_cuda.h"
#include "plugin/gpumem/copier_proto.h"

#define GMC_SPIN_NS 50000LL      /* keep looking this long after the last progress */
#define GMC_NAP_MIN_NS 10000LL   /* the first wait for a pending copy */
#define GMC_SOCK_NS 1000000LL    /* read the socket at least this often while busy */
#define GMC_SLEEP_NS 500000000LL /* the idle futex wait's bound: notice a hang-up */
#define GMC_TIMER_SLACK_NS 2000  /* naps of tens of microseconds need a fine timer */
#define MAX_DEVS 16

extern char **environ;

static struct gmc_region *R;
static int sock = GMC_FD;

static struct {
    char bus_id[32];
    gt_CUdevice dev;
    gt_CUcontext ctx;
    gt_CUstream stream;
} devs[MAX_DEVS];
static int ndevs;
static int cur_dev = -1; /* whose context is current */

struct creg {
    int used;
    int dev;
    int kind;
    gt_CUdeviceptr va; /* the mapping of the whole allocation */
    size_t va_size;
    gt_CUmemGenericAllocationHandle h; /* VMM */
    gt_CUdeviceptr dptr;               /* the registered range */
    size_t size;
    void *mirror;
};
static struct creg *regs;
static uint32_t nregs;

static gt_CUevent ev[GMC_CMDS];
static signed char ev_dev[GMC_CMDS];

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void say(const char *fmt, const char *arg)
{
    fprintf(stderr, "gdrtrace-gpumem-copier[%d]: ", (int)getpid());
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
}

/* ---- where it runs ---------------------------------------------------------- */

static cpu_set_t placed;        /* the CPUs the copier runs on */
static char where[GMC_TEXT];    /* said in the greeting's reply */
static char moved_to[GMC_TEXT]; /* said in the reply of the import that moved it */

/* "0-3,8" */
static void cpus_text(const cpu_set_t *s, char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; i < CPU_SETSIZE && k + 24 < n; i++) {
        if (!CPU_ISSET(i, s))
            continue;
        int j = i;
        while (j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, s))
            j++;
        k += (size_t)snprintf(out + k, n - k, j > i ? "%s%d-%d" : "%s%d", k ? "," : "", i, j);
        i = j;
    }
    if (!out[0])
        snprintf(out, n, "none");
}

/* Every thread of the copier (the CUDA driver's too) to s: 0 or an errno. */
static int set_all_threads(const cpu_set_t *s)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return sched_setaffinity(0, sizeof(*s), s) == 0 ? 0 : errno;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && sched_setaffinity(atoi(e->d_name), sizeof(*s), s) != 0 &&
            errno != ESRCH)
            rc = errno;
    closedir(d);
    return rc;
}

/* Parses a sysfs cpulist ("0-7,16-23") into s: 0, or -1. */
static int parse_cpulist(const char *t, cpu_set_t *s)
{
    CPU_ZERO(s);
    while (*t && *t != '\n') {
        char *e;
        long a = strtol(t, &e, 10), b = a;
        if (e == t || a < 0 || a >= CPU_SETSIZE)
            return -1;
        if (*e == '-') {
            t = e + 1;
            b = strtol(t, &e, 10);
            if (e == t || b < a || b >= CPU_SETSIZE)
                return -1;
        }
        for (long i = a; i <= b; i++)
            CPU_SET((int)i, s);
        t = *e == ',' ? e + 1 : e;
        if (*e != ',' && *e && *e != '\n')
            return -1;
    }
    return CPU_COUNT(s) ? 0 : -1;
}

/* Out of the rank's way: every CPU the cpuset allows but the ones the rank
 * (the spawning thread) is bound to; all of them when that leaves none. */
static void place(void)
{
    cpu_set_t rank, allowed, want;
    char a[96], b[96];
    if (sched_getaffinity(0, sizeof(rank), &rank) != 0) {
        snprintf(where, sizeof(where), "CPUs as inherited (sched_getaffinity: %s)",
                 strerror(errno));
        return;
    }
    /* Ask for every CPU: the kernel grants those of our cpuset. */
    memset(&allowed, 0xff, sizeof(allowed));
    if (sched_setaffinity(0, sizeof(allowed), &allowed) != 0 ||
        sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        allowed = rank;
    CPU_ZERO(&want);
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &allowed) && !CPU_ISSET(i, &rank))
            CPU_SET(i, &want);
    cpus_text(&rank, a, sizeof(a));
    if (CPU_COUNT(&want) == 0) {
        want = allowed;
        cpus_text(&want, b, sizeof(b));
        snprintf(where, sizeof(where),
                 CPU_EQUAL(&allowed, &rank) && CPU_COUNT(&rank) > 1
                     ? "CPUs %s, as the rank: it is not bound"
                     : "CPUs %s, shared with the rank: no other CPU is allowed",
                 b);
    } else {
        cpus_text(&want, b, sizeof(b));
        snprintf(where, sizeof(where), "CPUs %s, outside the rank's %s", b, a);
    }
    if (sched_setaffinity(0, sizeof(want), &want) != 0)
        sched_getaffinity(0, sizeof(want), &want);
    placed = want;
}

/* At the first GPU: the CPUs of its NUMA node among those placed, if any. */
static void place_near(const char *bus_id)
{
    static int once;
    if (once++)
        return;
    /* CUDA says "0000:3B:00.0" (some versions an 8-digit domain); sysfs
     * "0000:3b:00.0" */
    char id[32], p[96], t[4096];
    const char *colon = strchr(bus_id, ':');
    if (!colon || colon - bus_id < 4)
        return;
    snprintf(id, sizeof(id), "%s", colon - 4);
    for (char *q = id; *q; q++)
        *q = (char)tolower((unsigned char)*q);
    snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/numa_node", id);
    FILE *f = fopen(p, "re");
    int node = -1;
    if (f) {
        if (fscanf(f, "%d", &node) != 1)
            node = -1;
        fclose(f);
    }
    if (node < 0)
        return;
    snprintf(p, sizeof(p), "/sys/devices/system/node/node%d/cpulist", node);
    cpu_set_t near, mine;
    f = fopen(p, "re");
    int ok = f && fgets(t, sizeof(t), f) && parse_cpulist(t, &mine) == 0;
    if (f)
        fclose(f);
    if (!ok)
        return;
    CPU_AND(&near, &mine, &placed);
    if (CPU_COUNT(&near) == 0 || CPU_EQUAL(&near, &placed) || set_all_threads(&near) != 0)
        return;
    placed = near;
    char c[96];
    cpus_text(&near, c, sizeof(c));
    snprintf(moved_to, sizeof(moved_to), "runs on CPUs %s, of GPU %s's NUMA node %d", c, bus_id,
             node);
}

/* ---- devices ----------------------------------------------------------- */

static int use_dev(int d)
{
    if (d == cur_dev)
        return 0;
    gt_CUresult r = gt_cu.ctx_set_current(devs[d].ctx);
    if (r == GT_CUDA_SUCCESS)
        cur_dev = d;
    return r;
}

/* The device of `bus_id`, its primary context retained and a stream made
 * on first use; -1 with text set on failure. */
static int dev_of(const char *bus_id, char *text)
{
    for (int i = 0; i < ndevs; i++)
        if (!strcasecmp(devs[i].bus_id, bus_id))
            return i;
    if (ndevs == MAX_DEVS) {
        snprintf(text, GMC_TEXT, "copier: more than %d devices", MAX_DEVS);
        return -1;
    }
    int i = ndevs;
    const char *call = "cuDeviceGetByPCIBusId";
    gt_CUresult r = gt_cu.device_get_by_pci_bus_id(&devs[i].dev, bus_id);
    if (r == GT_CUDA_SUCCESS) {
        call = "cuDevicePrimaryCtxRetain";
        r = gt_cu.primary_ctx_retain(&devs[i].ctx, devs[i].dev);
    }
    if (r == GT_CUDA_SUCCESS) {
        call = "cuCtxSetCurrent";
        r = gt_cu.ctx_set_current(devs[i].ctx);
        cur_dev = r == GT_CUDA_SUCCESS ? i : -1;
    }
    if (r == GT_CUDA_SUCCESS) {
        call = "cuStreamCreate(CU_STREAM_NON_BLOCKING)";
        r = gt_cu.stream_create(&devs[i].stream, GT_CU_STREAM_NON_BLOCKING);
    }
    if (r != GT_CUDA_SUCCESS) {
        snprintf(text, GMC_TEXT, "copier: %s for GPU %s failed: %s (%d)", call, bus_id,
                 gt_cu_errstr(r), r);
        return -1;
    }
    snprintf(devs[i].bus_id, sizeof(devs[i].bus_id), "%s", bus_id);
    ndevs++;
    place_near(bus_id);
    return i;
}

/* ---- registrations ------------------------------------------------------ */

static void unmap_gpu(struct creg *g)
{
    if (!g->va)
        return;
    if (g->kind == GMC_KIND_IPC) {
        gt_cu.ipc_close_mem_handle(g->va);
    } else {
        gt_cu.mem_unmap(g->va, g->va_size);
        gt_cu.mem_address_free(g->va, g->va_size);
    }
    g->va = 0;
}

static void drop(struct creg *g)
{
    use_dev(g->dev);
    /* NCCL deregisters after its requests on the buffer completed; after an
     * abort a copy may still run: let the stream drain (bounded). */
    long long t0 = now_ns();
    while (gt_cu.stream_query(devs[g->dev].stream) == GT_CUDA_ERROR_NOT_READY &&
           now_ns() - t0 < 5000000000LL)
        sched_yield();
    unmap_gpu(g);
    if (g->h)
        gt_cu.mem_release(g->h);
    if (g->mirror) {
        gt_cu.mem_host_unregister(g->mirror);
        munmap(g->mirror, g->size);
    }
    memset(g, 0, sizeof(*g));
}

static void import(struct gmc_msg *m, const int *fds, int nfds)
{
    char *text = m->text;
    int mfd = nfds > 0 ? fds[0] : -1, afd = nfds > 1 ? fds[1] : -1;
    struct creg g = {0};
    gt_CUresult r = GT_CUDA_SUCCESS;
    m->status = EINVAL;
    if (mfd < 0 || (m->kind == GMC_KIND_VMM && afd < 0) || !m->size || m->offset > m->alloc_size ||
        m->size > m->alloc_size - m->offset) {
        snprintf(text, GMC_TEXT, "copier: malformed import (kind %u, %d fds, %llu+%llu of %llu)",
                 m->kind, nfds, (unsigned long long)m->offset, (unsigned long long)m->size,
                 (unsigned long long)m->alloc_size);
        return;
    }
    m->bus_id[sizeof(m->bus_id) - 1] = 0;
    if ((g.dev = dev_of(m->bus_id, text)) < 0)
        return;
    if ((r = use_dev(g.dev)) != GT_CUDA_SUCCESS) {
        snprintf(text, GMC_TEXT, "copier: cuCtxSetCurrent failed: %s (%d)", gt_cu_errstr(r), r);
        goto err;
    }
    g.kind = (int)m->kind;
    g.size = m->size;
    g.mirror = mmap(NULL, g.size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (g.mirror == MAP_FAILED) {
        g.mirror = NULL;
        m->status = errno;
        snprintf(text, GMC_TEXT, "copier: mmap of the %zu-byte staging mirror failed: %s", g.size,
                 strerror(errno));
        goto err;
    }
    if ((r = gt_cu.mem_host_register(g.mirror, g.size, GT_CU_MEMHOSTREGISTER_PORTABLE)) !=
        GT_CUDA_SUCCESS) {
        munmap(g.mirror, g.size);
        g.mirror = NULL;
        snprintf(text, GMC_TEXT, "copier: cuMemHostRegister of the %zu-byte mirror failed: %s (%d)",
                 g.size, gt_cu_errstr(r), r);
        goto err;
    }
    const char *call = "";
    if (m->kind == GMC_KIND_VMM) {
        g.va_size = m->alloc_size;
        call = "cuMemImportFromShareableHandle";
        r = gt_cu.mem_import_from_shareable_handle(&g.h, (void *)(intptr_t)afd,
                                                   GT_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        if (r == GT_CUDA_SUCCESS) {
            call = "cuMemAddressReserve";
            r = gt_cu.mem_address_reserve(&g.va, g.va_size, 0, 0, 0);
            if (r != GT_CUDA_SUCCESS)
                g.va = 0;
        }
        if (r == GT_CUDA_SUCCESS) {
            call = "cuMemMap";
            r = gt_cu.mem_map(g.va, g.va_size, 0, g.h, 0);
            if (r != GT_CUDA_SUCCESS) {
                gt_cu.mem_address_free(g.va, g.va_size);
                g.va = 0;
            }
        }
        if (r == GT_CUDA_SUCCESS) {
            struct gt_CUmemAccessDesc a = {GT_CU_MEM_LOCATION_TYPE_DEVICE, devs[g.dev].dev,
                                           GT_CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
            call = "cuMemSetAccess";
            r = gt_cu.mem_set_access(g.va, g.va_size, &a, 1);
        }
    } else if (m->kind == GMC_KIND_IPC) {
        gt_CUipcMemHandle ih;
        memcpy(ih.reserved, m->ipc, sizeof(ih.reserved));
        call = "cuIpcOpenMemHandle";
        g.va_size = m->alloc_size;
        r = gt_cu.ipc_open_mem_handle(&g.va, ih, GT_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        if (r != GT_CUDA_SUCCESS)
            g.va = 0;
    } else {
        snprintf(text, GMC_TEXT, "copier: unknown import kind %u", m->kind);
        goto err;
    }
    if (r != GT_CUDA_SUCCESS) {
        snprintf(text, GMC_TEXT, "copier: %s failed: %s (%d)", call, gt_cu_errstr(r), r);
        m->status = r;
        goto err;
    }
    g.dptr = g.va + m->offset;
    g.used = 1;
    uint32_t id = 0;
    while (id < nregs && regs[id].used)
        id++;
    if (id == nregs) {
        struct creg *x = realloc(regs, (nregs + 16) * sizeof(*x));
        if (!x) {
            snprintf(text, GMC_TEXT, "copier: out of memory for a registration");
            m->status = ENOMEM;
            goto err;
        }
        memset(x + nregs, 0, 16 * sizeof(*x));
        regs = x;
        nregs += 16;
    }
    regs[id] = g;
    m->reg = id + 1;
    m->status = 0;
    snprintf(text, GMC_TEXT, "%s", moved_to); /* the plugin logs a non-empty one */
    moved_to[0] = 0;
    return;
err:
    if (!m->status)
        m->status = r ? r : EINVAL;
    drop(&g);
}

/* ---- the control socket ------------------------------------------------- */

/* Reads and answers one request.  Returns -1 when the socket is gone. */
static int control(void)
{
    struct gmc_msg m;
    int fds[2] = {-1, -1};
    char cbuf[CMSG_SPACE(sizeof(fds))];
    struct iovec io = {&m, sizeof(m)};
    struct msghdr h = {
        .msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    ssize_t n = recvmsg(sock, &h, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n <= 0)
        return -1; /* EOF: the application closed its end or died */
    int nfds = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            if (nfds > 2)
                nfds = 2;
            memcpy(fds, CMSG_DATA(c), (size_t)nfds * sizeof(int));
        }
    if (n != sizeof(m) || m.version != GMC_VERSION) {
        memset(&m, 0, sizeof(m));
        m.status = EPROTO;
        snprintf(m.text, sizeof(m.text), "copier: a request of %zd bytes, version %u (want %u)", n,
                 n >= 8 ? m.version : 0, GMC_VERSION);
    } else if (m.op == GMC_IMPORT) {
        import(&m, fds, nfds);
    } else if (m.op == GMC_RELEASE) {
        if (m.reg >= 1 && m.reg <= nregs && regs[m.reg - 1].used) {
            drop(&regs[m.reg - 1]);
            m.status = 0;
        } else {
            m.status = EINVAL;
            snprintf(m.text, sizeof(m.text), "copier: release of unknown registration %u", m.reg);
        }
    } else {
        m.status = EPROTO;
        snprintf(m.text, sizeof(m.text), "copier: unknown request %u", m.op);
    }
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
    m.version = GMC_VERSION;
    m.text[sizeof(m.text) - 1] = 0;
    return send(sock, &m, sizeof(m), MSG_NOSIGNAL) == (ssize_t)sizeof(m) ? 0 : -1;
}

/* Answers pending requests; -1 when the socket hung up. */
static int check_socket(void)
{
    struct pollfd p = {sock, POLLIN, 0};
    while (poll(&p, 1, 0) == 1) {
        if ((p.revents & POLLIN) && control() == 0)
            continue;
        return -1; /* HUP, error, or EOF */
    }
    return 0;
}

/* ---- the command region --------------------------------------------------- */

static void fail(struct gmc_cmd *c, uint32_t call, gt_CUresult r)
{
    c->cu = r;
    c->call = call;
    atomic_store_explicit(&c->state, GMC_FAILED, memory_order_release);
}

static void issue(uint32_t i)
{
    struct gmc_cmd *c = &R->cmd[i];
    uint32_t id = c->reg;
    uint64_t off = c->off, size = c->size;
    struct creg *g = id >= 1 && id <= nregs && regs[id - 1].used ? &regs[id - 1] : NULL;
    if (!g || off > g->size || size > g->size - off || (c->dir != GMC_DTOH && c->dir != GMC_HTOD))
        return fail(c, GMC_CALL_BADREG, 0);
    gt_CUresult r = use_dev(g->dev);
    if (r != GT_CUDA_SUCCESS)
        return fail(c, GMC_CALL_RECORD, r);
    if (ev[i] && ev_dev[i] != g->dev) {
        gt_cu.event_destroy(ev[i]);
        ev[i] = NULL;
    }
    if (!ev[i]) {
        if ((r = gt_cu.event_create(&ev[i], GT_CU_EVENT_DISABLE_TIMING)) != GT_CUDA_SUCCESS) {
            ev[i] = NULL;
            return fail(c, GMC_CALL_EVENT, r);
        }
        ev_dev[i] = (signed char)g->dev;
    }
    gt_CUstream s = devs[g->dev].stream;
    char *h = (char *)g->mirror + off;
    if (c->dir == GMC_DTOH)
        r = gt_cu.memcpy_dtoh_async(h, g->dptr + off, size, s);
    else
        r = gt_cu.memcpy_htod_async(g->dptr + off, h, size, s);
    if (r != GT_CUDA_SUCCESS)
        return fail(c, c->dir == GMC_DTOH ? GMC_CALL_DTOH : GMC_CALL_HTOD, r);
    if ((r = gt_cu.event_record(ev[i], s)) != GT_CUDA_SUCCESS)
        return fail(c, GMC_CALL_RECORD, r);
    atomic_store_explicit(&c->state, GMC_ISSUED, memory_order_release);
}

static void query(uint32_t i)
{
    struct gmc_cmd *c = &R->cmd[i];
    gt_CUresult r = gt_cu.event_query(ev[i]);
    if (r == GT_CUDA_ERROR_NOT_READY)
        return;
    if (r != GT_CUDA_SUCCESS)
        return fail(c, GMC_CALL_QUERY, r);
    atomic_fetch_add_explicit(&R->copied, c->size, memory_order_relaxed);
    atomic_fetch_add_explicit(&R->copies, 1, memory_order_relaxed);
    atomic_store_explicit(&c->state, GMC_DONE, memory_order_release);
}

/* One pass over the slots in use: issues what was posted, completes what
 * finished (*moved: how many of either).  Returns the number of copies
 * still pending. */
static int scan(int *moved)
{
    uint32_t nb = atomic_load_explicit(&R->blocks, memory_order_acquire);
    uint32_t n = (nb > GMC_BLOCKS ? GMC_BLOCKS : nb) * GMC_SLOTS_PER_BLOCK;
    int pending = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t st = atomic_load_explicit(&R->cmd[i].state, memory_order_acquire);
        if (st == GMC_POSTED)
            issue(i);
        else if (st == GMC_ISSUED)
            query(i);
        else
            continue;
        uint32_t now = atomic_load_explicit(&R->cmd[i].state, memory_order_relaxed);
        pending += now == GMC_ISSUED;
        *moved += now != st;
    }
    return pending;
}

static int any_posted(void)
{
    uint32_t nb = atomic_load(&R->blocks);
    uint32_t n = (nb > GMC_BLOCKS ? GMC_BLOCKS : nb) * GMC_SLOTS_PER_BLOCK;
    for (uint32_t i = 0; i < n; i++)
        if (atomic_load(&R->cmd[i].state) == GMC_POSTED)
            return 1;
    return 0;
}

/* 1 when a request waits on the control socket. */
static int request_waiting(void)
{
    struct pollfd p = {sock, POLLIN, 0};
    return poll(&p, 1, 0) != 0;
}

/* Waits on the futex word up to ns unless a post or (idle naps: `control`)
 * a request is there (copier_proto.h invariant 3); a post or a request wakes
 * it at once.  The word is read before the checks: the plugin bumps it after
 * it posts or sends, so a bump that comes after the checks ends the wait. */
static void nap(long long ns, int control)
{
    uint32_t w = atomic_load(&R->wake);
    atomic_store(&R->sleeping, 1);
    if (!any_posted() && !(control && request_waiting())) {
        struct timespec to = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
        syscall(SYS_futex, &R->wake, FUTEX_WAIT, w, &to, NULL, 0);
    }
    atomic_store(&R->sleeping, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static void serve_loop(void)
{
    long long last_sock = now_ns(), wait = GMC_NAP_MIN_NS, last_move = 0;
    for (;;) {
        int moved = 0;
        int pending = scan(&moved);
        atomic_fetch_add_explicit(&R->beat, 1, memory_order_relaxed); /* invariant 5 */
        long long t = now_ns();
        if (t - last_sock >= GMC_SOCK_NS) {
            if (check_socket() != 0)
                return;
            last_sock = t;
        }
        if (moved) { /* copies issued or completed: look again at once */
            wait = GMC_NAP_MIN_NS;
            last_move = t;
        } else if (t - last_move < GMC_SPIN_NS) { /* a burst's next copy is near */
            cpu_relax();
        } else if (pending) { /* the GPU is copying: nap, longer each time */
            nap(wait, 0);     /* the socket is read every GMC_SOCK_NS meanwhile */
            wait = wait * 3 / 2 > GMC_NAP_MAX_NS ? GMC_NAP_MAX_NS : wait * 3 / 2;
        } else { /* idle: sleep until a post or a request (or the socket's turn) */
            nap(GMC_SLEEP_NS, 1);
            wait = GMC_NAP_MIN_NS;
            if (check_socket() != 0)
                return;
            last_sock = now_ns();
        }
    }
}

/* ---- start ---------------------------------------------------------------- */

static void close_others(void)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, GMC_FD + 1, ~0U, 0) == 0)
        return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = GMC_FD + 1; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
        close((int)fd);
}

static int reply(struct gmc_msg *m)
{
    m->version = GMC_VERSION;
    return send(sock, m, sizeof(*m), MSG_NOSIGNAL) == (ssize_t)sizeof(*m) ? 0 : -1;
}

static int serve(void)
{
    close_others();
    /* The plugin names devices by PCI bus id: every device is visible here,
     * whatever CUDA_VISIBLE_DEVICES the application ran with. */
    unsetenv("CUDA_VISIBLE_DEVICES");
    struct gmc_msg m;
    int rfd = -1;
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec io = {&m, sizeof(m)};
    struct msghdr h = {
        .msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    ssize_t n = recvmsg(sock, &h, MSG_CMSG_CLOEXEC);
    struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&h) : NULL;
    if (c && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(&rfd, CMSG_DATA(c), sizeof(int));
    if (n != sizeof(m) || m.op != GMC_HELLO || rfd < 0) {
        say("%s", "no greeting from the plugin on fd 3; started by hand? (it is started by the "
                  "GPU-memory validation layer, GDRTRACE_GPUMEM=1)");
        return 2;
    }
    memset(&m, 0, sizeof(m));
    m.op = GMC_HELLO;
    R = mmap(NULL, GMC_REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
    close(rfd);
    if (R == MAP_FAILED) {
        m.status = errno;
        snprintf(m.text, sizeof(m.text), "copier: mmap of the command region failed: %s",
                 strerror(errno));
        reply(&m);
        return 1;
    }
    if (R->magic != GMC_MAGIC || R->version != GMC_VERSION) {
        m.status = EPROTO;
        snprintf(m.text, sizeof(m.text), "copier: command region of version %u (want %u)",
                 R->version, GMC_VERSION);
        reply(&m);
        return 1;
    }
    /* Before CUDA starts its threads: they inherit the placement. */
    place();
    prctl(PR_SET_TIMERSLACK, (unsigned long)GMC_TIMER_SLACK_NS, 0, 0, 0);
    if (gt_cu_load() != 0) {
        m.status = ENODEV;
        snprintf(m.text, sizeof(m.text), "copier: CUDA unavailable: %.200s", gt_cu.why);
        reply(&m);
        return 1;
    }
    m.status = 0;
    m.reg = (uint32_t)getpid();
    snprintf(m.text, sizeof(m.text), "%s", where);
    if (reply(&m) != 0)
        return 0;
    serve_loop();
    return 0;
}

/* The intermediate: spawns the copier in a process group of its own (a
 * terminal's ^C goes to the application, which decides) and exits. */
static int detach(void)
{
    posix_spawnattr_t a;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_init(&a);
    posix_spawnattr_setflags(&a, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                     POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&a, 0);
    posix_spawnattr_setsigmask(&a, &none);
    posix_spawnattr_setsigdefault(&a, &all);
    char *argv[] = {"gdrtrace-gpumem-copier", "--serve", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", NULL, &a, argv, environ);
    posix_spawnattr_destroy(&a);
    if (rc != 0) {
        say("cannot start the copier: %s", strerror(rc));
        return 127;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--detach"))
        return detach();
    if (argc == 2 && !strcmp(argv[1], "--serve"))
        return serve();
    fprintf(stderr,
            "usage: gdrtrace-gpumem-copier --detach|--serve\n"
            "The GPU-memory validation layer of libnccl-net-gdrtrace.so starts this program\n"
            "(GDRTRACE_GPUMEM=1): it copies GPU memory\n"
            "for the layer in a CUDA context of its own.  It is not meant to be run by hand.\n");
    return 2;
}
