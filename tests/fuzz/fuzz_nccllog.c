/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_nccllog.c — property: for ANY bytes read as NCCL's log, in any split
 * into reads, the log reader (tools/lib/nccllog.c) keeps at most its caps of
 * records, every string it keeps is NUL-terminated within its field, its
 * counts are the same however the stream was split (lines, NCCL lines,
 * facts used, channel lines, records), and the join (tools/lib/nccljoin.c) with
 * an empty job, every printer of it and diff's GPU Direct text run without
 * reading out of bounds,
 * crashing or leaking.  Built as a libFuzzer target by run-fuzz.sh and
 * linked with replay.c into `fuzz_nccllog_replay`, which runs
 * tests/fuzz/nccllog-corpus as an ordinary test.
 *
 * Input: byte 0 = read-size seed; the rest = the log.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/nccljoin.h"
#include "tools/render/json_nccljoin.h"
#include "tools/render/nccljoin_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char gt_fuzz_corpus[] = "tests/fuzz/nccllog-corpus",
           gt_fuzz_what[] = "the NCCL log reader and its join";

static FILE *sink(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    return f;
}

static void check_str(const char *s, size_t n)
{
    if (!memchr(s, 0, n))
        abort(); /* invariant 5 */
}

static void check(const struct gt_nlog *l)
{
    if (l->nproc > GT_NLOG_MAX_PROCS || l->ncomm > GT_NLOG_MAX_COMMS)
        abort();
    for (size_t i = 0; i < l->nproc; i++) {
        const struct gt_nlog_proc *p = &l->procs[i];
        check_str(p->host, sizeof(p->host));
        check_str(p->version, sizeof(p->version));
        check_str(p->quote_plugin, sizeof(p->quote_plugin));
        check_str(p->quote_unattr, sizeof(p->quote_unattr));
        if (p->ngdr > GT_NLOG_MAX_GDR || p->ncomm > GT_NLOG_MAX_PROC_COMMS)
            abort();
        for (uint32_t g = 0; g < p->ngdr; g++)
            check_str(p->gdr[g].quote, sizeof(p->gdr[g].quote));
    }
    for (size_t i = 0; i < l->ncomm; i++) {
        const struct gt_nlog_comm *c = &l->comms[i];
        if (c->proc >= l->nproc || (c->parent >= 0 && (size_t)c->parent >= i) ||
            (c->prev >= 0 && (size_t)c->prev >= i))
            abort();
        check_str(c->net, sizeof(c->net));
        check_str(c->quote_net, sizeof(c->quote_net));
        check_str(c->quote_intra, sizeof(c->quote_intra));
        check_str(c->quote_gdr, sizeof(c->quote_gdr));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned seed = data[0];
    const char *b = (const char *)data + 1;
    size_t n = size - 1;
    struct gt_nlog whole, split;
    if (gt_nlog_init(&whole))
        return 0;
    if (gt_nlog_init(&split)) {
        gt_nlog_free(&whole);
        return 0;
    }
    gt_nlog_feed(&whole, b, n);
    gt_nlog_feed_end(&whole);
    for (size_t i = 0; i < n;) {
        seed = seed * 1103515245u + 12345u;
        size_t k = 1 + (seed >> 16) % 97;
        if (k > n - i)
            k = n - i;
        gt_nlog_feed(&split, b + i, k);
        i += k;
    }
    gt_nlog_feed_end(&split);
    check(&whole);
    if (whole.lines != split.lines || whole.nccl_lines != split.nccl_lines ||
        whole.used != split.used || whole.channels != split.channels ||
        whole.ncomm != split.ncomm || whole.nproc != split.nproc ||
        whole.too_long != split.too_long || whole.unattributed != split.unattributed)
        abort();
    char gdr[400];
    gt_nlog_gdr_text(&whole, gdr, sizeof(gdr)); /* diff's comparison, any size */
    check_str(gdr, sizeof(gdr));
    gt_nlog_gdr_text(&whole, gdr, 1 + seed % 40);
    check_str(gdr, 1 + seed % 40);
    struct gt_job j;
    if (!gt_job_build(&j, NULL, 0)) {
        struct gt_nccl_join nj;
        if (!gt_nccl_join(&whole, &j, &nj)) {
            FILE *f = sink();
            if (f) {
                gt_nccl_join_print_comms(f, &nj);
                gt_nccl_join_print_procs(f, &nj, 0);
                gt_nccl_join_print_section(f, &nj);
                struct gt_json js;
                gj_init(&js, f);
                gj_obj(&js, NULL);
                gt_nccl_join_json(&js, &nj);
                gj_arr(&js, "c");
                for (size_t i = 0; i < nj.ncomm; i++) {
                    gj_obj(&js, NULL);
                    gt_nccl_join_json_comm(&js, &nj.comms[i]);
                    gj_end(&js, '}');
                }
                gj_end(&js, ']');
                gj_end(&js, '}');
                gj_done(&js);
            }
            gt_nccl_join_free(&nj);
        }
        gt_job_free(&j);
    }
    gt_nlog_free(&whole);
    gt_nlog_free(&split);
    return 0;
}
