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
    for b in breaches:
        print(b)
    print(f"rules: {len(deps)} modules checked, {len(breaches)} breach(es)")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
