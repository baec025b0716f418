"""Seedance: cut the cost of GPU training and serving.

The Python face of libseedance. Everything here is a thin layer over the C++
library in ``seedance._core``; reports come back as plain dicts with the same
fields as ``seedancectl ... --output json``.

    >>> import seedance
    >>> report = seedance.optimize()              # the built-in default job
    >>> report["derived"]["parameters"]
    6738415616
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

from seedance import _core
from seedance.errors import SeedanceError, read_text

__version__: str = _core.__version__

__all__ = ["SeedanceError", "__version__", "cuda_info", "default_job_yaml", "gpu_catalog",
           "plan_recompute",
           "optimize", "set_simd", "simd"]

PathLike = Union[str, "os.PathLike[str]"]


def _read(path: PathLike) -> str:
    return read_text(path)


def optimize(job: Optional[PathLike] = None, *, yaml: Optional[str] = None,
             profile: str = "dev", dry_run: bool = False, evaluate_only: bool = False,
             catalog: Optional[PathLike] = None,
             emit: Optional[str] = None,
             calibrate: Optional[PathLike] = None) -> dict[str, Any]:
    """The pre-flight plan and cost report of a job (``seedancectl optimize``).

    Args:
        job: path of a job spec (YAML, docs/job-spec.md). With neither ``job``
            nor ``yaml``, the built-in default job is planned.
        yaml: the job spec as text, instead of a path.
        profile: "dev" (quick) or "prod" (thorough).
        dry_run: validate and return the normalised spec only.
        evaluate_only: training jobs: evaluate the layout the spec states (its
            ``parallelism`` section) without searching.
        catalog: a YAML file that overrides or extends the GPU catalog.
        emit: "deepspeed", "fsdp" or "megatron": the report's ``emit`` section
            holds the fastest fitting layout that framework runs, written as its
            configuration under ``content`` (``seedancectl optimize --emit``
            writes the same content to a file).
        calibrate: a CSV of runs measured on your own cluster, in the columns of
            ``bench/plan/published_runs.csv`` (``seedance.torch.enable(...,
            record_run=path)`` writes such rows): the time model is refitted to
            them, with the public fit as its prior, and plans with the result;
            the report's ``calibration`` section says what changed
            (``seedancectl optimize --calibrate``).

    Raises:
        SeedanceError: the spec or the catalog is invalid; ``.where`` names the
            file, line and key.
    """
    if job is not None and yaml is not None:
        raise ValueError("give either job or yaml, not both")
    source = "<string>"
    if job is not None:
        yaml, source = _read(job), os.fspath(job)
    catalog_yaml, catalog_source = _catalog(catalog)
    calibrate_csv, calibrate_source = None, ""
    if calibrate is not None:
        calibrate_csv, calibrate_source = _read(calibrate), os.fspath(calibrate)
    return json.loads(_core.optimize(yaml, source, profile, dry_run, evaluate_only, catalog_yaml,
                                     catalog_source, emit, calibrate_csv, calibrate_source))


def plan_recompute(layers: list[dict[str, Any]], budget_bytes: int) -> dict[str, Any]:
    """The least-time recomputation plan of a layer chain within a memory budget (MEM-5).

    Args:
        layers: one mapping per layer: ``kept_bytes`` (always kept) and ``parts``, each
            ``{"name": ..., "bytes": ..., "recompute_s": ...}`` (what dropping it frees and
            what recomputing it costs).
        budget_bytes: the activation memory available.

    Returns:
        ``fits``, ``activation_bytes``, ``recompute_s`` and ``dropped_per_layer`` (the input of
        :func:`seedance.torch.apply_recompute_plan`).
    """
    return json.loads(_core.plan_recompute_json(json.dumps(layers), int(budget_bytes)))


def gpu_catalog(catalog: Optional[PathLike] = None) -> list[dict[str, Any]]:
    """Every GPU of the catalog (built-in, plus ``catalog`` overrides)."""
    catalog_yaml, catalog_source = _catalog(catalog)
    return json.loads(_core.gpu_catalog(catalog_yaml, catalog_source))


def default_job_yaml() -> str:
    """The text of the built-in default job (examples/default-job.yaml)."""
    return _core.default_job_yaml()


def cuda_info() -> dict[str, Any]:
    """What CUDA this build of Seedance and this machine offer: the ``cuda`` object of
    ``seedancectl version -o json`` (compiled, versions, device_count, status, devices)."""
    return json.loads(_core.cuda_info_json())


def simd() -> dict[str, Any]:
    """Which vector kernels libseedance runs: the ``simd`` object of ``seedancectl version -o
    json`` (``choice``: auto, scalar or avx2; ``active``: "avx2+f16c" or "scalar";
    ``cpu_avx2_f16c``). The choice starts as ``SEEDANCE_SIMD`` (default auto) at import."""
    return json.loads(_core.simd_json())


def set_simd(kernel: str) -> None:
    """Choose the vector kernels of every module for this process: "auto", "scalar" or "avx2".

    Results do not depend on the choice (each kernel matches its scalar reference); speed does.

    Raises:
        SeedanceError: an unknown name, or "avx2" on a CPU without AVX2 and F16C.
    """
    _core.set_simd(kernel)


def _catalog(catalog: Optional[PathLike]) -> tuple[Optional[str], str]:
    if catalog is None:
        return None, ""
    return _read(catalog), os.fspath(catalog)
