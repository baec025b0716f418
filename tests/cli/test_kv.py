"""`seedancectl kv eval` on the tiny Llama model: the targets of feature KV-1."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import DATA, require_data, run_on_tty

MODEL = DATA / "tiny-llama" / "aidreams260K.bin"
TOKENIZER = DATA / "tiny-llama" / "tok512.bin"


def kv_eval(binary, *args):
    require_data(MODEL)
    r = subprocess.run([str(binary), "kv", "eval", "--model", str(MODEL), "--tokenizer",
                        str(TOKENIZER), *map(str, args), "-o", "json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_8_bit_target(seedancectl):
    r = kv_eval(seedancectl, "--bits", "8", "--window", "0")
    assert r["kl_divergence_mean"] < 1e-3
    assert r["top1_agreement"] >= 0.99
    assert r["bits_per_value"] == 10.0  # 8 + 64 bits of min and scale per 32 values
    assert r["kv_bytes"] < r["kv_bytes_fp32"] / 2


def test_4_bit_target(seedancectl):
    r = kv_eval(seedancectl, "--bits", "4", "--window", "0")
    assert r["top1_agreement"] >= 0.97


def test_2_bit_with_a_32_token_window(seedancectl):
    r = kv_eval(seedancectl, "--bits", "2", "--window", "32")
    assert r["top1_agreement"] >= 0.90


def test_prompt_and_errors(seedancectl, tmp_path):
    r = kv_eval(seedancectl, "--bits", "fp8", "--prompt", "a gentle hum", "--tokens", "48")
    assert r["text"].startswith("a gentle hum")
    assert r["prompt_tokens"] > 0
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x00" * 40)
    p = subprocess.run([str(seedancectl), "kv", "eval", "--model", str(bad)],
                       capture_output=True, text=True)
    assert p.returncode == 1 and p.stderr.startswith("error: cannot load the model")
    p = subprocess.run([str(seedancectl), "kv", "eval", "--model", str(MODEL), "--bits", "3"],
                       capture_output=True, text=True)
    assert p.returncode == 2


def test_default_window_quantizes_and_a_covering_window_is_flagged(seedancectl):
    """The default FP32 window is a quarter of the sequence (it used to cover the tiny model's
    whole 128-token context, quantizing nothing and reporting KL 0 without a word); a window
    that covers the sequence is flagged, and so is one that leaves most of it in FP32."""
    r = kv_eval(seedancectl, "--bits", "2")
    assert r["window"] == 32 and r["tokens"] == 128
    assert r["kl_divergence_mean"] > 0 and r["packed_share"] > 0.5
    assert r["warnings"] == []
    covered = kv_eval(seedancectl, "--bits", "2", "--window", "128")
    assert covered["kl_divergence_mean"] == 0 and covered["packed_share"] == 0
    assert "nothing was quantized" in covered["warnings"][0]
    mostly = kv_eval(seedancectl, "--bits", "8", "--window", "80")
    assert 0 < mostly["packed_share"] < 0.5
    assert mostly["warnings"][0].startswith(f"only {round(mostly['packed_share'] * 100)}%")
    shown = subprocess.run([str(seedancectl), "kv", "eval", "--model", str(MODEL), "--bits", "2",
                            "--window", "128"], capture_output=True, text=True)
    assert shown.returncode == 0 and "nothing was quantized" in shown.stdout


def test_adaptive_widths_and_decision_log(seedancectl, tmp_path):
    log = tmp_path / "decisions.jsonl"
    # The tiny model's context is 128 tokens: lower the default 64K threshold to see both widths.
    r = kv_eval(seedancectl, "--bits", "adaptive", "--window", "0", "--long-context", "32",
                "--decision-log", log)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == sum(r["block_widths"].values()) == 12  # 3 key groups x 4 layers
    for d in lines:
        assert set(d) == {"seq_pos", "kv_len", "layer", "entropy", "laplace_b", "target_bw",
                          "reason"}
        if d["kv_len"] > 32 and d["entropy"] > 0.85:
            assert (d["target_bw"], d["reason"]) == (4, "high_entropy_long_context")
        else:
            assert d["target_bw"] == 6
    assert 4 < r["bits_per_value"] < 8
    default = kv_eval(seedancectl, "--bits", "adaptive", "--window", "0")
    assert default["block_widths"] == {"6": 12}  # below 64K tokens: the default 6 bits


def test_estimate(seedancectl):
    r = subprocess.run([str(seedancectl), "kv", "estimate", "--tokens", "1024", "--layers", "4",
                        "--kv-dim", "64", "--bits", "4", "--pcie-gen", "4", "-o", "json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    e = json.loads(r.stdout)
    values = 1024 * 4 * 64 * 2
    assert e["bits_per_value"] == 6.0  # 4 bits + 64 bits of min/scale per 32 values
    assert e["compressed_bytes"] == values * 6 // 8
    # Counts are JSON integers, not 196608.0.
    assert all(isinstance(e[k], int) for k in ("compressed_bytes", "decompressed_bytes", "n_access"))
    assert abs(e["pcie_gbytes_per_s"] - 31.508) < 1e-3
    assert abs(e["t_decomp_us"] - (e["t_pcie_us"] + e["t_hbm_us"])) < 1e-9
    # It leads with the figure to plan with; the serial KV-4 figure comes with its explanation.
    assert next(iter(e)) == "t_plan_us"
    moved = e["compressed_bytes"] + e["decompressed_bytes"]
    bandwidth_us = moved / (e["hbm_peak_gbytes_per_s"] * 1e9) * 1e6
    assert abs(e["t_plan_us"] - (e["t_pcie_us"] + bandwidth_us)) < 1e-6
    assert e["t_decomp_us"] > e["t_plan_us"]
    assert f"{e['t_decomp_us'] / e['t_plan_us']:.0f}x the plan figure" in e["notes"][0]
    table = subprocess.run([str(seedancectl), "kv", "estimate"], capture_output=True, text=True)
    assert table.stdout.splitlines()[0].startswith("t_plan_us"), table.stdout
    bad = subprocess.run([str(seedancectl), "kv", "estimate", "--hbm", "ddr5"],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "--hbm" in bad.stderr


def test_serve_bench(seedancectl):
    require_data(MODEL)
    r = subprocess.run([str(seedancectl), "kv", "serve-bench", "--model", str(MODEL), "--rate",
                        "300", "--duration", "0.5", "--max-batch", "4", "--max-delay-ms", "5",
                        "--gen-tokens", "8", "-o", "json"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    b = json.loads(r.stdout)
    for mode in ("batched", "unbatched"):
        x = b[mode]
        assert x["requests"] > 50 and x["completed"] == x["requests"]
        assert 0 < x["latency_ms"]["p50"] <= x["latency_ms"]["p99"]
    assert b["unbatched"]["batch_size_mean"] == 1
    assert 1 < b["batched"]["batch_size_mean"] <= 4
    bad = subprocess.run([str(seedancectl), "kv", "serve-bench", "--model", str(MODEL),
                          "--preferred", "9", "--max-batch", "8"], capture_output=True, text=True)
    assert bad.returncode == 1 and "--preferred" in bad.stderr


def test_error_grows_through_the_layers(seedancectl):
    e8 = kv_eval(seedancectl, "--bits", "8", "--window", "0")["layer_relative_error"]
    e4 = kv_eval(seedancectl, "--bits", "4", "--window", "0")["layer_relative_error"]
    assert len(e8) == len(e4) == 4
    assert all(a < b for a, b in zip(e8, e4))    # fewer bits, more error, at every layer
    assert e4[-1] > e4[0]                        # and it grows from the first layer to the last


def test_serve_bench_progress_on_a_terminal_only(seedancectl):
    """Requests done, against the expected count, on stderr when it is a terminal; nothing on a
    pipe."""
    require_data(MODEL)
    args = [str(seedancectl), "kv", "serve-bench", "--model", str(MODEL), "--rate", "40",
            "--duration", "0.5", "--gen-tokens", "4", "-o", "json"]
    on_tty, text = run_on_tty(args)
    assert on_tty.returncode == 0
    report = json.loads(on_tty.stdout)
    for run in ("batched", "unbatched"):
        done = report[run]["completed"]
        assert f"kv serve-bench {run}, requests done (about): {done} of 20" in text, text
    piped = subprocess.run(args, capture_output=True, timeout=120)
    assert piped.returncode == 0 and piped.stderr == b""
