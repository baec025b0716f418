"""Attention straight from Seedance's packed KV cache, as Transformers' ``"seedance"`` attention
implementation (features KV-1, KV-3).

    seedance.hf.use_packed_attention(model)        # registers it and sets it on the model
    model.generate(**inputs, cache=seedance.hf.KVCache(bits="4"))

Registered through ``AttentionInterface`` (with sdpa's mask builder through
``AttentionMaskInterface``). When the keys it is given came from a :class:`KVCache` layer that
already holds earlier tokens, the scores come from the packed keys and the output from the packed
values in C++ (``seedance::kv::AttendQueries``), per sequence, without dequantizing the history;
the layer then hands back only new tokens from then on. Everything else (the prompt's first
forward, any other cache, no cache) goes to Transformers' sdpa attention unchanged, so setting the
implementation never changes what a model without a :class:`KVCache` computes.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from seedance.errors import SeedanceError
from seedance.hf.kv_cache import check_layout, handoff

__all__ = ["NAME", "packed_attention", "use_packed_attention"]

NAME = "seedance"


def packed_attention(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor,
                     value: torch.Tensor, attention_mask: Optional[torch.Tensor],
                     dropout: float = 0.0, scaling: Optional[float] = None,
                     **kwargs: Any) -> tuple[torch.Tensor, None]:
    """The ``"seedance"`` attention: (batch, q_len, heads, head_size) out, no weights."""
    source = handoff(key)
    if source is None:  # not from a KVCache
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout,
                                      scaling=scaling, **kwargs)
    layer, past = source
    if getattr(module, "sliding_window", None):
        raise SeedanceError("seedance.hf.KVCache supports full-attention layers only; layer "
                            f"{getattr(module, 'layer_idx', '?')} has a sliding window",
                            "attn_implementation")
    if kwargs.get("softcap") is not None:
        raise SeedanceError("the packed attention has no logit soft-capping", "softcap")
    if dropout and module.training:
        raise SeedanceError("the packed attention is for inference (dropout > 0 in training)",
                            "dropout")
    layer.packed = True
    if past == 0:  # the first forward attends to its own FP32 keys, as DynamicCache does
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout,
                                      scaling=scaling, **kwargs)
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    return layer.attend(query, attention_mask, scale), None


def register() -> None:
    """Registers ``"seedance"`` with Transformers (idempotent)."""
    AttentionInterface.register(NAME, packed_attention)
    AttentionMaskInterface.register(NAME, sdpa_mask)


def use_packed_attention(model: Any) -> Any:
    """Registers the ``"seedance"`` attention and sets it on ``model`` (a Transformers model of
    full-attention layers; SeedanceError otherwise). Returns the model."""
    check_layout(model.config)
    register()
    model.set_attn_implementation(NAME)
    return model


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
