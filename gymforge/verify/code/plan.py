"""The calls a HumanEval or MBPP test will make, read from its source when they are all
direct calls with literal arguments (``plan_calls``), so the judge can run them as one batch
job first; ``PlannedCall.matches`` checks each call the test then makes against the plan."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from typing import Any

from gymforge.sandbox.wire import Unserialisable
from gymforge.verify.code.names import DropUndecisive, mbpp_names, mbpp_test_decides_nothing


class PlanMiss(BaseException):
    """The test made a call ``plan_calls`` did not foresee: the plan's answers do not apply.
    A ``BaseException`` so that the test code's own ``except Exception`` cannot swallow it."""


@dataclass(frozen=True)
class PlannedCall:
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def matches(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Is this the call the test makes: the same name, and arguments of the same types
        with equal values all the way down (a value that is not plain data never matches)?"""
        return name == self.name and _same(args, self.args) and _same(kwargs, self.kwargs)


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) in _PLAIN and bool(a == b)


_PLAIN = (int, float, str, bool, type(None))


MAX_PLANNED = 1000


def plan_calls(
    truth: dict[str, Any], tested: frozenset[str] = frozenset()
) -> tuple[PlannedCall, ...] | None:
    """The candidate calls a HumanEval or MBPP test will make, in evaluation order, when every
    reference to the candidate is a direct call with literal arguments; else None.

    A plan is a guess, checked call by call when the test runs (``PlanMiss`` on the first
    difference, e.g. a literal call inside a loop): it only lets the judge fetch every answer
    in one batch job instead of one round trip per call."""
    kind = truth.get("kind")
    if kind == "humaneval":
        return _plan(kind, truth["entry_point"], truth["test"], (), "", ())
    if kind == "mbpp":
        imports = tuple(truth.get("test_imports") or ())
        setup = truth.get("test_setup_code") or ""
        return _plan(kind, "", "", tuple(truth["test_list"]), setup, imports, tested)
    return None


@functools.lru_cache(maxsize=1024)
def _plan(
    kind: str,
    entry: str,
    test: str,
    test_list: tuple[str, ...],
    setup: str,
    imports: tuple[str, ...],
    tested: frozenset[str] = frozenset(),
) -> tuple[PlannedCall, ...] | None:
    from gymforge.sandbox.jobs import encode_args

    try:
        if kind == "humaneval":
            tree = ast.parse(test)
            check = next(
                (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"),
                None,
            )
            if check is None or len(check.args.args) != 1:
                return None
            names = {check.args.args[0].arg: entry, entry: entry}
            check = DropUndecisive(frozenset(names)).visit(check)  # as ``run_humaneval`` runs it
            bodies: list[ast.AST] = list(check.body)
        else:
            mbpp = {
                "test_list": list(test_list),
                "test_setup_code": setup,
                "test_imports": list(imports),
            }
            names = {n: n for n in mbpp_names(mbpp, tested)}
            bodies = [ast.parse(t) for t in test_list if not mbpp_test_decides_nothing(t)]
        found: list[tuple[str, ast.Call]] = []
        for body in bodies:
            if not _collect(body, names, found):
                return None
        if not found or len(found) > MAX_PLANNED:
            return None
        plan = []
        for name, call in found:
            args = tuple(ast.literal_eval(a) for a in call.args)
            kwargs = {str(k.arg): ast.literal_eval(k.value) for k in call.keywords}
            encode_args(args, kwargs)  # plain data only (raises Unserialisable)
            plan.append(PlannedCall(name, args, kwargs))
        return tuple(plan)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError, Unserialisable):
        return None


def _collect(node: ast.AST, names: dict[str, str], out: list[tuple[str, ast.Call]]) -> bool:
    """Post-order walk (arguments are evaluated before the call). False when a candidate
    name is used other than as a direct call with positional or keyword literals."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
        if any(isinstance(a, ast.Starred) for a in node.args):
            return False
        if any(k.arg is None for k in node.keywords):
            return False
        for child in [*node.args, *(k.value for k in node.keywords)]:
            if not _collect(child, names, out):
                return False
        out.append((names[node.func.id], node))
        return True
    if isinstance(node, ast.Name) and node.id in names:
        return False
    return all(_collect(child, names, out) for child in ast.iter_child_nodes(node))
