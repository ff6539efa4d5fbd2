"""Judging the final repository of a ``swe`` episode.

Facts first, then the verdict: which protected files changed (any change fails the episode,
whatever the tests say), the diff size against the template, whether the visible tests were
run, and which hidden tests passed.

Hidden runs are **built, not inherited** (``build``): they start from a fresh copy of the
task's original files with only the agent's changes to source files applied; changes to
protected files, test directories, runner and start-up files, and modules that could shadow
the standard library or a test runner are dropped (``dropped_changes``). **No change, no
reward**: when none of the agent's changes reached the hidden run, the verdict is
``no_change`` with score 0, whatever the regression checks say; partial credit (``score``
below 1) counts only what the change earned (``earned_score``: checks the original repository
fails that now pass, less checks it broke), and a check whose call the agent was shown
(the issue's example, a visible test with the same call) earns nothing by
itself, so answering the disclosed example with a literal is not paid; nor does a removal
check (``@absent``: deleting the function satisfies it), so deleting is not paid either
(``not_credited``). Agent data never makes the
judge raise: the workspace's names and sizes were checked where they came in (``intake``),
and a workspace that still holds an unacceptable file fails with ``unacceptable_files``.

- ``checks`` mode: each hidden check is one plain-data call through the code judge's call
  path (``CodeJudge.ajudge`` on a ``calls`` truth, the built tree as the job's files): the
  sandbox returns what the workspace's function returned, as plain data, and the judge
  compares it type-strictly in its own process. Expected values never leave this process.
- ``command`` mode (user task files): after ``submit``, one fresh sandbox job holds the built
  tree with the row's hidden test files laid over it, and runs the hidden command through
  ``runner.HIDDEN_COMMAND``: no Python it starts puts the repository ahead of the standard
  library on ``sys.path``. Every file of that job is read-only to it (``read_only_files``:
  the kernel refuses any write, create, rename or delete, so no file can be rewritten even
  for a moment and put back; ``HOME``/``TMPDIR`` is the one writable place), and the verdict
  says ``agent_files_read_only: true``. The hidden command's exit status decides; a run whose
  judge-owned files came back changed fails too (``tampered_during_run``, a second lock). The
  agent's source code runs in the tests' process, so this mode is weaker, and the verdict
  says ``weaker_mode: true``.
"""

from __future__ import annotations

import hashlib
import shlex
from collections import OrderedDict
from typing import Any

from gymforge.core.verdict import Verdict
from gymforge.envs.swe.build import Built, built_tree
from gymforge.envs.swe.issues import call_text
from gymforge.envs.swe.runner import BOOT_FILES, CALL_DISPATCH, CALL_ENTRY, ENTRY, HIDDEN_COMMAND
from gymforge.envs.swe.truth import ABSENT, Check, SweTruth
from gymforge.envs.swe.workspace import Repo, diff_lines, protected_changes
from gymforge.sandbox import Limits, SandboxJob, Status
from gymforge.sandbox.intake import refusal
from gymforge.verify.code import CodeJudge
from gymforge.verify.code.tally import MAX_CASES

VERIFIER = "swe/1"
MAX_BASELINES = 512
_BASELINES: OrderedDict[str, dict[str, bool]] = OrderedDict()
HIDDEN_LIMITS = Limits(
    wall_time=30.0, cpu_time=20.0, output_bytes=256 << 10, workspace_bytes=8 << 20
)


async def judge_repo(judge: CodeJudge, truth: SweTruth, repo: Repo) -> Verdict:
    changed = protected_changes(truth.files, repo.files, truth.protected)
    lines, files = diff_lines(truth.files, repo.files)
    facts: dict[str, Any] = {
        "mode": "plain_value_calls" if truth.mode == "checks" else "post_submit_command",
        "weaker_mode": truth.mode == "command",
        "target_issue": truth.target_issue,
        "protected_changed": changed,
        "diff_lines": lines,
        "files_changed": files,
        "visible_tests_run": repo.test_runs > 0,
        "visible_test_runs": repo.test_runs,
        "submitted": repo.submitted,
    }
    refused = sorted(p for p in repo.files if refusal(p) is not None)
    if refused:  # unreachable through the tools (``intake``); never a verifier error
        facts["unacceptable_files"] = [
            p.encode("utf-8", "backslashreplace").decode() for p in refused
        ]
        return Verdict(
            passed=False, score=0.0, reason="unacceptable_files", facts=facts, verifier=VERIFIER
        )
    built = built_tree(truth.files, repo.files, truth.protected, truth.hidden_files)
    facts["dropped_changes"] = sorted(built.dropped)
    if truth.mode == "checks":
        results = await _checks(judge, truth, built.files)
        facts["hidden_tests"] = results
    else:
        ok, status, tampered = await _command(judge, truth, built)
        results = {"hidden_command": ok}
        facts["hidden_tests"] = results
        facts["hidden_status"] = status
        facts["tampered_during_run"] = tampered
        facts["agent_files_read_only"] = True
    passed_n = sum(results.values())
    facts["hidden_passed"], facts["hidden_total"] = passed_n, len(results)
    all_pass = bool(results) and passed_n == len(results)
    reason = None
    if changed:
        reason = "protected_files_changed"
    elif not built.changed:
        reason = "no_change"
    elif not all_pass:
        reason = "hidden_tests_failed"
    score = 0.0  # no change (or a protected one), no reward
    if results and not changed and built.changed:
        score = float(all_pass)
        if truth.mode == "checks" and not all_pass:
            base = await _baseline(judge, truth)
            facts["hidden_failing_before"] = sum(not base.get(k, False) for k in results)
            score = earned_score(results, base, not_credited(truth))
    return Verdict(
        passed=reason is None,
        score=score,
        reason=reason,
        facts=facts,
        verifier=VERIFIER,
    )


def earned_score(
    results: dict[str, bool], base: dict[str, bool], alone: frozenset[str] = frozenset()
) -> float:
    """Partial credit for what the change earned: the checks the original repository fails
    that now pass, less the ones it passed that now fail, over the ones it fails (0 at
    worst). A check the untouched repository already passes is worth nothing by itself, and
    neither is a check in ``alone`` (``not_credited``: a literal or a deletion passes it)."""
    failing = [k for k in results if not base.get(k, False)]
    if not failing or all(results.values()):
        return float(all(results.values()))
    fixed = sum(results[k] for k in failing if k not in alone)
    broken = sum(1 for k, ok in results.items() if base.get(k, False) and not ok)
    return max(0, fixed - broken) / len(failing)


def not_credited(truth: SweTruth) -> frozenset[str]:
    """The hidden checks that earn no partial credit by themselves, because passing one
    proves no fix: a removal check (``@absent``: deleting the function passes it), and a
    check whose call the agent can read verbatim (``name(args...)`` as an issue shows it) in
    a tracker issue, one of its comments or a file of the original repository (its answer was
    shown: a literal passes it)."""
    texts = [t for i in truth.issues for t in (i.title, i.body, *(c.body for c in i.comments))]
    texts += truth.files.values()

    def shown(c: Check) -> bool:
        name = c.target.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
        return not c.kwargs and any(call_text(name, c.args) in t for t in texts)

    return frozenset(c.name for c in truth.checks if c.target.startswith(ABSENT) or shown(c))


async def _baseline(judge: CodeJudge, truth: SweTruth) -> dict[str, bool]:
    """The hidden checks' results on the original repository (once per task and process)."""
    key = hashlib.sha256(truth.model_dump_json(include={"files", "checks"}).encode()).hexdigest()
    if key not in _BASELINES:
        _BASELINES[key] = await _checks(judge, truth, dict(truth.files))
        while len(_BASELINES) > MAX_BASELINES:
            _BASELINES.popitem(last=False)
    return _BASELINES[key]


async def _checks(judge: CodeJudge, truth: SweTruth, files: dict[str, str]) -> dict[str, bool]:
    out: dict[str, bool] = {}
    checks = truth.checks
    for i in range(0, len(checks), MAX_CASES):
        batch = checks[i : i + MAX_CASES]
        calls = {
            "kind": "calls",
            "entry_point": CALL_ENTRY,
            "tests": [
                {"args": [c.target, c.args, c.kwargs], "expected": c.expected} for c in batch
            ],
        }
        v = await judge.ajudge(calls, CALL_DISPATCH, "python", detail=True, files=files)
        cases = list(v.facts.get("cases") or [])
        for j, c in enumerate(batch):
            out[c.name] = bool(j < len(cases) and cases[j]["ok"])
    return out


def hidden_files(truth: SweTruth, built: Built) -> dict[str, str]:
    """The hidden run's job directory: the built tree, the row's hidden test files over it, and
    the judge's ``sys.path`` boot files."""
    return {**built.files, **truth.hidden_files, **BOOT_FILES}


async def _command(judge: CodeJudge, truth: SweTruth, built: Built) -> tuple[bool, str, list[str]]:
    """(passed, status, judge-owned files the run changed). The job's files are read-only to
    it; it still hands them back, and a run whose files came back changed fails whatever it
    exited with."""
    laid = hidden_files(truth, built)
    job = SandboxJob(
        source=HIDDEN_COMMAND,
        argv=shlex.split(truth.hidden_command),
        files=dict[str, str | bytes](laid),
        env={"PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"},
        limits=HIDDEN_LIMITS,
        keep_files=True,
        read_only_files=True,
        main_file=ENTRY,
    )
    r = await judge.backend.arun(job)
    if r.status is Status.INTERNAL_ERROR:
        raise RuntimeError(f"sandbox internal error: {r.error}")
    after = r.files or {}
    tampered = sorted(p for p in laid if after.get(p) != laid[p].encode())
    if r.files_truncated:
        tampered = tampered or ["(the run's files exceeded the workspace limit)"]
    ok = r.status is Status.OK and r.exit_code == 0 and not tampered
    return ok, str(r.status), tampered
