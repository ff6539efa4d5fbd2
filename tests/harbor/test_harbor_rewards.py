"""From a verifier run to a verdict and reward components, without an engine."""

from __future__ import annotations

import pytest

from gymforge.envs.harbor.container import JudgeRun
from gymforge.envs.harbor.verdicts import (
    HarborReward,
    RewardFileError,
    parse_rewards,
    verdict_of,
)
from gymforge.reward.standard import StepCosts


def run(
    logs: dict[str, bytes],
    exit_code: int = 0,
    timed_out: bool = False,
    refused: dict[str, str] | None = None,
) -> JudgeRun:
    return JudgeRun(exit_code, "tail of the output\n", timed_out, logs, refused or {})


def test_reward_txt_is_one_component_and_passes_at_one() -> None:
    v = verdict_of(run({"reward.txt": b"1\n"}), {})
    assert v.passed and v.facts["components"] == {"reward": 1.0}
    assert v.facts["exit_code"] == 0 and v.facts["output_tail"] == "tail of the output\n"
    assert HarborReward()(v, StepCosts()) == {"harbor.reward": 1.0}
    low = verdict_of(run({"reward.txt": b"0.25"}), {})
    assert not low.passed and low.reason == "below_pass"
    assert HarborReward()(low, StepCosts()) == {"harbor.reward": 0.25}


def test_reward_json_components_are_each_a_reward_component() -> None:
    v = verdict_of(run({"reward.json": b'{"header": 0.5, "value": 0.5}'}), {})
    assert v.passed and v.facts["reward_file"] == "reward.json"
    assert HarborReward()(v, StepCosts()) == {"harbor.header": 0.5, "harbor.value": 0.5}


def test_both_reward_files_are_refused_not_one_preferred() -> None:
    # Harbor reads reward.txt first; here the tested code could have planted either one
    with pytest.raises(RewardFileError, match="both"):
        parse_rewards({"reward.txt": b"0", "reward.json": b'{"a": 1}'})
    v = verdict_of(run({"reward.json": b'{"a": 1}'}, refused={"reward.txt": "a symlink"}), {})
    assert not v.passed and v.reason == "no_reward" and "symlink" in v.facts["detail"]


@pytest.mark.parametrize(
    ("logs", "detail"),
    [
        ({}, "neither"),
        ({"reward.txt": b"  \n"}, "empty"),
        ({"reward.txt": b"pass"}, "not a number"),
        ({"reward.txt": b"nan"}, "finite"),
        ({"reward.json": b"[1]"}, "object"),
        ({"reward.json": b"{}"}, "object"),
        ({"reward.json": b'{"a": "1"}'}, "not a number"),
        ({"reward.json": b'{"a": true}'}, "not a number"),
        ({"reward.json": b"{"}, "not JSON"),
    ],
)
def test_an_unusable_reward_file_is_a_named_failure_with_no_components(
    logs: dict[str, bytes], detail: str
) -> None:
    v = verdict_of(run(logs, exit_code=1), {})
    assert not v.passed and v.reason == "no_reward" and detail in v.facts["detail"]
    assert v.facts["exit_code"] == 1
    assert HarborReward()(v, StepCosts()) == {}


def test_a_killed_or_timed_out_test_sh_is_a_failure_whatever_the_file_says() -> None:
    killed = verdict_of(run({"reward.txt": b"1"}, exit_code=137), {})
    assert not killed.passed and killed.reason == "test_sh_killed"
    assert HarborReward()(killed, StepCosts()) == {}
    late = verdict_of(run({"reward.txt": b"1"}, exit_code=124, timed_out=True), {})
    assert not late.passed and late.reason == "verifier_timeout"


def test_a_reward_from_a_test_sh_that_failed_pays_nothing() -> None:
    v = verdict_of(run({"reward.txt": b"1"}, exit_code=1), {})
    assert not v.passed and v.reason == "test_sh_failed"
    assert v.facts["reported"] == {"reward": 1.0} and "components" not in v.facts
    assert HarborReward()(v, StepCosts()) == {}
