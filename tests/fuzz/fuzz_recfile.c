/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_recfile.c — property: for ANY bytes, the reader (recorder parser, or
 * archive decompressor + container walker + parser when the bytes start with
 * a zstd frame; the streaming walker must agree with it member for member;
 * the header-first reading of the bytes as a file must agree with parsing
 * them whole)
 * either refuses with a message or yields recorders that the
 * verdict, the text report, the JSON report, report's HTML page
 * (tools/render/html.c) and watch's frames (tools/render/watch_frame.c) process without reading out
 * of bounds, crashing or leaking.  Built as a libFuzzer target by
 * run-fuzz.sh (clang, -fsanitize=fuzzer,address,undefined) and linked with
 * replay.c into `fuzz_replay`, which runs the checked-in corpus as an
 * ordinary test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tools/lib/archive.h"
#include "tools/render/html.h"
#include "tools/lib/inputs.h"
#include "tools/lib/kcorr.h"
#include "tools/lib/model.h"
#include "tools/lib/recfile.h"
#include "tools/render/json_summary.h"
#include "tools/render/next.h"
#include "tools/render/summary.h"
#include "tools/render/watch_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char gt_fuzz_corpus[] = "tests/fuzz/corpus", gt_fuzz_what[] = "the reader";

static FILE *sink(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    return f;
}

static void exercise(struct gt_inputs *in)
{
    struct gt_job j;
    if (gt_job_build(&j, in->recs, in->n))
        return;
    FILE *f = sink();
    if (f) {
        /* the three views: compact (the norm, differing ranks), --ranks, --full */
        gt_report_text(f, &j, 0);
        gt_report_text(f, &j, GT_REPORT_RANKS);
        gt_report_text(f, &j, GT_REPORT_FULL | GT_REPORT_BARS | GT_REPORT_EVENTS);
        gt_report_next(f, "", &j, NULL, 0);
        struct gt_json js;
        gj_init(&js, f);
        gt_report_json(&js, &j);
        struct gt_html_run run = {.job = &j};
        gt_html_write(f, &run, NULL, "fuzz");
        /* watch: two frames (the second with rates), drawn to a size and unbounded */
        struct gt_watch w = {0};
        struct gt_watch_frame wf;
        for (int k = 0; k < 2; k++)
            if (gt_watch_frame_build(&w, &j, 1.0 + k, (int64_t)k, &wf) == 0) {
                gt_watch_frame_render(f, &wf, 24, 80, 1);
                gt_watch_frame_render(f, &wf, 0, 0, 0);
                gt_watch_frame_free(&wf);
            }
        gt_watch_free(&w);
    }
    gt_job_free(&j);
}

static int member(struct gt_archive_member *m, void *arg)
{
    const char *name = m->name;
    int liveness = m->liveness;
    struct gt_inputs *in = arg;
    char err[GT_ERRLEN];
    if (in->n == in->cap) {
        size_t nc = in->cap ? in->cap * 2 : 4;
        struct gt_recfile *p = realloc(in->recs, nc * sizeof(*p));
        if (!p)
            return 1;
        in->recs = p;
        in->cap = nc;
    }
    if (gt_inputs_parse_member(m, name, &in->recs[in->n], err, sizeof(err)) == 0) {
        in->recs[in->n].liveness = liveness;
        in->recs[in->n].from_archive = 1; /* as inputs.c: never corroborated against this host */
        in->n++;
    } else if (!strstr(err, name)) {
        abort(); /* every refusal names its source */
    }
    return 0;
}

/* The header-first reading of a file (gt_recfile_read_fd: header checked
 * alone, then only the declared sections) accepts and refuses exactly as
 * the parse of the whole bytes, with the same message and the same result. */
static void same_from_file(const uint8_t *data, size_t size, const struct gt_recfile *whole,
                           const char *whole_err)
{
    int fd = memfd_create("fuzz.rec", MFD_CLOEXEC);
    if (fd < 0)
        return;
    size_t off = 0;
    while (off < size) {
        ssize_t k = write(fd, data + off, size - off);
        if (k <= 0) {
            close(fd);
            return;
        }
        off += (size_t)k;
    }
    struct gt_recfile r;
    char err[GT_ERRLEN];
    int rc = gt_recfile_read_fd(fd, "fuzz.rec", GT_REC_EVENTS, &r, err, sizeof(err));
    close(fd);
    if ((rc == 0) != (whole != NULL) || (rc && strcmp(err, whole_err)))
        abort();
    if (rc)
        return;
    if (memcmp(&r.hdr, &whole->hdr, sizeof(r.hdr)) || memcmp(&r.id, &whole->id, sizeof(r.id)) ||
        memcmp(&r.rs, &whole->rs, sizeof(r.rs)) || r.ncomm != whole->ncomm ||
        r.nheld != whole->nheld || r.ndev != whole->ndev || r.nset != whole->nset ||
        r.ncallee != whole->ncallee ||
        (r.nheld && (memcmp(r.comms, whole->comms, r.nheld * sizeof(*r.comms)) ||
                     memcmp(r.comm_slot, whole->comm_slot, r.nheld * sizeof(*r.comm_slot)))))
        abort();
    uint64_t p1 = 0, p2 = 0;
    struct gtr_event e1, e2;
    int n1, n2;
    while ((n1 = gt_recfile_event_next(&r, &p1, &e1)) |
           (n2 = gt_recfile_event_next(whole, &p2, &e2)))
        if (n1 != n2 || memcmp(&e1, &e2, sizeof(e1)))
            abort();
    gt_recfile_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gt_inputs in = {0};
    char err[GT_ERRLEN];
    struct gt_kcorr *k = calloc(1, sizeof(*k));
    if (k) {
        gt_kcorr_parse(k, (const char *)data, size);
        free(k);
    }
    if (gt_archive_sniff(data, size)) {
        unsigned char *raw;
        size_t rawn;
        /* a small cap: decompression bombs are refused, not followed */
        int whole = -1;
        if (gt_archive_decompress(data, size, 8u << 20, &raw, &rawn, "fuzz.zst", err,
                                  sizeof(err)) == 0) {
            whole = gt_archive_walk(raw, rawn, "fuzz.zst", member, &in, err, sizeof(err));
            free(raw);
        }
        /* The streaming reader (what gdrtrace uses) accepts exactly what
         * decompressing first and walking accepts, member for member. */
        struct gt_inputs in2 = {0};
        int streamed =
            gt_archive_stream_mem(data, size, 8u << 20, "fuzz.zst", member, &in2, err, sizeof(err));
        if ((streamed == 0) != (whole == 0) || (whole == 0 && in2.n != in.n))
            abort();
        gt_inputs_free(&in2);
    } else {
        in.recs = malloc(sizeof(*in.recs));
        in.cap = 1;
        if (in.recs && gt_recfile_parse(data, size, "fuzz.rec", &in.recs[0], err, sizeof(err)) == 0)
            in.n = 1;
        else if (in.recs && !strstr(err, "fuzz.rec: "))
            abort();
        if (in.recs)
            same_from_file(data, size, in.n ? &in.recs[0] : NULL, err);
    }
    if (in.n)
        exercise(&in);
    gt_inputs_free(&in);
    return 0;
}
