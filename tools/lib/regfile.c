/* SPDX-License-Identifier: Apache-2.0 */
/*
 * regfile.c — the one open of a file the reader reads to its end (see
 * regfile.h).  Invariant: no descriptor leaves this file unless fstat said
 * regular file on that very descriptor.
 */
#include "tools/lib/regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

enum gt_regfile_fail gt_regfile_open(int dirfd, const char *path, int extra_flags,
                                     struct gt_regfile *rf)
{
    rf->err = 0;
    rf->fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | extra_flags);
    if (rf->fd < 0) {
        rf->err = errno;
        return GT_REGFILE_OPEN;
    }
    enum gt_regfile_fail fail = GT_REGFILE_OK;
    if (fstat(rf->fd, &rf->st)) {
        rf->err = errno;
        fail = GT_REGFILE_STAT;
    } else if (!S_ISREG(rf->st.st_mode)) {
        fail = GT_REGFILE_TYPE;
    }
    if (fail) {
        close(rf->fd);
        rf->fd = -1;
        return fail;
    }
    /* O_NONBLOCK was for the open only: reads of the file behave as usual */
    int fl = fcntl(rf->fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(rf->fd, F_SETFL, fl & ~O_NONBLOCK);
    return GT_REGFILE_OK;
}

const char *gt_regfile_what(mode_t mode)
{
    return S_ISREG(mode)    ? "a regular file"
           : S_ISDIR(mode)  ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
                            : "a device";
}
