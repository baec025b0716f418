"""Loss scaling for PyTorch (feature PREC-2, PREC-3).

:class:`GradScaler` has the API of ``torch.amp.GradScaler`` (``scale``,
``unscale_``, ``step``, ``update``, ``get_scale``, the ``get_/set_growth_factor``,
``backoff_factor`` and ``growth_interval`` accessors, ``state_dict``,
``load_state_dict``) and three modes — ``dynamic`` (torch's rule, plus
DeepSpeed's hysteresis and min/max bounds), ``static`` and ``grad-norm`` —
decided by libseedance's LossScaler. One object serves every device (CPU
included) and agrees across ranks.

In ``dynamic`` mode with ``hysteresis=1`` it is step for step what
``torch.amp.GradScaler`` does: the same float32 scale after every update (each
change computed in double and rounded to float, never grown past float32's
range), the same skipped steps, the same unscaled gradients and so the same
parameters; state dicts load into each other both ways. It differs, on
purpose, in: ``hysteresis > 1`` (the first overflows after a growth skip the
step without backing off), ``min_scale``/``max_scale`` (torch has no bounds),
``static`` and ``grad-norm`` modes (torch has neither), and ``update()`` with
no step recorded is a no-op where torch raises. tests/python/
test_grad_scaler_vs_torch.py checks both the agreement and the differences.

Unscaling is one fused pass per gradient (multiply by 1/scale, non-finite
check, L2 norms) in C++ for contiguous float32 CPU gradients, and torch ops
otherwise. Under ``torch.distributed`` the found-inf flag (and, in grad-norm
mode, the squared norm) is all-reduced before the decision, so every rank
skips the same steps and keeps the same scale.
"""

from __future__ import annotations

import json
import math
from typing import Any, Optional, Union

import torch

from seedance import _core

__all__ = ["GradScaler"]


def _grads(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    out = []
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is not None:
                if p.grad.is_sparse:
                    raise ValueError("seedance GradScaler does not handle sparse gradients")
                out.append(p.grad)
    return out


class GradScaler:
    """Scales the loss, unscales gradients, skips steps with inf/NaN gradients.

    Args:
        device: as torch.amp.GradScaler's first argument ("cuda", "cpu", ...);
            the same object works for any device, so it is only checked to be a
            string. A number in its place is taken as init_scale, as
            torch.cuda.amp.GradScaler's first argument.
        init_scale, growth_factor, backoff_factor, growth_interval: as torch's
            GradScaler (2**16, 2.0, 0.5, 2000).
        enabled: False makes every call a pass-through, as torch's.
        mode: "dynamic", "static" or "grad-norm".
        hysteresis: DeepSpeed's delayed shift: overflows tolerated before backing
            off (1 = torch's behaviour); consecutive_hysteresis refills it after
            every clean step instead of after every growth.
        min_scale, max_scale: bounds of the scale (dynamic mode).
        sequence_length: grad-norm mode: picks init_scale and decay from the
            note's table (< 512: 8192 / 0.92; <= 2048: 4096 / 0.85; else 2048 / 0.8).
        eval_interval, rise_ratio, collapse_ratio, decay_factor: grad-norm mode (50, 0.1, 0.05, 0.85).
        sync_distributed: all-reduce the found-inf flag across ranks when
            torch.distributed is initialised (default True).
    """

    def __init__(self, device: Union[str, float, None] = None,
                 init_scale: Optional[float] = None, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True,
                 *, mode: str = "dynamic", hysteresis: int = 1,
                 consecutive_hysteresis: bool = False, min_scale: float = 0.0,
                 max_scale: Optional[float] = None, sequence_length: Optional[int] = None,
                 eval_interval: int = 50, rise_ratio: float = 0.1, collapse_ratio: float = 0.05,
                 decay_factor: Optional[float] = None, sync_distributed: bool = True) -> None:
        if isinstance(device, (int, float)) and not isinstance(device, bool):
            if init_scale is not None:
                raise TypeError("init_scale given twice (positionally and by name)")
            device, init_scale = None, float(device)
        if device is not None and not isinstance(device, str):
            raise TypeError(f"device must be a string such as 'cuda' or 'cpu', not {device!r}")
        self.device = device or "cuda"
        self._enabled = enabled
        config: dict[str, Any] = {
            "mode": mode, "growth_factor": growth_factor, "backoff_factor": backoff_factor,
            "growth_interval": growth_interval, "hysteresis": hysteresis,
            "consecutive_hysteresis": consecutive_hysteresis, "min_scale": min_scale,
            "eval_interval": eval_interval, "rise_ratio": rise_ratio,
            "collapse_ratio": collapse_ratio}
        if sequence_length is not None:
            config["sequence_length"] = sequence_length
        if init_scale is not None:
            config["init_scale"] = float(init_scale)
        elif mode != "grad-norm":
            config["init_scale"] = 2.0 ** 16
        if max_scale is not None:
            config["max_scale"] = float(max_scale)
        if decay_factor is not None:
            config["decay_factor"] = decay_factor
        self._core = _core.LossScaler(json.dumps(config))
        self._sync = sync_distributed
        self._per_optimizer: dict[int, dict[str, Any]] = {}
        self.last_grad_norm: float = 0.0
        self.last_step_skipped: bool = False

    # -- the torch.cuda.amp.GradScaler API ---------------------------------

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return float(self._core.scale) if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return float(self._config()["growth_factor"])

    def set_growth_factor(self, new_factor: float) -> None:
        self._set_config(growth_factor=float(new_factor))

    def get_backoff_factor(self) -> float:
        return float(self._config()["backoff_factor"])

    def set_backoff_factor(self, new_factor: float) -> None:
        self._set_config(backoff_factor=float(new_factor))

    def get_growth_interval(self) -> int:
        return int(self._config()["growth_interval"])

    def set_growth_interval(self, new_interval: int) -> None:
        self._set_config(growth_interval=int(new_interval))

    def scale(self, outputs: Any) -> Any:
        """outputs (a tensor or nested lists/tuples of tensors) times the scale."""
        if not self._enabled:
            return outputs
        s = self._core.scale
        if isinstance(outputs, torch.Tensor):
            return outputs * torch.tensor(s, dtype=torch.float32, device=outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer: torch.optim.Optimizer) -> None:
        """Divides optimizer's gradients by the scale, in place, once per step."""
        if not self._enabled:
            return
        state = self._per_optimizer.get(id(optimizer))
        if state is not None and state["unscaled"]:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        inv = 1.0 / self._core.scale
        fused_ptrs, fused_sizes, sumsq, found = [], [], 0.0, False
        for g in _grads(optimizer):
            if g.device.type == "cpu" and g.dtype == torch.float32 and g.is_contiguous():
                fused_ptrs.append(g.data_ptr())
                fused_sizes.append(g.numel())
            else:
                g.mul_(inv)
                gf = g.float()
                if not bool(torch.isfinite(gf).all()):
                    found = True
                sumsq += float((gf * gf).sum())
        if fused_ptrs:
            bad, norm, _, _ = _core.grad_unscale(fused_ptrs, fused_sizes, inv)
            found = found or bad
            sumsq += norm * norm
        self._per_optimizer[id(optimizer)] = {"unscaled": True, "found_inf": found,
                                              "sumsq": sumsq, "stepped": False}

    def step(self, optimizer: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
        """optimizer.step(*args, **kwargs) unless a gradient is inf/NaN (on any rank)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._per_optimizer.get(id(optimizer))
        if state is None or not state["unscaled"]:
            self.unscale_(optimizer)
            state = self._per_optimizer[id(optimizer)]
        if state["stepped"]:
            raise RuntimeError("step() has already been called since the last update().")
        found, sumsq = self._agree(state["found_inf"], state["sumsq"])
        state.update(found_inf=found, sumsq=sumsq, stepped=True)
        if found:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Optional[float] = None) -> None:
        """Updates the scale from this iteration's steps (or sets new_scale)."""
        if not self._enabled:
            return
        if new_scale is not None:
            state = json.loads(self._core.to_json())
            state["state"]["scale"] = float(new_scale)
            self._core = _core.LossScaler.from_json(json.dumps(state))
        elif self._per_optimizer:
            found = any(s["found_inf"] for s in self._per_optimizer.values())
            norm = math.sqrt(sum(s["sumsq"] for s in self._per_optimizer.values())) \
                if not found else 0.0
            self.last_grad_norm = norm
            self.last_step_skipped = not self._core.update(found, norm)
        self._per_optimizer.clear()

    def state_dict(self) -> dict[str, Any]:
        """torch's keys (scale, growth_factor, backoff_factor, growth_interval,
        _growth_tracker) plus "seedance": the full scaler state as JSON text."""
        if not self._enabled:
            return {}
        full = json.loads(self._core.to_json())
        return {"scale": full["state"]["scale"],
                "growth_factor": full["config"]["growth_factor"],
                "backoff_factor": full["config"]["backoff_factor"],
                "growth_interval": full["config"]["growth_interval"],
                "_growth_tracker": full["state"]["growth_tracker"],
                "seedance": json.dumps(full)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Accepts this class's state dicts and torch.cuda.amp.GradScaler's."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        if "seedance" in state_dict:
            self._core = _core.LossScaler.from_json(state_dict["seedance"])
            return
        full = json.loads(self._core.to_json())
        full["config"].update(growth_factor=float(state_dict["growth_factor"]),
                              backoff_factor=float(state_dict["backoff_factor"]),
                              growth_interval=int(state_dict["growth_interval"]))
        full["state"].update(scale=float(state_dict["scale"]),
                             growth_tracker=int(state_dict["_growth_tracker"]))
        self._core = _core.LossScaler.from_json(json.dumps(full))

    # -- Seedance additions --------------------------------------------------

    def seedance_state(self) -> dict[str, Any]:
        """Config and counters (steps, skipped_steps, ...) of the scaler."""
        return json.loads(self._core.to_json())

    def _config(self) -> dict[str, Any]:
        return json.loads(self._core.to_json())["config"]

    def _set_config(self, **fields: Any) -> None:
        full = json.loads(self._core.to_json())
        full["config"].update(fields)
        self._core = _core.LossScaler.from_json(json.dumps(full))  # validates the new value

    def _agree(self, found: bool, sumsq: float) -> tuple[bool, float]:
        dist = torch.distributed
        if not (self._sync and dist.is_available() and dist.is_initialized()
                and dist.get_world_size() > 1):
            return found, sumsq
        t = torch.tensor([1.0 if found else 0.0, sumsq], dtype=torch.float64)
        if dist.get_backend() == "nccl":
            t = t.cuda()
        dist.all_reduce(t)  # sum: any rank's inf makes it > 0; norms average below
        world = dist.get_world_size()
        return bool(t[0].item() > 0), float(t[1].item()) / world


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
