#!/usr/bin/env bash
# Formats every C++/CUDA source that git tracks with the repository's
# .clang-format (CI runs the same files through clang-format --dry-run --Werror).
set -euo pipefail
cd "$(dirname "$0")/.."
# New files count too: untracked ones that git does not ignore.
git ls-files --cached --others --exclude-standard '*.cc' '*.h' '*.cu' | xargs clang-format -i
