"""simulate's statistics over seeds (issue 46, item 2) against SciPy on the same seeds: each
policy's mean with scipy.stats.bootstrap's BCa interval, and each policy against the baseline,
paired by seed, with scipy.stats.bootstrap on the differences and scipy.stats.permutation_test's
sign-flip p-value (exact at 10 seeds: 2^10 patterns)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import seedance.sched as sched
from conftest import DATA, require_data

TRACE = DATA / "alibaba-gpu-2023"


@pytest.fixture(scope="module")
def report():
    require_data(TRACE)
    return sched.simulate(TRACE / "openb_node_list_gpu_node.csv",
                          TRACE / "openb_pod_list_default.csv",
                          policies=["fgd", "bestfit", "seedance"], seeds=10, threads=2)


def scipy_ci(values: np.ndarray) -> tuple[float, float]:
    r = stats.bootstrap((values,), np.mean, method="BCa", confidence_level=0.95,
                        n_resamples=9999, random_state=np.random.default_rng(1))
    return r.confidence_interval.low, r.confidence_interval.high


def test_spread_is_scipys_bootstrap_of_the_seeds(report):
    assert report["baseline"] == "fgd"
    for p in report["policies"]:
        for metric, s in p["seed_spread"].items():
            v = np.array(s["per_seed"])
            assert len(v) == 10
            assert s["mean"] == pytest.approx(v.mean(), rel=1e-12)
            assert s["sd"] == pytest.approx(v.std(ddof=1), rel=1e-9, abs=1e-12)
            lo, hi = s["interval_95"]
            if np.all(v == v[0]):
                assert lo == hi == v[0]
                continue
            slo, shi = scipy_ci(v)
            # Two Monte Carlo draws of 9,999 resamples: within a tenth of the interval's width.
            tol = 0.1 * (shi - slo) + 1e-9
            assert abs(lo - slo) <= tol and abs(hi - shi) <= tol, (p["policy"], metric)
        # The per-seed values are those the report's means average.
        assert p["seed_spread"]["unallocated_gpu_pct_at_130"]["mean"] == pytest.approx(
            p["unallocated_gpu_pct_at_130"], rel=1e-9)
        assert p["seed_spread"]["alloc_ratio_pct_at_100"]["mean"] == pytest.approx(
            p["alloc_ratio_pct_at"]["100"], rel=1e-9)


def test_paired_differences_against_scipy(report):
    spread = {p["policy"]: p["seed_spread"] for p in report["policies"]}
    comparisons = report["comparisons"]
    assert {(c["policy"], c["metric"]) for c in comparisons} == {
        (p, m) for p in ("bestfit", "seedance")
        for m in ("unallocated_gpu_pct_at_130", "alloc_ratio_pct_at_100")}
    for c in comparisons:
        a = np.array(spread[c["policy"]][c["metric"]]["per_seed"])
        b = np.array(spread["fgd"][c["metric"]]["per_seed"])
        d = a - b
        assert c["difference"] == pytest.approx(d.mean(), rel=1e-12, abs=1e-12)
        exact = stats.permutation_test((d,), np.mean, permutation_type="samples",
                                       n_resamples=9999, alternative="two-sided")
        assert c["p_value"] == pytest.approx(exact.pvalue, rel=1e-12)
        assert c["test"] == "paired by seed; sign-flip, exact"
        lo, hi = c["interval"]["difference"]
        slo, shi = scipy_ci(d)
        tol = 0.1 * (shi - slo) + 1e-9
        assert abs(lo - slo) <= tol and abs(hi - shi) <= tol, c
        lower_better = c["metric"].startswith("unallocated")
        assert c["better"] == ("policy" if (d.mean() < 0) == lower_better else "baseline")


def test_baseline_is_a_policy_run():
    require_data(TRACE)
    with pytest.raises(sched.SeedanceError if hasattr(sched, "SeedanceError") else ValueError,
                       match="baseline"):
        sched.simulate(TRACE / "openb_node_list_gpu_node.csv",
                       TRACE / "openb_pod_list_default.csv", policies=["fgd"], baseline="bestfit",
                       seeds=1)


def test_one_seed_has_no_interval():
    require_data(TRACE)
    r = sched.simulate(TRACE / "openb_node_list_gpu_node.csv",
                       TRACE / "openb_pod_list_default.csv", policies=["fgd", "bestfit"], seeds=1)
    s = r["policies"][0]["seed_spread"]["unallocated_gpu_pct_at_130"]
    assert s["interval_95"] is None and len(s["per_seed"]) == 1
    assert all(c["p_value"] is None and c["interval"] is None for c in r["comparisons"])
