#!/usr/bin/env python3
"""Batch scaling under a memory cap that drops by 30% mid-run (feature CTRL-1, issue item 2).

A Llama built from a transformers config (hidden --hidden, --layers layers, context --context,
byte vocabulary) trains with AdamW on the CPU, one optimizer step per global batch of --batch
sequences, through ``Session.step`` (seedance.torch.enable): the batch scaler chooses the
micro-batch, so the number of accumulation steps, and an out-of-memory error halves it and
reruns the step. Each run is a child process that, after one warm-up step, caps itself:

- an address-space limit (RLIMIT_AS) of its virtual size + --headroom-mb, where torch's CPU
  allocator fails with a catchable error;
- a memory cgroup (v1 or v2, made by the child) whose limit is its usage + 1.05 x the headroom:
  the judge — exceeding it gets the process killed.

At step --drop-at both shrink to 70% of the headroom. The adaptive run must finish every
optimizer step unkilled. A sweep then runs each fixed micro-batch of --sweep under the dropped
cap from the start, without Seedance's scaler. Prints JSON: the adaptive run's micro-batches,
out-of-memory retries and samples/s after the drop (from --settle steps after it), each fixed
size's samples/s (or its failure), and the ratio adaptive / best fixed.

Needs root (the cgroup). Usage: PYTHONPATH=build/python bench/control/memory_cap.py
       [--steps 60] [--drop-at 30] [--settle 5] [--headroom-mb 600] [--batch 64]
       [--sweep 8,16,24,32,48,64] [--threads 2]
"""

import argparse
import ctypes
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def cgroup_create(name: str) -> tuple[str, str, str]:
    """A memory cgroup for this process: (directory, limit file, usage file)."""
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):  # v2
        base = os.path.join("/sys/fs/cgroup", name)
        os.makedirs(base, exist_ok=True)
        return base, os.path.join(base, "memory.max"), os.path.join(base, "memory.current")
    base = os.path.join("/sys/fs/cgroup/memory", name)
    os.makedirs(base, exist_ok=True)
    # Pages used before joining stay charged where they were (newer kernels refuse
    # move_charge_at_immigrate): the limit then bounds what the run allocates after joining.
    return base, os.path.join(base, "memory.limit_in_bytes"), \
        os.path.join(base, "memory.usage_in_bytes")


def write(path: str, value) -> None:
    with open(path, "w") as f:
        f.write(str(value))


def read_int(path: str) -> int:
    with open(path) as f:
        return int(f.read().split()[0])


def vm_size() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def child(args) -> None:
    import torch
    import torch.nn.functional as F

    import cpu_llama

    from seedance.torch import GradientAccumulator, enable
    from seedance.torch.control import is_out_of_memory

    cg_dir, cg_limit, cg_usage = cgroup_create(args.cgroup)
    write(os.path.join(cg_dir, "cgroup.procs"), os.getpid())  # charged from the start
    torch.set_num_threads(args.threads)
    model, opt, loader = cpu_llama.make(args.hidden, args.layers, args.context, args.batch,
                                        args.steps, with_ids=True)

    def loss_fn(m, micro):
        x = micro[0]
        logits = m(input_ids=x).logits[:, :-1]
        return F.cross_entropy(logits.reshape(-1, 256), x[:, 1:].reshape(-1),
                               reduction="sum"), x[:, 1:].numel()

    # Warm-up at a small micro-batch: optimizer state, threads, allocator pools.
    warm = GradientAccumulator(model, opt, steps=8)
    warm.step(next(iter(loader)), loss_fn)
    usage0, vm0 = read_int(cg_usage), vm_size()
    headroom = args.headroom_mb << 20

    libc = ctypes.CDLL("libc.so.6")

    def cap(room: int) -> None:
        resource.setrlimit(resource.RLIMIT_AS, (vm0 + room, resource.RLIM_INFINITY))
        libc.malloc_trim(0)  # hand freed heap pages back before the cgroup shrinks
        try:
            write(cg_limit, usage0 + int(room * 1.05))
        except OSError as e:
            raise SystemExit(f"cannot lower the cgroup limit to {(usage0 + room * 1.05) / 2**20:.0f}"
                             f" MiB: usage {read_int(cg_usage) / 2**20:.0f} MiB ({e})")

    cap(int(headroom * 0.7) if args.drop_at == 0 else headroom)
    log = []
    if args.mode == "adaptive":
        sd = enable(model, opt, loader, freeze=False, batch_max=args.batch, log=args.log)
        source = sd
    else:
        acc = GradientAccumulator(model, opt, steps=-(-args.batch // args.micro))
        source = loader
    seen = 0
    for step, batch in enumerate(source):
        if step == args.steps:
            break
        if step == args.drop_at and step > 0:
            cap(int(headroom * 0.7))
        start = time.perf_counter()
        try:
            result = sd.step(batch, loss_fn) if args.mode == "adaptive" else acc.step(batch,
                                                                                      loss_fn)
        except Exception as e:  # noqa: BLE001
            if args.mode == "fixed" and is_out_of_memory(e):
                print(json.dumps({"failed": f"out of memory at step {step}"}))
                return
            raise
        seen += len(batch[1])
        log.append({"step": step, "s": time.perf_counter() - start,
                    "micro_steps": result["micro_steps"]})
    out = {"steps": len(log), "samples": seen, "log": log, "headroom_mb": args.headroom_mb}
    peak = os.path.join(cg_dir, "memory.max_usage_in_bytes")
    if os.path.exists(peak):
        out["cgroup_peak_over_start_mb"] = (read_int(peak) - usage0) / 2**20
    if args.mode == "adaptive":
        sd.close()
    print(json.dumps(out))


def run_child(args, mode: str, micro: int, drop_at: int, steps: int, log: str) -> dict:
    name = f"seedance-memcap-{os.getpid()}-{mode}-{micro}"
    cmd = [sys.executable, __file__, "--child", "--mode", mode, "--micro", str(micro),
           "--drop-at", str(drop_at), "--steps", str(steps), "--log", log, "--cgroup", name]
    for k in ("headroom_mb", "batch", "threads", "hidden", "layers", "context"):
        cmd += ["--" + k.replace("_", "-"), str(getattr(args, k))]
    # One malloc arena: glibc's per-thread arenas reserve address space that pages fault into
    # later, which the cgroup would charge and the address-space limit would not see.
    env = dict(os.environ, MALLOC_ARENA_MAX="1")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    finally:  # the child has exited: its cgroup is empty and can go
        for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/memory"):
            if os.path.isdir(os.path.join(root, name)):
                os.rmdir(os.path.join(root, name))
    if proc.returncode != 0:
        return {"failed": f"exit {proc.returncode}" + (" (killed: over the cgroup limit)"
                                                       if proc.returncode == -9 else ""),
                "stderr": proc.stderr[-800:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def samples_per_s(result: dict, args, first: int) -> float:
    rows = [r for r in result["log"] if r["step"] >= first]
    return len(rows) * args.batch / sum(r["s"] for r in rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--child", action="store_true")
    p.add_argument("--mode", default="adaptive", choices=["adaptive", "fixed"])
    p.add_argument("--micro", type=int, default=0)
    p.add_argument("--log", default="")
    p.add_argument("--cgroup", default="")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--drop-at", type=int, default=30)
    p.add_argument("--settle", type=int, default=5)
    p.add_argument("--headroom-mb", type=int, default=600)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--sweep", default="8,16,24,32,48,64")
    p.add_argument("--sweep-steps", type=int, default=12)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--context", type=int, default=128)
    args = p.parse_args()
    if args.child:
        child(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "decisions.jsonl")
        adaptive = run_child(args, "adaptive", 0, args.drop_at, args.steps, log)
        decisions = []
        if os.path.exists(log):
            with open(log) as f:
                decisions = [json.loads(line) for line in f]
    out = {"headroom_mb": args.headroom_mb, "dropped_to_mb": int(args.headroom_mb * 0.7),
           "global_batch": args.batch, "steps": args.steps, "drop_at": args.drop_at}
    if "failed" in adaptive:
        out["adaptive"] = adaptive
        print(json.dumps(out, indent=1))
        sys.exit(1)
    out["adaptive"] = {
        "optimizer_steps": adaptive["steps"], "samples": adaptive["samples"],
        "micro_steps": [r["micro_steps"] for r in adaptive["log"]],
        "oom_retries": sum(1 for d in decisions if d["action"] == "shrink"
                           and "out of memory" in d["reason"]),
        "decisions": [f'{d["step"]}: {d["reason"]}' for d in decisions],
        "cgroup_peak_over_start_mb": adaptive.get("cgroup_peak_over_start_mb"),
        "samples_per_s_after_drop": samples_per_s(adaptive, args, args.drop_at + args.settle),
    }
    sweep = {}
    for micro in [int(m) for m in args.sweep.split(",")]:
        r = run_child(args, "fixed", micro, 0, args.sweep_steps, "")
        sweep[micro] = r if "failed" in r else {"samples_per_s": samples_per_s(r, args, 1)}
    out["fixed_under_dropped_cap"] = sweep
    ok = {m: r["samples_per_s"] for m, r in sweep.items() if "samples_per_s" in r}
    if ok:
        best = max(ok, key=ok.get)
        out["best_fixed_micro"] = best
        out["ratio_adaptive_to_best_fixed"] = \
            out["adaptive"]["samples_per_s_after_drop"] / ok[best]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
