"""The recomputation planner (MEM-5) against brute force, and its plan applied to real
Hugging Face models: the gradients are those of the unmodified model, and the bytes autograd
saves in the forward pass fall by what the plan drops."""

from __future__ import annotations

import itertools
import random

import pytest
import torch

import seedance
from seedance.torch import apply_recompute_plan

transformers = pytest.importorskip("transformers")


def brute_force(layers, budget):
    best = None
    choices = [list(itertools.product([False, True], repeat=len(l["parts"]))) for l in layers]
    for pick in itertools.product(*choices):
        kept = largest = 0
        seconds = 0.0
        for layer, drop in zip(layers, pick):
            kept += layer["kept_bytes"]
            d = 0
            for part, dropped in zip(layer["parts"], drop):
                if dropped:
                    d += part["bytes"]
                    seconds += part["recompute_s"]
                else:
                    kept += part["bytes"]
            largest = max(largest, d)
        if kept + largest <= budget and (best is None or seconds < best - 1e-12):
            best = seconds
    return best


def test_plan_matches_brute_force():
    rng = random.Random(7)
    for _ in range(150):
        layers = [{"kept_bytes": rng.randint(0, 8),
                   "parts": [{"name": f"p{j}", "bytes": rng.randint(0, 30),
                              "recompute_s": rng.randint(0, 20) / 10}
                             for j in range(rng.randint(0, 3))]}
                  for _ in range(rng.randint(1, 4))]
        total = sum(l["kept_bytes"] + sum(p["bytes"] for p in l["parts"]) for l in layers)
        for budget in (0, total // 3, total // 2, total):
            plan = seedance.plan_recompute(layers, budget)
            expected = brute_force(layers, budget)
            assert plan["fits"] == (expected is not None)
            if expected is not None:
                assert plan["recompute_s"] == pytest.approx(expected, abs=1e-9)
                assert plan["activation_bytes"] <= budget


def test_bad_layers_name_the_place():
    with pytest.raises(seedance.SeedanceError) as e:
        seedance.plan_recompute([{"kept_bytes": 1, "parts": [{"name": "mlp"}]}], 10)
    assert "layers[0].parts" in str(e.value)


def saved_bytes(model, batch):
    """Bytes of the tensors autograd saves during one forward pass."""
    total = 0

    def pack(t):
        nonlocal total
        total += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = model(**batch).loss
    return total, loss


def tiny(kind: str):
    torch.manual_seed(0)
    if kind == "llama":
        config = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=176,
                                          num_hidden_layers=4, num_attention_heads=4,
                                          num_key_value_heads=2, max_position_embeddings=64)
        model = transformers.LlamaForCausalLM(config)
    else:
        config = transformers.GPT2Config(vocab_size=128, n_embd=64, n_layer=4, n_head=4,
                                         n_positions=64, resid_pdrop=0, embd_pdrop=0,
                                         attn_pdrop=0, bos_token_id=0, eos_token_id=0)
        model = transformers.GPT2LMHeadModel(config)
    model.train()
    ids = torch.randint(0, 128, (2, 32), generator=torch.Generator().manual_seed(1))
    return model, {"input_ids": ids, "labels": ids}


@pytest.mark.parametrize("kind", ["llama", "gpt2"])
def test_plan_applied_to_a_real_model(kind):
    reference, batch = tiny(kind)
    ref_saved, ref_loss = saved_bytes(reference, batch)
    ref_loss.backward()
    ref_grads = {n: p.grad.clone() for n, p in reference.named_parameters()}

    model, _ = tiny(kind)
    plan = {"dropped_per_layer": [["mlp"], ["attention", "mlp"], [], ["norms", "mlp"]]}
    wrapped = apply_recompute_plan(model, plan)
    assert any(name.endswith("mlp") for name in wrapped)
    assert len(wrapped) == 6  # three MLPs, one attention, two norms
    assert apply_recompute_plan(model, plan) == []  # applying twice wraps nothing more
    saved, loss = saved_bytes(model, batch)
    loss.backward()
    assert loss.item() == ref_loss.item()
    for name, p in model.named_parameters():
        torch.testing.assert_close(p.grad, ref_grads[name], rtol=1e-5, atol=1e-7)
    # Each dropped MLP keeps only its input: its intermediates (2-3 tensors of 2 x 32 x ffn
    # floats) are no longer saved.
    assert saved < ref_saved
    mlp_intermediate = 2 * 32 * (176 if kind == "llama" else 256) * 4
    assert ref_saved - saved >= 3 * mlp_intermediate


def test_plan_errors():
    model, _ = tiny("llama")
    with pytest.raises(ValueError, match="unknown part"):
        apply_recompute_plan(model, {"dropped_per_layer": [["experts"]]})
    with pytest.raises(ValueError, match="5 layers"):
        apply_recompute_plan(model, {"dropped_per_layer": [[]] * 5})
