/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recfile.c — strict parser of recorder files (see recfile.h for the contract).
 *
 * Invariants this file keeps:
 *  - Never reads outside [buf, buf+len): every offset is checked with
 *    overflow-safe arithmetic (a + b > len is written as a > len - b) before
 *    any memcpy, and nothing is ever read through a pointer cast of buf (so
 *    a hostile offset cannot cause a misaligned access either).
 *  - Every numbered invariant of recorder_format.h is checked here, in order,
 *    and each failure produces one message naming the source, the field and
 *    the offending value.
 *  - Nothing returned points into buf: the caller may free it right away.
 */
#include "tools/lib/recfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "tools/lib/recfact.h"
#include "tools/lib/recfile_parse.h"

int gt_source_error(char *err, size_t errlen, const char *source, const char *fmt, ...)
{
    if (err && errlen) {
        int n = snprintf(err, errlen, "%s: ", source);
        if (n < 0 || (size_t)n >= errlen)
            n = 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* 1 if [off, off+n) lies inside [0, len). */
/* 1 if the fixed array holds a NUL (invariant 4). */
static int nul_bounded(const char *s, size_t n)
{
    return memchr(s, 0, n) != NULL;
}

#define CHECK_STR(obj, field, what)                                                                \
    do {                                                                                           \
        if (!nul_bounded((obj).field, sizeof((obj).field)))                                        \
            return gt_source_error(err, errlen, source,                                            \
                                   "%s.%s is not NUL-terminated within its %zu bytes", what,       \
                                   #field, sizeof((obj).field));                                   \
    } while (0)

static int check_identity(const struct gtr_identity *id, const char *source, char *err,
                          size_t errlen)
{
    CHECK_STR(*id, host, "identity");
    CHECK_STR(*id, job, "identity");
    CHECK_STR(*id, launcher, "identity");
    CHECK_STR(*id, plugin_version, "identity");
    CHECK_STR(*id, transport, "identity");
    CHECK_STR(*id, transport_why, "identity");
    CHECK_STR(*id, policy_reg, "identity");
    CHECK_STR(*id, policy_text, "identity");
    CHECK_STR(id->node, kernel_release, "identity.node");
    CHECK_STR(id->node, boot_id, "identity.node");
    CHECK_STR(id->node, nvidia_version, "identity.node");
    CHECK_STR(id->node, rdma_devices, "identity.node");
    CHECK_STR(id->node, gpus, "identity.node");
    CHECK_STR(id->node, cpu_model, "identity.node");
    if (id->clock != GTR_CLOCK_MONOTONIC && id->clock != GTR_CLOCK_TSC && id->clock != 0)
        return gt_source_error(err, errlen, source,
                               "identity.clock is %u (expected 1 monotonic or 2 TSC)", id->clock);
    if (id->clock == GTR_CLOCK_TSC && id->clock_shift > 63)
        return gt_source_error(err, errlen, source, "identity.clock_shift is %u (must be < 64)",
                               id->clock_shift);
    return 0;
}

static int check_device(const struct gtr_device *d, uint64_t i, const char *source, char *err,
                        size_t errlen)
{
    char what[48];
    snprintf(what, sizeof(what), "devices[%llu]", (unsigned long long)i);
    CHECK_STR(*d, name, what);
    CHECK_STR(*d, pci_path, what);
    CHECK_STR(*d, transport, what);
    CHECK_STR(*d, why, what);
    return 0;
}

static int check_comm(const struct gtr_comm *c, uint64_t i, const char *source, char *err,
                      size_t errlen)
{
    char what[48];
    snprintf(what, sizeof(what), "comms[%llu]", (unsigned long long)i);
    if (c->state > GTR_COMM_FINALIZED)
        return gt_source_error(err, errlen, source,
                               "%s.state is %u (expected 0 free, 1 active, 2 finalized)", what,
                               c->state);
    CHECK_STR(*c, error_last_text, what);
    return 0;
}

static int check_setting(const struct gtr_setting *s, uint64_t i, const char *source, char *err,
                         size_t errlen)
{
    char what[48];
    snprintf(what, sizeof(what), "settings[%llu]", (unsigned long long)i);
    if (s->in_use > 1)
        return gt_source_error(err, errlen, source, "%s.in_use is %u (expected 0 or 1)", what,
                               s->in_use);
    CHECK_STR(*s, key, what);
    CHECK_STR(*s, value, what);
    CHECK_STR(*s, origin, what);
    return 0; /* a source this reader does not know is shown as a number */
}

static int check_callee(const struct gtr_callee *c, uint64_t i, const char *source, char *err,
                        size_t errlen)
{
    char what[48];
    snprintf(what, sizeof(what), "callees[%llu]", (unsigned long long)i);
    if (c->in_use > 1)
        return gt_source_error(err, errlen, source, "%s.in_use is %u (expected 0 or 1)", what,
                               c->in_use);
    CHECK_STR(*c, kind, what);
    CHECK_STR(*c, path, what);
    return 0;
}

static int check_coll(const struct gtr_coll_comm *c, uint64_t i, const char *source, char *err,
                      size_t errlen)
{
    char what[48];
    snprintf(what, sizeof(what), "coll_comms[%llu]", (unsigned long long)i);
    if (c->state > GTR_COMM_FINALIZED)
        return gt_source_error(err, errlen, source, "%s.state is %u (expected 0..2)", what,
                               c->state);
    if (c->mode > GTR_COLL_MODE_KERNEL)
        return gt_source_error(err, errlen, source, "%s.mode is %u (expected 0..2)", what, c->mode);
    CHECK_STR(*c, comm_name, what);
    for (unsigned k = 0; k < GTR_COLL_CELLS; k++) {
        const struct gtr_coll_cell *x = &c->cells[k];
        /* 2: claimed, not yet published (a writer killed while filling):
         * read as empty */
        if (x->in_use > 2)
            return gt_source_error(err, errlen, source,
                                   "%s.cells[%u].in_use is %u (expected 0, 1 or 2)", what, k,
                                   x->in_use);
        if (x->in_use == 1 && (x->func >= GTR_COLL_FUNC_COUNT ||
                               (x->size_log2 > 63 && x->size_log2 != GTR_COLL_SIZE_ANY)))
            return gt_source_error(err, errlen, source,
                                   "%s.cells[%u]: function %u or size bucket %u out of range", what,
                                   k, x->func, x->size_log2);
    }
    return 0;
}

/* Pages of a sparse image (gt_recfile_read_fd, an archive member) that hold
 * data: one bit per 4 KiB page; the others are holes, zeros never read. */

int gt_image_all_hole(const unsigned char *present, uint64_t off, uint64_t n)
{
    if (!present || !n)
        return 0;
    for (uint64_t p = off >> PG_SHIFT; p <= (off + n - 1) >> PG_SHIFT; p++)
        if (present[p >> 3] & (1u << (p & 7)))
            return 0;
    return 1;
}

static int all_zero(const unsigned char *p, size_t n)
{
    return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

/* Copies `count` entries of `esize` bytes at `off` into an array of `known`
 * byte structs, each zero-filled past min(esize, known).  An entry lying
 * wholly in a hole (present: see above; NULL: no holes) or holding only
 * zeros is zeros already, and is not written: calloc's fresh pages stay
 * unwritten, so a table of declared-but-unused slots (up to 65,534 comms,
 * 1.7 GB, in an archive member that zstd holds in a few KB) costs address
 * space, not memory. */
static void *copy_entries(const unsigned char *buf, uint64_t off, uint64_t esize, uint64_t count,
                          size_t known, const unsigned char *present)
{
    unsigned char *out = calloc(count ? count : 1, known);
    if (!out)
        return NULL;
    size_t take = esize < known ? (size_t)esize : known;
    for (uint64_t i = 0; i < count; i++) {
        const unsigned char *src = buf + off + i * esize;
        if (!gt_image_all_hole(present, off + i * esize, take) && !all_zero(src, take))
            memcpy(out + i * known, src, take);
    }
    return out;
}

/* The comm table, compact (struct gt_recfile): only the entries that hold
 * anything are copied, each zero-filled past min(esize, known); a slot in
 * a hole or of zeros is a FREE record that costs nothing.  Pages of the
 * image in holes are never read. */
static int copy_comms(const unsigned char *buf, const struct gtr_section *s,
                      const unsigned char *present, struct gt_recfile *r)
{
    uint32_t count = (uint32_t)s->count;
    size_t take = s->entry_size < sizeof(struct gtr_comm) ? s->entry_size : sizeof(struct gtr_comm);
    r->comm_at = calloc(count, sizeof(*r->comm_at));
    if (!r->comm_at)
        return -1;
    r->ncomm = count;
    uint32_t held = 0;
    for (uint32_t pass = 0; pass < 2; pass++) { /* count, then copy */
        uint32_t k = 0;
        for (uint32_t i = 0; i < count; i++) {
            uint64_t off = s->offset + (uint64_t)i * s->entry_size;
            if (gt_image_all_hole(present, off, take) || all_zero(buf + off, take))
                continue;
            if (pass) {
                memcpy(&r->comms[k], buf + off, take);
                r->comm_slot[k] = (uint16_t)i;
                r->comm_at[i] = (uint16_t)(k + 1);
            }
            k++;
        }
        if (!pass) {
            held = k;
            r->comms = calloc(held ? held : 1, sizeof(*r->comms));
            r->comm_slot = calloc(held ? held : 1, sizeof(*r->comm_slot));
            if (!r->comms || !r->comm_slot)
                return -1;
        }
    }
    r->nheld = held;
    return 0;
}

static int sec_cmp(const void *a, const void *b)
{
    const struct gtr_section *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The fields of slot `pos` that classification needs, read with memcpy of
 * exact widths so the compiler emits plain loads (a 64-byte memcpy per event
 * became `rep movs` and dominated the profile). */
static inline uint64_t slot_seq(const unsigned char *slot)
{
    uint64_t v;
    memcpy(&v, slot + offsetof(struct gtr_event, seq), sizeof(v));
    return v;
}

static inline int slot_valid(const unsigned char *slot, uint32_t ncomm)
{
    uint16_t type, comm;
    memcpy(&type, slot + offsetof(struct gtr_event, type), sizeof(type));
    memcpy(&comm, slot + offsetof(struct gtr_event, comm_slot), sizeof(comm));
    return type < GTR_EV_COUNT && (comm == GTR_NO_COMM || comm < ncomm);
}

int gt_recfile_event_next(const struct gt_recfile *r, uint64_t *pos, struct gtr_event *ev)
{
    if (!r->has_ring || !r->ring_slots)
        return 0;
    uint64_t p = *pos < r->ring_first ? r->ring_first : *pos;
    uint64_t mask = r->ring.capacity - 1, esz = r->ring.event_size;
    for (; p < r->ring.head; p++) {
        const unsigned char *slot = r->ring_slots + (p & mask) * esz;
        if (gt_image_all_hole(r->present, r->ring_slots_off + (p & mask) * esz, esz))
            continue; /* zeros: never committed */
        if (slot_seq(slot) != 2 * p + 2 || !slot_valid(slot, r->ncomm))
            continue;
        memcpy(ev, slot, sizeof(*ev));
        *pos = p + 1;
        return 1;
    }
    *pos = p;
    return 0;
}

/* Invariant 6: walk the last `capacity` positions before head and classify
 * each.  Tolerates a head that is stale relative to the slots (a live
 * snapshot): a slot whose sequence belongs to a later lap is counted as
 * overwritten, never misattributed.  `slots` stays valid for the life of r
 * (owned by r->ring_slots or inside the owned snapshot). */
static int read_ring(const unsigned char *buf, const struct gtr_section *sec, struct gt_recfile *r,
                     const unsigned char *present, const char *source, char *err, size_t errlen)
{
    uint64_t off = sec->offset, size = sec->size;
    if (size < sizeof(struct gtr_ring_header))
        return gt_source_error(err, errlen, source,
                               "ring section is %llu bytes, smaller than its %zu-byte header",
                               (unsigned long long)size, sizeof(struct gtr_ring_header));
    memcpy(&r->ring, buf + off, sizeof(r->ring));
    const struct gtr_ring_header *h = &r->ring;
    if (h->capacity == 0 || (h->capacity & (h->capacity - 1)))
        return gt_source_error(err, errlen, source, "ring capacity %llu is not a power of two",
                               (unsigned long long)h->capacity);
    if (h->event_size < sizeof(struct gtr_event) || h->event_size % 8)
        return gt_source_error(err, errlen, source,
                               "ring event_size %u is invalid (at least %zu, a multiple of 8)",
                               h->event_size, sizeof(struct gtr_event));
    if (h->mode != GTR_RING_OVERWRITE)
        return gt_source_error(err, errlen, source, "ring mode %u is unknown", h->mode);
    uint64_t body = size - sizeof(struct gtr_ring_header);
    if (h->capacity > body / h->event_size || h->capacity * h->event_size != body)
        return gt_source_error(
            err, errlen, source,
            "ring holds %llu bytes of events, capacity %llu x event_size %u does not fit",
            (unsigned long long)body, (unsigned long long)h->capacity, h->event_size);
    if (sec->entry_size != h->event_size || sec->count != h->capacity)
        return gt_source_error(err, errlen, source,
                               "ring section says %llu entries of %u bytes, its header %llu of %u",
                               (unsigned long long)sec->count, sec->entry_size,
                               (unsigned long long)h->capacity, h->event_size);
    if (h->head > (UINT64_MAX >> 2))
        return gt_source_error(err, errlen, source, "ring head %llu is out of range",
                               (unsigned long long)h->head);

    struct gt_ring_stats *rs = &r->rs;
    rs->capacity = h->capacity;
    rs->head = h->head;
    uint64_t first = h->head > h->capacity ? h->head - h->capacity : 0;
    r->ring_first = first;
    rs->overwritten = first;
    const unsigned char *slots = buf + off + sizeof(struct gtr_ring_header);
    uint64_t mask = h->capacity - 1, esz = h->event_size;
    uint64_t slots_off = off + sizeof(struct gtr_ring_header);
    for (uint64_t pos = first; pos < h->head; pos++) {
        const unsigned char *slot = slots + (pos & mask) * esz;
        if (gt_image_all_hole(present, slots_off + (pos & mask) * esz, esz)) {
            rs->torn++; /* zeros, not read: never committed */
            continue;
        }
        uint64_t seq = slot_seq(slot), want = 2 * pos + 2;
        if (seq == want) {
            if (!slot_valid(slot, r->ncomm)) {
                rs->bad++;
                continue;
            }
            uint16_t type;
            memcpy(&type, slot + offsetof(struct gtr_event, type), sizeof(type));
            rs->by_type[type]++;
            rs->complete++;
        } else if (!(seq & 1) && seq > want) {
            rs->overwritten++;
        } else {
            rs->torn++;
        }
    }
    return 0;
}

/* parse() flags */

/* Invariants 1 and 2: the format's magic, byte order and major version,
 * and a header that fits what could be read; copies it to *h. */
static int parse_header(const unsigned char *buf, size_t len, const char *source,
                        struct gtr_header *h, char *err, size_t errlen)
{
    /* Invariant 1: identity of the format. */
    if (len < GTR_MAGIC_LEN || memcmp(buf, GTR_MAGIC, GTR_MAGIC_LEN) != 0)
        return gt_source_error(err, errlen, source,
                               "not a gdrtrace recorder (no \"GDRTRACE\" magic)");
    if (len < sizeof(struct gtr_header))
        return gt_source_error(err, errlen, source,
                               "truncated: %zu bytes, the header alone needs %zu", len,
                               sizeof(struct gtr_header));
    memcpy(h, buf, sizeof(*h));
    if (h->endian != GTR_ENDIAN_MARK) {
        uint32_t e = h->endian;
        uint32_t sw = (e >> 24) | ((e >> 8) & 0xff00) | ((e << 8) & 0xff0000) | (e << 24);
        if (sw == GTR_ENDIAN_MARK)
            return gt_source_error(err, errlen, source,
                                   "written on a machine of the other byte order; read it there");
        return gt_source_error(err, errlen, source, "endian mark is 0x%08x (expected 0x%08x)", e,
                               GTR_ENDIAN_MARK);
    }
    /* Invariant 2: major version must match; a newer minor is read. */
    if (h->version_major != GTR_VERSION_MAJOR)
        return gt_source_error(err, errlen, source,
                               "format version %u.%u; this gdrtrace reads major version %u only",
                               h->version_major, h->version_minor, GTR_VERSION_MAJOR);
    if (h->word_size != 8)
        return gt_source_error(err, errlen, source, "word size %u (expected 8)", h->word_size);
    if (h->state > GTR_STATE_CLOSED)
        return gt_source_error(err, errlen, source, "header state %u is unknown", h->state);
    if (h->header_size < sizeof(struct gtr_header) || h->header_size < GTR_HEADER_SIZE)
        return gt_source_error(err, errlen, source, "header_size %u is smaller than %u",
                               h->header_size, GTR_HEADER_SIZE);
    if (h->file_size > len)
        return gt_source_error(err, errlen, source,
                               "truncated: header says %llu bytes, only %zu could be read",
                               (unsigned long long)h->file_size, len);
    if (h->header_size > h->file_size)
        return gt_source_error(err, errlen, source, "header_size %u exceeds file_size %llu",
                               h->header_size, (unsigned long long)h->file_size);
    if (h->section_count > GTR_MAX_SECTIONS)
        return gt_source_error(err, errlen, source, "section_count %u exceeds the maximum %d",
                               h->section_count, GTR_MAX_SECTIONS);
    if (h->state == GTR_STATE_CREATING)
        return gt_source_error(err, errlen, source,
                               "recorder is still being created (state CREATING)");
    return 0;
}

/* Invariant 3: sections inside the file, sizes consistent, no overlap, the
 * four every writer writes present; by_id[id]: the known ones. */
static int index_sections(const struct gtr_header *h, const char *source,
                          const struct gtr_section *by_id[GTR_SEC_LAST_KNOWN + 1], char *err,
                          size_t errlen)
{
    struct gtr_section secs[GTR_MAX_SECTIONS];
    unsigned nsec = 0;
    for (unsigned i = 0; i < h->section_count; i++) {
        const struct gtr_section *s = &h->sections[i];
        if (s->id == 0)
            continue;
        if (s->offset < h->header_size || !in_bounds(s->offset, s->size, h->file_size))
            return gt_source_error(
                err, errlen, source,
                "section %u (id %u) at offset %llu size %llu lies outside [%u, %llu)", i, s->id,
                (unsigned long long)s->offset, (unsigned long long)s->size, h->header_size,
                (unsigned long long)h->file_size);
        if (s->id != GTR_SEC_RING) {
            if (s->entry_size == 0 || s->count > s->size / s->entry_size ||
                s->count * s->entry_size != s->size)
                return gt_source_error(
                    err, errlen, source,
                    "section %u (id %u): entry_size %u x count %llu != size %llu", i, s->id,
                    s->entry_size, (unsigned long long)s->count, (unsigned long long)s->size);
        }
        if (s->id <= GTR_SEC_LAST_KNOWN) {
            if (by_id[s->id])
                return gt_source_error(err, errlen, source, "section id %u appears twice", s->id);
            by_id[s->id] = s;
        }
        secs[nsec++] = *s;
    }
    qsort(secs, nsec, sizeof(secs[0]), sec_cmp);
    for (unsigned i = 1; i < nsec; i++)
        if (secs[i].offset < secs[i - 1].offset + secs[i - 1].size)
            return gt_source_error(err, errlen, source,
                                   "sections overlap: id %u [%llu, +%llu) and id %u at %llu",
                                   secs[i - 1].id, (unsigned long long)secs[i - 1].offset,
                                   (unsigned long long)secs[i - 1].size, secs[i].id,
                                   (unsigned long long)secs[i].offset);

    /* Every writer since 1.0 writes these four; a file without one of them
     * was not written by gdrtrace. */
    static const char *const sec_name[GTR_SEC_RING + 1] = {
        [GTR_SEC_IDENTITY] = "identity",
        [GTR_SEC_DEVICES] = "devices",
        [GTR_SEC_COMMS] = "comms",
        [GTR_SEC_RING] = "ring",
    };
    for (int id = GTR_SEC_IDENTITY; id <= GTR_SEC_RING; id++)
        if (!by_id[id])
            return gt_source_error(err, errlen, source, "no %s section", sec_name[id]);
    return 0;
}

static int parse_identity(const unsigned char *buf, const struct gtr_section *s, const char *source,
                          struct gt_recfile *r, char *err, size_t errlen)
{
    if (s->count != 1)
        return gt_source_error(err, errlen, source,
                               "identity section has %llu entries (expected 1)",
                               (unsigned long long)s->count);
    if (s->entry_size < sizeof(struct gtr_identity))
        return gt_source_error(err, errlen, source,
                               "identity entry_size %u is smaller than version 1.0's %zu",
                               s->entry_size, sizeof(struct gtr_identity));
    memcpy(&r->id, buf + s->offset, sizeof(r->id));
    return check_identity(&r->id, source, err, errlen);
}

#define OOM(source) gt_source_error(err, errlen, source, "out of memory")

static int parse_devices(const unsigned char *buf, const struct gtr_section *s,
                         const unsigned char *present, const char *source, struct gt_recfile *r,
                         char *err, size_t errlen)
{
    if (s->entry_size < sizeof(struct gtr_device))
        return gt_source_error(err, errlen, source,
                               "devices entry_size %u is smaller than version 1.0's %zu",
                               s->entry_size, sizeof(struct gtr_device));
    if (s->count > 65536)
        return gt_source_error(err, errlen, source, "devices count %llu is implausible",
                               (unsigned long long)s->count);
    r->devs =
        copy_entries(buf, s->offset, s->entry_size, s->count, sizeof(struct gtr_device), present);
    if (!r->devs)
        return OOM(source);
    r->ndev = (uint32_t)s->count;
    for (uint32_t i = 0; i < r->ndev; i++)
        if (check_device(&r->devs[i], i, source, err, errlen))
            return -1;
    return 0;
}

static int parse_comms(const unsigned char *buf, const struct gtr_section *s,
                       const unsigned char *present, const char *source, struct gt_recfile *r,
                       char *err, size_t errlen)
{
    /* A 1.0 file's records end before the 1.1 reason slots 16..31:
     * copy_entries() zero-fills them, which is what 1.0 counted there. */
    if (s->entry_size < GTR_COMM_SIZE_1_0)
        return gt_source_error(err, errlen, source,
                               "comms entry_size %u is smaller than version 1.0's %zu",
                               s->entry_size, (size_t)GTR_COMM_SIZE_1_0);
    if (s->count >= GTR_NO_COMM)
        return gt_source_error(err, errlen, source, "comms count %llu exceeds %u",
                               (unsigned long long)s->count, GTR_NO_COMM - 1);
    if (copy_comms(buf, s, present, r))
        return OOM(source);
    for (uint32_t k = 0; k < r->nheld; k++)
        if (check_comm(&r->comms[k], r->comm_slot[k], source, err, errlen))
            return -1;
    return 0;
}

/* A table section of at most 4096 entries of at least `known` bytes (since
 * version `since`): copied into *out, *n entries, each checked by check. */
static int parse_table(const unsigned char *buf, const struct gtr_section *s,
                       const unsigned char *present, const char *source, const char *what,
                       const char *since, size_t known, void **out, uint32_t *n,
                       int (*check)(const void *e, uint32_t i, const char *source, char *err,
                                    size_t errlen),
                       char *err, size_t errlen)
{
    if (s->entry_size < known)
        return gt_source_error(err, errlen, source,
                               "%s entry_size %u is smaller than version %s's %zu", what,
                               s->entry_size, since, known);
    if (s->count > 4096)
        return gt_source_error(err, errlen, source, "%s count %llu is implausible", what,
                               (unsigned long long)s->count);
    unsigned char *t = copy_entries(buf, s->offset, s->entry_size, s->count, known, present);
    if (!t)
        return OOM(source);
    *out = t;
    *n = (uint32_t)s->count;
    for (uint32_t i = 0; i < *n; i++)
        if (check(t + (size_t)i * known, i, source, err, errlen))
            return -1;
    return 0;
}

static int check_setting_v(const void *e, uint32_t i, const char *source, char *err, size_t errlen)
{
    return check_setting(e, i, source, err, errlen);
}

static int check_callee_v(const void *e, uint32_t i, const char *source, char *err, size_t errlen)
{
    return check_callee(e, i, source, err, errlen);
}

static int check_coll_v(const void *e, uint32_t i, const char *source, char *err, size_t errlen)
{
    return check_coll(e, i, source, err, errlen);
}

static int parse_host(const unsigned char *buf, const struct gtr_section *s,
                      const unsigned char *present, const char *source, struct gt_recfile *r,
                      char *err, size_t errlen)
{
    if (s->count != 1)
        return gt_source_error(err, errlen, source, "host section has %llu entries (expected 1)",
                               (unsigned long long)s->count);
    struct gtr_host *hp =
        copy_entries(buf, s->offset, s->entry_size, 1, sizeof(struct gtr_host), present);
    if (!hp)
        return OOM(source);
    r->host = hp;
    r->has_host = 1;
    /* a writer claims at most GTR_HOST_THREADS slots; more is hostile */
    if (r->host->nthreads > GTR_HOST_THREADS)
        r->host->nthreads = GTR_HOST_THREADS;
    return 0;
}

static int parse_coll_status(const unsigned char *buf, const struct gtr_section *s,
                             const char *source, struct gt_recfile *r, char *err, size_t errlen)
{
    if (s->count != 1 || s->entry_size < sizeof(struct gtr_coll_status))
        return gt_source_error(err, errlen, source,
                               "coll_status section: %llu entries of %u bytes (expected 1 of at "
                               "least %zu)",
                               (unsigned long long)s->count, s->entry_size,
                               sizeof(struct gtr_coll_status));
    struct gtr_coll_status *st = malloc(sizeof(*st));
    if (!st)
        return OOM(source);
    memcpy(st, buf + s->offset, sizeof(*st));
    r->coll_status = st; /* freed with r, also on failure */
    if (!memchr(st->profiler_env, 0, sizeof(st->profiler_env)) || st->mode > GTR_COLL_MODE_KERNEL)
        return gt_source_error(err, errlen, source,
                               "coll_status: profiler_env not NUL-terminated or mode %u unknown",
                               st->mode);
    return 0;
}

/* The ring: classified into r->rs, and its slots kept as flags say (none,
 * in the caller's image, in the owned snapshot, or a copy). */
static int take_ring(const unsigned char *buf, const struct gtr_section *s, const char *source,
                     struct gt_recfile *r, char *err, size_t errlen, unsigned char *owned,
                     int flags, const unsigned char *present)
{
    r->has_ring = 1;
    if (read_ring(buf, s, r, present, source, err, errlen))
        return -1;
    size_t slots_off = (size_t)s->offset + sizeof(struct gtr_ring_header);
    size_t slots_len = (size_t)(s->size - sizeof(struct gtr_ring_header));
    if (flags & P_NO_EVENTS) {
        free(owned); /* r->rs has what the ring held */
    } else if (flags & P_IMAGE) {
        r->ring_slots = (unsigned char *)buf + slots_off; /* the caller hands r the image */
        r->ring_slots_off = slots_off;
    } else if (owned) {
        /* keep the whole snapshot; the slots are inside it */
        r->snap = owned;
        r->ring_slots = owned + slots_off;
    } else {
        r->snap = malloc(slots_len ? slots_len : 1);
        if (!r->snap)
            return OOM(source);
        memcpy(r->snap, buf + slots_off, slots_len);
        r->ring_slots = r->snap;
    }
    return 0;
}

/* The sections after the identity, each validated by its own function; the
 * ones of later versions are absent in older files. */
static int parse_sections(const unsigned char *buf, const struct gtr_section *const *by_id,
                          const char *source, struct gt_recfile *r, char *err, size_t errlen,
                          const unsigned char *present)
{
    const struct gtr_section *s = by_id[GTR_SEC_DEVICES];
    if (s && s->count && parse_devices(buf, s, present, source, r, err, errlen))
        return -1;
    if ((s = by_id[GTR_SEC_COMMS]) && s->count &&
        parse_comms(buf, s, present, source, r, err, errlen))
        return -1;
    void *t = NULL;
    if ((s = by_id[GTR_SEC_SETTINGS]) && s->count) { /* 1.2 */
        int rc = parse_table(buf, s, present, source, "settings", "1.2", sizeof(struct gtr_setting),
                             &t, &r->nset, check_setting_v, err, errlen);
        r->settings = t;
        if (rc)
            return -1;
    }
    if ((s = by_id[GTR_SEC_CALLEES]) && s->count) { /* 1.3 */
        t = NULL;
        int rc = parse_table(buf, s, present, source, "callees", "1.3", sizeof(struct gtr_callee),
                             &t, &r->ncallee, check_callee_v, err, errlen);
        r->callees = t;
        if (rc)
            return -1;
    }
    if ((s = by_id[GTR_SEC_HOST]) && s->count &&
        parse_host(buf, s, present, source, r, err, errlen)) /* 1.5 */
        return -1;
    if ((s = by_id[GTR_SEC_COLL_COMMS]) && s->count) { /* 1.6 */
        t = NULL;
        int rc =
            parse_table(buf, s, present, source, "coll_comms", "1.6", sizeof(struct gtr_coll_comm),
                        &t, &r->ncoll, check_coll_v, err, errlen);
        r->colls = t;
        if (rc)
            return -1;
    }
    if ((s = by_id[GTR_SEC_COLL_STATUS]) && s->count &&
        parse_coll_status(buf, s, source, r, err, errlen)) /* 1.6 */
        return -1;
    return 0;
}

static int parse_into(const unsigned char *buf, size_t len, const char *source,
                      struct gt_recfile *r, char *err, size_t errlen, unsigned char *owned,
                      int flags, const unsigned char *present)
{
    r->size = len;
    r->owner = -1; /* the caller knows the file: tools/lib/inputs.c */
    r->reg_mode = -1;
    const struct gtr_section *by_id[GTR_SEC_LAST_KNOWN + 1] = {0};
    struct gtr_header h; /* by_id points into it */
    if (parse_header(buf, len, source, &h, err, errlen) ||
        index_sections(&h, source, by_id, err, errlen))
        return -1;
    r->hdr = (struct gt_rec_head){h.version_major, h.version_minor, h.state, h.file_size};
    if (parse_identity(buf, by_id[GTR_SEC_IDENTITY], source, r, err, errlen))
        return -1;
    if (parse_sections(buf, by_id, source, r, err, errlen, present) ||
        (by_id[GTR_SEC_RING] &&
         take_ring(buf, by_id[GTR_SEC_RING], source, r, err, errlen, owned, flags, present))) {
        gt_recfile_free(r);
        return -1;
    }
    gt_rec_decide_facts(r);
    if (!by_id[GTR_SEC_RING] && owned)
        free(owned);
    r->liveness = r->hdr.state == GTR_STATE_CLOSED ? GT_LIVE_EXITED : GT_LIVE_UNKNOWN;
    return 0;
}

/* parse_into() with r's source set, which a failed parse frees (*r then
 * holds nothing to free, recfile.h). */
static int parse(const unsigned char *buf, size_t len, const char *source, struct gt_recfile *r,
                 char *err, size_t errlen, unsigned char *owned, int flags,
                 const unsigned char *present)
{
    memset(r, 0, sizeof(*r));
    r->source = strndup(source, GT_SOURCE_MAX - 1);
    if (!r->source)
        return gt_source_error(err, errlen, source, "out of memory");
    if (parse_into(buf, len, r->source, r, err, errlen, owned, flags, present) == 0)
        return 0;
    free(r->source);
    r->source = NULL;
    return -1;
}

#undef OOM

int gt_recfile_parse_header(const unsigned char *buf, size_t len, const char *source,
                            struct gtr_header *h, char *err, size_t errlen)
{
    const struct gtr_section *by_id[GTR_SEC_LAST_KNOWN + 1] = {0};
    return parse_header(buf, len, source, h, err, errlen) ||
                   index_sections(h, source, by_id, err, errlen)
               ? -1
               : 0;
}

int gt_recfile_parse_flags(const unsigned char *buf, size_t len, const char *source,
                           struct gt_recfile *r, char *err, size_t errlen, unsigned char *owned,
                           int flags, const unsigned char *present)
{
    return parse(buf, len, source, r, err, errlen, owned, flags, present);
}

int gt_recfile_parse(const void *buf, size_t len, const char *source, struct gt_recfile *r,
                     char *err, size_t errlen)
{
    return parse(buf, len, source, r, err, errlen, NULL, 0, NULL);
}

int gt_recfile_parse_owned(unsigned char *buf, size_t len, const char *source, struct gt_recfile *r,
                           char *err, size_t errlen)
{
    int rc = parse(buf, len, source, r, err, errlen, buf, 0, NULL);
    if (rc != 0)
        free(buf); /* on failure nothing in r refers to it */
    return rc;
}

int gt_recfile_parse_sparse(const unsigned char *buf, size_t len, const unsigned char *present,
                            const char *source, struct gt_recfile *r, char *err, size_t errlen)
{
    return parse(buf, len, source, r, err, errlen, NULL, P_NO_EVENTS, present);
}

int gt_recfile_adopt_image(unsigned char *img, size_t maplen, size_t len, unsigned char *present,
                           int flags, const char *source, struct gt_recfile *r, char *err,
                           size_t errlen)
{
    int rc = parse(img, len, source, r, err, errlen, NULL,
                   (flags & GT_REC_EVENTS) ? P_IMAGE : P_NO_EVENTS, present);
    if (rc == 0 && r->ring_slots) {
        /* the events are read in place: the image becomes the snapshot, its
         * untouched pages still costing nothing, and never read */
        r->snap = img;
        r->snap_maplen = maplen;
        r->present = present;
        return 0;
    }
    munmap(img, maplen);
    free(present);
    return rc;
}

void gt_recfile_drop_events(struct gt_recfile *r)
{
    if (r->snap_maplen)
        munmap(r->snap, r->snap_maplen);
    else
        free(r->snap);
    free(r->present);
    r->snap = NULL;
    r->snap_maplen = 0;
    r->present = NULL;
    r->ring_slots_off = 0;
    r->ring_slots = NULL;
}

void gt_recfile_free(struct gt_recfile *r)
{
    free(r->source);
    r->source = NULL;
    if (!r->devs_shared)
        free(r->devs);
    r->devs_shared = 0;
    free(r->comms);
    free(r->comm_slot);
    free(r->comm_at);
    free(r->settings);
    free(r->callees);
    free(r->colls);
    free(r->host);
    r->host = NULL;
    r->has_host = 0;
    gt_recfile_drop_events(r);
    r->devs = NULL;
    r->comms = NULL;
    r->comm_slot = NULL;
    r->comm_at = NULL;
    r->nheld = 0;
    r->settings = NULL;
    r->callees = NULL;
    r->ncallee = 0;
    r->colls = NULL;
    r->ncoll = 0;
    free(r->coll_status);
    r->coll_status = NULL;
    r->nset = 0;
    r->snap = NULL;
    r->ring_slots = NULL;
    r->has_ring = 0;
    r->ndev = r->ncomm = 0;
}

double gt_recfile_ts_rel_s(const struct gt_recfile *r, uint64_t ticks)
{
    const struct gtr_identity *id = &r->id;
    /* ns = mono0 + ((ticks - tick0) * mult) >> shift, in floating point: the
     * exact form needs 128-bit products, and this is for display only */
    double delta = (double)(int64_t)(ticks - id->clock_tick0);
    double mult = id->clock == GTR_CLOCK_TSC ? (double)id->clock_mult : 1.0;
    double shift = id->clock == GTR_CLOCK_TSC ? (double)(1ull << (id->clock_shift & 63)) : 1.0;
    double ns = (double)id->clock_mono0_ns + delta * mult / shift;
    if (id->clock != GTR_CLOCK_TSC)
        ns = (double)(int64_t)ticks;
    return (ns - (double)id->start_mono_ns) / 1e9;
}

const char *gt_liveness_name(int l)
{
    switch (l) {
    case GT_LIVE_CREATING:
        return "creating";
    case GT_LIVE_LIVE:
        return "live";
    case GT_LIVE_EXITED:
        return "exited";
    case GT_LIVE_CRASHED:
        return "crashed";
    default:
        return "unknown";
    }
}

const char *gt_reason_name(int r)
{
    const char *t = gt_reason_token(r);
    if (t)
        return t;
    /* a newer writer's code: a few rotating buffers (single-threaded
     * reader; a line prints at most two reasons) */
    static char other[4][24];
    static unsigned next;
    char *b = other[next++ % 4];
    snprintf(b, sizeof(other[0]), "reason#%d", r);
    return b;
}

const char *gt_reason_slot_name(int slot)
{
    const char *t = gt_reason_slot_token(slot);
    return t ? t : gt_reason_name(slot);
}

const char *gt_op_name(int op)
{
    static const char *n[] = {"reg", "dereg", "send", "recv", "flush"};
    return op >= 0 && op < GTR_OP_COUNT ? n[op] : "?";
}

const char *gt_event_name(int t)
{
    static const char *n[GTR_EV_COUNT] = {
        "none",   "recorder-open", "init",       "finalize",     "probe", "transport",
        "listen", "connect",       "accept",     "reg",          "dereg", "fallback",
        "error",  "close-send",    "close-recv", "close-listen", "send",  "recv",
        "flush",  "calling",       "returned",   "refused",
    };
    return t >= 0 && t < GTR_EV_COUNT ? n[t] : "?";
}

void gt_setting_source_text(const struct gtr_setting *s, char *out, size_t n)
{
    const char *name = gt_setting_source_name((int)s->source);
    if (!name)
        snprintf(out, n, "source#%u", s->source);
    else if (s->source != GT_SRC_DEFAULT && s->source != GT_SRC_GDRTRACE && s->origin[0])
        snprintf(out, n, "%s: %s", name, s->origin);
    else
        snprintf(out, n, "%s", name);
}
