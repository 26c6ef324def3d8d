/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_watch.c — `gdrtrace watch [--interval S] [--count N] [--all] [PATH...]`:
 * re-reads the recorders every S seconds and redraws the summary of the
 * running jobs (plain terminal: ANSI clear when stdout is a terminal, plain
 * separators otherwise).  Ends on 'q' (stdin a terminal: non-canonical mode,
 * restored on exit), SIGINT/SIGTERM, or after N refreshes.  Exit 0.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/env.h"
#include "tools/commands.h"
#include "tools/report.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: gdrtrace watch [--interval S] [--count N] [--all] [--job J] [PATH...]\n"
               "  Live view: redraws the summary of running jobs every S seconds (default 2).\n"
               "  --all      include exited and crashed recorders (default: live ones only)\n"
               "  --count N  stop after N refreshes (for scripts and tests)\n"
               "  q or Ctrl-C quits.\n"
               "exit: 0, 64 usage\n");
}

int gt_cmd_watch(int argc, char **argv)
{
    static const struct option opts[] = {{"interval", required_argument, 0, 'i'},
                                         {"count", required_argument, 0, 'n'},
                                         {"all", no_argument, 0, 'a'},
                                         {"job", required_argument, 0, 'J'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    double interval = 2;
    long count = -1;
    int all = 0, c;
    const char *job = NULL;
    while ((c = getopt_long(argc, argv, "hi:n:a", opts, NULL)) != -1) {
        switch (c) {
        case 'i': {
            char *end;
            interval = strtod(optarg, &end);
            if (end == optarg || *end)
                interval = -1; /* refused below, naming the option */
            break;
        }
        case 'n':
            if (gt_parse_long(optarg, 1, 1000000000L, &count)) {
                fprintf(stderr, "gdrtrace watch: --count '%s' is not an integer in 1..1000000000\n",
                        optarg);
                return GT_EXIT_USAGE;
            }
            break;
        case 'a':
            all = 1;
            break;
        case 'J':
            job = optarg;
            break;
        default: /* --help, or an option getopt refused */
            return gt_usage_exit(c, usage);
        }
    }
    if (!(interval > 0) || interval > 86400) {
        fprintf(stderr, "gdrtrace watch: --interval must be a number of seconds in (0, 86400]\n");
        return GT_EXIT_USAGE;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int tty_in = isatty(STDIN_FILENO), tty_out = isatty(STDOUT_FILENO);
    struct termios saved, raw;
    if (tty_in && tcgetattr(STDIN_FILENO, &saved) == 0) {
        raw = saved;
        raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    } else {
        tty_in = 0;
    }
    for (long iter = 0; !stop && (count < 0 || iter < count); iter++) {
        struct gt_inputs in = {.quiet = 1, .job = job};
        gt_inputs_load(&in, argv + optind, argc - optind);
        if (!all) {
            size_t k = 0;
            for (size_t i = 0; i < in.n; i++) {
                if (in.recs[i].liveness == GT_LIVE_LIVE)
                    in.recs[k++] = in.recs[i];
                else
                    gt_recfile_free(&in.recs[i]);
            }
            in.n = k;
        }
        struct gt_job j;
        if (gt_job_build(&j, in.recs, in.n) == 0) {
            char ts[64];
            time_t now = time(NULL);
            struct tm tm;
            strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
            if (tty_out)
                fputs("\033[H\033[2J", stdout);
            else if (iter)
                fputs("\n", stdout);
            printf("gdrtrace watch  %s  every %.1fs  %zu recorder(s)%s%s\n", ts, interval, in.n,
                   all ? "" : " live", in.nbad ? "  (some unreadable)" : "");
            if (in.n)
                gt_report_text(stdout, &j, 0);
            else
                printf("no %srecorders in %s\n", all ? "" : "live ",
                       optind < argc ? argv[optind] : gt_default_dir());
            if (tty_in)
                printf("\n(q to quit)\n");
            fflush(stdout);
            gt_job_free(&j);
        }
        gt_inputs_free(&in);
        if (count >= 0 && iter + 1 >= count)
            break;
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        double left = interval;
        while (!stop && left > 0) {
            struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
            int r = poll(&p, tty_in ? 1 : 0, (int)(left * 1000) + 1);
            if (r > 0) {
                char ch;
                if (read(STDIN_FILENO, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
                    stop = 1;
            } else if (r < 0 && errno != EINTR) {
                break;
            }
            struct timespec t1;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            left = interval -
                   ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
        }
    }
    if (tty_in)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    return 0;
}
