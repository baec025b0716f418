"""The planner's memory for DDP under autocast (ZeRO 0 under `framework: fsdp`) against PyTorch:
autocast saves each matmul's bf16 cast of its fp32 weight for the backward pass unless the layer
is recomputed (the LM head's always). The bytes PyTorch saves, counted with saved_tensors_hooks on
a Llama built from its config under CPU autocast, are what the planner adds to the model states,
up to the norms' weights, which stay fp32 and which the planner counts with their layers."""

from __future__ import annotations

import pytest

import seedance

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

LAYERS, HIDDEN, HEADS, FFN, VOCAB, SEQ = 4, 256, 4, 688, 1000, 64


def saved_weight_casts(checkpointing: bool) -> int:
    """Bytes of distinct bf16 tensors shaped as a 2-D weight (or its transpose) that autograd
    saves in a forward pass under autocast."""
    config = transformers.LlamaConfig(hidden_size=HIDDEN, intermediate_size=FFN,
                                      num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                      num_key_value_heads=HEADS, vocab_size=VOCAB,
                                      tie_word_embeddings=False)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).train()
    if checkpointing:
        model.activation_checkpointing_enable(
            activation_checkpointing_kwargs={"use_reentrant": False})
    # A linear may save its weight's cast transposed (the LM head here does).
    shapes = {s for p in model.parameters() if p.dim() == 2
              for s in (tuple(p.shape), tuple(reversed(p.shape)))}
    seen: dict[int, int] = {}

    def pack(t):
        if t.dtype == torch.bfloat16 and tuple(t.shape) in shapes:
            seen[t.data_ptr()] = t.numel() * t.element_size()
        return t

    ids = torch.randint(VOCAB, (1, SEQ))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            model(input_ids=ids, labels=ids, use_cache=False).loss
    return sum(seen.values())


def job(recompute: str) -> dict:
    return {"name": "autocast", "framework": "fsdp",
            "model": {"family": "llama", "layers": LAYERS, "hidden_size": HIDDEN,
                      "attention_heads": HEADS, "kv_heads": HEADS, "ffn_size": FFN,
                      "vocab_size": VOCAB, "sequence_length": SEQ, "tie_embeddings": False},
            "training": {"global_batch": 1, "micro_batch": 1, "precision": "bf16",
                         "optimizer": "adamw"},
            "hardware": {"gpu": "H100-SXM", "gpus_per_node": 1, "nodes": 1},
            "parallelism": {"zero_stage": 0, "recompute": recompute}}


def test_ddp_under_autocast_keeps_the_weights_casts_the_planner_counts():
    without, with_checkpointing = saved_weight_casts(False), saved_weight_casts(True)
    report = seedance.optimize(job("full"), evaluate_only=True)
    fp32_states = report["derived"]["parameters"] * 16  # weights, gradients, Adam's moments
    # With every layer checkpointed, the LM head's cast alone stays saved.
    assert with_checkpointing == VOCAB * HIDDEN * 2
    assert report["before"]["memory"]["model_state_bytes"] - fp32_states == with_checkpointing
    # Without, every layer's too, up to the norms' weights (fp32 in PyTorch, counted by the
    # planner with their layers).
    none = seedance.optimize(job("none"), evaluate_only=True)["before"]["memory"]
    norms = 2 * LAYERS * HIDDEN * 2
    assert none["model_state_bytes"] - fp32_states == without + norms
