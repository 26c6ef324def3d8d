/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inventory.c — doctor's sysfs/procfs facts: NVIDIA module, peermem, GPUs,
 * RDMA devices with ports/GIDs/netdevs, /dev/infiniband.
 *
 * Every path is read under inv->root so fixture trees stand in for a node.
 * Device links are resolved with realpath() and the result must stay inside
 * the root; PCI chains are parsed from the resolved ".../devices/pciDDDD:BB/
 * <bdf>/<bdf>..." path, which is how the kernel lays out the PCI hierarchy.
 * Nothing here fails: unreadable facts stay empty / -1.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fingerprint.h"
#include "tools/cmd/doctor/doctor.h"

void dr_strlcpy(char *dst, const char *src, size_t len)
{
    if (!len)
        return;
    size_t n = strnlen(src, len - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void dr_append(char *dst, size_t len, const char *sep, const char *item)
{
    size_t used = strnlen(dst, len);
    if (used + 1 >= len)
        return;
    snprintf(dst + used, len - used, "%s%s", used ? sep : "", item);
}

int dr_read_line(const char *root, const char *path, char *buf, size_t len)
{
    char full[DR_PATH * 2];
    buf[0] = '\0';
    snprintf(full, sizeof(full), "%s%s", root, path);
    FILE *f = fopen(full, "re");
    if (!f)
        return errno;
    if (!fgets(buf, (int)len, f)) {
        int e = ferror(f) ? EIO : 0;
        fclose(f);
        buf[0] = '\0';
        return e ? e : ENODATA;
    }
    fclose(f);
    size_t n = strlen(buf);
    while (n && isspace((unsigned char)buf[n - 1]))
        buf[--n] = '\0';
    return 0;
}

int dr_exists(const char *root, const char *path)
{
    char full[DR_PATH * 2];
    struct stat st;
    snprintf(full, sizeof(full), "%s%s", root, path);
    return lstat(full, &st) == 0;
}

static int is_bdf(const char *s)
{
    unsigned d, b, dev, fn;
    char tail;
    return strlen(s) == 12 && sscanf(s, "%4x:%2x:%2x.%1x%c", &d, &b, &dev, &fn, &tail) == 4;
}

/* "4: ACTIVE" -> "ACTIVE" */
static void strip_num(char *s)
{
    char *c = strchr(s, ':');
    if (!c)
        return;
    c++;
    while (*c == ' ')
        c++;
    memmove(s, c, strlen(c) + 1);
}

/* Resolves root+link and fills pci from the resolved path.  Returns 0 when the
 * target is a PCI device under the root, ENOENT when absent, EXDEV when the
 * link leaves the root or is not a PCI path (virtual device). */
static int resolve_pci(const char *root, const char *link, struct dr_pci *pci)
{
    char full[DR_PATH * 2], real[PATH_MAX], rootreal[PATH_MAX] = "";
    memset(pci, 0, sizeof(*pci));
    pci->numa_node = -1;
    snprintf(full, sizeof(full), "%s%s", root, link);
    if (!realpath(full, real))
        return errno;
    size_t rl = 0;
    if (root[0]) {
        if (!realpath(root, rootreal))
            return errno;
        rl = strlen(rootreal);
        if (strncmp(real, rootreal, rl) != 0 || (real[rl] != '/' && real[rl] != '\0'))
            return EXDEV;
    }
    const char *p = strstr(real + rl, "/devices/");
    if (!p)
        return EXDEV;
    p += strlen("/devices/");
    if (strncmp(p, "pci", 3) != 0)
        return EXDEV;
    char copy[PATH_MAX];
    dr_strlcpy(copy, p, sizeof(copy));
    char *save = NULL;
    int first = 1;
    for (char *tok = strtok_r(copy, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (first) {
            dr_strlcpy(pci->root, tok, sizeof(pci->root));
            first = 0;
            continue;
        }
        if (!is_bdf(tok))
            break; /* e.g. ".../0000:17:00.0/infiniband/mlx5_0" stops at "infiniband" */
        if (pci->chain_len < DR_MAX_CHAIN)
            dr_strlcpy(pci->chain[pci->chain_len++], tok, sizeof(pci->chain[0]));
    }
    if (pci->chain_len == 0)
        return EXDEV;
    dr_strlcpy(pci->bdf, pci->chain[pci->chain_len - 1], sizeof(pci->bdf));

    char attr[DR_PATH], val[64];
    snprintf(attr, sizeof(attr), "/sys/bus/pci/devices/%s/numa_node", pci->bdf);
    if (dr_read_line(root, attr, val, sizeof(val)) == 0)
        pci->numa_node = atoi(val);
    snprintf(attr, sizeof(attr), "/sys/bus/pci/devices/%s/local_cpulist", pci->bdf);
    dr_read_line(root, attr, pci->local_cpulist, sizeof(pci->local_cpulist));
    snprintf(attr, sizeof(attr), "/sys/bus/pci/devices/%s/vendor", pci->bdf);
    dr_read_line(root, attr, pci->vendor, sizeof(pci->vendor));
    snprintf(attr, sizeof(attr), "/sys/bus/pci/devices/%s/device", pci->bdf);
    dr_read_line(root, attr, pci->device, sizeof(pci->device));
    snprintf(attr, sizeof(attr), "/sys/bus/pci/devices/%s/class", pci->bdf);
    dr_read_line(root, attr, pci->pci_class, sizeof(pci->pci_class));
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of a directory's entries (no "." / ".."); caller frees. */
static int list_dir(const char *root, const char *path, char ***out)
{
    char full[DR_PATH * 2];
    snprintf(full, sizeof(full), "%s%s", root, path);
    *out = NULL;
    DIR *d = opendir(full);
    if (!d)
        return 0;
    int n = 0, cap = 0;
    char **names = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(names, (size_t)cap * sizeof(*nn));
            if (!nn)
                break;
            names = nn;
        }
        names[n] = strdup(e->d_name);
        if (names[n])
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, (size_t)n, sizeof(*names), cmp_name);
    *out = names;
    return n;
}

static void free_list(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void collect_nvidia(struct dr_inventory *inv)
{
    const char *r = inv->root;
    char line[256];
    int have_proc = dr_read_line(r, "/proc/driver/nvidia/version", line, sizeof(line)) == 0;
    int have_mod = dr_exists(r, "/sys/module/nvidia");
    inv->nv_loaded = have_proc || have_mod;
    if (have_proc)
        dr_strlcpy(inv->nv_version_line, line, sizeof(inv->nv_version_line));
    dr_read_line(r, "/sys/module/nvidia/version", inv->nv_version, sizeof(inv->nv_version));
    dr_read_line(r, "/sys/module/nvidia/taint", inv->nv_taint, sizeof(inv->nv_taint));
    if (!inv->nv_version[0] && have_proc) {
        /* "NVRM version: NVIDIA UNIX ... Kernel Module  580.159.04  Release ..." */
        const char *p = strstr(line, "Kernel Module");
        if (p) {
            p += strlen("Kernel Module");
            const char *f = strstr(p, " for ");
            if (f && f - p < 4)
                p = strchr(f + 5, ' ') ? strchr(f + 5, ' ') : p;
            while (*p == ' ')
                p++;
            size_t n = strcspn(p, " ");
            if (n && n < sizeof(inv->nv_version) && isdigit((unsigned char)*p)) {
                memcpy(inv->nv_version, p, n);
                inv->nv_version[n] = '\0';
            }
        }
    }
    int says_open = have_proc && strstr(line, "Open Kernel Module") != NULL;
    int says_prop = have_proc && !says_open && strstr(line, "Kernel Module") != NULL;
    int taint_p = strchr(inv->nv_taint, 'P') != NULL;
    if (!inv->nv_loaded) {
        inv->nv_flavour = GTR_NV_ABSENT;
        snprintf(inv->nv_flavour_why, sizeof(inv->nv_flavour_why),
                 "no /proc/driver/nvidia/version and no /sys/module/nvidia");
    } else if (says_open && !taint_p) {
        inv->nv_flavour = GTR_NV_OPEN;
        snprintf(inv->nv_flavour_why, sizeof(inv->nv_flavour_why),
                 "/proc/driver/nvidia/version says \"Open Kernel Module\"%s",
                 inv->nv_taint[0] ? "; taint has no P (GPL/MIT licence)" : "");
    } else if (says_open && taint_p) {
        inv->nv_flavour = GTR_NV_UNKNOWN;
        snprintf(inv->nv_flavour_why, sizeof(inv->nv_flavour_why),
                 "contradiction: version says Open Kernel Module but taint \"%s\" has P "
                 "(proprietary licence)",
                 inv->nv_taint);
    } else if (says_prop || taint_p) {
        inv->nv_flavour = GTR_NV_PROPRIETARY;
        snprintf(inv->nv_flavour_why, sizeof(inv->nv_flavour_why), "%s%s%s",
                 says_prop ? "/proc/driver/nvidia/version has no \"Open\"" : "",
                 says_prop && taint_p ? "; " : "",
                 taint_p ? "/sys/module/nvidia/taint has P (proprietary licence)" : "");
    } else {
        inv->nv_flavour = GTR_NV_UNKNOWN;
        snprintf(inv->nv_flavour_why, sizeof(inv->nv_flavour_why),
                 "module present but /proc/driver/nvidia/version unreadable and taint \"%s\"",
                 inv->nv_taint);
    }

    inv->peermem_loaded = dr_exists(r, "/sys/module/nvidia_peermem");
    char **names;
    int n = list_dir(r, "/sys/kernel/mm/memory_peers", &names);
    for (int i = 0; i < n; i++)
        dr_append(inv->memory_peers, sizeof(inv->memory_peers), ",", names[i]);
    free_list(names, n);
}

static int cmp_pci(const struct dr_pci *a, const char *an, const struct dr_pci *b, const char *bn)
{
    if (a->bdf[0] && !b->bdf[0])
        return -1;
    if (!a->bdf[0] && b->bdf[0])
        return 1;
    int c = strcmp(a->bdf, b->bdf);
    return c ? c : strcmp(an, bn);
}

static int cmp_gpu(const void *a, const void *b)
{
    const struct dr_gpu *x = a, *y = b;
    return cmp_pci(&x->pci, "", &y->pci, "");
}

static int cmp_nic(const void *a, const void *b)
{
    const struct dr_nic *x = a, *y = b;
    return cmp_pci(&x->pci, x->name, &y->pci, y->name);
}

static void collect_gpus(struct dr_inventory *inv)
{
    char **names;
    int n = list_dir(inv->root, "/sys/bus/pci/devices", &names);
    for (int i = 0; i < n && inv->ngpus < DR_MAX_GPUS; i++) {
        char path[DR_PATH], vendor[16], cls[16];
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", names[i]);
        if (dr_read_line(inv->root, path, vendor, sizeof(vendor)) || strcmp(vendor, "0x10de"))
            continue;
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class", names[i]);
        /* 0x0300xx VGA, 0x0302xx 3D controller; NVIDIA's audio/USB functions are not GPUs */
        if (dr_read_line(inv->root, path, cls, sizeof(cls)) || strncmp(cls, "0x03", 4))
            continue;
        struct dr_gpu *g = &inv->gpus[inv->ngpus];
        memset(g, 0, sizeof(*g));
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", names[i]);
        if (resolve_pci(inv->root, path, &g->pci) != 0)
            continue;
        g->cuda_index = -1;
        g->dmabuf_attr = -1;
        snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", g->pci.bdf);
        char full[DR_PATH * 2];
        snprintf(full, sizeof(full), "%s%s", inv->root, path);
        FILE *f = fopen(full, "re");
        if (f) {
            char line[256];
            while (fgets(line, sizeof(line), f)) {
                if (strncmp(line, "Model:", 6) != 0)
                    continue;
                char *p = line + 6;
                while (isspace((unsigned char)*p))
                    p++;
                p[strcspn(p, "\n")] = '\0';
                dr_strlcpy(g->model, p, sizeof(g->model));
            }
            fclose(f);
        }
        inv->ngpus++;
    }
    free_list(names, n);
    qsort(inv->gpus, (size_t)inv->ngpus, sizeof(inv->gpus[0]), cmp_gpu);
}

static int gid_is_zero(const char *gid)
{
    for (const char *p = gid; *p; p++)
        if (*p != '0' && *p != ':')
            return 0;
    return 1;
}

static void collect_port(const char *root, const char *dev, int num, struct dr_port *p)
{
    char path[DR_PATH + 16];
    memset(p, 0, sizeof(*p));
    p->num = num;
#define PORT_ATTR(field, attr)                                                                     \
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/" attr, dev, num);             \
    dr_read_line(root, path, p->field, sizeof(p->field))
    PORT_ATTR(state, "state");
    PORT_ATTR(phys_state, "phys_state");
    PORT_ATTR(link_layer, "link_layer");
    PORT_ATTR(rate, "rate");
#undef PORT_ATTR
    strip_num(p->state);
    strip_num(p->phys_state);
    char dir[DR_PATH];
    snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports/%d/gids", dev, num);
    char **names;
    int n = list_dir(root, dir, &names);
    /* numeric order, not string order: gids 0..N */
    for (int idx = 0; idx < 256 && p->ngids < DR_MAX_GIDS; idx++) {
        int found = 0;
        for (int i = 0; i < n; i++)
            if (atoi(names[i]) == idx && isdigit((unsigned char)names[i][0]))
                found = 1;
        if (!found)
            continue;
        struct dr_gid *g = &p->gids[p->ngids];
        memset(g, 0, sizeof(*g));
        snprintf(path, sizeof(path), "%s/%d", dir, idx);
        /* the kernel refuses to read unpopulated RoCE GID entries (EINVAL) */
        if (dr_read_line(root, path, g->gid, sizeof(g->gid)) || gid_is_zero(g->gid))
            continue;
        g->index = idx;
        snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d", dev,
                 num, idx);
        dr_read_line(root, path, g->type, sizeof(g->type));
        snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d", dev,
                 num, idx);
        dr_read_line(root, path, g->ndev, sizeof(g->ndev));
        p->ngids++;
    }
    free_list(names, n);
}

static void collect_nics(struct dr_inventory *inv)
{
    char **names;
    int n = list_dir(inv->root, "/sys/class/infiniband", &names);
    for (int i = 0; i < n && inv->nnics < DR_MAX_NICS; i++) {
        struct dr_nic *d = &inv->nics[inv->nnics];
        memset(d, 0, sizeof(*d));
        dr_strlcpy(d->name, names[i], sizeof(d->name));
        d->verbs_index = -1;
        d->host_reg_errno = -1;
        char path[DR_PATH];
        snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", d->name);
        if (resolve_pci(inv->root, path, &d->pci) != 0) {
            memset(&d->pci, 0, sizeof(d->pci));
            d->pci.numa_node = -1;
            d->is_virtual = 1;
        }
#define DEV_ATTR(field, attr)                                                                      \
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/" attr, d->name);                       \
    dr_read_line(inv->root, path, d->field, sizeof(d->field))
        DEV_ATTR(fw_ver, "fw_ver");
        DEV_ATTR(node_type, "node_type");
        DEV_ATTR(hca_type, "hca_type");
        DEV_ATTR(board_id, "board_id");
#undef DEV_ATTR
        strip_num(d->node_type);
        char **ports;
        snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports", d->name);
        int np = list_dir(inv->root, path, &ports);
        for (int k = 0; k < np && d->nports < DR_MAX_PORTS; k++)
            if (isdigit((unsigned char)ports[k][0]))
                collect_port(inv->root, d->name, atoi(ports[k]), &d->ports[d->nports++]);
        free_list(ports, np);
        /* netdevs: the PCI function's net/ entries; for virtual devices (rxe)
         * the GID table's ndevs, else the "parent" attribute */
        if (!d->is_virtual) {
            char **nets;
            snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/net", d->pci.bdf);
            int nn = list_dir(inv->root, path, &nets);
            for (int k = 0; k < nn; k++)
                dr_append(d->netdevs, sizeof(d->netdevs), ",", nets[k]);
            free_list(nets, nn);
        }
        for (int k = 0; k < d->nports && !d->netdevs[0]; k++)
            for (int g = 0; g < d->ports[k].ngids; g++)
                if (d->ports[k].gids[g].ndev[0] && !strstr(d->netdevs, d->ports[k].gids[g].ndev))
                    dr_append(d->netdevs, sizeof(d->netdevs), ",", d->ports[k].gids[g].ndev);
        if (!d->netdevs[0]) {
            snprintf(path, sizeof(path), "/sys/class/infiniband/%s/parent", d->name);
            dr_read_line(inv->root, path, d->netdevs, sizeof(d->netdevs));
        }
        inv->nnics++;
    }
    free_list(names, n);
    qsort(inv->nics, (size_t)inv->nnics, sizeof(inv->nics[0]), cmp_nic);
}

void dr_inventory_collect(struct dr_inventory *inv, const char *root)
{
    memset(inv, 0, sizeof(*inv));
    if (!root) {
        root = getenv("GDRTRACE_SYSFS_ROOT");
        if (!root)
            root = "";
    }
    dr_strlcpy(inv->root, root, sizeof(inv->root));
    /* a trailing '/' would make "//sys" paths; harmless, but keep evidence tidy */
    size_t rl = strlen(inv->root);
    while (rl > 1 && inv->root[rl - 1] == '/')
        inv->root[--rl] = '\0';

    gt_fingerprint_collect(&inv->fp, inv->root);
    if (dr_read_line(inv->root, "/proc/sys/kernel/osrelease", inv->kernel_release,
                     sizeof(inv->kernel_release)) != 0)
        dr_strlcpy(inv->kernel_release, inv->fp.kernel_release, sizeof(inv->kernel_release));
    collect_nvidia(inv);
    collect_gpus(inv);
    collect_nics(inv);
    inv->dev_infiniband = dr_exists(inv->root, "/dev/infiniband");
    char **names;
    int n = list_dir(inv->root, "/dev/infiniband", &names);
    for (int i = 0; i < n; i++)
        dr_append(inv->uverbs, sizeof(inv->uverbs), ",", names[i]);
    free_list(names, n);
}
