"""Gradient compression with error feedback as a DDP communication hook
(feature COMM-1 to COMM-4).

    state, hook = seedance.torch.comm_hook(compressor="topk", ratio=0.01, warmup_steps=100)
    ddp_model.register_comm_hook(state, hook)
    ...
    state.stats()  # bytes_uncompressed, bytes_sent, steps, ...

Protocol, per DDP bucket and step (after warm-up):

1. The bucket's flat gradient is split into shards of ``shard_elements``
   (2^18) values. Error feedback is kept per parameter (DDP rebuilds its
   buckets after the first iteration, so bucket indices are not stable): the
   parameters' residuals are laid out like the bucket.
2. For each shard: residual += gradient; payload = compress(residual);
   residual -= decompress(payload) (libseedance, one call). The payload sizes
   are exchanged (an all-gather of one int64), then the payloads, padded to
   the largest, with an asynchronous all-gather (gloo has no sparse
   collectives). Compressing shard i+1 overlaps the all-gather of shard i.
3. When every shard's all-gather is done, each rank decodes all payloads
   (validated: a corrupt payload is an error, never a stray write), sums them
   and divides by the world size, and the bucket holds the result.

During warm-up (the first ``warmup_steps`` steps) the hook is a plain
all-reduce average. Works with gloo (CPU tensors) and NCCL (CUDA tensors: the
shard is compressed on the host and the payload all-gathered on the device).
"""

from typing import Any, Callable, Optional

import numpy as np
import torch
import torch.distributed as dist

from seedance import _core

__all__ = ["CommState", "comm_hook"]


class CommState:
    """The hook's state: compressor, per-parameter residuals and counters."""

    def __init__(self, compressor: str, ratio: float, warmup_steps: int, shard_elements: int,
                 process_group: Any, fp16_values: bool, chunk: int, stochastic: bool,
                 sample_ratio: float, seed: int, keep_payloads: bool) -> None:
        if shard_elements < 1:
            raise ValueError("shard_elements must be >= 1")
        self.compressor_name = compressor
        self.compressor = _core.Compressor(compressor, ratio, sample_ratio, chunk, stochastic,
                                           fp16_values)
        self.warmup_steps = warmup_steps
        self.shard_elements = shard_elements
        self.process_group = process_group
        self.seed = seed
        self.residuals: dict[int, torch.Tensor] = {}  # id(parameter) -> float32 CPU residual
        self.steps = 0
        self.bytes_uncompressed = 0
        self.bytes_sent = 0        # this rank's payloads as sent (padding included)
        self.payload_bytes = 0     # the payloads alone
        self.size_bytes = 0        # the size exchanges
        self.warmup_bytes = 0      # plain all-reduce during warm-up
        self.keep_payloads = keep_payloads
        self.last_payloads: dict[int, list[list[bytes]]] = {}  # bucket index -> shard -> rank
        self.last_layout: dict[int, list[int]] = {}  # bucket index -> id() of its parameters

    def world(self) -> int:
        return dist.get_world_size(self.process_group)

    def stats(self) -> dict[str, Any]:
        compressed = self.bytes_uncompressed - self.warmup_bytes
        return {"steps": self.steps, "compressor": self.compressor_name,
                "bytes_uncompressed": self.bytes_uncompressed, "bytes_sent": self.bytes_sent,
                "payload_bytes": self.payload_bytes, "size_exchange_bytes": self.size_bytes,
                "warmup_bytes": self.warmup_bytes,
                "sent_share_after_warmup": ((self.bytes_sent - self.warmup_bytes) / compressed
                                            if compressed else None)}


def _seed(state: CommState, bucket_index: int, shard: int) -> int:
    # Different per step, bucket, shard and rank; reproducible for a given seed.
    rank = dist.get_rank(state.process_group)
    return hash((state.seed, state.steps, bucket_index, shard, rank)) & (2**63 - 1)


def _residual_for(state: CommState, params: list[torch.Tensor], n: int) -> torch.Tensor:
    """The bucket-shaped residual, assembled from the per-parameter residuals."""
    parts = []
    for p in params:
        r = state.residuals.get(id(p))
        if r is None or r.numel() != p.numel():
            r = torch.zeros(p.numel(), dtype=torch.float32)
            state.residuals[id(p)] = r
        parts.append(r)
    flat = torch.cat(parts) if parts else torch.zeros(0)
    if flat.numel() != n:
        raise RuntimeError(f"bucket of {n} values but its parameters hold {flat.numel()}")
    return flat


def _store_residual(state: CommState, params: list[torch.Tensor], flat: torch.Tensor) -> None:
    offset = 0
    for p in params:
        k = p.numel()
        state.residuals[id(p)].copy_(flat[offset:offset + k])
        offset += k


def _allreduce_hook(state: CommState, bucket: Any) -> torch.futures.Future:
    buf = bucket.buffer()
    world = state.world()
    state.warmup_bytes += buf.numel() * buf.element_size()
    state.bytes_sent += buf.numel() * buf.element_size()
    state.bytes_uncompressed += buf.numel() * buf.element_size()
    work = dist.all_reduce(buf, group=state.process_group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0].div_(world))


def _compressed_hook(state: CommState, bucket: Any) -> torch.futures.Future:
    buf = bucket.buffer()
    device = buf.device
    world = state.world()
    grad = buf.detach().to("cpu", torch.float32).contiguous()
    n = grad.numel()
    residual = _residual_for(state, list(bucket.parameters()), n)
    works, gathered, sizes_all = [], [], []
    for shard, start in enumerate(range(0, n, state.shard_elements)):
        end = min(n, start + state.shard_elements)
        g = grad[start:end]
        r = residual[start:end]
        payload = state.compressor.compress_with_feedback(g.data_ptr(), r.data_ptr(), end - start,
                                                          _seed(state, bucket.index(), shard))
        mine = torch.tensor([len(payload)], dtype=torch.int64, device=device)
        sizes = [torch.zeros(1, dtype=torch.int64, device=device) for _ in range(world)]
        dist.all_gather(sizes, mine, group=state.process_group)
        sizes = [int(s.item()) for s in sizes]
        width = max(sizes)
        send = torch.zeros(width, dtype=torch.uint8)
        send[:len(payload)] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
        send = send.to(device)
        recv = [torch.empty(width, dtype=torch.uint8, device=device) for _ in range(world)]
        works.append(dist.all_gather(recv, send, group=state.process_group, async_op=True))
        gathered.append(recv)
        sizes_all.append(sizes)
        state.payload_bytes += len(payload)
        state.bytes_sent += width
        state.size_bytes += 8
    _store_residual(state, list(bucket.parameters()), residual)
    state.bytes_uncompressed += n * 4
    bucket_index = bucket.index()
    layout = [id(p) for p in bucket.parameters()]

    def decode(_: Any) -> torch.Tensor:
        out = np.zeros(n, dtype=np.float32)
        kept: list[list[bytes]] = []
        for shard, (start, recv, sizes) in enumerate(
                zip(range(0, n, state.shard_elements), gathered, sizes_all)):
            end = min(n, start + state.shard_elements)
            view = out[start:end]
            ranks = []
            for rank in range(world):
                data = recv[rank][:sizes[rank]].cpu().numpy()
                _core.comm_decode_add(data.ctypes.data, data.size, view.ctypes.data, end - start,
                                      1.0 / world)
                if state.keep_payloads:
                    ranks.append(data.tobytes())
            kept.append(ranks)
        if state.keep_payloads:
            state.last_payloads[bucket_index] = kept
            state.last_layout[bucket_index] = layout
        buf.copy_(torch.from_numpy(out).to(device=device, dtype=buf.dtype))
        return buf

    futures = [w.get_future() for w in works]
    if not futures:
        done: torch.futures.Future = torch.futures.Future()
        done.set_result(buf)
        return done
    return torch.futures.collect_all(futures).then(decode)


def comm_hook(compressor: str = "topk", ratio: float = 0.01, warmup_steps: int = 0, *,
              shard_elements: int = 2**18, process_group: Any = None, fp16_values: bool = True,
              chunk: int = 256, stochastic: bool = False, sample_ratio: float = 0.01,
              seed: int = 0, keep_payloads: bool = False
              ) -> tuple[CommState, Callable[[CommState, Any], torch.futures.Future]]:
    """(state, hook) for ``DistributedDataParallel.register_comm_hook``.

    Args:
        compressor: "topk", "topk-sampled", "randomk", "int8", "int4", "sign" or "fp16-int4".
        ratio: share of values kept by the sparse compressors (and fp16-int4's residual).
        warmup_steps: steps of plain all-reduce before compression starts.
        shard_elements: values per shard; compression of one overlaps the exchange of the last.
        fp16_values: sparse values travel as FP16 (error feedback absorbs the rounding).
        chunk, stochastic: the quantizers' values per scale and rounding.
        sample_ratio: topk-sampled's sample size.
        keep_payloads: keep the last step's gathered payloads in state.last_payloads (tests).
    """
    state = CommState(compressor, ratio, warmup_steps, shard_elements, process_group, fp16_values,
                      chunk, stochastic, sample_ratio, seed, keep_payloads)

    # DDP checks these annotations (they must be real objects, not strings).
    def hook(s: CommState, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
        fut = _allreduce_hook(s, bucket) if s.steps < s.warmup_steps else _compressed_hook(s, bucket)
        if bucket.is_last():
            s.steps += 1
        return fut

    return state, hook


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
