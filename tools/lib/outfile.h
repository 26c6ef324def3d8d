/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outfile.h — where the reader may write an output file (`dump -o`,
 * `export -o`).  An output is always written to a temporary file in the
 * target's folder and renamed onto the target, so a reader of the target
 * never sees half a file; these two calls decide what may be replaced.
 *
 * Errors: 0 or -1 with a one-line reason naming the path in err[errlen].
 */
#ifndef GDRTRACE_TOOLS_OUTFILE_H
#define GDRTRACE_TOOLS_OUTFILE_H

#include <stddef.h>

/* May `path` receive an output?  Yes when nothing is there, or a regular
 * file is there and `replace` is set.  Never for anything else (a FIFO, a
 * device node such as /dev/null, a socket, a folder, a symbolic link): the
 * rename would swap that node for a regular file. */
int gt_out_check(const char *path, int replace, char *err, size_t errlen);

/* Renames tmp onto path.  Without `replace` the rename is refused (EEXIST)
 * if something appeared at path since gt_out_check (renameat2
 * RENAME_NOREPLACE, or link+unlink where the filesystem lacks it).  With
 * `replace`, gt_out_check runs again just before the rename.  tmp is left
 * in place on failure (the caller removes it). */
int gt_out_commit(const char *tmp, const char *path, int replace, char *err, size_t errlen);

#endif /* GDRTRACE_TOOLS_OUTFILE_H */
