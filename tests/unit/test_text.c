/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_text.c — the text renderers' shared pieces (tools/render/text.c):
 * columns and fitting counted in UTF-8 code points; the hanging indent of a
 * long label; cells padded, or a long one on its own line with the row
 * going on under it; wrapping: a small case written out by hand, then 2,000
 * generated texts (words of 1..130 columns, some UTF-8, any used/indent)
 * where no line passes GT_REPORT_COLS, continuation lines start with the
 * indent (at most half the width; 4 for a word too long for it), and the
 * words come out in order with nothing lost; histogram bars: one row per
 * power of two from the first non-empty to the last, the fullest row
 * `width` '#', others in proportion, a non-zero row at least one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/render/text.h"

static char *g_buf;
static size_t g_len;

static void cols_and_fit(void **state)
{
    (void)state;
    assert_int_equal(gt_text_cols(""), 0);
    assert_int_equal(gt_text_cols("abc"), 3);
    assert_int_equal(gt_text_cols("\xc3\xa9\xe2\x82\xac"
                                  "a\xf0\x9f\x98\x80"),
                     4);
    assert_int_equal(gt_text_fit("\xc3\xa9\xe2\x82\xac"
                                 "a",
                                 2),
                     5);
    assert_int_equal(gt_text_fit("\xc3\xa9\xe2\x82\xac"
                                 "a",
                                 0),
                     0);
    assert_int_equal(gt_text_fit("abc", 10), 3);
    assert_int_equal(gt_report_hang(40, "DIRECT-DMABUF"), 40);
    assert_int_equal(gt_report_hang(40, "123456789012345"), 40);
    assert_int_equal(gt_report_hang(40, "1234567890123456789"), 36);
}

static void cells(void **state)
{
    (void)state;
    FILE *f = open_memstream(&g_buf, &g_len);
    gt_text_cell(f, "ab", 5, 0);
    gt_text_cell(f, "\xc3\xa9t\xc3\xa9", 3, 6);
    gt_text_cell(f, "too-long", 4, 10);
    fputs("|", f);
    fclose(f);
    assert_string_equal(g_buf, "ab    "
                               "\xc3\xa9t\xc3\xa9 "
                               "too-long\n"
                               "               |");
    free(g_buf);
}

static const char *wrap(int used, int indent, const char *text)
{
    FILE *f = open_memstream(&g_buf, &g_len);
    gt_report_wrap(f, used, indent, text);
    fclose(f);
    return g_buf;
}

static void wrap_by_hand(void **state)
{
    (void)state;
    assert_string_equal(wrap(95, 4, "aaa bbb"), "aaa\n    bbb\n");
    free(g_buf);
    assert_string_equal(wrap(0, 2, "  one  two"), "one  two\n");
    free(g_buf);
    assert_string_equal(wrap(10, 2, ""), "\n");
    free(g_buf);
}

static unsigned g_seed = 12345;
static unsigned rnd(unsigned n)
{
    g_seed = g_seed * 1103515245u + 12345u;
    return (g_seed >> 8) % n;
}

static void wrap_generated(void **state)
{
    (void)state;
    char text[4096], words[64][160];
    for (int iter = 0; iter < 2000; iter++) {
        int nw = 1 + (int)rnd(20), used = (int)rnd(100), indent = (int)rnd(70);
        size_t o = 0;
        for (int w = 0; w < nw; w++) {
            int len = 1 + (int)(rnd(10) ? rnd(14) : rnd(130));
            size_t k = 0;
            for (int c = 0; c < len; c++) {
                if (rnd(8) == 0) { /* a two-byte code point */
                    words[w][k++] = '\xc3';
                    words[w][k++] = '\xa9';
                } else {
                    words[w][k++] = (char)('a' + rnd(26));
                }
            }
            words[w][k] = 0;
            int sp = 1 + (int)rnd(3);
            o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%*s", words[w], sp, "");
        }
        const char *out = wrap(used, indent, text);
        int eff = indent > GT_REPORT_COLS / 2 ? GT_REPORT_COLS / 2 : indent;
        /* every line fits; continuation lines start with the indent (or 4) */
        const char *line = out;
        int first = 1;
        char joined[4096];
        size_t jo = 0;
        while (*line) {
            const char *nl = strchr(line, '\n');
            assert_non_null(nl);
            char l[1024];
            size_t n = (size_t)(nl - line);
            assert_true(n < sizeof(l));
            memcpy(l, line, n);
            l[n] = 0;
            int cols = gt_text_cols(l) + (first ? used : 0);
            if (cols > GT_REPORT_COLS)
                fail_msg("iter %d: line of %d columns: \"%s\"", iter, cols, l);
            if (!first) {
                size_t lead = strspn(l, " ");
                if (lead != (size_t)eff && lead != 4 && n)
                    fail_msg("iter %d: continuation indent %zu, want %d or 4", iter, lead, eff);
            }
            /* the words again, spaces dropped: cut words join up */
            for (size_t i = 0; i < n; i++)
                if (l[i] != ' ')
                    joined[jo++] = l[i];
            first = 0;
            line = nl + 1;
        }
        joined[jo] = 0;
        char want[4096];
        size_t wo = 0;
        for (int w = 0; w < nw; w++)
            wo += (size_t)snprintf(want + wo, sizeof(want) - wo, "%s", words[w]);
        if (strcmp(joined, want))
            fail_msg("iter %d: words lost or reordered:\n%s\n%s", iter, joined, want);
        free(g_buf);
    }
}

static void hist_bars(void **state)
{
    (void)state;
    static struct gtr_hist h;
    memset(&h, 0, sizeof(h));
    /* rows 2, 4 and 5 (row 3 empty between them): counts 100, 50, 1 */
    h.buckets[2 * GTR_HIST_SUB + 3] = 60;
    h.buckets[2 * GTR_HIST_SUB + 9] = 40;
    h.buckets[4 * GTR_HIST_SUB] = 50;
    h.buckets[5 * GTR_HIST_SUB + 15] = 1;
    FILE *f = open_memstream(&g_buf, &g_len);
    gt_report_hist_bars(f, &h, "  ", 20);
    fclose(f);
    static const struct {
        int bars;
        unsigned long long count;
    } want[] = {{20, 100}, {0, 0}, {10, 50}, {1, 1}};
    const char *line = g_buf;
    for (int r = 0; r < 4; r++) {
        const char *nl = strchr(line, '\n');
        assert_non_null(nl);
        assert_memory_equal(line, "  ", 2);
        const char *bar = strchr(line, '|');
        assert_true(bar && bar < nl);
        int n = 0;
        while (bar[1 + n] == '#')
            n++;
        assert_int_equal(n, want[r].bars);
        const char *num = nl;
        while (num > line && num[-1] != ' ')
            num--;
        unsigned long long c = strtoull(num, NULL, 10);
        assert_int_equal(c, want[r].count);
        line = nl + 1;
    }
    assert_string_equal(line, ""); /* nothing after the last non-empty row */
    free(g_buf);
    /* an empty histogram prints nothing */
    memset(&h, 0, sizeof(h));
    f = open_memstream(&g_buf, &g_len);
    gt_report_hist_bars(f, &h, "  ", 20);
    fclose(f);
    assert_string_equal(g_buf, "");
    free(g_buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cols_and_fit), cmocka_unit_test(cells),
        cmocka_unit_test(wrap_by_hand), cmocka_unit_test(wrap_generated),
        cmocka_unit_test(hist_bars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
