/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_owner.c — a recorder's owner as a name (tools/lib/owner.c): unknown
 * (-1) is "unknown owner" / "-"; uid 0 is root by name; a uid no account
 * has is its number; a short buffer is cut, never overrun.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pwd.h>
#include <string.h>

#include "tools/lib/owner.h"

static void names(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(gt_owner_name(-1, b, sizeof(b)), "unknown owner");
    assert_string_equal(gt_owner_short(-1, b, sizeof(b)), "-");
    assert_string_equal(gt_owner_name(0, b, sizeof(b)), "root (uid 0)");
    assert_string_equal(gt_owner_short(0, b, sizeof(b)), "root");
    /* a uid with no account (checked, so the test says so if one exists) */
    long nobody_here = 2147480123;
    assert_null(getpwuid((uid_t)nobody_here));
    assert_string_equal(gt_owner_name(nobody_here, b, sizeof(b)), "uid 2147480123");
    assert_string_equal(gt_owner_short(nobody_here, b, sizeof(b)), "2147480123");
}

static void short_buffer(void **state)
{
    (void)state;
    char b[8];
    memset(b, 'z', sizeof(b));
    assert_string_equal(gt_owner_name(0, b, 6), "root ");
    assert_int_equal(b[6], 'z');
    assert_string_equal(gt_owner_short(2147480123, b, 5), "2147");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names),
        cmocka_unit_test(short_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
