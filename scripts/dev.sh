#!/usr/bin/env bash
# One entry point for a fresh Debian 12 or 13 machine, run as root from the repository root:
#
#   bash scripts/dev.sh optimize   install what is missing, build, run `seedancectl optimize`
#   bash scripts/dev.sh test       install what is missing, build, run every test (C++ and Python)
#   bash scripts/dev.sh build      install what is missing and build
#   bash scripts/dev.sh deps       install what the tests need (packages and .venv/), build nothing
#   bash scripts/dev.sh venv       make or update .venv/ only
#
# C++ dependencies come from Debian's -dev packages; only those not yet installed are installed.
# Python dependencies come from PyPI into the project's own environment .venv/ (ignored by git),
# made from Python 3.11 with the pins of requirements/dev.txt; it is remade only when that file
# or the interpreter changes. Use .venv/bin/python afterwards. The build goes into build/ (CMake
# preset `dev`, which picks .venv/ up by itself). Under CI=true, compiler warnings are errors.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian 12 (bookworm) and 13 (trixie) name these packages alike.
BUILD_PACKAGES=(cmake ninja-build g++ git pkg-config ccache
  libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev libnuma-dev libcpp-httplib-dev libssl-dev libzstd-dev libicu-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc)
TEST_PACKAGES=(clang-format clang-tidy dataset-fashion-mnist prometheus chromium clang wrk nginx strace)
VENV=.venv
REQUIREMENTS=requirements/dev.txt
# Packages installed without their dependencies: what the tests read from them needs none.
REQUIREMENTS_NO_DEPS=requirements/no-deps.txt

debian_major() {
  local v
  v=$(cut -d. -f1 /etc/debian_version 2>/dev/null || true)
  case "$v" in
    12 | 13) echo "$v" ;;
    bookworm*) echo 12 ;;
    trixie*) echo 13 ;;
    *) echo "warning: /etc/debian_version says '${v:-nothing}'; treating it as Debian 12" >&2
       echo 12 ;;
  esac
}

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

# The interpreter .venv/ is made from: $SEEDANCE_PYTHON if set, else the first Python 3.11 (the
# release the pinned torch wheel is built for): python3.11 on PATH, then Debian 12's
# /usr/bin/python3.11. Debian 13 ships 3.13 only; without a 3.11 there, its python3 is used and
# pip fetches torch 2.13.0 for that release from PyPI.
pick_python() {
  if [[ -n "${SEEDANCE_PYTHON:-}" ]]; then
    echo "$SEEDANCE_PYTHON"
    return
  fi
  local c
  for c in python3.11 /usr/bin/python3.11; do
    if command -v "$c" >/dev/null 2>&1 &&
       "$c" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      command -v "$c"
      return
    fi
  done
  echo "warning: no Python 3.11 found; making $VENV from python3" >&2
  command -v python3
}

# Debian's interpreters need python3-venv (ensurepip) and python3-dev (headers for _core).
python_packages() {
  case "$1" in
    /usr/bin/*) echo python3-venv python3-dev ;;
  esac
}

make_venv() {
  local python stamp want
  python=$(pick_python)
  # shellcheck disable=SC2046
  install_missing $(python_packages "$python")
  want="$("$python" -c 'import sys; print(sys.version)' | head -1) $(cat "$REQUIREMENTS" "$REQUIREMENTS_NO_DEPS" | sha256sum | cut -d' ' -f1)"
  stamp="$VENV/.seedance-requirements"
  if [[ -x "$VENV/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return
  fi
  if [[ ! -x "$VENV/bin/python" ]] || ! "$VENV/bin/python" -c '' 2>/dev/null ||
     [[ "$("$VENV/bin/python" -c 'import sys; print(sys.version)' | head -1)" != "${want% *}" ]]; then
    echo "==> making $VENV from $python"
    rm -rf "$VENV"
    "$python" -m venv "$VENV"
  fi
  echo "==> installing $REQUIREMENTS into $VENV"
  # (pip's complaints about configured local index folders that do not exist are dropped)
  "$VENV/bin/python" -m pip install -q --no-input -r "$REQUIREMENTS" 2>&1 |
    { grep -v "^WARNING: Location 'file:" || true; }
  echo "==> installing $REQUIREMENTS_NO_DEPS (without dependencies) into $VENV"
  "$VENV/bin/python" -m pip install -q --no-input --no-deps -r "$REQUIREMENTS_NO_DEPS" 2>&1 |
    { grep -v "^WARNING: Location 'file:" || true; }
  echo "$want" >"$stamp"
}

build() {
  local extra=()  # python/CMakeLists.txt builds _core for .venv/bin/python by itself
  [[ "${CI:-}" == "true" ]] && extra+=(-DSEEDANCE_WERROR=ON)
  echo "==> configuring (preset dev)"
  cmake --preset dev "${extra[@]}" >build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
  rm -f build-configure.log
  echo "==> building"
  local t0=$SECONDS
  cmake --build build -j "$(nproc)"
  echo "(build took $((SECONDS - t0)) s)"
  # .venv/bin/python imports the build's package (build/python/seedance) without PYTHONPATH.
  local site
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$PWD/build/python" >"$site/seedance-build.pth"
}

# Runs the C++ unit tests (ctest) and the Python and CLI suites (pytest with
# .venv/bin/python), then prints one line: "tests: N passed, M failed".
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
  # The failed tests' names, for .ci/run to repeat just above its summary line.
  sed -n '/The following tests FAILED:/,$p' "$log" | grep -E "^[[:space:]]+[0-9]+ - " >build/test-failures || true
  # And the first of their assertions that failed, with what gtest printed after each, so a CI
  # log cut to its tail still says why.
  grep -A4 -E "^[^ ]+\.(cc|h):[0-9]+: Failure$" "$log" | head -40 | sed 's/^/    /' >>build/test-failures || true

  # Two passes: every test but the timing ones over all cores, then the timing ones (marker
  # `timing`: a measurement held to a reference) alone, one at a time. Every test runs. In the
  # first, tests/conftest.py gives each worker one compute thread, and the tests marked with one
  # xdist_group (those that load SmolLM2 into Transformers) share a worker.
  local py_passed=0 py_failed=0 py_errors=0 pass args summary n
  for pass in parallel timing; do
    if [[ $pass == parallel ]]; then
      echo "==> Python and CLI tests (pytest, $(nproc) workers)"
      args=(-n "$(nproc)" --dist loadgroup -m "not timing" --durations=8)
    else
      echo "==> Python and CLI timing tests (pytest, alone)"
      args=(-m timing)
    fi
    SEEDANCE_BUILD_DIR="$PWD/build" "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
      "${args[@]}" tests | tee "$log" || rc=1
    summary=$(grep -E "^(=+ )?[0-9]+ (passed|failed)|no tests ran" "$log" | tail -1 || true)
    n=$(grep -oE "[0-9]+ passed" <<<"$summary" | grep -oE "[0-9]+" || echo 0)
    [[ "$n" -gt 0 ]] || rc=1
    py_passed=$((py_passed + n))
    n=$(grep -oE "[0-9]+ failed" <<<"$summary" | grep -oE "[0-9]+" || echo 0)
    py_failed=$((py_failed + n))
    n=$(grep -oE "[0-9]+ errors?" <<<"$summary" | grep -oE "[0-9]+" || echo 0)
    py_errors=$((py_errors + n))
    grep -E "^(FAILED|ERROR) " "$log" >>build/test-failures || true
  done
  rm -f "$log"

  local passed=$((cpp_passed + py_passed)) failed_all=$((cpp_failed + py_failed + py_errors))
  echo "$passed $failed_all" >build/test-counts
  echo "tests: $passed passed, $failed_all failed"
  return $rc
}

DEBIAN_MAJOR=$(debian_major)
# libFuzzer and the sanitizer runtimes of the default clang (14 on Debian 12, 19 on Debian 13), for
# the `asan` preset that .ci/run builds.
if [[ "$DEBIAN_MAJOR" == 13 ]]; then TEST_PACKAGES+=(libclang-rt-19-dev); else TEST_PACKAGES+=(libclang-rt-14-dev); fi

case "${1:-}" in
  venv)
    make_venv
    ;;
  deps)
    install_missing "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
    make_venv
    ;;
  build)
    install_missing "${BUILD_PACKAGES[@]}"
    make_venv
    build
    ;;
  optimize)
    install_missing "${BUILD_PACKAGES[@]}"
    make_venv
    build
    echo "==> build/bin/seedancectl optimize"
    build/bin/seedancectl optimize
    ;;
  test)
    install_missing "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
    make_venv
    build
    run_tests
    ;;
  *)
    echo "usage: bash scripts/dev.sh optimize|test|build|deps|venv" >&2
    exit 2
    ;;
esac
