"""A budget of executed lines of the dataset's test code (``line_budget``).

A HumanEval or MBPP check runs in the judge's process, and its loops may run as long as a
value the candidate returned says (``for _ in range(candidate(10**12))``: 13 turns for a
right answer). Both the real check (``session``) and each of the chance level's stand-ins
(``chance``) run under a budget of lines executed in the dataset's own code (the check, the
task's module and set-up code, MBPP asserts); past it :class:`OverBudget` is raised in that
code. Only those lines count: the judge's own work (compiling the check, encoding and
decoding values, the stand-ins' copies) is bounded by itself, and counting it made the
budget of a long check run out before its asserts (``test_code_chance_large_check_red18``).

CPython turns tracing off for the thread once a trace function raises, so a check that
catches ``OverBudget`` (a bare ``except:``, ``except BaseException``, a ``with`` whose
``__exit__`` swallows it) would run on untraced, as long as the answer says. The dataset's
code is compiled with guards (:class:`Guards`): every handler, ``finally`` block, loop body
and function body starts with ``__gf_budget__()``, and every ``with`` statement is followed by
one, which raises ``OverBudget`` again once the budget is spent
(``test_code_budget_swallowed_red18b``); so do each comprehension's conditions and each
lambda's body, loops with no statement body that ran on untraced after a ``__del__``
swallowed the budget (``test_code_budget_swallowed_no_body_red18c``).

**Not bounded:** a loop in C over an answer's value (``sum(range(candidate(n)))``) executes
no line of test code.
"""

from __future__ import annotations

import ast
import contextlib
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

# The file names the dataset's code is compiled under (``checks``).
DATASET_FILES = frozenset({"<humaneval test>", "<mbpp test>", "<task module>", "<task set-up>"})
MAX_CHECK_LINES = 1_000_000  # the real check (the published checks: hundreds of lines)


class OverBudget(BaseException):
    """The dataset's code ran past its budget of lines (a ``BaseException``: the check's own
    ``except Exception`` cannot swallow it)."""


# the name the guards call, bound to ``guard`` by ``check_namespace`` (a dunder name: one
# starting with two underscores only is mangled in a class body)
GUARD = "__gf_budget__"


class _Spent(threading.local):
    spent = False  # the innermost budget of this thread has run out


_state = _Spent()


def guard() -> None:
    """Raise :class:`OverBudget` if the budget the dataset's code runs under is spent (the
    guards of :class:`Guards` call it)."""
    if _state.spent:
        raise OverBudget


@contextlib.contextmanager
def line_budget(lines: int) -> Iterator[None]:
    """Raise :class:`OverBudget` in the dataset's code run inside once it has executed
    ``lines`` lines (a trace on this thread; the one before is restored after), and again
    at each of its guards after (``Guards``: tracing is off once the trace has raised)."""
    left = lines

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal left
        if event == "line":
            left -= 1
            if left < 0:
                _state.spent = True
                raise OverBudget
        return local

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename in DATASET_FILES else None

    before, spent = sys.gettrace(), _state.spent
    _state.spent = False
    sys.settrace(on_call)
    try:
        yield
    finally:
        sys.settrace(before)
        _state.spent = spent


def _guard_call() -> ast.expr:
    return ast.Call(func=ast.Name(id=GUARD, ctx=ast.Load()), args=[], keywords=[])


def _call_guard() -> ast.stmt:
    return ast.Expr(_guard_call())


def _guarded(expr: ast.expr) -> ast.expr:
    """``__gf_budget__() or expr``: the guard, then ``expr``'s value (the guard is None)."""
    return ast.copy_location(ast.BoolOp(op=ast.Or(), values=[_guard_call(), expr]), expr)


def _has_docstring(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    first = node.body[0] if node.body else None
    return (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )


class Guards(ast.NodeTransformer):
    """Dataset code with a ``__gf_budget__()`` guard first in every handler, ``finally`` block,
    loop body and function body, and after every ``with`` statement: a spent budget is
    raised again wherever the code could go on after swallowing it. Loops with no statement
    body have one too: first in each comprehension's conditions and each lambda's body (a
    ``__del__`` swallows what it raises, and a generator expression freeing such an object
    in each turn ran on untraced: ``test_code_budget_swallowed_no_body_red18c``). Lambdas
    are shipped before (``ShipLambdas``: the sandbox has no guard)."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        if isinstance(node, (ast.ExceptHandler, ast.For, ast.AsyncFor, ast.While)):
            node.body.insert(0, _call_guard())
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body.insert(int(_has_docstring(node)), _call_guard())
        elif isinstance(node, ast.comprehension):
            node.ifs.insert(0, _guarded(ast.Constant(value=True)))
        elif isinstance(node, ast.Lambda):
            node.body = _guarded(node.body)
        if isinstance(node, (ast.Try, ast.TryStar)) and node.finalbody:
            node.finalbody.insert(0, _call_guard())
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and any(
                isinstance(s, (ast.With, ast.AsyncWith)) for s in block
            ):
                out: list[ast.AST] = []
                for stmt in block:
                    out.append(stmt)
                    if isinstance(stmt, (ast.With, ast.AsyncWith)):
                        out.append(_call_guard())
                setattr(node, name, out)
        return node
