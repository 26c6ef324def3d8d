/* SPDX-License-Identifier: Apache-2.0 */
/*
 * htab.h — an open-addressing hash table of indices into the caller's own
 * arrays (the model's communicators by commId, hosts, jobs), FNV-1a hashes,
 * and growable arrays.  The table holds no keys: the caller's eq() compares
 * the entry an index names with its key, and rehash() recomputes an entry's
 * hash when the table grows, so an entry costs one size_t.
 */
#ifndef GDRTRACE_TOOLS_HTAB_H
#define GDRTRACE_TOOLS_HTAB_H

#include <stddef.h>
#include <stdint.h>

/* Open-addressing table of indices (SIZE_MAX: empty); the caller compares. */
struct gt_htab {
    size_t *v;
    size_t cap, n;
};

/* FNV-1a over p[0, n) from h (start with 0xcbf29ce484222325), and over a string. */
uint64_t gt_hash_bytes(const void *p, size_t n, uint64_t h);
uint64_t gt_hash_str(const char *s);

/*! gt_ht_find() : the slot for key hash h, eq(v, arg) saying whether index v
 *  matches: one holding a match, or the empty one where it would go. */
size_t *gt_ht_find(struct gt_htab *t, uint64_t h, int (*eq)(size_t, const void *), const void *arg);
/*! gt_ht_reserve() : grows t so one more entry fits, rehash(v, arg) giving the
 *  hash of entry v; 0, or -1 (out of memory, t unchanged). */
int gt_ht_reserve(struct gt_htab *t, uint64_t (*rehash)(size_t, const void *), const void *arg);

/*! gt_grow() : makes *p (an array of *cap elements of size bytes) hold at
 *  least need, doubling; 0, or -1 (out of memory, *p unchanged). */
int gt_grow(void **p, size_t *cap, size_t need, size_t size);

#endif
