"""Regression tests for the findings of the bad-input campaign against the CLI (issue 17), each
with the smallest input that showed it. The numbers in the names are the campaign's findings.
Numeric flags have their own table test: test_numeric_flags.py."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest

from conftest import DATA, require_data

REPO = pathlib.Path(__file__).resolve().parents[2]


def run(seedancectl, *args, timeout: int = 60, **kw) -> subprocess.CompletedProcess:
    out = subprocess.run([str(seedancectl), *map(str, args)], capture_output=True, timeout=timeout,
                         **kw)
    assert out.returncode >= 0, f"killed by signal {-out.returncode}: {args}"
    return out


def err(out: subprocess.CompletedProcess) -> str:
    return out.stderr.decode("utf-8", "replace")


# 1. Overflowing plans -------------------------------------------------------------------------

def test_1_check_refuses_plans_whose_end_overflows(seedancectl, tmp_path):
    lifetimes = tmp_path / "l.csv"
    lifetimes.write_text("id,lower,upper,size\na,0,2,1000\nb,0,2,1000\n")
    plan = tmp_path / "p.csv"
    plan.write_text("id,lower,upper,size,offset\na,0,2,1000,9223372036854775000\n"
                    "b,0,2,1000,9223372036854775000\n")
    out = run(seedancectl, "mem", "check", "--input", lifetimes, "--offsets", plan)
    assert out.returncode == 1
    assert f"{plan}:2: offset" in err(out) and "supported arena" in err(out)


def test_1_plan_refuses_sizes_that_add_past_the_arena(seedancectl, tmp_path):
    big = tmp_path / "big.csv"
    big.write_text("id,lower,upper,size\n" +
                   "".join(f"b{i},0,1,{2**50}\n" for i in range(8200)))
    out = run(seedancectl, "mem", "plan", "--input", big, "-o", "json")
    assert out.returncode == 1 and out.stdout == b""
    assert f"{big}:4098: size" in err(out)


# 2. Aborts and crashes from input bytes ----------------------------------------------------------

def test_2_non_utf8_bytes_reach_json_as_replacement_characters(seedancectl, tmp_path):
    job = tmp_path / "job.yaml"
    text = (REPO / "examples" / "default-job.yaml").read_bytes()
    job.write_bytes(text.replace(b"name: llama-7b-pretrain", b"name: llama-\xff\xfe-pretrain"))
    out = run(seedancectl, "optimize", job, "--dry-run", "-o", "json")
    assert out.returncode == 0, err(out)
    assert json.loads(out.stdout)["job"]["name"] == "llama-\ufffd\ufffd-pretrain"


def test_2_nccl_log_with_a_huge_line_and_a_huge_number(seedancectl, tmp_path):
    log = tmp_path / "nccl.log"
    ring = "n:1:2 [0] NCCL INFO Channel 00/01 :" + "".join(f"    {i}" for i in range(8192))
    log.write_text(ring + "\n")
    out = run(seedancectl, "comm", "nccl-log", "--input", log, "-o", "json")
    assert out.returncode == 0, err(out)
    assert json.loads(out.stdout)["rings"][0]["ranks"].endswith("8190 8191")
    log.write_text("n:1:2 [0] NCCL INFO comm 0x5 rank 99999999999999999999 nranks 4 cudaDev 0 "
                   "- Init COMPLETE\n")
    out = run(seedancectl, "comm", "nccl-log", "--input", log)
    assert out.returncode == 1 and f"{log}:1" in err(out)


def test_2_kv_eval_with_a_tokenizer_too_small_for_the_model(seedancectl, tmp_path):
    model = require_data(DATA / "tiny-llama" / "aidreams260K.bin")
    tok = tmp_path / "tok.bin"
    tok.write_bytes(b"\x00" * 12)
    out = run(seedancectl, "kv", "eval", "--model", model, "--tokenizer", tok)
    assert out.returncode == 1 and str(tok) in err(out)


# 3. Values that exhaust memory -------------------------------------------------------------------

def test_3_serve_bench_arrivals_are_bounded(seedancectl):
    model = require_data(DATA / "tiny-llama" / "aidreams260K.bin")
    out = run(seedancectl, "kv", "serve-bench", "--model", model, "--rate", "100000",
              "--duration", "3600")
    assert out.returncode == 1 and "--rate" in err(out)


@pytest.mark.parametrize("args, flag", [
    (["simulate", "--nodes", "n", "--pods", "p", "--protocol", "events", "--slo", "LS=nan"], "--slo"),
    (["simulate", "--nodes", "n", "--pods", "p", "--protocol", "events", "--slo", "LS=1,LS=2"], "--slo"),
    (["simulate", "--nodes", "n", "--pods", "p", "--protocol", "events", "--slo", "LS= 5"], "--slo"),
    (["probe", "--once", "--sample-interval", "nan"], "--sample-interval"),
    (["probe", "--once", "--sample-interval", "0x10s"], "--sample-interval"),
])
def test_3_text_options_with_numbers_are_strict(seedancectl, tmp_path, args, flag):
    nodes = require_data(DATA / "alibaba-gpu-2023" / "openb_node_list_gpu_node.csv")
    pods = require_data(DATA / "alibaba-gpu-2023" / "openb_pod_list_default.csv")
    args = [str(nodes) if a == "n" else str(pods) if a == "p" else a for a in args]
    out = run(seedancectl, *args)
    assert out.returncode in (1, 2) and flag in err(out), err(out)


# 4. Tiny inputs amplified ------------------------------------------------------------------------

@pytest.mark.parametrize("line, why", [
    ("6214e9,10000000", "node num"), ("a, 5", "node num"), ("a,+4", "node num"),
    ("a,0x10", "node num"), ("a,0", "node num")])
def test_4_philly_vc_counts_are_bounded_and_strict(seedancectl, tmp_path, line, why):
    vc = tmp_path / "vc.csv"
    vc.write_text(f"vc,node num\n{line}\n")
    jobs = tmp_path / "jobs.csv"
    jobs.write_text("timestamp,duration,num_gpus,vc\n")
    out = run(seedancectl, "simulate", "--nodes", vc, "--pods", jobs, "--protocol", "events")
    assert out.returncode == 1 and f"{vc}:2: {why}" in err(out), err(out)


def test_8_philly_duplicate_vc_is_refused(seedancectl, tmp_path):
    vc = tmp_path / "vc.csv"
    vc.write_text("vc,node num\na,2\na,3\n")
    out = run(seedancectl, "simulate", "--nodes", vc, "--pods", vc, "--protocol", "events")
    assert out.returncode == 1 and f"{vc}:3: vc" in err(out)


def test_4_sysfs_node_list_of_a_million_nodes(seedancectl, tmp_path):
    sys_node = tmp_path / "sys" / "devices" / "system" / "node"
    sys_node.mkdir(parents=True)
    (sys_node / "online").write_text("0-1048575\n")
    out = run(seedancectl, "topo", "show", "--root", tmp_path, "-o", "json")
    assert out.returncode == 0, err(out)
    report = json.loads(out.stdout)
    assert report["numa_nodes"] == [] or len(report["numa_nodes"]) <= 1024
    assert "below 1024" in out.stdout.decode()


def test_4_optimize_sequence_length_names_the_key(seedancectl, tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text((REPO / "examples" / "default-job.yaml").read_text()
                   .replace("sequence_length: 4096", "sequence_length: 100000000"))
    out = run(seedancectl, "optimize", job)
    assert out.returncode == 1 and "model.sequence_length" in err(out)


# 5. Unbounded reads ------------------------------------------------------------------------------

def test_5_devices_fifos_and_directories_are_refused(seedancectl, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in ["/dev/zero", fifo, tmp_path]:
        out = run(seedancectl, "mem", "plan", "--input", path, timeout=20)
        assert out.returncode == 1 and str(path) in err(out), (path, err(out))
    model = require_data(DATA / "tiny-llama" / "aidreams260K.bin")
    out = run(seedancectl, "kv", "eval", "--model", model, "--tokenizer", "/dev/zero")
    assert out.returncode == 1 and "not a regular file" in err(out)


# 7. Silent wrong exits ---------------------------------------------------------------------------

def test_7_a_full_or_closed_stdout_fails(seedancectl):
    with open("/dev/full", "w") as full:
        out = subprocess.run([str(seedancectl), "catalog", "list"], stdout=full,
                             stderr=subprocess.PIPE, timeout=30)
    assert out.returncode == 1 and b"standard output" in out.stderr
    out = subprocess.run(f"{seedancectl} catalog list >&-", shell=True, stderr=subprocess.PIPE,
                         timeout=30)
    assert out.returncode == 1


@pytest.mark.parametrize("args, flag", [
    (["mem", "plan", "--input", "x.csv", "--offsets-out", ""], "--offsets-out"),
    (["mem", "plan", "--input", "x.csv", "--offsets-out", "/no/such/dir/p.csv"], "--offsets-out"),
    (["topo", "show", "--root", "/no/such/dir"], "--root"),
    (["topo", "show", "--root", "/etc/hostname"], "--root"),
    (["probe", "--once", "--root", "/no/such/dir"], "--root"),
])
def test_7_bad_paths_fail_before_any_work(seedancectl, args, flag):
    out = run(seedancectl, *args)
    assert out.returncode == 2 and flag in err(out)


# 9. Errors that say where ------------------------------------------------------------------------

def test_9_a_bom_in_a_csv_header_is_not_part_of_the_column(seedancectl, tmp_path):
    lifetimes = tmp_path / "bom.csv"
    lifetimes.write_bytes(b"\xef\xbb\xbfid,lower,upper,size\na,0,2,64\n")
    out = run(seedancectl, "mem", "plan", "--input", lifetimes, "-o", "json")
    assert out.returncode == 0, err(out)
    assert json.loads(out.stdout)["peak_bytes"] == 64


def test_9_python_reports_non_utf8_files_as_seedance_errors(tmp_path):
    import seedance
    job = tmp_path / "job.yaml"
    job.write_bytes(b"job:\n  name: \xff\n")
    with pytest.raises(seedance.SeedanceError) as info:
        seedance.optimize(job)
    assert info.value.where == f"{job}:2"


def test_9_mem_check_mismatches_name_the_line(seedancectl, tmp_path):
    lifetimes = tmp_path / "l.csv"
    lifetimes.write_text("id,lower,upper,size\na,0,2,64\nb,1,3,64\n")
    plan = tmp_path / "p.csv"
    plan.write_text("id,lower,upper,size,offset\na,0,2,64,0\nb,1,3,32,64\n")
    out = run(seedancectl, "mem", "check", "--input", lifetimes, "--offsets", plan)
    assert out.returncode == 1 and out.stdout == b""
    assert f"{plan}:3" in err(out) and f"size 32 here but 64 in {lifetimes}:3" in err(out)


def test_9_deep_yaml_says_too_deep(seedancectl, tmp_path):
    job = tmp_path / "deep.yaml"
    job.write_text("job:\n" + "".join("  " * (i + 1) + f"a{i}:\n" for i in range(500)))
    out = run(seedancectl, "optimize", job)
    assert out.returncode == 1
    assert "YAML nesting too deep" in err(out) and f"{job}:" in err(out)


def test_9_a_nan_weight_names_the_file_and_tensor(seedancectl, tmp_path):
    import struct
    model_dir = DATA / "tiny-llama"
    require_data(model_dir)
    raw = bytearray((model_dir / "aidreams260K.bin").read_bytes())
    dim, _, _, _, _, vocab, _ = struct.unpack("<7i", raw[:28])
    at = 28 + 4 * abs(vocab) * dim + 4 * 3  # rms_att_weight[3]
    raw[at:at + 4] = struct.pack("<f", float("nan"))
    model = tmp_path / "nan.bin"
    model.write_bytes(bytes(raw))
    out = run(seedancectl, "kv", "eval", "--model", model,
              "--tokenizer", model_dir / "tok512.bin", timeout=120)
    assert out.returncode == 1, err(out)
    assert f"{model}" in err(out) and f"rms_att_weight[3] at byte {at} is NaN" in err(out)


# 10. Leftovers -----------------------------------------------------------------------------------

def test_10_a_file_size_limit_leaves_no_temporary_file(seedancectl, tmp_path):
    lifetimes = tmp_path / "l.csv"
    lifetimes.write_text("id,lower,upper,size\n" +
                         "".join(f"b{i},{i},{i + 5},{1000 + i}\n" for i in range(20000)))
    outdir = tmp_path / "out"
    outdir.mkdir()
    out = subprocess.run(f"ulimit -f 100; exec {seedancectl} mem plan --input {lifetimes} "
                         f"--algo greedy --offsets-out {outdir / 'plan.csv'}", shell=True,
                         capture_output=True, timeout=60, executable="/bin/bash")
    assert out.returncode == 1, out.stderr
    assert b"File too large" in out.stderr
    assert list(outdir.iterdir()) == []
