"""Attack: smuggle a lying ``__eq__`` (or a hash flood) through the standard-library values
that now cross the sandbox boundary as tagged plain data.

``Counter``, ``defaultdict``, ``OrderedDict``, ``deque``, named tuples, enum members and
dataclass instances come back from the sandbox as tags, so that ``Counter(...) == {...}``
holds in the judge as it does in Python. A reward hacker returns a *subclass* of one of them,
or a named tuple, enum or dataclass whose class defines ``__eq__`` to answer yes, and hopes
the judge rebuilds it with that method; or it forges the tags themselves (the candidate can
write any bytes on its channel) with names that would make the judge's own classes run code
(``__eq__`` as a dataclass field, ``_missing_`` as an enum member); or floods a ``Counter``'s
keys or a ``deque`` with colliding hashes to stall the test. Success would be a passed test
without the right value, or judge time outside every sandbox limit. Each must fail: only
exact standard types and classes without their own comparisons are tagged, the decoder
builds only its own classes from checked identifiers, and decoded values go through the
same flood checks as lists and dicts.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_fixture import judge_on_bwrap

from gymforge.sandbox import wire
from gymforge.verify.code import CodeJudge
from gymforge.verify.code.flood import Flooded, unflooded

TASK = {
    "kind": "mbpp",
    "test_setup_code": "",
    "test_imports": ["import collections"],
    "test_list": [
        "assert f(0) == {'a': 1}",
        "assert f(1) == (1, 2)",
        "assert f(2) == 2",
        "assert {'a': 1} == f(3)",
        "assert f(4) == [1, 2]",
        "assert f(5) == f(6)",
    ],
}
LIARS = """
import collections, dataclasses, enum

class Yes(collections.Counter):
    def __eq__(self, o): return True
    __hash__ = None

class P(collections.namedtuple('P', 'x y')):
    def __eq__(self, o): return True

class C(enum.IntEnum):
    A = 7
    def __eq__(self, o): return True
    __hash__ = int.__hash__

@dataclasses.dataclass
class D:
    v: int
    def __eq__(self, o): return True

class Q(collections.deque):
    def __eq__(self, o): return True

def f(k):
    return [Yes(z=9), P(5, 5), C.A, collections.OrderedDict(b=2),
            Q([3]), D(1), D(2)][k]
"""
HONEST = """
import collections
def f(k):
    return [collections.Counter(a=1), (1, 2), 2, collections.OrderedDict(a=1), [1, 2],
            3, 3][k]
"""


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    yield from judge_on_bwrap()


def test_the_honest_answer_passes(judge: CodeJudge) -> None:
    v = judge.judge(TASK, HONEST)
    assert v.passed and v.facts["tests_passed"] == 6, v


def test_lying_subclasses_and_classes_pass_nothing(judge: CodeJudge) -> None:
    v = judge.judge(TASK, LIARS, detail=True)
    assert v.facts["tests_passed"] == 0, v
    assert not v.passed and v.facts.get("trainable", True) is True  # failed, not excluded


@pytest.mark.parametrize(
    "forged",
    [
        b'{"$dataclass":["D",[true,false,false],[["__eq__",1]]]}',
        b'{"$dataclass":["D",[true,false,false],[["__class__",1]]]}',
        b'{"$dataclass":["__init__",[true,false,false],[["v",1]]]}',
        b'{"$enum":["Enum","E",[["_missing_",1]],"_missing_"]}',
        b'{"$enum":["Enum","E",[["mro",1]],"mro"]}',
        b'{"$enum":["Evil","E",[["A",1]],"A"]}',
        b'{"$ntuple":["P",["__eq__"],[1]]}',
        b'{"$ntuple":["P",["x","x"],[1,2]]}',
        b'{"$ntuple":["lambda",["x"],[1]]}',
        b'{"$type":"eval"}',
        b'{"$type":"type"}',
        b'{"$defaultdict":["exec",[]]}',
        b'{"$deque":[[1],-1]}',
        b'{"$counter":[[[1],1]]}',
    ],
)
def test_forged_tags_build_nothing_of_the_senders(forged: bytes) -> None:
    with pytest.raises(wire.Unserialisable):
        wire.loads_plain(forged)


def test_flooded_tagged_containers_are_refused() -> None:
    m = 2**61 - 1
    keys = b",".join(b"[%d,1]" % (i * m) for i in range(1, 2000))
    with pytest.raises(wire.Unserialisable, match="hash"):
        wire.loads_plain(b'{"$counter":[' + keys + b"]}")
    items = b",".join(b"%d" % (i * m) for i in range(1, 2000))
    for tag in (
        b'{"$deque":[[' + items + b"],null]}",
        b'{"$ntuple":["P",["a"],[[' + items + b"]]]}",
    ):
        with pytest.raises(Flooded):
            unflooded(wire.loads_plain(tag))
