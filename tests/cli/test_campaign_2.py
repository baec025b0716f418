"""The second bad-input campaign (issue 40), re-runnable: random variants of each class the CLI
reaches, each run and judged against what the class promises (docs/design/hardening.md, "The
second campaign"). Classes 2, 3 and 9 (the extender) are driven by the `extender_verbs` fuzz
target and the extender's unit tests instead; 7 and 8 (loadtest's streams, the tokenizer) and 10
(the Python API) have their own tests; 4 and 5 (servers and clients on cpp-httplib) are open.

The suite runs a seeded sample (RUNS per class, default 4). By hand, with counts per class:

    .venv/bin/python tests/cli/test_campaign_2.py --runs 100 [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import socket
import stat
import subprocess
import sys
import tempfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
JOB = (REPO / "examples" / "default-job.yaml").read_text()
RUNS = int(os.environ.get("CAMPAIGN_RUNS", "4"))


def run(binary, args, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, timeout=timeout)


def fails_cleanly(r: subprocess.CompletedProcess, codes=(1,)) -> bool:
    err = r.stderr.decode("utf-8", "strict")  # raises on invalid UTF-8: a failure
    return (r.returncode in codes and err.startswith("error:") and err.count("\n") == 1
            and len(err) < 4096 and not any(c < " " for c in err[:-1]))


# Each class: a function (binary, rng, folder) -> (ok, what) for one random variant.

def class_1_output_paths(binary, rng, d):
    """A writer aimed at a random non-regular destination leaves it as it was (or writes
    through a device or a read FIFO)."""
    lifetimes = d / "l.csv"
    lifetimes.write_text("id,lower,upper,size\na,0,2,1000\n")
    writers = [["optimize", REPO / "examples" / "default-job.yaml", "--emit", "fsdp"],
               ["optimize", REPO / "examples" / "default-job.yaml", "--report"],
               ["mem", "plan", "--input", lifetimes, "--offsets-out"]]
    args = rng.choice(writers)
    kind = rng.choice(["fifo", "socket", "link-to-fifo", "link-to-file", "link-chain", "null"])
    dest = d / f"dest-{rng.randrange(1 << 30)}"
    keep = None
    if kind == "fifo" or kind == "link-to-fifo":
        fifo = d / f"fifo-{rng.randrange(1 << 30)}"
        os.mkfifo(fifo)
        if kind == "fifo":
            dest = fifo
        else:
            dest.symlink_to(fifo)
    elif kind == "socket":
        keep = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        keep.bind(str(dest))
    elif kind in ("link-to-file", "link-chain"):
        target = d / f"target-{rng.randrange(1 << 30)}"
        target.write_text("old")
        if kind == "link-chain":
            middle = d / f"middle-{rng.randrange(1 << 30)}"
            middle.symlink_to(target.name)
            dest.symlink_to(middle.name)
        else:
            dest.symlink_to(target)
    else:
        dest.symlink_to("/dev/null")
    before = stat.S_IFMT(os.lstat(dest).st_mode)
    r = run(binary, [*args, dest], timeout=60)
    if keep is not None:
        keep.close()
    after = stat.S_IFMT(os.lstat(dest).st_mode)
    written = kind in ("link-to-file", "link-chain", "null")
    ok = before == after and (r.returncode == 0 if written else fails_cleanly(r))
    if kind in ("link-to-file", "link-chain"):
        ok = ok and os.path.realpath(dest) != str(dest) and pathlib.Path(dest).read_text() != "old"
    return ok, f"{args[0]} at a {kind}: exit {r.returncode}"


FSYNC = "etcd_disk_wal_fsync_duration_seconds_bucket"


def class_6_histograms(binary, rng, d):
    """A malformed histogram is an error with its file and line, never a verdict."""
    bounds = ["0.001", "0.002", "0.008", "0.064", "0.256", "+Inf"]
    counts = sorted(rng.randrange(0, 1000) for _ in bounds)
    lines = [f'{FSYNC}{{le="{b}"}} {c}' for b, c in zip(bounds, counts)]
    how = rng.choice(["duplicate", "nan", "negative", "fall", "no-inf", "no-le", "inf-count"])
    i = rng.randrange(len(lines) - 1)
    if how == "duplicate":
        lines.insert(i + 1, lines[i])
    elif how == "nan":
        lines[i] = f'{FSYNC}{{le="{bounds[i]}"}} NaN'
    elif how == "negative":
        lines[i] = f'{FSYNC}{{le="{bounds[i]}"}} -{rng.randrange(1, 99)}'
    elif how == "inf-count":
        lines[i] = f'{FSYNC}{{le="{bounds[i]}"}} +Inf'
    elif how == "fall":
        lines[i] = f'{FSYNC}{{le="{bounds[i]}"}} {counts[-1] + 1 + rng.randrange(100)}'
    elif how == "no-inf":
        lines.pop()
    else:
        lines[i] = f'{FSYNC}{{bucket="{bounds[i]}"}} {counts[i]}'
    f = d / f"m-{rng.randrange(1 << 30)}.txt"
    f.write_text("\n".join(lines) + "\n")
    r = run(binary, ["diagnose", "--metrics", f])
    ok = fails_cleanly(r) and f"({f}:" in r.stderr.decode() and r.stdout == b""
    return ok, f"{how}: exit {r.returncode} {r.stderr[:120]!r}"


def class_11_tiny_costs(binary, rng, d):
    """Inputs that divide past a double are an error, never inf, null or NaN with exit 0."""
    tiny = rng.choice(["1e-310", "4.9e-324", "2.2e-308", "1e-320", "5e-324"])
    field = rng.choice(["utilization", "tokens_per_s_per_gpu"])
    extra = f"{field}: {tiny}\n" + ("tokens_per_request: 10\n" if field != "utilization" else "")
    f = d / f"t-{rng.randrange(1 << 30)}.yaml"
    f.write_text("gpu: H100-SXM\ngpus: 8\n" + extra)
    r = run(binary, ["cost", "tco", "--input", f, "-o", "json"])
    out = r.stdout.decode()
    ok = (fails_cleanly(r, (1, 2)) and out == "") or (
        r.returncode == 0 and not any(w in out for w in ("inf", "null", "NaN")))
    return ok, f"{field}={tiny}: exit {r.returncode}"


def class_12_second_document(binary, rng, d):
    """A second YAML document anywhere after the first is an error at its line."""
    lines = JOB.splitlines()
    cut = rng.randrange(len(lines) // 2, len(lines) + 1)
    marker = rng.choice(["---", "--- ", "...\nname: x", "---\n", "--- {a: 1}"])
    # Only cut between top-level keys, so that the first document stays whole.
    while cut < len(lines) and lines[cut].startswith((" ", "#")):
        cut += 1
    text = "\n".join(lines[:cut]) + "\n" + marker + "\n" + "\n".join(lines[cut:]) + "\n"
    f = d / f"j-{rng.randrange(1 << 30)}.yaml"
    f.write_text(text)
    r = run(binary, ["optimize", f])
    ok = fails_cleanly(r) and b"second YAML document" in r.stderr or (
        fails_cleanly(r) and b"missing required" in r.stderr)  # cut before a required section
    return ok, f"{marker!r} at line {cut + 1}: {r.stderr[:100]!r}"


def class_13_14_echo(binary, rng, d):
    """An error quoting a huge or control-laden value is one bounded, printable UTF-8 line."""
    junk = rng.choice([b"\x1b[2J", b"\x00", b"\xff\xfe", b"\xe6\x97", b"\x07\x08", b"\xc2\x85",
                       b"\r", b""])
    value = b"k" * rng.choice([10, 5000, 2_000_000]) + junk
    key = rng.choice([b"framework", b"name"])
    text = JOB.encode()
    if key == b"framework":
        text = text.replace(b"framework: fsdp", b"framework: \"" +
                            value.replace(b"\\", b"").replace(b"\"", b"") + b"\"")
    else:
        text = text.replace(b"framework: fsdp", b"framework: " + value[:3000].replace(b"\n", b""))
    f = d / f"e-{rng.randrange(1 << 30)}.yaml"
    f.write_bytes(text)
    r = run(binary, ["optimize", f])
    try:
        ok = fails_cleanly(r)
    except UnicodeDecodeError:
        ok = False
    return ok, f"{len(value)} bytes + {junk!r}: exit {r.returncode} {r.stderr[:80]!r}"


def class_15_duplicate_columns(binary, rng, d):
    """A CSV column named twice is an error at the header line."""
    cols = ["throughput", "memory", "power"]
    dup = rng.choice(cols)
    header = cols + [dup]
    rng.shuffle(header)
    rows = "".join(",".join(str(rng.randrange(100)) for _ in header) + "\n" for _ in range(5))
    f = d / f"p-{rng.randrange(1 << 30)}.csv"
    f.write_text(",".join(header) + "\n" + rows)
    r = run(binary, ["cost", "pareto", "--input", f, "--objectives",
                     "throughput:max,memory:min"])
    ok = fails_cleanly(r) and f"({f}:1)" in r.stderr.decode()
    return ok, f"{header}: exit {r.returncode}"


def class_19_listen(binary, rng, d):
    """A malformed --listen or --served-model-name is a usage error (exit 2) naming the flag."""
    bad = rng.choice(["nonsense", ":", "127.0.0.1:", "127.0.0.1:-1", "127.0.0.1:65536",
                      "127.0.0.1:8x", "[::1", "host:99999999999999999999", ""])
    which = rng.choice(["kv", "scheduler", "probe", "name"])
    if which == "kv":
        args, flag = ["kv", "serve", "--model", "m", "--tokenizer", "t", "--listen", bad], "--listen"
    elif which == "scheduler":
        args, flag = ["scheduler", "serve", "--listen", bad], "--listen"
    elif which == "probe":
        args, flag = ["probe", "--listen", bad], "--listen"
    else:
        name = rng.choice(["", "a\tb", "\x1b[31m", "x" * 300])
        args, flag = ["kv", "serve", "--model", "m", "--tokenizer", "t", "--served-model-name",
                      name], "--served-model-name"
    r = run(binary, args)
    ok = r.returncode == 2 and flag.encode() in r.stderr
    return ok, f"{args[-2:]!r}: exit {r.returncode}"


CLASSES = {
    "1 output paths": class_1_output_paths,
    "6 malformed histograms": class_6_histograms,
    "11 tiny cost inputs": class_11_tiny_costs,
    "12 second YAML document": class_12_second_document,
    "13/14 echoed input": class_13_14_echo,
    "15 duplicate CSV columns": class_15_duplicate_columns,
    "19 --listen and names": class_19_listen,
}


@pytest.mark.parametrize("name", list(CLASSES))
def test_campaign_sample(seedancectl, tmp_path, name):
    rng = random.Random(f"{name}-{RUNS}")
    failures = []
    for _ in range(RUNS):
        ok, what = CLASSES[name](seedancectl, rng, tmp_path)
        if not ok:
            failures.append(what)
    assert not failures, failures


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100, help="variants per class")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--binary", default=str(REPO / "build" / "bin" / "seedancectl"))
    a = ap.parse_args()
    total = failed = 0
    for name, fn in CLASSES.items():
        rng = random.Random(f"{name}-{a.seed}")
        bad = []
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(a.runs):
                ok, what = fn(a.binary, rng, pathlib.Path(tmp))
                if not ok:
                    bad.append(what)
        total += a.runs
        failed += len(bad)
        print(f"{name:28s} {a.runs - len(bad):5d} of {a.runs} as promised"
              + (f"; first failure: {bad[0]}" if bad else ""))
    print(f"all classes: {total - failed} of {total} as promised")
    sys.exit(1 if failed else 0)
