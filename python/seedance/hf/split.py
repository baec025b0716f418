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
trouble); dropout draws differ, as in any split, and so would batch-norm statistics. Assumed, as
the Trainer assumes: a model that takes loss keyword arguments normalises by
``num_items_in_batch`` (a model whose ``**kwargs`` ignores it would get each chunk's mean, and a
larger gradient once split). A chunk whose labels are all masked adds no gradient and is skipped
(its mean loss is 0/0). Refused with a ValueError: more than one process or device (DDP, FSDP,
DeepSpeed, DataParallel: each chunk would synchronise on its own, and ranks choosing different
chunks would hang) and the optimizers that update weights inside the backward pass (LOMO,
layer-wise), which a replay cannot undo. When a :class:`~seedance.hf.SeedanceCallback` is
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


def _unsupported(trainer: Any) -> Optional[str]:
    """Why the wrapper cannot keep this Trainer's gradient, or None. Under DDP, FSDP or DeepSpeed
    every chunk of a synchronising micro-batch would run its own collective (ranks choosing chunk
    sizes apart would hang) and DeepSpeed steps its optimizer on each backward; DataParallel
    averages per-replica means; LOMO and layer-wise optimizers update the weights inside backward,
    which a replay cannot undo."""
    args = trainer.args
    kind = getattr(getattr(trainer, "accelerator", None), "distributed_type", None)
    if kind is not None and str(getattr(kind, "value", kind)) not in ("NO", "DistributedType.NO"):
        return f"the Trainer runs distributed ({getattr(kind, 'value', kind)})"
    if getattr(args, "world_size", 1) > 1:
        return f"world_size is {args.world_size}"
    if getattr(args, "n_gpu", 0) > 1:
        return f"n_gpu is {args.n_gpu} (DataParallel)"
    optim = str(getattr(getattr(args, "optim", ""), "value", getattr(args, "optim", "")))
    if "lomo" in optim or "layerwise" in optim:
        return f"the optimizer {optim} updates the weights inside the backward pass"
    return None


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
        refused = _unsupported(trainer)
        if refused:
            raise ValueError(f"retry_out_of_memory supports one process on one device: {refused}")
        self.trainer = trainer
        self.min_chunk = min_chunk
        self.chunk: Optional[int] = None
        self.retries = 0
        self.replayed = 0  # micro-batches run again after a failure inside a backward pass
        self._original = trainer.training_step
        self._step: Any = None
        self._done: list[tuple[dict, Any]] = []  # this optimizer step's earlier micro-batches
        self._added = 0  # gradient additions since the current attempt began
        self._hooks: list[Any] = []
        self._hooked: set[int] = set()
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
        self._hooks, self._hooked, self._done = [], set(), []
        self.trainer.training_step = self._original
        if self._callback is not None:
            self._callback._splitter = None

    def _watch(self, model: torch.nn.Module) -> None:
        """Counts gradient additions on every trainable parameter, including ones unfrozen or
        created (``model_init``) after the first call."""
        def added(_: torch.Tensor) -> None:
            self._added += 1

        for p in model.parameters():
            if p.requires_grad and id(p) not in self._hooked:
                self._hooked.add(id(p))
                self._hooks.append(p.register_post_accumulate_grad_hook(added))

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
        whole = 0 if scaled else self._items(inputs)  # only the unscaled path weighs chunks
        ga = t.current_gradient_accumulation_steps
        total = None
        try:
            for start in range(0, rows, size):
                part = _chunk(inputs, start, min(start + size, rows), rows)
                if not scaled:
                    items = self._items(part)
                    if items == 0 and whole > 0:
                        continue  # every label masked: no gradient (its mean loss is 0/0)
                    t.current_gradient_accumulation_steps = ga * whole / max(items, 1)
                loss = self._original(model, part, num_items)
                total = loss if total is None else total + loss
        finally:
            t.current_gradient_accumulation_steps = ga
        return total

    def __call__(self, model: torch.nn.Module, inputs: dict,
                 num_items_in_batch: Any = None) -> torch.Tensor:
        t = self.trainer
        step = (id(t.state), t.state.global_step)  # a new train() makes a new state
        if step != self._step:
            self._step = step
            self._done = []
        self._watch(model)
        while True:
            self._added = 0
            try:
                loss = self._run(model, inputs, num_items_in_batch)
                self._done.append((dict(inputs), num_items_in_batch))
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
        current = min(self.chunk or rows, rows)
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
        """Zeroes the step's gradients and runs its earlier micro-batches again (in chunks),
        from the start again after each out-of-memory error (their losses were counted the first
        time)."""
        while True:
            model.zero_grad(set_to_none=True)
            failed = None
            for inputs, num_items in self._done:
                self.replayed += 1
                try:
                    self._run(model, inputs, num_items)
                except Exception as error:  # noqa: BLE001 - only out-of-memory is retried
                    if not is_out_of_memory(error):
                        raise
                    failed = (error, _rows(inputs))
                    break
            if failed is None:
                return
            self._shrink(*failed)
            del failed  # the failed attempt's graph dies with its traceback
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            release_free_memory()


def retry_out_of_memory(trainer: Any, min_chunk: int = 1) -> MicroBatchSplitter:
    """Makes ``trainer`` run a micro-batch that runs out of memory again in smaller chunks, with
    the same samples and the same gradient (see the module's description). Returns the wrapper
    (``.close()`` removes it)."""
    return MicroBatchSplitter(trainer, min_chunk=min_chunk)


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
