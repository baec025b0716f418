"""Checkpoints that survive a crash at any point, written beside training (feature CTRL-3).

    ckpt = seedance.torch.Checkpointer("/local/ckpt", keep=3)
    resumed = ckpt.load_latest()               # None on a fresh start
    if resumed:
        model.load_state_dict(resumed.state["model"]); start = resumed.next_sample
    ...
    ckpt.save({"model": model.state_dict(), "optim": opt.state_dict()},
              step=step, next_sample=sample)   # returns once the snapshot is in host memory
    ckpt.wait()                                # before exiting

A save copies every tensor of the state to host memory (the snapshot: training may change the
originals as soon as ``save`` returns), then a background thread serialises it with
``torch.save`` and writes it through libseedance's checkpoint store: one file per step in a
versioned format with a CRC-32 of the payload, written to a temporary file, flushed, renamed and
the directory flushed (docs/design/control.md). ``load_latest`` returns the newest checkpoint
that validates, so a crash — even SIGKILL in the middle of a write — leaves the previous one
loadable. The last snapshot also stays in memory (the hot tier) until the next save.

Cold tier (``cold_dir``): every ``cold_every``-th persisted checkpoint is also written there,
compressed — byte-shuffled (4-byte elements) and zstd, lossless (libseedance's
control/cold_codec.h), or with ``cold_bf16=True`` its float32 tensors first rounded to bfloat16
(lossy: half the bytes before compression). ``load_latest`` falls back to the cold tier when the
warm directory holds no valid checkpoint (a lost local disk), and says so in ``Resumed.tier``.
"""

from __future__ import annotations

import io
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional

import torch

from seedance import _core

__all__ = ["Checkpointer", "Resumed"]


@dataclass
class Resumed:
    step: int
    next_sample: int
    state: Any
    path: str
    skipped: list  # "file: reason" of newer files that did not validate
    tier: str = "warm"  # or "cold"


def _to_bf16(obj: Any) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.to(torch.bfloat16) if obj.dtype == torch.float32 else obj
    if isinstance(obj, dict):
        return {k: _to_bf16(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_bf16(v) for v in obj)
    return obj


def _to_host(obj: Any) -> Any:
    """A deep copy with every tensor cloned to host memory."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().to("cpu", copy=True)
    if isinstance(obj, dict):
        return {k: _to_host(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_host(v) for v in obj)
    return obj


class Checkpointer:
    """Atomic, validated checkpoints in ``directory``, persisted in the background."""

    def __init__(self, directory: str, *, keep: int = 3, background: bool = True,
                 cold_dir: Optional[str] = None, cold_every: int = 10, cold_keep: int = 2,
                 cold_bf16: bool = False, cold_level: int = 3) -> None:
        if keep < 1 or cold_keep < 1 or cold_every < 1:
            raise ValueError("keep, cold_keep and cold_every must be >= 1")
        self.cold_dir = os.path.abspath(cold_dir) if cold_dir else None
        if self.cold_dir:
            os.makedirs(self.cold_dir, exist_ok=True)
        self.cold_every, self.cold_keep = cold_every, cold_keep
        self.cold_bf16, self.cold_level = cold_bf16, cold_level
        self.cold_saves = 0
        os.makedirs(directory, exist_ok=True)
        self.directory = os.path.abspath(directory)
        self.keep = keep
        self.background = background
        self.hot: Optional[tuple[int, int, Any]] = None  # (step, next_sample, snapshot)
        self._thread: Optional[threading.Thread] = None
        self._error: Optional[BaseException] = None
        self.saves = 0
        self.blocked_s = 0.0  # time save() waited for the previous persist (the blocked share)
        self.last_save_s = 0.0  # the last persist's seconds (serialise and write)

    def save(self, state: Any, *, step: int, next_sample: int) -> None:
        """Snapshots ``state`` to host memory, then persists it (in the background by default)."""
        start = time.perf_counter()
        self.wait()  # one persist in flight: the next snapshot waits for the last write
        self.blocked_s += time.perf_counter() - start
        snapshot = _to_host(state)
        self.hot = (step, next_sample, snapshot)
        if self.background:
            self._thread = threading.Thread(target=self._persist,
                                            args=(step, next_sample, snapshot), daemon=True)
            self._thread.start()
        else:
            self._persist(step, next_sample, snapshot)
            self._raise()

    def _persist(self, step: int, next_sample: int, snapshot: Any) -> None:
        start = time.perf_counter()
        try:
            buf = io.BytesIO()
            torch.save(snapshot, buf)
            _core.checkpoint_write(self.directory, step, next_sample, buf.getvalue())
            self.saves += 1
            self.last_save_s = time.perf_counter() - start
            self._prune(self.directory, self.keep)
            if self.cold_dir and self.saves % self.cold_every == 0:
                payload = buf.getvalue()
                if self.cold_bf16:
                    low = io.BytesIO()
                    torch.save(_to_bf16(snapshot), low)
                    payload = low.getvalue()
                frame = _core.cold_encode(payload, element_bytes=2 if self.cold_bf16 else 4,
                                          level=self.cold_level)
                _core.checkpoint_write(self.cold_dir, step, next_sample, frame)
                self.cold_saves += 1
                self._prune(self.cold_dir, self.cold_keep)
        except BaseException as e:  # surfaced by wait() in the training thread
            self._error = e

    @staticmethod
    def _prune(directory: str, keep: int) -> None:
        for old in _core.checkpoint_steps(directory)[:-keep]:
            try:
                os.unlink(os.path.join(directory, f"ckpt-{old:012d}.sdck"))
            except FileNotFoundError:
                pass

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise RuntimeError(f"checkpoint write failed: {error}") from error

    def wait(self) -> None:
        """Blocks until the last save is on disk; raises if it failed."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._raise()

    def load_latest(self, map_location: Any = "cpu") -> Optional[Resumed]:
        """The newest checkpoint that validates in the warm directory, else in the cold one."""
        newest, skipped = _core.checkpoint_newest(self.directory)
        tier = "warm"
        if newest is None and self.cold_dir:
            newest, cold_skipped = _core.checkpoint_newest(self.cold_dir)
            skipped = list(skipped) + list(cold_skipped)
            tier = "cold"
        if newest is None:
            return None
        step, next_sample, payload, path = newest
        if tier == "cold":
            payload = _core.cold_decode(payload)
        state = torch.load(io.BytesIO(payload), map_location=map_location, weights_only=True)
        return Resumed(step, next_sample, state, path, list(skipped), tier)


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
