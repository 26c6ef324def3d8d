/* SPDX-License-Identifier: Apache-2.0 */
/*
 * netfs.c — the table of network filesystems by statfs f_type (netfs.h).
 * The numbers are the kernel's (include/uapi/linux/magic.h and each fs) or, for
 * filesystems outside the kernel tree, the ones their clients report.  FUSE
 * has one f_type for every filesystem it carries: those are told apart by the
 * mount's type in /proc/self/mountinfo ("fuse.sshfs"), against a second table.
 */
#include "tools/lib/netfs.h"

#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

static const struct {
    unsigned long magic;
    const char *name;
} netfs[] = {
    {0x6969, "nfs"},        {0x517b, "smb"},        {0xff534d42, "cifs"}, {0xfe534d42, "smb2"},
    {0x0bd00bd0, "lustre"}, {0x47504653, "gpfs"},   {0x5346414f, "afs"},  {0x6b414653, "kafs"},
    {0x00c36400, "ceph"},   {0x19830326, "beegfs"}, {0x01161970, "gfs2"}, {0x7461636f, "ocfs2"},
    {0x01021997, "9p"},     {0xaad7aaea, "panfs"},  {0x73757245, "coda"}, {0x564c, "ncp"},
};

const char *gt_netfs_name(unsigned long type)
{
    /* f_type is a signed word on some ABIs: compare the low 32 bits. */
    type &= 0xffffffffUL;
    for (size_t i = 0; i < sizeof(netfs) / sizeof(netfs[0]); i++)
        if (netfs[i].magic == type)
            return netfs[i].name;
    return NULL;
}

#define FUSE_SUPER_MAGIC 0x65735546UL

/* FUSE filesystems that reach another machine (the part after "fuse."). */
static const char *const netfuse[] = {
    "sshfs",     "ceph-fuse", "ceph",     "glusterfs", "s3fs",      "gcsfuse", "rclone",
    "juicefs",   "mfs",       "lizardfs", "blobfuse",  "blobfuse2", "goofys",  "davfs2",
    "curlftpfs", "cvmfs2",    "beegfs",   "lustre",    "moosefs",
};

const char *gt_netfs_fuse_name(const char *fstype)
{
    if (strncmp(fstype, "fuse.", 5) != 0 && strncmp(fstype, "fuseblk.", 8) != 0)
        return NULL;
    const char *sub = strchr(fstype, '.') + 1;
    for (size_t i = 0; i < sizeof(netfuse) / sizeof(netfuse[0]); i++)
        if (!strcmp(sub, netfuse[i]))
            return fstype;
    return NULL;
}

/* mountinfo's octal escapes (\040 for a space) decoded in place. */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
            s[3] >= '0' && s[3] <= '7') {
            *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
}

int gt_netfs_mount_type(const char *mountinfo, const char *path, char *out, size_t n)
{
    FILE *f = fopen(mountinfo, "re");
    if (!f)
        return -1;
    char line[8192];
    size_t best = 0;
    int found = -1;
    while (fgets(line, sizeof(line), f)) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
        char *save = NULL, *tok[5];
        int k = 0;
        for (char *t = strtok_r(line, " \n", &save); t && k < 5; t = strtok_r(NULL, " \n", &save))
            tok[k++] = t;
        if (k < 5)
            continue;
        char *type = NULL;
        for (char *t; (t = strtok_r(NULL, " \n", &save));)
            if (!strcmp(t, "-")) {
                type = strtok_r(NULL, " \n", &save);
                break;
            }
        if (!type)
            continue;
        char *mp = tok[4];
        unescape(mp);
        size_t l = strlen(mp);
        int under = !strcmp(mp, "/") || (!strncmp(path, mp, l) && (path[l] == '/' || path[l] == 0));
        /* the longest mount point wins; of equal ones the later (mounted over) */
        if (under && (found < 0 || l >= best)) {
            best = l;
            snprintf(out, n, "%s", type);
            found = 0;
        }
    }
    fclose(f);
    return found;
}

int gt_netfs_check_fuse(const char *dir, const char *mountinfo, char *err, size_t errlen)
{
    char real[PATH_MAX], type[256];
    if (!realpath(dir, real) || gt_netfs_mount_type(mountinfo, real, type, sizeof(type)) != 0)
        return 0; /* cannot tell: FUSE as often local (fuse-overlayfs) */
    const char *name = gt_netfs_fuse_name(type);
    if (!name)
        return 0;
    snprintf(err, errlen, "%s is on %s (a network filesystem through FUSE, %s)", dir, name,
             mountinfo);
    return 1;
}

int gt_netfs_check(const char *dir, char *err, size_t errlen)
{
    struct statfs st;
    if (statfs(dir, &st) != 0) {
        int e = errno;
        snprintf(err, errlen, "%s: cannot statfs: %s", dir, strerror(e));
        errno = e;
        return -1;
    }
    if (((unsigned long)st.f_type & 0xffffffffUL) == FUSE_SUPER_MAGIC)
        return gt_netfs_check_fuse(dir, "/proc/self/mountinfo", err, errlen);
    const char *name = gt_netfs_name((unsigned long)st.f_type);
    if (!name)
        return 0;
    snprintf(err, errlen, "%s is on %s (a network filesystem, statfs f_type 0x%lx)", dir, name,
             (unsigned long)st.f_type & 0xffffffffUL);
    return 1;
}
