/* SPDX-License-Identifier: Apache-2.0 */
/*
 * archive.c — the dump container (format in archive.h).
 * Invariant: the writer produces exactly the layout archive.h documents; the
 * reader never trusts a length before checking it against what remains.
 */
#include "tools/lib/archive.h"
#include "tools/lib/outfile.h"
#include "tools/lib/recfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

int gt_archive_sniff(const unsigned char *b, size_t n)
{
    return n >= 4 && get32(b) == ZSTD_MAGICNUMBER;
}

int gt_archive_decompress(const unsigned char *in, size_t inlen, size_t max, unsigned char **out,
                          size_t *outlen, const char *source, char *err, size_t errlen)
{
    ZSTD_DCtx *d = ZSTD_createDCtx();
    if (!d)
        return gt_source_error(err, errlen, source, "out of memory (zstd context)");
    /* Refuse absurd window sizes a hostile frame may ask for. */
    ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 27);
    size_t cap = max < ((size_t)1 << 20) ? max : (size_t)1 << 20, len = 0; /* max: even < 1 MiB */
    unsigned char *buf = malloc(cap);
    if (!buf) {
        gt_source_error(err, errlen, source, "out of memory");
        goto err_ctx;
    }
    ZSTD_inBuffer ib = {in, inlen, 0};
    size_t last = 1;
    while (ib.pos < ib.size || last != 0) {
        if (len == cap) {
            if (cap >= max) {
                gt_source_error(err, errlen, source,
                                "decompresses to more than %zu bytes (GDRTRACE_ARCHIVE_MAX)", max);
                goto err_buf;
            }
            size_t ncap = cap * 2 > max ? max : cap * 2;
            unsigned char *nb = realloc(buf, ncap);
            if (!nb) {
                gt_source_error(err, errlen, source, "out of memory for %zu bytes", ncap);
                goto err_buf;
            }
            buf = nb;
            cap = ncap;
        }
        ZSTD_outBuffer ob = {buf, cap, len};
        size_t before_in = ib.pos;
        last = ZSTD_decompressStream(d, &ob, &ib);
        if (ZSTD_isError(last)) {
            gt_source_error(err, errlen, source, "corrupt archive: zstd: %s",
                            ZSTD_getErrorName(last));
            goto err_buf;
        }
        int progress = ob.pos != len || ib.pos != before_in;
        len = ob.pos;
        if (ib.pos == ib.size && last != 0 && !progress && len < cap) {
            gt_source_error(err, errlen, source,
                            "truncated archive (the zstd stream ends mid-frame)");
            goto err_buf;
        }
    }
    ZSTD_freeDCtx(d);
    *out = buf;
    *outlen = len;
    return 0;
err_buf:
    free(buf);
err_ctx:
    ZSTD_freeDCtx(d);
    return -1;
}

/* The container reader.  One pull-parser serves both an already
 * decompressed buffer (gt_archive_walk) and a zstd stream read while it is
 * decompressed (gt_archive_stream), so there is one set of container rules.
 * Memory: the member being read, grown as its bytes arrive (never to the
 * length it declares up front), plus zstd's window (capped at 2^27). */
struct arc_rd {
    /* raw mode: the container bytes themselves */
    const unsigned char *raw;
    size_t rawn, rawpos;
    /* zstd mode: compressed bytes from fd, or from mem when fd < 0 */
    ZSTD_DCtx *d;
    int fd;
    const unsigned char *mem;
    size_t memn;
    unsigned char *ibuf;
    size_t icap;
    ZSTD_inBuffer ib;
    int in_eof;
    size_t last; /* ZSTD_decompressStream's last hint: 0 at a frame boundary */
    uint64_t total, max;
    unsigned char *chunk; /* MEMBER_CHUNK bytes of a member at a time (zstd mode) */
    const char *source;
    char *err;
    size_t errlen;
};

/* Reads exactly n container bytes into dst (dst NULL: discards them).
 * Returns n, fewer at the clean end of the stream, or -1 with err set. */
static long long rd_get(struct arc_rd *r, unsigned char *dst, size_t n)
{
    if (!r->d) {
        size_t k = r->rawn - r->rawpos < n ? r->rawn - r->rawpos : n;
        if (dst)
            memcpy(dst, r->raw + r->rawpos, k);
        r->rawpos += k;
        return (long long)k;
    }
    unsigned char scratch[4096];
    size_t got = 0;
    while (got < n) {
        if (r->ib.pos == r->ib.size && !r->in_eof) {
            if (r->fd < 0) {
                r->ib = (ZSTD_inBuffer){r->mem, r->memn, 0};
                r->in_eof = 1;
            } else {
                ssize_t k;
                do
                    k = read(r->fd, r->ibuf, r->icap);
                while (k < 0 && errno == EINTR);
                if (k < 0)
                    return gt_source_error(r->err, r->errlen, r->source, "read failed: %s",
                                           strerror(errno));
                r->ib = (ZSTD_inBuffer){r->ibuf, (size_t)k, 0};
                r->in_eof = k == 0;
            }
        }
        if (r->ib.pos == r->ib.size && r->in_eof) {
            if (r->last != 0)
                return gt_source_error(r->err, r->errlen, r->source,
                                       "truncated archive (the zstd stream ends mid-frame)");
            break; /* the clean end: every frame complete */
        }
        size_t want = n - got;
        if (!dst && want > sizeof(scratch))
            want = sizeof(scratch);
        ZSTD_outBuffer ob = {dst ? dst + got : scratch, dst ? n - got : want, 0};
        size_t before_in = r->ib.pos;
        size_t rc = ZSTD_decompressStream(r->d, &ob, &r->ib);
        if (ZSTD_isError(rc))
            return gt_source_error(r->err, r->errlen, r->source, "corrupt archive: zstd: %s",
                                   ZSTD_getErrorName(rc));
        if (ob.pos || r->ib.pos != before_in)
            r->last = rc;
        r->total += ob.pos;
        if (r->total > r->max)
            return gt_source_error(r->err, r->errlen, r->source,
                                   "decompresses to more than %llu bytes (GDRTRACE_ARCHIVE_MAX)",
                                   (unsigned long long)r->max);
        got += ob.pos;
    }
    return (long long)got;
}

/* A member being read: an anonymous mapping of its declared length (at most
 * the cap) into which only the non-zero 4 KiB blocks are copied, each
 * marked in a bitmap, so its zero runs (a ring's unused slots, or a bomb)
 * stay untouched pages that cost no memory and that no reader reads; or,
 * for a member that does not start with a recorder's magic, just those
 * first bytes (the rest is skipped), so the parser refuses it by name
 * without holding it. */
struct member {
    unsigned char head[GTR_MAGIC_LEN];
    unsigned char *img;
    size_t maplen;
    unsigned char *present;
    const unsigned char *data;
    size_t len;
};

#define MEMBER_CHUNK ((size_t)1 << 20)
#define ZBLK GT_IMAGE_PAGE

static int short_member(struct arc_rd *r, uint32_t idx, const char *name, uint64_t dlen,
                        uint64_t got)
{
    return gt_source_error(r->err, r->errlen, r->source,
                           "member %u (%s): %llu data bytes, only %llu remain", idx, name,
                           (unsigned long long)dlen, (unsigned long long)got);
}

static int rd_member(struct arc_rd *r, uint64_t dlen, struct member *m, uint32_t idx,
                     const char *name)
{
    memset(m, 0, sizeof(*m));
    size_t hn = dlen < GTR_MAGIC_LEN ? (size_t)dlen : GTR_MAGIC_LEN;
    long long k = rd_get(r, m->head, hn);
    if (k < 0)
        return -1;
    if ((size_t)k < hn)
        return short_member(r, idx, name, dlen, (uint64_t)k);
    m->data = m->head;
    m->len = hn;
    if (dlen == hn)
        return 0;
    if (memcmp(m->head, GTR_MAGIC, GTR_MAGIC_LEN) != 0) {
        for (uint64_t left = dlen - hn; left;) {
            size_t step = left > MEMBER_CHUNK ? MEMBER_CHUNK : (size_t)left;
            k = rd_get(r, NULL, step);
            if (k < 0)
                return -1;
            if ((size_t)k < step)
                return short_member(r, idx, name, dlen, dlen - left + (uint64_t)k);
            left -= (uint64_t)k;
        }
        return 0;
    }
    if (!r->chunk && !(r->chunk = malloc(MEMBER_CHUNK)))
        return gt_source_error(r->err, r->errlen, r->source, "member %u (%s): out of memory", idx,
                               name);
    m->maplen = (size_t)dlen;
    m->img = mmap(NULL, m->maplen, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m->img == MAP_FAILED) {
        m->img = NULL;
        return gt_source_error(r->err, r->errlen, r->source,
                               "member %u (%s): out of memory for %zu bytes", idx, name, m->maplen);
    }
    m->present = calloc((m->maplen / ZBLK) / 8 + 1, 1);
    if (!m->present)
        return gt_source_error(r->err, r->errlen, r->source, "member %u (%s): out of memory", idx,
                               name);
    memcpy(m->img, m->head, hn);
    m->present[0] = 1;
    static const unsigned char zero[ZBLK];
    for (uint64_t pos = hn; pos < dlen;) {
        size_t step = dlen - pos > MEMBER_CHUNK ? MEMBER_CHUNK : (size_t)(dlen - pos);
        k = rd_get(r, r->chunk, step);
        if (k < 0)
            return -1;
        if ((size_t)k < step)
            return short_member(r, idx, name, dlen, pos + (uint64_t)k);
        /* pieces that end on the image's 4 KiB boundaries */
        for (size_t c = 0; c < step;) {
            size_t piece = ZBLK - (size_t)((pos + c) % ZBLK);
            if (piece > step - c)
                piece = step - c;
            if (memcmp(r->chunk + c, zero, piece)) {
                size_t pg = (size_t)((pos + c) / ZBLK);
                memcpy(m->img + pos + c, r->chunk + c, piece);
                m->present[pg >> 3] |= (unsigned char)(1u << (pg & 7));
            }
            c += piece;
        }
        pos += step;
    }
    m->data = m->img;
    m->len = (size_t)dlen;
    return 0;
}

static void member_free(struct member *m)
{
    if (m->img)
        munmap(m->img, m->maplen);
    free(m->present);
    m->img = NULL;
    m->present = NULL;
}

int gt_archive_member_take(struct gt_archive_member *m, unsigned char **img, size_t *maplen,
                           unsigned char **present)
{
    if (!m->map || !m->present_owned)
        return -1;
    *img = m->map;
    *maplen = m->maplen;
    *present = m->present_owned;
    m->map = NULL;
    m->present_owned = NULL;
    return 0;
}

static int rd_walk(struct arc_rd *r, gt_archive_cb cb, void *arg)
{
    const char *source = r->source;
    char *err = r->err;
    size_t errlen = r->errlen;
    unsigned char h[24];
    /* The container magic comes first: anything else is refused after its
     * first 16 bytes, whatever it would decompress to. */
    long long k = rd_get(r, h, 16);
    if (k < 0)
        return -1;
    if (k < 16 || memcmp(h, GT_ARC_MAGIC, 8) != 0)
        return gt_source_error(err, errlen, source, "not a gdrtrace archive (no \"%s\" container)",
                               GT_ARC_MAGIC);
    if (get32(h + 8) != 1)
        return gt_source_error(err, errlen, source,
                               "archive container version %u (this gdrtrace reads 1)",
                               get32(h + 8));
    uint64_t off = 16;
    uint32_t members = 0;
    struct member mb = {0};
    int rc = -1;
    for (;;) {
        k = rd_get(r, h, 8);
        if (k < 0)
            goto out;
        if (k < 8) {
            gt_source_error(err, errlen, source,
                            "truncated archive after %u members (no end marker)", members);
            goto out;
        }
        uint32_t magic = get32(h);
        if (magic == GT_ARC_END) {
            if (get32(h + 4) != members) {
                gt_source_error(err, errlen, source, "end marker counts %u members, found %u",
                                get32(h + 4), members);
                goto out;
            }
            rc = 0;
            goto out;
        }
        if (magic != GT_ARC_MEMBER) {
            gt_source_error(err, errlen, source, "bad member marker 0x%08x at offset %llu", magic,
                            (unsigned long long)off);
            goto out;
        }
        k = rd_get(r, h + 8, 16);
        if (k < 0)
            goto out;
        if (k < 16) {
            gt_source_error(err, errlen, source, "truncated member header at offset %llu",
                            (unsigned long long)off);
            goto out;
        }
        uint32_t live = get32(h + 4), nlen = get32(h + 8);
        uint64_t dlen = get64(h + 16);
        off += 24;
        char name[GT_ARC_NAME_MAX + 1];
        if (nlen == 0 || nlen > GT_ARC_NAME_MAX ||
            (k = rd_get(r, (unsigned char *)name, nlen)) < nlen) {
            if (k >= 0)
                gt_source_error(err, errlen, source, "member %u: name length %u is invalid",
                                members, nlen);
            goto out;
        }
        name[nlen] = 0;
        if (strlen(name) != nlen) {
            gt_source_error(err, errlen, source, "member %u: name contains a NUL byte", members);
            goto out;
        }
        off += nlen;
        /* A length the cap cannot hold is refused before a byte of it is read. */
        if (r->d && dlen > r->max - r->total) {
            gt_source_error(
                err, errlen, source,
                "member %u (%s) declares %llu data bytes, more than GDRTRACE_ARCHIVE_MAX "
                "(%llu) allows",
                members, name, (unsigned long long)dlen, (unsigned long long)r->max);
            goto out;
        }
        const unsigned char *p;
        size_t len = 0;
        const unsigned char *present = NULL;
        if (!r->d) {
            /* raw mode: the bytes are already in memory */
            if (dlen > r->rawn - r->rawpos) {
                gt_source_error(err, errlen, source,
                                "member %u (%s): %llu data bytes, only %zu remain", members, name,
                                (unsigned long long)dlen, r->rawn - r->rawpos);
                goto out;
            }
            p = r->raw + r->rawpos;
            len = (size_t)dlen;
            r->rawpos += len;
        } else {
            if (rd_member(r, dlen, &mb, members, name))
                goto out;
            p = mb.data;
            len = mb.len;
            present = mb.img ? mb.present : NULL;
        }
        struct gt_archive_member am = {name,    (int)live, p,         len,
                                       present, mb.img,    mb.maplen, mb.img ? mb.present : NULL};
        int crc = cb(&am, arg);
        if (mb.img && !am.map) { /* taken */
            mb.img = NULL;
            mb.present = NULL;
        }
        member_free(&mb);
        if (crc) {
            rc = crc;
            goto out;
        }
        off += dlen;
        members++;
    }
out:
    member_free(&mb);
    return rc;
}

int gt_archive_walk(const unsigned char *raw, size_t n, const char *source, gt_archive_cb cb,
                    void *arg, char *err, size_t errlen)
{
    struct arc_rd r = {.raw = raw, .rawn = n, .source = source, .err = err, .errlen = errlen};
    return rd_walk(&r, cb, arg);
}

static int stream(int fd, const unsigned char *mem, size_t memn, size_t max, const char *source,
                  gt_archive_cb cb, void *arg, char *err, size_t errlen)
{
    struct arc_rd r = {.fd = fd,
                       .mem = mem,
                       .memn = memn,
                       .max = max,
                       .source = source,
                       .err = err,
                       .errlen = errlen,
                       .last = 1};
    r.d = ZSTD_createDCtx();
    r.icap = fd >= 0 ? ZSTD_DStreamInSize() : 0;
    r.ibuf = r.icap ? malloc(r.icap) : NULL;
    if (!r.d || (fd >= 0 && !r.ibuf)) {
        ZSTD_freeDCtx(r.d);
        free(r.ibuf);
        return gt_source_error(err, errlen, source, "out of memory (zstd context)");
    }
    /* Refuse absurd window sizes a hostile frame may ask for. */
    ZSTD_DCtx_setParameter(r.d, ZSTD_d_windowLogMax, 27);
    int rc = rd_walk(&r, cb, arg);
    /* After the end marker the rest of the stream must still be valid zstd
     * (as when the whole stream was decompressed first); it is only
     * skipped, within the cap. */
    while (rc == 0) {
        long long k = rd_get(&r, NULL, (size_t)1 << 20);
        if (k < 0)
            rc = -1;
        if (k < ((long long)1 << 20))
            break;
    }
    ZSTD_freeDCtx(r.d);
    free(r.ibuf);
    free(r.chunk);
    return rc;
}

int gt_archive_stream_fd(int fd, size_t max, const char *source, gt_archive_cb cb, void *arg,
                         char *err, size_t errlen)
{
    return stream(fd, NULL, 0, max, source, cb, arg, err, errlen);
}

int gt_archive_stream_mem(const unsigned char *in, size_t inlen, size_t max, const char *source,
                          gt_archive_cb cb, void *arg, char *err, size_t errlen)
{
    return stream(-1, in, inlen, max, source, cb, arg, err, errlen);
}

struct gt_archive_writer {
    ZSTD_CCtx *c;
    FILE *f;
    char path[4096], tmp[4200];
    uint32_t members;
    int replace; /* an existing regular file at path may be replaced */
    uint64_t in_bytes;
    unsigned char *obuf;
    size_t ocap;
};

static int w_feed(struct gt_archive_writer *w, const void *p, size_t n, ZSTD_EndDirective mode,
                  char *err, size_t errlen)
{
    ZSTD_inBuffer ib = {p, n, 0};
    w->in_bytes += n;
    for (;;) {
        ZSTD_outBuffer ob = {w->obuf, w->ocap, 0};
        size_t rem = ZSTD_compressStream2(w->c, &ob, &ib, mode);
        if (ZSTD_isError(rem))
            return gt_source_error(err, errlen, w->path, "zstd: %s", ZSTD_getErrorName(rem));
        if (ob.pos && fwrite(w->obuf, 1, ob.pos, w->f) != ob.pos)
            return gt_source_error(err, errlen, w->tmp, "write failed: %s", strerror(errno));
        if (mode == ZSTD_e_continue ? ib.pos == ib.size : rem == 0)
            return 0;
    }
}

struct gt_archive_writer *gt_archive_create(const char *path, int level, int replace, char *err,
                                            size_t errlen)
{
    if (gt_out_check(path, replace, err, errlen))
        return NULL;
    struct gt_archive_writer *w = calloc(1, sizeof(*w));
    if (!w) {
        gt_source_error(err, errlen, path, "out of memory");
        return NULL;
    }
    snprintf(w->path, sizeof(w->path), "%s", path);
    w->replace = replace;
    snprintf(w->tmp, sizeof(w->tmp), "%s.tmp.%d", path, (int)getpid());
    /* 0600 like the recorders it holds: an archive carries the same identities. */
    int fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        gt_source_error(err, errlen, w->tmp, "cannot create: %s", strerror(errno));
        goto err_w;
    }
    w->f = fdopen(fd, "wb");
    if (!w->f) {
        close(fd);
        gt_source_error(err, errlen, w->tmp, "fdopen: %s", strerror(errno));
        goto err_file;
    }
    w->c = ZSTD_createCCtx();
    w->ocap = ZSTD_CStreamOutSize();
    w->obuf = malloc(w->ocap);
    if (!w->c || !w->obuf) {
        gt_source_error(err, errlen, path, "out of memory (zstd)");
        goto err_file;
    }
    ZSTD_CCtx_setParameter(w->c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(w->c, ZSTD_c_checksumFlag, 1);
    unsigned char h[16];
    memcpy(h, GT_ARC_MAGIC, 8);
    put32(h + 8, 1);
    put32(h + 12, 0);
    if (w_feed(w, h, sizeof(h), ZSTD_e_continue, err, errlen))
        goto err_file;
    return w;
err_file:
    gt_archive_abort(w);
    return NULL;
err_w:
    free(w);
    return NULL;
}

/* A sparse image's absent pages are fed from a block of zeros, never read;
 * runs of present pages go to the compressor in one call. */
static int feed_image(struct gt_archive_writer *w, const unsigned char *data, size_t len,
                      const unsigned char *present, char *err, size_t errlen)
{
    static const unsigned char zero[16 * GT_IMAGE_PAGE];
    if (!present)
        return w_feed(w, data, len, ZSTD_e_continue, err, errlen);
#define PAGE_HERE(pg) (present[(pg) >> 3] & (1u << ((pg)&7)))
    for (size_t pos = 0; pos < len;) {
        size_t pg = pos / GT_IMAGE_PAGE;
        int here = PAGE_HERE(pg) != 0;
        size_t end = (pg + 1) * GT_IMAGE_PAGE;
        while (end < len && (PAGE_HERE(end / GT_IMAGE_PAGE) != 0) == here)
            end += GT_IMAGE_PAGE;
        if (end > len)
            end = len;
        for (size_t at = pos; at < end;) {
            size_t n = here ? end - at : end - at < sizeof(zero) ? end - at : sizeof(zero);
            if (w_feed(w, here ? data + at : zero, n, ZSTD_e_continue, err, errlen))
                return -1;
            at += n;
        }
        pos = end;
    }
#undef PAGE_HERE
    return 0;
}

int gt_archive_add(struct gt_archive_writer *w, const char *name, int liveness,
                   const unsigned char *data, size_t len, const unsigned char *present, char *err,
                   size_t errlen)
{
    size_t nlen = strlen(name);
    if (nlen == 0 || nlen > GT_ARC_NAME_MAX)
        return gt_source_error(err, errlen, w->path, "member name of %zu bytes is invalid", nlen);
    unsigned char h[24];
    put32(h, GT_ARC_MEMBER);
    put32(h + 4, (uint32_t)liveness);
    put32(h + 8, (uint32_t)nlen);
    put32(h + 12, 0);
    put64(h + 16, len);
    if (w_feed(w, h, sizeof(h), ZSTD_e_continue, err, errlen) ||
        w_feed(w, name, nlen, ZSTD_e_continue, err, errlen) ||
        feed_image(w, data, len, present, err, errlen))
        return -1;
    w->members++;
    return 0;
}

int gt_archive_finish(struct gt_archive_writer *w, uint64_t *in_bytes, uint64_t *out_bytes,
                      char *err, size_t errlen)
{
    unsigned char e[8];
    put32(e, GT_ARC_END);
    put32(e + 4, w->members);
    if (w_feed(w, e, sizeof(e), ZSTD_e_end, err, errlen))
        goto err;
    if (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0) {
        gt_source_error(err, errlen, w->tmp, "flush failed: %s", strerror(errno));
        goto err;
    }
    long out = ftell(w->f);
    if (fclose(w->f) != 0) {
        w->f = NULL;
        gt_source_error(err, errlen, w->tmp, "close failed: %s", strerror(errno));
        goto err;
    }
    w->f = NULL;
    if (gt_out_commit(w->tmp, w->path, w->replace, err, errlen))
        goto err;
    if (in_bytes)
        *in_bytes = w->in_bytes;
    if (out_bytes)
        *out_bytes = out < 0 ? 0 : (uint64_t)out;
    ZSTD_freeCCtx(w->c);
    free(w->obuf);
    free(w);
    return 0;
err:
    gt_archive_abort(w);
    return -1;
}

void gt_archive_abort(struct gt_archive_writer *w)
{
    if (!w)
        return;
    if (w->f)
        fclose(w->f);
    unlink(w->tmp);
    ZSTD_freeCCtx(w->c);
    free(w->obuf);
    free(w);
}
