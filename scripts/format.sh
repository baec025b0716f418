#!/usr/bin/env bash
# Formats every C++/CUDA source that git tracks with the repository's
# .clang-format (CI runs the same files through clang-format --dry-run --Werror).
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files '*.cc' '*.h' '*.cu' | xargs clang-format -i
