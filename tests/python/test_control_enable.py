"""seedance.torch.enable and seedance.hf.SeedanceCallback (CTRL-1, -2, -3, -6) in real loops.

A small Llama built from a transformers config trains on byte-level text. References: the same
loop without Seedance (observe-only must reproduce its losses and weights bit for bit over 200
steps), the full-batch gradient (an out-of-memory retry must still give it), promtool (the
exported families), and the Trainer's own checkpoint files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import urllib.request

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
import torch.nn.functional as F  # noqa: E402

import seedance.hf  # noqa: E402
from seedance.torch import enable  # noqa: E402

from prometheus_check import assert_promtool_accepts  # noqa: E402

VOCAB = 256
CONTEXT = 16


def text_blocks(samples: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    words = [b"the gpu ", b"holds ", b"a block ", b"of the batch ", b"and frees ", b"its page "]
    data = b"".join(words[int(i)] for i in torch.randint(0, len(words), (samples * 8,), generator=g))
    ids = torch.tensor(list(data[: samples * CONTEXT]), dtype=torch.long)
    return ids.view(samples, CONTEXT)


class Blocks(torch.utils.data.Dataset):
    def __init__(self, samples: int) -> None:
        self.ids = text_blocks(samples)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict:
        return {"input_ids": self.ids[i], "labels": self.ids[i], "sample_id": torch.tensor(i)}


def small_llama(layers: int = 2, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=layers, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=CONTEXT)
    return transformers.LlamaForCausalLM(config).float()


def loader(samples: int, batch: int, seed: int = 1) -> torch.utils.data.DataLoader:
    return torch.utils.data.DataLoader(Blocks(samples), batch_size=batch, shuffle=True,
                                       generator=torch.Generator().manual_seed(seed))


def plain_loop(steps: int, session_settings: dict | None, layers: int = 2,
               batch: int = 8) -> tuple[list[float], torch.nn.Module, object]:
    """The user's loop; with settings, the two changed lines of seedance.torch.enable."""
    model = small_llama(layers)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    data = loader(96, batch)
    source = data
    sd = None
    if session_settings is not None:
        sd = enable(model, opt, data, **session_settings)  # changed line 1
        source = sd
    losses: list[float] = []
    while len(losses) < steps:
        for b in source:  # changed line 2: `for b in sd`
            out = model(input_ids=b["input_ids"], labels=b["labels"])
            out.loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(out.loss.item())
            if len(losses) == steps:
                break
    if sd is not None:
        sd.close()
    return losses, model, sd


def read_log(path) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f]


def test_observe_only_plain_loop_is_bit_for_bit_the_unmodified_loop(tmp_path) -> None:
    reference, ref_model, _ = plain_loop(200, None)
    log = tmp_path / "decisions.jsonl"
    observed, model, _ = plain_loop(200, {"observe_only": True, "log": str(log),
                                          "checkpoint_interval": 50, "freeze": True,
                                          "grow_global_batch": True})
    assert observed == reference  # every one of the 200 losses, exactly
    for a, b in zip(ref_model.state_dict().values(), model.state_dict().values()):
        assert torch.equal(a, b)
    decisions = read_log(log)
    assert decisions, "observe-only still decides and logs"
    assert not any(d["applied"] for d in decisions)
    # Memory is far under 65% of this machine's: the scaler would have grown the batch.
    grows = [d for d in decisions if d["controller"] == "batch" and d["action"] == "grow"]
    assert grows and grows[0]["step"] == 3 and grows[0]["inputs"]["size"] == 24  # 8 + 16
    assert {"memory_share", "samples_per_s", "size"} <= set(grows[0]["inputs"])
    assert [d["step"] for d in decisions if d["controller"] == "checkpoint"] == [50, 100, 150, 200]


def test_enable_runs_every_controller_in_a_plain_loop(tmp_path) -> None:
    ckpt = tmp_path / "ckpt"
    log = tmp_path / "decisions.jsonl"
    settings = {"log": str(log), "metrics_listen": "127.0.0.1:0", "checkpoint_dir": str(ckpt),
                "checkpoint_floor": 10, "checkpoint_interval": 10, "freeze_threshold": 10.0,
                "batch_step": 4, "batch_max": 16, "batch_min_gain": -1, "freeze": True,
                "grow_global_batch": True}
    model = small_llama(layers=4)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    sd = enable(model, opt, loader(96, 4), **settings)
    losses = []
    seen: list[int] = []
    while len(losses) < 40:
        for b in sd:
            out = model(input_ids=b["input_ids"], labels=b["labels"])
            out.loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(out.loss.item())
            seen += b["sample_id"].tolist()
            if len(losses) == 40:
                break
    # The metrics endpoint, read by a real HTTP client while the session runs.
    with urllib.request.urlopen(f"http://127.0.0.1:{sd.controllers.recorder.port}/metrics") as r:
        metrics = r.read().decode()
    sd.close()
    assert sum(losses[-5:]) < sum(losses[:5])
    decisions = read_log(log)
    assert all(d["applied"] for d in decisions)
    grows = [d for d in decisions if d["action"] == "grow"]
    assert [d["inputs"]["size"] for d in grows] == [8, 12, 16]  # +4 every 3 steps, up to the max
    assert all("the global batch changes" in d["reason"] for d in grows)
    assert sd._sampler.size == 16  # batch_min_gain < 0: samples/s (noisy here) not checked
    # Front blocks froze first, the last one never; frozen blocks have no gradient.
    frozen = [not any(p.requires_grad for p in blk.parameters()) for blk in model.model.layers]
    assert frozen == [True, True, True, False]
    assert [d["inputs"]["block"] for d in decisions if d["action"] == "freeze"] == [0, 1, 2]
    # Saved every 10 steps (the interval may have doubled if the disk stalled), 3 kept.
    kept = sorted(int(n[5:17]) for n in os.listdir(ckpt))
    assert kept[-1] == 40 and 2 <= len(kept) <= 3 and all(k % 10 == 0 for k in kept)
    assert "seedance_control_decisions_total{controller=\"batch\",action=\"grow\"," \
           "applied=\"true\"} 3" in metrics
    assert "seedance_control_setting{controller=\"freeze\",setting=\"frozen_blocks\"} 3" in metrics
    assert_promtool_accepts(metrics)
    # A second enable on the same directory resumes: the state, the step and the sample.
    model2 = small_llama(layers=4, seed=5)
    opt2 = torch.optim.AdamW(model2.parameters(), lr=3e-3)
    sd2 = enable(model2, opt2, loader(96, 4), **{**settings, "metrics_listen": None})
    assert sd2.controllers.step == 40
    for a, b in zip(model.state_dict().values(), model2.state_dict().values()):
        assert torch.equal(a, b)
    # The epoch's consumed samples are skipped: the rest of the epoch is what the first run
    # had not seen in its last epoch.
    epoch_seen = sd2.next_sample
    rest = [i for b in sd2 for i in b["sample_id"].tolist()]
    assert epoch_seen + len(rest) == 96
    sd2.close()


def token_loss_sum(m, micro):
    logits = m(input_ids=micro["input_ids"]).logits[:, :-1]
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), micro["labels"][:, 1:].reshape(-1),
                           reduction="sum")
    return loss, micro["labels"][:, 1:].numel()


def test_default_enable_keeps_the_global_batch(tmp_path) -> None:
    """enable() at its defaults with memory that calls for a smaller batch (a 1 MiB budget): with
    Session.step the *micro*-batch shrinks and the steps stay those of the loader's global batch
    (same samples, same losses and weights as a full-batch loop, to summation order); in a loop
    whose body runs the batch itself, nothing changes and the log says why."""
    reference = small_llama()
    ropt = torch.optim.AdamW(reference.parameters(), lr=3e-3)
    ref_losses, ref_ids = [], []
    for b in loader(96, 8):
        loss_sum, count = token_loss_sum(reference, b)
        (loss_sum / count).backward()
        ropt.step()
        ropt.zero_grad()
        ref_losses.append(loss_sum.item() / count)
        ref_ids.append(b["sample_id"].tolist())
    model = small_llama()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    log = tmp_path / "step.jsonl"
    sd = enable(model, opt, loader(96, 8), log=str(log), memory_budget_bytes=1 << 20)
    losses, ids, micro_steps = [], [], []
    for b in sd:
        result = sd.step(b, token_loss_sum)
        losses.append(result["loss"])
        ids.append(b["sample_id"].tolist())
        micro_steps.append(result["micro_steps"])
    sd.close()
    assert ids == ref_ids  # 12 optimizer steps over the same global batches of 8
    assert micro_steps[0] == 1 and micro_steps[-1] == 8  # micro-batch 8, then 1 (the floor)
    torch.testing.assert_close(losses, ref_losses, rtol=1e-5, atol=0)
    for a, b in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    shrinks = [d for d in read_log(log) if d["controller"] == "batch"]
    assert shrinks and all(d["applied"] and "global batch is kept" in d["reason"]
                           for d in shrinks)
    # The two-line loop (no Session.step): the batch stays 8, the decision is not applied.
    log2 = tmp_path / "plain.jsonl"
    _, _, sd2 = plain_loop(12, {"log": str(log2), "memory_budget_bytes": 1 << 20})
    assert sd2._sampler.size == 8
    decisions = [d for d in read_log(log2) if d["controller"] == "batch"]
    assert decisions and all(not d["applied"] and "Session.step" in d["reason"]
                             for d in decisions)


def test_step_retries_out_of_memory_at_a_smaller_micro_batch(tmp_path) -> None:
    """An out-of-memory error at micro-batch 16 (injected above 12 samples): the step is retried
    in more micro-steps; the gradient is still the full batch's; each sample counted once."""
    model = small_llama()
    reference = small_llama()
    data = next(iter(loader(96, 32)))
    log = tmp_path / "log.jsonl"
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sd = enable(model, opt, [data], log=str(log), batch_step=16, freeze=False)
    assert sd.controllers.scaler is None  # a list is not resizable: size from the first step
    sd = enable(model, opt, loader(96, 32), log=str(log), batch_step=8, freeze=False,
                batch_max=32)
    attempts: list[list[int]] = []

    def loss_fn(m, micro):
        attempts.append(micro["sample_id"].tolist())
        if len(micro["sample_id"]) > 12:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        logits = m(input_ids=micro["input_ids"]).logits[:, :-1]
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), micro["labels"][:, 1:].reshape(-1),
                               reduction="sum")
        return loss, micro["labels"][:, 1:].numel()

    result = sd.step(data, loss_fn)
    sd.close()
    # 32 in one micro-step fails, then halved: 16 fails, 8 fits: 4 micro-steps.
    assert result["micro_steps"] == 4
    last = attempts[-4:]
    assert sorted(i for part in last for i in part) == sorted(data["sample_id"].tolist())
    shrinks = [d for d in read_log(log) if d["action"] == "shrink"]
    assert [d["inputs"]["size"] for d in shrinks] == [16, 8]
    # The same step on the reference model in one full batch.
    ropt = torch.optim.SGD(reference.parameters(), lr=0.1)
    logits = reference(input_ids=data["input_ids"]).logits[:, :-1]
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), data["labels"][:, 1:].reshape(-1))
    loss.backward()
    ropt.step()
    for a, b in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_a_real_allocation_failure_under_an_address_space_limit_is_retried(tmp_path) -> None:
    """RLIMIT_AS makes torch's CPU allocator fail (catchable) where a cgroup would kill: a step
    whose activations exceed the limit at micro-batch 8,192 succeeds at a smaller one."""
    script = textwrap.dedent("""
        import json, resource, sys, torch
        from seedance.torch import enable
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(),
                                    torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                    torch.nn.Linear(1024, 1))
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        x = torch.randn(8192, 256); y = torch.randn(8192, 1)
        data = torch.utils.data.TensorDataset(x, y)
        loader = torch.utils.data.DataLoader(data, batch_size=8192)
        def loss_fn(m, micro):
            return ((m(micro[0]) - micro[1]) ** 2).sum(), len(micro[0])
        loss_fn(model, (x[:512], y[:512]))[0].backward()  # threads and pools before the cap
        opt.zero_grad()
        with open("/proc/self/status") as f:
            vm = [int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize")][0]
        # Room for the weights (5 MB), their gradients and a few micro-batches' activations,
        # not for 8,192 samples' (8192 x 1024 x 4 bytes = 32 MiB a tensor, several a layer).
        resource.setrlimit(resource.RLIMIT_AS, (vm + 128 * 2**20, resource.RLIM_INFINITY))
        sd = enable(model, opt, loader, log=sys.argv[1], freeze=False, batch_max=8192)
        batch = next(iter(sd))
        result = sd.step(batch, loss_fn)
        sd.close()
        print(json.dumps(result))
    """)
    log = tmp_path / "log.jsonl"
    # One malloc arena: per-thread arenas reserve address space at unpredictable moments.
    run = subprocess.run([sys.executable, "-c", script, str(log)], capture_output=True,
                         text=True, timeout=300, env=dict(os.environ, MALLOC_ARENA_MAX="1"))
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["count"] == 8192 and result["micro_steps"] > 1
    shrinks = [d for d in read_log(log) if d["action"] == "shrink"]
    assert shrinks and "out of memory" in shrinks[0]["reason"]


def trainer(tmp_path, callbacks, steps: int, layers: int = 2, batch: int = 8, epochs: int = 0,
            samples: int = 96, accumulation: int = 1, **args_kw):
    model = small_llama(layers)
    length = {"num_train_epochs": epochs} if epochs else {"max_steps": steps}
    args_kw.setdefault("save_strategy", "no")
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"), **length, per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation, learning_rate=3e-3, warmup_steps=2,
        logging_steps=1, report_to=[], use_cpu=True, disable_tqdm=True, seed=0,
        dataloader_num_workers=0, **args_kw)
    return transformers.Trainer(model=model, args=args, train_dataset=Blocks(samples),
                                callbacks=callbacks)


def samples_seen(t) -> list[list[list[int]]]:
    """The token ids of every training forward pass of a Trainer, in order (the Trainer drops
    the dataset's columns the model's forward does not name, so the samples are their tokens)."""
    seen: list[list[list[int]]] = []
    t.model.register_forward_pre_hook(
        lambda m, a, kw: seen.append(kw["input_ids"].tolist()) if m.training else None,
        with_kwargs=True)
    return seen


@pytest.mark.parametrize("samples,batch,accumulation,layers",
                         [(96, 8, 1, 2), (100, 6, 3, 3)])
def test_default_callback_keeps_the_global_batch_steps_and_losses(
        tmp_path, samples, batch, accumulation, layers) -> None:
    """SeedanceCallback() at its defaults, over a full epoch: the same optimizer steps over the
    same samples, the same losses, as without it, although memory readings call for a smaller
    batch (a 1 MiB budget): that decision is logged, not applied, and says why."""
    plain = trainer(tmp_path / "a", [], 0, layers=layers, batch=batch, epochs=1,
                    samples=samples, accumulation=accumulation)
    plain_seen = samples_seen(plain)
    plain.train()
    log = tmp_path / "hf.jsonl"
    callback = seedance.hf.SeedanceCallback(log=str(log), memory_budget_bytes=1 << 20,
                                            checkpoint_interval=5, checkpoint_floor=5)
    with_cb = trainer(tmp_path / "b", [callback], 0, layers=layers, batch=batch, epochs=1,
                      samples=samples, accumulation=accumulation)
    cb_seen = samples_seen(with_cb)
    with_cb.train()
    steps = -(-samples // (batch * accumulation))
    assert plain.state.global_step == with_cb.state.global_step == steps
    assert cb_seen == plain_seen and sum(len(b) for b in cb_seen) == samples
    losses = [[e["loss"] for e in t.state.log_history if "loss" in e] for t in (plain, with_cb)]
    assert len(losses[1]) == steps
    torch.testing.assert_close(losses[1], losses[0], rtol=1e-6, atol=0)
    decisions = read_log(log)
    shrinks = [d for d in decisions if d["controller"] == "batch"]
    assert shrinks and all(not d["applied"] and "not applied" in d["reason"] for d in shrinks)
    assert all(d["inputs"]["size"] < batch for d in shrinks)
    assert not any(d["controller"] == "freeze" for d in decisions)  # freezing is opt-in
    # save_strategy="no": the interval is reached, nothing is written, the log says why.
    saves = [d for d in decisions if d["controller"] == "checkpoint" and d["action"] == "save"]
    assert saves and all(not d["applied"] and "save_strategy" in d["reason"] for d in saves)
    assert not [p for p in os.listdir(tmp_path / "b" / "out") if p.startswith("checkpoint-")]


def test_observe_only_callback_is_bit_for_bit_the_plain_trainer(tmp_path) -> None:
    plain = trainer(tmp_path / "a", [], 200)
    plain.train()
    log = tmp_path / "hf.jsonl"
    observed = trainer(tmp_path / "b", [seedance.hf.SeedanceCallback(
        observe_only=True, log=str(log), checkpoint_interval=50)], 200)
    observed.train()
    losses = [[e["loss"] for e in t.state.log_history if "loss" in e] for t in (plain, observed)]
    assert len(losses[0]) == 200 and losses[0] == losses[1]
    for a, b in zip(plain.model.state_dict().values(), observed.model.state_dict().values()):
        assert torch.equal(a, b)
    decisions = read_log(log)
    assert decisions and not any(d["applied"] for d in decisions)
    assert not (tmp_path / "b" / "out" / "checkpoint-50").exists()


def test_callback_runs_every_controller_in_a_trainer(tmp_path) -> None:
    log = tmp_path / "hf.jsonl"
    callback = seedance.hf.SeedanceCallback(
        log=str(log), checkpoint_interval=10, checkpoint_floor=10, freeze_threshold=10.0,
        batch_step=4, batch_max=16, batch_min_gain=-1, freeze=True, grow_global_batch=True)
    # Three epochs of 96 samples: 72 steps at the initial batch of 4, fewer once it grows (the
    # opt-in: a grown batch covers the Trainer's epochs in fewer steps). The Trainer's own saves
    # are off in effect (save_steps beyond the run) but allowed, so the callback's interval saves.
    t = trainer(tmp_path, [callback], 0, layers=4, batch=4, epochs=3, save_strategy="steps",
                save_steps=10**6)
    t.train()
    assert 96 * 3 // 16 <= t.state.global_step < 72
    losses = [e["loss"] for e in t.state.log_history if "loss" in e]
    assert sum(losses[-5:]) < sum(losses[:5])
    decisions = read_log(log)
    grows = [d for d in decisions if d["action"] == "grow"]
    assert [d["inputs"]["size"] for d in grows] == [8, 12, 16] and all(d["applied"] for d in grows)
    assert all("the global batch changes" in d["reason"] for d in grows)
    assert callback._sampler is not None and callback._sampler.batch_size == 16
    frozen = [not any(p.requires_grad for p in blk.parameters()) for blk in t.model.model.layers]
    assert frozen == [True, True, True, False]
    # The Trainer wrote its own checkpoints when the callback set control.should_save.
    saved = sorted(int(p.split("-")[1]) for p in os.listdir(tmp_path / "out")
                   if p.startswith("checkpoint-"))
    assert saved[:2] == [10, 20] and all(s % 10 == 0 for s in saved)
    intervals = [d for d in decisions if d["action"] == "interval"]
    assert len(intervals) == len(saved) and all(d["inputs"]["save_s"] > 0 for d in intervals)


def test_cpu_memory_reads_the_limit_that_applies_now() -> None:
    """A given budget wins; without one, a memory cgroup's limit; without one, RLIMIT_AS (the
    process's virtual size against it, read afresh: a lowered limit shows at once)."""
    from seedance import _core
    from seedance.torch.control import cpu_memory
    used, budget = cpu_memory(1 << 40)
    with open("/proc/self/statm") as f:
        resident = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    assert budget == 1 << 40 and abs(used - resident) < 64 << 20
    if _core.cpu_memory()[2].startswith("cgroup"):
        pytest.skip("this process runs in a memory cgroup with a limit: it is the budget")
    script = textwrap.dedent("""
        import os, resource
        from seedance.torch.control import cpu_memory
        with open("/proc/self/statm") as f:
            vm = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.RLIM_INFINITY))
        used, budget = cpu_memory()
        print(used, budget, vm + (512 << 20))
        resource.setrlimit(resource.RLIMIT_AS, (vm + (256 << 20), resource.RLIM_INFINITY))
        print(*cpu_memory())
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    first, second = run.stdout.split("\n")[:2]
    used, budget, expected = map(int, first.split())
    assert budget == expected and 0 < used < budget
    assert int(second.split()[1]) == expected - (256 << 20)
