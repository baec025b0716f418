"""The KV cache (``seedancectl kv``): how much a quantized cache changes a llama2.c model's
predictions, and the decompression cost model.

    >>> import seedance.kv
    >>> r = seedance.kv.evaluate("stories260K.bin", tokenizer="tok512.bin", bits="4")
    >>> r["kl_divergence_mean"], r["top1_agreement"]
    >>> seedance.kv.estimate(tokens=131072, bits=4)["bits_per_value"]

Each returns the report the command of the same name prints with ``-o json`` (one builder in
the library); every keyword is the command's flag in snake case, with the flag's default.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

from seedance import _core
from seedance.errors import SeedanceError, check_int, check_number

__all__ = ["estimate", "evaluate"]

PathLike = Union[str, "os.PathLike[str]"]


def evaluate(model: PathLike, *, tokenizer: Optional[PathLike] = None, bits: str = "8",
             group: int = 32, window: Optional[int] = None, tokens: int = 128, prompt: str = "",
             long_context: int = 65536, entropy_threshold: float = 0.85, long_bits: int = 4,
             default_bits: int = 6) -> dict[str, Any]:
    """``seedancectl kv eval``: the quantized cache against the FP32 one (KL divergence, top-1
    agreement, per-layer error, cache bytes, tokens/s). ``bits``: 8, 6, 5, 4, 2, fp8 or
    adaptive (with the adaptive rule's settings); ``window``: the most recent tokens kept in
    FP32 (``None``: a quarter of ``tokens``). ``warnings`` in the report says when too little was
    quantized for the KL to mean much."""
    # Types and 32/64-bit fields here; every range in libseedance (kv::CheckEvalRequest), the
    # same the CLI's flags take. A negative window is not "automatic": None is.
    ints = {name: check_int(name, value, 32) for name, value in
            (("group", group), ("tokens", tokens), ("long_bits", long_bits),
             ("default_bits", default_bits))}
    if window is not None and check_int("window", window, 32) < 0:
        raise SeedanceError(f"expected 0 or more tokens (None: a quarter of tokens), got {window}",
                            "window")
    return json.loads(_core.kv_eval_json(
        os.fspath(model), os.fspath(tokenizer) if tokenizer is not None else "", str(bits),
        ints["group"], -1 if window is None else window, ints["tokens"], prompt,
        check_int("long_context", long_context), check_number("entropy_threshold",
                                                              entropy_threshold),
        ints["long_bits"], ints["default_bits"]))


def estimate(*, tokens: int = 131072, layers: int = 32, kv_dim: int = 1024, bits: int = 4,
             group: int = 32, pcie_gen: int = 5, pcie_lanes: int = 16,
             pcie_gbytes_per_s: float = 0, hbm: str = "hbm3", hbm_stacks: int = 5,
             hbm_ns: float = 0, measure_cpu: bool = False) -> dict[str, Any]:
    """``seedancectl kv estimate``: the decompression cost model of a quantized cache (0 for
    ``pcie_gbytes_per_s`` and ``hbm_ns``: the presets')."""
    return json.loads(_core.kv_estimate_json(tokens, layers, kv_dim, bits, group, pcie_gen,
                                             pcie_lanes, pcie_gbytes_per_s, hbm, hbm_stacks,
                                             hbm_ns, measure_cpu))


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
