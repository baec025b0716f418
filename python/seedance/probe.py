"""One window of the node probe (``seedancectl probe --once``).

    >>> import seedance.probe as probe
    >>> w = probe.sample(0.5, metrics="cpu,mem")   # same fields as `probe --once -o json`
    >>> sorted(w)
    ['findings', 'notes', 'timestamp_s', 'values', 'window_s']

Counters become rates over the window, gauges are the later reading; ``findings``
are the rules' verdicts on the values (an idle GPU, a saturated link, ...).
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

from seedance import _core

__all__ = ["sample"]

PathLike = Union[str, "os.PathLike[str]"]


def sample(interval: float = 1.0, *, metrics: str = "", root: Optional[PathLike] = None,
           gpu_fixture: Optional[PathLike] = None, task_id: int = -1) -> dict[str, Any]:
    """Reads the node, waits ``interval`` seconds, reads again and reports the window.

    Args:
        interval: the window in seconds (0.01 to 86400).
        metrics: comma-separated value names or prefixes ("gpu", "net.out_bytes"); all when
            empty.
        root: read ``/proc`` and ``/sys`` under this directory (a saved or fake tree).
        gpu_fixture: replay GPU readings from this JSON file instead of NVML.
        task_id: also sample this process (CPU, resident memory); -1: none.

    Raises:
        SeedanceError: a bad interval or metric name, an unreadable fixture.
    """
    return json.loads(_core.probe_sample_json(
        float(interval), metrics, os.fspath(root) if root else "",
        os.fspath(gpu_fixture) if gpu_fixture else "", int(task_id)))


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
