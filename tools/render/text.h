/* SPDX-License-Identifier: Apache-2.0 */
/*
 * text.h — what every text renderer shares: the width no line of summary or
 * verdict passes, word wrapping under a hanging indent, fixed-width cells
 * that never push a row past that width, and a histogram drawn in '#'.
 * Widths are in columns: UTF-8 code points of text already escaped by
 * gt_esc() (no control characters), so one code point is one column.
 */
#ifndef GDRTRACE_TOOLS_RENDER_TEXT_H
#define GDRTRACE_TOOLS_RENDER_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "gdrtrace/recorder_format.h"

#define GT_REPORT_COLS 100 /* no line of summary or verdict is wider */

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

/*! gt_report_hist_bars() : one row per power of two of h (its sub-buckets
 *  summed), from the first non-empty to the last: the range, a bar of at
 *  most `width` '#' scaled to the fullest row, the count. */
void gt_report_hist_bars(FILE *f, const struct gtr_hist *h, const char *indent, int width);

/*! gt_text_cols() : the columns s takes (its UTF-8 code points). */
int gt_text_cols(const char *s);

/*! gt_text_fit() : the bytes of s that fit in w columns. */
size_t gt_text_fit(const char *s, int w);

/*! gt_text_cell() : s left-aligned in a column of width w, then one space;
 *  a longer s takes its own line and the row goes on under it at column
 *  col + w + 1, so a long host or label never pushes the row past the width. */
void gt_text_cell(FILE *f, const char *s, int w, int col);

#endif
