"""The ``code`` environment: families, rewards, dataset formats, and ``gymforge grade code``."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gymforge.core.types import Reply
from gymforge.envs.code import FAMILIES, HELDOUT, CodeEnv
from gymforge.envs.code.env import answer_language
from gymforge.envs.code.truth import CodeTruth
from gymforge.sandbox.doctor import bwrap_works
from gymforge.tasks.truth_dump import dump_truth
from gymforge.verify.code import strict_equal

UID_BASE = 100_000 + (os.getpid() % 5000) * 100 + 70

needs_sandbox = pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap unavailable")


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_reference_passes_its_hidden_tests_and_tasks_vary(family) -> None:  # type: ignore[no-untyped-def]
    prompts = set()
    for level, space in family.levels.items():
        for seed in range(4):
            params = space.sample(random.Random(seed * 10 + level))
            prompt, typed = family.build(params, random.Random(seed))
            prompts.add(prompt)
            truth = dump_truth(typed)
            ns: dict = {}
            exec(truth["reference"], ns)
            fn = ns[truth["entry_point"]]
            assert len(truth["tests"]) >= 5
            for t in truth["tests"]:
                got = json.loads(json.dumps(fn(*t["args"])))
                assert strict_equal(got, t["expected"]), (family.name, t)
            json.dumps(truth)  # plain JSON
    assert len(prompts) >= 10
    assert family.name in HELDOUT


def _episode(env: CodeEnv, task_id: str, answer: str | None = None):  # type: ignore[no-untyped-def]
    async def go():  # type: ignore[no-untyped-def]
        await env.reset(task_id, 0)
        act = Reply(text=answer) if answer is not None else await env.oracle_action()
        return await env.step(act)

    return asyncio.run(go())


@needs_sandbox
def test_rewards_oracle_partial_and_penalties() -> None:
    env = CodeEnv()
    tid = "code.lists/v1/d2/s3"
    r = _episode(env, tid)
    assert r.info["success"] and r.reward_components["task"] == 1.0
    assert r.reward_components["tests_passed"] == 0.5
    r = _episode(env, tid, "```python\ndef process(xs):\n    return 0\n```")
    assert not r.info["success"] and r.reward_components["task"] == 0.0
    assert 0.0 <= r.reward_components["tests_passed"] < 0.5
    r = _episode(env, tid, "```python\ndef process(xs):\n    while True: pass\n```")
    assert r.reward_components["timeout"] < 0 and r.info["verdict"]["facts"]["timeouts"] >= 1
    r = _episode(env, tid, "```python\ndef process(xs):\n    import os; os._exit(0)\n```")
    assert r.reward_components["crash"] < 0 and not r.info["success"]
    r = _episode(env, tid, "I don't know")
    assert not r.info["success"] and "latency_ms" not in r.info["verdict"]["facts"]


def _write_dataset(path: Path) -> None:
    rows = [
        {
            "task_id": "HumanEval/0",
            "prompt": 'def add(a, b):\n    """a + b"""\n',
            "entry_point": "add",
            "canonical_solution": "    return a + b\n",
            "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n"
            "    assert candidate(0, 0) == 0\n",
        },
        {
            "task_id": 11,
            "text": "Write a function sq(x) returning x squared.",
            "code": "def sq(x):\n    return x * x\n",
            "test_list": ["assert sq(2) == 4", "assert sq(-3) == 9"],
        },
        {
            "task_id": "stdio/1",
            "prompt": "Print the sum of two integers.",
            "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "4 4\n", "output": "8"}],
        },
        {
            "task_id": "stdio/cpp",
            "prompt": "Echo the number.",
            "language": "cpp",
            "tests": [{"input": "7\n", "output": "7\n"}],
        },
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_dataset_formats_detected_per_line(tmp_path: Path) -> None:
    p = tmp_path / "tasks.jsonl"
    _write_dataset(p)
    ds = CodeEnv().load_dataset(p)
    kinds = [t.truth["kind"] for t in ds.tasks]
    assert kinds == ["humaneval", "mbpp", "stdio", "stdio"]
    assert ds.resolve("11") is not None and ds.tasks[3].truth["language"] == "cpp"
    stdio = CodeTruth.model_validate({"kind": "stdio", "tests": []})
    stdio_cpp = CodeTruth.model_validate({"kind": "stdio", "tests": [], "language": "cpp"})
    calls = CodeTruth.model_validate({"kind": "calls", "entry_point": "f", "tests": []})
    assert answer_language("```cpp\nx\n```", stdio) == "cpp"
    assert answer_language("```cpp\nx\n```", calls) == "cpp"  # unsupported there
    assert answer_language("```py\nx\n```", stdio_cpp) == "python"
    assert answer_language("```\nx\n```", stdio_cpp) == "cpp"
    assert answer_language("x", calls) == "python"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "x", "prompt": "p"}\n')
    from gymforge.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"bad\.jsonl:1"):
        CodeEnv().load_dataset(bad)


def _uids_alive(uids: set[int]) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                st = (p / "status").read_text()
            except OSError:
                continue
            uid = next(int(ln.split()[1]) for ln in st.splitlines() if ln.startswith("Uid:"))
            if uid in uids:
                out.append(int(p.name))
    return out


@needs_sandbox
def test_grade_code_cli_all_formats_and_no_process_left(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    _write_dataset(tasks)
    answers = [
        {"task_id": "HumanEval/0", "answer": "```python\ndef add(a, b):\n    return a + b\n```"},
        {"task_id": "HumanEval/0", "answer": "```python\nimport sys\nsys.exit(0)\n```"},
        {"task_id": "11", "answer": "def sq(x):\n    return x * x\n"},
        {"task_id": "11", "answer": "def sq(x):\n    print('PASS')\n"},
        {"task_id": "stdio/1", "answer": "```python\nprint(sum(map(int, input().split())))\n```"},
        {"task_id": "stdio/1", "answer": "print('PASS')"},
        {
            "task_id": "stdio/cpp",
            "answer": '```cpp\n#include <cstdio>\nint main(){int x;scanf("%d",&x);'
            'printf("%d\\n",x);}\n```',
        },
        {"task_id": "code.strings/v1/d1/s0", "answer": "def transform(s):\n    return s\n"},
        {"task_id": "nope", "answer": "x"},
    ]
    ans = tmp_path / "answers.jsonl"
    ans.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
    out = tmp_path / "verdicts.jsonl"
    env = {
        **os.environ,
        "GYMFORGE_SANDBOX_UID_BASE": str(UID_BASE),
        "GYMFORGE_SANDBOX_WORKERS": "2",
    }
    cmd = [
        sys.executable,
        "-m",
        "gymforge.cli",
        "grade",
        "code",
        "--dataset",
        str(tasks),
        "--answers",
        str(ans),
        "--out",
        str(out),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["passed"] for x in lines] == [
        True,
        False,
        True,
        False,
        True,
        False,
        True,
        False,
        False,
    ]
    for x in lines[:-1]:
        assert {"reward", "reward_components", "latency_ms", "facts"} <= set(x), x
        assert "tests_passed" in x["reward_components"]
    assert "error" in lines[-1]
    end = time.monotonic() + 30  # the sandbox's processes go away with the command
    while _uids_alive({UID_BASE, UID_BASE + 1}) and time.monotonic() < end:
        time.sleep(0.05)
    assert _uids_alive({UID_BASE, UID_BASE + 1}) == []


def test_grade_code_unsafe_flag_warns_loudly(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"task_id": "nope", "answer": "print(1)"}) + "\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gymforge.cli",
            "grade",
            "code",
            "--answers",
            str(answers),
            "--out",
            str(tmp_path / "v.jsonl"),
            "--unsafe-no-isolation",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "WARNING: --unsafe-no-isolation" in proc.stderr
    assert json.loads((tmp_path / "v.jsonl").read_text())["error"]
