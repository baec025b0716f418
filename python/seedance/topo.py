"""Node topology, affinity checks and NUMA binding (``seedancectl topo``).

    >>> import seedance.topo as topo
    >>> t = topo.topology()                 # same fields as `topo show -o json`
    >>> [n["cpus"] for n in t["numa_nodes"]]
    ['0-1']
    >>> topo.bind_to_numa_node(0)           # this thread: node 0's CPUs, memory preferred there

Binding changes the calling thread only; threads it starts afterwards inherit
the CPU mask and memory policy. For PyTorch DataLoader workers see
:func:`seedance.torch.numa_worker_init_fn`.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional

from seedance import _core

__all__ = ["bind_to_numa_node", "check_affinity", "placement_near_gpu", "topology"]


def topology(root: Optional[str] = None) -> dict[str, Any]:
    """NUMA nodes, CPUs, caches, GPUs, NICs and the device matrix.

    Args:
        root: read ``/sys`` under this directory instead (a saved or fake tree).
    """
    return json.loads(_core.topology_json(os.fspath(root) if root else ""))


def check_affinity(pid: Optional[int] = None, root: Optional[str] = None,
                   remote_limit: float = 0.30) -> dict[str, Any]:
    """The affinity report of ``seedancectl topo check`` for ``pid`` (default: this process).

    ``report["exit_code"]``: 0 consistent, 1 no NUMA information, 2 unbound,
    3 memory not local.
    """
    return json.loads(_core.affinity_check_json(os.getpid() if pid is None else int(pid),
                                                os.fspath(root) if root else "", remote_limit))


def bind_to_numa_node(node: int, memory: str = "preferred") -> None:
    """Runs the calling thread on ``node``'s CPUs; ``memory`` is "preferred",
    "bind" (strict) or "none"."""
    _core.bind_to_numa_node(int(node), memory)


def placement_near_gpu(gpu: int, root: Optional[str] = None) -> tuple[list[int], int]:
    """(CPUs local to GPU ``gpu``, its NUMA node or -1). GPUs are numbered in
    PCI-address order, as nvidia-smi numbers them."""
    cpus, node = _core.placement_near_gpu(int(gpu), os.fspath(root) if root else "")
    return list(cpus), int(node)


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
