"""Seedance for PyTorch users.

Memory (features MEM-*):
- :func:`record_lifetimes` records the storage lifetimes of one real step and
  writes them in the lifetime-CSV format that ``seedancectl mem plan`` and
  :mod:`seedance.mem` read.
- :func:`apply_recompute_plan` applies a per-layer recomputation plan to a real model
  (selective activation checkpointing of its attention, MLP or norms).
- :func:`use_caching_allocator` installs Seedance's caching allocator as
  PyTorch's CUDA allocator (torch >= 2.0, a CUDA build of Seedance), and
  :func:`memory_stats` reports its statistics.

Mixed precision (features PREC-*):
- :class:`GradScaler`: loss scaling with torch's GradScaler API, on CPU too.
- :func:`apply_precision_policy`: layer-wise fp8/fp16/bf16/fp32.
- :class:`CollapseGuard`: gradient-collapse detection with rollback.

Communication (features COMM-*):
- :func:`comm_hook`: gradient compression with error feedback as a DDP hook.

Control (features CTRL-*):
- :func:`enable`: every controller below in one call for a plain loop (batch size, accumulation,
  freezing, checkpoint interval), observe-only if asked, decisions logged and exported;
  ``seedance.hf.SeedanceCallback`` is the same for ``transformers.Trainer``.
- :class:`Checkpointer`: atomic, validated checkpoints persisted in the background; resume
  from the newest that validates.
- :class:`GradientAccumulator`: gradient accumulation in 1..8 micro-steps that keeps the global
  batch's gradient exact (token-count normalisation, DDP ``no_sync``).
- :func:`tiered_cache` and :class:`CachedDataset`: a dataset read through a host-memory / disk
  sample cache shared by the DataLoader's workers, with per-tier hit and latency metrics.

Planning (feature CLI-1):
- ``enable(..., record_run="runs.csv")`` (and ``SeedanceCallback(record_run=...)``) appends the
  run's measured step time, tokens/s and peak memory, with its job, as a row that
  ``seedancectl optimize --calibrate runs.csv`` reads; :class:`RunRecorder` is the piece behind it.

Node (features TOPO-*):
- :func:`numa_worker_init_fn`: DataLoader workers on the CPUs local to the GPU.
"""

from __future__ import annotations

from seedance.torch.accumulate import GradientAccumulator
from seedance.torch.allocator import memory_stats, use_caching_allocator
from seedance.torch.checkpoint import Checkpointer, Resumed
from seedance.torch.amp import GradScaler
from seedance.torch.collapse import CollapseGuard
from seedance.torch.comm import CommState, comm_hook
from seedance.torch.control import ControlSettings, Session, enable
from seedance.torch.data import CachedDataset, tiered_cache
from seedance.torch.lifetimes import record_lifetimes
from seedance.torch.numa import NumaWorkerInit, numa_worker_init_fn
from seedance.torch.record import RunRecorder
from seedance.torch.precision_policy import PrecisionPlan, apply_precision_policy, fake_round
from seedance.torch.recompute import apply_recompute_plan

__all__ = ["apply_recompute_plan", "CachedDataset", "tiered_cache", "Checkpointer", "ControlSettings", "enable", "Session", "GradientAccumulator", "Resumed", "CollapseGuard", "CommState", "GradScaler", "comm_hook", "PrecisionPlan", "apply_precision_policy", "fake_round",
           "memory_stats", "NumaWorkerInit", "numa_worker_init_fn", "record_lifetimes", "RunRecorder",
           "use_caching_allocator"]


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
