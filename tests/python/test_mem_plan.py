"""seedance.mem.plan: buffers from a file or from memory, capacity and threads, as the CLI."""

from __future__ import annotations

import json
import subprocess

import pytest

import seedance.mem
from seedance.errors import SeedanceError

# Four buffers: a and b overlap in time, c and d each overlap one of them.
BUFFERS = [("a", 0, 10, 64), ("b", 5, 15, 32), ("c", 10, 20, 64), ("d", 15, 25, 32)]


def brute_force_peak(buffers, offsets):
    """The largest end of any buffer: what the plan's arena must hold."""
    return max(offsets[b[0]] + b[3] for b in buffers)


def overlap_free(buffers, offsets):
    for i, (x, xl, xu, xs) in enumerate(buffers):
        for (y, yl, yu, ys) in buffers[i + 1:]:
            live_together = xl < yu and yl < xu
            apart = offsets[x] + xs <= offsets[y] or offsets[y] + ys <= offsets[x]
            if live_together and not apart:
                return False
    return True


def test_in_memory_buffers_equal_the_file(tmp_path):
    path = tmp_path / "l.csv"
    path.write_text("id,lower,upper,size\n" + "".join(f"{i},{l},{u},{s}\n" for i, l, u, s in BUFFERS))
    from_file = seedance.mem.plan(path, algo="exact")
    as_tuples = seedance.mem.plan(BUFFERS, algo="exact")
    as_dicts = seedance.mem.plan([dict(zip(("id", "lower", "upper", "size"), b)) for b in BUFFERS],
                                 algo="exact")
    for r in (as_tuples, as_dicts):
        assert r["offsets"] == from_file["offsets"] and r["peak_bytes"] == from_file["peak_bytes"]
    assert overlap_free(BUFFERS, as_tuples["offsets"])
    # a+b live together (96 bytes) and so do c+d: 96 is the bound, and the exact search meets it.
    assert as_tuples["peak_bytes"] == brute_force_peak(BUFFERS, as_tuples["offsets"]) == 96
    assert as_tuples["optimal"] is True


def test_capacity_and_threads_match_the_cli(tmp_path, seedancectl):
    path = tmp_path / "l.csv"
    path.write_text("id,lower,upper,size\n" + "".join(f"{i},{l},{u},{s}\n" for i, l, u, s in BUFFERS))
    fits = seedance.mem.plan(BUFFERS, capacity=96, threads=1)
    assert fits["capacity_bytes"] == 96 and fits["peak_bytes"] <= 96
    cli = json.loads(subprocess.run([str(seedancectl), "mem", "plan", "--input", str(path),
                                     "--capacity", "96", "--threads", "1", "-o", "json"],
                                    capture_output=True, text=True, check=True).stdout)
    assert cli["peak_bytes"] == fits["peak_bytes"] and cli["capacity_bytes"] == 96
    with pytest.raises(SeedanceError) as e:
        seedance.mem.plan(BUFFERS, capacity=95)
    assert e.value.code == "FAILED_PRECONDITION" and "no plan fits in 95 bytes" in e.value.message
    assert e.value.where == "buffers"
    r = subprocess.run([str(seedancectl), "mem", "plan", "--input", str(path), "--capacity", "95"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and e.value.message in r.stderr


@pytest.mark.parametrize("buffers,where", [
    ([("a", 0, 10, 64), ("a", 5, 15, 32)], "buffers[1]: id"),   # duplicate id
    ([("a", 0, 10, -4)], "buffers[0]: size"),
    ([{"id": "a", "lower": 0, "upper": 3}], "buffers[0]"),       # no size
    ([("a", 0, 10)], "buffers[0]"),                              # three items
    ([("a,b", 0, 10, 8)], "buffers[0]"),                         # would split a CSV field
])
def test_bad_buffers_name_their_index(buffers, where):
    with pytest.raises(SeedanceError) as e:
        seedance.mem.plan(buffers)
    assert e.value.where == where, e.value


def test_bad_capacity():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(SeedanceError) as e:
            seedance.mem.plan(BUFFERS, capacity=bad)
        assert e.value.where == "capacity"
