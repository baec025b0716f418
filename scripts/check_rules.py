#!/usr/bin/env python3
"""The architecture's rules that a compiler does not check (docs/architecture.md).

    python3 scripts/check_rules.py        # exit 1 and one line per breach

1. A module's code (src/<m>/, include/seedance/<m>/) includes public headers only of <m> and of
   the modules its CMake target depends on (DEPS in src/<m>/CMakeLists.txt, followed
   transitively), and private headers (src/<x>/...) only of <m>; a public header never includes a
   private one.
2. Clocks are read through base::Env: no steady_clock, system_clock or high_resolution_clock
   outside src/base/env_posix.cc (tests, benchmarks and tools measure real time and may).
3. Numbers are read by base's strict parsers: no stoi/stol/stod/stof, atoi/atof, strtol/strtod or
   istringstream in the library's sources (tests may use them as references).
4. The repository stands on its own: no tracked text file points at documents outside it (the
   product specification, the design notes, the seed notes); features are cited by their id in
   docs/features.md, and every id cited ("feature MEM-2", "features KV-*") is one listed there.
   Data sets under SEEDANCE_DATA_DIR are data, not documents, and may be named.
"""

from __future__ import annotations

import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
CLOCK = re.compile(r"\b(steady_clock|system_clock|high_resolution_clock)\b")
AD_HOC = re.compile(r"\b(std::sto[ilfd]l?|std::stoll|std::stoul|std::stoull|atoi|atof|atol|"
                    r"strto[ld]|strtoull?|strtoll|istringstream)\b")
OUTSIDE = re.compile(r"SPEC\.md|DESIGN\.md|shared/(?:notes|seeds)\b|\bSPEC [A-Z]+-\d|"
                     r"\b(?:seed )?notes? 0\d\d\b|\bseeds? 0\d\d\b|fgd-protocol\.md")
CITED = re.compile(r"\bfeatures? ([A-Z]+)-(\d+|\*)")
TEXT_SUFFIXES = {".cc", ".h", ".cu", ".py", ".md", ".sh", ".txt", ".cmake", ".yaml", ".json", ""}
COMMENT = re.compile(r"//.*?$|/\*.*?\*/", re.S | re.M)


def module_deps() -> dict[str, set[str]]:
    """Each module's direct dependencies, from seedance_add_library(... DEPS ...)."""
    deps: dict[str, set[str]] = {}
    for cmake in sorted((REPO / "src").glob("*/CMakeLists.txt")):
        text = cmake.read_text()
        for m in re.finditer(r"seedance_add_library\(\s*(\w+)(.*?)\)", text, re.S):
            name, body = m.group(1), m.group(2)
            found = re.search(r"\bDEPS\b(.*?)(?:\bPRIVATE_DEPS\b|\bSOURCES\b|$)", body, re.S)
            deps[name] = set(re.findall(r"seedance::(\w+)", found.group(1) if found else ""))
    return deps


def closure(deps: dict[str, set[str]]) -> dict[str, set[str]]:
    out = {}
    for m in deps:
        seen, todo = set(), [m]
        while todo:
            x = todo.pop()
            if x in seen:
                continue
            seen.add(x)
            todo.extend(deps.get(x, ()))
        out[m] = seen
    return out


def code(path: pathlib.Path) -> str:
    return COMMENT.sub("", path.read_text(errors="replace"))


def tracked_files() -> list[pathlib.Path]:
    import subprocess
    out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    return [REPO / line for line in out.stdout.splitlines()]


def standalone_breaches() -> list[str]:
    """Rule 4: pointers to documents outside the repository, and cited ids that do not exist."""
    features = (REPO / "docs" / "features.md").read_text()
    ids = set(re.findall(r"^\| ([A-Z]+-\d+) \|", features, re.M))
    prefixes = {i.split("-")[0] for i in ids}
    breaches = []
    for f in tracked_files():
        rel = f.relative_to(REPO)
        if f.suffix not in TEXT_SUFFIXES or not f.is_file() or rel.parts[0] == "tests" and \
                "golden" in rel.parts or str(rel) == "scripts/check_rules.py":
            continue
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            if m := OUTSIDE.search(line):
                breaches.append(f"{rel}:{n}: points outside the repository ('{m.group(0)}'); "
                                "cite a feature id of docs/features.md")
            for prefix, number in CITED.findall(line):
                known = prefix in prefixes if number == "*" else f"{prefix}-{number}" in ids
                if not known:
                    breaches.append(f"{rel}:{n}: cites feature {prefix}-{number}, which "
                                    "docs/features.md does not list")
    return breaches


def main() -> int:
    deps = closure(module_deps())
    breaches = []
    for module, allowed in sorted(deps.items()):
        files = sorted((REPO / "src" / module).glob("*.cc")) + \
            sorted((REPO / "src" / module).glob("*.h")) + \
            sorted((REPO / "include" / "seedance" / module).glob("*.h"))
        for f in files:
            rel = f.relative_to(REPO)
            public = rel.parts[0] == "include"
            for inc in INCLUDE.findall(f.read_text(errors="replace")):
                parts = inc.split("/")
                if parts[0] == "seedance" and len(parts) > 2 and parts[1] not in allowed:
                    breaches.append(f"{rel}: includes {inc}, but {module} does not depend on "
                                    f"{parts[1]} (src/{module}/CMakeLists.txt DEPS)")
                if parts[0] == "src" and len(parts) > 2:
                    if public:
                        breaches.append(f"{rel}: a public header includes the private {inc}")
                    elif parts[1] != module:
                        breaches.append(f"{rel}: includes {inc}, a private header of {parts[1]}")
    for f in sorted((REPO / "src").rglob("*")):
        if f.suffix not in (".cc", ".h", ".cu") or f.name.endswith("_test.cc"):
            continue
        rel = f.relative_to(REPO)
        text = code(f)
        if str(rel) != "src/base/env_posix.cc" and CLOCK.search(text):
            breaches.append(f"{rel}: reads a clock directly ({CLOCK.search(text).group(1)}); "
                            "use base::Env::NowMonotonicNanos")
        if AD_HOC.search(text):
            breaches.append(f"{rel}: parses with {AD_HOC.search(text).group(1)}; use "
                            "base::ParseInt64 / ParseFiniteDouble / SplitFields (base/parse.h)")
    for f in sorted((REPO / "include").rglob("*.h")):
        rel = f.relative_to(REPO)
        if CLOCK.search(code(f)) and "base" not in rel.parts:
            breaches.append(f"{rel}: reads a clock directly; use base::Env")
    breaches += standalone_breaches()
    for b in breaches:
        print(b)
    print(f"rules: {len(deps)} modules checked, {len(breaches)} breach(es)")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
