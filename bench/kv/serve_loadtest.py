"""The serving table (issue 23, KV-5 with COST-8): `seedancectl kv serve` with each batching policy
and KV width, under `seedancectl loadtest`'s concurrency ladder, on the tiny Llama model. The KV
budget is fixed in bytes, so a narrower cache admits more sequences at once.

Prints one JSON object: every level of every configuration, and for a P99 bound the highest
throughput each configuration reaches within it, relative to dynamic batching with the FP32 cache.

  .venv/bin/python bench/kv/serve_loadtest.py [--budget-mib 1] [--level-s 4] [--p99-ms 150]
      [--max-tokens 64] [--concurrency 1,4,8,16,32] [--window N]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("SEEDANCE_BUILD_DIR", str(ROOT / "build")))
    ap.add_argument("--data", default=os.environ.get("SEEDANCE_DATA_DIR",
                                                     str(ROOT.parent / "shared" / "data")))
    ap.add_argument("--budget-mib", default="1")
    ap.add_argument("--max-batch", default="16")
    ap.add_argument("--max-tokens", default="64")
    ap.add_argument("--concurrency", default="1,4,8,16,32")
    ap.add_argument("--level-s", default="4")
    ap.add_argument("--warmup-s", default="1")
    ap.add_argument("--p99-ms", type=float, default=150.0)
    ap.add_argument("--window", default=None,
                    help="tokens the quantized caches keep in FP32 (default: kv serve's)")
    a = ap.parse_args()
    ctl = pathlib.Path(a.build) / "bin" / "seedancectl"
    tiny = pathlib.Path(a.data) / "tiny-llama"
    rows = []
    for policy in ("dynamic", "continuous"):
        for bits in ("32", "8", "4"):
            server = subprocess.Popen(
                [str(ctl), "kv", "serve", "--model", str(tiny / "aidreams260K.bin"),
                 "--tokenizer", str(tiny / "tok512.bin"), "--listen", "127.0.0.1:0",
                 "--policy", policy, "--kv-bits", bits, "--kv-budget-mib", a.budget_mib,
                 "--max-batch", a.max_batch, "--max-queue", "4096"]
                + (["--window", a.window] if a.window is not None else []),
                stderr=subprocess.PIPE, text=True)
            try:
                line = server.stderr.readline()
                port = re.search(r"127\.0\.0\.1:(\d+)/v1", line).group(1)
                r = subprocess.run(
                    [str(ctl), "loadtest", "--url", f"http://127.0.0.1:{port}/v1",
                     "--completions", "--model", "aidreams260K", "--max-tokens", a.max_tokens,
                     "--concurrency", a.concurrency, "--warmup-s", a.warmup_s,
                     "--level-s", a.level_s, "-o", "json"],
                    capture_output=True, text=True, check=True)
                metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                                 timeout=10).read().decode()
            finally:
                server.send_signal(signal.SIGTERM)
                server.communicate(timeout=120)
            # The mean running batch over the whole run (warm-up included): how many sequences
            # the KV budget let the engine step at once.
            batch = {m.group(1): float(m.group(2)) for m in re.finditer(
                r"^seedance_kv_batch_size_(sum|count) (\S+)$", metrics, re.M)}
            mean_batch = round(batch["sum"] / batch["count"], 2) if batch.get("count") else None
            for level in json.loads(r.stdout)["levels"]:
                rows.append({"policy": policy, "kv_bits": bits,
                             "concurrency": level["concurrency"],
                             "throughput_rps": round(level["throughput_rps"], 1),
                             "p99_ms": round(level["latency_ms"]["p99"]["estimate"], 1),
                             "ttft_p50_ms": round(level["ttft_ms"]["p50"], 2),
                             "tokens_per_s": round(level["tokens_per_s"]),
                             "error_rate": level["error_rate"],
                             "steady": level["steady"], "mean_batch_whole_run": mean_batch})
            print(f"{policy} {bits}: done", file=sys.stderr)
    best = {}
    for row in rows:
        key = f"{row['policy']}/{row['kv_bits']}"
        if row["p99_ms"] <= a.p99_ms and row["error_rate"] == 0:
            best[key] = max(best.get(key, 0.0), row["throughput_rps"])
    base = best.get("dynamic/32")
    print(json.dumps({"budget_mib": float(a.budget_mib), "max_batch": int(a.max_batch),
                      "max_tokens": int(a.max_tokens), "p99_bound_ms": a.p99_ms,
                      "best_rps_within_p99": best,
                      "relative_to_dynamic_fp32": {k: round(v / base, 2) for k, v in best.items()}
                      if base else None,
                      "levels": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
