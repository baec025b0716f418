#!/usr/bin/env python3
"""Loss scaling on a real training run (feature PREC-2 acceptance).

Trains one network on Fashion-MNIST three ways, from the same initial weights
and batch order:

  fp32        plain float32;
  fp16-scaled forward and backward emulated in FP16 (weights, activations,
              activation gradients and weight gradients rounded to FP16, as a
              GPU's FP16 kernels produce them) with seedance.torch.GradScaler;
  fp16        the same FP16 emulation without loss scaling.

and prints one JSON object: test accuracy of each run and, for the FP16 runs,
the share of gradient values that were nonzero in float32 but became zero in
FP16 (measured on the weight gradients of every step).

Usage: bench/precision/fashion_mnist_amp.py [--epochs N] [--train-samples N]
       [--batch N] [--accumulation N] [--grad-divisor D] [--lr X] [--mode dynamic|grad-norm|static] [--seed N]
Needs Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist) and
PYTHONPATH=build/python.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time

import numpy as np
import torch

import seedance.torch as st

DATA = os.environ.get("SEEDANCE_FASHION_MNIST", "/usr/share/datasets/fashion-mnist")


def load(kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    with gzip.open(os.path.join(DATA, f"{kind}-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
    with gzip.open(os.path.join(DATA, f"{kind}-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    x = torch.from_numpy(images.astype(np.float32) / 255.0)
    return (x - 0.2860) / 0.3530, torch.from_numpy(labels.astype(np.int64))


def make_model(depth: int, width: int) -> torch.nn.Module:
    """An MLP with `depth` hidden layers of `width` units (torch's default init)."""
    layers: list[torch.nn.Module] = []
    fan_in = 784
    for _ in range(depth):
        layers += [torch.nn.Linear(fan_in, width), torch.nn.ReLU()]
        fan_in = width
    layers.append(torch.nn.Linear(fan_in, 10))
    return torch.nn.Sequential(*layers)


FP16_POLICY = {"precision_policy": {"default": "fp16", "small_batch_fp32": 0,
                                    "rules": [{"type": "Linear", "precision": "fp16"}]}}


def accuracy(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    model.eval()
    with torch.no_grad():
        pred = torch.cat([model(x[i:i + 2000]).argmax(1) for i in range(0, len(x), 2000)])
    model.train()
    return float((pred == y).float().mean()) * 100


def train(variant: str, init: dict, data: tuple, args: argparse.Namespace) -> dict:
    xtr, ytr, xte, yte = data
    torch.manual_seed(args.seed)
    model = make_model(args.depth, args.width)
    model.load_state_dict(init)
    fp16 = variant != "fp32"
    if fp16:
        st.apply_precision_policy(model, FP16_POLICY, mode="emulate")
    # Dividing the loss by D and multiplying the learning rate by D leaves
    # float32 SGD's updates unchanged but makes every gradient D times smaller,
    # as a loss averaged over D times more tokens or micro-batches does.
    opt = torch.optim.SGD(model.parameters(), lr=args.lr * args.grad_divisor, momentum=0.9)
    scaler = st.GradScaler(mode=args.mode, enabled=(variant == "fp16-scaled"),
                           growth_interval=args.growth_interval)
    # Underflow census: weight gradients that FP16 rounding turned to zero.
    flushed = total = 0
    g = torch.Generator().manual_seed(args.seed)
    start = time.perf_counter()
    for _ in range(args.epochs):
        order = torch.randperm(len(xtr), generator=g)
        step = args.batch * args.accumulation
        for i in range(0, len(xtr) - step + 1, step):
            opt.zero_grad(set_to_none=True)
            for k in range(args.accumulation):
                idx = order[i + k * args.batch:i + (k + 1) * args.batch]
                # The usual gradient-accumulation scaling: each micro-batch's
                # loss is divided by the number of micro-batches.
                loss = torch.nn.functional.cross_entropy(model(xtr[idx]), ytr[idx])
                scaler.scale(loss / (args.accumulation * args.grad_divisor)).backward()
            if fp16:
                for p in model.parameters():
                    if p.grad is not None and p.dim() > 1:
                        total += p.grad.numel()
                        flushed += int((p.grad == 0).sum())
            scaler.step(opt)
            scaler.update()
    result = {"variant": variant, "test_accuracy_pct": round(accuracy(model, xte, yte), 2),
              "train_s": round(time.perf_counter() - start, 1)}
    if fp16:
        result["zero_weight_grad_share_pct"] = round(100.0 * flushed / max(total, 1), 3)
    if variant == "fp16-scaled":
        s = scaler.seedance_state()["state"]
        result.update(final_scale=s["scale"], skipped_steps=s["skipped_steps"])
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--train-samples", type=int, default=60000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--depth", type=int, default=3, help="hidden layers")
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--accumulation", type=int, default=1,
                    help="micro-batches per optimizer step (loss divided by it)")
    ap.add_argument("--grad-divisor", type=float, default=1.0,
                    help="divide the loss by D and multiply the learning rate by D")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--mode", default="dynamic", choices=["dynamic", "grad-norm", "static"])
    ap.add_argument("--growth-interval", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variants", default="fp32,fp16-scaled,fp16")
    args = ap.parse_args()
    if not os.path.isdir(DATA):
        print(f"error: Fashion-MNIST not found ({DATA}; apt-get install dataset-fashion-mnist)",
              file=sys.stderr)
        return 1
    # Every core, unless OMP_NUM_THREADS names a count (the parallel tests set it to 1).
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS") or os.cpu_count() or 1))
    xtr, ytr = load("train")
    xte, yte = load("t10k")
    xtr, ytr = xtr[:args.train_samples], ytr[:args.train_samples]
    torch.manual_seed(args.seed)
    init = make_model(args.depth, args.width).state_dict()
    runs = [train(v, init, (xtr, ytr, xte, yte), args) for v in args.variants.split(",")]
    print(json.dumps({"epochs": args.epochs, "train_samples": len(xtr), "batch": args.batch,
                      "depth": args.depth, "width": args.width, "accumulation": args.accumulation,
                      "grad_divisor": args.grad_divisor, "lr": args.lr,
                      "mode": args.mode, "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
