"""Hugging Face Transformers in the test environment: a small Llama trained by transformers.Trainer.

The model is built from a LlamaConfig (nothing is downloaded) and trained on byte-level tokens of
text this test writes. This is the base the training-loop integrations build on.
"""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

VOCAB = 256  # bytes
CONTEXT = 32


def make_text(seed: int, sentences: int) -> bytes:
    """Regular, learnable text: a few templates filled from small word lists."""
    rng = random.Random(seed)
    subjects = ["the gpu", "a node", "the scheduler", "each rank", "the cache"]
    verbs = ["holds", "frees", "sends", "packs", "reads"]
    objects = ["the tensor", "a block", "the batch", "its weights", "one page"]
    lines = [f"{rng.choice(subjects)} {rng.choice(verbs)} {rng.choice(objects)}."
             for _ in range(sentences)]
    return " ".join(lines).encode()


class ByteBlocks(torch.utils.data.Dataset):
    def __init__(self, data: bytes, context: int) -> None:
        ids = torch.tensor(list(data), dtype=torch.long)
        n = (len(ids) // context) * context
        self.blocks = ids[:n].view(-1, context)

    def __len__(self) -> int:
        return len(self.blocks)

    def __getitem__(self, i: int) -> dict:
        return {"input_ids": self.blocks[i], "labels": self.blocks[i]}


def test_trainer_trains_a_small_llama_and_the_loss_falls(tmp_path) -> None:
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=CONTEXT)
    model = transformers.LlamaForCausalLM(config)
    assert sum(p.numel() for p in model.parameters()) < 200_000
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"), max_steps=20, per_device_train_batch_size=16,
        learning_rate=3e-3, warmup_steps=2, logging_steps=1, save_strategy="no",
        report_to=[], use_cpu=True, disable_tqdm=True, seed=0, dataloader_num_workers=0)
    trainer = transformers.Trainer(model=model, args=args,
                                   train_dataset=ByteBlocks(make_text(1, 400), CONTEXT))
    result = trainer.train()
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    assert result.global_step == 20 and len(losses) == 20
    first, last = sum(losses[:3]) / 3, sum(losses[-3:]) / 3
    # A uniform guess over 256 bytes has loss ln 256 = 5.55; the text uses ~25 of them.
    assert first > 4.5
    assert last < 0.75 * first, losses
