/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_prom.c — export's metric set and its Prometheus text
 * (tools/render/prom.c): a whole exposition written out by hand here:
 * every family printed whole, in the order added, HELP and TYPE even with
 * no sample; samples of equal name and labels summed, any difference in a
 * label value or the label set kept apart; first-seen order by the
 * recorder's report position then emission; samples placed by their
 * read index and those of recorders left out dropped; integers printed
 * as such, others with 9 significant digits; label values escaped
 * (quote, backslash, newline; other control bytes and invalid UTF-8 as
 * '?'); a sample of an unknown family ignored.  The export's collective
 * families on a model made by hand: a communicator NCCL gave no name is
 * comm_name="unknown"; a Send cell's durations (3 at 40 us, 1 at 3 ms)
 * as a Prometheus histogram whose cumulative buckets, sum and count were
 * computed by hand; no series under NCCL Inspector's names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hist.h"
#include "tools/lib/coll.h"
#include "tools/lib/model.h"
#include "tools/render/prom.h"

static char *g_buf;
static size_t g_len;

static const char *text_of(struct gt_prom *k)
{
    FILE *f = open_memstream(&g_buf, &g_len);
    gt_prom_text(f, k);
    fclose(f);
    return g_buf;
}

static void lab(struct gt_prom_label *l, const char *k, const char *v)
{
    l->k = k;
    snprintf(l->v, sizeof(l->v), "%s", v);
}

static void exposition(void **state)
{
    (void)state;
    struct gt_prom k = {0};
    gt_prom_sample(&k, 0, NULL, NULL, 0, 1); /* no family yet: ignored */
    gt_prom_family(&k, "gt_regs", "counter", "Registrations.");
    gt_prom_family(&k, "gt_up", "gauge", "Live recorders.");
    gt_prom_family(&k, "gt_empty", "gauge", "Nothing.");
    struct gt_prom_label l[2];
    /* recorder at report position 1 emits first, position 0 second */
    k.pos = 1;
    lab(&l[0], "host", "b");
    lab(&l[1], "method", "dmabuf");
    gt_prom_sample(&k, 0, "_total", l, 2, 3);
    gt_prom_sample(&k, 1, NULL, NULL, 0, 0.5);
    k.pos = 0;
    lab(&l[0], "host", "a");
    gt_prom_sample(&k, 0, "_total", l, 2, 4);
    gt_prom_sample(&k, 0, "_total", l, 2, 6); /* the same name and labels: summed */
    gt_prom_sample(&k, 0, "_total", l, 1, 7); /* host only: another series */
    gt_prom_sample(&k, 1, NULL, NULL, 0, 0.25);
    gt_prom_sample(&k, 1, NULL, NULL, 0, 1e18);
    gt_prom_merge(&k);
    assert_string_equal(text_of(&k), "# HELP gt_regs Registrations.\n"
                                     "# TYPE gt_regs counter\n"
                                     "gt_regs_total{host=\"a\",method=\"dmabuf\"} 10\n"
                                     "gt_regs_total{host=\"a\"} 7\n"
                                     "gt_regs_total{host=\"b\",method=\"dmabuf\"} 3\n"
                                     "# HELP gt_up Live recorders.\n"
                                     "# TYPE gt_up gauge\n"
                                     "gt_up 1e+18\n"
                                     "# HELP gt_empty Nothing.\n"
                                     "# TYPE gt_empty gauge\n");
    free(g_buf);
    gt_prom_free(&k);
}

static void values_and_escaping(void **state)
{
    (void)state;
    struct gt_prom k = {0};
    gt_prom_family(&k, "m", "gauge", "h");
    struct gt_prom_label l[1];
    lab(&l[0], "v", "q\"b\\n\nt\tx\x7f\xc3\xa9\xff");
    gt_prom_sample(&k, 0, NULL, l, 1, 0.1234567891);
    lab(&l[0], "v", "int");
    gt_prom_sample(&k, 0, NULL, l, 1, 42);
    lab(&l[0], "v", "neg");
    gt_prom_sample(&k, 0, NULL, l, 1, -2);
    gt_prom_merge(&k);
    assert_string_equal(text_of(&k), "# HELP m h\n"
                                     "# TYPE m gauge\n"
                                     "m{v=\"q\\\"b\\\\n\\nt?x?\xc3\xa9?\"} 0.123456789\n"
                                     "m{v=\"int\"} 42\n"
                                     "m{v=\"neg\"} -2\n");
    free(g_buf);
    gt_prom_free(&k);
}

static void placed_and_left_out(void **state)
{
    (void)state;
    struct gt_prom k = {0};
    gt_prom_family(&k, "m", "gauge", "h");
    struct gt_prom_label l[1];
    /* read order 0, 1, 2; report order 2, 0, 1; the recorder read second left out */
    for (size_t r = 0; r < 3; r++) {
        k.rec = r;
        char v[8];
        snprintf(v, sizeof(v), "r%zu", r);
        lab(&l[0], "rec", v);
        gt_prom_sample(&k, 0, NULL, l, 1, (double)r + 1);
    }
    k.rec = SIZE_MAX; /* after the fold: its position given */
    k.pos = 0;
    lab(&l[0], "rec", "job");
    gt_prom_sample(&k, 0, NULL, l, 1, 9);
    size_t rec_pos[3] = {1, 2, 0};
    unsigned char out[3] = {0, 0, 1}; /* report position 2: read index 1 */
    gt_prom_place(&k, rec_pos, 3, out);
    assert_int_equal(k.ns, 3);
    gt_prom_merge(&k);
    assert_string_equal(text_of(&k), "# HELP m h\n"
                                     "# TYPE m gauge\n"
                                     "m{rec=\"r2\"} 3\n"
                                     "m{rec=\"job\"} 9\n"
                                     "m{rec=\"r0\"} 1\n");
    free(g_buf);
    gt_prom_free(&k);
}

static void collective_families(void **state)
{
    (void)state;
    struct gt_coll_mcell cell;
    memset(&cell, 0, sizeof(cell));
    cell.func = GTR_COLL_FUNC_SEND;
    cell.size_log2 = 20; /* [1, 2) MiB */
    cell.count = 5;      /* one not timed */
    cell.bytes = 5u << 20;
    cell.hist.min_ns = UINT64_MAX;
    for (int i = 0; i < 3; i++)
        gt_hist_add_owned(&cell.hist, 40000);
    gt_hist_add_owned(&cell.hist, 3000000);
    struct gt_coll_mcomm comm;
    memset(&comm, 0, sizeof(comm));
    comm.has_id = 1;
    comm.comm_id = 0xabc;
    comm.nranks = 2;
    comm.nnodes = 2;
    comm.mode = GTR_COLL_MODE_PROXY;
    comm.cells = &cell;
    comm.ncell = 1;
    struct gt_coll_model m;
    memset(&m, 0, sizeof(m));
    m.comms = &comm;
    m.ncomm = 1;
    struct gt_job j;
    memset(&j, 0, sizeof(j));
    j.coll = &m;
    static struct gt_verdict overall; /* large: not on the stack */
    struct gt_prom k = {0};
    gt_prom_export_begin(&k, 0);
    gt_prom_export_job(&k, &j, NULL, &overall);
    gt_prom_merge(&k);
    const char *t = text_of(&k);
#define P "comm=\"0xabc\",collective=\"Send\",message_size=\"1-2MB\""
    static const char *const want[] = {
        "# TYPE gdrtrace_collective_duration_seconds histogram\n",
        "gdrtrace_collective_info{comm=\"0xabc\",comm_name=\"unknown\",n_nodes=\"2\","
        "nranks=\"2\",mode=\"proxy\",registration=\"unknown\"} 1\n",
        /* 40 us < 2^16 ns = 65.536 us; 3 ms < 2^22 ns */
        "gdrtrace_collective_duration_seconds_bucket{" P ",le=\"3.2768e-05\"} 0\n",
        "gdrtrace_collective_duration_seconds_bucket{" P ",le=\"6.5536e-05\"} 3\n",
        "gdrtrace_collective_duration_seconds_bucket{" P ",le=\"0.002097152\"} 3\n",
        "gdrtrace_collective_duration_seconds_bucket{" P ",le=\"0.004194304\"} 4\n",
        "gdrtrace_collective_duration_seconds_bucket{" P ",le=\"+Inf\"} 4\n",
        "gdrtrace_collective_duration_seconds_sum{" P "} 0.00312\n",
        "gdrtrace_collective_duration_seconds_count{" P "} 4\n",
        "gdrtrace_collectives_total{" P "} 5\n",
        "gdrtrace_collective_bytes_total{" P "} 5242880\n",
    };
#undef P
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (!strstr(t, want[i]))
            fail_msg("no line %s in:\n%s", want[i], t);
    assert_null(strstr(t, "\nnccl_"));
    free(g_buf);
    gt_prom_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exposition),
        cmocka_unit_test(values_and_escaping),
        cmocka_unit_test(placed_and_left_out),
        cmocka_unit_test(collective_families),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
