"""Cost model and benchmark statistics (``seedancectl cost``).

Plain functions that follow SciPy's definitions (each is tested against SciPy on hundreds of
random cases; see docs/design/cost.md):

    >>> import seedance.cost as cost
    >>> u, p = cost.mann_whitney_u([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    >>> f, p = cost.f_oneway([1, 2, 3], [4, 5, 6], [7, 8, 9])
    >>> low, high = cost.bootstrap_ci([1.0, 2.5, 2.0, 3.0], statistic="median")
    >>> cost.pareto_front([(10, 4), (8, 2), (7, 5)], ("max", "min"))
    [0, 1]

and the reports of the CLI: ``compare(a, b)`` is ``seedancectl cost compare A B -o json``,
``pareto(csv, objectives)`` is ``seedancectl cost pareto ... -o json``, and ``tco``, ``roi``,
``power``, ``breakdown`` and ``power_fit`` are ``seedancectl cost <verb> --input FILE -o json``
(a path, or the YAML text as ``yaml=``; the spec formats are in docs/design/cost.md).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Iterable, Optional, Sequence, Union

from seedance import _core
from seedance.errors import SeedanceError, read_text

__all__ = ["bootstrap_ci", "bootstrap_ratio_ci", "breakdown", "compare", "f_oneway",
           "mann_whitney_u", "pareto", "pareto_front", "power", "power_fit", "roi", "tco"]

PathLike = Union[str, "os.PathLike[str]"]


def _floats(values: Iterable[Any], name: str) -> list[float]:
    try:
        return [float(v) for v in values]
    except (TypeError, ValueError) as e:
        raise SeedanceError(f"expected numbers: {e}", name) from e


def mann_whitney_u(x: Iterable[float], y: Iterable[float], *, alternative: str = "two-sided",
                   method: str = "auto", use_continuity: bool = True) -> tuple[float, float]:
    """The Mann-Whitney U test: ``(U1, p)`` as ``scipy.stats.mannwhitneyu(x, y)`` returns them.

    ``method="auto"`` is exact when the smaller sample has at most 8 values and there are no
    ties, else the normal approximation with the tie correction (and the continuity correction
    unless ``use_continuity=False``).
    """
    return _core.mann_whitney_u(_floats(x, "x"), _floats(y, "y"), alternative, method,
                                use_continuity)


def f_oneway(*groups: Iterable[float], equal_var: bool = True) -> tuple[float, float]:
    """One-way ANOVA: ``(F, p)`` as ``scipy.stats.f_oneway(*groups, equal_var=...)``.

    ``equal_var=False`` is Welch's test. When every group is constant but the groups differ,
    F is inf and p is 0; an input on which F is undefined raises SeedanceError.
    """
    return _core.f_oneway([_floats(g, f"groups[{i}]") for i, g in enumerate(groups)], equal_var)


def bootstrap_ci(sample: Iterable[float], *, statistic: str = "mean", method: str = "bca",
                 confidence: float = 0.95, resamples: int = 9999,
                 seed: int = 0) -> tuple[float, float]:
    """The bootstrap confidence interval ``(low, high)`` of the sample's mean or median,
    percentile or BCa, as ``scipy.stats.bootstrap`` defines them (the random streams differ, so
    bounds agree within the resampling error)."""
    return _core.bootstrap_ci(_floats(sample, "sample"), statistic, method, confidence,
                              resamples, seed)


def bootstrap_ratio_ci(x: Iterable[float], y: Iterable[float], *, statistic: str = "median",
                       method: str = "bca", confidence: float = 0.95, resamples: int = 9999,
                       seed: int = 0) -> tuple[float, float]:
    """The bootstrap interval of ``statistic(x) / statistic(y)``, the two samples resampled
    independently (``scipy.stats.bootstrap((x, y), ..., paired=False)``)."""
    return _core.bootstrap_ratio_ci(_floats(x, "x"), _floats(y, "y"), statistic, method,
                                    confidence, resamples, seed)


def pareto_front(points: Iterable[Sequence[float]], directions: Sequence[str], *,
                 dominance: str = "pareto", unique: bool = False) -> list[int]:
    """Indices (ascending) of the points no other point dominates.

    Args:
        points: each a sequence of ``len(directions)`` numbers (1 to 3 objectives).
        directions: "max" or "min" per objective, e.g. ``("max", "min", "min")``.
        dominance: "pareto" (at least as good in all, better in one) or "strict" (better in
            all: the weakly Pareto-optimal points).
        unique: keep one index per distinct point (the first).
    """
    d = len(directions)
    flat: list[float] = []
    for i, p in enumerate(points):
        row = _floats(p, f"points[{i}]")
        if len(row) != d:
            raise SeedanceError(f"expected {d} values, got {len(row)}", f"points[{i}]")
        if any(math.isnan(v) for v in row):
            k = next(k for k, v in enumerate(row) if math.isnan(v))
            raise SeedanceError("expected a number, got NaN", f"points[{i}][{k}]")
        flat.extend(row)
    return list(_core.pareto_front(flat, list(directions), dominance, unique))


def compare(a: PathLike, b: PathLike, *, metric: str = "real_time", alpha: float = 0.05,
            noise: float = 0.02, confidence: float = 0.95, resamples: int = 9999, seed: int = 0,
            higher_is_better: bool = False) -> dict[str, Any]:
    """``seedancectl cost compare A B -o json``: per benchmark the change of the median from A
    to B, its BCa interval, the Mann-Whitney p-value and a verdict."""
    return json.loads(_core.cost_compare_json(read_text(a), os.fspath(a), read_text(b),
                                              os.fspath(b), metric, alpha, noise, confidence,
                                              resamples, seed, higher_is_better))


def pareto(csv: PathLike, objectives: str, *, dominance: str = "pareto",
           unique: bool = False) -> dict[str, Any]:
    """``seedancectl cost pareto --input CSV --objectives ... -o json``: the front's rows."""
    return json.loads(_core.cost_pareto_json(read_text(csv), os.fspath(csv), objectives,
                                             dominance, unique))


def _model(verb: str, path: Optional[PathLike], yaml: Optional[str],
           catalog: Optional[PathLike]) -> dict[str, Any]:
    if path is not None and yaml is not None:
        raise ValueError("give either a path or yaml, not both")
    source = "(defaults)" if yaml is None else "<string>"
    text = "{}" if yaml is None else yaml
    if path is not None:
        text, source = read_text(path), os.fspath(path)
    catalog_yaml = read_text(catalog) if catalog is not None else None
    catalog_source = os.fspath(catalog) if catalog is not None else ""
    fn = getattr(_core, f"cost_{verb}_json")
    return json.loads(fn(text, source, catalog_yaml, catalog_source))


def tco(path: Optional[PathLike] = None, *, yaml: Optional[str] = None,
        catalog: Optional[PathLike] = None) -> dict[str, Any]:
    """``seedancectl cost tco``: cost per GPU-hour, per PFLOP-hour and per 1,000 requests with
    the breakdown (depreciation or rent, power, network, storage, operations)."""
    return _model("tco", path, yaml, catalog)


def roi(path: Optional[PathLike] = None, *, yaml: Optional[str] = None,
        catalog: Optional[PathLike] = None) -> dict[str, Any]:
    """``seedancectl cost roi``: an optimization's ROI and payback, and the utilization x
    scale-out sensitivity matrix with each cell's decision."""
    return _model("roi", path, yaml, catalog)


def power(path: Optional[PathLike] = None, *, yaml: Optional[str] = None,
          catalog: Optional[PathLike] = None) -> dict[str, Any]:
    """``seedancectl cost power``: the node's power by term, energy per step and per token."""
    return _model("power", path, yaml, catalog)


def breakdown(path: Optional[PathLike] = None, *, yaml: Optional[str] = None,
              catalog: Optional[PathLike] = None) -> dict[str, Any]:
    """``seedancectl cost breakdown``: a run's compute, storage I/O, network and scheduling
    overhead in USD and as shares of the total."""
    return _model("breakdown", path, yaml, catalog)


def power_fit(samples: PathLike) -> dict[str, Any]:
    """``seedancectl cost power-fit``: the power model's coefficients fitted to a samples CSV by
    least squares, with standard errors and R^2."""
    return json.loads(_core.cost_power_fit_json(read_text(samples), os.fspath(samples)))


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
