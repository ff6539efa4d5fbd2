"""The examples a HumanEval or MBPP prompt shows, as a table (``shown_examples``).

HumanEval's docstrings show calls of the entry point with their results (``>>> f(x)`` then
the result on the next line, or ``f(x) ➞ y``, ``== y``, ``==> y``, ``-> y``, ``# returns y``,
``# => y``); MBPP's prompt shows the row's first test. Hidden tests often repeat them, so
an answer that looks its input up in this table and returns a constant for every other one
passes them without solving the task: ``chance`` counts such answers among those partial
credit is measured above. Only literal calls and literal results are read; trusted dataset
text, never the answer's.
"""

from __future__ import annotations

import ast
import re
from typing import Any

MAX_EXAMPLES = 64
MAX_CALL_CHARS = 2_000
_WORDS = r"should\s+return|returns?|gives?"
_ARROW = re.compile(  # ``==>`` before ``==``; a result in a comment after its arrow or word
    rf"^\s*(?:#\s*(?:==>|=>|->|{_WORDS})|➞|→|==>|->|=>|==|=|:|{_WORDS})?\s*", re.I
)


def example_key(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The key of one call in a table (``repr``: lists and dicts key as their literals)."""
    return repr((name, args, sorted(kwargs.items())))


def shown_examples(truth: dict[str, Any]) -> dict[str, Any]:
    """``example_key(call) -> result`` for each literal example the task's prompt shows."""
    if truth.get("kind") == "humaneval":
        entry = str(truth.get("entry_point") or "")
        return _from_text(str(truth.get("prompt") or ""), entry) if entry.isidentifier() else {}
    tests = truth.get("test_list") or []
    return _from_assert(str(tests[0])) if tests else {}


def _from_assert(test: str) -> dict[str, Any]:
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}
    out: dict[str, Any] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Compare) and len(node.comparators) == 1):
            continue
        if not isinstance(node.ops[0], (ast.Eq, ast.Is)):
            continue
        for call, want in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
            found = _call(call)
            value = _literal(want)
            if found is not None and value is not _NO:
                out[example_key(*found)] = value
                break
    return out


def _from_text(text: str, entry: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in re.finditer(rf"(?<![\w.]){re.escape(entry)}\s*\(", text):
        if len(out) >= MAX_EXAMPLES:
            break
        parsed = _call_at(text, m.start())
        if parsed is None:
            continue
        found, end = parsed
        value = _result_after(text, end)
        if value is not _NO:
            out[example_key(*found)] = value
    return out


def _call_at(
    text: str, start: int
) -> tuple[tuple[str, tuple[Any, ...], dict[str, Any]], int] | None:
    """The literal call starting at ``start`` and the index after it, if there is one."""
    stop = min(len(text), start + MAX_CALL_CHARS)
    for end in (i + 1 for i in range(start, stop) if text[i] == ")"):
        try:
            node = ast.parse(text[start:end].strip(), mode="eval").body
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        found = _call(node)
        return (found, end) if found is not None else None
    return None


def _result_after(text: str, end: int) -> Any:
    """The literal after a shown call: on its line past an arrow, or the next line (doctest)."""
    line, _, rest = text[end:].partition("\n")
    if line.strip():
        arrow = _ARROW.match(line)
        if arrow is None or not arrow.group(0).strip():
            return _NO
        body = line[arrow.end() :].strip()
    else:
        body = next((s for s in rest.split("\n") if s.strip()), "").strip()
        if body.startswith(">>>"):
            return _NO
    words = body.split(" ")
    for n in range(len(words), 0, -1):  # the longest literal at the start of the line
        value = _literal_text(" ".join(words[:n]).rstrip(".,;"))
        if value is not _NO:
            return value
    return _NO


_NO = object()


def _call(node: ast.AST) -> tuple[str, tuple[Any, ...], dict[str, Any]] | None:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    args = [_literal(a) for a in node.args]
    kwargs = {k.arg: _literal(k.value) for k in node.keywords if k.arg is not None}
    if len(kwargs) != len(node.keywords) or any(v is _NO for v in (*args, *kwargs.values())):
        return None
    return node.func.id, tuple(args), kwargs


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO


def _literal_text(src: str) -> Any:
    if not src or len(src) > MAX_CALL_CHARS:
        return _NO
    try:
        return ast.literal_eval(src)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO
