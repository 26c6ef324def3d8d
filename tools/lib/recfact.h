/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recfact.h — facts of one recorder that the reader decides in one place,
 * so that no renderer or rule types the recorder's strings again: the
 * registration policy its process ran under, and whether its transport
 * was sock.  Each is a function of the recorder's identity only.
 */
#ifndef GDRTRACE_TOOLS_RECFACT_H
#define GDRTRACE_TOOLS_RECFACT_H

#include "common/settings.h"
#include "tools/lib/recfile.h"

/*! gt_rec_reg_mode() : the registration policy (GDRTRACE_REG) r's process
 *  ran under, an enum gt_reg_mode (common/settings.h, whose names the
 *  plugin records), or -1 when its identity names none (an old or foreign
 *  writer). */
int gt_rec_reg_mode(const struct gt_recfile *r);

/*! gt_rec_sock() : 1 when r's process moved data over the sock transport,
 *  host memory only ("sock", and "sock+gpumem": sock under the GPU-memory
 *  validation layer, gt_recfile_emulated), else 0. */
int gt_rec_sock(const struct gt_recfile *r);

#endif /* GDRTRACE_TOOLS_RECFACT_H */
