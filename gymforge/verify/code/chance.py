"""What an answer that does no work scores on a HumanEval or MBPP task (``chance``).

Partial credit is the fraction of tests passed; on a yes/no task most tests may expect one
value (seven of HumanEval/40's nine asserts expect ``False``), so ``return False`` passed
0.78 of them without reading its input. ``chance`` runs the task's own tests here, in the
judge, against stand-ins of ours that return one constant each: the common ones (``None``,
``False``, ``True``, ``0``, ``1``, ``""``, ``[]``...) and every literal the asserts compare
with, and gives the best fraction any of them passes. An answer that echoes an argument
passes as much without work (seven of HumanEval/137's eight asserts expect its second), and
so does one builtin step on its arguments (``STEPS``: ``str(x)`` passes most of
HumanEval/44's, ``sorted(x)`` half of HumanEval/88's above the constants), and one that looks
its input up in the examples the prompt shows (``shown``) and does any of these otherwise: all
are stand-ins too. Each stand-in's check runs under a budget of lines of test code
(``budget``), and a step's result past a size bound fails its call. No answer's code runs:
only trusted dataset code and our own stand-ins. The verdict's score is then the fraction
passed above that level (``tally.verdict``), so such answers earn nothing and a full pass
still earns 1.
"""

from __future__ import annotations

import ast
import copy
import functools
import json
import operator
from collections.abc import Callable
from typing import Any

from gymforge.verify.code.budget import OverBudget, line_budget
from gymforge.verify.code.checks import check_namespace, run_humaneval, run_mbpp
from gymforge.verify.code.names import tested_builtins
from gymforge.verify.code.shown import example_key, shown_examples
from gymforge.verify.code.tally import Tally

COMMON: tuple[Any, ...] = (None, False, True, 0, 1, -1, "", [], (), {}, 0.0)
MAX_CONSTANTS = 48
MAX_ECHOED = 3  # stand-ins that return their first, second or third argument
MAX_STEPPED = 2  # ``STEPS`` are taken on the first and on the second argument
# A literal inside one of these on a compared side is a constant too (``tuple([1, 2])``).
CONVERSIONS = frozenset({"tuple", "list", "set", "frozenset", "sorted", "str", "int", "float",
                         "abs", "round", "dict", "bool"})  # fmt: skip
MAX_LITERAL_CHARS = 2_000
MAX_LINES = 200_000  # lines of test code a stand-in's check may execute (``budget``)
MAX_INT_BITS = 1 << 16  # a step's result past these sizes fails its call (``_bounded``)
MAX_ITEMS = 100_000
STEPS: tuple[Callable[[Any], Any], ...] = (  # one builtin step on the first argument
    len, sorted, min, max, sum, abs, str, int, float, bool, operator.not_, operator.neg,
    lambda x: x[0], lambda x: x[-1], lambda x: x[::-1], lambda x: sorted(x, reverse=True),
    lambda x: sorted(set(x)), lambda x: x + 1, lambda x: x - 1, lambda x: _number(x) % 2 == 0,
    lambda x: _number(x) % 2 == 1, lambda x: x.lower(), lambda x: x.upper(), lambda x: x.split(),
    lambda x: x.swapcase(), lambda x: x.strip(), lambda x: x == x[::-1], lambda x: x[1:],
    lambda x: x[:-1], lambda x: len(set(x)), lambda x: type(x)(), lambda x: _number(x) // 2,
    lambda x: _number(x) * 2, lambda x: _number(x) ** 2, lambda x: _number(x) > 0,
)  # fmt: skip
# One step on the first two arguments; no ``*`` (a string times a large number fills memory).
PAIR_STEPS: tuple[Callable[[Any, Any], Any], ...] = (
    operator.add, operator.sub, operator.lt, operator.le, operator.gt, operator.ge,
    operator.eq, max, min, operator.contains, lambda a, b: a in b, lambda a, b: a.count(b),
    lambda a, b: _number(a) % _number(b), lambda a, b: _number(a) // _number(b),
)  # fmt: skip
_FIELDS = ("kind", "entry_point", "prompt", "test", "test_list", "test_setup_code",
           "test_imports", "reference")  # fmt: skip


def chance(truth: dict[str, Any]) -> float:
    """The best fraction of a HumanEval or MBPP task's tests that an answer doing no work
    passes: a constant, an echoed argument, one builtin step on the arguments, or the
    prompt's examples from a table and one of those for other inputs (0.0 when none passes
    any, or the tests loop with ``while``: a constant could keep such a loop going forever)."""
    key = json.dumps({k: truth.get(k) for k in _FIELDS}, sort_keys=True, default=str)
    return _chance(key)


@functools.lru_cache(maxsize=1024)
def _chance(key: str) -> float:
    truth: dict[str, Any] = json.loads(key)
    sources = [str(truth.get("test") or ""), *(truth.get("test_list") or [])]
    trees = [_parse(s) for s in sources]
    if any(t is None or any(isinstance(n, ast.While) for n in ast.walk(t)) for t in trees):
        return 0.0
    best = 0.0
    for answer in stand_ins(truth, [t for t in trees if t is not None]):
        best = max(best, _score(truth, answer))
        if best >= 1.0:
            break
    return best


Answer = Callable[[str, tuple[Any, ...], dict[str, Any]], Any]


def stand_ins(truth: dict[str, Any], trees: list[ast.AST]) -> list[Answer]:
    """Answers that do no work: each constant, each echoed argument, each builtin step on
    the arguments (``STEPS``, ``PAIR_STEPS``), and each of those behind a table of the
    prompt's examples."""

    def constant(value: Any) -> Answer:
        return lambda name, args, kwargs: copy.deepcopy(value)

    def echo(i: int) -> Answer:
        return lambda name, args, kwargs: copy.deepcopy(args[i])

    def step(f: Callable[[Any], Any], i: int = 0) -> Answer:
        return lambda name, args, kwargs: _bounded(f(args[i]))

    def pair(f: Callable[[Any, Any], Any]) -> Answer:
        return lambda name, args, kwargs: _bounded(f(args[0], args[1]))

    def tabled(other: Answer) -> Answer:
        def answer(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            key = example_key(name, args, kwargs)
            return copy.deepcopy(table[key]) if key in table else other(name, args, kwargs)

        return answer

    plain = [
        *map(constant, constants(trees)),
        *map(echo, range(MAX_ECHOED)),
        *(step(f, i) for i in range(MAX_STEPPED) for f in STEPS),
        *map(pair, PAIR_STEPS),
    ]
    table = shown_examples(truth)
    return [*plain, *map(tabled, plain)] if table else plain


def _score(truth: dict[str, Any], stand_in: Answer) -> float:
    t = Tally()

    def proxy_for(name: str) -> Callable[..., Any]:
        def answer(*args: Any, **kwargs: Any) -> Any:
            return stand_in(name, args, kwargs)

        return answer

    try:
        ns, _ = check_namespace(truth)
        with line_budget(MAX_LINES):
            if truth.get("kind") == "humaneval":
                run_humaneval(truth, ns, proxy_for, t)
            else:
                run_mbpp(truth, ns, proxy_for, t, tested_builtins(truth, ""))
    except (Exception, OverBudget):
        return 0.0
    return 0.0 if t.stopped or not t.run else t.passed / t.run


def constants(trees: list[ast.AST]) -> list[Any]:
    """``COMMON``, then every literal the asserts compare with, without repeats."""
    out: list[Any] = []
    seen: set[str] = set()
    literals = (
        node
        for tree in trees
        for n in ast.walk(tree)
        if isinstance(n, ast.Compare)
        for side in (n.left, *n.comparators)
        for node in (side, *_converted(side))
    )
    for value in (*COMMON, *(_literal(s) for s in literals)):
        key = f"{type(value).__name__}:{value!r}"
        if value is _NOT_LITERAL or key in seen:
            continue
        seen.add(key)
        out.append(value)
        if len(out) >= MAX_CONSTANTS:
            break
    return out


_NOT_LITERAL = object()


def _converted(side: ast.AST) -> list[ast.AST]:
    """The arguments of a conversion a compared side is (``tuple([1, 2])``'s ``[1, 2]``)."""
    if isinstance(side, ast.Call) and isinstance(side.func, ast.Name):
        return list(side.args) if side.func.id in CONVERSIONS else []
    return []


def _bounded(x: Any) -> Any:
    """A copy of ``x``, a step's result, if it is within the sizes a step may make: a check
    feeding the answer its own result would grow it in C, where no line is counted
    (``tests/redteam/test_code_chance_step_grows_red18.py``)."""
    if isinstance(x, int) and x.bit_length() > MAX_INT_BITS:
        raise OverflowError("a step's value past the size bound")
    if isinstance(x, (str, bytes, list, tuple, dict, set, frozenset)) and len(x) > MAX_ITEMS:
        raise OverflowError("a step's value past the size bound")
    return copy.deepcopy(x)


def _number(x: Any) -> int | float:
    """``x`` if it is a number (``%`` on a string formats it, maybe at a width of millions)."""
    if isinstance(x, (int, float)):
        return x
    raise TypeError(type(x).__name__)


def _literal(node: ast.AST) -> Any:
    try:
        if len(ast.unparse(node)) > MAX_LITERAL_CHARS:
            return _NOT_LITERAL
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


def _parse(src: str) -> ast.AST | None:
    try:
        return ast.parse(src)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
