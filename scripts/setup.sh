#!/usr/bin/env bash
# Set up a development machine: Debian packages (when root and missing) and .venv with the
# exact versions of requirements.lock, then gymforge itself editable. Idempotent: a second
# run installs nothing new.
#   scripts/setup.sh              # core + dev extras, pinned by requirements.lock
#   EXTRAS=all scripts/setup.sh   # also every optional extra (the lock's pins still apply)
#   UNLOCKED=1 scripts/setup.sh   # resolve pyproject's version ranges instead (not reproducible)
# A lock older than pyproject.toml's dependencies stops setup: run scripts/lock.sh (make lock).
set -euo pipefail
cd "$(dirname "$0")/.."

# bubblewrap and friends: the code sandbox (its zygote runs on the system python3);
# compilers and node: the sandbox's languages; chromium: the report test renders HTML headless;
# redis-server: the redis-streams backend's tests start a real one on 127.0.0.1
DEB_PACKAGES=(bubblewrap libseccomp2 python3 gcc g++ libc6-dev chromium redis-server)
EXTRAS="${EXTRAS:-dev}"
PYTHON="${PYTHON:-python3}"
APT_LOCK_TIMEOUT="${APT_LOCK_TIMEOUT:-600}"  # seconds to wait for another apt/dpkg to finish

if [ "${UNLOCKED:-0}" != 1 ]; then
  "$PYTHON" scripts/lockfile.py check  # a stale lock fails here, loudly, before any install
fi

missing=()
for pkg in "${DEB_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
command -v node >/dev/null || missing+=(nodejs)  # any node will do (Debian's or NodeSource's)
if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian packages: ${missing[*]}" >&2
    "$PYTHON" scripts/lockfile.py wait-apt "$APT_LOCK_TIMEOUT"
    apt=(apt-get -o "DPkg::Lock::Timeout=$APT_LOCK_TIMEOUT" -qq)
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" update >&2
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y "${missing[@]}" >&2
  else
    echo "setup: warning: missing Debian packages (${missing[*]}); install them as root" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PYTHON" -m venv .venv
fi
stamp=".venv/.gymforge-installed-$EXTRAS"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ requirements.lock -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip >&2
  if [ "${UNLOCKED:-0}" = 1 ]; then
    echo "setup: installing gymforge[$EXTRAS] into .venv from version ranges (UNLOCKED=1)" >&2
    .venv/bin/python -m pip install -q -e ".[$EXTRAS]" >&2
  else
    echo "setup: installing requirements.lock and gymforge[$EXTRAS] into .venv" >&2
    .venv/bin/python -m pip install -q -r requirements.lock >&2
    if [ "$EXTRAS" = dev ]; then
      .venv/bin/python -m pip install -q --no-deps -e . >&2
    else
      .venv/bin/python -m pip install -q -c requirements.lock -e ".[$EXTRAS]" >&2
    fi
  fi
  touch "$stamp"
fi
