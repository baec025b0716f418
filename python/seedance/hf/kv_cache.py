"""Seedance's quantized KV cache as a Transformers ``Cache`` (features KV-1, KV-3).

    cache = seedance.hf.KVCache(bits="4")
    out = model.generate(**inputs, cache=cache, max_new_tokens=64)

Each layer keeps, per sequence of the batch, the C++ cache of ``seedance.kv``
(``_core.KvLayerCache``): keys packed per channel and values per token in groups of ``group``,
the most recent ``window`` tokens in FP32, ``bits`` one of 8, 6, 5, 4, 2, fp8, adaptive (or 32:
the FP32 cache, a reference). What attention reads depends on the model's attention:

- with ``seedance.hf.use_packed_attention(model)`` (the ``"seedance"`` implementation of
  Transformers' ``AttentionInterface``), attention scores the queries straight from the packed
  keys and sums the packed values in C++, so ``update`` hands back only the new tokens and
  nothing is dequantized;
- with any other attention (sdpa, eager), ``update`` returns the whole history decoded from the
  packed codes, as Transformers' own ``QuantizedCache`` does, so the cache works everywhere.

Either way the first forward (the prompt, when the cache is empty) attends to its own FP32 keys
and values, as ``DynamicCache`` and ``QuantizedCache`` do; only what is read back from the cache
is quantized. The cache holds its data in host memory; tensors on another device are copied.
Beam search and cropping (assisted decoding) are not supported and say so.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Optional, Union

import torch
from transformers.cache_utils import Cache, CacheLayerMixin

from seedance import _core
from seedance.errors import SeedanceError

__all__ = ["KVCache", "KVCacheLayer", "handoff"]

# Tensors that `update` handed to attention, by id, and the layer and past length they came from:
# the packed attention finds its cache through the key tensor it is given.
_HANDOFF: dict[int, tuple["weakref.ref[KVCacheLayer]", int]] = {}


def handoff(key: torch.Tensor) -> Optional[tuple["KVCacheLayer", int]]:
    """The layer that returned ``key`` from its last ``update`` and the tokens it held before
    that update, or None when ``key`` did not come from a :class:`KVCacheLayer`."""
    entry = _HANDOFF.pop(id(key), None)
    if entry is None:
        return None
    layer = entry[0]()
    if layer is None or layer._handed is None or layer._handed() is not key:
        return None
    return layer, entry[1]


class KVCacheLayer(CacheLayerMixin):
    """One attention layer: a ``_core.KvLayerCache`` per sequence of the batch."""

    is_compileable = False
    is_croppable = False
    is_sliding = False

    def __init__(self, bits: str = "8", group: int = 32, window: int = 128) -> None:
        super().__init__()
        self.bits, self.group, self.window = str(bits), group, window
        self.packed = False  # set by the packed attention on its first call
        self.length = 0
        self._rows: list[Any] = []
        # The key tensor the last update returned, held weakly (a strong reference would keep a
        # decoded FP32 copy of the history alive between steps), and its _HANDOFF key.
        self._handed: Optional["weakref.ref[torch.Tensor]"] = None
        self._handed_id: Optional[int] = None

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        batch, kv_heads, _, head_size = key_states.shape
        self.device, self.dtype = key_states.device, key_states.dtype
        self.batch_size = batch
        self._rows = [_core.KvLayerCache(kv_heads, head_size, self.bits, self.group, self.window)
                      for _ in range(batch)]
        self.is_initialized = True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any,
               **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        if key_states.shape[0] != len(self._rows):
            raise SeedanceError(f"the cache holds {len(self._rows)} sequences, this step has "
                                f"{key_states.shape[0]}; beam search and batch changes are not "
                                "supported", "key_states")
        keys = key_states.detach().to("cpu", torch.float32).contiguous().numpy()
        values = value_states.detach().to("cpu", torch.float32).contiguous().numpy()
        for row, k, v in zip(self._rows, keys, values):
            row.append(k, v)
        past = self.length
        self.length += key_states.shape[-2]
        if self.packed or past == 0:
            out = key_states, value_states
        else:
            out = self.read_back()
        # One entry per layer: the previous update's goes, whether or not attention took it.
        old = _HANDOFF.get(self._handed_id) if self._handed_id is not None else None
        if old is not None and old[0]() is self:
            del _HANDOFF[self._handed_id]
        self._handed, self._handed_id = weakref.ref(out[0]), id(out[0])
        _HANDOFF[id(out[0])] = (weakref.ref(self), past)
        return out

    def read_back(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Every cached token's keys and values as attention reads them, decoded from the packed
        codes: (batch, kv_heads, length, head_size) each, in the model's dtype and device."""
        pairs = [row.read_back() for row in self._rows]
        keys = torch.stack([torch.from_numpy(k) for k, _ in pairs])
        values = torch.stack([torch.from_numpy(v) for _, v in pairs])
        return (keys.to(self.device, self.dtype), values.to(self.device, self.dtype))

    def attend(self, query: torch.Tensor, attention_mask: Optional[torch.Tensor],
               scaling: float) -> torch.Tensor:
        """Attention of (batch, heads, q_len, head_size) queries over the packed cache, through
        ``seedance::kv::AttendQueries``; (batch, q_len, heads, head_size) out. The mask is
        Transformers' 4-D one (boolean: True attends; or additive), or None for causal."""
        queries = query.detach().to("cpu", torch.float32).contiguous().numpy()
        bias = None
        if attention_mask is not None:
            mask = attention_mask.detach().to("cpu")
            if mask.shape[-1] != self.length:
                raise SeedanceError(f"the mask covers {mask.shape[-1]} keys, the cache holds "
                                    f"{self.length}", "attention_mask")
            if mask.dtype == torch.bool:
                bias = torch.zeros(mask.shape, dtype=torch.float32).masked_fill_(~mask,
                                                                                 float("-inf"))
            else:
                bias = mask.to(torch.float32)
            bias = bias.expand(queries.shape[0], 1, queries.shape[2], self.length)
        out = []
        for b, (row, q) in enumerate(zip(self._rows, queries)):
            terms = None if bias is None else bias[b, 0].contiguous().numpy()
            out.append(torch.from_numpy(row.attend(q, float(scaling), terms)))
        return torch.stack(out).to(query.device, query.dtype)

    @property
    def nbytes(self) -> int:
        """Bytes the layer's caches hold (codes, group parameters, FP32 window)."""
        return sum(row.bytes for row in self._rows)

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.length + query_length, 0

    def get_seq_length(self) -> int:
        return self.length

    def get_max_length(self) -> int:
        return -1

    def reset(self) -> None:
        self._rows, self.length, self.is_initialized = [], 0, False
        self._handed, self._handed_id = None, None

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        raise SeedanceError("beam search is not supported by seedance.hf.KVCache; use "
                            "num_beams=1", "num_beams")

    def crop(self, tokens_to_remove: int) -> None:
        raise SeedanceError("seedance.hf.KVCache cannot drop tokens (assisted decoding needs "
                            "it)", "tokens_to_remove")

    def batch_repeat_interleave(self, repeats: int) -> None:
        raise SeedanceError("seedance.hf.KVCache keeps its batch", "repeats")

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        raise SeedanceError("seedance.hf.KVCache keeps its batch", "indices")


def check_layout(config: Any) -> None:
    """SeedanceError unless every layer of ``config`` (a Transformers config) is full attention:
    the cache keeps every token, so a sliding-window or linear-attention layer would attend to
    what it must not."""
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    kinds = getattr(text, "layer_types", None)
    if kinds:
        other = sorted(set(kinds) - {"full_attention"})
    else:  # configs without layer types: a sliding window applies to every layer
        other = ["sliding_attention"] if getattr(text, "sliding_window", None) else []
    if other:
        raise SeedanceError("seedance.hf.KVCache supports full-attention layers only; this model "
                            f"has {', '.join(other)} layers", "config")


class KVCache(Cache):
    """Seedance's quantized KV cache for ``generate(..., cache=...)`` and ``model(...)``.

    ``bits``: 8, 6, 5, 4, 2, fp8, adaptive, or 32 (the FP32 cache); ``group``: tokens a key
    channel's parameters cover and channels a value group covers; ``window``: recent tokens kept
    in FP32. ``config`` (optional, the model's config): checked now, and the layers made up
    front; without it they are made as the model reaches them.
    """

    def __init__(self, bits: Union[str, int] = "8", *, group: int = 32, window: int = 128,
                 config: Any = None) -> None:
        _core.KvLayerCache(1, 1, str(bits), group, window)  # the library checks the settings
        make = functools.partial(KVCacheLayer, str(bits), group, window)
        if config is not None:
            check_layout(config)
            text = config.get_text_config(decoder=True)
            super().__init__(layers=[make() for _ in range(text.num_hidden_layers)])
        else:
            super().__init__(layer_class_to_replicate=make)
        self.bits, self.group, self.window = str(bits), group, window

    @property
    def nbytes(self) -> int:
        """Bytes every layer's caches hold."""
        return sum(layer.nbytes for layer in self.layers)


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
