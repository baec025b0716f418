"""NUMA-aware DataLoader workers (feature TOPO-2).

    loader = torch.utils.data.DataLoader(
        dataset, num_workers=8,
        worker_init_fn=seedance.torch.numa_worker_init_fn())

Each worker process is pinned to the CPUs local to the training process's GPU
(the GPU's ``local_cpulist`` in sysfs) and, where the kernel has that NUMA
node, allocates its memory there first, so that batches are built next to the
PCIe root the GPU reads them through. On a machine without that GPU (a CPU-only
one) each worker warns and runs unbound, as it would without the hook.
"""

from __future__ import annotations

import os
import warnings
from typing import Callable, Optional

from seedance import _core
from seedance.errors import SeedanceError

__all__ = ["NumaWorkerInit", "numa_worker_init_fn"]


def _gpu_in_pci_order(root: str) -> int:
    """The current CUDA device as an index in PCI-address order (nvidia-smi's)."""
    try:
        import torch
        if torch.cuda.is_available():
            device = torch.cuda.current_device()
            props = torch.cuda.get_device_properties(device)
            bus = getattr(props, "pci_bus_id", None)  # torch >= 2.1
            domain = getattr(props, "pci_domain_id", 0)
            if bus is not None:
                import json
                gpus = json.loads(_core.topology_json(root))["gpus"]
                for g in gpus:
                    d, b = g["pci_address"].split(":")[:2]
                    if int(d, 16) == domain and int(b, 16) == bus:
                        return int(g["name"][3:])
            return device  # CUDA_DEVICE_ORDER=PCI_BUS_ID makes these agree
    except ImportError:
        pass
    return int(os.environ.get("LOCAL_RANK", "0"))


class NumaWorkerInit:
    """A picklable ``worker_init_fn``: binds the worker next to ``gpu``.

    Args:
        gpu: GPU index in PCI order; default: the current CUDA device, else
            ``LOCAL_RANK``, else 0.
        memory: "preferred" (default), "bind" (strict) or "none".
        root: read ``/sys`` under this directory (tests).
        then: another ``worker_init_fn`` to call afterwards.
    """

    def __init__(self, gpu: Optional[int] = None, memory: str = "preferred",
                 root: Optional[str] = None,
                 then: Optional[Callable[[int], None]] = None) -> None:
        if memory not in ("preferred", "bind", "none"):
            raise ValueError(f"memory must be preferred, bind or none, got {memory!r}")
        self.gpu = gpu
        self.memory = memory
        self.root = os.fspath(root) if root else ""
        self.then = then

    def __call__(self, worker_id: int) -> None:
        gpu = self.gpu if self.gpu is not None else _gpu_in_pci_order(self.root)
        try:
            cpus, node = _core.placement_near_gpu(int(gpu), self.root)
        except SeedanceError as e:
            # A machine without that GPU (a CPU-only box running a loader written for a GPU
            # one): the worker runs as it would without this hook.
            warnings.warn(f"seedance: worker {worker_id} left unbound: {e}", RuntimeWarning,
                          stacklevel=2)
            if self.then is not None:
                self.then(worker_id)
            return
        allowed = set(os.sched_getaffinity(0))
        usable = sorted(set(cpus) & allowed)
        if not usable:
            warnings.warn(f"seedance: GPU {gpu}'s local CPUs {sorted(cpus)} are outside this "
                          f"process's CPU set {sorted(allowed)}; worker {worker_id} left unbound")
        else:
            memory = self.memory
            if node < 0 or node > _core.numa_max_node():
                memory = "none"  # no such node on this kernel: CPUs only
            _core.bind_calling_thread(usable, node, memory)
        if self.then is not None:
            self.then(worker_id)


def numa_worker_init_fn(gpu: Optional[int] = None, memory: str = "preferred",
                        root: Optional[str] = None,
                        then: Optional[Callable[[int], None]] = None) -> NumaWorkerInit:
    """A DataLoader ``worker_init_fn`` that places workers near ``gpu``."""
    return NumaWorkerInit(gpu, memory, root, then)


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
