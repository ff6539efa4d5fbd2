"""``swe``: resolve an issue in a repository, judged by hidden tests on the final state.

Tools: the tracker (``list_issues``, ``read_issue``, ``comment_on_issue``), the editor
(``list_files``, ``read_file``, ``search``, ``edit_file``, ``create_file``, ``delete_file``),
``run_tests`` (the visible tests, a structured report), ``run_command`` (any program in the
sandbox, no network) and ``submit`` (ends the episode; a plain reply ends it too).

The repository lives in this process as a dict of files (reset copies the template: see
``workspace``); ``run_tests`` and ``run_command`` are one sandbox job each, given the files,
with a per-call limit of ``RUN_LIMITS.wall_time`` seconds and ``RUN_LIMITS.output_bytes``
bytes per stream (past it the job is killed; ``SHOWN_CHARS`` of each stream are shown).
Files a command writes are kept (``__pycache__`` excepted) as ``intake`` takes them in: a
name or size the workspace cannot hold is left out and the report says so. The job's own
entry program is ``runner.ENTRY``, a reserved name, so a repository's ``main.py`` stays.
Durations never enter an observation, so a replay reproduces every one. Judging: ``judging``.
"""

from __future__ import annotations

import hashlib
import random
import re
import shlex
from pathlib import Path
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.errors import ToolError
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Action, Reply, Task, ToolCall
from gymforge.core.verdict import Verdict
from gymforge.envs.swe import workspace as ws
from gymforge.envs.swe.families import FAMILIES, SPLIT, TRAIN_FAMILIES
from gymforge.envs.swe.intake import take_in
from gymforge.envs.swe.judging import judge_repo
from gymforge.envs.swe.normalize import normalize_output
from gymforge.envs.swe.redteam import REDTEAM
from gymforge.envs.swe.reports import CommandReport, TestsReport, entries
from gymforge.envs.swe.reward import SweReward
from gymforge.envs.swe.runner import COMMAND, ENTRY, TEST_RUNNER, parse_report
from gymforge.envs.swe.taskfile import load_task_file
from gymforge.envs.swe.truth import Issue, SweTruth
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa_profile import Baselines, QAProfile, ThroughputBudget
from gymforge.sandbox import Limits, Result, SandboxJob, Status
from gymforge.sandbox.preflight import require_read_only_files, require_sandbox
from gymforge.tasks import Dataset, TaskSource
from gymforge.tools import tool
from gymforge.tools.shell import ShellTool
from gymforge.verify.code import CodeJudge
from gymforge.verify.services import current

RUN_LIMITS = Limits(
    wall_time=10.0, cpu_time=8.0, output_bytes=64 << 10, workspace_bytes=4 << 20, processes=32
)
MAX_COMMAND = 4_000


SYSTEM_PROMPT = (
    "You are a software engineer working in a repository through tools. Read the issue, "
    "find the cause, make the smallest correct change, run the tests, then call submit. "
    "Tests, test configuration and CI files are protected: changing them fails the task."
)
ISSUE_REF = re.compile(r"issue #(\d+)")


def issue_briefing(prompt: str) -> tuple[tuple[str, dict[str, Any]], ...]:
    """A workspace harness's briefing: the issue the prompt names (only ``read_issue`` shows
    it; the shell sees the repository alone), or the open issues when it names none."""
    found = ISSUE_REF.search(prompt)
    if found is None:
        return (("list_issues", {"state": "open"}),)
    return (("read_issue", {"number": int(found.group(1))}),)


class SweEnv(ToolEnv[SweTruth, ws.Repo]):
    spec = EnvSpec(
        "swe",
        "1.2.0",
        renderer_version="1",
        description="Resolve an issue in a repository: tracker, editor, tests; hidden tests judge.",
    )
    tasks = TaskSource.of(FAMILIES, SPLIT)
    budget = Budget(max_steps=40, max_tokens=131072)
    reward = SweReward()
    system_prompt = SYSTEM_PROMPT
    shell_tool = ShellTool("run_command", via_sh=True, briefing=issue_briefing)
    qa = QAProfile(
        verifier_kinds=("state",),
        redteam=REDTEAM,
        # ``hidden_tests`` pays the fraction of hidden tests passed (weight 0.3) by design,
        # also to an attack one write short of the fix (0.24 on one refactor task)
        baselines=Baselines(
            oracle_min=0.95, bad_max=0.05, noop_max=0.0, redteam_reward_max=SweReward().tests_weight
        ),
        throughput=ThroughputBudget(reset_p50_ms=30.0, steps_per_s=30.0, concurrency=4),
        family_weights={f: 1.0 for f in TRAIN_FAMILIES},
    )

    def __init__(self, *args: Any, judge: CodeJudge | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shared_sandbox = judge is None
        self.judge = judge or CodeJudge()
        self._preflight_done = not self.shared_sandbox

    def preflight(self) -> None:
        """``IsolationUnavailableError`` (one line) unless the sandbox can run Python here."""
        if self.shared_sandbox:
            require_sandbox({"python"}, current().settings)

    def on_reset(self, task: Task) -> None:
        if not self._preflight_done:
            self.preflight()
            self._preflight_done = True
        if self.shared_sandbox and self.truth.mode == "command":
            require_read_only_files()  # the post-submit hidden run's files are read-only

    def init_world(self, task: Task, r: random.Random) -> ws.Repo:
        truth = self.truth_of(task)
        return ws.Repo(files=dict(truth.files), issues=list(truth.issues))

    def state(self) -> dict[str, Any]:
        repo = self.world
        return {
            "files": {
                p: hashlib.sha256(t.encode()).hexdigest()[:16]
                for p, t in sorted(repo.files.items())
            },
            "comments": repo.comments,
            "test_runs": repo.test_runs,
            "commands": repo.commands,
            "submitted": repo.submitted,
        }

    def load_dataset(self, path: str | Path, name: str | None = None) -> Dataset:
        """A JSONL task file (``taskfile``); its pin covers the repositories it references."""
        return load_task_file(path, name)

    # ---- the tracker ----------------------------------------------------------------------
    @tool
    def list_issues(self, state: str = "open") -> list[dict[str, Any]]:
        """List the tracker's issues (number, title, labels, state, comment count).

        Args:
            state: open, closed or all.
        """
        if state not in ("open", "closed", "all"):
            raise ToolError("invalid_arguments", "state must be open, closed or all")
        return [
            {
                "number": i.number,
                "title": i.title,
                "labels": i.labels,
                "state": i.state,
                "comments": len(i.comments),
            }
            for i in self.world.issues
            if state == "all" or i.state == state
        ]

    def _issue(self, number: int) -> int:
        for k, i in enumerate(self.world.issues):
            if i.number == number:
                return k
        known = ", ".join(str(i.number) for i in self.world.issues)
        raise ToolError("not_found", f"no issue #{number}; issues: {known}")

    @tool
    def read_issue(self, number: int) -> dict[str, Any]:
        """Read one issue with its comments.

        Args:
            number: The issue number.
        """
        return self.world.issues[self._issue(number)].model_dump(mode="json")

    @tool(writes=True)
    def comment_on_issue(self, number: int, body: str) -> dict[str, Any]:
        """Add a comment to an issue.

        Args:
            number: The issue number.
            body: The comment text (Markdown).
        """
        if not body.strip() or len(body) > 20_000:
            raise ToolError("invalid_arguments", "body must have 1 to 20000 characters")
        k = self._issue(number)
        issue: Issue = self.world.issues[k]
        comments = [*issue.comments, {"author": "you", "body": body}]
        self.world.issues[k] = Issue.model_validate({**issue.model_dump(), "comments": comments})
        self.world.comments += 1
        return {"number": number, "comments": len(comments)}

    # ---- the editor -----------------------------------------------------------------------
    @tool
    def list_files(self, path: str = "") -> list[dict[str, Any]]:
        """List the repository's files (with line counts), optionally under a directory.

        Args:
            path: A directory relative to the repository root; empty for all files.
        """
        return ws.list_files(self.world, path)

    @tool
    def read_file(self, path: str, start: int = 1, end: int = 0) -> str:
        """Read a file with line numbers.

        Args:
            path: The file, relative to the repository root.
            start: First line to show (1-based).
            end: Last line to show; 0 for the end of the file.
        """
        return ws.read_file(self.world, path, start, end)

    @tool
    def search(self, pattern: str, path_glob: str = "*") -> list[dict[str, Any]]:
        """Search the files for a regular expression, line by line (at most 100 matches).

        Args:
            pattern: A Python regular expression.
            path_glob: Only files whose path matches this glob (e.g. "*.py", "tests/*").
        """
        return ws.search(self.world, pattern, path_glob)

    @tool(writes=True)
    def edit_file(self, path: str, old: str, new: str) -> dict[str, Any]:
        """Replace exactly one occurrence of old text in a file by new text.

        Args:
            path: The file, relative to the repository root.
            old: The exact text to replace (whitespace included); it must occur once.
            new: The replacement text.
        """
        line = ws.edit_file(self.world, path, old, new)
        return {"path": ws.checked_path(path), "line": line}

    @tool(writes=True)
    def create_file(self, path: str, content: str) -> dict[str, Any]:
        """Create a new file.

        Args:
            path: The new file, relative to the repository root.
            content: Its text.
        """
        return {"created": ws.create_file(self.world, path, content)}

    @tool(writes=True)
    def delete_file(self, path: str) -> dict[str, Any]:
        """Delete a file.

        Args:
            path: The file, relative to the repository root.
        """
        return {"deleted": ws.delete_file(self.world, path)}

    # ---- running ----------------------------------------------------------------------------
    async def _run(self, source: str, argv: list[str], keep: bool, what: str) -> Result:
        assert self.task is not None
        repo = self.world
        n = repo.test_runs + repo.commands + 1
        job = SandboxJob(
            source=source,
            argv=argv,
            files=dict[str, str | bytes](repo.files),
            keep_files=keep,
            env={"PYTHONDONTWRITEBYTECODE": "1"},
            limits=RUN_LIMITS,
            seed=derive_seed(self.task.task_id, self.seed, what, n),
            main_file=ENTRY,
        )
        r = await self.judge.backend.arun(job)
        if r.status is Status.INTERNAL_ERROR:
            raise ToolError("internal", "the sandbox failed; nothing was run", retryable=True)
        return r

    @tool
    async def run_tests(self, selection: str = "") -> TestsReport:
        """Run the repository's visible tests and get a structured report.

        Args:
            selection: Empty for all tests; a file ("tests/test_x.py") or one test
                ("tests/test_x.py::test_name").
        """
        if len(selection) > 500:
            raise ToolError("invalid_arguments", "selection longer than 500 characters")
        if self.truth.mode == "command":
            report = await self.run_command(self.truth.visible_command)
            self.world.commands -= 1
            self.world.test_runs += 1
            ok = report.status == "ok" and report.exit_code == 0
            return TestsReport(
                collected=1,
                passed=int(ok),
                failed=int(not ok),
                errors=0,
                tests=[{"id": self.truth.visible_command, "outcome": "passed" if ok else "failed"}],
                collection_errors=[],
                exit_code=report.exit_code,
                status=report.status,
                output=ws.clip(report.stdout + report.stderr),
                note="this task's visible tests are one command; selection is ignored",
            )
        r = await self._run(TEST_RUNNER, [selection.strip()], False, "run_tests")
        self.world.test_runs += 1
        parsed, rest = parse_report(r.stdout)
        tests = entries(parsed, "tests")
        outcomes = [t.get("outcome") for t in tests]
        return TestsReport(
            collected=len(tests),
            passed=outcomes.count("passed"),
            failed=outcomes.count("failed"),
            errors=outcomes.count("error"),
            tests=tests[:200],
            collection_errors=entries(parsed, "errors"),
            exit_code=r.exit_code,
            status=str(r.status),
            output=normalize_output(ws.clip(rest + r.stderr, 4_000)),
            note=None
            if parsed is not None
            else "the test run ended before it reported (see output and exit_code)",
        )

    @tool(writes=True)
    async def run_command(self, command: str) -> CommandReport:
        """Run a command in the repository, in the sandbox (no network), e.g.
        "python -c 'import pkg; print(pkg.__version__)'" or "python scripts/check.py".

        Args:
            command: The command line, split like a POSIX shell does (no pipes; use
                "sh -c '...'" for shell syntax).
        """
        if not command.strip() or len(command) > MAX_COMMAND:
            raise ToolError("invalid_arguments", f"command must have 1 to {MAX_COMMAND} characters")
        try:
            argv = shlex.split(command)
        except ValueError as err:
            raise ToolError("invalid_arguments", f"cannot split the command: {err}") from None
        if not argv:
            raise ToolError("invalid_arguments", "empty command")
        r = await self._run(COMMAND, argv, True, "run_command")
        self.world.commands += 1
        note: str | None = None
        changed: list[str] = []
        if r.files is not None:
            if r.files_truncated:
                note = "the command's file changes were not kept: the workspace limit was exceeded"
            else:
                taken = take_in(self.world.files, r.files)
                self.world.files, changed, note = taken.files, taken.changed, taken.note()
        return CommandReport(
            status=str(r.status),
            exit_code=r.exit_code,
            stdout=normalize_output(ws.clip(r.stdout, 4_000)),
            stderr=normalize_output(ws.clip(r.stderr, 4_000)),
            limits_hit=r.limits_hit.names(),
            files_changed=changed,
            note=note,
        )

    @tool(ends_episode=True)
    def submit(self, summary: str = "") -> str:
        """Submit the repository as it is now; this ends the episode.

        Args:
            summary: What you changed and why (for the record).
        """
        self.world.submitted = True
        return summary  # the reply the episode is judged with, as a plain reply would be

    # ---- judging and the oracle -------------------------------------------------------------
    async def verify(self, task: Task, world: ws.Repo, reply: str) -> Verdict:
        return await judge_repo(self.judge, self.truth_of(task), world)

    def oracle_plan(self, task: Task) -> list[Action] | None:
        truth = self.truth_of(task)
        plan: list[Action] = [
            ToolCall(name="read_issue", arguments={"number": truth.target_issue}),
            ToolCall(name="run_tests", arguments={}),
        ]
        for s in truth.fix:
            if s.op == "edit":
                args = {"path": s.path, "old": s.old, "new": s.new}
                plan.append(ToolCall(name="edit_file", arguments=args))
            elif s.op == "create":
                plan.append(
                    ToolCall(name="create_file", arguments={"path": s.path, "content": s.new})
                )
            else:
                plan.append(ToolCall(name="delete_file", arguments={"path": s.path}))
        # the final action is a reply (which ends the episode like ``submit``), so the generic
        # state attacks, which edit the plan around its final reply, apply to this env too
        plan += [
            ToolCall(name="run_tests", arguments={}),
            Reply(text=f"Fixes #{truth.target_issue}."),
        ]
        return plan
