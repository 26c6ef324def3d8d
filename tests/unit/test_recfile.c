/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_recfile.c — the recorder parser (tools/lib/recfile.c) given corrupt,
 * truncated and hostile recorder images must refuse each with a message
 * that names the source and the problem, and never read out of bounds (run it under
 * `make SAN=asan check-run` and valgrind: the buffers are exact-size heap
 * copies, so any overread is caught).  Checks, each on a valid fixture with
 * one mutation: bad magic, other endianness, other major version, newer minor
 * (accepted), word size, section outside the file, huge counts, entry size *
 * count != size, overlapping sections, duplicate sections, unterminated
 * strings, non-power-of-two ring, bad comm state, truncation at every
 * 512-byte boundary, and the archive reader on corrupt and truncated input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/reader/fixture.h"
#include "tools/lib/archive.h"
#include "tools/lib/recfile.h"

static int failures;

static unsigned char *base_image(size_t *n)
{
    struct fx_opts o = {.kind = FX_DMABUF};
    return fx_build(&o, n);
}

/* Parses an exact-size heap copy; expect_ok: 1 accept, 0 refuse with a
 * message containing `needle`. */
static void check(const char *what, const unsigned char *img, size_t n, int expect_ok,
                  const char *needle)
{
    unsigned char *copy = malloc(n ? n : 1);
    memcpy(copy, img, n);
    struct gt_recfile r;
    char err[GT_ERRLEN] = "";
    int rc = gt_recfile_parse(copy, n, "hostile.rec", &r, err, sizeof(err));
    free(copy);
    if (rc == 0)
        gt_recfile_free(&r);
    int ok = expect_ok ? rc == 0
                       : rc != 0 && strstr(err, "hostile.rec:") == err &&
                             (!needle || strstr(err, needle));
    if (!ok) {
        failures++;
        printf("FAIL %s: rc %d, message \"%s\" (wanted %s%s%s)\n", what, rc, err,
               expect_ok ? "acceptance" : "refusal mentioning \"",
               expect_ok ? ""
               : needle  ? needle
                         : "",
               expect_ok ? "" : "\"");
    } else {
        printf("ok   %s%s%s\n", what, rc ? ": " : "", rc ? err : "");
    }
}

#define HDR(img) ((struct gtr_header *)(img))

int main(void)
{
    size_t n;
    unsigned char *img = base_image(&n), *m = malloc(n);
    struct gtr_header h;
#define RESET() (memcpy(m, img, n), memcpy(&h, m, sizeof(h)))
#define STORE() memcpy(m, &h, sizeof(h))

    RESET();
    check("valid fixture", m, n, 1, NULL);
    RESET();
    memcpy(m, "GDRTRACX", 8);
    check("bad magic", m, n, 0, "magic");
    RESET();
    h.endian = 0x04030201;
    STORE();
    check("other byte order", m, n, 0, "byte order");
    RESET();
    h.version_major = 2;
    STORE();
    check("major version 2", m, n, 0, "major version");
    RESET();
    h.version_minor = 7;
    STORE();
    check("newer minor version is read", m, n, 1, NULL);
    RESET();
    h.word_size = 4;
    STORE();
    check("word size 4", m, n, 0, "word size");
    RESET();
    h.sections[2].offset = n - 100;
    STORE();
    check("comms section past the end", m, n, 0, "outside");
    RESET();
    h.sections[2].offset = UINT64_MAX - 10;
    STORE();
    check("offset near 2^64", m, n, 0, "outside");
    RESET();
    h.sections[1].count = 1ull << 60;
    STORE();
    check("huge device count", m, n, 0, "count");
    RESET();
    h.sections[1].size = 1ull << 62;
    STORE();
    check("huge section size", m, n, 0, "outside");
    RESET();
    h.sections[2].entry_size = 8;
    h.sections[2].count = h.sections[2].size / 8;
    STORE();
    check("comm entry size smaller than v1.0", m, n, 0, "entry_size");
    RESET();
    h.sections[1].entry_size = 0;
    STORE();
    check("zero entry size", m, n, 0, "entry_size");
    RESET();
    h.sections[1].count += 1;
    STORE();
    check("entry_size x count != size", m, n, 0, "!= size");
    RESET();
    h.sections[2].offset = h.sections[1].offset + 64;
    STORE();
    check("overlapping sections", m, n, 0, "overlap");
    RESET();
    h.sections[3] = h.sections[1];
    STORE();
    check("duplicate section", m, n, 0, "");
    RESET();
    h.sections[0].id = 0;
    STORE();
    check("missing identity", m, n, 0, "identity");
    RESET();
    h.sections[3].count = 7;
    STORE();
    check("ring section count disagrees with the ring header", m, n, 0, "ring section");
    RESET();
    h.section_count = 99;
    STORE();
    check("section_count 99", m, n, 0, "section_count");
    RESET();
    h.file_size = n + 4096;
    STORE();
    check("file_size beyond the data", m, n, 0, "truncated");
    RESET();
    h.header_size = 100;
    STORE();
    check("header_size too small", m, n, 0, "header_size");
    RESET();
    h.state = 9;
    STORE();
    check("unknown state", m, n, 0, "state");
    RESET();
    h.sections[9].id = 77;
    h.sections[9].entry_size = 1;
    h.sections[9].offset = 64;
    h.sections[9].size = 1;
    h.sections[9].count = 1;
    h.section_count = 10;
    STORE();
    check("unknown section inside the header", m, n, 0, "outside");
    RESET();
    memset(m + fx_off_identity(), 'A', 64);
    check("host not NUL-terminated", m, n, 0, "identity.host");
    RESET();
    memset(m + fx_off_identity() + offsetof(struct gtr_identity, node) +
               offsetof(struct gtr_fingerprint, gpus),
           'B', 256);
    check("gpus not NUL-terminated", m, n, 0, "gpus");
    RESET();
    memset(m + fx_off_devices() + offsetof(struct gtr_device, why), 'C', 128);
    check("device why not NUL-terminated", m, n, 0, "devices[0].why");
    RESET();
    memset(m + fx_off_comms() + offsetof(struct gtr_comm, error_last_text), 'D', 128);
    check("comm error text not NUL-terminated", m, n, 0, "error_last_text");
    {
        RESET();
        uint32_t st = 5;
        memcpy(m + fx_off_comms(), &st, 4);
        check("comm state 5", m, n, 0, "state");
    }
    {
        RESET();
        uint64_t cap = 1000;
        memcpy(m + fx_off_ring(), &cap, 8);
        check("ring capacity not a power of two", m, n, 0, "power of two");
        RESET();
        cap = 1ull << 40;
        memcpy(m + fx_off_ring(), &cap, 8);
        check("ring capacity huge", m, n, 0, "capacity");
        RESET();
        uint32_t es = 24;
        memcpy(m + fx_off_ring() + 8, &es, 4);
        check("ring event size 24", m, n, 0, "event_size");
        RESET();
        uint64_t head = UINT64_MAX - 3;
        memcpy(m + fx_off_ring() + 16, &head, 8);
        check("ring head near 2^64", m, n, 0, "head");
        RESET();
        head = 1ull << 40; /* far beyond: every slot is from an older lap */
        memcpy(m + fx_off_ring() + 16, &head, 8);
        check("ring head far ahead of the slots (accepted, nothing complete)", m, n, 1, NULL);
        RESET();
        /* events with a wild type and comm slot are counted invalid, not trusted */
        struct gtr_event e;
        unsigned char *slot0 = m + fx_off_ring() + 64 + 5 * sizeof(e);
        memcpy(&e, slot0, sizeof(e));
        e.type = 999;
        e.comm_slot = 4000;
        memcpy(slot0, &e, sizeof(e));
        check("event with wild type and comm slot", m, n, 1, NULL);
    }
    /* Truncated at every 512-byte boundary (and one byte short of the end). */
    int trunc_ok = 1;
    for (size_t cut = 0; cut < n; cut += 512) {
        RESET();
        unsigned char *t = malloc(cut ? cut : 1);
        memcpy(t, m, cut);
        struct gt_recfile r;
        char err[GT_ERRLEN] = "";
        if (gt_recfile_parse(t, cut, "hostile.rec", &r, err, sizeof(err)) == 0) {
            gt_recfile_free(&r);
            trunc_ok = 0;
            printf("FAIL truncated to %zu bytes was accepted\n", cut);
        } else if (!strstr(err, "hostile.rec: ")) {
            trunc_ok = 0;
            printf("FAIL truncated to %zu: message without the file name: %s\n", cut, err);
        }
        free(t);
    }
    RESET();
    check("one byte short", m, n - 1, 0, "truncated");
    if (!trunc_ok)
        failures++;
    else
        printf("ok   truncated at every 512-byte boundary: all refused with a message\n");

    /* Archives: garbage inside a valid zstd frame, truncated frames. */
    {
        char err[GT_ERRLEN];
        unsigned char *raw;
        size_t rawn;
        const unsigned char junk[] = {0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4, 5, 6, 7};
        if (gt_archive_decompress(junk, sizeof(junk), 1 << 20, &raw, &rawn, "junk.zst", err,
                                  sizeof(err)) == 0) {
            free(raw);
            failures++;
            printf("FAIL corrupt zstd accepted\n");
        } else {
            printf("ok   corrupt zstd: %s\n", err);
        }
        static const unsigned char c1[] = "GDRTARC1\x01\0\0\0\0\0\0\0GTAM";
        int cb_calls = 0;
        int rc =
            gt_archive_walk(c1, sizeof(c1) - 1, "short.arc", NULL, &cb_calls, err, sizeof(err));
        if (rc == 0) {
            failures++;
            printf("FAIL truncated container accepted\n");
        } else {
            printf("ok   truncated container: %s\n", err);
        }
    }
    free(m);
    free(img);
    if (failures) {
        printf("%d hostile case(s) misbehaved\n", failures);
        return 1;
    }
    printf("every hostile image was refused with a message naming the file and the problem\n");
    return 0;
}
