"""SeedanceCallback's checkpoints are the Trainer's own: a run killed with SIGKILL resumes with
``trainer.train(resume_from_checkpoint=True)`` and ends where the uninterrupted run ends (CTRL-3,
issue 43 item 3).

Each run is a child process (a SIGKILL takes the process down, nothing can catch it): a small
Llama built from a transformers config, trained by a real Trainer for 30 optimizer steps with the
callback saving every 10 (`control.should_save`; the Trainer's own `save_steps` lies beyond the
run). The first child kills itself at step 25, after the checkpoint of step 20; the second
resumes from the newest checkpoint. The reference is the same run without interruption: the final
weights must match it (the Trainer restores the optimizer, the schedule, the RNG and the data
position).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

SCRIPT = textwrap.dedent("""
    import os, signal, sys, torch, transformers
    from seedance.hf import SeedanceCallback
    out, mode = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=256, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=16)
    model = transformers.LlamaForCausalLM(config)
    text = (b"the callback asks the trainer to save its state now and then " * 60)[:96 * 16]
    ids = torch.tensor(list(text), dtype=torch.long).view(96, 16)

    class Blocks(torch.utils.data.Dataset):
        def __len__(self):
            return len(ids)
        def __getitem__(self, i):
            return {"input_ids": ids[i], "labels": ids[i]}

    class Kill(transformers.TrainerCallback):
        steps = 0
        def on_step_end(self, args, state, control, **kw):
            Kill.steps += 1
            if mode == "kill" and state.global_step == 25:
                os.kill(os.getpid(), signal.SIGKILL)

    args = transformers.TrainingArguments(
        output_dir=out, max_steps=30, per_device_train_batch_size=8, learning_rate=3e-3,
        warmup_steps=2, save_strategy="steps", save_steps=10**6, report_to=[], use_cpu=True,
        disable_tqdm=True, seed=0, dataloader_num_workers=0, logging_steps=1)
    callback = SeedanceCallback(checkpoint_interval=10, checkpoint_floor=10,
                                log=os.path.join(out, "decisions.jsonl"))
    trainer = transformers.Trainer(model=model, args=args, train_dataset=Blocks(),
                                   callbacks=[callback, Kill()])
    trainer.train(resume_from_checkpoint=True if mode == "resume" else None)
    torch.save(trainer.model.state_dict(), os.path.join(out, "final.pt"))
    print("steps run", Kill.steps)
""")


def run(out, mode: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, str(out), mode], capture_output=True,
                          text=True, timeout=600)


def test_a_killed_trainer_resumes_from_the_callbacks_checkpoint(tmp_path) -> None:
    reference = run(tmp_path / "reference", "plain")
    assert reference.returncode == 0, reference.stderr[-3000:]
    killed = run(tmp_path / "run", "kill")
    assert killed.returncode == -9, killed.stderr[-3000:]
    saved = sorted(p for p in os.listdir(tmp_path / "run") if p.startswith("checkpoint-"))
    assert saved == ["checkpoint-10", "checkpoint-20"]  # the callback's saves, none after
    resumed = run(tmp_path / "run", "resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "steps run 10" in resumed.stdout  # steps 21..30: it resumed, it did not start over
    want = torch.load(tmp_path / "reference" / "final.pt")
    got = torch.load(tmp_path / "run" / "final.pt")
    assert want.keys() == got.keys()
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=1e-6, atol=1e-7, msg=name)
