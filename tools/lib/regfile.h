/* SPDX-License-Identifier: Apache-2.0 */
/*
 * regfile.h — opening a file the reader will read to its end: only a
 * regular file is kept.  A FIFO, a device or a socket named on the command
 * line (or planted in a folder) would block the open or never end, so the
 * open never waits (O_NONBLOCK) and the type is judged on the open
 * descriptor (fstat: no race with a rename between a check and the open).
 * Each caller words the refusal its own way; this module only says which
 * step failed and, for a refused type, what the file is.
 */
#ifndef GDRTRACE_TOOLS_LIB_REGFILE_H
#define GDRTRACE_TOOLS_LIB_REGFILE_H

#include <sys/stat.h>

/* Which step refused the file. */
enum gt_regfile_fail {
    GT_REGFILE_OK = 0, /* fd is an open regular file */
    GT_REGFILE_OPEN,   /* open failed: err is its errno */
    GT_REGFILE_STAT,   /* fstat failed: err is its errno */
    GT_REGFILE_TYPE,   /* not a regular file: st.st_mode says what it is */
};

struct gt_regfile {
    int fd; /* >= 0 only when the result is GT_REGFILE_OK */
    int err;
    struct stat st; /* valid for GT_REGFILE_OK and GT_REGFILE_TYPE */
};

/* Opens path (relative to dirfd, AT_FDCWD for none) read-only, close-on-exec,
 * never a controlling terminal, with extra_flags added (O_NOFOLLOW), and
 * keeps it only if it is a regular file; the descriptor returned has
 * O_NONBLOCK cleared.  Returns the failed step, GT_REGFILE_OK on success
 * (the caller closes rf->fd); on failure nothing is left open. */
enum gt_regfile_fail gt_regfile_open(int dirfd, const char *path, int extra_flags,
                                     struct gt_regfile *rf);

/* What a file of this mode is, for a message: "a regular file",
 * "a directory", "a FIFO", "a socket", "a device" (character, block or a
 * type this list does not name). */
const char *gt_regfile_what(mode_t mode);

#endif
