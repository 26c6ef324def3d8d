/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_rec_fingerprint.c — checks that the node fingerprint is read from a
 * GDRTRACE_SYSFS_ROOT fixture exactly: kernel release, boot id, NVIDIA
 * version and flavour (open / proprietary / absent / unknown), peermem and
 * memory_peers presence, RDMA devices sorted by PCI address with "@-" for
 * devices without one, only NVIDIA display-class PCI functions as GPUs, the
 * CPU model; that an empty fixture yields "unknown"/empty without failing;
 * and that the diff reports exactly the fields that differ (never boot_id).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fingerprint.h"

static char g_root[PATH_MAX];

/* p = g_root + "/" + rel; a fixture path never comes near PATH_MAX. */
static void fixture_path(char *p, size_t n, const char *rel)
{
    int k = snprintf(p, n, "%s/%s", g_root, rel);
    assert_true(k > 0 && (size_t)k < n);
}

static void mkdirs(const char *rel)
{
    char p[PATH_MAX];
    fixture_path(p, sizeof(p), rel);
    for (char *s = p + strlen(g_root) + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    }
    mkdir(p, 0755);
}

static void put(const char *rel, const char *text)
{
    char p[PATH_MAX], dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", rel);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        mkdirs(dir);
    }
    fixture_path(p, sizeof(p), rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void link_to(const char *rel, const char *target)
{
    char p[PATH_MAX], dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", rel);
    *strrchr(dir, '/') = '\0';
    mkdirs(dir);
    fixture_path(p, sizeof(p), rel);
    assert_int_equal(symlink(target, p), 0);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_root, sizeof(g_root), "%s/gt-fp-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(g_root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return nftw(g_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void gpu_node(const char *bdf, const char *vendor, const char *cls)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/vendor", bdf);
    put(rel, vendor);
    snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/class", bdf);
    put(rel, cls);
}

static void test_open_module_full_node(void **state)
{
    (void)state;
    put("proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
    put("proc/sys/kernel/random/boot_id", "0c6fd2a8-5e1b-4a2c-9a0f-3f1f6b7d9e11\n");
    put("proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  "
        "(dvs-builder@U16-I3-B03-4-3)  Thu Feb 22 01:25:25 UTC 2024\nGCC version:  gcc 12\n");
    mkdirs("sys/module/nvidia");
    mkdirs("sys/module/nvidia_peermem");
    mkdirs("sys/kernel/mm/memory_peers/nv_mem");
    link_to("sys/class/infiniband/mlx5_1/device", "../../../0000:b1:00.0");
    link_to("sys/class/infiniband/mlx5_0/device", "../../../0000:17:00.0");
    mkdirs("sys/class/infiniband/rxe0");
    gpu_node("0000:c3:00.0", "0x10de\n", "0x030200\n");
    gpu_node("0000:18:00.0", "0x10de\n", "0x030000\n");
    gpu_node("0000:18:00.1", "0x10de\n", "0x040300\n"); /* the GPU's audio function */
    gpu_node("0000:17:00.0", "0x15b3\n", "0x020700\n"); /* the NIC */
    put("proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) "
                        "Platinum 8480+\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: other\n");

    struct gtr_fingerprint fp;
    gt_fingerprint_collect(&fp, g_root);
    assert_string_equal(fp.kernel_release, "6.8.0-45-generic");
    assert_string_equal(fp.boot_id, "0c6fd2a8-5e1b-4a2c-9a0f-3f1f6b7d9e11");
    assert_string_equal(fp.nvidia_version, "550.54.14");
    assert_int_equal(fp.nvidia_flavour, GTR_NV_OPEN);
    assert_string_equal(gt_fingerprint_flavour_name(fp.nvidia_flavour), "open");
    assert_int_equal(fp.peermem_loaded, 1);
    assert_int_equal(fp.memory_peers, 1);
    assert_int_equal(fp.cuda_driver_version, -1); /* fixtures never load libcuda */
    assert_string_equal(fp.rdma_devices, "mlx5_0@0000:17:00.0,mlx5_1@0000:b1:00.0,rxe0@-");
    assert_string_equal(fp.gpus, "0000:18:00.0,0000:c3:00.0");
    assert_string_equal(fp.cpu_model, "Intel(R) Xeon(R) Platinum 8480+");
}

static void test_proprietary_module(void **state)
{
    (void)state;
    put("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  "
                                      "Sat Aug 19 01:15:15 UTC 2023\n");
    mkdirs("sys/module/nvidia");
    mkdirs("sys/kernel/mm/memory_peers/nv_mem_nc");
    struct gtr_fingerprint fp;
    gt_fingerprint_collect(&fp, g_root);
    assert_int_equal(fp.nvidia_flavour, GTR_NV_PROPRIETARY);
    assert_string_equal(fp.nvidia_version, "535.104.05");
    assert_int_equal(fp.peermem_loaded, 0);
    assert_int_equal(fp.memory_peers, 1);
}

static void test_module_hidden_proc(void **state)
{
    (void)state;
    put("sys/module/nvidia/version", "570.86.15\n");
    struct gtr_fingerprint fp;
    gt_fingerprint_collect(&fp, g_root);
    assert_int_equal(fp.nvidia_flavour, GTR_NV_UNKNOWN);
    assert_string_equal(fp.nvidia_version, "570.86.15");
}

static void test_empty_root(void **state)
{
    (void)state;
    struct gtr_fingerprint fp;
    memset(&fp, 0x5a, sizeof(fp));
    gt_fingerprint_collect(&fp, g_root);
    assert_string_equal(fp.kernel_release, "");
    assert_string_equal(fp.boot_id, "");
    assert_string_equal(fp.nvidia_version, "");
    assert_int_equal(fp.nvidia_flavour, GTR_NV_ABSENT);
    assert_int_equal(fp.peermem_loaded, 0);
    assert_int_equal(fp.memory_peers, 0);
    assert_string_equal(fp.rdma_devices, "");
    assert_string_equal(fp.gpus, "");
    assert_string_equal(fp.cpu_model, "");
    assert_int_equal(fp.cuda_driver_version, -1);
}

static void test_root_from_env(void **state)
{
    (void)state;
    put("proc/sys/kernel/osrelease", "9.9.9-fixture\n");
    setenv("GDRTRACE_SYSFS_ROOT", g_root, 1);
    struct gtr_fingerprint fp;
    gt_fingerprint_collect(&fp, NULL);
    unsetenv("GDRTRACE_SYSFS_ROOT");
    assert_string_equal(fp.kernel_release, "9.9.9-fixture");
}

static void test_live_system_never_fails(void **state)
{
    (void)state;
    struct gtr_fingerprint fp;
    gt_fingerprint_collect(&fp, "");
    assert_true(strlen(fp.kernel_release) > 0); /* uname works on every Linux */
    assert_true(memchr(fp.rdma_devices, 0, sizeof(fp.rdma_devices)) != NULL);
    assert_true(memchr(fp.gpus, 0, sizeof(fp.gpus)) != NULL);
}

struct seen {
    int n;
    char fields[16][32];
};

static void record_diff(const char *field, const char *a, const char *b, void *arg)
{
    struct seen *s = arg;
    assert_string_not_equal(a, b);
    snprintf(s->fields[s->n++], sizeof(s->fields[0]), "%s", field);
}

static void test_diff(void **state)
{
    (void)state;
    struct gtr_fingerprint a, b;
    memset(&a, 0, sizeof(a));
    snprintf(a.kernel_release, sizeof(a.kernel_release), "6.8.0");
    snprintf(a.boot_id, sizeof(a.boot_id), "aaaa");
    a.nvidia_flavour = GTR_NV_OPEN;
    a.cuda_driver_version = 12040;
    b = a;
    assert_int_equal(gt_fingerprint_diff(&a, &b, NULL, NULL), 0);
    snprintf(b.boot_id, sizeof(b.boot_id), "bbbb"); /* differs on every node: ignored */
    assert_int_equal(gt_fingerprint_diff(&a, &b, NULL, NULL), 0);
    b.nvidia_flavour = GTR_NV_PROPRIETARY;
    b.peermem_loaded = 1;
    snprintf(b.rdma_devices, sizeof(b.rdma_devices), "mlx5_0@0000:17:00.0");
    /* an unterminated array in a hostile file must be bounded, not overrun */
    memset(b.cpu_model, 'x', sizeof(b.cpu_model));
    struct seen s = {0};
    assert_int_equal(gt_fingerprint_diff(&a, &b, record_diff, &s), 4);
    assert_string_equal(s.fields[0], "nvidia_flavour");
    assert_string_equal(s.fields[1], "peermem_loaded");
    assert_string_equal(s.fields[2], "rdma_devices");
    assert_string_equal(s.fields[3], "cpu_model");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_module_full_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_proprietary_module, setup, teardown),
        cmocka_unit_test_setup_teardown(test_module_hidden_proc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_root_from_env, setup, teardown),
        cmocka_unit_test(test_live_system_never_fails),
        cmocka_unit_test(test_diff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
