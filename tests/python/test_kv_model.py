"""The C++ llama2.c engine against a NumPy forward pass written here from the
llama2.c checkpoint layout (include/seedance/kv/llama.h)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import DATA, require_data
from seedance import _core

MODEL = DATA / "tiny-llama" / "aidreams260K.bin"


def load(path):
    raw = path.read_bytes()
    dim, hidden, layers, heads, kv_heads, vocab, seq = np.frombuffer(raw, np.int32, 7)
    w = np.frombuffer(raw, np.float32, offset=28)
    hs = dim // heads
    kv = hs * kv_heads
    shapes = [("emb", (vocab, dim)), ("rms_att", (layers, dim)), ("wq", (layers, dim, dim)),
              ("wk", (layers, kv, dim)), ("wv", (layers, kv, dim)), ("wo", (layers, dim, dim)),
              ("rms_ffn", (layers, dim)), ("w1", (layers, hidden, dim)),
              ("w2", (layers, dim, hidden)), ("w3", (layers, hidden, dim)), ("rms_final", (dim,))]
    t, at = {}, 0
    for name, shape in shapes:
        n = int(np.prod(shape))
        t[name] = w[at:at + n].reshape(shape).astype(np.float64)
        at += n
    cfg = dict(dim=int(dim), layers=int(layers), heads=int(heads), kv_heads=int(kv_heads), hs=int(hs))
    return cfg, t


def forward_all(cfg, t, tokens):
    """Logits for each position, in float64, with a plain KV cache."""
    hs, heads = cfg["hs"], cfg["heads"]
    kcache = [[] for _ in range(cfg["layers"])]
    vcache = [[] for _ in range(cfg["layers"])]

    def rms(x, w):
        return w * x / np.sqrt(np.mean(x * x) + 1e-5)

    def rope(v, pos):
        v = v.copy()
        i = np.arange(0, v.size, 2)
        freq = 1.0 / 10000.0 ** ((i % hs) / hs)
        c, s = np.cos(pos * freq), np.sin(pos * freq)
        a, b = v[i].copy(), v[i + 1].copy()
        v[i], v[i + 1] = a * c - b * s, a * s + b * c
        return v

    out = []
    for pos, tok in enumerate(tokens):
        x = t["emb"][tok].copy()
        for l in range(cfg["layers"]):
            xb = rms(x, t["rms_att"][l])
            q = rope(t["wq"][l] @ xb, pos)
            k = rope(t["wk"][l] @ xb, pos)
            v = t["wv"][l] @ xb
            kcache[l].append(k)
            vcache[l].append(v)
            K, V = np.array(kcache[l]), np.array(vcache[l])
            group = heads // cfg["kv_heads"]
            att_out = np.zeros(cfg["dim"])
            for h in range(heads):
                kh = (h // group) * hs
                sc = K[:, kh:kh + hs] @ q[h * hs:(h + 1) * hs] / np.sqrt(hs)
                p = np.exp(sc - sc.max())
                p /= p.sum()
                att_out[h * hs:(h + 1) * hs] = p @ V[:, kh:kh + hs]
            x = x + t["wo"][l] @ att_out
            xb = rms(x, t["rms_ffn"][l])
            h1 = t["w1"][l] @ xb
            x = x + t["w2"][l] @ ((h1 / (1 + np.exp(-h1))) * (t["w3"][l] @ xb))
        out.append(t["emb"] @ rms(x, t["rms_final"]))
    return np.array(out)


def test_engine_matches_numpy_forward() -> None:
    require_data(MODEL)
    cfg, t = load(MODEL)
    tokens = [1, 400, 37, 291, 5, 300, 12, 100, 7, 450, 3, 64]
    ref = forward_all(cfg, t, tokens)
    got = np.array(_core.kv_logits(str(MODEL), tokens))
    assert got.shape == ref.shape == (len(tokens), 512)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    assert (got.argmax(1) == ref.argmax(1)).all()


def test_quantized_cache_changes_little_at_8_bits() -> None:
    require_data(MODEL)
    tokens = [1, 400, 37, 291, 5, 300, 12, 100, 7, 450, 3, 64] * 4
    full = np.array(_core.kv_logits(str(MODEL), tokens))
    q8 = np.array(_core.kv_logits(str(MODEL), tokens, "8", 16, 0))
    assert np.abs(full - q8).max() < 0.1
    assert not np.array_equal(full, q8)  # the cache really was quantized
