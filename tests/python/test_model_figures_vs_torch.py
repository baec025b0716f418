"""Parameter counts of `optimize` against real PyTorch models of the same shape.

For random small shapes of both families, the model is built from torch.nn
modules (Llama: RMSNorm weights, bias-free projections, SwiGLU; GPT-2:
LayerNorm, biased projections, GELU MLP, learned positions) and its
parameters are counted with numel(): an independent reference for the
formulas in src/plan/model_figures.cc.
"""

from __future__ import annotations

import random

import pytest

import seedance

torch = pytest.importorskip("torch")
nn = torch.nn


class LlamaBlock(nn.Module):
    def __init__(self, h: int, heads: int, kv_heads: int, ffn: int) -> None:
        super().__init__()
        head_dim = h // heads
        self.attn_norm = nn.Parameter(torch.ones(h))
        self.q = nn.Linear(h, h, bias=False)
        self.k = nn.Linear(h, kv_heads * head_dim, bias=False)
        self.v = nn.Linear(h, kv_heads * head_dim, bias=False)
        self.o = nn.Linear(h, h, bias=False)
        self.ffn_norm = nn.Parameter(torch.ones(h))
        self.gate = nn.Linear(h, ffn, bias=False)
        self.up = nn.Linear(h, ffn, bias=False)
        self.down = nn.Linear(ffn, h, bias=False)


class Llama(nn.Module):
    def __init__(self, cfg: dict) -> None:
        super().__init__()
        h = cfg["hidden_size"]
        self.embed = nn.Embedding(cfg["vocab_size"], h)
        self.blocks = nn.ModuleList(
            LlamaBlock(h, cfg["attention_heads"], cfg["kv_heads"], cfg["ffn_size"])
            for _ in range(cfg["layers"]))
        self.norm = nn.Parameter(torch.ones(h))
        self.head = nn.Linear(h, cfg["vocab_size"], bias=False)
        if cfg["tie_embeddings"]:
            self.head.weight = self.embed.weight


class GptBlock(nn.Module):
    def __init__(self, h: int, heads: int, kv_heads: int, ffn: int) -> None:
        super().__init__()
        kv_dim = kv_heads * (h // heads)
        self.ln1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, h + 2 * kv_dim)
        self.proj = nn.Linear(h, h)
        self.ln2 = nn.LayerNorm(h)
        self.fc = nn.Linear(h, ffn)
        self.out = nn.Linear(ffn, h)


class Gpt(nn.Module):
    def __init__(self, cfg: dict) -> None:
        super().__init__()
        h = cfg["hidden_size"]
        self.wte = nn.Embedding(cfg["vocab_size"], h)
        self.wpe = nn.Embedding(cfg["sequence_length"], h)
        self.blocks = nn.ModuleList(
            GptBlock(h, cfg["attention_heads"], cfg["kv_heads"], cfg["ffn_size"])
            for _ in range(cfg["layers"]))
        self.ln_f = nn.LayerNorm(h)
        self.head = nn.Linear(h, cfg["vocab_size"], bias=False)
        if cfg["tie_embeddings"]:
            self.head.weight = self.wte.weight


def random_config(rng: random.Random, family: str) -> dict:
    heads = rng.choice([1, 2, 4, 8])
    return {
        "family": family,
        "layers": rng.randint(1, 3),
        "hidden_size": heads * rng.choice([4, 8, 16]),
        "attention_heads": heads,
        "kv_heads": rng.choice([d for d in (1, 2, 4, 8) if heads % d == 0]),
        "ffn_size": rng.randint(1, 64),
        "vocab_size": rng.randint(2, 300),
        "sequence_length": rng.randint(1, 64),
        "tie_embeddings": rng.random() < 0.5,
    }


def job_yaml(cfg: dict) -> str:
    model = ", ".join(f"{k}: {str(v).lower()}" for k, v in cfg.items())
    return ("name: t\n"
            f"model: {{{model}}}\n"
            "serving: {context_length: 1, concurrent_requests: 1}\n"
            "hardware: {gpu: L4, gpus_per_node: 1}\n")


@pytest.mark.parametrize("family", ["llama", "gpt"])
def test_parameter_count_matches_torch(family):
    rng = random.Random(7 if family == "llama" else 11)
    for _ in range(25):
        cfg = random_config(rng, family)
        model = Llama(cfg) if family == "llama" else Gpt(cfg)
        expected = sum(p.numel() for p in model.parameters())  # shared weights counted once
        report = seedance.optimize(yaml=job_yaml(cfg))
        assert report["derived"]["parameters"] == expected, cfg
