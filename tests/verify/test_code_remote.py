"""Tests whose arguments are not plain data, judged without putting tests in the sandbox:
objects the candidate makes stay there (handles), set-up objects and lambdas are built there
from the task's own source, and every comparison happens in the judge."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from code_helpers import UID_BASE

from gymforge.sandbox import Limits
from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.local import LocalBackend
from gymforge.verify.code import CodeJudge, JudgeConfig
from gymforge.verify.code.checks import private_random
from gymforge.verify.code.remote import Remote, RemoteValueUsed


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    ok, why = bwrap_works()
    if not ok:
        pytest.skip(f"bubblewrap sandbox unavailable: {why}")
    backend = LocalBackend(workers=1, uid_base=UID_BASE + 20, host_grace=5.0)
    limits = Limits(wall_time=6, cpu_time=4, memory_bytes=256 << 20, call_timeout=2.0)
    yield CodeJudge(backend, JudgeConfig(limits=limits, stdio_limits=limits))
    backend.close()


# MBPP task 601 as published: the tests build the candidate's own Pair objects.
PAIRS = {
    "kind": "mbpp",
    "test_setup_code": "",
    "test_list": [
        "assert max_chain_length([Pair(5, 24), Pair(15, 25),Pair(27, 40), Pair(50, 60)], 4) == 3",
        "assert max_chain_length([Pair(1, 2), Pair(3, 4),Pair(5, 6), Pair(7, 8)], 4) == 4",
        "assert max_chain_length([Pair(19, 10), Pair(11, 12),Pair(13, 14), Pair(15, 16), "
        "Pair(31, 54)], 5) == 5",
    ],
}
PAIRS_CODE = """class Pair(object):
    def __init__(self, a, b):
        self.a = a
        self.b = b

def max_chain_length(arr, n):
    max = 0
    mcl = [1 for i in range(n)]
    for i in range(1, n):
        for j in range(0, i):
            if (arr[i].a > arr[j].b and mcl[i] < mcl[j] + 1):
                mcl[i] = mcl[j] + 1
    for i in range(n):
        if (max < mcl[i]):
            max = mcl[i]
    return max
"""

# A tree built by the set-up code, as MBPP's tree tasks do.
TREE = {
    "kind": "mbpp",
    "test_setup_code": (
        "class Node:\n    def __init__(self, data):\n        self.data = data\n"
        "        self.left = None\n        self.right = None\n"
        "root = Node(1)\nroot.left = Node(2)\nroot.right = Node(3)\nroot.left.left = Node(4)\n"
        "root1 = Node(1)\n"
    ),
    "test_list": [
        "assert max_height(root) == 3",
        "assert max_height(root1) == 1",
        "assert max_height(Node(7)) == 1",
    ],
}
TREE_CODE = (
    "def max_height(node):\n    if node is None:\n        return 0\n"
    "    return 1 + max(max_height(node.left), max_height(node.right))\n"
)


def test_candidate_objects_stay_in_the_sandbox_and_go_back_as_arguments(
    judge: CodeJudge,
) -> None:
    v = judge.judge(PAIRS, PAIRS_CODE)
    assert v.passed and v.facts["tests_passed"] == 3, v
    wrong = PAIRS_CODE.replace("return max", "return max + 1")
    assert judge.judge(PAIRS, wrong).facts["tests_passed"] == 0


def test_set_up_objects_are_built_in_the_sandbox_from_the_set_up_code(judge: CodeJudge) -> None:
    v = judge.judge(TREE, TREE_CODE)
    assert v.passed and v.facts["tests_passed"] == 3, v
    assert not judge.judge(TREE, "def max_height(node):\n    return 3\n").passed


def test_lambdas_take_their_closure_and_modules_along(judge: CodeJudge) -> None:
    task = {
        "kind": "humaneval",
        "entry_point": "apply",
        "prompt": "import math\n\ndef apply(f, xs):\n    pass\n",
        "test": (
            "def check(candidate):\n    k = 2\n"
            "    assert candidate(lambda x: math.sqrt(x) + k, [4, 9]) == [4.0, 5.0]\n"
            "    assert candidate(lambda s: (lambda t: t * k)(s), ['a']) == ['aa']\n"
            "    assert candidate(lambda x, j=k, *, m=k + 1: x * j * m, [1]) == [6]\n"
        ),
    }
    v = judge.judge(task, "def apply(f, xs):\n    return [f(x) for x in xs]\n")
    assert v.passed and v.facts["tests_passed"] == 3, v
    assert not judge.judge(task, "def apply(f, xs):\n    return xs\n").passed


def test_a_test_cannot_decide_on_a_value_that_lives_in_the_sandbox(judge: CodeJudge) -> None:
    """An object whose ``__eq__`` says yes to everything never reaches the judge's ``==``."""
    task = {"kind": "mbpp", "test_list": ["assert make(3) == 3", "assert make(4) != 5"]}
    liar = (
        "class Yes:\n    def __eq__(self, o):\n        return True\n"
        "    def __ne__(self, o):\n        return True\n"
        "def make(x):\n    return Yes()\n"
    )
    v = judge.judge(task, liar)
    assert not v.passed and v.facts["tests_passed"] == 0, v
    assert v.reason == "wrong_answer" and v.facts["unserialisable"] == 2
    with pytest.raises(RemoteValueUsed):
        bool(Remote(0, 0, "Yes", lambda *a: None) == 3)


def test_a_value_dies_with_its_process(judge: CodeJudge) -> None:
    task = {
        "kind": "humaneval",
        "entry_point": "box",
        "prompt": "",
        "test": (
            "def check(candidate):\n    get = candidate(1)\n    assert get() == 1\n"
            "    try:\n        candidate('crash')\n    except Exception:\n        pass\n"
            "    assert get() == 1\n"
        ),
    }
    code = (
        "def box(x):\n    if x == 'crash':\n        import os\n        os._exit(1)\n"
        "    return lambda: x\n"
    )
    v = judge.judge(task, code)
    assert v.facts["tests_run"] == 2 and v.facts["tests_passed"] == 1, v


def test_arguments_that_cannot_cross_make_the_task_unjudgeable(judge: CodeJudge) -> None:
    task = {"kind": "mbpp", "test_list": ["assert total(iter([1, 2])) == 3"]}
    v = judge.judge(task, "def total(it):\n    return sum(it)\n")
    assert not v.passed and v.reason == "unjudgeable", v
    assert v.facts["trainable"] is False


def test_the_private_random_is_seeded_by_the_test() -> None:
    a, b = private_random("test A"), private_random("test A")
    assert [a.randint(0, 10**9) for _ in range(5)] == [b.randint(0, 10**9) for _ in range(5)]
    assert private_random("test B").random() != private_random("test A").random()


def test_a_prompt_that_ends_at_its_def_line_still_provides_its_helpers(judge: CodeJudge) -> None:
    task = {
        "kind": "humaneval",
        "entry_point": "f",
        "prompt": "def double(x):\n    return 2 * x\n\ndef f(x):\n",
        "test": "def check(candidate):\n    assert candidate(3) == double(3) + 1\n",
    }
    assert judge.judge(task, "def f(x):\n    return double(x) + 1\n").passed
    assert judge.judge(task, "    return double(x) + 1\n").passed  # a completion
    assert not judge.judge(task, "def double(x):\n    return 0\n\ndef f(x):\n    return 1\n").passed


def test_the_session_keeps_values_builds_trees_and_runs_the_prelude(judge: CodeJudge) -> None:
    from gymforge.sandbox import CallStatus, SandboxJob
    from gymforge.sandbox.wire import dumps_plain

    src = (
        "class Box:\n    def __init__(self, v):\n        self.v = v\n"
        "    def get(self):\n        return self.v + BASE\n"
        "def getter(b):\n    return b.get\n"
        "def apply(f, x):\n    return f(x)\n"
    )
    job = SandboxJob(source=src, prelude="BASE = 100\n", calls=[])  # the prelude runs first
    with judge.backend.session(job) as s:  # type: ignore[attr-defined]
        box = s.call_encoded("Box", dumps_plain([[["v", 1]], {}]), tree=True, keep=True)
        assert box.status is CallStatus.REF and box.handle == 0 and box.value_type == "Box"
        assert s.call("Box", 2).status is CallStatus.UNSERIALISABLE  # without keep, as before
        get = s.call_encoded("getter", dumps_plain([[["h", 0]], {}]), tree=True, keep=True)
        assert get.status is CallStatus.REF and get.handle == 1
        got = s.call_encoded("get", dumps_plain([[], {}]), target=get.handle)
        assert got.status is CallStatus.OK and got.value == 101, got
        lam = ["x", "lambda b: b.get() * K", {"K": ["v", 2]}]
        res = s.call_encoded("apply", dumps_plain([[lam, ["h", 0]], {}]), tree=True)
        assert res.status is CallStatus.OK and res.value == 202, res
        stale = s.call_encoded("apply", dumps_plain([[lam, ["h", 7]], {}]), tree=True)
        assert stale.status is CallStatus.EXCEPTION and stale.error_type == "KeyError"
