/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scale.c — `reader_scale`: inputs for the reader's memory and scale tests
 * (test-bounded.sh, bench-scale.sh), and a way to measure a command.
 *
 *   reader_scale gen DIR N [small] [natural] [archive] [peermem=R,..] [fallback=R,..]
 *                    [slow=R,..] [unknown=R,..]
 *                                 N recorders of the default size (64 comm
 *                                 slots, 16,384 ring slots) of one job, 8
 *                                 ranks a node, written sparse: only the
 *                                 4 KiB blocks that hold data are written, the
 *                                 rest are holes, so 8,192 of them take
 *                                 seconds and ~0.3 GB of disk, not 22 GB
 *                                 (small: 2 comm slots, 64 ring slots;
 *                                 natural: hosts node0..nodeN, not
 *                                 node-0000; the ranks listed register by
 *                                 peermem, fall back, take 10x the latency,
 *                                 or have no rank and no NCCL version;
 *                                 archive: DIR is the path of one dump
 *                                 archive holding the N recorders as
 *                                 members, ~1.5 KB each on disk)
 *   reader_scale bomb FILE BYTES [zeros|container|member|recorder|comms]
 *                                 a small zstd file that expands to BYTES:
 *                                 zeros (not an archive); container (a valid
 *                                 container whose one member declares BYTES
 *                                 and holds a few); member (a valid container
 *                                 whose member is BYTES of zeros); recorder
 *                                 (the same, the member starting with a
 *                                 recorder's magic); comms (a member that is a
 *                                 valid recorder whose comms section declares
 *                                 BYTES slots, all but one zeros); ring (a
 *                                 member that is a valid recorder whose ring
 *                                 has BYTES slots, a power of two, its head
 *                                 past all of them, all but 60 zeros);
 *                                 comms-file, ring-file (the same recorders
 *                                 as sparse files, not archives)
 *   reader_scale probe            prints "counted" or "zero-page": whether
 *                                 this kernel counts a read fault of an
 *                                 untouched anonymous page in the resident
 *                                 set, and the peak RSS of reading 256 MiB
 *   reader_scale hold DIR N [gen options] -- CMD...
 *                                 gen DIR N as live recorders (state LIVE, each
 *                                 held open by the process its header names:
 *                                 as many writers as RLIMIT_NOFILE's hard limit
 *                                 needs), then measure CMD twice while they are
 *                                 held (two lines)
 *   reader_scale measure CMD...   runs CMD; prints "wall_s peak_rss_kib exit cpu_s"
 *                                 from wait4()'s rusage of that child
 *   reader_scale                  self-test: gen writes holes and the files
 *                                 parse with the expected verdict; folding
 *                                 (verdict) gives the merged view of the
 *                                 whole recorders; the digests are right
 *
 * Every generated recorder is built by fixture.c (the format written from
 * recorder_format.h, not through shim/), then patched per rank: identity
 * (host, rank, pid) and a second communicator local to the node.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "common/hist.h"
#include "tools/lib/recfile.h"
#include "tests/reader/fixture.h"
#include "tools/lib/archive.h"
#include "tools/lib/inputs.h"
#include "tools/lib/model.h"
#include "tools/lib/load.h"

#define BLK 4096

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int write_all(int fd, const void *p, size_t n, off_t off)
{
    const unsigned char *b = p;
    while (n) {
        ssize_t k = pwrite(fd, b, n, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
        off += k;
    }
    return 0;
}

/* Writes img sparse: the non-zero blocks listed in nz, then the length. */
static int write_sparse(const char *path, const unsigned char *img, size_t len, const size_t *nz,
                        size_t nnz, int hold)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < nnz && !rc; i++) {
        size_t off = nz[i] * BLK, n = len - off < BLK ? len - off : BLK;
        rc = write_all(fd, img + off, n, (off_t)off);
    }
    if (!rc && ftruncate(fd, (off_t)len))
        rc = -1;
    if (hold && !rc) /* a live writer's: open until this process exits */
        return 0;
    if (close(fd))
        rc = -1;
    return rc;
}

#define GEN_SMALL 1
#define GEN_REVERSE 2 /* pids fall as ranks rise: file names sort against rank order */
#define GEN_NATURAL 4 /* hosts node0, node1, ... node10: only a natural sort orders them */
#define GEN_ARCHIVE 8 /* one dump archive (zstd) at DIR's path instead of a folder of files */
#define GEN_LIVE 16   /* state LIVE, this process the writer, every file held open (hold) */

/* What some ranks show instead of the job's DMA-BUF (summary tests: the
 * processes that differ from their communicator's majority). */
enum { V_BASE, V_PEERMEM, V_FALLBACK, V_SLOW, V_COUNT };

struct variant {
    unsigned char *img;
    size_t len, *nz, nnz;
    struct gtr_identity id; /* as built: each rank's is patched from it */
};

#define MAX_ODD 64
struct gen_opts {
    int flags;
    long odd[V_COUNT][MAX_ODD]; /* ranks of each variant (V_BASE unused) */
    int nodd[V_COUNT];
    long unknown[MAX_ODD]; /* ranks written as the writer does without a launcher */
    int nunknown;
    long r0, r1; /* hold: only ranks [r0, r1) (r1 0: all) */
};

static int listed(const long *v, int n, long r)
{
    for (int i = 0; i < n; i++)
        if (v[i] == r)
            return 1;
    return 0;
}

/* The image of a variant: the fixture's recorder, slot 1 a copy of slot 0
 * (then given the node's commId per rank), and its non-zero blocks. */
static int build_variant(struct variant *v, int kind, int small, int lat_pct, long n, int live)
{
    struct fx_opts o = {.kind = kind,
                        .state = live ? GTR_STATE_LIVE : 0,
                        .start_ticks = live ? -1 : 0,
                        .world = (int)n,
                        .ring_cap = GTR_DEFAULT_RING_EVENTS,
                        .ncomm = GTR_DEFAULT_COMMS,
                        .events = 300,
                        .lat_pct = lat_pct};
    if (small) { /* the smallest recorder with two communicators */
        o.ring_cap = 64;
        o.ncomm = 2;
        o.events = 60;
    }
    v->img = fx_build(&o, &v->len);
    if (!v->img)
        return -1;
    memcpy(&v->id, v->img + fx_off_identity(), sizeof(v->id));
    size_t c0 = fx_off_comms(), c1 = c0 + sizeof(struct gtr_comm);
    if (lat_pct != 100) { /* the fixture scales reg and dereg; sends too, as a slow rank's */
        struct gtr_comm c;
        memcpy(&c, v->img + c0, sizeof(c));
        gt_hist_init(&c.hist[GTR_OP_SEND]);
        for (int i = 0; i < 1000; i++)
            gt_hist_add_owned(&c.hist[GTR_OP_SEND],
                              (uint64_t)(i < 500 ? 8000 : 12000) * (uint64_t)lat_pct / 100);
        memcpy(v->img + c0, &c, sizeof(c));
    }
    /* slot 1: a communicator of the node's 8 ranks (its own commId) */
    memcpy(v->img + c1, v->img + c0, sizeof(struct gtr_comm));
    size_t nblk = (v->len + BLK - 1) / BLK;
    v->nz = malloc(nblk * sizeof(*v->nz));
    if (!v->nz)
        return -1;
    static const unsigned char zero[BLK];
    v->nnz = 0;
    for (size_t b = 0; b < nblk; b++) {
        size_t n2 = v->len - b * BLK < BLK ? v->len - b * BLK : BLK;
        if (memcmp(v->img + b * BLK, zero, n2))
            v->nz[v->nnz++] = b;
    }
    return 0;
}

static int gen(const char *dir, long n, const struct gen_opts *g)
{
    int flags = g->flags;
    struct variant var[V_COUNT] = {{0}};
    static const int kinds[V_COUNT] = {FX_DMABUF, FX_PEERMEM, FX_FALLBACK, FX_DMABUF};
    static const int lat[V_COUNT] = {100, 100, 100, 1000};
    struct gt_archive_writer *w = NULL;
    unsigned char *present[V_COUNT] = {0};
    char err[GT_ERRLEN];
    int rc = -1;
    for (int k = 0; k < V_COUNT; k++)
        if ((k == V_BASE || g->nodd[k]) &&
            build_variant(&var[k], kinds[k], flags & GEN_SMALL, lat[k], n, flags & GEN_LIVE))
            goto out;
    size_t c1 = fx_off_comms() + sizeof(struct gtr_comm);
    /* archive: members are streamed through zstd as they are added; the
     * holes of the sparse image (present's clear bits) cost nothing to read */
    if (flags & GEN_ARCHIVE) {
        w = gt_archive_create(dir, 1, 1, err, sizeof(err));
        if (!w) {
            fprintf(stderr, "reader_scale: %s\n", err);
            goto out;
        }
        for (int k = 0; k < V_COUNT; k++) {
            if (!var[k].img)
                continue;
            present[k] = calloc((var[k].len / BLK + 8) / 8 + 1, 1);
            if (!present[k])
                goto out;
            for (size_t i = 0; i < var[k].nnz; i++)
                present[k][var[k].nz[i] / 8] |= (unsigned char)(1u << (var[k].nz[i] % 8));
        }
    }
    for (long r = g->r0; r < (g->r1 ? g->r1 : n); r++) {
        int k = V_BASE;
        for (int q = 1; q < V_COUNT; q++)
            if (listed(g->odd[q], g->nodd[q], r))
                k = q;
        unsigned char *img = var[k].img;
        struct gtr_identity id = var[k].id;
        if (flags & GEN_NATURAL)
            snprintf(id.host, sizeof(id.host), "node%ld", r / 8);
        else
            snprintf(id.host, sizeof(id.host), "node-%04ld", r / 8);
        id.rank = (int32_t)r;
        id.local_rank = (int32_t)(r % 8);
        id.pid = (int32_t)((flags & GEN_REVERSE) ? 200000 - r : 100000 + r);
        if (flags & GEN_LIVE) /* this process writes them all: the liveness proof */
            id.pid = (int32_t)getpid();
        if (listed(g->unknown, g->nunknown, r)) { /* no launcher, NCCL not visible */
            id.rank = id.local_rank = id.world_size = -1;
            id.launcher[0] = 0;
            id.nccl_version = -1;
        }
        memcpy(img + fx_off_identity(), &id, sizeof(id));
        struct gtr_comm c;
        memcpy(&c, img + c1, sizeof(c));
        c.comm_id = 0x4e0de00000000000ull + (uint64_t)(r / 8);
        memcpy(img + c1, &c, sizeof(c));
        char path[4096];
        if (w) {
            snprintf(path, sizeof(path), "gdrtrace.scale.%s.%d.rec", id.host, id.pid);
            if (gt_archive_add(w, path, GT_LIVE_EXITED, img, var[k].len, present[k], err,
                               sizeof(err))) {
                fprintf(stderr, "reader_scale: %s\n", err);
                goto out;
            }
            continue;
        }
        snprintf(path, sizeof(path), "%s/gdrtrace.scale.%s.%d.rec", dir, id.host,
                 (flags & GEN_LIVE) ? (int)(100000 + r) : id.pid);
        if (write_sparse(path, img, var[k].len, var[k].nz, var[k].nnz, flags & GEN_LIVE)) {
            fprintf(stderr, "reader_scale: %s: %s\n", path, strerror(errno));
            goto out;
        }
    }
    if (w) {
        uint64_t in_b, out_b;
        struct gt_archive_writer *done = w;
        w = NULL;
        if (gt_archive_finish(done, &in_b, &out_b, err, sizeof(err))) {
            fprintf(stderr, "reader_scale: %s\n", err);
            goto out;
        }
    }
    rc = 0;
out:
    if (w)
        gt_archive_abort(w);
    for (int k = 0; k < V_COUNT; k++) {
        free(var[k].nz);
        free(var[k].img);
        free(present[k]);
    }
    return rc;
}

/* gen's options after DIR N: small, natural, peermem=R,R.. fallback=.. slow=..
 * unknown=..; 0, or -1 with a message. */
static int gen_args(int argc, char **argv, struct gen_opts *g)
{
    static const char *const names[V_COUNT] = {NULL, "peermem=", "fallback=", "slow="};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "small")) {
            g->flags |= GEN_SMALL;
            continue;
        }
        if (!strcmp(a, "natural")) {
            g->flags |= GEN_NATURAL;
            continue;
        }
        if (!strcmp(a, "archive")) {
            g->flags |= GEN_ARCHIVE;
            continue;
        }
        if (!strcmp(a, "live")) {
            g->flags |= GEN_LIVE;
            continue;
        }
        long *list = NULL;
        int *cnt = NULL;
        for (int k = 1; k < V_COUNT; k++)
            if (!strncmp(a, names[k], strlen(names[k]))) {
                list = g->odd[k];
                cnt = &g->nodd[k];
                a += strlen(names[k]);
            }
        if (!list && !strncmp(a, "unknown=", 8)) {
            list = g->unknown;
            cnt = &g->nunknown;
            a += 8;
        }
        if (!list) {
            fprintf(stderr, "reader_scale gen: unknown option '%s'\n", argv[i]);
            return -1;
        }
        while (*a) {
            char *end;
            long r = strtol(a, &end, 10);
            if (end == a || r < 0 || *cnt == MAX_ODD || (*end && *end != ',')) {
                fprintf(stderr, "reader_scale gen: '%s': ranks are R,R,... (at most %d)\n", argv[i],
                        MAX_ODD);
                return -1;
            }
            list[(*cnt)++] = r;
            a = *end ? end + 1 : end;
        }
    }
    return 0;
}

/* Appends one zstd frame of src to f. */
static int frame(FILE *f, const void *src, size_t n)
{
    size_t cap = ZSTD_compressBound(n);
    void *dst = malloc(cap);
    if (!dst)
        return -1;
    size_t k = ZSTD_compress(dst, cap, src, n, 1);
    int rc = ZSTD_isError(k) || fwrite(dst, 1, k, f) != k ? -1 : 0;
    free(dst);
    return rc;
}

static void le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* A bomb: frames concatenated (a valid zstd stream), the zeros as one 16 MiB
 * frame repeated, so writing a 2 GiB bomb takes milliseconds. */
/* A valid recorder that declares much and holds little: `n` comm slots
 * (comms: all but the first zeros) or a ring of `n` slots whose head says
 * every one was written (ring: all but 60 zeros, read as never committed). */
static unsigned char *sparse_recorder(const char *kind, unsigned long long n, size_t *len)
{
    int ring = !strncmp(kind, "ring", 4);
    struct fx_opts o = {
        .kind = FX_DMABUF, .ring_cap = ring ? n : 64, .ncomm = ring ? 4 : (int)n, .events = 60};
    unsigned char *rec = fx_build(&o, len);
    if (rec && ring) {
        struct gtr_header h;
        memcpy(&h, rec, sizeof(h));
        for (unsigned i = 0; i < h.section_count; i++)
            if (h.sections[i].id == GTR_SEC_RING) {
                uint64_t head = n;
                memcpy(rec + h.sections[i].offset + offsetof(struct gtr_ring_header, head), &head,
                       sizeof(head));
            }
    }
    return rec;
}

/* The same as a sparse file: only its non-zero 4 KiB pages are written. */
static int sparse_file(const char *path, const char *kind, unsigned long long n)
{
    size_t len;
    unsigned char *rec = sparse_recorder(kind, n, &len);
    int fd = rec ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
    int rc = fd < 0 ? -1 : 0;
    static const unsigned char z[4096];
    for (size_t at = 0; !rc && at < len; at += sizeof(z)) {
        size_t k = len - at < sizeof(z) ? len - at : sizeof(z);
        if (memcmp(rec + at, z, k) && pwrite(fd, rec + at, k, (off_t)at) != (ssize_t)k)
            rc = -1;
    }
    if (!rc && ftruncate(fd, (off_t)len))
        rc = -1;
    if (fd >= 0 && close(fd))
        rc = -1;
    free(rec);
    return rc;
}

static int bomb(const char *path, unsigned long long bytes, const char *kind)
{
    if (!strcmp(kind, "comms-file") || !strcmp(kind, "ring-file"))
        return sparse_file(path, kind, bytes);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int rc = 0;
    unsigned long long zeros = bytes;
    unsigned char *rec = NULL;
    size_t reclen = 0;
    if (!strcmp(kind, "comms") || !strcmp(kind, "ring")) {
        rec = sparse_recorder(kind, bytes, &reclen);
        if (!rec) {
            fclose(f);
            return -1;
        }
        bytes = reclen;
    }
    if (strcmp(kind, "zeros")) {
        static const char name[] = "gdrtrace.bomb.node.1.rec";
        unsigned char h[16 + 24 + sizeof(name) - 1];
        memcpy(h, GT_ARC_MAGIC, 8);
        le32(h + 8, 1);
        le32(h + 12, 0);
        le32(h + 16, GT_ARC_MEMBER);
        le32(h + 20, GT_LIVE_EXITED);
        le32(h + 24, sizeof(name) - 1);
        le32(h + 28, 0);
        le32(h + 32, (uint32_t)bytes);
        le32(h + 36, (uint32_t)(bytes >> 32));
        memcpy(h + 40, name, sizeof(name) - 1);
        rc = frame(f, h, sizeof(h));
        zeros = !strcmp(kind, "container") ? 4096 : bytes;
        if (!rc && !strcmp(kind, "recorder")) { /* the member starts like a recorder */
            rc = frame(f, GTR_MAGIC, GTR_MAGIC_LEN);
            zeros -= GTR_MAGIC_LEN;
        }
    }
    size_t chunk = (size_t)16 << 20;
    unsigned char *z = calloc(1, chunk);
    if (!z)
        rc = -1;
    size_t big = 0;
    unsigned char *bigf = NULL;
    if (!rc && zeros >= chunk) {
        bigf = malloc(ZSTD_compressBound(chunk));
        big = bigf ? ZSTD_compress(bigf, ZSTD_compressBound(chunk), z, chunk, 1) : 0;
        if (!bigf || ZSTD_isError(big))
            rc = -1;
    }
    for (size_t at = 0; rec && !rc && at < reclen; at += chunk) { /* zero chunks: one frame */
        size_t n = reclen - at < chunk ? reclen - at : chunk;
        if (n == chunk && !memcmp(rec + at, z, n))
            rc = fwrite(bigf, 1, big, f) != big ? -1 : 0;
        else
            rc = frame(f, rec + at, n);
    }
    if (rec)
        zeros = 0;
    for (; !rc && zeros >= chunk; zeros -= chunk)
        rc = fwrite(bigf, 1, big, f) != big ? -1 : 0;
    if (!rc && zeros)
        rc = frame(f, z, (size_t)zeros);
    if (!rc && strcmp(kind, "zeros") && strcmp(kind, "container")) {
        unsigned char e[8];
        le32(e, GT_ARC_END);
        le32(e + 4, 1);
        rc = frame(f, e, sizeof(e));
    }
    free(bigf);
    free(z);
    free(rec);
    if (fclose(f))
        rc = -1;
    return rc;
}

static int measure(char **argv)
{
    double t0 = now();
    pid_t p = fork();
    if (p < 0)
        return 1;
    if (p == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(p, &st, 0, &ru) != p)
        return 1;
    /* CPU time beside wall time: on a shared machine other jobs stretch
     * the wall time of a short run more than of a long one, so a ratio of
     * two runs' CPU times shows how the work grows more faithfully. */
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    printf("%.3f %ld %d %.3f\n", now() - t0, ru.ru_maxrss,
           WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), cpu);
    return 0;
}

/* What this kernel does on a read fault of an untouched private anonymous
 * page: map the shared zero page (not in the resident set) or give the
 * process a page of its own (counted).  The reader's bounds must hold on
 * both: test-bounded.sh says which one it ran on.  Prints "counted" or
 * "zero-page" and the resident growth for reading 256 MiB. */
static int probe(void)
{
    size_t len = (size_t)256 << 20;
    pid_t p = fork();
    if (p < 0)
        return 1;
    if (p == 0) {
        unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            _exit(2);
        volatile unsigned sum = 0;
        for (size_t i = 0; i < len; i += 4096)
            sum += m[i];
        _exit(sum ? 3 : 0);
    }
    int st;
    struct rusage ru;
    if (wait4(p, &st, 0, &ru) != p || !WIFEXITED(st) || WEXITSTATUS(st))
        return 1;
    /* the child's own text and libraries are a few MiB; half the mapping
     * resident means its reads were given pages */
    printf("%s %ld\n", ru.ru_maxrss > (long)(len >> 10) / 2 ? "counted" : "zero-page",
           ru.ru_maxrss);
    return 0;
}

/* Folding each recorder as it is read and releasing it (verdict) gives the
 * merged view of building from the whole recorders, and the per-process
 * digests hold what the recorders said. */
static int fold_check(char *dir)
{
    int fails = 0;
    struct gt_inputs a = {.quiet = 1}, b = {.quiet = 1};
    struct gt_job ja, jb;
    int ra = gt_load_job(&dir, 1, &a, &ja);
    b.fold = &jb;
    int rb = gt_load_job(&dir, 1, &b, &jb);
    int same = ra == 0 && rb == 0 && ja.nrec == jb.nrec && ja.ncomm == jb.ncomm &&
               ja.nnodes == jb.nnodes && ja.njobs == jb.njobs && ja.nhosts == jb.nhosts &&
               ja.overall.code == jb.overall.code && !strcmp(ja.overall.why, jb.overall.why);
    for (size_t i = 0; same && i < ja.ncomm; i++) {
        const struct gt_ccomm *x = &ja.comms[i], *y = &jb.comms[i];
        same = !strcmp(x->label, y->label) && x->nprocs == y->nprocs && x->nhosts == y->nhosts &&
               x->nmembers == y->nmembers && !memcmp(x->sum, y->sum, sizeof(*x->sum)) &&
               x->v.code == y->v.code && !strcmp(x->v.why, y->v.why);
    }
    for (size_t i = 0; same && i < ja.nnodes; i++)
        same = !memcmp(&ja.nodes[i], &jb.nodes[i], sizeof(ja.nodes[i]));
    for (size_t i = 0; same && i < ja.nrec; i++)
        same = !strcmp(a.recs[i].source, b.recs[i].source) && b.recs[i].ncomm == 0 &&
               !b.recs[i].ring_slots;
    printf("%s folding and releasing each recorder gives the view of the whole recorders "
           "(%zu communicators, %zu nodes)\n",
           same ? "ok  " : "FAIL", jb.ncomm, jb.nnodes);
    fails += !same;
    /* digests: 16 processes x (world + node communicator) */
    struct fx_opts o = {.kind = FX_DMABUF};
    int dg = jb.nranks == 2 * jb.nrec;
    for (size_t i = 0; dg && i < jb.nranks; i++) {
        const struct gt_rank_comm *d = &jb.ranks[i];
        uint64_t did = 0;
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            did += d->did[m];
        int node = atoi(b.recs[d->rec].id.host + 5);
        dg = did == fx_expected_regs(&o) && d->p50_ns[GTR_OP_SEND] > 0 &&
             d->p99_ns[GTR_OP_SEND] >= d->p50_ns[GTR_OP_SEND] && d->verdict == GT_V_DIRECT_DMABUF &&
             d->comm_id ==
                 (d->slot == 0 ? 0x1234abcd5678ef00ull : 0x4e0de00000000000ull + (uint64_t)node) &&
             (i == 0 || d->rec > jb.ranks[i - 1].rec ||
              (d->rec == jb.ranks[i - 1].rec && d->slot > jb.ranks[i - 1].slot));
    }
    printf("%s per-process digests: %zu (commId, registrations, send p50/p99, verdict)\n",
           dg ? "ok  " : "FAIL", jb.nranks);
    fails += !dg;
    gt_job_free(&ja);
    gt_job_free(&jb);
    gt_inputs_free(&a);
    gt_inputs_free(&b);
    return fails;
}

/* gt_natcmp: digits by value, a total order. */
static int natcmp_check(void)
{
    static const char *const asc[] = {
        "",       "a",     "a1",     "a02",    "a2",
        "a010",   "a10",   "a10b",   "a11",    "b",
        "node-1", "node2", "node10", "node10", "z99999999999999999999"};
    int ok = 1;
    size_t n = sizeof(asc) / sizeof(asc[0]);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n; k++) {
            int c = gt_natcmp(asc[i], asc[k]),
                want = strcmp(asc[i], asc[k]) ? (i > k) - (i < k) : 0;
            if ((c > 0) - (c < 0) != want) {
                printf("FAIL gt_natcmp(\"%s\", \"%s\") = %d, want %d\n", asc[i], asc[k], c, want);
                ok = 0;
            }
        }
    ok &= gt_natcmp("node2", "node10") < 0 && gt_natcmp("node10", "node9") > 0 &&
          gt_natcmp("node-1", "node10") < 0 && gt_natcmp("a02", "a2") < 0 &&
          gt_natcmp("a2", "a02") > 0 && gt_natcmp("x", "x") == 0;
    printf("%s gt_natcmp: node2 < node10, a02 < a2 < a10 (equal values ordered by bytes)\n",
           ok ? "ok  " : "FAIL");
    return !ok;
}

/* gt_comm_norm / gt_rank_differs on digests made by hand: which p50s are
 * slow outliers, and the verdict majority. */
static int norm_case(const char *what, const uint64_t *p50, const int *verdict, size_t n,
                     unsigned want_slow_mask)
{
    struct gt_rank_comm d[32];
    size_t ix[32];
    struct gt_ccomm c = {.rix = 0, .nrix = n};
    struct gt_job j = {.ranks = d, .nranks = n, .rank_ix = ix, .comms = &c, .ncomm = 1};
    memset(d, 0, sizeof(d));
    for (size_t i = 0; i < n; i++) {
        ix[i] = i;
        d[i].p50_ns[GTR_OP_SEND] = p50[i];
        d[i].verdict = verdict ? verdict[i] : GT_V_DIRECT_DMABUF;
    }
    struct gt_comm_norm nm;
    unsigned got = 0;
    if (gt_comm_norm(&j, 0, &nm))
        return 1;
    for (size_t i = 0; i < n; i++)
        if (gt_rank_differs(&nm, &d[i], NULL))
            got |= 1u << i;
    printf("%s %s: differing ranks 0x%x (want 0x%x; median %llu, MAD %llu, majority %s)\n",
           got == want_slow_mask ? "ok  " : "FAIL", what, got, want_slow_mask,
           (unsigned long long)nm.median[GTR_OP_SEND], (unsigned long long)nm.mad[GTR_OP_SEND],
           gt_verdict_name(nm.majority));
    return got != want_slow_mask;
}

static int norm_check(void)
{
    int fails = 0;
    const uint64_t alike[8] = {8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000};
    const uint64_t one_slow[8] = {8000, 8000, 8000, 20000, 8000, 8000, 8000, 8000};
    const uint64_t not_2x[8] = {8000, 8000, 8000, 15000, 8000, 8000, 8000, 8000};
    /* 30 us is 2.4x the median (12.5 us) but within 3 scaled MADs (6 us) of it */
    const uint64_t spread[8] = {2000, 5000, 8000, 11000, 14000, 17000, 20000, 30000};
    const uint64_t halves[8] = {10000, 10000, 10000, 10000, 30000, 30000, 30000, 30000};
    const uint64_t tiny[8] = {100, 100, 100, 900, 100, 100, 100, 100};
    const uint64_t two[2] = {8000, 80000};
    const int tie[2] = {GT_V_DIRECT_PEERMEM, GT_V_DIRECT_DMABUF};
    fails += norm_case("all alike", alike, NULL, 8, 0);
    fails += norm_case("one at 2.5x the median", one_slow, NULL, 8, 1u << 3);
    fails += norm_case("one at 1.9x: not an outlier", not_2x, NULL, 8, 0);
    fails += norm_case("widely spread: 2.4x, within 3 scaled MADs", spread, NULL, 8, 0);
    fails += norm_case("half and half: none", halves, NULL, 8, 0);
    fails += norm_case("9x but under 1 us above: none", tiny, NULL, 8, 0);
    fails += norm_case("two processes: too few for latency", two, NULL, 2, 0);
    fails += norm_case("verdicts tied: the worse is named", alike, tie, 2, 1u << 0);
    return fails;
}

static int selftest(void)
{
    if (natcmp_check() + norm_check())
        return 1;
    char dir[] = "/tmp/reader-scale-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    int fails = 0;
    struct gen_opts plain = {0}, rev = {.flags = GEN_REVERSE | GEN_SMALL};
    if (gen(dir, 16, &plain)) {
        printf("FAIL gen\n");
        return 1;
    }
    char path[4200];
    snprintf(path, sizeof(path), "%s/gdrtrace.scale.node-0001.100009.rec", dir);
    struct stat st;
    struct gt_recfile r;
    char err[GT_ERRLEN];
    if (stat(path, &st) || (uint64_t)st.st_blocks * 512 * 4 > (uint64_t)st.st_size) {
        printf("FAIL %s: not sparse (%lld bytes, %lld allocated)\n", path, (long long)st.st_size,
               (long long)st.st_blocks * 512);
        fails++;
    } else {
        printf("ok   generated recorders are sparse: %lld bytes, %lld allocated\n",
               (long long)st.st_size, (long long)st.st_blocks * 512);
    }
    if (gt_recfile_load_file(path, &r, err, sizeof(err))) {
        printf("FAIL generated recorder refused: %s\n", err);
        fails++;
    } else {
        int ok = r.id.rank == 9 && !strcmp(r.id.host, "node-0001") &&
                 r.ncomm == GTR_DEFAULT_COMMS && r.ring.capacity == GTR_DEFAULT_RING_EVENTS &&
                 gt_recfile_comm(&r, 1) && gt_recfile_comm(&r, 1)->comm_id == 0x4e0de00000000001ull;
        printf("%s generated recorder reads back (rank %d on %s, %u comm slots, ring of %llu)\n",
               ok ? "ok  " : "FAIL", r.id.rank, r.id.host, r.ncomm,
               (unsigned long long)r.ring.capacity);
        fails += !ok;
        gt_recfile_free(&r);
    }
    fails += fold_check(dir);
    /* again with files read in another order than the report's */
    char rdir[4200];
    snprintf(rdir, sizeof(rdir), "%s/rev", dir);
    if (mkdir(rdir, 0700) || gen(rdir, 24, &rev))
        fails++;
    else
        fails += fold_check(rdir);
    char cmd[4300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd))
        fails++;
    return fails ? 1 : 0;
}

/* hold DIR N [gen options] -- CMD...: N live recorders, each held open by
 * the process its header names as the writer: writer processes of at most
 * RLIMIT_NOFILE's hard limit files each, as many as needed; CMD is measured
 * twice while they hold them. */
static int hold(int argc, char **argv)
{
    int dd = 4;
    while (dd < argc && strcmp(argv[dd], "--"))
        dd++;
    struct gen_opts g = {.flags = GEN_LIVE};
    if (dd >= argc - 1 || gen_args(dd - 4, argv + 4, &g))
        return 64;
    long n = atol(argv[3]);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_max < 128) {
        fprintf(stderr, "reader_scale hold: RLIMIT_NOFILE too low\n");
        return 1;
    }
    long per = (long)(rl.rlim_max > 65536 ? 65536 : rl.rlim_max) - 64;
    rl.rlim_cur = (rlim_t)per + 64;
    if (setrlimit(RLIMIT_NOFILE, &rl)) {
        fprintf(stderr, "reader_scale hold: setrlimit: %s\n", strerror(errno));
        return 1;
    }
    int ready[2], stop[2];
    if (pipe(ready) || pipe(stop))
        return 1;
    long nw = 0;
    for (long r0 = 0; r0 < n; r0 += per, nw++) {
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0) { /* a writer: its files, held until stop closes */
            close(ready[0]);
            close(stop[1]);
            g.r0 = r0;
            g.r1 = r0 + per < n ? r0 + per : n;
            char ok = gen(argv[2], n, &g) ? 'F' : 'k';
            if (write(ready[1], &ok, 1) != 1)
                _exit(1);
            char c;
            while (read(stop[0], &c, 1) > 0)
                ;
            _exit(0);
        }
    }
    close(ready[1]);
    close(stop[0]);
    int failed = 0;
    for (long i = 0; i < nw; i++) {
        char c = 'F';
        if (read(ready[0], &c, 1) != 1 || c != 'k')
            failed = 1;
    }
    int rc = 1;
    if (!failed) {
        fflush(stdout);
        rc = measure(argv + dd + 1) || measure(argv + dd + 1) ? 1 : 0;
    } else {
        fprintf(stderr, "reader_scale hold: a writer failed\n");
    }
    close(stop[1]);
    while (wait(NULL) > 0)
        ;
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 1)
        return selftest();
    if (!strcmp(argv[1], "gen") && argc >= 4) {
        struct gen_opts g = {0};
        if (gen_args(argc - 4, argv + 4, &g))
            return 64;
        return gen(argv[2], atol(argv[3]), &g) ? 1 : 0;
    }
    if (!strcmp(argv[1], "hold") && argc >= 6)
        return hold(argc, argv);
    if (!strcmp(argv[1], "bomb") && (argc == 4 || argc == 5))
        return bomb(argv[2], strtoull(argv[3], NULL, 10), argc == 5 ? argv[4] : "zeros") ? 1 : 0;
    if (!strcmp(argv[1], "measure") && argc > 2)
        return measure(argv + 2);
    if (!strcmp(argv[1], "probe") && argc == 2)
        return probe();
    fprintf(stderr, "usage: reader_scale [gen DIR N [small] [natural] [archive] [peermem=R,..] "
                    "[fallback=R,..] [slow=R,..] [unknown=R,..] | bomb FILE BYTES "
                    "[zeros|container|member|recorder|comms|ring|comms-file|ring-file] | "
                    "probe | measure CMD...]\n");
    return 64;
}
