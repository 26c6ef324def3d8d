# SPDX-License-Identifier: Apache-2.0
"""gpucheck.py — the judging half of tests/gpu/run-all.sh: reads what the runs
left behind and fails on any disagreement.  Standard library only (the GPU
machine has no registry).

  gpucheck.py ncclcheck RUNDIR              every op x size present and OK
  gpucheck.py nccllog RUNDIR --expect plugin|socket
                                            what NCCL's own log says (JSON)
  gpucheck.py reader RUNDIR --tool GDRTRACE [--regcount]
                                            gdrtrace verdict/summary against
                                            NCCL's log (and the regcount
                                            witness): same commIds,
                                            HOST-STAGED, same registrations
  gpucheck.py dmabuf RUNDIR --tool GDRTRACE the DMA-BUF export run
  gpucheck.py bwtable OUTDIR                markdown tables + target ratios

A RUNDIR holds: stdout.txt (the program's output), nccl.*.log (NCCL_DEBUG_FILE),
rec/ (GDRTRACE_DIR), regcount/ (the witness plugin's counts), and whatever the
step wrote.  Each subcommand prints what it checked, one line each, ending in
PASS or FAIL lines, and exits 0 only if nothing failed.
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys

DRIVER_COMM = "0xd3abf00d5eed"  # the commId tests/gpu/dmabuf_reg.c inits with
OPS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "sendrecv"]


class Judge:
    def __init__(self, what):
        self.what = what
        self.failed = 0

    def ok(self, cond, msg):
        print(f"  {'ok  ' if cond else 'FAIL'} {msg}")
        if not cond:
            self.failed += 1
        return cond

    def done(self):
        print(f"{'PASS' if not self.failed else 'FAIL'}: {self.what}"
              + (f" ({self.failed} check(s) failed)" if self.failed else ""))
        return 1 if self.failed else 0


# ---- nccl_check output -----------------------------------------------------

RESULT_RE = re.compile(r"^RESULT op=(\S+) bytes=(\d+) iters=(\d+) time_us=(\S+) "
                       r"algbw_GBps=(\S+) busbw_GBps=(\S+) errors=(-?\d+) check=(\S+)")


def parse_results(path):
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            m = RESULT_RE.match(line)
            if m:
                rows.append({"op": m[1], "bytes": int(m[2]), "iters": int(m[3]),
                             "time_us": float(m[4]), "algbw": float(m[5]),
                             "busbw": float(m[6]), "errors": int(m[7]), "check": m[8]})
    return rows


def cmd_ncclcheck(a):
    j = Judge(f"nccl_check results in {a.rundir}")
    out = os.path.join(a.rundir, "stdout.txt")
    rows = parse_results(out)
    text = open(out, errors="replace").read()
    j.ok("PASS: every result of every rank matched" in text, "nccl_check printed PASS")
    m = re.search(r"# nccl_version=(\d+)", text)
    j.ok(m is not None, f"NCCL version reported: {m[1] if m else '?'}")
    if a.expect_version:
        # The library the run really loaded, not the one it was built against.
        j.ok(m is not None and m[1] == a.expect_version,
             f"NCCL version {m[1] if m else '?'} is the expected {a.expect_version}")
    if a.min_bytes and a.max_bytes:
        for op in a.ops.split(","):
            sizes = sorted(r["bytes"] for r in rows if r["op"] == op)
            j.ok(sizes and sizes[0] <= a.min_bytes * 2 and sizes[-1] >= a.max_bytes * 0.99,
                 f"{op}: {len(sizes)} sizes from {sizes[0] if sizes else '-'} "
                 f"to {sizes[-1] if sizes else '-'} bytes")
    bad = [r for r in rows if r["check"] != "OK" or r["errors"] != 0]
    j.ok(rows and not bad, f"{len(rows)} results, {len(bad)} wrong"
         + (": " + ", ".join(f"{r['op']}@{r['bytes']}" for r in bad[:8]) if bad else ""))
    return j.done()


# ---- NCCL's own log --------------------------------------------------------

# NCCL 2.28 (src/debug.cc): "[%F %T] " first on levels NCCL_DEBUG_TIMESTAMP_LEVELS
# names (WARN by default), and "file:line " before "NCCL WARN" (and TRACE):
#   [2026-12-03 11:13:54] vm:2034:2047 [0] plugin/reg/gt_reg.c:500 NCCL WARN ...
LINE_RE = re.compile(r"^(?:\[[^\]]*\] )?(?P<host>[^:\s]+):(?P<pid>\d+):(?P<tid>\d+) \[\d+\] "
                     r"(?:[\d.]+ )?(?:\S+:\d+ )?NCCL (?P<lvl>\w+) (?P<msg>.*)$")
INIT_RE = re.compile(r"(?P<fn>ncclCommInit\w*|ncclCommSplit\w*) comm (?P<comm>0x[0-9a-f]+) rank "
                     r"(?P<rank>\d+) nranks (?P<nranks>\d+) .*commId (?P<id>0x[0-9a-f]+)"
                     r" - Init (?P<phase>START|COMPLETE)")
CHAN_RE = re.compile(r"Channel \d+/\d+ : .* via NET/(?P<net>[^/\s]+)/(?P<dev>\d+)(?P<rest>\S*)")
GDR_RE = re.compile(r"NET/(?P<net>\S+) : GPU Direct RDMA (?P<st>Enabled|Disabled) for HCA")


def parse_nccl_logs(rundir):
    """Everything the run's NCCL logs say, per process and per communicator."""
    procs = {}
    for path in sorted(glob.glob(os.path.join(rundir, "nccl.*.log"))):
        with open(path, errors="replace") as f:
            for line in f:
                m = LINE_RE.match(line.rstrip("\n"))
                if not m:
                    continue
                pid, tid, msg = m["pid"], m["tid"], m["msg"]
                p = procs.setdefault(pid, {"loaded": [], "unsupported": [], "assigned": [],
                                           "init_failed": [], "comms": {}, "pending": {},
                                           "gdr": [], "channels": [], "version": None,
                                           "warns": [], "dmabuf_avail": False})
                if m["lvl"] == "WARN":
                    p["warns"].append(msg)
                if (v := re.search(r"NCCL version (\S+)", msg)):
                    p["version"] = v[1]
                if (v := re.search(r"Loaded net plugin (\S+) \(v(\d+)\)", msg)):
                    p["loaded"].append({"name": v[1], "abi": int(v[2])})
                elif (v := re.search(r"Successfully loaded external (?:network )?plugin (\S+)",
                                     msg)):
                    p["loaded"].append({"name": v[1], "abi": None})
                if (v := re.search(r"External network plugin (\S+) is unsupported", msg)):
                    p["unsupported"].append(v[1])
                if (v := re.search(r"Failed to initialize NET plugin (\S+)", msg)):
                    p["init_failed"].append(v[1])
                if "DMA-BUF is available on GPU device" in msg:
                    p["dmabuf_avail"] = True
                if (v := re.search(r"Assigned NET plugin (\S+) to comm", msg)):
                    # the comm it belongs to is the next Init START in this thread
                    p["pending"].setdefault(tid, []).append(v[1])
                if (v := INIT_RE.search(msg)):
                    c = p["comms"].setdefault(v["id"], {"rank": int(v["rank"]),
                                                        "nranks": int(v["nranks"]),
                                                        "net": None, "complete": False})
                    if v["phase"] == "START":
                        q = p["pending"].get(tid)
                        if q:
                            c["net"] = q.pop(0)
                    else:
                        c["complete"] = True
                if (v := GDR_RE.search(msg)):
                    p["gdr"].append({"net": v["net"], "state": v["st"]})
                if (v := CHAN_RE.search(msg)):
                    p["channels"].append({"net": v["net"], "gdrdma": "GDRDMA" in v["rest"]})
    for p in procs.values():
        p["assigned"] = [c["net"] for c in p["comms"].values()]
        del p["pending"]
    return procs


def nccl_summary(rundir):
    procs = parse_nccl_logs(rundir)
    comm_ids = sorted({cid for p in procs.values() for cid in p["comms"]})
    return {"processes": len(procs), "procs": procs, "comm_ids": comm_ids}


def judge_nccllog(j, s, expect, plugin_path=None):
    procs = s["procs"]
    j.ok(len(procs) >= 2, f"NCCL logs of {len(procs)} processes")
    j.ok(len(s["comm_ids"]) >= 1, f"communicators in NCCL's log: {', '.join(s['comm_ids'])}")
    for pid, p in sorted(procs.items()):
        nets = sorted({c["net"] or "?" for c in p["comms"].values()})
        chans = p["channels"]
        gdr_chans = sum(1 for c in chans if c["gdrdma"])
        gdr = sorted({g["state"] for g in p["gdr"]})
        print(f"  pid {pid}: NCCL {p['version']}, loaded {[x['name'] for x in p['loaded']]}, "
              f"comms {len(p['comms'])} via {nets}, GPU Direct RDMA {gdr}, "
              f"{len(chans)} NET channel lines, {gdr_chans} with /GDRDMA")
        j.ok(all(c["complete"] for c in p["comms"].values()),
             f"pid {pid}: every communicator reached Init COMPLETE")
        j.ok(not p["unsupported"], f"pid {pid}: no 'External network plugin … is unsupported'")
        j.ok(all(c["net"] for c in p["comms"].values()),
             f"pid {pid}: an 'Assigned NET plugin … to comm' line for every communicator")
        if expect == "plugin":
            names = ", ".join(x["name"] + (" v%d" % x["abi"] if x["abi"] else "")
                              for x in p["loaded"])
            j.ok(p["loaded"], f"pid {pid}: NCCL says it loaded an external net plugin ({names})")
            j.ok(all(n not in ("Socket", "IB") for n in nets),
                 f"pid {pid}: communicators assigned to the plugin, not NCCL's own ({nets})")
            j.ok(chans and all(c["net"] not in ("Socket", "IB") for c in chans),
                 f"pid {pid}: channel lines go via NET/<plugin> ({sorted({c['net'] for c in chans})})")
        else:
            j.ok(nets == ["Socket"], f"pid {pid}: communicators on NCCL's Socket ({nets})")
        j.ok(gdr == ["Disabled"], f"pid {pid}: 'GPU Direct RDMA Disabled for HCA' only ({gdr})")
        j.ok(gdr_chans == 0, f"pid {pid}: no channel line ends in /GDRDMA")


def cmd_nccllog(a):
    j = Judge(f"NCCL log of {a.rundir} ({a.expect})")
    s = nccl_summary(a.rundir)
    judge_nccllog(j, s, a.expect)
    with open(os.path.join(a.rundir, "nccllog.json"), "w") as f:
        json.dump(s, f, indent=1)
    return j.done()


# ---- the reader against NCCL ----------------------------------------------

def run_tool(tool, args, rundir, name):
    p = subprocess.run([tool] + args, capture_output=True, text=True, timeout=60)
    with open(os.path.join(rundir, name), "w") as f:
        f.write(p.stdout)
        if p.stderr:
            f.write("\n# stderr:\n" + p.stderr)
    return p


def reader_regs(comm):
    """(host, cuda, dmabuf, failed, total) registrations of one summary comm."""
    regs = comm.get("registrations", {})
    by = {}
    failed = 0
    for asked, methods in regs.items():
        n = 0
        for meth, v in methods.items():
            n += v.get("count", 0)
            if meth == "failed":
                failed += v.get("count", 0)
        by[asked] = n
    total = sum(by.values())
    return {"host": by.get("host", 0), "cuda": by.get("cuda", 0),
            "dmabuf": by.get("dmabuf", 0), "failed": failed, "total": total,
            "dereg": comm.get("deregistrations", 0)}


def read_regcount(rundir):
    counts = {}
    for path in glob.glob(os.path.join(rundir, "regcount", "regcount.*.txt")):
        with open(path) as f:
            for line in f:
                t = line.split()
                if t and t[0] == "overflow":
                    counts.setdefault("overflow", {"total": 1})
                if len(t) >= 12 and t[0] == "comm":
                    c = counts.setdefault(t[1], {"host": 0, "cuda": 0, "dmabuf": 0,
                                                 "failed": 0, "dereg": 0})
                    kv = dict(zip(t[2::2], map(int, t[3::2])))
                    c["host"] += kv["reg_host"]
                    c["cuda"] += kv["reg_cuda"]
                    c["dmabuf"] += kv["reg_dmabuf"]
                    c["failed"] += kv["reg_failed"]
                    c["dereg"] += kv["dereg"]
    for c in counts.values():
        c["total"] = c.get("host", 0) + c.get("cuda", 0) + c.get("dmabuf", 0) + c.get("failed", 0)
    return counts


def cmd_reader(a):
    j = Judge(f"gdrtrace reader against NCCL's log in {a.rundir}")
    rec = os.path.join(a.rundir, "rec")
    s = nccl_summary(a.rundir)
    judge_nccllog(j, s, "plugin")
    recs = glob.glob(os.path.join(rec, "*"))
    j.ok(len(recs) == s["processes"],
         f"{len(recs)} recorder file(s) for {s['processes']} NCCL process(es)")

    pv = run_tool(a.tool, ["verdict", "--json", rec], a.rundir, "verdict.json")
    run_tool(a.tool, ["verdict", rec], a.rundir, "verdict.txt")
    ps = run_tool(a.tool, ["summary", "--json", rec], a.rundir, "summary.json")
    run_tool(a.tool, ["summary", rec], a.rundir, "summary.txt")
    try:
        v = json.loads(pv.stdout)
        sm = json.loads(ps.stdout)
    except ValueError as e:
        j.ok(False, f"gdrtrace verdict/summary --json parse: {e} (exit {pv.returncode}/"
             f"{ps.returncode}; stderr {pv.stderr.strip()[:200]})")
        return j.done()

    j.ok(pv.returncode == 11, f"gdrtrace verdict exit code {pv.returncode} (11 = HOST-STAGED)")
    allv = v.get("all", {}).get("verdict")
    j.ok(allv == "HOST-STAGED", f"verdict for the whole run: {allv} — {v.get('all', {}).get('why', '')}")
    rcomms = {c["comm"]: c for c in v.get("communicators", [])}
    for cid, c in sorted(rcomms.items()):
        j.ok(c["verdict"] == "HOST-STAGED",
             f"comm {cid}: {c['verdict']} over {c['processes']} process(es) — {c['why'][:160]}")
    nccl_ids = set(s["comm_ids"])
    reader_ids = set(rcomms)
    j.ok(nccl_ids == reader_ids,
         f"same communicators: NCCL {sorted(nccl_ids)} vs reader {sorted(reader_ids)}"
         + (f"; only in NCCL {sorted(nccl_ids - reader_ids)}, only in reader "
            f"{sorted(reader_ids - nccl_ids)}" if nccl_ids != reader_ids else ""))
    # ranks per communicator: NCCL's log says how many processes joined each
    nccl_members = {}
    for p in s["procs"].values():
        for cid in p["comms"]:
            nccl_members[cid] = nccl_members.get(cid, 0) + 1
    for cid in sorted(nccl_ids & reader_ids):
        j.ok(nccl_members[cid] == rcomms[cid]["processes"],
             f"comm {cid}: {nccl_members[cid]} process(es) in NCCL's log, "
             f"{rcomms[cid]['processes']} in the recorders")

    sums = {c["comm"]: reader_regs(c) for c in sm.get("communicators", [])}
    for cid, r in sorted(sums.items()):
        print(f"  recorder comm {cid}: registrations host {r['host']} cuda {r['cuda']} "
              f"dmabuf {r['dmabuf']} failed {r['failed']} (total {r['total']}), "
              f"deregistrations {r['dereg']}")
        j.ok(r["total"] > 0, f"comm {cid}: the recorder counted NCCL's registrations")
        j.ok(r["cuda"] == 0 and r["dmabuf"] == 0 and r["failed"] == 0,
             f"comm {cid}: NCCL only registered host memory (no GPU memory, no failures)")
    if a.regcount:
        wc = read_regcount(a.rundir)
        j.ok("overflow" not in wc, "regcount: no table overflow")
        j.ok("0x0" not in wc, "regcount: every registration mapped to a commId")
        wc = {k: v for k, v in wc.items() if k not in ("overflow",)}
        j.ok(set(wc) == set(sums),
             f"regcount saw communicators {sorted(wc)}, the recorder {sorted(sums)}")
        for cid in sorted(set(wc) & set(sums)):
            w, r = wc[cid], sums[cid]
            same = all(w[k] == r[k] for k in ("host", "cuda", "dmabuf", "total", "dereg"))
            j.ok(same, f"comm {cid}: NCCL called regMr/regMrDmaBuf host {w['host']} cuda "
                 f"{w['cuda']} dmabuf {w['dmabuf']} (failed {w['failed']}), deregMr {w['dereg']}; "
                 f"recorder host {r['host']} cuda {r['cuda']} dmabuf {r['dmabuf']}, "
                 f"dereg {r['dereg']}")
    with open(os.path.join(a.rundir, "reader-check.json"), "w") as f:
        json.dump({"nccl": s, "reader_comms": sorted(reader_ids), "regs": sums}, f, indent=1)
    return j.done()


# ---- DMA-BUF export run ----------------------------------------------------

def cmd_dmabuf(a):
    j = Judge(f"real DMA-BUF export through the plugin's registration path ({a.rundir})")
    out = open(os.path.join(a.rundir, "stdout.txt"), errors="replace").read()
    print("  " + "\n  ".join(l for l in out.splitlines() if l.startswith(("EXPORT", "REG", "#"))))
    j.ok(re.search(r"^EXPORT .*exp_name=nv_dmabuf", out, re.M) is not None,
         "the fd the plugin exported is a real dma-buf of exporter nv_dmabuf (fdinfo)")
    j.ok(re.search(r"^REG .*result=(?!0)\d+", out, re.M) is not None,
         "the registration then failed (no RDMA device to register into)")
    rec = os.path.join(a.rundir, "rec")
    pv = run_tool(a.tool, ["verdict", "--json", rec], a.rundir, "verdict.json")
    run_tool(a.tool, ["verdict", rec], a.rundir, "verdict.txt")
    ps = run_tool(a.tool, ["summary", "--json", rec], a.rundir, "summary.json")
    run_tool(a.tool, ["summary", rec], a.rundir, "summary.txt")
    try:
        v = json.loads(pv.stdout)
        sm = json.loads(ps.stdout)
    except ValueError as e:
        j.ok(False, f"gdrtrace --json parse: {e}")
        return j.done()
    allv = v.get("all", {})
    j.ok(allv.get("verdict") == "ERROR", f"reader verdict {allv.get('verdict')}: {allv.get('why')}")
    why = " ".join(c.get("why", "") for c in v.get("communicators", [])) + " " + allv.get("why", "")
    j.ok(re.search(r"No such device|no RDMA device|ENODEV|no NIC", why, re.I) is not None,
         "the reader says the registration failed for want of an RDMA device")
    comms = {c["comm"]: c for c in sm.get("communicators", [])}
    j.ok(list(comms) == [DRIVER_COMM],
         f"the reader lists exactly the driver's communicator {DRIVER_COMM}: {sorted(comms)}")
    c = comms.get(DRIVER_COMM)
    if c:
        r = reader_regs(c)
        err = c.get("errors", {})
        j.ok(r["cuda"] == 1 and r["failed"] == 1,
             f"recorder: NCCL-style regMr(CUDA) x{r['cuda']}, failed x{r['failed']}; errors "
             f"{err.get('count')} by reason {err.get('by_reason')}, last errno "
             f"{err.get('last_errno')}, last '{err.get('last_text', '')}'")
        # dmabuf-reg-failed (not cuda-export-failed) is the recorder's word that the
        # export succeeded and the import into a NIC failed.
        j.ok(err.get("last_errno") == 19 and any("dmabuf" in k and "reg" in k
                                                 for k in err.get("by_reason", {})),
             "recorder: the failure is the DMA-BUF import (export succeeded), errno 19 ENODEV")
    return j.done()


# ---- bandwidth tables ------------------------------------------------------

def fmt_size(b):
    for unit, k in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << k and b % (1 << k) == 0:
            return f"{b >> k} {unit}"
    return f"{b} B"


def sweep_dirs(base):
    """The full sweeps present: (prefix, NCCL version) for c-* and c928-*."""
    out = []
    for prefix in ("c", "c928"):
        for c in ("plugin", "socket", "norec"):
            path = os.path.join(base, f"{prefix}-{c}", "stdout.txt")
            if os.path.exists(path):
                m = re.search(r"# nccl_version=(\d+)", open(path, errors="replace").read())
                v = int(m[1]) if m else 0
                out.append((prefix, f"{v // 10000}.{v // 100 % 100}.{v % 100}" if v else "?"))
                break
    return out


def cmd_bwtable(a):
    j = Judge("bandwidth targets")
    base = a.outdir
    cfgs = [("plugin", "gdrtrace plugin"), ("socket", "NCCL Socket"),
            ("norec", "plugin, GDRTRACE_DISABLE=1")]
    lines = []
    # Full sweeps (one run per size): busbw per op x size x config.
    for prefix, version in sweep_dirs(base):
        sweep = {c: parse_results(os.path.join(base, f"{prefix}-{c}", "stdout.txt"))
                 for c, _ in cfgs
                 if os.path.exists(os.path.join(base, f"{prefix}-{c}", "stdout.txt"))}
        for op in OPS:
            lines.append(f"\n#### {op} — bus bandwidth, GB/s (full sweep, NCCL {version})\n")
            lines.append("| size | " + " | ".join(n for c, n in cfgs if c in sweep)
                         + " | plugin / Socket | rec on / off |")
            lines.append("|---:|" + "---:|" * (len([c for c, _ in cfgs if c in sweep]) + 2))
            sizes = sorted({r["bytes"] for rows in sweep.values() for r in rows if r["op"] == op})
            for b in sizes:
                v = {c: next((r["busbw"] for r in rows if r["op"] == op and r["bytes"] == b),
                             None) for c, rows in sweep.items()}
                cells = [f"{v[c]:.3f}" if v.get(c) is not None else "-"
                         for c, _ in cfgs if c in sweep]
                r1 = (f"{v['plugin'] / v['socket']:.2f}" if v.get("plugin") and v.get("socket")
                      else "-")
                r2 = (f"{v['plugin'] / v['norec']:.3f}" if v.get("plugin") and v.get("norec")
                      else "-")
                lines.append(f"| {fmt_size(b)} | " + " | ".join(cells) + f" | {r1} | {r2} |")
    # Repeated, interleaved rounds at >= 128 MiB: the targets, per op.
    rounds = {}
    for path in glob.glob(os.path.join(base, "bw-*", "stdout.txt")):
        cfg = os.path.basename(os.path.dirname(path)).split("-")[1]
        for r in parse_results(path):
            rounds.setdefault(r["op"], {}).setdefault(cfg, {}).setdefault(
                r["bytes"], []).append(r["busbw"])
    for op in [o for o in OPS if o in rounds]:
        per = rounds[op]
        n = max(len(v) for d in per.values() for v in d.values())
        lines.append(f"\n#### {op}, ≥ 128 MiB — bus bandwidth GB/s, median of {n} "
                     "interleaved runs per configuration (the targets)\n")
        lines.append("| size | gdrtrace plugin | NCCL Socket | plugin, GDRTRACE_DISABLE=1 | "
                     "plugin / Socket (≥ 1.0) | rec on / off (≥ 0.99) | runs (plugin) | "
                     "runs (Socket) |")
        lines.append("|---:|---:|---:|---:|---:|---:|---|---|")
        for b in sorted(per.get("plugin", {})):
            med = {c: statistics.median(per[c][b]) for c in per if b in per[c]}
            r1 = med["plugin"] / med["socket"] if "socket" in med else None
            r2 = med["plugin"] / med["norec"] if "norec" in med else None
            runs = ", ".join(f"{x:.3f}" for x in per["plugin"][b])
            sruns = ", ".join(f"{x:.3f}" for x in per.get("socket", {}).get(b, []))
            lines.append(f"| {fmt_size(b)} | {med['plugin']:.3f} | {med.get('socket', 0):.3f} | "
                         f"{med.get('norec', 0):.3f} | {r1:.3f} | {r2:.3f} | {runs} | {sruns} |"
                         if r1 is not None and r2 is not None
                         else f"| {fmt_size(b)} | incomplete |")
            if r1 is not None:
                j.ok(r1 >= 1.0, f"{op} {fmt_size(b)}: plugin / Socket = {r1:.3f} (target ≥ 1.0)")
            if r2 is not None:
                j.ok(r2 >= 0.99,
                     f"{op} {fmt_size(b)}: recorder on / off = {r2:.3f} (target ≥ 0.99)")
            j.ok(r1 is not None and r2 is not None, f"{op} {fmt_size(b)}: all three measured")
    if not rounds and not a.sweep_only:
        j.ok(False, "no bandwidth rounds found")
    name = "sweep-tables.md" if a.sweep_only else "bw-tables.md"
    with open(os.path.join(base, name), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return j.done()


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("ncclcheck")
    p.add_argument("rundir")
    p.add_argument("--min-bytes", type=int, default=8)
    p.add_argument("--max-bytes", type=int, default=1 << 30)
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--expect-version", help="the NCCL_VERSION_CODE the run must have loaded")
    p = sub.add_parser("nccllog")
    p.add_argument("rundir")
    p.add_argument("--expect", choices=["plugin", "socket"], required=True)
    p = sub.add_parser("reader")
    p.add_argument("rundir")
    p.add_argument("--tool", required=True)
    p.add_argument("--regcount", action="store_true")
    p = sub.add_parser("dmabuf")
    p.add_argument("rundir")
    p.add_argument("--tool", required=True)
    p = sub.add_parser("bwtable")
    p.add_argument("outdir")
    p.add_argument("--sweep-only", action="store_true",
                   help="tables of the full sweeps only; no rounds expected")
    a = ap.parse_args()
    return {"ncclcheck": cmd_ncclcheck, "nccllog": cmd_nccllog, "reader": cmd_reader,
            "dmabuf": cmd_dmabuf, "bwtable": cmd_bwtable}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
