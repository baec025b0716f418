"""Seedance's caching allocator as PyTorch's CUDA allocator (feature MEM-3).

The shared library ``libseedance_torch_allocator.so`` (built next to this
file when Seedance is built with CUDA) exports the C functions that
``torch.cuda.memory.CUDAPluggableAllocator`` loads:

    void* seedance_torch_malloc(ssize_t size, int device, cudaStream_t stream);
    void  seedance_torch_free(void* ptr, ssize_t size, int device, cudaStream_t stream);

Allocations come from a ``seedance-stitch`` CachingAllocator per device on
the CUDA virtual-memory back end, one pool per stream.
"""

from __future__ import annotations

import ctypes
import pathlib
from typing import Any, Optional

import torch

__all__ = ["memory_stats", "use_caching_allocator"]

_LIBRARY = pathlib.Path(__file__).with_name("libseedance_torch_allocator.so")
_installed: Optional[ctypes.CDLL] = None


def _require() -> None:
    major = int(torch.__version__.split(".")[0])
    if major < 2 or not hasattr(torch.cuda.memory, "CUDAPluggableAllocator"):
        raise RuntimeError(f"use_caching_allocator needs torch >= 2.0, this is {torch.__version__}")
    if torch.version.cuda is None:
        raise RuntimeError(f"use_caching_allocator needs a CUDA build of torch; torch "
                           f"{torch.__version__} is built for the CPU only (pip install a CUDA "
                           f"build of the same version on a GPU machine)")
    if not torch.cuda.is_available():
        raise RuntimeError("use_caching_allocator needs a CUDA device; torch sees none "
                           f"(torch {torch.__version__}, CUDA {torch.version.cuda})")
    if not _LIBRARY.exists():
        raise RuntimeError(f"{_LIBRARY} is missing: this build of Seedance has no CUDA")


def use_caching_allocator() -> None:
    """Makes Seedance's caching allocator PyTorch's CUDA allocator.

    Must be called before the first CUDA allocation of the process (a PyTorch
    rule for pluggable allocators).
    """
    global _installed
    _require()
    allocator = torch.cuda.memory.CUDAPluggableAllocator(
        str(_LIBRARY), "seedance_torch_malloc", "seedance_torch_free")
    torch.cuda.memory.change_current_allocator(allocator)
    _installed = ctypes.CDLL(str(_LIBRARY))


def memory_stats(device: int = 0) -> dict[str, Any]:
    """Statistics of Seedance's allocator on one device (after use_caching_allocator)."""
    if _installed is None:
        raise RuntimeError("use_caching_allocator() has not been called")
    values = (ctypes.c_int64 * 8)()
    _installed.seedance_torch_stats(ctypes.c_int(device), values)
    names = ["allocated_bytes", "reserved_bytes", "allocated_peak_bytes", "reserved_peak_bytes",
             "segments", "allocations", "stitches", "requested_peak_bytes"]
    return dict(zip(names, (int(v) for v in values)))


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
