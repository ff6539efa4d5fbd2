"""``public_info``: the one place a step's ``info`` is redacted for a served client. It
fails closed (unlisted keys and listed keys of the wrong type are withheld, and named in
``info["withheld"]``), leaves the verdict valid, and passes everything with QA hooks on."""

from __future__ import annotations

import asyncio
from typing import Any

from serve_helpers import TOKEN, Raw

from gymforge.core.types import Reply
from gymforge.core.verdict import Verdict
from gymforge.envs.math.env import MathEnv
from gymforge.serve.config import ServeConfig
from gymforge.serve.launch import ServerThread
from gymforge.trajectory.redact import PUBLIC_FACTS, WITHHELD, public_info

INFO: dict[str, Any] = {
    "verdict": {
        "passed": False,
        "score": 0.25,
        "reason": "wrong_answer",
        "facts": {
            "gold": "36036",
            "tests_run": 4,
            "tests_passed": 1,
            "form_ok": 1,  # declared bool: an int is not one
            "correct": [1, 2],  # declared int: a list is not one
            "brand_new_reference": "x = 42",
        },
        "verifier": "demo@1",
    },
    "end_reason": "verdict",
    "success": False,
    "hint": "the answer is 42",
}


def test_unlisted_and_mistyped_facts_are_withheld_and_named() -> None:
    shown = public_info(INFO, reveal=False)
    assert shown["verdict"]["facts"] == {"tests_run": 4, "tests_passed": 1}
    assert shown[WITHHELD] == sorted(
        [
            "info.hint",
            "verdict.facts.brand_new_reference",
            "verdict.facts.correct",
            "verdict.facts.form_ok",
            "verdict.facts.gold",
        ]
    )
    assert "42" not in str({k: v for k, v in shown.items() if k != WITHHELD})
    assert Verdict.model_validate(shown["verdict"]).reason == "wrong_answer"
    assert shown["end_reason"] == "verdict" and shown["success"] is False
    assert INFO["verdict"]["facts"]["gold"] == "36036"  # the original is untouched


def test_a_reason_that_is_not_a_code_is_withheld() -> None:
    info = {"verdict": {"passed": False, "reason": "expected 36036, got 7", "facts": {}}}
    shown = public_info(info, reveal=False)
    assert "reason" not in shown["verdict"] and shown[WITHHELD] == ["verdict.reason"]
    assert Verdict.model_validate(shown["verdict"]).reason is None


def test_nothing_withheld_means_no_withheld_key() -> None:
    info = {"tool_result": {"ok": True, "value": 3}, "success": True}
    assert public_info(info, reveal=False) == info
    assert public_info(INFO, reveal=True) is INFO


def test_every_public_fact_has_a_scalar_type() -> None:
    assert set(PUBLIC_FACTS.values()) <= {int, bool}
    assert not {"gold", "expected", "expected_codes", "cases", "findings"} & set(PUBLIC_FACTS)


def _math_failure(qa_hooks: bool) -> tuple[dict[str, Any], str]:
    env = MathEnv()
    task_id = env.tasks.sample(1, seed=3)[0]
    gold = env.truth_of(env.tasks.resolve(task_id)).answer
    local = asyncio.run(_fail_locally(env, task_id))
    assert local["verdict"]["facts"]["gold"] == gold  # the verifier does report it
    config = ServeConfig(token=TOKEN, qa_hooks=qa_hooks)
    with ServerThread("math", config) as server, Raw(server) as raw:
        raw.ask({"type": "reset", "task_id": task_id, "seed": 0})
        step = raw.ask({"type": "step", "action": {"kind": "reply", "text": "no idea"}})
    return step["info"], gold


async def _fail_locally(env: MathEnv, task_id: str) -> dict[str, Any]:
    await env.reset(task_id, 0)
    return (await env.step(Reply(text="no idea"))).info


def test_the_websocket_server_shows_the_gold_only_with_qa_hooks() -> None:
    hidden, gold = _math_failure(qa_hooks=False)
    assert "gold" not in hidden["verdict"]["facts"]
    assert "verdict.facts.gold" in hidden[WITHHELD]
    shown, gold = _math_failure(qa_hooks=True)
    assert shown["verdict"]["facts"]["gold"] == gold and WITHHELD not in shown
