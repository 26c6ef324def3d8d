/* SPDX-License-Identifier: Apache-2.0 */
/*
 * netfs.h — is a folder on a network filesystem?  A recorder is a shared
 * memory mapping that the writer stores into on its hot path: on NFS, Lustre,
 * GPFS, CIFS … every page would go over the network (or be lost to another
 * node's cache), so `gdrtrace run` refuses such a GDRTRACE_DIR.  Decided by
 * statfs(2)'s f_type against the kernel's magic numbers (linux/magic.h and the
 * out-of-tree filesystems' own).  FUSE carries local (fuse-overlayfs) and
 * network filesystems under one f_type: for it the mount's type in
 * /proc/self/mountinfo decides ("fuse.sshfs", "fuse.ceph-fuse" … are
 * network ones).
 */
#ifndef GDRTRACE_TOOLS_NETFS_H
#define GDRTRACE_TOOLS_NETFS_H

#include <stddef.h>

/* The name of the network filesystem whose statfs f_type is `type`
 * ("nfs", "lustre", "gpfs" …), or NULL when it is not one we know. */
const char *gt_netfs_name(unsigned long type);

/* 0 when `dir` is on a local filesystem; -1 with errno and a reason in
 * err[errlen] when statfs fails; 1 with the reason ("DIR is on nfs (a network
 * filesystem)") when it is on one of the table's network filesystems. */
int gt_netfs_check(const char *dir, char *err, size_t errlen);

/* "fuse.TYPE" (or "fuseblk.TYPE") when TYPE is a network filesystem carried
 * by FUSE (sshfs, ceph-fuse, glusterfs, s3fs …): fstype itself; else NULL. */
const char *gt_netfs_fuse_name(const char *fstype);

/* The filesystem type of the mount holding the absolute, resolved `path`,
 * from a mountinfo file (/proc/self/mountinfo): 0 with it in out[n], -1 when
 * the file cannot be read or names no mount above path. */
int gt_netfs_mount_type(const char *mountinfo, const char *path, char *out, size_t n);

/* As gt_netfs_check for a folder on FUSE: 1 with the reason when mountinfo
 * says its mount is a network filesystem, else 0. */
int gt_netfs_check_fuse(const char *dir, const char *mountinfo, char *err, size_t errlen);

#endif /* GDRTRACE_TOOLS_NETFS_H */
