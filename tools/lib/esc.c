/* SPDX-License-Identifier: Apache-2.0 */
/*
 * esc.c — see esc.h.
 *
 * Invariant: the output contains no byte below 0x20, no 0x7f, no invalid
 * UTF-8, no C1 control and no bidirectional override, and an escape is
 * never cut in the middle when the output is truncated.
 */
#include "tools/lib/esc.h"

#include <stdio.h>
#include <string.h>

#define SLOTS 8
#define SLOT_SIZE (16 * 1024)

/* Length of the valid UTF-8 sequence at s (2..4), or 0; *cp its code point. */
static int utf8_len(const unsigned char *s, unsigned *cp)
{
    unsigned c = s[0];
    int n;
    unsigned min;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, *cp = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, *cp = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, *cp = c & 0x07, min = 0x10000;
    else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        *cp = (*cp << 6) | (s[i] & 0x3f);
    }
    if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
        return 0;
    return n;
}

static int hostile_cp(unsigned cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* Bytes of s[0..] that print as they are, and the escape for the next one. */
static int needs_escape(const unsigned char *s, int *len, unsigned *cp)
{
    if (*s < 0x80) {
        *len = 1;
        return *s < 0x20 || *s == 0x7f || *s == '\\';
    }
    *len = utf8_len(s, cp);
    if (!*len) {
        *len = 1;
        return 1;
    }
    return hostile_cp(*cp);
}

const char *gt_esc(const char *str)
{
    static char slots[SLOTS][SLOT_SIZE];
    static unsigned next;
    if (!str)
        return "";
    const unsigned char *s = (const unsigned char *)str;
    int len;
    unsigned cp;
    const unsigned char *p = s;
    while (*p && !needs_escape(p, &len, &cp))
        p += len;
    if (!*p)
        return str;
    char *out = slots[next++ % SLOTS];
    size_t o = 0;
    for (p = s; *p;) {
        char e[16];
        int k;
        if (!needs_escape(p, &len, &cp)) {
            memcpy(e, p, (size_t)len);
            k = len;
        } else if (*p < 0x80) {
            const char *named = *p == '\n'   ? "\\n"
                                : *p == '\r' ? "\\r"
                                : *p == '\t' ? "\\t"
                                : *p == 0x1b ? "\\e"
                                : *p == '\\' ? "\\\\"
                                             : NULL;
            k = named ? snprintf(e, sizeof(e), "%s", named) : snprintf(e, sizeof(e), "\\x%02x", *p);
        } else if (len > 1) {
            k = snprintf(e, sizeof(e), "\\u{%04x}", cp);
        } else {
            k = snprintf(e, sizeof(e), "\\x%02x", *p);
        }
        if (o + (size_t)k + 4 > SLOT_SIZE) {
            memcpy(out + o, "...", 4);
            return out;
        }
        memcpy(out + o, e, (size_t)k);
        o += (size_t)k;
        p += len;
    }
    out[o] = '\0';
    return out;
}
