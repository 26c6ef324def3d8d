/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_doctor_json.c — property: `doctor --compare` survives any document.
 * The bytes are another node's bundle (untrusted): the JSON reader must
 * accept or refuse them without a crash, leak, out-of-bounds read or
 * unbounded recursion, and a document it accepts must compare against
 * itself and against a valid bundle without fault.  A document compared with
 * itself must show no software or topology difference (exit 0).
 *
 * Built two ways: with clang -fsanitize=fuzzer (tests/doctor/run-fuzz-doctor.sh)
 * and, with DOCTOR_FUZZ_REPLAY, as an ordinary test that replays the
 * checked-in corpus tests/doctor/fuzz-corpus (fuzz_doctor_replay).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cmd/doctor/doctor.h"
#include "tools/cmd/doctor/doctor_json.h"

static const char valid_doc[] =
    "{\"kind\": \"gdrtrace-doctor\", \"format\": 1, \"fingerprint\": {\"kernel_release\": "
    "\"6.8.0\", \"nvidia_flavour\": \"open\", \"cuda_driver_version\": 12080}, \"gpus\": "
    "[{\"pci\": \"0000:18:00.0\", \"numa_node\": 0}], \"rdma_devices\": [{\"name\": \"mlx5_0\", "
    "\"ports\": [{\"link_layer\": \"InfiniBand\"}]}], \"topology\": [{\"gpu\": 0, \"nic\": 0, "
    "\"path\": \"PIX\"}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "we");
    if (!sink)
        abort();
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char err[256];
    struct dj *v = dj_parse(text, size, err, sizeof(err));
    dj_free(v);
    int self = dr_compare_docs(text, "fuzz", text, "fuzz", sink, err, sizeof(err));
    if (self == 1)
        abort(); /* a document that differs from itself: compare is not deterministic */
    dr_compare_docs(text, "fuzz", valid_doc, "valid", sink, err, sizeof(err));
    dr_compare_docs(valid_doc, "valid", text, "fuzz", sink, err, sizeof(err));
    free(text);
    return 0;
}

#ifdef DOCTOR_FUZZ_REPLAY
int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/doctor/fuzz-corpus";
    DIR *d = opendir(dir);
    if (!d) {
        printf("corpus %s missing: run from the repository root\n", dir);
        return 1;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        static uint8_t buf[1 << 20];
        size_t len = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, len);
        n++;
    }
    closedir(d);
    printf("replayed %d corpus inputs through the --compare reader without a fault\n", n);
    return n > 0 ? 0 : 1;
}
#endif
