# SPDX-License-Identifier: Apache-2.0
"""profiler_judge.py — the judgements of tests/gpu/profiler.sh, from a case
folder (nccl-tests' stdout.txt, collstat.tsv of the recorders).

  profiler_judge.py CASE counts [p50] --w W --n N --c C --func F --nranks R
        [--mode M] [--env-set TEXT]
      every rank: per size nccl-tests printed, the cell (F, floor(log2 size))
      counts W + 2 x (1 + N + C) operations (warm-up, then out-of-place and
      in-place, each a sync op, N timed, C checks); rank/nRanks from NCCL;
      p50: for sizes >= 1 MiB the cell's p50 is within 10 % of nccl-tests'
      time (the mean of its out-of-place and in-place columns)
  profiler_judge.py CASE slo --bench B --w W --n N --c C --nranks R [--mode M]
        [--inspector ICASE] [--no-mean]
      the collective SLO per function (docs/collectives.md): for each size
      nccl-tests printed, per rank the cell count is exact (B's functions and
      cells below); the mean over the ranks' timed operations (their summed
      durations over their count) is within 5 % of nccl-tests' time (the mean
      of its out-of-place and in-place columns: a mean against a mean); with
      --inspector (mode kernel): our p50 (summary.json, ranks merged) within
      10 % of the p50 of NVIDIA Inspector's operations in ICASE/inspector/
      (the same command under Inspector) in the same cell; --no-mean leaves
      the mean out (mode kernel times the GPU kernel, not what the
      application waits for: only Inspector is its reference).  Functions: B
      all_reduce AllReduce, all_gather AllGather, reduce_scatter
      ReduceScatter, broadcast Broadcast, each at the size nccl-tests prints
      (AllGather/ReduceScatter: the x nranks size; Inspector's per-rank size
      x nranks); sendrecv Send and Recv at that size; alltoall Send and Recv
      at size / nranks, one per peer, the self pair out-of-place only
      (NCCL drops a copy onto itself in place): per rank
      (R-1) x (W + 2(1+N+C)) + W + 1 + N + C
  profiler_judge.py CASE inspector-only --icase ICASE [--min-ops K]
      a job without nccl-tests' times (the DDP job): per (function, size)
      cell with >= K operations (default 20) in Inspector's dumps, our count
      (ranks summed) equals Inspector's and our p50 is within 10 % of its p50
  profiler_judge.py CASE absent --env-set TEXT [--other-marker FILE]
      no collective entry; the status section names NCCL_PROFILER_PLUGIN=TEXT;
      the other profiler's marker file has inits
  profiler_judge.py CASE torch --nranks R
      every process: >= 4 profiler communicators, each with a commId that a
      net communicator of the same process has, each with operations
  profiler_judge.py DIR overhead --prefix P --metric time|busbw --min-ratio X
      runs P-on<i>, P-off<i> (P-kernel<i>): per size the median over i of
      off/on time (or on/off busbw); passes when the geometric mean >= X
Exit 0 pass, 1 fail; the reasons and tables on stdout.
"""
import argparse
import glob
import json
import math
import os
import statistics
import sys


def rows(path):
    """nccl-tests result rows: (size, oop_time_us, ip_time_us, oop_busbw, ip_busbw)."""
    out = []
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return out
    for ln in lines:
        f = ln.split()
        if len(f) < 13 or not f[0].isdigit():
            continue
        try:
            out.append((int(f[0]), float(f[-8]), float(f[-4]), float(f[-6]), float(f[-2])))
        except ValueError:
            continue
    return out


def collstat(case):
    files = {}
    try:
        lines = open(os.path.join(case, "collstat.tsv")).read().splitlines()
    except OSError:
        return files
    for ln in lines:
        f = ln.split("\t")
        if len(f) < 2:
            continue
        kv = dict(x.split("=", 1) for x in f[2:] if "=" in x)
        e = files.setdefault(f[1], {"status": {}, "net": [], "comm": [], "cell": []})
        if f[0] == "status":
            e["status"] = kv
        else:
            e[f[0]].append(kv)
    return files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("checks", nargs="+")
    ap.add_argument("--w", type=int, default=1)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--c", type=int, default=1)
    ap.add_argument("--func", default="AllReduce")
    ap.add_argument("--nranks", type=int, default=2)
    ap.add_argument("--mode", default="1")
    ap.add_argument("--env-set")
    ap.add_argument("--other-marker")
    ap.add_argument("--prefix")
    ap.add_argument("--metric", default="time")
    ap.add_argument("--min-ratio", type=float, default=0.99)
    ap.add_argument("--bench")
    ap.add_argument("--inspector")
    ap.add_argument("--icase")
    ap.add_argument("--min-ops", type=int, default=20)
    ap.add_argument("--no-mean", action="store_true")
    a = ap.parse_args()
    bad = []

    if "overhead" in a.checks:
        return overhead(a)
    if "slo" in a.checks:
        return slo(a)
    if "inspector-only" in a.checks:
        return inspector_only(a)
    files = collstat(a.case)
    rc_path = os.path.join(a.case, "rc")
    if os.path.exists(rc_path):
        print("job exit status:", open(rc_path).read().strip())
    print("recorders:", len(files))
    if "counts" in a.checks or "p50" in a.checks:
        rs = rows(os.path.join(a.case, "stdout.txt"))
        if not rs:
            bad.append("no nccl-tests result rows in stdout.txt")
        if len(files) != a.nranks:
            bad.append("%d recorders, want %d" % (len(files), a.nranks))
        ranks = set()
        per = a.w + 2 * (1 + a.n + a.c)
        print("size\trank\tcount\twant\tp50_us\tnccl_tests_us\tratio\talgo_proto")
        for fn, e in sorted(files.items()):
            comms = [c for c in e["comm"] if c.get("has_id") == "1"]
            if len(comms) != 1:
                bad.append("%s: %d profiler communicators, want 1" % (fn, len(comms)))
                continue
            c = comms[0]
            ranks.add(c["rank"])
            if c["nranks"] != str(a.nranks):
                bad.append("%s: nranks %s, want %d" % (fn, c["nranks"], a.nranks))
            if c["mode"] != a.mode:
                bad.append("%s: mode %s, want %s" % (fn, c["mode"], a.mode))
            if a.env_set and e["status"].get("env") != a.env_set:
                bad.append("%s: status env '%s', want '%s'" % (fn, e["status"].get("env"), a.env_set))
            cells = {}
            for x in e["cell"]:
                if x["comm_id"] == c["comm_id"] and x["func"] == a.func:
                    cells[int(x["log2"])] = x
            for size, t_oop, t_ip, _, _ in rs:
                k = int(math.log2(size)) if size > 1 else 0
                x = cells.get(k)
                got = int(x["count"]) if x else 0
                p50 = int(x["p50"]) / 1000.0 if x else 0.0
                nt = (t_oop + t_ip) / 2
                ratio = p50 / nt if nt > 0 else 0
                print("%d\t%s\t%d\t%d\t%.1f\t%.1f\t%.3f\t%s" % (
                    size, c["rank"], got, per, p50, nt, ratio, x["algo_proto"] if x else "-"))
                if "counts" in a.checks and got != per:
                    bad.append("rank %s size %d: %d %s, want %d" % (c["rank"], size, got, a.func, per))
                if "p50" in a.checks and size >= 1 << 20 and not (0.9 <= ratio <= 1.1):
                    bad.append("rank %s size %d: p50 %.1f us vs nccl-tests %.1f us (ratio %.3f)"
                               % (c["rank"], size, p50, nt, ratio))
        if len(ranks) != a.nranks:
            bad.append("ranks seen %s, want %d distinct" % (sorted(ranks), a.nranks))
    if "absent" in a.checks:
        if not files:
            bad.append("no recorder")
        for fn, e in files.items():
            if e["comm"]:
                bad.append("%s: %d profiler communicators, want none" % (fn, len(e["comm"])))
            st = e["status"]
            print(fn, "status:", st)
            if st.get("env_set") != "1" or st.get("env") != a.env_set:
                bad.append("%s: status does not record NCCL_PROFILER_PLUGIN=%s" % (fn, a.env_set))
        if a.other_marker:
            try:
                n = sum(1 for ln in open(a.other_marker) if ln.startswith("init "))
            except OSError:
                n = 0
            print("other profiler inits:", n)
            if n < a.nranks:
                bad.append("the other profiler saw %d inits, want >= %d" % (n, a.nranks))
        for s in glob.glob(os.path.join(a.case, "summary.txt")):
            print("--- summary.txt (collective lines)")
            for ln in open(s, errors="replace"):
                if "ollective" in ln or "PROFILER" in ln:
                    print(ln.rstrip())
    if "torch" in a.checks:
        if len(files) != a.nranks:
            bad.append("%d recorders, want %d" % (len(files), a.nranks))
        for fn, e in sorted(files.items()):
            net_ids = {n["comm_id"] for n in e["net"] if n.get("has_id") == "1"}
            comms = [c for c in e["comm"] if c.get("has_id") == "1"]
            print(fn, "net commIds:", sorted(net_ids))
            for c in comms:
                ops = [x for x in e["cell"] if x["comm_id"] == c["comm_id"]]
                desc = ", ".join("%s/2^%s x%s timed %s p50 %s ns" % (
                    x["func"], x["log2"], x["count"], x["timed"], x["p50"]) for x in ops)
                print("  comm %s rank %s/%s name '%s': %s" % (
                    c["comm_id"], c["rank"], c["nranks"], c["name"], desc or "no operations"))
                if c["comm_id"] not in net_ids:
                    bad.append("%s: profiler comm %s has no net comm of that commId" % (fn, c["comm_id"]))
                if not ops:
                    bad.append("%s: comm %s has no operations" % (fn, c["comm_id"]))
            if len(comms) < 4:
                bad.append("%s: %d profiler communicators, want >= 4" % (fn, len(comms)))
    for b in bad:
        print("FAIL:", b)
    print("PASS" if not bad else "FAILED (%d)" % len(bad))
    return 1 if bad else 0


BENCH_FUNCS = {
    "all_reduce": ["AllReduce"], "all_gather": ["AllGather"],
    "reduce_scatter": ["ReduceScatter"], "broadcast": ["Broadcast"],
    "sendrecv": ["Send", "Recv"], "alltoall": ["Send", "Recv"],
}


def log2(b):
    return int(math.log2(b)) if b > 1 else 0


def inspector_ops(icase, nranks):
    """NVIDIA Inspector's verbose dumps: {(function, cell log2): [exec us]},
    AllGather/ReduceScatter sizes x nranks (Inspector's message size is per
    rank), ranks together."""
    out = {}
    for fn in sorted(glob.glob(os.path.join(icase, "inspector", "*"))):
        if os.path.isdir(fn):
            continue
        for ln in open(fn, errors="replace"):
            try:
                j = json.loads(ln)
            except ValueError:
                continue
            if "coll_perf" in j:
                c = j["coll_perf"]
                f, size, t = c.get("coll"), c.get("coll_msg_size_bytes", 0), c.get("coll_exec_time_us")
                n = j.get("header", {}).get("n_ranks", nranks)
                if f in ("AllGather", "ReduceScatter"):
                    size *= n
            elif "p2p_perf" in j:
                c = j["p2p_perf"]
                f, size, t = c.get("p2p"), c.get("p2p_msg_size_bytes", 0), c.get("p2p_exec_time_us")
            else:
                continue
            if f is None or t is None:
                continue
            out.setdefault((f, log2(size)), []).append(float(t))
    return out


def merged_cells(case):
    """summary.json's communicators merged: {(function, log2): op}."""
    try:
        j = json.load(open(os.path.join(case, "summary.json")))
    except (OSError, ValueError):
        return {}
    out = {}
    for c in (j.get("collectives") or {}).get("communicators", []):
        for o in c.get("operations", []):
            out[(o["function"], o["size_log2"])] = o
    return out


def slo(a):
    bad = []
    funcs = BENCH_FUNCS.get(a.bench)
    if not funcs:
        print("FAIL: unknown --bench %s" % a.bench)
        return 1
    files = collstat(a.case)
    rc_path = os.path.join(a.case, "rc")
    if os.path.exists(rc_path):
        print("job exit status:", open(rc_path).read().strip())
    rs = rows(os.path.join(a.case, "stdout.txt"))
    if not rs:
        bad.append("no nccl-tests result rows in stdout.txt")
    if len(files) != a.nranks:
        bad.append("%d recorders, want %d" % (len(files), a.nranks))
    per = a.w + 2 * (1 + a.n + a.c)
    if a.bench == "alltoall":
        per = (a.nranks - 1) * per + a.w + 1 + a.n + a.c
    cells = {}  # (func, log2) -> [per-rank cell dicts]
    for fn, e in sorted(files.items()):
        comms = [c for c in e["comm"] if c.get("has_id") == "1"]
        if len(comms) != 1:
            bad.append("%s: %d profiler communicators, want 1" % (fn, len(comms)))
            continue
        c = comms[0]
        if c["mode"] != a.mode:
            bad.append("%s: mode %s, want %s" % (fn, c["mode"], a.mode))
        for x in e["cell"]:
            if x["comm_id"] == c["comm_id"]:
                cells.setdefault((x["func"], int(x["log2"])), []).append(dict(x, rank=c["rank"]))
    insp = inspector_ops(a.inspector, a.nranks) if a.inspector else None
    if a.inspector and not insp:
        bad.append("no Inspector operation in %s/inspector" % a.inspector)
    ours = merged_cells(a.case) if a.inspector else {}
    print("function\tsize\tcounts(want %d)\tmean_us\tnccl_tests_us\tratio%s" %
          (per, "\tp50_us\tinspector_p50_us\tratio(n)" if insp is not None else ""))
    for size, t_oop, t_ip, _, _ in rs:
        nt = (t_oop + t_ip) / 2
        k = log2(size // a.nranks if a.bench == "alltoall" else size)
        for f in funcs:
            xs = cells.get((f, k), [])
            counts = [int(x["count"]) for x in xs]
            timed = sum(int(x["timed"]) for x in xs)
            total = sum(int(x["mean"]) * int(x["timed"]) for x in xs)
            mean = total / timed / 1000.0 if timed else 0.0
            ratio = mean / nt if nt > 0 else 0.0
            line = "%s\t%d\t%s\t%.1f\t%.1f\t%.3f" % (f, size, ",".join(map(str, counts)) or "-",
                                                  mean, nt, ratio)
            if len(counts) != a.nranks or any(n != per for n in counts):
                bad.append("%s %d: counts %s per rank, want %d on each of %d" %
                           (f, size, counts, per, a.nranks))
            if not a.no_mean and not (0.95 <= ratio <= 1.05):
                bad.append("%s %d: mean %.1f us vs nccl-tests %.1f us (ratio %.3f, want 0.95-1.05)"
                           % (f, size, mean, nt, ratio))
            if insp is not None:
                v = insp.get((f, k), [])
                o = ours.get((f, k))
                ip50 = statistics.median(v) if v else 0.0
                p50 = o["p50_ns"] / 1000.0 if o else 0.0
                r2 = p50 / ip50 if ip50 > 0 else 0.0
                line += "\t%.1f\t%.1f\t%.3f(%d)" % (p50, ip50, r2, len(v))
                if not (0.9 <= r2 <= 1.1):
                    bad.append("%s %d: p50 %.1f us vs Inspector's %.1f us (ratio %.3f, want 0.9-1.1)"
                               % (f, size, p50, ip50, r2))
            print(line)
    for b in bad:
        print("FAIL:", b)
    print("PASS" if not bad else "FAILED (%d)" % len(bad))
    return 1 if bad else 0


def inspector_only(a):
    bad = []
    insp = inspector_ops(a.icase, a.nranks)
    ours = merged_cells(a.case)
    if not insp:
        bad.append("no Inspector operation in %s/inspector" % a.icase)
    if not ours:
        bad.append("no collective operation in %s/summary.json" % a.case)
    print("function\tsize_log2\tcount\tinspector_count\tp50_us\tinspector_p50_us\tratio")
    judged = 0
    for (f, k), v in sorted(insp.items()):
        o = ours.get((f, k))
        cnt = o["count"] if o else 0
        p50 = o["p50_ns"] / 1000.0 if o else 0.0
        ip50 = statistics.median(v)
        r = p50 / ip50 if ip50 > 0 else 0.0
        print("%s\t%d\t%d\t%d\t%.1f\t%.1f\t%.3f" % (f, k, cnt, len(v), p50, ip50, r))
        if len(v) < a.min_ops:
            continue
        judged += 1
        if cnt != len(v):
            bad.append("%s 2^%d: %d operations, Inspector %d" % (f, k, cnt, len(v)))
        if not (0.9 <= r <= 1.1):
            bad.append("%s 2^%d: p50 %.1f us vs Inspector's %.1f us (ratio %.3f)" % (f, k, p50, ip50, r))
    if insp and not judged:
        bad.append("no cell with >= %d Inspector operations" % a.min_ops)
    for b in bad:
        print("FAIL:", b)
    print("PASS" if not bad else "FAILED (%d)" % len(bad))
    return 1 if bad else 0


def overhead(a):
    runs = {}
    for d in sorted(glob.glob(os.path.join(a.case, a.prefix + "-*"))):
        name = os.path.basename(d)[len(a.prefix) + 1:]
        kind = name.rstrip("0123456789")
        runs.setdefault(kind, []).append(rows(os.path.join(d, "stdout.txt")))
    if "on" not in runs or "off" not in runs:
        print("FAIL: runs missing:", sorted(runs))
        return 1
    kinds = [k for k in ("on", "kernel") if k in runs]
    col = (1, 2) if a.metric == "time" else (3, 4)
    bad = []
    for k in kinds:
        ratios = []
        print("== %s vs off (%s; ratio %s)" % (k, a.metric,
              "off/on time" if a.metric == "time" else "on/off busbw"))
        print("size\t%s_on\t%s_off\tratio(median of pairs)" % (a.metric, a.metric))
        sizes = [r[0] for r in runs["off"][0]] if runs["off"] and runs["off"][0] else []
        for i, size in enumerate(sizes):
            pair = []
            on_v, off_v = [], []
            for j in range(min(len(runs[k]), len(runs["off"]))):
                try:
                    on = runs[k][j][i]
                    off = runs["off"][j][i]
                except IndexError:
                    continue
                vo = (on[col[0]] + on[col[1]]) / 2
                vf = (off[col[0]] + off[col[1]]) / 2
                on_v.append(vo)
                off_v.append(vf)
                if vo > 0 and vf > 0:
                    pair.append(vf / vo if a.metric == "time" else vo / vf)
            if not pair:
                continue
            m = statistics.median(pair)
            ratios.append(m)
            print("%d\t%.2f\t%.2f\t%.4f" % (size, statistics.median(on_v), statistics.median(off_v), m))
        if not ratios:
            bad.append("%s: no comparable rows" % k)
            continue
        gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print("%s: geometric mean ratio %.4f over %d sizes (want >= %.3f)" % (k, gm, len(ratios), a.min_ratio))
        if k == "on" and gm < a.min_ratio:
            bad.append("%s: ratio %.4f < %.3f" % (k, gm, a.min_ratio))
    for b in bad:
        print("FAIL:", b)
    print("PASS" if not bad else "FAILED")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
