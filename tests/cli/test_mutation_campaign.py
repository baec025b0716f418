"""A bad-input campaign through the CLI (issue 17's acceptance): every file the CLI reads, mutated
the ways the external campaign mutated them (flipped and non-UTF-8 bytes, NULs, truncation,
deleted and duplicated lines, BOM and CRLF, typed values from NaN to 2^64, huge lines), run
through the verb that reads it. Every run must end without a signal or a hang, with exit 0, 1 or 2;
an error (exit 1) must be one "error:" line naming the mutated file or another input of the run,
a usage error (exit 2) the flag or the command line.

The suite runs a fixed, seeded sample (CAMPAIGN_RUNS per reader, default 12). For a campaign by
hand, with a summary of outcomes:

    .venv/bin/python tests/cli/test_mutation_campaign.py --runs 300 [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/, when run by hand
from conftest import DATA, require_data  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "fuzz" / "corpus"
NASTY = [b"NaN", b"nan", b"-1", b"inf", b"-inf", b"1e400", b"18446744073709551616",
         b"9223372036854775808", b"0x10", b" 5", b"+4", b"", b"\x00", b"\xff\xfe", b"\xc3(",
         b",", b",,", b"\"", b"\r\n", b"\t", b":", b"- ", b"[", b"{", b"&a *a", b"x" * 70000]


@dataclass
class Reader:
    name: str
    seed: str                  # file under tests/fuzz/corpus/ that is mutated (framing removed)
    args: list[str]            # the command; "{F}" is the mutated file, "{C}/x" a corpus file
    timeout: float = 30
    share: float = 1.0         # of the runs per reader


def corpus_text(name: str) -> bytes:
    """A corpus file without its fuzz framing byte, if it has one (see tests/fuzz/*_fuzz.cc), or
    with "data:" a file of SEEDANCE_DATA_DIR."""
    if name.startswith("data:"):
        return (DATA / name[5:]).read_bytes()
    data = (CORPUS / name).read_bytes()
    framed = name.split("/")[0] in ("alibaba_trace", "philly_trace", "job_spec", "llama_files")
    return data[1:] if framed else data


READERS = [
    Reader("lifetime csv", "lifetime_csv/plain.csv", ["mem", "plan", "--input", "{F}", "-o", "json"]),
    Reader("plan csv", "lifetime_csv/plan.csv",
           ["mem", "check", "--input", "{C}/lifetime_csv/plan.csv", "--offsets", "{F}"]),
    Reader("alibaba nodes", "alibaba_trace/nodes.csv",
           ["simulate", "--nodes", "{F}", "--pods", "{C}/alibaba_trace/pods.csv", "--policy",
            "fgd", "--seeds", "1", "-o", "json"]),
    Reader("alibaba pods", "alibaba_trace/pods.csv",
           ["simulate", "--nodes", "{C}/alibaba_trace/nodes.csv", "--pods", "{F}", "--policy",
            "bestfit", "--seeds", "1", "-o", "json"]),
    Reader("philly vcs", "philly_trace/vc.csv",
           ["simulate", "--protocol", "events", "--nodes", "{F}", "--pods",
            "{C}/philly_trace/jobs.csv", "--policy", "bestfit", "--seeds", "1", "-o", "json"]),
    Reader("philly jobs", "philly_trace/jobs.csv",
           ["simulate", "--protocol", "events", "--nodes", "{C}/philly_trace/vc.csv", "--pods",
            "{F}", "--policy", "bestfit", "--seeds", "1", "-o", "json"]),
    Reader("job spec", "job_spec/default-job.yaml", ["optimize", "{F}", "-o", "json"]),
    Reader("catalog", "job_spec/catalog.yaml", ["--catalog", "{F}", "catalog", "list", "-o", "json"]),
    Reader("comm topology", "comm_topology/sockets.yaml",
           ["comm", "advise", "--topology", "{F}", "-o", "json"]),
    Reader("nccl log", "nccl_log/train.log", ["comm", "nccl-log", "--input", "{F}", "-o", "json"]),
    # The real tiny model (the fuzz seeds are too small for the CLI's checks); fewer runs: each
    # loads a megabyte and evaluates it.
    Reader("llama model", "data:tiny-llama/aidreams260K.bin",
           ["kv", "eval", "--model", "{F}", "--tokenizer", "{D}/tiny-llama/tok512.bin",
            "--tokens", "8"], 60, 0.25),
    Reader("llama tokenizer", "data:tiny-llama/tok512.bin",
           ["kv", "eval", "--model", "{D}/tiny-llama/aidreams260K.bin", "--tokenizer", "{F}",
            "--tokens", "8"], 60, 0.25),
]


def mutate(data: bytes, rng: random.Random) -> bytes:
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(8)
        at = rng.randrange(len(data) + 1)
        if kind == 0 and data:  # flip a byte
            i = rng.randrange(len(data))
            data = data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
        elif kind == 1:  # truncate
            data = data[:at]
        elif kind == 2:  # insert a nasty token
            data = data[:at] + rng.choice(NASTY) + data[at:]
        elif kind in (3, 4):  # delete or duplicate a line
            lines = data.split(b"\n")
            i = rng.randrange(len(lines))
            lines[i:i + 1] = [] if kind == 3 else [lines[i], lines[i]]
            data = b"\n".join(lines)
        elif kind == 5:  # replace a number with a nasty one
            digits = [i for i, c in enumerate(data) if 48 <= c <= 57]
            if digits:
                i = rng.choice(digits)
                j = i
                while j < len(data) and 48 <= data[j] <= 57:
                    j += 1
                data = data[:i] + rng.choice(NASTY[:11]) + data[j:]
        elif kind == 6:
            data = b"\xef\xbb\xbf" + data  # BOM
        else:
            data = data.replace(b"\n", b"\r\n")  # CRLF
    return data


def check_one(seedancectl: pathlib.Path, reader: Reader, data: bytes, work: pathlib.Path) -> str:
    """Runs one mutated input; returns the outcome ("ok", "error", "usage"), or raises."""
    suffix = pathlib.Path(reader.seed).suffix
    path = work / f"input{suffix}"
    path.write_bytes(data)
    args = []
    for a in reader.args:
        if a.startswith("{C}/"):  # an unmutated input, its framing removed
            name = a[4:]
            plain = work / ("plain-" + name.replace("/", "-"))
            if not plain.exists():
                plain.write_bytes(corpus_text(name))
            a = str(plain)
        args.append(a.replace("{F}", str(path)).replace("{D}", str(DATA)))
    inputs = [a for a in args if a.startswith("/")]
    try:
        out = subprocess.run([str(seedancectl), *args], capture_output=True, timeout=reader.timeout,
                             cwd=work)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{reader.name}: hung over {reader.timeout} s on {data[:200]!r}")
    err = out.stderr.decode("utf-8", "replace")
    assert out.returncode >= 0, f"{reader.name}: killed by signal {-out.returncode}: {err[-2000:]}"
    assert out.returncode in (0, 1, 2), f"{reader.name}: exit {out.returncode}: {err[-2000:]}"
    if out.returncode == 0:
        return "ok"
    lines = [l for l in err.splitlines() if l.startswith("error:")]
    assert lines, f"{reader.name}: exit {out.returncode} with no 'error:' line: {err[-2000:]}"
    if out.returncode == 1:
        assert any(p in err for p in inputs), (
            f"{reader.name}: the error names no input file: {lines[-1]}")
        return "error"
    assert "--" in err or "command line" in err, f"{reader.name}: usage error names no flag: {err}"
    return "usage"


def campaign(seedancectl: pathlib.Path, runs: int, seed: int) -> dict[str, dict[str, int]]:
    summary: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for reader in READERS:
            rng = random.Random(f"{seed}:{reader.name}")
            original = corpus_text(reader.seed)
            counts = summary.setdefault(reader.name, {"ok": 0, "error": 0, "usage": 0})
            for _ in range(max(1, int(runs * reader.share))):
                counts[check_one(seedancectl, reader, mutate(original, rng), work)] += 1
    return summary


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_mutated_inputs_fail_cleanly(seedancectl, reader, tmp_path):
    runs = max(1, int(int(os.environ.get("CAMPAIGN_RUNS", "12")) * reader.share))
    if reader.seed.startswith("data:"):
        require_data(DATA / reader.seed[5:])
    rng = random.Random(f"17:{reader.name}")
    original = corpus_text(reader.seed)
    assert check_one(seedancectl, reader, original, tmp_path) == "ok", "the seed itself must pass"
    for _ in range(runs):
        check_one(seedancectl, reader, mutate(original, rng), tmp_path)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--seedancectl", default=str(REPO / "build" / "bin" / "seedancectl"))
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    result = campaign(pathlib.Path(a.seedancectl), a.runs, a.seed)
    for name, counts in result.items():
        print(f"{name:18} {counts}")
    print(f"total runs: {sum(sum(c.values()) for c in result.values())}, no signal, hang or "
          "unnamed error")
    sys.exit(0)
