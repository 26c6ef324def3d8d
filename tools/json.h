/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.h — a tiny streaming JSON writer for the commands' --json output.
 * Keys and string values are escaped (control bytes as \u00XX; bytes >= 0x80
 * passed through, so a recorder's UTF-8 survives).  Nesting up to 32 levels.
 * Not thread-safe; one writer per FILE.
 */
#ifndef GDRTRACE_TOOLS_JSON_H
#define GDRTRACE_TOOLS_JSON_H

#include <stdint.h>
#include <stdio.h>

struct gt_json {
    FILE *f;
    int depth;
    int count[32]; /* items written at each level (for commas) */
};

void gj_init(struct gt_json *j, FILE *f);
/* key is NULL inside arrays and at the top level. */
void gj_obj(struct gt_json *j, const char *key);
void gj_arr(struct gt_json *j, const char *key);
void gj_end(struct gt_json *j, char close); /* '}' or ']' */
void gj_str(struct gt_json *j, const char *key, const char *v);
void gj_u64(struct gt_json *j, const char *key, uint64_t v);
void gj_i64(struct gt_json *j, const char *key, int64_t v);
void gj_dbl(struct gt_json *j, const char *key, double v);
void gj_bool(struct gt_json *j, const char *key, int v);
void gj_null(struct gt_json *j, const char *key);
/* Ends the document with a newline. */
void gj_done(struct gt_json *j);
/* Escaped string to f (no quotes), for other formats that need it. */
void gj_escape(FILE *f, const char *s);

#endif
