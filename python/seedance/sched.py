"""Scheduler experiments (``seedancectl simulate``): a node list and a pod or job trace,
scheduled with each policy once per seed and averaged.

    >>> import seedance.sched as sched
    >>> r = sched.simulate("openb_node_list_gpu_node.csv", "openb_pod_list_default.csv",
    ...                    policies=["fgd", "bestfit"], seeds=1)
    >>> [p["policy"] for p in r["policies"]]
    ['fgd', 'bestfit']

The report is the one ``seedancectl simulate -o json`` prints for the same settings (the same
library code builds both); every keyword is the command's flag in snake case, with the flag's
default. Event-mode settings need ``protocol="events"``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional, Sequence, Union

from seedance import _core

__all__ = ["simulate"]

PathLike = Union[str, "os.PathLike[str]"]


def simulate(nodes: PathLike, pods: PathLike, *, protocol: str = "fgd",
             policies: Sequence[str] = ("fgd",), baseline: Optional[str] = None,
             seeds: int = 10, ties: str = "auto",
             threads: Optional[int] = None, gpus_per_node: int = 8, backfill_window: int = 64,
             quotas: bool = False, tiers: bool = False,
             tier_of: Optional[Mapping[str, str]] = None, max_retries: Optional[int] = None,
             job_util: Optional[PathLike] = None, consolidate: bool = False,
             consolidate_below_pct: float = 5, consolidate_after_s: float = 600,
             consolidate_share_milli: int = 100, overcommit: bool = False,
             redistribute: bool = False, spot_fraction: float = 0,
             spot_interruptions_per_day: float = 0, spot_recovery_s: float = 600,
             spot_price_ratio: float = 0.3, slo: Optional[Mapping[str, float]] = None,
             checkpoint_interval_s: float = 1800, restore_cost_s: float = 60) -> dict[str, Any]:
    """Runs the experiment and returns its report (``simulate -o json``'s fields).

    Args:
        nodes: Alibaba 2023 node list, PAI 2020 machine spec or Philly VC node counts.
        pods: Alibaba 2023 pod list, or (event mode) a Philly job list.
        protocol: "fgd" (the FGD paper's) or "events" (arrivals and departures).
        policies: random, bestfit, dotprod, gpupacking, gpuclustering, fgd, seedance.
        baseline: the policy the others are compared with, paired by seed (the report's
            ``comparisons``); default: the first of ``policies``.
        seeds: runs per policy (seeds 42, 43, ...), averaged.
        ties: "auto", "name", "shuffled-names" or "random".
        threads: seeds run in parallel (default: the CPUs).
        tier_of: tiers by group, e.g. ``{"11cb48": "gold"}`` (with ``tiers``).
        max_retries: preemptions a job may suffer (default: no limit).
        job_util: CSV ``id,gpu_util_pct`` of each job's GPU utilization.
        slo: queueing-delay SLOs in seconds by group or tier, e.g. ``{"gold": 600}``.

    Raises:
        SeedanceError: a file or a setting is invalid; ``.where`` names the file and line or
            the setting.
    """
    settings: dict[str, Any] = {
        "nodes": os.fspath(nodes), "pods": os.fspath(pods), "protocol": protocol,
        "policies": list(policies), "seeds": seeds, "ties": ties,
        "gpus_per_node": gpus_per_node, "backfill_window": backfill_window, "quotas": quotas,
        "tiers": tiers, "consolidate": consolidate,
        "consolidate_below_pct": float(consolidate_below_pct),
        "consolidate_after_s": float(consolidate_after_s),
        "consolidate_share_milli": consolidate_share_milli, "overcommit": overcommit,
        "redistribute": redistribute, "spot_fraction": float(spot_fraction),
        "spot_interruptions_per_day": float(spot_interruptions_per_day),
        "spot_recovery_s": float(spot_recovery_s), "spot_price_ratio": float(spot_price_ratio),
        "checkpoint_interval_s": float(checkpoint_interval_s),
        "restore_cost_s": float(restore_cost_s),
        "slo": {k: float(v) for k, v in (slo or {}).items()},
        "tier_of": dict(tier_of or {}),
    }
    if baseline is not None:
        settings["baseline"] = baseline
    if threads is not None:
        settings["threads"] = threads
    if max_retries is not None:
        settings["max_retries"] = max_retries
    if job_util is not None:
        settings["job_util"] = os.fspath(job_util)
    return json.loads(_core.simulate_json(settings))


def __dir__() -> list[str]:
    """The API only (``__all__``), not the helpers this module imports."""
    return sorted(__all__)
