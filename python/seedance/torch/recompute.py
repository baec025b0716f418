"""Applying a recomputation plan (feature MEM-5) to a real model.

A plan names, per transformer layer, the parts whose activations are dropped in the forward
pass and recomputed in the backward pass: ``"attention"``, ``"mlp"``, ``"norms"``. This is
PyTorch's selective activation checkpointing expressed per submodule: each dropped part's module
runs under :func:`torch.utils.checkpoint.checkpoint` (non-reentrant), so only its inputs are
saved and its internals are recomputed.

    >>> plan = {"dropped_per_layer": [["mlp"], [], ["attention", "mlp"]]}
    >>> apply_recompute_plan(model, plan)          # returns the wrapped modules' names

The layers are found as Hugging Face names them: ``model.layers`` (Llama, Mistral, Qwen),
``transformer.h`` (GPT-2), or pass ``layers=`` yourself; the parts are the layer's attention
(``self_attn`` / ``attn``), MLP (``mlp``) and norms (``input_layernorm`` and
``post_attention_layernorm`` / ``ln_1`` and ``ln_2``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Optional

import torch
from torch.utils.checkpoint import checkpoint

__all__ = ["apply_recompute_plan"]

_PARTS = {
    "attention": ("self_attn", "attn"),
    "mlp": ("mlp",),
    "norms": ("input_layernorm", "post_attention_layernorm", "ln_1", "ln_2"),
}


def _layers_of(model: torch.nn.Module) -> Sequence[torch.nn.Module]:
    for path in ("model.layers", "layers", "transformer.h", "h"):
        obj: Any = model
        for name in path.split("."):
            obj = getattr(obj, name, None)
            if obj is None:
                break
        if isinstance(obj, torch.nn.ModuleList):
            return obj
    raise ValueError("no transformer layers found (model.layers, transformer.h): pass layers=")


def _checkpointed(forward):
    @functools.wraps(forward)
    def run(*args, **kwargs):
        if not torch.is_grad_enabled():
            return forward(*args, **kwargs)
        return checkpoint(forward, *args, use_reentrant=False, **kwargs)
    run._seedance_recompute = True  # type: ignore[attr-defined]
    return run


def apply_recompute_plan(model: torch.nn.Module, plan: Mapping[str, Any], *,
                         layers: Optional[Sequence[torch.nn.Module]] = None) -> list[str]:
    """Wraps the dropped parts of each layer so that their activations are recomputed.

    Args:
        model: the model (its layers are found by name unless ``layers`` is given).
        plan: a mapping with ``dropped_per_layer``: one list of part names per layer, as
            ``seedancectl optimize`` reports it (``recompute_plan``) and
            :func:`seedance.plan_recompute` returns it.
        layers: the transformer layers, in order, when they are not found by name.

    Returns:
        The names of the wrapped submodules, relative to ``model``.

    Raises:
        ValueError: the plan has more layers than the model, or names an unknown part, or a
            part the layer does not have.
    """
    dropped = list(plan["dropped_per_layer"])
    blocks = list(layers) if layers is not None else list(_layers_of(model))
    if len(dropped) > len(blocks):
        raise ValueError(f"the plan has {len(dropped)} layers, the model {len(blocks)}")
    names = {id(m): n for n, m in model.named_modules()}
    wrapped = []
    for i, parts in enumerate(dropped):
        for part in parts:
            if part not in _PARTS:
                raise ValueError(f"dropped_per_layer[{i}]: unknown part {part!r} "
                                 f"(expected one of {', '.join(_PARTS)})")
            found = [getattr(blocks[i], a) for a in _PARTS[part] if hasattr(blocks[i], a)]
            if not found:
                raise ValueError(f"dropped_per_layer[{i}]: layer {i} has no {part} module")
            for module in found:
                if getattr(module.forward, "_seedance_recompute", False):
                    continue
                module.forward = _checkpointed(module.forward)
                wrapped.append(names.get(id(module), f"layers[{i}].{part}"))
    return wrapped


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
