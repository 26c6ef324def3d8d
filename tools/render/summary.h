/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.h — the summary report (text and JSON), shared by `summary` and
 * `watch`, plus the helpers every subcommand uses for its options.
 */
#ifndef GDRTRACE_TOOLS_REPORT_H
#define GDRTRACE_TOOLS_REPORT_H

#include <stdio.h>

#include "tools/lib/inputs.h"
#include "tools/render/json.h"
#include "tools/lib/model.h"

#define GT_REPORT_BARS 0x1   /* draw histograms */
#define GT_REPORT_EVENTS 0x2 /* list the recent control events */
#define GT_REPORT_FULL 0x4   /* per node, per process and per communicator detail */
#define GT_REPORT_RANKS 0x8  /* the compact report with every process of each communicator */

#define GT_REPORT_COLS 100    /* no line of summary or verdict is wider */
#define GT_REPORT_LIST_MAX 16 /* the compact report names at most this many of a kind */

void gt_report_text(FILE *f, const struct gt_job *j, int flags);
/* The same, --full's process sections given already written: procs[i] is
 * recorder j->recs[i]'s gt_report_process() text (NULL: nothing), so that
 * each recorder can be written while it is whole and then folded. */
void gt_report_text_procs(FILE *f, const struct gt_job *j, int flags, char *const *procs);
/* --full's section of one process: identity, devices, settings, each
 * communicator in detail and, with GT_REPORT_EVENTS, its recent events. */
void gt_report_process(FILE *f, const struct gt_recfile *r, int flags);
void gt_report_json(struct gt_json *js, const struct gt_job *j);
/* The same, with extra(js, arg) writing more keys into the top object last
 * (summary --nccl-log's "nccl_log"). */
void gt_report_json_ex(struct gt_json *js, const struct gt_job *j,
                       void (*extra)(struct gt_json *js, const void *arg), const void *arg);
/* The same, the "processes" items given already written: procs[i] is
 * recorder j->recs[i]'s gt_report_json_process() written by a writer at
 * depth 2 with nothing written there yet (no leading comma). */
void gt_report_json_procs(struct gt_json *js, const struct gt_job *j,
                          void (*extra)(struct gt_json *js, const void *arg), const void *arg,
                          char *const *procs);
/* One item of "processes": identity, devices, events, each communicator. */
void gt_report_json_process(struct gt_json *js, const struct gt_recfile *r);

/*! gt_report_wrap() : prints text on a line where `used` columns are
 *  already taken, breaking at spaces so that no line is wider than
 *  GT_REPORT_COLS; continuation lines start with `indent` spaces (at most
 *  half the width); a word longer than a line is cut.  Ends the line. */
void gt_report_wrap(FILE *f, int used, int indent, const char *text);

/*! gt_report_hang() : the hanging indent for text after a verdict label
 *  printed in a "%-15s " field, the line so far `w` columns wide: where a
 *  label of 15 would have put the text, so a long label (an emulated
 *  verdict's) does not push every continuation line to a narrow strip. */
int gt_report_hang(int w, const char *label);

/*! gt_report_next() : ind, then "next: ...": the one next step for the outcome of
 *  job j (its overall verdict; no recorder: NO-DATA) read from paths (the
 *  command's PATH arguments, none: $GDRTRACE_DIR); docs/runbook-gates.md
 *  maps the gates.  gt_next_step() : the same text without "next: ". */
void gt_report_next(FILE *f, const char *ind, const struct gt_job *j, char **paths, int npaths);
void gt_next_step(const struct gt_job *j, char **paths, int npaths, char *buf, size_t n);

/* Pieces reused by other commands. */
void gt_report_hist_bars(FILE *f, const struct gtr_hist *h, const char *indent, int width);
void gt_json_identity(struct gt_json *js, const struct gt_recfile *r);
/* "owner" (the user name, or null) and "owner_uid" (-1 unknown) of r's file. */
void gt_json_owner(struct gt_json *js, const struct gt_recfile *r);
void gt_json_comm_counts(struct gt_json *js, const struct gtr_comm *c);
void gt_json_latency(struct gt_json *js, const struct gtr_comm *c);

/* Loads inputs and builds the job; prints problems.  Returns 0, or
 * GT_EXIT_INPUT when something could not be read (the rest is loaded). */
int gt_load_job(char **paths, int n, struct gt_inputs *in, struct gt_job *j);

#endif
