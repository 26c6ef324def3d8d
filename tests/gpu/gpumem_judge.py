# SPDX-License-Identifier: Apache-2.0
"""gpumem_judge.py — the judging half of tests/gpu/gpumem.sh (issue 20, the
GPU-memory validation mode): reads what one step's runs left behind and fails
on any disagreement.  Standard library only; reuses gpucheck.py's parsers.

  gpumem_judge.py step N RUNDIR --tool GDRTRACE [--nccl-version V]
      N = 0 (mode on, no NCCL_NET_GDR_LEVEL), 1 (GDR_LEVEL=SYS, DMA-BUF),
          2 (peermem emulated), 3a (import fails, peermem allowed: FALLBACK),
          3b (import fails, not allowed: ERROR), 4 (GDR_LEVEL=LOC)
  gpumem_judge.py ddp OUTDIR --tool GDRTRACE     step 5 (A/B DDP + diff)
  gpumem_judge.py bw OUTDIR                      step 6 (bandwidth table)

A RUNDIR holds what tests/gpu/run-all.sh's run_in leaves (stdout.txt, rc,
nccl.*.log, rec/, regcount/) and, for step 1, kcorr.txt (a `gdrtrace
summary` taken while the job ran).  Every check prints one line (ok/FAIL) and
NCCL's own lines are quoted; the last line is PASS or FAIL; exit 0 only if
nothing failed.
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpucheck  # noqa: E402

EMU = "(emulated: no NIC; GPU memory moved by CUDA copies)"
# NCCL's per-GPU decision (src/graph/paths.cc, ncclTopoCheckGdr): "GPU Direct RDMA
# Enabled for GPU 0 / HCA 0 (distance 8 <= 9), read 1 mode Default" or "... Disabled
# ... (distance 8 > 5)".  Not the per-NIC capability line of src/graph/topo.cc,
# "NET/gdrtrace : GPU Direct RDMA Enabled for HCA 0 'eth0'" (gpucheck.GDR_RE), which
# says only that the plugin offers GPU memory: it reads Enabled in every step.
GDR_PATH = re.compile(r"GPU Direct RDMA (?P<st>Enabled|Disabled) for GPU \d+ / HCA \w+.*")
DIST = re.compile(r"distance (\d+) (>|<=) (\d+)")


def nccl_lines(rundir):
    """(per-GPU gdr lines, per-NIC gdr lines, channel lines, warn lines) quoted
    from NCCL's own logs."""
    gdr, nic, chans, warns = [], [], [], []
    for path in sorted(glob.glob(os.path.join(rundir, "nccl.*.log"))):
        with open(path, errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                m = gpucheck.LINE_RE.match(line)
                msg = m["msg"] if m else line
                if (g := GDR_PATH.search(msg)):
                    gdr.append(g.group(0))
                elif gpucheck.GDR_RE.search(msg):
                    nic.append(msg)
                if gpucheck.CHAN_RE.search(msg):
                    chans.append(msg)
                if m and m["lvl"] == "WARN":
                    warns.append(msg)
    return gdr, nic, chans, warns


def tool(t, args, rundir, name):
    p = subprocess.run([t] + args, capture_output=True, text=True, timeout=120)
    with open(os.path.join(rundir, name), "w") as f:
        f.write(p.stdout)
        if p.stderr:
            f.write("\n# stderr:\n" + p.stderr)
    return p


def rc_of(rundir):
    try:
        return int(open(os.path.join(rundir, "rc")).read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def results_ok(j, rundir, max_bytes=None):
    rows = gpucheck.parse_results(os.path.join(rundir, "stdout.txt"))
    text = open(os.path.join(rundir, "stdout.txt"), errors="replace").read()
    bad = [r for r in rows if r["check"] != "OK" or r["errors"] != 0]
    j.ok("PASS: every result of every rank matched" in text and rows and not bad,
         f"nccl_check: {len(rows)} results, {len(bad)} wrong, sizes {min((r['bytes'] for r in rows), default=0)}"
         f"..{max((r['bytes'] for r in rows), default=0)} bytes")
    if max_bytes:
        for op in gpucheck.OPS:
            sizes = sorted(r["bytes"] for r in rows if r["op"] == op)
            j.ok(sizes and sizes[0] <= 16 and sizes[-1] >= max_bytes * 0.99,
                 f"{op}: every size from {sizes[0] if sizes else '-'} to "
                 f"{sizes[-1] if sizes else '-'} bytes checked element by element")


def quote(j, lines, what, n=2):
    for line in sorted(set(lines))[:n]:
        print(f"  NCCL: {line}")
    if not lines:
        print(f"  NCCL: (no {what} line)")


def reader(j, rundir, t):
    rec = os.path.join(rundir, "rec")
    pv = tool(t, ["verdict", "--json", rec], rundir, "verdict.json")
    tool(t, ["verdict", rec], rundir, "verdict.txt")
    ps = tool(t, ["summary", "--json", rec], rundir, "summary.json")
    tool(t, ["summary", "--full", rec], rundir, "summary.txt")
    try:
        return pv, json.loads(pv.stdout), json.loads(ps.stdout)
    except ValueError as e:
        j.ok(False, f"gdrtrace verdict/summary --json: {e}")
        return pv, {}, {}


def verdict_is(j, v, name, why_words=()):
    allv = v.get("all", {})
    want = f"{name} {EMU}"
    j.ok(allv.get("verdict") == want, f"verdict: {allv.get('verdict')} (want {want})")
    for c in v.get("communicators", []):
        why = c.get("why", "")
        good = c.get("verdict") == want and all(w in why for w in why_words)
        j.ok(good, f"comm {c.get('comm')}: {c.get('verdict')} — {why[:300]}")


def nic_offered(j, nic):
    """The plugin offered GPU memory: NCCL's per-NIC line says Enabled (what
    NCCL then decided per GPU is the per-GPU line's business)."""
    j.ok(nic and all(" GPU Direct RDMA Enabled for HCA" in x for x in nic),
         f"NCCL saw GPU memory offered ({len(nic)} line(s)): " + (nic[0] if nic else "no NIC line"))


def same_comms(j, rundir, v):
    s = gpucheck.nccl_summary(rundir)
    nccl_ids = set(s["comm_ids"])
    reader_ids = {c["comm"] for c in v.get("communicators", [])}
    j.ok(nccl_ids and nccl_ids == reader_ids,
         f"NCCL's commIds {sorted(nccl_ids)} == the verdict's {sorted(reader_ids)}")
    return s


def regs(sm):
    return {c["comm"]: gpucheck.reader_regs(c) for c in sm.get("communicators", [])}


def step(a):
    n, d = a.n, a.rundir
    j = gpucheck.Judge(f"issue 20 step {n} ({d})")
    rc = rc_of(d)
    gdr, nic, chans, warns = nccl_lines(d)
    gdrdma = [c for c in chans if "/GDRDMA" in c]
    if n != "3b":
        j.ok(rc == 0, f"the run exited {rc}")
    if a.nccl_version:
        text = open(os.path.join(d, "stdout.txt"), errors="replace").read()
        m = re.search(r"# nccl_version=(\d+)", text)
        j.ok(m is not None and m[1] == a.nccl_version,
             f"NCCL {m[1] if m else '?'} is the expected {a.nccl_version}")
    pv, v, sm = reader(j, d, a.tool)
    R = regs(sm)
    if n in ("0", "4"):
        results_ok(j, d)
        nic_offered(j, nic)
        quote(j, gdr, "GPU Direct RDMA")
        j.ok(gdr and all(g.startswith("GPU Direct RDMA Disabled") for g in gdr),
             f"NCCL kept GPU Direct off ({len(gdr)} line(s), all Disabled)")
        if n == "0":
            dist = [DIST.search(g) for g in gdr]
            j.ok(any(m and m[2] == ">" for m in dist),
                 "NCCL's topology decided: " + (gdr[0] if gdr else "no line"))
        j.ok(not gdrdma, f"no channel line ends in /GDRDMA ({len(chans)} NET channel lines)")
        quote(j, chans, "channel", 1)
        same_comms(j, d, v)
        j.ok(pv.returncode == 11, f"gdrtrace verdict exit {pv.returncode} (11 HOST-STAGED)")
        # "NCCL never asked …" (with GPU memory advertised: "… GDR disabled by NCCL
        # (GPU-NIC distance beyond NCCL_NET_GDR_LEVEL …)")
        verdict_is(j, v, "HOST-STAGED", ("never asked",))
        adv = [c.get("why", "") for c in v.get("communicators", [])]
        j.ok(adv and all("NCCL_NET_GDR_LEVEL" in w for w in adv),
             "the verdict names NCCL's decision (NCCL_NET_GDR_LEVEL) for every communicator")
        if n == "4":
            cmd = open(os.path.join(d, "command.txt"), errors="replace").read()
            j.ok("NCCL_NET_GDR_LEVEL=LOC" in cmd, "the run set NCCL_NET_GDR_LEVEL=LOC")
        for cid, r in sorted(R.items()):
            j.ok(r["cuda"] == 0 and r["dmabuf"] == 0,
                 f"comm {cid}: host {r['host']} cuda {r['cuda']} dmabuf {r['dmabuf']}: no GPU memory")
        return j.done()
    if n in ("1", "2", "3a"):
        results_ok(j, d, a.max_bytes if n == "1" else None)
        nic_offered(j, nic)
        quote(j, gdr, "GPU Direct RDMA")
        j.ok(gdr and all(g.startswith("GPU Direct RDMA Enabled") for g in gdr),
             f"NCCL enabled GPU Direct ({len(gdr)} line(s), all Enabled)")
        quote(j, gdrdma, "/GDRDMA channel", 2)
        j.ok(gdrdma and all("via NET/gdrtrace/" in c for c in gdrdma),
             f"{len(gdrdma)} of {len(chans)} channel lines via NET/gdrtrace/…/GDRDMA")
        same_comms(j, d, v)
        wc = gpucheck.read_regcount(d)
        wc = {k: x for k, x in wc.items() if k != "overflow"}
        for cid in sorted(set(wc) | set(R)):
            w, r = wc.get(cid), R.get(cid)
            if not w or not r:
                j.ok(False, f"comm {cid}: regcount {w} vs recorder {r}")
                continue
            j.ok(all(w[k] == r[k] for k in ("host", "cuda", "dmabuf", "dereg")),
                 f"comm {cid}: NCCL called regMr host {w['host']} cuda {w['cuda']} regMrDmaBuf "
                 f"{w['dmabuf']}, deregMr {w['dereg']}; the recorder: host {r['host']} cuda "
                 f"{r['cuda']} dmabuf {r['dmabuf']} dereg {r['dereg']}")
        tot = {k: sum(w[k] for w in wc.values()) for k in ("cuda", "dmabuf")} if wc else {}
        if n == "1":
            j.ok(tot.get("dmabuf", 0) > 0 and tot.get("cuda", 0) == 0,
                 f"NCCL registered with regMrDmaBuf ({tot.get('dmabuf', 0)}), never regMr(CUDA)")
            j.ok(pv.returncode == 0, f"gdrtrace verdict exit {pv.returncode}")
            verdict_is(j, v, "DIRECT-DMABUF")
            rec = os.path.join(d, "rec")
            e1 = tool(a.tool, ["verdict", "--expect", "dmabuf", rec], d, "expect.txt").returncode
            e2 = tool(a.tool, ["verdict", "--expect", "dmabuf", "--allow-emulated", rec], d,
                      "expect-allow.txt").returncode
            j.ok(e1 == 21 and e2 == 0,
                 f"verdict --expect dmabuf exits {e1} (21: emulated), with --allow-emulated {e2}")
            # the count is the recorder's traffic.flushes (tools/render/summary.c); NCCL 2.28 calls
            # iflush when getProperties says forceFlush=1 (src/graph/paths.cc
            # ncclTopoNeedFlush), else not on sm90 and later outside C2C platforms
            fl = sum(c.get("traffic", {}).get("flushes", 0) for c in sm.get("communicators", []))
            if a.force_flush:
                j.ok(fl > 0, f"GDRTRACE_GPUMEM_FORCE_FLUSH=1: NCCL flushed GPU receives ({fl} iflush)")
            else:
                print(f"  forceFlush 0: {fl} iflush call(s) (sm90 NCCL flushes none)")
        if n == "1" and not a.no_kcorr:
            kc = ""
            try:
                kc = open(os.path.join(d, "kcorr.txt"), errors="replace").read()
            except OSError:
                pass
            m = re.search(r"kernel: (\d+) dma-buf object\(s\), (\d+) exported by nv_dmabuf", kc)
            print("  " + "\n  ".join(l for l in kc.splitlines()
                                     if "kernel" in l or "nv_dmabuf" in l or "DMA-BUF" in l))
            if m:
                why = f"{m[2]} nv_dmabuf object(s) of {m[1]}"
            elif (nr := re.search(r"not readable: (.*)", kc)):
                why = f"no kernel line: bufinfo not readable ({nr[1].strip()})"
            elif "== kernel corroboration" not in kc:
                # `gdrtrace summary` prints the section only while a recorder is live here
                why = "no kernel line: no try saw a live recorder (kcorr-tries.txt)"
            else:
                why = "no kernel line"
            j.ok(m is not None and int(m[2]) > 0, "kernel corroboration while the job ran: " + why)
            j.ok(m is not None and (re.search(r"nv_dmabuf objects attached: 0\b", kc) is not None
                                    or " NIC " not in kc),
                 "NCCL's dma-bufs are exported, attached to no device (no NIC: emulated)")
        if n == "2":
            j.ok(tot.get("cuda", 0) > 0 and tot.get("dmabuf", 0) == 0,
                 f"NCCL registered with regMr(CUDA) ({tot.get('cuda', 0)}), never regMrDmaBuf")
            j.ok(pv.returncode == 10, f"gdrtrace verdict exit {pv.returncode} (10)")
            verdict_is(j, v, "DIRECT-PEERMEM")
        elif n == "3a":
            j.ok(pv.returncode == 13, f"gdrtrace verdict exit {pv.returncode} (13 FALLBACK)")
            verdict_is(j, v, "FALLBACK")
            # lines wrap at 100 columns: judge the words, not the line breaks
            txt = " ".join(open(os.path.join(d, "summary.txt"), errors="replace").read().split())
            j.ok("dmabuf-reg-failed" in txt and re.search(r"errno 5\b", txt) is not None,
                 "the recorder has the reason (dmabuf-reg-failed) and errno 5 per buffer")
        return j.done()
    if n == "3b":
        j.ok(rc is not None and rc != 0 and rc != 124 and rc < 128,
             f"NCCL failed the communicator with an error, no hang (timeout = 124) and no crash "
             f"(signal >= 128): exit {rc}")
        quote(j, warns, "WARN", 3)
        j.ok(any("GDRTRACE_GPUMEM_DMABUF_ERRNO=5" in w or "Input/output error" in w for w in warns),
             "NCCL's log carries our error")
        j.ok(pv.returncode == 14, f"gdrtrace verdict exit {pv.returncode} (14 ERROR)")
        allv = v.get("all", {})
        j.ok(allv.get("verdict") == f"ERROR {EMU}", f"verdict {allv.get('verdict')}")
        whys = " ".join(c.get("why", "") for c in v.get("communicators", []))
        print(f"  reader: {whys[:400]}")
        j.ok("GDRTRACE_GPUMEM_DMABUF_ERRNO=5" in whys or "dmabuf-reg-failed" in whys,
             "the verdict quotes the reason")
        return j.done()
    j.ok(False, f"unknown step {n}")
    return j.done()


def ddp(a):
    j = gpucheck.Judge(f"issue 20 step 5: DDP A/B ({a.outdir})")
    A, B, S = (os.path.join(a.outdir, x) for x in ("torch-dmabuf", "torch-peermem", "torch-socket"))
    for d in (A, B, S):
        j.ok(rc_of(d) == 0, f"{os.path.basename(d)} exited {rc_of(d)}")
    p = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "train_ddp.py"),
                        "compare", S + "/losses", A + "/losses", B + "/losses"],
                       capture_output=True, text=True)
    print("  " + "\n  ".join(p.stdout.splitlines()))
    j.ok(p.returncode == 0, "losses bit-equal: NCCL's Socket, DMA-BUF (emulated), peermem (emulated)")
    for d, want in ((A, "DIRECT-DMABUF"), (B, "DIRECT-PEERMEM")):
        vv = tool(a.tool, ["verdict", os.path.join(d, "rec")], d, "verdict.txt")
        line = [x for x in vv.stdout.splitlines() if x.startswith("all ")]
        j.ok(line and f"{want} {EMU}" in line[0], f"{os.path.basename(d)}: {line[0] if line else '-'}")
    df = tool(a.tool, ["diff", os.path.join(A, "rec"), os.path.join(B, "rec")], a.outdir,
              "diff.txt")
    print("  " + "\n  ".join(df.stdout.splitlines()[:40]))
    j.ok("differ only in the registration path" in df.stdout,
         f"gdrtrace diff: the runs differ only in the registration path (exit {df.returncode})")
    j.ok(re.search(r"p50|p95|p99", df.stdout) is not None,
         "gdrtrace diff shows per-operation latency percentiles side by side")
    return j.done()


def bw(a):
    j = gpucheck.Judge(f"issue 20 step 6: bandwidth ({a.outdir})")
    cfgs = ["gpumem", "gpumem-norec", "sock", "socket"]
    per = {}
    for c in cfgs:
        for d in sorted(glob.glob(os.path.join(a.outdir, f"bw-{c}-r*"))):
            for r in gpucheck.parse_results(os.path.join(d, "stdout.txt")):
                if r["check"] == "OK":
                    per.setdefault((c, r["op"], r["bytes"]), []).append(r["algbw"])
    keys = sorted({(op, b) for (_, op, b) in per})
    lines = ["| op | bytes | " + " | ".join(cfgs) + " | rec on/off |", "|---" * (len(cfgs) + 3) + "|"]
    ratios = []
    for op, b in keys:
        med = {c: statistics.median(per[(c, op, b)]) for c in cfgs if (c, op, b) in per}
        ratio = med["gpumem"] / med["gpumem-norec"] if "gpumem" in med and med.get("gpumem-norec") else None
        if ratio is not None:
            ratios.append(ratio)
        cells = " | ".join(f"{med[c]:.3f}" if c in med else "-" for c in cfgs)
        rtext = f"{ratio:.3f}" if ratio is not None else "-"
        lines.append(f"| {op} | {gpucheck.fmt_size(b)} | {cells} | {rtext} |")
    print("\n".join(lines))
    with open(os.path.join(a.outdir, "bw-table.md"), "w") as f:
        f.write("algorithm bandwidth, GB/s (median of rounds)\n\n" + "\n".join(lines) + "\n")
    j.ok(bool(keys), f"{len(keys)} (op, size) cells measured in every configuration")
    j.ok(ratios and statistics.median(ratios) >= 0.99,
         f"recorder on/off (gpumem): median ratio {statistics.median(ratios) if ratios else 0:.3f} "
         f"(target >= 0.99; cells {', '.join(f'{r:.3f}' for r in ratios)})")
    return j.done()


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("step")
    p.add_argument("n", choices=["0", "1", "2", "3a", "3b", "4"])
    p.add_argument("rundir")
    p.add_argument("--tool", required=True)
    p.add_argument("--nccl-version")
    p.add_argument("--max-bytes", type=int, default=1 << 30)
    p.add_argument("--force-flush", action="store_true", help="step 1 run with forceFlush=1")
    p.add_argument("--no-kcorr", action="store_true", help="step 1 run without a kcorr.txt")
    p = sub.add_parser("ddp")
    p.add_argument("outdir")
    p.add_argument("--tool", required=True)
    p = sub.add_parser("bw")
    p.add_argument("outdir")
    a = ap.parse_args()
    return {"step": step, "ddp": ddp, "bw": bw}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
