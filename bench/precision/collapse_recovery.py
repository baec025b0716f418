#!/usr/bin/env python3
"""Collapse guard on a real training run (feature PREC-5 acceptance).

Trains an MLP on Fashion-MNIST three times from the same weights and batch
order, printing one JSON object with each run's test accuracy:

  undisturbed  every Linear layer in bf16 (emulated), no fault;
  guarded      at step --inject-at the second Linear layer is downgraded to
               fp8; the fault model is that its backward then underflows to
               zero (fp8 without a scale): no gradient reaches its weights or
               the layers below it. The
               CollapseGuard detects the collapse, restores the layer from its
               last good snapshot, resets its optimizer moments and raises its
               precision one level (fp8 -> fp16), which ends the fault;
  unguarded    the same fault and no guard.

Usage: bench/precision/collapse_recovery.py [--epochs N] [--train-samples N]
       [--inject-at STEP] [--scope layers|model] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_mnist_amp as fm  # noqa: E402  (the data reader)

import seedance.torch as st  # noqa: E402

POLICY = {"precision_policy": {"default": "bf16", "small_batch_fp32": 0}}
VICTIM = "2"  # the second Linear layer of the Sequential


class _Underflow(torch.autograd.Function):
    """Identity forward; a backward that has flushed every value to zero."""

    @staticmethod
    def forward(ctx, x):  # type: ignore[override]
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        return torch.zeros_like(grad)


def train(variant: str, init: dict, data: tuple, args: argparse.Namespace) -> dict:
    xtr, ytr, xte, yte = data
    model = fm.make_model(2, 256)
    model.load_state_dict(init)
    plan = st.apply_precision_policy(model, POLICY, mode="emulate")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    guard = st.CollapseGuard(model, opt, plan=plan, scope=args.scope) \
        if variant == "guarded" else None
    victim = dict(model.named_modules())[VICTIM]

    # The fault: while the victim runs in fp8 its backward underflows, so no
    # gradient reaches its weights or anything below it.
    def fault(_m: torch.nn.Module, _args: tuple, out: torch.Tensor) -> torch.Tensor:
        return _Underflow.apply(out) if plan.precisions[VICTIM] == "fp8" else out

    victim.register_forward_hook(fault)
    g = torch.Generator().manual_seed(args.seed)
    step = 0
    skipped = 0
    start = time.perf_counter()
    for _ in range(args.epochs):
        order = torch.randperm(len(xtr), generator=g)
        for i in range(0, len(xtr) - args.batch + 1, args.batch):
            step += 1
            if variant != "undisturbed" and step == args.inject_at:
                plan.set(VICTIM, "fp8")
            idx = order[i:i + args.batch]
            loss = torch.nn.functional.cross_entropy(model(xtr[idx]), ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if guard is not None and guard.check(step):
                skipped += 1
                continue
            opt.step()
    out = {"variant": variant, "test_accuracy_pct": round(fm.accuracy(model, xte, yte), 2),
           "victim_precision_at_end": plan.precisions[VICTIM], "steps": step,
           "train_s": round(time.perf_counter() - start, 1)}
    if guard is not None:
        out.update(events=guard.events, skipped_steps=skipped)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--train-samples", type=int, default=30000)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--inject-at", type=int, default=30)
    ap.add_argument("--scope", default="layers", choices=["layers", "model"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not os.path.isdir(fm.DATA):
        print(f"error: Fashion-MNIST not found ({fm.DATA})", file=sys.stderr)
        return 1
    xtr, ytr = fm.load("train")
    xte, yte = fm.load("t10k")
    xtr, ytr = xtr[:args.train_samples], ytr[:args.train_samples]
    torch.manual_seed(args.seed)
    init = fm.make_model(2, 256).state_dict()
    runs = [train(v, init, (xtr, ytr, xte, yte), args)
            for v in ("undisturbed", "guarded", "unguarded")]
    print(json.dumps({"epochs": args.epochs, "train_samples": len(xtr), "batch": args.batch,
                      "inject_at": args.inject_at, "scope": args.scope, "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
