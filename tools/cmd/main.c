/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — `gdrtrace`: dispatch to a subcommand, git/ip style.
 * Owns only the table below; each subcommand lives in its own file.
 */
#include <stdio.h>
#include <string.h>

#include "common/env.h"
#include "tools/cmd/commands.h"
#include "tools/lib/esc.h"

struct subcommand {
    const char *name;
    int (*fn)(int, char **);
    const char *what;
};

static const struct subcommand subcommands[] = {
    {"ls", gt_cmd_ls, "list recorders and archives (live / exited / crashed)"},
    {"summary", gt_cmd_summary, "per process and communicator: methods, bytes, latency, verdict"},
    {"verdict", gt_cmd_verdict, "did NCCL use the direct GPU<->NIC path? (exit code says which)"},
    {"dump", gt_cmd_dump, "write a zstd archive of recorders"},
    {"diff", gt_cmd_diff, "A/B of two runs; warns when they differ beyond the registration path"},
    {"report", gt_cmd_report, "one self-contained HTML page: verdict grid, latency (A/B)"},
    {"watch", gt_cmd_watch, "live view of running jobs"},
    {"export", gt_cmd_export, "metrics as Prometheus text or JSON"},
    {"prune", gt_cmd_prune, "remove the recorders of exited and crashed processes"},
    {"run", gt_cmd_run, "run a job with the plugin, archive its recorders, print the verdict"},
    {"doctor", gt_cmd_doctor,
     "this node's identity, prerequisites and a real DMA-BUF registration"},
};

/* The one source of the command's overview: dist/gen-man.sh typesets this
 * text (and each subcommand's --help) into the man pages, and
 * dist/gen-completion.sh reads the "commands:" block below. */
static void usage(FILE *f)
{
    fprintf(f, "usage: gdrtrace <command> [options] [PATH...]\n"
               "       gdrtrace --version | --help\n"
               "Reads the flight recorders that the gdrtrace NCCL net plugin\n"
               "(libnccl-net-gdrtrace.so) leaves in $GDRTRACE_DIR (default /dev/shm), live\n"
               "or archived; runs a job with the plugin (run); and checks this node's GPU\n"
               "Direct prerequisites.\n"
               "\ncommands:\n");
    for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
        fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].what);
    fprintf(f, "\noptions:\n"
               "  -h, --help  this text; 'gdrtrace <command> --help' describes one command\n"
               "  --version   print 'gdrtrace VERSION' and exit 0\n"
               "\nexit: 64 usage error; each command documents its other codes\n");
}

/* An unknown command: its name, the nearest command (within 2 edits, or the
 * one command it begins), and the list on one line, not the whole help. */
static int unknown(const char *cmd)
{
    const char *best = NULL;
    int bd = 3, nprefix = 0;
    const char *prefixed = NULL;
    for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
        int d = (int)gt_edit_distance(cmd, subcommands[i].name);
        if (d < bd)
            bd = d, best = subcommands[i].name;
        if (*cmd && !strncmp(subcommands[i].name, cmd, strlen(cmd)))
            nprefix++, prefixed = subcommands[i].name;
    }
    if (nprefix == 1 && bd > 1) /* "pr": prune, not ls (2 edits) */
        best = prefixed;
    fprintf(stderr, "gdrtrace: unknown command '%s'", gt_esc(cmd));
    if (best)
        fprintf(stderr, "; did you mean '%s'?", best);
    fprintf(stderr, "\ncommands:");
    for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
        fprintf(stderr, " %s", subcommands[i].name);
    fprintf(stderr, " (gdrtrace --help describes them)\n");
    return GT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return GT_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("gdrtrace %s\n", GDRTRACE_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
        if (strcmp(argv[1], subcommands[i].name) != 0)
            continue;
        return subcommands[i].fn(argc - 1, argv + 1);
    }
    return unknown(argv[1]);
}
