"""`optimize --emit FRAMEWORK FILE`: the plan written as the framework takes it, read back by
the framework itself — DeepSpeed's own config class, and torch's FSDP through
examples/fsdp_train.py under torchrun on two CPU ranks (gloo, 127.0.0.1 only)."""

from __future__ import annotations

import json
import math
import os
import pathlib
import socket
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FRAMEWORKS = ("deepspeed", "fsdp", "megatron")


def run(binary, *args):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def emit(seedancectl, tmp_path, framework, *extra):
    out = tmp_path / f"{framework}.out"
    r = run(seedancectl, "optimize", *extra, "--emit", framework, out, "-o", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), out


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_file_holds_the_reports_content(seedancectl, tmp_path, framework):
    report, out = emit(seedancectl, tmp_path, framework)
    section = report["emit"]
    assert section["framework"] == framework
    text = out.read_text()
    if framework == "megatron":
        # One flag per line, its value beside it.
        assert text.split() == section["content"]
        assert all(line.startswith("--") for line in text.splitlines())
    else:
        assert json.loads(text) == section["content"]
    layout = section["parallelism"]
    assert layout["micro_batch"] * layout["data_parallel"] * layout[
        "gradient_accumulation_steps"] == report["training"]["global_batch"]
    # The emitted layout is one the search found that fits, no faster than the recommendation.
    assert section["step_time_s"] >= report["after"]["step_time_s"]
    assert section["memory_bytes_per_gpu"] <= report["gpu_memory_bytes"]
    assert section["same_as_after"] == (layout == report["after"]["parallelism"])


def test_bad_emit_requests_fail_and_write_nothing(seedancectl, tmp_path):
    out = tmp_path / "x.json"
    # An unknown framework and a missing directory are usage errors, found before planning.
    r = run(seedancectl, "optimize", "--emit", "horovod", out)
    assert r.returncode == 2 and "deepspeed" in r.stderr
    assert run(seedancectl, "optimize", "--emit", "fsdp", tmp_path / "no" / "x").returncode == 2
    # Emitting needs the full plan.
    r = run(seedancectl, "optimize", "--evaluate-only", "--emit", "fsdp", out)
    assert r.returncode == 1 and "--emit" in r.stderr
    # FSDP's mixed precision has no fp8: no fitting layout can be written for it.
    job = tmp_path / "fp8.yaml"
    job.write_text((ROOT / "examples" / "default-job.yaml").read_text().replace(
        "precision: bf16", "precision: fp8"))
    r = run(seedancectl, "optimize", job, "--emit", "fsdp", out)
    assert r.returncode == 1 and "no layout that fits can be written for fsdp" in r.stderr
    assert not out.exists()


DEEPSPEED_CHECK = r"""
import json, sys
import deepspeed
from deepspeed.runtime.config import DeepSpeedConfig

deepspeed.init_distributed(dist_backend="gloo")  # one rank; the data-parallel size from mpu


class DataParallelOnly:  # DeepSpeed's model-parallel-unit interface
    def __init__(self, size):
        self.size = size

    def get_data_parallel_world_size(self):
        return self.size


path, d = sys.argv[1], int(sys.argv[2])
config = DeepSpeedConfig(path, mpu=DataParallelOnly(d))
raw = json.load(open(path))
raw["zero_optimization"]["stagee"] = 1  # a misspelt key must fail, or the check proves nothing
try:
    DeepSpeedConfig(raw, mpu=DataParallelOnly(d))
    rejected = False
except Exception:
    rejected = True
device = getattr(config.zero_config.offload_optimizer, "device", "none")
print(json.dumps({
    "zero_stage": config.zero_optimization_stage,
    "train_batch_size": config.train_batch_size,
    "micro_batch": config.train_micro_batch_size_per_gpu,
    "accumulation": config.gradient_accumulation_steps,
    "bf16": config.bfloat16_config.enabled,
    "checkpointing": "activation_checkpointing" in raw,
    "offload": str(getattr(device, "value", device)),  # a string or an enum, by version
    "misspelt_key_rejected": rejected,
}))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# A 13B model on one GPU fits only with the optimizer states in host memory.
OFFLOAD_JOB = """name: offload
model: {family: llama, layers: 40, hidden_size: 5120, attention_heads: 40, kv_heads: 40,
        ffn_size: 13824, vocab_size: 32000, sequence_length: 4096}
training: {global_batch: 8, micro_batch: 1, precision: bf16, optimizer: adamw}
hardware: {gpu: H100-SXM, gpus_per_node: 1,
           host: {memory_gbytes: 1000, memory_gbytes_per_s: 200, pcie_gbytes_per_s: 50}}
"""


@pytest.mark.parametrize("job", ["default", "offload"])
def test_deepspeed_reads_the_config(seedancectl, tmp_path, job):
    extra = []
    if job == "offload":
        (tmp_path / "offload.yaml").write_text(OFFLOAD_JOB)
        extra = [tmp_path / "offload.yaml"]
    report, out = emit(seedancectl, tmp_path, "deepspeed", *extra)
    layout = report["emit"]["parallelism"]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0",
               WORLD_SIZE="1", LOCAL_RANK="0", DS_ACCELERATOR="cpu")
    r = subprocess.run([sys.executable, "-c", DEEPSPEED_CHECK, str(out),
                        str(layout["data_parallel"])], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["misspelt_key_rejected"]
    assert got["zero_stage"] == layout["zero_stage"]
    assert got["train_batch_size"] == report["training"]["global_batch"]
    assert got["micro_batch"] == layout["micro_batch"]
    assert got["accumulation"] == layout["gradient_accumulation_steps"]
    assert got["bf16"] is (report["training"]["precision"] == "bf16")
    assert got["checkpointing"] is (layout["recompute"] == "full")
    assert got["offload"] == ("cpu" if layout["offload_optimizer"] else "none")
    assert layout["offload_optimizer"] is (job == "offload")


def torchrun(plan: dict, tmp_path: pathlib.Path, name: str) -> list[dict]:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(plan))
    r = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
         "--master-addr", "127.0.0.1", "--master-port", str(free_port()),
         str(ROOT / "examples" / "fsdp_train.py"), str(path), "--tiny", "--steps", "2",
         "--report-update"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    return sorted((json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")),
                  key=lambda x: x["rank"])


def test_fsdp_plan_trains_under_torchrun(seedancectl, tmp_path):
    _, out = emit(seedancectl, tmp_path, "fsdp")
    plan = json.loads(out.read_text())
    ranks = torchrun(plan, tmp_path, "emitted")
    assert [r["rank"] for r in ranks] == [0, 1]
    for r in ranks:
        assert r["sharding_strategy"] == plan["sharding_strategy"]
        assert r["micro_batch"] == plan["micro_batch"]
        assert r["gradient_accumulation_steps"] == plan["gradient_accumulation_steps"]
        assert all(math.isfinite(x) for x in r["losses"])
        if plan["sharding_strategy"] == "NO_SHARD":
            assert r["local_parameters"] == r["parameters"]
        else:  # each of the two ranks holds half of every parameter
            assert r["local_parameters"] * 2 == r["parameters"]
    # The same plan in fp32 against its reference, plain DDP in fp32 on the same data: the same
    # losses and the same parameter updates (to reduction-order rounding).
    fp32 = torchrun(dict(plan, mixed_precision=None), tmp_path, "fp32")[0]
    ddp = torchrun(dict(plan, sharding_strategy="NO_SHARD", mixed_precision=None,
                        activation_checkpointing="none"), tmp_path, "ddp")[0]
    assert fp32["losses"] == pytest.approx(ddp["losses"], rel=1e-5)
    assert abs(ddp["update_sum"]) > 1e-3  # the step changed the weights
    assert fp32["update_sum"] == pytest.approx(ddp["update_sum"], rel=1e-3)
