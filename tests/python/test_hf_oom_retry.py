"""seedance.hf.retry_out_of_memory in a real transformers.Trainer (CTRL-1's out-of-memory retry).

Reference: the same Trainer run without memory trouble. Out-of-memory errors are injected with the
CPU allocator's own message, in the forward pass (before any gradient is added) or in the
backward pass (after the later layers' gradients were added, so the step's earlier micro-batches
must be replayed); the run must make the same optimizer steps with the same losses and weights.
The real allocation failure under an address-space limit, on SmolLM2, is
bench/control/trainer_oom.py.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import seedance.hf  # noqa: E402

from test_control_enable import Blocks, read_log, trainer  # noqa: E402

CPU_OOM = ("[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate "
           "memory: you tried to allocate 4194304 bytes. Error code 12 (Cannot allocate memory)")


class MaskedBlocks(Blocks):
    """Labels with a leading run of -100 that differs per sample: chunks of a micro-batch hold
    different numbers of label tokens, so their weights must come from the tokens, not the rows;
    every 11th sample has all its labels masked (a prompt whose answer was cut off)."""

    def __getitem__(self, i: int) -> dict:
        item = dict(super().__getitem__(i))
        labels = item["labels"].clone()
        labels[: len(labels) if i % 11 == 5 else i % 7] = -100
        item["labels"] = labels
        return item


def inject(model: torch.nn.Module, cap: int, where: str, after: int = 0) -> list[int]:
    """Makes training passes over more than `cap` rows fail for memory, from the `after`-th
    forward pass on: at the model's input (forward) or at the first block's output's gradient
    (backward, after the head's and the later blocks' gradients were added). Returns the row
    counts of the training forward passes."""
    rows: list[int] = []

    def too_big() -> bool:
        return rows[-1] > cap and len(rows) > after

    def forward(module, args, kwargs):
        if module.training:
            rows.append(int(kwargs["input_ids"].shape[0]))
            if where == "forward" and too_big():
                raise RuntimeError(CPU_OOM)

    def first_block(module, args, output):
        hidden = output[0] if isinstance(output, tuple) else output
        if module.training and where == "backward" and too_big() and hidden.requires_grad:
            def fail(_):
                raise RuntimeError(CPU_OOM)
            hidden.register_hook(fail)

    model.register_forward_pre_hook(forward, with_kwargs=True)
    model.model.layers[0].register_forward_hook(first_block)
    return rows


def losses(t) -> list[float]:
    return [e["loss"] for e in t.state.log_history if "loss" in e]


def grad_norms(t) -> list[float]:
    """The gradient norm before clipping, each step: the direct check of "the same gradient"
    (clipping and Adam would hide a uniform scale error in the weights)."""
    return [float(e["grad_norm"]) for e in t.state.log_history if "grad_norm" in e]


@pytest.mark.parametrize("where,accumulation,after,token_weights", [
    ("forward", 1, 0, False),   # the first micro-batch fails: chunks from then on
    ("backward", 3, 4, False),  # a later micro-batch fails mid-backward: the step is replayed
    ("backward", 3, 4, True),   # the same with the loss averaged per micro-batch (no item count)
])
def test_a_trainer_retries_out_of_memory_in_chunks_with_the_same_steps_and_losses(
        tmp_path, where, accumulation, after, token_weights) -> None:
    dataset = MaskedBlocks(72)

    def run(name, split):
        t = trainer(tmp_path / name, [], 0, layers=3, batch=6, epochs=1, samples=72,
                    accumulation=accumulation)
        t.train_dataset = dataset
        if token_weights:
            t.model_accepts_loss_kwargs = False  # the Trainer divides each micro-batch's mean
        rows = None
        splitter = None
        if split:
            rows = inject(t.model, cap=2, where=where, after=after)
            splitter = seedance.hf.retry_out_of_memory(t)
        t.train()
        return t, rows, splitter

    plain, _, _ = run("plain", False)
    retried, rows, splitter = run("retried", True)
    steps = -(-72 // (6 * accumulation))
    assert plain.state.global_step == retried.state.global_step == steps
    assert splitter.retries == 2 and splitter.chunk == 1  # 6 rows fail, then 3, then 1 fits
    assert splitter.replayed == (0 if where == "forward" else 2)
    assert max(rows[after + 3:]) == 1  # every pass after the retries ran in chunks of one row
    torch.testing.assert_close(losses(retried), losses(plain), rtol=1e-5, atol=1e-6)
    assert len(grad_norms(plain)) == steps
    torch.testing.assert_close(grad_norms(retried), grad_norms(plain), rtol=1e-5, atol=1e-7)
    for a, b in zip(retried.model.parameters(), plain.model.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def test_with_the_callback_the_batch_controller_sets_the_chunk_and_logs_the_retry(
        tmp_path) -> None:
    """With SeedanceCallback in the Trainer, the retry is the batch controller's decision, and
    its later decisions (a 1 MiB budget calls for smaller micro-batches) are applied as chunks,
    with the Trainer's global batch, steps and losses unchanged."""
    plain = trainer(tmp_path / "a", [], 0, layers=2, batch=8, epochs=1, samples=96)
    plain.train()
    log = tmp_path / "hf.jsonl"
    callback = seedance.hf.SeedanceCallback(log=str(log), memory_budget_bytes=1 << 20)
    t = trainer(tmp_path / "b", [callback], 0, layers=2, batch=8, epochs=1, samples=96)
    rows = inject(t.model, cap=4, where="forward")
    splitter = seedance.hf.retry_out_of_memory(t)
    assert callback._splitter is splitter
    t.train()
    assert t.state.global_step == plain.state.global_step == 12
    torch.testing.assert_close(losses(t), losses(plain), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(grad_norms(t), grad_norms(plain), rtol=1e-5, atol=1e-7)
    decisions = [d for d in read_log(log) if d["controller"] == "batch"]
    shrinks = [d for d in decisions if d["action"] == "shrink"]
    assert shrinks[0]["inputs"]["size"] == 4 and "out of memory" in shrinks[0]["reason"]
    assert all(d["applied"] for d in decisions)
    # A later decision from the memory readings, not an out-of-memory error, set the chunk, and
    # the forward passes after it ran at that size.
    by_memory = [d for d in shrinks if "out of memory" not in d["reason"]]
    assert by_memory and by_memory[-1]["inputs"]["size"] < 4
    assert splitter.chunk == by_memory[-1]["inputs"]["size"]
    assert rows[-1] == splitter.chunk
    splitter.close()
    assert t.training_step == t.__class__.training_step.__get__(t)
    assert callback._splitter is None


def test_other_errors_and_the_floor_are_raised(tmp_path) -> None:
    t = trainer(tmp_path, [], 2, batch=2)
    inject(t.model, cap=0, where="forward")  # even one row "runs out of memory"
    splitter = seedance.hf.retry_out_of_memory(t)
    with pytest.raises(RuntimeError, match="can't allocate memory"):
        t.train()
    assert splitter.retries == 1 and splitter.chunk == 1
    other = trainer(tmp_path / "other", [], 2, batch=2)

    def boom(module, args, kwargs):
        raise RuntimeError("boom: not a memory error")

    other.model.register_forward_pre_hook(boom, with_kwargs=True)
    splitter = seedance.hf.retry_out_of_memory(other)
    with pytest.raises(RuntimeError, match="boom"):
        other.train()
    assert splitter.retries == 0 and splitter.chunk is None
    with pytest.raises(TypeError, match="trainer"):
        seedance.hf.retry_out_of_memory(object())
    with pytest.raises(ValueError, match="min_chunk"):
        seedance.hf.retry_out_of_memory(t, min_chunk=0)


def test_setups_whose_gradient_it_cannot_keep_are_refused(tmp_path, monkeypatch) -> None:
    """Distributed runs (each chunk would synchronise on its own) and optimizers that update the
    weights inside the backward pass (a replay cannot undo them) are refused up front."""
    from accelerate.utils import DistributedType

    t = trainer(tmp_path / "ddp", [], 2)
    monkeypatch.setattr(type(t.accelerator), "distributed_type",
                        property(lambda self: DistributedType.MULTI_GPU))
    with pytest.raises(ValueError, match="distributed"):
        seedance.hf.retry_out_of_memory(t)
    monkeypatch.undo()
    lomo = trainer(tmp_path / "lomo", [], 2)
    lomo.args.optim = "lomo"
    with pytest.raises(ValueError, match="lomo"):
        seedance.hf.retry_out_of_memory(lomo)
