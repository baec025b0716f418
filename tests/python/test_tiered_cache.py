"""The tiered sample cache in a real DataLoader (feature CTRL-7): worker processes share one
copy (each sample loaded once across all workers, forked or spawned), the batches are the
uncached loader's, and the per-tier metrics reach the exporter and pass promtool."""

from __future__ import annotations

import multiprocessing
import os
import urllib.request

import pytest

torch = pytest.importorskip("torch")

from seedance import _core  # noqa: E402
from seedance.errors import SeedanceError  # noqa: E402
from seedance.torch import CachedDataset, enable, tiered_cache  # noqa: E402

from prometheus_check import assert_promtool_accepts  # noqa: E402


class CountingDataset(torch.utils.data.Dataset):
    """Sample i is (features, label) computed from i; every load bumps a shared counter."""

    def __init__(self, n: int, counter) -> None:
        self.n = n
        self.counter = counter

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        with self.counter.get_lock():
            self.counter.value += 1
        g = torch.Generator().manual_seed(i)
        return torch.randn(16, generator=g), i % 3


def batches(dataset, workers: int, seed: int, context=None) -> list:
    loader = torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=True,
                                         num_workers=workers, multiprocessing_context=context,
                                         generator=torch.Generator().manual_seed(seed))
    return [(x.clone(), y.clone()) for x, y in loader]


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_workers_share_one_copy_and_batches_are_unchanged(tmp_path, context) -> None:
    ctx = multiprocessing.get_context(context)
    counter = ctx.Value("i", 0)
    n = 120
    os.makedirs(tmp_path / "ssd")
    cache = tiered_cache(record_bytes=1024, host_records=64,
                         disk=[("ssd", str(tmp_path / "ssd"), 256)], path=str(tmp_path / "state"))
    cached = CachedDataset(CountingDataset(n, counter), cache)
    plain = CountingDataset(n, ctx.Value("i", 0))
    for epoch in range(3):
        got = batches(cached, 2, epoch, ctx)
        want = batches(plain, 0, epoch)
        assert len(got) == len(want)
        for (gx, gy), (wx, wy) in zip(got, want):
            assert torch.equal(gx, wx) and torch.equal(gy, wy)
    # Each sample was loaded once by one of the workers, then served by the cache.
    assert counter.value == n
    s = cache.stats()
    assert s["misses"] == n
    host, ssd = s["tiers"]
    assert host["hits"] + ssd["hits"] == 2 * n
    assert host["entries"] == 64 and ssd["entries"] > 0 and ssd["hits"] > 0
    assert cache.check() == ""
    cache.remove()
    assert not os.path.exists(tmp_path / "state")


def test_errors_name_the_sizes_and_the_field(tmp_path) -> None:
    cache = tiered_cache(record_bytes=64, host_records=4, path=str(tmp_path / "state"))
    ds = CachedDataset([torch.zeros(100)], cache)
    with pytest.raises(ValueError, match="encodes to .* bytes; the cache's records hold 64"):
        ds[0]
    with pytest.raises(SeedanceError, match=r"tiers\[1\]\.dir"):
        _core.TieredCache.create(str(tmp_path / "other"), 64, [("host", "", 4), ("ssd", "", 8)])
    with pytest.raises(SeedanceError, match="magic"):
        (tmp_path / "junk").write_bytes(b"x" * 4096)
        _core.TieredCache(str(tmp_path / "junk"))
    cache.remove()


def test_cache_metrics_are_served_with_the_decisions(tmp_path) -> None:
    cache = tiered_cache(record_bytes=1024, host_records=32, path=str(tmp_path / "state"))
    counter = multiprocessing.get_context("fork").Value("i", 0)
    data = CachedDataset(CountingDataset(48, counter), cache)
    loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=True)
    model = torch.nn.Linear(16, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sd = enable(model, opt, loader, metrics_listen="127.0.0.1:0", cache=cache, batch=False,
                freeze=False)
    for _ in range(2):
        for x, y in sd:
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            opt.zero_grad()
    with urllib.request.urlopen(f"http://127.0.0.1:{sd.controllers.recorder.port}/metrics") as r:
        metrics = r.read().decode()
    sd.close()
    s = cache.stats()
    assert f'seedance_cache_gets_total{{tier="host"}} {s["tiers"][0]["hits"]}' in metrics
    assert s["misses"] == counter.value and s["tiers"][0]["hits"] + s["misses"] == 2 * 48
    assert f'seedance_cache_gets_total{{tier="miss"}} {s["misses"]}' in metrics
    assert 'seedance_cache_get_seconds_bucket{tier="host",le="+Inf"}' in metrics
    assert "seedance_control_" in metrics or "seedance_probe_info" in metrics
    assert_promtool_accepts(metrics)
    cache.remove()
