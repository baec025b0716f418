#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine, run as root from the repository root:
#
#   bash scripts/dev.sh optimize   install what is missing, build, run `seedancectl optimize`
#   bash scripts/dev.sh test       install what is missing, build, run every test (C++ and Python)
#   bash scripts/dev.sh build      install what is missing and build
#
# Only Debian packages that are not yet installed are installed. The build goes into build/
# (CMake preset `dev`). Under CI=true, compiler warnings are errors.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_PACKAGES=(cmake ninja-build g++ git pkg-config
  libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3-dev libnuma-dev libcpp-httplib-dev)
TEST_PACKAGES=(python3-pytest python3-numpy python3-torch clang-format dataset-fashion-mnist
  libopenblas0-pthread prometheus chromium)  # torch on Debian uses the system BLAS: OpenBLAS is ~40x the reference one

install_missing() {
  local missing=()
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if ((${#missing[@]})); then
    echo "==> installing: ${missing[*]}"
    local sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
}

build() {
  local extra=()
  [[ "${CI:-}" == "true" ]] && extra+=(-DSEEDANCE_WERROR=ON)
  echo "==> configuring (preset dev)"
  cmake --preset dev "${extra[@]}" >build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
  rm -f build-configure.log
  echo "==> building"
  cmake --build build -j "$(nproc)"
}

# Runs the C++ unit tests (ctest) and the Python and CLI suites (pytest with
# Debian's /usr/bin/python3), then prints one line: "tests: N passed, M failed".
# The counts are also written to build/test-counts for .ci/run.
run_tests() {
  local log rc=0
  log=$(mktemp)
  echo "==> C++ unit tests (ctest)"
  (cd build && ctest --output-on-failure -j "$(nproc)") | tee "$log" || rc=1
  local line total failed
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of" "$log" | tail -1 || true)
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
  failed=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")
  [[ -n "$line" ]] || { total=0; failed=1; rc=1; }
  local cpp_passed=$((total - failed)) cpp_failed=$failed

  echo "==> Python and CLI tests (pytest)"
  SEEDANCE_BUILD_DIR="$PWD/build" /usr/bin/python3 -m pytest -q -p no:cacheprovider tests \
    | tee "$log" || rc=1
  local summary py_passed py_failed py_errors
  summary=$(grep -E "^(=+ )?[0-9]+ (passed|failed)|no tests ran" "$log" | tail -1 || true)
  py_passed=$(grep -oE "[0-9]+ passed" <<<"$summary" | grep -oE "[0-9]+" || echo 0)
  py_failed=$(grep -oE "[0-9]+ failed" <<<"$summary" | grep -oE "[0-9]+" || echo 0)
  py_errors=$(grep -oE "[0-9]+ errors?" <<<"$summary" | grep -oE "[0-9]+" || echo 0)
  [[ "$py_passed" -gt 0 ]] || rc=1
  rm -f "$log"

  local passed=$((cpp_passed + py_passed)) failed_all=$((cpp_failed + py_failed + py_errors))
  echo "$passed $failed_all" >build/test-counts
  echo "tests: $passed passed, $failed_all failed"
  return $rc
}

case "${1:-}" in
  build)
    install_missing "${BUILD_PACKAGES[@]}"
    build
    ;;
  optimize)
    install_missing "${BUILD_PACKAGES[@]}"
    build
    echo "==> build/bin/seedancectl optimize"
    build/bin/seedancectl optimize
    ;;
  test)
    install_missing "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
    build
    run_tests
    ;;
  *)
    echo "usage: bash scripts/dev.sh optimize|test|build" >&2
    exit 2
    ;;
esac
