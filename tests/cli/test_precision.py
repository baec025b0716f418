"""`seedancectl precision show`: encodings against known codes and Python."""

from __future__ import annotations

import json
import subprocess

import seedance.precision as sp


def run(binary, *args):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=60)


def show(binary, *values):
    r = run(binary, "precision", "show", *values, "--output", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["values"]


def test_e4m3_overflow_with_and_without_saturation(seedancectl):
    # 464 is the exact midpoint of 448 and 480 (the NaN code): ties to even
    # give 448, as NVIDIA's __nv_cvt_float_to_fp8 and torch do. Past it: NaN.
    (v464, v465, vinf) = show(seedancectl, "464", "465", "inf")
    assert v464["formats"]["fp8_e4m3"]["value"] == 448.0
    assert v465["formats"]["fp8_e4m3"]["code"] == "0x7f"
    assert v465["formats"]["fp8_e4m3"]["value"] == "nan"
    assert v465["formats"]["fp8_e4m3"]["saturated_value"] == 448.0
    assert vinf["formats"]["fp8_e5m2"]["value"] == "inf"
    assert vinf["formats"]["fp8_e5m2"]["saturated_value"] == 57344.0
    assert vinf["formats"]["fp16"]["saturated_code"] == "0x7bff"


def test_underflow_and_subnormals(seedancectl):
    (tiny, sub) = show(seedancectl, "1e-8", "0x1p-9")
    assert tiny["formats"]["fp16"]["value"] == 0.0      # below half of 2^-24: flushed
    assert tiny["formats"]["bf16"]["value"] != 0.0      # bf16 has float32's range
    assert sub["formats"]["fp8_e4m3"]["code"] == "0x01"  # smallest E4M3 subnormal


def test_cli_agrees_with_python(seedancectl):
    values = ["0", "-0", "1.5", "-3e38", "65520", "nan", "6e-8", "-1e-45"]
    assert show(seedancectl, *values) == sp.show(*values)


def test_negative_values_and_table(seedancectl):
    r = run(seedancectl, "precision", "show", "-1e9")
    assert r.returncode == 0, r.stderr
    assert "fp8_e4m3" in r.stdout and "-448" in r.stdout


def test_every_value_of_the_help_works_in_order(seedancectl):
    # Values that start with '-' and not a digit (-inf, -nan, -0x1p-9) look like short options to
    # CLI11: each must still be a value, in the order given, with flags before, among or after.
    r = run(seedancectl, "precision", "show", "--help")
    assert r.returncode == 0 and "-inf" in r.stdout
    got = show(seedancectl, "464", "-inf", "1e-8", "-0x1p-9", "nan", "inf", "-nan", "0x1p-9")
    assert [v["input"] for v in got] == ["464", "-inf", "1e-8", "-0x1p-9", "nan", "inf", "-nan",
                                         "0x1p-9"]
    assert got[1]["formats"]["fp16"]["code"] == "0xfc00"
    assert got[3]["formats"]["fp16"]["value"] == -2.0 ** -9
    flags_first = run(seedancectl, "precision", "show", "-o", "json", "-inf")
    assert flags_first.returncode == 0 and json.loads(flags_first.stdout)["values"][0]["input"] == "-inf"


def test_no_value_is_a_usage_error(seedancectl):
    r = run(seedancectl, "precision", "show")
    assert r.returncode == 2 and r.stdout == ""
    assert "expected one or more numbers" in r.stderr


def test_bad_value_is_an_error(seedancectl):
    r = run(seedancectl, "precision", "show", "1", "x1")
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.strip() == "error: not a number: 'x1' (value 2)"
