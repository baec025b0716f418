"""What the planner counts for Accelerate's DDP, read from Accelerate and PyTorch themselves.

`seedancectl optimize --emit accelerate` writes a MULTI_GPU launch for a data-parallel layout
(ZeRO 0). Accelerate's config file has no key for DDP's `gradient_as_bucket_view`, so the script's
DDP keeps PyTorch's default: the reducer's buckets are a second gradient-sized copy beside
`.grad`, and under `accelerator.accumulate` DDP reduces only on the last micro-batch
(FrameworkTraits::ddp_buckets_beside_gradients; MemoryModel.DdpUnderAutocastKeepsTheWeightsCasts
and TimeModelTest.PyTorchDataParallelismPassesOverTheParameters check the arithmetic). Two gloo
ranks train through a real Accelerator; a communication hook records every bucket DDP reduces.
With `DistributedDataParallelKwargs(gradient_as_bucket_view=True)` (what the FSDP plan's
script passes) the gradients are the buckets, and nothing is counted beside them.
"""

from __future__ import annotations

import json

import pytest

from conftest import run_ranks

pytest.importorskip("torch")
pytest.importorskip("accelerate")

WORKER = r"""
import json, os, sys
import torch, torch.distributed as dist
rank, world = int(sys.argv[1]), int(sys.argv[2])
os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                  LOCAL_WORLD_SIZE=str(world))
dist.init_process_group("gloo", init_method="file://" + sys.argv[4], rank=rank, world_size=world)
from accelerate import Accelerator
from accelerate.utils import DistributedDataParallelKwargs
handlers = [DistributedDataParallelKwargs(gradient_as_bucket_view=True)] if sys.argv[5] == "view" else []
accelerator = Accelerator(cpu=True, gradient_accumulation_steps=2, kwargs_handlers=handlers)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64))
optimizer = torch.optim.AdamW(model.parameters())
ddp, optimizer = accelerator.prepare(model, optimizer)
buckets = []

def keep(state, bucket):
    buckets.append(bucket.buffer())
    work = dist.all_reduce(bucket.buffer(), async_op=True)
    return work.get_future().then(lambda f: f.value()[0])

ddp.register_comm_hook(None, keep)
params = list(model.parameters())
out = {"type": str(accelerator.distributed_type), "ddp": type(ddp).__name__}
for step in range(2):
    for micro_batch in range(2):
        buckets.clear()
        with accelerator.accumulate(ddp):
            ddp(torch.randn(8, 64)).sum().backward()
            spans = [(b.data_ptr(), b.data_ptr() + b.numel() * b.element_size()) for b in buckets]
            out[f"step{step}.mb{micro_batch}"] = {
                "reduced": len(buckets),
                "bucket_bytes": sum(b.numel() * b.element_size() for b in buckets),
                "gradient_bytes": sum(p.grad.numel() * p.grad.element_size() for p in params),
                "grads_in_buckets": sum(
                    any(lo <= p.grad.data_ptr() < hi for lo, hi in spans) for p in params),
            }
            optimizer.step()
            optimizer.zero_grad()
out["parameters"] = sum(p.numel() for p in params)
print(json.dumps(out), flush=True)
dist.barrier()
del ddp, optimizer, accelerator
dist.destroy_process_group()
"""


def ranks(mode: str) -> list[dict]:
    return [json.loads(o.strip().splitlines()[-1]) for o in run_ranks(WORKER, 2, mode)]


def test_accelerates_ddp_keeps_its_buckets_beside_the_gradients():
    for out in ranks("default"):
        assert out["type"].endswith("MULTI_CPU") and out["ddp"] == "DistributedDataParallel"
        for step in ("step0", "step1"):
            # no_sync through the accumulation: nothing reduced until the last micro-batch.
            assert out[f"{step}.mb0"]["reduced"] == 0
            last = out[f"{step}.mb1"]
            assert last["reduced"] >= 1
            # A second copy of every fp32 gradient: 4 bytes a parameter beside .grad.
            assert last["bucket_bytes"] == last["gradient_bytes"] == 4 * out["parameters"]
            assert last["grads_in_buckets"] == 0


def test_gradient_as_bucket_view_makes_the_gradients_the_buckets():
    for out in ranks("view"):
        for step in ("step0", "step1"):
            last = out[f"{step}.mb1"]
            assert last["bucket_bytes"] == last["gradient_bytes"]
            assert last["grads_in_buckets"] == 4  # both layers' weights and biases
