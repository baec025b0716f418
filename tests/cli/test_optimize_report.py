"""`optimize --report PAGE.html`: one self-contained page drawn from the plan's own report,
laid out by headless Chromium with every host name unresolvable."""

from __future__ import annotations

import json
import subprocess

from test_simulate import chromium


def run(binary, *args):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def test_plan_page_renders_the_report(seedancectl, tmp_path):
    browser = chromium()
    page = tmp_path / "plan.html"
    r = run(seedancectl, "optimize", "--report", page, "-o", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    html = page.read_text()
    for forbidden in ("<script", "<link", "src=", "url(", "https://", "@import"):
        assert forbidden not in html, forbidden
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu",
              "--host-resolver-rules=MAP * ~NOTFOUND", "--no-first-run"]
    dom = subprocess.run(common + ["--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120)
    assert dom.returncode == 0, dom.stderr
    assert dom.stdout.count("<svg") == 3  # memory, step time, Pareto front
    assert dom.stdout.count('class="front"') == report["pareto_front"]["size"]
    assert dom.stdout.count("<li>") == len(report["reasons"])
    # The table's figures are the report's (step time to 3 decimals).
    assert f'{report["after"]["step_time_s"]:.3f}' in dom.stdout
    assert f'{report["before"]["step_time_s"]:.3f}' in dom.stdout
    # Every figure's 90% interval: beside it in the table, as a bar through each chart point.
    assert dom.stdout.count('class="interval"') - dom.stdout.count('span class="interval"') == (
        report["pareto_front"]["size"] + 2)
    low, high = report["after"]["interval"]["step_time_s"]
    assert f"({low:.3f}\u2013{high:.3f})" in html
    assert "90% interval" in html and report["recommendation"] in html
    shot = tmp_path / "plan.png"
    subprocess.run(common + [f"--screenshot={shot}", "--window-size=1000,1900", page.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 20_000


def test_report_refused_without_a_full_plan(seedancectl, tmp_path):
    page = tmp_path / "plan.html"
    for extra in (["--dry-run"], ["--evaluate-only"]):
        r = run(seedancectl, "optimize", *extra, "--report", page)
        assert r.returncode == 1 and "--report" in r.stderr
        assert not page.exists()
    # A path in a missing directory is refused before any work, as a usage error.
    assert run(seedancectl, "optimize", "--report", tmp_path / "no" / "p.html").returncode == 2
