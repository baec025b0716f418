"""Out-of-memory retry inside a ``transformers.Trainer``, with the global batch kept (CTRL-1).

    trainer = Trainer(model=model, args=args, train_dataset=ds,
                      callbacks=[seedance.hf.SeedanceCallback()])
    seedance.hf.retry_out_of_memory(trainer)
    trainer.train()

The Trainer runs each optimizer step as ``gradient_accumulation_steps`` micro-batches of
``per_device_train_batch_size`` rows, each through ``Trainer.training_step`` (the method the
Trainer documents for overriding). :func:`retry_out_of_memory` wraps that method on the instance:
when a micro-batch runs out of memory (CUDA's ``OutOfMemoryError``, or the CPU allocator's failure
under an address-space limit), it runs the micro-batch again as chunks of fewer rows, and keeps
that chunk size for the micro-batches after it. The Trainer's micro-batch, accumulation steps,
epoch length, schedule and optimizer steps do not change, and no sample is skipped:

- each chunk's loss is weighted by its share of the micro-batch, so the chunks' gradients add up
  to the micro-batch's. Where the loss is normalised by the step's item count
  (``num_items_in_batch``: models that take loss keyword arguments, the Llama family among them)
  each chunk is already a share of it; otherwise the Trainer divides by
  ``current_gradient_accumulation_steps``, and the wrapper divides each chunk by that times the
  micro-batch's items over the chunk's (items: the label tokens the loss counts, shifted as the
  Trainer's ``_loss_shifts_labels`` says, or rows without labels);
- a failure can come after the backward pass has added part of the micro-batch's gradient to some
  parameters (hooks count the additions). Then the step's gradients are zeroed and the step's
  earlier micro-batches are run again in chunks before this one (their losses are not counted
  twice), as Composer's automatic micro-batching restarts a batch.

The losses equal the unsplit run's to summation order (tested against a run without memory
trouble); dropout draws differ, as in any split. When a :class:`~seedance.hf.SeedanceCallback` is
in the Trainer's callbacks, the retry goes through its batch controller (the decision log gets a
``batch``/``out_of_memory`` entry with the new chunk size), and the controller's later decisions
for a micro-batch at or below the Trainer's are applied as the chunk size instead of being logged
as not applied.
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from seedance.torch.control import is_out_of_memory, release_free_memory

__all__ = ["MicroBatchSplitter", "retry_out_of_memory"]


def _rows(inputs: dict) -> int:
    for value in inputs.values():
        if isinstance(value, torch.Tensor) and value.dim() > 0:
            return int(value.shape[0])
    raise TypeError("the micro-batch has no tensor with a batch dimension to split")


def _chunk(inputs: dict, start: int, stop: int, rows: int) -> dict:
    return {k: v[start:stop] if isinstance(v, torch.Tensor) and v.dim() > 0 and
            v.shape[0] == rows else v for k, v in inputs.items()}


class MicroBatchSplitter:
    """The wrapper :func:`retry_out_of_memory` installs; ``chunk`` is the rows per chunk (None:
    whole micro-batches), ``retries`` the out-of-memory failures it absorbed."""

    def __init__(self, trainer: Any, min_chunk: int = 1) -> None:
        if not hasattr(trainer, "training_step"):
            raise TypeError(f"trainer: expected a transformers.Trainer, got "
                            f"{type(trainer).__name__}")
        if min_chunk < 1:
            raise ValueError(f"min_chunk: expected 1 or more, got {min_chunk}")
        self.trainer = trainer
        self.min_chunk = min_chunk
        self.chunk: Optional[int] = None
        self.retries = 0
        self.replayed = 0  # micro-batches run again after a failure inside a backward pass
        self._original = trainer.training_step
        self._step = -1
        self._done: list[tuple[Any, dict, Any]] = []  # this optimizer step's earlier micro-batches
        self._added = 0  # gradient additions since the current attempt began
        self._hooks: list[Any] = []
        self._callback = None
        for cb in trainer.callback_handler.callbacks:
            if type(cb).__name__ == "SeedanceCallback":
                self._callback = cb
                cb._splitter = self
        trainer.training_step = self

    def close(self) -> None:
        """Restores the Trainer's own ``training_step``."""
        for h in self._hooks:
            h.remove()
        self._hooks = []
        self.trainer.training_step = self._original
        if self._callback is not None:
            self._callback._splitter = None

    def _watch(self, model: torch.nn.Module) -> None:
        if self._hooks:
            return

        def added(_: torch.Tensor) -> None:
            self._added += 1

        self._hooks = [p.register_post_accumulate_grad_hook(added)
                       for p in model.parameters() if p.requires_grad]

    def _items(self, inputs: dict) -> int:
        labels = inputs.get("shift_labels")
        if labels is None and isinstance(inputs.get("labels"), torch.Tensor):
            labels = inputs["labels"]
            if getattr(self.trainer, "_loss_shifts_labels", False):
                labels = labels[..., 1:]
        return int(labels.ne(-100).sum()) if labels is not None else _rows(inputs)

    def _run(self, model: torch.nn.Module, inputs: dict, num_items: Any) -> torch.Tensor:
        rows = _rows(inputs)
        size = self.chunk or rows
        if size >= rows:
            return self._original(model, inputs, num_items)
        t = self.trainer
        scaled = getattr(t, "loss_is_scaled_for_ga", None)
        if scaled is None:
            scaled = (getattr(t, "model_accepts_loss_kwargs", False) and num_items is not None) \
                or getattr(t, "compute_loss_func", None) is not None
        whole = self._items(inputs)
        ga = t.current_gradient_accumulation_steps
        total = None
        try:
            for start in range(0, rows, size):
                part = _chunk(inputs, start, min(start + size, rows), rows)
                if not scaled:
                    t.current_gradient_accumulation_steps = ga * whole / max(self._items(part), 1)
                loss = self._original(model, part, num_items)
                total = loss if total is None else total + loss
        finally:
            t.current_gradient_accumulation_steps = ga
        return total

    def __call__(self, model: torch.nn.Module, inputs: dict,
                 num_items_in_batch: Any = None) -> torch.Tensor:
        t = self.trainer
        if t.state.global_step != self._step:
            self._step = t.state.global_step
            self._done = []
        self._watch(model)
        while True:
            self._added = 0
            try:
                loss = self._run(model, inputs, num_items_in_batch)
                self._done.append((model, inputs, num_items_in_batch))
                return loss
            except Exception as error:  # noqa: BLE001 - only out-of-memory is retried
                if not is_out_of_memory(error):
                    raise
                self._shrink(error, _rows(inputs))
                partial = self._added > 0
            # The failed attempt's tensors died with the exception: hand their memory back.
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            release_free_memory()
            if partial:
                self._replay(model)

    def _shrink(self, error: BaseException, rows: int) -> None:
        current = self.chunk or rows
        if current <= self.min_chunk:
            raise error
        self.retries += 1
        controllers = getattr(self._callback, "controllers", None)
        if controllers is not None and controllers.scaler is not None:
            proposed = controllers.out_of_memory(error)
        else:
            proposed = current // 2
        self.chunk = max(self.min_chunk, min(proposed, current - 1))

    def _replay(self, model: torch.nn.Module) -> None:
        """Zeroes the step's gradients and runs its earlier micro-batches again (in chunks)."""
        model.zero_grad(set_to_none=True)
        for _, inputs, num_items in self._done:
            self.replayed += 1
            while True:
                try:
                    self._run(model, inputs, num_items)  # its loss was counted the first time
                    break
                except Exception as error:  # noqa: BLE001
                    if not is_out_of_memory(error):
                        raise
                    self._shrink(error, _rows(inputs))
                    release_free_memory()
                    return self._replay(model)


def retry_out_of_memory(trainer: Any, min_chunk: int = 1) -> MicroBatchSplitter:
    """Makes ``trainer`` run a micro-batch that runs out of memory again in smaller chunks, with
    the same samples and the same gradient (see the module's description). Returns the wrapper
    (``.close()`` removes it)."""
    return MicroBatchSplitter(trainer, min_chunk=min_chunk)
