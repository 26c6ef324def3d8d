/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd.c — `gdrtrace doctor`: options, the pipeline, exit codes.
 *
 * Exit codes (docs/doctor.md): 0 every check PASS; 1 a WARN or a SKIP (not
 * everything could be proved) and no FAIL; 2 a gate failed; 64 usage error
 * or an unreadable --compare document.  With --compare: 0 a fair canary pair,
 * 1 the nodes differ in topology class or software set.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cmd/commands.h"
#include "tools/cmd/doctor/doctor.h"

/* The shape every subcommand's help has (dist/gen-man.sh typesets it). */
static void usage(FILE *f)
{
    fprintf(
        f, "usage: gdrtrace doctor [--json] [--peermem] [--dmabuf-source=vgem] [--no-live|--live]\n"
           "       gdrtrace doctor --compare OTHER.json | --compare A.json B.json\n"
           "  The runbook's gates 0-2 on this node: identity (kernel, NVIDIA module\n"
           "  flavour, peermem, CUDA, GPUs and RDMA devices by PCI address), GPU/NIC\n"
           "  topology in NCCL's terms, the DMA-BUF prerequisites, and a real DMA-BUF\n"
           "  export of GPU memory registered on every RDMA device (host memory as the\n"
           "  negative control).  GDRTRACE_SYSFS_ROOT=DIR reads /sys, /proc and /dev\n"
           "  under DIR (test fixtures).\n"
           "  --json                the evidence bundle as JSON (fingerprint, inventory,\n"
           "                        checks)\n"
           "  --peermem             also try ibv_reg_mr on GPU memory (the legacy peermem\n"
           "                        path)\n"
           "  --dmabuf-source=vgem  also register a dma-buf from vgem on every device: a\n"
           "                        real dma-buf fd on a machine without GPU (CI, the\n"
           "                        Soft-RoCE VM)\n"
           "  --no-live             sysfs/procfs only: no libcuda, no libibverbs calls\n"
           "  --live                run the live probes even when GDRTRACE_SYSFS_ROOT is set\n"
           "  --compare F           this node against the bundle F (another node's --json)\n"
           "  --compare A B         two bundles: same topology class and software set?\n"
           "                        every difference is listed\n"
           "exit: 0 all PASS, 1 WARN or SKIP, 2 a gate FAILed, 64 usage; with --compare:\n"
           "      0 a fair canary pair, 1 they differ, 64 an unreadable document\n");
}

/* A usage mistake: what was wrong, then the whole help, as every subcommand
 * does; exit 64. */
static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "gdrtrace doctor: %s%s%s%s\n", what, arg ? " '" : "", arg ? arg : "",
            arg ? "'" : "");
    usage(stderr);
    return DR_EXIT_USAGE;
}

static char *slurp(const char *path, char *err, size_t errlen)
{
    /* Only a regular file: a FIFO would wait for a writer, /dev/zero never
     * end (O_NONBLOCK: the open itself does not wait). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file (a FIFO, a device or a socket): refused",
                 path);
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
        if (len + 1 == cap) {
            if (cap >= (64u << 20)) {
                snprintf(err, errlen, "%s: larger than 64 MiB, not a doctor document", path);
                free(buf);
                buf = NULL;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int rerr = ferror(f);
    fclose(f);
    if (!buf) {
        if (!err[0])
            snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (rerr) {
        snprintf(err, errlen, "error reading %s", path);
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        snprintf(err, errlen, "%s: contains NUL bytes, not a doctor document", path);
        free(buf);
        return NULL;
    }
    return buf;
}

/* Runs the whole pipeline; writes JSON (json=1) or the report to f. */
static int run(const struct dr_options *opt, FILE *f, int json)
{
    struct dr_inventory *inv = malloc(sizeof(*inv));
    struct dr_topology *topo = malloc(sizeof(*topo));
    struct dr_live *live = malloc(sizeof(*live));
    struct dr_report *rep = malloc(sizeof(*rep));
    int rc = DR_EXIT_FAIL;
    if (!inv || !topo || !live || !rep) {
        fprintf(stderr, "gdrtrace doctor: out of memory\n");
        goto out;
    }
    dr_inventory_collect(inv, NULL);
    struct dr_options o = *opt;
    if (!o.no_live && inv->root[0] && !o.live) {
        o.no_live = 1;
        snprintf(o.no_live_why, sizeof(o.no_live_why),
                 "GDRTRACE_SYSFS_ROOT is set: the live CUDA/verbs probes would test this "
                 "machine, not that tree (--live forces them)");
    }
    dr_topo_compute(inv, topo);
    dr_live_run(inv, topo, &o, live);
    dr_checks_judge(inv, topo, live, &o, rep);
    if (json)
        dr_report_json(f, inv, topo, live, rep);
    else
        dr_report_text(f, inv, topo, live, rep);
    rc = rep->exit_code;
    dr_report_free(rep);
out:
    free(rep);
    free(live);
    free(topo);
    free(inv);
    return rc;
}

int gt_cmd_doctor(int argc, char **argv)
{
    struct dr_options opt = {.reg_size = 2u << 20};
    const char *cmp[2] = {NULL, NULL};
    int ncmp = 0, compare = 0, c;
    static const struct option opts[] = {{"json", no_argument, 0, 'j'},
                                         {"peermem", no_argument, 0, 'p'},
                                         {"no-live", no_argument, 0, 'n'},
                                         {"live", no_argument, 0, 'l'},
                                         {"dmabuf-source", required_argument, 0, 'd'},
                                         {"compare", no_argument, 0, 'c'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    opterr = 0; /* the message is ours: "gdrtrace doctor: ...", then the help */
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case 'j':
            opt.json = 1;
            break;
        case 'p':
            opt.peermem = 1;
            break;
        case 'n':
            opt.no_live = 1;
            snprintf(opt.no_live_why, sizeof(opt.no_live_why), "--no-live was given");
            break;
        case 'l':
            opt.live = 1;
            break;
        case 'd':
            if (strcmp(optarg, "vgem"))
                return usage_error("--dmabuf-source takes vgem, not", optarg);
            opt.vgem = 1;
            break;
        case 'c':
            compare = 1;
            break;
        default:
            return usage_error("unknown option or missing value:", argv[optind - 1]);
        }
        /* --compare's files follow it: take them before the next option */
        while (compare && optind < argc && argv[optind][0] != '-' && ncmp < 2)
            cmp[ncmp++] = argv[optind++];
    }
    if (optind < argc)
        return usage_error("unknown or misplaced argument", argv[optind]);
    if (opt.live && opt.no_live)
        return usage_error("--live and --no-live exclude each other", NULL);
    if (compare && ncmp == 0)
        return usage_error("--compare needs OTHER.json, or A.json B.json", NULL);
    if (!compare)
        return run(&opt, stdout, opt.json);

    /* one file: A = this node, B = the file; two files: A, B in order */
    char err[512] = "";
    char *a = NULL, *b = NULL;
    const char *a_label = ncmp == 2 ? cmp[0] : "this node", *b_label = cmp[ncmp - 1];
    b = slurp(b_label, err, sizeof(err));
    if (b && ncmp == 2) {
        a = slurp(a_label, err, sizeof(err));
    } else if (b) {
        size_t len = 0;
        FILE *mem = open_memstream(&a, &len);
        if (mem) {
            run(&opt, mem, 1);
            if (fclose(mem) != 0) {
                free(a);
                a = NULL;
            }
        }
        if (!a)
            snprintf(err, sizeof(err), "could not build this node's document: %s", strerror(errno));
    }
    int rc = -1;
    if (a && b)
        rc = dr_compare_docs(a, a_label, b, b_label, stdout, err, sizeof(err));
    free(a);
    free(b);
    if (rc < 0) {
        fprintf(stderr, "gdrtrace doctor: %s\n", err);
        return DR_EXIT_USAGE;
    }
    return rc;
}
