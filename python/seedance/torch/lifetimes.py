"""Recording the storage lifetimes of one training step (feature MEM-1, MEM-4).

On CPU, every operator call is intercepted below autograd (a
``TorchDispatchMode``), so forward, backward and optimizer kernels are all
seen. Each call advances a clock; a storage is born at the call that first
returns it and dies when the last tensor object on it is released (a
``weakref.finalize`` per tensor, counted per storage). Storages that existed
before the step (parameters, inputs) start at time 0; those still alive at the
end end there. Kinds come from the model and optimizer when given: parameters
are weights, their ``.grad`` gradients, optimizer state optimizer_state, the
rest activations.

On CUDA, the allocator's own history is used instead
(``torch.cuda.memory._record_memory_history``, torch >= 2.1): every alloc and
free of the step becomes a lifetime.
"""

from __future__ import annotations

import csv
import io
import os
import weakref
from typing import Any, Callable, Optional, Union

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = ["record_lifetimes"]

PathLike = Union[str, "os.PathLike[str]"]


def _storage_key(t: torch.Tensor) -> Optional[tuple[int, int, str]]:
    try:
        s = t.untyped_storage()
        nbytes = s.nbytes()
    except (NotImplementedError, RuntimeError):
        return None  # sparse, meta, or storage-less tensors
    if nbytes == 0:
        return None
    return (s.data_ptr(), nbytes, str(t.device))


class _Recorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.clock = 0
        self.live: dict[tuple[int, int, str], list[Any]] = {}
        self.records: list[dict[str, Any]] = []

    def track(self, t: torch.Tensor, born_now: bool) -> None:
        key = _storage_key(t)
        if key is None:
            return
        entry = self.live.get(key)
        if entry is None:
            record = {"lower": self.clock if born_now else 0, "upper": None, "size": key[1],
                      "key": key, "kind": "activation"}
            entry = self.live[key] = [0, record]
            self.records.append(record)
        entry[0] += 1
        weakref.finalize(t, self.release, key)

    def release(self, key: tuple[int, int, str]) -> None:
        entry = self.live.get(key)
        if entry is None:
            return
        entry[0] -= 1
        if entry[0] == 0:
            record = entry[1]
            record["upper"] = max(self.clock, record["lower"] + 1)
            del self.live[key]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.clock += 1
        for t in tree_flatten((args, kwargs))[0]:
            if isinstance(t, torch.Tensor) and _storage_key(t) not in self.live:
                self.track(t, born_now=False)
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self.track(t, born_now=True)
        return out


def _kinds(model: Optional[torch.nn.Module], optimizer: Optional[torch.optim.Optimizer]):
    kinds: dict[tuple[int, int, str], str] = {}
    if optimizer is not None:
        for state in optimizer.state.values():
            for value in state.values():
                if isinstance(value, torch.Tensor) and _storage_key(value):
                    kinds[_storage_key(value)] = "optimizer_state"
    if model is not None:
        for p in model.parameters():
            if _storage_key(p):
                kinds[_storage_key(p)] = "weight"
            if p.grad is not None and _storage_key(p.grad):
                kinds[_storage_key(p.grad)] = "gradient"
    return kinds


def _write_csv(records: list[dict[str, Any]], path: Optional[PathLike]) -> None:
    if path is None:
        return
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["id", "lower", "upper", "size", "kind"])
    for r in records:
        writer.writerow([r["id"], r["lower"], r["upper"], r["size"], r["kind"]])
    tmp = f"{os.fspath(path)}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text.getvalue())
    os.replace(tmp, path)  # never a half-written file


def _record_cpu(step_fn: Callable[[], Any], model, optimizer) -> list[dict[str, Any]]:
    recorder = _Recorder()
    with recorder:
        step_fn()
    end = recorder.clock + 1
    kinds = _kinds(model, optimizer)
    out = []
    for i, r in enumerate(recorder.records):
        upper = r["upper"] if r["upper"] is not None else end
        kind = kinds.get(r["key"], r["kind"]) if r["upper"] is None else r["kind"]
        out.append({"id": f"s{i}", "lower": r["lower"], "upper": upper, "size": r["size"],
                    "kind": kind})
    return out


def _record_cuda(step_fn: Callable[[], Any]) -> list[dict[str, Any]]:
    memory = torch.cuda.memory
    if not hasattr(memory, "_record_memory_history"):
        raise RuntimeError("recording CUDA lifetimes needs torch >= 2.1")
    torch.cuda.synchronize()
    memory._record_memory_history(max_entries=1_000_000)
    try:
        step_fn()
        torch.cuda.synchronize()
        snapshot = memory._snapshot()
    finally:
        memory._record_memory_history(enabled=None)
    born: dict[int, tuple[int, int]] = {}
    out: list[dict[str, Any]] = []
    clock = 0
    for trace in snapshot.get("device_traces", []):
        for event in trace:
            clock += 1
            if event["action"] == "alloc":
                born[event["addr"]] = (clock, event["size"])
            elif event["action"] == "free_completed" and event["addr"] in born:
                lower, size = born.pop(event["addr"])
                out.append({"id": f"s{len(out)}", "lower": lower, "upper": clock, "size": size,
                            "kind": "unspecified"})
    for addr, (lower, size) in born.items():
        out.append({"id": f"s{len(out)}", "lower": lower, "upper": clock + 1, "size": size,
                    "kind": "unspecified"})
    return out


def record_lifetimes(step_fn: Callable[[], Any], path: Optional[PathLike] = None, *,
                     model: Optional[torch.nn.Module] = None,
                     optimizer: Optional[torch.optim.Optimizer] = None,
                     device: str = "cpu") -> list[dict[str, Any]]:
    """Runs ``step_fn`` once and returns the lifetime of every storage it used.

    Each entry has ``id, lower, upper, size, kind`` (half-open ``[lower,
    upper)`` in operator calls). With ``path``, the same rows are written as a
    lifetime CSV, atomically. ``device="cuda"`` records from the CUDA caching
    allocator's history instead (torch >= 2.1).
    """
    if device == "cuda":
        records = _record_cuda(step_fn)
    elif device == "cpu":
        records = _record_cpu(step_fn, model, optimizer)
    else:
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    _write_csv(records, path)
    return records


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
