/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kcorr.c — the kernel's dma-buf list (tools/lib/kcorr.c) on bufinfo
 * text in the kernel's layout (drivers/dma-buf/dma-buf.c): objects counted
 * by their lines, nv_dmabuf objects and bytes apart, attached devices
 * counted per nv_dmabuf object only (not another exporter's), fence lines
 * and the header ignored, a device looked up by the basename of its sysfs
 * path; gt_kcorr_read through GDRTRACE_BUFINFO: a regular file read as
 * parsed, a FIFO, a directory and /dev/null refused without reading with
 * what they are, a missing file unreadable with its errno.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/lib/kcorr.h"

static const char BUFINFO[] = "\nDma-buf Objects:\n"
                              "size    \tflags   \tmode    \tcount   \texp_name\tino     \tname\n"
                              "00004096\t00000002\t00080005\t00000003\tnv_dmabuf\t00012345\t\n"
                              "\tExclusive fence: drm_sched gfx signalled\n"
                              "\tAttached Devices:\n"
                              "\t0000:17:00.0\n"
                              "Total 1 devices attached\n"
                              "\n"
                              "00008192\t00000002\t00080005\t00000001\ti915\t00012346\tscanout\n"
                              "\tAttached Devices:\n"
                              "\t0000:00:02.0\n"
                              "Total 1 devices attached\n"
                              "\n"
                              "02097152\t00000002\t00080005\t00000002\tnv_dmabuf\t00012347\t\n"
                              "\tAttached Devices:\n"
                              "\t0000:17:00.0\n"
                              "\t0000:b3:00.1\n"
                              "Total 2 devices attached\n"
                              "\n"
                              "Total 3 objects, 2109440 bytes\n";

static void parse(void **state)
{
    (void)state;
    static struct gt_kcorr k;
    memset(&k, 0, sizeof(k));
    gt_kcorr_parse(&k, BUFINFO, strlen(BUFINFO));
    assert_int_equal(k.objects, 3);
    assert_int_equal(k.nv_objects, 2);
    assert_int_equal(k.nv_bytes, 4096 + 2097152);
    assert_int_equal(k.ndevs, 2); /* i915's device is not an nv_dmabuf attachment */
    assert_int_equal(gt_kcorr_attached(&k, "/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0"), 2);
    assert_int_equal(gt_kcorr_attached(&k, "0000:b3:00.1"), 1);
    assert_int_equal(gt_kcorr_attached(&k, "0000:00:02.0"), 0);
    assert_int_equal(gt_kcorr_attached(&k, "/sys/devices/"), 0);
    /* cut anywhere: never more than the whole, never a crash */
    for (size_t n = 0; n < strlen(BUFINFO); n++) {
        memset(&k, 0, sizeof(k));
        gt_kcorr_parse(&k, BUFINFO, n);
        assert_true(k.objects <= 3 && k.nv_objects <= 2);
    }
}

static void device_names_bounded(void **state)
{
    (void)state;
    static struct gt_kcorr k;
    memset(&k, 0, sizeof(k));
    char text[8192];
    size_t o = (size_t)snprintf(text, sizeof(text),
                                "00000001\t0\t0\t1\tnv_dmabuf\t1\t\n\tAttached Devices:\n");
    /* a name of 64 bytes (no room for its NUL) and 70 distinct ones */
    o += (size_t)snprintf(text + o, sizeof(text) - o, "\t%064d\n", 7);
    for (int i = 0; i < 70; i++)
        o += (size_t)snprintf(text + o, sizeof(text) - o, "\tdev%02d\n", i);
    gt_kcorr_parse(&k, text, o);
    assert_int_equal(k.ndevs, GT_KC_MAX_DEVS);
    assert_int_equal(gt_kcorr_attached(&k, "dev00"), 1);
    assert_int_equal(gt_kcorr_attached(&k, "dev63"), 1);
    assert_int_equal(gt_kcorr_attached(&k, "dev64"), 0);
}

static char g_dir[64];

static void read_via(const char *path, struct gt_kcorr *k)
{
    setenv("GDRTRACE_BUFINFO", path, 1);
    gt_kcorr_read(k);
    unsetenv("GDRTRACE_BUFINFO");
    assert_string_equal(k->path, path);
}

static void read_paths(void **state)
{
    (void)state;
    static struct gt_kcorr k;
    snprintf(g_dir, sizeof(g_dir), "/tmp/gt_kcorr_XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    char p[128];
    snprintf(p, sizeof(p), "%s/bufinfo", g_dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(BUFINFO, f);
    fclose(f);
    read_via(p, &k);
    assert_int_equal(k.readable, 1);
    assert_int_equal(k.nv_objects, 2);

    snprintf(p, sizeof(p), "%s/fifo", g_dir);
    assert_int_equal(mkfifo(p, 0600), 0);
    read_via(p, &k); /* a blocking open would never return */
    assert_int_equal(k.readable, 0);
    assert_string_equal(gt_kcorr_error(&k), "a FIFO, not a regular file: refused");
    read_via(g_dir, &k);
    assert_int_equal(k.readable, 0);
    assert_string_equal(gt_kcorr_error(&k), "a directory, not a regular file: refused");
    read_via("/dev/null", &k);
    assert_int_equal(k.readable, 0);
    assert_string_equal(gt_kcorr_error(&k), "a device, not a regular file: refused");
    snprintf(p, sizeof(p), "%s/absent", g_dir);
    read_via(p, &k);
    assert_int_equal(k.readable, 0);
    assert_int_equal(k.err_no, ENOENT);
    assert_string_equal(gt_kcorr_error(&k), strerror(ENOENT));

    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse),
        cmocka_unit_test(device_names_bounded),
        cmocka_unit_test(read_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
