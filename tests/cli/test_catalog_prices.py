"""The built-in prices are dated, sourced and not stale (issue 46, item 5): each is at most 365
days old today, and docs/gpu-catalog.md's price table gives the same price, kind and date with a
link to its source. A failure here means: re-check the price against its source and update
both."""

from __future__ import annotations

import datetime
import json
import re
import subprocess

from conftest import REPO

MAX_AGE_DAYS = 365


def catalog(seedancectl) -> dict[str, dict]:
    r = subprocess.run([str(seedancectl), "catalog", "list", "-o", "json"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    gpus = doc["gpus"] if isinstance(doc, dict) else doc
    return {g["id"]: g for g in gpus}


def documented() -> dict[str, list[str]]:
    text = (REPO / "docs" / "gpu-catalog.md").read_text()
    section = text[text.index("## Prices"):text.index("## Overriding")]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] not in ("id", "---"):
            rows[cells[0]] = cells
    return rows


def test_prices_are_recent(seedancectl):
    today = datetime.date.today()
    for gpu, g in catalog(seedancectl).items():
        age = (today - datetime.date.fromisoformat(g["price_date"])).days
        assert 0 <= age <= MAX_AGE_DAYS, (
            f"{gpu}: price of {g['price_date']} is {age} days old; re-check it against its "
            f"source ({g['price_source']}) and update src/cost/gpu_catalog_data.cc and "
            f"docs/gpu-catalog.md")


def test_docs_table_matches_the_catalog_with_links(seedancectl):
    rows = documented()
    built_in = catalog(seedancectl)
    assert set(rows) == set(built_in)
    for gpu, g in built_in.items():
        _, price, kind, date, source = rows[gpu]
        assert float(price) == g["price_per_hour_usd"], gpu
        assert kind == g["price_kind"], gpu
        assert date == g["price_date"], gpu
        assert re.search(r"\]\(https://[^)]+\)", source), f"{gpu}: no link to its source"
