/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kcorr.c — parse debugfs dma_buf/bufinfo (see kcorr.h).
 *
 * The kernel prints (drivers/dma-buf/dma-buf.c, dma_buf_debug_show) one line
 * per object, tab-separated "size flags mode count exp_name ino name", then
 * optional fence lines, then "\tAttached Devices:", one "\t<dev_name>" line
 * per attachment and "Total N devices attached".  The layout has changed
 * across kernels (fence lines, a name column), so the parser keys only on
 * what has been stable: an object line starts with digits and has at least
 * five fields, the exporter is the fifth; attachment lines follow the
 * "Attached Devices:" marker until a line starting with "Total".
 */
#include "tools/lib/kcorr.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/lib/regfile.h"

static void add_dev(struct gt_kcorr *k, const char *name, size_t n)
{
    for (int i = 0; i < k->ndevs; i++)
        if (strlen(k->devs[i].name) == n && !strncmp(k->devs[i].name, name, n)) {
            k->devs[i].nv_objects++;
            return;
        }
    if (k->ndevs == GT_KC_MAX_DEVS || n >= sizeof(k->devs[0].name))
        return;
    memcpy(k->devs[k->ndevs].name, name, n);
    k->devs[k->ndevs].name[n] = 0;
    k->devs[k->ndevs].nv_objects = 1;
    k->ndevs++;
}

void gt_kcorr_parse(struct gt_kcorr *k, const char *text, size_t len)
{
    int in_attached = 0, cur_nv = 0;
    size_t i = 0;
    while (i < len) {
        size_t e = i;
        while (e < len && text[e] != '\n')
            e++;
        const char *l = text + i;
        size_t n = e - i;
        i = e + 1;
        size_t p = 0;
        while (p < n && (l[p] == ' ' || l[p] == '\t'))
            p++;
        if (p == n)
            continue;
        if (n - p >= 5 && !strncmp(l + p, "Total", 5)) {
            in_attached = 0;
            continue;
        }
        if (n - p >= 17 && !strncmp(l + p, "Attached Devices:", 17)) {
            in_attached = 1;
            continue;
        }
        if (p == 0 && isdigit((unsigned char)l[0])) {
            /* object line: fields split on tabs/spaces; exporter is the 5th */
            size_t f = 0, q = 0;
            const char *exp = NULL;
            size_t explen = 0;
            while (q < n && f < 5) {
                while (q < n && (l[q] == '\t' || l[q] == ' '))
                    q++;
                size_t s = q;
                while (q < n && l[q] != '\t' && l[q] != ' ')
                    q++;
                if (q > s) {
                    f++;
                    if (f == 5) {
                        exp = l + s;
                        explen = q - s;
                    }
                }
            }
            in_attached = 0;
            if (f < 5)
                continue;
            k->objects++;
            cur_nv = explen == 9 && !strncmp(exp, "nv_dmabuf", 9);
            if (cur_nv) {
                k->nv_objects++;
                k->nv_bytes += strtoull(l, NULL, 10);
            }
            continue;
        }
        if (in_attached && cur_nv && p > 0) {
            size_t s = p, q = p;
            while (q < n && l[q] != ' ' && l[q] != '\t')
                q++;
            if (q > s)
                add_dev(k, l + s, q - s);
        }
    }
}

void gt_kcorr_read(struct gt_kcorr *k)
{
    memset(k, 0, sizeof(*k));
    const char *p = getenv("GDRTRACE_BUFINFO");
    snprintf(k->path, sizeof(k->path), "%s", p && *p ? p : "/sys/kernel/debug/dma_buf/bufinfo");
    /* a FIFO must not block the open nor a device never end the read */
    struct gt_regfile rf;
    enum gt_regfile_fail fail = gt_regfile_open(AT_FDCWD, k->path, 0, &rf);
    if (fail == GT_REGFILE_TYPE) {
        k->err_no = EINVAL;
        snprintf(k->why, sizeof(k->why), "%s, not a regular file: refused",
                 gt_regfile_what(rf.st.st_mode));
        return;
    }
    if (fail) {
        k->err_no = rf.err;
        return;
    }
    int fd = rf.fd;
    /* debugfs files report size 0: read with a growing buffer, not by size */
    FILE *f = fdopen(fd, "r");
    if (!f) {
        k->err_no = errno;
        close(fd);
        return;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (len == cap) {
            if (cap >= (64u << 20))
                break;
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        if (r == 0)
            break;
        len += r;
    }
    if (ferror(f))
        k->err_no = errno ? errno : EIO;
    fclose(f);
    if (!buf) {
        k->err_no = ENOMEM;
        return;
    }
    if (!k->err_no) {
        k->readable = 1;
        gt_kcorr_parse(k, buf, len);
    }
    free(buf);
}

const char *gt_kcorr_error(const struct gt_kcorr *k)
{
    return k->why[0] ? k->why : strerror(k->err_no);
}

uint64_t gt_kcorr_attached(const struct gt_kcorr *k, const char *pci_path)
{
    const char *b = strrchr(pci_path, '/');
    b = b ? b + 1 : pci_path;
    if (!*b)
        return 0;
    for (int i = 0; i < k->ndevs; i++)
        if (!strcmp(k->devs[i].name, b))
            return k->devs[i].nv_objects;
    return 0;
}

int gt_kcorr_live_here(const struct gt_recfile *r)
{
    char h[256];
    if (r->from_archive || r->liveness != GT_LIVE_LIVE || gethostname(h, sizeof(h)) != 0)
        return 0;
    h[sizeof(h) - 1] = 0;
    return !strcmp(h, r->id.host);
}

int gt_kcorr_of_job(const struct gt_job *j, struct gt_kcorr_job *v)
{
    memset(v, 0, sizeof(*v));
    for (size_t i = 0; i < j->nrec; i++)
        v->nlive += gt_kcorr_live_here(&j->recs[i]);
    /* from the digests: a folded recorder no longer holds its comm slots */
    for (size_t i = 0; v->nlive && i < j->nranks; i++) {
        const struct gt_rank_comm *d = &j->ranks[i];
        if (!gt_kcorr_live_here(&j->recs[d->rec]))
            continue;
        v->dmabuf_regs += d->did[GT_METHOD_DMABUF];
        v->deregs += d->deregs;
    }
    if (!v->nlive)
        return 0;
    gt_kcorr_read(&v->k);
    return 1;
}
