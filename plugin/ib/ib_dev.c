/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ib_dev.c — RDMA device discovery for the ib transport: the HCA filter,
 * port selection, RoCE GID choice, honest properties and the per-device
 * registration probes.
 *
 * Invariant: the device list is built once under `devs_lock` by the first
 * gt_ib_devices_open() and torn down by the matching last close; readers in
 * between use it without locks (it does not change).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/env.h"
#include "plugin/ib/ib.h"
#include "common/log.h"

struct gt_ib_dev gt_ib_devs[GT_IB_MAX_DEVS];
int gt_ib_ndevs;
struct gt_reg_policy gt_ib_policy;
const char *gt_ib_sysfs = "/sys";

static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static int devs_refs; /* guarded by devs_lock */

int gt_ib_hca_selected(const char *filter, const char *dev, int port)
{
    if (!filter || !*filter)
        return 1;
    int exclude = 0, exact = 0;
    if (*filter == '^') {
        exclude = 1;
        filter++;
    }
    if (*filter == '=') {
        exact = 1;
        filter++;
    }
    int listed = 0;
    const char *p = filter;
    while (*p && !listed) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char ent[128];
        if (len >= sizeof(ent))
            len = sizeof(ent) - 1;
        memcpy(ent, p, len);
        ent[len] = 0;
        long eport = -1;
        char *colon = strchr(ent, ':');
        if (colon) {
            *colon = 0;
            if (gt_parse_long(colon + 1, 1, 255, &eport))
                eport = -2; /* matches no port; gt_ib_hca_valid refuses such a filter */
        }
        size_t nlen = strlen(ent);
        int name_ok = nlen > 0 && (exact ? strcmp(ent, dev) == 0 : strncmp(ent, dev, nlen) == 0);
        if (name_ok && (eport == -1 || eport == port))
            listed = 1;
        p = end ? end + 1 : p + len;
    }
    return exclude ? !listed : listed;
}

int gt_ib_hca_valid(const char *filter)
{
    if (!filter)
        return 1;
    filter += *filter == '^';
    filter += *filter == '=';
    for (const char *p = filter; *p;) {
        size_t len = strcspn(p, ",");
        const char *colon = memchr(p, ':', len);
        if (colon) {
            char port[16];
            size_t pl = len - (size_t)(colon + 1 - p);
            long v;
            if (colon == p || pl == 0 || pl >= sizeof(port))
                return 0;
            memcpy(port, colon + 1, pl);
            port[pl] = '\0';
            if (gt_parse_long(port, 1, 255, &v))
                return 0;
        }
        p += len + (p[len] == ',');
    }
    return 1;
}

int gt_ib_speed_mbps(int active_speed, int active_width)
{
    int lane; /* Mb/s per lane, as NCCL counts them */
    switch (active_speed) {
    case 1: lane = 2500; break;   /* SDR */
    case 2: lane = 5000; break;   /* DDR */
    case 4: lane = 10000; break;  /* QDR */
    case 8: lane = 10000; break;  /* FDR10 */
    case 16: lane = 14000; break; /* FDR */
    case 32: lane = 25000; break; /* EDR */
    case 64: lane = 50000; break; /* HDR */
    case 128: lane = 100000; break; /* NDR */
    case 256: lane = 200000; break; /* XDR */
    default: return 0;
    }
    int width;
    switch (active_width) {
    case 1: width = 1; break;
    case 2: width = 4; break;
    case 4: width = 8; break;
    case 8: width = 12; break;
    case 16: width = 2; break;
    default: return 0;
    }
    return lane * width;
}

static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *r = fgets(buf, (int)len, f);
    fclose(f);
    if (!r)
        return -1;
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

int gt_ib_pick_gid(struct ibv_context *ctx, const char *dev, int port, int gid_tbl_len)
{
    long forced = gt_env_long("GDRTRACE_IB_GID_INDEX", -1, -1, 65535);
    if (forced >= 0)
        return (int)forced;
    int best = -1, best_rank = 0;
    for (int i = 0; i < gid_tbl_len && i < 256; i++) {
        union ibv_gid g;
        if (gt_ibv.query_gid(ctx, (uint8_t)port, i, &g) != 0)
            continue;
        static const uint8_t zero[16];
        if (memcmp(g.raw, zero, 16) == 0)
            continue;
        char path[512], type[64] = "";
        snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%d/gid_attrs/types/%d",
                 gt_ib_sysfs, dev, port, i);
        read_line(path, type, sizeof(type));
        int v2 = strstr(type, "v2") != NULL;
        /* ::ffff:a.b.c.d — what NCCL prefers by default (AF_INET). */
        static const uint8_t v4pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        int v4 = memcmp(g.raw, v4pfx, 12) == 0;
        int rank = 1 + (v2 ? 2 : 0) + (v4 ? 1 : 0);
        if (rank > best_rank) {
            best_rank = rank;
            best = i;
        }
    }
    return best;
}

static void fill_pci_path(struct gt_ib_dev *d)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/class/infiniband/%s/device", gt_ib_sysfs, d->name);
    char *rp = realpath(p, NULL);
    if (!rp) {
        /* Soft devices (rxe, siw) have no parent device: their own node. */
        snprintf(p, sizeof(p), "%s/class/infiniband/%s", gt_ib_sysfs, d->name);
        rp = realpath(p, NULL);
    }
    snprintf(d->pci_path, sizeof(d->pci_path), "%s", rp ? rp : p);
    free(rp);
}

static void close_dev(struct gt_ib_dev *d)
{
    gt_reg_dev_fini(&d->reg);
    if (d->pd)
        gt_ibv.dealloc_pd(d->pd);
    if (d->ctx)
        gt_ibv.close_device(d->ctx);
    memset(d, 0, sizeof(*d));
}

static int open_all(void)
{
    if (gt_ibv_load() != 0)
        return 0;
    gt_reg_policy_from_env(&gt_ib_policy);
    const char *filter = gt_env_str("GDRTRACE_IB_HCA");
    if (!gt_ib_hca_valid(filter)) {
        GT_WARN("GDRTRACE_IB_HCA='%s' is not [^][=]name[:port],... with ports 1..255; using "
                "the default (every active port)",
                filter);
        filter = NULL;
    }
    int n = 0;
    struct ibv_device **list = gt_ibv.get_device_list(&n);
    if (!list) {
        GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET, "ibv_get_device_list: %s", strerror(errno));
        return 0;
    }
    for (int i = 0; i < n && gt_ib_ndevs < GT_IB_MAX_DEVS; i++) {
        const char *name = gt_ibv.get_device_name(list[i]);
        struct ibv_context *ctx = gt_ibv.open_device(list[i]);
        if (!ctx) {
            GT_WARN("ibv_open_device(%s) failed: %s", name, strerror(errno));
            continue;
        }
        struct ibv_device_attr da;
        memset(&da, 0, sizeof(da));
        int rc = gt_ibv.query_device(ctx, &da);
        if (rc) {
            GT_WARN("ibv_query_device(%s) failed: %s", name, strerror(rc));
            gt_ibv.close_device(ctx);
            continue;
        }
        int used = 0;
        for (int port = 1; port <= da.phys_port_cnt && gt_ib_ndevs < GT_IB_MAX_DEVS; port++) {
            struct ibv_port_attr pa;
            memset(&pa, 0, sizeof(pa));
            rc = gt_ibv.query_port(ctx, (uint8_t)port, &pa);
            if (rc) {
                GT_WARN("ibv_query_port(%s:%d) failed: %s", name, port, strerror(rc));
                continue;
            }
            if (pa.state != IBV_PORT_ACTIVE) {
                GT_INFO(GT_LOGSUB_INIT, "%s:%d skipped: port not active (state %d)", name, port,
                        pa.state);
                continue;
            }
            if (pa.link_layer != IBV_LINK_LAYER_INFINIBAND &&
                pa.link_layer != IBV_LINK_LAYER_ETHERNET)
                continue;
            if (!gt_ib_hca_selected(filter, name, port)) {
                GT_INFO(GT_LOGSUB_INIT, "%s:%d skipped by GDRTRACE_IB_HCA=%s", name, port, filter);
                continue;
            }
            struct gt_ib_dev *d = &gt_ib_devs[gt_ib_ndevs];
            memset(d, 0, sizeof(*d));
            snprintf(d->name, sizeof(d->name), "%s", name);
            d->index = gt_ib_ndevs;
            d->port = (uint8_t)port;
            d->link_layer = pa.link_layer;
            d->lid = pa.lid;
            d->mtu = pa.active_mtu;
            d->speed_mbps = gt_ib_speed_mbps(pa.active_speed, pa.active_width);
            d->max_qp = da.max_qp;
            d->max_qp_wr = da.max_qp_wr;
            d->guid = be64toh(gt_ibv.get_device_guid(list[i]));
            fill_pci_path(d);
            d->gid_index = pa.link_layer == IBV_LINK_LAYER_ETHERNET
                               ? gt_ib_pick_gid(ctx, name, port, pa.gid_tbl_len)
                               : (int)gt_env_long("GDRTRACE_IB_GID_INDEX", 0, 0, 65535);
            if (d->gid_index < 0 ||
                gt_ibv.query_gid(ctx, (uint8_t)port, d->gid_index, &d->gid) != 0) {
                GT_WARN("%s:%d skipped: no usable GID (index %d)", name, port, d->gid_index);
                continue;
            }
            /* One context per port keeps the per-port state simple; the
             * first port reuses the context opened above. */
            if (used) {
                d->ctx = gt_ibv.open_device(list[i]);
                if (!d->ctx) {
                    GT_WARN("ibv_open_device(%s) failed: %s", name, strerror(errno));
                    continue;
                }
            } else
                d->ctx = ctx;
            d->pd = gt_ibv.alloc_pd(d->ctx);
            if (!d->pd) {
                GT_WARN("ibv_alloc_pd(%s) failed: %s", name, strerror(errno));
                if (used)
                    gt_ibv.close_device(d->ctx);
                d->ctx = NULL;
                continue;
            }
            used = 1;
            char rname[80];
            snprintf(rname, sizeof(rname), "%s:%d", name, port);
            gt_reg_dev_init(&d->reg, rname, d->pd);
            gt_reg_probe(&d->reg, &gt_ib_policy);
            GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET,
                    "ib: [%d] %s:%d/%s gid %d speed %d Mb/s ptrSupport %#x (%s)%s",
                    d->index, name, port,
                    pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB", d->gid_index,
                    d->speed_mbps, d->reg.probe.advertised, d->reg.probe.why,
                    (gt_ib_policy.relaxed_ordering && gt_ibv.has_reg_mr_iova2) ? " [RO]" : "");
            gt_ib_ndevs++;
        }
        if (!used)
            gt_ibv.close_device(ctx);
    }
    gt_ibv.free_device_list(list);
    return gt_ib_ndevs;
}

int gt_ib_devices_open(void)
{
    pthread_mutex_lock(&devs_lock);
    if (devs_refs++ == 0)
        open_all();
    int n = gt_ib_ndevs;
    pthread_mutex_unlock(&devs_lock);
    return n;
}

void gt_ib_devices_close(void)
{
    pthread_mutex_lock(&devs_lock);
    if (devs_refs > 0 && --devs_refs == 0) {
        /* Ports of one device may share a context: close it once. */
        for (int i = gt_ib_ndevs - 1; i >= 0; i--) {
            struct gt_ib_dev *d = &gt_ib_devs[i];
            int shared = 0;
            for (int j = 0; j < i; j++)
                shared |= gt_ib_devs[j].ctx == d->ctx;
            if (shared)
                d->ctx = NULL;
            close_dev(d);
        }
        gt_ib_ndevs = 0;
    }
    pthread_mutex_unlock(&devs_lock);
}
