#!/usr/bin/env python3
"""How the `--catalog` reader grows with the file (issue 17, finding 11).

Writes catalog override files of n new GPUs (every field given, one flow mapping per entry) to a
temporary folder and times `seedancectl --catalog FILE catalog list -o json` on each. Prints one
JSON object: for each n the wall seconds and the growth exponent from the previous n.

    .venv/bin/python bench/cost/catalog_scale.py [--sizes 1000,2000,4000,8000,16000]
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import subprocess
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]


def catalog(n: int) -> str:
    lines = ["gpus:"]
    for i in range(n):
        lines.append(
            f"  - {{id: G{i}, name: Gpu {i}, vendor: nvidia, form_factor: sxm, memory_gb: 80, "
            "memory_type: HBM3, memory_bandwidth_gbytes_per_s: 3350, dense_tflops: {fp16: 989, bf16: 989}, "
            f"tdp_watts: 700, price_per_hour_usd: {1 + i % 7}.0, price_date: 2026-11-01, "
            f"price_source: contract, datasheet: https://example.com/{i}}}")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seedancectl", default=str(REPO / "build" / "bin" / "seedancectl"))
    ap.add_argument("--sizes", default="1000,2000,4000,8000,16000")
    a = ap.parse_args()
    points = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in a.sizes.split(",")]:
            path = pathlib.Path(tmp) / f"catalog{n}.yaml"
            path.write_text(catalog(n))
            t0 = time.perf_counter()
            subprocess.run([a.seedancectl, "--catalog", str(path), "catalog", "list", "-o", "json"],
                           check=True, stdout=subprocess.DEVNULL)
            point = {"gpus": n, "seconds": round(time.perf_counter() - t0, 2)}
            if points:
                prev = points[-1]
                point["growth_exponent"] = round(
                    math.log(point["seconds"] / prev["seconds"]) / math.log(n / prev["gpus"]), 2)
            points.append(point)
    print(json.dumps(points, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
