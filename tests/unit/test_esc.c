/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_esc.c — strings made safe for a terminal (tools/lib/esc.c): text
 * with nothing to escape comes back as the same pointer; each C0 control,
 * DEL and the backslash spelled out (\n \r \t \e \\ \xHH); bytes that are
 * not UTF-8 (a stray continuation, an overlong form, a surrogate, a cut
 * sequence, past U+10FFFF) as \xHH each; C1 controls and the bidi
 * overrides as \u{XXXX}; other UTF-8 (2, 3 and 4 bytes) kept; NULL is "";
 * 8 results live at once; an output past 16 KiB ends in "...".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/esc.h"

static void kept(void **state)
{
    (void)state;
    static const char *clean[] = {
        "", "node-a", "a b ~", "caf\xc3\xa9", "\xe2\x82\xac 5", "\xf0\x9f\x98\x80", "\xc2\xa0"};
    for (size_t i = 0; i < sizeof(clean) / sizeof(clean[0]); i++)
        assert_ptr_equal(gt_esc(clean[i]), clean[i]);
    assert_string_equal(gt_esc(NULL), "");
}

static void c0_and_backslash(void **state)
{
    (void)state;
    assert_string_equal(gt_esc("a\nb"), "a\\nb");
    assert_string_equal(gt_esc("\r\t"), "\\r\\t");
    assert_string_equal(gt_esc("\x1b[2J"), "\\e[2J");
    assert_string_equal(gt_esc("x\\y"), "x\\\\y");
    assert_string_equal(gt_esc("\x01\x1f\x7f"), "\\x01\\x1f\\x7f");
    assert_string_equal(gt_esc("\x08"), "\\x08");
}

static void not_utf8(void **state)
{
    (void)state;
    assert_string_equal(gt_esc("\x80"), "\\x80");                   /* stray continuation */
    assert_string_equal(gt_esc("\xc0\xaf"), "\\xc0\\xaf");          /* overlong '/' */
    assert_string_equal(gt_esc("\xe0\x80\xaf"), "\\xe0\\x80\\xaf"); /* overlong, 3 bytes */
    assert_string_equal(gt_esc("\xed\xa0\x80"), "\\xed\\xa0\\x80"); /* a surrogate */
    assert_string_equal(gt_esc("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); /* > U+10FFFF */
    assert_string_equal(gt_esc("a\xe2\x82"), "a\\xe2\\x82");                 /* cut at the end */
    assert_string_equal(gt_esc("\xe2\x82z"), "\\xe2\\x82z");                 /* cut before ASCII */
    assert_string_equal(gt_esc("\xff\xfe"), "\\xff\\xfe");
}

static void c1_and_bidi(void **state)
{
    (void)state;
    assert_string_equal(gt_esc("\xc2\x80"), "\\u{0080}");
    assert_string_equal(gt_esc("a\xc2\x9b"
                               "2J"),
                        "a\\u{009b}2J"); /* CSI */
    assert_string_equal(gt_esc("\xe2\x80\xaa"), "\\u{202a}");
    assert_string_equal(gt_esc("\xe2\x80\xae"), "\\u{202e}");
    assert_string_equal(gt_esc("\xe2\x81\xa6\xe2\x81\xa9"), "\\u{2066}\\u{2069}");
    /* the neighbours are ordinary text */
    const char *ok = "\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa";
    assert_ptr_equal(gt_esc(ok), ok);
}

static void eight_live(void **state)
{
    (void)state;
    const char *r[8];
    char in[8][16]; /* room for any int */
    for (int i = 0; i < 8; i++) {
        snprintf(in[i], sizeof(in[i]), "%d\n", i);
        r[i] = gt_esc(in[i]);
    }
    for (int i = 0; i < 8; i++) {
        char want[16];
        snprintf(want, sizeof(want), "%d\\n", i);
        assert_string_equal(r[i], want);
    }
}

static void long_output_is_cut(void **state)
{
    (void)state;
    /* 10,000 newlines escape to 20,000 bytes: past the 16 KiB slot */
    size_t n = 10000;
    char *in = malloc(n + 1);
    assert_non_null(in);
    memset(in, '\n', n);
    in[n] = 0;
    const char *out = gt_esc(in);
    size_t len = strlen(out);
    assert_true(len < 16 * 1024);
    assert_true(len > 16 * 1024 - 8);
    assert_string_equal(out + len - 3, "...");
    for (size_t i = 0; i + 3 < len; i += 2)
        assert_memory_equal(out + i, "\\n", 2);
    /* 4-byte escapes after one plain byte: the longest prefix of whole
     * escapes that leaves room for "..." and the NUL */
    in[0] = 'a';
    memset(in + 1, 0xff, n - 1);
    out = gt_esc(in);
    len = strlen(out);
    assert_true(len + 1 <= 16 * 1024);
    assert_string_equal(out + len - 3, "...");
    size_t kept = len - 3;
    assert_int_equal((kept - 1) % 4, 0);
    assert_true(kept + 4 + 3 + 1 > 16 * 1024); /* one more would not fit */
    for (size_t i = 1; i < kept; i += 4)
        assert_memory_equal(out + i, "\\xff", 4);
    /* just below the limit: whole, no "..." */
    memset(in, '\n', n);
    in[8000] = 0;
    out = gt_esc(in);
    assert_int_equal(strlen(out), 16000);
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kept),       cmocka_unit_test(c0_and_backslash),
        cmocka_unit_test(not_utf8),   cmocka_unit_test(c1_and_bidi),
        cmocka_unit_test(eight_live), cmocka_unit_test(long_output_is_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
