/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inputs.c — path → recorders (see inputs.h).  A file is classified by its
 * first bytes, never by its name: "GDRTRACE" is a recorder, a zstd frame is
 * an archive.  Folders are scanned for gdrtrace.*.rec and *.zst entries only,
 * so stray files in /dev/shm are not reported as broken recorders.
 */
#include "tools/inputs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/env.h"
#include "tools/archive.h"
#include "tools/esc.h"
#include "tools/model.h"

#define GT_REC_FILE_MAX (1ull << 34)

const char *gt_default_dir(void)
{
    const char *d = getenv("GDRTRACE_DIR");
    return d && *d ? d : "/dev/shm";
}

size_t gt_archive_max(void)
{
    /* Read once: one WARN per run for a bad value, not one per archive. */
    static long max;
    if (!max)
        max = gt_env_long("GDRTRACE_ARCHIVE_MAX", GT_ARCHIVE_MAX_DEFAULT, 1, GT_ARCHIVE_MAX_LIMIT);
    return (size_t)max;
}

static void problem(struct gt_inputs *in, const char *msg)
{
    in->nbad++;
    if (!in->quiet)
        fprintf(stderr, "gdrtrace: %s\n", gt_esc(msg));
}

static struct gt_recfile *slot(struct gt_inputs *in)
{
    if (in->n == in->cap) {
        size_t nc = in->cap ? in->cap * 2 : 16;
        struct gt_recfile *nr = realloc(in->recs, nc * sizeof(*nr));
        if (!nr)
            return NULL;
        in->recs = nr;
        in->cap = nc;
    }
    return &in->recs[in->n];
}

/* Takes the recorder just parsed into in->recs[in->n]: drops it when --job
 * wants another job; in fold mode folds it into in->fold and keeps only its
 * digest (gt_recfile_release). */
static void keep(struct gt_inputs *in)
{
    struct gt_recfile *r = &in->recs[in->n];
    if (in->job && strcmp(r->id.job, in->job)) {
        gt_recfile_free(r);
        return;
    }
    if (in->fold) {
        if (in->fold_failed || gt_job_add(in->fold, in->recs, in->n)) {
            gt_recfile_free(r);
            if (!in->fold_failed)
                problem(in, "out of memory folding the recorders");
            in->fold_failed = 1;
            return;
        }
        gt_recfile_release(r);
    }
    in->n++;
}

struct arc_ctx {
    struct gt_inputs *in;
    const char *path;
};

static int add_member(const char *name, int liveness, const unsigned char *data, size_t len,
                      void *arg)
{
    struct arc_ctx *c = arg;
    char src[1024], err[GT_ERRLEN];
    snprintf(src, sizeof(src), "%s:%s", c->path, name);
    struct gt_recfile *r = slot(c->in);
    if (!r) {
        problem(c->in, "out of memory");
        return 0;
    }
    if (gt_recfile_parse(data, len, src, r, err, sizeof(err)) != 0) {
        problem(c->in, err);
        return 0;
    }
    r->liveness =
        liveness >= GT_LIVE_CREATING && liveness <= GT_LIVE_CRASHED ? liveness : GT_LIVE_UNKNOWN;
    r->from_archive = 1;
    keep(c->in);
    return 0;
}

/* A file is classified by its first bytes, read from the descriptor it is
 * then read through: it is never read whole to learn what it is. */
static int add_file(struct gt_inputs *in, const char *path)
{
    char err[GT_ERRLEN];
    int fd;
    if (gt_open_file(path, GT_REC_FILE_MAX, &fd, err, sizeof(err))) {
        problem(in, err);
        return -1;
    }
    unsigned char b[4];
    int rc = 0;
    if (pread(fd, b, sizeof(b), 0) == (ssize_t)sizeof(b) && gt_archive_sniff(b, sizeof(b))) {
        struct arc_ctx c = {in, path};
        int before = in->nbad;
        if (gt_archive_stream_fd(fd, gt_archive_max(), path, add_member, &c, err, sizeof(err))) {
            problem(in, err);
            rc = -1;
        }
        close(fd);
        return rc || in->nbad != before ? -1 : 0;
    }
    struct gt_recfile *r = slot(in);
    if (!r) {
        close(fd);
        problem(in, "out of memory");
        return -1;
    }
    /* with its events: the fold reads them (gt_recfile_fate) before releasing */
    rc = gt_recfile_read_fd(fd, path, GT_REC_EVENTS, r, err, sizeof(err));
    close(fd);
    if (rc != 0) {
        problem(in, err);
        return -1;
    }
    r->liveness = gt_recfile_judge_liveness_why(r, &r->liveness_why);
    keep(in);
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int wanted(const char *name)
{
    size_t n = strlen(name);
    size_t pl = strlen(GTR_FILE_PREFIX), sl = strlen(GTR_FILE_SUFFIX);
    if (n > pl + sl && !strncmp(name, GTR_FILE_PREFIX, pl) &&
        !strcmp(name + n - sl, GTR_FILE_SUFFIX))
        return 1;
    return n > 4 && !strcmp(name + n - 4, ".zst");
}

static int add_dir(struct gt_inputs *in, const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        char msg[GT_ERRLEN];
        snprintf(msg, sizeof(msg), "%s: cannot open folder: %s", path, strerror(errno));
        problem(in, msg);
        return -1;
    }
    char **names = NULL;
    size_t nn = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!wanted(e->d_name))
            continue;
        if (nn == cap) {
            cap = cap ? cap * 2 : 32;
            char **nv = realloc(names, cap * sizeof(*names));
            if (!nv)
                break;
            names = nv;
        }
        names[nn] = strdup(e->d_name);
        if (names[nn])
            nn++;
    }
    closedir(d);
    if (nn)
        qsort(names, nn, sizeof(*names), name_cmp);
    int rc = 0;
    for (size_t i = 0; i < nn; i++) {
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", path, names[i]);
        struct stat st;
        /* lstat: a symlink planted in a shared folder is not followed. */
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && add_file(in, p))
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}

int gt_inputs_add(struct gt_inputs *in, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        char msg[GT_ERRLEN];
        snprintf(msg, sizeof(msg), "%s: %s", path, strerror(errno));
        problem(in, msg);
        return -1;
    }
    if (S_ISDIR(st.st_mode))
        return add_dir(in, path);
    return add_file(in, path);
}

int gt_inputs_load(struct gt_inputs *in, char **paths, int n)
{
    if (n == 0)
        gt_inputs_add(in, gt_default_dir());
    for (int i = 0; i < n; i++)
        gt_inputs_add(in, paths[i]);
    if (!in->fold) /* in fold mode gt_job_finish() sorts */
        gt_inputs_sort(in);
    return in->nbad;
}

static int rec_cmp(const void *a, const void *b)
{
    return gt_recfile_cmp(a, b);
}

void gt_inputs_sort(struct gt_inputs *in)
{
    if (in->n > 1)
        qsort(in->recs, in->n, sizeof(*in->recs), rec_cmp);
}

void gt_inputs_free(struct gt_inputs *in)
{
    for (size_t i = 0; i < in->n; i++)
        gt_recfile_free(&in->recs[i]);
    free(in->recs);
    memset(in, 0, sizeof(*in));
}
