/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recfile_parse.h — between the parser (recfile.c) and the file reader
 * (recfile_read.c) only: the parser with its flags.  Nothing else includes
 * it; everyone else calls recfile.h's gt_recfile_parse*().
 */
#ifndef GDRTRACE_TOOLS_RECFILE_PARSE_H
#define GDRTRACE_TOOLS_RECFILE_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "tools/lib/recfile.h"

/* A recorder bigger than this is refused rather than read into memory. */
#define GT_REC_MAX_BYTES (1ull << 34)

/* Pages of an image (recfile.h): one bit of present per 4 KiB. */
#define PG_SHIFT GT_IMAGE_PAGE_SHIFT

/* [off, off + n) lies within [0, len), overflow-safe. */
static inline int in_bounds(uint64_t off, uint64_t n, uint64_t len)
{
    return off <= len && n <= len - off;
}

#define P_NO_EVENTS 2 /* classify the ring, keep none of its slots */
#define P_IMAGE 4     /* buf is gt_recfile_read_fd's image: the slots stay in it */

/* Invariants 1-3 only (recfile.c): buf[0, len) starts with a header whose
 * sections lie within what it declares; *h is its copy.  0, or -1 with err. */
int gt_recfile_parse_header(const unsigned char *buf, size_t len, const char *source,
                            struct gtr_header *h, char *err, size_t errlen);

/* The parser (recfile.c): validates buf[0, len) into *r as flags say;
 * owned (or NULL) is the malloc'd buf handed over; present marks the
 * image's pages that hold data (NULL: all). */
int gt_recfile_parse_flags(const unsigned char *buf, size_t len, const char *source,
                           struct gt_recfile *r, char *err, size_t errlen, unsigned char *owned,
                           int flags, const unsigned char *present);

#endif
