#!/usr/bin/env bash
# Set up a development machine: Debian packages (when root and missing) and .venv with
# gymforge installed editable. Idempotent: a second run installs nothing new.
#   scripts/setup.sh            # core + dev extras (enough for the quickstart and tests)
#   EXTRAS=all scripts/setup.sh # every optional extra
set -euo pipefail
cd "$(dirname "$0")/.."

# bubblewrap and friends: the code sandbox (its zygote runs on the system python3);
# compilers and node: the sandbox's languages; chromium: the report test renders HTML headless;
# redis-server: the redis-streams backend's tests start a real one on 127.0.0.1;
# faketime: `gymforge qa` replays in a process whose wall clock is shifted by weeks
DEB_PACKAGES=(bubblewrap libseccomp2 python3 gcc g++ libc6-dev chromium redis-server faketime)
EXTRAS="${EXTRAS:-dev}"
PYTHON="${PYTHON:-python3}"

missing=()
for pkg in "${DEB_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
command -v node >/dev/null || missing+=(nodejs)  # any node will do (Debian's or NodeSource's)
if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian packages: ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  else
    echo "setup: warning: missing Debian packages (${missing[*]}); install them as root" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PYTHON" -m venv .venv
fi
stamp=".venv/.gymforge-installed-$EXTRAS"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing gymforge[$EXTRAS] into .venv" >&2
  .venv/bin/python -m pip install -q --upgrade pip >&2
  .venv/bin/python -m pip install -q -e ".[$EXTRAS]" >&2
  touch "$stamp"
fi
