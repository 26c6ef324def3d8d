/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_alike.c — verdict's alike lines (tools/render/alike_text.h) on hand-made lines:
 * host ranges (zero-padded and natural numbering, suffixes, names without a
 * number, widths that do not join, words kept under GT_ALIKE_WORD, the cap
 * of GT_ALIKE_TERMS); the majority (ties to the better verdict); printing:
 * at or under the threshold and with max < 0 every line as it is, past it
 * the alike ones as one line at the first one's place while every other
 * line keeps its own; numbers that differ shown MIN..MAX for a DIRECT
 * verdict and never merged for a problem (FALLBACK with two errnos stays
 * two lines); a node short of a process keeps its own line; commIds as
 * runs; no line wider than GT_REPORT_COLS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/alike.h"
#include "tools/lib/model.h"
#include "tools/render/alike_text.h"
#include "tools/render/text.h"

static void hosts_of(char *buf, size_t n, const char *const *names, size_t k)
{
    gt_alike_hosts(buf, n, names, k);
}

static void test_hosts(void **state)
{
    (void)state;
    char b[4096];
    const char *padded[] = {"node-0000", "node-0001", "node-0003", "node-0004", "node-0005"};
    hosts_of(b, sizeof(b), padded, 5);
    assert_string_equal(b, "node-[0000-0001,0003-0005]");
    const char *natural[] = {"node8", "node9", "node10", "node11", "node13"};
    hosts_of(b, sizeof(b), natural, 5);
    assert_string_equal(b, "node[8-11,13]");
    /* a leading zero against another width: not one run */
    const char *widths[] = {"n09", "n10", "n011"};
    hosts_of(b, sizeof(b), widths, 3);
    assert_string_equal(b, "n[09-10,011]");
    const char *mixed[] = {"alpha", "gpu1-a", "gpu2-a", "gpu3-b", "login7"};
    hosts_of(b, sizeof(b), mixed, 5);
    assert_string_equal(b, "alpha, gpu[1-2]-a, gpu3-b, login7");
    const char *one[] = {"node-0042"};
    hosts_of(b, sizeof(b), one, 1);
    assert_string_equal(b, "node-0042");
    /* every other host: runs of one; no word past GT_ALIKE_WORD columns */
    char names[40][16];
    const char *p[40];
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof(names[i]), "node-%04d", 2 * i);
        p[i] = names[i];
    }
    hosts_of(b, sizeof(b), p, 40);
    size_t words = 0;
    for (char *w = strtok(b, " "); w; w = strtok(NULL, " ")) {
        assert_true(strlen(w) <= GT_ALIKE_WORD + 1); /* the ", " comma */
        words++;
    }
    assert_true(words > 1);
    hosts_of(b, sizeof(b), p, 40);
    assert_non_null(strstr(b, "node-[0000,0002,"));
    /* capped: GT_ALIKE_TERMS terms, then how many more hosts */
    char more[32];
    snprintf(more, sizeof(more), " ... and %d more", 40 - GT_ALIKE_TERMS);
    assert_non_null(strstr(b, more));
    assert_non_null(strstr(b, "0062]"));
    assert_null(strstr(b, "0064"));
}

static void test_majority(void **state)
{
    (void)state;
    size_t a[GT_V_COUNT + 1] = {0};
    assert_int_equal(gt_alike_majority(a, GT_V_COUNT + 1), 0);
    a[GT_V_FALLBACK] = 3;
    a[GT_V_DIRECT_PEERMEM] = 3;
    assert_int_equal(gt_alike_majority(a, GT_V_COUNT + 1), GT_V_DIRECT_PEERMEM);
    a[GT_V_COUNT] = 4;
    assert_int_equal(gt_alike_majority(a, GT_V_COUNT + 1), GT_V_COUNT);
}

/* What gt_alike_print writes, in a malloc'd string. */
static char *print(const char *kind, const struct gt_alike_line *l, size_t n, long max, int numbers)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    assert_int_equal(
        gt_alike_print(f, kind, kind[0] == 'n' ? "nodes" : "communicators", l, n, max, numbers), 0);
    fclose(f);
    for (char *s = out, *e; *s; s = e + 1) {
        e = strchr(s, '\n');
        assert_non_null(e);
        assert_true(e - s <= GT_REPORT_COLS);
    }
    return out;
}

/* s with each line break before a continuation (spaces) made one space,
 * in place: a record a line, for finding text the wrapper split. */
static char *flat(char *s)
{
    char *o = s;
    for (const char *p = s; *p;) {
        if (p[0] == '\n' && p[1] == ' ') {
            *o++ = ' ';
            p++;
            while (*p == ' ')
                p++;
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
    return s;
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)); p++)
        n++;
    return n;
}

#define NC 20
static void test_comms(void **state)
{
    (void)state;
    struct gt_alike_line l[NC];
    char lab[NC][32], why[NC][128];
    const char *dm = gt_verdict_label(GT_V_DIRECT_DMABUF, 0);
    for (int i = 0; i < NC; i++) {
        snprintf(lab[i], sizeof(lab[i]), "0x%x", 0x100 + i);
        /* the registrations differ in number: one shape */
        snprintf(why[i], sizeof(why[i]), "%d GPU registration(s) via DMA-BUF (256.0 MiB).",
                 64 + (i % 3) * 32);
        l[i] = (struct gt_alike_line){lab[i], dm, GT_V_DIRECT_DMABUF,
                                      why[i], 1,  (uint64_t)(0x100 + i)};
    }
    /* two fall back with different errnos, one is MIXED */
    const char *fb = gt_verdict_label(GT_V_FALLBACK, 0);
    l[3] =
        (struct gt_alike_line){lab[3], fb, GT_V_FALLBACK, "6 fell back; last errno 22.", 1, 0x103};
    l[9] =
        (struct gt_alike_line){lab[9], fb, GT_V_FALLBACK, "6 fell back; last errno 95.", 1, 0x109};
    l[12] = (struct gt_alike_line){
        lab[12], gt_verdict_label(GT_V_MIXED, 0), GT_V_MIXED, "dmabuf 56, peermem 8.", 1, 0x10c};
    char *all = print("comm", l, NC, -1, 1);
    assert_int_equal(count(all, "\ncomm ") + 1, NC);
    assert_null(strstr(all, "alike"));
    char *same = print("comm", l, NC, NC, 1); /* nothing past the threshold */
    assert_string_equal(same, all);
    char *c = print("comm", l, NC, 8, 1);
    flat(c);
    assert_int_equal(count(c, "comm "), 4);
    assert_non_null(strstr(c, "comm (17 alike)"));
    assert_non_null(strstr(c, "64..128 GPU registration(s) via DMA-BUF (256.0 MiB)."));
    assert_non_null(strstr(c, "0x100..02, 0x104..08, 0x10a..0b, 0x10d..13"));
    assert_non_null(strstr(c, "last errno 22."));
    assert_non_null(strstr(c, "last errno 95."));
    /* the collapsed line sits where the first alike one was: before 0x103 */
    assert_true(strstr(c, "comm (17 alike)") < strstr(c, "comm 0x103"));
    assert_true(strstr(c, "comm 0x103") < strstr(c, "comm 0x109"));
    free(all);
    free(same);
    free(c);

    /* a majority of problems: the same text only; the two errnos stay apart */
    for (int i = 0; i < NC; i++)
        l[i] = (struct gt_alike_line){lab[i],
                                      fb,
                                      GT_V_FALLBACK,
                                      i % 2 ? "6 fell back; last errno 22."
                                            : "6 fell back; last errno 95.",
                                      1,
                                      (uint64_t)(0x100 + i)};
    l[0].text = "7 fell back; last errno 95.";
    c = flat(print("comm", l, NC, 8, 1));
    assert_non_null(strstr(c, "comm (10 alike)"));
    assert_non_null(strstr(c, "comm (9 alike)"));
    assert_non_null(strstr(c, "comm 0x100 "));
    assert_non_null(strstr(c, "7 fell back"));
    assert_null(strstr(c, "6..7"));
    assert_null(strstr(c, "22..95"));
    free(c);
}

static void test_nodes(void **state)
{
    (void)state;
    struct gt_alike_line l[12];
    char host[12][16];
    const char *dm = gt_verdict_label(GT_V_DIRECT_DMABUF, 0);
    for (int i = 0; i < 12; i++) {
        snprintf(host[i], sizeof(host[i]), "node%d", i + 5);
        l[i] = (struct gt_alike_line){
            host[i], dm, GT_V_DIRECT_DMABUF, "8 process(es), 2 communicator(s)", 0, 0};
    }
    l[4].text = "7 process(es), 2 communicator(s)"; /* node9: short of a process */
    char *c = flat(print("node", l, 12, 8, 0));
    assert_non_null(strstr(c, "node (11 alike)"));
    assert_non_null(strstr(c, "node[5-8,10-16]"));
    assert_non_null(strstr(c, "\nnode node9 "));
    assert_non_null(strstr(c, "7 process(es)"));
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hosts),
        cmocka_unit_test(test_majority),
        cmocka_unit_test(test_comms),
        cmocka_unit_test(test_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
