#!/usr/bin/env python3
"""FP32 -> FP16 / BF16 / FP8 conversion throughput against memcpy and torch.

All in one process, on the same 64 MiB float32 buffer (16 Mi values, random
normal), into preallocated outputs:

  memcpy       numpy.copyto of the float32 buffer into another float32 buffer
  seedance     seedance.precision.encode (the AVX2/F16C kernel, and the scalar
               reference with --scalar)
  torch        out.copy_(x) into a preallocated torch tensor of the target
               dtype (torch.float16 / bfloat16; float8 types when torch has them)

Each figure is the best of --repeat runs, in GB/s of float32 input read.
Prints JSON; the ratio seedance/memcpy is the figure the target (>= 0.8)
refers to.

Usage: PYTHONPATH=build/python bench/precision/convert_throughput.py [--mib 64] [--repeat 20]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import torch

import seedance.precision as sp

TORCH_DTYPE = {"fp16": torch.float16, "bf16": torch.bfloat16,
               "fp8_e4m3": getattr(torch, "float8_e4m3fn", None),
               "fp8_e5m2": getattr(torch, "float8_e5m2", None)}


def best(fn, repeat: int) -> float:
    fn()  # warm up: page in the outputs
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (seedance uses one)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    n = args.mib * 2**20 // 4
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    xt = torch.from_numpy(x)
    gb = n * 4 / 1e9
    dst = np.empty_like(x)
    memcpy_s = best(lambda: np.copyto(dst, x), args.repeat)
    rows = []
    for fmt in sp.FORMATS:
        out = np.empty(n, dtype=np.uint16 if fmt in ("fp16", "bf16") else np.uint8)
        row = {"format": fmt}
        for kernel in ("auto", "scalar"):
            s = best(lambda: sp.encode(x, fmt, kernel=kernel, out=out), args.repeat)
            row[f"seedance_{kernel}_gbytes_per_s"] = round(gb / s, 2)
        row["seedance_vs_memcpy"] = round(memcpy_s / best(
            lambda: sp.encode(x, fmt, out=out), args.repeat), 3)
        dtype = TORCH_DTYPE[fmt]
        if dtype is not None:
            tout = torch.empty(n, dtype=dtype)
            ts = best(lambda: tout.copy_(xt), args.repeat)
            row["torch_gbytes_per_s"] = round(gb / ts, 2)
            row["seedance_vs_torch"] = round(ts / (gb / row["seedance_auto_gbytes_per_s"]), 2)
        else:
            row["torch_gbytes_per_s"] = None  # this torch has no such dtype
        rows.append(row)
    print(json.dumps({"buffer_mib": args.mib, "values": n, "kernel": sp.kernel(),
                      "torch": torch.__version__, "torch_threads": args.threads,
                      "memcpy_gbytes_per_s": round(gb / memcpy_s, 2), "conversions": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
