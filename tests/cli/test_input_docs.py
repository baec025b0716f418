"""docs/inputs.md documents every key of the cost inputs, and the `--example` templates carry
the same keys (issue 46, item 4): a key the parser reads cannot be missing from the docs or the
template, nor documented but unknown to the parser (the template runs through its command in
test_first_screen.py, and the parser rejects unknown keys)."""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from conftest import REPO


HEADINGS = {"tco": "TCO", "roi": "ROI", "power": "Power", "breakdown": "Breakdown"}


def documented_keys(verb: str) -> set[str]:
    """The backticked keys of the first column of the verb's table; "`a.b.from`, `.to`" is
    a.b.from and a.b.to; "`power.coefficients.*`" stays a wildcard."""
    text = (REPO / "docs" / "inputs.md").read_text()
    start = text.index(f"\n## {HEADINGS[verb]}\n")
    end = text.find("\n## ", start + 1)
    keys: set[str] = set()
    for line in text[start:end if end > 0 else None].splitlines():
        if not line.startswith("| `"):
            continue
        base = ""
        for name in re.findall(r"`([^`]+)`", line.split("|")[1]):
            if name.startswith("."):
                keys.add(base + name[1:])
            else:
                base = name.rsplit(".", 1)[0] + "." if "." in name else ""
                keys.add(name)
    return keys


def covered(key: str, docs: set[str]) -> bool:
    return key in docs or any(d.endswith(".*") and key.startswith(d[:-1]) for d in docs)


def paths(node, prefix="") -> set[str]:
    out = set()
    for k, v in node.items():
        key = prefix + k
        if isinstance(v, dict):
            out |= paths(v, key + ".")
        else:
            out.add(key)
    return out


@pytest.mark.parametrize("verb", ["tco", "roi", "power", "breakdown"])
def test_template_and_docs_name_the_same_keys(seedancectl, verb):
    r = subprocess.run([str(seedancectl), "cost", verb, "--example"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0
    active = paths(yaml.safe_load(r.stdout))
    commented = set(re.findall(r"^\s*# (\w+):", r.stdout, re.M))
    docs = documented_keys(verb)
    undocumented = {k for k in active if not covered(k, docs)}
    assert not undocumented, f"in the template, not in docs/inputs.md: {sorted(undocumented)}"
    missing = {k for k in docs
               if not k.endswith(".*") and k not in active and k.rsplit(".", 1)[-1] not in commented}
    assert not missing, f"documented, not in the template: {sorted(missing)}"
