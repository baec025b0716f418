#!/usr/bin/env bash
# Offline planner on every shared allocation instance; prints one JSON line per
# instance (the fields of `seedancectl mem plan --output json` plus the file),
# and checks every plan with `seedancectl mem check`.
#   bash bench/mem_plan.sh [TIME_LIMIT_S (default 1)] [BUILD_DIR (default build)]
set -euo pipefail
cd "$(dirname "$0")/.."
limit="${1:-1}"
build="${2:-build}"
data="${SEEDANCE_DATA_DIR:-../shared/data}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$data"/minimalloc/[A-K].1048576.csv "$data"/idealloc/*.csv; do
  name=$(basename "$f")
  out=$("$build/bin/seedancectl" mem plan --input "$f" --time-limit "$limit" \
        --offsets-out "$tmp/$name.plan" -o json)
  "$build/bin/seedancectl" mem check --input "$f" --offsets "$tmp/$name.plan" >/dev/null
  /usr/bin/python3 -c 'import json,sys; r=json.loads(sys.argv[2]); r["file"]=sys.argv[1]; print(json.dumps(r))' \
    "$name" "$out"
done
