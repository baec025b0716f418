#!/usr/bin/env python3
"""Long-tail consolidation on the Philly trace, with utilization as a stated assumption.

The traces carry no per-job GPU utilization, so this what-if draws it: a share S of the
single-GPU jobs is long-tail (utilization uniform in [0, 5) %), every other job uniform in
[30, 100) % (seeded). For each S it writes the utilization file, then runs the event mode on
Philly at 2 GPUs per node without and with `--consolidate`, and prints a Markdown table.
The figures measure the mechanism under this assumption, not a property of Philly.

    .venv/bin/python bench/sched/consolidation.py [--shares 0.1,0.2] [--gpus-per-node 2]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pathlib
import random
import subprocess
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("SEEDANCE_DATA_DIR", REPO.parent / "shared" / "data"))
BIN = pathlib.Path(os.environ.get("SEEDANCE_BUILD_DIR", REPO / "build")) / "bin" / "seedancectl"


def write_util(path: pathlib.Path, share: float, seed: int) -> int:
    """philly-N is the job on data line N+1 of the Philly list (the event mode's naming)."""
    rng = random.Random(seed)
    long_tail = 0
    with open(DATA / "philly" / "philly_jobs_pollux.csv", newline="") as f, \
            open(path, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["id", "gpu_util_pct"])
        for i, row in enumerate(csv.DictReader(f)):
            tail = int(row["num_gpus"]) == 1 and rng.random() < share
            long_tail += tail
            w.writerow([f"philly-{i}", f"{rng.uniform(0, 5) if tail else rng.uniform(30, 100):.2f}"])
    return long_tail


def run(gpus: int, util: pathlib.Path, *extra: str) -> dict:
    r = subprocess.run([str(BIN), "simulate", "--protocol", "events", "--nodes",
                        str(DATA / "philly" / "philly_vc_nodes.csv"), "--pods",
                        str(DATA / "philly" / "philly_jobs_pollux.csv"), "--policy", "bestfit",
                        "--seeds", "1", "--gpus-per-node", str(gpus), "--job-util", str(util),
                        *extra, "-o", "json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["policies"][0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shares", default="0.1,0.2,0.4")
    ap.add_argument("--gpus-per-node", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    print("| long-tail share of 1-GPU jobs | long-tail jobs | consolidate | moved | GPU-h handed "
          "back | queue delay p50 / p90 / p99 | JCT p50 / p99 | run time |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for share in (float(s) for s in a.shares.split(",")):
            util = pathlib.Path(tmp) / "util.csv"
            n = write_util(util, share, a.seed)
            for extra in ([], ["--consolidate"]):
                p = run(a.gpus_per_node, util, *extra)
                q, j = p["queue_delay_s"], p["jct_s"]
                print(f"| {share:g} | {n:,} | {'yes' if extra else 'no'} | "
                      f"{p['consolidations']:,.0f} | {p['consolidation_freed_gpu_hours']:,.0f} | "
                      f"{q['p50']:,.0f} / {q['p90']:,.0f} / {q['p99']:,.0f} s | "
                      f"{j['p50']:,.0f} / {j['p99']:,.0f} s | {p['runtime_ms'] / 1000:.2f} s |")


if __name__ == "__main__":
    main()
