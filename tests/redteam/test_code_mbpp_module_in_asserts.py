"""Published MBPP row 596 as loaded: its asserts call ``sys.getsizeof`` and only its reference
imports ``sys``, so every answer, the reference too, was judged wrong.

MBPP's own harness runs the asserts in the solution's namespace, where the reference's
``import sys`` binds ``sys``. The judge took ``sys`` for a function of the answer (a name the
asserts use that no builtin, import or set-up code binds) and sent it into the sandbox as a
call; ``sys.getsizeof`` on that proxy raised, so the row paid nothing to anyone: a silent zero,
which the data rule forbids. Success of this "attack" is the reference failing its own row; a
row that still cannot be graded (no reference to read the import from) must be refused at
load with its file and line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gymforge.envs.code.env import CodeEnv
from gymforge.verify.code import CodeJudge

ROW_596 = {  # as published in the original mbpp.jsonl (line endings included)
    "text": "Write a function to find the size of the given tuple.",
    "code": "import sys \r\ndef tuple_size(tuple_list):\r\n  return (sys.getsizeof(tuple_list)) ",
    "task_id": 596,
    "test_setup_code": "",
    "test_list": [
        'assert tuple_size(("A", 1, "B", 2, "C", 3) ) == sys.getsizeof(("A", 1, "B", 2, "C", 3))',
        'assert tuple_size((1, "Raju", 2, "Nikhil", 3, "Deepanshu") ) == sys.getsizeof((1, '
        '"Raju", 2, "Nikhil", 3, "Deepanshu"))',
        'assert tuple_size(((1, "Lion"), ( 2, "Tiger"), (3, "Fox"), (4, "Wolf"))  ) == '
        'sys.getsizeof(((1, "Lion"), ( 2, "Tiger"), (3, "Fox"), (4, "Wolf")))',
    ],
    "challenge_test_list": [],
}


def _load(tmp: Path, *rows: dict[str, Any]) -> Any:
    path = tmp / "mbpp.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return CodeEnv().load_dataset(path)


def test_the_reference_passes_its_own_row(code_judge: CodeJudge, tmp_path: Path) -> None:
    ds = _load(tmp_path, ROW_596)
    assert not ds.errors, ds.errors
    truth = dict(ds.tasks[0].truth)
    ref = code_judge.judge(truth, f"```python\n{ROW_596['code']}\n```")
    assert ref.passed, ref.facts
    own = "def tuple_size(t):\n    return t.__sizeof__() + 16\n"  # sys.getsizeof's own sum
    assert code_judge.judge(truth, f"```python\n{own}\n```").passed
    wrong = code_judge.judge(truth, "```python\ndef tuple_size(t):\n    return len(t)\n```")
    assert not wrong.passed and wrong.score == 0.0


def test_a_row_whose_module_no_reference_imports_is_refused(tmp_path: Path) -> None:
    row = {**ROW_596, "task_id": 597}
    del row["code"]
    ds = _load(tmp_path, ROW_596, row)
    assert [t.task_id for t in ds.tasks] == ["596"]
    assert len(ds.errors) == 1 and ds.errors[0].startswith("mbpp.jsonl:2: "), ds.errors
    assert "sys.getsizeof" in ds.errors[0]


def test_a_name_the_reference_defines_stays_the_answers(
    code_judge: CodeJudge, tmp_path: Path
) -> None:
    """The reference imports ``gcd`` and then defines its own: the asserts test the answer's
    ``gcd``, never the library's (reading the import would pass any answer)."""
    row = {
        "text": "Write gcd.",
        "code": "from math import gcd, pi\ndef gcd(a, b):\n    while b:\n        a, b = b, a % b\n"
        "    return a",
        "task_id": 900,
        "test_setup_code": "",
        "test_list": ["assert gcd(12, 18) == 6", "assert gcd(7, 5) == 1"],
        "challenge_test_list": [],
    }
    ds = _load(tmp_path, row)
    assert not ds.errors, ds.errors
    truth = dict(ds.tasks[0].truth)
    assert not truth["test_imports"], truth["test_imports"]
    v = code_judge.judge(truth, "```python\ndef gcd(a, b):\n    return 0\n```")
    assert v.score == 0.0, v.facts
