/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prom.h — a set of metric samples and its Prometheus text exposition
 * (format 0.0.4).  Samples are buffered as they are emitted; samples of
 * equal name and labels are summed, and each family is printed whole (HELP,
 * TYPE, then its samples) in first-seen order: (pos, seq), the recorder's
 * report position, then the order of emission.  `export --json` writes the
 * same merged set (tools/render/json_export.h).
 */
#ifndef GDRTRACE_TOOLS_RENDER_PROM_H
#define GDRTRACE_TOOLS_RENDER_PROM_H

#include <stddef.h>
#include <stdio.h>

struct gt_prom_label {
    const char *k;
    char v[160];
};

/* One buffered sample: key is "name\0k\0v\0k\0v\0..." (klen bytes).  rec is
 * the read index it was emitted under while folding (SIZE_MAX: emitted after
 * the fold, pos already final). */
struct gt_prom_sample {
    size_t fam, rec, pos, seq;
    char *key;
    size_t klen;
    int nl;
    double v;
};

struct gt_prom_family {
    const char *name, *type, *help;
};

struct gt_prom {
    int oom; /* a sample was lost: out of memory */
    struct gt_prom_family fams[40];
    int per_process; /* the export's metric set: per-process labels (rank, pid), quantiles */
    size_t coll0;    /* the export's metric set: index of its first collective family */
    size_t nfam;
    struct gt_prom_sample *s;
    size_t ns, cap;
    size_t rec, pos, seq; /* stamped on the next sample */
};

/* Adds a family; its index is the number of families added before it. */
void gt_prom_family(struct gt_prom *k, const char *name, const char *type, const char *help);
/* Buffers one sample of family fam (name + suffix) with labels l[0..nl). */
void gt_prom_sample(struct gt_prom *k, size_t fam, const char *suffix,
                    const struct gt_prom_label *l, int nl, double v);
/* Gives the samples emitted while folding their report position (rec_pos
 * maps read index to report position) and drops those of recorders left
 * out (out[], by report position). */
void gt_prom_place(struct gt_prom *k, const size_t *rec_pos, size_t nrec, const unsigned char *out);
/* Sums samples of equal name and labels and puts them in printing order:
 * by family, then first seen.  Once, before writing. */
void gt_prom_merge(struct gt_prom *k);
/* The exposition text of the merged set: every family whole. */
void gt_prom_text(FILE *f, const struct gt_prom *k);
void gt_prom_free(struct gt_prom *k);

/* ---- the metric set of `gdrtrace export`, built from the model ----
 * Families and their labels are documented in docs/export.md.  Order of
 * calls: begin; recorder, once per recorder while it is whole (the fold's
 * each hook, k->rec its read index); job, after the fold; then merge and
 * text (or gt_json_export). */
struct gt_recfile;
struct gtr_comm;
struct gt_job;
struct gt_verdict;
/* The families every export prints, in their order; per_process adds the
 * rank and pid labels and the latency quantiles. */
void gt_prom_export_begin(struct gt_prom *k, int per_process);
/* One recorder's communicators (sibling slots summed into grp, scratch):
 * registrations, fallbacks, errors, latency, messages, verdicts; seen[]
 * (GT_V_COUNT) counts its communicators' verdicts. */
void gt_prom_export_recorder(struct gt_prom *k, const struct gt_recfile *r, struct gtr_comm *grp,
                             int *seen);
/* After the fold: host pressure (when a kept recorder has it), the samples
 * placed (gone[]: recorders left out, by report position), the recorders,
 * their events, the job's verdict (overall), the collective families. */
void gt_prom_export_job(struct gt_prom *k, const struct gt_job *j, const unsigned char *gone,
                        const struct gt_verdict *overall);

#endif
