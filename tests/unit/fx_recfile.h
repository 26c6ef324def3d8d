/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fx_recfile.h — a fixture recorder (tests/reader/fixture.h) built in
 * memory and parsed as the reader parses a file, for unit tests of what the
 * reader does with recorders; a refusal fails the test with the parser's
 * reason.  Needs cmocka.h included before.
 */
#ifndef GDRTRACE_TESTS_FX_RECFILE_H
#define GDRTRACE_TESTS_FX_RECFILE_H

#include <stdlib.h>

#include "tests/reader/fixture.h"
#include "tools/lib/recfile.h"

static inline void fx_recfile(const struct fx_opts *o, const char *source, struct gt_recfile *r)
{
    size_t len;
    unsigned char *img = fx_build(o, &len);
    assert_non_null(img);
    char err[GT_ERRLEN] = "";
    if (gt_recfile_parse(img, len, source, r, err, sizeof(err)))
        fail_msg("%s", err);
    free(img);
}

#endif
