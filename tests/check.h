/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/check.h — the one pair of assertion macros of the C tests that do
 * not use cmocka (the recorder's process tests, doctor's, the dl seam's and
 * the Soft-RoCE VM's).
 *
 *   CHECK(cond, fmt, ...)    on failure prints one line
 *                            "FAIL file:line: cond: message" on stdout,
 *                            flushed, and counts it in `failures` — an int
 *                            the including file defines — then goes on, so
 *                            one run reports every broken check;
 *   REQUIRE(cond, fmt, ...)  the same line, then `return 1` from the caller:
 *                            for steps the rest of a test depends on.
 *
 * Invariant: stdout and flushed at once, so the line lands in order with the
 * test's own output in the runner's log and on the VM's console.
 */
#ifndef GDRTRACE_TESTS_CHECK_H
#define GDRTRACE_TESTS_CHECK_H

#include <stdio.h>

#define GT_CHECK_SAY_(cond, ...)                                                                   \
    do {                                                                                           \
        printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                     \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        fflush(stdout);                                                                            \
    } while (0)

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            GT_CHECK_SAY_(cond, __VA_ARGS__);                                                      \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            GT_CHECK_SAY_(cond, __VA_ARGS__);                                                      \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#endif
