/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rec_check.h — a minimal validating reader of recorder files, for the
 * recorder's own tests and benchmarks (the user-facing reader is tools/).
 *
 * It checks every invariant of recorder_format.h that a reader must check
 * before trusting an offset, and refuses a file with a one-line reason
 * (wrong magic, other endianness, unknown major version, word size,
 * truncated, section out of bounds or overlapping, missing section).
 * Structures of a newer minor version are accepted when at least as large as
 * ours (the extra tail is ignored).
 */
#ifndef GDRTRACE_SHIM_REC_CHECK_H
#define GDRTRACE_SHIM_REC_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "gdrtrace/recorder_format.h"

struct gt_rec_view {
    const uint8_t *base;
    size_t len;
    const struct gtr_header *hdr;
    const struct gtr_identity *id;
    const uint8_t *devs;
    uint32_t dev_size, ndevs;
    const uint8_t *comms;
    uint32_t comm_size, ncomms;
    const struct gtr_ring_header *ring;
    const struct gtr_event *events;
    uint64_t capacity;
};

/* Validates buf[0, len) and fills *v (pointers into buf).  Returns 0, or -1
 * with the reason in err. */
int gt_rec_check(const void *buf, size_t len, struct gt_rec_view *v, char *err, size_t errlen);

static inline const struct gtr_comm *gt_rec_view_comm(const struct gt_rec_view *v, uint32_t i)
{
    return (const struct gtr_comm *)(v->comms + (size_t)i * v->comm_size);
}

static inline const struct gtr_device *gt_rec_view_dev(const struct gt_rec_view *v, uint32_t i)
{
    return (const struct gtr_device *)(v->devs + (size_t)i * v->dev_size);
}

/* Calls cb for every intact record in the ring's window, oldest first;
 * returns the number delivered.  *first = the window's first position. */
typedef void (*gt_rec_event_cb)(const struct gtr_event *e, uint64_t pos, void *arg);
uint64_t gt_rec_view_events(const struct gt_rec_view *v, gt_rec_event_cb cb, void *arg,
                            uint64_t *first);

/* Reads a whole file into a malloc'd buffer (*buf, *len).  0 or errno. */
int gt_rec_slurp(const char *path, uint8_t **buf, size_t *len);

#endif
