"""`optimize --emit FRAMEWORK FILE`: the plan written as the framework takes it, read back by
the framework itself — DeepSpeed's own config class, torch's FSDP through
examples/fsdp_train.py under torchrun on two CPU ranks (gloo, 127.0.0.1 only), Accelerate's own
config loader, and torchtitan 0.2.2's JobConfig dataclasses (its last TOML release)."""

from __future__ import annotations

import json
import math
import os
import pathlib
import signal
import socket
import subprocess
import sys

import pytest
import tomllib
import yaml

from conftest import run_deepspeed_one_rank

ROOT = pathlib.Path(__file__).resolve().parents[2]
FRAMEWORKS = ("deepspeed", "fsdp", "megatron", "torchtitan", "accelerate")


def run(binary, *args):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def neutral_job(tmp_path):
    """The default job without its `framework:` line: every framework's layouts are weighed."""
    path = tmp_path / "any-framework.yaml"
    text = (ROOT / "examples" / "default-job.yaml").read_text()
    path.write_text("\n".join(l for l in text.splitlines() if not l.startswith("framework:")))
    return path


def emit(seedancectl, tmp_path, framework, *extra):
    """The plan of `extra` (a job file), else of the default job (it runs on FSDP, so other
    frameworks plan the default job with no framework named)."""
    out = tmp_path / f"{framework}.out"
    if not extra and framework not in ("fsdp", "accelerate"):
        extra = (neutral_job(tmp_path),)
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
    elif framework == "torchtitan":
        assert tomllib.loads(text) == section["content"]
    elif framework == "accelerate":
        assert yaml.safe_load(text) == section["content"]
    else:
        assert json.loads(text) == section["content"]
    layout = section["parallelism"]
    assert layout["micro_batch"] * layout["data_parallel"] * layout[
        "gradient_accumulation_steps"] == report["training"]["global_batch"]
    # The emitted layout is one the search found that fits, no faster than the fastest one (the
    # recommendation, or the search's fastest when the stated layout is kept).
    fastest = report["search"].get("fastest", report["after"])
    assert section["step_time_s"] >= min(fastest["step_time_s"], report["after"]["step_time_s"])
    assert section["memory_bytes_per_gpu"] <= report["gpu_memory_bytes"]


def test_bad_emit_requests_fail_and_write_nothing(seedancectl, tmp_path):
    out = tmp_path / "x.json"
    # An unknown framework and a missing directory are usage errors, found before planning.
    r = run(seedancectl, "optimize", "--emit", "horovod", out)
    assert r.returncode == 2 and "deepspeed" in r.stderr
    assert run(seedancectl, "optimize", "--emit", "fsdp", tmp_path / "no" / "x").returncode == 2
    # Emitting needs the full plan.
    r = run(seedancectl, "optimize", "--evaluate-only", "--emit", "fsdp", out)
    assert r.returncode == 1 and "--emit" in r.stderr
    # FSDP's mixed precision has no fp8: a job that names FSDP and fp8 is a spec error, and with
    # no framework named no fitting layout can be written for FSDP.
    job = tmp_path / "fp8.yaml"
    job.write_text((ROOT / "examples" / "default-job.yaml").read_text().replace(
        "precision: bf16", "precision: fp8"))
    r = run(seedancectl, "optimize", job, "--emit", "fsdp", out)
    assert r.returncode == 1 and "training.precision" in r.stderr and "fsdp" in r.stderr
    neutral = neutral_job(tmp_path)
    neutral.write_text(neutral.read_text().replace("precision: bf16", "precision: fp8"))
    r = run(seedancectl, "optimize", neutral, "--emit", "fsdp", out)
    assert r.returncode == 1 and "no layout that fits can be written for fsdp" in r.stderr
    # A job that runs on FSDP cannot be written as Megatron's flags.
    r = run(seedancectl, "optimize", "--emit", "megatron", out)
    assert r.returncode == 1 and "runs on fsdp" in r.stderr
    assert not out.exists()


DEEPSPEED_CHECK = r"""
import json, sys
from deepspeed.runtime.config import DeepSpeedConfig
# One rank (run_deepspeed_one_rank); the data-parallel size from mpu.


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
    r = run_deepspeed_one_rank(DEEPSPEED_CHECK, str(out), str(layout["data_parallel"]))
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
    # Its own session, so that a timeout stops the ranks as well as torchrun (by the group's id).
    proc = subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
         "--master-addr", "127.0.0.1", "--master-port", str(free_port()),
         str(ROOT / "examples" / "fsdp_train.py"), str(path), "--tiny", "--steps", "2",
         "--report-update"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail("torchrun did not finish in 600 s: " + stderr[-3000:])
    r = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
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


def torchtitan_job_config():
    """torchtitan 0.2.2's JobConfig, loaded from its job_config.py alone (the package's own
    __init__ needs triton and torchao; this file needs torch and a logger)."""
    import importlib.metadata
    import importlib.util
    import logging
    import types
    path = importlib.metadata.distribution("torchtitan").locate_file(
        "torchtitan/config/job_config.py")
    saved = {k: sys.modules.get(k) for k in ("torchtitan", "torchtitan.tools",
                                             "torchtitan.tools.logging")}
    try:
        for name in saved:
            module = types.ModuleType(name)
            module.__path__ = []
            sys.modules[name] = module
        sys.modules["torchtitan.tools.logging"].logger = logging.getLogger("torchtitan")
        spec = importlib.util.spec_from_file_location("torchtitan_job_config", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.JobConfig
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def build_dataclass(cls, values, where):
    """cls(**values) with every key a field and every value of the field's type (Literal
    members, lists, scalars); nested tables build nested dataclasses."""
    import dataclasses
    import typing
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in values.items():
        assert key in names, f"{where}.{key} is not a field of torchtitan's {cls.__name__}"
        hint = hints[key]
        if dataclasses.is_dataclass(hint):
            kwargs[key] = build_dataclass(hint, value, f"{where}.{key}")
            continue
        origin = typing.get_origin(hint)
        options = typing.get_args(hint) if origin in (typing.Union, types_union()) else (hint,)
        ok = False
        for option in options:
            o = typing.get_origin(option)
            if o is typing.Literal:
                ok = ok or value in typing.get_args(option)
            elif o is list:
                ok = ok or isinstance(value, list)
            elif option in (int, float, str, bool):
                ok = ok or (isinstance(value, option) and not (option is int and
                                                               isinstance(value, bool)))
        assert ok, f"{where}.{key} = {value!r} is not a {hint}"
        kwargs[key] = value
    return cls(**kwargs)


def types_union():
    import types
    return types.UnionType


def test_torchtitan_reads_the_config(seedancectl, tmp_path):
    # The precisions job runs on torchtitan and may pick fp8: the float8 converter is written.
    report, out = emit(seedancectl, tmp_path, "torchtitan",
                       ROOT / "examples" / "llama-7b-precisions.yaml")
    content = tomllib.loads(out.read_text())
    config = build_dataclass(torchtitan_job_config(), content, "toml")
    layout = report["emit"]["parallelism"]
    par = config.parallelism
    d = layout["data_parallel"]
    assert par.data_parallel_replicate_degree * par.data_parallel_shard_degree == d
    assert par.tensor_parallel_degree == layout["tensor"]
    assert par.pipeline_parallel_degree == layout["pipeline"]
    assert par.context_parallel_degree == layout["context_parallel"]
    assert config.training.global_batch_size == report["training"]["global_batch"]
    assert config.training.seq_len == report["model"]["sequence_length"]
    if layout["pipeline"] == 1:  # accumulation makes up the global batch
        assert config.training.local_batch_size == layout["micro_batch"]
    assert config.activation_checkpoint.mode == {
        "none": "none", "full": "full", "op-selective": "selective"}[layout["recompute"]]
    fp8 = report["emit"]["content"]["model"].get("converters") == ["quantize.linear.float8"]
    assert fp8 == (report["after"]["precision"] == "fp8" if report["emit"]["same_as_after"]
                   else fp8)
    # torchao's float8 casts are counted compiled, so the float8 config compiles.
    assert config.compile.enable == fp8
    if fp8:
        assert set(config.compile.components) == {"model", "loss"}
    # A misspelt key must fail, or the check proves nothing.
    content["parallelism"]["tensor_paralel_degree"] = 1
    with pytest.raises(AssertionError):
        build_dataclass(torchtitan_job_config(), content, "toml")


def test_accelerate_reads_the_config(seedancectl, tmp_path):
    from accelerate.commands.config.config_args import load_config_from_file
    report, out = emit(seedancectl, tmp_path, "accelerate")
    config = load_config_from_file(str(out))
    layout = report["emit"]["parallelism"]
    assert config.num_processes == report["hardware"]["gpus_total"]
    assert config.num_machines == report["hardware"]["nodes"]
    assert str(config.mixed_precision).endswith("bf16")
    if layout["zero_stage"] in (2, 3):
        assert str(config.distributed_type).endswith("FSDP")
        assert config.fsdp_config["fsdp_version"] == 2
        assert config.fsdp_config["fsdp_reshard_after_forward"] is (layout["zero_stage"] == 3)
        assert config.fsdp_config["fsdp_activation_checkpointing"] is (
            layout["recompute"] == "full")
    else:
        assert str(config.distributed_type).endswith("MULTI_GPU")
