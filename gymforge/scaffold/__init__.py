"""``gymforge new NAME``: write a one-file environment and its QA test from templates;
``gymforge new NAME --package``: the same environment file and test inside an installable
package (pyproject with the ``gymforge.environments`` entry point, README)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from gymforge.core.errors import UserError
from gymforge.scaffold.names import check_name, class_name


def dist_name(name: str) -> str:
    """The distribution name of a scaffolded package (``my_env`` -> ``my-env``)."""
    return name.replace("_", "-")


def _write(files: dict[Path, str], values: dict[str, str], force: bool) -> list[Path]:
    """Render each template (``__KEY__`` placeholders) to its path; refuse to overwrite."""
    clash = [str(p) for p in files if p.exists()]
    if clash and not force:
        raise UserError(f"refusing to overwrite {', '.join(clash)} (use --force)")
    for path, template in files.items():
        text = resources.files(__package__).joinpath(template).read_text(encoding="utf-8")
        for key, value in values.items():
            text = text.replace(f"__{key}__", value)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


def _values(name: str, check: str, gymforge_version: str = "") -> dict[str, str]:
    return {
        "NAME": name,
        "CLS": class_name(name),
        "DIST": dist_name(name),
        "GYMFORGE": gymforge_version,
        "CHECK": check,
    }


def scaffold(name: str, directory: Path, force: bool = False) -> list[Path]:
    """Write ``NAME.py`` and ``test_NAME.py`` into ``directory``; return their paths. A name
    that cannot work is refused first (``names.check_name``)."""
    check_name(name)
    files = {
        directory / f"{name}.py": "template_env.py.txt",
        directory / f"test_{name}.py": "template_test.py.txt",
    }
    return _write(files, _values(name, f"gymforge qa {name}.py:{class_name(name)}"), force)


def scaffold_package(
    name: str, directory: Path, gymforge_version: str, force: bool = False
) -> list[Path]:
    """Write the package ``directory/NAME/``: ``pyproject.toml`` (entry point ``NAME``,
    requiring ``gymforge>=gymforge_version``), ``README.md``, ``NAME/env.py`` (the one-file
    environment), ``NAME/__init__.py`` and ``tests/test_NAME.py``; return their paths, the
    pyproject first. A name that cannot work is refused first (``names.check_name``)."""
    check_name(name)
    root = directory / name
    files = {
        root / "pyproject.toml": "template_pyproject.toml.txt",
        root / "README.md": "template_readme.md.txt",
        root / name / "env.py": "template_env.py.txt",
        root / name / "__init__.py": "template_init.py.txt",
        root / "tests" / f"test_{name}.py": "template_test.py.txt",
    }
    check = f"gymforge qa {name}  (after pip install -e .)"
    return _write(files, _values(name, check, gymforge_version), force)


__all__ = ["check_name", "class_name", "dist_name", "scaffold", "scaffold_package"]
