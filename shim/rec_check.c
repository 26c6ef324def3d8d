/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rec_check.c — minimal validating recorder reader (see rec_check.h).
 * Treats the buffer as hostile: every offset and size is checked against
 * the buffer before it is used, with overflow-safe arithmetic.
 */
#include "shim/rec_check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim/ring.h"

static int fail(char *err, size_t n, const char *fmt, ...)
{
    if (err && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int gt_rec_check(const void *buf, size_t len, struct gt_rec_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof(*v));
    const uint8_t *b = buf;
    if (len < sizeof(struct gtr_header))
        return fail(err, errlen, "truncated: %zu bytes, a header needs %zu", len,
                    sizeof(struct gtr_header));
    const struct gtr_header *h = buf;
    if (memcmp(h->magic, GTR_MAGIC, GTR_MAGIC_LEN) != 0)
        return fail(err, errlen, "not a gdrtrace recorder (bad magic)");
    if (h->endian != GTR_ENDIAN_MARK) {
        if (h->endian == __builtin_bswap32(GTR_ENDIAN_MARK))
            return fail(err, errlen, "written on a host of the other byte order");
        return fail(err, errlen, "bad endianness marker 0x%08x", h->endian);
    }
    if (h->version_major != GTR_VERSION_MAJOR)
        return fail(err, errlen, "format version %u.%u, this reader reads %u.x", h->version_major,
                    h->version_minor, GTR_VERSION_MAJOR);
    if (h->word_size != 8)
        return fail(err, errlen, "word size %u, expected 8", h->word_size);
    if (h->header_size < sizeof(struct gtr_header) || h->header_size > len)
        return fail(err, errlen, "header size %u out of range", h->header_size);
    if (h->file_size > len)
        return fail(err, errlen, "truncated: header says %llu bytes, file has %zu",
                    (unsigned long long)h->file_size, len);
    if (h->section_count > GTR_MAX_SECTIONS)
        return fail(err, errlen, "%u sections, at most %u", h->section_count, GTR_MAX_SECTIONS);

    const struct gtr_section *sec[GTR_SEC_RING + 1] = {0};
    for (uint32_t i = 0; i < h->section_count; i++) {
        const struct gtr_section *s = &h->sections[i];
        if (s->id == 0)
            continue;
        if (s->offset < h->header_size || s->offset > h->file_size ||
            s->size > h->file_size - s->offset)
            return fail(err, errlen, "section %u (id %u) outside the file", i, s->id);
        uint64_t payload = s->size;
        if (s->id == GTR_SEC_RING) {
            if (payload < sizeof(struct gtr_ring_header))
                return fail(err, errlen, "ring section too small");
            payload -= sizeof(struct gtr_ring_header);
        }
        if (s->entry_size == 0 || s->count > payload / s->entry_size ||
            s->count * s->entry_size != payload)
            return fail(err, errlen, "section %u: %llu x %u bytes != size %llu", i,
                        (unsigned long long)s->count, s->entry_size, (unsigned long long)s->size);
        for (uint32_t j = 0; j < i; j++) {
            const struct gtr_section *o = &h->sections[j];
            if (o->id && s->offset < o->offset + o->size && o->offset < s->offset + s->size)
                return fail(err, errlen, "sections %u and %u overlap", j, i);
        }
        if (s->id <= GTR_SEC_RING)
            sec[s->id] = s; /* unknown ids: skipped (newer minor version) */
    }
    static const char *const names[] = {"", "identity", "devices", "comms", "ring"};
    for (int id = GTR_SEC_IDENTITY; id <= GTR_SEC_RING; id++)
        if (!sec[id])
            return fail(err, errlen, "no %s section", names[id]);
    if (sec[GTR_SEC_IDENTITY]->entry_size < sizeof(struct gtr_identity) ||
        sec[GTR_SEC_IDENTITY]->count != 1)
        return fail(err, errlen, "identity section too small");
    if (sec[GTR_SEC_DEVICES]->entry_size < sizeof(struct gtr_device))
        return fail(err, errlen, "device records too small");
    if (sec[GTR_SEC_COMMS]->entry_size < sizeof(struct gtr_comm))
        return fail(err, errlen, "comm records too small");
    if (sec[GTR_SEC_RING]->entry_size != sizeof(struct gtr_event))
        return fail(err, errlen, "event size %u, expected %zu", sec[GTR_SEC_RING]->entry_size,
                    sizeof(struct gtr_event));
    if (sec[GTR_SEC_DEVICES]->count > UINT32_MAX || sec[GTR_SEC_COMMS]->count > UINT32_MAX)
        return fail(err, errlen, "too many records");

    v->base = b;
    v->len = len;
    v->hdr = h;
    v->id = (const struct gtr_identity *)(b + sec[GTR_SEC_IDENTITY]->offset);
    v->devs = b + sec[GTR_SEC_DEVICES]->offset;
    v->dev_size = sec[GTR_SEC_DEVICES]->entry_size;
    v->ndevs = (uint32_t)sec[GTR_SEC_DEVICES]->count;
    v->comms = b + sec[GTR_SEC_COMMS]->offset;
    v->comm_size = sec[GTR_SEC_COMMS]->entry_size;
    v->ncomms = (uint32_t)sec[GTR_SEC_COMMS]->count;
    v->ring = (const struct gtr_ring_header *)(b + sec[GTR_SEC_RING]->offset);
    v->events = (const struct gtr_event *)(b + sec[GTR_SEC_RING]->offset +
                                           sizeof(struct gtr_ring_header));
    v->capacity = sec[GTR_SEC_RING]->count;
    if (v->capacity == 0 || (v->capacity & (v->capacity - 1)) || v->ring->capacity != v->capacity)
        return fail(err, errlen, "ring capacity %llu is not the section's power of two",
                    (unsigned long long)v->ring->capacity);
    return 0;
}

uint64_t gt_rec_view_events(const struct gt_rec_view *v, gt_rec_event_cb cb, void *arg,
                            uint64_t *first)
{
    uint64_t head = __atomic_load_n(&v->ring->head, __ATOMIC_ACQUIRE);
    uint64_t start = head > v->capacity ? head - v->capacity : 0;
    uint64_t n = 0;
    if (first)
        *first = start;
    for (uint64_t pos = start; pos < head; pos++) {
        struct gtr_event e;
        if (gt_ring_read(v->events, v->capacity, pos, &e)) {
            n++;
            if (cb)
                cb(&e, pos, arg);
        }
    }
    return n;
}

int gt_rec_slurp(const char *path, uint8_t **buf, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno;
    struct stat st;
    int e = 0;
    if (fstat(fd, &st) != 0) {
        e = errno;
        goto out;
    }
    *len = (size_t)st.st_size;
    *buf = malloc(*len ? *len : 1);
    if (!*buf) {
        e = ENOMEM;
        goto out;
    }
    size_t got = 0;
    while (got < *len) {
        ssize_t k = read(fd, *buf + got, *len - got);
        if (k <= 0) {
            e = k < 0 ? errno : EIO;
            free(*buf);
            *buf = NULL;
            goto out;
        }
        got += (size_t)k;
    }
out:
    close(fd);
    return e;
}
