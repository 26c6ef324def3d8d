/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ring.c — the event ring (shim/ring.h) on its own, so it also runs
 * under TSan.  Checks: after wrapping, exactly the newest `capacity` records
 * are readable and older positions are refused; a record left mid-write (odd
 * seq, half-written payload) is refused while its neighbours read fine, and a
 * producer one lap later discards instead of mixing into it; a producer
 * lapped before it claimed its slot discards and counts a drop; a corrupted
 * commit word is refused; concurrent producers with a concurrent reader
 * never yield a record whose words come from two producers, and every
 * position of the final window is intact unless counted as dropped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim/ring.h"

struct test_ring {
    struct gtr_ring_header hdr;
    struct gtr_event ev[];
};

static struct gt_ring make_ring(uint64_t cap, struct test_ring **mem)
{
    *mem = aligned_alloc(64, sizeof(struct test_ring) + cap * sizeof(struct gtr_event));
    assert_non_null(*mem);
    struct gt_ring r;
    gt_ring_format(&r, &(*mem)->hdr, (*mem)->ev, cap);
    return r;
}

static struct gtr_event ev_for(uint64_t a0, uint64_t a1)
{
    struct gtr_event e;
    memset(&e, 0, sizeof(e));
    e.type = GTR_EV_REG;
    e.a0 = a0;
    e.a1 = a1;
    e.a2 = a0 * 0x9e3779b97f4a7c15ull ^ a1; /* checksum over the other words */
    e.ts = a0 + a1;
    e.tid = (uint32_t)a0;
    e.aux = (uint32_t)(a1 >> 3);
    return e;
}

static int consistent(const struct gtr_event *e)
{
    return e->a2 == (e->a0 * 0x9e3779b97f4a7c15ull ^ e->a1) && e->ts == e->a0 + e->a1 &&
           e->tid == (uint32_t)e->a0 && e->aux == (uint32_t)(e->a1 >> 3) && e->type == GTR_EV_REG;
}

static void test_wrap_keeps_newest_window(void **state)
{
    (void)state;
    struct test_ring *m;
    struct gt_ring r = make_ring(8, &m);
    for (uint64_t i = 0; i < 20; i++) {
        struct gtr_event e = ev_for(i, 1000 + i);
        uint64_t pos;
        assert_int_equal(gt_ring_emit(&r, &e, &pos), 1);
        assert_int_equal(pos, i);
    }
    assert_int_equal(m->hdr.head, 20);
    for (uint64_t pos = 0; pos < 20; pos++) {
        struct gtr_event out;
        int ok = gt_ring_read(m->ev, 8, pos, &out);
        if (pos < 12) {
            assert_int_equal(ok, 0); /* overwritten by pos + 8 */
        } else {
            assert_int_equal(ok, 1);
            assert_int_equal(out.a0, pos);
            assert_int_equal(out.a1, 1000 + pos);
            assert_int_equal(out.seq, 2 * pos + 2);
            assert_true(consistent(&out));
        }
    }
    struct gtr_event out;
    assert_int_equal(gt_ring_read(m->ev, 8, 20, &out), 0); /* never written */
    assert_int_equal(m->hdr.dropped, 0);
    free(m);
}

static void test_record_left_mid_write(void **state)
{
    (void)state;
    struct test_ring *m;
    struct gt_ring r = make_ring(8, &m);
    for (uint64_t i = 0; i < 5; i++) {
        struct gtr_event e = ev_for(i, i);
        gt_ring_emit(&r, &e, NULL);
    }
    /* A producer that reserved position 5, claimed its slot and died after
     * writing half the payload. */
    uint64_t pos = __atomic_fetch_add(&m->hdr.head, 1, __ATOMIC_RELAXED);
    assert_int_equal(pos, 5);
    m->ev[5].seq = 2 * pos + 1;
    m->ev[5].a0 = 77;
    struct gtr_event e = ev_for(6, 6);
    gt_ring_emit(&r, &e, NULL);

    struct gtr_event out;
    for (uint64_t p = 0; p < 7; p++)
        assert_int_equal(gt_ring_read(m->ev, 8, p, &out), p != 5);

    /* One lap later the slot is still "being written": the new producer
     * discards its event rather than mixing words with the dead one's. */
    for (uint64_t i = 7; i < 14; i++) {
        struct gtr_event f = ev_for(i, i);
        assert_int_equal(gt_ring_emit(&r, &f, NULL), i != 13);
    }
    assert_int_equal(m->hdr.dropped, 1);
    assert_int_equal(gt_ring_read(m->ev, 8, 13, &out), 0);
    assert_int_equal(gt_ring_read(m->ev, 8, 12, &out), 1);
    assert_int_equal(out.a0, 12);
    free(m);
}

static void test_lapped_before_claim_discards(void **state)
{
    (void)state;
    struct test_ring *m;
    struct gt_ring r = make_ring(4, &m);
    /* Producer B at position 6 commits into slot 2 ... */
    m->hdr.head = 6;
    struct gtr_event b = ev_for(6, 66);
    assert_int_equal(gt_ring_emit(&r, &b, NULL), 1);
    /* ... while producer A, holding the older ticket 2, only now claims. */
    m->hdr.head = 2;
    struct gtr_event a = ev_for(2, 22);
    assert_int_equal(gt_ring_emit(&r, &a, NULL), 0);
    assert_int_equal(m->hdr.dropped, 1);
    struct gtr_event out;
    assert_int_equal(gt_ring_read(m->ev, 4, 6, &out), 1);
    assert_int_equal(out.a1, 66);
    assert_int_equal(gt_ring_read(m->ev, 4, 2, &out), 0);
    free(m);
}

static void test_corrupt_commit_word_refused(void **state)
{
    (void)state;
    struct test_ring *m;
    struct gt_ring r = make_ring(4, &m);
    for (uint64_t i = 0; i < 4; i++) {
        struct gtr_event e = ev_for(i, i);
        gt_ring_emit(&r, &e, NULL);
    }
    m->ev[1].seq = 2 * 5 + 2; /* claims a position that is not in this slot's lap */
    m->ev[2].seq = 0;
    struct gtr_event out;
    assert_int_equal(gt_ring_read(m->ev, 4, 1, &out), 0);
    assert_int_equal(gt_ring_read(m->ev, 4, 2, &out), 0);
    assert_int_equal(gt_ring_read(m->ev, 4, 3, &out), 1);
    free(m);
}

#define PRODUCERS 3
#define CAP 256

struct shared {
    struct test_ring *m;
    struct gt_ring r;
    uint64_t per_producer;
    int done;
    uint64_t reader_ok, reader_bad;
};

static void *producer(void *arg)
{
    struct shared *sh = *(struct shared **)arg;
    uint64_t id = (uint64_t)((struct shared **)arg)[1];
    for (uint64_t i = 0; i < sh->per_producer; i++) {
        struct gtr_event e = ev_for(id, i);
        gt_ring_emit(&sh->r, &e, NULL);
    }
    return NULL;
}

static void *reader(void *arg)
{
    struct shared *sh = arg;
    while (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE)) {
        uint64_t head = __atomic_load_n(&sh->m->hdr.head, __ATOMIC_ACQUIRE);
        uint64_t start = head > CAP ? head - CAP : 0;
        for (uint64_t p = start; p < head; p++) {
            struct gtr_event out;
            if (gt_ring_read(sh->m->ev, CAP, p, &out)) {
                if (consistent(&out) && out.seq == 2 * p + 2)
                    sh->reader_ok++;
                else
                    sh->reader_bad++;
            }
        }
    }
    return NULL;
}

static void test_concurrent_producers(void **state)
{
    (void)state;
    struct shared sh = {0};
    sh.r = make_ring(CAP, &sh.m);
    sh.per_producer = 20000;
    pthread_t th[PRODUCERS], rd;
    void *args[PRODUCERS][2];
    assert_int_equal(pthread_create(&rd, NULL, reader, &sh), 0);
    for (uintptr_t i = 0; i < PRODUCERS; i++) {
        args[i][0] = &sh;
        args[i][1] = (void *)(i + 1);
        assert_int_equal(pthread_create(&th[i], NULL, producer, args[i]), 0);
    }
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(th[i], NULL);
    __atomic_store_n(&sh.done, 1, __ATOMIC_RELEASE);
    pthread_join(rd, NULL);

    uint64_t total = PRODUCERS * sh.per_producer;
    assert_int_equal(sh.m->hdr.head, total);
    assert_int_equal(sh.reader_bad, 0);
    /* Quiescent now: every position of the last lap is intact unless its
     * producer discarded it (counted). */
    uint64_t intact = 0, last[PRODUCERS + 1] = {0};
    for (uint64_t p = total - CAP; p < total; p++) {
        struct gtr_event out;
        if (!gt_ring_read(sh.m->ev, CAP, p, &out))
            continue;
        intact++;
        assert_true(consistent(&out));
        assert_in_range(out.a0, 1, PRODUCERS);
        /* per producer, positions follow program order */
        assert_true(out.a1 + 1 > last[out.a0]);
        last[out.a0] = out.a1 + 1;
    }
    assert_true(intact + sh.m->hdr.dropped >= CAP);
    print_message("concurrent: %llu reader-verified records, %llu intact in the final lap, %llu "
                  "dropped\n",
                  (unsigned long long)sh.reader_ok, (unsigned long long)intact,
                  (unsigned long long)sh.m->hdr.dropped);
    free(sh.m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrap_keeps_newest_window),
        cmocka_unit_test(test_record_left_mid_write),
        cmocka_unit_test(test_lapped_before_claim_discards),
        cmocka_unit_test(test_corrupt_commit_word_refused),
        cmocka_unit_test(test_concurrent_producers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
