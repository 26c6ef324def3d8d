/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fx_main.c — `reader_fixture`: with arguments, writes a fixture recorder
 * (used by the shell tests and docs/examples); without, it is a test that
 * checks, for every fixture kind, that the parser accepts the image, that the
 * verdict is the one the kind was built for, that the registration count and
 * latency percentiles read back as written, and that the event ring is
 * classified (complete / torn / overwritten) as invariant 6 says.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tests/check.h"

#include "tests/reader/fixture.h"
#include "tools/lib/hist.h"
#include "tools/lib/model.h"
#include "common/procid.h"
#include "tools/lib/recfile.h"

static int failures; /* tests/check.h counts here */
/* Issues 23 and 19.1: what became of a process, from its recorder alone. */
static void selftest_fates(void)
{
    char err[GT_ERRLEN];
    struct {
        int fate, state, live, kind, code;
        const char *says;
    } cases[] = {
        /* state LIVE, writer not running (parse alone cannot prove it runs:
         * "unknown", as for a pid that exists but is someone else) */
        {FX_FATE_CRASHED, GTR_STATE_LIVE, GT_LIVE_UNKNOWN, GT_FATE_CRASHED_IN_CALL, GT_V_ERROR,
         "crashed inside the inner plugin's connect (" FX_INNER_PATH ", ABI v8, device 0), "
         "called at 2025-12-02 "},
        {FX_FATE_CRASHED, GTR_STATE_LIVE, GT_LIVE_CRASHED, GT_FATE_CRASHED_IN_CALL, GT_V_ERROR,
         "crashed inside the inner plugin's connect"},
        {FX_FATE_CRASHED, GTR_STATE_CLOSED, GT_LIVE_EXITED, GT_FATE_EXITED_IN_CALL, GT_V_ERROR,
         "exited inside the inner plugin's connect"},
        {FX_FATE_CRASHED, GTR_STATE_LIVE, GT_LIVE_LIVE, GT_FATE_IN_CALL, GT_V_NO_DATA,
         "still running"},
        {FX_FATE_RETURNED, GTR_STATE_LIVE, GT_LIVE_CRASHED, GT_FATE_NONE, GT_V_NO_DATA, ""},
        {FX_FATE_REFUSED, GTR_STATE_CLOSED, GT_LIVE_EXITED, GT_FATE_REFUSED, GT_V_BYPASSED,
         "the plugin refused this process at 2025-12-02 "},
        {FX_FATE_REFUSED, GTR_STATE_CLOSED, GT_LIVE_EXITED, GT_FATE_REFUSED, GT_V_BYPASSED,
         "\"" FX_REFUSED_WHY "\" (no-rdma-device)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fx_opts o = {.kind = FX_NODATA, .fate = cases[i].fate, .state = cases[i].state};
        size_t n;
        unsigned char *b = fx_build(&o, &n);
        struct gt_recfile r;
        int rc = gt_recfile_parse(b, n, "fate", &r, err, sizeof(err));
        free(b);
        CHECK(rc == 0, "case %zu does not parse: %s", i, err);
        if (rc)
            continue;
        r.liveness = cases[i].live;
        struct gt_fate f;
        gt_recfile_fate(&r, &f);
        CHECK(f.kind == cases[i].kind, "case %zu: fate %d, want %d (%s)", i, f.kind, cases[i].kind,
              f.text);
        CHECK(f.code == cases[i].code, "case %zu: verdict %s, want %s", i, gt_verdict_name(f.code),
              gt_verdict_name(cases[i].code));
        CHECK(strstr(f.text, cases[i].says) != NULL, "case %zu: '%s' does not say '%s'", i, f.text,
              cases[i].says);
        CHECK(cases[i].kind == GT_FATE_NONE ||
                  strstr(f.text, "host node-a, pid 4242, rank 0, job job42"),
              "case %zu: '%s' does not name the process", i, f.text);
        gt_recfile_free(&r);
    }
    /* Precedence (docs/reader.md): ERROR > FALLBACK > BYPASSED > MIXED > one kind. */
    int a[] = {GT_V_DIRECT_DMABUF, GT_V_BYPASSED, GT_V_NO_DATA};
    CHECK(gt_verdict_combine(a, 3) == GT_V_BYPASSED, "dmabuf + bypassed");
    int m[] = {GT_V_DIRECT_DMABUF, GT_V_HOST_STAGED, GT_V_BYPASSED};
    CHECK(gt_verdict_combine(m, 3) == GT_V_BYPASSED, "mixed + bypassed");
    int fb[] = {GT_V_BYPASSED, GT_V_FALLBACK};
    CHECK(gt_verdict_combine(fb, 2) == GT_V_FALLBACK, "fallback + bypassed");
    int er[] = {GT_V_BYPASSED, GT_V_ERROR, GT_V_FALLBACK};
    CHECK(gt_verdict_combine(er, 3) == GT_V_ERROR, "error + bypassed");
    CHECK(gt_verdict_exit(GT_V_BYPASSED) == 16, "BYPASSED exits %d",
          gt_verdict_exit(GT_V_BYPASSED));
    /* a job: one DIRECT-DMABUF process, one refused: BYPASSED for the whole */
    struct gt_recfile recs[2];
    struct fx_opts od = {.kind = FX_DMABUF},
                   orf = {.kind = FX_NODATA, .fate = FX_FATE_REFUSED, .pid = 4343};
    const struct fx_opts *os[2] = {&od, &orf};
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        size_t n;
        unsigned char *b = fx_build(os[i], &n);
        ok &= gt_recfile_parse(b, n, "job", &recs[i], err, sizeof(err)) == 0;
        free(b);
    }
    CHECK(ok, "job fixtures do not parse: %s", err);
    if (!ok)
        return;
    struct gt_job j;
    CHECK(gt_job_build(&j, recs, 2) == 0, "job build");
    CHECK(j.overall.code == GT_V_BYPASSED, "job verdict %s (%s)", gt_verdict_name(j.overall.code),
          j.overall.why);
    CHECK(j.nfates == 1 && j.fates[0].rec == 1, "fates %zu", j.nfates);
    CHECK(j.ncomm == 1 && j.comms[0].v.code == GT_V_DIRECT_DMABUF,
          "the refused process has no comm");
    gt_job_free(&j);
    gt_recfile_free(&recs[0]);
    gt_recfile_free(&recs[1]);
}

static int64_t mono_now(void);

/* Issue 17.9: liveness by the writer's pid namespace and process start
 * (format 1.4, tools/lib/liveness.c), each rule on a file this process writes,
 * with our own pid standing for "a process with that pid runs here". */
static void selftest_liveness(void)
{
    char dir[] = "/tmp/fx-liveness.XXXXXX", path[64], err[GT_ERRLEN];
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    snprintf(path, sizeof(path), "%s/gdrtrace.j.h.1.rec", dir);
    uint64_t dev, ino;
    gt_proc_ns("pid", &dev, &ino);
    if (!ino) {
        printf("note: /proc/self/ns/pid unreadable, the 1.4 liveness rules not checked\n");
        rmdir(dir);
        return;
    }
    int me = (int)getpid(), gone = 99999999;
    struct {
        const char *what;
        int pid, pidns, minor, hold;
        int64_t ticks; /* -2: ours + 1 */
        int live;
        const char *why;
    } cases[] = {
        {"another namespace, that pid runs here", me, FX_PIDNS_GIVEN, 0, 0, -1, GT_LIVE_UNKNOWN,
         GT_LIVE_WHY_OTHER_NS},
        {"another namespace, no such pid here", gone, FX_PIDNS_GIVEN, 0, 0, 0, GT_LIVE_UNKNOWN,
         GT_LIVE_WHY_OTHER_NS},
        {"another namespace, holding the file", me, FX_PIDNS_GIVEN, 0, 1, -1, GT_LIVE_UNKNOWN,
         GT_LIVE_WHY_OTHER_NS},
        {"namespace not recorded", gone, FX_PIDNS_NONE, 0, 0, 0, GT_LIVE_UNKNOWN,
         GT_LIVE_WHY_NS_UNREADABLE},
        {"our namespace, no such pid", gone, FX_PIDNS_SELF, 0, 0, 0, GT_LIVE_CRASHED, ""},
        {"our namespace, that pid started at another tick", me, FX_PIDNS_SELF, 0, 1, -2,
         GT_LIVE_CRASHED, ""},
        {"our namespace, the writer's start, holding", me, FX_PIDNS_SELF, 0, 1, -1, GT_LIVE_LIVE,
         ""},
        {"our namespace, the writer's start, not holding", me, FX_PIDNS_SELF, 0, 0, -1,
         GT_LIVE_UNKNOWN, ""},
        {"our namespace, no start recorded, holding", me, FX_PIDNS_SELF, 0, 1, 0, GT_LIVE_LIVE, ""},
        {"1.3: no such pid", gone, FX_PIDNS_GIVEN, 3, 0, 0, GT_LIVE_CRASHED, ""},
        {"1.3: that pid runs, not holding", me, FX_PIDNS_GIVEN, 3, 0, 0, GT_LIVE_UNKNOWN, ""},
        {"1.3: that pid runs, holding", me, FX_PIDNS_GIVEN, 3, 1, 0, GT_LIVE_LIVE, ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fx_opts o = {.kind = FX_NODATA,
                            .state = GTR_STATE_LIVE,
                            .pid = cases[i].pid,
                            .pidns = cases[i].pidns,
                            .pidns_dev = dev,
                            .pidns_ino = ino + 1, /* not ours */
                            .minor = cases[i].minor,
                            .start_mono_ns = mono_now(),
                            .start_ticks = cases[i].ticks};
        if (cases[i].ticks == -2)
            o.start_ticks = gt_proc_start_ticks(0) + 1;
        unlink(path);
        CHECK(fx_write(&o, path) == 0, "%s: write %s", cases[i].what, strerror(errno));
        int fd = cases[i].hold ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        struct gt_recfile r;
        if (gt_recfile_load_file(path, &r, err, sizeof(err)) != 0) {
            CHECK(0, "%s: %s", cases[i].what, err);
        } else {
            const char *why = r.liveness_why ? r.liveness_why : "";
            CHECK(r.liveness == cases[i].live && !strcmp(why, cases[i].why),
                  "%s: %s (%s), want %s (%s)", cases[i].what, gt_liveness_name(r.liveness), why,
                  gt_liveness_name(cases[i].live), cases[i].why);
            gt_recfile_free(&r);
        }
        if (fd >= 0)
            close(fd);
    }
    unlink(path);
    rmdir(dir);
}

static int selftest(void)
{
    char err[GT_ERRLEN];
    for (int k = 0; k < FX_KIND_COUNT; k++) {
        struct fx_opts o = {.kind = k};
        size_t n;
        unsigned char *b = fx_build(&o, &n);
        struct gt_recfile r;
        int rc = gt_recfile_parse(b, n, fx_kind_name(k), &r, err, sizeof(err));
        CHECK(rc == 0, "kind %s does not parse: %s", fx_kind_name(k), err);
        free(b);
        if (rc)
            continue;
        struct gt_verdict v;
        const struct gt_recfile *ctx = &r;
        CHECK(r.nheld >= 1 && r.comm_slot[0] == 0, "kind %s: slot 0 not held", fx_kind_name(k));
        gt_verdict_of(&r.comms[0], &ctx, 1, &v);
        CHECK(!strcmp(gt_verdict_name(v.code), fx_kind_verdict(k)), "kind %s: verdict %s (%s)",
              fx_kind_name(k), gt_verdict_name(v.code), v.why);
        CHECK(gt_comm_regs(&r.comms[0]) == fx_expected_regs(&o), "kind %s: %llu registrations",
              fx_kind_name(k), (unsigned long long)gt_comm_regs(&r.comms[0]));
        CHECK(r.rs.complete == 300 && r.rs.torn == 0 && r.rs.overwritten == 0,
              "kind %s ring: complete %llu torn %llu overwritten %llu", fx_kind_name(k),
              (unsigned long long)r.rs.complete, (unsigned long long)r.rs.torn,
              (unsigned long long)r.rs.overwritten);
        if (k != FX_NODATA) {
            const struct gtr_hist *h = &r.comms[0].hist[GTR_OP_REG];
            uint64_t p50 = gt_hist_quantile(h, 0.5), p95 = gt_hist_quantile(h, 0.95),
                     p99 = gt_hist_quantile(h, 0.99);
            /* midpoint of the value's bucket: within 1/32 of the value */
            CHECK(p50 >= 20000 * 0.96875 && p50 <= 20000 * 1.03125, "p50 %llu, want ~20000",
                  (unsigned long long)p50);
            CHECK(p95 >= 100000 * 0.96875 && p95 <= 100000 * 1.03125, "p95 %llu, want ~100000",
                  (unsigned long long)p95);
            CHECK(p99 >= 100000 * 0.96875 && p99 <= 100000 * 1.03125, "p99 %llu, want ~100000",
                  (unsigned long long)p99);
            CHECK(gt_hist_quantile(h, 0.0) == 20000, "p0 %llu, want min 20000",
                  (unsigned long long)gt_hist_quantile(h, 0.0));
            CHECK(gt_hist_quantile(h, 1.0) == 2000000, "p100 %llu, want 2000000",
                  (unsigned long long)gt_hist_quantile(h, 1.0));
        }
        gt_recfile_free(&r);
    }
    /* A ring that wrapped, with torn newest records. */
    struct fx_opts o = {.kind = FX_DMABUF, .ring_cap = 256, .events = 300, .torn = 3};
    size_t n;
    unsigned char *b = fx_build(&o, &n);
    struct gt_recfile r;
    CHECK(gt_recfile_parse(b, n, "wrapped", &r, err, sizeof(err)) == 0, "%s", err);
    CHECK(r.rs.complete == 253 && r.rs.torn == 3 && r.rs.overwritten == 44,
          "wrapped ring: complete %llu torn %llu overwritten %llu",
          (unsigned long long)r.rs.complete, (unsigned long long)r.rs.torn,
          (unsigned long long)r.rs.overwritten);
    {
        struct gtr_event e;
        uint64_t pos = 0, kept = 0, first_seq = 0;
        while (gt_recfile_event_next(&r, &pos, &e))
            if (!kept++)
                first_seq = e.seq;
        CHECK(kept == 253 && first_seq == 2 * 44 + 2, "iterated %llu events, oldest seq %llu",
              (unsigned long long)kept, (unsigned long long)first_seq);
    }
    gt_recfile_free(&r);
    free(b);
    /* Sibling slots (a second thread on the same communicator) are summed, and
     * an empty overflow slot is not reported. */
    {
        struct fx_opts so = {.kind = FX_DMABUF};
        unsigned char *img = fx_build(&so, &n);
        struct gtr_comm *c0 = malloc(sizeof(*c0));
        memcpy(c0, img + fx_off_comms(), sizeof(*c0));
        memcpy(img + fx_off_comms() + sizeof(*c0), c0, sizeof(*c0)); /* slot 1: sibling */
        struct gtr_comm *ov = calloc(1, sizeof(*ov));
        ov->state = GTR_COMM_ACTIVE;
        ov->has_comm_id = GT_COMM_OVERFLOW;
        memcpy(img + fx_off_comms() + 3 * sizeof(*ov), ov, sizeof(*ov)); /* slot 3: overflow */
        CHECK(gt_recfile_parse(img, n, "siblings", &r, err, sizeof(err)) == 0, "%s", err);
        int nsib = 0;
        CHECK(gt_recfile_comm_group(&r, 0, c0, &nsib) == 1 && nsib == 2 &&
                  gt_comm_regs(c0) == 2 * fx_expected_regs(&so),
              "sibling group: nsib %d, regs %llu", nsib, (unsigned long long)gt_comm_regs(c0));
        CHECK(gt_recfile_comm_group(&r, 1, c0, &nsib) == 0, "second sibling reported on its own");
        CHECK(gt_recfile_comm_group(&r, 3, c0, &nsib) == 0, "empty overflow slot reported");
        struct gt_job j;
        CHECK(gt_job_build(&j, &r, 1) == 0 && j.ncomm == 1 && j.comms[0].nprocs == 1,
              "job: %zu comms", j.ncomm);
        gt_job_free(&j);
        gt_recfile_free(&r);
        free(img);
        free(c0);
        free(ov);
    }
    /* The bucket bounds agree with the documented index formula. */
    for (uint64_t v = 0; v < (1ull << 43); v = v < 4096 ? v + 1 : v + v / 7 + 1) {
        unsigned i = gt_hist_index(v);
        CHECK(gt_hist_bucket_lo(i) <= v && v < gt_hist_bucket_hi(i),
              "value %llu bucket %u [%llu, %llu)", (unsigned long long)v, i,
              (unsigned long long)gt_hist_bucket_lo(i), (unsigned long long)gt_hist_bucket_hi(i));
        if (failures > 10)
            break;
    }
    selftest_fates();
    selftest_liveness();
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("process fates (refused, died in a call) read back; liveness by pid namespace and "
           "start; all fixture kinds parse with their verdict, counts, percentiles and ring "
           "classes\n");
    return 0;
}

static int64_t mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* --hold: what the reader sees of a running writer (shim/recorder.c): a LIVE
 * recorder naming this process, created after it started, kept open and
 * mapped until stdin closes (so a test that dies takes the writer along). */
static int hold_as_writer(struct fx_opts *o, const char *path)
{
    o->pid = (int)getpid();
    o->state = GTR_STATE_LIVE;
    if (!o->start_ticks)
        o->start_ticks = -1; /* the writer's own start, as shim/recorder.c records it */
    if (!o->start_mono_ns)
        o->start_mono_ns = mono_now();
    size_t len;
    unsigned char *img = fx_build(o, &len);
    int fd = img ? open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
    void *map = MAP_FAILED;
    if (fd >= 0 && write(fd, img, len) == (ssize_t)len)
        map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    free(img);
    if (map == MAP_FAILED) {
        fprintf(stderr, "reader_fixture: --hold %s: %s\n", path, strerror(errno));
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    char buf[64];
    while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
        ;
    munmap(map, len);
    close(fd);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(
        f, "usage: reader_fixture KIND PATH [--host H] [--job J] [--pid P] [--rank R] [--world W]\n"
           "         [--comm ID] [--kernel K] [--reg R] [--state live|closed] [--events N]\n"
           "         [--cap N] [--torn N] [--nccl V] [--scale N] [--ncomm N] [--latency PCT]\n"
           "         [--start-mono NS|now] [--hold] [--setting KEY=VALUE] [--no-settings]\n"
           "         [--invalid KEY=TEXT] [--fate refused|crashed|returned]\n"
           "         [--flushes N] [--conn RUNS] [--abi N] [--no-dev]\n"
           "         [--pidns self|none|DEV:INO] [--start-ticks N|self] [--minor N]\n"
           "         [--coll data|env:TEXT|unset] [--reg-code MODE|N] [--emulated-code 0|1]\n"
           "  KIND: dmabuf peermem host mixed fallback error nodata\n"
           "  --hold: be the writer: a LIVE recorder with this process's pid, created now,\n"
           "          held open and mapped; prints \"ready\" and holds until stdin closes.\n"
           "  --fate: the newest events say the plugin refused the process, or that it\n"
           "          died inside (or returned from) an inner plugin's connect.\n"
           "  --pidns: the writer's pid namespace to record (1.4; default self: ours);\n"
           "  --start-ticks: its process start, /proc/PID/stat field 22 (default 0: none);\n"
           "  --minor 3: write a format 1.3 file (no pid namespace, no start).\n"
           "  --conn RUNS: connection runs, oldest first: a slot digit each (\"0213\", one\n"
           "          listen and connect each), or SLOT:LISTENS/CONNECTS,... (\"0:2/2,3:0/1\");\n"
           "          slot S is the communicator of commId --comm + S.\n"
           "  --abi N: the communicators' ABI version (default 12; below 11: no commId);\n"
           "  --no-dev: device -1 (not known).\n"
           "  --coll: write the 1.6 collective sections (fixture.h says what each holds).\n"
           "  --reg-code, --emulated-code: write the 1.8 coded facts (identity.reg_mode,\n"
           "          emulated and their facts bits; version 1.8 unless --minor), whatever\n"
           "          the strings (--reg, --setting) say.\n"
           "  Without arguments: self-test.\n");
}

int main(int argc, char **argv)
{
    if (argc == 1)
        return selftest();
    static const struct option opts[] = {
        {"host", 1, 0, 'H'},          {"job", 1, 0, 'j'},     {"pid", 1, 0, 'p'},
        {"rank", 1, 0, 'r'},          {"world", 1, 0, 'w'},   {"comm", 1, 0, 'c'},
        {"kernel", 1, 0, 'k'},        {"reg", 1, 0, 'g'},     {"state", 1, 0, 's'},
        {"events", 1, 0, 'e'},        {"cap", 1, 0, 'C'},     {"torn", 1, 0, 't'},
        {"nccl", 1, 0, 'n'},          {"scale", 1, 0, 'S'},   {"ncomm", 1, 0, 'N'},
        {"latency", 1, 0, 'L'},       {"age", 1, 0, 'a'},     {"help", 0, 0, 'h'},
        {"start-mono", 1, 0, 'M'},    {"hold", 0, 0, 'O'},    {"setting", 1, 0, 'Z'},
        {"no-settings", 0, 0, 'X'},   {"invalid", 1, 0, 'I'}, {"fate", 1, 0, 'F'},
        {"flushes", 1, 0, 'U'},       {"conn", 1, 0, 'K'},    {"pidns", 1, 0, 'P'},
        {"start-ticks", 1, 0, 'T'},   {"minor", 1, 0, 'm'},   {"abi", 1, 0, 'A'},
        {"no-dev", 0, 0, 'D'},        {"coll", 1, 0, 'Q'},    {"reg-code", 1, 0, 'R'},
        {"emulated-code", 1, 0, 'E'}, {0, 0, 0, 0},
    };
    struct fx_opts o = {0};
    int c, hold = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'H':
            o.host = optarg;
            break;
        case 'j':
            o.job = optarg;
            break;
        case 'p':
            o.pid = atoi(optarg);
            break;
        case 'r':
            o.rank = atoi(optarg);
            break;
        case 'w':
            o.world = atoi(optarg);
            break;
        case 'c':
            o.comm_id = strtoull(optarg, NULL, 0);
            break;
        case 'k':
            o.kernel = optarg;
            break;
        case 'g':
            o.reg = optarg;
            break;
        case 's':
            o.state = !strcmp(optarg, "live") ? 1 : 2;
            break;
        case 'e':
            o.events = strtoull(optarg, NULL, 0);
            break;
        case 'C':
            o.ring_cap = strtoull(optarg, NULL, 0);
            break;
        case 't':
            o.torn = atoi(optarg);
            break;
        case 'n':
            o.nccl_version = atoi(optarg);
            break;
        case 'A':
            o.abi = atoi(optarg);
            break;
        case 'D':
            o.no_dev = 1;
            break;
        case 'S':
            o.scale = atoi(optarg);
            break;
        case 'N':
            o.ncomm = atoi(optarg);
            break;
        case 'L':
            o.lat_pct = atoi(optarg);
            break;
        case 'M':
            o.start_mono_ns = !strcmp(optarg, "now") ? mono_now() : strtoll(optarg, NULL, 0);
            break;
        case 'O':
            hold = 1;
            break;
        case 'a': {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            o.end_wall_ns = ((int64_t)ts.tv_sec - strtoll(optarg, NULL, 10)) * 1000000000ll;
            break;
        }
        case 'Z':
            o.setting = optarg;
            break;
        case 'X':
            o.no_settings = 1;
            break;
        case 'I':
            o.invalid = optarg;
            break;
        case 'F':
            o.fate = !strcmp(optarg, "refused")    ? FX_FATE_REFUSED
                     : !strcmp(optarg, "crashed")  ? FX_FATE_CRASHED
                     : !strcmp(optarg, "returned") ? FX_FATE_RETURNED
                                                   : -1;
            if (o.fate < 0) {
                fprintf(stderr, "reader_fixture: --fate takes refused, crashed or returned\n");
                return 64;
            }
            break;
        case 'U':
            o.flushes = strtoull(optarg, NULL, 0);
            break;
        case 'K':
            o.conn = optarg;
            break;
        case 'P': {
            unsigned long long dev, ino;
            if (!strcmp(optarg, "self"))
                o.pidns = FX_PIDNS_SELF;
            else if (!strcmp(optarg, "none"))
                o.pidns = FX_PIDNS_NONE;
            else if (sscanf(optarg, "%llu:%llu", &dev, &ino) == 2) {
                o.pidns = FX_PIDNS_GIVEN;
                o.pidns_dev = dev;
                o.pidns_ino = ino;
            } else {
                fprintf(stderr, "reader_fixture: --pidns takes self, none or DEV:INO\n");
                return 64;
            }
            break;
        }
        case 'T':
            o.start_ticks = !strcmp(optarg, "self") ? -1 : strtoll(optarg, NULL, 10);
            break;
        case 'm':
            o.minor = atoi(optarg);
            break;
        case 'Q':
            o.coll = optarg;
            break;
        case 'R': {
            int m = 0;
            while (m < GT_REG_MODE_COUNT && strcmp(optarg, gt_reg_mode_name(m)))
                m++;
            o.reg_code = m < GT_REG_MODE_COUNT ? m + 1 : atoi(optarg) + 1;
            break;
        }
        case 'E':
            o.emulated_code = atoi(optarg) + 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 64;
        }
    }
    if (argc - optind != 2) {
        usage(stderr);
        return 64;
    }
    o.kind = fx_kind_parse(argv[optind]);
    if (o.kind < 0) {
        fprintf(stderr, "reader_fixture: unknown kind '%s'\n", argv[optind]);
        return 64;
    }
    if (o.conn) {
        struct fx_conn_run run[FX_CONN_MAX];
        int n = fx_conn_parse(o.conn, o.ncomm > 0 ? o.ncomm : 4, run);
        uint64_t ev = 1;
        for (int i = 0; i < n; i++)
            ev += 2 * (uint64_t)run[i].listens + (uint64_t)run[i].connects;
        if (n <= 0) {
            fprintf(stderr,
                    "reader_fixture: --conn '%s': slot digits, or SLOT:LISTENS/CONNECTS,... "
                    "(slots below --ncomm, at most %d runs)\n",
                    o.conn, FX_CONN_MAX);
            return 64;
        }
        if (ev > (o.events ? o.events : 300)) {
            fprintf(stderr, "reader_fixture: --conn '%s' needs --events over %llu\n", o.conn,
                    (unsigned long long)ev - 1);
            return 64;
        }
    }
    if (hold)
        return hold_as_writer(&o, argv[optind + 1]);
    if (fx_write(&o, argv[optind + 1])) {
        fprintf(stderr, "reader_fixture: %s: %s\n", argv[optind + 1], strerror(errno));
        return 1;
    }
    return 0;
}
