#!/usr/bin/env python3
"""The checkpoint cold tier's compression (feature CTRL-3, issue item 4).

Payloads: (1) the tiny Llama's weights file ($SEEDANCE_DATA_DIR/tiny-llama/aidreams260K.bin,
float32 after a 28-byte header); (2) a checkpoint as seedance.torch.Checkpointer writes it
(torch.save of model and AdamW state) of the CPU Llama of cpu_llama.py after --steps training
steps. For each: zstd alone (libseedance's cold frame with element width 1, i.e. no shuffle),
byte-shuffled zstd (width 4: the cold tier's lossless default) and, for the checkpoint, float32
rounded to bfloat16 then shuffled zstd (width 2: ``cold_bf16=True``, lossy). Prints JSON: bytes,
ratio to the payload, and encode and decode MB/s (of the payload, best of --repeat), each frame
checked to decode to its input.

Usage: SEEDANCE_DATA_DIR=../shared/data PYTHONPATH=build/python bench/control/cold_tier.py
       [--steps 20] [--level 3] [--repeat 3]
"""

import argparse
import io
import json
import os
import time

import torch

import cpu_llama
from seedance import _core
from seedance.torch.checkpoint import _to_bf16

DATA = os.environ.get("SEEDANCE_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..",
                                                        "..", "shared", "data"))


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, min(times)


def measure(payload: bytes, width: int, level: int, repeat: int, reference: bytes) -> dict:
    frame, enc = best(lambda: _core.cold_encode(payload, element_bytes=width, level=level), repeat)
    back, dec = best(lambda: _core.cold_decode(frame), repeat)
    assert back == payload
    mb = len(reference) / 1e6
    return {"bytes": len(frame), "ratio": len(reference) / len(frame),
            "encode_mb_per_s": mb / enc, "decode_mb_per_s": mb / dec}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--level", type=int, default=3)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    out = {"level": args.level}
    with open(os.path.join(DATA, "tiny-llama", "aidreams260K.bin"), "rb") as f:
        weights = f.read()
    out["tiny_llama_weights"] = {
        "payload_bytes": len(weights),
        "zstd": measure(weights, 1, args.level, args.repeat, weights),
        "shuffled_zstd": measure(weights, 4, args.level, args.repeat, weights)}
    model, opt, loader = cpu_llama.make(256, 4, 128, 8, args.steps)
    for batch in loader:
        model(input_ids=batch, labels=batch).loss.backward()
        opt.step()
        opt.zero_grad()
    state = {"model": model.state_dict(), "optimizer": opt.state_dict()}
    buf = io.BytesIO()
    torch.save(state, buf)
    payload = buf.getvalue()
    low = io.BytesIO()
    torch.save(_to_bf16(state), low)
    out["llama_checkpoint"] = {
        "payload_bytes": len(payload), "training_steps": args.steps,
        "zstd": measure(payload, 1, args.level, args.repeat, payload),
        "shuffled_zstd": measure(payload, 4, args.level, args.repeat, payload),
        "bf16_shuffled_zstd": measure(low.getvalue(), 2, args.level, args.repeat, payload)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
