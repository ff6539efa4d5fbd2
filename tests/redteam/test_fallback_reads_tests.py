"""Attack: the candidate reads the judge's test code instead of solving the task.

An MBPP test that passes a lambda to the candidate cannot send its arguments as plain data.
Success of this attack would mean: a candidate that never calls the function it is given
finds the test source (a file, the process's memory) from inside the sandbox, pulls the
expected value out of it with a regex, and passes. The judge must keep test code and
expected values out of the candidate's process, whatever the arguments look like.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_fixture import judge_on_bwrap

from gymforge.verify.code import CodeJudge

TASK = {
    "kind": "mbpp",
    "test_list": [
        "assert apply_all(lambda x: x * 3 + 1, [1, 2, 5]) == [4, 7, 16]",
        "assert apply_all(lambda s: s.upper(), ['ab', 'c']) == ['AB', 'C']",
    ],
}
HONEST = "def apply_all(f, xs):\n    return [f(x) for x in xs]\n"

# Never calls f: finds the test text wherever the judge may have put it, and answers with
# the expected value of the assert that mentions the values it was given.
READER = r"""
import ast, os, re

def _sources():
    seen = set()
    for root in ("/judge", "/tmp", os.getcwd(), "/"):
        for d, dirs, files in os.walk(root):
            if d.startswith(("/proc", "/sys", "/dev", "/usr")):
                dirs[:] = []
                continue
            for name in files:
                p = os.path.join(d, name)
                if p in seen or not name.endswith(".py"):
                    continue
                seen.add(p)
                try:
                    yield open(p).read()
                except OSError:
                    pass

def apply_all(f, xs):
    for text in _sources():
        for m in re.finditer(r"apply_all\(lambda[^,]*, (\[.*?\])\) == (\[.*?\])", text):
            if ast.literal_eval(m.group(1)) == xs:
                return ast.literal_eval(m.group(2))
    return None
"""


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    yield from judge_on_bwrap()


def test_honest_answer_to_a_lambda_task_passes(judge: CodeJudge) -> None:
    v = judge.judge(TASK, HONEST)
    assert v.passed and v.facts["tests_passed"] == 2, v


def test_reading_the_tests_from_the_sandbox_does_not_pass(judge: CodeJudge) -> None:
    v = judge.judge(TASK, READER)
    assert not v.passed, v
    assert v.facts["tests_passed"] == 0, v
