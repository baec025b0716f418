"""Communication (``seedancectl comm``): NCCL settings derived from a topology.

    >>> import seedance.comm
    >>> report = seedance.comm.advise()          # this node, as `topo show` reads it
    >>> [a["variable"] for a in report["advice"]][:2]

The report is the one ``seedancectl comm advise -o json`` prints for the same inputs (one
builder in the library). The DDP communication hook is in ``seedance.torch``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

from seedance import _core
from seedance.errors import read_text

__all__ = ["advise"]

PathLike = Union[str, "os.PathLike[str]"]


def advise(topology: Optional[PathLike] = None, *, root: Optional[PathLike] = None,
           nvlink_from: Optional[PathLike] = None, nodes: int = 1) -> dict[str, Any]:
    """NCCL environment settings with their reasons (``seedancectl comm advise``).

    Args:
        topology: a YAML topology file (docs/design/comm.md); without it, this node as ``topo
            show`` reads it (under ``root``, NVLink from a saved ``nvidia-smi topo -m``), times
            ``nodes``.
    """
    if topology is not None and (root is not None or nvlink_from is not None or nodes != 1):
        raise ValueError("a topology file excludes root, nvlink_from and nodes")
    text = read_text(topology) if topology is not None else ""
    return json.loads(_core.comm_advise_json(
        text, os.fspath(topology) if topology is not None else "",
        os.fspath(root) if root is not None else "",
        os.fspath(nvlink_from) if nvlink_from is not None else "", nodes))


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
