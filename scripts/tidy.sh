#!/usr/bin/env bash
# clang-tidy, with the checks of .clang-tidy, on every C++ source of the library, the CLI and the
# Python bindings that the compile database lists (tests and benchmarks are not checked):
#
#   bash scripts/tidy.sh [BUILD_DIR]     # default build/ (cmake --preset dev); exit 1 on a finding
#
# Findings print as compiler diagnostics (file:line:col: error: ... [check]). Runs `nproc` files
# at a time. A finding that is wrong for a line is silenced there with `// NOLINT(check): why`.
#
# Clean results are cached, as ccache caches objects: a file is checked again only when its key
# changes — the SHA-256 of its preprocessed source (every header it includes, with the checkout's
# path replaced so that clones share entries), its compile command, .clang-tidy and clang-tidy's
# version. Files with findings are never cached. The cache lives in $SEEDANCE_TIDY_CACHE (default
# ~/.cache/seedance-tidy); SEEDANCE_TIDY_CACHE=off checks every file.
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
mkdir -p "$log/pp"
mapfile -t files < <(python3 - "$db/compile_commands.json" "$log/db/compile_commands.json" \
                     "$log/pp" <<'EOF'
import json, pathlib, re, shlex, sys
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
        # The cache key's input: the file preprocessed with its own flags (no object written).
        pp = re.sub(r" -o \S+", "", entry["command"]).replace(" -c ", " -E -P ")
        script = pathlib.Path(sys.argv[3]) / (str(rel).replace("/", "_") + ".sh")
        script.write_text(f"cd {shlex.quote(entry['directory'])} && {pp}\n")
        print(rel)
json.dump(entries, open(sys.argv[2], "w"))
EOF
)
if ((${#files[@]} == 0)); then
  echo "tidy: no sources in $db/compile_commands.json" >&2
  exit 2
fi

cache="${SEEDANCE_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/seedance-tidy}"
if [[ "$cache" != off ]]; then
  mkdir -p "$cache" || cache=off
fi
config=$( { cat .clang-tidy; clang-tidy --version; } | sha256sum | cut -d' ' -f1)

# One log per file, so that parallel output does not interleave. Each worker: the key, then a
# cache hit (nothing to do) or clang-tidy and, when clean, a cache entry.
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -I{} sh -c '
  name=$(echo "$2" | tr / _)
  key=""
  if [ "$4" != off ]; then
    key=$( { echo "$5"; sed "s|$6|@REPO@|g" "$3/pp/$name.sh";
             sh "$3/pp/$name.sh" 2>/dev/null | sed "s|$6|@REPO@|g"; } | sha256sum | cut -d" " -f1)
    if [ -f "$4/$key" ]; then echo "$2" >>"$3/cached"; exit 0; fi
  fi
  if clang-tidy -p "$1" --quiet "$2" >"$3/$name.log" 2>&1; then
    if [ -n "$key" ]; then touch "$4/$key"; fi
  else
    echo "$2" >>"$3/failed"
  fi' _ "$log/db" {} "$log" "$cache" "$config" "$PWD"
if [[ -f "$log/failed" ]]; then
  # The diagnostics of the failed files, without clang-tidy's counts of suppressed warnings.
  while read -r f; do
    grep -v -E "^[0-9]+ warnings? (generated|treated as errors)\.$" "$log/$(echo "$f" | tr / _).log"
  done <"$log/failed"
  echo "tidy: $(wc -l <"$log/failed") of ${#files[@]} files have findings"
  exit 1
fi
cached=0
[[ -f "$log/cached" ]] && cached=$(wc -l <"$log/cached")
echo "tidy: ${#files[@]} files clean ($cached of them unchanged since a clean check, cache: $cache)"
