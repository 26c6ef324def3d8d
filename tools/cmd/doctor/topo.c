/* SPDX-License-Identifier: Apache-2.0 */
/*
 * topo.c — the PCI relationship of a GPU and a NIC in NCCL's terms, read from
 * their sysfs device paths.
 *
 * A device's path is root complex "pciDDDD:BB" then the chain of bridges
 * (root port, switch upstream port, switch downstream port, ...) down to the
 * device.  NCCL folds a PCIe switch (one upstream + its downstream ports)
 * into one node, so:
 *   - different root complexes: PHB when both sit on the same CPU socket
 *     (same NUMA node, or same local_cpulist when NUMA is unknown), else SYS;
 *   - same root complex but no shared bridge: PHB (the path crosses the host
 *     bridge);
 *   - a shared bridge: below it each side has its own bridges; when each side
 *     has at most one (the downstream port of the shared switch) the path
 *     crosses one switch: PIX; more: PXB.
 * This matches `nvidia-smi topo -m` on the layouts we know (one switch per
 * GPU/NIC pair = PIX; nested switches = PXB).  It is a judgement from sysfs,
 * not NCCL's own computation; NCCL_TOPO_DUMP_FILE gives NCCL's.
 */
#include <string.h>

#include "tools/cmd/doctor/doctor.h"

const char *dr_path_name(int path)
{
    static const char *const names[] = {"PIX", "PXB", "PHB", "SYS", "N/A"};
    return path >= 0 && path <= DR_PATH_NA ? names[path] : "?";
}

int dr_topo_path(const struct dr_pci *a, const struct dr_pci *b)
{
    if (!a->bdf[0] || !b->bdf[0])
        return DR_PATH_NA;
    if (strcmp(a->root, b->root) != 0) {
        if (a->numa_node >= 0 && b->numa_node >= 0)
            return a->numa_node == b->numa_node ? DR_PATH_PHB : DR_PATH_SYS;
        if (a->local_cpulist[0] && b->local_cpulist[0])
            return strcmp(a->local_cpulist, b->local_cpulist) == 0 ? DR_PATH_PHB : DR_PATH_SYS;
        return DR_PATH_PHB;
    }
    int common = 0;
    /* the devices themselves are the last chain entries; only bridges count */
    while (common < a->chain_len - 1 && common < b->chain_len - 1 &&
           strcmp(a->chain[common], b->chain[common]) == 0)
        common++;
    if (common == 0)
        return DR_PATH_PHB;
    int below_a = a->chain_len - 1 - common; /* bridges on a's side below the shared one */
    int below_b = b->chain_len - 1 - common;
    return below_a <= 1 && below_b <= 1 ? DR_PATH_PIX : DR_PATH_PXB;
}

int dr_active_port(const struct dr_nic *d)
{
    for (int p = 0; p < d->nports; p++)
        if (strcmp(d->ports[p].state, "ACTIVE") == 0)
            return d->ports[p].num;
    return -1;
}

void dr_topo_compute(const struct dr_inventory *inv, struct dr_topology *topo)
{
    memset(topo, 0, sizeof(*topo));
    for (int g = 0; g < inv->ngpus; g++) {
        topo->nearest[g] = -1;
        for (int n = 0; n < inv->nnics; n++) {
            topo->path[g][n] = dr_topo_path(&inv->gpus[g].pci, &inv->nics[n].pci);
            topo->order[g][n] = n;
        }
        /* insertion sort by (path, a NIC with an ACTIVE port first): stable,
         * so otherwise equal NICs keep PCI order */
        for (int i = 1; i < inv->nnics; i++) {
            int v = topo->order[g][i], j = i;
            while (j > 0) {
                int u = topo->order[g][j - 1];
                int u_active = dr_active_port(&inv->nics[u]) >= 0;
                int v_active = dr_active_port(&inv->nics[v]) >= 0;
                if (topo->path[g][u] < topo->path[g][v] ||
                    (topo->path[g][u] == topo->path[g][v] && u_active >= v_active))
                    break;
                topo->order[g][j] = u;
                j--;
            }
            topo->order[g][j] = v;
        }
        if (inv->nnics)
            topo->nearest[g] = topo->order[g][0];
    }
}
