/* SPDX-License-Identifier: Apache-2.0 */
/* log.c — see log.h.  Owns the one process-wide logger pointer. */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gt_logger_fn g_logger;

void gt_log_set_logger(gt_logger_fn logger)
{
    if (logger)
        __atomic_store_n(&g_logger, logger, __ATOMIC_RELEASE);
}

gt_logger_fn gt_log_get_logger(void)
{
    return __atomic_load_n(&g_logger, __ATOMIC_ACQUIRE);
}

void gt_log(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    gt_logger_fn logger = gt_log_get_logger();
    if (logger) {
        logger(level, flags, file, line, "NET/gdrtrace : %s", msg);
        return;
    }
    const char *dbg = getenv("GDRTRACE_DEBUG");
    if (level == GT_LOG_WARN || (dbg && strcmp(dbg, "1") == 0))
        fprintf(stderr, "NET/gdrtrace %s: %s\n", level == GT_LOG_WARN ? "WARN" : "INFO", msg);
}
