/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compare.c — `doctor --compare`: are two nodes a fair canary pair?
 *
 * The runbook's test: same topology class and same software set.  Every
 * difference is printed on its own line, prefixed by its class:
 *   software  kernel, NVIDIA module version/flavour, peermem, CUDA driver,
 *             libibverbs' DMA-BUF entry point, NIC firmware (per NIC position)
 *   topology  CPU model, GPU/NIC counts and models, NUMA nodes, link layers and
 *             rates, the GPU x NIC path matrix, nearest NIC per GPU
 *   identity  PCI addresses and device names (listed, never decisive: names
 *             change across reboots and nodes of one class may number buses
 *             differently)
 * The fingerprint fields go through the recorder's gt_fingerprint_diff, so
 * `gdrtrace diff` and doctor agree on what differs.  GPUs and NICs are
 * compared by position in PCI order, never by mlx5_N name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fingerprint.h"
#include "tools/cmd/doctor/doctor.h"
#include "tools/cmd/doctor/doctor_json.h"

struct cmp_state {
    FILE *out;
    int software, topology, identity;
};

static void line(struct cmp_state *st, const char *cls, const char *what, const char *a,
                 const char *b)
{
    fprintf(st->out, "  %-9s %s: \"%s\" vs \"%s\"\n", cls, what, a, b);
    if (!strcmp(cls, "software"))
        st->software++;
    else if (!strcmp(cls, "topology"))
        st->topology++;
    else
        st->identity++;
}

static int flavour_code(const char *s)
{
    if (!strcmp(s, "open"))
        return GTR_NV_OPEN;
    if (!strcmp(s, "proprietary"))
        return GTR_NV_PROPRIETARY;
    if (!strcmp(s, "absent"))
        return GTR_NV_ABSENT;
    return GTR_NV_UNKNOWN;
}

static void to_fp(const struct dj *o, struct gtr_fingerprint *fp)
{
    memset(fp, 0, sizeof(*fp));
    dr_strlcpy(fp->kernel_release, dj_str(o, "kernel_release"), sizeof(fp->kernel_release));
    dr_strlcpy(fp->boot_id, dj_str(o, "boot_id"), sizeof(fp->boot_id));
    dr_strlcpy(fp->nvidia_version, dj_str(o, "nvidia_version"), sizeof(fp->nvidia_version));
    fp->nvidia_flavour = (uint8_t)flavour_code(dj_str(o, "nvidia_flavour"));
    fp->peermem_loaded = (uint8_t)(dj_num(o, "peermem_loaded", 0) != 0);
    fp->memory_peers = (uint8_t)(dj_num(o, "memory_peers", 0) != 0);
    fp->cuda_driver_version = (int32_t)dj_num(o, "cuda_driver_version", -1);
    dr_strlcpy(fp->rdma_devices, dj_str(o, "rdma_devices"), sizeof(fp->rdma_devices));
    dr_strlcpy(fp->gpus, dj_str(o, "gpus"), sizeof(fp->gpus));
    dr_strlcpy(fp->cpu_model, dj_str(o, "cpu_model"), sizeof(fp->cpu_model));
}

static void fp_cb(const char *field, const char *a, const char *b, void *arg)
{
    struct cmp_state *st = arg;
    const char *cls = "software";
    if (!strcmp(field, "rdma_devices") || !strcmp(field, "gpus"))
        cls = "identity";
    else if (!strcmp(field, "cpu_model"))
        cls = "topology";
    char what[64];
    snprintf(what, sizeof(what), "fingerprint.%s", field);
    line(st, cls, what, a, b);
}

static void cmp_str(struct cmp_state *st, const char *cls, const char *what, const struct dj *a,
                    const struct dj *b, const char *key)
{
    const char *x = dj_str(a, key), *y = dj_str(b, key);
    if (strcmp(x, y) != 0) {
        char w[160];
        snprintf(w, sizeof(w), "%s.%s", what, key);
        line(st, cls, w, x, y);
    }
}

static void cmp_num(struct cmp_state *st, const char *cls, const char *what, const struct dj *a,
                    const struct dj *b, const char *key)
{
    double x = dj_num(a, key, -12345), y = dj_num(b, key, -12345);
    if (x != y) {
        char w[160], xs[32], ys[32];
        snprintf(w, sizeof(w), "%s.%s", what, key);
        snprintf(xs, sizeof(xs), "%.0f", x);
        snprintf(ys, sizeof(ys), "%.0f", y);
        line(st, cls, w, xs, ys);
    }
}

static int count(const struct dj *arr)
{
    return arr && arr->type == DJ_ARR ? arr->n : 0;
}

static void compare_trees(const struct dj *a, const struct dj *b, struct cmp_state *st)
{
    struct gtr_fingerprint fa, fb;
    to_fp(dj_get(a, "fingerprint"), &fa);
    to_fp(dj_get(b, "fingerprint"), &fb);
    gt_fingerprint_diff(&fa, &fb, fp_cb, st);

    cmp_num(st, "software", "live", dj_get(a, "live"), dj_get(b, "live"),
            "verbs_has_reg_dmabuf_mr");

    const struct dj *ga = dj_get(a, "gpus"), *gb = dj_get(b, "gpus");
    char xs[16], ys[16];
    if (count(ga) != count(gb)) {
        snprintf(xs, sizeof(xs), "%d", count(ga));
        snprintf(ys, sizeof(ys), "%d", count(gb));
        line(st, "topology", "gpu count", xs, ys);
    }
    for (int i = 0; i < count(ga) && i < count(gb); i++) {
        char what[32];
        snprintf(what, sizeof(what), "gpus[%d]", i);
        const struct dj *x = dj_at(ga, i), *y = dj_at(gb, i);
        cmp_str(st, "identity", what, x, y, "pci");
        cmp_str(st, "topology", what, x, y, "device");
        cmp_str(st, "topology", what, x, y, "model");
        cmp_num(st, "topology", what, x, y, "numa_node");
        cmp_str(st, "topology", what, x, y, "nearest_path");
    }

    const struct dj *na = dj_get(a, "rdma_devices"), *nb = dj_get(b, "rdma_devices");
    if (count(na) != count(nb)) {
        snprintf(xs, sizeof(xs), "%d", count(na));
        snprintf(ys, sizeof(ys), "%d", count(nb));
        line(st, "topology", "rdma device count", xs, ys);
    }
    for (int i = 0; i < count(na) && i < count(nb); i++) {
        char what[32];
        snprintf(what, sizeof(what), "rdma_devices[%d]", i);
        const struct dj *x = dj_at(na, i), *y = dj_at(nb, i);
        cmp_str(st, "identity", what, x, y, "name");
        cmp_str(st, "identity", what, x, y, "pci");
        cmp_str(st, "topology", what, x, y, "hca_type");
        cmp_num(st, "topology", what, x, y, "numa_node");
        cmp_num(st, "topology", what, x, y, "virtual");
        cmp_str(st, "software", what, x, y, "fw_ver");
        const struct dj *pa = dj_get(x, "ports"), *pb = dj_get(y, "ports");
        if (count(pa) != count(pb)) {
            snprintf(xs, sizeof(xs), "%d", count(pa));
            snprintf(ys, sizeof(ys), "%d", count(pb));
            char w[64];
            snprintf(w, sizeof(w), "%s port count", what);
            line(st, "topology", w, xs, ys);
        }
        for (int p = 0; p < count(pa) && p < count(pb); p++) {
            char w[64];
            snprintf(w, sizeof(w), "%s.ports[%d]", what, p);
            cmp_str(st, "topology", w, dj_at(pa, p), dj_at(pb, p), "link_layer");
            cmp_str(st, "topology", w, dj_at(pa, p), dj_at(pb, p), "rate");
            cmp_str(st, "topology", w, dj_at(pa, p), dj_at(pb, p), "state");
        }
    }

    /* the path matrix, when both have the same shape (else the counts said it) */
    const struct dj *ta = dj_get(a, "topology"), *tb = dj_get(b, "topology");
    if (count(ga) == count(gb) && count(na) == count(nb) && count(ta) == count(tb)) {
        for (int i = 0; i < count(ta); i++) {
            const struct dj *x = dj_at(ta, i), *y = dj_at(tb, i);
            char w[64];
            snprintf(w, sizeof(w), "path gpu%.0f-nic%.0f", dj_num(x, "gpu", -1),
                     dj_num(x, "nic", -1));
            if (strcmp(dj_str(x, "path"), dj_str(y, "path")) != 0)
                line(st, "topology", w, dj_str(x, "path"), dj_str(y, "path"));
        }
    }
}

static struct dj *load(const char *text, const char *label, char *err, size_t errlen)
{
    char perr[200];
    struct dj *d = dj_parse(text, strlen(text), perr, sizeof(perr));
    if (!d) {
        snprintf(err, errlen, "%s: not JSON (%s)", label, perr);
        return NULL;
    }
    if (strcmp(dj_str(d, "kind"), "gdrtrace-doctor") != 0 || dj_num(d, "format", 0) != 1) {
        snprintf(err, errlen,
                 "%s: not a gdrtrace doctor document (kind \"%s\", format %.0f; "
                 "expected \"gdrtrace-doctor\", 1)",
                 label, dj_str(d, "kind"), dj_num(d, "format", 0));
        dj_free(d);
        return NULL;
    }
    return d;
}

int dr_compare_docs(const char *a_text, const char *a_label, const char *b_text,
                    const char *b_label, FILE *out, char *err, size_t errlen)
{
    struct dj *a = load(a_text, a_label, err, errlen);
    if (!a)
        return -1;
    struct dj *b = load(b_text, b_label, err, errlen);
    if (!b) {
        dj_free(a);
        return -1;
    }
    struct cmp_state st = {.out = out};
    fprintf(out, "compare: A = %s, B = %s\n", a_label, b_label);
    compare_trees(a, b, &st);
    if (!st.software && !st.topology && !st.identity)
        fprintf(out, "  (no differences)\n");
    fprintf(out, "same topology class: %s (%d difference%s)\n", st.topology ? "no" : "yes",
            st.topology, st.topology == 1 ? "" : "s");
    fprintf(out, "same software set:   %s (%d difference%s)\n", st.software ? "no" : "yes",
            st.software, st.software == 1 ? "" : "s");
    fprintf(out, "identity only:       %d difference%s (PCI addresses, names; not decisive)\n",
            st.identity, st.identity == 1 ? "" : "s");
    int same = !st.software && !st.topology;
    fprintf(out, "verdict: %s\n",
            same ? "a fair canary pair"
                 : "NOT a fair canary pair: fix or record the differences "
                   "above before comparing results");
    dj_free(a);
    dj_free(b);
    return same ? 0 : 1;
}
