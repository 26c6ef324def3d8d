/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_netfs.c — tools/netfs.c, the check that keeps `gdrtrace run` from
 * putting recorders (shared mappings) on a network filesystem: the network
 * filesystems a cluster mounts are named by their statfs f_type (also when
 * the word is sign-extended, as a 32-bit magic in a signed 64-bit f_type
 * is), the local ones a GDRTRACE_DIR lives on are not, and a folder that
 * cannot be looked at is an error naming it.  Mounting NFS is out of reach
 * of a test, so the table is checked through its lookup.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/netfs.h"

static int fails;

static void expect_name(unsigned long type, const char *want)
{
    const char *got = gt_netfs_name(type);
    if ((!got && !want) || (got && want && !strcmp(got, want)))
        return;
    printf("FAIL f_type 0x%lx: got %s, expected %s\n", type, got ? got : "(local)",
           want ? want : "(local)");
    fails++;
}

int main(void)
{
    expect_name(0x6969, "nfs");
    expect_name(0x0bd00bd0, "lustre");
    expect_name(0x47504653, "gpfs");
    expect_name(0xff534d42, "cifs");
    expect_name(0xfe534d42, "smb2");
    expect_name(0x00c36400, "ceph");
    expect_name(0x19830326, "beegfs");
    expect_name(0x01021997, "9p");
    /* a magic with the top bit set, sign-extended into a 64-bit f_type */
    expect_name((unsigned long)(long)(int)0xff534d42, "cifs");
    /* local filesystems: tmpfs (/dev/shm), ext4, xfs, btrfs, overlayfs, proc */
    expect_name(0x01021994, NULL);
    expect_name(0xef53, NULL);
    expect_name(0x58465342, NULL);
    expect_name(0x9123683e, NULL);
    expect_name(0x794c7630, NULL);
    expect_name(0x9fa0, NULL);

    char err[256] = "";
    int rc = gt_netfs_check("/proc", err, sizeof(err));
    if (rc != 0) {
        printf("FAIL /proc judged %d: %s\n", rc, err);
        fails++;
    }
    rc = gt_netfs_check("/nonexistent/gdrtrace-netfs", err, sizeof(err));
    if (rc != -1 || errno != ENOENT || !strstr(err, "/nonexistent/gdrtrace-netfs: cannot statfs")) {
        printf("FAIL a missing folder: rc %d errno %d, '%s'\n", rc, errno, err);
        fails++;
    }
    if (fails)
        return 1;
    printf("PASS: network filesystems named by f_type, local ones not, errors name the folder\n");
    return 0;
}
