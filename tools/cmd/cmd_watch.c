/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_watch.c — `gdrtrace watch`: samples the recorders every S seconds and
 * redraws one frame (tools/render/watch_frame.c) that fits the terminal: the job's
 * verdict, rates since the previous sample, then communicators and
 * processes most severe first.  This file owns the terminal:
 *  * the size: --rows/--cols, else TIOCGWINSZ on stdout (re-read on
 *    SIGWINCH, which redraws the last frame at once), else LINES/COLUMNS,
 *    else 24x80;
 *  * drawing in place on a terminal: cursor home, each line cleared to its
 *    end, the rest of the screen cleared below the frame; never a full
 *    clear between frames (no flicker); the cursor hidden while it runs;
 *  * keys: stdin a terminal is put in non-canonical mode for 'q';
 *  * the way out: 'q', SIGINT/SIGTERM/SIGHUP or the last of --frames N
 *    restore the terminal (mode, cursor) and exit 0; a second signal (while
 *    a large folder is being read) restores it from the handler and exits
 *    128+signal at once; Ctrl-Z (SIGTSTP) restores it before stopping and
 *    sets it again, redrawing, when continued.
 * Recorders are folded as they are read (bounded memory: inputs.h), live
 * ones only unless --all, so the verdict is the running job's.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/env.h"
#include "tools/cmd/commands.h"
#include "tools/cmd/options.h"
#include "tools/lib/esc.h"
#include "tools/lib/load.h"
#include "tools/render/watch_frame.h"

#define DIM_MAX 100000L

static volatile sig_atomic_t stop, winch, resumed;
/* What the handlers restore (a second SIGINT/SIGTERM, SIGTSTP) and set
 * again (SIGCONT after SIGTSTP). */
static struct termios saved_tio, raw_tio;
static volatile sig_atomic_t tio_saved, cursor_hidden;
static struct sigaction tstp_sa;

static void restore_terminal(void)
{
    if (tio_saved)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
    if (cursor_hidden) {
        static const char show[] = "\033[?25h\n";
        ssize_t w = write(STDOUT_FILENO, show, sizeof(show) - 1);
        (void)w; /* nothing to do about a terminal that went away */
    }
}

static void on_stop(int sig)
{
    if (stop) { /* the first one is waiting for a long read: leave now */
        restore_terminal();
        _exit(128 + sig);
    }
    stop = 1;
}

static void on_winch(int sig)
{
    (void)sig;
    winch = 1;
}

/* Ctrl-Z: the shell gets its terminal back as it was (mode, cursor), the
 * process stops; when continued, the mode and the hidden cursor are set
 * again and the main loop redraws from a cleared screen.  Only
 * async-signal-safe calls. */
static void on_tstp(int sig)
{
    int e = errno;
    restore_terminal();
    struct sigaction dfl = {0};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGTSTP, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTSTP);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig); /* stops here until SIGCONT */
    sigaction(SIGTSTP, &tstp_sa, NULL);
    if (tio_saved)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw_tio);
    if (cursor_hidden) {
        static const char hide[] = "\033[?25l";
        ssize_t w = write(STDOUT_FILENO, hide, sizeof(hide) - 1);
        (void)w;
    }
    resumed = 1;
    errno = e;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: gdrtrace watch [--interval S] [--frames N|--once] [--all] [--job J]\n"
               "                      [--rows R] [--cols C] [--accept-owner USER]... [PATH...]\n"
               "  Live view of the running job, redrawn in place every S seconds to fit the\n"
               "  terminal: the job's verdict, bytes/s, messages/s and registrations/s since\n"
               "  the previous frame (total, per process and per communicator; none on the\n"
               "  first frame: a rate needs two samples), then communicators and processes,\n"
               "  errors first, then fallbacks, then the rest; what does not fit is counted\n"
               "  on the last line.\n"
               "  --interval S  seconds between frames, in (0, 86400] (default 2)\n"
               "  --frames N    stop after N frames (--count N is the same)\n"
               "  --once        one frame (--frames 1)\n"
               "  --all         include exited and crashed recorders (default: live ones only)\n"
               "  --job J       only the recorders of job J (--job - : those without a job id)\n"
               "  --rows R      frame height in lines (default: the terminal's, else $LINES,\n"
               "                else 24; 0: no limit)\n"
               "  --cols C      frame width in columns (default: the terminal's, else\n"
               "                $COLUMNS, else 80; 0: no limit)\n" GT_ACCEPT_OWNER_USAGE
               "  q, Ctrl-C or SIGTERM quits and restores the terminal.\n"
               "exit: 0; 2 an input could not be read (in the last frame); 64 usage\n");
}

/* LINES or COLUMNS when set to a number in 1..DIM_MAX; else dflt (one
 * warning for a value that is not one). */
static int env_dim(const char *name, int dflt, int *warned)
{
    const char *v = getenv(name);
    long x;
    if (!v || !*v)
        return dflt;
    if (gt_parse_long(v, 1, DIM_MAX, &x)) {
        if (!*warned)
            fprintf(stderr, "gdrtrace watch: %s='%s' is not a number in 1..%ld; using %d\n", name,
                    gt_esc(v), DIM_MAX, dflt);
        *warned = 1;
        return dflt;
    }
    return (int)x;
}

/* The frame's size now: the options, else the terminal's, else the
 * environment's, else 24x80. */
static void frame_size(int tty_out, long opt_rows, long opt_cols, int *rows, int *cols)
{
    static int warned_l, warned_c;
    int r = -1, c = -1;
    struct winsize ws;
    if (tty_out && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
        r = ws.ws_row ? ws.ws_row : -1; /* 0: a terminal that does not know its size */
        c = ws.ws_col ? ws.ws_col : -1;
    }
    if (r < 0 && opt_rows < 0)
        r = env_dim("LINES", 24, &warned_l);
    if (c < 0 && opt_cols < 0)
        c = env_dim("COLUMNS", 80, &warned_c);
    *rows = opt_rows >= 0 ? (int)opt_rows : r;
    *cols = opt_cols >= 0 ? (int)opt_cols : c;
}

static void draw(const struct gt_watch_frame *f, int tty_out, long opt_rows, long opt_cols,
                 long iter)
{
    int rows, cols;
    frame_size(tty_out, opt_rows, opt_cols, &rows, &cols);
    if (tty_out)
        fputs("\033[H", stdout);
    else if (iter)
        fputc('\n', stdout); /* one blank line between frames */
    gt_watch_frame_render(stdout, f, rows, cols, tty_out);
    fflush(stdout);
}

static double mono_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int dim_opt(const char *opt, const char *v, long *out)
{
    if (gt_parse_long(v, 0, DIM_MAX, out)) {
        fprintf(stderr, "gdrtrace watch: %s '%s' is not an integer in 0..%ld (0: no limit)\n", opt,
                gt_esc(v), DIM_MAX);
        return -1;
    }
    return 0;
}

/* What watch's steps share. */
struct watch {
    struct gt_opts o;
    double interval;
    long count, opt_rows, opt_cols;
    int all, tty_in, tty_out;
    char **paths;
    int npaths;
    const char *where; /* named in the frame when nothing is found */
    struct gt_watch w;
    struct gt_watch_frame f;
    int have_frame, last_bad;
};

/* -1: go on; else the exit code */
static int parse(struct watch *v, int argc, char **argv)
{
    static const struct option opts[] = {{"interval", required_argument, 0, 'i'},
                                         {"count", required_argument, 0, 'n'},
                                         {"frames", required_argument, 0, 'n'},
                                         {"once", no_argument, 0, '1'},
                                         {"all", no_argument, 0, 'a'},
                                         GT_LONG_JOB,
                                         {"rows", required_argument, 0, 'R'},
                                         {"cols", required_argument, 0, 'C'},
                                         GT_LONG_ACCEPT_OWNER,
                                         GT_LONG_HELP,
                                         {0, 0, 0, 0}};
    int c, rc;
    while ((c = getopt_long(argc, argv, "hi:n:a", opts, NULL)) != -1) {
        switch (c) {
        case 'i': {
            char *end;
            v->interval = strtod(optarg, &end);
            if (end == optarg || *end)
                v->interval = -1; /* refused below, naming the option */
            break;
        }
        case 'n':
            if (gt_parse_long(optarg, 1, 1000000000L, &v->count)) {
                fprintf(stderr,
                        "gdrtrace watch: --frames/--count '%s' is not an integer in "
                        "1..1000000000\n",
                        gt_esc(optarg));
                return GT_EXIT_USAGE;
            }
            break;
        case '1':
            v->count = 1;
            break;
        case 'a':
            v->all = 1;
            break;
        case 'R':
            if (dim_opt("--rows", optarg, &v->opt_rows))
                return GT_EXIT_USAGE;
            break;
        case 'C':
            if (dim_opt("--cols", optarg, &v->opt_cols))
                return GT_EXIT_USAGE;
            break;
        default:
            if ((rc = gt_opts_default(&v->o, c, optarg, usage)) >= 0)
                return rc;
        }
    }
    if (!(v->interval > 0) || v->interval > 86400) {
        fprintf(stderr, "gdrtrace watch: --interval must be a number of seconds in (0, 86400]\n");
        return GT_EXIT_USAGE;
    }
    v->paths = argv + optind;
    v->npaths = argc - optind;
    v->where = optind < argc ? argv[optind] : gt_default_dir();
    return -1;
}

/* The terminal taken: stdin in non-canonical mode for 'q', the signals
 * handled, the cursor hidden and the screen cleared once. */
static void take_terminal(struct watch *v)
{
    v->tty_in = isatty(STDIN_FILENO);
    v->tty_out = isatty(STDOUT_FILENO);
    /* one write per frame on a terminal: never half a frame on screen */
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    if (v->tty_in && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
        raw_tio = saved_tio;
        raw_tio.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
        raw_tio.c_cc[VMIN] = 0;
        raw_tio.c_cc[VTIME] = 0;
        tio_saved = 1;
        tcsetattr(STDIN_FILENO, TCSANOW, &raw_tio);
    } else {
        v->tty_in = 0;
    }
    struct sigaction sa = {0};
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop; /* no SA_RESTART: poll() returns at once */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_winch;
    sigaction(SIGWINCH, &sa, NULL);
    if (tio_saved || v->tty_out) {
        tstp_sa = sa;
        tstp_sa.sa_handler = on_tstp;
        sigaction(SIGTSTP, &tstp_sa, NULL);
    }
    if (v->tty_out) {
        fputs("\033[?25l\033[H\033[2J", stdout); /* cursor hidden; the screen cleared once */
        fflush(stdout);
        cursor_hidden = 1;
    }
}

/* The title and, when nothing was found, the verdict line of frame f. */
static void frame_text(const struct watch *v, struct gt_watch_frame *f, const struct gt_inputs *in,
                       time_t wall)
{
    char ts[64], bad[64] = "";
    struct tm tm;
    strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", localtime_r(&wall, &tm));
    if (in->nbad)
        snprintf(bad, sizeof(bad), ", %d unreadable", in->nbad);
    snprintf(f->title, sizeof(f->title), "gdrtrace watch  %s  every %gs  %zu%s recorder(s)%s%s", ts,
             v->interval, in->n, v->all ? "" : " live", bad, v->tty_in ? "  q quits" : "");
    if (in->n)
        return;
    char dead[96] = "";
    if (in->skip_dead)
        snprintf(dead, sizeof(dead), " (%d not running: --all shows them)", in->skip_dead);
    snprintf(f->verdict, sizeof(f->verdict), "all %s  no %srecorders in %s%s",
             gt_verdict_name(GT_V_NO_DATA), v->all ? "" : "live ", gt_esc(v->where), dead);
}

/* One sample of the recorders, drawn as frame iter; 0, or -1 when a
 * signal came while they were read. */
static int sample(struct watch *v, long iter, double t0)
{
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    struct gt_job j;
    /* On a terminal a problem on stderr would tear the frame: the title
     * counts them, and the exit says so.  Elsewhere (--once into a file)
     * each is named as every other subcommand names it. */
    struct gt_inputs in = {
        .quiet = v->tty_out, .quiet_empty = 1, .job = v->o.job, .live_only = !v->all, .fold = &j};
    gt_inputs_take_owners(&in, &v->o.owners);
    gt_load_job(v->paths, v->npaths, &in, &j);
    v->last_bad = in.nbad;
    int rc = stop ? -1 : 0;
    struct gt_watch_frame nf;
    if (!rc && gt_watch_frame_build(&v->w, &j, t0, (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec,
                                    &nf) == 0) {
        gt_watch_frame_free(&v->f);
        v->f = nf;
        v->have_frame = 1;
        frame_text(v, &v->f, &in, wall.tv_sec);
        draw(&v->f, v->tty_out, v->opt_rows, v->opt_cols, iter);
    }
    gt_job_free(&j);
    gt_inputs_free(&in);
    return rc;
}

/* Until the next sample is due (interval after t0), redrawing on SIGWINCH
 * or SIGCONT; 'q' or a signal stops. */
static void wait_next(struct watch *v, double t0)
{
    for (;;) {
        if (winch || resumed) {
            if (resumed && v->tty_out) /* the shell wrote on the screen meanwhile */
                fputs("\033[H\033[2J", stdout);
            winch = resumed = 0;
            if (v->have_frame)
                draw(&v->f, v->tty_out, v->opt_rows, v->opt_cols, 0);
        }
        double left = t0 + v->interval - mono_now();
        if (stop || left <= 0)
            return;
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        int r = poll(&p, v->tty_in ? 1 : 0, (int)(left * 1000) + 1);
        if (r > 0) {
            char ch;
            if (read(STDIN_FILENO, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
                stop = 1;
            if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) /* the terminal went away */
                stop = 1;
        } else if (r < 0 && errno != EINTR) {
            return;
        }
    }
}

int gt_cmd_watch(int argc, char **argv)
{
    struct watch v = {
        .o = GT_OPTS_INIT("watch"), .interval = 2, .count = -1, .opt_rows = -1, .opt_cols = -1};
    int rc = parse(&v, argc, argv);
    if (rc >= 0)
        return rc;
    take_terminal(&v);
    for (long iter = 0; !stop && (v.count < 0 || iter < v.count); iter++) {
        double t0 = mono_now();
        if (sample(&v, iter, t0))
            break;
        if (v.count >= 0 && iter + 1 >= v.count)
            break;
        wait_next(&v, t0);
    }
    gt_watch_frame_free(&v.f);
    gt_watch_free(&v.w);
    fflush(stdout);
    restore_terminal();
    if (v.last_bad && v.tty_out)
        fprintf(stderr, "gdrtrace watch: %d input(s) could not be read (gdrtrace ls names why)\n",
                v.last_bad);
    return v.last_bad ? GT_EXIT_INPUT : 0;
}
