/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capture_log.h — a logger for unit tests that counts WARNs and keeps the
 * text of the last one, so a test can check that a bad input is said
 * exactly once and names what was wrong.  Other levels are ignored.
 * Each including test gets its own g_warns/g_last (static); tests reset
 * them by hand between cases.
 */
#ifndef GDRTRACE_TESTS_CAPTURE_LOG_H
#define GDRTRACE_TESTS_CAPTURE_LOG_H

#include <stdarg.h>
#include <stdio.h>

#include "common/gt_net.h"

static int g_warns;
static char g_last[1024];

__attribute__((format(printf, 5, 6))) static inline void
capture_logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    (void)flags, (void)file, (void)line;
    if (level != GT_LOG_WARN)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_last, sizeof(g_last), fmt, ap);
    va_end(ap);
    g_warns++;
}

#endif
