/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ib.h — private to plugin/ib: devices, communicators and the wire formats
 * of the RDMA verbs transport.
 *
 * Owns: the process-wide device list (refcounted by init/finalize), and the
 * layout of the connection handle and the out-of-band setup message.
 * Invariants:
 *  - gt_ib_devs[0..gt_ib_ndevs) are fixed between the first init and the last
 *    finalize; each holds an open context, a PD and a gt_reg_dev.
 *  - Every multi-byte field that crosses the wire is little-endian and every
 *    message carries GT_IB_MAGIC and GT_IB_WIRE_VERSION: bytes from a peer
 *    are untrusted and checked before use.
 */
#ifndef GDRTRACE_IB_IB_H
#define GDRTRACE_IB_IB_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "common/dl/gt_ibv.h"
#include "common/gt_net.h"
#include "common/settings.h"
#include "plugin/reg/gt_reg.h"

#define GT_IB_MAGIC 0x47544942u /* "GTIB" */
#define GT_IB_WIRE_VERSION 3    /* 3: NCCL's per-message protocol (size in the immediate) */
#define GT_IB_MAX_QPS 16
/* The first NCCL that sorts its IB devices by PCI id (NCCL_IB_DEVICE_PCI_ORDER). */
#define GT_IB_NCCL_PCI_ORDER 22907
#define GT_IB_MAX_RECVS 8
#define GT_IB_MAX_DEVS 32
#define GT_IB_DEAD_MAX 64

struct gt_ib_dev {
    char name[64];
    int index; /* in gt_ib_devs */
    uint8_t port;
    int link_layer; /* IBV_LINK_LAYER_* */
    int gid_index;
    union ibv_gid gid;
    uint16_t lid;
    uint8_t port_flags; /* ibv_port_attr.flags: IBV_QPF_GRH_REQUIRED */
    enum ibv_mtu mtu;   /* active MTU */
    int speed_mbps;
    int max_qp;
    int max_qp_wr;
    uint64_t guid;      /* the device's sys_image_guid as verbs gives it (unswapped), as NCCL's */
    int ar;             /* adaptive routing in use on this port (gt_ib_params.ar, link layer) */
    char pci_path[512]; /* as NCCL's: function (and VF) digits 0 */
    char full_pci_path[512]; /* the device's real path; "" for soft devices */
    int real_port;           /* earlier devices on the same PCI device (NCCL's) */
    int rail_id, plane_id;   /* NCCL_IB_HCA's name:port:rail:plane fields, else -1 */
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct gt_reg_dev reg;
    int props_ok;
    /* Async events (gt_ib_async_poll): what a fatal event declared dead.
     * Written by the one poller of the moment, read by every comm: the
     * entries before their count (release/acquire). */
    int async_busy;                    /* a poller is at it: others skip */
    int fatal;                         /* IBV_EVENT_DEVICE_FATAL seen (or too many dead) */
    uint32_t dead_qpn[GT_IB_DEAD_MAX]; /* QP fatal / request / access errors ... */
    int dead_qp_ev[GT_IB_DEAD_MAX];    /* ... and which */
    unsigned ndead_qpn;
    const void *dead_cq[8]; /* IBV_EVENT_CQ_ERR */
    unsigned ndead_cq;
};

extern struct gt_ib_dev gt_ib_devs[GT_IB_MAX_DEVS];
extern int gt_ib_ndevs;
extern struct gt_reg_policy gt_ib_policy;

/* Where sysfs is (tests point it at a fixture tree). */
extern const char *gt_ib_sysfs;

/*! gt_ib_hca_selected() : NCCL_IB_HCA's filter on "dev" and its port, with
 *  NCCL's meaning: comma-separated entries "name[:port]" (more ':' fields,
 *  NCCL's rail and plane, not used for selection; empty entries skipped; at most
 *  GT_IB_MAX_DEVS entries); a leading '^' excludes the listed ones instead,
 *  a leading '=' (after '^' if both) matches names exactly instead of by
 *  prefix; a port is read like atoi, so "x" is port 0 and matches none.
 *  NULL or an empty list selects everything ("^" alone: nothing). */
int gt_ib_hca_selected(const char *filter, const char *dev, int port);
/*! gt_ib_hca_rail_plane() : the rail and plane NCCL_IB_HCA gives dev:port
 *  (its first matching entry's third and fourth fields, -1 when absent or
 *  empty, read like atoi), as NCCL's railId/planeId; -1 for an excluding
 *  list.  Returns 1 when an entry matched. */
int gt_ib_hca_rail_plane(const char *filter, const char *dev, int port, int *rail, int *plane);
/*! gt_ib_hca_valid() : 1 when every entry's port is a base-10 number in
 *  1..255 (NULL is valid): 0 means an entry NCCL reads as "no port". */
int gt_ib_hca_valid(const char *filter);

/*! gt_ib_speed_mbps() : active_speed (or active_speed_ex) × active_width in
 *  Mb/s by NCCL's tables: the lowest bit set picks the entry, none the last
 *  (XDR per lane; width 2x). */
int gt_ib_speed_mbps(int active_speed, int active_width);
/* Where newer verbs.h put active_speed_ex: the next 4-byte slot after
 * port_cap_flags2 (this build's struct may end there). */
#define GT_IB_SPEED_EX_OFF                                                                         \
    ((offsetof(struct ibv_port_attr, port_cap_flags2) + sizeof(uint16_t) + 3) & ~(size_t)3)
/*! gt_ib_pci_id() : NCCL's pciPathToInt64: the hex digits of the path's
 *  last component ("0000:3b:00.1" -> 0x3b001). */
int64_t gt_ib_pci_id(const char *path);
/*! gt_ib_pci_merge() : NCCL's rewrite of a device path: the function digit
 *  to 0, and with merge_vfs the two device digits too. */
void gt_ib_pci_merge(char *path, int merge_vfs);

/* NCCL's GID choice inputs (issue 18; docs/ib-vs-nccl.md). */
struct gt_ib_gid_rules {
    int forced;       /* NCCL_IB_GID_INDEX / GDRTRACE_IB_GID_INDEX; -1: choose */
    int roce_version; /* NCCL_IB_ROCE_VERSION_NUM, default 2 */
    int flid_index;   /* NCCL_IB_ROUTABLE_FLID_GID_INDEX, default 1 (IB only) */
    int family;       /* NCCL_IB_ADDR_FAMILY: AF_INET (default) or AF_INET6 */
    int range_bits;   /* NCCL_IB_ADDR_RANGE prefix length; 0: no range */
    uint8_t range[16];
    struct gt_setting s_index, s_version, s_family, s_range;
};
/*! gt_ib_gid_rules_read() : the variables above, NCCL's defaults. */
void gt_ib_gid_rules_read(struct gt_ib_gid_rules *r, int warn);

/*! gt_ib_pick_gid() : the GID index of dev/port, by NCCL's rules.  Forced
 *  index: NCCL_IB_GID_INDEX on RoCE (NCCL ignores it on IB), our twin on
 *  both.  IB: the routable-FLID index when that GID has a FLID, else 0.
 *  RoCE: starting from 0, each later index replaces the kept one when it
 *  is of the wanted family and in range while the kept one is of the other
 *  family; or when it is usable (configured, not link-local), of the wanted
 *  family, in range, of the wanted RoCE version (gid_attrs/types under
 *  gt_ib_sysfs), and the kept one has another version or is not usable.
 *  Returns -1 only for an empty table. */
int gt_ib_pick_gid(struct ibv_context *ctx, const char *dev, int port, int link_layer,
                   int gid_tbl_len, const struct gt_ib_gid_rules *r);

/* The ib settings in force: NCCL's variables, our twins overriding. */
struct gt_ib_params {
    char hca[256]; /* NCCL_IB_HCA / GDRTRACE_IB_HCA; "" selects every port */
    struct gt_ib_gid_rules gid;
    int timeout;       /* NCCL_IB_TIMEOUT / GDRTRACE_IB_TIMEOUT, 1..31, default 20 */
    int retry_cnt;     /* NCCL_IB_RETRY_CNT / GDRTRACE_IB_RETRY_CNT, 0..7, default 7 */
    int pkey;          /* NCCL_IB_PKEY: the P_Key *index* set on the QPs, default 0 */
    int qps;           /* NCCL_IB_QPS_PER_CONNECTION / GDRTRACE_IB_QPS, default 1 */
    int sl;            /* NCCL_IB_SL / GDRTRACE_IB_SL; -1: the traffic class, else 0 */
    int tc;            /* NCCL_IB_TC / GDRTRACE_IB_TC; -1: the traffic class, else 0 */
    int split;         /* NCCL_IB_SPLIT_DATA_ON_QPS: 1 splits each message over all QPs (0) */
    int ar;            /* NCCL_IB_ADAPTIVE_ROUTING; -2: on for IB ports, off for RoCE */
    long ar_threshold; /* NCCL_IB_AR_THRESHOLD, default 8192 bytes */
    int flush_disable; /* NCCL_GDR_FLUSH_DISABLE: 1 skips the flush READ (0) */
    int merge_vfs;     /* NCCL_IB_MERGE_VFS: VFs share their device's PCI path (1) */
    int pci_order;     /* NCCL_IB_DEVICE_PCI_ORDER: devices sorted by PCI id (1); 0 under an
                          NCCL older than 2.29.7, which lists them in the verbs order */
    int fifo_tc;       /* NCCL_IB_FIFO_TC: the clear-to-send writes' class (-1: the data's) */
    int nccl_version;  /* the loading NCCL's ncclGetVersion (22803 = 2.28.3); 0 unknown */
    int ece;           /* NCCL_IB_ECE_ENABLE: negotiate ECE where supported (1) */
    int query_speed;   /* NCCL_IB_QUERY_PORT_SPEED: ibv_query_port_speed first (1) */
    struct gt_setting s_hca, s_timeout, s_retry, s_pkey, s_qps, s_sl, s_tc, s_split, s_ar, s_art,
        s_flush, s_mvfs, s_order, s_ece, s_qspeed, s_fifo_tc;
};
extern struct gt_ib_params gt_ib_params;
/*! gt_ib_params_read() : reads them all (warn: one WARN per invalid value)
 *  and notes them for the recorder (gt_nccl_note). */
void gt_ib_params_read(struct gt_ib_params *p, int warn);
/*! gt_ib_sl_tc() : the SL and TC of a connection whose communicator asked
 *  for traffic class `config_tc` (< 0: none), as NCCL decides them. */
void gt_ib_sl_tc(const struct gt_ib_params *p, int config_tc, int *sl, int *tc);

/*! gt_ib_devices_open() / gt_ib_devices_close() : enumerate every active
 *  port of every device passing GDRTRACE_IB_HCA, open it, allocate its PD,
 *  run the probes.  Returns the number of devices (0 with no library or no
 *  active port); refcounted. */
int gt_ib_devices_open(void);
void gt_ib_devices_close(void);

/*! gt_ib_async_poll() : reads every pending async event of d's context
 *  (its async_fd is non-blocking), as NCCL's async thread does but from the
 *  calls NCCL already makes, so no thread of ours can stall the job: fatal
 *  ones (device, QP, CQ) are recorded in d for the comms to find, each
 *  WARNed once naming the port; the rest WARNed as NCCL does.  Returns how
 *  many events it read.  A poller busy elsewhere: returns 0 at once. */
int gt_ib_async_poll(struct gt_ib_dev *d);

extern const struct gt_net_ops gt_ib_ops;

#endif
