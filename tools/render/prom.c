/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prom.c — the metric set of `gdrtrace export` and its Prometheus text
 * (prom.h).  Label values are escaped as the format requires (\\ \" \n);
 * other control bytes and invalid UTF-8 (untrusted recorder strings) become
 * '?'.  A value that is a whole number below 1e18 prints as an integer, any
 * other with 9 significant digits.
 */
#include "tools/render/prom.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/render/json.h"

void gt_prom_family(struct gt_prom *k, const char *name, const char *type, const char *help)
{
    if (k->nfam < sizeof(k->fams) / sizeof(k->fams[0]))
        k->fams[k->nfam++] = (struct gt_prom_family){name, type, help};
}

void gt_prom_sample(struct gt_prom *k, size_t fam, const char *suffix,
                    const struct gt_prom_label *l, int nl, double v)
{
    if (k->oom || fam >= k->nfam)
        return;
    char name[128];
    snprintf(name, sizeof(name), "%s%s", k->fams[fam].name, suffix ? suffix : "");
    size_t len = strlen(name) + 1;
    for (int i = 0; i < nl; i++)
        len += strlen(l[i].k) + strlen(l[i].v) + 2;
    if (k->ns == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 256;
        struct gt_prom_sample *n = realloc(k->s, cap * sizeof(*n));
        if (!n) {
            k->oom = 1;
            return;
        }
        k->s = n;
        k->cap = cap;
    }
    char *key = malloc(len), *p = key;
    if (!key) {
        k->oom = 1;
        return;
    }
    p = stpcpy(p, name) + 1;
    for (int i = 0; i < nl; i++) {
        p = stpcpy(p, l[i].k) + 1;
        p = stpcpy(p, l[i].v) + 1;
    }
    k->s[k->ns] = (struct gt_prom_sample){fam, k->rec, k->pos, k->seq++, key, len, nl, v};
    k->ns++;
}

void gt_prom_place(struct gt_prom *k, const size_t *rec_pos, size_t nrec, const unsigned char *out)
{
    size_t w = 0;
    for (size_t i = 0; i < k->ns; i++) {
        struct gt_prom_sample *m = &k->s[i];
        if (m->rec != SIZE_MAX) {
            if (!rec_pos || m->rec >= nrec || out[rec_pos[m->rec]]) {
                free(m->key);
                continue;
            }
            m->pos = rec_pos[m->rec];
        }
        k->s[w++] = *m;
    }
    k->ns = w;
}

/* First-seen order: the recorder's report position, then emission. */
static int order_cmp(const struct gt_prom_sample *x, const struct gt_prom_sample *y)
{
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_key(const void *a, const void *b)
{
    const struct gt_prom_sample *x = a, *y = b;
    if (x->fam != y->fam)
        return x->fam < y->fam ? -1 : 1;
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp(x->key, y->key, n);
    if (c || x->klen == y->klen)
        return c ? c : order_cmp(x, y);
    return x->klen < y->klen ? -1 : 1;
}

static int by_seq(const void *a, const void *b)
{
    const struct gt_prom_sample *x = a, *y = b;
    if (x->fam != y->fam)
        return x->fam < y->fam ? -1 : 1;
    return order_cmp(x, y);
}

void gt_prom_merge(struct gt_prom *k)
{
    size_t n = 0;
    if (k->ns)
        qsort(k->s, k->ns, sizeof(*k->s), by_key);
    for (size_t i = 0; i < k->ns; i++) {
        if (n && k->s[n - 1].fam == k->s[i].fam && k->s[n - 1].klen == k->s[i].klen &&
            !memcmp(k->s[n - 1].key, k->s[i].key, k->s[i].klen)) {
            k->s[n - 1].v += k->s[i].v;
            free(k->s[i].key);
            continue;
        }
        k->s[n++] = k->s[i];
    }
    if (n)
        qsort(k->s, n, sizeof(*k->s), by_seq);
    k->ns = n;
}

static void prom_escape(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        if (*p == '\\' || *p == '"')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20 || *p == 0x7f)
            fputc('?', f);
        else if (*p >= 0x80) {
            size_t n = gj_utf8_len(p);
            if (n)
                fwrite(p, 1, n, f);
            else
                fputc('?', f);
            p += n ? n : 1;
            continue;
        } else
            fputc(*p, f);
        p++;
    }
}

static void put(FILE *f, const struct gt_prom_sample *m)
{
    const char *name = m->key, *p = name + strlen(name) + 1;
    fputs(name, f);
    if (m->nl) {
        fputc('{', f);
        for (int i = 0; i < m->nl; i++) {
            fprintf(f, "%s%s=\"", i ? "," : "", p);
            p += strlen(p) + 1;
            prom_escape(f, p);
            p += strlen(p) + 1;
            fputc('"', f);
        }
        fputc('}', f);
    }
    if (m->v == (double)(uint64_t)m->v && m->v < 1e18)
        fprintf(f, " %llu\n", (unsigned long long)m->v);
    else
        fprintf(f, " %.9g\n", m->v);
}

void gt_prom_text(FILE *f, const struct gt_prom *k)
{
    for (size_t fam = 0; fam < k->nfam; fam++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", k->fams[fam].name, k->fams[fam].help,
                k->fams[fam].name, k->fams[fam].type);
        for (size_t i = 0; i < k->ns; i++)
            if (k->s[i].fam == fam)
                put(f, &k->s[i]);
    }
}

void gt_prom_free(struct gt_prom *k)
{
    for (size_t i = 0; i < k->ns; i++)
        free(k->s[i].key);
    free(k->s);
    k->s = NULL;
    k->ns = k->cap = 0;
}
