"""Seedance: cut the cost of GPU training and serving.

The Python face of libseedance. Everything here is a thin layer over the C++
library in ``seedance._core``; reports come back as plain dicts with the same
fields as ``seedancectl ... --output json``.

    >>> import seedance
    >>> report = seedance.optimize()              # the built-in default job
    >>> report["derived"]["parameters"]
    6738415616
    >>> seedance.optimize({"model": {...}, ...}, overrides={"hardware.gpu": "H200"})

Submodules (each is imported when first used, ``seedance.cost`` as well as
``import seedance.cost``):

- ``seedance.comm``: NCCL settings derived from a node's topology (``seedancectl comm``).
- ``seedance.cost``: TCO, ROI, power and the benchmark statistics (``seedancectl cost``).
- ``seedance.errors``: SeedanceError, what every libseedance error becomes.
- ``seedance.hf``: Hugging Face Transformers: the Trainer callback and the quantized KV cache.
- ``seedance.kv``: the KV cache's accuracy and size (``seedancectl kv``).
- ``seedance.mem``: memory plans and replays of allocation lifetimes (``seedancectl mem``).
- ``seedance.precision``: fp16/bf16/fp8 conversions and QAT drift.
- ``seedance.probe``: one window of the node probe (``seedancectl probe --once``).
- ``seedance.sched``: scheduler experiments (``seedancectl simulate``).
- ``seedance.topo``: node topology, affinity checks and NUMA binding (``seedancectl topo``).
- ``seedance.torch``: PyTorch: lifetimes, recomputation, AMP, controllers, gradient hooks.
"""

from __future__ import annotations

import importlib as _importlib
import importlib.util  # noqa: F401  (importlib.util.find_spec)
import json as _json
import os as _os
import types as _types
from collections.abc import Mapping as _Mapping
from typing import Any, Optional, Union

from seedance import _core
from seedance.errors import SeedanceError, check_type as _check_type, read_text as _read_text

__version__: str = _core.__version__

__all__ = ["SeedanceError", "__version__", "cuda_info", "default_job_yaml", "gpu_catalog",
           "plan_recompute",
           "optimize", "set_simd", "simd"]

# Submodules, imported on first use (PEP 562): `seedance.cost.tco(...)` after `import seedance`.
_SUBMODULES = ("comm", "cost", "errors", "hf", "kv", "mem", "precision", "probe", "sched", "topo",
               "torch")

PathLike = Union[str, "_os.PathLike[str]"]


# Those that need an optional dependency (torch: the seedance[torch] extra; hf: Transformers).
_NEEDS = {"torch": "torch", "hf": "transformers"}


def _available(name: str) -> bool:
    needed = _NEEDS.get(name)
    return needed is None or _importlib.util.find_spec(needed) is not None


def __getattr__(name: str) -> _types.ModuleType:
    if name in _SUBMODULES:
        try:
            return _importlib.import_module(f"seedance.{name}")
        except ImportError as e:  # an optional dependency missing: no such attribute here
            raise AttributeError(f"module 'seedance' has no attribute {name!r} here: it needs "
                                 f"{_NEEDS.get(name, 'a module')} ({e})") from e
    raise AttributeError(f"module 'seedance' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The API only: what ``__all__`` names and the submodules this installation can import
    (no imported helper)."""
    return sorted(set(__all__) | {m for m in _SUBMODULES if _available(m)})


def _read(path: PathLike) -> str:
    return _read_text(path)


def _job_text(job: Union[PathLike, _Mapping[str, Any]]) -> tuple[str, str]:
    """A job given as a path, YAML text (a string with a line break) or a mapping, as
    (YAML text, the name errors use)."""
    if isinstance(job, _Mapping):
        try:
            # JSON is YAML; characters past U+FFFF stay characters (YAML refuses the surrogate
            # pairs ensure_ascii would write).
            return _json.dumps(job, allow_nan=False, ensure_ascii=False), "<dict>"
        except (TypeError, ValueError) as e:
            raise TypeError(f"optimize(): job: a dict of YAML values (strings, numbers, lists, "
                            f"dicts) expected: {e}") from None
    if isinstance(job, str) and "\n" in job:
        return job, "<string>"
    return _read(job), _os.fspath(job)


def optimize(job: Union[PathLike, _Mapping[str, Any], None] = None, *,
             overrides: Optional[_Mapping[str, Any]] = None, yaml: Optional[str] = None,
             profile: str = "dev", dry_run: bool = False, evaluate_only: bool = False,
             catalog: Optional[PathLike] = None,
             emit: Optional[str] = None,
             calibrate: Optional[PathLike] = None) -> dict[str, Any]:
    """The pre-flight plan and cost report of a job (``seedancectl optimize``).

    Args:
        job: the job spec (docs/job-spec.md): a path, YAML text (a string with a
            line break), or a dict of the same keys. With neither ``job`` nor
            ``yaml``, the built-in default job is planned.
        overrides: keys to change, by dotted path, e.g. ``{"hardware.gpu":
            "H200", "training.seq_len": 8192}`` (``seedancectl optimize --set``);
            mappings on the way are made where missing.
        yaml: the job spec as text (as ``job`` with a line break does).
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
        TypeError: an argument of the wrong type, named.
    """
    _check_type("optimize", "job", job, (str, _os.PathLike, _Mapping, type(None)),
                "a path, YAML text or a dict")
    _check_type("optimize", "overrides", overrides, (_Mapping, type(None)), "a dict")
    _check_type("optimize", "yaml", yaml, (str, type(None)), "a str")
    _check_type("optimize", "profile", profile, str, "a str")
    _check_type("optimize", "catalog", catalog, (str, _os.PathLike, type(None)), "a path")
    _check_type("optimize", "calibrate", calibrate, (str, _os.PathLike, type(None)), "a path")
    _check_type("optimize", "emit", emit, (str, type(None)), "a str")
    if job is not None and yaml is not None:
        raise ValueError("give either job or yaml, not both")
    source = "<string>"
    if job is not None:
        yaml, source = _job_text(job)
    if overrides:
        for key in overrides:
            _check_type("optimize", "overrides' keys", key, str, "dotted strings")
        if yaml is None:
            yaml, source = _core.default_job_yaml(), "<default job>"
        pairs = []
        for key, value in overrides.items():
            try:
                pairs.append((key, _json.dumps(value, allow_nan=False, ensure_ascii=False)))
            except (TypeError, ValueError) as e:
                raise TypeError(f"optimize(): overrides[{key!r}]: a YAML value (a string, "
                                f"number, bool, None, list or dict) expected: {e}") from None
        yaml = _core.apply_yaml_overrides(yaml, source, pairs)
        source += " (rewritten by overrides)"
    catalog_yaml, catalog_source = _catalog(catalog)
    calibrate_csv, calibrate_source = None, ""
    if calibrate is not None:
        calibrate_csv, calibrate_source = _read(calibrate), _os.fspath(calibrate)
    return _json.loads(_core.optimize(yaml, source, profile, dry_run, evaluate_only, catalog_yaml,
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
    return _json.loads(_core.plan_recompute_json(_json.dumps(layers), int(budget_bytes)))


def gpu_catalog(catalog: Optional[PathLike] = None) -> list[dict[str, Any]]:
    """Every GPU of the catalog (built-in, plus ``catalog`` overrides)."""
    catalog_yaml, catalog_source = _catalog(catalog)
    return _json.loads(_core.gpu_catalog(catalog_yaml, catalog_source))


def default_job_yaml() -> str:
    """The text of the built-in default job (examples/default-job.yaml)."""
    return _core.default_job_yaml()


def cuda_info() -> dict[str, Any]:
    """What CUDA this build of Seedance and this machine offer: the ``cuda`` object of
    ``seedancectl version -o json`` (compiled, versions, device_count, status, devices)."""
    return _json.loads(_core.cuda_info_json())


def simd() -> dict[str, Any]:
    """Which vector kernels libseedance runs: the ``simd`` object of ``seedancectl version -o
    json`` (``choice``: auto, scalar or avx2; ``active``: "avx2+f16c" or "scalar";
    ``cpu_avx2_f16c``). The choice starts as ``SEEDANCE_SIMD`` (default auto) at import."""
    return _json.loads(_core.simd_json())


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
    return _read(catalog), _os.fspath(catalog)
