/* SPDX-License-Identifier: Apache-2.0 */
/*
 * htab.c — the model's open-addressing hash table of indices and growable
 * arrays (htab.h).  Invariant: a table's capacity is a power of two at
 * least twice its entries, so a probe always ends on an empty slot.
 */
#include "tools/lib/htab.h"

#include <stdlib.h>
#include <string.h>

uint64_t gt_hash_bytes(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

uint64_t gt_hash_str(const char *s)
{
    return gt_hash_bytes(s, strlen(s), 0xcbf29ce484222325ull);
}

/* Finds the slot for key hash h; eq(v, arg) says whether index v matches.
 * Returns the slot: holding a match, or empty. */
size_t *gt_ht_find(struct gt_htab *t, uint64_t h, int (*eq)(size_t, const void *), const void *arg)
{
    size_t mask = t->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask)
        if (t->v[i] == SIZE_MAX || eq(t->v[i], arg))
            return &t->v[i];
}

/* Grows t so one more entry fits; rehash(v) gives the hash of entry v. */
int gt_ht_reserve(struct gt_htab *t, uint64_t (*rehash)(size_t, const void *), const void *arg)
{
    if ((t->n + 1) * 2 <= t->cap)
        return 0;
    size_t ncap = t->cap ? t->cap * 2 : 64;
    size_t *nv = malloc(ncap * sizeof(*nv));
    if (!nv)
        return -1;
    for (size_t i = 0; i < ncap; i++)
        nv[i] = SIZE_MAX;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->v[i] == SIZE_MAX)
            continue;
        size_t k = (size_t)rehash(t->v[i], arg) & (ncap - 1);
        while (nv[k] != SIZE_MAX)
            k = (k + 1) & (ncap - 1);
        nv[k] = t->v[i];
    }
    free(t->v);
    t->v = nv;
    t->cap = ncap;
    return 0;
}

int gt_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *np = realloc(*p, nc * size);
    if (!np)
        return -1;
    *p = np;
    *cap = nc;
    return 0;
}
