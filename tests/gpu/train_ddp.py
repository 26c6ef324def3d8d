# SPDX-License-Identifier: Apache-2.0
"""train_ddp.py — the application layer of the GPU runbook: a small transformer
trained with torch.distributed DistributedDataParallel (nccl backend), two
ranks on the one GPU as two "hosts" (different NCCL_HOSTIDs), so every gradient
all-reduce crosses NCCL's NET transport — our plugin, or NCCL's own Socket.

  python3 train_ddp.py run --out PREFIX [--steps 300] [--ranks 2]
      spawns the ranks (each with NCCL_HOSTID=gdrtrace-node<r>), trains with
      fixed seeds, prints the loss every 10 steps, and writes PREFIX.rank<r>.json
      with every step's loss (exact, as float.hex) and the time per step.
      --bind C0,C1,...: rank r runs under `taskset -c Cr` (one core each, as
      mpirun --bind-to core binds); GT_HOLD_DIR=DIR: after destroying its
      process group each rank writes DIR/rank<r>.pid and waits (sleeping, up
      to 120 s) for DIR/go, so a test reads its /proc while nothing runs.
  python3 train_ddp.py compare A B [C ...]
      compares the rank-0 losses of runs A, B, ...: prints whether they are
      bit-equal (or only within 1e-6) and each run's time per step.  Exit 0 when
      every run's losses are bit-equal to A's and the loss went down; else 1.

Why the losses can be bit-equal: the seeds, the data and the kernels are the
same in every run (deterministic algorithms, no TF32, math attention), and a
sum of two float32 gradients is the same whichever transport carried them.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def worker(args):
    # GT_PY_STACKS_AFTER=N: every thread's Python stack goes to
    # OUT.rank<r>.pystack after N s (and every N s after), so a stalled run
    # shows which call it waits in (tests/gpu/ddp-hang.sh).
    after = float(os.environ.get("GT_PY_STACKS_AFTER", "0") or 0)
    if after > 0:
        import faulthandler
        stacks = open(f"{args.out}.rank{args.rank}.pystack", "w")
        faulthandler.dump_traceback_later(after, repeat=True, file=stacks)
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F

    rank, world = args.rank, args.ranks
    # GT_BIND_CPUS="0,1": rank r runs on CPU number r of the list only, as a
    # launcher binds one core per rank (srun --cpu-bind=cores, mpirun
    # --bind-to core); before CUDA and NCCL start their threads.
    bind = [c for c in os.environ.get("GT_BIND_CPUS", "").split(",") if c.strip()]
    if bind:
        os.sched_setaffinity(0, {int(bind[rank % len(bind)])})
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.enable_flash_sdp(False)
    torch.backends.cuda.enable_mem_efficient_sdp(False)
    torch.backends.cuda.enable_math_sdp(True)
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)

    # GT_PG_TIMEOUT=N: the process group's timeout in seconds, so that PyTorch's
    # NCCL flight recorder (TORCH_NCCL_TRACE_BUFFER_SIZE, TORCH_NCCL_DUMP_ON_TIMEOUT)
    # dumps each rank's collectives and their states when a run stalls.
    extra = {}
    if os.environ.get("GT_PG_TIMEOUT"):
        import datetime
        extra["timeout"] = datetime.timedelta(seconds=float(os.environ["GT_PG_TIMEOUT"]))
    dist.init_process_group("nccl", init_method="file://" + args.store, rank=rank,
                            world_size=world, device_id=dev, **extra)

    V, T, D, H, L, B = 512, 64, 256, 4, 4, 32

    class TinyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, D)
            self.pos = nn.Parameter(torch.randn(T, D) * 0.02)
            layer = nn.TransformerEncoderLayer(D, H, 4 * D, dropout=0.0, batch_first=True,
                                               norm_first=True)
            self.enc = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
            self.head = nn.Linear(D, V)
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(T),
                                 persistent=False)

        def forward(self, x):
            h = self.emb(x) + self.pos[: x.shape[1]]
            h = self.enc(h, mask=self.mask[: x.shape[1], : x.shape[1]], is_causal=True)
            return self.head(h)

    torch.manual_seed(1234)  # same initial weights on every rank and in every run
    model = TinyLM().to(dev)
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[0])
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)

    # Learnable synthetic data: each sequence follows x[t+1] = (a*x[t] + c) mod V
    # with (a, c) drawn from a small set; the data of rank r is seeded by r only.
    gen = torch.Generator().manual_seed(99 + rank)
    coeffs = torch.tensor([[3, 1], [5, 7], [7, 3], [11, 5]])

    def batch():
        k = torch.randint(0, len(coeffs), (B,), generator=gen)
        x0 = torch.randint(0, V, (B,), generator=gen)
        seq = [x0]
        for _ in range(T):
            seq.append((coeffs[k, 0] * seq[-1] + coeffs[k, 1]) % V)
        s = torch.stack(seq, 1)
        return s[:, :-1].to(dev), s[:, 1:].to(dev)

    losses, stamps = [], []
    torch.cuda.synchronize()
    for step in range(args.steps):
        x, y = batch()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(ddp(x).reshape(-1, V), y.reshape(-1))
        loss.backward()
        opt.step()
        lv = loss.item()  # synchronises: the step is complete
        losses.append(lv)
        stamps.append(time.perf_counter())
        if rank == 0 and (step % 10 == 0 or step == args.steps - 1):
            print(f"step {step:4d} loss {lv:.6f}", flush=True)

    warm = min(20, args.steps // 4)
    per_step = (stamps[-1] - stamps[warm]) / max(1, len(stamps) - 1 - warm)
    nccl = ".".join(map(str, torch.cuda.nccl.version()))
    with open(f"{args.out}.rank{rank}.json", "w") as f:
        json.dump({"rank": rank, "world": world, "steps": args.steps, "torch": torch.__version__,
                   "nccl": nccl, "losses_hex": [float(v).hex() for v in losses],
                   "step_ms": per_step * 1e3, "warmup_steps": warm,
                   "env": {k: v for k, v in os.environ.items()
                           if k.startswith(("NCCL_", "GDRTRACE_"))}}, f)
    if rank == 0:
        print(f"time_per_step_ms {per_step * 1e3:.3f} (steps {warm + 1}..{args.steps - 1})",
              flush=True)
    dist.barrier()
    # GT_PAUSE_S=N: the job idles N s with its communicators up (the copier
    # of GDRTRACE_GPUMEM=1 alive and idle); rank 0 prints the window.
    pause = float(os.environ.get("GT_PAUSE_S", "0") or 0)
    if pause > 0:
        torch.cuda.synchronize()
        if rank == 0:
            print(f"pause_start {time.time():.3f}", flush=True)
        time.sleep(pause)
        if rank == 0:
            print(f"pause_end {time.time():.3f}", flush=True)
        dist.barrier()
    dist.destroy_process_group()
    hold = os.environ.get("GT_HOLD_DIR")
    if hold:
        with open(os.path.join(hold, f"rank{rank}.pid.tmp"), "w") as f:
            f.write(f"{os.getpid()}\n")
        os.rename(os.path.join(hold, f"rank{rank}.pid.tmp"), os.path.join(hold, f"rank{rank}.pid"))
        deadline = time.time() + 120
        while not os.path.exists(os.path.join(hold, "go")) and time.time() < deadline:
            time.sleep(0.05)
    return 0


def run(args):
    with tempfile.TemporaryDirectory(prefix="train_ddp.") as tmp:
        store = os.path.join(tmp, "store")
        procs = []
        for r in range(args.ranks):
            env = dict(os.environ)
            env["NCCL_HOSTID"] = f"gdrtrace-node{r}"
            env.setdefault("NCCL_MNNVL_ENABLE", "0")
            env.setdefault("NCCL_NVLS_ENABLE", "0")
            env.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
            env["PYTHONUNBUFFERED"] = "1"
            cmd = [sys.executable, os.path.abspath(__file__), "worker", "--rank", str(r),
                   "--ranks", str(args.ranks), "--steps", str(args.steps), "--out", args.out,
                   "--store", store]
            if args.bind:
                cmd = ["taskset", "-c", args.bind.split(",")[r]] + cmd
            procs.append(subprocess.Popen(cmd, env=env))
        rc = 0
        deadline = time.time() + args.timeout
        for r, p in enumerate(procs):
            try:
                code = p.wait(timeout=max(1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                print(f"train_ddp: rank {r} still running after {args.timeout} s; killing it",
                      file=sys.stderr)
                for q in procs:
                    q.kill()
                code = -9
            if code != 0:
                print(f"train_ddp: rank {r} exited with {code}", file=sys.stderr)
                rc = 1
        return rc


def compare(args):
    runs = []
    for prefix in args.runs:
        with open(f"{prefix}.rank0.json") as f:
            runs.append((prefix, json.load(f)))
    base_name, base = runs[0]
    bl = [float.fromhex(h) for h in base["losses_hex"]]
    ok = True
    if not (len(bl) >= 20 and sum(bl[-10:]) / 10 < 0.8 * sum(bl[:10]) / 10):
        print(f"FAIL: loss of {base_name} did not go down (first {bl[0]:.4f}, last {bl[-1]:.4f})")
        ok = False
    def label(prefix):  # "torch-plugin/losses" rather than "losses"
        return os.path.join(os.path.basename(os.path.dirname(os.path.abspath(prefix))),
                            os.path.basename(prefix))

    print(f"{'run':40s} {'nccl':8s} {'steps':>5s} {'first':>9s} {'last':>9s} "
          f"{'ms/step':>8s} {'equal to ' + label(base_name):s}")
    for name, d in runs:
        ls = [float.fromhex(h) for h in d["losses_hex"]]
        if len(ls) != len(bl):
            verdict = f"DIFFERENT LENGTH ({len(ls)} vs {len(bl)})"
            ok = False
        elif d["losses_hex"] == base["losses_hex"]:
            verdict = "bit-equal"
        else:
            diff = max(abs(a - b) for a, b in zip(ls, bl))
            first = next(i for i, (a, b) in enumerate(zip(ls, bl)) if a != b)
            verdict = (f"NOT bit-equal: max |diff| {diff:.3g} (first at step {first}); "
                       f"{'within' if diff <= 1e-6 else 'beyond'} 1e-6")
            ok = False
        print(f"{label(name):40s} {d['nccl']:8s} {len(ls):5d} {ls[0]:9.6f} "
              f"{ls[-1]:9.6f} {d['step_ms']:8.3f} {verdict}")
    print("PASS: losses bit-equal in every run" if ok else "FAIL: see above")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--steps", type=int, default=300)
    r.add_argument("--ranks", type=int, default=2)
    r.add_argument("--timeout", type=float, default=300)
    r.add_argument("--bind", default="", help="cores, one per rank: C0,C1,...")
    w = sub.add_parser("worker")
    w.add_argument("--rank", type=int, required=True)
    w.add_argument("--ranks", type=int, required=True)
    w.add_argument("--steps", type=int, required=True)
    w.add_argument("--out", required=True)
    w.add_argument("--store", required=True)
    c = sub.add_parser("compare")
    c.add_argument("runs", nargs="+")
    args = ap.parse_args()
    return {"run": run, "worker": worker, "compare": compare}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
