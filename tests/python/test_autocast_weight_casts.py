"""The planner's memory for DDP under autocast (ZeRO 0 under `framework: fsdp`) against PyTorch:
autocast casts every matmul's fp32 weight to bf16, keeps each cast in its cache until the
outermost autocast region ends (after the forward pass and the loss), and saves it for the
backward pass unless the layer is checkpointed. Measured on a Llama built from its config under
CPU autocast: the casts autograd saves (saved_tensors_hooks) without checkpointing, and what the
cache adds to the forward pass's peak with every layer checkpointed (the profiler's allocation
count, cache on against cache off). The planner adds the same bytes with and without
recomputation: the layers' and the LM head's casts, the norms' few fp32 weights counted with
their layers."""

from __future__ import annotations

import json
import pathlib

import pytest

import seedance

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

LAYERS, HIDDEN, HEADS, FFN, VOCAB, SEQ = 4, 256, 4, 688, 1000, 16


def llama(checkpointing: bool):
    config = transformers.LlamaConfig(hidden_size=HIDDEN, intermediate_size=FFN,
                                      num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                      num_key_value_heads=HEADS, vocab_size=VOCAB,
                                      tie_word_embeddings=False)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).train()
    if checkpointing:
        model.activation_checkpointing_enable(
            activation_checkpointing_kwargs={"use_reentrant": False})
    return model


def saved_weight_casts() -> int:
    """Bytes of distinct bf16 tensors shaped as a 2-D weight (or its transpose) that autograd
    saves in a forward pass under autocast, without checkpointing."""
    model = llama(checkpointing=False)
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
            model(input_ids=ids, labels=ids, use_cache=False)
    return sum(seen.values())


def forward_peak(tmp_path: pathlib.Path, cache: bool) -> int:
    """Bytes allocated at the peak of a checkpointed forward pass and loss under autocast, above
    what was allocated when it began."""
    model = llama(checkpointing=True)
    ids = torch.randint(VOCAB, (1, SEQ))
    profiler = torch.profiler
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU],
                          profile_memory=True) as prof:
        torch.zeros(1)  # the first allocation event: the baseline
        with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=cache):
            model(input_ids=ids, labels=ids, use_cache=False)
    trace = tmp_path / f"cache-{cache}.json"
    prof.export_chrome_trace(str(trace))
    totals = [e["args"]["Total Allocated"] for e in json.loads(trace.read_text())["traceEvents"]
              if e.get("name") == "[memory]"]
    return max(totals) - totals[0]


def job(recompute: str) -> dict:
    return {"name": "autocast", "framework": "fsdp",
            "model": {"family": "llama", "layers": LAYERS, "hidden_size": HIDDEN,
                      "attention_heads": HEADS, "kv_heads": HEADS, "ffn_size": FFN,
                      "vocab_size": VOCAB, "sequence_length": SEQ, "tie_embeddings": False},
            "training": {"global_batch": 1, "micro_batch": 1, "precision": "bf16",
                         "optimizer": "adamw"},
            "hardware": {"gpu": "H100-SXM", "gpus_per_node": 1, "nodes": 1},
            "parallelism": {"zero_stage": 0, "recompute": recompute}}


def planned_casts(recompute: str) -> int:
    report = seedance.optimize(job(recompute), evaluate_only=True)
    fp32_states = report["derived"]["parameters"] * 16  # weights, gradients, Adam's moments
    return report["before"]["memory"]["model_state_bytes"] - fp32_states


def test_ddp_under_autocast_keeps_the_weights_casts_the_planner_counts(tmp_path):
    layer = 4 * HIDDEN * HIDDEN + 3 * HIDDEN * FFN  # a layer's matmul weights
    norms = 2 * LAYERS * HIDDEN * 2  # bf16 bytes the planner counts for the fp32 norms
    # Without checkpointing autograd saves every layer's and the head's cast.
    saved = saved_weight_casts()
    assert saved == (LAYERS * layer + VOCAB * HIDDEN) * 2
    assert planned_casts("none") == saved + norms
    # With every layer checkpointed the cache still holds the layers' casts to the end of the
    # forward pass: the peak's excess over the same pass without the cache is within 5% of them
    # (one layer's casts live briefly either way). The planner counts the same bytes.
    cached = forward_peak(tmp_path, cache=True) - forward_peak(tmp_path, cache=False)
    assert cached == pytest.approx(LAYERS * layer * 2, rel=0.05)
    assert planned_casts("full") == planned_casts("none")
