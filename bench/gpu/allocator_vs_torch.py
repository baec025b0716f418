#!/usr/bin/env python3
"""Trains a GPT-2-sized model (built from a config, nothing downloaded) for a
fixed number of steps, once with PyTorch's CUDA caching allocator and once with
Seedance's (seedance.torch.use_caching_allocator), each in its own process
(a pluggable allocator must be installed before the first CUDA allocation),
and prints peak reserved memory and median step time of each as JSON lines,
then their ratios.

    PYTHONPATH=build/python .venv/bin/python bench/gpu/allocator_vs_torch.py [--steps 30]

Needs a CUDA GPU and torch >= 2.0.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time


def gpt2_small(vocab: int = 50257, seq: int = 1024, width: int = 768, layers: int = 12,
               heads: int = 12):
    import torch
    from torch import nn

    class Gpt(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocab, width)
            self.wpe = nn.Embedding(seq, width)
            block = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0,
                                               activation="gelu", batch_first=True,
                                               norm_first=True)
            self.blocks = nn.TransformerEncoder(block, layers)
            self.ln_f = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)
            self.head.weight = self.wte.weight
            mask = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
            self.register_buffer("mask", mask)

        def forward(self, tokens):
            pos = torch.arange(tokens.shape[1], device=tokens.device)
            x = self.wte(tokens) + self.wpe(pos)
            x = self.blocks(x, mask=self.mask[: tokens.shape[1], : tokens.shape[1]])
            return self.head(self.ln_f(x))

    return Gpt()


def run(allocator: str, steps: int, batch: int) -> dict:
    import torch

    if allocator == "seedance":
        import seedance.torch as st
        st.use_caching_allocator()
    torch.manual_seed(0)
    model = gpt2_small().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, 50257, (batch, 1024), device="cuda")
    times = []
    for _ in range(steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                                                     tokens[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    if allocator == "seedance":
        import seedance.torch as st
        peak = st.memory_stats()["reserved_peak_bytes"]
    else:
        peak = torch.cuda.max_memory_reserved()
    return {"allocator": allocator, "steps": steps, "batch": batch,
            "peak_reserved_bytes": int(peak),
            "median_step_ms": 1000 * statistics.median(times[2:] or times),
            "final_loss": float(loss)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--only", choices=["torch", "seedance"])
    a = p.parse_args()
    if a.only:
        print(json.dumps(run(a.only, a.steps, a.batch)))
        return
    results = {}
    for allocator in ("torch", "seedance"):
        out = subprocess.run([sys.executable, __file__, "--only", allocator, "--steps",
                              str(a.steps), "--batch", str(a.batch)],
                             capture_output=True, text=True, check=True)
        results[allocator] = json.loads(out.stdout.strip().splitlines()[-1])
        print(json.dumps(results[allocator]))
    t, s = results["torch"], results["seedance"]
    print(json.dumps({"peak_reserved_ratio_seedance_over_torch":
                      s["peak_reserved_bytes"] / t["peak_reserved_bytes"],
                      "step_time_ratio_seedance_over_torch":
                      s["median_step_ms"] / t["median_step_ms"]}))


if __name__ == "__main__":
    main()
