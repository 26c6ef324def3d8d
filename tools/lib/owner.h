/* SPDX-License-Identifier: Apache-2.0 */
/*
 * owner.h — a recorder's owner (a uid, -1 unknown) as a user name, for the
 * inputs' messages and the renderers' owner lines alike.
 */
#ifndef GDRTRACE_TOOLS_OWNER_H
#define GDRTRACE_TOOLS_OWNER_H

#include <stddef.h>

/* The user name of uid, or its number, or "-" when unknown, into buf. */
const char *gt_owner_short(long uid, char *buf, size_t n);
/* "name (uid N)" of uid into buf (the name when the system knows it). */
const char *gt_owner_name(long uid, char *buf, size_t n);

#endif
