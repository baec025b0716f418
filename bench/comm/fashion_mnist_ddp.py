#!/usr/bin/env python3
"""Compressed data-parallel training on Fashion-MNIST (feature COMM-3 evaluation).

For each compressor, --world gloo ranks on this machine train the same MLP
(784-256-256-10, SGD with momentum 0.9) with DistributedDataParallel and
seedance.torch.comm_hook, from the same initial weights, each rank on its
own quarter of the training set, for a fixed budget of --epochs. "none" is
DDP's own all-reduce. Prints one JSON object: per compressor, rank 0's test
accuracy, the bytes it sent and would have sent uncompressed, and wall time.

Usage: PYTHONPATH=build/python bench/comm/fashion_mnist_ddp.py [--world 4]
       [--epochs 6] [--ratio 0.01] [--warmup-steps 20]
       [--compressors none,topk,topk-sampled,randomk,int8,int4,sign,fp16-int4]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def worker(args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist

    sys.path.insert(0, os.path.join(HERE, "..", "precision"))
    import fashion_mnist_amp as fm  # the data reader

    import seedance.torch as st

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + args.rendezvous, rank=args.rank,
                            world_size=args.world)
    xtr, ytr = fm.load("train")
    xte, yte = fm.load("t10k")
    xtr, ytr = xtr[args.rank::args.world], ytr[args.rank::args.world]
    torch.manual_seed(args.seed)
    model = fm.make_model(2, 256)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    state = None
    if args.compressor != "none":
        state, hook = st.comm_hook(args.compressor, ratio=args.ratio,
                                   warmup_steps=args.warmup_steps, seed=args.seed)
        ddp.register_comm_hook(state, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    g = torch.Generator().manual_seed(args.seed + args.rank)
    start = time.perf_counter()
    steps = 0
    for _ in range(args.epochs):
        order = torch.randperm(len(xtr), generator=g)
        for i in range(0, len(xtr) - args.batch + 1, args.batch):
            idx = order[i:i + args.batch]
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(ddp(xtr[idx]), ytr[idx]).backward()
            opt.step()
            steps += 1
    wall = time.perf_counter() - start
    if args.rank == 0:
        n = sum(p.numel() for p in model.parameters())
        out = {"compressor": args.compressor, "steps": steps,
               "test_accuracy_pct": round(fm.accuracy(model, xte, yte), 2),
               "train_s": round(wall, 1)}
        if state is not None:
            s = state.stats()
            out.update(bytes_sent=s["bytes_sent"], bytes_uncompressed=s["bytes_uncompressed"],
                       sent_share_after_warmup=round(s["sent_share_after_warmup"], 5))
        else:
            out.update(bytes_sent=4 * n * steps, bytes_uncompressed=4 * n * steps)
        print(json.dumps(out), flush=True)
    dist.barrier()
    dist.destroy_process_group()


def run(compressor: str, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as d:
        outs = [open(os.path.join(d, f"out{r}"), "w+") for r in range(args.world)]
        procs = [subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", "--rank", str(r),
             "--world", str(args.world), "--rendezvous", os.path.join(d, "rdzv"),
             "--compressor", compressor, "--epochs", str(args.epochs), "--ratio", str(args.ratio),
             "--warmup-steps", str(args.warmup_steps), "--lr", str(args.lr),
             "--batch", str(args.batch), "--seed", str(args.seed)],
            stdout=outs[r], stderr=subprocess.STDOUT, text=True) for r in range(args.world)]
        for p in procs:
            p.wait()
        outs[0].seek(0)
        text = outs[0].read()
        if any(p.returncode for p in procs):
            for f in outs:
                f.seek(0)
                sys.stderr.write(f.read())
            raise SystemExit(f"a rank failed for {compressor}")
        return json.loads(text.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--world", type=int, default=4)
    ap.add_argument("--rendezvous", default="")
    ap.add_argument("--compressor", default="none")
    ap.add_argument("--compressors",
                    default="none,topk,topk-sampled,randomk,int8,int4,sign,fp16-int4")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--ratio", type=float, default=0.01)
    ap.add_argument("--warmup-steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--batch", type=int, default=64, help="per rank")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return 0
    runs = [run(c, args) for c in args.compressors.split(",")]
    print(json.dumps({"world": args.world, "epochs": args.epochs, "ratio": args.ratio,
                      "warmup_steps": args.warmup_steps, "batch_per_rank": args.batch,
                      "lr": args.lr, "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
