"""Writes the seeds of the gguf fuzz target (tests/fuzz/corpus/gguf/) with the `gguf` package:
a tiny Llama model (2 layers, width 32, 4 heads over 2 KV heads) whose matrices are Q8_0 or Q4_1
(norms F32), with a byte-level BPE vocabulary (the 256 byte tokens, a few merges, two control tokens).

    .venv/bin/python tests/fuzz/make_gguf_seeds.py tests/fuzz/corpus/gguf
"""

from __future__ import annotations

import pathlib
import sys

import gguf
import numpy as np


def byte_chars() -> list[str]:
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = dict(zip(bs, cs))
    return [chr(table[b]) for b in range(256)]


def write(path: pathlib.Path, quant: gguf.GGMLQuantizationType, tied: bool) -> None:
    rng = np.random.default_rng(0)
    dim, hidden, layers, heads, kv_heads = 32, 64, 2, 4, 2
    merges = ["H e", "l l", "He ll", "Ġ w", "o r"]
    tokens = ["<|endoftext|>", "<|im_start|>"] + byte_chars() + ["He", "ll", "Hell", "Ġw", "or"]
    types = [3, 3] + [1] * (len(tokens) - 2)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(layers)
    w.add_context_length(64)
    w.add_embedding_length(dim)
    w.add_feed_forward_length(hidden)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(dim // heads)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(1)
    w.add_eos_token_id(0)
    kv = dim // heads * kv_heads

    def tensor(name: str, shape: tuple[int, ...], q: gguf.GGMLQuantizationType) -> None:
        data = rng.standard_normal(shape).astype(np.float32) * 0.1
        if q != gguf.GGMLQuantizationType.F32:
            data = gguf.quants.quantize(data, q)
        w.add_tensor(name, data, raw_dtype=q)

    f32 = gguf.GGMLQuantizationType.F32
    tensor("token_embd.weight", (len(tokens), dim), quant)
    for layer in range(layers):
        p = f"blk.{layer}."
        tensor(p + "attn_norm.weight", (dim,), f32)
        tensor(p + "ffn_norm.weight", (dim,), f32)
        tensor(p + "attn_q.weight", (dim, dim), quant)
        tensor(p + "attn_k.weight", (kv, dim), quant)
        tensor(p + "attn_v.weight", (kv, dim), quant)
        tensor(p + "attn_output.weight", (dim, dim), quant)
        tensor(p + "ffn_gate.weight", (hidden, dim), quant)
        tensor(p + "ffn_up.weight", (hidden, dim), quant)
        tensor(p + "ffn_down.weight", (dim, hidden), quant)
    tensor("output_norm.weight", (dim,), f32)
    if not tied:
        tensor("output.weight", (len(tokens), dim), quant)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main() -> None:
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write(out / "tiny_q8_0.gguf", gguf.GGMLQuantizationType.Q8_0, tied=True)
    write(out / "tiny_q4_1_untied.gguf", gguf.GGMLQuantizationType.Q4_1, tied=False)


if __name__ == "__main__":
    main()
