"""seedance.cost's statistics and Pareto fronts against independent references: SciPy
(mannwhitneyu, f_oneway, bootstrap) on hundreds of random cases, and the O(n^2) definition of
dominance written here in NumPy.

Tolerances: statistics and p-values 1e-9 relative (the methods are deterministic); bootstrap
bounds within the resampling error, measured in the test itself: SciPy is run twice with
different random streams, and Seedance's bounds must lie as close to SciPy's as SciPy's two runs
lie to each other (at most twice their worst difference over the cases, in units of the
bootstrap standard error, plus 0.05). The median's bootstrap distribution is lumpy, so its
resampling error is several times the mean's; the test measures it rather than assuming it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import seedance.cost as cost
from seedance import SeedanceError

RNG_SEED = 20261202


def close(got: float, want: float, rel: float = 1e-9, abs_tol: float = 1e-300) -> bool:
    return math.isclose(got, want, rel_tol=rel, abs_tol=abs_tol)


def random_samples(rng: np.random.Generator, n1: int, n2: int, ties: bool):
    shift = rng.uniform(-1, 1)
    x = rng.normal(shift, 1, n1)
    y = rng.normal(0, 1, n2)
    if ties:
        x, y = np.round(x * 2), np.round(y * 2)
    return x, y


def test_mann_whitney_matches_scipy_on_400_random_cases():
    rng = np.random.default_rng(RNG_SEED)
    checked = 0
    for case in range(400):
        ties = case % 3 == 0
        n1, n2 = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        if case % 4 == 0:  # small samples: the exact method under auto
            n1, n2 = int(rng.integers(1, 9)), int(rng.integers(1, 25))
        x, y = random_samples(rng, n1, n2, ties)
        alternative = ("two-sided", "less", "greater")[case % 3]
        method = ("auto", "asymptotic", "exact")[case % 5 % 3] if not ties else "auto"
        continuity = case % 7 != 0
        want = stats.mannwhitneyu(x, y, alternative=alternative, method=method,
                                  use_continuity=continuity)
        u, p = cost.mann_whitney_u(x, y, alternative=alternative, method=method,
                                   use_continuity=continuity)
        assert close(u, float(want.statistic), 1e-12), (case, u, want)
        assert close(p, float(want.pvalue), 1e-9, 1e-300), (case, n1, n2, method, p, want)
        checked += 1
    assert checked == 400


def test_f_oneway_matches_scipy_on_300_random_cases_both_variants():
    rng = np.random.default_rng(RNG_SEED + 1)
    for case in range(300):
        k = int(rng.integers(2, 7))
        groups = [rng.normal(rng.uniform(-0.5, 0.5), rng.uniform(0.2, 3.0), int(rng.integers(2, 30)))
                  for _ in range(k)]
        if case % 5 == 0:  # ties and integers
            groups = [np.round(g * 3) for g in groups]
            if any(np.all(g == g[0]) for g in groups):
                continue
        equal_var = case % 2 == 0
        want = stats.f_oneway(*groups, equal_var=equal_var)
        f, p = cost.f_oneway(*groups, equal_var=equal_var)
        assert close(f, float(want.statistic), 1e-9), (case, f, want)
        assert close(p, float(want.pvalue), 1e-9, 1e-300), (case, p, want)


def test_f_oneway_degenerate_inputs():
    f, p = cost.f_oneway([1, 1], [2, 2, 2])  # constant groups that differ: SciPy's inf, 0
    assert f == math.inf and p == 0.0
    with pytest.raises(SeedanceError, match="every value is equal"):
        cost.f_oneway([3, 3], [3, 3, 3])  # SciPy returns nan
    with pytest.raises(SeedanceError) as e:
        cost.f_oneway([1, 2], [])
    assert e.value.where == "groups[1]"
    with pytest.raises(SeedanceError) as e:
        cost.f_oneway([1, 2, float("nan")], [1, 2])
    assert e.value.where == "groups[0][2]"


def worst_differences(cases, scipy_ci, ours_ci):
    """(worst |scipy run 1 - scipy run 2|, worst |ours - scipy run 1|) over the cases, each in
    bootstrap standard errors."""
    resampling, ours = 0.0, 0.0
    for case, data in enumerate(cases):
        a, b = scipy_ci(data, case), scipy_ci(data, case + 1000)
        low, high = ours_ci(data, case)
        se = float(a.standard_error)
        ca, cb = a.confidence_interval, b.confidence_interval
        resampling = max(resampling, abs(ca.low - cb.low) / se, abs(ca.high - cb.high) / se)
        ours = max(ours, abs(low - ca.low) / se, abs(high - ca.high) / se)
    return resampling, ours


@pytest.mark.parametrize("statistic", ["mean", "median"])
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_bounds_match_scipy_within_the_resampling_error(statistic, method):
    rng = np.random.default_rng(RNG_SEED + 2)
    fn = np.mean if statistic == "mean" else np.median
    # Skewed samples (BCa differs from the percentile interval), odd sizes (one middle value).
    cases = [rng.lognormal(0, rng.uniform(0.2, 1.0), int(rng.integers(25, 80)) | 1)
             for _ in range(15)]
    resampling, ours = worst_differences(
        cases,
        lambda x, seed: stats.bootstrap((x,), fn, method="BCa" if method == "bca" else method,
                                        n_resamples=9999, rng=np.random.default_rng(seed)),
        lambda x, seed: cost.bootstrap_ci(x, statistic=statistic, method=method,
                                          resamples=9999, seed=seed))
    assert ours <= 2 * resampling + 0.05, (ours, resampling)


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_bootstrap_ratio_matches_scipys_two_sample_bca(statistic):
    rng = np.random.default_rng(RNG_SEED + 3)
    fn = np.mean if statistic == "mean" else np.median

    def ratio(x, y, axis=-1):
        return fn(x, axis=axis) / fn(y, axis=axis)

    cases = [(rng.lognormal(1.0, 0.3, int(rng.integers(20, 60)) | 1),
              rng.lognormal(0.8, 0.3, int(rng.integers(20, 60)) | 1)) for _ in range(8)]
    resampling, ours = worst_differences(
        cases,
        lambda xy, seed: stats.bootstrap(xy, ratio, method="BCa", n_resamples=9999,
                                         rng=np.random.default_rng(seed)),
        lambda xy, seed: cost.bootstrap_ratio_ci(*xy, statistic=statistic, resamples=9999,
                                                 seed=seed))
    assert ours <= 2 * resampling + 0.05, (ours, resampling)


def test_bootstrap_degenerate_inputs():
    assert cost.bootstrap_ci([4, 4, 4], method="percentile") == (4.0, 4.0)
    # BCa on a constant sample: SciPy returns NaN (its acceleration is 0/0); Seedance's
    # documented fallback (acceleration 0) gives the percentile interval.
    assert cost.bootstrap_ci([4, 4, 4], method="bca") == (4.0, 4.0)
    with pytest.raises(SeedanceError) as e:
        cost.bootstrap_ci([1.0])
    assert e.value.where == "sample"
    with pytest.raises(SeedanceError) as e:
        cost.bootstrap_ci([1.0, 2.0], statistic="mode")
    assert "expected mean or median" in e.value.message


def dominated_numpy(points: np.ndarray, directions, strict: bool) -> np.ndarray:
    """The O(n^2) definition, vectorised: q dominates p."""
    signs = np.array([1.0 if d == "max" else -1.0 for d in directions])
    v = points * signs
    ge = np.all(v[:, None, :] >= v[None, :, :], axis=2)  # ge[q, p]
    gt_all = np.all(v[:, None, :] > v[None, :, :], axis=2)
    gt_any = np.any(v[:, None, :] > v[None, :, :], axis=2)
    dom = gt_all if strict else ge & gt_any
    return dom.any(axis=0)


def test_pareto_front_matches_the_numpy_definition():
    rng = np.random.default_rng(RNG_SEED + 4)
    for case in range(120):
        d = 1 + case % 3
        directions = tuple(rng.choice(["max", "min"], d))
        n = int(rng.integers(1, 200))
        levels = int(rng.choice([2, 4, 10, 1000]))
        pts = rng.integers(0, levels, (n, d)).astype(float)
        for dominance in ("pareto", "strict"):
            want = np.flatnonzero(~dominated_numpy(pts, directions, dominance == "strict"))
            got = cost.pareto_front(pts.tolist(), directions, dominance=dominance)
            assert got == want.tolist(), (case, dominance)


def test_pareto_front_errors_name_the_point():
    with pytest.raises(SeedanceError) as e:
        cost.pareto_front([(1, 2), (3, float("nan"))], ("max", "min"))
    assert e.value.where == "points[1][1]"
    with pytest.raises(SeedanceError) as e:
        cost.pareto_front([(1, 2), (3,)], ("max", "min"))
    assert e.value.where == "points[1]"
    with pytest.raises(SeedanceError) as e:
        cost.pareto_front([(1, 2)], ("max", "up"))
    assert e.value.where == "directions[1]"
