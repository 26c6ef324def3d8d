/* SPDX-License-Identifier: Apache-2.0 */
/*
 * text_util.c — the reader's string utilities: bounded appending, natural
 * order, and the number formats every output shares (gt_fmt_*).
 * Invariant: nothing here knows a recorder; every function writes only
 * within the n bytes it is given and leaves them NUL-terminated.
 */
#include "tools/lib/text_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gdrtrace/codes.h"

void gt_appendf(char *buf, size_t n, const char *fmt, ...)
{
    size_t l = strnlen(buf, n);
    if (l + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + l, n - l, fmt, ap);
    va_end(ap);
}

int gt_natcmp(const char *a, const char *b)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    while (*x && *y) {
        if (*x >= '0' && *x <= '9' && *y >= '0' && *y <= '9') {
            /* a run of digits each: by value (leading zeros skipped, then the
             * longer run is the larger number, then digit by digit) */
            const unsigned char *xs = x, *ys = y;
            while (*xs == '0')
                xs++;
            while (*ys == '0')
                ys++;
            const unsigned char *xe = xs, *ye = ys;
            while (*xe >= '0' && *xe <= '9')
                xe++;
            while (*ye >= '0' && *ye <= '9')
                ye++;
            if (xe - xs != ye - ys)
                return xe - xs < ye - ys ? -1 : 1;
            for (; xs < xe; xs++, ys++)
                if (*xs != *ys)
                    return *xs < *ys ? -1 : 1;
            x = xe;
            y = ye;
            continue;
        }
        if (*x != *y)
            return *x < *y ? -1 : 1;
        x++;
        y++;
    }
    if (*x || *y)
        return *x ? 1 : -1;
    /* equal by value ("node02" and "node2"): bytes decide, so the order is total */
    int c = strcmp(a, b);
    return (c > 0) - (c < 0);
}

const char *gt_fmt_ns(uint64_t ns, char *buf, size_t n)
{
    if (ns < 1000)
        snprintf(buf, n, "%lluns", (unsigned long long)ns);
    else if (ns < 1000000)
        snprintf(buf, n, "%.1fus", ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, n, "%.2fms", ns / 1e6);
    else
        snprintf(buf, n, "%.2fs", ns / 1e9);
    return buf;
}

const char *gt_fmt_bytes(uint64_t b, char *buf, size_t n)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 6) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, n, "%llu B", (unsigned long long)b);
    else
        snprintf(buf, n, "%.1f %s", v, u[i]);
    return buf;
}

const char *gt_fmt_ptr(int bits, char *buf, size_t n)
{
    buf[0] = 0;
    if (bits & GT_PTR_HOST)
        gt_appendf(buf, n, "HOST");
    if (bits & GT_PTR_CUDA)
        gt_appendf(buf, n, "%sCUDA", buf[0] ? "|" : "");
    if (bits & GT_PTR_DMABUF)
        gt_appendf(buf, n, "%sDMABUF", buf[0] ? "|" : "");
    if (!buf[0])
        snprintf(buf, n, "none");
    return buf;
}
