/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_json.c — the streaming JSON writer of every --json output
 * (tools/render/json.c): a document of every value kind, written out by
 * hand here with its commas, indentation and empty containers; integers
 * at their limits; NaN and infinities as null; strings escaped (quote,
 * backslash, newline, other C0 and DEL as \u00XX); valid UTF-8 of 2, 3
 * and 4 bytes kept; every kind of invalid byte (stray continuation,
 * overlong, surrogate, past U+10FFFF, 0xF5..0xFF lead bytes, a sequence
 * cut by the end) as U+FFFD, so the output is valid UTF-8 whatever a
 * recorder holds; nesting past 32 levels stays in bounds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/render/json.h"

static char *g_buf;
static size_t g_len;

static FILE *open_mem(void)
{
    FILE *f = open_memstream(&g_buf, &g_len);
    assert_non_null(f);
    return f;
}

static const char *close_mem(FILE *f)
{
    fclose(f);
    return g_buf;
}

static void document(void **state)
{
    (void)state;
    FILE *f = open_mem();
    struct gt_json j;
    gj_init(&j, f);
    gj_obj(&j, NULL);
    gj_str(&j, "s", "plain");
    gj_u64(&j, "u", UINT64_MAX);
    gj_i64(&j, "i", INT64_MIN);
    gj_dbl(&j, "d", 1.5);
    gj_dbl(&j, "big", 1e20);
    gj_dbl(&j, "pi", 3.14159265); /* six significant digits */
    gj_dbl(&j, "nan", NAN);
    gj_dbl(&j, "inf", -INFINITY);
    gj_bool(&j, "t", 7);
    gj_bool(&j, "f", 0);
    gj_null(&j, "n");
    gj_str(&j, "null str", NULL);
    gj_arr(&j, "a");
    gj_u64(&j, NULL, 1);
    gj_obj(&j, NULL);
    gj_end(&j, '}');
    gj_arr(&j, NULL);
    gj_end(&j, ']');
    gj_end(&j, ']');
    gj_obj(&j, "o");
    gj_end(&j, '}');
    gj_end(&j, '}');
    gj_done(&j);
    assert_string_equal(close_mem(f), "{\n"
                                      "  \"s\": \"plain\",\n"
                                      "  \"u\": 18446744073709551615,\n"
                                      "  \"i\": -9223372036854775808,\n"
                                      "  \"d\": 1.5,\n"
                                      "  \"big\": 1e+20,\n"
                                      "  \"pi\": 3.14159,\n"
                                      "  \"nan\": null,\n"
                                      "  \"inf\": null,\n"
                                      "  \"t\": true,\n"
                                      "  \"f\": false,\n"
                                      "  \"n\": null,\n"
                                      "  \"null str\": \"\",\n"
                                      "  \"a\": [\n"
                                      "    1,\n"
                                      "    {},\n"
                                      "    []\n"
                                      "  ],\n"
                                      "  \"o\": {}\n"
                                      "}\n");
    free(g_buf);
}

static const char *esc(const char *s)
{
    FILE *f = open_mem();
    gj_escape(f, s);
    return close_mem(f);
}

static void check_esc(const char *in, const char *want)
{
    const char *got = esc(in);
    if (strcmp(got, want))
        fail_msg("escape of \"%s\": \"%s\", want \"%s\"", in, got, want);
    free(g_buf);
}

static void escaping(void **state)
{
    (void)state;
    check_esc("a\"b\\c", "a\\\"b\\\\c");
    check_esc("l1\nl2", "l1\\nl2");
    check_esc("\t\r\x01\x1b\x1f\x7f", "\\u0009\\u000d\\u0001\\u001b\\u001f\\u007f");
    check_esc("/ ~", "/ ~");
    /* keys are escaped too */
    FILE *f = open_mem();
    struct gt_json j;
    gj_init(&j, f);
    gj_obj(&j, NULL);
    gj_bool(&j, "k\"\n", 1);
    gj_end(&j, '}');
    assert_string_equal(close_mem(f), "{\n  \"k\\\"\\n\": true\n}");
    free(g_buf);
}

static void utf8(void **state)
{
    (void)state;
    check_esc("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf",
              "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf");
    check_esc("\x80", "\\ufffd");
    check_esc("\xc0\xaf", "\\ufffd\\ufffd");                       /* overlong, 2 bytes */
    check_esc("\xc1\xbf", "\\ufffd\\ufffd");                       /* overlong, 2 bytes */
    check_esc("\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd");            /* overlong, 3 bytes */
    check_esc("\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd");            /* a surrogate */
    check_esc("\xf0\x80\x80\xaf", "\\ufffd\\ufffd\\ufffd\\ufffd"); /* overlong, 4 bytes */
    check_esc("\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"); /* past U+10FFFF */
    check_esc("\xf5\x80\x80", "\\ufffd\\ufffd\\ufffd");            /* never a lead byte */
    check_esc("\xf8\x80\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd");
    check_esc("\xff\xfe", "\\ufffd\\ufffd");
    check_esc("x\xe2\x82", "x\\ufffd\\ufffd"); /* cut by the end */
    check_esc("\xe2\x82y", "\\ufffd\\ufffdy");
}

static void deep(void **state)
{
    (void)state;
    FILE *f = open_mem();
    struct gt_json j;
    gj_init(&j, f);
    for (int i = 0; i < 40; i++)
        gj_arr(&j, NULL);
    gj_u64(&j, NULL, 1);
    for (int i = 0; i < 40; i++)
        gj_end(&j, ']');
    gj_done(&j);
    const char *out = close_mem(f);
    size_t open = 0, close = 0;
    for (const char *p = out; *p; p++) {
        open += *p == '[';
        close += *p == ']';
    }
    assert_int_equal(open, 40);
    assert_int_equal(close, 40);
    assert_int_equal(j.depth, 0);
    free(g_buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(document),
        cmocka_unit_test(escaping),
        cmocka_unit_test(utf8),
        cmocka_unit_test(deep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
