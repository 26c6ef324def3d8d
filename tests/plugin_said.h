/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugin_said.h — an NCCL logger for test programs that load the built
 * plugin (ncclNet_vN.init(said_logger, …)): it keeps every WARN and INFO
 * line (a fallback is INFO) in `said`, so a test can check the plugin's
 * words, and prints the WARNs.  Header-only, as tests/check.h: each program
 * has its own buffer.  Lines past the 64 KiB are dropped, never torn.
 * Threads: the plugin logs from NCCL's threads; read `said` under
 * said_lock (said_has does).
 */
#ifndef GDRTRACE_TESTS_PLUGIN_SAID_H
#define GDRTRACE_TESTS_PLUGIN_SAID_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nccl/net.h"

static char said[65536];
static size_t said_len;
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;

static void said_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...)
{
    (void)flags, (void)file, (void)line;
    if (level > NCCL_LOG_INFO)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (level <= NCCL_LOG_WARN)
        printf("plugin: %s\n", msg);
    pthread_mutex_lock(&said_lock);
    int n = snprintf(said + said_len, sizeof(said) - said_len, "%s\n", msg);
    if (n > 0)
        said_len = said_len + (size_t)n < sizeof(said) ? said_len + (size_t)n : sizeof(said);
    pthread_mutex_unlock(&said_lock);
}

/* 1 when some line the plugin logged contains `what`. */
static inline int said_has(const char *what)
{
    pthread_mutex_lock(&said_lock);
    int found = strstr(said, what) != NULL;
    pthread_mutex_unlock(&said_lock);
    return found;
}

#endif
