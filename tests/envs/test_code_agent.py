"""``code-agent``: the code tasks, multi-turn, with ``run_code`` and ``run_visible_tests``.

The workspace persists within an episode and never across episodes; visible tests report per
case; the final reply is judged on the hidden tests; bad tool arguments get clear errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.types import Reply, ToolCall
from gymforge.envs.code.agent import (
    MAX_CODE_CHARS,
    PLANT,
    CodeAgentEnv,
    doctest_cases,
    visible_truth,
)
from gymforge.envs.code.truth import CallTest, CodeTruth
from gymforge.evaluate.grade import grade_file
from gymforge.qa import QAReport
from gymforge.sandbox.doctor import bwrap_works

pytestmark = pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap unavailable")

TASK = "code.lists/v1/d2/s3"
WRITE = "open('state.txt', 'a').write('x')\nprint(open('state.txt').read())"


def _tool(name: str, **args: Any) -> ToolCall:
    return ToolCall(name=name, arguments=args)


def _result(step: Any) -> dict[str, Any]:
    return json.loads(step.observation.messages[-1].content)


def test_the_workspace_persists_within_an_episode_and_never_across() -> None:
    async def go() -> None:
        env, other = CodeAgentEnv(), CodeAgentEnv()
        await env.reset(TASK, 0)
        await other.reset(TASK, 0)
        outs = []
        for _ in range(3):
            outs.append(_result(await env.step(_tool("run_code", code=WRITE))))
        assert [o["result"]["stdout"] for o in outs] == ["x\n", "xx\n", "xxx\n"]
        assert outs[-1]["result"]["files"] == ["state.txt"]
        snap = await env.snapshot()
        assert snap["runs"] == 3 and list(snap["files"]) == ["state.txt"]
        # another live episode has its own workspace
        assert _result(await other.step(_tool("run_code", code=WRITE)))["result"]["stdout"] == "x\n"
        # a new episode on the same instance starts empty
        await env.reset(TASK, 1)
        assert (await env.snapshot()) == {"files": {}, "runs": 0}
        r = _result(await env.step(_tool("run_code", code="import os\nprint(os.listdir('.'))")))
        assert r["result"]["stdout"] == "['.gf-entry.py']\n"
        await env.close()
        await other.close()

    asyncio.run(go())


def test_run_code_reports_failures_and_runs_other_languages() -> None:
    async def go() -> None:
        env = CodeAgentEnv()
        default = env.run_limits
        env.run_limits = default.model_copy(update={"wall_time": 0.5, "cpu_time": 0.5})
        await env.reset(TASK, 0)
        r = _result(await env.step(_tool("run_code", code="while True: pass")))["result"]
        assert r["status"] == "timeout" and {"wall_time", "cpu_time"} & set(r["limits_hit"])
        env.run_limits = default  # the rest (a C compile among them) must not race a loaded machine
        r = _result(await env.step(_tool("run_code", code="raise ValueError('boom')")))
        assert r["result"]["status"] == "runtime_error" and "boom" in r["result"]["stderr"]
        r = _result(await env.step(_tool("run_code", code="print('y' * 10000)")))
        assert "more characters not shown" in r["result"]["stdout"]
        c_src = '#include <stdio.h>\nint main(){FILE*f=fopen("c.txt","w");fputs("hi",f);'
        c_src += 'fclose(f);int n;scanf("%d",&n);printf("%d\\n",n*2);}'
        r = _result(await env.step(_tool("run_code", code=c_src, stdin="21", language="c")))
        assert r["result"]["stdout"] == "42\n" and "c.txt" in r["result"]["files"]
        r = _result(await env.step(_tool("run_code", code="print(open('c.txt').read())")))
        assert r["result"]["stdout"] == "hi\n"  # the C program's file, read from Python
        await env.close()

    asyncio.run(go())


def test_bad_tool_arguments_get_clear_errors_and_change_nothing() -> None:
    too_long = "x" * (MAX_CODE_CHARS + 1)

    async def go() -> None:
        env = CodeAgentEnv()
        for call in (
            _tool("run_code", code="print(1)", language="cobol"),
            _tool("run_code", code=3),
            _tool("run_code"),
            _tool("run_code", code=too_long),
            _tool("run_visible_tests", code=too_long),
        ):
            await env.reset(TASK, 0)
            step = await env.step(call)
            res = _result(step)
            assert res["ok"] is False and res["error"]["kind"] == "invalid_arguments", res
            assert not step.terminated and not step.truncated
            assert (await env.snapshot())["runs"] == 0
        await env.close()

    asyncio.run(go())


def test_visible_tests_pass_while_hidden_tests_decide() -> None:
    async def go() -> None:
        env = CodeAgentEnv()
        await env.reset(TASK, 0)
        assert env.task is not None
        shown = env.task.truth["tests"][:2]
        # a candidate that hard-codes the visible examples
        table = {json.dumps(t["args"][0]): t["expected"] for t in shown}
        body = f"    import json\n    return {table!r}[json.dumps(xs)]\n"
        fake = f"```python\ndef process(xs):\n{body}```"
        r = _result(await env.step(_tool("run_visible_tests", code=fake)))["result"]
        assert r["tests_run"] == r["tests_passed"] == 2 and all(c["ok"] for c in r["cases"])
        final = await env.step(Reply(text=fake))
        assert final.terminated and not final.info["success"]
        facts = final.info["verdict"]["facts"]
        assert facts["tests_run"] > 2 and "cases" not in facts  # hidden tests stay hidden
        await env.close()

    asyncio.run(go())


def _dataset(path: Path) -> None:
    rows = [
        {
            "task_id": "he/doc",
            "prompt": 'def add(a, b):\n    """Add.\n    >>> add(1, 2)\n    3\n'
            '    >>> add(*x)\n    0\n    """\n',
            "entry_point": "add",
            "canonical_solution": "    return a + b\n",
            "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n"
            "    assert candidate(5, 5) == 10\n",
        },
        {
            "task_id": "he/nodoc",
            "prompt": "def sub(a, b):\n",
            "entry_point": "sub",
            "test": "def check(candidate):\n    assert candidate(3, 1) == 2\n",
        },
        {"task_id": 7, "text": "sq", "test_list": ["assert sq(2) == 4", "assert sq(3) == 9"]},
        {
            "task_id": "io",
            "prompt": "Double it.\n\nExample input:\n2\nExample output:\n4\n",
            "tests": [{"input": "2\n", "output": "4\n"}, {"input": "5\n", "output": "10\n"}],
        },
        {"task_id": "io/hidden", "prompt": "Triple it.", "tests": [{"input": "2", "output": "6"}]},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_visible_tests_per_task_format(tmp_path: Path) -> None:
    _dataset(tmp_path / "tasks.jsonl")
    env = CodeAgentEnv()
    env.use_dataset(env.load_dataset(tmp_path / "tasks.jsonl"))
    assert doctest_cases(">>> add(1, 2)\n3\n>>> add(*x)\n0\n>>> other(1)\n1\n", "add") == [
        CallTest(args=[1, 2], expected=3)
    ]

    async def visible(task_id: str, code: str) -> dict[str, Any]:
        await env.reset(task_id, 0)
        return _result(await env.step(_tool("run_visible_tests", code=code)))["result"]

    async def go() -> None:
        r = await visible("he/doc", "def add(a, b):\n    return a - b\n")
        assert r["tests_run"] == 1 and r["tests_passed"] == 0
        assert r["cases"][0] == {"ok": False, "call": "add(1, 2)", "expected": "3", "got": "-1"}
        r = await visible("he/nodoc", "def sub(a, b):\n    return a - b\n")
        assert r["tests_run"] == 0 and r["note"] == "no visible tests"
        r = await visible("7", "def sq(x):\n    return x * x\n")
        assert r["tests_run"] == 1 and r["cases"] == [{"ok": True, "test": "assert sq(2) == 4"}]
        r = await visible("io", "print(int(input()) * 3)")
        assert r["tests_run"] == 1 and r["cases"][0]["got"] == "6\n" and not r["cases"][0]["ok"]
        r = await visible("io/hidden", "print(int(input()) * 3)")
        assert r["tests_run"] == 0 and r["note"] == "no visible tests"  # none shown
        await env.close()

    asyncio.run(go())
    task = env.tasks.resolve("io")
    assert visible_truth(CodeTruth.model_validate(task.truth), task.prompt) == {
        **task.truth,
        "tests": task.truth["tests"][:1],
    }


def test_grade_lines_may_name_their_language(tmp_path: Path) -> None:
    rows = [{"task_id": "io", "prompt": "Echo.", "tests": [{"input": "7\n", "output": "7\n"}]}]
    (tmp_path / "t.jsonl").write_text(json.dumps(rows[0]) + "\n")
    c_echo = '#include <stdio.h>\nint main(){int x;scanf("%d",&x);printf("%d\\n",x);}'
    answers = [
        {"task_id": "io", "answer": c_echo, "language": "c"},  # no fence: the language says
        {"task_id": "io", "answer": c_echo},  # default python: a syntax error
        {"task_id": "io", "answer": "print(input())", "language": "py"},
        {"task_id": "io", "answer": "print(1)", "language": "cobol"},
        {"task_id": "io", "answer": "print(1)", "language": 3},
    ]
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(a) for a in answers) + "\n")

    def factory() -> CodeAgentEnv:
        env = CodeAgentEnv()
        env.use_dataset(env.load_dataset(tmp_path / "t.jsonl"))
        return env

    asyncio.run(grade_file(factory, tmp_path / "a.jsonl", tmp_path / "v.jsonl"))
    lines = [json.loads(x) for x in (tmp_path / "v.jsonl").read_text().splitlines()]
    assert [x["passed"] for x in lines] == [True, False, True, False, False]
    assert "unknown language" in lines[3]["error"] and "language" in lines[4]["error"]


@pytest.mark.xdist_group("qa-code-agent")
def test_passes_all_ten_qa_checks(builtin_qa_report: Callable[[str], QAReport]) -> None:
    """The default run's QA report (``QUICK_QA``), shared with tests/qa's all-built-ins test."""
    report = builtin_qa_report("code-agent")
    assert report.passed, {c.name: c.details for c in report.checks if not c.passed}


def test_planted_workspace_files_never_reach_the_judge() -> None:
    async def go() -> None:
        env = CodeAgentEnv()
        await env.reset(TASK, 0)
        r = _result(await env.step(_tool("run_code", code=PLANT)))["result"]
        assert {"expected.json", "verdict.json", "sitecustomize.py"} <= set(r["files"])
        reader = "import json\nprint(json.load(open('expected.json'))['tests_passed'])"
        r = _result(await env.step(_tool("run_code", code=reader)))["result"]
        assert r["stdout"] == "99\n"  # the plant works inside the episode's workspace
        body = "    import json\n    return json.load(open('expected.json'))['tests_passed']\n"
        final = await env.step(Reply(text=f"```python\ndef process(xs):\n{body}```"))
        assert final.terminated and not final.info["success"]
        assert final.info["verdict"]["facts"]["tests_passed"] == 0
        await env.close()

    asyncio.run(go())
