"""seedance.precision against torch's own casts and quantizers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import seedance.precision as sp
from seedance.errors import SeedanceError


def _values() -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    bits = torch.randint(-2**31, 2**31 - 1, (500_000,), generator=g, dtype=torch.int64)
    raw = torch.from_numpy(bits.numpy().astype(np.int32).view(np.float32).copy())
    logu = torch.exp2(torch.empty(500_000).uniform_(-30, 20, generator=g))
    signs = torch.where(torch.rand(500_000, generator=g) < 0.5, -1.0, 1.0)
    edge = torch.tensor([0.0, -0.0, 65504, 65519, 65520, 65536, 6.1e-5, 5.96e-8, 2.98e-8, 3e-8,
                         3.39e38, 3.4e38, float("inf"), -float("inf"), 1e-40, -1e-45])
    return torch.cat([raw, logu * signs, edge])


@pytest.mark.parametrize("fmt,dtype", [("fp16", torch.float16), ("bf16", torch.bfloat16)])
@pytest.mark.parametrize("kernel", ["scalar", "auto"])
def test_encode_matches_torch_casts(fmt: str, dtype: torch.dtype, kernel: str) -> None:
    x = _values()
    ours = sp.encode(x, fmt, kernel=kernel)
    theirs = x.to(dtype).view(torch.int16).numpy().view(np.uint16)
    nan = torch.isnan(x).numpy()
    # NaN payloads differ by design (we write NVIDIA's canonical 0x7FFF); both must be NaN.
    assert np.array_equal(ours[~nan], theirs[~nan])
    assert np.isnan(sp.decode(ours[nan], fmt)).all()


@pytest.mark.parametrize("fmt,dtype", [("fp16", torch.float16), ("bf16", torch.bfloat16)])
def test_decode_every_code_matches_torch(fmt: str, dtype: torch.dtype) -> None:
    codes = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    ours = sp.decode(codes, fmt)
    theirs = torch.from_numpy(codes.view(np.int16)).view(dtype).float().numpy()
    both_nan = np.isnan(ours) & np.isnan(theirs)
    assert np.array_equal(ours[~both_nan], theirs[~both_nan])
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))


def test_fp8_tie_and_saturation() -> None:
    codes = sp.encode(np.array([448, 464, 465, -1e9, np.inf], np.float32), "fp8_e4m3")
    assert list(codes) == [0x7E, 0x7E, 0x7F, 0xFF, 0x7F]
    sat = sp.encode(np.array([465, -1e9, np.inf], np.float32), "fp8_e4m3", saturate=True)
    assert list(sat) == [0x7E, 0xFE, 0x7E]
    assert list(sp.encode(np.array([61440, 1e9], np.float32), "fp8_e5m2")) == [0x7C, 0x7C]


def test_show_reports_every_format() -> None:
    (r,) = sp.show("465")
    assert r["formats"]["fp8_e4m3"]["value"] == "nan"
    assert r["formats"]["fp8_e4m3"]["saturated_value"] == 448.0
    assert set(r["formats"]) == {"fp16", "bf16", "fp8_e4m3", "fp8_e5m2"}
    with pytest.raises(SeedanceError):
        sp.show("abc")


def test_int8_matches_torch_quantizers() -> None:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 300, generator=g) * torch.linspace(0.1, 5, 16).unsqueeze(1)
    q, scales = sp.quantize_int8(x)
    ref = torch.quantize_per_tensor(x, float(scales[0]), 0, torch.qint8)
    assert float(scales[0]) == pytest.approx(float(x.abs().max()) / 127, rel=1e-7)
    assert np.array_equal(q, ref.int_repr().numpy())
    qc, sc = sp.quantize_int8(x, channels=16)
    refc = torch.quantize_per_channel(x, torch.from_numpy(sc.astype(np.float64)),
                                      torch.zeros(16, dtype=torch.int64), 0, torch.qint8)
    # torch's per-channel path may round an exact tie the other way: allow one step there only.
    diff = np.abs(qc.astype(int) - refc.int_repr().numpy().astype(int))
    assert diff.max() <= 1 and (diff > 0).mean() < 1e-3
    with pytest.raises(SeedanceError):
        sp.quantize_int8(x, channels=7)


def test_drift_score_actions() -> None:
    counts, centers = sp.histogram(np.random.default_rng(0).normal(size=200_000), -6, 6)
    same = sp.drift_score(counts, counts, centers)
    assert same["action"] == "keep" and same["score"] == 0
    lap, _ = sp.histogram(np.random.default_rng(1).laplace(scale=2**-0.5, size=200_000), -6, 6)
    r = sp.drift_score(counts, lap, centers)
    assert r["action"] == "recalibrate"
    assert r["kurtosis_current"] == pytest.approx(3, abs=0.3)
