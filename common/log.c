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

/* GDRTRACE_DEBUG, read at every message (a test may set it late); a value
 * other than 0 or 1 is said once, as every variable's (common/env.h).  Not
 * through gt_env_bool: its WARN would come back here. */
static int debug_enabled(void)
{
    static int warned;
    const char *d = getenv("GDRTRACE_DEBUG");
    if (!d || !*d || !strcmp(d, "0"))
        return 0;
    if (!strcmp(d, "1"))
        return 1;
    if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        gt_log(GT_LOG_WARN, GT_LOGSUB_ALL, __FILE__, __LINE__,
               "GDRTRACE_DEBUG='%s' is not one of 0|1; using the default (0)", d);
    return 0;
}

void gt_log(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    int dbg = debug_enabled();
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
    if (level == GT_LOG_WARN || dbg)
        fprintf(stderr, "NET/gdrtrace %s: %s\n", level == GT_LOG_WARN ? "WARN" : "INFO", msg);
}
