/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_hist.c — log-linear histograms (common/hist.h).  Checks: values below
 * 32 ns get their own exact bucket; the index formula of recorder_format.h
 * holds at every power-of-two edge and sub-bucket edge up to 2^42; bucket
 * bounds round-trip (lo(i) lands in i, hi(i)-1 lands in i, hi(i) in i+1);
 * widths are at most 1/16 of the lower bound; huge values clamp to the last
 * bucket while count/sum/min/max stay exact; owned and shared updates give
 * identical histograms; percentiles agree with a sorted reference within
 * the documented 1/32 relative error for several distributions, and exactly
 * below 32 ns; concurrent shared updates lose nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/hist.h"

static unsigned ref_index(uint64_t v)
{
    if (v < 16)
        return (unsigned)v;
    unsigned m = 0;
    while ((v >> (m + 1)) != 0)
        m++;
    if (m > GTR_HIST_MAX_LOG2)
        return GTR_HIST_BUCKETS - 1;
    return (m - 3) * 16 + (unsigned)((v >> (m - 4)) - 16);
}

static void test_small_values_exact(void **state)
{
    (void)state;
    for (uint64_t v = 0; v < 32; v++) {
        assert_int_equal(gt_hist_index(v), v);
        assert_int_equal(gt_hist_bucket_lo((unsigned)v), v);
        assert_int_equal(gt_hist_bucket_hi((unsigned)v), v + 1);
    }
}

static void test_edges_match_formula(void **state)
{
    (void)state;
    for (unsigned m = 4; m <= GTR_HIST_MAX_LOG2; m++) {
        for (uint64_t sub = 0; sub < 16; sub++) {
            uint64_t lo = (16 + sub) << (m - 4);
            uint64_t w = 1ull << (m - 4);
            assert_int_equal(gt_hist_index(lo), ref_index(lo));
            assert_int_equal(gt_hist_index(lo + w - 1), ref_index(lo + w - 1));
            assert_int_equal(gt_hist_index(lo), (m - 3) * 16 + sub);
            assert_int_equal(gt_hist_index(lo + w - 1), (m - 3) * 16 + sub);
        }
    }
    assert_int_equal(gt_hist_index((1ull << 43) - 1), GTR_HIST_BUCKETS - 1);
    assert_int_equal(gt_hist_index(1ull << 43), GTR_HIST_BUCKETS - 1);
    assert_int_equal(gt_hist_index(UINT64_MAX), GTR_HIST_BUCKETS - 1);
}

static void test_bounds_round_trip(void **state)
{
    (void)state;
    for (unsigned i = 0; i + 1 < GTR_HIST_BUCKETS; i++) {
        uint64_t lo = gt_hist_bucket_lo(i), hi = gt_hist_bucket_hi(i);
        assert_true(hi > lo);
        assert_int_equal(gt_hist_index(lo), i);
        assert_int_equal(gt_hist_index(hi - 1), i);
        assert_int_equal(gt_hist_index(hi), i + 1);
        if (lo >= 32)
            assert_true((hi - lo) * 16 <= lo); /* width <= 6.25% of the lower bound */
    }
    assert_int_equal(gt_hist_bucket_hi(GTR_HIST_BUCKETS - 1), UINT64_MAX);
}

static void test_update_flavours_agree(void **state)
{
    (void)state;
    struct gtr_hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    assert_non_null(a);
    assert_non_null(b);
    gt_hist_init(a);
    gt_hist_init(b);
    assert_int_equal(a->min_ns, UINT64_MAX);
    uint64_t vals[] = {0, 5, 31, 32, 1000, 123456789, 1ull << 50, 17};
    uint64_t sum = 0;
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        gt_hist_add_owned(a, vals[i]);
        gt_hist_add_shared(b, vals[i]);
        sum += vals[i];
    }
    assert_memory_equal(a, b, sizeof(*a));
    assert_int_equal(a->count, 8);
    assert_int_equal(a->sum_ns, sum);
    assert_int_equal(a->min_ns, 0);
    assert_int_equal(a->max_ns, 1ull << 50);
    assert_int_equal(a->buckets[GTR_HIST_BUCKETS - 1], 1);
    free(a);
    free(b);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static uint64_t nearest_rank(const uint64_t *sorted, size_t n, double p)
{
    double r = p / 100.0 * (double)n;
    size_t rank = (size_t)r;
    if ((double)rank < r)
        rank++;
    if (rank == 0)
        rank = 1;
    return sorted[rank - 1];
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t xorshift(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void check_distribution(const char *name, uint64_t (*gen)(void), size_t n)
{
    uint64_t *v = malloc(n * sizeof(*v));
    struct gtr_hist *h = malloc(sizeof(*h));
    assert_non_null(v);
    assert_non_null(h);
    gt_hist_init(h);
    for (size_t i = 0; i < n; i++) {
        v[i] = gen();
        gt_hist_add_owned(h, v[i]);
    }
    qsort(v, n, sizeof(*v), cmp_u64);
    static const double ps[] = {0, 1, 10, 25, 50, 75, 90, 99, 99.9, 100};
    for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
        uint64_t want = nearest_rank(v, n, ps[k]);
        uint64_t got = gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, ps[k]);
        double rel = want ? fabs((double)got - (double)want) / (double)want : (double)got;
        if (want < 32)
            assert_int_equal(got, want);
        if (rel > 1.0 / 32) {
            print_error("%s p%.1f: histogram %llu, sorted reference %llu (rel err %.4f > 1/32)\n",
                        name, ps[k], (unsigned long long)got, (unsigned long long)want, rel);
            fail();
        }
    }
    assert_int_equal(gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 100), v[n - 1]);
    assert_int_equal(gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 0), v[0]);
    free(v);
    free(h);
}

static uint64_t gen_uniform_small(void)
{
    return xorshift() % 40;
}
static uint64_t gen_uniform_us(void)
{
    return 1000 + xorshift() % 100000;
}
static uint64_t gen_lognormalish(void)
{
    /* heavy tail: exponent spread over 2^5 .. 2^40 */
    unsigned e = 5 + (unsigned)(xorshift() % 36);
    return (1ull << e) + xorshift() % (1ull << e);
}
static uint64_t gen_bimodal(void)
{
    return (xorshift() & 1) ? 2500 + xorshift() % 50 : 4000000 + xorshift() % 100000;
}

static void test_percentiles_vs_sorted_reference(void **state)
{
    (void)state;
    check_distribution("uniform 0..39 ns", gen_uniform_small, 10000);
    check_distribution("uniform 1..101 us", gen_uniform_us, 50000);
    check_distribution("heavy tail", gen_lognormalish, 50000);
    check_distribution("bimodal", gen_bimodal, 20001);
    uint64_t one = 12345;
    struct gtr_hist *h = calloc(1, sizeof(*h));
    assert_non_null(h);
    gt_hist_init(h);
    assert_int_equal(gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 50), 0); /* empty */
    gt_hist_add_owned(h, one);
    assert_int_equal(gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 50), one);
    free(h);
}

static struct gtr_hist g_shared;

static void *hammer(void *arg)
{
    uint64_t base = (uint64_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < 50000; i++)
        gt_hist_add_shared(&g_shared, base + i % 3000);
    return NULL;
}

static void test_shared_updates_lose_nothing(void **state)
{
    (void)state;
    gt_hist_init(&g_shared);
    pthread_t t[3];
    for (uintptr_t i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer, (void *)(i * 100 + 1)), 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    uint64_t total = 0, sum = 0;
    for (unsigned i = 0; i < GTR_HIST_BUCKETS; i++)
        total += g_shared.buckets[i];
    for (uint64_t k = 0; k < 3; k++)
        for (uint64_t i = 0; i < 50000; i++)
            sum += k * 100 + 1 + i % 3000;
    assert_int_equal(g_shared.count, 150000);
    assert_int_equal(total, 150000);
    assert_int_equal(g_shared.sum_ns, sum);
    assert_int_equal(g_shared.min_ns, 1);
    assert_int_equal(g_shared.max_ns, 200 + 1 + 2999);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_values_exact),
        cmocka_unit_test(test_edges_match_formula),
        cmocka_unit_test(test_bounds_round_trip),
        cmocka_unit_test(test_update_flavours_agree),
        cmocka_unit_test(test_percentiles_vs_sorted_reference),
        cmocka_unit_test(test_shared_updates_lose_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
