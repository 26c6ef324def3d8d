/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_summary.h — the summary report as JSON (`summary --json`) and the
 * pieces of it other commands write too (a recorder's identity and owner, a
 * communicator's counts and latency).
 */
#ifndef GDRTRACE_TOOLS_RENDER_JSON_SUMMARY_H
#define GDRTRACE_TOOLS_RENDER_JSON_SUMMARY_H

#include "tools/lib/model.h"
#include "tools/render/json.h"

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

/* Pieces reused by other commands. */
void gt_json_identity(struct gt_json *js, const struct gt_recfile *r);
/* "owner" (the user name, or null) and "owner_uid" (-1 unknown) of r's file. */
void gt_json_owner(struct gt_json *js, const struct gt_recfile *r);
void gt_json_comm_counts(struct gt_json *js, const struct gtr_comm *c);
void gt_json_latency(struct gt_json *js, const struct gtr_comm *c);

#endif
