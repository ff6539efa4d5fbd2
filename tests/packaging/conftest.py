"""Fixtures of the packaging tests: a site directory (``package_site.Site``) and the
scaffolded ``stockroom`` package installed into it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from package_site import Site, entry_points_of

from gymforge.scaffold import scaffold_package


@pytest.fixture
def site(tmp_path: Path) -> Site:
    (tmp_path / "site").mkdir()
    return Site(tmp_path / "site")


@pytest.fixture
def stockroom(tmp_path: Path) -> Path:
    """``gymforge new stockroom --package``'s directory."""
    scaffold_package("stockroom", tmp_path / "src", "0.1.0")
    return tmp_path / "src" / "stockroom"


@pytest.fixture
def install_stockroom(site: Site, stockroom: Path) -> Callable[[], None]:
    """Install the scaffolded package the way ``pip install -e`` does: its dist-info with
    the entry points of its own pyproject, its source directory on the path."""

    def install() -> None:
        site.install("stockroom", "0.1.0", entry_points_of(stockroom), source=stockroom)

    return install
