/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fixture.c — recorder images with known content (see fixture.h).
 * Layout: header (4096) | identity | 2 devices | 4 comms | ring header + events,
 * each section 64-byte aligned, so offsets are fixed and tests can aim at them.
 */
#include "tests/reader/fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdrtrace/recorder_format.h"
#include "common/gt_net.h"
#include "common/hist.h"
#include "common/procid.h"

#define ALIGN64(x) (((x) + 63) & ~(size_t)63)
#define NDEV 2
/* Settings entries of a fixture: the writers' first count (GTR_DEFAULT_SETTINGS
 * grew to 64 later), so fixture files and the examples made from them keep
 * their size. */
#define FX_SETTINGS 32
#define NCOMM_DEFAULT 4

static const char *knames[FX_KIND_COUNT] = {"dmabuf",   "peermem", "host",  "mixed",
                                            "fallback", "error",   "nodata"};
static const char *kverd[FX_KIND_COUNT] = {
    "DIRECT-DMABUF", "DIRECT-PEERMEM", "HOST-STAGED", "MIXED", "FALLBACK", "ERROR", "NO-DATA"};

int fx_kind_parse(const char *s)
{
    for (int k = 0; k < FX_KIND_COUNT; k++)
        if (!strcmp(s, knames[k]))
            return k;
    return -1;
}

const char *fx_kind_name(int k)
{
    return knames[k];
}
const char *fx_kind_verdict(int k)
{
    return kverd[k];
}

size_t fx_off_identity(void)
{
    return GTR_HEADER_SIZE;
}
size_t fx_off_devices(void)
{
    return ALIGN64(fx_off_identity() + sizeof(struct gtr_identity));
}
size_t fx_off_comms(void)
{
    return ALIGN64(fx_off_devices() + NDEV * sizeof(struct gtr_device));
}
static size_t off_ring(int ncomm)
{
    return ALIGN64(fx_off_comms() + (size_t)ncomm * sizeof(struct gtr_comm));
}
size_t fx_off_ring(void)
{
    return off_ring(NCOMM_DEFAULT);
}

/* The documented bucket formula, written again here on purpose: the reader's
 * copy (tools/lib/hist.c) is checked against this one. */
static unsigned bucket(uint64_t v)
{
    if (v < 16)
        return (unsigned)v;
    unsigned m = 0;
    while ((v >> (m + 1)) != 0)
        m++;
    if (m > GTR_HIST_MAX_LOG2)
        return GTR_HIST_BUCKETS - 1;
    return (m - 3) * 16 + (unsigned)((v >> (m - 4)) - 16);
}

static void hist_add(struct gtr_hist *h, uint64_t v, uint64_t n)
{
    if (!n)
        return;
    if (h->count == 0)
        h->min_ns = UINT64_MAX;
    h->count += n;
    h->sum_ns += v * n;
    if (v < h->min_ns)
        h->min_ns = v;
    if (v > h->max_ns)
        h->max_ns = v;
    h->buckets[bucket(v)] += n;
}

static void fill_comm(struct gtr_comm *c, const struct fx_opts *o)
{
    uint64_t s = (uint64_t)(o->scale > 0 ? o->scale : 1);
    const uint64_t MB4 = 4ull << 20;
    c->state = GTR_COMM_FINALIZED;
    c->abi_version = o->abi ? o->abi : 12;
    c->has_comm_id = c->abi_version >= 11;
    c->comm_id = c->has_comm_id ? o->comm_id : 0;
    c->dev = o->no_dev ? -1 : 0;
    c->init_ns = 1000;
    c->finalize_ns = 2000000000;
    for (int i = 0; i < GTR_OP_COUNT; i++)
        c->hist[i].min_ns = UINT64_MAX;
    if (o->kind == FX_NODATA)
        return;
    c->listen_count = 1;
    c->connect_count = 1;
    c->accept_count = 1;
    c->close_count = 3;
    uint64_t nreg = 0;
    switch (o->kind) {
    case FX_DMABUF:
        c->reg_count[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 8 * s;
        c->reg_bytes[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 8 * s * MB4;
        c->reg_count[GT_ASKED_HOST][GT_METHOD_HOST] = 2 * s; /* NCCL's LL buffers */
        c->reg_bytes[GT_ASKED_HOST][GT_METHOD_HOST] = 2 * s * (1ull << 20);
        break;
    case FX_PEERMEM:
        c->reg_count[GT_ASKED_CUDA][GT_METHOD_PEERMEM] = 8 * s;
        c->reg_bytes[GT_ASKED_CUDA][GT_METHOD_PEERMEM] = 8 * s * MB4;
        c->reg_count[GT_ASKED_HOST][GT_METHOD_HOST] = 2 * s;
        c->reg_bytes[GT_ASKED_HOST][GT_METHOD_HOST] = 2 * s * (1ull << 20);
        break;
    case FX_HOST:
        c->reg_count[GT_ASKED_HOST][GT_METHOD_HOST] = 10 * s;
        c->reg_bytes[GT_ASKED_HOST][GT_METHOD_HOST] = 10 * s * MB4;
        break;
    case FX_MIXED:
        c->reg_count[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 4 * s;
        c->reg_bytes[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 4 * s * MB4;
        c->reg_count[GT_ASKED_CUDA][GT_METHOD_PEERMEM] = 4 * s;
        c->reg_bytes[GT_ASKED_CUDA][GT_METHOD_PEERMEM] = 4 * s * MB4;
        break;
    case FX_FALLBACK:
        c->reg_count[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 2 * s;
        c->reg_bytes[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 2 * s * MB4;
        c->reg_count[GT_ASKED_DMABUF][GT_METHOD_PEERMEM] = 6 * s;
        c->reg_bytes[GT_ASKED_DMABUF][GT_METHOD_PEERMEM] = 6 * s * MB4;
        c->fallback_count = 6 * s;
        *gtr_reason_counter(c, GTR_FALLBACKS, GT_REASON_DMABUF_REG_FAILED) = 6 * s;
        c->fallback_last_errno = EINVAL;
        c->fallback_last_reason = GT_REASON_DMABUF_REG_FAILED;
        break;
    case FX_ERROR:
        c->reg_count[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 2 * s;
        c->reg_bytes[GT_ASKED_DMABUF][GT_METHOD_DMABUF] = 2 * s * MB4;
        c->reg_count[GT_ASKED_DMABUF][GT_METHOD_FAILED] = 1 * s;
        c->reg_bytes[GT_ASKED_DMABUF][GT_METHOD_FAILED] = 1 * s * MB4;
        c->error_count = 1 * s;
        *gtr_reason_counter(c, GTR_ERRORS, GT_REASON_PEERMEM_NOT_ALLOWED) = 1 * s;
        c->error_last_errno = EOPNOTSUPP;
        c->error_last_reason = GT_REASON_PEERMEM_NOT_ALLOWED;
        snprintf(c->error_last_text, sizeof(c->error_last_text),
                 "ibv_reg_dmabuf_mr on mlx5_0 failed: Operation not supported; set "
                 "GDRTRACE_ALLOW_PEERMEM=1 to allow peermem");
        break;
    }
    for (int a = 0; a < GTR_ASKED_COUNT; a++)
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            nreg += c->reg_count[a][m];
    /* Registration latency: 90% at 20us, 9% at 100us, 1% at 2ms (exactly
     * representable so percentiles are known: p50 in 20us's bucket, p95 in
     * 100us's, p99/max 2ms). */
    uint64_t L = (uint64_t)o->lat_pct;
    hist_add(&c->hist[GTR_OP_REG], 20000 * L / 100, 90 * s);
    hist_add(&c->hist[GTR_OP_REG], 100000 * L / 100, 9 * s);
    hist_add(&c->hist[GTR_OP_REG], 2000000 * L / 100, 1 * s);
    (void)nreg;
    c->dereg_count = 4 * s;
    hist_add(&c->hist[GTR_OP_DEREG], 5000 * L / 100, 4 * s);
    c->send_count = c->send_posted = 1000 * s;
    c->send_bytes = 1000 * s * 65536;
    c->recv_count = c->recv_posted = 1000 * s;
    c->recv_bytes = 1000 * s * 65536;
    c->flush_count = o->flushes * s;
    hist_add(&c->hist[GTR_OP_SEND], 8000, 500 * s);
    hist_add(&c->hist[GTR_OP_SEND], 12000, 500 * s);
    hist_add(&c->hist[GTR_OP_RECV], 9000, 1000 * s);
}

uint64_t fx_expected_regs(const struct fx_opts *oin)
{
    struct fx_opts ob = *oin, *o = &ob;
    if (!o->lat_pct)
        o->lat_pct = 100;
    struct gtr_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return 0;
    fill_comm(c, o);
    uint64_t n = 0;
    for (int a = 0; a < GTR_ASKED_COUNT; a++)
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            n += c->reg_count[a][m];
    free(c);
    return n;
}

static void sec(struct gtr_header *h, int i, uint32_t id, uint32_t esz, uint64_t off,
                uint64_t count, uint64_t size)
{
    h->sections[i].id = id;
    h->sections[i].entry_size = esz;
    h->sections[i].offset = off;
    h->sections[i].count = count;
    h->sections[i].size = size;
}

/* n values of v ns into h */
static void hist_put(struct gtr_hist *h, uint64_t v, uint64_t n)
{
    if (!n)
        return;
    h->count += n;
    h->sum_ns += v * n;
    h->buckets[gt_hist_index(v)] += n;
    if (v < h->min_ns)
        h->min_ns = v;
    if (v > h->max_ns)
        h->max_ns = v;
}

static struct gtr_coll_cell *coll_cell(struct gtr_coll_comm *c, int k, int func, int log2)
{
    struct gtr_coll_cell *x = &c->cells[k];
    x->in_use = 1;
    x->func = (uint8_t)func;
    x->size_log2 = (uint8_t)log2;
    gt_hist_init(&x->hist);
    return x;
}

/* The 1.5 sections (fx_opts.coll). */
static void fill_coll(unsigned char *stp, unsigned char *cp, const struct fx_opts *o)
{
    struct gtr_coll_status st = {0};
    st.mode = GTR_COLL_MODE_PROXY;
    if (!strncmp(o->coll, "env:", 4)) {
        st.profiler_env_set = 1;
        snprintf(st.profiler_env, sizeof(st.profiler_env), "%s", o->coll + 4);
    }
    if (strcmp(o->coll, "data") != 0) {
        memcpy(stp, &st, sizeof(st));
        return;
    }
    st.version = 5;
    st.inits = 1;
    memcpy(stp, &st, sizeof(st));
    struct gtr_coll_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return;
    c->state = GTR_COMM_FINALIZED;
    c->has_comm_id = 1;
    c->comm_id = o->comm_id;
    c->version = 5;
    c->rank = o->rank;
    c->nranks = o->world;
    c->nnodes = 2;
    snprintf(c->comm_name, sizeof(c->comm_name), "fx");
    c->mode = GTR_COLL_MODE_PROXY;
    c->mask = 0xe;
    c->init_ns = 1000000;              /* 1 ms after the recorder opened */
    c->first_ns = 1000000 + 250000000; /* the first collective 250 ms later */
    c->finalize_ns = 1000000 + 1900000000;
    /* AllReduce 1 MiB: 90 at 1 ms, 9 at 1.2 ms, 1 at 5 ms; RING_LL128 */
    struct gtr_coll_cell *x = coll_cell(c, 0, GTR_COLL_FUNC_ALLREDUCE, 20);
    x->count = 100;
    x->bytes = 100ull << 20;
    x->algo_proto[GTR_ALGO_RING][GTR_PROTO_LL128] = 100;
    /* durations scale with --latency (lat_pct, 100: as written) */
    const uint64_t L = (uint64_t)(o->lat_pct ? o->lat_pct : 100);
    hist_put(&x->hist, 1000000 * L / 100, 90);
    hist_put(&x->hist, 1200000 * L / 100, 9);
    hist_put(&x->hist, 5000000 * L / 100, 1);
    /* AllReduce 64 MiB: 20 at 40 ms; 15 RING_SIMPLE, 5 TREE_SIMPLE; 2 not timed */
    x = coll_cell(c, 1, GTR_COLL_FUNC_ALLREDUCE, 26);
    x->count = 22;
    x->bytes = 22ull << 26;
    x->algo_proto[GTR_ALGO_RING][GTR_PROTO_SIMPLE] = 17;
    x->algo_proto[GTR_ALGO_TREE][GTR_PROTO_SIMPLE] = 5;
    hist_put(&x->hist, 40000000 * L / 100, 20);
    /* AllGather 8 MiB: 10 at 6 ms */
    x = coll_cell(c, 2, GTR_COLL_FUNC_ALLGATHER, 23);
    x->count = 10;
    x->bytes = 10ull << 23;
    x->algo_proto[GTR_ALGO_RING][GTR_PROTO_SIMPLE] = 10;
    hist_put(&x->hist, 6000000 * L / 100, 10);
    c->busy_ns = 100 * 1000000 + 9 * 200000 + 4000000 + 20 * 40000000ull + 10 * 6000000ull;
    c->last_end_ns = c->finalize_ns - 1000000;
    memcpy(cp, c, sizeof(*c));
    free(c);
}

static void put_setting(struct gtr_setting *set, const char *key, const char *value,
                        uint32_t source)
{
    struct gtr_setting *e = NULL;
    for (int i = 0; i < FX_SETTINGS && !e; i++)
        if (!set[i].in_use || !strcmp(set[i].key, key))
            e = &set[i];
    if (!e)
        return;
    memset(e, 0, sizeof(*e));
    snprintf(e->key, sizeof(e->key), "%s", key);
    snprintf(e->value, sizeof(e->value), "%s", value);
    if (source != GT_SRC_DEFAULT)
        snprintf(e->origin, sizeof(e->origin), "%s=%s", key, value);
    e->source = source;
    e->in_use = 1;
}

/* What the writer records, for the fixture's policy. */
static void fill_settings(struct gtr_setting *set, const struct fx_opts *o)
{
    put_setting(set, "GDRTRACE_REG", o->reg, GT_SRC_GDRTRACE);
    put_setting(set, "GDRTRACE_ALLOW_PEERMEM", o->kind == FX_FALLBACK ? "1" : "0",
                o->kind == FX_FALLBACK ? GT_SRC_GDRTRACE : GT_SRC_DEFAULT);
    put_setting(set, "GDRTRACE_IB_RELAXED_ORDERING", "1", GT_SRC_DEFAULT);
    put_setting(set, "GDRTRACE_TRANSPORT", "auto", GT_SRC_DEFAULT);
    put_setting(set, "GDRTRACE_EVENTS", "control", GT_SRC_DEFAULT);
    if (o->setting) {
        char key[48];
        const char *eq = strchr(o->setting, '=');
        if (!eq || (size_t)(eq - o->setting) >= sizeof(key))
            return;
        snprintf(key, sizeof(key), "%.*s", (int)(eq - o->setting), o->setting);
        /* an NCCL_* key is one of NCCL's own settings, set in the environment */
        put_setting(set, key, eq + 1, strncmp(key, "NCCL_", 5) ? GT_SRC_GDRTRACE : GT_SRC_NCCL);
    }
    const char *eq = o->invalid ? strchr(o->invalid, '=') : NULL;
    for (int i = 0; eq && i < FX_SETTINGS; i++)
        if (set[i].in_use && strlen(set[i].key) == (size_t)(eq - o->invalid) &&
            !strncmp(set[i].key, o->invalid, (size_t)(eq - o->invalid))) {
            set[i].source = GT_SRC_INVALID;
            snprintf(set[i].origin, sizeof(set[i].origin), "%s", o->invalid);
        }
}

unsigned char *fx_build(const struct fx_opts *oin, size_t *len)
{
    struct fx_opts o = *oin;
    if (!o.host)
        o.host = "node-a";
    if (!o.job)
        o.job = "job42";
    if (!o.pid)
        o.pid = 4242;
    if (!o.world)
        o.world = 2;
    if (!o.comm_id)
        o.comm_id = 0x1234abcd5678ef00ull;
    if (!o.state)
        o.state = GTR_STATE_CLOSED;
    if (!o.kernel)
        o.kernel = "6.1.0-test";
    if (!o.ring_cap)
        o.ring_cap = 1024;
    if (!o.events)
        o.events = 300;
    if (!o.nccl_version)
        o.nccl_version = 22803;
    if (o.ncomm <= 0)
        o.ncomm = NCOMM_DEFAULT;
    if (!o.lat_pct)
        o.lat_pct = 100;
    if (!o.reg)
        o.reg = o.kind == FX_PEERMEM ? "peermem" : "dmabuf";

    size_t ring_size = sizeof(struct gtr_ring_header) + o.ring_cap * sizeof(struct gtr_event);
    size_t ringoff = off_ring(o.ncomm);
    size_t setoff = (ringoff + ring_size + 63) & ~(size_t)63;
    size_t set_size = o.no_settings ? 0 : FX_SETTINGS * sizeof(struct gtr_setting);
    size_t calleeoff = ALIGN64(setoff + set_size);
    size_t callee_size = o.no_settings ? 0 : GTR_DEFAULT_CALLEES * sizeof(struct gtr_callee);
    size_t cstatoff = ALIGN64(calleeoff + callee_size);
    size_t colloff = ALIGN64(cstatoff + sizeof(struct gtr_coll_status));
    size_t ncoll = o.coll ? 2 : 0; /* one entry used, one free */
    size_t total =
        o.coll ? colloff + ncoll * sizeof(struct gtr_coll_comm) : calleeoff + callee_size;
    unsigned char *b = calloc(1, total);
    if (!b)
        return NULL;
    struct gtr_header h = {0};
    memcpy(h.magic, GTR_MAGIC, GTR_MAGIC_LEN);
    h.version_major = GTR_VERSION_MAJOR;
    /* the layout written here is 1.4's (no host section: 1.5 adds it), with
     * the collective sections of 1.6 when asked for */
    h.version_minor = o.coll ? 6 : 4;
    h.endian = GTR_ENDIAN_MARK;
    h.word_size = 8;
    h.header_size = GTR_HEADER_SIZE;
    h.file_size = total;
    h.state = (uint32_t)o.state;
    h.section_count = 4;
    sec(&h, 0, GTR_SEC_IDENTITY, sizeof(struct gtr_identity), fx_off_identity(), 1,
        sizeof(struct gtr_identity));
    sec(&h, 1, GTR_SEC_DEVICES, sizeof(struct gtr_device), fx_off_devices(), NDEV,
        NDEV * sizeof(struct gtr_device));
    sec(&h, 2, GTR_SEC_COMMS, sizeof(struct gtr_comm), fx_off_comms(), (uint64_t)o.ncomm,
        (uint64_t)o.ncomm * sizeof(struct gtr_comm));
    sec(&h, 3, GTR_SEC_RING, sizeof(struct gtr_event), ringoff, o.ring_cap, ring_size);
    if (!o.no_settings) {
        h.section_count = 6;
        sec(&h, 4, GTR_SEC_SETTINGS, sizeof(struct gtr_setting), setoff, FX_SETTINGS, set_size);
        sec(&h, 5, GTR_SEC_CALLEES, sizeof(struct gtr_callee), calleeoff, GTR_DEFAULT_CALLEES,
            callee_size);
    } else {
        h.version_minor = 1;
    }
    if (o.coll) {
        sec(&h, (int)h.section_count++, GTR_SEC_COLL_STATUS, sizeof(struct gtr_coll_status),
            cstatoff, 1, sizeof(struct gtr_coll_status));
        sec(&h, (int)h.section_count++, GTR_SEC_COLL_COMMS, sizeof(struct gtr_coll_comm), colloff,
            ncoll, ncoll * sizeof(struct gtr_coll_comm));
        fill_coll(b + cstatoff, b + colloff, &o);
    }
    if (o.reg_code || o.emulated_code)
        h.version_minor = 8;
    if (o.minor)
        h.version_minor = (uint16_t)o.minor;
    memcpy(b, &h, sizeof(h));

    struct gtr_identity id = {0};
    snprintf(id.host, sizeof(id.host), "%s", o.host);
    snprintf(id.job, sizeof(id.job), "%s", o.job);
    snprintf(id.launcher, sizeof(id.launcher), "slurm");
    id.rank = o.rank;
    id.local_rank = o.rank;
    id.world_size = o.world;
    id.pid = o.pid;
    /* the newest event is at most a few ms after the start */
    id.start_wall_ns = o.end_wall_ns ? o.end_wall_ns - 2000000000ll : 1764669600000000000ll;
    id.start_mono_ns = o.start_mono_ns ? o.start_mono_ns : 1000;
    id.end_wall_ns = o.state == GTR_STATE_CLOSED ? id.start_wall_ns + 2000000000ll : 0;
    id.clock = GTR_CLOCK_MONOTONIC;
    id.clock_mult = 1;
    id.clock_hz = 1000000000;
    snprintf(id.plugin_version, sizeof(id.plugin_version), "0.1.0");
    id.nccl_version = o.nccl_version;
    id.abi_version = 12;
    int host_only = o.kind == FX_HOST;
    snprintf(id.transport, sizeof(id.transport), "%s", host_only ? "sock" : "ib");
    if (o.fate == FX_FATE_CRASHED || o.fate == FX_FATE_RETURNED)
        snprintf(id.transport, sizeof(id.transport), "inner");
    snprintf(id.transport_why, sizeof(id.transport_why), "%s",
             host_only ? "auto: no active RDMA port" : "auto: active RDMA port on mlx5_0");
    if (o.fate == FX_FATE_REFUSED)
        snprintf(id.transport_why, sizeof(id.transport_why), "%s", FX_REFUSED_WHY);
    snprintf(id.policy_reg, sizeof(id.policy_reg), "%s", o.reg);
    id.policy_allow_peermem = o.kind == FX_FALLBACK;
    snprintf(id.policy_text, sizeof(id.policy_text), "GDRTRACE_REG=%s%s", o.reg,
             o.kind == FX_FALLBACK ? " GDRTRACE_ALLOW_PEERMEM=1" : "");
    snprintf(id.node.kernel_release, sizeof(id.node.kernel_release), "%s", o.kernel);
    snprintf(id.node.nvidia_version, sizeof(id.node.nvidia_version), "%s",
             host_only ? "" : "570.86.15");
    id.node.nvidia_flavour = host_only ? GTR_NV_ABSENT : GTR_NV_OPEN;
    id.node.peermem_loaded =
        !host_only; /* a node where both GPU paths exist: A/B runs differ only in policy */
    id.node.cuda_driver_version = host_only ? -1 : 12080;
    snprintf(id.node.rdma_devices, sizeof(id.node.rdma_devices), "%s",
             host_only ? "" : "mlx5_0@0000:17:00.0,mlx5_1@0000:3d:00.0");
    snprintf(id.node.gpus, sizeof(id.node.gpus), "%s",
             host_only ? "" : "0000:18:00.0,0000:3e:00.0");
    snprintf(id.node.cpu_model, sizeof(id.node.cpu_model), "Test CPU");
    if (h.version_minor >= 4) {
        if (o.pidns == FX_PIDNS_SELF)
            gt_proc_ns("pid", &id.pidns_dev, &id.pidns_ino);
        else if (o.pidns == FX_PIDNS_GIVEN) {
            id.pidns_dev = o.pidns_dev;
            id.pidns_ino = o.pidns_ino;
        }
        if (o.pidns != FX_PIDNS_NONE)
            gt_proc_ns("time", &id.timens_dev, &id.timens_ino);
        int64_t t = o.start_ticks < 0 ? gt_proc_start_ticks(0) : o.start_ticks;
        id.proc_start_ticks = t > 0 ? (uint64_t)t : 0;
    }
    if (o.reg_code) {
        id.reg_mode = (uint8_t)(o.reg_code - 1);
        id.facts |= GTR_ID_HAS_REG_MODE;
    }
    if (o.emulated_code) {
        id.emulated = (uint8_t)(o.emulated_code - 1);
        id.facts |= GTR_ID_HAS_EMULATED;
    }
    memcpy(b + fx_off_identity(), &id, sizeof(id));

    for (int d = 0; d < NDEV; d++) {
        struct gtr_device dv = {0};
        dv.in_use = 1;
        dv.dev = d;
        if (host_only) {
            snprintf(dv.name, sizeof(dv.name), "eth%d", d);
            snprintf(dv.transport, sizeof(dv.transport), "sock");
            dv.ptr_support = GT_PTR_HOST;
            dv.probe_dmabuf = GTR_PROBE_ABSENT;
            dv.probe_peermem = GTR_PROBE_ABSENT;
            dv.probe_cuda_dmabuf = GTR_PROBE_ABSENT;
            snprintf(dv.why, sizeof(dv.why), "sock transport: host memory only");
        } else {
            snprintf(dv.name, sizeof(dv.name), "mlx5_%d", d);
            snprintf(dv.transport, sizeof(dv.transport), "ib");
            dv.ptr_support = GT_PTR_HOST | GT_PTR_CUDA | GT_PTR_DMABUF;
            dv.probe_dmabuf = o.kind == FX_FALLBACK ? GTR_PROBE_UNSUPPORTED : GTR_PROBE_SUPPORTED;
            dv.probe_dmabuf_errno = o.kind == FX_FALLBACK ? EOPNOTSUPP : 0;
            dv.probe_peermem = id.node.peermem_loaded ? GTR_PROBE_SUPPORTED : GTR_PROBE_ABSENT;
            dv.probe_cuda_dmabuf = GTR_PROBE_SUPPORTED;
            snprintf(dv.why, sizeof(dv.why), "%s",
                     o.kind == FX_FALLBACK ? "dmabuf probe failed: EOPNOTSUPP; peermem allowed"
                                           : "dmabuf probe ok");
            dv.speed_mbps = 200000;
        }
        snprintf(dv.pci_path, sizeof(dv.pci_path), "/sys/devices/pci0000:00/0000:%02x:00.0",
                 0x17 + d);
        memcpy(b + fx_off_devices() + d * sizeof(dv), &dv, sizeof(dv));
    }

    struct gtr_comm *c = calloc(1, sizeof(*c));
    if (!c) {
        free(b);
        return NULL;
    }
    fill_comm(c, &o);
    if (o.fate == FX_FATE_REFUSED)
        memset(c, 0, sizeof(*c)); /* refused: no communicator was ever initialised */
    memcpy(b + fx_off_comms(), c, sizeof(*c));
    struct fx_conn_run run[FX_CONN_MAX];
    int nrun = o.conn ? fx_conn_parse(o.conn, o.ncomm, run) : 0;
    uint64_t nconnev = 0; /* the runs' events */
    for (int s = 0; nrun > 0 && s < o.ncomm; s++) {
        uint64_t l = 0, k = 0, in = 0;
        for (int i = 0; i < nrun; i++)
            if (run[i].slot == s)
                l += (uint64_t)run[i].listens, k += (uint64_t)run[i].connects, in++;
        if (!in && s) /* slot 0 is always a communicator: its counts are its runs' */
            continue;
        fill_comm(c, &o);
        c->comm_id = o.comm_id + (uint64_t)s;
        c->listen_count = c->accept_count = l;
        c->connect_count = k;
        memcpy(b + fx_off_comms() + (size_t)s * sizeof(*c), c, sizeof(*c));
        nconnev += 2 * l + k;
    }
    if (o.fate && !o.no_settings) {
        struct gtr_callee ce = {.in_use = 1, .version = 8};
        snprintf(ce.kind, sizeof(ce.kind), "inner plugin");
        snprintf(ce.path, sizeof(ce.path), "%s", FX_INNER_PATH);
        memcpy(b + calleeoff, &ce, sizeof(ce));
    }
    free(c);

    struct gtr_ring_header rh = {0};
    rh.capacity = o.ring_cap;
    rh.event_size = sizeof(struct gtr_event);
    rh.mode = GTR_RING_OVERWRITE;
    rh.head = o.events;
    memcpy(b + ringoff, &rh, sizeof(rh));
    if (!o.no_settings)
        fill_settings((struct gtr_setting *)(b + setoff), &o);
    unsigned char *slots = b + ringoff + sizeof(rh);
    uint64_t first = o.events > o.ring_cap ? o.events - o.ring_cap : 0;
    for (uint64_t pos = first; pos < o.events; pos++) {
        struct gtr_event e = {0};
        int torn = o.events - pos <= (uint64_t)o.torn;
        e.seq = torn ? 2 * pos + 1 : 2 * pos + 2;
        e.ts = 1000 + pos * 100;
        e.comm_slot = 0;
        e.dev = 0;
        e.tid = 7;
        switch (pos % 10) {
        case 0:
            e.type = GTR_EV_REG;
            e.a1 = 4 << 20;
            e.a2 = 20000;
            break;
        case 1:
            e.type = GTR_EV_DEREG;
            break;
        case 2:
            e.type = o.kind == FX_FALLBACK ? GTR_EV_FALLBACK : GTR_EV_CONNECT;
            e.err = o.kind == FX_FALLBACK ? EINVAL : 0;
            e.aux = o.kind == FX_FALLBACK ? GT_REASON_DMABUF_REG_FAILED : 0;
            break;
        default:
            e.type = GTR_EV_SEND;
            e.a0 = 65536;
            e.a2 = 8000;
            break;
        }
        if (nrun > 0 && e.type == GTR_EV_CONNECT)
            e.type = GTR_EV_SEND; /* connections are the runs' alone */
        if (nrun > 0 && pos >= 1 && pos <= nconnev) {
            /* run i's events: its listens, its connects, then an accept a listen */
            uint64_t at = pos - 1;
            int i = 0;
            while (at >= (uint64_t)(2 * run[i].listens + run[i].connects))
                at -= (uint64_t)(2 * run[i].listens + run[i].connects), i++;
            e.type = at < (uint64_t)run[i].listens                       ? GTR_EV_LISTEN
                     : at < (uint64_t)(run[i].listens + run[i].connects) ? GTR_EV_CONNECT
                                                                         : GTR_EV_ACCEPT;
            e.comm_slot = (uint16_t)run[i].slot;
        }
        if (pos == 0) {
            e.type = GTR_EV_RECORDER_OPEN;
            e.comm_slot = GTR_NO_COMM;
            e.a0 = o.ring_cap;
        }
        uint64_t back = o.events - pos; /* 1 = the newest */
        if (o.fate == FX_FATE_REFUSED && back == 1) {
            e.type = GTR_EV_REFUSED;
            e.comm_slot = GTR_NO_COMM;
            e.dev = -1;
            e.result = GT_SYSTEM_ERROR;
            e.a0 = 1; /* ib */
            e.aux = GT_REASON_NO_RDMA_DEVICE;
        } else if ((o.fate == FX_FATE_CRASHED || o.fate == FX_FATE_RETURNED) && back <= 4) {
            /* init called and returned, then connect called and returned;
             * when crashed, another thread's event comes where connect's
             * RETURNED would have: the process died inside connect */
            int calling = back == 4 || back == 2;
            if (back == 1 && o.fate == FX_FATE_CRASHED) {
                e.tid = 8;
            } else {
                e.type = calling ? GTR_EV_CALLING : GTR_EV_RETURNED;
                e.comm_slot = GTR_NO_COMM;
                e.dev = back <= 2 ? 0 : -1;
                e.a0 = back >= 3 ? GT_CALL_INNER_INIT : GT_CALL_INNER_CONNECT;
                e.a1 = back >= 3 ? 1 : 2;
                e.a2 = 0; /* callee 0 */
                e.aux = calling ? 8 : 0;
            }
        }
        memcpy(slots + (pos & (o.ring_cap - 1)) * sizeof(e), &e, sizeof(e));
    }
    *len = total;
    return b;
}

int fx_conn_parse(const char *s, int ncomm, struct fx_conn_run *r)
{
    int n = 0;
    if (!strpbrk(s, ":,")) { /* a slot digit a run */
        for (; *s; s++) {
            if (*s < '0' || *s > '9' || *s - '0' >= ncomm || n == FX_CONN_MAX)
                return -1;
            r[n++] = (struct fx_conn_run){*s - '0', 1, 1};
        }
        return n;
    }
    while (*s) {
        int slot, l, k, used = 0;
        if (n == FX_CONN_MAX || sscanf(s, "%d:%d/%d%n", &slot, &l, &k, &used) != 3 || slot < 0 ||
            slot >= ncomm || l < 0 || k < 0 || l + k == 0 || l > 1000 || k > 1000)
            return -1;
        r[n++] = (struct fx_conn_run){slot, l, k};
        s += used;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return n;
}

int fx_write(const struct fx_opts *o, const char *path)
{
    size_t n;
    unsigned char *b = fx_build(o, &n);
    if (!b) {
        errno = ENOMEM;
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        free(b);
        return -1;
    }
    ssize_t w = write(fd, b, n);
    int e = errno;
    close(fd);
    free(b);
    if (w != (ssize_t)n) {
        errno = w < 0 ? e : EIO;
        return -1;
    }
    return 0;
}
