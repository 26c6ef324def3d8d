/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capture_log.h — a logger for unit tests that counts WARNs and keeps the
 * text of the last one, so a test can check that a bad input is said
 * exactly once and names what was wrong.  Other levels are ignored.
 * Each including test gets its own g_warns/g_last (static); tests reset
 * them by hand between cases.  With g_warn_about set, only WARNs whose text
 * contains it count (a test about one variable ignores the others' WARNs).
 * The count is atomic: a test may log from several threads at once.
 */
#ifndef GDRTRACE_TESTS_CAPTURE_LOG_H
#define GDRTRACE_TESTS_CAPTURE_LOG_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/gt_net.h"

static int g_warns;
static char g_last[1024];
static const char *g_warn_about;

__attribute__((format(printf, 5, 6))) static inline void
capture_logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    (void)flags, (void)file, (void)line;
    if (level != GT_LOG_WARN)
        return;
    char text[sizeof(g_last)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (g_warn_about && !strstr(text, g_warn_about))
        return;
    snprintf(g_last, sizeof(g_last), "%s", text);
    __atomic_add_fetch(&g_warns, 1, __ATOMIC_RELAXED);
}

#endif
