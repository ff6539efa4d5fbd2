"""Attack: return an object that says yes to whatever the test does with it.

A value the candidate returns that is not plain data stays in the sandbox; the test holds a
``Remote`` for it. A reward hacker returns an object whose every hook answers in its favour
(``__eq__``, ``__bool__``, ``__hash__``, ``__iter__``, ``__format__``, ``__float__``,
arithmetic, attributes) and hopes the judge's test code consults one of them, whatever shape
the assert has: ``==`` either way round, ``in``, truthiness, ``sorted``, ``abs(x - y) <
eps``, ``math.isclose``, formatting, ``len``, indexing, hashing, conversion, attributes.
Success would mean any one of those asserts passes. Each must fail: a test can only decide
on plain data it decoded itself, so the liar passes none, where plain answers pass them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_fixture import judge_on_bwrap

from gymforge.verify.code import CodeJudge

ASSERTS = [
    "assert make(1)",
    "assert make(2) == 2",
    "assert 3 == make(3)",
    "assert make(4) in [4]",
    "assert not make(5) != 5",
    "assert abs(make(6) - 6) < 1e-9",
    "assert math.isclose(make(7), 7)",
    "assert str(make(8)) == '8'",
    "assert '{}'.format(make(9)) == '9'",
    "assert f'{make(10)!r}' == '10'",
    "assert int(make(11)) == 11",
    "assert float(make(12)) == 12.0",
    "assert round(make(13)) == 13",
    "assert make(14) + 0 == 14",
    "assert -make(15) == -15",
    "assert max(make(16), 0) == 16",
    "assert hash(make(17)) == hash(17)",
    "assert {make(18): 1}.get(18) == 1",
    "assert bool(make(19)) is True",
    "assert [make(20)] == [20]",
    "assert (make(21),) == (21,)",
    "assert copy.deepcopy(make(22)) == 22",
    "assert sorted(make([23])) == [23]",
    "assert list(make([24])) == [24]",
    "assert len(make([25])) == 1",
    "assert make([26])[0] == 26",
    "assert 27 in make([27])",
    "assert set(make([28])) == {28}",
    "assert sum(make([29])) == 29",
    "assert make({'v': 30})['v'] == 30",
]
TASK = {"kind": "mbpp", "test_imports": ["import copy", "import math"], "test_list": ASSERTS}
LIAR = """
class Yes:
    def __init__(self, v):
        self.v = v
    def __eq__(self, o): return True
    def __ne__(self, o): return False
    def __lt__(self, o): return False
    def __gt__(self, o): return True
    def __le__(self, o): return True
    def __ge__(self, o): return True
    def __hash__(self): return hash(self.v) if not isinstance(self.v, (list, dict)) else 0
    def __bool__(self): return True
    def __len__(self): return 1
    def __iter__(self): return iter(self.v if isinstance(self.v, list) else [self.v])
    def __contains__(self, o): return True
    def __getitem__(self, k): return self.v[k]
    def __str__(self): return str(self.v)
    def __repr__(self): return repr(self.v)
    def __format__(self, spec): return format(self.v, spec)
    def __int__(self): return int(self.v)
    def __float__(self): return float(self.v)
    def __index__(self): return int(self.v)
    def __round__(self, n=None): return round(self.v)
    def __abs__(self): return abs(self.v)
    def __neg__(self): return Yes(-self.v)
    def __add__(self, o): return self
    __radd__ = __sub__ = __rsub__ = __add__
    def __getattr__(self, name): return self
    def __deepcopy__(self, memo): return self

def make(x):
    return Yes(x)
"""
PLAIN = "def make(x):\n    return x\n"  # the plain answer each assert was written for


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    yield from judge_on_bwrap()


def test_the_asserts_pass_on_plain_data(judge: CodeJudge) -> None:
    v = judge.judge(TASK, PLAIN)
    assert v.passed and v.facts["tests_passed"] == len(ASSERTS), v


def test_an_object_that_agrees_with_everything_passes_nothing(judge: CodeJudge) -> None:
    v = judge.judge(TASK, LIAR)
    assert v.facts["tests_run"] == len(ASSERTS), v
    assert v.facts["tests_passed"] == 0 and not v.passed, v
    assert v.facts["unserialisable"] == len(ASSERTS), v  # every value stayed in the sandbox
