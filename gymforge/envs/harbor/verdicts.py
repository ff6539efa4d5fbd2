"""From the verifier's run to a ``Verdict`` and reward components.

``test.sh`` reports through ``/logs/verifier``: ``reward.txt`` holding one number, or
``reward.json`` holding an object of named numbers, each a reward component
``harbor.NAME``; exactly one of them, a regular file (``parse_rewards``). The episode
passes when the reward (the number, or the components' sum) is at least ``PASS_AT``, and
only when ``test.sh`` exited 0: the agent's code, which the tests import or run, can write
the file itself, so a reward from a ``test.sh`` that failed (``set -e`` stopping it before
it writes its own), was killed (exit code 128 or more) or passed the verifier timeout pays
nothing (the numbers it reported are kept as the ``reported`` fact). A missing, empty or
unparsable file is a failure with the reason named, never a silent zero, and so is a
workspace too large to copy out. The verdict records ``test.sh``'s exit code and the tail
of its output.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from gymforge.core.verdict import Verdict
from gymforge.envs.harbor.container import WORKSPACE_CAP, JudgeRun
from gymforge.reward.standard import StepCosts

PASS_AT = 1.0
MAX_COMPONENTS = 32
COMPONENT_PREFIX = "harbor."


class RewardFileError(ValueError):
    """The verifier wrote no usable reward file (the message says what was wrong)."""


def _number(text: str, where: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise RewardFileError(f"{where} holds {text.strip()[:40]!r}, not a number") from None
    if not math.isfinite(value):
        raise RewardFileError(f"{where} holds {value}, not a finite number")
    return value


def parse_rewards(
    logs: dict[str, bytes], refused: dict[str, str] | None = None
) -> tuple[str, dict[str, float]]:
    """(the file read, its components) from the reward files of ``/logs/verifier``.

    Exactly one reward file is read: an entry named like one that is not a regular file
    (``refused``) or both files at once is a failure, never a reason to read the other.
    The tests' process (the agent's code) can write ``/logs/verifier`` as the verifier's
    user, so the file ``test.sh`` did not write may be the agent's; a ``test.sh`` writes
    one of them.
    """
    if refused:
        name, what = next(iter(refused.items()))
        raise RewardFileError(f"{name} is {what}, not a reward file; no reward is read")
    if "reward.txt" in logs and "reward.json" in logs:
        raise RewardFileError(
            "both reward.txt and reward.json exist; a test.sh writes one, so the other may "
            "be the tested code's and neither is read"
        )
    if "reward.txt" in logs:
        text = logs["reward.txt"].decode("utf-8", "replace")
        if not text.strip():
            raise RewardFileError("reward.txt is empty")
        return "reward.txt", {"reward": _number(text, "reward.txt")}
    if "reward.json" in logs:
        try:
            doc = json.loads(logs["reward.json"])
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise RewardFileError(f"reward.json is not JSON: {err}") from None
        if not isinstance(doc, dict) or not doc or len(doc) > MAX_COMPONENTS:
            raise RewardFileError(
                f"reward.json must be an object of 1 to {MAX_COMPONENTS} named numbers"
            )
        out: dict[str, float] = {}
        for key, value in doc.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise RewardFileError(f"reward.json: {key!r} is {value!r}, not a number")
            out[str(key)[:64]] = _number(str(value), f"reward.json {key!r}")
        return "reward.json", out
    raise RewardFileError("test.sh wrote neither /logs/verifier/reward.txt nor reward.json")


def verdict_of(run: JudgeRun, facts: dict[str, object]) -> Verdict:
    """The verdict on one verifier run (see the module docstring)."""
    base = {
        **facts,
        "exit_code": run.exit_code,
        "output_tail": run.output_tail,
        "timed_out": run.timed_out,
    }
    if run.workspace_too_large:
        detail = (
            f"the workspace is larger than {WORKSPACE_CAP} bytes as copied out (sparse files "
            "count at their full size); the verifier did not run"
        )
        return Verdict(
            passed=False,
            reason="workspace_too_large",
            facts={**base, "detail": detail},
            verifier="harbor",
        )
    if run.timed_out:
        return Verdict(passed=False, reason="verifier_timeout", facts=base, verifier="harbor")
    if run.exit_code >= 128:
        detail = f"test.sh was killed (exit code {run.exit_code}); its reward file is not read"
        return Verdict(
            passed=False,
            reason="test_sh_killed",
            facts={**base, "detail": detail},
            verifier="harbor",
        )
    try:
        source, components = parse_rewards(run.logs, run.refused)
    except RewardFileError as err:
        return Verdict(
            passed=False, reason="no_reward", facts={**base, "detail": str(err)}, verifier="harbor"
        )
    total = sum(components.values())
    if run.exit_code != 0:
        detail = (
            f"test.sh exited {run.exit_code}; a reward counts only from a test.sh that exits "
            "0 (code the tests ran may have written the file before the script failed)"
        )
        facts = {**base, "reward_file": source, "reported": components, "detail": detail}
        return Verdict(passed=False, reason="test_sh_failed", facts=facts, verifier="harbor")
    passed = total >= PASS_AT
    return Verdict(
        passed=passed,
        reason=None if passed else "below_pass",
        facts={**base, "reward_file": source, "components": components, "reward": total},
        verifier="harbor",
    )


@dataclass(frozen=True)
class HarborReward:
    """The reward file's components (``harbor.NAME``), summed into the scalar; nothing
    when the verifier wrote none. The malformed-output penalty gymforge's policy adds."""

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        out: dict[str, float] = {}
        if costs.malformed_penalty:
            out["malformed"] = costs.malformed_penalty
        if verdict is not None:
            components = verdict.facts.get("components")
            if isinstance(components, dict):
                out.update({COMPONENT_PREFIX + k: float(v) for k, v in components.items()})
        return out
