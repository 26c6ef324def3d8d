/* SPDX-License-Identifier: Apache-2.0 */
/*
 * text.c — the text renderers' shared pieces (text.h): wrapping, cells,
 * histogram bars.  Invariant: nothing printed through gt_report_wrap() or
 * gt_text_cell() passes GT_REPORT_COLS columns unless one word alone does
 * and is cut there.
 */
#include "tools/render/text.h"

#include <stdint.h>
#include <string.h>

#include "common/hist.h"
#include "tools/lib/model.h"

int gt_text_cols(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

size_t gt_text_fit(const char *s, int w)
{
    size_t i = 0;
    int c = 0;
    while (s[i]) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (c == w)
                break;
            c++;
        }
        i++;
    }
    return i;
}

int gt_report_hang(int w, const char *label)
{
    int l = gt_text_cols(label);
    return l > 15 ? w - (l - 15) : w;
}

void gt_report_wrap(FILE *f, int used, int indent, const char *text)
{
    const int width = GT_REPORT_COLS;
    if (indent > width / 2)
        indent = width / 2;
    int at = used;
    int bare = used <= indent; /* nothing on this line but its indent: no use breaking */
    const char *p = text;
    while (*p == ' ')
        p++;
    while (*p) {
        const char *g = p; /* the spaces before a word are kept unless the line breaks there */
        while (*p == ' ')
            p++;
        int gap = bare ? 0 : (int)(p - g);
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        char word[512];
        size_t wl = (size_t)(e - p) < sizeof(word) - 1 ? (size_t)(e - p) : sizeof(word) - 1;
        memcpy(word, p, wl);
        word[wl] = 0;
        int wc = gt_text_cols(word);
        /* a word too long for the hanging indent (a path) gets a line of its
         * own from column 4 rather than being cut */
        int ind = wc > width - indent && indent > 4 ? 4 : indent;
        if (at + gap + wc > width && !(bare && at <= ind)) {
            fprintf(f, "\n%*s", ind, "");
            at = ind;
            gap = 0;
            bare = 1;
        }
        if (at + gap + wc > width) { /* longer than a line: cut where the line ends */
            size_t take = gt_text_fit(word, width - at - gap);
            if (!take)
                take = 1;
            fprintf(f, "%*s%.*s\n%*s", gap, "", (int)take, word, indent, "");
            at = indent;
            bare = 1;
            p += take;
            continue;
        }
        fprintf(f, "%*s%s", gap, "", word);
        at += gap + wc;
        bare = 0;
        p += wl;
    }
    fputc('\n', f);
}

void gt_text_cell(FILE *f, const char *s, int w, int col)
{
    int c = gt_text_cols(s);
    if (c <= w)
        fprintf(f, "%s%*s ", s, w - c, "");
    else
        fprintf(f, "%s\n%*s", s, col + w + 1, "");
}

void gt_report_hist_bars(FILE *f, const struct gtr_hist *h, const char *indent, int width)
{
    /* One row per power of two: the 16 sub-buckets summed. */
    enum { ROWS = GTR_HIST_BUCKETS / GTR_HIST_SUB };
    uint64_t row[ROWS] = {0}, maxrow = 0;
    int lo = -1, hi = -1;
    for (int r = 0; r < ROWS; r++) {
        for (int s = 0; s < (int)GTR_HIST_SUB; s++)
            row[r] += h->buckets[r * GTR_HIST_SUB + s];
        if (row[r]) {
            if (lo < 0)
                lo = r;
            hi = r;
            if (row[r] > maxrow)
                maxrow = row[r];
        }
    }
    if (lo < 0)
        return;
    for (int r = lo; r <= hi; r++) {
        char a[24], b[24];
        uint64_t from = gt_hist_bucket_lo((unsigned)(r * GTR_HIST_SUB));
        uint64_t to = gt_hist_bucket_hi((unsigned)(r * GTR_HIST_SUB + GTR_HIST_SUB - 1));
        int len = (int)((double)row[r] * width / (double)maxrow + 0.5);
        if (row[r] && len == 0)
            len = 1;
        fprintf(f, "%s%9s..%-9s |", indent, gt_fmt_ns(from, a, sizeof(a)),
                to == UINT64_MAX ? "inf" : gt_fmt_ns(to, b, sizeof(b)));
        for (int i = 0; i < len; i++)
            fputc('#', f);
        fprintf(f, "%*s %llu\n", width - len, "", (unsigned long long)row[r]);
    }
}
