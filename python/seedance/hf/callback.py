"""Seedance's training-loop controllers for Hugging Face ``transformers.Trainer`` (features CTRL-*).

    trainer = Trainer(model=model, args=args, train_dataset=ds,
                      callbacks=[seedance.hf.SeedanceCallback(log="decisions.jsonl")])

The same controllers as :func:`seedance.torch.enable` (same settings, see
:class:`seedance.torch.control.ControlSettings`), driven through the Trainer's own events:

- ``on_pre_optimizer_step`` (gradients clipped, not yet applied): per-block gradient and weight
  norms, the freezing decision; frozen blocks get ``requires_grad=False``.
- ``on_step_end``: the batch decision from the step's memory share and samples/s, and the
  checkpoint decision.

At its defaults the callback keeps the run's math: the same global batches, the same number of
optimizer steps, the same losses as without it (freezing is an opt-in, ``freeze=True``).

**Batch.** The Trainer fixes ``per_device_train_batch_size`` and ``gradient_accumulation_steps``
when ``train()`` starts: its epoch length, its learning-rate schedule and the micro-step counter
that decides when the optimizer steps (``(step + 1) % gradient_accumulation_steps``) all use
them, so a micro-batch or accumulation changed mid-run would step the optimizer after a partial
global batch. The callback therefore does not change them: its batch decisions (the micro-batch
the memory readings call for, never above the configured one) are logged as not applied, with
that reason, unless :func:`seedance.hf.retry_out_of_memory` wraps the Trainer's
``training_step``: then a size at or below the Trainer's micro-batch is applied as the chunk each
micro-batch runs in (:mod:`seedance.hf.split`), and an out-of-memory error is retried in smaller
chunks, both with the global batch kept. ``grow_global_batch=True`` is the opt-in that acts: the Trainer's batch sampler
(a ``torch.utils.data.BatchSampler``, the single-process case) is resized in place from the next
batch on, so the global batch grows and each epoch ends after fewer optimizer steps (the
schedule's ``max_steps`` is not stretched); each such decision says so in the log.

**Checkpoints.** When the controlled interval is reached the callback sets
``control.should_save``, so the Trainer writes its own checkpoint (``resume_from_checkpoint``
works as usual). Under ``save_strategy="no"`` it never does: the decision is logged as not
applied.
- ``on_save``: the save's seconds and the I/O stall share during it (PSI where present; else 1,
  since the Trainer's save blocks the loop) adjust the interval, capped at twice Young's optimum.

The training loss for drift detection is the model output's ``.loss`` (a forward hook).
``observe_only=True`` logs every decision and changes nothing: the run is bit-for-bit the run
without the callback.
"""

from __future__ import annotations

import time
from typing import Any, Optional

import torch
from transformers import TrainerCallback

from seedance import _core
from seedance.torch.control import ControlSettings, Controllers
from seedance.torch.record import RunRecorder

__all__ = ["SeedanceCallback"]


def _batch_sampler(loader: Any) -> Optional[torch.utils.data.BatchSampler]:
    """The torch BatchSampler behind a (possibly Accelerate-wrapped) DataLoader, if any."""
    for obj in (getattr(loader, "batch_sampler", None),
                getattr(getattr(loader, "batch_sampler", None), "batch_sampler", None)):
        if type(obj) is torch.utils.data.BatchSampler:
            return obj
    return None


class SeedanceCallback(TrainerCallback):
    """One line: ``callbacks=[SeedanceCallback(**settings)]``."""

    def __init__(self, **settings: Any) -> None:
        self.settings = ControlSettings.from_kwargs(**settings)
        self.controllers: Optional[Controllers] = None
        self._sampler: Optional[torch.utils.data.BatchSampler] = None
        self._step_start = 0.0
        self._step_seconds: list[float] = []
        self._since_save = 0
        self._save_start: Optional[tuple[float, Optional[int]]] = None
        self._recorder: Optional[RunRecorder] = None
        self._splitter: Any = None  # set by seedance.hf.retry_out_of_memory(trainer)
        self._micro_batch = 0

    # Built on the first step: by then the Trainer has prepared its model, optimizer and loader.
    def _ensure(self, args: Any, model: Any, train_dataloader: Any) -> Controllers:
        if self.controllers is None:
            self._sampler = _batch_sampler(train_dataloader)
            batch = args.per_device_train_batch_size
            self._micro_batch = batch
            self.controllers = Controllers(
                model, self.settings, batch,
                max_batch=None if self.settings.grow_global_batch else batch)
            self.controllers.apply_batch = self._apply_batch
            if self.settings.record_run and self._recorder is None:
                s = self.settings
                self._recorder = RunRecorder(s.record_run, model, job=s.record_run_job,
                                             catalog=s.record_run_catalog,
                                             warmup=s.record_run_warmup)
                recorder = self._recorder
                model.register_forward_pre_hook(
                    lambda module, a, kw: recorder.observe_batch(kw if kw else a),
                    with_kwargs=True)
        return self.controllers

    def _apply_batch(self, size: int) -> Optional[str]:
        if not self.settings.grow_global_batch and self._splitter is not None:
            # Chunks of the Trainer's micro-batch: the global batch and the steps stay.
            self._splitter.chunk = None if size >= self._micro_batch else size
            return None
        if not self.settings.grow_global_batch:
            return ("the Trainer fixes per_device_train_batch_size and "
                    "gradient_accumulation_steps when train() starts (its epoch, schedule and "
                    "optimizer-step arithmetic use them): set them before train(), or pass "
                    "grow_global_batch=True to resize the batches")
        if self._sampler is None:
            return "the Trainer's loader has no resizable BatchSampler"
        self._sampler.batch_size = size
        return None

    def on_step_begin(self, args: Any, state: Any, control: Any, model: Any = None,
                      train_dataloader: Any = None, **kwargs: Any) -> None:
        self._ensure(args, model, train_dataloader)
        if not self._step_start:
            self._step_start = time.perf_counter()

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, model: Any = None,
                              train_dataloader: Any = None, **kwargs: Any) -> None:
        self._ensure(args, model, train_dataloader).before_optimizer_step()

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None,
                    train_dataloader: Any = None, **kwargs: Any) -> Any:
        c = self._ensure(args, model, train_dataloader)
        now = time.perf_counter()
        seconds = now - self._step_start if self._step_start else 0.0
        self._step_start = now
        self._step_seconds = (self._step_seconds + [seconds])[-20:]
        size = self._sampler.batch_size if self._sampler is not None and \
            self.settings.grow_global_batch else args.per_device_train_batch_size
        c.after_optimizer_step(size * args.gradient_accumulation_steps * args.world_size,
                               seconds)
        if self._recorder is not None:
            self._recorder.observe_step(seconds, size * args.gradient_accumulation_steps)
        self._since_save += 1
        if self._since_save >= c.interval.steps:
            self._since_save = 0
            step_s = sum(self._step_seconds) / len(self._step_seconds)
            if self.settings.observe_only:
                c.record("checkpoint", "save", "interval reached (not saved: observe-only)",
                         step_s=step_s)
            elif str(getattr(args.save_strategy, "value", args.save_strategy)) == "no":
                c.record("checkpoint", "save", "interval reached; not saved: the Trainer's "
                         "save_strategy is \"no\"", applied=False, step_s=step_s)
            else:
                control.should_save = True
                self._save_start = (time.perf_counter(), _core.io_stall_total_us())
                c.record("checkpoint", "save", "interval reached: control.should_save",
                         step_s=step_s)
        return control

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.controllers is None or self._save_start is None:
            return  # a save the Trainer decided on its own (save_steps, the end of training)
        start, stall_before = self._save_start
        self._save_start = None
        save_s = max(time.perf_counter() - start, 1e-9)
        stall_after = _core.io_stall_total_us()
        if stall_before is not None and stall_after is not None:
            share = min(1.0, max(0.0, (stall_after - stall_before) * 1e-6 / save_s))
        else:
            share = 1.0  # the Trainer's save blocks the loop for its whole duration
        step_s = sum(self._step_seconds) / max(len(self._step_seconds), 1)
        self.controllers.after_save(blocked_share=share, save_s=save_s, step_s=step_s)
        self._step_start = time.perf_counter()  # the save's time is not the next step's

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self._recorder is not None and not self._recorder.written:
            self._recorder.write()
        if self.controllers is not None:
            self.controllers.close()
            self.controllers = None


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
