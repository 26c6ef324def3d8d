/* SPDX-License-Identifier: Apache-2.0 */
/*
 * esc.h — strings from recorders, archives and file names made safe for a
 * terminal line.  Everything the reader prints as text that it did not
 * write itself (host, job, launcher, transport, reasons, device names, node
 * fingerprint, error texts, file names, and sentences built from them)
 * goes through gt_esc once, where it is printed; JSON output does not (it
 * has its own escaping, tools/render/json.c).
 */
#ifndef GDRTRACE_TOOLS_ESC_H
#define GDRTRACE_TOOLS_ESC_H

/* s with every byte a terminal could act on written as an escape: control
 * characters (C0 and DEL) as \n \r \t \e or \xHH, a backslash as \\, bytes
 * that are not UTF-8 as \xHH, C1 controls and the bidirectional overrides
 * (U+202A..U+202E, U+2066..U+2069) as \u{XXXX}; other UTF-8 is kept.  So an
 * escape sequence or a newline in a recorder can neither move the cursor
 * nor forge a line of our output.
 * Returns s itself when nothing needs escaping, else one of 8 static
 * buffers (valid until 8 more calls; the reader is single-threaded); NULL
 * gives "".  Output longer than 16 KiB is cut, ending in "...". */
const char *gt_esc(const char *s);

#endif /* GDRTRACE_TOOLS_ESC_H */
