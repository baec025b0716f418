#!/usr/bin/env bash
# Every caching-allocator policy on every idealloc instance (virtual back end,
# 2 MiB pages); one JSON line per run (`seedancectl mem replay` fields + file).
#   bash bench/mem_replay.sh [BUILD_DIR (default build)]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
data="${SEEDANCE_DATA_DIR:-../shared/data}"
for f in "$data"/idealloc/*.csv; do
  for policy in caching-2mib best-fit first-fit seedance seedance-stitch; do
    out=$("$build/bin/seedancectl" mem replay --input "$f" --policy "$policy" -o json)
    python3 -c 'import json,sys; r=json.loads(sys.argv[2]); r["file"]=sys.argv[1]; print(json.dumps(r))' \
      "$(basename "$f")" "$out"
  done
done
