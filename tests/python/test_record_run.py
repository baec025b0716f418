"""record_run: a real training run (a config-built Llama, CPU) writes its row of a runs table,
which `optimize --calibrate` reads back — the loop from a run to the planner, with no hand work.
The row's figures are checked against the run's own clock and batches."""

from __future__ import annotations

import csv
import statistics
import subprocess

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import seedance  # noqa: E402
from seedance.torch import enable  # noqa: E402
from seedance.torch import record  # noqa: E402
from seedance.torch.record import catalog_gpu  # noqa: E402

# The run happens on this machine's CPU; the row says which catalog GPU it stands for (a run on a
# GPU takes it from torch.cuda).
JOB = {"hardware": {"gpu": "H100-SXM"}, "framework": "fsdp"}


def tiny_llama():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=176,
                                      num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=64)
    return transformers.LlamaForCausalLM(config)


def train(path, steps=6, batch=4, seq=32, **extra):
    model = tiny_llama()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = torch.randint(0, 512, (steps * batch, seq))
    loader = torch.utils.data.DataLoader(data, batch_size=batch)
    session = enable(model, optimizer, loader, observe_only=True, record_run=str(path),
                     record_run_job=JOB, **extra)
    for ids in session:
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    seconds = list(session.recorder.step_seconds)
    session.close()
    return seconds


def rows(path):
    return list(csv.DictReader(path.open()))


def test_a_run_writes_its_row_and_the_planner_reads_it(tmp_path, seedancectl):
    path = tmp_path / "runs.csv"
    seconds = train(path)
    [row] = rows(path)
    assert row["kind"] == "run" and row["group"] == "own"
    # The model's shape from its config, the batch and sequence from the run.
    assert (row["layers"], row["hidden_size"], row["attention_heads"], row["kv_heads"],
            row["ffn_size"], row["vocab_size"], row["sequence_length"]) == (
        "2", "64", "4", "2", "176", "512", "32")
    assert (row["global_batch"], row["micro_batch"], row["gpu"], row["framework"]) == (
        "4", "4", "H100-SXM", "fsdp")
    # The median of the steps after the two warm-up steps, to the row's 6 digits.
    expected = statistics.median(seconds[2:])
    assert float(row["published_step_s"]) == pytest.approx(expected, rel=1e-5)
    assert float(row["published_tokens_per_s_per_gpu"]) == pytest.approx(4 * 32 / expected,
                                                                           rel=1e-5)
    # A second run appends; ids stay unique, and both rows calibrate a plan.
    train(path)
    assert [r["id"] for r in rows(path)] == [rows(path)[0]["id"], rows(path)[1]["id"]]
    assert len({r["id"] for r in rows(path)}) == 2
    report = seedance.optimize(evaluate_only=True, calibrate=path)
    assert [r["id"] for r in report["calibration"]["runs"]] == [r["id"] for r in rows(path)]
    cli = subprocess.run([str(seedancectl), "optimize", "--evaluate-only", "--calibrate",
                          str(path), "-o", "json"], capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr


def test_too_few_steps_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="warm-up"):
        train(tmp_path / "runs.csv", steps=2)
    assert not (tmp_path / "runs.csv").exists()


def test_device_names_map_to_catalog_ids():
    assert catalog_gpu("NVIDIA H100 80GB HBM3") == "H100-SXM"
    assert catalog_gpu("NVIDIA H200") == "H200"
    assert catalog_gpu("NVIDIA A100-SXM4-80GB") == "A100-80GB"
    assert catalog_gpu("NVIDIA A100-SXM4-40GB") == "A100-40GB"
    assert catalog_gpu("NVIDIA L4") == "L4"
    assert catalog_gpu("NVIDIA L40S") == "L40S"
    assert catalog_gpu("Some CPU") is None


def test_the_trainer_callback_records_the_run(tmp_path):
    from seedance.hf import SeedanceCallback
    path = tmp_path / "runs.csv"
    model = tiny_llama()
    data = [{"input_ids": torch.randint(0, 512, (32,)), "labels": torch.randint(0, 512, (32,))}
            for _ in range(24)]
    args = transformers.TrainingArguments(output_dir=str(tmp_path / "out"), max_steps=6,
                                          per_device_train_batch_size=2,
                                          gradient_accumulation_steps=2, report_to=[],
                                          save_strategy="no", logging_strategy="no",
                                          use_cpu=True)
    callback = SeedanceCallback(observe_only=True, record_run=str(path), record_run_job=JOB)
    transformers.Trainer(model=model, args=args, train_dataset=data,
                         callbacks=[callback]).train()
    [row] = rows(path)
    # Two micro-batches of two per optimizer step on one process.
    assert (row["global_batch"], row["micro_batch"], row["sequence_length"]) == ("4", "2", "32")
    assert float(row["published_step_s"]) > 0


def test_memory_is_counted_as_nvidia_smi_reads_it(monkeypatch):
    """The recorded peak is the allocator's peak reservation plus what the process holds outside
    the allocator (device used - reserved), as the calibration set's nvidia-smi figures count."""
    gib = 1 << 30
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (30 * gib, 80 * gib))  # 50 used
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda: 47 * gib)  # 3 outside
    monkeypatch.setattr(torch.cuda, "max_memory_reserved", lambda: 60 * gib)
    assert record._peak_device_bytes() == 63 * gib
    # Nothing outside (or a reading taken while the allocator grew): never below the peak.
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda: 52 * gib)
    assert record._peak_device_bytes() == 60 * gib
