/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay.c — `fuzz_replay`: runs every file of the checked-in fuzz corpus
 * (tests/fuzz/corpus, or the folders/files given) through the fuzz target's
 * entry point as an ordinary test, so the corpus guards against regressions
 * in every build (also SAN=asan and valgrind) without clang's libFuzzer.
 * Passes when every input is processed; a crash or sanitizer report fails.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/recfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *p)
{
    unsigned char *b;
    size_t n;
    char err[GT_ERRLEN];
    if (gt_read_file(p, 64u << 20, &b, &n, err, sizeof(err))) {
        printf("cannot read %s\n", err);
        return -1;
    }
    LLVMFuzzerTestOneInput(b, n);
    free(b);
    return 0;
}

static int run_path(const char *p, int *count)
{
    struct stat st;
    if (stat(p, &st) != 0) {
        printf("%s: missing\n", p);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return run_file(p);
    }
    struct dirent **ents;
    int n = scandir(p, &ents, NULL, alphasort), rc = 0;
    for (int i = 0; i < n; i++) {
        if (ents[i]->d_name[0] != '.') {
            char q[4096];
            snprintf(q, sizeof(q), "%s/%s", p, ents[i]->d_name);
            rc |= run_path(q, count);
        }
        free(ents[i]);
    }
    free(ents);
    return rc;
}

int main(int argc, char **argv)
{
    int count = 0, rc = 0;
    if (argc < 2)
        rc = run_path("tests/fuzz/corpus", &count);
    for (int i = 1; i < argc; i++)
        rc |= run_path(argv[i], &count);
    if (rc)
        return 1;
    if (count == 0) {
        printf("no corpus inputs found\n");
        return 1;
    }
    printf("replayed %d corpus input(s) through the reader without a fault\n", count);
    return 0;
}
