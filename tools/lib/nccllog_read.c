/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccllog_read.c — NCCL's log from streams, files and folders (nccllog.h):
 * bytes in any split become lines through one fixed buffer (invariant 1: a
 * line over GT_NLOG_LINE_MAX is counted, never kept); only regular files
 * are read, none waited on, no symbolic link in a folder followed, and
 * the recorders and archives beside the log are skipped by name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdrtrace/recorder_format.h"
#include "tools/lib/nccllog.h"
#include "tools/lib/regfile.h"

void gt_nlog_feed(struct gt_nlog *l, const char *buf, size_t n)
{
    while (n) {
        const char *nl = memchr(buf, '\n', n);
        size_t k = nl ? (size_t)(nl - buf) : n;
        if (!l->overlong) {
            if (l->linelen + k > GT_NLOG_LINE_MAX) {
                l->overlong = 1;
            } else {
                memcpy(l->line + l->linelen, buf, k);
                l->linelen += k;
            }
        }
        if (!nl)
            return;
        if (l->overlong) {
            l->lines++;
            l->too_long++;
        } else {
            gt_nlog_line(l, l->line, l->linelen);
        }
        l->linelen = 0;
        l->overlong = 0;
        buf += k + 1;
        n -= k + 1;
    }
}

void gt_nlog_feed_end(struct gt_nlog *l)
{
    if (l->overlong) {
        l->lines++;
        l->too_long++;
    } else if (l->linelen) {
        gt_nlog_line(l, l->line, l->linelen);
    }
    l->linelen = 0;
    l->overlong = 0;
}

static int read_fd(struct gt_nlog *l, int fd)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            gt_nlog_feed_end(l);
            return e;
        }
        if (!n)
            break;
        gt_nlog_feed(l, buf, (size_t)n);
    }
    gt_nlog_feed_end(l);
    l->files++;
    return 0;
}

static int read_file_at(struct gt_nlog *l, int dirfd, const char *name, int nofollow)
{
    /* a FIFO named on the command line must not block the open; only a
     * regular file is read (a FIFO, /dev/zero or a socket would never end) */
    struct gt_regfile rf;
    switch (gt_regfile_open(dirfd, name, nofollow ? O_NOFOLLOW : 0, &rf)) {
    case GT_REGFILE_OK:
        break;
    case GT_REGFILE_TYPE:
        return S_ISDIR(rf.st.st_mode) ? EISDIR : GT_NLOG_NOT_REGULAR;
    default:
        return rf.err;
    }
    int rc = read_fd(l, rf.fd);
    close(rf.fd);
    return rc;
}

/* Recorders and dump archives share a folder with NCCL's log under `gdrtrace
 * run` (and in a job's gathered folder): they are not log files. */
static int ours_by_name(const char *name)
{
    size_t n = strlen(name), p = strlen(GTR_FILE_PREFIX), q = strlen(GTR_FILE_SUFFIX);
    return (n > p + q && !strncmp(name, GTR_FILE_PREFIX, p) &&
            !strcmp(name + n - q, GTR_FILE_SUFFIX)) ||
           (n > 4 && !strcmp(name + n - 4, ".zst"));
}

/* The owner rule of struct gt_nlog: no rule, or uid is one of owners[]. */
static int owner_ok(const struct gt_nlog *l, uid_t uid)
{
    for (int i = 0; i < l->nowners; i++)
        if (l->owners[i] == (long)uid)
            return 1;
    return !l->nowners;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int gt_nlog_add_path(struct gt_nlog *l, const char *path, const char **what)
{
    *what = path;
    struct stat st;
    if (stat(path, &st))
        return errno;
    if (!S_ISDIR(st.st_mode))
        return read_file_at(l, AT_FDCWD, path, 0);
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return errno;
    int dup_fd = dup(dfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        int e = errno;
        if (dup_fd >= 0)
            close(dup_fd);
        close(dfd);
        return e;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        struct stat es;
        if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
            continue;
        if (fstatat(dfd, de->d_name, &es, AT_SYMLINK_NOFOLLOW) || !S_ISREG(es.st_mode))
            continue; /* only regular files: no symlink followed, no FIFO waited on */
        if (ours_by_name(de->d_name)) {
            l->skipped++;
            continue;
        }
        if (!owner_ok(l, es.st_uid)) {
            if (!l->owner_left++) {
                l->owner_left_uid = (long)es.st_uid;
                snprintf(l->owner_left_eg, sizeof(l->owner_left_eg), "%s/%s", path, de->d_name);
            }
            continue;
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            char **q = realloc(names, nc * sizeof(*q));
            if (!q) {
                rc = ENOMEM;
                break;
            }
            names = q;
            cap = nc;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = ENOMEM;
            break;
        }
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof(*names), cmp_names);
    for (size_t i = 0; i < n && !rc; i++) {
        rc = read_file_at(l, dfd, names[i], 1);
        if (rc) {
            static char failed[4096];
            snprintf(failed, sizeof(failed), "%s/%s", path, names[i]);
            *what = failed;
        }
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    close(dfd);
    return rc;
}
