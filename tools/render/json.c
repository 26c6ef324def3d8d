/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.c — streaming JSON writer (see json.h).  Output is one line per value
 * with two-space indentation so that tests can grep it.
 */
#include "tools/render/json.h"

#include <math.h>
#include <stddef.h>

void gj_init(struct gt_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if it is not one:
 * recorder strings are untrusted bytes, and JSON must be valid UTF-8. */
size_t gj_utf8_len(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    size_t n = p[0] >= 0xf0 && p[0] <= 0xf4   ? 4
               : p[0] >= 0xe0 && p[0] <= 0xef ? 3
               : p[0] >= 0xc2 && p[0] < 0xe0  ? 2
                                              : 0;
    if (!n)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    /* overlongs and surrogates */
    if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0)))
        return 0;
    if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90)))
        return 0;
    return n;
}

void gj_escape(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else if (*p >= 0x80) {
            size_t n = gj_utf8_len(p);
            if (n == 0) {
                fputs("\\ufffd", f); /* not UTF-8: the replacement character */
                p++;
            } else {
                fwrite(p, 1, n, f);
                p += n;
            }
            continue;
        } else
            fputc(*p, f);
        p++;
    }
}

static void item(struct gt_json *j, const char *key)
{
    if (j->count[j->depth]++)
        fputc(',', j->f);
    if (j->depth) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    if (key) {
        fputc('"', j->f);
        gj_escape(j->f, key);
        fputs("\": ", j->f);
    }
}

static void open_(struct gt_json *j, const char *key, char c)
{
    item(j, key);
    fputc(c, j->f);
    if (j->depth < 31)
        j->depth++;
    j->count[j->depth] = 0;
}

void gj_obj(struct gt_json *j, const char *key)
{
    open_(j, key, '{');
}
void gj_arr(struct gt_json *j, const char *key)
{
    open_(j, key, '[');
}

void gj_end(struct gt_json *j, char close)
{
    int had = j->count[j->depth];
    if (j->depth)
        j->depth--;
    if (had) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(close, j->f);
}

void gj_str(struct gt_json *j, const char *key, const char *v)
{
    item(j, key);
    fputc('"', j->f);
    gj_escape(j->f, v ? v : "");
    fputc('"', j->f);
}

void gj_u64(struct gt_json *j, const char *key, uint64_t v)
{
    item(j, key);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void gj_i64(struct gt_json *j, const char *key, int64_t v)
{
    item(j, key);
    fprintf(j->f, "%lld", (long long)v);
}

void gj_dbl(struct gt_json *j, const char *key, double v)
{
    item(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.6g", v);
    else
        fputs("null", j->f);
}

void gj_bool(struct gt_json *j, const char *key, int v)
{
    item(j, key);
    fputs(v ? "true" : "false", j->f);
}

void gj_null(struct gt_json *j, const char *key)
{
    item(j, key);
    fputs("null", j->f);
}

void gj_done(struct gt_json *j)
{
    fputc('\n', j->f);
}
