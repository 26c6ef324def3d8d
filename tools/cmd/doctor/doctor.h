/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doctor.h — `gdrtrace doctor`: the runbook's gates 0-2 on this node.
 *
 * Pipeline (each stage only reads what the previous one filled):
 *   dr_inventory_collect()  sysfs/procfs facts under a root prefix (fixtures)
 *   dr_topo_compute()       GPU/NIC PCI relationships in NCCL's terms
 *   dr_live_run()           CUDA + verbs probes and real registrations through
 *                           the plugin's dlopen'd tables (tests install fakes
 *                           through their seam)
 *   dr_checks_judge()       PASS/WARN/FAIL/SKIP per check, with evidence and
 *                           the next step
 *   dr_report_text/json()   output
 *
 * Invariants:
 *  - Every sysfs/procfs/dev path is read under inv->root ("" on a real node).
 *  - Arrays of GPUs and RDMA devices are sorted by PCI address (virtual
 *    devices, which have none, last by name), so output is stable and nodes
 *    compare by position, never by mlx5_N names.
 *  - Nothing here aborts on a missing file: a fact that cannot be read is
 *    recorded as unknown and the check that needed it says so.
 */
#ifndef GDRTRACE_TOOLS_DOCTOR_H
#define GDRTRACE_TOOLS_DOCTOR_H

#include <stddef.h>
#include <stdio.h>

#include "gdrtrace/recorder_format.h"

#define DR_MAX_GPUS 64
#define DR_MAX_NICS 64
#define DR_MAX_PORTS 4
#define DR_MAX_GIDS 16
#define DR_MAX_CHAIN 16 /* PCI bridges between a root complex and a device */
#define DR_MAX_CHECKS 48
#define DR_MAX_EVIDENCE 80
#define DR_MAX_CMDS 40
#define DR_PATH 512

/* Exit codes (docs/doctor.md). */
#define DR_EXIT_PASS 0
#define DR_EXIT_WARN 1
#define DR_EXIT_FAIL 2
#define DR_EXIT_USAGE 64

/* ---- inventory ---------------------------------------------------------- */

struct dr_pci {
    char bdf[16];                 /* "0000:17:00.0"; "" for virtual devices */
    char root[24];                /* "pci0000:16": the host bridge (root complex) */
    int chain_len;                /* bridges + the device itself, root port first */
    char chain[DR_MAX_CHAIN][16]; /* BDFs from the root port down to the device */
    int numa_node;                /* -1 when unknown */
    char local_cpulist[64];
    char vendor[8], device[8]; /* "0x15b3" */
    char pci_class[10];        /* "0x020700" */
};

struct dr_gpu {
    struct dr_pci pci;
    char model[64]; /* /proc/driver/nvidia/gpus/<bdf>/information, "" if absent */
    /* Filled by dr_live_run (cuda index -1 = CUDA does not see it). */
    int cuda_index;
    int dmabuf_attr; /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, -1 unknown */
};

struct dr_gid {
    int index;
    char gid[48];
    char type[16]; /* "RoCE v2", "IB/RoCE v1" */
    char ndev[32];
};

struct dr_port {
    int num;
    char state[24];      /* "ACTIVE" (the number stripped) */
    char phys_state[24]; /* "LinkUp" */
    char link_layer[16]; /* "InfiniBand" | "Ethernet" */
    char rate[40];
    int ngids;
    struct dr_gid gids[DR_MAX_GIDS]; /* non-zero GIDs only */
};

struct dr_nic {
    char name[32];     /* current kernel name: mlx5_0, rxe0 (changes; not the key) */
    struct dr_pci pci; /* bdf "" for virtual devices (rxe) */
    int is_virtual;
    char fw_ver[32];
    char node_type[24];
    char hca_type[32];
    char board_id[32];
    char netdevs[96]; /* comma-separated */
    int nports;
    struct dr_port ports[DR_MAX_PORTS];
    /* Filled by dr_live_run. */
    int verbs_index; /* -1: libibverbs does not list it */
    int probe_state; /* enum gtr_probe (ibv_reg_dmabuf_mr fd=-1 probe) */
    int probe_errno;
    int host_reg_errno;     /* -1 not tried, 0 ok, else errno */
    int gpu_count_for_near; /* how many GPUs have this NIC nearest */
};

struct dr_inventory {
    char root[DR_PATH];        /* GDRTRACE_SYSFS_ROOT or "" */
    struct gtr_fingerprint fp; /* the recorder's fingerprint, same fields */
    char kernel_release[65];
    /* NVIDIA module */
    int nv_loaded;  /* /sys/module/nvidia or /proc/driver/nvidia present */
    int nv_flavour; /* enum gtr_nvidia_flavour */
    char nv_version[32];
    char nv_version_line[256]; /* /proc/driver/nvidia/version first line */
    char nv_taint[16];         /* /sys/module/nvidia/taint ("P" = proprietary licence) */
    char nv_flavour_why[160];
    int peermem_loaded;
    char memory_peers[128]; /* entries of /sys/kernel/mm/memory_peers, comma-separated */
    int dev_infiniband;     /* /dev/infiniband exists */
    char uverbs[128];       /* its uverbs* entries */
    int ngpus;
    struct dr_gpu gpus[DR_MAX_GPUS];
    int nnics;
    struct dr_nic nics[DR_MAX_NICS];
};

/* Fills *inv from root (NULL: GDRTRACE_SYSFS_ROOT or "").  Never fails. */
void dr_inventory_collect(struct dr_inventory *inv, const char *root);

/* ---- topology ----------------------------------------------------------- */

/* NCCL's path types, nearest first. */
enum dr_path {
    DR_PATH_PIX = 0, /* through at most one PCIe switch */
    DR_PATH_PXB = 1, /* through several PCIe switches, not the host bridge */
    DR_PATH_PHB = 2, /* through the host bridge / CPU of one socket */
    DR_PATH_SYS = 3, /* across the inter-socket link */
    DR_PATH_NA = 4,  /* one side has no PCI location (virtual device) */
};
const char *dr_path_name(int path);

/* The relationship of two PCI locations. */
int dr_topo_path(const struct dr_pci *a, const struct dr_pci *b);

struct dr_topology {
    int path[DR_MAX_GPUS][DR_MAX_NICS];
    int nearest[DR_MAX_GPUS];            /* NIC index or -1 */
    int order[DR_MAX_GPUS][DR_MAX_NICS]; /* NIC indexes, nearest first */
};
void dr_topo_compute(const struct dr_inventory *inv, struct dr_topology *topo);
/* The number of d's first ACTIVE port, or -1 when none is ACTIVE. */
int dr_active_port(const struct dr_nic *d);

/* ---- live probes (CUDA + verbs) ----------------------------------------- */

/* Live probes go through the plugin's dlopen'd tables (plugin/dl: gt_cu,
 * gt_ibv); tests install fakes with gt_cu_install()/gt_ibv_install().  The
 * fdinfo reader is a hook for the same reason: a fake dma-buf fd has no
 * exp_name.  Returns 0 and the exporter name, or an errno. */
extern int (*dr_fd_exporter)(int fd, char *name, size_t len);

struct dr_options {
    int json;
    int peermem; /* --peermem: also ibv_reg_mr on GPU memory */
    int no_live; /* skip CUDA/verbs: --no-live, or a fixture root without --live */
    char no_live_why[160];
    int live;        /* --live: run them even under a fixture root */
    int vgem;        /* --dmabuf-source=vgem: also register a vgem dma-buf (no GPU needed) */
    size_t reg_size; /* bytes registered per test */
};

/* One GPU x NIC registration attempt. */
struct dr_reg {
    int gpu, nic;
    int rc; /* -1 not tried, 0 ok, else errno */
    char err[160];
};

struct dr_live {
    int attempted; /* 0: skipped (why says why) */
    char skip_why[256];
    int cuda_ok;
    char cuda_err[256];
    int cuda_version; /* -1 unknown */
    int cuda_count;
    int verbs_ok;
    char verbs_err[256];
    int verbs_has_reg_dmabuf; /* -1 unknown */
    int verbs_count;
    char verbs_names[DR_MAX_NICS][32];
    /* per GPU export */
    int export_rc[DR_MAX_GPUS]; /* -1 not tried, 0 ok, errno */
    char export_err[DR_MAX_GPUS][160];
    char export_name[DR_MAX_GPUS][32]; /* fdinfo exp_name */
    int nreg;
    struct dr_reg reg[DR_MAX_GPUS * 4];
    int npeer;
    struct dr_reg peer[DR_MAX_GPUS * 4];
    /* --dmabuf-source=vgem */
    int vgem_rc; /* -1 not tried, 0 exported, else errno */
    char vgem_err[160];
    char vgem_card[32];
    char vgem_exp_name[32];
    int nvgem;
    struct dr_reg vgem[DR_MAX_NICS]; /* gpu = -1 */
};

/* Runs the CUDA and verbs probes and the registrations; fills live and the
 * live fields of inv (cuda_index, dmabuf_attr, verbs_index, probe_*).
 * Frees everything it allocated before returning. */
void dr_live_run(struct dr_inventory *inv, const struct dr_topology *topo,
                 const struct dr_options *opt, struct dr_live *live);

/* ---- checks ------------------------------------------------------------- */

enum dr_status { DR_PASS = 0, DR_WARN = 1, DR_FAIL = 2, DR_SKIP = 3 };
const char *dr_status_name(int s);

struct dr_check {
    const char *id; /* stable: "gate1.open_module" */
    int gate;       /* 0 identity, 1 prerequisites, 2 registration; topology is 0 */
    const char *title;
    int status;
    char summary[256];
    int nevidence;
    char *evidence[DR_MAX_EVIDENCE]; /* owned */
    char next[512];                  /* what to do next ("" on PASS) */
};

struct dr_report {
    int nchecks;
    struct dr_check checks[DR_MAX_CHECKS];
    int ncmds;
    char cmds[DR_MAX_CMDS][256]; /* gate-2 command lines for this node */
    int counts[4];
    int exit_code;
};

/* Runs every check of the table in checks.c that opt selects, in report
 * order, then proposes the gate-2 command lines. */
void dr_checks_judge(const struct dr_inventory *inv, const struct dr_topology *topo,
                     const struct dr_live *live, const struct dr_options *opt,
                     struct dr_report *rep);
/* The table's i-th check (i from 0): its id, and its gate in *gate when gate
 * is not NULL; NULL past the end.  Lists the optional checks too. */
const char *dr_check_id(int i, int *gate);
void dr_report_free(struct dr_report *rep);
const struct dr_check *dr_report_find(const struct dr_report *rep, const char *id);

void dr_report_text(FILE *f, const struct dr_inventory *inv, const struct dr_topology *topo,
                    const struct dr_live *live, const struct dr_report *rep);
void dr_report_json(FILE *f, const struct dr_inventory *inv, const struct dr_topology *topo,
                    const struct dr_live *live, const struct dr_report *rep);

/* ---- compare ------------------------------------------------------------ */

/* Compares two doctor JSON documents (text).  Prints each difference to out;
 * returns 0 same class and software set, 1 different, -1 (with err filled)
 * when a document is not a doctor document. */
int dr_compare_docs(const char *a_text, const char *a_label, const char *b_text,
                    const char *b_label, FILE *out, char *err, size_t errlen);

/* ---- small helpers (util.c) --------------------------------------------- */

/* Reads the first line of root+path into buf (trailing newline/space
 * stripped).  Returns 0, or an errno. */
int dr_read_line(const char *root, const char *path, char *buf, size_t len);
int dr_exists(const char *root, const char *path);
void dr_strlcpy(char *dst, const char *src, size_t len);
/* Appends ", "-separated item to a fixed buffer (truncates). */
void dr_append(char *dst, size_t len, const char *sep, const char *item);

#endif
