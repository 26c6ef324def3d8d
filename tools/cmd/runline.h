/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runline.h — `gdrtrace run` under a launcher: the one line per rank, and
 * the capture of a subcommand's stdout that decides whether its full text
 * is printed (only for a rank whose result differs from what was expected).
 *
 * Invariants: a capture restores stdout (fd 1 and the FILE) whatever the
 * subcommand did; the rank line is written by one write(2), so lines of
 * ranks sharing a pipe (mpirun, srun) never interleave mid-line.
 */
#ifndef GDRTRACE_TOOLS_RUNLINE_H
#define GDRTRACE_TOOLS_RUNLINE_H

#include <stddef.h>
#include <stdio.h>

struct gt_capture {
    FILE *tmp; /* what was written to stdout meanwhile */
    int saved; /* the real fd 1; -1: not capturing (stdout untouched) */
};

/* Redirects stdout into a temporary file; on failure (no temporary file)
 * stdout stays as it is and everything is printed: 0 either way. */
void gt_capture_begin(struct gt_capture *c);
/* Restores stdout; what was captured is kept for the calls below. */
void gt_capture_stop(struct gt_capture *c);
/* Stops if still capturing, prints what was captured when `print`, frees. */
void gt_capture_end(struct gt_capture *c, int print);
/* The verdict label of the `all` line in what was captured (up to the
 * column gap), or "?" when there is none. */
void gt_capture_verdict(const struct gt_capture *c, char *out, size_t n);

/* "gdrtrace run: rank R host H verdict V exit E archive A", one write. */
void gt_run_rank_line(const char *rank, const char *host, const char *verdict, int code,
                      const char *archive);

#endif /* GDRTRACE_TOOLS_RUNLINE_H */
