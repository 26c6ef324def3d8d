/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alike_text.c — verdict's lines at job scale (alike_text.h): the lines
 * that say what most say collapsed into one, host ranges.
 *
 * Invariants (alike_text.h): a line of another verdict than the majority's
 * is printed in full; a collapsed line counts exactly the lines it stands
 * for; the text it shows is theirs, word for word, bar numbers that differ
 * (MIN..MAX), and only for verdicts that are not a problem: for MIXED,
 * FALLBACK, ERROR and BYPASSED only identical texts collapse, so no errno,
 * count or reason of a problem is blurred.  Grouping is linear in the lines
 * times the distinct texts (a handful in practice).
 */
#include "tools/render/alike_text.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/alike.h"
#include "tools/lib/esc.h"
#include "tools/lib/model.h"
#include "tools/render/text.h"

/* ---- numbers in a text: the "common form" ---- */

/* Length of the number (digits, optionally '.' and digits) that starts at
 * t[i] as a word of its own — not inside a name such as mlx5_0, x6 or
 * 0x4e0d — else 0. */
static size_t num_at(const char *t, size_t i)
{
    if (!isdigit((unsigned char)t[i]))
        return 0;
    if (i > 0 &&
        (isalnum((unsigned char)t[i - 1]) || t[i - 1] == '_' || t[i - 1] == '.' || t[i - 1] == '-'))
        return 0;
    size_t e = i;
    while (isdigit((unsigned char)t[e]))
        e++;
    if (t[e] == '.' && isdigit((unsigned char)t[e + 1])) {
        e++;
        while (isdigit((unsigned char)t[e]))
            e++;
    }
    if (isalnum((unsigned char)t[e]) || t[e] == '_')
        return 0;
    return e - i;
}

#define SLOT_MARK '\x01' /* stands for a number in a shape (never in an escaped text) */

/* t with every number replaced by SLOT_MARK; *nslot: how many.  NULL: no memory. */
static char *shape_of(const char *t, size_t *nslot)
{
    size_t n = strlen(t), k = 0, o = 0;
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n;) {
        size_t l = num_at(t, i);
        if (l) {
            s[o++] = SLOT_MARK;
            k++;
            i += l;
        } else {
            s[o++] = t[i++];
        }
    }
    s[o] = 0;
    *nslot = k;
    return s;
}

struct slot {
    double lo, hi;
    char los[32], his[32];
};

struct group {
    int key;
    const char *vlabel;
    char *shape; /* the text itself when its numbers must match too */
    size_t nslot;
    struct slot *slots;
    size_t count, first;
};

static void slots_add(struct group *g, const char *t)
{
    size_t k = 0;
    for (size_t i = 0; t[i] && k < g->nslot;) {
        size_t l = num_at(t, i);
        if (!l) {
            i++;
            continue;
        }
        char tok[32];
        size_t c = l < sizeof(tok) - 1 ? l : sizeof(tok) - 1;
        memcpy(tok, t + i, c);
        tok[c] = 0;
        double v = strtod(tok, NULL);
        struct slot *s = &g->slots[k++];
        if (g->count == 1 || v < s->lo) {
            s->lo = v;
            memcpy(s->los, tok, c + 1);
        }
        if (g->count == 1 || v > s->hi) {
            s->hi = v;
            memcpy(s->his, tok, c + 1);
        }
        i += l;
    }
}

/* The group's text: its shape with each number as the one value or MIN..MAX. */
static void common_form(const struct group *g, char *buf, size_t n)
{
    buf[0] = 0;
    size_t k = 0, len = 0;
    for (const char *p = g->shape; *p && len + 1 < n; p++) {
        if (*p == SLOT_MARK && k < g->nslot) {
            const struct slot *s = &g->slots[k++];
            if (strcmp(s->los, s->his))
                gt_appendf(buf, n, "%s..%s", s->los, s->his);
            else
                gt_appendf(buf, n, "%s", s->los);
            len = strlen(buf);
        } else {
            buf[len++] = *p;
            buf[len] = 0;
        }
    }
}

/* Verdicts whose numbers may be shown as a range: none of them is a problem
 * to chase (a minority of them is printed in full anyway). */
static int numbers_may_differ(int key)
{
    return key == GT_V_DIRECT_DMABUF || key == GT_V_DIRECT_PEERMEM || key == GT_V_HOST_STAGED ||
           key == GT_V_NO_DATA || key == GT_V_COUNT;
}

/* ---- labels ---- */

struct hostlist {
    char *buf;
    size_t n;
    size_t terms, words;
    /* the bracket being built */
    const char *name0; /* its first host (printed bare when it is alone) */
    char pre[256], suf[256];
    char runs[512];
    size_t nruns, nhosts;
};

/* Splits name at its last run of digits (at most 18: a value in a uint64). */
static int split(const char *name, size_t *s, size_t *e, unsigned long long *v)
{
    size_t n = strlen(name), i = n;
    while (i > 0 && !isdigit((unsigned char)name[i - 1]))
        i--;
    if (!i)
        return 0;
    *e = i;
    while (i > 0 && isdigit((unsigned char)name[i - 1]))
        i--;
    *s = i;
    if (*e - *s > 18)
        return 0;
    *v = strtoull(name + *s, NULL, 10);
    return 1;
}

static void hl_sep(struct hostlist *h)
{
    if (h->words++)
        gt_appendf(h->buf, h->n, ", ");
}

static void hl_close(struct hostlist *h)
{
    if (!h->nhosts)
        return;
    hl_sep(h);
    if (h->nhosts == 1)
        gt_appendf(h->buf, h->n, "%s", gt_esc(h->name0));
    else {
        gt_appendf(h->buf, h->n, "%s[", gt_esc(h->pre));
        gt_appendf(h->buf, h->n, "%s]%s", h->runs, gt_esc(h->suf));
    }
    h->nhosts = h->nruns = 0;
    h->runs[0] = 0;
}

void gt_alike_hosts(char *buf, size_t n, const char *const *names, size_t k)
{
    struct hostlist h = {.buf = buf, .n = n};
    buf[0] = 0;
    size_t i = 0;
    while (i < k) {
        const char *a = names[i];
        size_t s, e;
        unsigned long long v;
        if (h.terms == GT_ALIKE_TERMS)
            break;
        h.terms++;
        if (!split(a, &s, &e, &v)) { /* no number: a term of its own */
            hl_close(&h);
            hl_sep(&h);
            gt_appendf(buf, n, "%s", gt_esc(a));
            i++;
            continue;
        }
        /* the run: the hosts after a with the same prefix and suffix and
         * the next value, written alike (same width, or no leading zero) */
        size_t r = i + 1, le = e;
        const char *last = a;
        unsigned long long lv = v;
        for (; r < k; r++) {
            size_t s2, e2;
            unsigned long long v2;
            const char *b = names[r];
            if (!split(b, &s2, &e2, &v2) || s2 != s || strncmp(a, b, s) || strcmp(a + e, b + e2) ||
                v2 != lv + 1)
                break;
            int w1 = (int)(le - s), w2 = (int)(e2 - s2);
            if (w1 != w2 && (last[s] == '0' || b[s2] == '0'))
                break;
            last = b;
            le = e2;
            lv = v2;
        }
        char run[48];
        if (r - i == 1)
            snprintf(run, sizeof(run), "%.*s", (int)(e - s), a + s);
        else
            snprintf(run, sizeof(run), "%.*s-%.*s", (int)(e - s), a + s, (int)(le - s), last + s);
        int same = h.nhosts && strlen(h.pre) == s && !strncmp(h.pre, a, s) && !strcmp(h.suf, a + e);
        if (same &&
            strlen(h.pre) + strlen(h.runs) + strlen(run) + strlen(h.suf) + 3 > GT_ALIKE_WORD)
            same = 0; /* a word the wrapper can still place on a line */
        if (!same) {
            hl_close(&h);
            snprintf(h.pre, sizeof(h.pre), "%.*s", (int)s, a);
            snprintf(h.suf, sizeof(h.suf), "%s", a + e);
            h.name0 = a;
        }
        gt_appendf(h.runs, sizeof(h.runs), "%s%s", h.nruns++ ? "," : "", run);
        h.nhosts += r - i;
        i = r;
    }
    hl_close(&h);
    if (i < k)
        gt_appendf(buf, n, " ... and %zu more", k - i);
}

/* Communicator labels: runs of consecutive commIds as FIRST..LAST. */
#define ID_TERMS 6
static void id_list(char *buf, size_t n, const struct gt_alike_line *l, const size_t *ix, size_t k)
{
    buf[0] = 0;
    size_t i = 0, terms = 0;
    while (i < k && terms < ID_TERMS) {
        size_t r = i + 1;
        while (r < k && l[ix[i]].has_id && l[ix[r]].has_id && l[ix[r]].id == l[ix[r - 1]].id + 1)
            r++;
        const char *a = l[ix[i]].label, *z = l[ix[r - 1]].label;
        gt_appendf(buf, n, "%s%s", terms++ ? ", " : "", gt_esc(a));
        /* the last of a run without the digits it shares with the first:
         * 0x4e0de00000000003..3d (the same length, so no digit is implied; two
         * kept at least) */
        size_t c = 0;
        if (strlen(a) == strlen(z))
            while (a[c] && a[c] == z[c] && c + 2 < strlen(a))
                c++;
        if (r - i > 1)
            gt_appendf(buf, n, "..%s", gt_esc(z + c));
        i = r;
    }
    if (i < k)
        gt_appendf(buf, n, " ... and %zu more", k - i);
}

/* ---- printing ---- */

static void line_full(FILE *f, const char *kind, const char *label, const char *vlabel,
                      const char *text)
{
    char head[256];
    int w = snprintf(head, sizeof(head), "%s %-20s %-15s ", kind, gt_esc(label), vlabel);
    fputs(head, f);
    gt_report_wrap(f, w, gt_report_hang(w, vlabel), gt_esc(text));
}

static void line_group(FILE *f, const char *kind, const char *noun, const struct group *g,
                       const struct gt_alike_line *l, size_t n, const size_t *grp, size_t gi,
                       int hosts)
{
    size_t *ix = malloc(g->count * sizeof(*ix));
    const char **names = malloc(g->count * sizeof(*names));
    char *text = malloc(16384), *list = malloc(4096);
    if (!ix || !names || !text || !list) {
        free(ix);
        free(names);
        free(text);
        free(list);
        for (size_t i = 0; i < n; i++) /* no memory to collapse: each line */
            if (grp[i] == gi)
                line_full(f, kind, l[i].label, l[i].vlabel, l[i].text);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (grp[i] == gi) {
            ix[k] = i;
            names[k++] = l[i].label;
        }
    if (hosts)
        gt_alike_hosts(list, 4096, names, k);
    else
        id_list(list, 4096, l, ix, k);
    common_form(g, text, 16384);
    char label[32], head[256];
    snprintf(label, sizeof(label), "(%zu alike)", g->count);
    int w = snprintf(head, sizeof(head), "%s %-20s %-15s ", kind, label, g->vlabel);
    fputs(head, f);
    /* the text is escaped here, the list was as it was built */
    char *all = malloc(16384 + 4096 + 128);
    if (all) {
        snprintf(all, 16384 + 4096 + 128, "%s (all %zu %s: %s; --full: a line each)", gt_esc(text),
                 g->count, noun, list);
        gt_report_wrap(f, w, gt_report_hang(w, g->vlabel), all);
    } else {
        gt_report_wrap(f, w, gt_report_hang(w, g->vlabel), gt_esc(text));
    }
    free(all);
    free(ix);
    free(names);
    free(text);
    free(list);
}

int gt_alike_print(FILE *f, const char *kind, const char *noun, const struct gt_alike_line *lines,
                   size_t n, long max, int numbers)
{
    size_t seen[GT_V_COUNT + 1] = {0};
    for (size_t i = 0; i < n; i++)
        if (lines[i].key >= 0 && lines[i].key <= GT_V_COUNT)
            seen[lines[i].key]++;
    int maj = gt_alike_majority(seen, GT_V_COUNT + 1);
    if (max < 0 || seen[maj] <= (size_t)max) { /* nothing could collapse: as always */
        for (size_t i = 0; i < n; i++)
            line_full(f, kind, lines[i].label, lines[i].vlabel, lines[i].text);
        return 0;
    }
    int rc = 0;
    size_t ng = 0, cap = 8;
    size_t *grp = malloc(n * sizeof(*grp));
    struct group *g = calloc(cap, sizeof(*g));
    if (!grp || !g) {
        rc = -1;
        goto plain;
    }
    for (size_t i = 0; i < n; i++) {
        grp[i] = SIZE_MAX;
        const struct gt_alike_line *l = &lines[i];
        if (l->key != maj)
            continue;
        size_t nslot = 0;
        /* a text holding the mark itself keeps its numbers exact */
        int num = numbers && numbers_may_differ(l->key) && !strchr(l->text, SLOT_MARK);
        char *sh = num ? shape_of(l->text, &nslot) : strdup(l->text);
        if (!sh) {
            rc = -1;
            goto plain;
        }
        size_t q = 0;
        for (; q < ng; q++)
            if (g[q].key == l->key && !strcmp(g[q].vlabel, l->vlabel) && !strcmp(g[q].shape, sh))
                break;
        if (q == ng) {
            if (ng == cap) {
                struct group *ng2 = realloc(g, cap * 2 * sizeof(*g));
                if (!ng2) {
                    free(sh);
                    rc = -1;
                    goto plain;
                }
                g = ng2;
                memset(g + cap, 0, cap * sizeof(*g));
                cap *= 2;
            }
            g[ng] = (struct group){l->key, l->vlabel, sh, nslot, NULL, 0, i};
            if (nslot && !(g[ng].slots = calloc(nslot, sizeof(struct slot)))) {
                free(sh);
                g[ng].shape = NULL;
                rc = -1;
                goto plain;
            }
            ng++;
        } else {
            free(sh);
        }
        g[q].count++;
        if (g[q].nslot)
            slots_add(&g[q], l->text);
        grp[i] = q;
    }
    for (size_t i = 0; i < n; i++) {
        size_t q = grp[i];
        if (q == SIZE_MAX || g[q].count <= (size_t)max)
            line_full(f, kind, lines[i].label, lines[i].vlabel, lines[i].text);
        else if (g[q].first == i)
            line_group(f, kind, noun, &g[q], lines, n, grp, q, !strcmp(kind, "node"));
    }
    goto out;
plain:
    for (size_t i = 0; i < n; i++)
        line_full(f, kind, lines[i].label, lines[i].vlabel, lines[i].text);
out:
    for (size_t q = 0; g && q < ng; q++) {
        free(g[q].shape);
        free(g[q].slots);
    }
    free(g);
    free(grp);
    return rc;
}
