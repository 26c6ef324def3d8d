/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scratch_dir.h — a scratch folder for a unit test program: made by
 * scratch_make() (or scratch_setup as a cmocka group set-up), removed with
 * all it holds by scratch_teardown; scratch_at(name) is a path inside it,
 * with four results alive at once (a call may take two or three paths);
 * scratch_put() writes a text file.  Each including test gets its own g_dir
 * (static).
 */
#ifndef GDRTRACE_TESTS_SCRATCH_DIR_H
#define GDRTRACE_TESTS_SCRATCH_DIR_H

#include <stdio.h>
#include <stdlib.h>

static char g_dir[64];

static inline int scratch_make(void)
{
    snprintf(g_dir, sizeof(g_dir), "/tmp/gt_unit_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static inline int scratch_setup(void **state)
{
    (void)state;
    return scratch_make();
}

static inline int scratch_teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static inline const char *scratch_at(const char *name)
{
    static char p[4][160];
    static int k;
    char *b = p[k++ % 4];
    snprintf(b, sizeof(p[0]), "%s/%s", g_dir, name);
    return b;
}

/* Needs cmocka.h included before (assert_non_null). */
static inline void scratch_put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#endif
