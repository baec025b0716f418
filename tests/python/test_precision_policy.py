"""apply_precision_policy and CollapseGuard on small real models."""

from __future__ import annotations

import json
import os

import pytest
import torch

import seedance.torch as st
from seedance.errors import SeedanceError


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(16)
        self.q_proj = torch.nn.Linear(16, 16)
        self.mlp = torch.nn.Sequential()
        self.mlp.add_module("fc1", torch.nn.Linear(16, 32))
        self.mlp.add_module("act", torch.nn.ReLU())
        self.mlp.add_module("fc2", torch.nn.Linear(32, 16))
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        h = h + self.q_proj(h)
        return self.head(h + self.mlp(h))


def _by_module(plan: list) -> dict:
    return {d["module"]: d for d in plan}


def test_default_policy_follows_the_sensitivity_ordering() -> None:
    plan = _by_module(st.apply_precision_policy(Block(), micro_batch=32, mode="emulate"))
    assert {k: v["precision"] for k, v in plan.items()} == {
        "norm": "fp32", "q_proj": "bf16", "mlp.fc1": "fp16", "mlp.fc2": "fp16", "head": "bf16"}
    assert plan["q_proj"]["class"] == "qkv" and plan["q_proj"]["rule"] == "sensitivity"
    assert plan["norm"]["how"] == "fp32" and plan["mlp.fc1"]["how"] == "emulate"


def test_small_batch_keeps_everything_fp32() -> None:
    plan = st.apply_precision_policy(Block(), micro_batch=8)
    assert {d["precision"] for d in plan} == {"fp32"}
    assert {d["rule"] for d in plan} == {"small-batch"}


def test_policy_file_rules_and_errors(tmp_path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("precision_policy:\n  fp8: true\n  rules:\n"
                    "    - {name: 'mlp.*', precision: fp8}\n    - {type: Linear, precision: bf16}\n")
    plan = _by_module(st.apply_precision_policy(Block(), path, micro_batch=64))
    assert plan["mlp.fc1"]["precision"] == "fp8"
    assert plan["mlp.fc1"]["rule"] == f"rule 1 ({path}:4: precision_policy.rules[0])"
    assert plan["q_proj"]["precision"] == "bf16"
    path.write_text("precision_policy:\n  rules:\n    - {name: 'x', precision: fp4}\n")
    with pytest.raises(SeedanceError) as e:
        st.apply_precision_policy(Block(), path)
    assert e.value.where == f"{path}:3: precision_policy.rules[0].precision"


def test_emulated_layer_computes_on_rounded_values() -> None:
    torch.manual_seed(0)
    lin = torch.nn.Linear(64, 64)
    model = torch.nn.Sequential(lin)
    x = torch.randn(8, 64)
    w, b = lin.weight.detach().clone(), lin.bias.detach().clone()
    st.apply_precision_policy(model, {"precision_policy": {"default": "bf16"}}, mode="emulate")
    r = lambda t: t.to(torch.bfloat16).float()  # noqa: E731
    want = r(torch.nn.functional.linear(r(x), r(w), r(b)))
    torch.testing.assert_close(model(x), want, rtol=0, atol=0)
    # Masters stay float32 and unrounded; gradients reach them.
    assert lin.weight.dtype == torch.float32 and torch.equal(lin.weight.detach(), w)
    model(x).sum().backward()
    assert lin.weight.grad is not None and lin.weight.grad.dtype == torch.float32


def test_fp8_emulation_uses_e4m3_values() -> None:
    torch.manual_seed(0)
    t = torch.randn(1000)
    y = st.fake_round(t, "fp8_e4m3")
    scale = 448.0 / float(t.abs().max())
    import seedance.precision as sp
    assert torch.equal(y, torch.from_numpy(sp.round_trip(t * scale, "fp8_e4m3", True)) / scale)
    assert len(torch.unique(y)) <= 253


def test_cast_mode_runs_bf16_on_cpu() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(8, 8))
    plan = st.apply_precision_policy(model, {"precision_policy": {"default": "bf16"}}, mode="cast")
    assert plan[0]["how"] == "cast" and model[0].weight.dtype == torch.bfloat16
    out = model(torch.randn(2, 8))
    assert out.dtype == torch.float32
    plan.set("0", "fp32")
    assert model[0].weight.dtype == torch.float32


def _guarded(tmp_path, **kw):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    plan = st.apply_precision_policy(model, {"precision_policy": {"default": "fp16"}},
                                     mode="emulate")
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    guard = st.CollapseGuard(model, opt, plan=plan, snapshot_every=2, **kw)
    return model, plan, opt, guard


def test_guard_detects_rolls_back_resets_and_raises(tmp_path) -> None:
    log = tmp_path / "events.jsonl"
    ckpt = tmp_path / "ckpt"
    model, plan, opt, guard = _guarded(tmp_path, log_path=str(log), checkpoint_dir=str(ckpt))
    x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
    dead = {"on": False}
    model[2].weight.register_hook(lambda g: g * 0 if dead["on"] else g)
    model[2].bias.register_hook(lambda g: g * 0 if dead["on"] else g)
    weights = {}
    for step in range(1, 30):
        dead["on"] = step >= 12
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        weights[step] = model[2].weight.detach().clone()
        if guard.check(step):
            break
        opt.step()
    # Zero gradients from step 12: ratios 0 (12), 0/0 (13), 0/0 (14) -> detected at 14.
    assert step == 14
    (event,) = guard.events
    assert event["layers"] == ["2"] and event["precision_raised"] == {"2": ["fp16", "bf16"]}
    snap = event["restored_from_step"]
    assert snap <= 14 - 5
    assert torch.equal(model[2].weight.detach(), weights[snap])  # restored to the snapshot
    assert all(p not in opt.state for p in model[2].parameters())  # moments reset
    assert all(p in opt.state for p in model[0].parameters())      # others kept
    assert plan.precisions["2"] == "bf16"
    assert json.loads(log.read_text().strip()) == event
    files = os.listdir(ckpt)
    assert files and not any(f.endswith(".tmp") for f in files)


def test_guard_stays_quiet_on_healthy_training(tmp_path) -> None:
    model, _, opt, guard = _guarded(tmp_path)
    x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
    for step in range(1, 60):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        assert not guard.check(step)
        opt.step()
    assert guard.events == []
