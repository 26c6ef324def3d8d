/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fingerprint.c — collects the node fingerprint (see fingerprint.h).
 *
 * Owns: reading identity facts from /proc and /sys under a root prefix, and
 * comparing two fingerprints field by field.
 *
 * Invariants:
 *  - Collection never fails and never aborts: every unreadable fact stays
 *    empty (strings), 0 (flags), GTR_NV_UNKNOWN/ABSENT or -1 (CUDA).
 *  - Every string written into *fp is NUL-terminated within its array;
 *    lists are cut at an entry boundary, never mid-entry.
 *  - With a non-empty root (a test fixture) nothing is read from the live
 *    system: no uname(), no libcuda — the fixture alone decides.
 *  - Lists (RDMA devices, GPUs) are sorted so that two nodes with the same
 *    hardware give byte-identical strings.
 */
#include "common/fingerprint.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define FP_MAX_LIST 64 /* entries considered per list; more are not expected on one node */

static void fp_path(char *out, size_t n, const char *root, const char *path)
{
    snprintf(out, n, "%s%s", root, path);
}

/* Reads the first line of root+path into buf (without the newline).
 * Returns 0 on success, -1 if the file cannot be read. */
static int read_line(const char *root, const char *path, char *buf, size_t n)
{
    char p[PATH_MAX];
    fp_path(p, sizeof(p), root, path);
    FILE *f = fopen(p, "re");
    if (!f)
        return -1;
    int rc = -1;
    if (fgets(buf, (int)n, f)) {
        buf[strcspn(buf, "\r\n")] = '\0';
        rc = 0;
    }
    fclose(f);
    return rc;
}

static int path_exists(const char *root, const char *path)
{
    char p[PATH_MAX];
    struct stat st;
    fp_path(p, sizeof(p), root, path);
    return lstat(p, &st) == 0;
}

/* Truncating copy; always terminates dst (n > 0). */
static void copy_str(char *dst, size_t n, const char *src)
{
    size_t len = strnlen(src, n - 1);
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static int is_version_token(const char *t)
{
    /* digits '.' digits [ '.' digits ... ] */
    int dots = 0, digits = 0;
    for (; *t; t++) {
        if (isdigit((unsigned char)*t))
            digits++;
        else if (*t == '.' && digits)
            dots++, digits = 0;
        else
            return 0;
    }
    return dots >= 1 && digits > 0;
}

static void collect_nvidia(struct gtr_fingerprint *fp, const char *root)
{
    char line[512];
    if (read_line(root, "/proc/driver/nvidia/version", line, sizeof(line)) == 0) {
        /* "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release ..."
         * "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..." */
        fp->nvidia_flavour = strstr(line, "Open Kernel Module") ? GTR_NV_OPEN : GTR_NV_PROPRIETARY;
        char *save = NULL;
        for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
            if (is_version_token(t)) {
                copy_str(fp->nvidia_version, sizeof(fp->nvidia_version), t);
                break;
            }
        }
        return;
    }
    if (!path_exists(root, "/sys/module/nvidia")) {
        fp->nvidia_flavour = GTR_NV_ABSENT;
        return;
    }
    /* Module loaded but /proc/driver/nvidia hidden (some containers): the
     * version is still in sysfs, the flavour is not knowable from here. */
    fp->nvidia_flavour = GTR_NV_UNKNOWN;
    if (read_line(root, "/sys/module/nvidia/version", line, sizeof(line)) == 0)
        copy_str(fp->nvidia_version, sizeof(fp->nvidia_version), line);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Joins sorted entries with ',' into out, stopping at an entry boundary. */
static void join_list(char *out, size_t n, char **items, int count)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < count; i++) {
        size_t need = strlen(items[i]) + (len ? 1 : 0);
        if (len + need + 1 > n)
            break;
        len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "", items[i]);
    }
}

static int is_pci_bdf(const char *s)
{
    unsigned dom, bus, dev, fn;
    char tail;
    return sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4;
}

/* Sort key: "0<pci>\t<name>@<pci>" for devices with a PCI address, "1<name>\t<name>@-"
 * otherwise, so devices without one (rxe, siw) come last; the part after the
 * tab is what is printed. */
static void collect_rdma(struct gtr_fingerprint *fp, const char *root)
{
    char p[PATH_MAX];
    fp_path(p, sizeof(p), root, "/sys/class/infiniband");
    DIR *d = opendir(p);
    if (!d)
        return;
    char *items[FP_MAX_LIST];
    int count = 0;
    struct dirent *de;
    while ((de = readdir(d)) && count < FP_MAX_LIST) {
        if (de->d_name[0] == '.')
            continue;
        char link[PATH_MAX], target[PATH_MAX], rel[PATH_MAX];
        snprintf(rel, sizeof(rel), "/sys/class/infiniband/%.200s/device", de->d_name);
        fp_path(link, sizeof(link), root, rel);
        ssize_t k = readlink(link, target, sizeof(target) - 1);
        const char *pci = NULL;
        if (k > 0) {
            target[k] = '\0';
            const char *base = strrchr(target, '/');
            base = base ? base + 1 : target;
            if (is_pci_bdf(base))
                pci = base;
        }
        char buf[256];
        if (pci)
            snprintf(buf, sizeof(buf), "0%.32s\t%.64s@%.32s", pci, de->d_name, pci);
        else
            snprintf(buf, sizeof(buf), "1%.64s\t%.64s@-", de->d_name, de->d_name);
        items[count] = strdup(buf);
        if (items[count])
            count++;
    }
    closedir(d);
    qsort(items, (size_t)count, sizeof(items[0]), cmp_str);
    char *shown[FP_MAX_LIST];
    for (int i = 0; i < count; i++)
        shown[i] = strchr(items[i], '\t') + 1;
    join_list(fp->rdma_devices, sizeof(fp->rdma_devices), shown, count);
    for (int i = 0; i < count; i++)
        free(items[i]);
}

static void collect_gpus(struct gtr_fingerprint *fp, const char *root)
{
    char p[PATH_MAX];
    fp_path(p, sizeof(p), root, "/sys/bus/pci/devices");
    DIR *d = opendir(p);
    if (!d)
        return;
    char *items[FP_MAX_LIST];
    int count = 0;
    struct dirent *de;
    while ((de = readdir(d)) && count < FP_MAX_LIST) {
        if (de->d_name[0] == '.' || !is_pci_bdf(de->d_name))
            continue;
        char rel[PATH_MAX], vendor[32], cls[32];
        snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%.64s/vendor", de->d_name);
        if (read_line(root, rel, vendor, sizeof(vendor)) != 0)
            continue;
        snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%.64s/class", de->d_name);
        if (read_line(root, rel, cls, sizeof(cls)) != 0)
            continue;
        unsigned long v = strtoul(vendor, NULL, 16), c = strtoul(cls, NULL, 16);
        if (v != 0x10de || (c >> 16) != 0x03) /* NVIDIA, display controller */
            continue;
        items[count] = strdup(de->d_name);
        if (items[count])
            count++;
    }
    closedir(d);
    qsort(items, (size_t)count, sizeof(items[0]), cmp_str);
    join_list(fp->gpus, sizeof(fp->gpus), items, count);
    for (int i = 0; i < count; i++)
        free(items[i]);
}

static void collect_cpu(struct gtr_fingerprint *fp, const char *root)
{
    char p[PATH_MAX];
    fp_path(p, sizeof(p), root, "/proc/cpuinfo");
    FILE *f = fopen(p, "re");
    if (!f)
        return;
    static const char *const keys[] = {"model name", "cpu model", "Model", NULL};
    char line[512], found[3][64] = {"", "", ""};
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        for (int k = 0; keys[k]; k++) {
            size_t kl = strlen(keys[k]);
            if (strncmp(line, keys[k], kl) != 0 ||
                (line[kl] != ' ' && line[kl] != '\t' && line[kl] != ':'))
                continue;
            if (found[k][0])
                continue;
            char *v = colon + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            v[strcspn(v, "\r\n")] = '\0';
            copy_str(found[k], sizeof(found[k]), v);
        }
        if (found[0][0])
            break; /* x86: the first CPU's model name is enough */
    }
    fclose(f);
    for (int k = 0; k < 3; k++) {
        if (found[k][0]) {
            copy_str(fp->cpu_model, sizeof(fp->cpu_model), found[k]);
            break;
        }
    }
}

/* cuDriverGetVersion needs no cuInit and no GPU.  libcuda stays loaded: the
 * plugin loads it anyway, and unloading a driver library mid-process is
 * riskier than the memory it holds. */
static int cuda_driver_version(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    int (*get)(int *) = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
    int v = -1;
    if (!get || get(&v) != 0 || v <= 0)
        v = -1;
    return v;
}

void gt_fingerprint_collect(struct gtr_fingerprint *fp, const char *root)
{
    memset(fp, 0, sizeof(*fp));
    fp->cuda_driver_version = -1;
    if (!root) {
        root = getenv("GDRTRACE_SYSFS_ROOT");
        if (!root)
            root = "";
    }
    int live = root[0] == '\0';

    if (read_line(root, "/proc/sys/kernel/osrelease", fp->kernel_release,
                  sizeof(fp->kernel_release)) != 0) {
        fp->kernel_release[0] = '\0';
        struct utsname u;
        if (live && uname(&u) == 0)
            copy_str(fp->kernel_release, sizeof(fp->kernel_release), u.release);
    }
    if (read_line(root, "/proc/sys/kernel/random/boot_id", fp->boot_id, sizeof(fp->boot_id)) != 0)
        fp->boot_id[0] = '\0';

    collect_nvidia(fp, root);
    fp->peermem_loaded = (uint8_t)path_exists(root, "/sys/module/nvidia_peermem");
    fp->memory_peers = (uint8_t)(path_exists(root, "/sys/kernel/mm/memory_peers/nv_mem") ||
                                 path_exists(root, "/sys/kernel/mm/memory_peers/nv_mem_nc") ||
                                 path_exists(root, "/sys/kernel/mm/memory_peers/nvidia-peermem"));
    collect_rdma(fp, root);
    collect_gpus(fp, root);
    collect_cpu(fp, root);
    if (live)
        fp->cuda_driver_version = cuda_driver_version();
}

const char *gt_fingerprint_flavour_name(int flavour)
{
    switch (flavour) {
    case GTR_NV_OPEN:
        return "open";
    case GTR_NV_PROPRIETARY:
        return "proprietary";
    case GTR_NV_ABSENT:
        return "absent";
    default:
        return "unknown";
    }
}

/* Bounded copy of a fixed array that a hostile file may not have terminated. */
static void field_text(char *out, size_t n, const char *src, size_t src_size)
{
    size_t len = strnlen(src, src_size);
    if (len >= n)
        len = n - 1;
    memcpy(out, src, len);
    out[len] = '\0';
}

int gt_fingerprint_diff(const struct gtr_fingerprint *a, const struct gtr_fingerprint *b,
                        gt_fingerprint_diff_cb cb, void *arg)
{
    int n = 0;
    char x[300], y[300];
#define DIFF_STR(f)                                                                                \
    do {                                                                                           \
        field_text(x, sizeof(x), a->f, sizeof(a->f));                                              \
        field_text(y, sizeof(y), b->f, sizeof(b->f));                                              \
        if (strcmp(x, y) != 0) {                                                                   \
            n++;                                                                                   \
            if (cb)                                                                                \
                cb(#f, x, y, arg);                                                                 \
        }                                                                                          \
    } while (0)
#define DIFF_INT(f, fmt)                                                                           \
    do {                                                                                           \
        if (a->f != b->f) {                                                                        \
            n++;                                                                                   \
            snprintf(x, sizeof(x), fmt, a->f);                                                     \
            snprintf(y, sizeof(y), fmt, b->f);                                                     \
            if (cb)                                                                                \
                cb(#f, x, y, arg);                                                                 \
        }                                                                                          \
    } while (0)
    DIFF_STR(kernel_release);
    DIFF_STR(nvidia_version);
    if (a->nvidia_flavour != b->nvidia_flavour) {
        n++;
        if (cb)
            cb("nvidia_flavour", gt_fingerprint_flavour_name(a->nvidia_flavour),
               gt_fingerprint_flavour_name(b->nvidia_flavour), arg);
    }
    DIFF_INT(peermem_loaded, "%u");
    DIFF_INT(memory_peers, "%u");
    DIFF_INT(cuda_driver_version, "%d");
    DIFF_STR(rdma_devices);
    DIFF_STR(gpus);
    DIFF_STR(cpu_model);
#undef DIFF_STR
#undef DIFF_INT
    return n;
}
