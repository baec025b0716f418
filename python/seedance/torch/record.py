"""Recording a training run for the planner (``record_run=``): the measured step time, tokens/s
and peak memory of a run, with the job's configuration, as one row of a runs table in the columns
of ``bench/plan/published_runs.csv`` — what ``seedancectl optimize --calibrate RUNS.csv``
reads, so the planner learns from the user's own cluster without hand work.

The job is described as a job spec (docs/job-spec.md) and validated by the same parser as
``optimize``: the model's shape comes from a Hugging Face ``model.config`` where there is one
(``num_hidden_layers``, ``hidden_size``, ...), the batch and sequence from the run, the GPU from
``torch.cuda.get_device_name`` (mapped to the catalog's ids), the ranks from
``torch.distributed``; ``job=`` supplies or overrides any key, and a run on a device the
catalog does not hold needs ``job={"hardware": {"gpu": ...}}`` (with ``catalog=`` a catalog
file that has it).

The step time is the median of the optimizer steps after ``warmup`` steps; tokens/s per GPU is
the tokens of one optimizer step over the step time and the ranks; memory is what nvidia-smi would
read at the peak, as the public calibration set's memory figures are: CUDA's peak reserved bytes
plus what the process holds outside PyTorch's caching allocator (the CUDA context, NCCL's and
cuBLAS's buffers), taken at the end as the device's used bytes less the allocator's reserved
bytes (another process on the same GPU would be counted too; on a CPU run none is recorded).
A row is appended to the file atomically (the file is
rewritten through a temporary file and renamed), with the header when the file is new.
"""

from __future__ import annotations

import copy
import json
import os
import re
import statistics
import tempfile
from typing import Any, Optional

import torch

from .. import _core
from ..errors import read_text

__all__ = ["RunRecorder", "catalog_gpu", "job_from_model"]


def catalog_gpu(device_name: str) -> Optional[str]:
    """The catalog id of a CUDA device name ("NVIDIA H100 80GB HBM3" -> "H100-SXM"), or None."""
    name = device_name.upper()
    if "H200" in name:
        return "H200"
    if "H100" in name:
        return "H100-SXM"
    if "A100" in name:
        return "A100-80GB" if "80" in name else "A100-40GB"
    for known in ("L40S", "L4", "A10", "V100", "MI300X"):
        if re.search(rf"\b{known}\b", name):
            return known
    return None


def _peak_device_bytes() -> int:
    """The device's bytes at the run's peak as nvidia-smi counts them: the caching allocator's
    peak reservation plus what lives outside it (context, communicators, library workspaces)."""
    free, total = torch.cuda.mem_get_info()
    outside = max(0, (total - free) - torch.cuda.memory_reserved())
    return torch.cuda.max_memory_reserved() + outside


def _family(config: Any) -> str:
    kind = str(getattr(config, "model_type", "")).lower()
    if kind in ("gpt2", "gpt_neox", "gptj", "gpt_bigcode", "opt", "bloom"):
        return "gpt"
    if kind.startswith("nemotron"):
        return "nemotron"
    return "llama"


def job_from_model(model: torch.nn.Module) -> dict[str, Any]:
    """The ``model`` section of a job spec from a Hugging Face model's config ({} without one)."""
    config = getattr(model, "config", None)
    if config is None:
        return {}
    heads = int(config.num_attention_heads)
    return {"model": {
        "family": _family(config),
        "layers": int(config.num_hidden_layers),
        "hidden_size": int(config.hidden_size),
        "attention_heads": heads,
        "kv_heads": int(getattr(config, "num_key_value_heads", None) or heads),
        "ffn_size": int(getattr(config, "intermediate_size", None) or
                        getattr(config, "n_inner", None) or 4 * int(config.hidden_size)),
        "vocab_size": int(config.vocab_size),
        "tie_embeddings": bool(getattr(config, "tie_word_embeddings", False)),
    }}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _precision(model: torch.nn.Module) -> str:
    dtype = next((p.dtype for p in model.parameters()), torch.float32)
    return {torch.bfloat16: "bf16", torch.float16: "fp16"}.get(dtype, "fp32")


class RunRecorder:
    """Collects one run's step times and writes its row; see the module's doc."""

    def __init__(self, path: "os.PathLike[str] | str", model: torch.nn.Module, *,
                 job: Optional[dict[str, Any]] = None, catalog: Optional[str] = None,
                 run_id: Optional[str] = None, warmup: int = 2) -> None:
        if not isinstance(warmup, int) or warmup < 0:
            raise ValueError("record_run warmup must be an integer >= 0")
        self.path = os.fspath(path)
        self.model = model
        self.job = dict(job or {})
        self.catalog = catalog
        self.run_id = run_id
        self.warmup = warmup
        self.step_seconds: list[float] = []
        self.samples_per_step: list[int] = []
        self.sequence_length: Optional[int] = None
        self.micro_batch: Optional[int] = None
        self.written = False

    def observe_batch(self, batch: Any) -> None:
        """A micro-batch the model ran on: its sequence length and size."""
        ids = batch.get("input_ids") if isinstance(batch, dict) else batch
        if isinstance(ids, (list, tuple)):
            ids = ids[0]
        if isinstance(ids, torch.Tensor) and ids.dim() >= 2:
            self.micro_batch = int(ids.shape[0])
            self.sequence_length = int(ids.shape[1])

    def observe_step(self, seconds: float, samples: int) -> None:
        """One optimizer step: its wall time and the samples this rank ran in it."""
        self.step_seconds.append(float(seconds))
        self.samples_per_step.append(int(samples))

    def job_spec(self) -> dict[str, Any]:
        """The run's job spec (derived keys, then the ``job=`` ones on top)."""
        world = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
        local = int(os.environ.get("LOCAL_WORLD_SIZE", world))
        samples = statistics.median(self.samples_per_step[self.warmup:] or
                                    self.samples_per_step or [0])
        derived: dict[str, Any] = _merge(job_from_model(self.model), {
            "name": self.run_id or os.path.basename(self.path),
            "training": {"global_batch": int(samples) * world,
                         "micro_batch": self.micro_batch or int(samples) or 1,
                         "precision": _precision(self.model)},
            "hardware": {"gpus_per_node": local, "nodes": max(1, world // max(local, 1))},
        })
        if self.sequence_length:
            derived["model"] = dict(derived.get("model", {}),
                                    sequence_length=self.sequence_length)
        if torch.cuda.is_available():
            gpu = catalog_gpu(torch.cuda.get_device_name(0))
            if gpu:
                derived["hardware"]["gpu"] = gpu
        return _merge(derived, self.job)

    def measured(self) -> tuple[float, float, float]:
        """(median step seconds, tokens/s per GPU, peak GB per GPU or 0)."""
        steps = self.step_seconds[self.warmup:]
        if not steps:
            raise ValueError(f"record_run: {len(self.step_seconds)} optimizer steps, none after "
                             f"the {self.warmup} warm-up steps: nothing to record")
        step_s = statistics.median(steps)
        spec = self.job_spec()
        tokens = spec["training"]["global_batch"] * spec.get("model", {}).get(
            "sequence_length", 0)
        gpus = spec["hardware"].get("gpus_per_node", 1) * spec["hardware"].get("nodes", 1)
        gb = _peak_device_bytes() / 1e9 if torch.cuda.is_available() else 0.0
        return step_s, tokens / step_s / max(gpus, 1), gb

    def write(self) -> str:
        """Appends the run's row to the file (atomically) and returns it."""
        step_s, tokens_per_s, gb = self.measured()
        spec = self.job_spec()
        old = read_text(self.path) if os.path.exists(self.path) else _core.run_table_header()
        if not old.endswith("\n"):
            old += "\n"
        # Ids are unique within a table: the run's name and its row number.
        rows = sum(1 for line in old.splitlines()[1:] if line.strip())
        if not self.run_id:
            spec = dict(spec, name=f"{spec['name']}-{rows + 1}")
        catalog_yaml = read_text(self.catalog) if self.catalog else None
        # JSON is YAML's flow style: the job spec parser reads it as it is.
        row = _core.format_run_row(json.dumps(spec),
                                   "seedance.torch record_run", spec["name"], step_s,
                                   tokens_per_s, gb, catalog_yaml, self.catalog or "")
        directory = os.path.dirname(os.path.abspath(self.path))
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".runs-")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(old + row)
            os.replace(tmp, self.path)  # a crash leaves the old file or the new one
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        self.written = True
        return row


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
