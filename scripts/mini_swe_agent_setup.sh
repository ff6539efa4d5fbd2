#!/usr/bin/env bash
# Create .venv-mini-swe-agent: the published mini-swe-agent (the [mini-swe-agent] extra's pin)
# for examples/mini_swe_agent, apart from .venv (its stack -- litellm, datasets, textual... --
# is heavy, and the harness needs nothing of gymforge: it runs confined, gymforge hidden).
# Idempotent: when the venv already imports mini-swe-agent at the pinned version, it does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${MINI_SWE_AGENT_VENV:-.venv-mini-swe-agent}"
PYTHON="${PYTHON:-python3}"
PIN="$("$PYTHON" - <<'PY'
import tomllib

with open("pyproject.toml", "rb") as f:
    extra = tomllib.load(f)["project"]["optional-dependencies"]["mini-swe-agent"]
print(next(r for r in extra if r.startswith("mini-swe-agent==")))
PY
)"
VERSION="${PIN#mini-swe-agent==}"

check() {
  "$VENV/bin/python" - "$VERSION" <<'PY' 2>/dev/null
import importlib.metadata as md
import sys

assert md.version("mini-swe-agent") == sys.argv[1]
import litellm  # noqa: F401
import minisweagent.agents.default  # noqa: F401

sys.exit(0)
PY
}

if [ -x "$VENV/bin/python" ] && MSWEA_SILENT_STARTUP=1 LITELLM_LOCAL_MODEL_COST_MAP=True check; then
  echo "mini-swe-agent-setup: $VENV is ready ($PIN)" >&2
  exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "mini-swe-agent-setup: creating $VENV" >&2
  "$PYTHON" -m venv "$VENV"
fi
echo "mini-swe-agent-setup: installing $PIN into $VENV" >&2
"$VENV/bin/python" -m pip install -q --upgrade pip >&2
# the versions the tests were proven with (a new litellm or openai must not change a run)
"$VENV/bin/python" -m pip install -q -c requirements-mini-swe-agent.lock "$PIN" >&2
if ! MSWEA_SILENT_STARTUP=1 LITELLM_LOCAL_MODEL_COST_MAP=True check; then
  echo "mini-swe-agent-setup: $VENV does not import $PIN; see the pip output" >&2
  exit 1
fi
echo "mini-swe-agent-setup: $VENV is ready" >&2
