#!/usr/bin/env python3
"""Compression speed (feature COMM-1 evaluation).

In one process, on N float32 values drawn from a normal distribution
(1M and 25M by default), best of --repeat runs:

  seedance <kind>   compress (libseedance, into a preallocated buffer) and
                    decompress (decode-add into a float32 buffer), timed apart
  torch.topk        the usual PyTorch top-k compressor: torch.topk on |x|,
                    gather the values (compress), then index_put into a
                    zeroed buffer (decompress)
  memcpy            numpy.copyto of the float32 buffer (the quantizers'
                    bandwidth is compared against it)

Prints JSON: milliseconds for compress and for decompress, their ratios to
memcpy of the same float32 buffer (bandwidth ratio: memcpy time / time), and
torch.topk's compress+decompress time / ours. Usage: PYTHONPATH=build/python bench/comm/compress_speed.py
[--sizes 1000000,25000000] [--ratio 0.01] [--repeat 5] [--samples-out FILE]

--samples-out writes every timed run (not only the best) of the round trip (compress +
decompress) of torch.topk and of Seedance's topk, in seconds, as {"torch.topk/N": [...],
"seedance.topk/N": [...]}: the input of `seedancectl cost compare FILE FILE --filter-a torch.topk
--filter-b seedance.topk`.
"""

import argparse
import json
import sys
import time

import numpy as np
import torch

from seedance import _core

KINDS = ["topk", "topk-sampled", "randomk", "int8", "int4", "sign", "fp16-int4"]


def times(fn, repeat):
    """Seconds of each of `repeat` runs after one warm-up run."""
    fn()
    t = []
    for _ in range(repeat):
        s = time.perf_counter()
        fn()
        t.append(time.perf_counter() - s)
    return t


def best(fn, repeat):
    return min(times(fn, repeat))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000000,25000000")
    ap.add_argument("--ratio", type=float, default=0.01)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--samples-out", help="write every round-trip time of torch.topk and topk")
    args = ap.parse_args()
    samples = {}
    torch.set_num_threads(args.threads)
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
        xt = torch.from_numpy(x)
        out = np.zeros(n, np.float32)
        dst = np.empty_like(x)
        gb = n * 4 / 1e9
        memcpy_s = best(lambda: np.copyto(dst, x), args.repeat)
        k = max(1, round(args.ratio * n))

        def torch_topk():
            _, idx = torch.topk(xt.abs(), k, sorted=False)
            vals = xt[idx]
            dense = torch.zeros(n)
            dense.index_put_((idx,), vals)
            return dense

        torch_runs = times(torch_topk, args.repeat)
        torch_s = min(torch_runs)
        row = {"n": n, "k": k, "memcpy_ms": round(memcpy_s * 1e3, 2),
               "torch_topk_ms": round(torch_s * 1e3, 2), "kinds": {}}
        for kind in KINDS:
            comp = _core.Compressor(kind, args.ratio, 0.01, 256, False, False)
            payload = np.empty(4 * n + 65536, np.uint8)  # room for any kind
            size = comp.compress_into(x.ctypes.data, n, 1, payload.ctypes.data, payload.size)
            c_s = best(lambda: comp.compress_into(x.ctypes.data, n, 1, payload.ctypes.data,
                                                  payload.size), args.repeat)
            d_s = best(lambda: _core.comm_decode_add(payload.ctypes.data, size, out.ctypes.data, n,
                                                     1.0), args.repeat)
            s = c_s + d_s
            if kind == "topk" and args.samples_out:
                def round_trip():
                    m = comp.compress_into(x.ctypes.data, n, 1, payload.ctypes.data, payload.size)
                    _core.comm_decode_add(payload.ctypes.data, m, out.ctypes.data, n, 1.0)
                samples[f"torch.topk/{n}"] = torch_runs
                samples[f"seedance.topk/{n}"] = times(round_trip, args.repeat)
            row["kinds"][kind] = {"compress_ms": round(c_s * 1e3, 2),
                                  "decompress_ms": round(d_s * 1e3, 2),
                                  "payload_bytes": size, "payload_share": round(size / (4 * n), 5),
                                  "vs_torch_topk": round(torch_s / s, 2),
                                  "compress_vs_memcpy": round(memcpy_s / c_s, 3),
                                  "decompress_vs_memcpy": round(memcpy_s / d_s, 3)}
        results.append(row)
    if args.samples_out:
        with open(args.samples_out, "w") as f:
            json.dump(samples, f, indent=1)
    print(json.dumps({"ratio": args.ratio, "torch": torch.__version__, "torch_threads": args.threads,
                      "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
