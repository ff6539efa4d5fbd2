"""Installed packages for the packaging tests, without pip: a site directory holding each
package's modules and a ``NAME-VERSION.dist-info`` (METADATA, entry_points.txt) that
``importlib.metadata`` discovers on ``sys.path`` exactly as it discovers a pip install. The
CLI runs in a child process with that directory on its ``PYTHONPATH``: real entry points,
read by the real scan."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from gymforge.testing.served import ServeProcess

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Site:
    """A site directory; ``install`` adds one distribution, ``gymforge`` runs the CLI."""

    root: Path
    extra: list[Path] = field(default_factory=list)

    def install(
        self,
        dist: str,
        version: str,
        entry_points: dict[str, str],
        modules: dict[str, str] | None = None,
        source: Path | None = None,
    ) -> None:
        """``modules``: relative path -> text, written under the site. ``source``: a
        package directory whose import root goes on the path as well (an editable install)."""
        info = self.root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)  # a second install of one name fails here, as it should
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
        (info / "entry_points.txt").write_text(
            f"[gymforge.environments]\n{lines}", encoding="utf-8"
        )
        for rel, text in (modules or {}).items():
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        if source is not None:
            self.extra.append(source)

    def env(self) -> dict[str, str]:
        path = [str(REPO), str(self.root), *map(str, self.extra)]
        return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}

    def gymforge(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gymforge.cli", *args],
            env=self.env(),
            cwd=cwd or self.root,
            capture_output=True,
            text=True,
            timeout=300,
        )

    @contextmanager
    def serve(self, *args: str, timeout: float = 60.0) -> Iterator[str]:
        """``gymforge serve ARGS`` on 127.0.0.1 with this site's path; yields its ``ws://``
        URL, then stops the server."""
        with ServeProcess(*args, env=self.env(), cwd=self.root, timeout=timeout) as server:
            yield server.url


def entry_points_of(package: Path) -> dict[str, str]:
    """The ``gymforge.environments`` entry points a package's pyproject declares."""
    data = tomllib.loads((package / "pyproject.toml").read_text(encoding="utf-8"))
    points: dict[str, str] = data["project"]["entry-points"]["gymforge.environments"]
    return points
