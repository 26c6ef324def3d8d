/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kcorr.h — kernel corroboration: the kernel's own list of dma-bufs
 * (debugfs dma_buf/bufinfo) held against the recorders.  GPU memory exported
 * for DMA-BUF shows up with exporter "nv_dmabuf", and the NIC's PCI address
 * is listed among its attached devices when the NIC really mapped it: proof
 * that does not rest on the plugin's word.  Only meaningful while the job
 * runs (registrations are released at exit), on the same host.
 * Path: GDRTRACE_BUFINFO, else /sys/kernel/debug/dma_buf/bufinfo.
 */
#ifndef GDRTRACE_TOOLS_KCORR_H
#define GDRTRACE_TOOLS_KCORR_H

#include <stddef.h>
#include <stdint.h>

#include "tools/lib/model.h"

#define GT_KC_MAX_DEVS 64

struct gt_kcorr {
    int readable; /* 0: errno in err_no, or why says what the path is */
    int err_no;
    char why[64]; /* "" or why the path was refused without reading it */
    char path[256];
    uint64_t objects;    /* every dma-buf */
    uint64_t nv_objects; /* exporter nv_dmabuf */
    uint64_t nv_bytes;
    int ndevs;
    struct {
        char name[64];       /* attached device (PCI address for a NIC) */
        uint64_t nv_objects; /* nv_dmabuf objects it is attached to */
    } devs[GT_KC_MAX_DEVS];
};

/* Reads and parses bufinfo (bounded: at most 64 MiB, lines of any length
 * truncated).  Only a regular file is read (debugfs files are): a FIFO, a
 * device or a socket named by GDRTRACE_BUFINFO is refused without waiting
 * for a writer or reading without end.  Never fails: an unreadable or
 * refused file gives readable = 0. */
const char *gt_kcorr_error(const struct gt_kcorr *k);
void gt_kcorr_read(struct gt_kcorr *k);
/* Parses bufinfo text (for tests and the fuzzer). */
void gt_kcorr_parse(struct gt_kcorr *k, const char *text, size_t len);
/* nv_dmabuf objects attached to a device named like the basename of pci_path. */
uint64_t gt_kcorr_attached(const struct gt_kcorr *k, const char *pci_path);

/* What the kernel shows now of a job's live recorders on this host. */
struct gt_kcorr_job {
    int nlive;                    /* recorders gt_kcorr_live_here() */
    uint64_t dmabuf_regs, deregs; /* their DMA-BUF registrations, deregistrations */
    struct gt_kcorr k;            /* bufinfo, read now */
};
/* 1 when the kernel can show r's buffers now: read from a file (not an
 * archive), judged live, written on this host. */
int gt_kcorr_live_here(const struct gt_recfile *r);
/* Fills v for job j and reads bufinfo; 0 when no recorder is live here
 * (nothing to corroborate, nothing read). */
int gt_kcorr_of_job(const struct gt_job *j, struct gt_kcorr_job *v);

#endif
