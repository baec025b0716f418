#!/usr/bin/env bash
# The peers the KV benchmarks measure Seedance against, in their own environment
# (bench/kv/peers/.venv, made on demand, never part of the README's test command):
#   llama-cpp-python  llama.cpp with its quantized K/V caches (type_k / type_v), built from PyPI's
#                     source distribution for this CPU (a few minutes on 2 cores)
# The environment sees the development environment's packages (torch, transformers, gguf) through
# --system-site-packages of the same interpreter.
#
#   bash bench/kv/peers/install.sh        # then: bench/kv/peers/.venv/bin/python ...
set -euo pipefail
cd "$(dirname "$0")"
LLAMA_CPP_PYTHON=0.3.36
if [[ ! -x .venv/bin/python ]]; then
  # The development environment's site-packages are added by a .pth file, so the peers see
  # torch and transformers without a second copy.
  python3 -m venv .venv
  site=$(../../../.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  peer_site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$site" >"$peer_site/seedance-dev.pth"
fi
if ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  echo "==> building llama-cpp-python $LLAMA_CPP_PYTHON (llama.cpp for this CPU)"
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) CMAKE_ARGS="-DGGML_NATIVE=ON" \
    .venv/bin/python -m pip install -q --no-input "llama-cpp-python==$LLAMA_CPP_PYTHON" 2>&1 |
    { grep -v "^WARNING: Location 'file:" || true; }
fi
.venv/bin/python -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__)"
