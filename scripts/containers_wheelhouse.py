"""Complete a wheelhouse for another interpreter: the wheels of requirements.lock were made by
this venv's Python, but a requirement's marker can differ on the image's (redis needs
async-timeout on ``python_full_version < "3.11.3"``: Debian bookworm has 3.11.2). Prints the
requirements that the wheels in DIR need under ``python_full_version=VERSION`` and that no
wheel in DIR provides, one per line, for ``pip download --no-deps``.

    python3 scripts/containers_wheelhouse.py DIR VERSION
"""

from __future__ import annotations

import sys
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename


def missing(wheelhouse: Path, version: str) -> list[str]:
    major_minor = ".".join(version.split(".")[:2])
    env = {"python_full_version": version, "python_version": major_minor, "extra": ""}
    have = {canonicalize_name(parse_wheel_filename(w.name)[0]) for w in wheelhouse.glob("*.whl")}
    need: dict[str, str] = {}
    for wheel in sorted(wheelhouse.glob("*.whl")):
        with zipfile.ZipFile(wheel) as z:
            meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            headers = Parser().parsestr(z.read(meta).decode("utf-8", "replace"))
        for line in headers.get_all("Requires-Dist") or []:
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate(env):
                continue
            name = canonicalize_name(req.name)
            if name not in have:
                need[name] = f"{req.name}{req.specifier}"
    return sorted(need.values())


if __name__ == "__main__":
    for line in missing(Path(sys.argv[1]), sys.argv[2]):
        print(line)
