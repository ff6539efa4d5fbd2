"""Keeping model text out of the evaluators inside reasoning-gym's scorers.

Some reasoning-gym scorers hand the answer to ``eval``, ``exec``, ``sympy.parse_expr`` or
``sympy.sympify`` (countdown, puzzle24, n_queens, spiral_matrix, the integration and
polynomial datasets...). Those execute it: an answer that reads the target out of the
scorer's stack frame gets countdown's full score from reasoning-gym itself, and any answer
can run anything on the grading host.

``install(dataset_cls)`` rebinds, in the dataset's own module only, each of those evaluators
(and any module global bound to ``sympy``, through a proxy) to a guarded version. While
``scoring(entry)`` is active, the guarded evaluator passes through text that reasoning-gym
generated itself (any string inside the entry, e.g. ``eval(entry["answer"])``), and any other
text only when it is plain data (``unsafe`` returns None); otherwise it raises
``UnsafeAnswer`` *instead of evaluating*. The scorer then proceeds as it does for any
unparsable answer (most catch the error and give a low score), and the refusal is recorded
for the verdict. Outside ``scoring`` (generation, other callers) the evaluators behave as
before.

Plain data: digits, letters, whitespace and ``+-*/().,=<>[]{}|&~^``; no ``_``, quotes, ``:``,
``;``, ``@``, ``\\``, ``!``, ``#``; no attribute access; no Python keyword but ``and``/``or``/
``not``; no call but of maths functions (``sqrt``, ``sin``, ``log``...); no power of a number
(``9**9**9``) and no shift; no ``*`` in text that holds a list, set or tuple (``[0]*10**9``).
"""

from __future__ import annotations

import builtins
import inspect
import keyword
import re
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import sympy
from sympy.parsing import sympy_parser

_PLAIN = re.compile(r"[0-9A-Za-z\s+\-*/().,=<>\[\]{}|&~^]*")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CALL = re.compile(r"([A-Za-z][A-Za-z0-9]*)\s*\(")
_ATTRIBUTE = re.compile(r"\.\s*[A-Za-z]")
_SYMBOL_POWER = re.compile(r"[A-Za-z]\s*(?:\*\*|\^)\s*\d{1,2}(?![\d.])")
_KEYWORDS = frozenset(keyword.kwlist) - {"and", "or", "not", "True", "False", "None"}
SAFE_CALLS = frozenset(
    ("sqrt", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan", "log", "ln", "exp", "Abs", "abs")
)
EVALUATORS: dict[str, Callable[..., Any]] = {
    "eval": builtins.eval,
    "exec": builtins.exec,
    "parse_expr": sympy_parser.parse_expr,
    "sympify": sympy.sympify,
}


_BUILTIN = ("eval", "exec")


class UnsafeAnswer(Exception):
    """Raised by a guarded evaluator instead of running text that is not plain data."""


def unsafe(text: str) -> str | None:
    """Why ``text`` may not be evaluated, or None when it is plain data (module doc)."""
    if not _PLAIN.fullmatch(text):
        bad = next(c for c in text if not _PLAIN.fullmatch(c))
        return f"character {bad!r} is not allowed in an evaluated answer"
    if _ATTRIBUTE.search(text):
        return "attribute access is not allowed"
    word = next((w for w in _WORD.findall(text) if w in _KEYWORDS), None)
    if word is not None:
        return f"the keyword {word!r} is not allowed"
    for m in _CALL.finditer(text):
        if m[1] not in SAFE_CALLS:
            return f"call of {m[1]!r} is not allowed"
    rest = _SYMBOL_POWER.sub("x", text)
    if "**" in rest or "^" in rest:
        return "only a symbol may be raised to a power, by a literal of at most two digits"
    if "<<" in text or ">>" in text:
        return "shifts are not allowed"
    if "*" in text and any(c in text for c in "[{,"):
        return "no '*' next to a list, set or tuple"
    return None


@dataclass
class Guard:
    """One scoring call: the texts reasoning-gym generated, and what was refused."""

    trusted: frozenset[str]
    refused: list[str] = field(default_factory=list)


_ACTIVE: ContextVar[Guard | None] = ContextVar("reasoning_gym_guard", default=None)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _guarded(real: Callable[..., Any]) -> Callable[..., Any]:
    def evaluate(source: Any, *args: Any, **kwargs: Any) -> Any:
        guard = _ACTIVE.get()
        if guard is not None and not (isinstance(source, str) and source in guard.trusted):
            why = unsafe(source) if isinstance(source, str) else "only text may be evaluated"
            if why is not None:
                guard.refused.append(why)
                raise UnsafeAnswer(why)
        return real(source, *args, **kwargs)

    return evaluate


class _SympyProxy(types.ModuleType):
    """``sympy`` with guarded ``parse_expr`` and ``sympify``; everything else forwarded."""

    def __init__(self) -> None:
        super().__init__("sympy")
        self.parse_expr = _guarded(sympy_parser.parse_expr)
        self.sympify = _guarded(sympy.sympify)

    def __getattr__(self, name: str) -> Any:
        return getattr(sympy, name)


@cache
def install(dataset_cls: type) -> bool:
    """Guard the evaluators the module of ``dataset_cls`` can reach; True if it has any."""
    module = sys.modules.get(dataset_cls.__module__)
    try:
        source = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        source = ""
    if module is None:
        return False
    found = False
    for name, real in EVALUATORS.items():
        bound = vars(module).get(name, getattr(builtins, name) if name in _BUILTIN else None)
        if bound is real and re.search(rf"(?<![\w.]){name}\s*\(", source):
            setattr(module, name, _guarded(real))
            found = True
    for name, value in list(vars(module).items()):
        if value is sympy and re.search(rf"\b{name}\.(?:parse_expr|sympify)\s*\(", source):
            setattr(module, name, _SympyProxy())
            found = True
    return found


@contextmanager
def scoring(entry: Mapping[str, Any]) -> Iterator[Guard]:
    """Guard every evaluator installed by ``install`` for the duration of one score call."""
    guard = Guard(frozenset(_strings(entry)))
    token = _ACTIVE.set(guard)
    try:
        yield guard
    finally:
        _ACTIVE.reset(token)
