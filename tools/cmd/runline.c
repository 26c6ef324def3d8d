/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runline.c — see runline.h: the per-rank line of `gdrtrace run` under a
 * launcher and the stdout capture behind it.  Owned here so cmd_run.c keeps
 * the running of the command and this only the shape of the log.
 */
#include "tools/cmd/runline.h"

#include <string.h>
#include <unistd.h>

#include "tools/lib/esc.h"

void gt_capture_begin(struct gt_capture *c)
{
    c->saved = -1;
    fflush(stdout);
    c->tmp = tmpfile();
    if (!c->tmp)
        return;
    c->saved = dup(STDOUT_FILENO);
    if (c->saved < 0 || dup2(fileno(c->tmp), STDOUT_FILENO) < 0) {
        if (c->saved >= 0)
            close(c->saved);
        c->saved = -1;
        fclose(c->tmp);
        c->tmp = NULL;
    }
}

void gt_capture_stop(struct gt_capture *c)
{
    if (c->saved < 0)
        return;
    fflush(stdout);
    dup2(c->saved, STDOUT_FILENO);
    close(c->saved);
    c->saved = -1;
}

void gt_capture_end(struct gt_capture *c, int print)
{
    if (!c->tmp)
        return;
    gt_capture_stop(c);
    if (print) {
        char buf[8192];
        size_t n;
        rewind(c->tmp);
        while ((n = fread(buf, 1, sizeof(buf), c->tmp)) > 0)
            fwrite(buf, 1, n, stdout);
        fflush(stdout);
    }
    fclose(c->tmp);
    c->tmp = NULL;
}

void gt_capture_verdict(const struct gt_capture *c, char *out, size_t n)
{
    snprintf(out, n, "?");
    if (!c->tmp)
        return;
    char line[4096];
    rewind(c->tmp);
    while (fgets(line, sizeof(line), c->tmp)) {
        if (strncmp(line, "all ", 4) != 0)
            continue;
        const char *p = line + 4 + strspn(line + 4, " ");
        const char *e = strstr(p, "  "); /* the gap before the explanation */
        size_t len = e ? (size_t)(e - p) : strcspn(p, "\n");
        if (len && len < n) {
            memcpy(out, p, len);
            out[len] = '\0';
        }
    }
    fseek(c->tmp, 0, SEEK_END);
}

void gt_run_rank_line(const char *rank, const char *host, const char *verdict, int code,
                      const char *archive)
{
    char line[1024];
    int len = snprintf(line, sizeof(line), "gdrtrace run: rank %s host %s verdict %s exit %d", rank,
                       host, verdict, code);
    if (len > 0 && (size_t)len < sizeof(line) && archive)
        len += snprintf(line + len, sizeof(line) - (size_t)len, " archive %s", archive);
    if (len < 0)
        return;
    const char *e = gt_esc(line); /* host and folder names are the machine's */
    size_t n = strlen(e);
    char out[1100];
    if (n > sizeof(out) - 2)
        n = sizeof(out) - 2;
    memcpy(out, e, n);
    out[n++] = '\n';
    fflush(stdout);
    ssize_t w = write(STDOUT_FILENO, out, n);
    (void)w;
}
