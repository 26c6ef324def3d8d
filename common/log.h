/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.h — logging through NCCL's logger, prefixed "NET/gdrtrace".
 *
 * Before NCCL hands us its logger (or in tools/tests), messages at WARN go to
 * stderr and INFO is dropped unless GDRTRACE_DEBUG=1.  The logger pointer is
 * written once per init and read racily by design: it is a single aligned
 * pointer store and every value ever stored is a valid logger.
 */
#ifndef GDRTRACE_LOG_H
#define GDRTRACE_LOG_H

#include "common/gt_net.h"

void gt_log_set_logger(gt_logger_fn logger);
gt_logger_fn gt_log_get_logger(void);
void gt_log(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define GT_WARN(...) gt_log(GT_LOG_WARN, GT_LOGSUB_ALL, __FILE__, __LINE__, __VA_ARGS__)
#define GT_INFO(flags, ...) gt_log(GT_LOG_INFO, (flags), __FILE__, __LINE__, __VA_ARGS__)
#define GT_TRACE(flags, ...) gt_log(GT_LOG_TRACE, (flags), __FILE__, __LINE__, __VA_ARGS__)

#endif
