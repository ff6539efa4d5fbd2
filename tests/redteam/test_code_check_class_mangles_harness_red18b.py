"""A right answer failed a HumanEval-format check whose asserts live in a class.

The judge rewrites each assert of the dataset's check to call its counters (``__gf_ok``,
``__gf_fail``) and wraps each lambda for shipping (``__gf_ship``). Python mangles a name
starting with two underscores inside a class body (``__gf_ok`` becomes ``_Case__gf_ok``), so
a check that keeps its asserts, or a lambda, in a method (a ``unittest``-style case class)
stopped on a ``NameError`` at its first assert: every answer, the right one too, failed with
no partial credit. Success of the defect is an honest answer losing its reward; the fix: the
harness's names end in two underscores too, and such names are never mangled.
"""

from __future__ import annotations

from typing import Any

import pytest

from gymforge.verify.code.checks import check_namespace, run_humaneval
from gymforge.verify.code.tally import Tally

PROMPT = "def inc(x: int) -> int:\n    pass\n"
TESTS = {
    "assert_in_a_method": (
        "class Case:\n"
        "    def run(self, candidate):\n"
        "        assert candidate(1) == 2\n"
        "        assert candidate(-1) == 0\n"
        "def check(candidate):\n"
        "    Case().run(candidate)\n"
    ),
    "lambda_in_a_method": (
        "class Case:\n"
        "    def run(self, candidate):\n"
        "        pick = lambda v: candidate(v)\n"
        "        assert pick(1) == 2\n"
        "def check(candidate):\n"
        "    Case().run(candidate)\n"
    ),
}


@pytest.mark.parametrize("name", sorted(TESTS))
def test_a_check_with_its_asserts_in_a_class_passes_a_right_answer(name: str) -> None:
    truth = {"kind": "humaneval", "entry_point": "inc", "prompt": PROMPT, "test": TESTS[name]}
    ns, _ = check_namespace(truth)
    t = Tally()

    def proxy_for(entry: str) -> Any:
        return lambda x: x + 1

    run_humaneval(truth, ns, proxy_for, t)
    assert not t.stopped, t.notes
    assert t.run >= 1 and t.passed == t.run
