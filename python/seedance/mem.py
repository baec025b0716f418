"""The memory engine from Python: plan and replay allocation lifetimes.

Lifetimes are MiniMalloc-style CSV text (``id,lower,upper,size[,kind]``),
e.g. what :func:`seedance.torch.record_lifetimes` writes.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Optional, Union

from seedance import _core
from seedance.errors import SeedanceError, check_int, check_number, read_text

__all__ = ["plan", "replay"]

PathLike = Union[str, "os.PathLike[str]"]


def _text(source: PathLike) -> tuple[str, str]:
    return read_text(source), os.fspath(source)


Buffer = Union[Mapping[str, Any], Sequence[Any]]


def _buffers_csv(buffers: Iterable[Buffer]) -> str:
    """Lifetime CSV text for buffers given in memory: mappings with id, lower, upper, size (and
    optionally kind), or (id, lower, upper, size[, kind]) sequences."""
    lines = ["id,lower,upper,size,kind"]
    for i, b in enumerate(buffers):
        if isinstance(b, Mapping):
            missing = [k for k in ("id", "lower", "upper", "size") if k not in b]
            if missing:
                raise SeedanceError(f"missing {', '.join(missing)}", f"buffers[{i}]")
            row = [b["id"], b["lower"], b["upper"], b["size"], b.get("kind", "unspecified")]
        elif isinstance(b, Sequence) and not isinstance(b, (str, bytes)) and len(b) in (4, 5):
            row = [*b, "unspecified"] if len(b) == 4 else list(b)
        else:
            raise SeedanceError("expected a mapping with id, lower, upper, size or a 4- or "
                                "5-item sequence", f"buffers[{i}]")
        text = [str(x) for x in row]
        if any(c in t for t in text for c in ",\n\r\""):
            raise SeedanceError("a field holds a comma, quote or line break", f"buffers[{i}]")
        lines.append(",".join(text))
    return "\n".join(lines) + "\n"


def _in_memory_where(error: SeedanceError) -> SeedanceError:
    """Names buffers[i] where the CSV reader named a line of the text made from them."""
    m = re.fullmatch(r"buffers:(\d+)(.*)", error.where)
    if m and int(m.group(1)) >= 2:
        return SeedanceError(error.message, f"buffers[{int(m.group(1)) - 2}]{m.group(2)}", error.code)
    return error


def plan(lifetimes: Union[PathLike, Iterable[Buffer]], *, algo: str = "auto",
         time_limit: float = 1.0, alignment: int = 1, capacity: Optional[int] = None,
         threads: int = 0) -> dict[str, Any]:
    """Offsets in one arena for a set of buffers (``seedancectl mem plan``).

    Args:
        lifetimes: a lifetime CSV file, or the buffers themselves: mappings with id, lower, upper,
            size (optionally kind) or (id, lower, upper, size[, kind]) tuples.
        algo, time_limit, alignment: as ``--algo``, ``--time-limit``, ``--alignment``.
        capacity: arena size in bytes (``--capacity``): a plan that fits, or SeedanceError
            saying whether none can fit or none was found in the time limit.
        threads: threads for the exact search (0: one per hardware thread); the plan does not
            depend on it.

    Returns peak_bytes, lower_bound_bytes, optimal, algo, solve_ms, ... and ``offsets``
    (buffer id -> byte offset).
    """
    if capacity is not None and check_int("capacity", capacity) < 1:
        raise SeedanceError("expected a whole number of bytes >= 1", "capacity")
    # Types and 64-bit fields here; the ranges in libseedance (mem::PlanOffsets), the CLI's.
    time_limit = check_number("time_limit", time_limit)
    alignment = check_int("alignment", alignment)
    threads = check_int("threads", threads, 32)
    if isinstance(lifetimes, (str, os.PathLike)):
        text, source = _text(lifetimes)
    else:
        text, source = _buffers_csv(lifetimes), "buffers"
    try:
        return json.loads(_core.mem_plan(text, source, algo, time_limit, alignment,
                                         capacity or 0, threads))
    except SeedanceError as e:
        if source != "buffers":
            raise
        raise _in_memory_where(e) from None


def replay(lifetimes: PathLike, *, policy: str = "seedance") -> dict[str, Any]:
    """Replays a lifetime CSV file through a caching-allocator policy (``seedancectl mem replay``)."""
    text, source = _text(lifetimes)
    return json.loads(_core.mem_replay(text, source, policy))


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
