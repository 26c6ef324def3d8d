/* SPDX-License-Identifier: Apache-2.0 */
/*
 * options.h — the options the reader commands share, parsed in one place:
 * --json, --help, -o/--output FILE, -f/--force, --job J, --accept-owner
 * USER|UID, --full, --no-bars and --expect dmabuf|peermem|host.  Each
 * command keeps its own getopt loop and option table (the options only it
 * takes stay in its file); its table names the shared ones with the GT_LONG_*
 * entries below and its switch hands every code it does not own to
 * gt_opts_default().  One parser per option means one error text per option:
 * "gdrtrace CMD: ..." with CMD the command, as the CLI tests pin it.
 */
#ifndef GDRTRACE_TOOLS_CMD_OPTIONS_H
#define GDRTRACE_TOOLS_CMD_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

#include "tools/lib/inputs.h"

/* getopt codes of the shared options: a short option's letter where it has
 * one (-j, -h, -o, -f; -x is verdict's --expect), else above any letter so
 * that a command's own letters never collide with them. */
enum {
    GT_OPT_JSON = 'j',
    GT_OPT_HELP = 'h',
    GT_OPT_OUTPUT = 'o',
    GT_OPT_FORCE = 'f',
    GT_OPT_EXPECT = 'x',
    GT_OPT_JOB = 0x100,
    GT_OPT_ACCEPT_OWNER,
    GT_OPT_FULL,
    GT_OPT_NO_BARS,
};

// clang-format off
/* one table entry a line */
#define GT_LONG_JSON         {"json", no_argument, 0, GT_OPT_JSON}
#define GT_LONG_HELP         {"help", no_argument, 0, GT_OPT_HELP}
#define GT_LONG_OUTPUT       {"output", required_argument, 0, GT_OPT_OUTPUT}
#define GT_LONG_FORCE        {"force", no_argument, 0, GT_OPT_FORCE}
#define GT_LONG_EXPECT       {"expect", required_argument, 0, GT_OPT_EXPECT}
#define GT_LONG_JOB          {"job", required_argument, 0, GT_OPT_JOB}
#define GT_LONG_ACCEPT_OWNER {"accept-owner", required_argument, 0, GT_OPT_ACCEPT_OWNER}
#define GT_LONG_FULL         {"full", no_argument, 0, GT_OPT_FULL}
#define GT_LONG_NO_BARS      {"no-bars", no_argument, 0, GT_OPT_NO_BARS}
// clang-format on

/* What the shared options said.  Start from GT_OPTS_INIT("cmd"). */
struct gt_opts {
    const char *cmd; /* the command's name, for "gdrtrace CMD: ..." messages */
    int json, full, force, no_bars;
    const char *out;        /* -o FILE, NULL when not given */
    const char *job;        /* --job J, NULL when not given */
    int expect;             /* --expect's GT_V_* code, -1 when not given */
    const char *expect_arg; /* --expect's word as given (run passes it on) */
    /* --accept-owner's owners, for gt_inputs_take_owners() */
    struct gt_inputs owners;
};
#define GT_OPTS_INIT(name)                                                                         \
    {                                                                                              \
        .cmd = (name), .expect = -1                                                                \
    }

/* --expect's word: GT_V_DIRECT_DMABUF (dmabuf), GT_V_DIRECT_PEERMEM
 * (peermem) or GT_V_HOST_STAGED (host); -1, with the message on stderr,
 * for any other word. */
int gt_parse_expect(const char *cmd, const char *arg);

/* The last case of a command's option switch: takes a shared option (c,
 * with arg its optarg) into o and returns -1: go on parsing.  Else the exit
 * code the command returns at once: 0 after --help (usage on stdout),
 * GT_EXIT_USAGE after an option getopt refused (usage on stderr) or a
 * shared option's value refused (its message on stderr). */
int gt_opts_default(struct gt_opts *o, int c, const char *arg, void (*usage)(FILE *));

#endif
