"""``gymforge new NAME``: write a one-file environment and its QA test from templates."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from gymforge.core.errors import UserError

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "Env"


def scaffold(name: str, directory: Path, force: bool = False) -> list[Path]:
    """Write ``NAME.py`` and ``test_NAME.py`` into ``directory``; return their paths."""
    if not _NAME.match(name):
        raise UserError(
            f"environment name {name!r} must be a lowercase Python identifier "
            "(letters, digits, underscores; at most 40 characters)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    files = {
        directory / f"{name}.py": "template_env.py.txt",
        directory / f"test_{name}.py": "template_test.py.txt",
    }
    clash = [str(p) for p in files if p.exists()]
    if clash and not force:
        raise UserError(f"refusing to overwrite {', '.join(clash)} (use --force)")
    for path, template in files.items():
        text = resources.files(__package__).joinpath(template).read_text(encoding="utf-8")
        path.write_text(
            text.replace("__NAME__", name).replace("__CLS__", class_name(name)), encoding="utf-8"
        )
    return list(files)
