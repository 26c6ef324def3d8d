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
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include "common/callout.h"
#include "common/env.h"
#include "common/log.h"
#include "common/nccl_env.h"
#include "plugin/ib/ib.h"

struct gt_ib_dev gt_ib_devs[GT_IB_MAX_DEVS];
int gt_ib_ndevs;
struct gt_reg_policy gt_ib_policy;
struct gt_ib_params gt_ib_params;
const char *gt_ib_sysfs = "/sys";

static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static int devs_refs; /* guarded by devs_lock */

/* One entry of an NCCL_IB_HCA list, as NCCL splits it: "name[:port[:…]]",
 * the port read like atoi (absent or empty: any port; fields after the port,
 * NCCL's rail and plane, ignored).  Returns 0 for an entry NCCL skips (empty
 * name). */
static int hca_entry(const char *p, size_t len, char *name, size_t nsz, long *port)
{
    size_t nl = strcspn(p, ":,");
    if (nl > len)
        nl = len;
    if (nl == 0)
        return 0;
    if (nl >= nsz)
        nl = nsz - 1;
    memcpy(name, p, nl);
    name[nl] = '\0';
    *port = -1;
    if (nl < len && p[nl] == ':' && nl + 1 < len && p[nl + 1] != ':')
        *port = strtol(p + nl + 1, NULL, 10); /* atoi's reading: "x" is 0, no port */
    return 1;
}

int gt_ib_hca_selected(const char *filter, const char *dev, int port)
{
    if (!filter)
        return 1;
    int exclude = *filter == '^';
    filter += exclude;
    int exact = *filter == '=';
    filter += exact;
    /* NCCL: an empty list selects everything, so "^" alone excludes all. */
    int n = 0, listed = 0;
    for (const char *p = filter; *p && n < GT_IB_MAX_DEVS;) {
        size_t len = strcspn(p, ",");
        char name[128];
        long eport;
        if (hca_entry(p, len, name, sizeof(name), &eport)) {
            n++;
            int name_ok = exact ? strcmp(name, dev) == 0 : strncmp(name, dev, strlen(name)) == 0;
            if (name_ok && (eport == -1 || eport == port))
                listed = 1;
        }
        p += len + (p[len] == ',');
    }
    if (n == 0)
        listed = 1;
    return exclude ? !listed : listed;
}

int gt_ib_hca_rail_plane(const char *filter, const char *dev, int port, int *rail, int *plane)
{
    *rail = *plane = -1;
    if (!filter || *filter == '^')
        return 0; /* NCCL: an excluding list names no rails */
    int exact = *filter == '=';
    filter += exact;
    int n = 0;
    for (const char *p = filter; *p && n < GT_IB_MAX_DEVS;) {
        size_t len = strcspn(p, ",");
        char name[128];
        long eport;
        if (hca_entry(p, len, name, sizeof(name), &eport)) {
            n++;
            int name_ok = exact ? strcmp(name, dev) == 0 : strncmp(name, dev, strlen(name)) == 0;
            if (name_ok && (eport == -1 || eport == port)) {
                /* NCCL's fields after the port: rail, then plane; absent or
                 * empty: -1; read like atoi */
                const char *f = memchr(p, ':', len);
                for (int k = 0; f && k < 2; k++) {
                    f = memchr(f + 1, ':', len - (size_t)(f + 1 - p));
                    if (!f)
                        break;
                    const char *v = f + 1;
                    int val = (v < p + len && *v != ':' && *v != ',') ? atoi(v) : -1;
                    if (k == 0)
                        *rail = val;
                    else
                        *plane = val;
                }
                return 1;
            }
        }
        p += len + (p[len] == ',');
    }
    return 0;
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
            size_t pl = strcspn(colon + 1, ":,");
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
    /* NCCL's tables and its reading: the first bit set picks the entry, and
     * no known bit picks the last (so an XDR port whose active_speed reads 0
     * is still 200 Gb/s per lane). */
    static const int lane[] = {2500, 5000, 10000, 10000, 14000, 25000, 50000, 100000, 200000};
    static const int width[] = {1, 4, 8, 12, 2};
    int s = 0, w = 0;
    while (s < 8 && !(active_speed & (1 << s)))
        s++;
    while (w < 4 && !(active_width & (1 << w)))
        w++;
    return lane[s] * width[w];
}

int64_t gt_ib_pci_id(const char *path)
{
    /* NCCL's pciPathToInt64: the hex digits of the last component (a
     * trailing '/' ignored), separators skipped, up to the first other
     * character. */
    size_t n = strlen(path);
    if (n && path[n - 1] == '/')
        n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/')
        b--;
    char hex[17];
    int k = 0;
    for (size_t i = b; i < n && k < 16; i++) {
        char c = path[i];
        if (c == '.' || c == ':')
            continue;
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            break;
        hex[k++] = c;
    }
    hex[k] = '\0';
    return strtoll(hex, NULL, 16);
}

void gt_ib_pci_merge(char *p, int merge_vfs)
{
    /* NCCL: the function digit to 0 (ports of a multi-port NIC are one PCI
     * device), and with NCCL_IB_MERGE_VFS the device digits too (virtual
     * functions are their physical device). */
    size_t n = strlen(p);
    if (n < 4)
        return;
    p[n - 1] = '0';
    if (merge_vfs)
        p[n - 3] = p[n - 4] = '0';
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

/* NCCL's reading of a GID: IPv4-mapped (::ffff:a.b.c.d, or the ff0e::ffff:
 * multicast form) is AF_INET, everything else AF_INET6. */
static int gid_family(const uint8_t *g)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const uint8_t mcast[12] = {0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(g, mapped, 12) == 0 || memcmp(g, mcast, 12) == 0 ? AF_INET : AF_INET6;
}

/* Configured (not all zero, not a bare fe80::) and not link-local. */
static int gid_usable(const uint8_t *g)
{
    static const uint8_t zero[16];
    static const uint8_t ll[8] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0};
    int trailer_zero = memcmp(g + 4, zero, 12) == 0;
    if (memcmp(g, zero, 4) == 0 && trailer_zero)
        return 0;
    if (memcmp(g, ll, 4) == 0 && trailer_zero)
        return 0;
    return memcmp(g, ll, 8) != 0;
}

/* The first `bits` bits of the GID equal the range's (AF_INET: compared
 * with the last 32 bits of the GID). */
static int gid_in_range(const struct gt_ib_gid_rules *r, const uint8_t *g)
{
    if (!r->range_bits)
        return 1;
    const uint8_t *a = r->family == AF_INET ? g + 12 : g;
    int bits = r->range_bits;
    for (int i = 0; bits > 0; i++, bits -= 8) {
        uint8_t m = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));
        if ((a[i] & m) != (r->range[i] & m))
            return 0;
    }
    return 1;
}

/* 1 or 2 from gid_attrs/types, 0 when unreadable or unknown. */
static int roce_version(const char *dev, int port, int i)
{
    char path[512], type[64] = "";
    snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%d/gid_attrs/types/%d", gt_ib_sysfs,
             dev, port, i);
    if (read_line(path, type, sizeof(type)))
        return 0;
    if (!strncmp(type, "IB/RoCE v1", 10) || !strncmp(type, "RoCE v1", 7))
        return 1;
    return strncmp(type, "RoCE v2", 7) == 0 ? 2 : 0;
}

void gt_ib_gid_rules_read(struct gt_ib_gid_rules *r, int warn)
{
    memset(r, 0, sizeof(*r));
    r->forced = (int)gt_nccl_long(&r->s_index, "NCCL_IB_GID_INDEX", "GDRTRACE_IB_GID_INDEX", -1, -1,
                                  65535, warn);
    r->roce_version =
        (int)gt_nccl_long(&r->s_version, "NCCL_IB_ROCE_VERSION_NUM", NULL, 2, 1, 2, warn);
    r->flid_index =
        (int)gt_nccl_long(NULL, "NCCL_IB_ROUTABLE_FLID_GID_INDEX", NULL, 1, 0, 65535, warn);
    r->family = AF_INET;
    const char *fam = gt_nccl_str(&r->s_family, "NCCL_IB_ADDR_FAMILY", NULL);
    if (fam && strcmp(fam, "AF_INET6") == 0)
        r->family = AF_INET6;
    else if (fam && strcmp(fam, "AF_INET") != 0 && warn)
        GT_WARN("NCCL_IB_ADDR_FAMILY='%s' is not AF_INET or AF_INET6; using AF_INET, as NCCL "
                "does",
                fam);
    snprintf(r->s_family.value, sizeof(r->s_family.value), "%s",
             r->family == AF_INET ? "AF_INET" : "AF_INET6");
    const char *range = gt_nccl_str(&r->s_range, "NCCL_IB_ADDR_RANGE", NULL);
    if (range) {
        /* NCCL: "address/bits" in the chosen family; anything else, no range */
        char a[128];
        snprintf(a, sizeof(a), "%s", range);
        char *slash = strchr(a, '/');
        long bits = -1;
        if (slash) {
            *slash = '\0';
            bits = strtol(slash + 1, NULL, 10);
        }
        int maxbits = r->family == AF_INET ? 32 : 128;
        if (slash && inet_pton(r->family, a, r->range) == 1 && bits >= 0 && bits <= maxbits)
            r->range_bits = (int)bits;
        else if (warn)
            GT_WARN("NCCL_IB_ADDR_RANGE='%s' is not an %s address/bits; no range, as NCCL", range,
                    r->family == AF_INET ? "AF_INET" : "AF_INET6");
    }
}

int gt_ib_pick_gid(struct ibv_context *ctx, const char *dev, int port, int link_layer,
                   int gid_tbl_len, const struct gt_ib_gid_rules *r)
{
    union ibv_gid g, c;
    if (r->forced >= 0 &&
        (link_layer == IBV_LINK_LAYER_ETHERNET || r->s_index.source == GT_SRC_GDRTRACE))
        return r->forced; /* NCCL_IB_GID_INDEX is for RoCE; our twin for both */
    if (link_layer != IBV_LINK_LAYER_ETHERNET) {
        /* IB: the routable-FLID index when its GID carries a FLID (bytes 4-5) */
        if (r->flid_index < gid_tbl_len &&
            gt_ibv.query_gid(ctx, (uint8_t)port, r->flid_index, &g) == 0 &&
            (g.raw[4] | g.raw[5]) != 0)
            return r->flid_index;
        return 0;
    }
    if (gid_tbl_len < 1)
        return -1;
    /* RoCE: walk the table keeping the best index so far (NCCL's rules): a
     * candidate of the wanted family in range replaces one of the other
     * family; else a usable candidate of the wanted family in range replaces
     * it when it has the wanted RoCE version and the kept one has another
     * version or is not usable. */
    int best = 0;
    for (int i = 1; i < gid_tbl_len; i++) {
        if (gt_ibv.query_gid(ctx, (uint8_t)port, best, &g) != 0 ||
            gt_ibv.query_gid(ctx, (uint8_t)port, i, &c) != 0)
            continue;
        int cfam = gid_family(c.raw);
        int in_range = gid_in_range(r, c.raw);
        if (cfam != gid_family(g.raw) && cfam == r->family && in_range) {
            best = i;
            continue;
        }
        if (cfam != r->family || !gid_usable(c.raw) || !in_range)
            continue;
        int vb = roce_version(dev, port, best), vc = roce_version(dev, port, i);
        if ((vb != vc || !gid_usable(g.raw)) && vc == r->roce_version)
            best = i;
    }
    return best;
}

/* The version of the NCCL that loaded us (NCCL_VERSION_CODE, 22803 for
 * 2.28.3), from libnccl's own ncclGetVersion in the process; 0 when there
 * is none (another loader, a static NCCL). */
static int nccl_version(void)
{
    int (*get)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "ncclGetVersion");
    int v = 0;
    if (!get || get(&v) != 0 || v < 10000)
        return 0;
    return v;
}

void gt_ib_params_read(struct gt_ib_params *p, int warn)
{
    memset(p, 0, sizeof(*p));
    p->nccl_version = nccl_version();
    const char *hca = gt_nccl_str(&p->s_hca, "NCCL_IB_HCA", "GDRTRACE_IB_HCA");
    snprintf(p->hca, sizeof(p->hca), "%s", hca ? hca : "");
    if (!hca)
        snprintf(p->s_hca.value, sizeof(p->s_hca.value), "every active port");
    gt_ib_gid_rules_read(&p->gid, warn);
    /* 0 is the verbs "no timeout", which NCCL passes on as it is */
    p->timeout =
        (int)gt_nccl_long(&p->s_timeout, "NCCL_IB_TIMEOUT", "GDRTRACE_IB_TIMEOUT", 20, 0, 31, warn);
    p->retry_cnt =
        (int)gt_nccl_long(&p->s_retry, "NCCL_IB_RETRY_CNT", "GDRTRACE_IB_RETRY_CNT", 7, 0, 7, warn);
    p->pkey = (int)gt_nccl_long(&p->s_pkey, "NCCL_IB_PKEY", NULL, 0, 0, 65535, warn);
    /* NCCL accepts up to 128 QPs; we keep GT_IB_MAX_QPS: clamp, said */
    p->qps = (int)gt_nccl_long(&p->s_qps, "NCCL_IB_QPS_PER_CONNECTION", "GDRTRACE_IB_QPS", 1, 1,
                               128, warn);
    if (p->qps > GT_IB_MAX_QPS) {
        if (warn)
            GT_WARN("%s: gdrtrace's ib has at most %d QPs per connection; using %d",
                    p->s_qps.origin, GT_IB_MAX_QPS, GT_IB_MAX_QPS);
        p->qps = GT_IB_MAX_QPS;
        snprintf(p->s_qps.value, sizeof(p->s_qps.value), "%d", p->qps);
    }
    p->sl = (int)gt_nccl_long(&p->s_sl, "NCCL_IB_SL", "GDRTRACE_IB_SL", -1, -1, 15, warn);
    p->tc = (int)gt_nccl_long(&p->s_tc, "NCCL_IB_TC", "GDRTRACE_IB_TC", -1, -1, 255, warn);
    p->fifo_tc = (int)gt_nccl_long(&p->s_fifo_tc, "NCCL_IB_FIFO_TC", NULL, -1, -1, 255, warn);
    if (p->fifo_tc < 0)
        snprintf(p->s_fifo_tc.value, sizeof(p->s_fifo_tc.value), "the data's traffic class");
    p->split = (int)gt_nccl_long(&p->s_split, "NCCL_IB_SPLIT_DATA_ON_QPS", NULL, 0, 0, 1, warn);
    p->ar = (int)gt_nccl_long(&p->s_ar, "NCCL_IB_ADAPTIVE_ROUTING", NULL, -2, -2147483647L - 1,
                              2147483647L, warn);
    if (p->ar != -2) /* NCCL: any other value is the answer, non-zero on */
        p->ar = p->ar != 0;
    if (p->ar == -2)
        snprintf(p->s_ar.value, sizeof(p->s_ar.value), "on for InfiniBand ports, off for RoCE");
    p->ar_threshold =
        gt_nccl_long(&p->s_art, "NCCL_IB_AR_THRESHOLD", NULL, 8192, 0, 2147483647L, warn);
    p->merge_vfs = gt_nccl_long(&p->s_mvfs, "NCCL_IB_MERGE_VFS", NULL, 1, -2147483647L - 1,
                                2147483647L, warn) != 0;
    p->pci_order = gt_nccl_long(&p->s_order, "NCCL_IB_DEVICE_PCI_ORDER", NULL, 1, -2147483647L - 1,
                                2147483647L, warn) != 0;
    if (p->nccl_version > 0 && p->nccl_version < GT_IB_NCCL_PCI_ORDER) {
        /* NCCL before 2.29.7 lists the devices in the verbs order and has
         * no such variable: its device indices and realPorts are ours. */
        p->pci_order = 0;
        snprintf(p->s_order.value, sizeof(p->s_order.value), "0 (NCCL %d.%d.%d: verbs order)",
                 p->nccl_version / 10000, p->nccl_version / 100 % 100, p->nccl_version % 100);
    }
    p->query_speed = gt_nccl_long(&p->s_qspeed, "NCCL_IB_QUERY_PORT_SPEED", NULL, 1,
                                  -2147483647L - 1, 2147483647L, warn) != 0;
    p->ece = gt_nccl_long(&p->s_ece, "NCCL_IB_ECE_ENABLE", NULL, 1, -2147483647L - 1, 2147483647L,
                          warn) != 0;
    p->flush_disable = gt_nccl_long(&p->s_flush, "NCCL_GDR_FLUSH_DISABLE", NULL, 0,
                                    -2147483647L - 1, 2147483647L, warn) != 0;
    if (p->sl < 0)
        snprintf(p->s_sl.value, sizeof(p->s_sl.value), "the communicator's traffic class, else 0");
    if (p->tc < 0)
        snprintf(p->s_tc.value, sizeof(p->s_tc.value), "the communicator's traffic class, else 0");
    const struct gt_setting *all[] = {
        &p->s_hca,     &p->gid.s_index, &p->gid.s_version, &p->gid.s_family, &p->gid.s_range,
        &p->s_timeout, &p->s_retry,     &p->s_pkey,        &p->s_qps,        &p->s_sl,
        &p->s_tc,      &p->s_split,     &p->s_ar,          &p->s_art,        &p->s_flush,
        &p->s_mvfs,    &p->s_order,     &p->s_ece,         &p->s_qspeed,     &p->s_fifo_tc};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        gt_nccl_note(all[i]);
}

void gt_ib_sl_tc(const struct gt_ib_params *p, int config_tc, int *sl, int *tc)
{
    /* NCCL: the variable, else the communicator's traffic class, else 0 —
     * for the SL too. */
    int cfg = config_tc >= 0 ? config_tc : 0;
    *sl = p->sl >= 0 ? p->sl : (cfg > 15 ? 0 : cfg);
    *tc = p->tc >= 0 ? p->tc : cfg;
}

static void fill_pci_path(struct gt_ib_dev *d)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/class/infiniband/%s/device", gt_ib_sysfs, d->name);
    char *rp = realpath(p, NULL);
    d->full_pci_path[0] = '\0';
    if (rp) {
        /* NCCL's: the full path orders the devices, the merged one is what
         * NCCL's topology sees. */
        snprintf(d->full_pci_path, sizeof(d->full_pci_path), "%s", rp);
        snprintf(d->pci_path, sizeof(d->pci_path), "%s", rp);
        gt_ib_pci_merge(d->pci_path, gt_ib_params.merge_vfs);
        free(rp);
        return;
    }
    /* Soft devices (rxe, siw) have no parent device: their own node (NCCL
     * gives no path at all, and WARNs). */
    snprintf(p, sizeof(p), "%s/class/infiniband/%s", gt_ib_sysfs, d->name);
    rp = realpath(p, NULL);
    snprintf(d->pci_path, sizeof(d->pci_path), "%s", rp ? rp : p);
    free(rp);
}

/* NCCL's device order (NCCL_IB_DEVICE_PCI_ORDER, default on): by the PCI id
 * of the full path, devices without one last; stable, as glibc's qsort is
 * for NCCL's few devices.  Before any device's registration state exists,
 * so moving them is moving plain data. */
static void sort_devices(void)
{
    for (int i = 1; i < gt_ib_ndevs; i++) {
        struct gt_ib_dev t = gt_ib_devs[i];
        int j = i;
        for (; j > 0; j--) {
            const struct gt_ib_dev *o = &gt_ib_devs[j - 1];
            int te = t.full_pci_path[0] == '\0', oe = o->full_pci_path[0] == '\0';
            int before =
                te != oe ? oe
                         : (!te && gt_ib_pci_id(t.full_pci_path) < gt_ib_pci_id(o->full_pci_path));
            if (!before)
                break;
            gt_ib_devs[j] = gt_ib_devs[j - 1];
        }
        gt_ib_devs[j] = t;
    }
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
    gt_ib_params_read(&gt_ib_params, 1);
    const char *filter = gt_ib_params.hca;
    if (filter && !gt_ib_hca_valid(filter))
        GT_WARN("%s is not [^][=]name[:port],... with ports 1..255; an entry whose port is "
                "not a number matches no port, as in NCCL",
                gt_ib_params.s_hca.origin);
    gt_nccl_warn_unhonored("ib");
    /* As NCCL, once per process before the first verbs resource: where the
     * kernel lacks copy-on-fork for pinned pages, a forked child (a
     * DataLoader worker) would otherwise leave the NIC on stale pages.  A
     * failure is said and not fatal (NCCL ignores it too). */
    static int forked;
    if (!forked) {
        forked = 1;
        int frc = gt_ibv.fork_init();
        if (frc)
            GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET, "ibv_fork_init: %s (%d)", strerror(frc), frc);
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
            /* Room past struct ibv_port_attr: newer providers fill
             * active_speed_ex there, as NCCL reads it. */
            union {
                struct ibv_port_attr a;
                char room[sizeof(struct ibv_port_attr) + 64];
            } pu;
            memset(&pu, 0, sizeof(pu));
            struct ibv_port_attr pa;
            rc = gt_ibv.query_port(ctx, (uint8_t)port, &pu.a);
            pa = pu.a;
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
                GT_INFO(GT_LOGSUB_INIT, "%s:%d skipped by %s", name, port,
                        gt_ib_params.s_hca.origin);
                continue;
            }
            struct gt_ib_dev *d = &gt_ib_devs[gt_ib_ndevs];
            memset(d, 0, sizeof(*d));
            snprintf(d->name, sizeof(d->name), "%s", name);
            d->index = gt_ib_ndevs;
            d->port = (uint8_t)port;
            d->link_layer = pa.link_layer;
            d->lid = pa.lid;
            gt_ib_hca_rail_plane(filter, name, port, &d->rail_id, &d->plane_id);
            d->port_flags = pa.flags;
            d->mtu = pa.active_mtu;
            /* NCCL: active_speed_ex when the provider sets it (XDR and
             * beyond), else active_speed.  Read at its place after
             * port_cap_flags2, which older verbs.h lack. */
            uint32_t speed_ex = 0;
            memcpy(&speed_ex, pu.room + GT_IB_SPEED_EX_OFF, sizeof(speed_ex));
            d->speed_mbps =
                gt_ib_speed_mbps(speed_ex ? (int)speed_ex : pa.active_speed, pa.active_width);
            /* NCCL first asks ibv_query_port_speed (100 Mb/s units) where
             * libibverbs has it, unless NCCL_IB_QUERY_PORT_SPEED=0. */
            uint64_t qs = 0;
            if (gt_ib_params.query_speed && gt_ibv.has_query_port_speed &&
                gt_ibv.query_port_speed(ctx, (uint8_t)port, &qs) == 0 && qs > 0 &&
                qs <= 2147483647ull / 100)
                d->speed_mbps = (int)(qs * 100);
            d->max_qp = da.max_qp;
            d->max_qp_wr = da.max_qp_wr;
            /* NCCL's: the system image GUID (one per adapter, shared by
             * its ports and functions), which NCCL's topology uses to
             * find ports of one NIC, stored as verbs gives it (big-endian
             * bytes, unswapped: NCCL's topology prints that value). */
            d->guid = da.sys_image_guid;
            d->ar = gt_ib_params.ar == -2 ? pa.link_layer == IBV_LINK_LAYER_INFINIBAND
                                          : gt_ib_params.ar;
            fill_pci_path(d);
            d->gid_index =
                gt_ib_pick_gid(ctx, name, port, pa.link_layer, pa.gid_tbl_len, &gt_ib_params.gid);
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
            /* Async events are read on calls NCCL already makes: never
             * block there (ibv_get_async_event's documented way). */
            if (d->ctx->async_fd >= 0) {
                int fl = fcntl(d->ctx->async_fd, F_GETFL);
                if (fl >= 0)
                    fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
            }
            gt_ib_ndevs++;
        }
        if (!used)
            gt_ibv.close_device(ctx);
    }
    gt_ibv.free_device_list(list);
    if (gt_ib_params.pci_order)
        sort_devices();
    for (int i = 0; i < gt_ib_ndevs; i++) {
        struct gt_ib_dev *d = &gt_ib_devs[i];
        d->index = i;
        /* NCCL's port number: the verbs port plus how many earlier devices
         * sit on the same PCI device (ports of a multi-function NIC, its
         * virtual functions), so each (GUID, port) is unique. */
        d->real_port = 0;
        size_t cmp = strlen(d->pci_path);
        cmp = cmp > 4 ? cmp - (gt_ib_params.merge_vfs ? 4 : 1) : 0;
        for (int j = 0; j < i && d->full_pci_path[0]; j++)
            d->real_port += gt_ib_devs[j].full_pci_path[0] &&
                            strncmp(d->pci_path, gt_ib_devs[j].pci_path, cmp) == 0;
        char rname[80];
        snprintf(rname, sizeof(rname), "%s:%d", d->name, d->port);
        gt_reg_dev_init(&d->reg, rname, d->pd);
        gt_reg_probe(&d->reg, &gt_ib_policy);
        GT_INFO(GT_LOGSUB_INIT | GT_LOGSUB_NET,
                "ib: [%d] %s:%d/%s gid %d speed %d Mb/s pciPath %s port %d guid %#llx ar %d "
                "ptrSupport %#x (%s)%s",
                i, d->name, d->port, d->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB",
                d->gid_index, d->speed_mbps, d->pci_path, d->port + d->real_port,
                (unsigned long long)d->guid, d->ar, d->reg.probe.advertised, d->reg.probe.why,
                (gt_ib_policy.relaxed_ordering && gt_ibv.has_reg_mr_iova2) ? " [RO]" : "");
    }
    /* The GIDs in force, per device: "B used GID index 0, A used 3" is a
     * confounder `gdrtrace diff` names. */
    struct gt_setting gs = gt_ib_params.gid.s_index;
    gs.value[0] = '\0';
    for (int i = 0; i < gt_ib_ndevs; i++) {
        size_t l = strlen(gs.value);
        snprintf(gs.value + l, sizeof(gs.value) - l, "%s%s:%d=%d", i ? " " : "", gt_ib_devs[i].name,
                 gt_ib_devs[i].port, gt_ib_devs[i].gid_index);
    }
    gt_nccl_note(&gs);
    return gt_ib_ndevs;
}

int gt_ib_async_poll(struct gt_ib_dev *d)
{
    if (!d->ctx || __atomic_exchange_n(&d->async_busy, 1, __ATOMIC_ACQUIRE))
        return 0;
    int n = 0;
    struct ibv_async_event ev;
    while (n < 64 && gt_ibv.get_async_event(d->ctx, &ev) == 0) {
        n++;
        const char *what = gt_ibv.event_type_str(ev.event_type);
        switch (ev.event_type) {
        case IBV_EVENT_DEVICE_FATAL:
            GT_WARN("ib: %s:%d: async fatal event: %s", d->name, d->port, what);
            __atomic_store_n(&d->fatal, 1, __ATOMIC_RELEASE);
            break;
        case IBV_EVENT_CQ_ERR: {
            GT_WARN("ib: %s:%d: async fatal event on a CQ: %s", d->name, d->port, what);
            unsigned k = d->ndead_cq;
            if (k < 8) {
                d->dead_cq[k] = ev.element.cq;
                __atomic_store_n(&d->ndead_cq, k + 1, __ATOMIC_RELEASE);
            } else /* more dead CQs than we keep: take the device as gone */
                __atomic_store_n(&d->fatal, 1, __ATOMIC_RELEASE);
            break;
        }
        case IBV_EVENT_QP_FATAL:
        case IBV_EVENT_QP_REQ_ERR:
        case IBV_EVENT_QP_ACCESS_ERR: {
            uint32_t qpn = ev.element.qp ? ev.element.qp->qp_num : 0u;
            GT_WARN("ib: %s:%d: async fatal event on QP %u: %s", d->name, d->port, qpn, what);
            unsigned k = d->ndead_qpn;
            if (k < GT_IB_DEAD_MAX) {
                d->dead_qpn[k] = qpn;
                d->dead_qp_ev[k] = (int)ev.event_type;
                __atomic_store_n(&d->ndead_qpn, k + 1, __ATOMIC_RELEASE);
            } else
                __atomic_store_n(&d->fatal, 1, __ATOMIC_RELEASE);
            break;
        }
        case IBV_EVENT_COMM_EST:
            break;
        default: /* port, LID, P_Key, SM, GID changes...: NCCL only warns */
            GT_WARN("ib: %s:%d: non-fatal async event: %s (%d)", d->name, d->port, what,
                    (int)ev.event_type);
            break;
        }
        gt_ibv.ack_async_event(&ev); /* last: the event's objects stay valid until then */
    }
    __atomic_store_n(&d->async_busy, 0, __ATOMIC_RELEASE);
    return n;
}

int gt_ib_devices_open(void)
{
    pthread_mutex_lock(&devs_lock);
    if (devs_refs++ == 0) {
        /* The enumeration runs libibverbs' and its providers' code: announced
         * (common/callout.h), so a crash inside it is a recorded fact. */
        uint64_t call = gt_ibv_load() == 0
                            ? gt_callout_begin(GT_CALL_IB_DEVICES, "libibverbs", gt_ibv.lib, 0, -1)
                            : 0;
        open_all();
        gt_callout_end(call, GT_CALL_IB_DEVICES, GT_OK);
    }
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
