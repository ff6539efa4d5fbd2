# The gymforge project image: runs the quickstart (`gymforge demo`) and `gymforge reproduce`.
# BASE is a build argument: the default is the pinned public image; `make image` passes the
# base made locally from a debootstrap rootfs (gymforge-base-full, by `make containers`),
# which already has every Debian tool below, so that build needs no mirror and no registry.
# Python packages come from requirements.lock (refused if stale against pyproject.toml),
# from the wheelhouse mounted at /wheelhouse when there is one (`make image` mounts it and
# builds with --network none), then gymforge itself without resolving.
ARG BASE=python:3.11.7-slim-bookworm
FROM ${BASE}

RUN if ! command -v bwrap >/dev/null || ! command -v git >/dev/null \
        || ! python3 -c "import ensurepip, venv" 2>/dev/null; then \
      apt-get update \
      && apt-get install -y --no-install-recommends bubblewrap git python3-venv \
      && rm -rf /var/lib/apt/lists/*; \
    fi \
    && mkdir -p -m 1777 /var/tmp /tmp

# a venv: Debian's own python3 refuses system-wide pip installs (PEP 668)
RUN python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONHASHSEED=0 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/gymforge
COPY requirements.lock pyproject.toml ./
COPY scripts/lockfile.py scripts/
RUN python3 scripts/lockfile.py check \
    && if [ -d /wheelhouse ]; then set -- --no-index --find-links /wheelhouse; fi \
    && pip install --no-cache-dir "$@" "setuptools>=68" wheel \
    && pip install --no-cache-dir "$@" -r requirements.lock
COPY . .
RUN pip install --no-cache-dir --no-index --no-deps --no-build-isolation -e . \
    && gymforge list >/dev/null

CMD ["gymforge", "demo", "--out", "/tmp/demo"]
