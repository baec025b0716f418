"""The package as a Python user meets it: dir() shows the API, a job can be a dict with
overrides, a wrong type is a TypeError naming the parameter, a CPU-only machine warns where it
cannot bind, and help(seedance) names every submodule (issue 46, item 6)."""

from __future__ import annotations

import importlib
import pydoc
import types
import warnings

import pytest
import yaml as pyyaml

import seedance

MODULES = ["seedance", "seedance.comm", "seedance.cost", "seedance.errors", "seedance.kv",
           "seedance.mem", "seedance.precision", "seedance.probe", "seedance.sched",
           "seedance.topo", "seedance.torch", "seedance.hf",
           "seedance.torch.accumulate", "seedance.torch.allocator", "seedance.torch.amp",
           "seedance.torch.checkpoint", "seedance.torch.collapse", "seedance.torch.comm",
           "seedance.torch.control", "seedance.torch.data", "seedance.torch.lifetimes",
           "seedance.torch.numa", "seedance.torch.precision_policy", "seedance.torch.record",
           "seedance.torch.recompute", "seedance.hf.attention", "seedance.hf.callback",
           "seedance.hf.kv_cache", "seedance.hf.split"]


@pytest.mark.parametrize("name", MODULES)
def test_dir_lists_the_api_only(name):
    module = importlib.import_module(name)
    listed = dir(module)
    assert listed == sorted(set(module.__all__) | (set(seedance._SUBMODULES)
                                                    if name == "seedance" else set()))
    for attr in listed:
        value = getattr(module, attr)  # every listed name resolves
        if isinstance(value, types.ModuleType):
            assert name == "seedance" and value.__name__ == f"seedance.{attr}"
        elif hasattr(value, "__module__") and attr != "__version__":
            # Defined in Seedance, not imported from typing, os, json, torch...
            assert (value.__module__ or "").startswith("seedance"), (name, attr, value.__module__)
    for helper in ("Any", "os", "json", "Iterable", "Optional", "Union", "torch", "np"):
        if name == "seedance" and helper == "torch":
            continue  # seedance.torch, the submodule
        assert helper not in listed, (name, helper)


def test_submodules_load_on_first_use():
    assert seedance.cost.bootstrap_ci is not None  # no `import seedance.cost` needed
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        seedance.nope  # noqa: B018


def test_help_names_every_submodule():
    text = pydoc.render_doc(seedance, renderer=pydoc.plaintext)
    for sub in seedance._SUBMODULES:
        line = next((l for l in text.splitlines() if f"``seedance.{sub}``:" in l), None)
        assert line is not None and len(line.split(":", 1)[1].strip()) > 10, sub


def test_optimize_takes_a_dict_yaml_text_and_overrides(tmp_path):
    spec = pyyaml.safe_load(seedance.default_job_yaml())
    from_dict = seedance.optimize(spec, dry_run=True)
    from_text = seedance.optimize(seedance.default_job_yaml(), dry_run=True)
    path = tmp_path / "job.yaml"
    path.write_text(seedance.default_job_yaml())
    from_path = seedance.optimize(path, dry_run=True)
    for report in (from_dict, from_text):
        assert report["model"] == from_path["model"]
        assert report["hardware"] == from_path["hardware"]
    assert from_dict["job"]["source"] == "<dict>"
    changed = seedance.optimize(spec, dry_run=True,
                                overrides={"hardware.gpu": "H200", "hardware.nodes": 4})
    assert changed["hardware"]["gpu"] == "H200"
    assert changed["hardware"]["gpus_total"] == 4 * from_dict["hardware"]["gpus_per_node"]
    assert changed["model"] == from_dict["model"]
    # Overrides on the built-in default job, and the spec's own checks on the result.
    assert seedance.optimize(overrides={"hardware.nodes": 1}, dry_run=True)["hardware"][
        "gpus_total"] == from_dict["hardware"]["gpus_per_node"]
    with pytest.raises(seedance.SeedanceError) as info:
        seedance.optimize(spec, overrides={"model.layers": -1}, dry_run=True)
    assert "model.layers" in info.value.where
    with pytest.raises(seedance.SeedanceError) as info:
        seedance.optimize(spec, overrides={"model.layers.count": 2})
    assert info.value.where == "overrides model.layers.count"
    assert spec == pyyaml.safe_load(seedance.default_job_yaml())  # the caller's dict untouched


@pytest.mark.parametrize("call, name", [
    (lambda: seedance.optimize(42), "job"),
    (lambda: seedance.optimize(overrides=[("hardware.gpu", "H200")]), "overrides"),
    (lambda: seedance.optimize(overrides={1: 2}), "overrides' keys"),
    (lambda: seedance.optimize(profile=1), "profile"),
    (lambda: seedance.optimize(catalog=3.5), "catalog"),
    (lambda: seedance.optimize({"model": object()}), "job"),
])
def test_wrong_types_raise_type_error_naming_the_parameter(call, name):
    with pytest.raises(TypeError) as info:
        call()
    assert name in str(info.value)
    assert "optimize()" in str(info.value)


def test_enable_names_the_wrong_argument():
    torch = pytest.importorskip("torch")
    import seedance.torch as st
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for args, name in [((None, None, None), "model"), ((model, None, None), "optimizer"),
                       ((model, optimizer, None), "loader")]:
        with pytest.raises(TypeError, match=rf"enable\(\): {name} must be"):
            st.enable(*args)


def test_numa_worker_init_warns_without_the_gpu(tmp_path):
    import seedance.torch as st
    (tmp_path / "sys" / "bus" / "pci" / "devices").mkdir(parents=True)  # a machine with no GPU
    called = []
    init = st.numa_worker_init_fn(gpu=0, root=str(tmp_path), then=called.append)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        init(3)
    assert called == [3]
    assert any("worker 3 left unbound" in str(w.message) for w in caught)


def test_dict_values_beyond_the_basic_plane_and_bad_override_values():
    spec = pyyaml.safe_load(seedance.default_job_yaml())
    spec["name"] = "run \N{ROCKET}"  # past U+FFFF: JSON's surrogate pairs would not be YAML
    assert seedance.optimize(spec, dry_run=True)["job"]["name"] == "run \N{ROCKET}"
    with pytest.raises(TypeError, match=r"overrides\['hardware.nodes'\]"):
        seedance.optimize(spec, overrides={"hardware.nodes": object()}, dry_run=True)
    # A quoted number stays a string through overrides, and the spec's reader refuses it.
    with pytest.raises(seedance.SeedanceError):
        seedance.optimize(spec, overrides={"hardware.nodes": "4"}, dry_run=True)
