#!/usr/bin/env bash
# Build the gymforge project image with podman, offline: the Dockerfile's BASE is the base
# made locally by `make containers` (gymforge-base-full), Python packages come from a local
# wheelhouse (wheelhouse/: every pin of requirements.lock as a wheel, plus the build tools),
# and the build itself runs with --network none.
#   scripts/containers-image.sh                 # fill wheelhouse/ (needs PyPI once), build
#   OFFLINE=1 scripts/containers-image.sh       # use wheelhouse/ as it is: no network at all
#   IMAGE=NAME BASE=IMAGE scripts/containers-image.sh
# Idempotent: wheels already in wheelhouse/ are kept; podman reuses its layer cache.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE="${IMAGE:-gymforge-project}"
BASE="${BASE:-localhost/gymforge-base-full}"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/gymforge/sandbox/containers.conf}"
PY="${PYTHON:-.venv/bin/python}"

command -v podman >/dev/null && podman image exists "$BASE" || scripts/containers.sh
python3 scripts/lockfile.py check

mkdir -p wheelhouse
if [ "${OFFLINE:-0}" != 1 ]; then
  echo "image: filling wheelhouse/ from requirements.lock" >&2
  # wheels for the base's python (the same minor version as this venv's: checked below)
  version=$(podman run --rm --network none "$BASE" python3 -c 'import platform; print(platform.python_version())')
  if [ "${version%.*}" != "$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" ]; then
    echo "image: $PY is not python ${version%.*}, the base's; set PYTHON=" >&2
    exit 1
  fi
  "$PY" -m pip wheel -q --no-deps -r requirements.lock -w wheelhouse >&2
  "$PY" -m pip wheel -q "setuptools>=68" wheel -w wheelhouse >&2
  # what the lock's markers add on the base's exact version (e.g. async-timeout below 3.11.3)
  extra=$("$PY" scripts/containers_wheelhouse.py wheelhouse "$version")
  if [ -n "$extra" ]; then
    echo "image: python $version also needs: $extra" >&2
    # shellcheck disable=SC2086
    "$PY" -m pip wheel -q --no-deps $extra -w wheelhouse >&2
  fi
fi

echo "image: building $IMAGE from $BASE (no network)" >&2
podman build --network none --build-arg BASE="$BASE" -v "$PWD/wheelhouse:/wheelhouse:ro" \
  -t "$IMAGE" . >&2
podman run --rm --network none "$IMAGE" gymforge list >/dev/null
echo "image: $IMAGE ready (podman run --rm $IMAGE)" >&2
