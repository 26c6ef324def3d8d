/* SPDX-License-Identifier: Apache-2.0 */
/*
 * checks.c — doctor's judgement: every fact turned into PASS / WARN / FAIL /
 * SKIP with its evidence and, when not PASS, what to do next.
 *
 * Layout: one static function per check, and one table (`checks[]`, at the
 * end) that lists them in report order with their id, runbook gate, title,
 * the option that selects them and what they need.  dr_checks_judge() walks
 * the table; docs/hacking.md ("Add a doctor check") is the recipe for adding a row.
 *
 * Rules (docs/doctor.md has the table):
 *  - The list of checks and their ids is fixed (gate2.gpu_reg_peermem only
 *    with --peermem, gate2.vgem_reg_dmabuf only with --dmabuf-source=vgem),
 *    so reports of two nodes line up.  The table is in gate order: the text
 *    report starts a gate's heading where the gate changes.
 *  - FAIL: a prerequisite is known to be missing or a registration failed.
 *    SKIP: it could not be checked (no library, no device, probes skipped);
 *    the summary says why.  A SKIP is never a pass: it makes the exit code 1.
 *  - A check whose needs (live probes, CUDA, a GPU, libibverbs, an RDMA
 *    device) are not met is SKIPped by the runner with the standard words of
 *    the first unmet need; its function runs only when they are met.
 *  - nvidia_peermem being absent is never evidence that DMA-BUF works; it
 *    only makes results attributable (gate1.single_path).
 *  - Exit code: 2 if any FAIL, else 1 if any WARN or SKIP, else 0.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/codes.h"
#include "common/fingerprint.h"
#include "tools/cmd/doctor/doctor.h"

const char *dr_status_name(int s)
{
    static const char *const names[] = {"PASS", "WARN", "FAIL", "SKIP"};
    return s >= 0 && s <= 3 ? names[s] : "?";
}

/* Everything a check may read: the earlier stages' results, read-only. */
struct facts {
    const struct dr_inventory *inv;
    const struct dr_topology *topo;
    const struct dr_live *live;
    const struct dr_options *opt;
};

/* ---- how a check writes its result -------------------------------------- */

__attribute__((format(printf, 3, 4))) static void set(struct dr_check *c, int status,
                                                      const char *fmt, ...)
{
    c->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->summary, sizeof(c->summary), fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 2, 3))) static void ev(struct dr_check *c, const char *fmt, ...)
{
    if (c->nevidence >= DR_MAX_EVIDENCE)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    char *s = strdup(buf);
    if (s)
        c->evidence[c->nevidence++] = s;
}

__attribute__((format(printf, 2, 3))) static void next(struct dr_check *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->next, sizeof(c->next), fmt, ap);
    va_end(ap);
}

/* ---- small readings shared by several checks ---------------------------- */

static const char *plural(int n)
{
    return n == 1 ? "" : "s";
}

static const char *errname(int e)
{
    switch (e) {
    case EOPNOTSUPP:
        return "EOPNOTSUPP";
    case EPROTONOSUPPORT:
        return "EPROTONOSUPPORT";
    case EBADF:
        return "EBADF";
    case EINVAL:
        return "EINVAL";
    case EFAULT:
        return "EFAULT";
    case ENOMEM:
        return "ENOMEM";
    case EPERM:
        return "EPERM";
    case EACCES:
        return "EACCES";
    case ENOSYS:
        return "ENOSYS";
    case ENODEV:
        return "ENODEV";
    case ENOENT:
        return "ENOENT";
    default:
        return "errno";
    }
}

static const char *nic_label(const struct dr_nic *d, char *buf, size_t len)
{
    snprintf(buf, len, "%s@%s", d->name, d->pci.bdf[0] ? d->pci.bdf : "-");
    return buf;
}

/* cuDriverGetVersion's 12080 as "12.8". */
static const char *cuda_ver(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
    return buf;
}

/* nvidia_peermem loaded, or any peer-memory client registered. */
static int peer_path_loaded(const struct dr_inventory *inv)
{
    return inv->peermem_loaded || inv->memory_peers[0];
}

/* ---- gate 0: identity and topology -------------------------------------- */

static void identity_kernel(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    if (inv->kernel_release[0]) {
        set(c, DR_PASS, "%s", inv->kernel_release);
        ev(c, "%s/proc/sys/kernel/osrelease: %s", inv->root, inv->kernel_release);
    } else {
        set(c, DR_WARN, "kernel release unreadable");
        next(c, "check that %s/proc is mounted and readable", inv->root);
    }
}

static void identity_nvidia_module(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    if (inv->nv_version_line[0])
        ev(c, "/proc/driver/nvidia/version: %s", inv->nv_version_line);
    ev(c, "/sys/module/nvidia: %s", inv->nv_loaded ? "present" : "absent");
    if (inv->nv_version[0])
        ev(c, "version: %s", inv->nv_version);
    if (inv->nv_taint[0])
        ev(c, "/sys/module/nvidia/taint: %s (P = proprietary licence, O = out of tree)",
           inv->nv_taint);
    ev(c, "flavour: %s (%s)", gt_fingerprint_flavour_name(inv->nv_flavour), inv->nv_flavour_why);
    if (inv->nv_flavour == GTR_NV_ABSENT) {
        set(c, DR_WARN, "no NVIDIA kernel module loaded");
        next(c, "load the NVIDIA driver (open flavour for DMA-BUF), then run doctor again");
    } else if (inv->nv_flavour == GTR_NV_UNKNOWN) {
        set(c, DR_WARN, "NVIDIA module %s loaded, flavour unknown", inv->nv_version);
        next(c, "run `modinfo nvidia | grep -E '^(version|license):'` on the host (outside any "
                "container) and record it with this bundle");
    } else {
        set(c, DR_PASS, "%s %s", gt_fingerprint_flavour_name(inv->nv_flavour), inv->nv_version);
    }
}

static void identity_peermem(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    ev(c, "/sys/module/nvidia_peermem: %s", inv->peermem_loaded ? "present" : "absent");
    ev(c, "/sys/kernel/mm/memory_peers: %s", inv->memory_peers[0] ? inv->memory_peers : "(none)");
    set(c, DR_PASS, "%s",
        peer_path_loaded(inv) ? "legacy peer-memory path loaded"
                              : "legacy peer-memory path not loaded");
}

/* Not NEED_LIVE: a version read is a PASS however it was read, and the two
 * SKIPs name different next steps. */
static void identity_cuda_driver(struct dr_check *c, const struct facts *f)
{
    const struct dr_live *live = f->live;
    char v[24];
    if (live->cuda_version > 0) {
        set(c, DR_PASS, "%s (%d)", cuda_ver(live->cuda_version, v, sizeof(v)), live->cuda_version);
        ev(c, "cuDriverGetVersion: %d", live->cuda_version);
    } else if (!live->attempted) {
        set(c, DR_SKIP, "not checked: %s", live->skip_why);
        next(c, "run doctor on the node itself (without GDRTRACE_SYSFS_ROOT / --no-live)");
    } else {
        set(c, DR_SKIP, "could not check: %s", live->cuda_err[0] ? live->cuda_err : "no version");
        next(c, "install the NVIDIA driver's libcuda.so.1 (or set GDRTRACE_CUDA_LIB)");
    }
}

static void identity_gpus(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    const struct dr_live *live = f->live;
    for (int g = 0; g < inv->ngpus; g++) {
        const struct dr_gpu *gp = &inv->gpus[g];
        ev(c, "gpu%d %s numa %d %s%s%s cuda %d", g, gp->pci.bdf, gp->pci.numa_node, gp->pci.device,
           gp->model[0] ? " " : "", gp->model, gp->cuda_index);
    }
    if (inv->ngpus == 0) {
        set(c, DR_WARN, "no NVIDIA GPU on the PCI bus");
        ev(c, "%s/sys/bus/pci/devices: no device with vendor 0x10de and class 0x03xxxx", inv->root);
        next(c, "run doctor on a GPU node; inside a container, expose the GPUs and /sys");
    } else if (live->cuda_ok && live->cuda_count != inv->ngpus) {
        set(c, DR_WARN, "%d GPUs on the PCI bus, CUDA sees %d", inv->ngpus, live->cuda_count);
        next(c, "check CUDA_VISIBLE_DEVICES and the container's device list: unseen GPUs "
                "cannot be tested");
    } else {
        set(c, DR_PASS, "%d GPU%s", inv->ngpus, plural(inv->ngpus));
    }
}

static void identity_rdma(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    for (int k = 0; k < inv->nnics; k++) {
        const struct dr_nic *d = &inv->nics[k];
        char lbl[64];
        ev(c, "%s numa %d fw %s type %s netdev %s%s", nic_label(d, lbl, sizeof(lbl)),
           d->pci.numa_node, d->fw_ver[0] ? d->fw_ver : "?", d->hca_type[0] ? d->hca_type : "?",
           d->netdevs[0] ? d->netdevs : "-", d->is_virtual ? " (virtual: no PCI device)" : "");
        for (int p = 0; p < d->nports; p++) {
            const struct dr_port *pt = &d->ports[p];
            ev(c, "  port %d %s %s %s %s", pt->num, pt->state, pt->phys_state, pt->link_layer,
               pt->rate);
            for (int i = 0; i < pt->ngids; i++)
                ev(c, "    gid %d %s %s %s", pt->gids[i].index, pt->gids[i].gid,
                   pt->gids[i].type[0] ? pt->gids[i].type : "-",
                   pt->gids[i].ndev[0] ? pt->gids[i].ndev : "-");
        }
    }
    if (inv->nnics == 0) {
        set(c, DR_WARN, "no RDMA device");
        ev(c, "%s/sys/class/infiniband: %s", inv->root,
           dr_exists(inv->root, "/sys/class/infiniband") ? "empty" : "absent");
        next(c, "check `rdma dev show` and that the NIC driver (mlx5_ib, irdma, bnxt_re, efa) is "
                "loaded");
    } else {
        set(c, DR_PASS, "%d device%s", inv->nnics, plural(inv->nnics));
    }
}

/* Not NEED_GPU|NEED_NIC: with nothing to pair it says "not checked" and
 * points at both identity checks. */
static void topology_gpu_nic(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    const struct dr_topology *topo = f->topo;
    if (!inv->ngpus || !inv->nnics) {
        set(c, DR_SKIP, "not checked: %s", !inv->ngpus ? "no GPU" : "no RDMA device");
        next(c, "nothing to pair; see identity.gpus / identity.rdma");
        return;
    }
    int far = 0;
    for (int g = 0; g < inv->ngpus; g++) {
        char line[400] = "", lbl[64], item[96];
        for (int i = 0; i < inv->nnics; i++) {
            int k = topo->order[g][i];
            snprintf(item, sizeof(item), "%s %s", nic_label(&inv->nics[k], lbl, sizeof(lbl)),
                     dr_path_name(topo->path[g][k]));
            dr_append(line, sizeof(line), ", ", item);
        }
        ev(c, "gpu%d %s: %s", g, inv->gpus[g].pci.bdf, line);
        int n = topo->nearest[g];
        ev(c, "gpu%d nearest: %s (%s)", g, inv->nics[n].name, dr_path_name(topo->path[g][n]));
        if (topo->path[g][n] > DR_PATH_PXB)
            far++;
    }
    if (far) {
        set(c, DR_WARN, "%d GPU%s without a NIC behind a PCIe switch (nearest is PHB/SYS/N/A)", far,
            plural(far));
        next(c, "NCCL's default NCCL_NET_GDR_LEVEL (PXB) disables GPU Direct RDMA beyond a PCIe "
                "switch: those GPUs will stage through host memory; choose GPU/NIC pairs from "
                "`nvidia-smi topo -m` for the canary");
    } else {
        set(c, DR_PASS, "every GPU has a NIC at PIX/PXB");
    }
}

/* ---- gate 1: DMA-BUF prerequisites -------------------------------------- */

static void gate1_open_module(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    ev(c, "flavour: %s (%s)", gt_fingerprint_flavour_name(inv->nv_flavour), inv->nv_flavour_why);
    switch (inv->nv_flavour) {
    case GTR_NV_OPEN:
        set(c, DR_PASS, "open kernel module %s", inv->nv_version);
        break;
    case GTR_NV_PROPRIETARY:
        set(c, DR_FAIL,
            "proprietary kernel module %s: DMA-BUF export of GPU memory needs the open module",
            inv->nv_version);
        next(c, "install the open flavour of the same driver branch (e.g. nvidia-open / "
                "GPU Operator's useOpenKernelModules) in a separate change; keep the peermem "
                "profile as the rollback baseline");
        break;
    case GTR_NV_ABSENT:
        set(c, DR_FAIL, "no NVIDIA kernel module loaded");
        next(c, "install and load the open NVIDIA kernel module");
        break;
    default:
        set(c, DR_FAIL, "flavour of the loaded NVIDIA module could not be established");
        next(c, "read `modinfo nvidia | grep license` on the host: \"Dual MIT/GPL\" is the open "
                "module, \"NVIDIA\" the proprietary one");
    }
}

static void gate1_kernel(struct dr_check *c, const struct facts *f)
{
    const char *rel = f->inv->kernel_release;
    int maj = 0, min = 0;
    if (sscanf(rel, "%d.%d", &maj, &min) != 2) {
        set(c, DR_WARN, "kernel release \"%s\" not understood", rel);
        next(c, "check `uname -r` by hand: ibv_reg_dmabuf_mr needs 5.12 or later");
    } else if (maj > 5 || (maj == 5 && min >= 12)) {
        set(c, DR_PASS, "%s", rel);
    } else {
        set(c, DR_FAIL, "%s is older than 5.12: the kernel has no DMA-BUF memory registration",
            rel);
        next(c, "move to a supported kernel >= 5.12 (or a vendor kernel with the backport) "
                "before anything else");
    }
}

/* NEED_LIVE but not NEED_CUDA: a libcuda that cannot be loaded is a missing
 * prerequisite here (FAIL), not something left unchecked. */
static void gate1_cuda_driver(struct dr_check *c, const struct facts *f)
{
    const struct dr_live *live = f->live;
    char v[24];
    if (live->cuda_version > 0) {
        ev(c, "cuDriverGetVersion: %d", live->cuda_version);
        if (live->cuda_version >= 11070) {
            set(c, DR_PASS, "%s", cuda_ver(live->cuda_version, v, sizeof(v)));
        } else {
            set(c, DR_FAIL, "%s is older than 11.7", cuda_ver(live->cuda_version, v, sizeof(v)));
            next(c, "upgrade the NVIDIA driver: the DMA-BUF export arrived with CUDA 11.7");
        }
    } else {
        set(c, DR_FAIL, "libcuda not usable: %s", live->cuda_err);
        next(c, "install the driver's user-space library (libcuda.so.1) matching the kernel "
                "module, or point GDRTRACE_CUDA_LIB at it");
    }
}

static void gate1_cuda_dmabuf_attr(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    int ok = 0, bad = 0, unk = 0;
    for (int g = 0; g < inv->ngpus; g++) {
        const struct dr_gpu *gp = &inv->gpus[g];
        ev(c, "gpu%d %s cuda %d: %d", g, gp->pci.bdf, gp->cuda_index, gp->dmabuf_attr);
        if (gp->dmabuf_attr == 1)
            ok++;
        else if (gp->dmabuf_attr == 0)
            bad++;
        else
            unk++;
    }
    if (bad) {
        set(c, DR_FAIL, "%d GPU%s report no DMA-BUF support", bad, plural(bad));
        next(c, "the driver refuses DMA-BUF export on these GPUs: load the open kernel "
                "module (gate1.open_module) and check the GPU generation (Turing or newer)");
    } else if (unk) {
        set(c, DR_SKIP, "%d GPU%s not visible to CUDA", unk, plural(unk));
        next(c, "see identity.gpus: expose every GPU to this process");
    } else {
        set(c, DR_PASS, "all %d GPU%s", ok, plural(ok));
    }
}

/* NEED_LIVE but not NEED_VERBS: no libibverbs is a missing prerequisite. */
static void gate1_verbs_reg_dmabuf(struct dr_check *c, const struct facts *f)
{
    const struct dr_live *live = f->live;
    if (!live->verbs_ok) {
        set(c, DR_FAIL, "libibverbs not usable: %s", live->verbs_err);
        next(c, "install rdma-core's libibverbs1 (>= v34 for ibv_reg_dmabuf_mr), or set "
                "GDRTRACE_IBVERBS_LIB");
    } else if (live->verbs_has_reg_dmabuf != 1) {
        set(c, DR_FAIL, "libibverbs lacks ibv_reg_dmabuf_mr (rdma-core < 34)");
        next(c, "upgrade rdma-core / MLNX_OFED / DOCA-OFED user space to one with "
                "ibv_reg_dmabuf_mr (IBVERBS_1.12)");
    } else {
        set(c, DR_PASS, "ibv_reg_dmabuf_mr present");
    }
}

static void gate1_dev_infiniband(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    ev(c, "%s/dev/infiniband: %s", inv->root,
       inv->dev_infiniband ? (inv->uverbs[0] ? inv->uverbs : "(empty)") : "absent");
    if (!inv->dev_infiniband || !strstr(inv->uverbs, "uverbs")) {
        set(c, DR_FAIL, "%s", inv->dev_infiniband ? "no uverbs device node" : "absent");
        next(c, "load ib_uverbs (and the NIC's RDMA driver); in a container, pass "
                "/dev/infiniband through");
    } else {
        set(c, DR_PASS, "%s", inv->uverbs);
    }
}

/* Not NEED_NIC: no RDMA device is a FAIL here, the network comes first. */
static void gate1_rdma_active(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    int active = 0, nonet = 0;
    for (int k = 0; k < inv->nnics; k++) {
        const struct dr_nic *d = &inv->nics[k];
        int p = dr_active_port(d);
        char lbl[64];
        if (p > 0)
            ev(c, "%s: port %d ACTIVE, netdev %s", nic_label(d, lbl, sizeof(lbl)), p,
               d->netdevs[0] ? d->netdevs : "-");
        else
            ev(c, "%s: no ACTIVE port, netdev %s", nic_label(d, lbl, sizeof(lbl)),
               d->netdevs[0] ? d->netdevs : "-");
        if (p > 0) {
            active++;
            for (int q = 0; q < d->nports; q++)
                if (d->ports[q].num == p && !strcmp(d->ports[q].link_layer, "Ethernet") &&
                    !d->netdevs[0])
                    nonet++;
        }
    }
    if (!inv->nnics) {
        set(c, DR_FAIL, "no RDMA device");
        next(c, "fix the network first: `rdma link`, `rdma dev show`; DMA-BUF does not repair "
                "a fabric");
    } else if (!active) {
        set(c, DR_FAIL, "no ACTIVE port on %d device%s", inv->nnics, plural(inv->nnics));
        next(c, "bring the links up (`rdma link`, cabling, subnet manager for IB) before any "
                "GPU test");
    } else if (active < inv->nnics || nonet) {
        set(c, DR_WARN, "%d of %d devices ACTIVE%s", active, inv->nnics,
            nonet ? "; a RoCE port without a netdev" : "");
        next(c, "run the canary only on ACTIVE ports; check the others with `rdma link`");
    } else {
        set(c, DR_PASS, "all %d device%s ACTIVE", active, plural(active));
    }
}

static void gate1_dmabuf_probe(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    int sup = 0, uns = 0, unk = 0;
    for (int k = 0; k < inv->nnics; k++) {
        const struct dr_nic *d = &inv->nics[k];
        char lbl[64];
        if (d->verbs_index < 0) {
            ev(c, "%s: not listed by ibv_get_device_list", nic_label(d, lbl, sizeof(lbl)));
            unk++;
            continue;
        }
        ev(c, "%s: %s (errno %d %s: %s)", nic_label(d, lbl, sizeof(lbl)),
           gt_probe_name(d->probe_state), d->probe_errno, errname(d->probe_errno),
           strerror(d->probe_errno));
        if (d->probe_state == GTR_PROBE_SUPPORTED)
            sup++;
        else if (d->probe_state == GTR_PROBE_UNSUPPORTED || d->probe_state == GTR_PROBE_ABSENT)
            uns++;
        else
            unk++;
    }
    if (!sup && (uns || unk)) {
        set(c, uns ? DR_FAIL : DR_SKIP, "no device supports DMA-BUF registration");
        next(c, "the NIC driver/provider refuses DMA-BUF (EOPNOTSUPP): use a NIC and driver "
                "with DMA-BUF MRs (mlx5, efa, irdma, bnxt_re) on kernel >= 5.12 and "
                "rdma-core >= 34");
    } else if (uns || unk) {
        set(c, DR_WARN, "%d of %d devices support DMA-BUF", sup, sup + uns + unk);
        next(c, "NCCL will not use GPU Direct RDMA through the others; keep the canary on "
                "the supporting devices");
    } else {
        set(c, DR_PASS, "all %d device%s", sup, plural(sup));
    }
}

static void gate1_single_path(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    int peer = peer_path_loaded(inv);
    ev(c, "nvidia_peermem %s, memory_peers: %s", inv->peermem_loaded ? "loaded" : "not loaded",
       inv->memory_peers[0] ? inv->memory_peers : "(none)");
    if (peer && inv->nv_flavour == GTR_NV_OPEN) {
        set(c, DR_WARN, "both DMA-BUF and the legacy peer-memory path are available");
        next(c, "a working ib_write_bw or NCCL run does not tell which path registered GPU "
                "memory: prove it with the plugin's recorder (`gdrtrace verdict`), or unload "
                "nvidia_peermem on the canary (not before the rollback window closes)");
    } else if (peer) {
        set(c, DR_PASS, "only the legacy peer-memory path can register GPU memory");
        ev(c, "this is the legacy baseline: DMA-BUF is not proven here (see gate1.open_module)");
    } else {
        set(c, DR_PASS,
            "peer-memory path not loaded: a GPU registration on this node can only be "
            "DMA-BUF (this alone proves nothing about DMA-BUF working)");
    }
}

/* ---- gate 2: GPU-memory registration (the local half) ------------------- */

static void gate2_cuda_export(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    const struct dr_live *live = f->live;
    int ok = 0, bad = 0, skip = 0;
    for (int g = 0; g < inv->ngpus; g++) {
        const char *bdf = inv->gpus[g].pci.bdf;
        if (live->export_rc[g] < 0) {
            ev(c, "gpu%d %s: not visible to CUDA", g, bdf);
            skip++;
        } else if (live->export_rc[g] == 0 && !strcmp(live->export_name[g], "nv_dmabuf")) {
            ev(c, "gpu%d %s: %zu bytes exported, fdinfo exp_name: %s", g, bdf, f->opt->reg_size,
               live->export_name[g]);
            ok++;
        } else if (live->export_rc[g] == 0) {
            ev(c, "gpu%d %s: exported, but fdinfo exp_name is \"%s\", not nv_dmabuf", g, bdf,
               live->export_name[g]);
            bad++;
        } else {
            ev(c, "gpu%d %s: %s", g, bdf, live->export_err[g]);
            bad++;
        }
    }
    if (bad) {
        set(c, DR_FAIL, "%d of %d GPUs could not export an nv_dmabuf", bad, inv->ngpus);
        next(c, "cuMemGetHandleForAddressRange needs the open kernel module and CUDA >= "
                "11.7 (gate 1); with both present, report the error above to NVIDIA");
    } else if (skip) {
        set(c, DR_SKIP, "%d GPU%s not visible to CUDA", skip, plural(skip));
    } else {
        set(c, DR_PASS, "%d GPU%s exported nv_dmabuf", ok, plural(ok));
    }
}

/* Not NEED_VERBS|NEED_NIC: the negative control names what is missing but
 * sends the reader nowhere else first. */
static void gate2_host_reg(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    const struct dr_live *live = f->live;
    size_t size = f->opt->reg_size;
    if (!live->verbs_ok || !inv->nnics) {
        set(c, DR_SKIP, "could not check: %s",
            !live->verbs_ok ? "libibverbs not usable" : "no RDMA device");
        return;
    }
    int ok = 0, bad = 0, skip = 0;
    for (int k = 0; k < inv->nnics; k++) {
        const struct dr_nic *d = &inv->nics[k];
        char lbl[64];
        nic_label(d, lbl, sizeof(lbl));
        if (d->host_reg_errno < 0) {
            ev(c, "%s: not tried (not listed by libibverbs)", lbl);
            skip++;
        } else if (d->host_reg_errno == 0) {
            ev(c, "%s: ibv_reg_mr(host, %zu bytes) ok", lbl, size);
            ok++;
        } else {
            ev(c, "%s: ibv_reg_mr(host, %zu bytes): %s (%s)", lbl, size,
               strerror(d->host_reg_errno), errname(d->host_reg_errno));
            bad++;
        }
    }
    if (bad) {
        set(c, DR_FAIL, "host memory registration fails on %d device%s", bad, plural(bad));
        next(c, "fix verbs before blaming DMA-BUF: check `ulimit -l` (memlock), the "
                "device's driver and permissions on /dev/infiniband");
    } else if (skip) {
        set(c, DR_SKIP, "%d device%s not tried", skip, plural(skip));
    } else {
        set(c, DR_PASS, "all %d device%s", ok, plural(ok));
    }
}

static void gate2_gpu_reg_dmabuf(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    const struct dr_topology *topo = f->topo;
    const struct dr_live *live = f->live;
    int exported = 0;
    for (int g = 0; g < inv->ngpus; g++)
        exported += live->export_rc[g] == 0;
    if (!exported || !live->nreg) {
        set(c, DR_SKIP, "could not check: %s",
            !exported ? "no GPU memory exported (see gate2.cuda_export)"
                      : "no RDMA device open (see identity.rdma, gate1.dmabuf_probe)");
        next(c, "fix the checks named above first");
        return;
    }
    int near_bad = 0, other_bad = 0, ok = 0;
    for (int i = 0; i < live->nreg; i++) {
        const struct dr_reg *r = &live->reg[i];
        int is_near = topo->nearest[r->gpu] == r->nic;
        char lbl[64];
        nic_label(&inv->nics[r->nic], lbl, sizeof(lbl));
        const char *path = dr_path_name(topo->path[r->gpu][r->nic]);
        const char *near = is_near ? ", nearest" : "";
        if (r->rc == 0) {
            ev(c, "gpu%d -> %s (%s%s): registered", r->gpu, lbl, path, near);
            ok++;
        } else {
            ev(c, "gpu%d -> %s (%s%s): %s (%s)", r->gpu, lbl, path, near, r->err, errname(r->rc));
            if (is_near)
                near_bad++;
            else
                other_bad++;
        }
    }
    if (near_bad) {
        set(c, DR_FAIL, "%d GPU%s cannot register DMA-BUF memory on the nearest NIC", near_bad,
            plural(near_bad));
        next(c, "EOPNOTSUPP: the NIC driver has no DMA-BUF MRs; EFAULT/EINVAL: kernel or "
                "PCIe P2P problem (check ACS and the P2P runbook); host memory must pass first "
                "(gate2.host_reg)");
    } else if (other_bad) {
        set(c, DR_WARN, "nearest NICs register; %d other pair%s fail", other_bad,
            plural(other_bad));
        next(c, "pairs beyond the nearest NIC are not used by NCCL by default; keep the "
                "canary on the pairs that register");
    } else {
        set(c, DR_PASS, "%d GPU/NIC pair%s registered", ok, plural(ok));
    }
}

static void gate2_vgem_reg_dmabuf(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    const struct dr_live *live = f->live;
    if (live->vgem_rc != 0) {
        set(c, DR_SKIP, "could not check: %s", live->vgem_err);
        next(c, "modprobe vgem (it gives a dma-buf without a GPU)");
        return;
    }
    if (!live->nvgem) {
        set(c, DR_SKIP, "could not check: no RDMA device open");
        return;
    }
    ev(c, "%s exported a dma-buf, fdinfo exp_name: %s", live->vgem_card, live->vgem_exp_name);
    int ok = 0, bad = 0;
    for (int i = 0; i < live->nvgem; i++) {
        const struct dr_reg *r = &live->vgem[i];
        char lbl[64];
        nic_label(&inv->nics[r->nic], lbl, sizeof(lbl));
        if (r->rc == 0) {
            ev(c, "%s: registered", lbl);
            ok++;
        } else {
            ev(c, "%s: %s (%s)", lbl, r->err, errname(r->rc));
            bad++;
        }
    }
    if (bad && !ok) {
        set(c, DR_FAIL, "no device registers a real dma-buf");
        next(c, "EOPNOTSUPP: the RDMA provider/driver has no DMA-BUF MRs (rxe and siw "
                "have none); DMA-BUF needs mlx5, efa, irdma or bnxt_re");
    } else if (bad) {
        set(c, DR_WARN, "%d of %d devices register a real dma-buf", ok, ok + bad);
        next(c, "keep GPU traffic on the devices that register");
    } else {
        set(c, DR_PASS, "%d device%s registered a real dma-buf", ok, plural(ok));
    }
}

static void gate2_gpu_reg_peermem(struct dr_check *c, const struct facts *f)
{
    const struct dr_inventory *inv = f->inv;
    const struct dr_live *live = f->live;
    if (!live->npeer) {
        set(c, DR_SKIP, "could not check: no GPU buffer or no RDMA device");
        return;
    }
    int ok = 0, bad = 0;
    for (int i = 0; i < live->npeer; i++) {
        const struct dr_reg *r = &live->peer[i];
        char lbl[64];
        nic_label(&inv->nics[r->nic], lbl, sizeof(lbl));
        if (r->rc == 0) {
            ev(c, "gpu%d -> %s: registered through peer memory", r->gpu, lbl);
            ok++;
        } else {
            ev(c, "gpu%d -> %s: %s (%s)", r->gpu, lbl, r->err, errname(r->rc));
            bad++;
        }
    }
    if (bad) {
        set(c, DR_FAIL, "%d pair%s refused the GPU address", bad, plural(bad));
        next(c, "expected without nvidia_peermem (EFAULT); for a legacy baseline, load "
                "it: `sudo modprobe nvidia-peermem`");
    } else {
        set(c, DR_PASS, "%d pair%s registered through the legacy path", ok, plural(ok));
    }
}

/* ---- the table ---------------------------------------------------------- */

/* What a check needs before its function can judge anything.  The runner
 * tests them in this order and SKIPs on the first one missing. */
enum need {
    NEED_LIVE = 1 << 0,  /* the live probes ran (not --no-live, not a fixture root) */
    NEED_CUDA = 1 << 1,  /* libcuda loaded and initialised */
    NEED_GPU = 1 << 2,   /* at least one GPU on the PCI bus */
    NEED_VERBS = 1 << 3, /* libibverbs loaded */
    NEED_NIC = 1 << 4,   /* at least one RDMA device in sysfs */
};

/* Which runs include the check: the fixed list, or an option's extra. */
enum when { ALWAYS, WITH_PEERMEM, WITH_VGEM };

struct check_def {
    const char *id; /* stable: reports of two nodes line up on it */
    int gate;       /* 0 identity and topology, 1 prerequisites, 2 registration */
    const char *title;
    enum when when;
    unsigned needs; /* enum need bits */
    void (*judge)(struct dr_check *c, const struct facts *f);
};

static const struct check_def checks[] = {
    {"identity.kernel", 0, "kernel release", ALWAYS, 0, identity_kernel},
    {"identity.nvidia_module", 0, "NVIDIA kernel module version and flavour", ALWAYS, 0,
     identity_nvidia_module},
    {"identity.peermem", 0, "nvidia_peermem state (recorded, not judged)", ALWAYS, 0,
     identity_peermem},
    {"identity.cuda_driver", 0, "CUDA driver version", ALWAYS, 0, identity_cuda_driver},
    {"identity.gpus", 0, "GPUs by PCI address", ALWAYS, 0, identity_gpus},
    {"identity.rdma", 0, "RDMA devices by PCI address", ALWAYS, 0, identity_rdma},
    {"topology.gpu_nic", 0, "GPU/NIC PCI relationship (NCCL terms)", ALWAYS, 0, topology_gpu_nic},

    {"gate1.open_module", 1, "open NVIDIA kernel module loaded", ALWAYS, 0, gate1_open_module},
    {"gate1.kernel", 1, "Linux kernel >= 5.12 (DMA-BUF MRs)", ALWAYS, 0, gate1_kernel},
    {"gate1.cuda_driver", 1, "CUDA driver >= 11.7 (cuMemGetHandleForAddressRange)", ALWAYS,
     NEED_LIVE, gate1_cuda_driver},
    {"gate1.cuda_dmabuf_attr", 1, "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED per GPU", ALWAYS,
     NEED_LIVE | NEED_CUDA | NEED_GPU, gate1_cuda_dmabuf_attr},
    {"gate1.verbs_reg_dmabuf", 1, "libibverbs exports ibv_reg_dmabuf_mr", ALWAYS, NEED_LIVE,
     gate1_verbs_reg_dmabuf},
    {"gate1.dev_infiniband", 1, "/dev/infiniband present", ALWAYS, 0, gate1_dev_infiniband},
    {"gate1.rdma_active", 1, "an RDMA port is ACTIVE, with its netdev", ALWAYS, 0,
     gate1_rdma_active},
    {"gate1.dmabuf_probe", 1, "per-device DMA-BUF probe (ibv_reg_dmabuf_mr fd=-1)", ALWAYS,
     NEED_LIVE | NEED_VERBS | NEED_NIC, gate1_dmabuf_probe},
    {"gate1.single_path", 1, "one GPU registration path (results attributable)", ALWAYS, 0,
     gate1_single_path},

    {"gate2.cuda_export", 2, "GPU memory exported as DMA-BUF", ALWAYS,
     NEED_LIVE | NEED_CUDA | NEED_GPU, gate2_cuda_export},
    {"gate2.host_reg", 2, "host memory registers on each device (negative control)", ALWAYS,
     NEED_LIVE, gate2_host_reg},
    {"gate2.gpu_reg_dmabuf", 2, "GPU DMA-BUF registered on each device, nearest first", ALWAYS,
     NEED_LIVE, gate2_gpu_reg_dmabuf},
    {"gate2.vgem_reg_dmabuf", 2, "a vgem dma-buf registered on each device (--dmabuf-source=vgem)",
     WITH_VGEM, NEED_LIVE, gate2_vgem_reg_dmabuf},
    {"gate2.gpu_reg_peermem", 2, "legacy: ibv_reg_mr on the GPU address (--peermem)", WITH_PEERMEM,
     NEED_LIVE, gate2_gpu_reg_peermem},
};

#define NCHECKS ((int)(sizeof(checks) / sizeof(checks[0])))
_Static_assert(sizeof(checks) / sizeof(checks[0]) <= DR_MAX_CHECKS,
               "struct dr_report holds DR_MAX_CHECKS checks");

const char *dr_check_id(int i, int *gate)
{
    if (i < 0 || i >= NCHECKS)
        return NULL;
    if (gate)
        *gate = checks[i].gate;
    return checks[i].id;
}

static int selected(const struct check_def *d, const struct dr_options *opt)
{
    switch (d->when) {
    case WITH_PEERMEM:
        return opt->peermem;
    case WITH_VGEM:
        return opt->vgem;
    default:
        return 1;
    }
}

/* SKIPs c with the words of the first need in `needs` that f does not meet;
 * returns 0 when every need is met. */
static int skip_unmet(struct dr_check *c, unsigned needs, const struct facts *f)
{
    const struct dr_live *live = f->live;
    if ((needs & NEED_LIVE) && !live->attempted) {
        set(c, DR_SKIP, "not checked: %s", live->skip_why);
    } else if ((needs & NEED_CUDA) && !live->cuda_ok) {
        set(c, DR_SKIP, "could not check: CUDA unavailable (%s)", live->cuda_err);
        next(c, "fix gate1.cuda_driver first");
    } else if ((needs & NEED_GPU) && !f->inv->ngpus) {
        set(c, DR_SKIP, "could not check: no GPU");
    } else if ((needs & NEED_VERBS) && !live->verbs_ok) {
        set(c, DR_SKIP, "could not check: libibverbs not usable");
        next(c, "fix gate1.verbs_reg_dmabuf first");
    } else if ((needs & NEED_NIC) && !f->inv->nnics) {
        set(c, DR_SKIP, "could not check: no RDMA device");
    } else {
        return 0;
    }
    return 1;
}

/* ---- gate 2 across two nodes: the ib_write_bw lines --------------------- */

/* The GID index for -x on a RoCE port, like NCCL's default
 * (NCCL_IB_ADDR_FAMILY=AF_INET): a RoCE v2 GID holding an IPv4 address
 * first, then any routable v2 GID, then any v2 GID, else the first GID;
 * -1 when the port has none. */
static int roce_gid_index(const struct dr_port *p)
{
    int idx = -1, best = 0;
    for (int i = 0; i < p->ngids; i++) {
        const struct dr_gid *gd = &p->gids[i];
        if (!strstr(gd->type, "v2"))
            continue;
        int score = !strncmp(gd->gid, "0000:0000:0000:0000:0000:ffff:", 30) ? 3
                    : strncmp(gd->gid, "fe80:", 5) != 0                     ? 2
                                                                            : 1;
        if (score > best) {
            best = score;
            idx = gd->index;
        }
    }
    if (idx < 0 && p->ngids)
        idx = p->gids[0].index;
    return idx;
}

__attribute__((format(printf, 2, 3))) static void add_cmd(struct dr_report *rep, const char *fmt,
                                                          ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->cmds[rep->ncmds++], sizeof(rep->cmds[0]), fmt, ap);
    va_end(ap);
}

static void gate2_commands(const struct dr_inventory *inv, const struct dr_topology *topo,
                           struct dr_report *rep)
{
    for (int g = 0; g < inv->ngpus && rep->ncmds + 4 <= DR_MAX_CMDS; g++) {
        int n = topo->nearest[g];
        if (n < 0)
            continue;
        const struct dr_nic *d = &inv->nics[n];
        int port = dr_active_port(d);
        if (port < 0)
            port = d->nports ? d->ports[0].num : 1;
        char gidopt[32] = "";
        for (int q = 0; q < d->nports; q++) {
            const struct dr_port *p = &d->ports[q];
            if (p->num != port || strcmp(p->link_layer, "Ethernet"))
                continue;
            int idx = roce_gid_index(p);
            if (idx >= 0)
                snprintf(gidopt, sizeof(gidopt), " -x %d", idx);
        }
        /* CUDA's default order is fastest-first; PCI_BUS_ID makes --use_cuda=N the Nth GPU
         * in PCI order, which is how doctor numbers them */
        int seen = 0; /* the host-memory baseline once per NIC */
        for (int h = 0; h < g; h++)
            seen |= topo->nearest[h] == n;
        if (!seen) {
            add_cmd(rep, "server (host memory):  ib_write_bw -d %s -i %d%s -a -F --report_gbits",
                    d->name, port, gidopt);
            add_cmd(rep,
                    "client (host memory):  ib_write_bw -d %s -i %d%s -a -F --report_gbits "
                    "SERVER",
                    d->name, port, gidopt);
        }
        add_cmd(rep,
                "server (gpu%d DMA-BUF): CUDA_DEVICE_ORDER=PCI_BUS_ID ib_write_bw --use_cuda=%d "
                "--use_cuda_dmabuf -d %s -i %d%s -a -F --report_gbits -q 1",
                g, g, d->name, port, gidopt);
        add_cmd(rep,
                "client (gpu%d DMA-BUF): CUDA_DEVICE_ORDER=PCI_BUS_ID ib_write_bw --use_cuda=%d "
                "--use_cuda_dmabuf -d %s -i %d%s -a -F --report_gbits -q 1 SERVER",
                g, g, d->name, port, gidopt);
    }
}

/* ---- the runner --------------------------------------------------------- */

void dr_checks_judge(const struct dr_inventory *inv, const struct dr_topology *topo,
                     const struct dr_live *live, const struct dr_options *opt,
                     struct dr_report *rep)
{
    memset(rep, 0, sizeof(*rep));
    const struct facts f = {inv, topo, live, opt};
    for (int i = 0; i < NCHECKS; i++) {
        const struct check_def *d = &checks[i];
        if (!selected(d, opt))
            continue;
        struct dr_check *c = &rep->checks[rep->nchecks++];
        c->id = d->id;
        c->gate = d->gate;
        c->title = d->title;
        if (!skip_unmet(c, d->needs, &f))
            d->judge(c, &f);
    }
    gate2_commands(inv, topo, rep);
    for (int i = 0; i < rep->nchecks; i++)
        rep->counts[rep->checks[i].status]++;
    rep->exit_code = rep->counts[DR_FAIL]                             ? DR_EXIT_FAIL
                     : (rep->counts[DR_WARN] || rep->counts[DR_SKIP]) ? DR_EXIT_WARN
                                                                      : DR_EXIT_PASS;
}

void dr_report_free(struct dr_report *rep)
{
    for (int i = 0; i < rep->nchecks; i++)
        for (int e = 0; e < rep->checks[i].nevidence; e++)
            free(rep->checks[i].evidence[e]);
    rep->nchecks = 0;
}

const struct dr_check *dr_report_find(const struct dr_report *rep, const char *id)
{
    for (int i = 0; i < rep->nchecks; i++)
        if (strcmp(rep->checks[i].id, id) == 0)
            return &rep->checks[i];
    return NULL;
}
