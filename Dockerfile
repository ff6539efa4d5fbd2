# Runs the gymforge quickstart. Base image pinned to an explicit version; Python packages
# installed from the lock file (requirements.lock, refused if stale against pyproject.toml),
# then gymforge itself without resolving.
FROM python:3.11.7-slim-bookworm

RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap git \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/gymforge
COPY requirements.lock ./
RUN pip install --no-cache-dir -r requirements.lock
COPY . .
RUN python3 scripts/lockfile.py check && pip install --no-cache-dir --no-deps -e .

CMD ["gymforge", "demo", "--out", "/tmp/demo"]
