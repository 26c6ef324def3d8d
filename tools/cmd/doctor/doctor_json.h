/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doctor_json.h — a small JSON reader for `doctor --compare` (documents from other
 * nodes: untrusted input).  Parses the whole text into a tree; bounded depth
 * (DJ_MAX_DEPTH), every string NUL-terminated, numbers as double.
 * Ownership: dj_parse returns a tree the caller frees with dj_free.
 */
#ifndef GDRTRACE_TOOLS_DOCTOR_JSON_H
#define GDRTRACE_TOOLS_DOCTOR_JSON_H

#include <stddef.h>

#define DJ_MAX_DEPTH 32

enum dj_type { DJ_NULL, DJ_BOOL, DJ_NUM, DJ_STR, DJ_ARR, DJ_OBJ };

struct dj {
    int type;
    double num;  /* DJ_NUM, DJ_BOOL (0/1) */
    char *str;   /* DJ_STR */
    int n;       /* DJ_ARR / DJ_OBJ: number of items */
    char **keys; /* DJ_OBJ: n keys */
    struct dj **items;
};

/* Returns the tree, or NULL with err filled ("line L: what"). */
struct dj *dj_parse(const char *text, size_t len, char *err, size_t errlen);
void dj_free(struct dj *v);

/* Lookups; NULL when absent or of another type. */
const struct dj *dj_get(const struct dj *obj, const char *key);
const char *dj_str(const struct dj *obj, const char *key); /* "" when absent */
double dj_num(const struct dj *obj, const char *key, double dflt);
const struct dj *dj_at(const struct dj *arr, int i);

#endif
