"""The scoring job: what runs INSIDE the sandbox to judge one answer with reasoning-gym.

This file is the source of a function-call job (``SandboxJob.calls``), loaded in a jail by the
system ``python3 -I -S``: standard library only, plus the read-only site directories the host
binds at ``SITE_DIRS`` (named in the job's environment), where reasoning-gym and its
dependencies live. It never imports gymforge (which the jail does not hold).

Loading the job imports the dataset's own module (trusted code: reasoning-gym, never the
answer); the one call, ``score()``, reads the job file ``PAYLOAD`` (plain data: the dataset
class, its configuration, the task entry and the answer), builds the dataset and returns
``float(score_answer(answer, entry))``. Whatever the answer makes the scorer do (execute code,
exit, print, loop, patch modules) happens in this one job process, which the sandbox throws
away afterwards; the host decodes one plain float, or treats the job's failure as the
episode's verifier error.

``encode`` / ``decode`` carry reasoning-gym's values (tuples, dicts with integer keys,
enums, dataclasses, dates) as tagged plain JSON: every dict is ``{"$d": [[k, v], ...]}``, so
a tag can never be confused with data. The host imports this module for ``encode`` (and
``decode``, to score its own stored answers on exactly the entry the sandbox sees).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import importlib
import importlib.util
import json
import math
import os
import sys
import types
from typing import Any

PAYLOAD = "payload.json"
SITE_ENV = "GF_SITE_DIRS"
MODULE_ENV = "GF_DATASET_MODULE"
TRUSTED_PREFIX = "reasoning_gym."
"""Enums and dataclasses are rebuilt only from reasoning-gym's own modules."""

FIRST = ("reasoning_gym.coaching",)
"""Imported before the dataset's module: ``reasoning_gym.factory`` and ``coaching`` import
each other, and only this order (the package ``__init__``'s) resolves the cycle."""


def encode(value: Any) -> Any:
    """``value`` as tagged plain JSON (module doc); ``TypeError`` for anything else."""
    if isinstance(value, enum.Enum):
        kind = type(value)
        return {"$e": [kind.__module__, kind.__qualname__, encode(value.value)]}
    item = getattr(value, "item", None)
    if type(value).__module__ == "numpy" and callable(item):  # numpy scalar
        return encode(item())
    if isinstance(value, str):
        return str(value)  # numpy.str_ and other str subclasses become plain str
    if isinstance(value, bool | int):
        return value if type(value) in (bool, int) else int(value)
    if isinstance(value, float):
        return {"$x": repr(float(value))} if not math.isfinite(value) else float(value)
    if value is None:
        return None
    if isinstance(value, dict):
        return {"$d": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {"$t": [encode(v) for v in value]}
    if isinstance(value, set | frozenset):
        tag = "$s" if isinstance(value, set) else "$f"
        return {tag: [encode(v) for v in sorted(value, key=repr)]}
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return {"$dt": [type(value).__name__, value.isoformat()]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"$c": [cls.__module__, cls.__qualname__, fields]}
    if hasattr(value, "tolist"):  # numpy array
        return encode(value.tolist())
    raise TypeError(f"cannot carry a {type(value).__name__} into the scoring sandbox")


def _trusted_class(module: str, qualname: str) -> Any:
    if not module.startswith(TRUSTED_PREFIX):
        raise ValueError(f"refusing to rebuild a {module}.{qualname}")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def decode(value: Any) -> Any:
    """The value ``encode`` made ``value`` from."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    ((tag, body),) = value.items()
    if tag == "$d":
        return {decode(k): decode(v) for k, v in body}
    if tag == "$t":
        return tuple(decode(v) for v in body)
    if tag in ("$s", "$f"):
        items = [decode(v) for v in body]
        return set(items) if tag == "$s" else frozenset(items)
    if tag == "$x":
        return float(body)
    if tag == "$dt":
        kind, text = body
        if kind == "datetime":
            return datetime.datetime.fromisoformat(text)
        if kind == "date":
            return datetime.date.fromisoformat(text)
        return datetime.time.fromisoformat(text)
    if tag == "$e":
        return _trusted_class(body[0], body[1])(decode(body[2]))
    if tag == "$c":
        cls = _trusted_class(body[0], body[1])
        return cls(**{k: decode(v) for k, v in body[2].items()})
    raise ValueError(f"unknown tag {tag!r}")


def import_dataset_module(module: str) -> types.ModuleType:
    """``module`` (e.g. ``reasoning_gym.games.countdown``) without running the package
    ``__init__`` files above it, which import all ~100 datasets (about half a second); the
    whole package when a module needs its parents' contents after all."""
    parts = module.split(".")
    try:
        for i in range(1, len(parts)):
            name = ".".join(parts[:i])
            if name in sys.modules:
                continue
            spec = importlib.util.find_spec(name)
            if spec is None or spec.submodule_search_locations is None:
                raise ImportError(name)
            stub = types.ModuleType(name)
            stub.__path__ = list(spec.submodule_search_locations)
            stub.__spec__ = spec
            sys.modules[name] = stub
        for first in FIRST:  # the order the package's own __init__ imports them in
            importlib.import_module(first)
        return importlib.import_module(module)
    except Exception:
        for name in [m for m in sys.modules if m == parts[0] or m.startswith(parts[0] + ".")]:
            del sys.modules[name]
        importlib.import_module(parts[0])
        return importlib.import_module(module)


def build(payload: dict[str, Any]) -> tuple[Any, dict[str, Any], str]:
    """``(dataset, entry, answer)`` from a decoded payload."""
    data = decode(payload["data"])
    dataset_cls = _trusted_class(data["dataset"][0], data["dataset"][1])
    config_cls = _trusted_class(data["config_class"][0], data["config_class"][1])
    config = config_cls(**{**data["config"], "seed": 0, "size": 1})
    return dataset_cls(config=config), data["entry"], str(payload["answer"])


def score() -> float:
    """The one call: reasoning-gym's own ``score_answer`` on the payload's answer."""
    with open(PAYLOAD, encoding="utf-8") as f:
        payload = json.load(f)
    dataset, entry, answer = build(payload)
    return float(dataset.score_answer(answer, entry))


def _load() -> None:
    """Job start-up (trusted): the site directories on the path, the dataset module imported,
    so ``score`` measures the scorer and not the imports."""
    for path in filter(None, os.environ.get(SITE_ENV, "").split(os.pathsep)):
        if path not in sys.path:
            sys.path.append(path)
    module = os.environ.get(MODULE_ENV)
    if module:
        import_dataset_module(module)


if __name__ == "solution":  # loaded as the job's candidate module, never on the host
    _load()
