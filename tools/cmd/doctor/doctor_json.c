/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doctor_json.c — recursive-descent JSON reader (RFC 8259 values) for doctor's
 * --compare.  The input comes from another node: every read is bounds-checked
 * against len, depth is capped at DJ_MAX_DEPTH, \u escapes are decoded to
 * UTF-8 (lone surrogates become U+FFFD), allocation failure is a parse error.
 */
#include "tools/cmd/doctor/doctor_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dj_parser {
    const char *s;
    size_t len, pos;
    char *err;
    size_t errlen;
    int failed;
};

__attribute__((format(printf, 2, 3))) static void fail(struct dj_parser *p, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = 1;
    int line = 1;
    for (size_t i = 0; i < p->pos && i < p->len; i++)
        line += p->s[i] == '\n';
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(p->err, p->errlen, "line %d: %s", line, what);
}

static void skip_ws(struct dj_parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static struct dj *node(struct dj_parser *p, int type)
{
    struct dj *v = calloc(1, sizeof(*v));
    if (!v)
        fail(p, "out of memory");
    else
        v->type = type;
    return v;
}

static int hex4(struct dj_parser *p, unsigned *out)
{
    if (p->len - p->pos < 4)
        return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[p->pos + (size_t)i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    p->pos += 4;
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* p->pos at the opening quote.  The decoded string is never longer than the
 * encoded one (an escape of 6 bytes gives at most 3, a pair of 12 at most 4). */
static char *parse_string(struct dj_parser *p)
{
    p->pos++;
    size_t start = p->pos, end = start;
    while (end < p->len && p->s[end] != '"') {
        if (p->s[end] == '\\')
            end++;
        end++;
    }
    if (end >= p->len) {
        fail(p, "unterminated string");
        return NULL;
    }
    char *out = malloc(end - start + 1);
    if (!out) {
        fail(p, "out of memory");
        return NULL;
    }
    size_t o = 0;
    while (p->pos < end) {
        unsigned char c = (unsigned char)p->s[p->pos++];
        if (c < 0x20) {
            fail(p, "control character in string");
            free(out);
            return NULL;
        }
        if (c != '\\') {
            out[o++] = (char)c;
            continue;
        }
        char e = p->s[p->pos++];
        switch (e) {
        case '"':
            out[o++] = '"';
            break;
        case '\\':
            out[o++] = '\\';
            break;
        case '/':
            out[o++] = '/';
            break;
        case 'b':
            out[o++] = '\b';
            break;
        case 'f':
            out[o++] = '\f';
            break;
        case 'n':
            out[o++] = '\n';
            break;
        case 'r':
            out[o++] = '\r';
            break;
        case 't':
            out[o++] = '\t';
            break;
        case 'u': {
            unsigned cp;
            if (p->pos > end || hex4(p, &cp) || p->pos > end) {
                fail(p, "bad \\u escape");
                free(out);
                return NULL;
            }
            if (cp >= 0xd800 && cp < 0xdc00 && end - p->pos >= 6 && p->s[p->pos] == '\\' &&
                p->s[p->pos + 1] == 'u') {
                size_t save = p->pos;
                unsigned lo;
                p->pos += 2;
                if (hex4(p, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000)
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                else
                    p->pos = save, cp = 0xfffd;
            } else if (cp >= 0xd800 && cp < 0xe000) {
                cp = 0xfffd;
            }
            o += put_utf8(out + o, cp);
            break;
        }
        default:
            fail(p, "bad escape \\%c", e);
            free(out);
            return NULL;
        }
    }
    out[o] = '\0';
    p->pos = end + 1;
    return out;
}

static struct dj *parse_value(struct dj_parser *p, int depth);

static int push(struct dj_parser *p, struct dj *v, struct dj *item, char *key)
{
    struct dj **items = realloc(v->items, (size_t)(v->n + 1) * sizeof(*items));
    if (!items) {
        fail(p, "out of memory");
        return -1;
    }
    v->items = items;
    if (v->type == DJ_OBJ) {
        char **keys = realloc(v->keys, (size_t)(v->n + 1) * sizeof(*keys));
        if (!keys) {
            fail(p, "out of memory");
            return -1;
        }
        v->keys = keys;
        v->keys[v->n] = key;
    }
    v->items[v->n++] = item;
    return 0;
}

static struct dj *parse_container(struct dj_parser *p, int depth, int obj)
{
    struct dj *v = node(p, obj ? DJ_OBJ : DJ_ARR);
    if (!v)
        return NULL;
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == (obj ? '}' : ']')) {
        p->pos++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(p);
        if (obj) {
            if (p->pos >= p->len || p->s[p->pos] != '"') {
                fail(p, "expected a key");
                goto err;
            }
            key = parse_string(p);
            if (!key)
                goto err;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                free(key);
                fail(p, "expected ':'");
                goto err;
            }
            p->pos++;
        }
        struct dj *item = parse_value(p, depth + 1);
        if (!item || push(p, v, item, key)) {
            free(key);
            dj_free(item);
            goto err;
        }
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == (obj ? '}' : ']')) {
            p->pos++;
            return v;
        }
        fail(p, "expected ',' or '%c'", obj ? '}' : ']');
        goto err;
    }
err:
    dj_free(v);
    return NULL;
}

static struct dj *parse_value(struct dj_parser *p, int depth)
{
    if (depth > DJ_MAX_DEPTH) {
        fail(p, "nested deeper than %d", DJ_MAX_DEPTH);
        return NULL;
    }
    skip_ws(p);
    if (p->pos >= p->len) {
        fail(p, "unexpected end");
        return NULL;
    }
    char c = p->s[p->pos];
    if (c == '{' || c == '[')
        return parse_container(p, depth, c == '{');
    if (c == '"') {
        char *s = parse_string(p);
        if (!s)
            return NULL;
        struct dj *v = node(p, DJ_STR);
        if (!v) {
            free(s);
            return NULL;
        }
        v->str = s;
        return v;
    }
    static const struct {
        const char *word;
        int type;
        double val;
    } words[] = {{"true", DJ_BOOL, 1}, {"false", DJ_BOOL, 0}, {"null", DJ_NULL, 0}};
    for (size_t i = 0; i < 3; i++) {
        size_t wl = strlen(words[i].word);
        if (p->len - p->pos >= wl && memcmp(p->s + p->pos, words[i].word, wl) == 0) {
            p->pos += wl;
            struct dj *v = node(p, words[i].type);
            if (v)
                v->num = words[i].val;
            return v;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char buf[64];
        size_t n = 0;
        while (p->pos < p->len && n < sizeof(buf) - 1 && strchr("+-0123456789.eE", p->s[p->pos]))
            buf[n++] = p->s[p->pos++];
        buf[n] = '\0';
        char *endp;
        double d = strtod(buf, &endp);
        if (*endp) {
            fail(p, "bad number \"%s\"", buf);
            return NULL;
        }
        struct dj *v = node(p, DJ_NUM);
        if (v)
            v->num = d;
        return v;
    }
    fail(p, "unexpected character '%c'", c);
    return NULL;
}

struct dj *dj_parse(const char *text, size_t len, char *err, size_t errlen)
{
    struct dj_parser p = {.s = text, .len = len, .err = err, .errlen = errlen};
    if (errlen)
        err[0] = '\0';
    struct dj *v = parse_value(&p, 0);
    if (v) {
        skip_ws(&p);
        if (p.pos != p.len) {
            fail(&p, "trailing text after the document");
            dj_free(v);
            v = NULL;
        }
    }
    return v;
}

void dj_free(struct dj *v)
{
    if (!v)
        return;
    for (int i = 0; i < v->n; i++) {
        dj_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

const struct dj *dj_get(const struct dj *obj, const char *key)
{
    if (!obj || obj->type != DJ_OBJ)
        return NULL;
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    return NULL;
}

const char *dj_str(const struct dj *obj, const char *key)
{
    const struct dj *v = dj_get(obj, key);
    return v && v->type == DJ_STR ? v->str : "";
}

double dj_num(const struct dj *obj, const char *key, double dflt)
{
    const struct dj *v = dj_get(obj, key);
    return v && (v->type == DJ_NUM || v->type == DJ_BOOL) ? v->num : dflt;
}

const struct dj *dj_at(const struct dj *arr, int i)
{
    if (!arr || arr->type != DJ_ARR || i < 0 || i >= arr->n)
        return NULL;
    return arr->items[i];
}
