"""Issue 40, class 10: the Python API reads its input files as the CLI does (libseedance's Env)
and takes its arguments within the CLI's ranges, raising SeedanceError with the parameter's
name — never a hang on a FIFO, an endless read of /dev/zero, a MemoryError, a silently ignored
NaN or a TypeError about pybind11's argument conversion."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

import seedance
import seedance.cost
import seedance.kv
import seedance.mem
from conftest import DATA, require_data

MODEL = DATA / "tiny-llama" / "aidreams260K.bin"
TOKENIZER = DATA / "tiny-llama" / "tok512.bin"


def test_a_fifo_and_a_device_are_errors_not_hangs(tmp_path):
    fifo = tmp_path / "job.yaml"
    os.mkfifo(fifo)
    # In a child with a deadline: the old reader blocked forever in open() on a FIFO.
    code = ("import seedance, sys\n"
            "try:\n    seedance.optimize(sys.argv[1])\n"
            "except seedance.SeedanceError as e:\n    print(e.code, e.where, e.message)\n")
    out = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("IO_ERROR") and str(fifo) in out.stdout
    assert "not a regular file" in out.stdout
    for reader in (seedance.optimize, seedance.mem.plan, seedance.cost.tco):
        with pytest.raises(seedance.SeedanceError, match="not a regular file") as info:
            reader("/dev/zero")
        assert info.value.where == "/dev/zero"
    with pytest.raises(seedance.SeedanceError, match="directory"):
        seedance.optimize(tmp_path)


@pytest.mark.parametrize("kwargs,name", [
    ({"time_limit": 1e10}, "time_limit"),        # once: the exact search silently off
    ({"time_limit": math.nan}, "time_limit"),
    ({"time_limit": -1}, "time_limit"),
    ({"time_limit": "1"}, "time_limit"),
    ({"alignment": 2 ** 70}, "alignment"),       # once: pybind11's TypeError
    ({"alignment": 0}, "alignment"),
    ({"alignment": 2 ** 31}, "alignment"),
    ({"alignment": True}, "alignment"),
    ({"capacity": 2 ** 63}, "capacity"),
    ({"threads": 2 ** 40}, "threads"),
])
def test_mem_plan_arguments_are_checked_by_name(kwargs, name):
    buffers = [("a", 0, 2, 1000), ("b", 1, 3, 2000)]
    with pytest.raises(seedance.SeedanceError) as info:
        seedance.mem.plan(buffers, **kwargs)
    assert info.value.where == name, (kwargs, info.value)
    assert seedance.mem.plan(buffers, time_limit=86400)["peak_bytes"] == 3000


@pytest.mark.parametrize("kwargs,name", [
    ({"window": 2 ** 30}, "window"),             # once: MemoryError
    ({"window": -5}, "window"),
    ({"window": 2 ** 40}, "window"),
    ({"entropy_threshold": math.nan}, "entropy_threshold"),  # once: accepted
    ({"entropy_threshold": 1.5}, "entropy_threshold"),
    ({"tokens": 0}, "tokens"),
    ({"tokens": 2 ** 64}, "tokens"),             # once: reported as a sign error
    ({"group": 1000}, "group"),
    ({"long_bits": 3}, "long_bits"),
    ({"default_bits": 2.0}, "default_bits"),
    ({"long_context": -1}, "long_context"),
])
def test_kv_evaluate_arguments_are_checked_by_name(kwargs, name):
    require_data(MODEL)
    with pytest.raises(seedance.SeedanceError) as info:
        seedance.kv.evaluate(MODEL, **kwargs)
    assert info.value.where == name, (kwargs, info.value)


def test_numpy_scalars_and_any_file_name_are_accepted(tmp_path):
    np = pytest.importorskip("numpy")
    buffers = [("a", 0, 2, 1000), ("b", 1, 3, 2000)]
    report = seedance.mem.plan(buffers, alignment=np.int64(64), time_limit=np.float32(0.5),
                               threads=np.int32(1))
    assert report["peak_bytes"] == 1024 + 2000  # b at the 64-aligned offset after a (1000)
    # The reader takes a file name that is not UTF-8 (os.listdir gives it with surrogate
    # escapes), as str or bytes, as open() did.
    from seedance.errors import read_text
    name = os.fsdecode(b"job-\xff.yaml")
    (tmp_path / name).write_text("a: 1\n")
    assert read_text(tmp_path / name) == "a: 1\n"
    assert read_text(os.fsencode(tmp_path / name)) == "a: 1\n"
