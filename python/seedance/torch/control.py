"""Seedance's training-loop controllers, switched on in one call (features CTRL-1, -2, -3, -6).

    sd = seedance.torch.enable(model, optimizer, loader, checkpoint_dir="ckpt",
                               log="decisions.jsonl")          # added line
    for batch in sd:                                            # was: for batch in loader:
        loss = loss_fn(model(batch[0]), batch[1])               # unchanged
        loss.backward(); optimizer.step(); optimizer.zero_grad()
    sd.close()

Nothing in the model or the loop body changes: the controllers watch the optimizer through its
step hooks and the model through a forward hook, and act between optimizer steps.

**Defaults keep the job's math.** The global batch (the samples of each optimizer step), the
number of optimizer steps and the model's update rule are those the user configured; what changes
them is an opt-in (``grow_global_batch=True``, ``freeze=True``), and every decision that changes
them says so in the decision log.

- **Micro-batch and accumulation (CTRL-1, CTRL-2).** Memory in use as a share of the budget
  (GPU: the step's peak allocated bytes over the device's memory; CPU: the peak of the readings
  at the end of the forward pass and of the step, against ``memory_budget_bytes``, the memory
  cgroup's limit, the address-space limit or the machine's memory, the first that is set) and
  samples/s go to libseedance's BatchScaler (see :func:`cpu_memory`): three readings under 65%
  grow the size by 16, one over 85% returns to the previous size, and growth stops when samples/s
  stop rising. By default that size is the **micro-batch** of :meth:`Session.step`: the loader's
  batch is the global batch, kept, and cut into ``ceil(global / micro)`` accumulation steps
  (1..``max_accumulation``) whose gradient is the global batch's (sum over samples / count); the
  micro-batch never exceeds the global batch. An out-of-memory error in a step is caught, the
  micro-batch shrinks and the step is retried from zeroed gradients, so no sample is lost or
  counted twice and the optimizer steps once. A loop whose body runs the whole batch itself
  (no :meth:`Session.step`) has no micro-batch to set: the decisions are logged as not applied.
  ``grow_global_batch=True`` instead resizes the loader's batches from the next batch on (the
  epoch's sample order is unchanged): the global batch grows, an epoch has fewer optimizer steps,
  and a learning-rate schedule in steps covers more samples; each such decision is logged with
  "global batch" in its reason.
- **Freezing (CTRL-6), opt-in** (``freeze=True``: frozen layers are no longer trained, a change
  of the model's updates). Per block (the model's longest ``ModuleList``, or ``layers=``), the
  gradient norm over the weight norm; blocks under ``freeze_threshold`` for 3 steps are frozen
  front first (``requires_grad=False``); a loss far above its recent spread (the model output's
  ``.loss``, or :meth:`Session.report_loss`) unfreezes everything.
- **Checkpoints (CTRL-3).** Every ``interval`` optimizer steps the model and optimizer state go to
  :class:`~seedance.torch.Checkpointer` (atomic, persisted in the background) with the number of
  samples consumed; the interval doubles while I/O stalls exceed 0.65 of the time between saves
  (PSI's ``some`` share from ``/proc/pressure/io``; without PSI, the share the loop waited for the
  previous persist) and never exceeds twice Young's optimum for ``mtbf_s``.
  ``enable`` resumes from the newest valid checkpoint: state loaded, the epoch's consumed samples
  skipped.

**Reproducibility.** The batch controller reads wall-clock samples/s (growth stops when it stops
rising) and the memory in use; those readings are the one source of run-to-run difference in its
decisions (the micro-batch, so the summation order of a step's gradient, never its samples).
The freeze and checkpoint-interval rules read gradients, losses and I/O stalls. Every decision
is logged with the readings it used.

``observe_only=True``: every controller decides and logs but nothing is applied — the loop runs
exactly as without Seedance (the same loader, bit-for-bit the same losses). Each decision is a
JSON line in ``log`` (inputs and reason) and a count in the Prometheus families
``seedance_control_*`` served, beside the probe's host and GPU readings, at ``metrics_listen``.
"""

from __future__ import annotations

import ctypes
import functools
import math
import time
from dataclasses import dataclass, fields
from typing import Any, Callable, Iterator, Optional

import torch

from seedance import _core
from seedance.errors import SeedanceTypeError, check_type
from seedance.torch.accumulate import GradientAccumulator, _first_dim
from seedance.torch.checkpoint import Checkpointer
from seedance.torch.record import RunRecorder

__all__ = ["ControlSettings", "Session", "cpu_memory", "enable", "find_blocks",
           "is_out_of_memory", "release_free_memory"]

WEIGHT_NORM_EVERY = 10  # steps between passes over the weights for the freeze rule's norms


@dataclass
class ControlSettings:
    """Every setting of :func:`enable` and ``seedance.hf.SeedanceCallback``, with the notes' defaults."""

    observe_only: bool = False
    log: Optional[str] = None             # JSON-lines decision log (appended)
    metrics_listen: Optional[str] = None  # "127.0.0.1:9464": the probe's exporter with decisions
    cache: Optional[Any] = None  # a seedance.torch.tiered_cache: its metrics served there too
    # CTRL-1: batch size (the micro-batch unless grow_global_batch)
    batch: bool = True
    grow_global_batch: bool = False  # opt-in: resize the loader's batches (the global batch)
    batch_step: int = 16
    batch_low: float = 0.65
    batch_high: float = 0.85
    batch_readings: int = 3
    batch_min: int = 1
    batch_max: int = 1 << 16
    batch_min_gain: float = 0.02  # growth must buy 2% samples/s; < 0: grow regardless
    memory_budget_bytes: Optional[int] = None  # CPU only; default: cgroup / RLIMIT_AS / RAM
    max_accumulation: int = 8
    # CTRL-6: freezing (opt-in: frozen layers stop training, which changes the model's updates)
    freeze: bool = False
    freeze_threshold: float = 1e-3
    freeze_patience: int = 3
    keep_trainable: int = 1
    drift_sigma: float = 4.0
    drift_window: int = 20
    layers: Optional[list] = None  # the blocks, in forward order; default: find_blocks(model)
    # CTRL-3: checkpoints
    checkpoint_dir: Optional[str] = None
    checkpoint_floor: int = 50
    checkpoint_interval: int = 50
    checkpoint_keep: int = 3
    checkpoint_cold_dir: Optional[str] = None  # compressed copies (byte-shuffled zstd)
    checkpoint_cold_every: int = 10            # every N-th save also goes cold
    checkpoint_cold_bf16: bool = False         # lossy: float32 stored as bfloat16
    mtbf_s: float = 0.0
    resume: bool = True
    # The planner's calibration (issue 39): append this run's measured row to a runs table that
    # `seedancectl optimize --calibrate` reads (seedance.torch.record).
    record_run: Optional[str] = None
    record_run_job: Optional[dict] = None      # job-spec keys the run cannot tell (gpu, ...)
    record_run_catalog: Optional[str] = None   # a GPU catalog file for a device not built in
    record_run_warmup: int = 2                 # optimizer steps left out of the median

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> "ControlSettings":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise TypeError(f"unknown Seedance setting(s): {', '.join(unknown)}; "
                            f"known: {', '.join(sorted(known))}")
        return cls(**kwargs)


def find_blocks(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The model's repeated blocks in forward order: its longest ``ModuleList`` (a transformer's
    layers), or its direct children when it has none."""
    best: list[torch.nn.Module] = []
    for module in model.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) > len(best):
            best = list(module)
    if not best:
        best = [m for m in model.children() if any(True for _ in m.parameters())]
    return best


def is_out_of_memory(error: BaseException) -> bool:
    """True for CUDA's OutOfMemoryError and for the CPU allocator's failure to allocate."""
    if isinstance(error, getattr(torch, "OutOfMemoryError", ())):
        return True
    text = str(error)
    return isinstance(error, (RuntimeError, MemoryError)) and (
        "out of memory" in text or "can't allocate memory" in text or isinstance(error, MemoryError))


def release_free_memory() -> None:
    """Hands the C heap's free pages back to the kernel (glibc's malloc_trim), so that the resident
    set and the cgroup's usage show what a smaller batch really uses: glibc keeps freed memory,
    and the readings would otherwise stay at the old batch's high-water mark."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Optional[Callable[[int], int]]:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def cpu_memory(budget: Optional[int] = None) -> tuple[int, int]:
    """(in use, budget) for a CPU run: a given budget (the resident set against it), else the
    memory cgroup's limit (its usage against it: what the kernel enforces), else the address-space
    limit (RLIMIT_AS: the virtual size against it), else the machine's memory (the resident set).
    Read afresh on every call, in C++ through the library's Env (control/cpu_memory.h): limits may
    change mid-run."""
    used, limit, _ = _core.cpu_memory(budget or 0)
    return used, limit


def _samples_in(batch: Any) -> int:
    """Samples in a batch: the tensors' shared first dimension, else the batch's length."""
    try:
        return _first_dim(batch)
    except (ValueError, TypeError):
        return len(batch) if hasattr(batch, "__len__") else 1


class _ResizableBatchSampler(torch.utils.data.Sampler):
    """Batches of ``size`` indices from ``sampler``; a new size applies from the next batch, and
    ``skip`` samples are passed over at the start of the next epoch (resume)."""

    def __init__(self, sampler: Any, size: int, drop_last: bool) -> None:
        self.sampler = sampler
        self.size = size
        self.drop_last = drop_last
        self.skip = 0

    def __iter__(self) -> Iterator[list[int]]:
        it = iter(self.sampler)
        skip, self.skip = self.skip, 0
        for _ in range(skip):
            next(it, None)
        while True:
            batch = []
            for index in it:
                batch.append(index)
                if len(batch) >= self.size:
                    break
            if not batch or (self.drop_last and len(batch) < self.size):
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.size if self.drop_last else -(-n // self.size)


def _resizable_loader(loader: Any) -> Optional[tuple[torch.utils.data.DataLoader,
                                                    _ResizableBatchSampler]]:
    """The same DataLoader with a resizable batch sampler, or None when it has no batch size."""
    if not isinstance(loader, torch.utils.data.DataLoader) or loader.batch_size is None:
        return None
    if isinstance(loader.dataset, torch.utils.data.IterableDataset):
        return None
    sampler = _ResizableBatchSampler(loader.sampler, loader.batch_size, loader.drop_last)
    kwargs: dict[str, Any] = dict(
        batch_sampler=sampler, num_workers=loader.num_workers, collate_fn=loader.collate_fn,
        pin_memory=loader.pin_memory, timeout=loader.timeout,
        worker_init_fn=loader.worker_init_fn, generator=loader.generator,
        persistent_workers=loader.persistent_workers)
    if loader.num_workers > 0:
        kwargs["prefetch_factor"] = loader.prefetch_factor
        kwargs["multiprocessing_context"] = loader.multiprocessing_context
    return torch.utils.data.DataLoader(loader.dataset, **kwargs), sampler


class Controllers:
    """The decisions shared by :class:`Session` and ``seedance.hf.SeedanceCallback``: readings in,
    decisions logged, and — unless observe-only — applied through the callables the owner sets."""

    def __init__(self, model: torch.nn.Module, settings: ControlSettings,
                 initial_batch: Optional[int], max_batch: Optional[int] = None) -> None:
        """``initial_batch``: the size the loop starts at (None: no batch control);
        ``max_batch``: the largest size it may reach (the global batch, for a micro-batch)."""
        s = settings
        self.model = model
        self.settings = s
        self.recorder = _core.DecisionRecorder(s.log or "", s.metrics_listen or "")
        if s.cache is not None:
            self.recorder.set_cache(s.cache)
        self.step = 0
        self.last_loss = math.nan
        self.blocks: list[torch.nn.Module] = []
        self._params: list[torch.nn.Parameter] = []
        self._owner: Optional[torch.Tensor] = None  # the block of each of _params
        self._weight_sq: Optional[torch.Tensor] = None  # per block, the last squared weight norm
        self._norm_calls = 0
        self.freezer = None
        if s.freeze:
            self.blocks = list(s.layers) if s.layers is not None else find_blocks(model)
            if self.blocks:
                self.freezer = _core.FreezeController(
                    layers=len(self.blocks), threshold=s.freeze_threshold,
                    patience=s.freeze_patience, prefix_only=True,
                    keep_trainable=s.keep_trainable, drift_sigma=s.drift_sigma,
                    drift_window=s.drift_window)
        self.scaler = None
        if s.batch and initial_batch:
            size = min(max(initial_batch, s.batch_min), s.batch_max)
            largest = max(s.batch_max, size) if max_batch is None else min(s.batch_max, max_batch)
            self.scaler = _core.BatchScaler(
                initial_size=size, step=s.batch_step, min_size=min(s.batch_min, size),
                max_size=max(largest, size), low=s.batch_low, high=s.batch_high,
                readings=s.batch_readings, min_gain=s.batch_min_gain)
            self._setting("batch", "size", size)
        self.batch_size = size if self.scaler is not None else None  # the size in effect
        self._batch_fixed = False  # a size could not be applied: the scaler stops observing
        self.interval = _core.CheckpointInterval(
            floor_steps=s.checkpoint_floor, initial_steps=s.checkpoint_interval,
            io_pressure_threshold=0.65, mtbf_s=s.mtbf_s)
        self._setting("checkpoint", "interval_steps", self.interval.steps)
        self._setting("freeze", "frozen_blocks", 0)
        self.cuda = next((p.device for p in model.parameters() if p.device.type == "cuda"), None)
        self._peak_share = 0.0
        self._hook = model.register_forward_hook(self._after_forward)
        # What acting means is the owner's business (set a micro-batch, resize a loader): it
        # returns None when the size was applied, else why it could not be.
        self.apply_batch: Callable[[int], Optional[str]] = lambda size: "no loop to apply it to"

    # -- readings ---------------------------------------------------------------------------
    def _after_forward(self, module: Any, inputs: Any, output: Any) -> None:
        loss = getattr(output, "loss", None)
        if loss is None and isinstance(output, dict):
            loss = output.get("loss")
        if isinstance(loss, torch.Tensor) and loss.numel() == 1:
            self.last_loss = float(loss.detach())
        if self.cuda is None:  # activations are alive now: near the step's peak
            self._peak_share = max(self._peak_share, self._cpu_share())

    def _cpu_share(self) -> float:
        used, budget = cpu_memory(self.settings.memory_budget_bytes)
        return used / budget

    def memory_share(self) -> float:
        """The step's peak memory over the budget, then the peak is reset."""
        if self.cuda is not None:
            # Allocated, not reserved: the caching allocator keeps freed blocks reserved, so a
            # smaller batch would not show in the reserved bytes.
            peak = torch.cuda.max_memory_allocated(self.cuda)
            total = torch.cuda.get_device_properties(self.cuda).total_memory
            torch.cuda.reset_peak_memory_stats(self.cuda)
            return peak / total
        peak, self._peak_share = max(self._peak_share, self._cpu_share()), 0.0
        return peak

    # -- decisions --------------------------------------------------------------------------
    def record(self, controller: str, action: str, reason: str, applied: bool = True,
               **inputs: float) -> None:
        """One decision; ``applied=False`` for one the owner could not act on (observe-only
        decisions are never applied)."""
        self.recorder.record(step=self.step, controller=controller, action=action,
                             applied=applied and not self.settings.observe_only, reason=reason,
                             inputs=[(k, float(v)) for k, v in inputs.items()])

    def _setting(self, controller: str, setting: str, value: float) -> None:
        self.recorder.set_setting(controller=controller, setting=setting, value=float(value))

    def _block_norms(self) -> tuple[list[float], list[float]]:
        """Per block, the L2 norms of its gradients (every step) and of its weights (every
        WEIGHT_NORM_EVERY steps: weights move little in ten steps, and the pass over them is half
        the controllers' cost), each one fused pass (torch._foreach_norm)."""
        if self._owner is None:
            self._params = [p for b in self.blocks for p in b.parameters()]
            self._owner = torch.tensor([i for i, b in enumerate(self.blocks)
                                        for _ in b.parameters()])
        with torch.no_grad():
            n = len(self.blocks)
            if self._weight_sq is None or self._norm_calls % WEIGHT_NORM_EVERY == 0:
                w = torch.stack(torch._foreach_norm([p.detach() for p in self._params])).float()
                self._weight_sq = torch.zeros(n).index_add_(0, self._owner, (w * w).cpu())
            self._norm_calls += 1
            with_grad = [i for i, p in enumerate(self._params) if p.grad is not None]
            g_sq = torch.zeros(n)
            if with_grad:
                g = torch.stack(torch._foreach_norm(
                    [self._params[i].grad for i in with_grad])).float().cpu()
                g_sq.index_add_(0, self._owner[with_grad], g * g)
            return g_sq.sqrt().tolist(), self._weight_sq.sqrt().tolist()

    def before_optimizer_step(self) -> None:
        """Gradient and weight norms per block (the gradients exist now): the freeze decision."""
        if self.freezer is None:
            return
        grads, weights = self._block_norms()
        frozen_now, unfrozen_now, reason = self.freezer.step(
            grad_norms=grads, weight_norms=weights, loss=self.last_loss)
        for i in frozen_now:
            self.record("freeze", "freeze", reason, block=i, grad_norm=grads[i],
                        weight_norm=weights[i], loss=self.last_loss)
        if unfrozen_now:
            self.record("freeze", "unfreeze", reason, blocks=len(unfrozen_now),
                        loss=self.last_loss)
        if not self.settings.observe_only:
            for i in frozen_now:
                self.blocks[i].requires_grad_(False)
                for p in self.blocks[i].parameters():
                    p.grad = None  # the optimizer skips a parameter without a gradient
            for i in unfrozen_now:
                self.blocks[i].requires_grad_(True)
        self._setting("freeze", "frozen_blocks", sum(self.freezer.frozen))

    def after_optimizer_step(self, samples: int, seconds: float) -> None:
        """The batch decision from this step's memory and samples/s."""
        self.step += 1
        if self.scaler is None or self._batch_fixed:
            return
        share = self.memory_share()
        rate = samples / seconds if seconds > 0 else 0.0
        before = self.scaler.size
        size, action, reason = self.scaler.observe(memory_share=share, samples_per_s=rate)
        if action != "keep":
            why_not = None
            resized = size != before  # grow, shrink, or stop_growth stepping back
            if resized and not self.settings.observe_only:
                why_not = self.apply_batch(size)
                if why_not is None:
                    self.batch_size = size
                    if size < before:
                        release_free_memory()
            if resized:
                reason += ("; the global batch changes (grow_global_batch=True)"
                           if self.settings.grow_global_batch else
                           "; micro-batch (the global batch is kept)")
            if why_not is not None:
                # Why a size cannot be applied holds for the whole run (the loop or the Trainer
                # fixes the batch), so the scaler stops here rather than move on to sizes that
                # never run and judge later readings against them.
                reason += f"; not applied: {why_not}; the batch controller stops"
                self._batch_fixed = True
            self.record("batch", action, reason, applied=why_not is None, memory_share=share,
                        samples_per_s=rate, size=size)
        self._setting("batch", "size", self.batch_size)

    def out_of_memory(self, error: BaseException) -> int:
        """A step failed for memory: the smaller size to retry it with (raises at the floor)."""
        assert self.scaler is not None
        size, action, reason = self.scaler.out_of_memory()
        self.record("batch", "shrink" if action == "shrink" else "give_up", reason,
                    size=size)
        if action != "shrink":
            raise error
        self.batch_size = size
        self._setting("batch", "size", size)
        return size

    def after_save(self, blocked_share: float, save_s: float, step_s: float) -> None:
        steps, young, reason = self.interval.after_save(
            io_stall_share=blocked_share, save_s=save_s, step_s=step_s)
        self.record("checkpoint", "interval", reason, blocked_share=blocked_share,
                    save_s=save_s, step_s=step_s, interval_steps=steps, young_steps=young)
        self._setting("checkpoint", "interval_steps", steps)

    def close(self) -> None:
        self._hook.remove()
        self.recorder.close()


class Session:
    """What :func:`enable` returns: iterate it instead of the loader; see the module's doc."""

    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, loader: Any,
                 settings: ControlSettings) -> None:
        self.model = model
        self.optimizer = optimizer
        self.settings = settings
        self.loader = loader
        self._sampler: Optional[_ResizableBatchSampler] = None
        batch_size = getattr(loader, "batch_size", None)
        if not settings.observe_only:
            made = _resizable_loader(loader)
            if made is not None:
                self.loader, self._sampler = made
        resizable = self._sampler is not None or settings.observe_only
        # By default the loader's batch is the global batch and the controlled size a micro-batch
        # of it (Session.step); grow_global_batch resizes the loader's batches themselves.
        self.controllers = Controllers(
            model, settings, batch_size if resizable else None,
            max_batch=None if settings.grow_global_batch else batch_size)
        self.controllers.apply_batch = self._apply_batch
        self._micro: Optional[int] = None  # set once step() is used: the batch is a micro-batch
        self.accumulator: Optional[GradientAccumulator] = None
        self.epoch = 0
        self.next_sample = 0  # samples of this epoch handed out
        self._samples_since_step = 0
        self._last_step_time = time.perf_counter()
        self._step_seconds: list[float] = []
        self._since_save = 0
        self._pending_save: Optional[tuple[Optional[int], float]] = None  # (PSI us, start)
        self.checkpointer: Optional[Checkpointer] = None
        if settings.checkpoint_dir and not settings.observe_only:
            self.checkpointer = Checkpointer(
                settings.checkpoint_dir, keep=settings.checkpoint_keep,
                cold_dir=settings.checkpoint_cold_dir, cold_every=settings.checkpoint_cold_every,
                cold_bf16=settings.checkpoint_cold_bf16)
            if settings.resume:
                self._resume()
        self.recorder: Optional[RunRecorder] = None
        if settings.record_run:
            self.recorder = RunRecorder(settings.record_run, model, job=settings.record_run_job,
                                        catalog=settings.record_run_catalog,
                                        warmup=settings.record_run_warmup)
        self._pre = optimizer.register_step_pre_hook(lambda *a: self._before_step())
        self._post = optimizer.register_step_post_hook(lambda *a: self._after_step())

    # -- the loop ---------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Any]:
        for batch in self.loader:
            n = _samples_in(batch)
            if self.recorder is not None:
                self.recorder.observe_batch(batch)
            self.next_sample += n
            self._samples_since_step += n
            yield batch
        self.epoch += 1
        self.next_sample = 0

    def report_loss(self, loss: Any) -> None:
        """The step's loss, for drift detection, when the model's output carries none."""
        self.controllers.last_loss = float(loss)

    def step(self, batch: Any, loss_fn: Callable[[torch.nn.Module, Any],
                                                tuple[torch.Tensor, Any]]) -> dict[str, Any]:
        """One optimizer step over ``batch`` in micro-batches of the controlled size, retried with
        smaller ones on out-of-memory. ``loss_fn(model, micro) -> (loss_sum, count)`` as for
        :class:`~seedance.torch.GradientAccumulator`."""
        n = _first_dim(batch)
        if self.accumulator is None:
            self.accumulator = GradientAccumulator(self.model, self.optimizer,
                                                   max_steps=self.settings.max_accumulation)
            if self._micro is None:
                self._micro = self.controllers.scaler.size if self.controllers.scaler else n
        while True:
            micro = self._micro or n
            k = min(max(1, -(-n // micro)), self.settings.max_accumulation, n)
            self.accumulator.steps = k
            try:
                result = self.accumulator.step(batch, loss_fn)
                self._setting_accumulation(k)
                return result
            except Exception as error:  # noqa: BLE001 - only out-of-memory is retried
                if not is_out_of_memory(error) or self.controllers.scaler is None:
                    raise
                self.optimizer.zero_grad(set_to_none=True)
                self._micro = self.controllers.out_of_memory(error)
                if -(-n // self._micro) > self.settings.max_accumulation:
                    raise
            # The failed attempt's tensors died with the exception: hand their memory back.
            if self.controllers.cuda is not None:
                torch.cuda.empty_cache()
            release_free_memory()

    def _setting_accumulation(self, k: int) -> None:
        self.controllers._setting("accumulation", "steps", k)

    def _apply_batch(self, size: int) -> Optional[str]:
        if self.settings.grow_global_batch:
            if self._sampler is None:
                return "the loader has no resizable batch sampler"
            self._sampler.size = size
            self._micro = None  # step() runs each (now larger) batch whole again
            return None
        if self.accumulator is not None:
            self._micro = size
            return None
        return ("the loop runs each batch whole (no Session.step), so there is no micro-batch "
                "to set; grow_global_batch=True resizes the batches instead")

    # -- hooks ------------------------------------------------------------------------------
    def _before_step(self) -> None:
        self.controllers.before_optimizer_step()

    def _after_step(self) -> None:
        now = time.perf_counter()
        seconds = now - self._last_step_time
        self._last_step_time = now
        self._step_seconds = (self._step_seconds + [seconds])[-20:]
        if self.recorder is not None:
            self.recorder.observe_step(seconds, self._samples_since_step)
        self.controllers.after_optimizer_step(self._samples_since_step, seconds)
        self._samples_since_step = 0
        self._since_save += 1
        if self._since_save >= self.controllers.interval.steps:
            self._since_save = 0
            self._save()

    def _save(self) -> None:
        step_s = sum(self._step_seconds) / max(len(self._step_seconds), 1)
        if self.checkpointer is None:
            self.controllers.record("checkpoint", "save", "interval reached (not saved: "
                                    + ("observe-only)" if self.settings.observe_only
                                       else "no checkpoint_dir)"), step_s=step_s)
            return
        # save() first waits for the previous persist; that wait is the loop's blocked time.
        blocked_before = self.checkpointer.blocked_s
        start = time.perf_counter()
        self.checkpointer.save({"model": self.model.state_dict(),
                                "optimizer": self.optimizer.state_dict(),
                                "epoch": self.epoch},
                               step=self.controllers.step, next_sample=self.next_sample)
        blocked = self.checkpointer.blocked_s - blocked_before
        stall_us = _core.io_stall_total_us()
        if self._pending_save is not None:
            previous_stall_us, previous_start = self._pending_save
            wall = max(start - previous_start, 1e-9)
            if stall_us is not None and previous_stall_us is not None:
                share = min(1.0, max(0.0, (stall_us - previous_stall_us) * 1e-6 / wall))
            else:
                share = min(1.0, blocked / wall)
            self.controllers.after_save(blocked_share=share, save_s=self.checkpointer.last_save_s,
                                        step_s=step_s)
        self._pending_save = (stall_us, start)
        self.controllers.record("checkpoint", "save", "interval reached", step_s=step_s,
                                next_sample=self.next_sample, blocked_s=blocked)

    def _resume(self) -> None:
        assert self.checkpointer is not None
        resumed = self.checkpointer.load_latest()
        if resumed is None:
            return
        self.model.load_state_dict(resumed.state["model"])
        self.optimizer.load_state_dict(resumed.state["optimizer"])
        self.epoch = int(resumed.state.get("epoch", 0))
        self.controllers.step = resumed.step
        self.next_sample = resumed.next_sample
        if self._sampler is not None:
            self._sampler.skip = resumed.next_sample
        self.controllers.record("checkpoint", "resume", f"loaded {resumed.path}",
                                next_sample=resumed.next_sample)

    def close(self) -> None:
        """Waits for the last checkpoint write, removes the hooks, stops the exporter, and with
        ``record_run`` appends the run's row."""
        if self.checkpointer is not None:
            self.checkpointer.wait()
        if self.recorder is not None and not self.recorder.written:
            self.recorder.write()
        self._pre.remove()
        self._post.remove()
        self.controllers.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def enable(model: torch.nn.Module, optimizer: torch.optim.Optimizer, loader: Any,
           **settings: Any) -> Session:
    """Switches the controllers on for a plain PyTorch loop; see :class:`ControlSettings`.

    Raises:
        TypeError: ``model`` is not a ``torch.nn.Module``, ``optimizer`` not a
            ``torch.optim.Optimizer`` or ``loader`` not iterable (the parameter is named).
    """
    check_type("enable", "model", model, torch.nn.Module, "a torch.nn.Module")
    check_type("enable", "optimizer", optimizer, torch.optim.Optimizer, "a torch.optim.Optimizer")
    if not hasattr(loader, "__iter__"):
        raise SeedanceTypeError(f"enable(): loader must be iterable (a DataLoader), not "
                                f"{type(loader).__name__}", "loader")
    return Session(model, optimizer, loader, ControlSettings.from_kwargs(**settings))


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
