/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_htab.c — the model's index table (tools/lib/htab.c): FNV-1a against
 * the published test vectors; every key inserted is found again after the
 * table grew many times, keys that are absent are not, and the capacity
 * stays a power of two at least twice the entries (a probe always ends);
 * keys that all hash alike still resolve by eq(); gt_grow doubles from 16,
 * keeps the contents and leaves a large enough array alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/htab.h"

#define NKEYS 3000

static char g_keys[NKEYS][32]; /* room for any size_t */
static int g_same_hash;        /* every key hashes to one value */

static uint64_t hash_of(const char *s)
{
    return g_same_hash ? 42 : gt_hash_str(s);
}

static int eq(size_t v, const void *arg)
{
    return !strcmp(g_keys[v], arg);
}

static uint64_t rehash(size_t v, const void *arg)
{
    (void)arg;
    return hash_of(g_keys[v]);
}

static void fnv1a_vectors(void **state)
{
    (void)state;
    /* FNV-1a 64 (the reference implementation's test suite) */
    assert_true(gt_hash_str("") == 0xcbf29ce484222325ull);
    assert_true(gt_hash_str("a") == 0xaf63dc4c8601ec8cull);
    assert_true(gt_hash_str("foobar") == 0x85944171f73967e8ull);
    /* bytes continue a hash: "foo" then "bar" is "foobar" */
    uint64_t h = gt_hash_bytes("foo", 3, 0xcbf29ce484222325ull);
    assert_true(gt_hash_bytes("bar", 3, h) == gt_hash_str("foobar"));
}

static void insert_all_find_all(size_t nkeys)
{
    struct gt_htab t = {0};
    for (size_t i = 0; i < nkeys; i++) {
        snprintf(g_keys[i], sizeof(g_keys[i]), "key-%zu", i);
        assert_int_equal(gt_ht_reserve(&t, rehash, NULL), 0);
        size_t *slot = gt_ht_find(&t, hash_of(g_keys[i]), eq, g_keys[i]);
        assert_true(*slot == SIZE_MAX); /* new */
        *slot = i;
        t.n++;
        assert_true(t.cap >= 2 * t.n);
        assert_int_equal(t.cap & (t.cap - 1), 0);
    }
    for (size_t i = 0; i < nkeys; i++) {
        size_t *slot = gt_ht_find(&t, hash_of(g_keys[i]), eq, g_keys[i]);
        assert_int_equal(*slot, i);
    }
    size_t used = 0;
    for (size_t i = 0; i < t.cap; i++)
        used += t.v[i] != SIZE_MAX;
    assert_int_equal(used, nkeys);
    assert_true(*gt_ht_find(&t, hash_of("key-x"), eq, "key-x") == SIZE_MAX);
    free(t.v);
}

static void many_keys(void **state)
{
    (void)state;
    g_same_hash = 0;
    insert_all_find_all(NKEYS);
}

static void all_collide(void **state)
{
    (void)state;
    g_same_hash = 1;
    insert_all_find_all(300);
    g_same_hash = 0;
}

static void grow(void **state)
{
    (void)state;
    int *a = NULL;
    size_t cap = 0;
    assert_int_equal(gt_grow((void **)&a, &cap, 1, sizeof(*a)), 0);
    assert_int_equal(cap, 16);
    for (int i = 0; i < 16; i++)
        a[i] = i * 3;
    int *before = a;
    assert_int_equal(gt_grow((void **)&a, &cap, 16, sizeof(*a)), 0);
    assert_ptr_equal(a, before); /* enough: untouched */
    assert_int_equal(cap, 16);
    assert_int_equal(gt_grow((void **)&a, &cap, 17, sizeof(*a)), 0);
    assert_int_equal(cap, 32);
    assert_int_equal(gt_grow((void **)&a, &cap, 200, sizeof(*a)), 0);
    assert_int_equal(cap, 256);
    for (int i = 0; i < 16; i++)
        assert_int_equal(a[i], i * 3);
    a[255] = 1; /* ASan: the whole capacity is ours */
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fnv1a_vectors),
        cmocka_unit_test(many_keys),
        cmocka_unit_test(all_collide),
        cmocka_unit_test(grow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
