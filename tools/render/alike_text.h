/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alike_text.h — long reports shown at a glance: verdict's text lines
 * of communicators and nodes with the lines that say the same thing as
 * most others collapsed into one, host names as natural-order ranges.
 *
 * Invariants: a line whose verdict is not the majority's is never
 * collapsed; a collapsed line counts exactly the lines it stands for and
 * hides no text but their labels and, for a DIRECT/HOST-STAGED/NO-DATA
 * verdict, the exact values of numbers that differ among them (shown as
 * MIN..MAX); at or under GT_ALIKE_MAX alike lines, every line is printed
 * as it always was.
 */
#ifndef GDRTRACE_TOOLS_RENDER_ALIKE_TEXT_H
#define GDRTRACE_TOOLS_RENDER_ALIKE_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* More alike lines than this collapse into one.  Eight is one 8-GPU node's
 * worth: a job of up to eight nodes, or one node with up to eight
 * communicators, keeps one line each (what every small example and test
 * shows), while eight lines with their wrapped evidence (about 24 rows)
 * still fit a terminal; past that, a list of lines that all say the same
 * thing buries the one that does not. */
#define GT_ALIKE_MAX 8

/* One line of verdict's text: `KIND LABEL VERDICT TEXT`. */
struct gt_alike_line {
    const char *label;  /* raw: escaped when printed */
    const char *vlabel; /* the verdict as printed (gt_verdict_label, INTRA-NODE) */
    int key;            /* GT_V_* code; INTRA-NODE: GT_V_COUNT (a kind of its own) */
    const char *text;   /* evidence (raw) */
    int has_id;         /* id is the communicator's commId (ranges of consecutive ids) */
    uint64_t id;
};

/*! gt_alike_print() : prints lines[0, n) as `KIND %-20s %-15s TEXT` (TEXT
 *  wrapped under itself, no line wider than GT_REPORT_COLS), in order;
 *  with max >= 0, lines of the majority verdict that share a text (for a
 *  DIRECT-*, HOST-STAGED, NO-DATA or INTRA-NODE verdict and numbers 1: a
 *  text that differs only in its numbers) and are more than max in number
 *  print as one line where the first of them was: `KIND (N alike) VERDICT
 *  TEXT` (differing numbers as MIN..MAX), then `each of:` and their labels
 *  (hosts: natural-order ranges; commIds: runs of consecutive ids).  max <
 *  0 prints every line.  noun names the lines in the plural ("communicators",
 *  "nodes").  0, or -1 when out of memory (then every line is printed). */
int gt_alike_print(FILE *f, const char *kind, const char *noun, const struct gt_alike_line *lines,
                   size_t n, long max, int numbers);

/*! gt_alike_hosts() : writes into buf (n bytes) the hosts names[0, k), given
 *  in natural order (gt_natcmp), as ranges on the last run of digits:
 *  node-0000 node-0001 node-0003 -> "node-[0000-0001,0003]", a bracket being
 *  closed and reopened so that no word passes GT_ALIKE_WORD columns (the
 *  wrapper breaks between words only); names escaped (gt_esc).  At most
 *  GT_ALIKE_TERMS terms (ranges or names), then "... and N more". */
#define GT_ALIKE_WORD 48
#define GT_ALIKE_TERMS 32
void gt_alike_hosts(char *buf, size_t n, const char *const *names, size_t k);

#endif
