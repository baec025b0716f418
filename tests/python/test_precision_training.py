"""The acceptance runs on Fashion-MNIST: loss scaling and the collapse guard.

Each test runs a script from bench/precision in a quick configuration and
checks its JSON; docs/benchmarks.md records the full runs.
"""

from __future__ import annotations

from conftest import run_bench


def _run(script: str, *args: str) -> dict:
    return run_bench("precision/" + script, *args)


def test_loss_scaling_recovers_fp32_accuracy_and_unscaled_fp16_does_not() -> None:
    r = _run("fashion_mnist_amp.py", "--epochs", "1", "--grad-divisor", "16384")
    acc = {x["variant"]: x for x in r["runs"]}
    fp32 = acc["fp32"]["test_accuracy_pct"]
    assert fp32 > 80
    assert abs(acc["fp16-scaled"]["test_accuracy_pct"] - fp32) <= 1.0
    assert acc["fp16"]["test_accuracy_pct"] < fp32 - 10
    assert acc["fp16"]["zero_weight_grad_share_pct"] > 50
    assert acc["fp16-scaled"]["zero_weight_grad_share_pct"] < 20


def test_collapse_guard_recovers_the_undisturbed_accuracy() -> None:
    r = _run("collapse_recovery.py")
    runs = {x["variant"]: x for x in r["runs"]}
    base = runs["undisturbed"]["test_accuracy_pct"]
    guarded = runs["guarded"]
    assert abs(guarded["test_accuracy_pct"] - base) <= 1.0
    (event,) = guarded["events"]
    # Layer 0 collapses with it (no gradient reaches it); both are rolled back.
    assert "2" in event["layers"] and event["precision_raised"]["2"] == ["fp8", "fp16"]
    assert event["restored_from_step"] <= event["step"] - 5
    assert guarded["victim_precision_at_end"] == "fp16"
    assert runs["unguarded"]["test_accuracy_pct"] < base - 2
