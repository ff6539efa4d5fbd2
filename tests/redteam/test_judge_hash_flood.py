"""Attack: stall the judge with a forged answer whose set elements all hash alike.

The candidate writes its own answer frame on the control channel: a ``$set`` of ~50k integers
that are all multiples of 2**61 - 1, so every one hashes to 0. The sandbox never decodes
answers; the judge does, and building that set is quadratic: tens of seconds of the judge's
own time per answer, outside every sandbox limit (a GRPO batch of such answers stalls
training). Success would mean the judge spends more than the job's limits plus a small
constant on one answer; the defence is a decoder that refuses hash-flooded sets and dicts
before building them, so its work is linear in what the job sent.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from gymforge.sandbox import Call, CallStatus, Limits, SandboxJob
from gymforge.sandbox.local import LocalBackend
from gymforge.verify.code import CodeJudge

FORGER = r"""
import json, os, struct

def f(x, tag="$set"):
    m = 2**61 - 1
    items = [i * m for i in range(1, 42_000)]
    if tag == "$dict":
        items = [[k, 0] for k in items[:30_000]]
    elif tag == "tuples":
        tag, items = "$set", [{"$tuple": [k]} for k in items[:20_000]]
    body = json.dumps({tag: items}, separators=(",", ":")).encode()
    head = json.dumps({"ev": "result", "id": 0, "status": "ok"}).encode()
    frame = struct.pack(">I", len(head)) + head + struct.pack(">I", len(body)) + body
    os.write(3, struct.pack(">I", len(frame)) + frame)
    os._exit(0)
"""

LIMITS = Limits(wall_time=5, cpu_time=3, call_timeout=3, return_bytes=1 << 20)


@pytest.mark.parametrize("tag", ["$set", "$frozenset", "$dict", "tuples"])
def test_a_hash_flooded_answer_frame_is_refused_undecoded(sandbox: LocalBackend, tag: str) -> None:
    job = SandboxJob(source=FORGER, calls=[Call(name="f", args=(1, tag))], limits=LIMITS)
    r = sandbox.run(job)
    (call,) = r.calls or []
    assert call.status is CallStatus.PROTOCOL_ERROR, call
    assert call.value is None and "hash flooding" in (call.error or ""), call.error


def test_the_judge_scores_a_flooded_answer_as_a_failure(code_judge: CodeJudge) -> None:
    task: dict[str, Any] = {
        "kind": "calls",
        "entry_point": "f",
        "tests": [{"args": [1], "expected": [1, 2]}, {"args": [2], "expected": [2, 4]}],
    }
    v = code_judge.judge(task, f"```python\n{FORGER}```")
    assert not v.passed and v.score == 0.0, v


@pytest.mark.slow
def test_a_flooded_answer_costs_the_judge_less_than_the_jobs_own_limits(
    sandbox: LocalBackend,
) -> None:
    """The timing the issue reported (10-45 s of judge time per answer), bounded now."""
    job = SandboxJob(source=FORGER, calls=[Call(name="f", args=(1,))], limits=LIMITS)
    t0 = time.process_time()
    sandbox.run(job)
    assert time.process_time() - t0 < 1.0


def test_a_forged_answer_longer_than_the_return_limit_is_refused(sandbox: LocalBackend) -> None:
    """The child never encodes more than ``Limits.return_bytes``; the control frame's cap
    leaves some slack for the header, which a forged value must not get to use."""
    src = FORGER.replace("range(1, 42_000)", "range(1, 5_000)")
    small = LIMITS.model_copy(update={"return_bytes": 100_000})
    r = sandbox.run(SandboxJob(source=src, calls=[Call(name="f", args=(1,))], limits=small))
    (call,) = r.calls or []
    assert call.status is CallStatus.PROTOCOL_ERROR, call
    assert "100000-byte cap" in (call.error or ""), call
