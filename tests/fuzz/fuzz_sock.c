/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_sock.c — property: for ANY bytes a connected sock peer sends on the
 * control stream, in any split into reads, the control-message framing
 * (gt_sock_frame, what gt_sock_read_ctrl parses the stream with) reads only
 * the bytes it was given, never asks for more than a header and an inline
 * body (so a message always fits the IN_CAP control buffer, whatever size
 * the peer declares), and yields the same verdict however the stream was
 * split: the same accepted messages, then the same refusal (one line naming
 * the peer's fault) or the same incomplete tail.  A DATA larger than
 * INLINE_MAX is followed by its payload, which the receiver moves straight
 * into the posted receive (sock_ctrl.c invariant 1a); the model skips it
 * without allocating, and refuses a declared size above MAX_MSG as
 * handle_data does.  Built as a libFuzzer target by run-fuzz-oob.sh and
 * linked with replay.c into `fuzz_sock_replay`, which runs
 * tests/fuzz/sock-corpus as an ordinary test.
 *
 * Input: byte 0 = read-size seed; the rest = the stream.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/sock/sock_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char gt_fuzz_corpus[] = "tests/fuzz/sock-corpus",
           gt_fuzz_what[] = "the sock control-stream parser";

struct verdict {
    uint64_t hash;  /* of every accepted message, in order */
    unsigned count; /* accepted messages */
    char why[96];   /* the refusal, empty when none */
};

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* Reads the stream as gt_sock_read_ctrl does, in reads of a size derived
 * from seed (0: as much as fits). */
static void feed(const uint8_t *s, size_t n, unsigned seed, struct verdict *v)
{
    uint8_t *in = malloc(IN_CAP);
    size_t in_len = 0, got = 0;
    uint64_t payload = 0; /* bytes of a large DATA still to skip */
    memset(v, 0, sizeof(*v));
    v->hash = 0xcbf29ce484222325ull;
    if (!in)
        abort();
    while (got < n && !v->why[0]) {
        size_t step = seed ? 1 + (seed + got * 7) % 97 : n - got;
        if (step > n - got)
            step = n - got;
        if (payload) { /* straight into the posted receive, never the buffer */
            if (step > payload)
                step = (size_t)payload;
            payload -= step;
            got += step;
            continue;
        }
        if (step > IN_CAP - in_len)
            step = IN_CAP - in_len;
        memcpy(in + in_len, s + got, step);
        in_len += step;
        got += step;
        size_t off = 0;
        while (!v->why[0]) {
            /* Exactly the bytes there are, in their own heap block: ASan
             * flags any read past them. */
            size_t len = in_len - off;
            uint8_t *exact = malloc(len ? len : 1);
            memcpy(exact, in + off, len);
            struct wire_hdr h;
            size_t total = 0;
            int f = gt_sock_frame(exact, len, &h, &total, v->why, sizeof(v->why));
            free(exact);
            if (total < sizeof(h) || total > sizeof(h) + INLINE_MAX)
                abort(); /* a declared size must never make a message outgrow the buffer */
            if (f < 0) {
                if (!v->why[0] || strncmp(v->why, "peer ", 5))
                    abort(); /* a refusal names the peer's fault */
                break;
            }
            if (f == 0) {
                if (total <= len)
                    abort();
                break;
            }
            if (total > len || (h.type != W_CTS && h.type != W_DATA))
                abort();
            v->hash = mix(v->hash, in + off, total);
            v->count++;
            off += total;
            if (h.type == W_DATA && !(h.flags & W_FLAG_TRUNC) && h.size > INLINE_MAX) {
                if (h.size > MAX_MSG) { /* handle_data refuses it before any byte moves */
                    snprintf(v->why, sizeof(v->why), "peer DATA size %llu exceeds %zu",
                             (unsigned long long)h.size, MAX_MSG);
                    break;
                }
                size_t take = in_len - off < h.size ? in_len - off : (size_t)h.size;
                off += take;
                payload = h.size - take;
                if (payload)
                    break;
            }
        }
        memmove(in, in + off, in_len - off);
        in_len -= off;
        if (in_len == IN_CAP)
            abort(); /* a full buffer without a whole message: the stream would stall */
    }
    if (!v->why[0]) { /* a refused stream's tail is never read: the comm failed */
        v->hash = mix(v->hash, &in_len, sizeof(in_len));
        v->hash = mix(v->hash, &payload, sizeof(payload));
    }
    free(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct verdict whole, split;
    feed(data + 1, size - 1, 0, &whole);
    feed(data + 1, size - 1, data[0] | 1u, &split);
    if (whole.hash != split.hash || whole.count != split.count || strcmp(whole.why, split.why))
        abort(); /* the verdict must not depend on how TCP split the bytes */
    return 0;
}
