/* SPDX-License-Identifier: Apache-2.0 */
/*
 * checks.c — doctor's judgement: every fact turned into PASS / WARN / FAIL /
 * SKIP with its evidence and, when not PASS, what to do next.
 *
 * Rules (docs/doctor.md has the table):
 *  - The list of checks and their ids is fixed (gate2.gpu_reg_peermem only
 *    with --peermem), so reports of two nodes line up.
 *  - FAIL: a prerequisite is known to be missing or a registration failed.
 *    SKIP: it could not be checked (no library, no device, probes skipped);
 *    the summary says why.  A SKIP is never a pass: it makes the exit code 1.
 *  - nvidia_peermem being absent is never evidence that DMA-BUF works; it
 *    only makes results attributable (gate1.single_path).
 *  - Exit code: 2 if any FAIL, else 1 if any WARN or SKIP, else 0.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl/gt_cuda.h"
#include "common/fingerprint.h"
#include "tools/doctor/doctor.h"

const char *dr_status_name(int s)
{
    static const char *const names[] = {"PASS", "WARN", "FAIL", "SKIP"};
    return s >= 0 && s <= 3 ? names[s] : "?";
}

static struct dr_check *add(struct dr_report *rep, const char *id, int gate, const char *title)
{
    if (rep->nchecks >= DR_MAX_CHECKS)
        abort(); /* a programming error: DR_MAX_CHECKS is sized for the fixed list */
    struct dr_check *c = &rep->checks[rep->nchecks++];
    memset(c, 0, sizeof(*c));
    c->id = id;
    c->gate = gate;
    c->title = title;
    return c;
}

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

static const char *errname(int e)
{
    switch (e) {
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    case EFAULT: return "EFAULT";
    case ENOMEM: return "ENOMEM";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOSYS: return "ENOSYS";
    case ENODEV: return "ENODEV";
    case ENOENT: return "ENOENT";
    default: return "errno";
    }
}

static const char *nic_label(const struct dr_nic *d, char *buf, size_t len)
{
    snprintf(buf, len, "%s@%s", d->name, d->pci.bdf[0] ? d->pci.bdf : "-");
    return buf;
}

static int active_port(const struct dr_nic *d)
{
    for (int p = 0; p < d->nports; p++)
        if (strcmp(d->ports[p].state, "ACTIVE") == 0)
            return d->ports[p].num;
    return -1;
}

static int parse_kernel(const char *rel, int *maj, int *min)
{
    return sscanf(rel, "%d.%d", maj, min) == 2 ? 0 : -1;
}

static void identity(const struct dr_inventory *inv, const struct dr_live *live,
                     struct dr_report *rep)
{
    struct dr_check *c = add(rep, "identity.kernel", 0, "kernel release");
    if (inv->kernel_release[0]) {
        set(c, DR_PASS, "%s", inv->kernel_release);
        ev(c, "%s/proc/sys/kernel/osrelease: %s", inv->root, inv->kernel_release);
    } else {
        set(c, DR_WARN, "kernel release unreadable");
        next(c, "check that %s/proc is mounted and readable", inv->root);
    }

    c = add(rep, "identity.nvidia_module", 0, "NVIDIA kernel module version and flavour");
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

    c = add(rep, "identity.peermem", 0, "nvidia_peermem state (recorded, not judged)");
    int peer = inv->peermem_loaded || inv->memory_peers[0];
    ev(c, "/sys/module/nvidia_peermem: %s", inv->peermem_loaded ? "present" : "absent");
    ev(c, "/sys/kernel/mm/memory_peers: %s", inv->memory_peers[0] ? inv->memory_peers : "(none)");
    set(c, DR_PASS, "%s", peer ? "legacy peer-memory path loaded" : "legacy peer-memory path not loaded");

    c = add(rep, "identity.cuda_driver", 0, "CUDA driver version");
    if (live->cuda_version > 0) {
        set(c, DR_PASS, "%d.%d (%d)", live->cuda_version / 1000, live->cuda_version % 1000 / 10,
            live->cuda_version);
        ev(c, "cuDriverGetVersion: %d", live->cuda_version);
    } else if (!live->attempted) {
        set(c, DR_SKIP, "not checked: %s", live->skip_why);
        next(c, "run doctor on the node itself (without GDRTRACE_SYSFS_ROOT / --no-live)");
    } else {
        set(c, DR_SKIP, "could not check: %s", live->cuda_err[0] ? live->cuda_err : "no version");
        next(c, "install the NVIDIA driver's libcuda.so.1 (or set GDRTRACE_CUDA_LIB)");
    }

    c = add(rep, "identity.gpus", 0, "GPUs by PCI address");
    for (int g = 0; g < inv->ngpus; g++) {
        const struct dr_gpu *gp = &inv->gpus[g];
        ev(c, "gpu%d %s numa %d %s%s%s cuda %d", g, gp->pci.bdf, gp->pci.numa_node,
           gp->pci.device, gp->model[0] ? " " : "", gp->model, gp->cuda_index);
    }
    if (inv->ngpus == 0) {
        set(c, DR_WARN, "no NVIDIA GPU on the PCI bus");
        ev(c, "%s/sys/bus/pci/devices: no device with vendor 0x10de and class 0x03xxxx",
           inv->root);
        next(c, "run doctor on a GPU node; inside a container, expose the GPUs and /sys");
    } else if (live->cuda_ok && live->cuda_count != inv->ngpus) {
        set(c, DR_WARN, "%d GPUs on the PCI bus, CUDA sees %d", inv->ngpus, live->cuda_count);
        next(c, "check CUDA_VISIBLE_DEVICES and the container's device list: unseen GPUs "
                "cannot be tested");
    } else {
        set(c, DR_PASS, "%d GPU%s", inv->ngpus, inv->ngpus == 1 ? "" : "s");
    }

    c = add(rep, "identity.rdma", 0, "RDMA devices by PCI address");
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
        set(c, DR_PASS, "%d device%s", inv->nnics, inv->nnics == 1 ? "" : "s");
    }
}

static void topology(const struct dr_inventory *inv, const struct dr_topology *topo,
                     struct dr_report *rep)
{
    struct dr_check *c = add(rep, "topology.gpu_nic", 0, "GPU/NIC PCI relationship (NCCL terms)");
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
        set(c, DR_WARN, "%d GPU%s without a NIC behind a PCIe switch (nearest is PHB/SYS/N/A)",
            far, far == 1 ? "" : "s");
        next(c, "NCCL's default NCCL_NET_GDR_LEVEL (PXB) disables GPU Direct RDMA beyond a PCIe "
                "switch: those GPUs will stage through host memory; choose GPU/NIC pairs from "
                "`nvidia-smi topo -m` for the canary");
    } else {
        set(c, DR_PASS, "every GPU has a NIC at PIX/PXB");
    }
}

static void gate1(const struct dr_inventory *inv, const struct dr_live *live,
                  struct dr_report *rep)
{
    struct dr_check *c = add(rep, "gate1.open_module", 1, "open NVIDIA kernel module loaded");
    ev(c, "flavour: %s (%s)", gt_fingerprint_flavour_name(inv->nv_flavour), inv->nv_flavour_why);
    switch (inv->nv_flavour) {
    case GTR_NV_OPEN:
        set(c, DR_PASS, "open kernel module %s", inv->nv_version);
        break;
    case GTR_NV_PROPRIETARY:
        set(c, DR_FAIL, "proprietary kernel module %s: DMA-BUF export of GPU memory needs the "
                        "open module", inv->nv_version);
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

    c = add(rep, "gate1.kernel", 1, "Linux kernel >= 5.12 (DMA-BUF MRs)");
    int maj = 0, min = 0;
    if (parse_kernel(inv->kernel_release, &maj, &min) != 0) {
        set(c, DR_WARN, "kernel release \"%s\" not understood", inv->kernel_release);
        next(c, "check `uname -r` by hand: ibv_reg_dmabuf_mr needs 5.12 or later");
    } else if (maj > 5 || (maj == 5 && min >= 12)) {
        set(c, DR_PASS, "%s", inv->kernel_release);
    } else {
        set(c, DR_FAIL, "%s is older than 5.12: the kernel has no DMA-BUF memory registration",
            inv->kernel_release);
        next(c, "move to a supported kernel >= 5.12 (or a vendor kernel with the backport) "
                "before anything else");
    }

    c = add(rep, "gate1.cuda_driver", 1, "CUDA driver >= 11.7 (cuMemGetHandleForAddressRange)");
    if (!live->attempted) {
        set(c, DR_SKIP, "not checked: %s", live->skip_why);
    } else if (live->cuda_version > 0) {
        ev(c, "cuDriverGetVersion: %d", live->cuda_version);
        if (live->cuda_version >= 11070) {
            set(c, DR_PASS, "%d.%d", live->cuda_version / 1000, live->cuda_version % 1000 / 10);
        } else {
            set(c, DR_FAIL, "%d.%d is older than 11.7", live->cuda_version / 1000,
                live->cuda_version % 1000 / 10);
            next(c, "upgrade the NVIDIA driver: the DMA-BUF export arrived with CUDA 11.7");
        }
    } else {
        set(c, DR_FAIL, "libcuda not usable: %s", live->cuda_err);
        next(c, "install the driver's user-space library (libcuda.so.1) matching the kernel "
                "module, or point GDRTRACE_CUDA_LIB at it");
    }

    c = add(rep, "gate1.cuda_dmabuf_attr", 1, "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED per GPU");
    if (!live->attempted) {
        set(c, DR_SKIP, "not checked: %s", live->skip_why);
    } else if (!live->cuda_ok) {
        set(c, DR_SKIP, "could not check: CUDA unavailable (%s)", live->cuda_err);
        next(c, "fix gate1.cuda_driver first");
    } else if (!inv->ngpus) {
        set(c, DR_SKIP, "could not check: no GPU");
    } else {
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
            set(c, DR_FAIL, "%d GPU%s report no DMA-BUF support", bad, bad == 1 ? "" : "s");
            next(c, "the driver refuses DMA-BUF export on these GPUs: load the open kernel "
                    "module (gate1.open_module) and check the GPU generation (Turing or newer)");
        } else if (unk) {
            set(c, DR_SKIP, "%d GPU%s not visible to CUDA", unk, unk == 1 ? "" : "s");
            next(c, "see identity.gpus: expose every GPU to this process");
        } else {
            set(c, DR_PASS, "all %d GPU%s", ok, ok == 1 ? "" : "s");
        }
    }

    c = add(rep, "gate1.verbs_reg_dmabuf", 1, "libibverbs exports ibv_reg_dmabuf_mr");
    if (!live->attempted) {
        set(c, DR_SKIP, "not checked: %s", live->skip_why);
    } else if (!live->verbs_ok) {
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

    c = add(rep, "gate1.dev_infiniband", 1, "/dev/infiniband present");
    ev(c, "%s/dev/infiniband: %s", inv->root,
       inv->dev_infiniband ? (inv->uverbs[0] ? inv->uverbs : "(empty)") : "absent");
    if (!inv->dev_infiniband || !strstr(inv->uverbs, "uverbs")) {
        set(c, DR_FAIL, "%s", inv->dev_infiniband ? "no uverbs device node" : "absent");
        next(c, "load ib_uverbs (and the NIC's RDMA driver); in a container, pass "
                "/dev/infiniband through");
    } else {
        set(c, DR_PASS, "%s", inv->uverbs);
    }

    c = add(rep, "gate1.rdma_active", 1, "an RDMA port is ACTIVE, with its netdev");
    int active = 0, nonet = 0;
    for (int k = 0; k < inv->nnics; k++) {
        const struct dr_nic *d = &inv->nics[k];
        int p = active_port(d);
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
        set(c, DR_FAIL, "no ACTIVE port on %d device%s", inv->nnics, inv->nnics == 1 ? "" : "s");
        next(c, "bring the links up (`rdma link`, cabling, subnet manager for IB) before any "
                "GPU test");
    } else if (active < inv->nnics || nonet) {
        set(c, DR_WARN, "%d of %d devices ACTIVE%s", active, inv->nnics,
            nonet ? "; a RoCE port without a netdev" : "");
        next(c, "run the canary only on ACTIVE ports; check the others with `rdma link`");
    } else {
        set(c, DR_PASS, "all %d device%s ACTIVE", active, active == 1 ? "" : "s");
    }

    c = add(rep, "gate1.dmabuf_probe", 1, "per-device DMA-BUF probe (ibv_reg_dmabuf_mr fd=-1)");
    if (!live->attempted) {
        set(c, DR_SKIP, "not checked: %s", live->skip_why);
    } else if (!live->verbs_ok) {
        set(c, DR_SKIP, "could not check: libibverbs not usable");
        next(c, "fix gate1.verbs_reg_dmabuf first");
    } else if (!inv->nnics) {
        set(c, DR_SKIP, "could not check: no RDMA device");
    } else {
        int sup = 0, uns = 0, unk = 0;
        for (int k = 0; k < inv->nnics; k++) {
            const struct dr_nic *d = &inv->nics[k];
            char lbl[64];
            if (d->verbs_index < 0) {
                ev(c, "%s: not listed by ibv_get_device_list", nic_label(d, lbl, sizeof(lbl)));
                unk++;
                continue;
            }
            const char *st = d->probe_state == GTR_PROBE_SUPPORTED     ? "supported"
                             : d->probe_state == GTR_PROBE_UNSUPPORTED ? "unsupported"
                             : d->probe_state == GTR_PROBE_ABSENT      ? "absent"
                                                                       : "unknown";
            ev(c, "%s: %s (errno %d %s: %s)", nic_label(d, lbl, sizeof(lbl)), st, d->probe_errno,
               errname(d->probe_errno), strerror(d->probe_errno));
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
            set(c, DR_PASS, "all %d device%s", sup, sup == 1 ? "" : "s");
        }
    }

    c = add(rep, "gate1.single_path", 1, "one GPU registration path (results attributable)");
    int peer = inv->peermem_loaded || inv->memory_peers[0];
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
        set(c, DR_PASS, "peer-memory path not loaded: a GPU registration on this node can only be "
                        "DMA-BUF (this alone proves nothing about DMA-BUF working)");
    }
}

static void gate2(const struct dr_inventory *inv, const struct dr_topology *topo,
                  const struct dr_live *live, const struct dr_options *opt, struct dr_report *rep)
{
    char lbl[64];
    struct dr_check *c = add(rep, "gate2.cuda_export", 2, "GPU memory exported as DMA-BUF");
    if (!live->attempted) {
        set(c, DR_SKIP, "not checked: %s", live->skip_why);
    } else if (!live->cuda_ok) {
        set(c, DR_SKIP, "could not check: CUDA unavailable (%s)", live->cuda_err);
        next(c, "fix gate1.cuda_driver first");
    } else if (!inv->ngpus) {
        set(c, DR_SKIP, "could not check: no GPU");
    } else {
        int ok = 0, bad = 0, skip = 0;
        for (int g = 0; g < inv->ngpus; g++) {
            if (live->export_rc[g] < 0) {
                ev(c, "gpu%d %s: not visible to CUDA", g, inv->gpus[g].pci.bdf);
                skip++;
            } else if (live->export_rc[g] == 0 && !strcmp(live->export_name[g], "nv_dmabuf")) {
                ev(c, "gpu%d %s: %zu bytes exported, fdinfo exp_name: %s", g,
                   inv->gpus[g].pci.bdf, opt->reg_size, live->export_name[g]);
                ok++;
            } else if (live->export_rc[g] == 0) {
                ev(c, "gpu%d %s: exported, but fdinfo exp_name is \"%s\", not nv_dmabuf", g,
                   inv->gpus[g].pci.bdf, live->export_name[g]);
                bad++;
            } else {
                ev(c, "gpu%d %s: %s", g, inv->gpus[g].pci.bdf, live->export_err[g]);
                bad++;
            }
        }
        if (bad) {
            set(c, DR_FAIL, "%d of %d GPUs could not export an nv_dmabuf", bad, inv->ngpus);
            next(c, "cuMemGetHandleForAddressRange needs the open kernel module and CUDA >= "
                    "11.7 (gate 1); with both present, report the error above to NVIDIA");
        } else if (skip) {
            set(c, DR_SKIP, "%d GPU%s not visible to CUDA", skip, skip == 1 ? "" : "s");
        } else {
            set(c, DR_PASS, "%d GPU%s exported nv_dmabuf", ok, ok == 1 ? "" : "s");
        }
    }

    c = add(rep, "gate2.host_reg", 2, "host memory registers on each device (negative control)");
    if (!live->attempted) {
        set(c, DR_SKIP, "not checked: %s", live->skip_why);
    } else if (!live->verbs_ok || !inv->nnics) {
        set(c, DR_SKIP, "could not check: %s", !live->verbs_ok ? "libibverbs not usable"
                                                               : "no RDMA device");
    } else {
        int ok = 0, bad = 0, skip = 0;
        for (int k = 0; k < inv->nnics; k++) {
            const struct dr_nic *d = &inv->nics[k];
            nic_label(d, lbl, sizeof(lbl));
            if (d->host_reg_errno < 0) {
                ev(c, "%s: not tried (not listed by libibverbs)", lbl);
                skip++;
            } else if (d->host_reg_errno == 0) {
                ev(c, "%s: ibv_reg_mr(host, %zu bytes) ok", lbl, opt->reg_size);
                ok++;
            } else {
                ev(c, "%s: ibv_reg_mr(host, %zu bytes): %s (%s)", lbl, opt->reg_size,
                   strerror(d->host_reg_errno), errname(d->host_reg_errno));
                bad++;
            }
        }
        if (bad) {
            set(c, DR_FAIL, "host memory registration fails on %d device%s", bad,
                bad == 1 ? "" : "s");
            next(c, "fix verbs before blaming DMA-BUF: check `ulimit -l` (memlock), the "
                    "device's driver and permissions on /dev/infiniband");
        } else if (skip) {
            set(c, DR_SKIP, "%d device%s not tried", skip, skip == 1 ? "" : "s");
        } else {
            set(c, DR_PASS, "all %d device%s", ok, ok == 1 ? "" : "s");
        }
    }

    c = add(rep, "gate2.gpu_reg_dmabuf", 2, "GPU DMA-BUF registered on each device, nearest first");
    int exported = 0;
    for (int g = 0; g < inv->ngpus; g++)
        exported += live->export_rc[g] == 0;
    if (!live->attempted) {
        set(c, DR_SKIP, "not checked: %s", live->skip_why);
    } else if (!exported || !live->nreg) {
        set(c, DR_SKIP, "could not check: %s",
            !exported ? "no GPU memory exported (see gate2.cuda_export)"
                      : "no RDMA device open (see identity.rdma, gate1.dmabuf_probe)");
        next(c, "fix the checks named above first");
    } else {
        int near_bad = 0, other_bad = 0, ok = 0;
        for (int i = 0; i < live->nreg; i++) {
            const struct dr_reg *r = &live->reg[i];
            int is_near = topo->nearest[r->gpu] == r->nic;
            nic_label(&inv->nics[r->nic], lbl, sizeof(lbl));
            if (r->rc == 0)
                ev(c, "gpu%d -> %s (%s%s): registered", r->gpu, lbl,
                   dr_path_name(topo->path[r->gpu][r->nic]), is_near ? ", nearest" : "");
            else
                ev(c, "gpu%d -> %s (%s%s): %s (%s)", r->gpu, lbl,
                   dr_path_name(topo->path[r->gpu][r->nic]), is_near ? ", nearest" : "", r->err,
                   errname(r->rc));
            if (r->rc == 0)
                ok++;
            else if (is_near)
                near_bad++;
            else
                other_bad++;
        }
        if (near_bad) {
            set(c, DR_FAIL, "%d GPU%s cannot register DMA-BUF memory on the nearest NIC",
                near_bad, near_bad == 1 ? "" : "s");
            next(c, "EOPNOTSUPP: the NIC driver has no DMA-BUF MRs; EFAULT/EINVAL: kernel or "
                    "PCIe P2P problem (check ACS and the P2P runbook); host memory must pass first "
                    "(gate2.host_reg)");
        } else if (other_bad) {
            set(c, DR_WARN, "nearest NICs register; %d other pair%s fail", other_bad,
                other_bad == 1 ? "" : "s");
            next(c, "pairs beyond the nearest NIC are not used by NCCL by default; keep the "
                    "canary on the pairs that register");
        } else {
            set(c, DR_PASS, "%d GPU/NIC pair%s registered", ok, ok == 1 ? "" : "s");
        }
    }

    if (opt->vgem) {
        c = add(rep, "gate2.vgem_reg_dmabuf", 2,
                "a vgem dma-buf registered on each device (--dmabuf-source=vgem)");
        if (!live->attempted) {
            set(c, DR_SKIP, "not checked: %s", live->skip_why);
        } else if (live->vgem_rc != 0) {
            set(c, DR_SKIP, "could not check: %s", live->vgem_err);
            next(c, "modprobe vgem (it gives a dma-buf without a GPU)");
        } else if (!live->nvgem) {
            set(c, DR_SKIP, "could not check: no RDMA device open");
        } else {
            ev(c, "%s exported a dma-buf, fdinfo exp_name: %s", live->vgem_card,
               live->vgem_exp_name);
            int ok = 0, bad = 0;
            for (int i = 0; i < live->nvgem; i++) {
                const struct dr_reg *r = &live->vgem[i];
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
                set(c, DR_PASS, "%d device%s registered a real dma-buf", ok, ok == 1 ? "" : "s");
            }
        }
    }

    if (opt->peermem) {
        c = add(rep, "gate2.gpu_reg_peermem", 2, "legacy: ibv_reg_mr on the GPU address (--peermem)");
        if (!live->attempted) {
            set(c, DR_SKIP, "not checked: %s", live->skip_why);
        } else if (!live->npeer) {
            set(c, DR_SKIP, "could not check: no GPU buffer or no RDMA device");
        } else {
            int ok = 0, bad = 0;
            for (int i = 0; i < live->npeer; i++) {
                const struct dr_reg *r = &live->peer[i];
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
                set(c, DR_FAIL, "%d pair%s refused the GPU address", bad, bad == 1 ? "" : "s");
                next(c, "expected without nvidia_peermem (EFAULT); for a legacy baseline, load "
                        "it: `sudo modprobe nvidia-peermem`");
            } else {
                set(c, DR_PASS, "%d pair%s registered through the legacy path", ok,
                    ok == 1 ? "" : "s");
            }
        }
    }
}

static void gate2_commands(const struct dr_inventory *inv, const struct dr_topology *topo,
                           struct dr_report *rep)
{
    for (int g = 0; g < inv->ngpus && rep->ncmds + 4 <= DR_MAX_CMDS; g++) {
        int n = topo->nearest[g];
        if (n < 0)
            continue;
        const struct dr_nic *d = &inv->nics[n];
        int port = active_port(d);
        if (port < 0)
            port = d->nports ? d->ports[0].num : 1;
        char gidopt[32] = "";
        for (int q = 0; q < d->nports; q++) {
            const struct dr_port *p = &d->ports[q];
            if (p->num != port || strcmp(p->link_layer, "Ethernet"))
                continue;
            /* like NCCL's default (NCCL_IB_ADDR_FAMILY=AF_INET): a RoCE v2 GID holding an
             * IPv4 address first, then any routable v2 GID, then any v2 GID */
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
            if (idx >= 0)
                snprintf(gidopt, sizeof(gidopt), " -x %d", idx);
        }
        /* CUDA's default order is fastest-first; PCI_BUS_ID makes --use_cuda=N the Nth GPU
         * in PCI order, which is how doctor numbers them */
        int seen = 0; /* the host-memory baseline once per NIC */
        for (int h = 0; h < g; h++)
            seen |= topo->nearest[h] == n;
        if (!seen) {
            snprintf(rep->cmds[rep->ncmds++], sizeof(rep->cmds[0]),
                     "server (host memory):  ib_write_bw -d %s -i %d%s -a -F --report_gbits",
                     d->name, port, gidopt);
            snprintf(rep->cmds[rep->ncmds++], sizeof(rep->cmds[0]),
                     "client (host memory):  ib_write_bw -d %s -i %d%s -a -F --report_gbits "
                     "SERVER", d->name, port, gidopt);
        }
        snprintf(rep->cmds[rep->ncmds++], sizeof(rep->cmds[0]),
                 "server (gpu%d DMA-BUF): CUDA_DEVICE_ORDER=PCI_BUS_ID ib_write_bw --use_cuda=%d "
                 "--use_cuda_dmabuf -d %s -i %d%s -a -F --report_gbits -q 1",
                 g, g, d->name, port, gidopt);
        snprintf(rep->cmds[rep->ncmds++], sizeof(rep->cmds[0]),
                 "client (gpu%d DMA-BUF): CUDA_DEVICE_ORDER=PCI_BUS_ID ib_write_bw --use_cuda=%d "
                 "--use_cuda_dmabuf -d %s -i %d%s -a -F --report_gbits -q 1 SERVER",
                 g, g, d->name, port, gidopt);
    }
}

void dr_checks_judge(const struct dr_inventory *inv, const struct dr_topology *topo,
                     const struct dr_live *live, const struct dr_options *opt,
                     struct dr_report *rep)
{
    memset(rep, 0, sizeof(*rep));
    identity(inv, live, rep);
    topology(inv, topo, rep);
    gate1(inv, live, rep);
    gate2(inv, topo, live, opt, rep);
    gate2_commands(inv, topo, rep);
    for (int i = 0; i < rep->nchecks; i++)
        rep->counts[rep->checks[i].status]++;
    rep->exit_code = rep->counts[DR_FAIL]                          ? DR_EXIT_FAIL
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
