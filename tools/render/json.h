/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.h — a tiny streaming JSON writer for the commands' --json output.
 * Keys and string values are escaped (control bytes as \u00XX; valid UTF-8
 * passed through, invalid bytes replaced by U+FFFD).  Nesting up to 32 levels.
 * Not thread-safe; one writer per FILE.
 */
#ifndef GDRTRACE_TOOLS_JSON_H
#define GDRTRACE_TOOLS_JSON_H

#include <stddef.h>
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
/* Escaped string to f (no quotes); bytes that are not valid UTF-8 become
 * \ufffd so the output stays valid JSON whatever a recorder holds. */
void gj_escape(FILE *f, const char *s);
/* Length (1..4) of the valid UTF-8 sequence at p, 0 if invalid. */
size_t gj_utf8_len(const unsigned char *p);

#endif
