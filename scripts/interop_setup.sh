#!/usr/bin/env bash
# Create .venv-interop: gymforge with the [interop] extra (verifiers 0.3.1, openenv 0.10.0,
# reasoning-gym) for `make test-interop`, apart from .venv.
#   - verifiers 0.3.1 and openenv 0.10.0 (through fastmcp 3) require mcp<2, and the [mcp] extra
#     in .venv needs mcp 2.x, so they cannot share .venv; they resolve with gymforge's other
#     pins here (a plain venv, `pip install --dry-run` checked);
#   - verifiers 0.4 is not an option: its rollout harness downloads a tool at run time;
#   - the client stack both venvs share (the OpenAI SDK, its HTTP transports, the JSON and
#     model libraries: SDK_STACK) is held at requirements.lock's versions, so that
#     benchmarks/rollout_cpu.py compares Verifiers with gymforge and the bare SDK calls on the
#     same SDK (left free, pip took a newer openai and httpx here than .venv runs).
# Idempotent: when the venv already imports both frameworks at those versions, with the client
# stack at the lock's, it does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${INTEROP_VENV:-.venv-interop}"
PYTHON="${PYTHON:-python3}"
SDK_STACK="openai httpx httpcore h11 anyio sniffio aiohttp jiter pydantic pydantic_core"
CONSTRAINTS="$(mktemp)"
trap 'rm -f "$CONSTRAINTS"' EXIT
for name in $SDK_STACK; do
  grep -i -E "^${name}==" requirements.lock >> "$CONSTRAINTS" || {
    echo "interop-setup: $name is not pinned in requirements.lock" >&2
    exit 1
  }
done

check() {
  CONSTRAINTS="$CONSTRAINTS" "$VENV/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as md
import os
import re
import sys
import tomllib

assert md.version("verifiers") == "0.3.1"
# every core dependency pyproject.toml names now (the venv may predate one: an editable
# install's own metadata keeps the list it was installed with)
with open("pyproject.toml", "rb") as f:
    for dep in tomllib.load(f)["project"]["dependencies"]:
        md.version(re.split(r"[<>=!~;\[ ]", dep, maxsplit=1)[0])
assert md.version("openenv") == "0.10.0"
with open(os.environ["CONSTRAINTS"]) as f:  # the client stack at .venv's versions
    for pin in f.read().split():
        name, version = pin.split("==")
        assert md.version(name) == version, pin
import gymforge  # noqa: F401
import openenv.core.generic_client  # noqa: F401
import gymnasium  # noqa: F401
import pytest  # noqa: F401
import verifiers.legacy  # noqa: F401

sys.exit(0)
PY
}

if [ -x "$VENV/bin/python" ] && check; then
  echo "interop-setup: $VENV is ready (verifiers 0.3.1, openenv 0.10.0)" >&2
  exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "interop-setup: creating $VENV" >&2
  "$PYTHON" -m venv "$VENV"
fi
echo "interop-setup: installing gymforge[interop] and the test tools into $VENV" >&2
"$VENV/bin/python" -m pip install -q --upgrade pip >&2
"$VENV/bin/python" -m pip install -q -c "$CONSTRAINTS" -e ".[interop,serve,gym]" "pytest>=8" \
  "hypothesis>=6.100" >&2
if ! check; then
  echo "interop-setup: $VENV does not import verifiers 0.3.1 and openenv 0.10.0 with the" \
    "client stack of requirements.lock; see the pip output" >&2
  exit 1
fi
echo "interop-setup: $VENV is ready" >&2
