"""Every numeric option of every seedancectl verb: a documented range, and bad values refused.

The verbs and their options are read from --help, so a new option is covered the day it is
added. Each numeric option must show its range ("INT:in [lo, hi]" or "FLOAT:in [lo, hi]"); each
value of the table below, and the values just outside the range, must exit 2 with an error that
names the flag, before the command does any work.
"""

from __future__ import annotations

import re
import subprocess

import pytest

BAD_VALUES = ["nan", "NaN", "inf", "-inf", "", "0x10", " 5", "5 ", "+5", "1e400", "five",
              "9223372036854775808", "-9223372036854775809"]
OPTION = re.compile(r"^\s+(?:-\w,)?(--[\w-]+)(?:,-\w)?\s+(INT|UINT|FLOAT)\b(.*)$")
RANGE = re.compile(r":in \[([-+\d.e]+), ([-+\d.e]+)\]")


def help_text(seedancectl, *words: str) -> str:
    out = subprocess.run([str(seedancectl), *words, "--help"], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout


def subcommands(text: str) -> list[str]:
    if "Subcommands:" not in text:
        return []
    block = text.split("Subcommands:", 1)[1]
    return [m.group(1) for m in re.finditer(r"^  (\S+)\s{2,}", block, re.M)]


def verbs(seedancectl) -> list[tuple[str, ...]]:
    out = []
    for noun in subcommands(help_text(seedancectl)):
        sub = subcommands(help_text(seedancectl, noun))
        out.extend([(noun, v) for v in sub] if sub else [(noun,)])
    return out


def numeric_options(seedancectl) -> list[tuple[tuple[str, ...], str, str, str]]:
    found = []
    for verb in verbs(seedancectl):
        for line in help_text(seedancectl, *verb).splitlines():
            m = OPTION.match(line)
            if m:
                found.append((verb, m.group(1), m.group(2), m.group(3)))
    return found


def test_the_walk_finds_the_options_it_must(seedancectl) -> None:
    names = {(v, o) for v, o, _, _ in numeric_options(seedancectl)}
    for expected in [(("kv", "estimate"), "--bits"), (("simulate",), "--consolidate-after"),
                     (("topo", "check"), "--remote-limit"), (("mem", "plan"), "--capacity"),
                     (("kv", "serve-bench"), "--rate")]:
        assert expected in names


def test_every_numeric_option_documents_a_finite_range(seedancectl) -> None:
    missing = [(v, o) for v, o, _, rest in numeric_options(seedancectl) if not RANGE.search(rest)]
    assert missing == []


def out_of_range(kind: str, lo: str, hi: str) -> list[str]:
    if kind == "FLOAT":
        lo_v, hi_v = float(lo), float(hi)
        return [repr(lo_v - max(1.0, abs(lo_v))), repr(hi_v + max(1.0, abs(hi_v)))]
    return [str(int(lo) - 1), str(int(hi) + 1)]


@pytest.mark.parametrize("kind", ["INT", "FLOAT"])
def test_bad_values_exit_2_naming_the_flag(seedancectl, kind: str) -> None:
    checked = 0
    for verb, option, k, rest in numeric_options(seedancectl):
        if k.replace("UINT", "INT") != kind:
            continue
        lo, hi = RANGE.search(rest).groups()
        for value in BAD_VALUES + out_of_range(kind, lo, hi):
            out = subprocess.run([str(seedancectl), *verb, f"{option}={value}"],
                                 capture_output=True, text=True, timeout=30)
            where = f"{' '.join(verb)} {option}={value!r}"
            assert out.returncode == 2, f"{where}: exit {out.returncode}\n{out.stderr}"
            assert option in out.stderr, f"{where}: {out.stderr}"
            assert out.stdout == "", where
            checked += 1
    assert checked > 100
