/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.c — streaming JSON writer (see json.h).  Output is one line per value
 * with two-space indentation so that tests can grep it.
 */
#include "tools/json.h"

#include <math.h>

void gj_init(struct gt_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
}

void gj_escape(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
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

void gj_obj(struct gt_json *j, const char *key) { open_(j, key, '{'); }
void gj_arr(struct gt_json *j, const char *key) { open_(j, key, '['); }

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
