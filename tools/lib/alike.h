/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alike.h — the majority verdict of a set, shared by summary's node tally
 * and verdict's alike lines (tools/render/alike_text.h).
 */
#ifndef GDRTRACE_TOOLS_ALIKE_H
#define GDRTRACE_TOOLS_ALIKE_H

#include <stddef.h>

/*! gt_alike_majority() : the index of the largest count in seen[0, n), ties
 *  going to the lower index (the better verdict, GT_V_* order: so the worse
 *  one is the one named as differing).  0 when every count is 0. */
int gt_alike_majority(const size_t *seen, int n);

#endif
