"""Gradient accumulation that keeps the global batch exact (feature CTRL-2).

    acc = seedance.torch.GradientAccumulator(model, optimizer, steps=4,
                                             lr_scheduler=scheduler, grad_scaler=scaler)
    for batch in loader:                      # one global batch per optimizer step
        result = acc.step(batch, loss_fn)     # loss_fn(model, micro) -> (loss_sum, count)
    acc.steps = 8                             # from the next optimizer step on (1..8)

One optimizer step per :meth:`GradientAccumulator.step`: the global batch (a tensor, or a
tuple, list or dict of tensors sharing their first dimension) is cut into ``steps`` consecutive
micro-batches that cover every sample once, in order; each runs forward and backward with the
*sum* of its per-token losses, and the gradients are divided by the total count over the global
batch before the optimizer steps — so a variable-length batch gives the full batch's gradient
for every number of micro-steps (dividing each micro-batch by its own count, then averaging,
weights short sequences more: the mistake Hugging Face Transformers corrected in 4.46 with
``num_items_in_batch``). Under DistributedDataParallel only the last micro-step synchronises
(``no_sync`` for the others) and the count is summed over the ranks first, so the gradient is
that of the global batch of all ranks. The learning-rate scheduler and the loss scaler step once
per optimizer step. A change of ``steps`` takes effect at the next optimizer step, so no sample
is dropped or repeated.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Optional

import torch
import torch.distributed as dist

__all__ = ["GradientAccumulator"]

Batch = Any  # a Tensor, or a tuple / list / dict of Tensors with the same first dimension


def _first_dim(batch: Batch) -> int:
    if isinstance(batch, torch.Tensor):
        return batch.shape[0]
    values = list(batch.values()) if isinstance(batch, dict) else list(batch)
    sizes = {v.shape[0] for v in values if isinstance(v, torch.Tensor)}
    if len(sizes) != 1:
        raise ValueError(f"the batch's tensors must share their first dimension, got {sorted(sizes)}")
    return sizes.pop()


def _split(batch: Batch, parts: int) -> list[Batch]:
    """``parts`` consecutive slices along the first dimension, sizes differing by at most one."""
    n = _first_dim(batch)
    bounds = [n * i // parts for i in range(parts + 1)]

    def cut(value: Any, lo: int, hi: int) -> Any:
        return value[lo:hi] if isinstance(value, torch.Tensor) else value

    out = []
    for lo, hi in zip(bounds, bounds[1:]):
        if isinstance(batch, torch.Tensor):
            out.append(batch[lo:hi])
        elif isinstance(batch, dict):
            out.append({k: cut(v, lo, hi) for k, v in batch.items()})
        else:
            out.append(type(batch)(cut(v, lo, hi) for v in batch))
    return out


class GradientAccumulator:
    """One exact optimizer step per global batch, in ``steps`` micro-steps (1..``max_steps``)."""

    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, *,
                 steps: int = 1, max_steps: int = 8, lr_scheduler: Any = None,
                 grad_scaler: Any = None) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be >= 1")
        self.model = model
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.grad_scaler = grad_scaler
        self.max_steps = max_steps
        self._steps = self._check(steps)
        self._pending: Optional[int] = None
        self.optimizer_steps = 0

    def _check(self, steps: int) -> int:
        if not isinstance(steps, int) or not 1 <= steps <= self.max_steps:
            raise ValueError(f"steps must be an integer in 1..{self.max_steps}, got {steps!r}")
        return steps

    @property
    def steps(self) -> int:
        """Micro-steps per optimizer step; a new value applies from the next optimizer step."""
        return self._pending if self._pending is not None else self._steps

    @steps.setter
    def steps(self, value: int) -> None:
        self._pending = self._check(value)

    def _sync_context(self, last: bool) -> Any:
        if not last and hasattr(self.model, "no_sync"):
            return self.model.no_sync()
        return contextlib.nullcontext()

    def step(self, batch: Batch, loss_fn: Callable[[torch.nn.Module, Batch],
                                                  tuple[torch.Tensor, Any]]) -> dict[str, Any]:
        """Forward and backward over ``batch`` in micro-steps, then one optimizer step.

        ``loss_fn(model, micro_batch)`` returns ``(loss_sum, count)``: the summed per-item loss
        of the micro-batch (a scalar tensor) and how many items it sums (tokens, samples).
        Returns ``{"loss": total loss / total count, "count": total count, "micro_steps": k}``.
        """
        if self._pending is not None:
            self._steps, self._pending = self._pending, None
        k = self._steps
        n = _first_dim(batch)
        if k > n:
            raise ValueError(f"{k} micro-steps need at least {k} samples, the batch has {n}")
        micro = _split(batch, k)
        loss_total = 0.0
        count_total = 0.0
        for i, part in enumerate(micro):
            with self._sync_context(last=i == k - 1):
                loss_sum, count = loss_fn(self.model, part)
                scaled = self.grad_scaler.scale(loss_sum) if self.grad_scaler else loss_sum
                scaled.backward()
            loss_total += float(loss_sum.detach())
            count_total += float(count)
        # DDP averaged the gradients over the ranks: bring them to the global batch's mean.
        world = 1
        if dist.is_available() and dist.is_initialized() and hasattr(self.model, "no_sync"):
            world = dist.get_world_size()
            totals = torch.tensor([count_total, loss_total], dtype=torch.float64)
            dist.all_reduce(totals)
            count_total, loss_total = float(totals[0]), float(totals[1])
        if count_total <= 0:
            raise ValueError("loss_fn counted no items in the global batch")
        factor = world / count_total
        for group in self.optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(factor)
        if self.grad_scaler is not None:
            self.grad_scaler.step(self.optimizer)
            self.grad_scaler.update()
        else:
            self.optimizer.step()
        if self.lr_scheduler is not None:
            self.lr_scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.optimizer_steps += 1
        return {"loss": loss_total / count_total, "count": count_total, "micro_steps": k}


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
