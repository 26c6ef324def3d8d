# SPDX-License-Identifier: Apache-2.0
"""abtest_poll.py — keeps the last /proc stat line of every thread of a
process tree while it runs, so a thread that exits before the test can read
it (NCCL's proxy threads end when the communicator is destroyed) is still
compared with the recorder (tests/gpu/abtest_proc.py).

  python3 abtest_poll.py ROOTPID OUTFILE [INTERVAL_S]

Every INTERVAL_S (0.01) it walks ROOTPID's descendants
(/proc/<pid>/task/*/children) and reads /proc/<pid>/task/<tid>/stat of each;
when ROOTPID is gone (or on SIGTERM) it writes "pid tid <stat line>" per
thread seen, the last line read of each.
"""
import os
import signal
import sys
import time


def kids(pid):
    out = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                out += open(f"/proc/{pid}/task/{t}/children").read().split()
            except OSError:
                pass
    except OSError:
        pass
    return out


def main():
    root, outfile = sys.argv[1], sys.argv[2]
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.01
    last = {}
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    while not stop and os.path.exists(f"/proc/{root}"):
        todo, seen = [root], set()
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            todo += kids(p)
            if p == root:
                continue
            try:
                tids = os.listdir(f"/proc/{p}/task")
            except OSError:
                continue
            for t in tids:
                try:
                    last[(p, t)] = open(f"/proc/{p}/task/{t}/stat").read().strip()
                except OSError:
                    pass
        time.sleep(interval)
    with open(outfile, "w") as f:
        for (p, t), line in sorted(last.items()):
            f.write(f"{p} {t} {line}\n")


if __name__ == "__main__":
    main()
