"""`gymforge new NAME` refuses an id that an installed package registers: the new
environment's runs would record that id, and every tool that reads a record (``replay``,
``reproduce``) resolves it to the installed package's environment, not the new one.

Before, ``gymforge new stockroom`` with the ``stockroom`` package installed wrote the files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from package_site import Site


def test_an_installed_id_is_refused(
    site: Site, install_stockroom: Callable[[], None], tmp_path: Path
) -> None:
    install_stockroom()
    listed = site.gymforge("list")
    assert "stockroom" in listed.stdout + listed.stderr, listed.stderr  # the id is installed
    out = tmp_path / "new"
    out.mkdir()
    for flags in ([], ["--package"]):
        made = site.gymforge("new", "stockroom", "--dir", str(out), *flags)
        errors = [ln for ln in made.stderr.splitlines() if ln.startswith("error:")]
        assert made.returncode == 2 and len(errors) == 1, made.stderr
        assert "installed package stockroom 0.1.0" in errors[0], errors[0]
        assert "pip uninstall stockroom" in errors[0], errors[0]
        assert list(out.iterdir()) == []
