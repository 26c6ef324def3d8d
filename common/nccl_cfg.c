/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccl_cfg.c — NCCL's settings that decide GPU Direct and the transport
 * (contract in nccl_cfg.h).  Facts from NCCL's sources, 2.18.1 … 2.30.7
 * (src/graph/paths.cc ncclTopoCheckGdr / ncclGetLevel, src/init.cc,
 * src/net.cc and src/plugin/net.cc, src/transport/{shm,nvls,net_ib}.cc, src/misc/param.cc).
 *
 * Invariant: every recorded value is what NCCL makes of the text, so two
 * runs that spell a setting differently ("0" and "LOC") compare equal, and
 * a value NCCL ignores is recorded as its default being in force.
 */
#include "common/nccl_cfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/nccl_env.h"

#define INT32_LO (-2147483647L - 1)
#define INT32_HI 2147483647L

static const struct gt_nccl_cfg table[] = {
    /* ---- GPU Direct ---- */
    {"NCCL_NET_GDR_LEVEL", GT_NCFG_LEVEL, GT_NCFG_GDR, 0,
     "PXB; P2C from 2.29 while NCCL_NET_GDR_C2C=1",
     "the farthest GPU-NIC path (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS) at which NCCL "
     "uses GPU Direct RDMA; beyond it NCCL registers host memory only"},
    {"NCCL_NET_GDR_READ", GT_NCFG_INT, GT_NCFG_GDR, -2,
     "-2: on for GPUs of compute capability 8.0 and newer, else only with NVLink or one GPU "
     "(2.18: only with NVLink or one GPU)",
     "0: sends never read GPU memory (NCCL keeps send buffers in host memory); receives are not "
     "affected"},
    {"NCCL_NET_GDR_C2C", GT_NCFG_INT, GT_NCFG_GDR, 1, "1 from 2.27 (0 in 2.26; not read before)",
     "on C2C platforms, GPU Direct to NICs attached to the CPU (the default level becomes P2C "
     "from 2.29)"},
    {"NCCL_DMABUF_ENABLE", GT_NCFG_INT, GT_NCFG_GDR, 1, "1",
     "0: NCCL never calls regMrDmaBuf; GPU buffers are registered with regMr(NCCL_PTR_CUDA), the "
     "peermem-style call"},
    {"NCCL_TOPO_FILE", GT_NCFG_TEXT, GT_NCFG_GDR, 0,
     "none: the detected topology (or /var/run/nvidia-topologyd/virtualTopology.xml)",
     "an XML topology that replaces what NCCL detects: it sets the GPU-NIC distance"},
    {"NCCL_NET_FORCE_FLUSH", GT_NCFG_INT, GT_NCFG_GDR, 0, "0 (1 in 2.18)",
     "1: flush every GPU Direct receive (iflush), even where the GPU needs none"},
    /* ---- which transport ---- */
    {"NCCL_NET", GT_NCFG_TEXT, GT_NCFG_TRANSPORT, 0,
     "the first network that initialises: the plugin's, else IB, else Socket",
     "the network by name (IB, Socket, a plugin's name); another name keeps gdrtrace unused"},
    {"NCCL_NET_PLUGIN", GT_NCFG_TEXT, GT_NCFG_TRANSPORT, 0, "libnccl-net.so",
     "which net plugin library NCCL loads (\"none\": none)"},
    {"NCCL_IB_DISABLE", GT_NCFG_INT, GT_NCFG_TRANSPORT, 0, "0",
     "non-zero: NCCL's internal IB transport is off (its fallback is then Socket)"},
    {"NCCL_P2P_DISABLE", GT_NCFG_INT, GT_NCFG_TRANSPORT, 0, "0",
     "1: no CUDA P2P between GPUs of a node"},
    {"NCCL_P2P_LEVEL", GT_NCFG_LEVEL, GT_NCFG_TRANSPORT, 0, "NCCL's choice for the GPUs",
     "the farthest GPU-GPU path at which NCCL uses CUDA P2P"},
    {"NCCL_SHM_DISABLE", GT_NCFG_INT, GT_NCFG_TRANSPORT, 0, "0",
     "1: no shared-memory transport between processes of a node"},
    {"NCCL_NET_DISABLE_INTRA", GT_NCFG_INT, GT_NCFG_TRANSPORT, 0, "0",
     "1: ranks of one node never talk through the network"},
    {"NCCL_CROSS_NIC", GT_NCFG_INT, GT_NCFG_TRANSPORT, 2, "2",
     "whether rings and trees may use different NICs on each node (0 no, 1 yes, 2 decide)"},
    {"NCCL_PXN_DISABLE", GT_NCFG_INT, GT_NCFG_TRANSPORT, 0, "0",
     "1: no sends through another GPU's NIC (PXN); the GPU Direct decision then uses this GPU's "
     "own distance"},
    {"NCCL_NVLS_ENABLE", GT_NCFG_INT, GT_NCFG_TRANSPORT, 2, "2",
     "NVLink SHARP collectives (0 off, 1 on, 2 where supported)"},
    {"NCCL_COLLNET_ENABLE", GT_NCFG_INT, GT_NCFG_TRANSPORT, 0, "0",
     "1: collectives offloaded to the network (CollNet)"},
    /* ---- read by no NCCL of 2.18 … 2.30 ---- */
    {"NCCL_IB_GDR_LEVEL", GT_NCFG_TEXT, GT_NCFG_LEGACY, 0, "not read",
     "NCCL 2.3's name; NCCL 2.4 and later ignore it (NCCL_NET_GDR_LEVEL is read)"},
};

const struct gt_nccl_cfg *gt_nccl_cfg_table(size_t *n)
{
    *n = sizeof(table) / sizeof(table[0]);
    return table;
}

const struct gt_nccl_cfg *gt_nccl_cfg_find(const char *key)
{
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(table[i].name, key) == 0)
            return &table[i];
    return NULL;
}

const char *gt_nccl_level_parse(const char *text)
{
    /* Every name some version of 2.18 … 2.30 accepts (C2C from 2.26, P2C
     * from 2.27), matched exactly as NCCL's strcmp does. */
    static const char *const names[] = {"LOC", "NVL", "NVB", "C2C", "PIX",
                                        "PXB", "P2C", "PXN", "PHB", "SYS"};
    /* NCCL's old numbering, 0 … 5 (larger numbers mean 5) */
    static const char *const old[] = {"LOC", "PIX", "PXB", "PHB", "SYS", "SYS"};
    if (!text)
        return NULL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(text, names[i]) == 0)
            return names[i];
    if (text[0] >= '0' && text[0] <= '9') {
        long v = strtol(text, NULL, 0);
        return old[v > 5 || v < 0 ? 5 : v];
    }
    return NULL;
}

/* One entry from the raw text NCCL sees (nccl_env.h's origin convention). */
static void put(struct gt_setting *s, const char *name, const char *value, const char *raw,
                const char *where, int source)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->key, sizeof(s->key), "%s", name);
    snprintf(s->value, sizeof(s->value), "%s", value);
    if (raw && where && strcmp(where, "environment") != 0)
        snprintf(s->origin, sizeof(s->origin), "%s=%s (%s)", name, raw, where);
    else if (raw)
        snprintf(s->origin, sizeof(s->origin), "%s=%s", name, raw);
    if (source == GT_SRC_NCCL && gt_nccl_env_plugin())
        source = GT_SRC_UNKNOWN;
    s->source = source;
}

static void read_one(const struct gt_nccl_cfg *c, struct gt_setting *s)
{
    const char *where = NULL;
    const char *raw = gt_nccl_raw(c->name, &where);
    if (!raw || !*raw) { /* NCCL: an empty value is unset */
        put(s, c->name, "", NULL, NULL, GT_SRC_DEFAULT);
        return;
    }
    switch (c->kind) {
    case GT_NCFG_INT:
        /* NCCL_PARAM's reading (leading number, base 0; an overflow is the
         * default), through the one implementation of it */
        gt_nccl_long(s, c->name, NULL, c->dflt, INT32_LO, INT32_HI, 0);
        if (s->source == GT_SRC_INVALID)
            s->value[0] = '\0'; /* NCCL's default, whatever the version makes it */
        break;
    case GT_NCFG_LEVEL: {
        const char *lv = gt_nccl_level_parse(raw);
        put(s, c->name, lv ? lv : "", raw, where, lv ? GT_SRC_NCCL : GT_SRC_INVALID);
        break;
    }
    default:
        put(s, c->name, raw, raw, where, GT_SRC_NCCL);
        break;
    }
}

int gt_nccl_cfg_read(struct gt_setting *out, int max)
{
    int n = 0;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]) && n < max; i++) {
        struct gt_setting s;
        read_one(&table[i], &s);
        if (table[i].role == GT_NCFG_LEGACY && s.source == GT_SRC_DEFAULT)
            continue;
        out[n++] = s;
    }
    return n;
}
