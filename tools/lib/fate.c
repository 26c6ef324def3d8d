/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fate.c — what became of a process, from its recorder alone (model.h,
 * gt_recfile_fate): refused by the plugin, or died (or still is) inside a
 * call into code gdrtrace does not own.  Invariant: reads only the recorder
 * it is given (its identity, callees and events), never the machine.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tools/lib/model.h"

/* ---- a process's fate (issues 23, 19.1) -------------------------------- */

#define OPEN_CALLS 64

static void fmt_wall(const struct gt_recfile *r, uint64_t ticks, char *buf, size_t n)
{
    double rel = gt_recfile_ts_rel_s(r, ticks);
    double wall = (double)r->id.start_wall_ns / 1e9 + rel;
    if (!(wall > 0 && wall < 4e10)) { /* hostile or unset: say so, never UB */
        snprintf(buf, n, "+%.3fs after the recorder opened", rel);
        return;
    }
    time_t sec = (time_t)wall;
    int ms = (int)((wall - (double)sec) * 1000.0);
    struct tm tm;
    gmtime_r(&sec, &tm);
    char d[32];
    strftime(d, sizeof(d), "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf, n, "%s.%03d UTC", d, ms < 0 ? 0 : ms > 999 ? 999 : ms);
}

static void who(const struct gt_recfile *r, char *buf, size_t n)
{
    snprintf(buf, n, "host %s, pid %d", r->id.host, r->id.pid);
    if (r->id.rank >= 0)
        gt_appendf(buf, n, ", rank %d", r->id.rank);
    if (r->id.job[0])
        gt_appendf(buf, n, ", job %s", r->id.job);
}

/* "the inner plugin's init (PATH, ABI v8)" / "libibverbs' device
 * enumeration (PATH)" for an open CALLING event. */
static void call_text(const struct gt_recfile *r, const struct gtr_event *e, char *buf, size_t n)
{
    const char *site = gt_call_site_name((int)e->a0);
    char sitebuf[24];
    if (!site) {
        snprintf(sitebuf, sizeof(sitebuf), "call#%llu", (unsigned long long)e->a0);
        site = sitebuf;
    }
    const struct gtr_callee *c =
        e->a2 < r->ncallee && r->callees[e->a2].in_use ? &r->callees[e->a2] : NULL;
    const char *kind = c && c->kind[0] ? c->kind : "code gdrtrace does not own";
    size_t kl = strlen(kind);
    if (!strcmp(kind, "inner plugin"))
        snprintf(buf, n, "the inner plugin's %s", site);
    else
        snprintf(buf, n, "%s%s %s", kind, kl && kind[kl - 1] == 's' ? "'" : "'s", site);
    if (e->a0 == GT_CALL_INNER_LOAD)
        gt_appendf(buf, n, " (dlopen)");
    gt_appendf(buf, n, " (%s", c && c->path[0] ? c->path : "library not recorded");
    if (e->aux)
        gt_appendf(buf, n, ", ABI v%u", e->aux);
    if (e->dev >= 0)
        gt_appendf(buf, n, ", device %d", e->dev);
    gt_appendf(buf, n, ")");
}

void gt_recfile_fate(const struct gt_recfile *r, struct gt_fate *f)
{
    memset(f, 0, sizeof(*f));
    f->code = GT_V_NO_DATA;
    struct gtr_event open[OPEN_CALLS], refused = {0}, e;
    size_t nopen = 0;
    int have_refused = 0;
    uint64_t pos = 0;
    while (gt_recfile_event_next(r, &pos, &e)) {
        switch (e.type) {
        case GTR_EV_CALLING:
            if (nopen == OPEN_CALLS) { /* keep the newest: drop the oldest */
                memmove(open, open + 1, (OPEN_CALLS - 1) * sizeof(open[0]));
                nopen--;
            }
            open[nopen++] = e;
            break;
        case GTR_EV_RETURNED:
            for (size_t i = nopen; i-- > 0;)
                if (open[i].a1 == e.a1) {
                    memmove(open + i, open + i + 1, (nopen - i - 1) * sizeof(open[0]));
                    nopen--;
                    break;
                }
            break;
        case GTR_EV_REFUSED:
            refused = e;
            have_refused = 1;
            break;
        case GTR_EV_TRANSPORT:
        case GTR_EV_INIT:
            have_refused = 0; /* a later init was served */
            break;
        default:
            break;
        }
    }
    char when[48], whom[256], what[640];
    if (nopen) {
        const struct gtr_event *c = &open[nopen - 1];
        call_text(r, c, what, sizeof(what));
        fmt_wall(r, c->ts, when, sizeof(when));
        who(r, whom, sizeof(whom));
        f->site = (int)c->a0;
        if (r->hdr.state == GTR_STATE_CLOSED) {
            f->kind = GT_FATE_EXITED_IN_CALL;
            f->code = GT_V_ERROR;
            snprintf(f->text, sizeof(f->text),
                     "exited inside %s, called at %s (thread %u), before it returned; %s", what,
                     when, c->tid, whom);
        } else if (r->liveness == GT_LIVE_LIVE) {
            f->kind = GT_FATE_IN_CALL;
            snprintf(f->text, sizeof(f->text), "inside %s since %s (thread %u), still running; %s",
                     what, when, c->tid, whom);
        } else {
            f->kind = GT_FATE_CRASHED_IN_CALL;
            f->code = GT_V_ERROR;
            snprintf(f->text, sizeof(f->text),
                     "crashed inside %s, called at %s (thread %u), which never returned; %s", what,
                     when, c->tid, whom);
        }
        return;
    }
    if (have_refused) {
        fmt_wall(r, refused.ts, when, sizeof(when));
        who(r, whom, sizeof(whom));
        f->kind = GT_FATE_REFUSED;
        f->code = GT_V_BYPASSED;
        f->reason = (int)refused.aux;
        snprintf(f->text, sizeof(f->text),
                 "the plugin refused this process at %s: \"%s\" (%s); NCCL ran it on its "
                 "internal transports, unobserved; %s",
                 when, r->id.transport_why[0] ? r->id.transport_why : "no reason recorded",
                 gt_reason_name(f->reason), whom);
    }
}
