"""Seedance for PyTorch users.

- :func:`record_lifetimes` records the storage lifetimes of one real step and
  writes them in the lifetime-CSV format that ``seedancectl mem plan`` and
  :mod:`seedance.mem` read.
- :func:`use_caching_allocator` installs Seedance's caching allocator as
  PyTorch's CUDA allocator (torch >= 2.0, a CUDA build of Seedance), and
  :func:`memory_stats` reports its statistics.
"""

from __future__ import annotations

from seedance.torch.allocator import memory_stats, use_caching_allocator
from seedance.torch.lifetimes import record_lifetimes

__all__ = ["memory_stats", "record_lifetimes", "use_caching_allocator"]
