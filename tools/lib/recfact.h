/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recfact.h — facts of one recorder that the reader decides in one place,
 * so that no renderer or rule types the recorder's strings again: the
 * registration policy its process ran under, whether it ran emulated (the
 * GPU-memory validation mode), and whether its transport was sock.
 *
 * The policy and emulated are decided once, when the recorder is parsed
 * (gt_rec_decide_facts, called by tools/lib/recfile.c), into r->reg_mode and
 * r->emulated; everything after reads those two fields.  A format 1.8
 * writer records both as codes (identity.reg_mode, emulated, facts); for
 * older files the string rules the reader always had decide.
 */
#ifndef GDRTRACE_TOOLS_RECFACT_H
#define GDRTRACE_TOOLS_RECFACT_H

#include "common/codes.h"
#include "tools/lib/recfile.h"

/*! gt_rec_decide_facts() : sets r->reg_mode and r->emulated from r's
 *  identity and settings section (both parsed).  Called once per parse. */
void gt_rec_decide_facts(struct gt_recfile *r);

/*! gt_rec_reg_name() : the policy's name for output: gt_reg_mode_name() of
 *  r->reg_mode, or the identity's policy_reg as written when it names no
 *  known mode (1.0/1.1 writers stored an invalid GDRTRACE_REG verbatim). */
const char *gt_rec_reg_name(const struct gt_recfile *r);

/*! gt_rec_sock() : 1 when r's process moved data over the sock transport,
 *  host memory only ("sock", and "sock+gpumem": sock under the GPU-memory
 *  validation layer, r->emulated), else 0. */
int gt_rec_sock(const struct gt_recfile *r);

#endif /* GDRTRACE_TOOLS_RECFACT_H */
