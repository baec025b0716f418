"""Gradient accumulation (seedance.torch.GradientAccumulator, CTRL-2) against the full batch.

A tiny Llama built from a transformers config trains on variable-length sequences (right
padding, labels -100). The reference is one forward and backward over the whole global batch,
its token losses summed and divided by the batch's token count: every number of micro-steps
must give that gradient to 1e-6 relative in fp32. Averaging each micro-batch's own mean instead
must not (the check can fail). Changing the number of micro-steps between optimizer steps never
drops or repeats a sample (a ledger of sample ids); the scheduler and the loss scaler step once
per optimizer step; under DDP on two gloo ranks only the last micro-step all-reduces, and the
gradient is the global batch's.
"""

from __future__ import annotations

import copy
import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
import torch.nn.functional as F  # noqa: E402

from conftest import run_ranks  # noqa: E402
from seedance.torch import GradientAccumulator  # noqa: E402

VOCAB = 64


def tiny_llama(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=64)
    return transformers.LlamaForCausalLM(config).float()


def batch(n: int, seed: int = 1) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    length = 24
    ids = torch.randint(0, VOCAB, (n, length), generator=g)
    lengths = torch.randint(3, length + 1, (n,), generator=g)  # very different lengths
    mask = (torch.arange(length)[None, :] < lengths[:, None]).long()
    labels = torch.where(mask.bool(), ids, torch.full_like(ids, -100))
    return {"input_ids": ids, "attention_mask": mask, "labels": labels,
            "sample_id": torch.arange(n)}


def token_loss_sum(model, micro):
    logits = model(input_ids=micro["input_ids"], attention_mask=micro["attention_mask"]).logits
    labels = micro["labels"][:, 1:]
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), labels.reshape(-1),
                           ignore_index=-100, reduction="sum")
    return loss, int((labels != -100).sum())


def full_batch_grads(model, data):
    model.zero_grad(set_to_none=True)
    loss, count = token_loss_sum(model, data)
    (loss / count).backward()
    return [p.grad.detach().clone() for p in model.parameters()]


def captured_grads(optimizer):
    """Records the gradients the optimizer sees when it steps."""
    seen = []
    optimizer.register_step_pre_hook(
        lambda opt, args, kwargs: seen.append(
            [p.grad.detach().clone() for g in opt.param_groups for p in g["params"]]))
    return seen


def relative(a, b) -> float:
    num = sum(float((x - y).pow(2).sum()) for x, y in zip(a, b)) ** 0.5
    den = sum(float(y.pow(2).sum()) for y in b) ** 0.5
    return num / den


def test_every_number_of_micro_steps_gives_the_full_batch_gradient():
    base = tiny_llama()
    data = batch(16)
    reference = full_batch_grads(copy.deepcopy(base), data)
    for k in range(1, 9):
        model = copy.deepcopy(base)
        opt = torch.optim.SGD(model.parameters(), lr=0.0)
        seen = captured_grads(opt)
        result = GradientAccumulator(model, opt, steps=k).step(data, token_loss_sum)
        assert result["micro_steps"] == k
        assert relative(seen[0], reference) <= 1e-6, k
    # The naive way — each micro-batch's own mean, averaged — is off for variable lengths.
    model = copy.deepcopy(base)
    model.zero_grad(set_to_none=True)
    for part in (data_part(data, 0, 4), data_part(data, 4, 8), data_part(data, 8, 12),
                 data_part(data, 12, 16)):
        loss, count = token_loss_sum(model, part)
        (loss / count / 4).backward()
    naive = [p.grad for p in model.parameters()]
    assert relative(naive, reference) > 1e-3


def data_part(data, lo, hi):
    return {k: v[lo:hi] for k, v in data.items()}


def test_changing_the_micro_steps_never_drops_or_repeats_a_sample():
    model = tiny_llama()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=1)
    updates = []
    original_update = scaler.update
    scaler.update = lambda *a, **kw: (updates.append(1), original_update(*a, **kw))[1]
    acc = GradientAccumulator(model, opt, steps=1, lr_scheduler=scheduler, grad_scaler=scaler)
    ledger = []

    def recording_loss(m, micro):
        ledger[-1].extend(int(i) for i in micro["sample_id"])
        return token_loss_sum(m, micro)

    plan = [1, 3, 8, 2, 5, 4, 7, 6]
    for step, k in enumerate(plan):
        acc.steps = k  # set between optimizer steps: applies to this one
        data = batch(13, seed=10 + step)  # 13 samples: uneven micro-batches
        ledger.append([])
        result = acc.step(data, recording_loss)
        assert result["micro_steps"] == k
        assert sorted(ledger[-1]) == list(range(13)), (k, ledger[-1])
        assert ledger[-1] == list(range(13))  # in order, each once
    assert acc.optimizer_steps == len(plan)
    assert scheduler.last_epoch == len(plan)  # once per optimizer step
    assert len(updates) == len(plan)
    with pytest.raises(ValueError):
        acc.steps = 9
    with pytest.raises(ValueError):
        GradientAccumulator(model, opt, steps=4).step(batch(3), token_loss_sum)


WORKER = r"""
import json, os, sys
rank, world, build = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, build)
sys.path.insert(0, sys.argv[5])                   # tests/python: this test module
sys.path.insert(0, os.path.dirname(sys.argv[5]))  # tests: its conftest
import torch, torch.distributed as dist
dist.init_process_group("gloo", init_method="file://" + sys.argv[4], rank=rank, world_size=world)
from test_accumulation import tiny_llama, batch, token_loss_sum, captured_grads
from seedance.torch import GradientAccumulator
k = int(sys.argv[6])
model = torch.nn.parallel.DistributedDataParallel(tiny_llama(), bucket_cap_mb=0.05)
calls = []
def counting(state, bucket):
    calls.append(1)
    fut = dist.all_reduce(bucket.buffer(), async_op=True).get_future()
    return fut.then(lambda f: f.value()[0].div_(world))
model.register_comm_hook(None, counting)
opt = torch.optim.SGD(model.parameters(), lr=0.0)
seen = captured_grads(opt)
data = batch(16)
mine = {key: value[rank * 8:(rank + 1) * 8] for key, value in data.items()}
GradientAccumulator(model, opt, steps=k).step(mine, token_loss_sum)
print(json.dumps({"calls": len(calls), "grads": [g.flatten().tolist() for g in seen[0]]}))
del model, opt
dist.barrier()  # no rank leaves while another still talks
# Tearing gloo down can deadlock or abort a CPU rank (examples/fsdp_train.py says how): leave
# without it, the output flushed.
sys.stdout.flush(); os._exit(0)
"""


def test_ddp_synchronises_only_the_last_micro_step():
    import pathlib
    here = str(pathlib.Path(__file__).resolve().parent)
    reference = full_batch_grads(tiny_llama(), batch(16))
    calls = {}
    for k in (1, 4):
        outs = [json.loads(o) for o in run_ranks(WORKER, 2, here, str(k))]
        calls[k] = outs[0]["calls"]
        for out in outs:  # every rank holds the global batch's gradient
            got = [torch.tensor(g).reshape(r.shape) for g, r in zip(out["grads"], reference)]
            assert relative(got, reference) <= 1e-6, k
    assert calls[1] >= 1  # one call per bucket
    assert calls[4] == calls[1]  # four micro-steps, one synchronisation (not four)
