/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html.h — `gdrtrace report`'s page: one self-contained HTML file (inline
 * CSS and SVG, no script, nothing fetched) drawn from the reader's model
 * (tools/lib/model.h): the nodes x communicators grid coloured by verdict, the
 * per-operation latency histograms, and for two runs their overlay.
 *
 * Invariants of the page:
 *  1. Every string that came from a recorder, an archive or the command line
 *     (hosts, jobs, communicator labels, evidence, paths) passes through
 *     gt_html_escape(): inert as text and as a double-quoted attribute value.
 *  2. Nothing in it names a resource outside itself: no script, no src or
 *     href, CSS url() only to #fragments of the page; a Content-Security-
 *     Policy meta tag (default-src 'none') makes a browser refuse any fetch.
 *  3. Verdicts are the model's: a cell is gt_verdict_combine() of the
 *     verdicts the model gave each process of that node in that
 *     communicator (struct gt_rank_comm), nothing re-derived here.
 *  4. Deterministic: the same inputs give the same bytes (no clock, no
 *     address), so two reports can be compared with cmp.
 * Single-threaded, like the rest of the reader.
 */
#ifndef GDRTRACE_TOOLS_HTML_H
#define GDRTRACE_TOOLS_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "tools/lib/model.h"

/* One run shown on the page. */
struct gt_html_run {
    const char *name;         /* "A", "B"; NULL for the only run */
    const char *const *paths; /* what was read, as given (NULL, 0: $GDRTRACE_DIR) */
    int npaths;
    const struct gt_job *job; /* built by gt_load_job (fold mode is enough) */
    int nbad;                 /* inputs that could not be read */
    const char *dir;          /* with no paths: the folder read (NULL: "$GDRTRACE_DIR") */
};

/* One grid cell: the processes of one node in one communicator. */
struct gt_html_cell {
    size_t row;   /* index into gt_html_grid.rows */
    size_t comm;  /* index into job->comms */
    int code;     /* GT_V_*: the model's verdicts of those processes combined */
    int emulated; /* one of them ran the GPU-memory validation mode */
    int nproc;    /* processes (digests) behind the cell */
};

struct gt_html_grid {
    size_t *rows; /* rows[r]: index into job->nodes, in natural host order */
    size_t nrows;
    int *row_emulated;          /* a recorder of that node is emulated */
    struct gt_html_cell *cells; /* by row, then column, then communicator */
    size_t ncells;
    size_t *col;       /* col[c]: the column of job->comms[c] */
    size_t ncols;      /* one per communicator unless packed */
    int packed;        /* communicators on disjoint nodes share a column */
    size_t *ncomm_col; /* communicators in each column */
};

/* Above this many communicators the grid packs them into columns (greedy,
 * largest first): a 1,024-node job with one node-local communicator a node
 * then takes 2 columns, not 1,025. */
#define GT_HTML_UNPACKED_MAX 48

/*! gt_html_grid_build() : the grid of job j; 0, or ENOMEM (g is then empty). */
int gt_html_grid_build(const struct gt_job *j, struct gt_html_grid *g);
void gt_html_grid_free(struct gt_html_grid *g);

/*! gt_html_natcmp() : "natural" order of host names: runs of digits compare
 *  as numbers (node2 < node10), the rest byte by byte; ties by strcmp. */
int gt_html_natcmp(const char *a, const char *b);

/*! gt_html_escape() : writes s (NULL: nothing) to f, inert in HTML text and
 *  in a double- or single-quoted attribute value: first gt_esc() (control
 *  characters, bytes that are not UTF-8 and bidirectional overrides become
 *  visible escapes, tools/lib/esc.h), then & < > " ' as character references.
 *  max_chars > 0 cuts the text after that many characters, ending in "…". */
void gt_html_escape(FILE *f, const char *s, size_t max_chars);

/*! gt_html_write() : the whole page for run a alone (b == NULL), or for the
 *  A/B of baseline a and run b.  version: the gdrtrace version printed in the
 *  footer.  0, or ENOMEM; a write error shows in ferror(f). */
int gt_html_write(FILE *f, const struct gt_html_run *a, const struct gt_html_run *b,
                  const char *version);

#endif /* GDRTRACE_TOOLS_HTML_H */
