/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_prom.c — export's metric set and its Prometheus text
 * (tools/render/prom.c): a whole exposition written out by hand here:
 * every family printed whole, in the order added, HELP and TYPE even with
 * no sample; samples of equal name and labels summed, any difference in a
 * label value or the label set kept apart; first-seen order by the
 * recorder's report position then emission; samples placed by their
 * read index and those of recorders left out dropped; integers printed
 * as such, others with 9 significant digits; label values escaped
 * (quote, backslash, newline; other control bytes and invalid UTF-8 as
 * '?'); a sample of an unknown family ignored.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/render/prom.h"

static char *g_buf;
static size_t g_len;

static const char *text_of(struct gt_prom *k)
{
    FILE *f = open_memstream(&g_buf, &g_len);
    gt_prom_text(f, k);
    fclose(f);
    return g_buf;
}

static void lab(struct gt_prom_label *l, const char *k, const char *v)
{
    l->k = k;
    snprintf(l->v, sizeof(l->v), "%s", v);
}

static void exposition(void **state)
{
    (void)state;
    struct gt_prom k = {0};
    gt_prom_sample(&k, 0, NULL, NULL, 0, 1); /* no family yet: ignored */
    gt_prom_family(&k, "gt_regs", "counter", "Registrations.");
    gt_prom_family(&k, "gt_up", "gauge", "Live recorders.");
    gt_prom_family(&k, "gt_empty", "gauge", "Nothing.");
    struct gt_prom_label l[2];
    /* recorder at report position 1 emits first, position 0 second */
    k.pos = 1;
    lab(&l[0], "host", "b");
    lab(&l[1], "method", "dmabuf");
    gt_prom_sample(&k, 0, "_total", l, 2, 3);
    gt_prom_sample(&k, 1, NULL, NULL, 0, 0.5);
    k.pos = 0;
    lab(&l[0], "host", "a");
    gt_prom_sample(&k, 0, "_total", l, 2, 4);
    gt_prom_sample(&k, 0, "_total", l, 2, 6); /* the same name and labels: summed */
    gt_prom_sample(&k, 0, "_total", l, 1, 7); /* host only: another series */
    gt_prom_sample(&k, 1, NULL, NULL, 0, 0.25);
    gt_prom_sample(&k, 1, NULL, NULL, 0, 1e18);
    gt_prom_merge(&k);
    assert_string_equal(text_of(&k), "# HELP gt_regs Registrations.\n"
                                     "# TYPE gt_regs counter\n"
                                     "gt_regs_total{host=\"a\",method=\"dmabuf\"} 10\n"
                                     "gt_regs_total{host=\"a\"} 7\n"
                                     "gt_regs_total{host=\"b\",method=\"dmabuf\"} 3\n"
                                     "# HELP gt_up Live recorders.\n"
                                     "# TYPE gt_up gauge\n"
                                     "gt_up 1e+18\n"
                                     "# HELP gt_empty Nothing.\n"
                                     "# TYPE gt_empty gauge\n");
    free(g_buf);
    gt_prom_free(&k);
}

static void values_and_escaping(void **state)
{
    (void)state;
    struct gt_prom k = {0};
    gt_prom_family(&k, "m", "gauge", "h");
    struct gt_prom_label l[1];
    lab(&l[0], "v", "q\"b\\n\nt\tx\x7f\xc3\xa9\xff");
    gt_prom_sample(&k, 0, NULL, l, 1, 0.1234567891);
    lab(&l[0], "v", "int");
    gt_prom_sample(&k, 0, NULL, l, 1, 42);
    lab(&l[0], "v", "neg");
    gt_prom_sample(&k, 0, NULL, l, 1, -2);
    gt_prom_merge(&k);
    assert_string_equal(text_of(&k), "# HELP m h\n"
                                     "# TYPE m gauge\n"
                                     "m{v=\"q\\\"b\\\\n\\nt?x?\xc3\xa9?\"} 0.123456789\n"
                                     "m{v=\"int\"} 42\n"
                                     "m{v=\"neg\"} -2\n");
    free(g_buf);
    gt_prom_free(&k);
}

static void placed_and_left_out(void **state)
{
    (void)state;
    struct gt_prom k = {0};
    gt_prom_family(&k, "m", "gauge", "h");
    struct gt_prom_label l[1];
    /* read order 0, 1, 2; report order 2, 0, 1; the recorder read second left out */
    for (size_t r = 0; r < 3; r++) {
        k.rec = r;
        char v[8];
        snprintf(v, sizeof(v), "r%zu", r);
        lab(&l[0], "rec", v);
        gt_prom_sample(&k, 0, NULL, l, 1, (double)r + 1);
    }
    k.rec = SIZE_MAX; /* after the fold: its position given */
    k.pos = 0;
    lab(&l[0], "rec", "job");
    gt_prom_sample(&k, 0, NULL, l, 1, 9);
    size_t rec_pos[3] = {1, 2, 0};
    unsigned char out[3] = {0, 0, 1}; /* report position 2: read index 1 */
    gt_prom_place(&k, rec_pos, 3, out);
    assert_int_equal(k.ns, 3);
    gt_prom_merge(&k);
    assert_string_equal(text_of(&k), "# HELP m h\n"
                                     "# TYPE m gauge\n"
                                     "m{rec=\"r2\"} 3\n"
                                     "m{rec=\"job\"} 9\n"
                                     "m{rec=\"r0\"} 1\n");
    free(g_buf);
    gt_prom_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exposition),
        cmocka_unit_test(values_and_escaping),
        cmocka_unit_test(placed_and_left_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
