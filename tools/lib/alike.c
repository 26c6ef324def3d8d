/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alike.c — the majority verdict of a set (alike.h).  Invariant: ties go to
 * the better verdict, so the worse one is the one named as differing.
 */
#include "tools/lib/alike.h"

int gt_alike_majority(const size_t *seen, int n)
{
    int maj = 0;
    for (int v = 1; v < n; v++)
        if (seen[v] > seen[maj])
            maj = v;
    return maj;
}
