"""seedance.sched.simulate returns the report `seedancectl simulate -o json` prints for the same
settings (one builder in the library), and raises SeedanceError on bad settings."""

from __future__ import annotations

import json
import subprocess

import pytest

import seedance.sched
from conftest import DATA, require_data
from seedance.errors import SeedanceError

ALIBABA = DATA / "alibaba-gpu-2023"
PHILLY = DATA / "philly"


def strip(value):
    """The report without run times (they differ from run to run)."""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k != "runtime_ms"}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def cli(seedancectl, *args):
    r = subprocess.run([str(seedancectl), "simulate", *map(str, args), "-o", "json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_fgd_protocol_same_report_as_the_cli(seedancectl):
    require_data(ALIBABA)
    nodes, pods = ALIBABA / "openb_node_list_gpu_node.csv", ALIBABA / "openb_pod_list_default.csv"
    py = seedance.sched.simulate(nodes, pods, policies=["fgd", "random"], seeds=2)
    assert strip(py) == strip(cli(seedancectl, "--nodes", nodes, "--pods", pods, "--policy",
                                  "fgd,random", "--seeds", "2"))
    assert list(py) == ["verdict", "nodes", "pods", "seeds", "baseline", "policies",
                        "comparisons"]


def test_event_mode_same_report_as_the_cli(seedancectl, tmp_path):
    require_data(PHILLY)
    nodes, jobs = PHILLY / "philly_vc_nodes.csv", PHILLY / "philly_jobs_pollux.csv"
    py = seedance.sched.simulate(nodes, jobs, protocol="events", policies=["bestfit"], seeds=1,
                                 gpus_per_node=2, quotas=True, tiers=True,
                                 tier_of={"11cb48": "gold", "b436b2": "bronze"},
                                 slo={"gold": 600, "silver": 600}, max_retries=3)
    out = cli(seedancectl, "--protocol", "events", "--nodes", nodes, "--pods", jobs, "--policy",
              "bestfit", "--seeds", "1", "--gpus-per-node", "2", "--quotas", "--tiers",
              "--tier-of", "11cb48=gold,b436b2=bronze", "--slo", "gold=600,silver=600",
              "--max-retries", "3")
    assert strip(py) == strip(out)
    assert py["policies"][0]["tiers_first_seed"][0]["tier"] == "gold"


@pytest.mark.parametrize("kwargs, where", [
    ({"protocol": "events", "tier_of": {"a": "gold"}}, "tier_of"),            # needs tiers
    ({"protocol": "events", "redistribute": True}, "redistribute"),           # needs overcommit
    ({"protocol": "events", "tiers": True, "tier_of": {"a": "platinum"}}, "tier_of.a"),
    ({"quotas": True}, "protocol"),                                           # event-mode only
    ({"ties": "alphabetical"}, "ties"),
])
def test_bad_settings_raise(kwargs, where):
    require_data(PHILLY)
    with pytest.raises(SeedanceError) as e:
        seedance.sched.simulate(PHILLY / "philly_vc_nodes.csv", PHILLY / "philly_jobs_pollux.csv",
                                seeds=1, **kwargs)
    assert e.value.where == where, str(e.value)


def test_unknown_policy_and_missing_file_raise(tmp_path):
    require_data(ALIBABA)
    with pytest.raises(SeedanceError, match="no-such-policy|unknown policy|policy"):
        seedance.sched.simulate(ALIBABA / "openb_node_list_gpu_node.csv",
                                ALIBABA / "openb_pod_list_default.csv", policies=["no-such-policy"],
                                seeds=1)
    with pytest.raises(SeedanceError, match="cannot read the node list"):
        seedance.sched.simulate(tmp_path / "missing.csv", ALIBABA / "openb_pod_list_default.csv")
