"""Layer-wise precision for PyTorch models (feature PREC-4).

:func:`apply_precision_policy` asks libseedance which format each leaf module
computes in (rules from a YAML policy, the small-batch rule, the sensitivity
ordering QKV > FFN > Norm; see docs/design/precision.md) and applies it:

- ``mode="cast"``: the module's parameters are cast to fp16/bf16 and its
  inputs cast on entry, its outputs back to float32 on exit (real low-precision
  compute; fp16 needs a GPU with torch 1.13);
- ``mode="emulate"``: parameters stay float32; weights, inputs and outputs are
  rounded to the format on the way forward and the output's gradient on the
  way back (straight-through), so the numerics of fp16/bf16/fp8 can be studied
  on any CPU. fp8 uses E4M3 forward and E5M2 backward with a per-tensor scale
  from the current amax, as FP8 training recipes do;
- ``mode="auto"``: cast on CUDA for fp16/bf16, emulate otherwise (and always for fp8).

It returns a :class:`PrecisionPlan`: the decisions (module, type, class,
precision, rule, reason, how) and :meth:`PrecisionPlan.set` to change one
module's precision later (the collapse guard raises precisions with it).
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

import torch

from seedance import _core
from seedance.errors import read_text

__all__ = ["PrecisionPlan", "apply_precision_policy", "fake_round"]

_TORCH_DTYPE = {"fp16": torch.float16, "bf16": torch.bfloat16}
_FP8_MAX = {"fp8_e4m3": 448.0, "fp8_e5m2": 57344.0}


def _round_cpu(x: torch.Tensor, fmt: str, saturate: bool) -> torch.Tensor:
    from seedance import precision as sp
    t = x.detach().to(torch.float32).contiguous().cpu()
    return torch.from_numpy(sp.round_trip(t, fmt, saturate)).to(x.device).view_as(x)


def fake_round(x: torch.Tensor, fmt: str) -> torch.Tensor:
    """x rounded to fmt ("fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"), as float32.
    fp8 is scaled per tensor so that the amax maps to the format's largest value."""
    if fmt == "fp32":
        return x
    if fmt in _TORCH_DTYPE:
        return x.to(_TORCH_DTYPE[fmt]).to(x.dtype)
    amax = float(x.detach().abs().max()) if x.numel() else 0.0
    if not amax or amax != amax or amax == float("inf"):
        return _round_cpu(x, fmt, True).to(x.dtype)
    scale = _FP8_MAX[fmt] / amax
    return (_round_cpu(x * scale, fmt, True) / scale).to(x.dtype)


class _StraightThrough(torch.autograd.Function):
    """Forward: round to a format. Backward: the gradient rounded to the
    backward format (or passed through unchanged for fp32)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, fwd: str, bwd: str) -> torch.Tensor:  # type: ignore[override]
        ctx.bwd = bwd
        return fake_round(x, fwd)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:  # type: ignore[override]
        return fake_round(grad, ctx.bwd), None, None


def _formats(precision: str) -> tuple[str, str]:
    """(forward format, backward format) of a compute precision."""
    if precision == "fp8":
        return "fp8_e4m3", "fp8_e5m2"
    return precision, precision


class PrecisionPlan(list):
    """The decisions (a list of dicts), with the hooks that apply them."""

    def __init__(self, model: torch.nn.Module, decisions: list[dict[str, Any]], mode: str) -> None:
        super().__init__(decisions)
        self.model = model
        self.mode = mode
        self._modules = dict(model.named_modules())
        self._handles: dict[str, list[Any]] = {}
        self.precisions: dict[str, str] = {}
        for d in decisions:
            self.set(d["module"], d["precision"], _record=d)

    def _how(self, precision: str, module: torch.nn.Module) -> str:
        if precision == "fp32":
            return "fp32"
        if self.mode == "cast" or (self.mode == "auto" and precision in _TORCH_DTYPE
                                   and any(p.is_cuda for p in module.parameters())):
            if precision not in _TORCH_DTYPE:
                return "emulate"
            return "cast"
        return "emulate"

    def set(self, name: str, precision: str, _record: Optional[dict[str, Any]] = None) -> None:
        """Makes module `name` compute in `precision` from the next forward on."""
        module = self._modules[name]
        for h in self._handles.pop(name, []):
            h.remove()
        for p in module.parameters(recurse=False):
            if p.dtype != torch.float32:
                p.data = p.data.float()
        self.precisions[name] = precision
        how = self._how(precision, module)
        if how == "cast":
            dtype = _TORCH_DTYPE[precision]
            module.to(dtype)

            def pre(_m: Any, args: tuple) -> tuple:
                return tuple(a.to(dtype) if torch.is_tensor(a) and a.is_floating_point() else a
                             for a in args)

            def post(_m: Any, _args: Any, out: Any) -> Any:
                return out.float() if torch.is_tensor(out) and out.is_floating_point() else out

            self._handles[name] = [module.register_forward_pre_hook(pre),
                                   module.register_forward_hook(post)]
        elif how == "emulate":
            fwd, bwd = _formats(precision)

            def pre_e(m: Any, args: tuple) -> tuple:
                # Round the weights for this forward; the float32 masters are kept.
                m._seedance_masters = {}
                for pname, p in list(m.named_parameters(recurse=False)):
                    m._seedance_masters[pname] = p
                    rounded = _StraightThrough.apply(p, fwd, bwd)
                    delattr(m, pname)
                    setattr(m, pname, rounded)
                return tuple(_StraightThrough.apply(a, fwd, bwd)
                             if torch.is_tensor(a) and a.is_floating_point() else a for a in args)

            def post_e(m: Any, _args: Any, out: Any) -> Any:
                for pname, p in m._seedance_masters.items():
                    delattr(m, pname)
                    m.register_parameter(pname, p)
                del m._seedance_masters
                if torch.is_tensor(out) and out.is_floating_point():
                    return _StraightThrough.apply(out, fwd, bwd)
                return out

            self._handles[name] = [module.register_forward_pre_hook(pre_e),
                                   module.register_forward_hook(post_e)]
        record = _record
        if record is None:
            record = next(d for d in self if d["module"] == name)
            record.update(precision=precision, rule="set", reason="changed at run time")
        record["how"] = how

    def remove(self) -> None:
        """Takes every hook off (parameters stay in their current dtype)."""
        for hs in self._handles.values():
            for h in hs:
                h.remove()
        self._handles.clear()


def _policy_text(policy: Union[None, str, "os.PathLike[str]", dict]) -> tuple[Optional[str], str]:
    if policy is None:
        return None, "<built-in>"
    if isinstance(policy, dict):
        return json.dumps(policy), "<dict>"  # JSON is YAML
    path = os.fspath(policy)
    return read_text(path), path  # as the CLI reads it: a FIFO or a device is an error


def apply_precision_policy(model: torch.nn.Module,
                           policy: Union[None, str, "os.PathLike[str]", dict] = None, *,
                           micro_batch: Optional[int] = None, mode: str = "auto") -> PrecisionPlan:
    """Assigns fp8/fp16/bf16/fp32 to every leaf module that has parameters.

    Args:
        model: the model; modified in place (hooks, and parameter casts in cast mode).
        policy: a YAML file path, a dict with the same structure
            ({"precision_policy": {...}}), or None for the built-in defaults.
        micro_batch: the per-GPU batch; <= 8 keeps everything in fp32.
        mode: "auto", "cast" or "emulate" (module docstring).

    Returns:
        A PrecisionPlan: one dict per module with module, type, class,
        precision, rule, reason and how ("cast", "emulate" or "fp32").
    """
    if mode not in ("auto", "cast", "emulate"):
        raise ValueError(f"mode must be auto, cast or emulate, not {mode!r}")
    text, source = _policy_text(policy)
    leaves = [(name, type(m).__name__) for name, m in model.named_modules()
              if name and next(m.children(), None) is None
              and next(m.parameters(recurse=False), None) is not None]
    decisions = json.loads(_core.precision_decide(text, source, leaves, micro_batch or 0))
    return PrecisionPlan(model, decisions, mode)


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
