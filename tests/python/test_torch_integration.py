"""seedance.torch: recording a real training step's storage lifetimes on CPU,
planning them, and the allocator hook's refusal on a CPU-only torch 1.x."""

from __future__ import annotations

import csv
import json
import subprocess

import pytest

torch = pytest.importorskip("torch")

import seedance.mem  # noqa: E402
import seedance.torch as st  # noqa: E402


def transformer_step():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                             batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=2)
    opt = torch.optim.Adam(model.parameters())
    x = torch.randn(8, 16, 64)

    def step():
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()

    step()  # creates the optimizer state and the .grad tensors
    return model, opt, step


def test_record_lifetimes_of_a_transformer_step(tmp_path):
    model, opt, step = transformer_step()
    path = tmp_path / "step.csv"
    records = st.record_lifetimes(step, path, model=model, optimizer=opt)
    assert path.exists()
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(records) > 50
    end = max(r["upper"] for r in records)
    for r in records:
        assert 0 <= r["lower"] < r["upper"] <= end and r["size"] > 0
    # Every parameter is a weight live over the whole step, with its exact size.
    weights = [r for r in records if r["kind"] == "weight"]
    assert sum(r["size"] for r in weights) == sum(p.numel() * 4 for p in model.parameters())
    assert all(r["lower"] == 0 and r["upper"] == end for r in weights)
    # Adam keeps two moments per parameter; gradients exist for every parameter.
    kinds = {r["kind"] for r in records}
    assert {"weight", "gradient", "optimizer_state", "activation"} <= kinds
    moments = sum(r["size"] for r in records if r["kind"] == "optimizer_state")
    assert moments >= 2 * sum(p.numel() * 4 for p in model.parameters())
    # Activations are born and freed inside the step: memory can be reused.
    assert any(0 < r["lower"] and r["upper"] < end for r in records if r["kind"] == "activation")


def test_recorded_step_can_be_planned_and_checked(tmp_path, seedancectl):
    model, opt, step = transformer_step()
    path = tmp_path / "step.csv"
    records = st.record_lifetimes(step, path, model=model, optimizer=opt)
    plan = seedance.mem.plan(path, time_limit=0.5)
    assert plan["lower_bound_bytes"] <= plan["peak_bytes"] < sum(r["size"] for r in records)
    offsets = tmp_path / "plan.csv"
    r = subprocess.run([str(seedancectl), "mem", "plan", "--input", str(path), "--offsets-out",
                        str(offsets), "-o", "json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["peak_bytes"] == plan["peak_bytes"]
    c = subprocess.run([str(seedancectl), "mem", "check", "--input", str(path), "--offsets",
                        str(offsets)], capture_output=True, text=True)
    assert c.returncode == 0, c.stdout + c.stderr
    replay = seedance.mem.replay(path, policy="seedance-stitch")
    assert replay["reserved_peak_bytes"] >= replay["lower_bound_bytes"] == plan["lower_bound_bytes"]


def test_bad_device_and_allocator_hook_errors():
    with pytest.raises(ValueError):
        st.record_lifetimes(lambda: None, device="tpu")
    if torch.version.cuda is None:
        with pytest.raises(RuntimeError, match="CUDA build of torch.*CPU only"):
            st.use_caching_allocator()
    elif not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="torch sees none"):
            st.use_caching_allocator()
    with pytest.raises(RuntimeError, match="has not been called"):
        st.memory_stats()
