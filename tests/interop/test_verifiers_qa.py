"""``gymforge qa`` on a real Verifiers 0.3.1 environment: Verifiers' own ``ReasoningGymEnv``
(``vf_leg_counting.py``), its rows and rubric as they are. Every check's status and reason is
pinned: what runs passes, and what Verifiers' contract does not supply (an oracle) is reported
as not applicable with the reason, never passed."""

from __future__ import annotations

from typing import Any

import pytest
from interop_helpers import by_name, gymforge_cli, needs, qa_report

pytestmark = needs("verifiers")

REF = "verifiers:tests.interop.vf_leg_counting"
NO_ORACLE = (
    "not applicable: not supplied by the framework (Verifiers 0.3.1): no oracle: a row's "
    "answer column is the rubric's input, not a reference reply"
)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return qa_report(REF, "--episodes", "12")


def test_report_header(report: dict[str, Any]) -> None:
    assert report["env"] == REF
    assert report["version"] == "1.0.0"
    assert report["passed"] is True  # every check that ran passed ...
    # ... and the three that could not run say so, apart from the ones that passed
    assert report["not_applicable"] == ["scripted_baselines", "verifier_redteam", "error_paths"]


def test_checks_that_run(report: dict[str, Any]) -> None:
    checks = by_name(report)
    ran = {
        "replay_determinism": "steps replayed identically on a fresh instance",
        "reset_isolation": "",
        "truncation_accounting": "all truncated (max_tokens), never terminated",
        "distribution_audit": "0.0% duplicates",
        "throughput": "steps/s at concurrency 4",
        "trajectory_schema": "validate against the JSON Schema",
        "heldout_exclusion": "held-out tasks refused by check_train",
    }
    for name, phrase in ran.items():
        check = checks[name]
        assert (check["status"], check["applicable"], check["passed"]) == ("pass", True, True), (
            check
        )
        assert phrase in check["details"], check


def test_oracle_checks_not_supplied(report: dict[str, Any]) -> None:
    checks = by_name(report)
    for name in ("scripted_baselines", "verifier_redteam", "error_paths"):
        check = checks[name]
        assert check["status"] == "not_applicable" and check["applicable"] is False, check
        assert check["details"].startswith(NO_ORACLE), check
        # the probe's evidence: the row's answer in the env's own parser's form scored 0
        assert "XMLParser(answer): reward 0.0" in check["details"], check
        assert "pass threshold 0.5" in check["details"], check


def test_heldout_is_the_eval_dataset(report: dict[str, Any]) -> None:
    metrics = by_name(report)["heldout_exclusion"]["metrics"]
    assert metrics["heldout_sampled"] >= 10 and metrics["training_tasks_checked"] > 0


def test_rubric_is_the_reward() -> None:
    """An episode's reward is the rubric's: the right answer (reasoning-gym's, which the row
    does not carry) earns the weighted reward functions, a wrong one nothing."""
    import asyncio

    from verifiers.legacy.utils.env_utils import load_environment

    from gymforge.core.types import Reply
    from gymforge.registry.resolve import make_env

    env = make_env(REF)
    vf_env = load_environment("tests.interop.vf_leg_counting")

    async def play(reply: str) -> tuple[float, dict[str, float], bool]:
        task_id = env.tasks.sample(1, 3, "train")[0]  # type: ignore[attr-defined]
        obs = await env.reset(task_id, 0)
        assert obs.messages[0].role == "system" and "<answer>" in obs.messages[0].content
        row = env.truth_of(env.tasks.resolve(task_id)).row  # type: ignore[attr-defined]
        gold = vf_env.rg_dataset[int(row["answer"])]["answer"]
        result = await env.step(Reply(text=reply.format(gold=gold)))
        return result.reward, result.reward_components, bool(result.info["success"])

    right = asyncio.run(play("<answer>{gold}</answer>"))
    wrong = asyncio.run(play("<answer>-1</answer>"))
    assert right == (1.0, {"rubric.check_answer_reward_func": 1.0}, True)
    assert wrong == (0.0, {"rubric.check_answer_reward_func": 0.0}, False)
    # what the rubric lets through, as gymforge reports it: reasoning-gym's default
    # score_answer gives len(gold)/len(reply) when the gold answer is a substring of the
    # reply, so a wrong number that contains the right one ("5001" for 500) scores 0.75, and
    # Verifiers' default pass_threshold (0.5) makes that a success
    padded = asyncio.run(play("<answer>{gold}1</answer>"))
    assert padded[0] == pytest.approx(padded[1]["rubric.check_answer_reward_func"])
    assert 0.5 <= padded[0] < 1.0 and padded[2] is True


def test_unknown_module_is_one_line() -> None:
    proc = gymforge_cli("qa", "verifiers:no_such_vf_env", "--check", "throughput")
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "verifiers:no_such_vf_env: Verifiers could not load it" in lines[0]
