/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_dump.c — `gdrtrace dump -o FILE [--force] [--level N] [PATH...]`: a zstd archive
 * (container in tools/lib/archive.h) of the recorders given (files, folders,
 * other archives) or of every recorder in $GDRTRACE_DIR.  Only recorders that
 * parse are archived (each member is re-serialized from the snapshot that
 * was validated, so the archive never carries a torn read); the liveness
 * seen now is stored with each.  The archive is written 0600 next to FILE
 * and renamed onto it; an existing FILE is replaced only with --force, and
 * never when it is not a regular file (tools/lib/outfile.h).  An archive of
 * no recorder is never written: evidence is never empty.  Exit 0, 2 if an
 * input was unreadable (the rest are archived), 3 if no recorder was found
 * (nothing written), 1 if the archive could not be written, 64 usage.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/env.h"
#include "tools/lib/archive.h"
#include "tools/lib/esc.h"
#include "tools/cmd/commands.h"
#include "tools/cmd/options.h"
#include "tools/lib/load.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gdrtrace dump -o FILE [--force] [--level N] [--accept-owner USER]...\n"
            "                     [PATH...]\n"
            "  Writes a zstd-compressed archive of recorders (default: all of $GDRTRACE_DIR;\n"
            "  PATH: recorder files, folders, other archives).  Every gdrtrace command reads\n"
            "  the archive as it reads the live files.  The archive is created 0600; an\n"
            "  existing FILE is replaced only with --force, and only if it is a regular file.\n"
            "  --level: zstd level, 1..%d (default 9).\n" GT_ACCEPT_OWNER_USAGE
            "  No recorder among the inputs: no archive is written (never an empty one).\n"
            "exit: 0 ok, 1 archive not written, 2 an input could not be read (the rest\n"
            "      archived), 3 no recorder to archive (nothing written), 64 usage\n",
            ZSTD_maxCLevel());
}

struct dump_ctx {
    struct gt_archive_writer *w;
    int nbad, nadded;
    const char *out;
    /* the reader's owner rule (inputs.h): another user's recorder planted
     * beside a job's is not archived as the job's (named instead) */
    struct gt_inputs own;
};

static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int add_one(struct dump_ctx *d, const char *name, int liveness, const unsigned char *b,
                   size_t n, const unsigned char *present, const char *src, long owner)
{
    struct gt_recfile r;
    char err[GT_ERRLEN];
    if (gt_recfile_parse_sparse(b, n, present, src, &r, err, sizeof(err))) {
        fprintf(stderr, "gdrtrace: %s (not archived)\n", gt_esc(err));
        d->nbad++;
        return 0;
    }
    r.owner = owner;
    if (!gt_inputs_owner_ok(&d->own, &r)) {
        gt_recfile_free(&r);
        return 0;
    }
    if (liveness < 0)
        liveness = gt_recfile_judge_liveness(&r);
    gt_recfile_free(&r);
    /* Only the bytes the header claims: a live file's tail beyond file_size is not ours. */
    uint64_t fsz;
    memcpy(&fsz, b + offsetof(struct gtr_header, file_size), sizeof(fsz));
    if (gt_archive_add(d->w, name, liveness, b, (size_t)fsz, present, err, sizeof(err))) {
        fprintf(stderr, "gdrtrace: %s\n", gt_esc(err));
        return -1;
    }
    d->nadded++;
    return 0;
}

struct member_ctx {
    struct dump_ctx *d;
    const char *path;
    int failed;
    long owner; /* the archive file's uid */
};

static int member_cb(struct gt_archive_member *am, void *arg)
{
    struct member_ctx *m = arg;
    char src[1024];
    snprintf(src, sizeof(src), "%s:%s", m->path, am->name);
    if (add_one(m->d, am->name, am->liveness, am->data, am->len, am->present, src, m->owner)) {
        m->failed = 1;
        return 1;
    }
    return 0;
}

static int add_path(struct dump_ctx *d, const char *path);

static int add_file(struct dump_ctx *d, const char *path)
{
    char err[GT_ERRLEN];
    int fd;
    if (gt_open_file(path, (size_t)1 << 34, &fd, err, sizeof(err))) {
        fprintf(stderr, "gdrtrace: %s\n", gt_esc(err));
        d->nbad++;
        return 0;
    }
    /* An archive is re-read while it is decompressed: its first bytes say
     * what it is, so it is never held whole. */
    struct stat st;
    long owner = fstat(fd, &st) == 0 ? (long)st.st_uid : -1;
    unsigned char m[4];
    if (pread(fd, m, sizeof(m), 0) == sizeof(m) && gt_archive_sniff(m, sizeof(m))) {
        struct member_ctx mc = {d, path, 0, owner};
        if (gt_archive_stream_fd(fd, gt_archive_max(), path, member_cb, &mc, err, sizeof(err)) &&
            !mc.failed) {
            fprintf(stderr, "gdrtrace: %s\n", gt_esc(err));
            d->nbad++;
        }
        close(fd);
        return mc.failed ? -1 : 0;
    }
    /* A recorder, header first: what is archived is the validator's image
     * of it (everything the header declares, the ring checked against a
     * live writer), so a file that is not one costs its header, and a
     * sparse one what it holds. */
    struct gt_recfile r;
    int rc =
        gt_recfile_read_fd(fd, path, GT_REC_EVENTS | GT_REC_ALL_SECTIONS, &r, err, sizeof(err));
    close(fd);
    if (rc) {
        fprintf(stderr, "gdrtrace: %s (not archived)\n", gt_esc(err));
        d->nbad++;
        return 0;
    }
    rc = 0;
    r.owner = owner;
    if (!gt_inputs_owner_ok(&d->own, &r)) {
        gt_recfile_free(&r);
        return 0;
    }
    /* Only the bytes the header claims: a live file's tail beyond file_size is not ours. */
    if (!r.snap_maplen || r.hdr.file_size > r.snap_maplen ||
        gt_archive_add(d->w, base(path), gt_recfile_judge_liveness(&r), r.snap,
                       (size_t)r.hdr.file_size, r.present, err, sizeof(err))) {
        if (!r.snap_maplen || r.hdr.file_size > r.snap_maplen)
            snprintf(err, sizeof(err), "%s: no image of the recorder to archive", path);
        fprintf(stderr, "gdrtrace: %s\n", gt_esc(err));
        rc = -1;
    } else {
        d->nadded++;
    }
    gt_recfile_free(&r);
    return rc;
}

#include <dirent.h>
#include <sys/stat.h>

static int add_path(struct dump_ctx *d, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "gdrtrace: %s: cannot stat: %m\n", gt_esc(path));
        d->nbad++;
        return 0;
    }
    if (!S_ISDIR(st.st_mode))
        return add_file(d, path);
    /* Reuse the folder rules of inputs.c by loading names through it would
     * parse twice; a folder is small, so list it here with the same filter. */
    struct dirent **ents;
    int n = scandir(path, &ents, NULL, alphasort);
    if (n < 0) {
        fprintf(stderr, "gdrtrace: %s: cannot open folder: %m\n", gt_esc(path));
        d->nbad++;
        return 0;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        size_t l = strlen(nm), pl = strlen(GTR_FILE_PREFIX), sl = strlen(GTR_FILE_SUFFIX);
        int want = (l > pl + sl && !strncmp(nm, GTR_FILE_PREFIX, pl) &&
                    !strcmp(nm + l - sl, GTR_FILE_SUFFIX)) ||
                   (l > 4 && !strcmp(nm + l - 4, ".zst"));
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", path, nm);
        struct stat s2;
        if (want && !rc && lstat(p, &s2) == 0 && S_ISREG(s2.st_mode) &&
            strcmp(base(p), base(d->out)))
            rc = add_file(d, p);
        free(ents[i]);
    }
    free(ents);
    return rc;
}

int gt_cmd_dump(int argc, char **argv)
{
    static const struct option opts[] = {GT_LONG_OUTPUT, {"level", required_argument, 0, 'l'},
                                         GT_LONG_FORCE,  GT_LONG_ACCEPT_OWNER,
                                         GT_LONG_HELP,   {0, 0, 0, 0}};
    struct gt_opts o = GT_OPTS_INIT("dump");
    int level = 9, c, rc;
    long lv;
    struct dump_ctx d = {0};
    while ((c = getopt_long(argc, argv, "hfo:l:", opts, NULL)) != -1) {
        if (c != 'l') {
            if ((rc = gt_opts_default(&o, c, optarg, usage)) >= 0)
                return rc;
            continue;
        }
        if (gt_parse_long(optarg, 1, ZSTD_maxCLevel(), &lv)) {
            fprintf(stderr, "gdrtrace dump: --level '%s' is not an integer in 1..%d\n", optarg,
                    ZSTD_maxCLevel());
            return GT_EXIT_USAGE;
        }
        level = (int)lv;
    }
    gt_inputs_take_owners(&d.own, &o.owners);
    const char *out = o.out;
    if (!out) {
        fprintf(stderr, "gdrtrace dump: -o FILE is required\n");
        usage(stderr);
        return GT_EXIT_USAGE;
    }
    char err[GT_ERRLEN];
    d.out = out;
    /* root: each job's owner settled before any file is read (inputs.h) */
    gt_inputs_settle_owners(&d.own, argv + optind, argc - optind);
    d.w = gt_archive_create(out, level, o.force, err, sizeof(err));
    if (!d.w) {
        fprintf(stderr, "gdrtrace: %s\n", gt_esc(err));
        return 1;
    }
    rc = 0;
    if (optind == argc)
        rc = add_path(&d, gt_default_dir());
    for (int i = optind; i < argc && !rc; i++)
        rc = add_path(&d, argv[i]);
    gt_inputs_explain_owners(&d.own);
    d.nbad += d.own.nbad;
    gt_inputs_free(&d.own);
    if (rc) {
        gt_archive_abort(d.w);
        return 1;
    }
    if (d.nadded == 0) {
        gt_archive_abort(d.w);
        char where[512] = "";
        size_t wl = 0;
        if (optind == argc)
            snprintf(where, sizeof(where), "%s", gt_default_dir());
        for (int i = optind; i < argc && wl < sizeof(where) - 1; i++)
            wl += (size_t)snprintf(where + wl, sizeof(where) - wl, "%s%s", i > optind ? ", " : "",
                                   argv[i]);
        fprintf(stderr,
                "gdrtrace dump: no recorder to archive in %s%s: %s not written (an archive of "
                "nothing would pass for evidence)\n",
                gt_esc(where), d.nbad ? " (what is said above was not archived)" : "", gt_esc(out));
        return GT_EXIT_EMPTY;
    }
    uint64_t in_b = 0, out_b = 0;
    if (gt_archive_finish(d.w, &in_b, &out_b, err, sizeof(err))) {
        fprintf(stderr, "gdrtrace: %s\n", gt_esc(err));
        return 1;
    }
    printf("%s: %d recorder(s), %llu bytes -> %llu bytes (ratio %.1f)\n", out, d.nadded,
           (unsigned long long)in_b, (unsigned long long)out_b,
           out_b ? (double)in_b / (double)out_b : 0.0);
    /* A folder scan reads only gdrtrace.*.rec and *.zst: an archive named
     * otherwise is read only when named, and would be missed in a folder. */
    size_t ol = strlen(out);
    if (ol < 4 || strcmp(out + ol - 4, ".zst") != 0)
        fprintf(stderr,
                "gdrtrace dump: note: %s is not named *.zst: reading its folder (gdrtrace verdict "
                "DIR) skips it; name it on the command line, or rename it *.zst\n",
                gt_esc(out));
    return d.nbad ? GT_EXIT_INPUT : 0;
}
