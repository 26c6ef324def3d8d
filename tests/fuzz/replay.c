/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay.c — the replay driver of every fuzz target (`fuzz_replay`,
 * `fuzz_oob_replay`): runs every file of the target's checked-in corpus
 * (gt_fuzz_corpus, which the target defines, or the folders/files given)
 * through its entry point as an ordinary test, so the corpus guards against
 * regressions in every build (also SAN=asan and valgrind) without clang's
 * libFuzzer.  Reads files with stdio only, so any layer's target links it.
 * Passes when every input is processed; a crash or sanitizer report fails.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* The target's default corpus folder and what it exercises, for the summary line. */
extern const char gt_fuzz_corpus[], gt_fuzz_what[];

static int run_file(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (!f) {
        printf("cannot read %s\n", p);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    size_t k;
    while (b && (k = fread(b + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap && cap < (64u << 20)) {
            unsigned char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        } else if (n == cap)
            break; /* the first 64 MiB are plenty for any target */
    }
    fclose(f);
    if (!b) {
        printf("%s: out of memory\n", p);
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
        rc = run_path(gt_fuzz_corpus, &count);
    for (int i = 1; i < argc; i++)
        rc |= run_path(argv[i], &count);
    if (rc)
        return 1;
    if (count == 0) {
        printf("no corpus inputs found\n");
        return 1;
    }
    printf("replayed %d corpus input(s) through %s without a fault\n", count, gt_fuzz_what);
    return 0;
}
