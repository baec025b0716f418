"""Number formats of mixed precision (feature PREC-1) and QAT drift (PREC-7).

Arrays are NumPy arrays or CPU torch tensors of float32; codes come back as
NumPy arrays (uint16 for fp16/bf16, uint8 for fp8). The conversions are
libseedance's: round to nearest even, NVIDIA's NaN and saturation rules,
AVX2/F16C when the CPU has them.

    >>> import numpy as np, seedance.precision as sp
    >>> sp.encode(np.array([464.0, 465.0], np.float32), "fp8_e4m3")
    array([126, 127], dtype=uint8)
"""

from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np

from seedance import _core

__all__ = ["FORMATS", "decode", "drift_score", "encode", "histogram", "kernel", "quantize_int8",
           "round_trip", "show"]

FORMATS = ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
_CODE_DTYPE = {"fp32": np.float32, "fp16": np.uint16, "bf16": np.uint16,
               "fp8_e4m3": np.uint8, "fp8_e5m2": np.uint8, "e4m3": np.uint8, "e5m2": np.uint8}


def _float32_buffer(x: Any) -> tuple[np.ndarray, Any]:
    """A contiguous float32 NumPy view of x (a copy only when needed), and the owner."""
    if hasattr(x, "detach") and hasattr(x, "numpy"):  # a torch tensor (torch imported by its user)
        import torch
        t = x.detach()
        if t.device.type != "cpu":
            raise ValueError("seedance.precision works on CPU tensors; move the tensor first")
        t = t.to(dtype=torch.float32).contiguous()
        return t.numpy(), t
    a = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    return a, a


def _dtype(fmt: str) -> Any:
    try:
        return _CODE_DTYPE[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})") from None


def encode(x: Any, fmt: str, saturate: bool = False, kernel: str = "auto",
           out: np.ndarray | None = None) -> np.ndarray:
    """Codes of x in fmt (same shape as x), written into `out` when given."""
    a, _owner = _float32_buffer(x)
    if out is None:
        out = np.empty(a.shape, dtype=_dtype(fmt))
    elif out.dtype != _dtype(fmt) or out.size != a.size or not out.flags.c_contiguous:
        raise ValueError(f"out must be a contiguous {np.dtype(_dtype(fmt)).name} array of "
                         f"{a.size} values")
    _core.precision_encode(a.ctypes.data, a.size, out.ctypes.data, fmt, saturate, kernel)
    return out


def decode(codes: np.ndarray, fmt: str, kernel: str = "auto") -> np.ndarray:
    """The float32 values of codes in fmt."""
    c = np.ascontiguousarray(codes, dtype=_dtype(fmt))
    out = np.empty(c.shape, dtype=np.float32)
    _core.precision_decode(c.ctypes.data, c.size, out.ctypes.data, fmt, kernel)
    return out


def round_trip(x: Any, fmt: str, saturate: bool = False) -> np.ndarray:
    """x rounded to the nearest value of fmt, as float32."""
    return decode(encode(x, fmt, saturate), fmt)


def kernel() -> str:
    """What the bulk conversions use on this CPU: "avx2+f16c" or "scalar"."""
    return _core.precision_kernel()


def show(*values: str | float) -> list[dict[str, Any]]:
    """What ``seedancectl precision show`` prints, one dict per value."""
    return [json.loads(_core.precision_describe(str(v))) for v in values]


def quantize_int8(x: Any, channels: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric INT8 with scale amax/127 per tensor (channels=1) or per channel
    (rows of x reshaped to [channels, -1]). Returns (int8 values, float32 scales)."""
    a, _owner = _float32_buffer(x)
    q = np.empty(a.shape, dtype=np.int8)
    scales = _core.int8_quantize(a.ctypes.data, a.size, channels, q.ctypes.data)
    return q, np.asarray(scales, dtype=np.float32)


def drift_score(reference: Sequence[float], current: Sequence[float],
                centers: Sequence[float] | None = None, *, kl_weight: float = 0.7,
                kurtosis_weight: float = 0.3, keep_below: float = 0.15,
                recalibrate_at: float = 0.3) -> dict[str, Any]:
    """QAT drift between a calibration histogram and the current one (same bins).

    Returns ``kl``, ``kurtosis_reference``, ``kurtosis_current``, ``score`` and
    ``action`` ("keep", "adjust_scale" or "recalibrate"). ``centers`` are the
    bin centres (default 0..n-1).
    """
    ref = [float(v) for v in reference]
    cur = [float(v) for v in current]
    ctr = [float(v) for v in centers] if centers is not None else [float(i) for i in range(len(ref))]
    return json.loads(_core.precision_drift(ref, cur, ctr, kl_weight, kurtosis_weight, keep_below,
                                            recalibrate_at))


def histogram(values: Any, lo: float, hi: float, bins: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Counts and bin centres over [lo, hi); values outside land in the end bins."""
    a, _owner = _float32_buffer(values)
    a = np.clip(a.ravel(), lo, np.nextafter(np.float32(hi), np.float32(lo)))
    counts, edges = np.histogram(a, bins=bins, range=(lo, hi))
    return counts.astype(np.float64), (edges[:-1] + edges[1:]) / 2


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
