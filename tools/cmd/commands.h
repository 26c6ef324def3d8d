/* SPDX-License-Identifier: Apache-2.0 */
/*
 * commands.h — the gdrtrace subcommands.  Each is int cmd(argc, argv) with
 * argv[0] the subcommand name, returning the process exit code (see
 * docs/reader.md for the codes).  Every subcommand is always linked in.
 */
#ifndef GDRTRACE_TOOLS_COMMANDS_H
#define GDRTRACE_TOOLS_COMMANDS_H

#include <stdio.h>

int gt_cmd_ls(int argc, char **argv);
int gt_cmd_summary(int argc, char **argv);
int gt_cmd_verdict(int argc, char **argv);
int gt_cmd_dump(int argc, char **argv);
int gt_cmd_diff(int argc, char **argv);
int gt_cmd_report(int argc, char **argv);
int gt_cmd_watch(int argc, char **argv);
int gt_cmd_export(int argc, char **argv);
int gt_cmd_doctor(int argc, char **argv);
int gt_cmd_prune(int argc, char **argv);
int gt_cmd_run(int argc, char **argv);

/* Exit code for usage errors, shared by every subcommand. */
#define GT_EXIT_USAGE 64
/* dump: no recorder among the inputs, so no archive written (never an
 * empty one). */
#define GT_EXIT_EMPTY 3

/* The last case of every subcommand's option switch: --help (c == 'h')
 * prints the usage on stdout and exits 0; an option getopt refused prints
 * it on stderr and exits GT_EXIT_USAGE.  c is what getopt_long returned. */
static inline int gt_usage_exit(int c, void (*usage)(FILE *))
{
    if (c == 'h') {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return GT_EXIT_USAGE;
}

#endif
