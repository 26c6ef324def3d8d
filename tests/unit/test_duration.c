/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_duration.c — the reader's strict durations and a recorder's last
 * activity (tools/lib/duration.c): each unit's value; what is refused
 * (empty, no digits, no unit, two units, an unknown or upper-case unit,
 * sign, space, fraction); the overflow edge of each unit to the
 * nanosecond; the last activity of a closed recorder (its end), of a live
 * one without a ring (its start), never before the start nor after now.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "tools/lib/duration.h"

#define S 1000000000LL

static void units(void **state)
{
    (void)state;
    int64_t ns = -1;
    assert_int_equal(gt_parse_duration("0s", &ns), 0);
    assert_true(ns == 0);
    assert_int_equal(gt_parse_duration("45s", &ns), 0);
    assert_true(ns == 45 * S);
    assert_int_equal(gt_parse_duration("90m", &ns), 0);
    assert_true(ns == 5400 * S);
    assert_int_equal(gt_parse_duration("2h", &ns), 0);
    assert_true(ns == 7200 * S);
    assert_int_equal(gt_parse_duration("3d", &ns), 0);
    assert_true(ns == 259200 * S);
    assert_int_equal(gt_parse_duration("1w", &ns), 0);
    assert_true(ns == 604800 * S);
    assert_int_equal(gt_parse_duration("007m", &ns), 0);
    assert_true(ns == 420 * S);
}

static void refused(void **state)
{
    (void)state;
    static const char *bad[] = {"",     "s",    "1",    "1x",  "-1s",  "+1s", " 1s",
                                "1s ",  "1 s",  "1.5h", "1ss", "1S",   "1H",  "1sm",
                                "0x1s", "1e3s", "s1",   "1ms", "1\ns", "1s\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t ns = 1234;
        if (gt_parse_duration(bad[i], &ns) != -1)
            fail_msg("\"%s\" accepted", bad[i]);
        assert_true(ns == 1234); /* untouched */
    }
}

static void overflow_edges(void **state)
{
    (void)state;
    /* INT64_MAX ns = 9223372036.854775807 s: whole units up to it pass */
    static const struct {
        const char *ok, *over;
        int64_t sec;
    } e[] = {
        {"9223372036s", "9223372037s", 9223372036LL},
        {"153722867m", "153722868m", 153722867LL * 60},
        {"2562047h", "2562048h", 2562047LL * 3600},
        {"106751d", "106752d", 106751LL * 86400},
        {"15250w", "15251w", 15250LL * 604800},
    };
    for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
        int64_t ns = 0;
        assert_int_equal(gt_parse_duration(e[i].ok, &ns), 0);
        assert_true(ns == e[i].sec * S);
        assert_int_equal(gt_parse_duration(e[i].over, &ns), -1);
    }
    int64_t ns;
    assert_int_equal(gt_parse_duration("99999999999999999999999s", &ns), -1);
}

static void last_activity(void **state)
{
    (void)state;
    static struct gt_recfile r;
    memset(&r, 0, sizeof(r));
    int64_t start = 1700000000 * S, now = start + 1000 * S;
    r.id.start_wall_ns = start;
    /* live, no ring: its start */
    assert_true(gt_last_activity_ns(&r, now) == start);
    /* closed: its end */
    r.hdr.state = GTR_STATE_CLOSED;
    r.id.end_wall_ns = start + 30 * S;
    assert_true(gt_last_activity_ns(&r, now) == start + 30 * S);
    /* an end before the start (a clock step): the start */
    r.id.end_wall_ns = start - S;
    assert_true(gt_last_activity_ns(&r, now) == start);
    /* an end in the future: now */
    r.id.end_wall_ns = now + 5 * S;
    assert_true(gt_last_activity_ns(&r, now) == now);
    /* closed without an end recorded: the start */
    r.id.end_wall_ns = 0;
    assert_true(gt_last_activity_ns(&r, now) == start);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(units),
        cmocka_unit_test(refused),
        cmocka_unit_test(overflow_edges),
        cmocka_unit_test(last_activity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
