#!/usr/bin/env bash
# Offline planner on every shared allocation instance; prints one JSON line per
# instance (the fields of `seedancectl mem plan --output json` plus the file),
# and checks every plan with `seedancectl mem check`.
#   bash bench/mem_plan.sh [TIME_LIMIT_S (default 1)] [BUILD_DIR (default build)] [capacity]
# With "capacity", each MiniMalloc instance is asked MiniMalloc's own question instead: does a
# plan fit in the capacity in its file name (--capacity 1048576)? A "no" prints
# {"file": ..., "fits": false, "error": ...}.
set -euo pipefail
cd "$(dirname "$0")/.."
limit="${1:-1}"
build="${2:-build}"
data="${SEEDANCE_DATA_DIR:-../shared/data}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mode="${3:-}"
if [[ "$mode" == capacity ]]; then
  for f in "$data"/minimalloc/[A-K].1048576.csv; do
    name=$(basename "$f")
    cap=$(echo "$name" | cut -d. -f2)
    if out=$("$build/bin/seedancectl" mem plan --input "$f" --time-limit "$limit" --capacity "$cap" \
             --offsets-out "$tmp/$name.plan" -o json 2>"$tmp/err"); then
      "$build/bin/seedancectl" mem check --input "$f" --offsets "$tmp/$name.plan" >/dev/null
      python3 -c 'import json,sys; r=json.loads(sys.argv[2]); r["file"]=sys.argv[1]; r["fits"]=True; print(json.dumps(r))' \
        "$name" "$out"
    else
      python3 -c 'import json,sys; print(json.dumps({"file": sys.argv[1], "fits": False, "error": open(sys.argv[2]).read().strip()}))' \
        "$name" "$tmp/err"
    fi
  done
  exit 0
fi
for f in "$data"/minimalloc/[A-K].1048576.csv "$data"/idealloc/*.csv; do
  name=$(basename "$f")
  out=$("$build/bin/seedancectl" mem plan --input "$f" --time-limit "$limit" \
        --offsets-out "$tmp/$name.plan" -o json)
  "$build/bin/seedancectl" mem check --input "$f" --offsets "$tmp/$name.plan" >/dev/null
  python3 -c 'import json,sys; r=json.loads(sys.argv[2]); r["file"]=sys.argv[1]; print(json.dumps(r))' \
    "$name" "$out"
done
