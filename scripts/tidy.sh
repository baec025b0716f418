#!/usr/bin/env bash
# clang-tidy, with the checks of .clang-tidy, on every C++ source of the library, the CLI and the
# Python bindings that the compile database lists (tests and benchmarks are not checked):
#
#   bash scripts/tidy.sh [BUILD_DIR]     # default build/ (cmake --preset dev); exit 1 on a finding
#
# Findings print as compiler diagnostics (file:line:col: error: ... [check]). Runs `nproc` files
# at a time. A finding that is wrong for a line is silenced there with `// NOLINT(check): why`.
set -uo pipefail
cd "$(dirname "$0")/.."
db="${1:-build}"
if [[ ! -f "$db/compile_commands.json" ]]; then
  echo "tidy: $db/compile_commands.json not found: configure first (cmake --preset dev)" >&2
  exit 2
fi
if ! command -v clang-tidy >/dev/null; then
  echo "tidy: clang-tidy not found (apt-get install clang-tidy)" >&2
  exit 2
fi

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
mkdir -p "$log/db"
# The sources to check, in the order of the database, without tests; and a copy of the database
# without GCC's precompiled headers (a .gch file clang cannot read; the sources include what the
# PCH holds themselves).
mapfile -t files < <(python3 - "$db/compile_commands.json" "$log/db/compile_commands.json" <<'EOF'
import json, pathlib, re, sys
repo = pathlib.Path.cwd().resolve()
seen, entries = set(), []
for entry in json.load(open(sys.argv[1])):
    if entry["file"].endswith("cmake_pch.hxx.cxx"):
        continue
    entry["command"] = re.sub(r" -Winvalid-pch| -include \S+cmake_pch\.hxx", "", entry["command"])
    entries.append(entry)
    path = pathlib.Path(entry["file"]).resolve()
    try:
        rel = path.relative_to(repo)
    except ValueError:
        continue
    top = rel.parts[0]
    keep = top == "src" or top == "tools" or rel.parts[:2] == ("python", "bindings")
    if keep and not rel.name.endswith("_test.cc") and rel.suffix == ".cc" and rel not in seen:
        seen.add(rel)
        print(rel)
json.dump(entries, open(sys.argv[2], "w"))
EOF
)
if ((${#files[@]} == 0)); then
  echo "tidy: no sources in $db/compile_commands.json" >&2
  exit 2
fi

# One log per file, so that parallel output does not interleave.
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -I{} sh -c \
  'clang-tidy -p "$1" --quiet "$2" >"$3/$(echo "$2" | tr / _).log" 2>&1 || echo "$2" >>"$3/failed"' \
  _ "$log/db" {} "$log"
if [[ -f "$log/failed" ]]; then
  # The diagnostics of the failed files, without clang-tidy's counts of suppressed warnings.
  while read -r f; do
    grep -v -E "^[0-9]+ warnings? (generated|treated as errors)\.$" "$log/$(echo "$f" | tr / _).log"
  done <"$log/failed"
  echo "tidy: $(wc -l <"$log/failed") of ${#files[@]} files have findings"
  exit 1
fi
echo "tidy: ${#files[@]} files clean"
