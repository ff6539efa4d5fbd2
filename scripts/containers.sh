#!/usr/bin/env bash
# Set up the container engine the `docker` sandbox backend drives, without any registry:
#   1. podman, runc, debootstrap and the podman-docker shim from apt (when root and missing);
#   2. gymforge's containers.conf (gymforge/sandbox/containers.conf), selected with
#      CONTAINERS_CONF (the user's own configuration is never written);
#   3. two base images from a debootstrap rootfs of the Debian mirror:
#        gymforge-base-python  python3 only (the zygote and the python judge)
#        gymforge-base-full    python3, gcc, g++, libc6-dev, nodejs (every judge language),
#                              plus python3-venv, git and bubblewrap (the project image's base);
#   4. `gymforge sandbox doctor --sandbox docker` checks the result.
# Idempotent: an image that exists is kept (REBUILD=1 rebuilds them).
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE="${SUITE:-bookworm}"
MIRROR="${MIRROR:-}"  # a Debian mirror URL; default: debootstrap's own
WORK="${WORK:-/var/tmp/gymforge-rootfs}"
APT_LOCK_TIMEOUT="${APT_LOCK_TIMEOUT:-600}"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/gymforge/sandbox/containers.conf}"

missing=()
for pkg in podman runc debootstrap podman-docker; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" != 0 ]; then
    echo "containers: missing Debian packages (${missing[*]}); run this as root" >&2
    exit 1
  fi
  echo "containers: installing Debian packages: ${missing[*]}" >&2
  python3 scripts/lockfile.py wait-apt "$APT_LOCK_TIMEOUT"
  apt=(apt-get -o "DPkg::Lock::Timeout=$APT_LOCK_TIMEOUT" -qq)
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" update >&2
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >&2
fi

build_base() {  # NAME PACKAGES(comma-separated)
  local name="$1" include="$2" root="$WORK/$1"
  if [ "${REBUILD:-0}" != 1 ] && podman image exists "$name"; then
    echo "containers: $name exists" >&2
    return
  fi
  echo "containers: building $name from debootstrap ($SUITE: $include)" >&2
  rm -rf "$root"
  mkdir -p "$root"
  debootstrap --variant=minbase --include="$include" "$SUITE" "$root" ${MIRROR:+"$MIRROR"} >"$WORK/$name.log" 2>&1 \
    || { echo "containers: debootstrap failed, see $WORK/$name.log" >&2; exit 1; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  # a sandbox root, like the local backend's: no /var/tmp (the host's artefact cache lives in
  # its namesake) and nothing in /tmp; the project image's Dockerfile makes /var/tmp again
  rm -rf "$root/var/tmp" "$root"/tmp/* "$root"/tmp/.[!.]*
  tar -C "$root" -c . | podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' - "$name" >/dev/null
  rm -rf "$root"
  echo "containers: $name imported" >&2
}

mkdir -p "$WORK"
build_base gymforge-base-python python3
build_base gymforge-base-full python3,python3-venv,gcc,g++,libc6-dev,nodejs,git,bubblewrap,ca-certificates

if [ -x .venv/bin/python ]; then
  GYMFORGE_SANDBOX_IMAGE=gymforge-base-full .venv/bin/python -m gymforge.cli sandbox doctor --sandbox docker
fi
