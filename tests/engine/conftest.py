"""The real-engine tests: a real vLLM server (``.venv-engine``) serving a tiny model built
on the fly. Not part of the default run: ``make test-engine`` sets ``GYMFORGE_ENGINE=1``
(see ``tests/conftest.py``). The figures each test measures are printed at the end."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gymforge.testing.engine import VLLMServer, build_model

ROOT = Path(__file__).resolve().parents[2]
FIGURES: list[tuple[str, Any]] = []


@pytest.fixture(scope="session")
def figure() -> Callable[[str, Any], None]:
    """``figure(name, value)`` records a measured figure for the end-of-run summary."""

    def record(name: str, value: Any) -> None:
        FIGURES.append((name, value))

    return record


@pytest.fixture(scope="session")
def model_dir() -> Path:
    out = Path(os.environ.get("GYMFORGE_ENGINE_MODEL", ROOT / "runs" / "engine" / "model"))
    return build_model(out)


@pytest.fixture(scope="session")
def engine(model_dir: Path) -> Iterator[Any]:
    """The server. ``GYMFORGE_ENGINE_URL`` reuses one already serving ``model_dir`` as
    ``tiny`` (for iterating on these tests); otherwise one is started and stopped here."""
    url = os.environ.get("GYMFORGE_ENGINE_URL")
    if url:
        yield SimpleNamespace(base_url=url.rstrip("/") + "/v1")
        return
    python = Path(
        os.environ.get("GYMFORGE_ENGINE_PYTHON", ROOT / ".venv-engine" / "bin" / "python")
    )
    if not python.exists():
        pytest.fail(f"{python} is missing: run scripts/engine_setup.sh (make test-engine does)")
    server = VLLMServer(python, model_dir, model_dir.parent / "vllm.log")
    server.start(timeout=float(os.environ.get("GYMFORGE_ENGINE_TIMEOUT", "600")))
    try:
        yield server
    finally:
        server.stop()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIGURES:
        return
    terminalreporter.section("real-engine figures")
    for name, value in FIGURES:
        terminalreporter.write_line(f"{name}: {value}")
