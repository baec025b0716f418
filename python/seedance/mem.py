"""The memory engine from Python: plan and replay allocation lifetimes.

Lifetimes are MiniMalloc-style CSV text (``id,lower,upper,size[,kind]``),
e.g. what :func:`seedance.torch.record_lifetimes` writes.
"""

from __future__ import annotations

import json
import os
from typing import Any, Union

from seedance import _core
from seedance.errors import read_text

PathLike = Union[str, "os.PathLike[str]"]


def _text(source: PathLike) -> tuple[str, str]:
    return read_text(source), os.fspath(source)


def plan(lifetimes: PathLike, *, algo: str = "auto", time_limit: float = 1.0,
         alignment: int = 1) -> dict[str, Any]:
    """Offsets in one arena for the buffers of a lifetime CSV file (``seedancectl mem plan``).

    Returns peak_bytes, lower_bound_bytes, optimal, algo, solve_ms and
    ``offsets`` (buffer id -> byte offset).
    """
    text, source = _text(lifetimes)
    return json.loads(_core.mem_plan(text, source, algo, time_limit, alignment))


def replay(lifetimes: PathLike, *, policy: str = "seedance") -> dict[str, Any]:
    """Replays a lifetime CSV file through a caching-allocator policy (``seedancectl mem replay``)."""
    text, source = _text(lifetimes)
    return json.loads(_core.mem_replay(text, source, policy))
