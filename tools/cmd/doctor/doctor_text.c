/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doctor_text.c — doctor's two outputs: the human report and the JSON evidence
 * bundle (shape documented in docs/doctor.md; "format": 1).
 *
 * JSON invariants: keys appear in a fixed order, arrays in PCI order, every
 * string is escaped (sysfs text is not trusted to be clean), so the same
 * node gives byte-identical output apart from boot_id and what changed.
 */
#include <stdio.h>
#include <string.h>

#include "common/codes.h"
#include "common/fingerprint.h"
#include "tools/cmd/doctor/doctor.h"

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void jkv(FILE *f, const char *ind, const char *k, const char *v, int comma)
{
    fprintf(f, "%s\"%s\": ", ind, k);
    jstr(f, v);
    fputs(comma ? ",\n" : "\n", f);
}

static void jki(FILE *f, const char *ind, const char *k, long v, int comma)
{
    fprintf(f, "%s\"%s\": %ld%s\n", ind, k, v, comma ? "," : "");
}

static void json_pci(FILE *f, const char *ind, const struct dr_pci *p)
{
    jkv(f, ind, "pci", p->bdf, 1);
    jkv(f, ind, "root_complex", p->root, 1);
    fprintf(f, "%s\"pci_chain\": [", ind);
    for (int i = 0; i < p->chain_len; i++) {
        if (i)
            fputs(", ", f);
        jstr(f, p->chain[i]);
    }
    fputs("],\n", f);
    jki(f, ind, "numa_node", p->numa_node, 1);
    jkv(f, ind, "vendor", p->vendor, 1);
    jkv(f, ind, "device", p->device, 1);
}

static void json_fingerprint(FILE *f, const struct dr_inventory *inv)
{
    const struct gtr_fingerprint *fp = &inv->fp;
    fputs("  \"fingerprint\": {\n", f);
    jkv(f, "    ", "kernel_release", fp->kernel_release, 1);
    jkv(f, "    ", "boot_id", fp->boot_id, 1);
    jkv(f, "    ", "nvidia_version", fp->nvidia_version, 1);
    jkv(f, "    ", "nvidia_flavour", gt_fingerprint_flavour_name(fp->nvidia_flavour), 1);
    jki(f, "    ", "peermem_loaded", fp->peermem_loaded, 1);
    jki(f, "    ", "memory_peers", fp->memory_peers, 1);
    jki(f, "    ", "cuda_driver_version", fp->cuda_driver_version, 1);
    jkv(f, "    ", "rdma_devices", fp->rdma_devices, 1);
    jkv(f, "    ", "gpus", fp->gpus, 1);
    jkv(f, "    ", "cpu_model", fp->cpu_model, 0);
    fputs("  },\n", f);
}

static void json_nvidia_live(FILE *f, const struct dr_inventory *inv, const struct dr_live *live)
{
    fputs("  \"nvidia\": {\n", f);
    jki(f, "    ", "loaded", inv->nv_loaded, 1);
    jkv(f, "    ", "flavour", gt_fingerprint_flavour_name(inv->nv_flavour), 1);
    jkv(f, "    ", "flavour_evidence", inv->nv_flavour_why, 1);
    jkv(f, "    ", "version", inv->nv_version, 1);
    jkv(f, "    ", "version_line", inv->nv_version_line, 1);
    jkv(f, "    ", "taint", inv->nv_taint, 1);
    jki(f, "    ", "peermem_loaded", inv->peermem_loaded, 1);
    jkv(f, "    ", "memory_peers", inv->memory_peers, 0);
    fputs("  },\n", f);

    fputs("  \"live\": {\n", f);
    jki(f, "    ", "attempted", live->attempted, 1);
    jkv(f, "    ", "skipped_because", live->skip_why, 1);
    jki(f, "    ", "cuda_usable", live->cuda_ok, 1);
    jkv(f, "    ", "cuda_error", live->cuda_err, 1);
    jki(f, "    ", "cuda_driver_version", live->cuda_version, 1);
    jki(f, "    ", "cuda_device_count", live->cuda_count, 1);
    jki(f, "    ", "verbs_usable", live->verbs_ok, 1);
    jkv(f, "    ", "verbs_error", live->verbs_err, 1);
    jki(f, "    ", "verbs_has_reg_dmabuf_mr", live->verbs_has_reg_dmabuf, 1);
    jki(f, "    ", "verbs_device_count", live->verbs_count, 0);
    fputs("  },\n", f);
}

static void json_gpus(FILE *f, const struct dr_inventory *inv, const struct dr_topology *topo,
                      const struct dr_live *live)
{
    fputs("  \"gpus\": [", f);
    for (int g = 0; g < inv->ngpus; g++) {
        const struct dr_gpu *gp = &inv->gpus[g];
        fputs(g ? ",\n    {\n" : "\n    {\n", f);
        jki(f, "      ", "index", g, 1);
        json_pci(f, "      ", &gp->pci);
        jkv(f, "      ", "model", gp->model, 1);
        jki(f, "      ", "cuda_index", gp->cuda_index, 1);
        jki(f, "      ", "dmabuf_supported_attr", gp->dmabuf_attr, 1);
        int n = topo->nearest[g];
        jkv(f, "      ", "nearest_nic_pci", n >= 0 ? inv->nics[n].pci.bdf : "", 1);
        jkv(f, "      ", "nearest_nic", n >= 0 ? inv->nics[n].name : "", 1);
        jkv(f, "      ", "nearest_path", n >= 0 ? dr_path_name(topo->path[g][n]) : "", 1);
        jki(f, "      ", "export_rc", live->export_rc[g], 1);
        jkv(f, "      ", "export_error", live->export_err[g], 1);
        jkv(f, "      ", "export_exp_name", live->export_name[g], 0);
        fputs("    }", f);
    }
    fputs(inv->ngpus ? "\n  ],\n" : "],\n", f);
}

static void json_nics(FILE *f, const struct dr_inventory *inv)
{
    fputs("  \"rdma_devices\": [", f);
    for (int k = 0; k < inv->nnics; k++) {
        const struct dr_nic *d = &inv->nics[k];
        fputs(k ? ",\n    {\n" : "\n    {\n", f);
        jki(f, "      ", "index", k, 1);
        jkv(f, "      ", "name", d->name, 1);
        json_pci(f, "      ", &d->pci);
        jki(f, "      ", "virtual", d->is_virtual, 1);
        jkv(f, "      ", "fw_ver", d->fw_ver, 1);
        jkv(f, "      ", "node_type", d->node_type, 1);
        jkv(f, "      ", "hca_type", d->hca_type, 1);
        jkv(f, "      ", "board_id", d->board_id, 1);
        jkv(f, "      ", "netdevs", d->netdevs, 1);
        fputs("      \"ports\": [", f);
        for (int p = 0; p < d->nports; p++) {
            const struct dr_port *pt = &d->ports[p];
            fputs(p ? ",\n        {\n" : "\n        {\n", f);
            jki(f, "          ", "port", pt->num, 1);
            jkv(f, "          ", "state", pt->state, 1);
            jkv(f, "          ", "phys_state", pt->phys_state, 1);
            jkv(f, "          ", "link_layer", pt->link_layer, 1);
            jkv(f, "          ", "rate", pt->rate, 1);
            fputs("          \"gids\": [", f);
            for (int i = 0; i < pt->ngids; i++) {
                fprintf(f, "%s{\"index\": %d, \"gid\": ", i ? ", " : "", pt->gids[i].index);
                jstr(f, pt->gids[i].gid);
                fputs(", \"type\": ", f);
                jstr(f, pt->gids[i].type);
                fputs(", \"netdev\": ", f);
                jstr(f, pt->gids[i].ndev);
                fputs("}", f);
            }
            fputs("]\n        }", f);
        }
        fputs(d->nports ? "\n      ],\n" : "],\n", f);
        jkv(f, "      ", "dmabuf_probe", gt_probe_name(d->probe_state), 1);
        jki(f, "      ", "dmabuf_probe_errno", d->probe_errno, 1);
        jki(f, "      ", "host_reg_errno", d->host_reg_errno, 0);
        fputs("    }", f);
    }
    fputs(inv->nnics ? "\n  ],\n" : "],\n", f);
}

/* The GPU x NIC paths, then every registration the live probe tried. */
static void json_topology_regs(FILE *f, const struct dr_inventory *inv,
                               const struct dr_topology *topo, const struct dr_live *live)
{
    fputs("  \"topology\": [", f);
    int first = 1;
    for (int g = 0; g < inv->ngpus; g++)
        for (int k = 0; k < inv->nnics; k++) {
            fprintf(f, "%s{\"gpu\": %d, \"gpu_pci\": ", first ? "\n    " : ",\n    ", g);
            jstr(f, inv->gpus[g].pci.bdf);
            fprintf(f, ", \"nic\": %d, \"nic_pci\": ", k);
            jstr(f, inv->nics[k].pci.bdf);
            fputs(", \"nic_name\": ", f);
            jstr(f, inv->nics[k].name);
            fprintf(f, ", \"path\": \"%s\", \"nearest\": %d}", dr_path_name(topo->path[g][k]),
                    topo->nearest[g] == k);
            first = 0;
        }
    fputs(first ? "],\n" : "\n  ],\n", f);

    fputs("  \"registrations\": [", f);
    first = 1;
    static const char *const methods[] = {"dmabuf", "peermem", "vgem-dmabuf"};
    for (int pass = 0; pass < 3; pass++) {
        const struct dr_reg *arr = pass == 0 ? live->reg : pass == 1 ? live->peer : live->vgem;
        int n = pass == 0 ? live->nreg : pass == 1 ? live->npeer : live->nvgem;
        for (int i = 0; i < n; i++) {
            fprintf(f, "%s{\"method\": \"%s\", \"gpu\": %d, \"nic\": %d, \"nic_name\": ",
                    first ? "\n    " : ",\n    ", methods[pass], arr[i].gpu, arr[i].nic);
            jstr(f, inv->nics[arr[i].nic].name);
            fprintf(f, ", \"rc\": %d, \"error\": ", arr[i].rc);
            jstr(f, arr[i].err);
            fputs("}", f);
            first = 0;
        }
    }
    fputs(first ? "],\n" : "\n  ],\n", f);
}

static void json_checks(FILE *f, const struct dr_report *rep)
{
    fputs("  \"checks\": [", f);
    for (int i = 0; i < rep->nchecks; i++) {
        const struct dr_check *c = &rep->checks[i];
        fputs(i ? ",\n    {\n" : "\n    {\n", f);
        jkv(f, "      ", "id", c->id, 1);
        jki(f, "      ", "gate", c->gate, 1);
        jkv(f, "      ", "title", c->title, 1);
        jkv(f, "      ", "status", dr_status_name(c->status), 1);
        jkv(f, "      ", "summary", c->summary, 1);
        fputs("      \"evidence\": [", f);
        for (int e = 0; e < c->nevidence; e++) {
            fputs(e ? ",\n        " : "\n        ", f);
            jstr(f, c->evidence[e]);
        }
        fputs(c->nevidence ? "\n      ],\n" : "],\n", f);
        jkv(f, "      ", "next", c->next, 0);
        fputs("    }", f);
    }
    fputs(rep->nchecks ? "\n  ],\n" : "],\n", f);

    fputs("  \"gate2_commands\": [", f);
    for (int i = 0; i < rep->ncmds; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        jstr(f, rep->cmds[i]);
    }
    fputs(rep->ncmds ? "\n  ],\n" : "],\n", f);

    fputs("  \"summary\": {\n", f);
    jki(f, "    ", "pass", rep->counts[DR_PASS], 1);
    jki(f, "    ", "warn", rep->counts[DR_WARN], 1);
    jki(f, "    ", "fail", rep->counts[DR_FAIL], 1);
    jki(f, "    ", "skip", rep->counts[DR_SKIP], 1);
    jki(f, "    ", "exit_code", rep->exit_code, 0);
    fputs("  }\n}\n", f);
}

void dr_report_json(FILE *f, const struct dr_inventory *inv, const struct dr_topology *topo,
                    const struct dr_live *live, const struct dr_report *rep)
{
    fputs("{\n", f);
    jkv(f, "  ", "kind", "gdrtrace-doctor", 1);
    jki(f, "  ", "format", 1, 1);
    jkv(f, "  ", "tool_version", GDRTRACE_VERSION, 1);
    jkv(f, "  ", "sysfs_root", inv->root, 1);

    json_fingerprint(f, inv);
    json_nvidia_live(f, inv, live);
    json_gpus(f, inv, topo, live);
    json_nics(f, inv);
    json_topology_regs(f, inv, topo, live);
    json_checks(f, rep);
}

static const char *exit_words(int code)
{
    switch (code) {
    case DR_EXIT_PASS:
        return "every check passed";
    case DR_EXIT_WARN:
        return "warnings or unchecked items, no gate failed";
    default:
        return "a gate failed";
    }
}

void dr_report_text(FILE *f, const struct dr_inventory *inv, const struct dr_topology *topo,
                    const struct dr_live *live, const struct dr_report *rep)
{
    (void)topo;
    fprintf(f, "gdrtrace doctor %s: runbook gates 0-2 on %s\n", GDRTRACE_VERSION,
            inv->root[0] ? inv->root : "this node");
    if (inv->root[0])
        fprintf(f, "(GDRTRACE_SYSFS_ROOT=%s: sysfs/procfs/dev facts come from that tree)\n",
                inv->root);
    if (!live->attempted)
        fprintf(f, "(CUDA and verbs probes not run: %s)\n", live->skip_why);
    static const char *const heads[] = {"Gate 0: identity and topology",
                                        "Gate 1: DMA-BUF prerequisites",
                                        "Gate 2 (local half): GPU-memory registration"};
    int gate = -1;
    for (int i = 0; i < rep->nchecks; i++) {
        const struct dr_check *c = &rep->checks[i];
        if (c->gate != gate) {
            gate = c->gate;
            fprintf(f, "\n%s\n", heads[gate]);
        }
        fprintf(f, "  %-4s  %-24s %s: %s\n", dr_status_name(c->status), c->id, c->title,
                c->summary);
        for (int e = 0; e < c->nevidence; e++)
            fprintf(f, "          | %s\n", c->evidence[e]);
        if (c->status != DR_PASS && c->next[0])
            fprintf(f, "          next: %s\n", c->next);
    }
    if (rep->ncmds) {
        fprintf(f, "\nGate 2 across two nodes (fill SERVER with the peer's address; host memory "
                   "first, DMA-BUF only after it is stable):\n");
        for (int i = 0; i < rep->ncmds; i++)
            fprintf(f, "  %s\n", rep->cmds[i]);
    } else {
        fprintf(f, "\nGate 2 across two nodes: no GPU/NIC pair on this node, no ib_write_bw "
                   "command to propose.\n");
    }
    int nskip = 0;
    for (int i = 0; i < rep->nchecks; i++)
        nskip += rep->checks[i].status == DR_SKIP;
    if (nskip) {
        fprintf(f, "\nCould not check on this node:\n");
        for (int i = 0; i < rep->nchecks; i++)
            if (rep->checks[i].status == DR_SKIP)
                fprintf(f, "  %-24s %s\n", rep->checks[i].id, rep->checks[i].summary);
    }
    fprintf(f, "\nSummary: %d PASS, %d WARN, %d FAIL, %d SKIP -> exit %d (%s)\n",
            rep->counts[DR_PASS], rep->counts[DR_WARN], rep->counts[DR_FAIL], rep->counts[DR_SKIP],
            rep->exit_code, exit_words(rep->exit_code));
}
