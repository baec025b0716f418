"""DeepSpeed's contiguous reduce buckets, read from DeepSpeed itself (the release the
project's environment installs).

The memory model holds DeepSpeed's 5e8-element reduce bucket during the backward pass at ZeRO 2
(two of them with `overlap_comm`) and at ZeRO 1 only with the optimizer offloaded
(`DeepSpeedContiguousBucket`, the releases the published runs used, v0.6-v0.12, which force the
buckets off at ZeRO 1). Later releases keep them on by default, so `--emit deepspeed` writes
`contiguous_gradients: false` at ZeRO 1 (the C++ test
EmitTest.DeepSpeedContiguousBucketsAreWhatTheMemoryModelCounts). A real DeepSpeed engine on one
gloo rank trains a small model for one step of two micro-batches under each setting, in one
process; a backward hook on the first layer reads the optimizer's buckets while the backward pass
runs.
"""

from __future__ import annotations

import json

import pytest

from conftest import run_deepspeed_one_rank

pytest.importorskip("torch")
pytest.importorskip("deepspeed")

PROBE = r"""
import json, sys
import torch, deepspeed
out = {}
for name, zero in json.loads(sys.argv[1]).items():
    config = {"train_batch_size": 4, "train_micro_batch_size_per_gpu": 2,
              "gradient_accumulation_steps": 2, "bf16": {"enabled": True},
              "zero_optimization": zero}
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 64))
    # PyTorch's AdamW as the client optimizer: a config `optimizer` would JIT-compile DeepSpeed's
    # fused Adam for the CPU (over a minute in a new environment). ZeRO wraps either alike.
    client = torch.optim.AdamW(model.parameters(), lr=1e-3)
    engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=client, config=config)
    seen = []

    def read_buckets(module, grad_in, grad_out, optimizer=optimizer, seen=seen):
        buckets = getattr(optimizer, "ipg_buckets", {})
        seen.append([b.numel() for bucket in buckets.values() for b in bucket.buffer])

    model[0].register_full_backward_hook(read_buckets)
    for _ in range(engine.gradient_accumulation_steps()):
        x = torch.randn(engine.train_micro_batch_size_per_gpu(), 64, dtype=torch.bfloat16,
                        requires_grad=True)
        engine.backward(engine(x).float().pow(2).mean())
        engine.step()
    out[name] = {"optimizer": type(optimizer).__name__, "buckets_in_backward": seen}
    del engine, optimizer
print(json.dumps(out))
"""


BUCKET = 500_000_000  # reduce_bucket_size's default, in elements


def test_deepspeed_holds_the_buckets_the_memory_model_counts():
    configs = {
        # ZeRO 1 as `--emit deepspeed` writes it.
        "zero1": {"stage": 1, "overlap_comm": False, "contiguous_gradients": False,
                  "offload_optimizer": {"device": "none"}},
        # The key left out: DeepSpeed's default, contiguous buckets on.
        "zero1_default": {"stage": 1, "overlap_comm": False,
                          "offload_optimizer": {"device": "none"}},
        # ZeRO 2 as written: overlapped reduction, double buffers.
        "zero2": {"stage": 2, "overlap_comm": True, "contiguous_gradients": True,
                  "offload_optimizer": {"device": "none"}},
    }
    r = run_deepspeed_one_rank(PROBE, json.dumps(configs))
    out = json.loads(r.stdout.strip().splitlines()[-1])
    for name in configs:
        assert out[name]["optimizer"] == "DeepSpeedZeroOptimizer"
        assert len(out[name]["buckets_in_backward"]) == 2  # both micro-batches' backward passes
    assert out["zero1"]["buckets_in_backward"] == [[], []]
    assert out["zero1_default"]["buckets_in_backward"] == [[BUCKET], [BUCKET]]
    assert out["zero2"]["buckets_in_backward"] == [[BUCKET, BUCKET], [BUCKET, BUCKET]]
