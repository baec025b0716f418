"""The training-loop guide's examples run as written (docs/guide/training-loop.md).

Each ```python block that uses the controllers is executed verbatim, in a fresh directory, with
the names the guide leaves to the reader (`model`, `optimizer`, `loader`, `epochs`, `args`,
`train`) bound to a small Llama built from a transformers config and byte-level text. The
checks are the guide's own claims: the loop runs, the global batch and the number of optimizer
steps are those configured, and the decision log is written.
"""

from __future__ import annotations

import json
import pathlib
import re

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "guide" / "training-loop.md"
VOCAB, CONTEXT, SAMPLES, BATCH = 256, 16, 48, 8


def blocks() -> list[str]:
    text = GUIDE.read_text()
    found = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return [b for b in found if ("enable(" in b or "SeedanceCallback" in b)
            and "tiered_cache" not in b]


class Text(torch.utils.data.Dataset):
    def __init__(self) -> None:
        data = (b"the loader hands the model a batch of bytes " * 40)[: SAMPLES * CONTEXT]
        self.ids = torch.tensor(list(data), dtype=torch.long).view(SAMPLES, CONTEXT)

    def __len__(self) -> int:
        return SAMPLES

    def __getitem__(self, i: int) -> dict:
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def names(tmp_path) -> dict:
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=CONTEXT)
    model = transformers.LlamaForCausalLM(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = torch.utils.data.DataLoader(Text(), batch_size=BATCH, shuffle=True,
                                         generator=torch.Generator().manual_seed(0))
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"), num_train_epochs=1, per_device_train_batch_size=BATCH,
        save_strategy="no", report_to=[], use_cpu=True, disable_tqdm=True,
        dataloader_num_workers=0)
    return {"model": model, "optimizer": optimizer, "loader": loader, "epochs": 2,
            "args": args, "train": Text()}


def count_steps(optimizer) -> list[int]:
    steps = [0]
    optimizer.register_step_post_hook(lambda *a: steps.__setitem__(0, steps[0] + 1))
    return steps


def count_samples(model) -> list[int]:
    """The batch size of every training forward pass."""
    sizes: list[int] = []
    model.register_forward_pre_hook(
        lambda m, a, kw: sizes.append(kw["input_ids"].shape[0]) if m.training else None,
        with_kwargs=True)
    return sizes


def test_the_guide_has_its_three_examples() -> None:
    assert len(blocks()) == 3


@pytest.mark.parametrize("index", range(3))
def test_a_guide_example_runs_as_written(tmp_path, monkeypatch, index) -> None:
    monkeypatch.chdir(tmp_path)
    code = blocks()[index]
    scope = names(tmp_path)
    steps = count_steps(scope["optimizer"])
    sizes = count_samples(scope["model"])
    exec(compile(code, f"{GUIDE.name} example {index + 1}", "exec"), scope)  # noqa: S102
    per_epoch = SAMPLES // BATCH
    if "trainer" in scope:  # the Trainer example builds it; the reader then calls train()
        scope["trainer"].train()
        steps[0] = scope["trainer"].state.global_step
    epochs = scope["epochs"] if "for epoch in range(epochs)" in code else 1
    # The configured global batch in every optimizer step, every epoch, every sample once.
    assert steps[0] == per_epoch * epochs
    assert sum(sizes) == SAMPLES * epochs and max(sizes) <= BATCH
    log = tmp_path / "decisions.jsonl"
    if log.exists():
        for line in log.read_text().splitlines():
            assert json.loads(line)["controller"] in {"batch", "checkpoint", "freeze"}
