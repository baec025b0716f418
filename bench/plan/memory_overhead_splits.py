"""The measured memory overhead checked on rows it was not fitted to.

The public fit's DeepSpeed overhead (`PublicFit::memory_overhead`) comes from one source, BLOOM's
nvidia-smi readings, so it has no leave-one-source-out figure. This splits that source instead:
the overhead is refitted (the median of log(published / estimated), as `published_runs --fit`
fits it) on one part of the rows and the other part is predicted with it, for the split by
training precision (fp16 / bf16) and by date (the runs before 02-25 / from 02-25 on).

The estimates without the overhead come from `build/bench/published_runs` (the compiled fit's
estimates) divided by 1 + the compiled overhead, which scales a DeepSpeed layout's whole estimate
(to a byte's rounding); the overhead itself is read from `build/bench/published_runs --fit`.

    .venv/bin/python bench/plan/memory_overhead_splits.py [--build build]

Prints one JSON object: the counted buffers' error against the readings without the overhead,
and per split, the overhead fitted on each part and how many of the other part's rows it
predicts within ±10%.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_json(binary: pathlib.Path, *args: str) -> dict:
    out = subprocess.run([str(binary), *args], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def bloom_date(row_id: str) -> str:
    """"bloom-prequel-02-25-181b-..." -> "02-25"."""
    parts = row_id.split("-")
    return f"{parts[2]}-{parts[3]}"


def predict(fitted_on: list[float], held: list[float]) -> dict:
    """The overhead fitted on one part's log excesses, and the other part's errors with it."""
    median = statistics.median(fitted_on)
    within = sum(abs(math.exp(median - r) - 1) <= 0.10 for r in held)
    return {"fitted_on_rows": len(fitted_on), "overhead": round(math.expm1(median), 4),
            "held_out_rows": len(held), "held_out_within_10_pct": within}


def percentiles(values: list[float]) -> dict:
    """The median and the 5% and 95% quantiles (linear interpolation, as numpy's default)."""
    q = statistics.quantiles(values, n=20, method="inclusive")
    return {"median": round(statistics.median(values), 1), "q05": round(q[0], 1),
            "q95": round(q[-1], 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build", help="the build directory (default build)")
    args = parser.parse_args()
    binary = ROOT / args.build / "bench" / "published_runs"
    fit = run_json(binary, "--fit")
    overhead = fit["intervals"]["memory_overhead"]["deepspeed"]["value"]
    rows = {r["id"]: r for r in run_json(binary)["rows"]}
    with (ROOT / "bench/plan/published_runs.csv").open(newline="") as f:
        table = [r for r in csv.DictReader(f)
                 if r["group"] == "bloom" and r["kind"] in ("run", "memory")
                 and r["published_gb_per_gpu"]]
    # log(published / estimate without the overhead), per row.
    excess = {}
    for r in table:
        estimate_gb = rows[r["id"]]["predicted_gb"] / (1 + overhead)
        excess[r["id"]] = math.log(float(r["published_gb_per_gpu"]) / estimate_gb)
    if not excess:
        print("no BLOOM memory rows in bench/plan/published_runs.csv", file=sys.stderr)
        return 1

    def part(pred) -> list[float]:
        return [excess[r["id"]] for r in table if pred(r)]

    fp16 = part(lambda r: r["precision"] == "fp16")
    bf16 = part(lambda r: r["precision"] == "bf16")
    early = part(lambda r: bloom_date(r["id"]) < "02-25")
    late = part(lambda r: bloom_date(r["id"]) >= "02-25")
    report = {
        "compiled_overhead": overhead,
        "rows": len(excess),
        "all_rows_overhead": round(math.expm1(statistics.median(excess.values())), 4),
        # The counted buffers alone against the readings (estimate / reading - 1, in percent).
        "without_overhead_error_pct": percentiles(
            [100 * math.expm1(-r) for r in excess.values()]),
        "fp16_to_bf16": predict(fp16, bf16),
        "bf16_to_fp16": predict(bf16, fp16),
        "before_02_25_to_later": predict(early, late),
        "from_02_25_to_earlier": predict(late, early),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
