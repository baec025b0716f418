"""What PyTorch's interleaved pipeline schedule holds in flight, read from PyTorch itself.

torchtitan runs `torch.distributed.pipelining.ScheduleInterleaved1F1B`. The planner counts, for
each stage, the chunk forward passes a rank has run and not yet run backward at its peak
(`InFlightMicroBatches` times v), and which micro-batch counts the schedule refuses (the
torchtitan blocker in src/plan/framework.cc). Both are checked in C++
(MemoryModel.InFlightMicroBatchesMatchPyTorchsInterleavedSchedule) against
tests/fixtures/pytorch_interleaved_in_flight.csv. This test rebuilds that table from PyTorch's own
schedule, one fake process group of p ranks at a time, and asserts the file is what PyTorch runs.

Regenerate the file: `.venv/bin/python tests/python/test_pipeline_schedules.py --write`.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import tempfile

import pytest

pytest.importorskip("torch")
# The fake process group and the schedule's op types: private to PyTorch; a release that moves
# them skips the test rather than failing it.
pytest.importorskip("torch.testing._internal.distributed.fake_pg")
pytest.importorskip("torch.distributed.pipelining")

FIXTURE = (pathlib.Path(__file__).resolve().parents[1] / "fixtures" /
           "pytorch_interleaved_in_flight.csv")
HEADER = "pipeline,virtual_stages,micro_batches,rank,chunk_passes_in_flight"

# Every m from 1 to 3p + 1: below p, at p, between multiples, and multiples.
SCHEDULES = r"""
import json, sys
import torch, torch.distributed as dist
from torch.testing._internal.distributed.fake_pg import FakeStore
from torch.distributed.pipelining import PipelineStage
from torch.distributed.pipelining.schedules import ScheduleInterleaved1F1B
from torch.distributed.pipelining.schedules import _ComputationType as Op

rows = []
for p in (2, 3, 4, 8):
    dist.init_process_group("fake", rank=0, world_size=p, store=FakeStore())
    for v in (2, 3, 4):
        stages = [PipelineStage(torch.nn.Linear(2, 2), stage_index=j * p, num_stages=p * v,
                                device=torch.device("cpu")) for j in range(v)]
        for m in range(1, 3 * p + 2):
            try:
                schedule = ScheduleInterleaved1F1B(stages, m)
            except ValueError:
                rows.extend([p, v, m, r, "refused"] for r in range(p))
                continue
            for r in range(p):
                alive = most = 0
                for action in schedule.pipeline_order[r]:
                    if action is None:
                        continue
                    if action.computation_type == Op.FORWARD:
                        alive += 1
                        most = max(most, alive)
                    elif action.computation_type in (Op.FULL_BACKWARD, Op.BACKWARD_INPUT):
                        alive -= 1
                rows.append([p, v, m, r, most])
    dist.destroy_process_group()
with open(sys.argv[1], "w") as out:
    json.dump(rows, out)
"""


def pytorch_table() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "rows.json"
        subprocess.run([sys.executable, "-c", SCHEDULES, str(path)], check=True,
                       capture_output=True, text=True, timeout=600)
        rows = json.loads(path.read_text())
    return HEADER + "\n" + "".join(",".join(str(x) for x in row) + "\n" for row in rows)


def test_fixture_is_what_pytorch_schedules():
    expected = pytorch_table()
    assert FIXTURE.read_text() == expected, (
        "tests/fixtures/pytorch_interleaved_in_flight.csv differs from PyTorch's schedule; "
        "regenerate it with --write and re-run plan_test")
    # The table covers what the planner has to get right: refused counts, and m below p.
    rows = [line.split(",") for line in expected.splitlines()[1:]]
    assert any(r[4] == "refused" for r in rows)
    assert any(int(r[2]) < int(r[0]) and r[4] != "refused" for r in rows)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: test_pipeline_schedules.py --write")
    FIXTURE.write_text(pytorch_table())
