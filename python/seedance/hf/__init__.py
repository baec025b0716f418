"""Seedance for Hugging Face Transformers.

- :class:`SeedanceCallback`: the training-loop controllers in a ``transformers.Trainer``
  (features CTRL-*; :mod:`seedance.hf.callback`).
- :func:`retry_out_of_memory`: a micro-batch that runs out of memory runs again in smaller
  chunks, with the same samples and gradient (CTRL-1; :mod:`seedance.hf.split`).
- :class:`KVCache`: Seedance's quantized KV cache for ``generate(..., cache=...)`` and
  ``model(...)``, and :func:`use_packed_attention`, the attention implementation that reads it
  without dequantizing (features KV-1, KV-3; :mod:`seedance.hf.kv_cache`,
  :mod:`seedance.hf.attention`).
"""

from seedance.hf.attention import use_packed_attention
from seedance.hf.callback import SeedanceCallback
from seedance.hf.kv_cache import KVCache
from seedance.hf.split import MicroBatchSplitter, retry_out_of_memory

__all__ = ["KVCache", "MicroBatchSplitter", "SeedanceCallback", "retry_out_of_memory",
           "use_packed_attention"]


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
