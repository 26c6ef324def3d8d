# SPDX-License-Identifier: Apache-2.0
"""pg_multi.py — a PyTorch job with four NCCL communicators, for the NCCL-log
join (issue 19): the world group, two `new_group`s over the same ranks, and
the point-to-point communicator PyTorch makes for a send/recv pair.  Two ranks
share the one GPU as two "hosts" (different NCCL_HOSTIDs), so every
communicator crosses NCCL's NET transport.

  python3 pg_multi.py [--ranks 2] [--bytes 1048576] [--eager]
      spawns the ranks, runs one checked operation per communicator, prints
      `PG_MULTI rank=<r> ok=<n>/<n>` per rank and exits 0 only when every
      rank's every check passed.

Lazy (the default): PyTorch creates each communicator at its first use, and
the send/recv pair gets a communicator of its own ("0:1") — four in all.
--eager passes device_id to init_process_group: the world communicator is
made at once, the groups are ncclCommSplit children of it, and point-to-point
runs on the world communicator — three in all (PyTorch 2.11, NCCL 2.28.9).

Invariants: values are small integers, so sums are exact and checks are
equality; each rank's exit status is its own, the parent's is the worst.
"""
import argparse
import os
import subprocess
import sys
import tempfile


def worker(args):
    import torch
    import torch.distributed as dist

    rank, world = args.rank, args.ranks
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    extra = {"device_id": dev} if args.eager else {}
    dist.init_process_group("nccl", init_method="file://" + args.store, rank=rank,
                            world_size=world, **extra)
    n = max(1, args.bytes // 4)
    checks = []

    # 1. the world communicator: all_reduce of (rank + 1)
    t = torch.full((n,), float(rank + 1), device=dev)
    dist.all_reduce(t)
    checks.append(("world all_reduce", bool((t == world * (world + 1) / 2).all())))

    # 2. and 3. two groups over the same ranks: NCCL makes one communicator each
    everyone = list(range(world))
    g1 = dist.new_group(everyone)
    g2 = dist.new_group(everyone)
    t = torch.full((n,), float(2 * rank + 1), device=dev)
    dist.all_reduce(t, group=g1)
    checks.append(("group1 all_reduce", bool((t == float(world * world)).all())))
    t = torch.full((n,), float(rank + 7), device=dev)
    dist.broadcast(t, src=world - 1, group=g2)
    checks.append(("group2 broadcast", bool((t == float(world - 1 + 7)).all())))

    # 4. a send/recv pair: PyTorch makes a separate point-to-point communicator
    if world >= 2 and rank in (0, 1):
        if rank == 0:
            dist.send(torch.arange(n, device=dev, dtype=torch.float32), dst=1)
            checks.append(("p2p send", True))
        else:
            r = torch.zeros(n, device=dev)
            dist.recv(r, src=0)
            checks.append(("p2p recv", bool((r == torch.arange(n, device=dev,
                                                                dtype=torch.float32)).all())))
    torch.cuda.synchronize()
    dist.barrier()
    dist.destroy_process_group()
    ok = sum(1 for _, good in checks if good)
    for name, good in checks:
        if not good:
            print(f"PG_MULTI rank={rank} FAIL {name}", flush=True)
    print(f"PG_MULTI rank={rank} ok={ok}/{len(checks)}", flush=True)
    return 0 if ok == len(checks) else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--bytes", type=int, default=1 << 20)
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--rank", type=int, default=-1)
    ap.add_argument("--store", default="")
    args = ap.parse_args()
    if args.rank >= 0:
        return worker(args)
    store = tempfile.mktemp(prefix="pg_multi_store_")
    procs = []
    for r in range(args.ranks):
        env = dict(os.environ)
        if os.environ.get("GT_SAME_HOSTID") != "1":
            env["NCCL_HOSTID"] = f"gdrtrace-node{r}"
        procs.append(subprocess.Popen(
            [sys.executable, __file__, "--rank", str(r), "--ranks", str(args.ranks),
             "--bytes", str(args.bytes), "--store", store]
            + (["--eager"] if args.eager else []), env=env))
    worst = 0
    for p in procs:
        rc = p.wait()
        worst = worst or rc
    return worst


if __name__ == "__main__":
    sys.exit(main())
