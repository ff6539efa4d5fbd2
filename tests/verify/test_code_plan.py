"""Planned batches for HumanEval and MBPP: when every call a test makes is a literal direct
call, the calls run as one batch job and the test is answered from it. The verdict must be
the one the live, call-by-call session gives, for honest and hostile candidates alike."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from code_helpers import ADD_HUMANEVAL, ADD_MBPP, UID_BASE

from gymforge.sandbox import Call, CallStatus, Limits, SandboxJob
from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.local import LocalBackend
from gymforge.verify.code import CodeJudge, JudgeConfig, session
from gymforge.verify.code.checks import Tally, candidate_module, plan_calls

# call_timeout: an honest call must never hit it on a loaded machine; the looping candidate does
LIMITS = Limits(wall_time=6, cpu_time=3, call_timeout=1.5, output_bytes=64 << 10)


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    ok, why = bwrap_works()
    if not ok:
        pytest.skip(f"bubblewrap sandbox unavailable: {why}")
    backend = LocalBackend(workers=2, uid_base=UID_BASE + 20, host_grace=5.0)
    yield CodeJudge(backend, JudgeConfig(limits=LIMITS, stdio_limits=LIMITS))
    backend.close()


def _he(test_body: str) -> dict[str, Any]:
    return {**ADD_HUMANEVAL, "test": "def check(candidate):\n" + test_body}


def test_plans_cover_literal_calls_only() -> None:
    plan = plan_calls(ADD_HUMANEVAL)
    assert plan is not None and [(c.name, c.args) for c in plan] == [
        ("add", (1, 2)),
        ("add", (5, 7)),
        ("add", (-1, 1)),
    ]
    assert [c.args for c in plan_calls(ADD_MBPP) or []] == [(1, 2), (5, 7), (-1, 1)]
    # evaluation order: both sides of a comparison, left first; keyword literals
    plan = plan_calls(_he("    assert candidate(1, b=2) == candidate(2, 1)\n"))
    assert plan is not None and [(c.args, c.kwargs) for c in plan] == [
        ((1,), {"b": 2}),
        ((2, 1), {}),
    ]
    for body in (
        "    for x in range(3):\n        assert candidate(x, 1) == x + 1\n",  # a name argument
        "    helper = candidate\n    assert helper(1, 2) == 3\n",  # an alias
        "    assert candidate(candidate(1, 1), 1) == 3\n",  # a nested call
        "    assert candidate(*[1, 2]) == 3\n",
        "    assert candidate(**{'a': 1, 'b': 2}) == 3\n",
        "    pass\n",  # no calls at all
    ):
        assert plan_calls(_he(body)) is None, body
    assert plan_calls({"kind": "calls", "tests": []}) is None
    assert plan_calls({**ADD_HUMANEVAL, "test": "def check(candidate:\n"}) is None


CANDIDATES = {
    "good": "def add(a, b):\n    return a + b\n",
    "wrong": "def add(a, b):\n    return a * b\n",
    "raises": "def add(a, b):\n    raise ValueError(a)\n",
    "exits_in_call": "def add(a, b):\n    import os\n    os._exit(0)\n",
    "exits_at_import": "import sys\nsys.exit(0)\ndef add(a, b):\n    return a + b\n",
    "loops": "def add(a, b):\n    while True:\n        pass\n",
    "always_equal": "class E:\n    def __eq__(self, o):\n        return True\n"
    "def add(a, b):\n    return E()\n",
    "int_subclass": "class I(int):\n    pass\ndef add(a, b):\n    return I(a + b)\n",
    "stateful": "n = [0]\ndef add(a, b):\n    n[0] += 1\n    return a + b if n[0] != 2 else 0\n",
    "crash_once": "import os\nif os.path.exists('once'):\n    pass\n"
    "def add(a, b):\n    import os\n    if a == 5 and not os.path.exists('died'):\n"
    "        open('died', 'w').close()\n        os._exit(3)\n    return a + b\n",
}

TASKS = {
    "humaneval": ADD_HUMANEVAL,
    "mbpp": ADD_MBPP,
    "humaneval_loop": _he(  # literal calls inside a loop: the plan misses, judged live
        "    for _ in range(2):\n        assert candidate(1, 2) == 3\n"
        "    assert candidate(5, 7) == 12\n"
    ),
}


def _summary(v: Any) -> tuple[Any, ...]:
    f = v.facts
    return (v.passed, v.score, v.reason, f["tests_run"], f["tests_passed"], f["timeouts"])


@pytest.mark.parametrize("task", sorted(TASKS))
@pytest.mark.parametrize("name", sorted(CANDIDATES))
def test_planned_verdicts_equal_live_ones(judge: CodeJudge, task: str, name: str) -> None:
    truth, code = TASKS[task], CANDIDATES[name]
    planned = judge.judge(truth, code)
    module = candidate_module(truth, code)
    live = session.in_session(judge, truth, module, Tally(), frozenset())
    assert _summary(planned) == _summary(live), (planned, live)
    assert planned.passed is (name == "good")
    plan = plan_calls(truth)
    assert plan is not None
    # the batch path itself
    direct = session.planned(judge, truth, module, plan, Tally(), frozenset())
    if task == "humaneval_loop" and name == "good":
        assert direct is None  # strayed from the plan: the live session decided
    elif name in ("always_equal", "int_subclass"):
        assert direct is None  # live, such values stay in the sandbox: the live path decides
    elif task != "humaneval_loop":
        assert direct is not None
    assert direct is None or _summary(direct) == _summary(live)
    assert planned.facts["unserialisable"] == live.facts["unserialisable"]


def test_stop_on_timeout_runs_no_call_after_the_first_timeout(judge: CodeJudge) -> None:
    src = "def f(x):\n    while x:\n        pass\n    return 1\n"
    calls = [Call(name="f", args=(a,)) for a in (0, 1, 0, 0)]
    limits = LIMITS.model_copy(update={"call_timeout": 1.5, "wall_time": 8.0})  # slack for load
    r = judge.backend.run(SandboxJob(source=src, calls=calls, limits=limits, stop_on_timeout=True))
    assert [c.status for c in r.calls or []] == [
        CallStatus.OK,
        CallStatus.TIMEOUT,
        CallStatus.NOT_RUN,
        CallStatus.NOT_RUN,
    ]
    r = judge.backend.run(SandboxJob(source=src, calls=calls, limits=limits))  # default: go on
    assert [c.status for c in r.calls or []][2:] == [CallStatus.OK, CallStatus.OK]
