/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recfile_read.c — reading a recorder file into a private image for the
 * parser (recfile.c): whole snapshots of a live file whose ring is
 * rechecked after the copy, and the header-first read that fetches only
 * the sections the header declares, holes skipped (recfile.h,
 * gt_recfile_read_fd).
 * Invariants: a file is opened without following symlinks and refused
 * past its bound before anything is allocated; what is read is validated
 * by recfile.c's parser only, never trusted here beyond the bounds checks
 * that decide how much to read.
 */
#include "tools/lib/recfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "tools/lib/recfile_parse.h"
#include "tools/lib/regfile.h"

/* ---- live snapshots: the ring's sequence words before and after ------- */

/* Where the event slots of a recorder lie, from a header we read ourselves
 * (hostile: every value bounded by the file size before use). */
struct ring_loc {
    uint64_t off;   /* first slot */
    uint64_t esz;   /* bytes per slot */
    uint64_t count; /* slots */
};

static int ring_locate(const unsigned char *hb, uint64_t fsize, struct ring_loc *loc)
{
    struct gtr_header h;
    memcpy(&h, hb, sizeof(h));
    if (memcmp(h.magic, GTR_MAGIC, GTR_MAGIC_LEN) || h.endian != GTR_ENDIAN_MARK ||
        h.section_count > GTR_MAX_SECTIONS)
        return 0;
    for (uint32_t i = 0; i < h.section_count; i++) {
        const struct gtr_section *s = &h.sections[i];
        if (s->id != GTR_SEC_RING)
            continue;
        uint64_t esz = s->entry_size, n = s->count, hdr = sizeof(struct gtr_ring_header);
        if (esz < sizeof(struct gtr_event) || esz % 8 || n == 0 || n > (1ull << 32) ||
            !in_bounds(s->offset, hdr, fsize) || n > (fsize - s->offset - hdr) / esz)
            return 0;
        loc->off = s->offset + hdr;
        loc->esz = esz;
        loc->count = n;
        return 1;
    }
    return 0;
}

/* pread of exactly len bytes at off into a malloc'd buffer; NULL on any
 * short read or error. */
static unsigned char *pread_alloc(int fd, uint64_t off, size_t len)
{
    unsigned char *b = malloc(len ? len : 1);
    size_t got = 0;
    while (b && got < len) {
        ssize_t n = pread(fd, b + got, len - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            free(b);
            return NULL;
        }
        got += (size_t)n;
    }
    return b;
}

static uint64_t seq_at(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/* Invariant 6 on a live file: a writer may lap a slot while read() copies
 * it, leaving a committed sequence word from one lap in front of another
 * lap's payload (issue 17, item 4: 81 of 1.23 M events on a 64-slot ring).
 * So a slot of the snapshot keeps its sequence word only when the same word
 * was in the file before the copy began (`before`) and after it ended
 * (`after`); any other slot gets an odd word, which the parser counts as
 * torn.  A writer that committed a slot between the passes costs that one
 * event in this snapshot, never a wrong one: the sequence word can only
 * grow, so an equal word before and after means no write touched the slot
 * in between (the writer makes the word odd before its first payload
 * store).  If the ring moved between the passes, no slot is trusted. */
static void ring_recheck(unsigned char *b, size_t got, const struct ring_loc *loc,
                         const unsigned char *before, const unsigned char *after)
{
    struct ring_loc now;
    int same = got >= sizeof(struct gtr_header) && ring_locate(b, got, &now) &&
               now.off == loc->off && now.esz == loc->esz && now.count == loc->count;
    for (uint64_t i = 0; i < loc->count; i++) {
        uint64_t at = loc->off + i * loc->esz;
        if (at > got || got - at < sizeof(uint64_t))
            break;
        uint64_t s = seq_at(b + at);
        if (same && after && seq_at(before + i * loc->esz) == s &&
            seq_at(after + i * loc->esz) == s)
            continue;
        s |= 1;
        memcpy(b + at, &s, sizeof(s));
    }
}

/* Opens path read-only (no symlink, no blocking on a FIFO) and checks that
 * it is a regular file of at most max bytes. */
static int open_checked(const char *path, size_t max, int *fdp, struct stat *st, char *err,
                        size_t errlen)
{
    struct gt_regfile rf;
    switch (gt_regfile_open(AT_FDCWD, path, O_NOFOLLOW, &rf)) {
    case GT_REGFILE_OK:
        break;
    case GT_REGFILE_OPEN:
        return gt_source_error(err, errlen, path, "cannot open: %s", strerror(rf.err));
    case GT_REGFILE_STAT:
        return gt_source_error(err, errlen, path, "cannot stat: %s", strerror(rf.err));
    case GT_REGFILE_TYPE:
        return gt_source_error(err, errlen, path, "not a regular file");
    }
    int fd = rf.fd;
    *st = rf.st;
    if ((uint64_t)st->st_size > max) {
        gt_source_error(err, errlen, path, "%lld bytes is larger than the %zu this reader accepts",
                        (long long)st->st_size, max);
        goto err_fd;
    }
    *fdp = fd;
    return 0;
err_fd:
    close(fd);
    return -1;
}

int gt_open_file(const char *path, size_t max, int *fd, char *err, size_t errlen)
{
    struct stat st;
    return open_checked(path, max, fd, &st, err, errlen);
}

int gt_read_file(const char *path, size_t max, unsigned char **out, size_t *outlen, char *err,
                 size_t errlen)
{
    int fd;
    struct stat st;
    if (open_checked(path, max, &fd, &st, err, errlen))
        return -1;
    /* The file may grow or shrink while we read (a live writer, ftruncate):
     * read at most the size seen, and keep only what read() returned. */
    size_t cap = (size_t)st.st_size;
    /* A recorder: its ring's sequence words before the copy (see
     * ring_recheck).  Anything else (an archive) is read as it is. */
    struct ring_loc loc;
    unsigned char hb[sizeof(struct gtr_header)], *before = NULL;
    if (cap >= sizeof(hb) && pread(fd, hb, sizeof(hb), 0) == (ssize_t)sizeof(hb) &&
        ring_locate(hb, cap, &loc))
        before = pread_alloc(fd, loc.off, (size_t)(loc.count * loc.esz));
    unsigned char *b = malloc(cap ? cap : 1);
    if (!b) {
        gt_source_error(err, errlen, path, "out of memory for %zu bytes", cap);
        free(before);
        goto err_fd;
    }
    size_t got = 0;
    while (got < cap) {
        ssize_t n = read(fd, b + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            gt_source_error(err, errlen, path, "read failed: %s", strerror(errno));
            free(b);
            free(before);
            goto err_fd;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    if (before) {
        unsigned char *after = pread_alloc(fd, loc.off, (size_t)(loc.count * loc.esz));
        ring_recheck(b, got, &loc, before, after);
        free(after);
        free(before);
    }
    close(fd);
    *out = b;
    *outlen = got;
    return 0;
err_fd:
    close(fd);
    return -1;
}

/* ---- header-first reading of a recorder file ------------------------- */

/* Reads [off, off + n) of fd into img (zero-filled, at least off + n bytes)
 * skipping holes (SEEK_DATA): a sparse recorder, as the writer leaves one in
 * /dev/shm, costs what it holds.  *avail drops to where the file ended if it
 * is shorter than expected.  0, or -1 on a read error. */
static void mark(unsigned char *present, uint64_t from, uint64_t to)
{
    for (uint64_t p = from >> PG_SHIFT; from < to && p <= (to - 1) >> PG_SHIFT; p++)
        present[p >> 3] |= (unsigned char)(1u << (p & 7));
}

static int pread_sparse(int fd, unsigned char *img, unsigned char *present, uint64_t off,
                        uint64_t n, uint64_t *avail)
{
    uint64_t end = off + n, pos = off;
    while (pos < end) {
        uint64_t stop = end;
        off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
        if (d < 0 && errno == ENXIO)
            return 0; /* a hole up to the end of the file */
        if (d >= 0) {
            if ((uint64_t)d >= end)
                return 0;
            pos = (uint64_t)d;
            off_t h = lseek(fd, d, SEEK_HOLE);
            if (h >= 0 && (uint64_t)h < end)
                stop = (uint64_t)h;
        } /* else: no SEEK_DATA here; read it all */
        while (pos < stop) {
            ssize_t k = pread(fd, img + pos, (size_t)(stop - pos), (off_t)pos);
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return -1;
            if (k == 0) {
                if (pos < *avail)
                    *avail = pos;
                return 0;
            }
            mark(present, pos, pos + (uint64_t)k);
            pos += (uint64_t)k;
        }
    }
    return 0;
}

int gt_recfile_read_fd(int fd, const char *path, int flags, struct gt_recfile *r, char *err,
                       size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return gt_source_error(err, errlen, path, "cannot stat: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return gt_source_error(err, errlen, path, "not a regular file");
    if ((uint64_t)st.st_size > GT_REC_MAX_BYTES)
        return gt_source_error(err, errlen, path,
                               "%lld bytes is larger than the %llu this reader accepts",
                               (long long)st.st_size, GT_REC_MAX_BYTES);
    /* The image has the file's layout, but only what the header declares
     * is read into it; the rest stays untouched zero pages (no memory). */
    size_t size = (size_t)st.st_size, maplen = size ? size : 1;
    unsigned char *img = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (img == MAP_FAILED)
        return gt_source_error(err, errlen, path, "out of memory for %zu bytes", size);
    uint64_t avail = size;
    int rc = -1;
    unsigned char *before = NULL;
    struct ring_loc loc;
    size_t hlen = size < sizeof(struct gtr_header) ? size : sizeof(struct gtr_header);
    unsigned char *present = calloc(((size >> PG_SHIFT) >> 3) + 1, 1);
    if (!present) {
        munmap(img, maplen);
        return gt_source_error(err, errlen, path, "out of memory");
    }
    if (pread_sparse(fd, img, present, 0, hlen, &avail)) {
        gt_source_error(err, errlen, path, "read failed: %s", strerror(errno));
        goto out;
    }
    /* Invariants 1-3 on the header alone: nothing else is read before the
     * magic, the version and every section's bounds have been checked. */
    struct gtr_header hdr;
    if (gt_recfile_parse_header(img, (size_t)avail, path, &hdr, err, errlen))
        goto out;
    const struct gtr_header *h = &hdr;
    /* a header larger than ours (a newer minor): its tail, for dump */
    if ((flags & GT_REC_ALL_SECTIONS) && h->header_size > hlen &&
        pread_sparse(fd, img, present, hlen, h->header_size - hlen, &avail)) {
        gt_source_error(err, errlen, path, "read failed: %s", strerror(errno));
        goto out;
    }
    /* Every other section first, the ring last: a live writer may lap a
     * ring slot while we copy it (ring_recheck), so the window between the
     * ring's two copies holds the ring's read alone, however large the
     * other sections (1.6's collective tables) are. */
    int live = h->state != GTR_STATE_CLOSED && ring_locate(img, avail, &loc);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && live)
            before = pread_alloc(fd, loc.off, (size_t)(loc.count * loc.esz));
        for (unsigned i = 0; i < h->section_count; i++) {
            const struct gtr_section *sec = &h->sections[i];
            if (sec->id == 0 || (sec->id == GTR_SEC_RING) != (pass == 1))
                continue;
            if (sec->id > GTR_SEC_LAST_KNOWN && !(flags & GT_REC_ALL_SECTIONS))
                continue; /* unknown to this reader: never used, never read */
            if (pread_sparse(fd, img, present, sec->offset, sec->size, &avail)) {
                gt_source_error(err, errlen, path, "read failed: %s", strerror(errno));
                goto out;
            }
        }
    }
    /* a file that shrank under us is read as the truncated file it now is */
    struct stat st2;
    if (fstat(fd, &st2) == 0 && (uint64_t)st2.st_size < avail)
        avail = (uint64_t)st2.st_size;
    if (before) {
        unsigned char *after = pread_alloc(fd, loc.off, (size_t)(loc.count * loc.esz));
        ring_recheck(img, (size_t)avail, &loc, before, after);
        free(after);
    }
    rc = gt_recfile_adopt_image(img, maplen, (size_t)avail, present, flags, path, r, err, errlen);
    img = NULL;
    present = NULL;
out:
    free(before);
    free(present);
    if (img)
        munmap(img, maplen);
    return rc;
}

int gt_recfile_load_file(const char *path, struct gt_recfile *r, char *err, size_t errlen)
{
    int fd;
    struct stat st;
    if (open_checked(path, GT_REC_MAX_BYTES, &fd, &st, err, errlen))
        return -1;
    int rc = gt_recfile_read_fd(fd, path, GT_REC_EVENTS, r, err, errlen);
    close(fd);
    if (rc == 0)
        r->liveness = gt_recfile_judge_liveness_why(r, &r->liveness_why);
    return rc;
}
