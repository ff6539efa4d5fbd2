#!/usr/bin/env bash
# Refresh requirements.lock from pyproject.toml: resolve gymforge's core and dev dependencies
# with pip (no install; metadata only) and pin every distribution. Run it, and commit the
# lock, whenever pyproject.toml's dependencies or its dev extra change: setup.sh refuses a
# stale lock rather than drift.
#   scripts/lock.sh              # keep the current pins where they still fit, add the rest
#   UPGRADE=1 scripts/lock.sh    # resolve everything afresh (newest allowed versions)
#   PINS=FILE scripts/lock.sh    # prefer FILE's pins (a `pip freeze` of a venv known good)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$PYTHON" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --upgrade pip >&2
resolve() {
  "$tmp/venv/bin/python" -m pip install -q --dry-run --ignore-installed \
    --report "$tmp/report.json" "$@" -e ".[dev]" >&2
}
if [ "${UPGRADE:-0}" = 1 ] || { [ ! -f requirements.lock ] && [ -z "${PINS:-}" ]; }; then
  resolve
else
  # the old pins as constraints keep a refresh small; if they no longer fit, resolve afresh
  grep -v -e '^#' -e '^-e ' -e ' @ ' "${PINS:-requirements.lock}" > "$tmp/constraints.txt"
  resolve -c "$tmp/constraints.txt" || { echo "lock: old pins conflict; resolving afresh" >&2; resolve; }
fi
"$PYTHON" scripts/lockfile.py write "$tmp/report.json"
