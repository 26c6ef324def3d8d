/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recorder.c — creates and fills one process's recorder file (see
 * recorder.h and docs/recorder-format.md).
 *
 * Invariants:
 *  - The file is created with O_CREAT|O_EXCL|O_NOFOLLOW (never opens or
 *    follows something already there), chmod'ed to the configured mode
 *    regardless of umask, and allocated with posix_fallocate before it is
 *    mapped, all but the collective comm entries: a full tmpfs fails here
 *    with ENOSPC, never later with SIGBUS.  The collective comm entries
 *    (half the file with the defaults) stay a hole until the profiler
 *    claims one: gt_rec_new_coll_comm allocates that entry first, on the
 *    profiler's communicator init (NCCL's cold path), and a claim whose
 *    pages cannot be allocated is refused, so no page is ever written that
 *    was not allocated.
 *  - header.state stays CREATING until every section is filled; LIVE is
 *    stored with release order, so a reader that acquires LIVE sees a
 *    complete layout.  Sections never move or resize afterwards.
 *  - Comm slots are handed out by one atomic counter and never reused; a
 *    slot's identity is written before its state is stored ACTIVE with
 *    release order.  The last slot is the overflow slot.
 *  - The mapping is guarded (shim/sigbus.c) from mmap to munmap: if the file
 *    is truncated, its pages become anonymous memory, the recorder is lost
 *    (gt_rec_lost) and the process lives on.
 *  - The mode never grants write to group or others (GDRTRACE_MODE).
 *  - Nothing here runs on the hot path except gt_rec_event (recorder.h) and
 *    the host-pressure tick (rec_host.h).
 */
#include "shim/recorder.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/env.h"
#include "common/log.h"
#include "common/fingerprint.h"
#include "common/hist.h"
#include "common/nccl_cfg.h"
#include "common/procid.h"
#include "shim/rec_host.h"
#include "shim/sigbus.h"

extern char **environ;

__thread uint32_t gt_rec_tid_cache __attribute__((tls_model("initial-exec")));

uint32_t gt_rec_tid_slow(void)
{
    gt_rec_tid_cache = (uint32_t)syscall(SYS_gettid);
    return gt_rec_tid_cache;
}

static void set_err(char *err, size_t n, const char *fmt, ...)
{
    if (!err || !n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

static void copy_str(char *dst, size_t n, const char *src)
{
    size_t len = src ? strnlen(src, n - 1) : 0;
    if (len)
        memcpy(dst, src, len);
    dst[len] = '\0';
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t round_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

static void sanitise(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < n; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[i] = (isalnum(c) || c == '-' || c == '_') ? (char)c : '_';
    }
    dst[i] = '\0';
}

void gt_rec_file_name(char *out, size_t n, const char *job, const char *host, int pid)
{
    char j[65], h[65];
    sanitise(j, sizeof(j), job && *job ? job : "nojob");
    sanitise(h, sizeof(h), host && *host ? host : "nohost");
    snprintf(out, n, GTR_FILE_PREFIX "%s.%s.%d" GTR_FILE_SUFFIX, j, h, pid);
}

void gt_rec_policy_text(char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "GDRTRACE_", 9) != 0)
            continue;
        size_t need = strlen(*e) + (len ? 1 : 0);
        if (len + need + 1 > n)
            break;
        len += (size_t)snprintf(out + len, n - len, "%s%s", len ? " " : "", *e);
    }
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < -1 || x > INT32_MAX)
        return dflt; /* a launcher hint, not our variable: ignore silently */
    return (int)x;
}

/* Job and rank hints.  The innermost launcher wins: torchrun under Slurm
 * sets RANK per worker while SLURM_PROCID is per node task. */
static void fill_launcher(struct gtr_identity *id)
{
    id->rank = id->local_rank = id->world_size = -1;
    const char *job = NULL;
    if (getenv("TORCHELASTIC_RUN_ID") || (getenv("RANK") && getenv("LOCAL_RANK"))) {
        copy_str(id->launcher, sizeof(id->launcher), "torchrun");
        id->rank = env_int("RANK", -1);
        id->local_rank = env_int("LOCAL_RANK", -1);
        id->world_size = env_int("WORLD_SIZE", -1);
        job = getenv("TORCHELASTIC_RUN_ID");
    } else if (getenv("OMPI_COMM_WORLD_RANK")) {
        copy_str(id->launcher, sizeof(id->launcher), "openmpi");
        id->rank = env_int("OMPI_COMM_WORLD_RANK", -1);
        id->local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", -1);
        id->world_size = env_int("OMPI_COMM_WORLD_SIZE", -1);
    } else if (getenv("SLURM_PROCID")) {
        copy_str(id->launcher, sizeof(id->launcher), "slurm");
        id->rank = env_int("SLURM_PROCID", -1);
        id->local_rank = env_int("SLURM_LOCALID", -1);
        id->world_size = env_int("SLURM_NTASKS", -1);
    } else if (getenv("GDRTRACE_JOB")) {
        copy_str(id->launcher, sizeof(id->launcher), "gdrtrace");
    }
    /* Job: ours first, then the scheduler's, then the launcher's. */
    const char *cands[] = {getenv("GDRTRACE_JOB"), getenv("SLURM_JOB_ID"), job,
                           getenv("OMPI_MCA_orte_ess_jobid"), getenv("PMIX_NAMESPACE")};
    for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
        if (cands[i] && *cands[i]) {
            copy_str(id->job, sizeof(id->job), cands[i]);
            break;
        }
    }
}

static int nccl_version(void)
{
    /* Only if NCCL is already in the process: RTLD_DEFAULT never loads. */
    int (*get)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "ncclGetVersion");
    int v = -1;
    if (!get || get(&v) != 0 || v <= 0)
        return -1;
    return v;
}

static void fill_identity(struct gtr_identity *id, int events_all, const struct gt_reg_policy *pol,
                          int emulated)
{
    memset(id, 0, sizeof(*id));
    if (gethostname(id->host, sizeof(id->host) - 1) != 0)
        id->host[0] = '\0';
    id->host[sizeof(id->host) - 1] = '\0';
    fill_launcher(id);
    id->pid = (int32_t)getpid();
    /* 1.4: which process this pid is, for the reader's liveness judgement */
    gt_proc_ns("pid", &id->pidns_dev, &id->pidns_ino);
    gt_proc_ns("time", &id->timens_dev, &id->timens_ino);
    int64_t started = gt_proc_start_ticks(0);
    id->proc_start_ticks = started > 0 ? (uint64_t)started : 0;
    id->start_wall_ns = wall_ns();
    id->start_mono_ns = gt_clock_mono_ns();
    id->clock = gt_clock_g.kind;
    id->clock_shift = gt_clock_g.shift;
    id->clock_mult = gt_clock_g.mult;
    id->clock_tick0 = gt_clock_g.tick0;
    id->clock_mono0_ns = gt_clock_g.mono0_ns;
    id->clock_hz = gt_clock_g.hz;
#ifdef GDRTRACE_VERSION
    copy_str(id->plugin_version, sizeof(id->plugin_version), GDRTRACE_VERSION);
#endif
    id->nccl_version = nccl_version();
    /* what plugin/reg uses: the same snapshot (not the raw variables:
     * GDRTRACE_REG=auto allows peermem by default, an invalid GDRTRACE_REG
     * means dmabuf) */
    copy_str(id->policy_reg, sizeof(id->policy_reg), gt_reg_mode_name(pol->mode));
    id->policy_allow_peermem = (uint8_t)(pol->allow_peermem != 0);
    id->policy_events_all = (uint8_t)(events_all != 0);
    /* 1.8: the same facts as codes, so no reader maps a string back */
    id->reg_mode = (uint8_t)pol->mode;
    id->emulated = (uint8_t)(emulated != 0);
    id->facts = GTR_ID_HAS_REG_MODE | GTR_ID_HAS_EMULATED;
    gt_rec_policy_text(id->policy_text, sizeof(id->policy_text));
    gt_fingerprint_collect(&id->node, NULL);
}

_Static_assert(sizeof(((struct gtr_setting *)0)->key) == sizeof(((struct gt_setting *)0)->key) &&
                   sizeof(((struct gtr_setting *)0)->value) ==
                       sizeof(((struct gt_setting *)0)->value) &&
                   sizeof(((struct gtr_setting *)0)->origin) ==
                       sizeof(((struct gt_setting *)0)->origin),
               "a gt_setting fits a gtr_setting unchanged");

/* The recorder's mode: the owner keeps read and write, and nobody else may
 * write (anyone who can write the file can forge the counters, and so the
 * verdict, of the job).  Anything else: one WARN, 0600. */
static int checked_mode(long m, const char *text)
{
    if (m < 0 || m > 0777 || (m & 0600) != 0600 || (m & 0022)) {
        GT_WARN("GDRTRACE_MODE='%s' is not an octal file mode that keeps the owner's read and "
                "write and grants no write to group or others (0600..0755 without 022); "
                "using 0600",
                text);
        return 0600;
    }
    return (int)m;
}

static int parse_mode(void)
{
    const char *v = gt_env_str("GDRTRACE_MODE");
    if (!v)
        return 0600;
    char *end;
    errno = 0;
    long m = strtol(v, &end, 8);
    if (errno || *end)
        m = -1;
    return checked_mode(m, v);
}

static void set_section(struct gtr_header *h, int i, uint32_t id, uint32_t entry_size,
                        uint64_t offset, uint64_t size, uint64_t count)
{
    h->sections[i].id = id;
    h->sections[i].entry_size = entry_size;
    h->sections[i].offset = offset;
    h->sections[i].size = size;
    h->sections[i].count = count;
}

/* O_EXCL create; on EEXIST (a dead process with our pid, another pid
 * namespace) try "<pid>-1" .. "<pid>-99" rather than touching its file. */
static int create_file(struct gt_recorder *r, const char *dir, const char *name, int mode,
                       char *err, size_t errlen)
{
    const size_t base_len = strlen(name) - strlen(GTR_FILE_SUFFIX);
    for (int n = 0; n < 100; n++) {
        int k;
        if (n == 0)
            k = snprintf(r->path, sizeof(r->path), "%s/%s", dir, name);
        else
            k = snprintf(r->path, sizeof(r->path), "%s/%.*s-%d" GTR_FILE_SUFFIX, dir, (int)base_len,
                         name, n);
        if (k < 0 || (size_t)k >= sizeof(r->path)) {
            set_err(err, errlen, "recorder path under GDRTRACE_DIR='%s' is too long", dir);
            return ENAMETOOLONG;
        }
        int fd = open(r->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0) {
            r->fd = fd;
            return 0;
        }
        if (errno != EEXIST) {
            int e = errno;
            set_err(err, errlen, "cannot create recorder %s: %s (GDRTRACE_DIR='%s')", r->path,
                    strerror(e), dir);
            return e;
        }
    }
    set_err(err, errlen, "cannot create recorder %s: 100 files with this name already exist",
            r->path);
    return EEXIST;
}

int gt_rec_open(struct gt_recorder *r, const struct gt_rec_config *cfg, char *err, size_t errlen)
{
    struct gt_rec_config c = cfg ? *cfg : (struct gt_rec_config){.mode = -1, .events_all = -1};
    memset(r, 0, sizeof(*r));
    r->fd = -1;
    const char *dir = c.dir ? c.dir : gt_env_str("GDRTRACE_DIR");
    if (!dir)
        dir = "/dev/shm";
    char mode_text[16];
    snprintf(mode_text, sizeof(mode_text), "%o", (unsigned)c.mode);
    int mode = c.mode >= 0 ? checked_mode(c.mode, mode_text) : parse_mode();
    r->ndevs = c.ndevs ? c.ndevs : GTR_DEFAULT_DEVICES;
    r->ncomms = c.ncomms >= 2 ? c.ncomms : GTR_DEFAULT_COMMS;
    uint64_t cap = c.ring_events ? c.ring_events : GTR_DEFAULT_RING_EVENTS;
    if (cap < 2)
        cap = 2;
    if (cap & (cap - 1))
        cap = 1ull << (64 - __builtin_clzll(cap));
    /* The settings in force: the process's snapshot (common/settings.h),
     * the one every user of a setting reads, WARNed about when taken. */
    const struct gt_settings *st = gt_settings_get();
    struct gt_setting events = st->events_set;
    r->events_all = st->events_all;
    if (c.events_all >= 0 && c.events_all != r->events_all) {
        /* the embedding program's choice (tests, benchmarks) wins */
        r->events_all = c.events_all != 0;
        snprintf(events.value, sizeof(events.value), "%s", r->events_all ? "all" : "control");
        snprintf(events.origin, sizeof(events.origin), "set by the program");
        events.source = GT_SRC_DEFAULT;
    }
    struct gt_setting set[GT_REG_POLICY_SETTINGS + 2 + GT_GPUMEM_SETTINGS + GT_NCCL_CFG_MAX];
    struct gt_reg_policy pol = st->reg;
    memcpy(set, st->reg_set, sizeof(st->reg_set));
    uint32_t nset = GT_REG_POLICY_SETTINGS;
    set[nset++] = st->transport_set;
    set[nset++] = events;
    /* The GPU-memory validation mode marks the whole run emulated
     * (identity.emulated, the same snapshot plugin/core's choice reads);
     * its settings are recorded only when it is on. */
    int emulated = st->gpumem.on;
    if (emulated) {
        memcpy(&set[nset], st->gpumem_set, sizeof(st->gpumem_set));
        nset += GT_GPUMEM_SETTINGS;
    }
    /* NCCL's own settings that decide GPU Direct and the transport (NCCL
     * acts on them, not us): the recorder opens at the first init, after
     * NCCL applied its conf files, so these are the values NCCL uses. */
    nset += (uint32_t)gt_nccl_cfg_read(&set[nset], GT_NCCL_CFG_MAX);

    gt_clock_init();
    struct gtr_identity id;
    fill_identity(&id, r->events_all, &pol, emulated);

    /* Layout: header | identity | devices | comms | ring header + events,
     * each section starting on a cache line (comms: hot counters aligned). */
    uint64_t off_id = GTR_HEADER_SIZE;
    uint64_t off_dev = round_up(off_id + sizeof(struct gtr_identity), 64);
    uint64_t off_comm = round_up(off_dev + (uint64_t)r->ndevs * sizeof(struct gtr_device), 64);
    uint64_t off_ring = round_up(off_comm + (uint64_t)r->ncomms * sizeof(struct gtr_comm), 64);
    uint64_t ring_size = sizeof(struct gtr_ring_header) + cap * sizeof(struct gtr_event);
    r->nsettings = GTR_DEFAULT_SETTINGS;
    uint64_t off_set = round_up(off_ring + ring_size, 64);
    uint64_t set_size = (uint64_t)r->nsettings * sizeof(struct gtr_setting);
    r->ncallees = GTR_DEFAULT_CALLEES;
    uint64_t off_callee = round_up(off_set + set_size, 64);
    uint64_t callee_size = (uint64_t)r->ncallees * sizeof(struct gtr_callee);
    uint64_t off_host = round_up(off_callee + callee_size, 64);
    /* 1.6: the collective sections.  The comm entries start on a page: the
     * cells are written from NCCL's threads, and a reader of a file without
     * collectives reads their untouched pages as holes. */
    r->ncolls = c.ncolls ? c.ncolls : GTR_DEFAULT_COLL_COMMS;
    uint64_t off_cstat = round_up(off_host + sizeof(struct gtr_host), 64);
    uint64_t off_coll = round_up(off_cstat + sizeof(struct gtr_coll_status), 4096);
    uint64_t coll_size = (uint64_t)r->ncolls * sizeof(struct gtr_coll_comm);
    r->size = round_up(off_coll + coll_size, 4096);

    char name[256];
    gt_rec_file_name(name, sizeof(name), id.job, id.host, id.pid);
    int e = create_file(r, dir, name, mode, err, errlen);
    if (e)
        return e;
    if (fchmod(r->fd, (mode_t)mode) != 0) {
        e = errno;
        set_err(err, errlen, "cannot chmod recorder %s to %o: %s", r->path, mode, strerror(e));
        goto err_file;
    }
    /* Everything but the collective comm entries (a hole until claimed). */
    e = posix_fallocate(r->fd, 0, (off_t)off_coll);
    if (e) {
        set_err(err, errlen,
                "cannot allocate %zu bytes for recorder %s: %s (is GDRTRACE_DIR='%s' full?)",
                (size_t)off_coll, r->path, strerror(e), dir);
        goto err_file;
    }
    if (ftruncate(r->fd, (off_t)r->size) != 0) {
        e = errno;
        set_err(err, errlen, "cannot size recorder %s to %zu bytes: %s", r->path, r->size,
                strerror(e));
        goto err_file;
    }
    void *base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
    if (base == MAP_FAILED) {
        e = errno;
        set_err(err, errlen, "cannot map recorder %s (%zu bytes): %s", r->path, r->size,
                strerror(e));
        goto err_file;
    }
    r->base = base;
    /* From here a truncation of the file no longer kills the process. */
    e = gt_sigbus_guard(base, r->size);
    if (e)
        GT_WARN("recorder %s is not guarded against truncation (%s): truncating the file "
                "while the job runs would kill it with SIGBUS",
                r->path, strerror(e));
    e = 0;

    r->hdr = (struct gtr_header *)r->base;
    r->id = (struct gtr_identity *)(r->base + off_id);
    r->devs = (struct gtr_device *)(r->base + off_dev);
    r->comms = (struct gtr_comm *)(r->base + off_comm);
    r->settings = (struct gtr_setting *)(r->base + off_set);
    r->callees = (struct gtr_callee *)(r->base + off_callee);
    r->host = (struct gtr_host *)(r->base + off_host);
    r->coll_status = (struct gtr_coll_status *)(r->base + off_cstat);
    r->colls = (struct gtr_coll_comm *)(r->base + off_coll);

    struct gtr_header *h = r->hdr;
    memcpy(h->magic, GTR_MAGIC, GTR_MAGIC_LEN);
    h->version_major = GTR_VERSION_MAJOR;
    h->version_minor = GTR_VERSION_MINOR;
    h->endian = GTR_ENDIAN_MARK;
    h->word_size = (uint32_t)sizeof(void *);
    h->header_size = GTR_HEADER_SIZE;
    h->file_size = r->size;
    h->state = GTR_STATE_CREATING;
    h->section_count = 9;
    set_section(h, 0, GTR_SEC_IDENTITY, sizeof(struct gtr_identity), off_id,
                sizeof(struct gtr_identity), 1);
    set_section(h, 1, GTR_SEC_DEVICES, sizeof(struct gtr_device), off_dev,
                (uint64_t)r->ndevs * sizeof(struct gtr_device), r->ndevs);
    set_section(h, 2, GTR_SEC_COMMS, sizeof(struct gtr_comm), off_comm,
                (uint64_t)r->ncomms * sizeof(struct gtr_comm), r->ncomms);
    set_section(h, 3, GTR_SEC_RING, sizeof(struct gtr_event), off_ring, ring_size, cap);
    set_section(h, 4, GTR_SEC_SETTINGS, sizeof(struct gtr_setting), off_set, set_size,
                r->nsettings);
    set_section(h, 5, GTR_SEC_CALLEES, sizeof(struct gtr_callee), off_callee, callee_size,
                r->ncallees);
    set_section(h, 6, GTR_SEC_HOST, sizeof(struct gtr_host), off_host, sizeof(struct gtr_host), 1);
    set_section(h, 7, GTR_SEC_COLL_STATUS, sizeof(struct gtr_coll_status), off_cstat,
                sizeof(struct gtr_coll_status), 1);
    set_section(h, 8, GTR_SEC_COLL_COMMS, sizeof(struct gtr_coll_comm), off_coll, coll_size,
                r->ncolls);

    *r->id = id;
    for (uint32_t i = 0; i < r->ndevs; i++)
        r->devs[i].dev = -1;
    for (uint32_t i = 0; i < r->ncomms; i++) {
        r->comms[i].dev = -1;
        for (int op = 0; op < GTR_OP_COUNT; op++)
            gt_hist_init(&r->comms[i].hist[op]);
    }
    /* Histograms' min is UINT64_MAX while empty; the cells' are set when a
     * cell is claimed (gt_rec_new_coll_cell), so untouched pages stay holes. */
    gt_rec_coll_status_init(r);
    gt_ring_format(&r->ring, (struct gtr_ring_header *)(r->base + off_ring),
                   (struct gtr_event *)(r->base + off_ring + sizeof(struct gtr_ring_header)), cap);
    for (uint32_t i = 0; i < nset; i++)
        gt_rec_set_setting(r, &set[i]);
    gt_rec_host_open(r); /* the process's CPU and memory at creation */

    /* Publish: everything above happens-before a reader's acquire of LIVE. */
    __atomic_store_n(&h->state, GTR_STATE_LIVE, __ATOMIC_RELEASE);
    gt_rec_event(r, GTR_EV_RECORDER_OPEN, GTR_NO_COMM, -1, 0, 0, cap, 0, 0, 0);
    return 0;

err_file:
    close(r->fd);
    unlink(r->path);
    r->fd = -1;
    return e;
}

void gt_rec_close(struct gt_recorder *r)
{
    if (!r->hdr || __atomic_load_n(&r->hdr->state, __ATOMIC_ACQUIRE) != GTR_STATE_LIVE)
        return;
    gt_rec_host_sample(r); /* the last word on host pressure, before CLOSED */
    __atomic_store_n(&r->id->end_wall_ns, wall_ns(), __ATOMIC_RELAXED);
    /* release: the end time (and every record before it) precede CLOSED. */
    __atomic_store_n(&r->hdr->state, GTR_STATE_CLOSED, __ATOMIC_RELEASE);
}

void gt_rec_reopen(struct gt_recorder *r)
{
    if (!r->hdr || __atomic_load_n(&r->hdr->state, __ATOMIC_ACQUIRE) != GTR_STATE_CLOSED)
        return;
    __atomic_store_n(&r->id->end_wall_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->hdr->state, GTR_STATE_LIVE, __ATOMIC_RELEASE);
}

void gt_rec_unmap(struct gt_recorder *r)
{
    if (r->base) {
        gt_sigbus_unguard(r->base);
        munmap(r->base, r->size);
    }
    if (r->fd >= 0)
        close(r->fd);
    r->base = NULL;
    r->hdr = NULL;
    r->fd = -1;
}

int gt_rec_lost(const struct gt_recorder *r)
{
    return r->base && gt_sigbus_lost(r->base);
}

void gt_rec_set_transport(struct gt_recorder *r, const char *name, const char *why)
{
    copy_str(r->id->transport, sizeof(r->id->transport), name);
    copy_str(r->id->transport_why, sizeof(r->id->transport_why), why);
}

uint64_t gt_rec_callee(struct gt_recorder *r, const char *kind, const char *path, int version)
{
    if (!r->callees)
        return GTR_NO_CALLEE;
    for (uint32_t i = 0; i < r->ncallees; i++) {
        struct gtr_callee *e = &r->callees[i];
        if (__atomic_load_n(&e->in_use, __ATOMIC_ACQUIRE)) {
            if (e->version == version && strncmp(e->kind, kind, sizeof(e->kind) - 1) == 0 &&
                strncmp(e->path, path, sizeof(e->path) - 1) == 0)
                return i;
            continue;
        }
        copy_str(e->kind, sizeof(e->kind), kind);
        copy_str(e->path, sizeof(e->path), path);
        e->version = version;
        /* release: the entry's fields before in_use */
        __atomic_store_n(&e->in_use, 1, __ATOMIC_RELEASE);
        return i;
    }
    return GTR_NO_CALLEE; /* full: the events still say which call, not which library */
}

void gt_rec_set_abi_version(struct gt_recorder *r, int abi_version)
{
    __atomic_store_n(&r->id->abi_version, abi_version, __ATOMIC_RELAXED);
}

void gt_rec_set_device(struct gt_recorder *r, int dev, const struct gt_props *props,
                       const struct gt_dev_probe *probe, const char *transport)
{
    if (dev < 0 || (uint32_t)dev >= r->ndevs)
        return;
    struct gtr_device *d = &r->devs[dev];
    d->dev = dev;
    if (props) {
        copy_str(d->name, sizeof(d->name), props->name);
        copy_str(d->pci_path, sizeof(d->pci_path), props->pci_path);
        d->ptr_support = props->ptr_support;
        d->speed_mbps = props->speed_mbps;
    }
    copy_str(d->transport, sizeof(d->transport), transport);
    if (probe) {
        d->probe_dmabuf = (uint8_t)probe->dmabuf;
        d->probe_peermem = (uint8_t)probe->peermem;
        d->probe_cuda_dmabuf = (uint8_t)probe->cuda_dmabuf;
        d->probe_dmabuf_errno = probe->dmabuf_errno;
        char why[sizeof(probe->why) + 1];
        memcpy(why, probe->why, sizeof(probe->why));
        why[sizeof(probe->why)] = '\0';
        copy_str(d->why, sizeof(d->why), why);
        if (probe->advertised)
            d->ptr_support = probe->advertised;
    }
    __atomic_store_n(&d->in_use, 1, __ATOMIC_RELEASE);
}

static void activate(struct gtr_comm *c, uint64_t comm_id, int has_comm_id, int abi_version,
                     int64_t init_ns)
{
    c->comm_id = comm_id;
    c->has_comm_id = (uint32_t)has_comm_id;
    c->abi_version = abi_version;
    c->init_ns = init_ns;
    c->finalize_ns = 0;
    /* release: identity before ACTIVE (readers acquire state). */
    __atomic_store_n(&c->state, GTR_COMM_ACTIVE, __ATOMIC_RELEASE);
}

struct gtr_comm *gt_rec_new_comm(struct gt_recorder *r, uint64_t comm_id, int has_comm_id,
                                 int abi_version, int64_t init_ns, uint32_t *slot)
{
    uint32_t i = __atomic_load_n(&r->next_comm, __ATOMIC_RELAXED);
    do {
        if (i >= r->ncomms - 1)
            return NULL;
    } while (!__atomic_compare_exchange_n(&r->next_comm, &i, i + 1, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    activate(&r->comms[i], comm_id, has_comm_id, abi_version, init_ns);
    *slot = i;
    return &r->comms[i];
}

struct gtr_comm *gt_rec_overflow_comm(struct gt_recorder *r, int abi_version, uint32_t *slot)
{
    uint32_t i = r->ncomms - 1;
    struct gtr_comm *c = &r->comms[i];
    if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == GTR_COMM_FREE)
        activate(c, 0, GT_REC_COMM_OVERFLOW, abi_version, gt_rec_now_ns(r));
    *slot = i;
    return c;
}

void gt_rec_set_setting(struct gt_recorder *r, const struct gt_setting *s)
{
    if (!r->settings || !s->key[0])
        return;
    struct gtr_setting *e = NULL;
    for (uint32_t i = 0; i < r->nsettings && !e; i++) {
        struct gtr_setting *x = &r->settings[i];
        if (!__atomic_load_n(&x->in_use, __ATOMIC_ACQUIRE) ||
            strncmp(x->key, s->key, sizeof(x->key)) == 0)
            e = x;
    }
    if (!e)
        return; /* full: a later version sizes the section for what it records */
    /* A reader may see an update half-written (benign: settings change only
     * on cold paths, and the strings stay NUL-terminated within their arrays
     * because the terminators are written first). */
    e->key[sizeof(e->key) - 1] = e->value[sizeof(e->value) - 1] = '\0';
    e->origin[sizeof(e->origin) - 1] = '\0';
    copy_str(e->key, sizeof(e->key), s->key);
    copy_str(e->value, sizeof(e->value), s->value);
    copy_str(e->origin, sizeof(e->origin), s->origin);
    e->source = (uint32_t)s->source;
    /* release: the entry's fields before in_use */
    __atomic_store_n(&e->in_use, 1, __ATOMIC_RELEASE);
}

/* ---- collectives (1.6) ------------------------------------------------- */

void gt_rec_coll_status_init(struct gt_recorder *r)
{
    struct gtr_coll_status *st = r->coll_status;
    if (!st)
        return;
    const char *v = getenv("NCCL_PROFILER_PLUGIN"); /* NCCL's variable, as NCCL reads it */
    st->profiler_env_set = v != NULL;
    copy_str(st->profiler_env, sizeof(st->profiler_env), v);
}

struct gtr_coll_comm *gt_rec_new_coll_comm(struct gt_recorder *r, uint32_t *slot)
{
    if (!r->colls)
        return NULL;
    uint32_t i = __atomic_load_n(&r->next_coll, __ATOMIC_RELAXED);
    do {
        if (i >= r->ncolls)
            return NULL;
    } while (!__atomic_compare_exchange_n(&r->next_coll, &i, i + 1, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    /* The entry's pages are allocated before anything writes them (the
     * section is a hole until now: invariants above).  A forked child
     * writes into private anonymous memory, not the file: nothing to do. */
    if (r->fd >= 0 && r->id && (uint32_t)getpid() == (uint32_t)r->id->pid) {
        off_t off = (off_t)((char *)&r->colls[i] - (char *)r->base);
        int e = posix_fallocate(r->fd, off, (off_t)sizeof(r->colls[i]));
        if (e) {
            GT_WARN("collective metrics off for a communicator: cannot allocate %zu bytes in "
                    "recorder %s: %s",
                    sizeof(r->colls[i]), r->path, strerror(e));
            return NULL;
        }
    }
    *slot = i;
    return &r->colls[i];
}

struct gtr_coll_cell *gt_rec_coll_cell(struct gtr_coll_comm *c, unsigned func, unsigned size_log2)
{
    /* Claimed by CAS on in_use (0 -> 2 while filling -> 1 published): two
     * threads asking for the same new pair may claim two cells; the reader
     * sums cells with equal keys. */
    for (unsigned k = 0; k + 1 < GTR_COLL_CELLS; k++) {
        struct gtr_coll_cell *x = &c->cells[k];
        uint32_t u = __atomic_load_n(&x->in_use, __ATOMIC_ACQUIRE);
        if (u == 1) {
            if (x->func == func && x->size_log2 == size_log2)
                return x;
            continue;
        }
        if (u == 2)
            continue; /* being filled by another thread: another key, or a duplicate */
        uint32_t zero = 0;
        if (!__atomic_compare_exchange_n(&x->in_use, &zero, 2, 0, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED)) {
            k--; /* lost the race for this cell: look at it again */
            continue;
        }
        x->func = (uint8_t)func;
        x->size_log2 = (uint8_t)size_log2;
        __atomic_store_n(&x->hist.min_ns, UINT64_MAX, __ATOMIC_RELAXED);
        __atomic_store_n(&x->in_use, 1, __ATOMIC_RELEASE);
        return x;
    }
    struct gtr_coll_cell *o = &c->cells[GTR_COLL_CELLS - 1];
    uint32_t zero = 0;
    if (__atomic_compare_exchange_n(&o->in_use, &zero, 2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        o->func = GTR_COLL_FUNC_OTHER;
        o->size_log2 = GTR_COLL_SIZE_ANY;
        __atomic_store_n(&o->hist.min_ns, UINT64_MAX, __ATOMIC_RELAXED);
        __atomic_store_n(&o->in_use, 1, __ATOMIC_RELEASE);
    }
    return o;
}
