"""Published MBPP (original and sanitized) and HumanEval rows, graded right: one test per
class of MBPP reference that gymforge used to fail although it passes in plain Python (issue
31): results of type ``Counter`` or ``defaultdict`` (tasks 40, 88, 653, 902), a solution
named after a builtin (126), set-up code that builds objects of the solution's class (367,
927), the type ``int`` as an argument (533) and a slow reference (123, given its own time
limit by its row). The rows are written here in each published shape (task text shortened);
the files stay out of the repository. Every class also keeps failing wrong answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from code_helpers import UID_BASE

from gymforge.cli.grade import near_limit_tasks
from gymforge.core.errors import UnknownTaskError
from gymforge.envs.code.env import CodeEnv
from gymforge.sandbox import Limits
from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.local import LocalBackend
from gymforge.verify.code import CodeJudge, JudgeConfig

LIMITS = Limits(wall_time=4, cpu_time=3, memory_bytes=256 << 20, call_timeout=1.0)


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    ok, why = bwrap_works()
    if not ok:
        pytest.skip(f"bubblewrap sandbox unavailable: {why}")
    backend = LocalBackend(workers=1, uid_base=UID_BASE + 7, host_grace=5.0)
    yield CodeJudge(backend, JudgeConfig(limits=LIMITS, stdio_limits=LIMITS))
    backend.close()


def mbpp(task_id: int, code: str, tests: list[str], setup: str = "", **extra: Any) -> dict:
    """A row of the original ``mbpp.jsonl``."""
    return {
        "text": f"MBPP task {task_id}.",
        "code": code,
        "task_id": task_id,
        "test_setup_code": setup,
        "test_list": tests,
        "challenge_test_list": [],
        **extra,
    }


def truths(tmp: Path, *rows: dict) -> list[dict[str, Any]]:
    path = tmp / "mbpp.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = CodeEnv().load_dataset(path)
    assert not ds.errors, ds.errors
    return [dict(t.truth) for t in ds.tasks]


def graded(judge: CodeJudge, truth: dict[str, Any], code: str) -> tuple[bool, int, int]:
    v = judge.judge(truth, f"```python\n{code}\n```")
    return v.passed, v.facts["tests_passed"], v.facts["tests_run"]


COUNTER_40 = mbpp(
    40,
    "from collections import Counter\nfrom itertools import chain\ndef freq_element(nums):\n"
    "  result = Counter(chain.from_iterable(nums))\n  return result",
    [
        "assert freq_element([[1, 2, 3, 2], [4, 5, 6, 2], [7, 1, 9, 5]])==({2: 3, 1: 2, 5: 2, "
        "3: 1, 4: 1, 6: 1, 7: 1, 9: 1})",
        "assert freq_element([[1,2,3,4],[5,6,7,8],[9,10,11,12]])==({1: 1, 2: 1, 3: 1, 4: 1, 5: 1, "
        "6: 1, 7: 1, 8: 1, 9: 1, 10: 1, 11: 1, 12: 1})",
    ],
)
DEFAULTDICT_653 = mbpp(
    653,
    "from collections import defaultdict\ndef grouping_dictionary(l):\n    d = defaultdict(list)"
    "\n    for k, v in l:\n        d[k].append(v)\n    return d",
    [
        "assert grouping_dictionary([('yellow', 1), ('blue', 2), ('yellow', 3), ('blue', 4), "
        "('red', 1)])== ({'yellow': [1, 3], 'blue': [2, 4], 'red': [1]})"
    ],
)
# MBPP sanitized: {source_file, task_id, prompt, code, test_imports, test_list}
COUNTER_88_SANITIZED = {
    "source_file": "Benchmark Questions Verification V2.ipynb",
    "task_id": 88,
    "prompt": "Write a function to get the frequency of all the elements in a list, returned "
    "as a dictionary.",
    "code": "import collections\ndef freq_count(list1):\n  freq_count= collections.Counter(list1)"
    "\n  return freq_count",
    "test_imports": [],
    "test_list": [
        "assert freq_count([10,10,10,10,20,20,20,20,40,40,50,50,30])==({10: 4, 20: 4, "
        "40: 2, 50: 2, 30: 1})"
    ],
}


def test_counter_and_defaultdict_results_compare_as_python_compares_them(
    judge: CodeJudge, tmp_path: Path
) -> None:
    rows = (COUNTER_40, DEFAULTDICT_653, COUNTER_88_SANITIZED)
    for truth, row in zip(truths(tmp_path, *rows), rows, strict=True):
        assert graded(judge, truth, row["code"])[0], row["task_id"]
    t40, t653, _ = truths(tmp_path, *rows)
    off_by_one = COUNTER_40["code"].replace("return result", "result[2] += 1\n  return result")
    assert graded(judge, t40, off_by_one) == (False, 0, 2)
    assert not graded(judge, t653, DEFAULTDICT_653["code"].replace("append(v)", "append(k)"))[0]


def test_std_values_cross_as_tagged_plain_data(judge: CodeJudge, tmp_path: Path) -> None:
    code = (
        "import collections, dataclasses, enum\n"
        "P = collections.namedtuple('P', 'x y')\n"
        "@dataclasses.dataclass(frozen=True)\nclass D:\n    a: int\n    b: tuple\n"
        "class C(enum.IntEnum):\n    RED = 1\n    BLUE = 2\n"
        "def f(k):\n"
        "    return {'nt': P(1, 2), 'od': collections.OrderedDict(a=1),"
        " 'dq': collections.deque([1, 2]), 'fs': frozenset({k}), 'dc': D(k, (1,)),"
        " 'en': C(k), 'ty': int, 'cn': collections.Counter('aab')}[KEY]"
    )
    tests = {
        "nt": ["assert f(1) == (1, 2)", "assert f(1).y == 2", "assert f(1) == P(1, 2)"],
        "od": ["assert f(1) == {'a': 1}"],
        "dq": ["assert list(f(1)) == [1, 2]", "assert f(1) == collections.deque([1, 2])"],
        "fs": ["assert f(2) == {2}"],
        "dc": ["assert f(2) == D(2, (1,))", "assert f(2) != D(3, (1,))", "assert f(2).a == 2"],
        "en": [
            "assert f(2) == 2",
            "assert f(2) == C(2)",
            "assert f(1) != C(2)",
            "assert f(2).name == 'BLUE'",
        ],
        "ty": ["assert f(1) is int"],
        "cn": ["assert f(1) == {'a': 2, 'b': 1}", "assert f(1)['z'] == 0"],
    }
    for key, asserts in tests.items():
        row = mbpp(900, code.replace("KEY", repr(key)), asserts)
        row["test_imports"] = ["import collections"]
        (truth,) = truths(tmp_path, row)
        assert graded(judge, truth, row["code"]) == (True, len(asserts), len(asserts)), key


SUM_126 = mbpp(
    126,
    "def sum(a,b): \n    sum = 0\n    for i in range (1,min(a,b)): \n        if (a % i == 0 and "
    "b % i == 0): \n            sum += i \n    return sum",
    ["assert sum(10,15) == 6", "assert sum(100,150) == 93", "assert sum(4,6) == 3"],
)


def test_a_solution_named_after_a_builtin_is_the_one_tested(
    judge: CodeJudge, tmp_path: Path
) -> None:
    (truth,) = truths(tmp_path, SUM_126)
    assert graded(judge, truth, SUM_126["code"]) == (True, 3, 3)
    assert graded(judge, truth, "def sum(a, b):\n    return 0") == (False, 0, 3)
    # without a reference, the builtin name every assert calls and the answer defines
    bare = {k: v for k, v in truth.items() if k != "reference"}
    assert graded(judge, bare, SUM_126["code"]) == (True, 3, 3)


def test_redefining_a_builtin_the_test_only_uses_changes_nothing(
    judge: CodeJudge, tmp_path: Path
) -> None:
    row = mbpp(
        7,
        "def evens(xs):\n    return [x for x in xs if x % 2 == 0]",
        ["assert sorted(evens([4, 1, 2])) == [2, 4]", "assert len(evens([1, 3])) == 0"],
    )
    (truth,) = truths(tmp_path, row)
    liar = "sorted = lambda xs: [2, 4]\nlen = lambda xs: 0\ndef evens(xs):\n    return [9]"
    assert graded(judge, truth, liar) == (False, 0, 2)


def test_the_answer_cannot_break_the_harness_by_rebinding_builtins(
    judge: CodeJudge, tmp_path: Path
) -> None:
    row = mbpp(
        8,
        "def add(a, b):\n    return a + b",
        [
            "assert add(1, 2) == 3",
            "assert add([1], [2]) == [1, 2]",
            "assert add((1,), (2,)) == (1, 2)",
        ],
    )
    (truth,) = truths(tmp_path, row)
    saboteur = (
        "import builtins\n"
        "_add = lambda a, b: a + b\n"
        "def add(a, b):\n"
        "    for n in ('type', 'isinstance', 'len', 'str', 'dict', 'list', 'repr', 'print',"
        " 'sum', 'id', 'getattr', 'hash', 'min', 'max', 'sorted', 'zip', 'tuple', 'int'):\n"
        "        setattr(builtins, n, lambda *a, **k: None)\n"
        "    return _add(a, b)\n"
        "def print(*a, **k):\n    pass\n"
        "def isinstance(*a):\n    return False\n"
        "len = sum = None\n"
    )
    assert graded(judge, truth, saboteur) == (True, 3, 3)


NODE_927 = mbpp(
    927,
    "class Node: \n\tdef __init__(self, data): \n\t\tself.data = data \n\t\tself.left = None\n"
    "\t\tself.right = None\ndef max_height(node): \n\tif node is None: \n\t\treturn 0 ; \n"
    "\telse : \n\t\tleft_height = max_height(node.left) \n\t\tright_height = max_height(node.right)"
    " \n\t\tif (left_height > right_height): \n\t\t\treturn left_height+1\n\t\telse: \n"
    "\t\t\treturn right_height+1",
    [
        "assert (max_height(root)) == 3",
        "assert (max_height(root1)) == 5",
        "assert (max_height(root2)) == 4",
    ],
    setup="root = Node(1) \r\nroot.left = Node(2) \r\nroot.right = Node(3) \r\n"
    "root.left.left = Node(4) \r\nroot.left.right = Node(5) \r\nroot1 = Node(1);  \r\n"
    "root1.left = Node(2);  \r\nroot1.right = Node(3);  \r\nroot1.left.left = Node(4);  \r\n"
    "root1.right.left = Node(5);  \r\nroot1.right.right = Node(6);  \r\n"
    "root1.right.right.right= Node(7);  \r\nroot1.right.right.right.right = Node(8)\r\n"
    "root2 = Node(1) \r\nroot2.left = Node(2) \r\nroot2.right = Node(3) \r\n"
    "root2.left.left = Node(4) \r\nroot2.left.right = Node(5)\r\nroot2.left.left.left = Node(6)"
    "\r\nroot2.left.left.right = Node(7)",
)


def test_setup_code_builds_objects_of_the_solutions_class_in_the_sandbox(
    judge: CodeJudge, tmp_path: Path
) -> None:
    (truth,) = truths(tmp_path, NODE_927)
    assert graded(judge, truth, NODE_927["code"]) == (True, 3, 3)
    shallow = NODE_927["code"].replace("return right_height+1", "return right_height")
    assert not graded(judge, truth, shallow)[0]
    no_class = "def max_height(node):\n    return 3"  # the set-up code cannot run: load fails
    assert graded(judge, truth, no_class)[1] == 0


REMOVE_533 = mbpp(
    533,
    "def remove_datatype(test_tuple, data_type):\n  res = []\n  for ele in test_tuple:\n"
    "    if not isinstance(ele, data_type):\n      res.append(ele)\n  return (res) ",
    [
        "assert remove_datatype((4, 5, 4, 7.7, 1.2), int) == [7.7, 1.2]",
        'assert remove_datatype((7, 8, 9, "SR"), str) == [7, 8, 9]',
        "assert remove_datatype((7, 1.1, 2, 2.2), float) == [7, 2]",
    ],
)


def test_a_type_passed_as_an_argument_is_judged(judge: CodeJudge, tmp_path: Path) -> None:
    (truth,) = truths(tmp_path, REMOVE_533)
    v = judge.judge(truth, REMOVE_533["code"])
    assert v.passed and v.facts.get("trainable", True), v
    wrong = "def remove_datatype(t, data_type):\n  return [e for e in t if type(e) is data_type]"
    assert graded(judge, truth, wrong) == (False, 0, 3)


SLOW = "import time\ndef slow(x):\n    time.sleep(1.5)\n    return x * 2"


def test_a_row_may_give_a_slow_reference_its_own_time_limit(
    judge: CodeJudge, tmp_path: Path
) -> None:
    plain, own = truths(
        tmp_path,
        mbpp(123, SLOW, ["assert slow(2) == 4"]),
        {**mbpp(124, SLOW, ["assert slow(2) == 4"]), "call_timeout": 8, "task_timeout": 20},
    )
    assert own["limits"] == {"call_timeout": 8.0, "task_timeout": 20.0}
    v = judge.judge(plain, SLOW)  # the judge's own 1 s per call
    assert not v.passed and v.reason == "timeout"
    v = judge.judge(own, SLOW)
    assert v.passed, v
    assert v.facts["call_limit_ms"] == 8000.0 and v.facts["slowest_call_ms"] > 0


def test_a_row_limit_over_the_ceiling_is_a_file_line_error(tmp_path: Path) -> None:
    path = tmp_path / "mbpp.jsonl"
    rows = [
        mbpp(1, SLOW, ["assert slow(1) == 2"]),
        {**mbpp(2, SLOW, ["assert slow(1) == 2"]), "call_timeout": 3600},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = CodeEnv().load_dataset(path)
    assert len(ds.tasks) == 1 and len(ds.errors) == 1
    assert ds.errors[0].startswith("mbpp.jsonl:2: call_timeout:")
    with pytest.raises(UnknownTaskError, match="call_timeout"):
        ds.resolve("2")


def test_humaneval_row_as_published_is_graded_right(judge: CodeJudge, tmp_path: Path) -> None:
    row = {
        "task_id": "HumanEval/53",
        "prompt": '\n\ndef add(x: int, y: int):\n    """Add two numbers x and y\n    >>> add(2, 3)'
        '\n    5\n    """\n',
        "canonical_solution": "    return x + y\n",
        "test": "\n\nMETADATA = {}\n\n\ndef check(candidate):\n    import random\n\n"
        "    assert candidate(0, 1) == 1\n    assert candidate(5, 7) == 12\n\n"
        "    for i in range(10):\n        x, y = random.randint(0, 1000), random.randint(0, 1000)\n"
        "        assert candidate(x, y) == x + y\n",
        "entry_point": "add",
    }
    (truth,) = truths(tmp_path, row)
    assert judge.judge(truth, row["canonical_solution"]).passed
    assert not judge.judge(truth, "    return x - y\n").passed


def test_grade_and_calibrate_name_the_tasks_near_their_time_limit(tmp_path: Path) -> None:
    verdicts = tmp_path / "v.jsonl"
    lines = [
        {"task_id": "fast", "slowest_call_ms": 3.0, "call_limit_ms": 2000.0},
        {"task_id": "123", "slowest_call_ms": 1500.0, "call_limit_ms": 2000.0},
        {"task_id": "123", "slowest_call_ms": 1900.0, "call_limit_ms": 2000.0},
        {"task_id": "math-1", "passed": True},
    ]
    verdicts.write_text("".join(json.dumps(x) + "\n" for x in lines) + "not json\n")
    assert near_limit_tasks(verdicts) == ["123"]
    steps = tmp_path / "trajectories.jsonl"
    records = [
        {
            "record": "step",
            "task_id": "a",
            "timing": {"slowest_call_ms": 900.0, "call_limit_ms": 1000.0},
        },
        {"record": "step", "task_id": "b", "timing": {"verify_ms": 900.0}},
        {"record": "episode", "task_id": "a", "timing": {}},
    ]
    steps.write_text("".join(json.dumps(x) + "\n" for x in records))
    assert near_limit_tasks(steps) == ["a"]
    assert near_limit_tasks(tmp_path / "missing.jsonl") == []
