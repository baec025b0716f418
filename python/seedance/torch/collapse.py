"""Gradient-collapse guard with rollback (feature PREC-5).

Call :meth:`CollapseGuard.check` after ``backward()`` and before
``optimizer.step()``. It measures each layer's gradient norm and variance and
feeds libseedance's CollapseDetector (norm ratio < 0.05 for 3 steps in a
window of 5, variance < 1e-8). When a layer collapses it:

1. restores the last good state — a snapshot taken at least ``window`` steps
   before the detection, so it predates the collapse — of the affected layers
   (``scope="layers"``) or of the whole model (``scope="model"``), from memory
   or from disk (``checkpoint_dir``; written to a temporary file, then renamed);
2. resets the optimizer state (Adam's moments, SGD's momentum) of the
   affected layers' parameters;
3. raises their precision one level (fp8 -> fp16 -> bf16 -> fp32) through the
   PrecisionPlan of :func:`seedance.torch.apply_precision_policy`, when given;
4. logs the event (``events``, and a JSON line in ``log_path`` when given);

and returns True: skip ``optimizer.step()`` for this batch. Otherwise it
takes a snapshot every ``snapshot_every`` steps and returns False.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from typing import Any, Optional

import torch

from seedance import _core

__all__ = ["CollapseGuard"]

_LADDER = ["fp8", "fp16", "bf16", "fp32"]


class CollapseGuard:
    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, *,
                 plan: Any = None, scope: str = "layers", snapshot_every: int = 50,
                 checkpoint_dir: Optional[str] = None, log_path: Optional[str] = None,
                 window: int = 5, consecutive: int = 3, ratio_threshold: float = 0.05,
                 variance_threshold: float = 1e-8) -> None:
        if scope not in ("layers", "model"):
            raise ValueError("scope must be 'layers' or 'model'")
        self.model = model
        self.optimizer = optimizer
        self.plan = plan
        self.scope = scope
        self.snapshot_every = snapshot_every
        self.checkpoint_dir = checkpoint_dir
        self.log_path = log_path
        self.window = window
        self._detector = _core.CollapseDetector(window, consecutive, ratio_threshold,
                                                variance_threshold)
        # Layers: leaf modules that own parameters.
        self.layers = {name: m for name, m in model.named_modules()
                       if name and next(m.parameters(recurse=False), None) is not None}
        self._snapshots: list[tuple[int, Any]] = []  # (step, state or path), oldest first
        self.events: list[dict[str, Any]] = []
        self._step = 0

    # -- measuring -----------------------------------------------------------

    def _layer_stats(self, module: torch.nn.Module) -> Optional[tuple[float, float]]:
        grads = [p.grad.detach().float().reshape(-1) for p in module.parameters(recurse=False)
                 if p.grad is not None]
        if not grads:
            return None
        g = torch.cat(grads)
        return float(g.norm()), float(g.var(unbiased=False)) if g.numel() > 1 else 0.0

    def check(self, step: Optional[int] = None) -> bool:
        """True when a collapse was found and rolled back (skip this optimizer step)."""
        self._step = self._step + 1 if step is None else step
        collapsed = []
        for name, module in self.layers.items():
            stats = self._layer_stats(module)
            if stats is not None and self._detector.observe(name, stats[0], stats[1]):
                collapsed.append(name)
        if collapsed:
            self.rollback(collapsed)
            return True
        if self._step % self.snapshot_every == 0 or not self._snapshots:
            self.snapshot()
        return False

    # -- state ---------------------------------------------------------------

    def snapshot(self) -> None:
        """Keeps the current model and optimizer state as a rollback point."""
        state = {"model": copy.deepcopy(self.model.state_dict()),
                 "optimizer": copy.deepcopy(self.optimizer.state_dict())}
        if self.checkpoint_dir is not None:
            os.makedirs(self.checkpoint_dir, exist_ok=True)
            path = os.path.join(self.checkpoint_dir, f"seedance-guard-{self._step}.pt")
            fd, tmp = tempfile.mkstemp(dir=self.checkpoint_dir, suffix=".tmp")
            os.close(fd)
            torch.save(state, tmp)
            os.replace(tmp, path)  # atomic: a crash leaves the old snapshot or the new one
            state = path
        self._snapshots.append((self._step, state))
        # Keep the newest snapshot that predates any collapse still undetected
        # (older than `window` steps), plus the ones after it.
        while len(self._snapshots) > 1 and self._snapshots[1][0] <= self._step - self.window:
            _, old = self._snapshots.pop(0)
            if isinstance(old, str) and os.path.exists(old):
                os.remove(old)

    def _good_snapshot(self) -> tuple[int, dict[str, Any]]:
        good = [s for s in self._snapshots if s[0] <= self._step - self.window]
        step, state = (good[-1] if good else self._snapshots[0])
        if isinstance(state, str):
            state = torch.load(state)
        return step, state

    def rollback(self, layers: list[str]) -> None:
        """Restores, resets moments, raises precision and logs (see the module doc)."""
        snap_step, state = self._good_snapshot()
        if self.scope == "model":
            self.model.load_state_dict(state["model"])
        else:
            current = self.model.state_dict()
            for name in layers:
                prefix = name + "."
                for key, value in state["model"].items():
                    if key.startswith(prefix) and key[len(prefix):].count(".") == 0:
                        current[key].copy_(value)
        reset = self._reset_moments(layers if self.scope == "layers" else list(self.layers))
        raised = {}
        for name in layers:
            if self.plan is not None and name in self.plan.precisions:
                old = self.plan.precisions[name]
                new = _LADDER[min(_LADDER.index(old) + 1, len(_LADDER) - 1)]
                if new != old:
                    self.plan.set(name, new)
                raised[name] = [old, new]
            self._detector.reset(name)
        event = {"event": "gradient_collapse", "step": self._step, "layers": layers,
                 "restored_from_step": snap_step, "scope": self.scope,
                 "optimizer_state_reset": reset, "precision_raised": raised}
        self.events.append(event)
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(event) + "\n")

    def _reset_moments(self, layers: list[str]) -> int:
        params = [p for name in layers for p in self.layers[name].parameters(recurse=False)]
        count = 0
        for p in params:
            if p in self.optimizer.state:
                del self.optimizer.state[p]  # Adam, SGD, ... re-create it on the next step
                count += 1
        return count


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
