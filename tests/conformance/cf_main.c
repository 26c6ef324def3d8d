/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cf_main.c — gdrtrace-conform: NCCL's call patterns against any net plugin
 * library (docs/conformance.md).
 *
 *   gdrtrace-conform [--abi N] [--dev D] [--pattern NAME] [--timeout S] [-v] PLUGIN.so
 *   gdrtrace-conform --list
 *
 * Exit: 0 every pattern run passed (skips allowed, at least one pass);
 * 1 a pattern failed; 2 bad usage or a library that cannot be loaded.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/conformance/cf.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gdrtrace-conform [options] PLUGIN.so\n"
               "Plays NCCL's net-plugin call patterns (grouped receives, shared senders, "
               "retries,\n"
               "zero-byte and oversize sends, flush, many comms, close in flight, 2 x 8 "
               "ranks)\n"
               "against PLUGIN.so through its highest ncclNetPlugin_vN (v6 … v12).\n"
               "  --abi N        use ncclNetPlugin_vN instead of the highest\n"
               "  --dev D        the device every connection uses (default 0)\n"
               "  --pattern NAME run one pattern (--list names them)\n"
               "  --timeout S    a pattern still running after S seconds fails (default 120)\n"
               "  -v, --verbose  print each pattern's figures\n"
               "  --list         list the patterns and exit\n"
               "exit: 0 all passed, 1 a pattern failed, 2 bad usage or unloadable plugin\n");
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"abi", required_argument, NULL, 'a'},     {"dev", required_argument, NULL, 'd'},
        {"pattern", required_argument, NULL, 'p'}, {"timeout", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},       {"list", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    struct cf_opts o = {.dev = 0, .watchdog_s = 120};
    int abi = 0, c;
    setvbuf(stdout, NULL, _IOLBF, 0);
    while ((c = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'a':
            abi = (int)strtol(optarg, &end, 10);
            if (!*optarg || *end || abi < 1) {
                fprintf(stderr, "gdrtrace-conform: --abi '%s': a version number (6 … 12)\n",
                        optarg);
                return 2;
            }
            break;
        case 'd':
            o.dev = (int)strtol(optarg, &end, 10);
            if (!*optarg || *end || o.dev < 0) {
                fprintf(stderr, "gdrtrace-conform: --dev '%s': a device index >= 0\n", optarg);
                return 2;
            }
            break;
        case 'p':
            o.only = optarg;
            break;
        case 't':
            o.watchdog_s = (int)strtol(optarg, &end, 10);
            if (!*optarg || *end || o.watchdog_s < 1) {
                fprintf(stderr, "gdrtrace-conform: --timeout '%s': seconds >= 1\n", optarg);
                return 2;
            }
            break;
        case 'v':
            o.verbose = 1;
            break;
        case 'l':
            for (int i = 0; i < cf_npatterns; i++)
                printf("%-16s %s\n", cf_patterns[i].name, cf_patterns[i].what);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "gdrtrace-conform: one plugin library expected\n");
        usage(stderr);
        return 2;
    }
    struct cf_net n;
    if (cf_dl_open(&n, argv[optind], abi))
        return 2;
    int rc = cf_run_all(&n, &o);
    return rc == 2 ? 2 : rc;
}
