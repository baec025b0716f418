"""One SIMD choice for the process (port/simd.h): SEEDANCE_SIMD and seedance.set_simd reach the
format conversions, the gradient quantizers and their decoder, with the same results either way.

The reference is the scalar code: each computation runs in a fresh interpreter with
SEEDANCE_SIMD=scalar and with the default (auto: AVX2 where the CPU has it), and the bytes must
match; a bad value stops the import with the variable named."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import seedance

# Encodes, compresses and decodes the same random data; prints hashes of the results and the
# choice the process runs with.
PROGRAM = r"""
import hashlib, json, numpy as np, seedance, seedance.precision as sp
from seedance import _core
rng = np.random.default_rng(7)
x = (rng.standard_normal(4099) * 3).astype(np.float32)
x[::97] = np.float32("inf"); x[5::101] = np.float32("nan")
out = {"simd": seedance.simd()}
for fmt in ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2"):
    codes = sp.encode(x, fmt, saturate=True)
    # A NaN decodes to a NaN either way; the F16C instruction keeps its payload bits.
    values = np.where(np.isnan(v := sp.decode(codes, fmt)), np.float32("nan"), v)
    out[fmt] = hashlib.sha256(codes.tobytes() + values.tobytes()).hexdigest()
y = np.nan_to_num(x, nan=0.0, posinf=1.0).astype(np.float32)
for kind in ("int8", "int4", "sign"):
    c = _core.Compressor(kind, 0.01, 0.01, 256, False, False)
    payload = c.compress(y.ctypes.data, y.size, 3)
    acc = np.zeros_like(y)
    buf = np.frombuffer(payload, dtype=np.uint8)
    _core.comm_decode_add(buf.ctypes.data, buf.size, acc.ctypes.data, acc.size, 1.0)
    out[kind] = hashlib.sha256(bytes(payload) + acc.tobytes()).hexdigest()
print(json.dumps(out))
"""


def run(simd: str | None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("SEEDANCE_SIMD", None)
    if simd is not None:
        env["SEEDANCE_SIMD"] = simd
    return subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          env=env, timeout=120)


def test_scalar_and_auto_give_the_same_bytes():
    auto, scalar = run(None), run("scalar")
    assert auto.returncode == 0, auto.stderr
    assert scalar.returncode == 0, scalar.stderr
    a, s = json.loads(auto.stdout), json.loads(scalar.stdout)
    assert a.pop("simd")["choice"] == "auto"
    assert s.pop("simd") == {"choice": "scalar", "active": "scalar",
                             "cpu_avx2_f16c": seedance.simd()["cpu_avx2_f16c"]}
    assert a == s


def test_a_bad_value_stops_the_import_with_the_variable_named():
    r = run("sse4")
    assert r.returncode != 0
    assert "SEEDANCE_SIMD" in r.stderr and "auto, scalar or avx2" in r.stderr


def test_set_simd_in_process():
    before = seedance.simd()
    try:
        seedance.set_simd("scalar")
        assert seedance.simd()["active"] == "scalar"
        import seedance.precision as sp
        assert sp.kernel() == "scalar"
        with pytest.raises(seedance.SeedanceError, match="auto, scalar or avx2"):
            seedance.set_simd("neon")
        if not before["cpu_avx2_f16c"]:
            with pytest.raises(seedance.SeedanceError, match="AVX2"):
                seedance.set_simd("avx2")
    finally:
        seedance.set_simd(before["choice"])
    assert seedance.simd() == before
