/* SPDX-License-Identifier: Apache-2.0 */
/*
 * netfs.c — the table of network filesystems by statfs f_type (netfs.h).
 * The numbers are the kernel's (include/uapi/linux/magic.h and each fs) or, for
 * filesystems outside the kernel tree, the ones their clients report.
 */
#include "tools/netfs.h"

#include <errno.h>
#include <stdio.h>
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

int gt_netfs_check(const char *dir, char *err, size_t errlen)
{
    struct statfs st;
    if (statfs(dir, &st) != 0) {
        int e = errno;
        snprintf(err, errlen, "%s: cannot statfs: %s", dir, strerror(e));
        errno = e;
        return -1;
    }
    const char *name = gt_netfs_name((unsigned long)st.f_type);
    if (!name)
        return 0;
    snprintf(err, errlen, "%s is on %s (a network filesystem, statfs f_type 0x%lx)", dir, name,
             (unsigned long)st.f_type & 0xffffffffUL);
    return 1;
}
