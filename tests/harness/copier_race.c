/* SPDX-License-Identifier: Apache-2.0 */
/*
 * copier_race.c (copier_race, for tests/harness/copier-trust.sh) — the
 * plugin's copier start (plugin/gpumem/copier_client.c, linked in), many
 * times over, for the symbolic-link and link-flip cases.  Three roles:
 *
 *   copier_race run N [STARTS]
 *       N rounds (or until STARTS copiers started): a fake cuMem allocation (libfakecuda.so, named
 * by GDRTRACE_CUDA_LIB) imported — which starts the copier the plugin would start:
 * GDRTRACE_GPUMEM_COPIER, else the one beside this program's file or in its ../libexec/gdrtrace —
 * then released and the copier stopped.  Prints "rounds N started S refused R" (N: the rounds run),
 * then the first refusal's reason and the first "not starting" WARN, if any.  Exit 0 when every
 * round ended (started or refused), else 1. copier_race flip LINK A B STOP flips the symbolic link
 * LINK between A and B (LINK and LINK.flip swapped by renameat2(RENAME_EXCHANGE): LINK always
 * exists) until the file STOP exists; prints the number of flips. gdrtrace-gpumem-copier --detach
 * (a copy planted as the copier) the spy: appends "ran as uid U" to $GT_SPY_LOG and exits 1, so a
 *       start through it fails after it ran, and the test counts its runs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/dl/gt_cuda.h"
#include "common/log.h"
#include "plugin/gpumem/copier_client.h"

static char first_warn[2048];
static long warns;

static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    (void)flags, (void)file, (void)line;
    if (level != GT_LOG_WARN)
        return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (strstr(msg, "not starting") && !warns++)
        snprintf(first_warn, sizeof(first_warn), "%s", msg);
}

static int spy(void)
{
    const char *log = getenv("GT_SPY_LOG");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "ran as uid %u\n", (unsigned)getuid());
        fclose(f);
    }
    return 1;
}

static int flip(const char *link, const char *a, const char *b, const char *stop)
{
    /* Two links, LINK -> B and LINK.flip -> A, swapped by one
     * renameat2(RENAME_EXCHANGE) a flip: LINK always exists. */
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.flip", link);
    unlink(tmp);
    unlink(link);
    if (symlink(a, tmp) != 0 || symlink(b, link) != 0) {
        fprintf(stderr, "flip %s: %s\n", link, strerror(errno));
        return 1;
    }
    unsigned long n = 0;
    for (;; n++) {
        if (n % 256 == 0 && access(stop, F_OK) == 0)
            break;
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, link, RENAME_EXCHANGE) != 0) {
            fprintf(stderr, "flip %s: %s\n", link, strerror(errno));
            return 1;
        }
    }
    printf("flips %lu\n", n);
    return 0;
}

struct alloc_prop {
    int type, requested_handle_types, location_type, location_id;
};

static int run(long rounds, long max_starts)
{
    const char *lib = getenv("GDRTRACE_CUDA_LIB");
    if (!lib) {
        fprintf(stderr, "FAIL: GDRTRACE_CUDA_LIB must name libfakecuda.so\n");
        return 1;
    }
    void *fh = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    int (*create)(unsigned long long *, size_t, const struct alloc_prop *, unsigned long long);
    int (*reserve)(unsigned long long *, size_t, size_t, unsigned long long, unsigned long long);
    int (*map)(unsigned long long, size_t, size_t, unsigned long long, unsigned long long);
    if (!fh || gt_cu_load() != 0) {
        fprintf(stderr, "FAIL: %s: %s\n", lib, fh ? "gt_cu_load failed" : dlerror());
        return 1;
    }
    *(void **)&create = dlsym(fh, "cuMemCreate");
    *(void **)&reserve = dlsym(fh, "cuMemAddressReserve");
    *(void **)&map = dlsym(fh, "cuMemMap");
    const size_t N = 64 << 10;
    struct alloc_prop prop = {1, 1 /* POSIX_FILE_DESCRIPTOR */, 1, 0};
    unsigned long long h = 0, gpu = 0;
    if (!create || !reserve || !map || create(&h, N, &prop, 0) || reserve(&gpu, N, 0, 0, 0) ||
        map(gpu, N, 0, h, 0)) {
        fprintf(stderr, "FAIL: a fake cuMem allocation through %s\n", lib);
        return 1;
    }
    gt_log_set_logger(logger);
    long started = 0, refused = 0;
    char why[1024], first[1024] = "";
    long i = 0;
    for (; i < rounds && started < max_starts; i++) {
        struct gt_gpumem_creg reg;
        if (gt_gpumem_copier_import((uintptr_t)gpu, N, &reg, why, sizeof(why)) == 0) {
            started++;
            gt_gpumem_copier_release(&reg);
        } else {
            if (!refused++)
                snprintf(first, sizeof(first), "%s", why);
        }
        gt_gpumem_copier_stop();
    }
    printf("rounds %ld started %ld refused %ld\n", i, started, refused);
    if (first[0])
        printf("first refusal: %s\n", first);
    if (warns)
        printf("WARN (%ld): %s\n", warns, first_warn);
    return started + refused == i ? 0 : 1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 2 && !strcmp(argv[1], "--detach"))
        return spy();
    if (argc == 6 && !strcmp(argv[1], "flip"))
        return flip(argv[2], argv[3], argv[4], argv[5]);
    if ((argc == 3 || argc == 4) && !strcmp(argv[1], "run"))
        return run(atol(argv[2]), argc == 4 ? atol(argv[3]) : LONG_MAX);
    fprintf(stderr, "usage: copier_race run N [STARTS] | flip LINK A B STOP\n");
    return 2;
}
