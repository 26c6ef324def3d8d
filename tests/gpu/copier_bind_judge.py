# SPDX-License-Identifier: Apache-2.0
"""copier_bind_judge.py — judges a tests/gpu/copier-bind.sh output folder.

  python3 copier_bind_judge.py DIR

Reads nt-<binding>-<bench>-<kind>/stdout.txt (nccl-tests), ddp-compare.txt,
diff-*.json (gdrtrace diff --json, A = host-staged sock, B = emulated
DMA-BUF), the NCCL logs' "stopping the copier process" lines, the copier
samples and the ranks' bindings.  Prints tables and one ok/FAIL line per
check; exit 0 when every check passed, 1 otherwise.
"""
import glob
import json
import os
import re
import sys

BINDS = ("core", "taskset")
BENCHES = ("all_reduce", "all_gather", "sendrecv")
KINDS = ("dmabuf", "sock", "socket")
HZ = os.sysconf("SC_CLK_TCK")
fails = []


def check(ok, text):
    print(f"  {'ok' if ok else 'FAIL'}: {text}")
    if not ok:
        fails.append(text)


def nccl_tests(path):
    """{size: (busbw out-of-place, #wrong)} and the exit status."""
    rows = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return rows
    for ln in lines:
        f = ln.split()
        if len(f) >= 9 and f[0].isdigit() and f[1].isdigit():
            try:
                rows[int(f[0])] = (float(f[7]), f[8])
            except ValueError:
                pass
    return rows


def rc_of(d):
    try:
        return int(open(os.path.join(d, "rc")).read().strip())
    except (OSError, ValueError):
        return None


def main():
    W = sys.argv[1]
    print("== 1. nccl-tests busbw (GB/s, out-of-place), emulated DMA-BUF vs host-staged sock")
    for bind in BINDS:
        for b in BENCHES:
            run = [k for k in KINDS if os.path.isdir(os.path.join(W, f"nt-{bind}-{b}-{k}"))]
            if not run:
                continue  # not run in this call (BINDS, BENCHES)
            res = {k: nccl_tests(os.path.join(W, f"nt-{bind}-{b}-{k}", "stdout.txt"))
                   for k in KINDS}
            rcs = {k: rc_of(os.path.join(W, f"nt-{bind}-{b}-{k}")) for k in KINDS}
            if not any(res.values()):
                check(False, f"{bind} {b}: no nccl-tests output (exit {rcs})")
                continue
            print(f"  {bind:8s} {b:11s} {'size':>10s} {'dmabuf':>8s} {'sock':>8s} "
                  f"{'Socket':>8s} {'dmabuf/sock':>11s}")
            sizes = sorted(set().union(*[set(r) for r in res.values()]))
            worst = None
            for s in sizes:
                v = {k: res[k].get(s, (None, "-"))[0] for k in KINDS}
                ratio = v["dmabuf"] / v["sock"] if v["dmabuf"] and v["sock"] else None
                if ratio is not None and (worst is None or ratio < worst[0]):
                    worst = (ratio, s)
                fmt = lambda x: f"{x:8.2f}" if x is not None else f"{'-':>8s}"
                print(f"  {'':8s} {'':11s} {s:10d} {fmt(v['dmabuf'])} {fmt(v['sock'])} "
                      f"{fmt(v['socket'])} {ratio if ratio is None else round(ratio, 2)!s:>11s}")
            for k in run:
                wrong = [s for s, (_, w) in res[k].items() if w not in ("0", "N/A")]
                check(rcs[k] == 0 and res[k] and not wrong,
                      f"{bind} {b} {k}: exit {rcs[k]}, {len(res[k])} sizes, #wrong 0"
                      + (f" (not at {wrong})" if wrong else ""))
            have = all(s in res["dmabuf"] and s in res["sock"] for s in (1 << 20, 256 << 20))
            check(worst is not None and worst[0] >= 0.9 and have,
                  f"{bind} {b}: emulated DMA-BUF >= 0.9x host-staged sock at every size 1 MiB.."
                  f"256 MiB (worst {worst[0]:.2f} at {worst[1] >> 20} MiB)" if worst else
                  f"{bind} {b}: emulated DMA-BUF >= 0.9x host-staged sock (no pair of results)")

    print("== 2. DDP, one core per rank")
    if not os.path.isdir(os.path.join(W, "ddp-dmabuf")):
        print("  not run in this call (DDP=0)")
    try:
        cmp = open(os.path.join(W, "ddp-compare.txt")).read()
    except OSError:
        cmp = ""
    print("\n".join("    " + ln for ln in cmp.splitlines()))
    check("PASS: losses bit-equal" in cmp or not os.path.isdir(os.path.join(W, "ddp-dmabuf")),
          "DDP: emulated DMA-BUF and host-staged sock losses bit-equal to NCCL's Socket")

    print("== 3. gdrtrace diff, A host-staged sock, B emulated DMA-BUF: p50 B/A (recorded)")
    for pair in ("ddp", "nt-core-all_reduce", "nt-taskset-all_reduce"):
        p = os.path.join(W, f"diff-{pair}.json")
        if not os.path.exists(p):
            if pair == "ddp" and os.path.isdir(os.path.join(W, "ddp-dmabuf")):
                check(False, f"{pair}: no diff")
            continue
        try:
            j = json.load(open(p))
            r = j["latency_ratio_b_over_a"]
            send, recv = r["send"]["p50"], r["recv"]["p50"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            check(False, f"{pair}: diff --json unreadable ({e})")
            continue
        # A record, not a target: the per-message latencies of an emulated
        # path include the CUDA copies a real NIC does not make; diff's judge
        # (not the copier's speed) keeps such an A/B honest.
        print(f"  info: {pair}: send p50 {send if send is None else round(send, 2)}x, "
              f"recv p50 {recv if recv is None else round(recv, 2)}x")

    print("== 4. the copier: where it ran, its CPU per GB and idle")
    pat = re.compile(r"stopping the copier process (\d+): (\d+) copies, ([\d.]+) GB, "
                     r"CPU ([-\d.]+) s \(([\d.]+) s per GB\)")
    tot_gb = tot_cpu = 0.0
    for d in sorted(glob.glob(os.path.join(W, "*-dmabuf"))):
        binds = []
        for f in sorted(glob.glob(os.path.join(d, "bind.rank*.txt"))):
            binds.append(open(f).read().strip().split(":")[-1].strip())
        cpus = {}
        try:
            for ln in open(os.path.join(d, "copier-samples.txt")):
                f = ln.split()
                if len(f) >= 4:
                    cpus.setdefault(f[1], set()).add(f[3])
        except OSError:
            pass
        stops = []
        for log in glob.glob(os.path.join(d, "nccl.*.log")):
            for ln in open(log, errors="replace"):
                m = pat.search(ln)
                if m:
                    stops.append(m.groups())
        name = os.path.basename(d)
        print(f"  {name}: ranks on {binds or '?'}; copiers' CPUs "
              f"{ {p: sorted(c) for p, c in cpus.items()} or '?'}")
        for pid, n, gb, cpu, per in stops:
            print(f"    copier {pid}: {n} copies, {gb} GB, CPU {cpu} s, {per} s per GB")
            tot_gb += float(gb)
            tot_cpu += max(0.0, float(cpu))
        if binds and cpus:
            single = [b for b in binds if re.fullmatch(r"\d+", b)]
            shared = [p for p, c in cpus.items() if any(x in single for x in c)]
            check(not shared, f"{name}: no copier ran on its rank's one core {single}")
    if tot_gb:
        print(f"  all runs: {tot_gb:.2f} GB copied, {tot_cpu:.2f} s CPU: "
              f"{tot_cpu / tot_gb:.3f} s per GB")
    # idle: the DDP job's pause, with its communicators up
    d = os.path.join(W, "ddp-dmabuf")
    try:
        out = open(os.path.join(d, "stdout.txt")).read()
        t0 = float(re.search(r"pause_start ([\d.]+)", out).group(1))
        t1 = float(re.search(r"pause_end ([\d.]+)", out).group(1))
        per = {}
        for ln in open(os.path.join(d, "copier-samples.txt")):
            f = ln.split()
            t, pid, ticks = float(f[0]), f[1], int(f[2])
            if t0 <= t <= t1:
                per.setdefault(pid, []).append((t, ticks))
        for pid, s in sorted(per.items()):
            span = s[-1][0] - s[0][0]
            used = (s[-1][1] - s[0][1]) / HZ
            print(f"  idle: copier {pid} used {used:.3f} s CPU over {span:.1f} s of the DDP "
                  f"job's pause")
            check(span < 1 or used <= 0.05 * span,
                  f"idle copier {pid}: {used:.3f} s CPU in {span:.1f} s (<= 5 %)")
        if not per:
            print("  idle: no copier sample inside the pause")
    except (OSError, AttributeError, ValueError, IndexError) as e:
        print(f"  idle: not measured ({e})")

    print("PASS" if not fails else f"FAIL: {len(fails)} check(s)")
    return 0 if not fails else 1


if __name__ == "__main__":
    sys.exit(main())
