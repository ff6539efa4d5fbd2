"""Which names ``gymforge new NAME`` accepts.

``NAME`` becomes four things at once: the environment id (``spec.id``, and with ``--package``
the entry point's name), the module ``NAME.py`` (or package ``NAME``) that the written test
imports, the class ``NameEnv`` inside the written module, and the distribution's name. A name
is refused, with one line naming the fix, when any of the four would not work:

- not a lowercase identifier: the module cannot be imported;
- a Python keyword or soft keyword (``class``, ``match``): ``from class import ClassEnv``
  does not parse, and a soft keyword as a module name only waits to;
- a built-in environment id (``ledger``, or ``support_desk`` for ``support-desk``): a run of
  the new environment records that id, and ``gymforge replay``, ``reproduce`` and every
  tool that reads a record resolve it to the built-in, whose episodes differ;
- an id that an installed package registers: the same, resolved to that package;
- a module of the standard library or of an installed distribution (``random``,
  ``pydantic``): the written file shadows it, for the template's own imports too;
- a name whose class name the templates already use (``tool`` makes ``ToolEnv``).
"""

from __future__ import annotations

import functools
import keyword
import re
import sys
from importlib import metadata, resources

from gymforge.core.errors import UserError
from gymforge.registry import installed
from gymforge.registry.resolve import BUILTIN

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
SOFT_KEYWORDS = frozenset({"_", "case", "match", "type", *keyword.softkwlist})
"""``type`` is a soft keyword from Python 3.12 on; gymforge runs on 3.11 as well."""
TEMPLATES = (
    "template_env.py.txt",
    "template_init.py.txt",
    "template_pyproject.toml.txt",
    "template_readme.md.txt",
    "template_test.py.txt",
)


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "Env"


def _instead(name: str) -> str:
    return f"pick another name, e.g. {'my_' + name if len('my_' + name) <= 40 else 'my_env'!r}"


@functools.cache
def _installed_modules() -> dict[str, list[str]]:
    """Top-level import name -> the installed distributions that provide it (read once per
    process: it reads every distribution's metadata)."""
    return dict(metadata.packages_distributions())


def _shadowed(name: str) -> str | None:
    """What ``name``, written as a module, would hide: a standard-library module or one an
    installed distribution provides (a file the user wrote before is neither)."""
    if name in sys.stdlib_module_names:
        return "the standard library's"
    owners = _installed_modules().get(name)
    return f"{' and '.join(sorted(set(owners)))}'s" if owners else None


def check_name(name: str) -> None:
    """Raise a one-line ``UserError`` naming the fix unless ``name`` can be scaffolded
    (module doc: the rules and why)."""
    if not _NAME.match(name):
        raise UserError(
            f"environment name {name!r} must be a lowercase Python identifier "
            "(letters, digits, underscores; at most 40 characters)"
        )
    if keyword.iskeyword(name):
        raise UserError(
            f"environment name {name!r} is a Python keyword, so the written test's "
            f"`from {name} import {class_name(name)}` would not parse; {_instead(name)}"
        )
    if name in SOFT_KEYWORDS:
        raise UserError(
            f"environment name {name!r} is a Python soft keyword (a keyword inside its own "
            f"statement), so code that names the module reads as that statement; "
            f"{_instead(name)}"
        )
    taken = next((i for i in (name, name.replace("_", "-")) if i in BUILTIN), None)
    if taken is not None:
        raise UserError(
            f"environment name {name!r} is the built-in environment {taken!r}: records of "
            f"your runs would name it and replay with the built-in; {_instead(name)}"
        )
    entry = installed.find(name, frozenset(BUILTIN))
    if entry is not None:
        raise UserError(
            f"environment name {name!r} is the id that the installed package {entry.origin} "
            f"registers: records of your runs would replay with it; {_instead(name)} "
            f"(or pip uninstall {entry.package})"
        )
    owner = _shadowed(name)
    if owner is not None:
        raise UserError(
            f"environment name {name!r} is {owner} module {name!r}: the written module "
            f"{name!r} would shadow it; {_instead(name)}"
        )
    cls = class_name(name)
    folder = resources.files(__package__)
    if any(re.search(rf"\b{cls}\b", folder.joinpath(t).read_text("utf-8")) for t in TEMPLATES):
        raise UserError(
            f"environment name {name!r} makes the class {cls}, a name the written module "
            f"already uses; {_instead(name)}"
        )
