#!/usr/bin/env bash
# The GPU checks, for a session that is lent a GPU machine: build with CUDA,
# run the unit tests, the device self-test, then the allocator benchmark
# against PyTorch's allocator. Prints everything; writes JSON lines to
# ${OUT:-.}/gpu-results.jsonl.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-.}/gpu-results.jsonl"
# The interpreter with a CUDA build of torch: $PYTHON, else the project's .venv/ (whose pinned torch
# is the CPU build: on a GPU machine install a CUDA build of the same version there), else python3.
py="${PYTHON:-}"
[[ -n "$py" ]] || { [[ -x .venv/bin/python ]] && py=.venv/bin/python; } || py=python3
cmake --preset dev -DSEEDANCE_CUDA=ON >/dev/null && cmake --build build -j "$(nproc)" || exit 1
(cd build && ctest -j "$(nproc)" 2>&1 | tail -3)
build/bin/seedancectl version --check-gpu -o json | tee -a "$out"
PYTHONPATH=build/python "$py" bench/gpu/allocator_vs_torch.py --steps 30 | tee -a "$out"
# Mixed precision: the CUDA conversion kernels against the host reference
# (Convert.CudaKernelsAgreeWithScalarReference ran in ctest above; repeated
# here verbosely) and the CPU conversion benchmark for the machine's record.
build/tests/precision_test --gtest_filter='Convert.Cuda*' 2>&1 | tail -4
PYTHONPATH=build/python "$py" bench/precision/convert_throughput.py --repeat 10 | tee -a "$out"
