/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hostp_text.h — host pressure (tools/lib/hostp.h) as text.
 */
#ifndef GDRTRACE_TOOLS_RENDER_HOSTP_TEXT_H
#define GDRTRACE_TOOLS_RENDER_HOSTP_TEXT_H

#include <stdio.h>

#include "tools/lib/hostp.h"

/* The group's lines, each starting with `indent`. */
void gt_hostp_print(FILE *f, const struct gt_hostp *h, const char *indent);

#endif
