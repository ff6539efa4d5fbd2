"""Attack on the code judge: the line budget swallowed where no guard follows runs on unbounded.

The dataset's code carries guards (``budget.Guards``) first in every handler, ``finally``
block, loop body and function body, and after every ``with``: once the budget is spent,
each raises ``OverBudget`` again, since CPython turns tracing off once the trace function
has raised. But Python swallows what a ``__del__`` raises (it only reports it), and a
comprehension, a generator expression or a lambda called from C (``map``) loops with no
statement body to guard. A check that frees an object with a ``__del__`` in each turn of a
generator expression over the answer's value (``sum((Tmp(), 1)[1] for _ in
range(candidate(n)))``) has its budget run out inside ``__del__`` (most of its lines are
there), swallowed; the generator expression then runs on untraced, as long as the answer
says. Success is the check running past its budget; the defence: a guard in each
comprehension's conditions and first in each lambda's body.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from gymforge.verify.code.budget import OverBudget, line_budget
from gymforge.verify.code.checks import _compiled, check_namespace

MODULE = (
    "class Tmp:\n"
    "    def __del__(self):\n"
    "        i = 0\n"
    "        while i < 200:\n"
    "            i += 1\n"
    "N = 150_000\n"
)
LOOPS = {
    "generator_expression": "def check():\n    return sum((Tmp(), 1)[1] for _ in range(N))\n",
    "list_comprehension": "def check():\n    return len([(Tmp(), 1)[1] for _ in range(N)])\n",
    "set_comprehension": "def check():\n    return len({(Tmp(), _)[1] for _ in range(N)})\n",
    "dict_comprehension": "def check():\n    return len({_: (Tmp(), 1)[1] for _ in range(N)})\n",
    "lambda_in_map": "def check():\n    return sum(map(lambda _: (Tmp(), 1)[1], range(N)))\n",
}


@pytest.mark.parametrize("how", sorted(LOOPS))
def test_a_loop_with_no_body_stops_once_the_budget_is_spent(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    swallowed: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: swallowed.append(u.exc_type))
    ns, _ = check_namespace({"kind": "humaneval", "prompt": ""})  # the check's namespace
    exec(_compiled(MODULE + LOOPS[how], "<humaneval test>"), ns)  # our own test code
    with pytest.raises(OverBudget), line_budget(20_000):
        ns["check"]()  # type: ignore[operator]


def test_the_guards_change_no_value() -> None:
    """The guarded comprehensions and lambdas compute what they did (under no budget), and
    a function's docstring stays its docstring, an empty one too."""
    src = (
        "def f():\n    ''\n    return 1\n"
        "D = (f.__doc__,)\n"
        "R = ([x * y for x in range(4) if x for y in range(x) if y % 2],\n"
        "     {k: v for k, v in zip('ab', (1, 2))}, sum(i for i in range(5)),\n"
        "     sorted({c for c in 'hello'}), (lambda a, b=2: a * b)(3),\n"
        "     list(map(lambda s: s.upper(), ['x', 'y'])), (lambda: None)())\n"
    )
    plain: dict[str, Any] = {}
    exec(src, plain)
    ns, _ = check_namespace({"kind": "humaneval", "prompt": ""})
    exec(_compiled(src, "<humaneval test>"), ns)
    assert ns["R"] == plain["R"]
    assert ns["D"] == plain["D"] == ("",)
