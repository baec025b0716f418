"""`optimize --calibrate` with memory readings: a runs file whose rows state memory per GPU (and no
step time) refits its framework's measured memory overhead, says so, and plans with it."""

from __future__ import annotations

import csv
import json
import math
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
STEP_COLUMNS = ("published_step_s", "published_tokens_per_s_per_gpu", "published_tflops_per_gpu",
                "published_mfu")


def bloom_memory_rows(path: pathlib.Path, scale: float) -> None:
    """Five of BLOOM's runs with memory readings as `memory` rows (their step figures blanked),
    the readings multiplied by `scale` (a cluster whose readings run that much above BLOOM's)."""
    with (ROOT / "bench/plan/published_runs.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames
        rows = [r for r in reader if r["group"] == "bloom" and r["kind"] == "run"
                and r["published_gb_per_gpu"]][:5]
    for r in rows:
        r["group"] = "own"
        r["kind"] = "memory"
        for c in STEP_COLUMNS:
            r[c] = ""
        r["published_gb_per_gpu"] = f"{float(r['published_gb_per_gpu']) * scale:.3f}"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def plan(seedancectl, *args: str) -> dict:
    """The offload example's stated layout, evaluated as DeepSpeed runs it (it does not fit one
    H100: exit 3, with the report)."""
    job = ROOT / "examples/llama-13b-offload.yaml"
    out = subprocess.run([str(seedancectl), "optimize", str(job), "--evaluate-only", "--set",
                          "framework=deepspeed", "-o", "json", *args],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 3, out.stderr
    return json.loads(out.stdout)


def test_memory_readings_alone_calibrate_the_frameworks_overhead(tmp_path, seedancectl):
    public = plan(seedancectl)
    path = tmp_path / "runs.csv"
    bloom_memory_rows(path, 1.0)
    same = plan(seedancectl, "--calibrate", str(path))
    calibration = same["calibration"]
    assert calibration["coefficients"].startswith("the public fit's")  # no step was measured
    deepspeed = calibration["memory_overhead"]["frameworks"]["deepspeed"]
    assert deepspeed["rows"] == 5
    assert deepspeed["public"] > 0
    # A cluster whose readings run 10% higher moves the overhead up, by most of that (five rows
    # outweigh the prior) but not beyond it, and the DeepSpeed plan's memory with it.
    bloom_memory_rows(path, 1.10)
    higher = plan(seedancectl, "--calibrate", str(path))
    moved = higher["calibration"]["memory_overhead"]["frameworks"]["deepspeed"]
    shift = math.log1p(moved["calibrated"]) - math.log1p(deepspeed["calibrated"])
    assert 0.5 * math.log(1.10) < shift < math.log(1.10)
    before = public["before"]["memory"]
    after = higher["before"]["memory"]
    assert before["measured_overhead_bytes"] > 0  # the public DeepSpeed overhead
    assert after["measured_overhead_bytes"] > before["measured_overhead_bytes"]
    assert (after["total_bytes"] - after["measured_overhead_bytes"]
            == before["total_bytes"] - before["measured_overhead_bytes"])


def test_a_file_without_any_measured_figure_is_refused(tmp_path, seedancectl):
    path = tmp_path / "runs.csv"
    bloom_memory_rows(path, 1.0)
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["kind"] = "run"  # a run row with neither a step figure nor memory
        r["published_gb_per_gpu"] = ""
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = subprocess.run([str(seedancectl), "optimize", "--calibrate", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "needs a measurement" in out.stderr and "runs.csv:2" in out.stderr
