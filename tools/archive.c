/* SPDX-License-Identifier: Apache-2.0 */
/*
 * archive.c — the dump container (format in archive.h).
 * Invariant: the writer produces exactly the layout archive.h documents; the
 * reader never trusts a length before checking it against what remains.
 */
#include "tools/archive.h"
#include "tools/outfile.h"
#include "common/recfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
            gt_source_error(err, errlen, source, "corrupt archive: zstd: %s", ZSTD_getErrorName(last));
            goto err_buf;
        }
        int progress = ob.pos != len || ib.pos != before_in;
        len = ob.pos;
        if (ib.pos == ib.size && last != 0 && !progress && len < cap) {
            gt_source_error(err, errlen, source, "truncated archive (the zstd stream ends mid-frame)");
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

int gt_archive_walk(const unsigned char *raw, size_t n, const char *source, gt_archive_cb cb,
                    void *arg, char *err, size_t errlen)
{
    if (n < 16 || memcmp(raw, GT_ARC_MAGIC, 8) != 0)
        return gt_source_error(err, errlen, source, "not a gdrtrace archive (no \"%s\" container)",
                    GT_ARC_MAGIC);
    if (get32(raw + 8) != 1)
        return gt_source_error(err, errlen, source, "archive container version %u (this gdrtrace reads 1)",
                    get32(raw + 8));
    size_t off = 16;
    uint32_t members = 0;
    for (;;) {
        if (n - off < 8)
            return gt_source_error(err, errlen, source, "truncated archive after %u members (no end marker)",
                        members);
        uint32_t magic = get32(raw + off);
        if (magic == GT_ARC_END) {
            if (get32(raw + off + 4) != members)
                return gt_source_error(err, errlen, source, "end marker counts %u members, found %u",
                            get32(raw + off + 4), members);
            return 0;
        }
        if (magic != GT_ARC_MEMBER)
            return gt_source_error(err, errlen, source, "bad member marker 0x%08x at offset %zu", magic, off);
        if (n - off < 24)
            return gt_source_error(err, errlen, source, "truncated member header at offset %zu", off);
        uint32_t live = get32(raw + off + 4), nlen = get32(raw + off + 8);
        uint64_t dlen = get64(raw + off + 16);
        off += 24;
        if (nlen == 0 || nlen > GT_ARC_NAME_MAX || nlen > n - off)
            return gt_source_error(err, errlen, source, "member %u: name length %u is invalid", members,
                        nlen);
        char name[GT_ARC_NAME_MAX + 1];
        memcpy(name, raw + off, nlen);
        name[nlen] = 0;
        if (strlen(name) != nlen)
            return gt_source_error(err, errlen, source, "member %u: name contains a NUL byte", members);
        off += nlen;
        if (dlen > n - off)
            return gt_source_error(err, errlen, source, "member %u (%s): %llu data bytes, only %zu remain",
                        members, name, (unsigned long long)dlen, n - off);
        int rc = cb(name, (int)live, raw + off, (size_t)dlen, arg);
        if (rc)
            return rc;
        off += (size_t)dlen;
        members++;
    }
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

int gt_archive_add(struct gt_archive_writer *w, const char *name, int liveness,
                   const unsigned char *data, size_t len, char *err, size_t errlen)
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
        w_feed(w, data, len, ZSTD_e_continue, err, errlen))
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
