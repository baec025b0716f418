"""seedance.hf.KVCache and the "seedance" packed attention (KV-1, KV-3) inside Transformers:
against DynamicCache (the FP32 reference), against sdpa over the cache's own decoded keys and
values (the packed scores must be the same attention), on a config-built Llama and on the real
SmolLM2-135M-Instruct GGUF."""

from __future__ import annotations


import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM, MistralConfig  # noqa: E402

import seedance.hf  # noqa: E402
from seedance.errors import SeedanceError  # noqa: E402

# Every test that loads SmolLM2 into Transformers runs on one xdist worker, which loads it
# once (conftest's smollm2_hf; scripts/dev.sh runs pytest with --dist loadgroup).
pytestmark = pytest.mark.xdist_group("smollm2")


def tiny_llama(attn: str = "sdpa") -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=256, attn_implementation=attn)
    return LlamaForCausalLM(config).eval()


def step_logits(model, cache, ids: torch.Tensor, prompt: int,
                mask: torch.Tensor | None = None) -> torch.Tensor:
    """Logits of a prompt forward, then one token at a time (teacher-forced)."""
    out = []
    with torch.no_grad():
        m = None if mask is None else mask[:, :prompt]
        r = model(input_ids=ids[:, :prompt], attention_mask=m, cache=cache, use_cache=True)
        out.append(r.logits[:, -1])
        for t in range(prompt, ids.shape[1]):
            m = None if mask is None else mask[:, :t + 1]
            r = model(input_ids=ids[:, t:t + 1], attention_mask=m, cache=cache, use_cache=True)
            out.append(r.logits[:, -1])
    return torch.stack(out, 1)


IDS = torch.randint(0, 97, (1, 80), generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("packed", [False, True])
def test_the_fp32_cache_is_dynamic_cache(packed: bool) -> None:
    model = tiny_llama()
    ref = step_logits(model, DynamicCache(), IDS, 9)
    if packed:
        seedance.hf.use_packed_attention(model)
    cache = seedance.hf.KVCache(bits="32")
    got = step_logits(model, cache, IDS, 9)
    assert cache.get_seq_length() == IDS.shape[1]
    assert all(layer.packed == packed for layer in cache.layers)
    torch.testing.assert_close(got, ref, rtol=0, atol=2e-5)


@pytest.mark.parametrize("bits", ["8", "4", "2", "fp8", "adaptive"])
def test_packed_attention_is_sdpa_over_the_decoded_cache(bits: str) -> None:
    # The read-back path hands sdpa the history decoded from the codes; the packed path scores
    # the codes in C++. The same cache contents, so the same attention up to float order.
    model = tiny_llama()
    decoded = step_logits(model, seedance.hf.KVCache(bits=bits, group=16, window=4), IDS, 9)
    seedance.hf.use_packed_attention(model)
    packed = step_logits(model, seedance.hf.KVCache(bits=bits, group=16, window=4), IDS, 9)
    torch.testing.assert_close(packed, decoded, rtol=0, atol=1e-4)
    exact = step_logits(model, DynamicCache(), IDS, 9)
    assert (packed - exact).abs().max() > 0  # something was quantized


def test_left_padded_batches_follow_the_mask() -> None:
    # Row 0 is left-padded by 5 tokens: its logits equal those of the unpadded sequence alone.
    model = seedance.hf.use_packed_attention(tiny_llama())
    ids = torch.cat([IDS[:, :40], IDS[:, 40:]], 0)
    ids[0, :5] = 0
    mask = torch.ones_like(ids)
    mask[0, :5] = 0
    both = step_logits(model, seedance.hf.KVCache(bits="8", group=8, window=4), ids, 12, mask)
    alone = step_logits(model, seedance.hf.KVCache(bits="8", group=8, window=4), ids[1:], 12)
    torch.testing.assert_close(both[1:], alone, rtol=0, atol=1e-4)
    reference = tiny_llama()  # sdpa over the decoded cache, same mask
    decoded = step_logits(reference, seedance.hf.KVCache(bits="8", group=8, window=4), ids, 12,
                          mask)
    torch.testing.assert_close(both, decoded, rtol=0, atol=1e-4)


def test_smaller_widths_hold_fewer_bytes() -> None:
    model = seedance.hf.use_packed_attention(tiny_llama())
    sizes = {}
    for bits in ["32", "8", "4", "2"]:
        cache = seedance.hf.KVCache(bits=bits, window=8)
        step_logits(model, cache, IDS, 9)
        sizes[bits] = cache.nbytes
    # 80 tokens x 2 layers x 32 channels x keys and values, FP32.
    assert sizes["32"] == 80 * 2 * 32 * 2 * 4
    assert sizes["32"] > sizes["8"] > sizes["4"] > sizes["2"]


def test_unsupported_layouts_and_settings_are_clear_errors() -> None:
    with pytest.raises(SeedanceError, match="full-attention") as e:
        seedance.hf.KVCache(bits="8", config=MistralConfig(sliding_window=64))
    assert e.value.where == "config"
    with pytest.raises(SeedanceError) as e:
        seedance.hf.KVCache(bits="3")
    assert e.value.where == "bits"
    with pytest.raises(SeedanceError) as e:
        seedance.hf.KVCache(group=0)
    assert e.value.where == "group"
    model = seedance.hf.use_packed_attention(tiny_llama())
    with pytest.raises(SeedanceError, match="beam search"):
        model.generate(IDS[:, :8], cache=seedance.hf.KVCache(bits="8"), num_beams=2,
                       max_new_tokens=4, do_sample=False)


def test_other_caches_are_untouched_by_the_packed_attention() -> None:
    model = tiny_llama()
    ref = step_logits(model, DynamicCache(), IDS, 9)
    seedance.hf.use_packed_attention(model)
    torch.testing.assert_close(step_logits(model, DynamicCache(), IDS, 9), ref, rtol=0, atol=0)
    with torch.no_grad():
        torch.testing.assert_close(model(IDS, use_cache=False).logits,
                                   tiny_llama()(IDS, use_cache=False).logits, rtol=0, atol=0)


def prompts() -> list[str]:
    """Real English text (the Python documentation's topics, PSF licence) long enough that the
    default window of 128 tokens leaves part of the history packed."""
    import pydoc_data.topics

    return [pydoc_data.topics.topics[name][:700] for name in ("assert", "with")]


@pytest.fixture(scope="module")
def smollm2(smollm2_hf):
    """The model in sdpa, and its greedy ids with DynamicCache for each prompt (the reference
    both attention paths are held to); the model's attention is put back afterwards."""
    tok, model = smollm2_hf
    model.set_attn_implementation("sdpa")
    refs = []
    for prompt in prompts():
        ids = tok(prompt, return_tensors="pt")
        assert ids["input_ids"].shape[1] > 140
        refs.append((ids, model.generate(**ids, cache=DynamicCache(), **GREEDY)))
    yield model, refs
    model.set_attn_implementation("sdpa")


GREEDY = dict(max_new_tokens=64, do_sample=False, min_new_tokens=64)


@pytest.mark.parametrize("packed", [False, True])
def test_smollm2_8_bit_greedy_text_is_dynamic_caches(smollm2, packed: bool) -> None:
    model, refs = smollm2
    model.set_attn_implementation("sdpa")
    if packed:
        seedance.hf.use_packed_attention(model)
    for i, (ids, want) in enumerate(refs):
        cache = seedance.hf.KVCache(bits="8")
        # Transformers 5's name, and the deprecated past_key_values= on one prompt.
        if i == 0:
            with pytest.warns(FutureWarning, match="past_key_values"):
                got = model.generate(**ids, past_key_values=cache, **GREEDY)
        else:
            got = model.generate(**ids, cache=cache, **GREEDY)
        assert got.tolist() == want.tolist(), i
        assert cache.get_seq_length() == got.shape[1] - 1
        assert all(layer.packed == packed for layer in cache.layers)
        assert cache.nbytes < cache.get_seq_length() * 30 * 192 * 2 * 4  # below FP32's bytes
