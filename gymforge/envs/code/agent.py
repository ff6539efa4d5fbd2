"""``code-agent``: the ``code`` tasks as a multi-turn tool-use episode.

The agent may call ``run_code`` (run any program in the episode's workspace, see its output)
and ``run_visible_tests`` (run a candidate against the tests the prompt shows), as often as the
step budget allows, then submits a final reply that is judged exactly like ``code``'s (hidden
tests, same verifier, same reward components). Visible tests per task kind: the first
``N_VISIBLE`` generated cases (procedural families), the first assert (MBPP), the cases whose input
and output the statement shows (stdio), and the prompt's doctest examples with literal
arguments (HumanEval). A hidden test is never run or shown by a tool.

**The workspace.** Files a ``run_code`` program writes in its working directory are there for
the next ``run_code`` of the same episode, and never for another episode: ``reset`` empties it.
Each run is a fresh sandbox job (``SandboxJob.keep_files``) given the workspace's files, so an
episode never pins a sandbox worker while the model thinks, and a crashed worker loses nothing.
Processes never outlive their run. The workspace is capped (``run_limits.workspace_bytes``,
256 files); a run that exceeds it keeps what fitted and says so.

**What the workspace takes in.** A run's files are checked where the workspace takes them in
(``gymforge.sandbox.intake``, the rule ``swe`` uses): a name that is not valid UTF-8, holds a
control character, is too long or deep, or starts with the sandbox's reserved ``.gf-`` is
left out, and the run's report lists it; symlinks, fifos and devices never come back. So the
state, the report and the next job only ever see names they can take. A job's program is
written under the sandbox's reserved entry name (``.gf-entry.py``, ``.gf-entry.c``...), so a
workspace ``main.py``, ``main.c`` or ``prog`` is never replaced or dropped by a run.

**Judging.** A final reply is judged on the submitted code alone, as plain data: the
workspace never reaches the judge (``plant_then_read`` is the red team's check).
"""

from __future__ import annotations

import ast
import dataclasses
import doctest
import hashlib
import random
from typing import Any

from pydantic import BaseModel, Field

from gymforge.core.capabilities import TASK, require
from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.errors import ToolError
from gymforge.core.policy import EpisodeContext, PolicyTurn, scripted_env
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Action, Observation, Reply, Task, ToolCall
from gymforge.envs.code.env import CodeEnv, CodeEnvBase, answer_language
from gymforge.envs.code.families import N_VISIBLE
from gymforge.envs.code.truth import (
    CallsTruth,
    CallTest,
    CodeTruth,
    HumanEvalTruth,
    MbppTruth,
    StdioTruth,
)
from gymforge.kit.redteam import AttackNotApplicable
from gymforge.qa_profile import RedTeamCase
from gymforge.sandbox import Limits, SandboxJob, Status
from gymforge.sandbox.intake import entry_file, take_in
from gymforge.tasks.truth_dump import dump_truth
from gymforge.tools import tool
from gymforge.verify.code.extract import canonical_language, extract_code

RUN_LIMITS = Limits(wall_time=5.0, cpu_time=4.0, output_bytes=64 << 10, workspace_bytes=1 << 20)
MAX_CODE_CHARS = 100_000
SHOWN_CHARS = 4_000


class Workspace(BaseModel):
    files: dict[str, bytes] = Field(default_factory=dict)
    runs: int = 0


class RunReport(BaseModel):
    status: str
    exit_code: int | None
    stdout: str
    stderr: str
    limits_hit: list[str]
    files: list[str] = Field(description="the workspace after the run")
    note: str | None = None


class TestReport(BaseModel):
    __test__ = False  # not a pytest class

    tests_run: int
    tests_passed: int
    cases: list[dict[str, Any]]
    note: str | None = None


def visible_truth(truth: CodeTruth, prompt: str) -> dict[str, Any] | None:
    """The tests a task's ``prompt`` shows, as a truth the judge takes (plain data); None if
    it shows none. Never a hidden test: an agent sees these cases' inputs and outputs."""
    t = truth.root
    visible: BaseModel | None = None
    if isinstance(t, CallsTruth):
        visible = t.model_copy(update={"tests": t.tests[:N_VISIBLE]})
    elif isinstance(t, MbppTruth):
        visible = t.model_copy(update={"test_list": t.test_list[:1]})
    elif isinstance(t, StdioTruth):  # the cases whose input and output the statement shows
        shown = [c for c in t.tests if _in(c.input, prompt) and _in(c.output, prompt)]
        visible = t.model_copy(update={"tests": shown[:N_VISIBLE]}) if shown else None
    else:
        tests = doctest_cases(t.prompt, t.entry_point)
        if tests:
            visible = CallsTruth(kind="calls", entry_point=t.entry_point, tests=tests)
    return None if visible is None else dump_truth(visible)


def _in(text: str, prompt: str) -> bool:
    return bool(text.strip()) and text.strip() in prompt


def doctest_cases(prompt: str, entry: str) -> list[CallTest]:
    """``>>> entry(literal args)`` examples in ``prompt`` whose output is a literal."""
    cases = []
    try:
        examples = doctest.DocTestParser().get_examples(prompt)
    except ValueError:
        return []
    for ex in examples:
        try:
            call = ast.parse(ex.source.strip(), mode="eval").body
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                continue
            if call.func.id != entry or call.keywords:
                continue
            args = [ast.literal_eval(a) for a in call.args]
            expected = ast.literal_eval(ex.want.strip())
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            continue
        cases.append(CallTest(args=args, expected=expected))
    return cases


def _shown(text: str) -> str:
    if len(text) <= SHOWN_CHARS:
        return text
    return text[:SHOWN_CHARS] + f"\n... [{len(text) - SHOWN_CHARS} more characters not shown]"


def _checked(code: str) -> str:
    if len(code) > MAX_CODE_CHARS:
        raise ToolError("invalid_arguments", f"longer than {MAX_CODE_CHARS} characters")
    return code


PLANT = (
    "import json\nfor name in ('expected.json', 'verdict.json', 'results.json'):\n"
    "    json.dump({'passed': True, 'tests_passed': 99}, open(name, 'w'))\n"
    "open('sitecustomize.py', 'w').write('import builtins; builtins.PASS = True')\n"
)


class PlantThenRead:
    """Red team: plants verdict-like files and a ``sitecustomize`` in the workspace, then
    submits functions that return what the files say. Judging never sees the workspace."""

    name = checkpoint = "plant_then_read"
    scripted = True

    async def start(self, ctx: EpisodeContext) -> None:
        self.ctx, self.planted = ctx, False

    async def act(self, observation: Observation) -> PolicyTurn:
        if not self.planted:
            self.planted = True
            return PolicyTurn(ToolCall(name="run_code", arguments={"code": PLANT}))
        env = scripted_env(self.ctx, "the plant_then_read attack")
        task = require(env, TASK, "the plant_then_read attack").task
        truth = CodeTruth.model_validate(task.truth).root if task is not None else None
        entry = truth.entry_point if isinstance(truth, CallsTruth | HumanEvalTruth) else None
        if not entry:
            raise AttackNotApplicable("not a function task")
        body = "    import json\n    return json.load(open('expected.json'))['tests_passed']\n"
        return PolicyTurn(Reply(text=f"```python\ndef {entry}(*a, **k):\n{body}```"))


class CodeAgentEnv(CodeEnvBase[Workspace]):
    spec = EnvSpec(
        "code-agent",
        "1.1.0",
        renderer_version="1",
        description="The code tasks, multi-turn: run code and the visible tests, then submit.",
    )
    budget = Budget(max_steps=10, max_tokens=32768)
    run_limits: Limits = RUN_LIMITS
    qa = dataclasses.replace(
        CodeEnv.qa,
        redteam=(*CodeEnv.qa.redteam, RedTeamCase("plant_then_read", PlantThenRead)),
    )
    system_prompt = (
        "You write correct, efficient code. You may call run_code to run programs (files they "
        "write stay in your workspace for this task) and run_visible_tests to check a "
        "candidate against the examples. When done, reply with your final code in one fenced "
        "block; that reply is judged on hidden tests."
    )

    def init_world(self, task: Task, r: random.Random) -> Workspace:
        return Workspace()

    def state(self) -> dict[str, Any]:
        files = {n: hashlib.sha256(b).hexdigest() for n, b in sorted(self.world.files.items())}
        return {"files": files, "runs": self.world.runs}

    @tool(writes=True)
    async def run_code(self, code: str, stdin: str = "", language: str = "") -> RunReport:
        """Run a program in this task's workspace and see its output.

        Args:
            code: The program (a fenced block or plain source).
            stdin: Standard input for the program.
            language: python, c, cpp or javascript; empty for the task's language.
        """
        assert self.task is not None
        lang = canonical_language(language.strip() or self.truth.language)
        if lang is None:
            raise ToolError("invalid_arguments", f"unknown language {language!r}")
        source = extract_code(_checked(code), lang)
        ws: Workspace = self.world
        job = SandboxJob(
            language=lang,
            source=source,
            stdin=_checked(stdin),
            files=dict[str, str | bytes](ws.files),
            keep_files=True,
            main_file=entry_file(lang),
            limits=self.run_limits,
            seed=derive_seed(self.task.task_id, self.seed, "run_code", ws.runs + 1),
        )
        r = await self.judge.backend.arun(job)
        if r.status is Status.INTERNAL_ERROR:  # the workspace is left as it was
            raise ToolError("internal", "the sandbox failed; nothing was run", retryable=True)
        ws.runs += 1
        notes = []
        if r.files_truncated:
            notes.append("some files did not fit in the workspace and were dropped")
        if r.files is not None:
            taken = take_in(r.files)
            ws.files = taken.files
            notes.append(taken.note() or "")
        return RunReport(
            status=str(r.status),
            exit_code=r.exit_code,
            stdout=_shown(r.stdout),
            stderr=_shown(r.compile_output or r.stderr),
            limits_hit=r.limits_hit.names(),
            files=sorted(ws.files),
            note="; ".join(n for n in notes if n) or None,
        )

    @tool
    async def run_visible_tests(self, code: str) -> TestReport:
        """Run a candidate solution against this task's visible tests (the prompt's examples).

        Args:
            code: The candidate, as you would submit it.
        """
        assert self.task is not None
        truth = visible_truth(self.truth, self.task.prompt)
        if truth is None:
            return TestReport(tests_run=0, tests_passed=0, cases=[], note="no visible tests")
        v = await self.judge.ajudge(truth, _checked(code), self._language(code), detail=True)
        reason = None if v.passed else v.reason
        cases = list(v.facts.get("cases") or [])
        return TestReport(
            tests_run=v.facts["tests_run"],
            tests_passed=v.facts["tests_passed"],
            cases=cases,
            note=reason,
        )

    def _language(self, code: str) -> str:
        assert self.task is not None
        return answer_language(code, self.truth)

    def oracle_plan(self, task: Task) -> list[Action] | None:
        plan = super().oracle_plan(task)
        if not plan:
            return plan
        final = plan[-1]
        assert isinstance(final, Reply)
        return [ToolCall(name="run_visible_tests", arguments={"code": final.text}), final]
