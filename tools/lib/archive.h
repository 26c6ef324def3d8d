/* SPDX-License-Identifier: Apache-2.0 */
/*
 * archive.h — `gdrtrace dump` archives: several recorders in one
 * zstd-compressed stream (libzstd streaming API both ways).
 *
 * Container (the decompressed bytes; every integer little-endian, so an
 * archive moves between machines; the recorders inside stay in their
 * writer's byte order, as their header says):
 *
 *   "GDRTARC1"                      8 bytes
 *   u32 version (1), u32 flags (0)
 *   member*:  u32 'GTAM' (0x4d415447), u32 liveness (enum gt_liveness seen
 *             at dump time), u32 name_len (1..4096), u32 reserved (0),
 *             u64 data_len, name bytes (no NUL), data bytes (the recorder)
 *   end:      u32 'GEND' (0x444e4547), u32 member count
 *
 * Reading is as hostile-proof as recfile.c, and streams: members are handed
 * on while the archive is decompressed, the container magic is checked in
 * the first 16 decompressed bytes, the decompressed size is capped
 * (GDRTRACE_ARCHIVE_MAX bytes, default 4 GiB; a member declaring more than
 * the cap leaves is refused before it is read), and a member is held in an
 * anonymous mapping where only its non-zero 4 KiB blocks are written (its
 * zero runs cost nothing; one that does not start with a recorder's magic
 * is skipped, not held).  Memory is one member's non-zero bytes plus zstd's
 * window (at most 128 MiB).  Errors: 0 / -1 with a
 * message in err.
 */
#ifndef GDRTRACE_TOOLS_ARCHIVE_H
#define GDRTRACE_TOOLS_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#define GT_ARC_MAGIC "GDRTARC1"
#define GT_ARC_MEMBER 0x4d415447u
#define GT_ARC_END 0x444e4547u
#define GT_ARC_NAME_MAX 4096

/* 1 if b starts with a zstd frame magic. */
int gt_archive_sniff(const unsigned char *b, size_t n);

/* Decompresses a whole zstd stream (possibly several frames) into a
 * malloc'd buffer of at most max bytes.  For tests and fuzzing: readers use
 * gt_archive_stream_*, which never holds the whole archive. */
int gt_archive_decompress(const unsigned char *in, size_t inlen, size_t max, unsigned char **out,
                          size_t *outlen, const char *source, char *err, size_t errlen);

/* A member as a callback sees it, valid during the call only.  A member
 * that starts like a recorder is held as a sparse image: an anonymous
 * mapping of its length into which only its non-zero 4 KiB pages were
 * copied; `present` marks those (tools/lib/recfile.h's GT_IMAGE_PAGE bits), and
 * the other pages must not be read (some kernels count a read fault of an
 * untouched page in the resident set).  present NULL: every page of data
 * may be read (raw mode, or a member held only by its first bytes). */
struct gt_archive_member {
    const char *name; /* NUL-terminated */
    int liveness;
    const unsigned char *data;
    size_t len;
    const unsigned char *present;
    /* private: what gt_archive_member_take() hands over */
    unsigned char *map;
    size_t maplen;
    unsigned char *present_owned;
};

/*! gt_archive_member_take() : hands the member's sparse image over to the
 *  caller (to keep past the callback, e.g. gt_recfile_adopt_image()):
 *  *img, an anonymous mapping of *maplen bytes (munmap it), and *present
 *  (free it; never NULL).  Returns 0, or -1 when the member is not held as
 *  an image (then data/len are only valid during the call). */
int gt_archive_member_take(struct gt_archive_member *m, unsigned char **img, size_t *maplen,
                           unsigned char **present);

/* Calls cb for each member of a decompressed container, in order; stops
 * and returns cb's value if it is non-zero. */
typedef int (*gt_archive_cb)(struct gt_archive_member *m, void *arg);
int gt_archive_walk(const unsigned char *raw, size_t n, const char *source, gt_archive_cb cb,
                    void *arg, char *err, size_t errlen);

/*! gt_archive_stream_fd() : decompresses the zstd stream read from fd (from
 *  its current offset) and walks the container as it goes: cb sees each
 *  member while later ones are still compressed; data is valid only during
 *  the call.  Members handed on before a later problem stay handed on; the
 *  problem is still returned (-1, err).  gt_archive_stream_mem() reads the
 *  compressed bytes from memory instead. */
int gt_archive_stream_fd(int fd, size_t max, const char *source, gt_archive_cb cb, void *arg,
                         char *err, size_t errlen);
int gt_archive_stream_mem(const unsigned char *in, size_t inlen, size_t max, const char *source,
                          gt_archive_cb cb, void *arg, char *err, size_t errlen);

/* Writer: members are streamed through the compressor as they are added,
 * into a temporary file (mode 0600) next to path.  Refused (NULL, err) when
 * path is not a regular file, or exists and `replace` is 0 (tools/lib/outfile.h). */
struct gt_archive_writer;
struct gt_archive_writer *gt_archive_create(const char *path, int level, int replace, char *err,
                                            size_t errlen);
/* Adds a member of len bytes; present (NULL: none) marks the 4 KiB pages of
 * a sparse image that hold data: the others are written as zeros without
 * being read. */
int gt_archive_add(struct gt_archive_writer *w, const char *name, int liveness,
                   const unsigned char *data, size_t len, const unsigned char *present, char *err,
                   size_t errlen);
/* Writes the end marker, flushes, renames the temporary file onto path
 * (without `replace`: only if nothing appeared there meanwhile). */
int gt_archive_finish(struct gt_archive_writer *w, uint64_t *in_bytes, uint64_t *out_bytes,
                      char *err, size_t errlen);
/* Abandons a writer (removes the temporary file). */
void gt_archive_abort(struct gt_archive_writer *w);

#endif
