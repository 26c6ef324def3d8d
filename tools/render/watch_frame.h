/* SPDX-License-Identifier: Apache-2.0 */
/*
 * watch_frame.h — one frame of `gdrtrace watch` (issue 21): the job's
 * verdict, rates between two samples, and one row per communicator and per
 * process, most severe first; and its rendering into a given number of rows
 * and columns.  No terminal handling here (cmd_watch.c owns the terminal),
 * so tests build and render frames from recorders they wrote themselves.
 *
 * Invariants:
 *  1. A rendered frame has at most `rows` lines and no line wider than
 *     `cols` columns (0: no limit): cells and whole lines are cut with "…".
 *     Widths count a code point outside ASCII as 2 columns, except the two
 *     glyphs we print ourselves ("…", "—"), so East Asian wide characters in
 *     a host name cannot push a line past the edge.
 *  2. Rows are in severity order: ERROR, FALLBACK, BYPASSED, MIXED, the
 *     DIRECT/HOST-STAGED kinds, NO-DATA; within one, communicators before
 *     processes, each in report order.  When they do not all fit, the last
 *     line says how many were left out.
 *  3. A rate is known only from two samples of the same counters: a
 *     (process, communicator) pair sampled at both frames, or one whose
 *     counters all began within the interval (a communicator created since,
 *     in a process already seen; a process that started after the previous
 *     sample).  A counter that went down was reset (the writer reopened its
 *     recorder): its delta is its new value.  Unknown rates print "—".
 *  4. Every string that comes from a recorder is passed through gt_esc when
 *     the frame is built.
 */
#ifndef GDRTRACE_TOOLS_WATCH_FRAME_H
#define GDRTRACE_TOOLS_WATCH_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/lib/model.h"

struct gt_watch_rate {
    int known;                /* 0: no earlier sample to compare with (printed "—") */
    double bytes, msgs, regs; /* per second: bytes sent + received, completed sends +
                               * receives, registrations (every outcome) */
};

enum gt_watch_kind { GT_WATCH_COMM = 0, GT_WATCH_PROC = 1 };

struct gt_watch_row {
    int kind; /* enum gt_watch_kind */
    int verdict;
    int emulated;
    char name[192]; /* "comm 0x…", "proc HOST:PID rank R" (escaped) */
    size_t nprocs;
    uint64_t errors, fallbacks;
    struct gt_watch_rate rate;
    char note[256]; /* the last error or fallback reason, what became of a process (escaped) */
};

struct gt_watch_frame {
    char title[512];    /* "gdrtrace watch  TIME  every S  N live recorder(s)…" */
    char verdict[1024]; /* "all VERDICT why", or what was read when nothing was found */
    int verdict_code;   /* GT_V_* */
    double dt;          /* seconds since the previous sample; 0 on the first frame */
    struct gt_watch_rate total;
    size_t nproc, nknown;      /* processes now, of which with a known rate */
    size_t nnew, ngone;        /* processes since / gone since the previous sample */
    struct gt_watch_row *rows; /* display order (invariant 2) */
    size_t nrows;
};

/* The counters of the previous sample, by (process, communicator). */
struct gt_watch_sample;
struct gt_watch {
    struct gt_watch_sample *tab; /* open addressing, cap a power of two (or 0) */
    size_t cap, nproc;
    int have;        /* a previous sample exists */
    double mono_s;   /* its CLOCK_MONOTONIC time */
    int64_t wall_ns; /* its CLOCK_REALTIME time */
};

/*! gt_watch_frame_build() : fills *f from job j, sampled at mono_s
 *  (CLOCK_MONOTONIC seconds) and wall_ns (CLOCK_REALTIME), against w's
 *  previous sample, then makes this sample w's.  f->title is left to the
 *  caller.  0, or -1 out of memory (f then holds nothing to free and w is
 *  unchanged). */
int gt_watch_frame_build(struct gt_watch *w, const struct gt_job *j, double mono_s, int64_t wall_ns,
                         struct gt_watch_frame *f);
void gt_watch_frame_free(struct gt_watch_frame *f);
void gt_watch_free(struct gt_watch *w);

/*! gt_watch_frame_render() : writes f in at most rows lines of at most cols
 *  columns (0: no limit), invariant 1.  tty: every line ends with ESC[K
 *  (clear to its end), lines are separated by "\n" with none after the
 *  last, and ESC[J clears what an earlier, longer frame left below; the
 *  caller homes the cursor first.  Otherwise every line ends with "\n".
 *  Returns the number of lines written. */
int gt_watch_frame_render(FILE *out, const struct gt_watch_frame *f, int rows, int cols, int tty);

/* Columns s takes on a terminal (invariant 1). */
size_t gt_watch_width(const char *s);

#endif
