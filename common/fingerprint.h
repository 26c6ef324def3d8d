/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fingerprint.h — the node fingerprint: identity facts that decide whether two
 * runs or two nodes are comparable (kernel, NVIDIA module flavour, peermem,
 * CUDA driver, RDMA devices, GPUs).  Written into every recorder header and
 * printed by `gdrtrace doctor --json`; `gdrtrace diff` and
 * `doctor --compare` compare it field by field.
 *
 * All paths are read under a root prefix: GDRTRACE_SYSFS_ROOT when set (test
 * fixtures), "" otherwise.  Collection never fails: what cannot be read is
 * left empty/unknown.  Not for the hot path (reads files).
 */
#ifndef GDRTRACE_FINGERPRINT_H
#define GDRTRACE_FINGERPRINT_H

#include "gdrtrace/recorder_format.h"

/* Fills *fp (zeroed first).  root: NULL = use GDRTRACE_SYSFS_ROOT or "". */
void gt_fingerprint_collect(struct gtr_fingerprint *fp, const char *root);

/* Field-by-field comparison.  Calls cb once per differing field with its name
 * and both values as text; returns the number of differences.  Fields that
 * differ on every node by nature (boot_id) are not compared. */
typedef void (*gt_fingerprint_diff_cb)(const char *field, const char *a, const char *b, void *arg);
int gt_fingerprint_diff(const struct gtr_fingerprint *a, const struct gtr_fingerprint *b,
                        gt_fingerprint_diff_cb cb, void *arg);

/* Name of an enum gtr_nvidia_flavour value: "open", "proprietary", "absent", "unknown". */
const char *gt_fingerprint_flavour_name(int flavour);

#endif
