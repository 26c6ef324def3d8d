/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outfile.c — see outfile.h.
 *
 * Invariants:
 *  - Nothing but a regular file is ever replaced: as root, `-o /dev/null`
 *    used to swap the device node for a regular file.  Checked with lstat,
 *    so a symbolic link is refused too rather than replaced.
 *  - Without `replace`, the final rename cannot clobber a file created
 *    after the check (RENAME_NOREPLACE).  With it, the window between the
 *    last check and rename(2) remains; rename never writes through the node
 *    it replaces, so a FIFO or device planted in that window is swapped,
 *    never written into.
 */
#include "tools/lib/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/lib/recfile.h"

static const char *kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a folder";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISLNK(m))
        return "a symbolic link";
    return "not a regular file";
}

int gt_out_check(const char *path, int replace, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        return gt_source_error(err, errlen, path, "cannot check the output path: %s",
                               strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        return gt_source_error(err, errlen, path,
                               "is %s, not a regular file; refusing to replace it",
                               kind(st.st_mode));
    if (!replace)
        return gt_source_error(err, errlen, path, "exists; not replaced (--force replaces it)");
    return 0;
}

int gt_out_commit(const char *tmp, const char *path, int replace, char *err, size_t errlen)
{
    if (replace) {
        if (gt_out_check(path, 1, err, errlen))
            return -1;
        if (rename(tmp, path) != 0)
            return gt_source_error(err, errlen, path, "rename from %s failed: %s", tmp,
                                   strerror(errno));
        return 0;
    }
#ifdef RENAME_NOREPLACE
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        goto fail;
#endif
    /* No RENAME_NOREPLACE here: link() never replaces either. */
    if (link(tmp, path) != 0)
        goto fail;
    unlink(tmp);
    return 0;
fail:
    if (errno == EEXIST) /* appeared since the check: say what it is */
        return gt_out_check(path, 0, err, errlen) ? -1
                                                  : gt_source_error(err, errlen, path, "exists");
    return gt_source_error(err, errlen, path, "rename from %s failed: %s", tmp, strerror(errno));
}
