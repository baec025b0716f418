"""The tiered sample cache in a PyTorch input pipeline (feature CTRL-7).

    cache = seedance.torch.tiered_cache(record_bytes=64 << 10, host_records=50_000,
                                        disk=[("ssd", "/local/cache", 400_000)])
    loader = DataLoader(seedance.torch.CachedDataset(dataset, cache), num_workers=8, ...)

``dataset[i]`` is read through the cache: host memory (one shared mapping, so every DataLoader
worker sees the samples the others loaded), then each disk tier, then the dataset itself, whose
result is stored for next time. Each tier keeps what Seedance's policy chooses — W-TinyLFU that
stops evicting when it sees epoch-shuffled scans, where never-evict is the best an online cache
can do. Per-tier hit counts and get-latency histograms are ``cache.stats()`` and the Prometheus
families ``seedance_cache_*`` (``cache.render_prometheus()``, or ``enable(..., cache=cache,
metrics_listen=...)``, which serves them beside the controllers' decisions).

Samples are stored pickled (``encode``/``decode`` to change that); a sample whose encoding exceeds
``record_bytes`` is an error that names both sizes.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from typing import Any, Callable, Optional, Sequence

import torch

from seedance import _core

__all__ = ["CachedDataset", "tiered_cache"]


def tiered_cache(record_bytes: int, host_records: int,
                 disk: Sequence[tuple[str, str, int]] = (), path: Optional[str] = None,
                 detect_scans: bool = True) -> _core.TieredCache:
    """A new cache: ``host_records`` records of ``record_bytes`` in shared memory, then each
    ``(name, directory, records)`` of ``disk``, fastest first. The shared state goes to ``path``
    (default: a new name in ``/dev/shm``, else the temporary directory); call ``remove()`` when
    done to delete it and the tier files."""
    if path is None:
        base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
        fd, path = tempfile.mkstemp(prefix="seedance-cache-", dir=base)
        os.close(fd)
        os.unlink(path)  # Create links the finished state in under this name
    tiers = [("host", "", int(host_records))] + [(n, d, int(r)) for n, d, r in disk]
    return _core.TieredCache.create(path, int(record_bytes), tiers, detect_scans)


def _encode(sample: Any) -> bytes:  # module level: spawned workers unpickle the dataset
    return pickle.dumps(sample, protocol=5)


class CachedDataset(torch.utils.data.Dataset):
    """A map-style dataset read through a :func:`tiered_cache`; indices are the cache keys."""

    def __init__(self, dataset: Any, cache: _core.TieredCache,
                 encode: Callable[[Any], bytes] = _encode,
                 decode: Callable[[bytes], Any] = pickle.loads) -> None:
        self.dataset = dataset
        self.cache = cache
        self.encode = encode
        self.decode = decode

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> Any:
        key = int(index)
        if key < 0:
            key += len(self.dataset)
        data = self.cache.get(key)
        if data is not None:
            return self.decode(data)
        sample = self.dataset[key]
        encoded = self.encode(sample)
        if len(encoded) > self.cache.record_bytes:
            raise ValueError(f"sample {key} encodes to {len(encoded)} bytes; the cache's records "
                             f"hold {self.cache.record_bytes} (tiered_cache(record_bytes=...))")
        self.cache.put(key, encoded)
        return sample


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
