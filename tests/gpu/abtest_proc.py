# SPDX-License-Identifier: Apache-2.0
"""abtest_proc.py — the host-pressure numbers of the recorders of one run
against /proc, read by tests/gpu/abtest.sh itself while the ranks were held
after their last NCCL call (GT_HOLD_DIR of train_ddp.py).

  python3 abtest_proc.py RUNDIR [--tol 0.10]

RUNDIR holds rec/*.rec (the recorders), proc/rank<r>.pid, proc/<pid>.stat,
proc/<pid>.task.<tid>.stat and proc/<pid>.children (stat lines of the rank's
descendants, e.g. the GPU-memory copier).  The recorder is parsed here with
the format's own layout (include/gdrtrace/recorder_format.h, section 9), not
with gdrtrace, so the check does not rest on the reader it checks.

Checks, per rank: process user+system CPU of the recorder's last sample
within TOL (or 3 clock ticks, whichever is larger: /proc counts in ticks) of
/proc/<pid>/stat; each data-path thread of the host section within TOL (or 3
ticks) of /proc/<pid>/task/<tid>/stat.  Prints one line per figure; exit 0
when all agree, 1 otherwise.
"""
import glob
import os
import struct
import sys

TICK = 1.0 / os.sysconf("SC_CLK_TCK")


def sections(b):
    count = struct.unpack_from("<I", b, 36)[0]
    out = {}
    for i in range(min(count, 16)):
        sid, esz, off, size, cnt = struct.unpack_from("<IIQQQ", b, 40 + 32 * i)
        out[sid] = (esz, off, size, cnt)
    return out


def parse_rec(path):
    b = open(path, "rb").read()
    if b[:8] != b"GDRTRACE":
        raise ValueError(f"{path}: not a recorder")
    minor = struct.unpack_from("<H", b, 10)[0]
    sec = sections(b)
    ident = sec[1][1]
    pid = struct.unpack_from("<i", b, ident + 220)[0]
    if 9 not in sec:
        return {"pid": pid, "minor": minor, "host": None}
    off = sec[9][1]
    samples, first, last = struct.unpack_from("<Qqq", b, off)
    utime, stime, hwm = struct.unpack_from("<QQQ", b, off + 40)
    staging, staging_hwm = struct.unpack_from("<QQ", b, off + 104)
    nthreads = struct.unpack_from("<I", b, off + 136)[0]
    cost = struct.unpack_from("<Q", b, off + 152)[0]
    threads = []
    for i in range(min(nthreads, 16)):
        t = off + 192 + 64 * i
        tid, gone, cpu_first, cpu = struct.unpack_from("<IIQQ", b, t)
        threads.append({"tid": tid, "gone": gone, "cpu_first": cpu_first, "cpu": cpu})
    return {"pid": pid, "minor": minor, "host": {
        "samples": samples, "utime": utime, "stime": stime, "hwm": hwm, "staging": staging,
        "staging_hwm": staging_hwm, "threads": threads, "cost": cost}}


def stat_cpu(line):
    rest = line[line.rindex(")") + 2:].split()
    # rest[0] is field 3 (state); utime, stime are fields 14, 15
    return (int(rest[11]) + int(rest[12])) * TICK, rest


def main():
    run = sys.argv[1]
    tol = 0.10
    if "--tol" in sys.argv:
        tol = float(sys.argv[sys.argv.index("--tol") + 1])
    ok = True
    recs = {}
    for p in sorted(glob.glob(os.path.join(run, "rec", "*.rec"))):
        try:
            r = parse_rec(p)
            recs[r["pid"]] = r
        except (ValueError, KeyError, struct.error) as e:
            print(f"  FAIL {p}: {e}")
            ok = False
    polled = {}  # (pid, tid) -> the last stat line abtest_poll.py read
    pf_poll = os.path.join(run, "proc", "poll.txt")
    if os.path.exists(pf_poll):
        for line in open(pf_poll):
            p, t, rest = line.split(" ", 2)
            polled[(p, t)] = rest
    pidfiles = sorted(glob.glob(os.path.join(run, "proc", "rank*.pid")))
    if not pidfiles:
        print(f"  FAIL {run}: no rank was held (no proc/rank*.pid)")
        return 1

    def agree(what, got, want):
        nonlocal ok
        bound = max(tol * want, 3 * TICK)
        good = abs(got - want) <= bound
        ok &= good
        print(f"  {'ok  ' if good else 'FAIL'} {what}: recorder {got:.3f} s, /proc {want:.3f} s "
              f"({(got - want) / want * 100 if want else 0:+.1f} %, bound {bound:.3f} s)")

    for pf in pidfiles:
        rank = os.path.basename(pf)[4:-4]
        pid = int(open(pf).read().split()[0])
        r = recs.get(pid)
        if not r or not r["host"]:
            print(f"  FAIL rank {rank} pid {pid}: no recorder with a host section "
                  f"({'none' if not r else 'format 1.%d' % r['minor']})")
            ok = False
            continue
        h = r["host"]
        try:
            want, _ = stat_cpu(open(os.path.join(run, "proc", f"{pid}.stat")).read())
        except (OSError, ValueError, IndexError) as e:
            print(f"  FAIL rank {rank}: /proc/{pid}/stat not read: {e}")
            ok = False
            continue
        agree(f"rank {rank} pid {pid} process CPU (user+system)", (h["utime"] + h["stime"]) / 1e9,
              want)
        if not h["threads"]:
            print(f"  FAIL rank {rank}: no data-path thread in the host section")
            ok = False
        for t in h["threads"]:
            f = os.path.join(run, "proc", f"{pid}.task.{t['tid']}.stat")
            if os.path.exists(f):
                tw, rest = stat_cpu(open(f).read())
                agree(f"rank {rank} data-path thread {t['tid']} CPU", t["cpu"] / 1e9, tw)
            elif (str(pid), str(t["tid"])) in polled:
                tw, _ = stat_cpu(polled[(str(pid), str(t["tid"]))])
                agree(f"rank {rank} data-path thread {t['tid']} CPU (exited; its last /proc "
                      f"line, polled every 10 ms)", t["cpu"] / 1e9, tw)
            else:
                print(f"  note rank {rank} thread {t['tid']}: exited before the hold and not "
                      f"polled (recorder {t['cpu'] / 1e9:.3f} s, gone={t['gone']})")
        kids = os.path.join(run, "proc", f"{pid}.children")
        kcpu = 0.0
        names = []
        if os.path.exists(kids):
            for line in open(kids):
                if ")" in line:
                    c, _ = stat_cpu(line)
                    kcpu += c
                    names.append(line[line.index("(") + 1:line.rindex(")")])
        print(f"  info rank {rank}: samples {h['samples']}, sampling cost "
              f"{h['cost'] / max(1, h['samples']) / 1e3:.1f} us each, staging high-water "
              f"{h['staging_hwm'] / 2**20:.1f} MiB, VmHWM {h['hwm'] / 2**20:.0f} MiB, "
              f"child processes {','.join(names) or 'none'} CPU {kcpu:.3f} s")
    print("PASS: host pressure agrees with /proc" if ok else "FAIL: see above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
