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
#include <stdint.h>

#include "common/dl/gt_ibv.h"
#include "common/gt_net.h"
#include "plugin/reg/gt_reg.h"

#define GT_IB_MAGIC 0x47544942u /* "GTIB" */
#define GT_IB_WIRE_VERSION 2 /* 2: the shared out-of-band handle and hello */
#define GT_IB_MAX_QPS 16
#define GT_IB_MAX_RECVS 8
#define GT_IB_MAX_DEVS 32

struct gt_ib_dev {
    char name[64];
    int index;        /* in gt_ib_devs */
    uint8_t port;
    int link_layer;   /* IBV_LINK_LAYER_* */
    int gid_index;
    union ibv_gid gid;
    uint16_t lid;
    enum ibv_mtu mtu; /* active MTU */
    int speed_mbps;
    int max_qp;
    int max_qp_wr;
    uint64_t guid;    /* host order */
    char pci_path[512];
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct gt_reg_dev reg;
    int props_ok;
};

extern struct gt_ib_dev gt_ib_devs[GT_IB_MAX_DEVS];
extern int gt_ib_ndevs;
extern struct gt_reg_policy gt_ib_policy;

/* Where sysfs is (tests point it at a fixture tree). */
extern const char *gt_ib_sysfs;

/*! gt_ib_hca_selected() : NCCL_IB_HCA-style filter on "dev" and its port:
 *  comma-separated entries "name[:port]"; a leading '^' excludes the listed
 *  ones instead, a leading '=' (after '^' if both) matches names exactly
 *  instead of by prefix.  NULL/empty filter selects everything. */
int gt_ib_hca_selected(const char *filter, const char *dev, int port);
/*! gt_ib_hca_valid() : 1 when every entry of the filter is a name with an
 *  optional ":port" in base 10, 1..255 (NULL is valid); 0 otherwise. */
int gt_ib_hca_valid(const char *filter);

/*! gt_ib_speed_mbps() : ibv_port_attr active_speed × active_width in Mb/s
 *  (0 when the encoding is unknown). */
int gt_ib_speed_mbps(int active_speed, int active_width);

/*! gt_ib_pick_gid() : the RoCE GID index for dev/port: $GDRTRACE_IB_GID_INDEX
 *  if set, else the first RoCE v2 IPv4-mapped GID, else the first RoCE v2,
 *  else the first non-zero one.  Reads gt_ib_sysfs gid_attrs/types and the
 *  GID table through gt_ibv.query_gid.  Returns -1 when none. */
int gt_ib_pick_gid(struct ibv_context *ctx, const char *dev, int port, int gid_tbl_len);

/*! gt_ib_devices_open() / gt_ib_devices_close() : enumerate every active
 *  port of every device passing GDRTRACE_IB_HCA, open it, allocate its PD,
 *  run the probes.  Returns the number of devices (0 with no library or no
 *  active port); refcounted. */
int gt_ib_devices_open(void);
void gt_ib_devices_close(void);

extern const struct gt_net_ops gt_ib_ops;

#endif
