/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_oob.c — property: for ANY bytes a stranger sends to an out-of-band
 * listener, in any split into reads, the hello parser (gt_oob_parse with
 * ib's setup-message check, gt_ib_check_setup) reads only the bytes it was
 * given, never asks for more than the hello and ib's message take, refuses
 * or accepts the same whole stream however it was split, and accepts only
 * a stream whose hello carries the listener's nonce.  The same bytes also
 * go through the handle decoder.  Built as a libFuzzer target by
 * run-fuzz-oob.sh and linked with replay.c into `fuzz_oob_replay`, which
 * runs tests/fuzz/oob-corpus as an ordinary test.
 *
 * Input: byte 0 = read-size seed; bytes 1..8 = the listener's nonce (so the
 * fuzzer can reach the accepting paths); the rest = the stream.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/ib/ib_net.h"
#include "plugin/oob/oob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char gt_fuzz_corpus[] = "tests/fuzz/oob-corpus",
           gt_fuzz_what[] = "the out-of-band hello and ib setup parsers";

static const struct gt_oob_proto proto = {
    .name = "ib",
    .magic = GT_IB_MAGIC,
    .version = GT_IB_WIRE_VERSION,
    .body_len = sizeof(struct ib_wire),
    .check_body = gt_ib_check_setup,
};

/* Feeds the stream as a listener would, in reads of a size derived from
 * seed; returns 1 accepted, 0 incomplete, -1 refused. */
static int feed(uint64_t nonce, const uint8_t *s, size_t n, unsigned seed)
{
    const size_t cap = GT_OOB_HELLO_BYTES + GT_OOB_BODY_MAX;
    /* Exactly `got` bytes in a heap buffer: ASan flags any read past them. */
    uint8_t *buf = malloc(cap);
    size_t got = 0, need = GT_OOB_HELLO_BYTES;
    struct gt_oob_hello h;
    int res = 0;
    while (got < n) {
        size_t step = seed ? 1 + (seed + got * 7) % 61 : n;
        if (step > need - got)
            step = need - got; /* the listener never reads past `need` */
        if (step > n - got)
            step = n - got;
        uint8_t *exact = malloc(got + step);
        memcpy(buf + got, s + got, step);
        got += step;
        memcpy(exact, buf, got);
        const char *bad = gt_oob_parse(&proto, nonce, exact, got, &h, &need);
        free(exact);
        if (need > cap || need < GT_OOB_HELLO_BYTES)
            abort();
        if (bad) {
            res = -1;
            break;
        }
        if (got == need && got > GT_OOB_HELLO_BYTES) {
            if (h.nonce != nonce || h.magic != GT_IB_MAGIC)
                abort();
            res = 1;
            break;
        }
    }
    free(buf);
    return res;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 9)
        return 0;
    uint64_t nonce;
    memcpy(&nonce, data + 1, 8);
    const uint8_t *s = data + 9;
    size_t n = size - 9;
    int whole = feed(nonce, s, n, 0), split = feed(nonce, s, n, data[0] | 1u);
    if (whole != split)
        abort(); /* the verdict must not depend on how TCP split the bytes */
    union gt_oob_addr a;
    uint64_t hn;
    char why[200];
    uint8_t handle[GT_NET_HANDLE_MAXSIZE] = {0};
    memcpy(handle, s, n < sizeof(handle) ? n : sizeof(handle));
    gt_oob_handle_decode(handle, n < sizeof(handle) ? n : sizeof(handle), GT_IB_MAGIC,
                         GT_IB_WIRE_VERSION, "ib", &a, &hn, why, sizeof(why));
    struct gt_oob_hello h = {.nonce = nonce};
    gt_ib_check_setup(s, n < sizeof(struct ib_wire) ? n : sizeof(struct ib_wire), &h);
    return 0;
}
