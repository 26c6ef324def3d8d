/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_netfs.c — tools/lib/netfs.c, the check that keeps `gdrtrace run` from
 * putting recorders (shared mappings) on a network filesystem: the network
 * filesystems a cluster mounts are named by their statfs f_type (also when
 * the word is sign-extended, as a 32-bit magic in a signed 64-bit f_type
 * is), the local ones a GDRTRACE_DIR lives on are not, and a folder that
 * cannot be looked at is an error naming it.  Mounting NFS is out of reach
 * of a test, so the table is checked through its lookup.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/lib/netfs.h"

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

    /* FUSE: the mount's type in mountinfo decides (one f_type for all) */
    const char *netf[] = {"fuse.sshfs", "fuse.ceph-fuse", "fuse.glusterfs", "fuse.s3fs"};
    for (size_t i = 0; i < sizeof(netf) / sizeof(netf[0]); i++)
        if (!gt_netfs_fuse_name(netf[i])) {
            printf("FAIL %s not taken for a network filesystem\n", netf[i]);
            fails++;
        }
    const char *localf[] = {"fuse.fuse-overlayfs", "fuse", "fuse.gvfsd-fuse", "tmpfs", "sshfs"};
    for (size_t i = 0; i < sizeof(localf) / sizeof(localf[0]); i++)
        if (gt_netfs_fuse_name(localf[i])) {
            printf("FAIL %s taken for a network filesystem\n", localf[i]);
            fails++;
        }
    char dir[] = "/tmp/gt_netfs.XXXXXX", mi[64], real[4096], sub[4200];
    if (!mkdtemp(dir) || !realpath(dir, real)) {
        printf("FAIL mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    snprintf(sub, sizeof(sub), "%s/remote dir", real);
    mkdir(sub, 0700);
    snprintf(mi, sizeof(mi), "%s.mountinfo", dir);
    FILE *f = fopen(mi, "w");
    /* the folder's parent local, the folder over sshfs (its name escaped),
     * then a local FUSE mounted over a sibling */
    fprintf(f,
            "22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
            "90 22 0:50 / %s rw,nosuid - tmpfs tmpfs rw\n"
            "91 90 0:51 / %s/remote\\040dir rw,nosuid shared:7 master:3 - fuse.sshfs u@h:/x rw\n"
            "92 90 0:52 / %s/remote rw - fuse.fuse-overlayfs fuse-overlayfs rw\n",
            real, real, real);
    fclose(f);
    rc = gt_netfs_check_fuse(sub, mi, err, sizeof(err));
    if (rc != 1 || !strstr(err, "is on fuse.sshfs (a network filesystem through FUSE")) {
        printf("FAIL %s on fuse.sshfs judged %d: '%s'\n", sub, rc, err);
        fails++;
    }
    char type[64] = "";
    if (gt_netfs_mount_type(mi, real, type, sizeof(type)) != 0 || strcmp(type, "tmpfs")) {
        printf("FAIL the mount of %s: '%s', expected tmpfs\n", real, type);
        fails++;
    }
    rc = gt_netfs_check_fuse(real, mi, err, sizeof(err));
    if (rc != 0) {
        printf("FAIL %s (tmpfs) judged %d\n", real, rc);
        fails++;
    }
    unlink(mi);
    rmdir(sub);
    rmdir(dir);
    if (fails)
        return 1;
    printf("PASS: network filesystems named by f_type (FUSE ones by mountinfo), local ones not, "
           "errors name the folder\n");
    return 0;
}
