"""``digits``: single-digit sums, built to be learnable by a tiny model from scratch.

The prompt is the bare expression ``"a+b="`` with ``0 <= a, b <= 9``; the answer is the sum
in decimal: one token at difficulty 1 (totals 0-9), two at difficulty 2 (totals 10-18) for
any tokenizer that makes each digit one token. The verifier is an exact match on the whole
reply (surrounding whitespace ignored): hedges, lists, spaced digits or extra words fail.

Held-out split: every sum whose first operand is larger than the second (``7+2=``). Training
sees each pair only in ascending order (``2+7=``), so held-out success measures whether a
policy learned addition rather than a lookup table keyed on operand order.

Reward: ``task`` (1.0 when the verdict passes) plus a small ``format`` component (+0.1)
when the reply is a bare decimal number, read from the verdict's facts, and the standard
``step_cost``. The task space is small by design (100 problems), so the duplicate rate of
a large sample is high; ``QAProfile.max_duplicate_rate`` declares that.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.types import Action, Reply, Task
from gymforge.kit.redteam import CraftedReply
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa_profile import Baselines, QAProfile, RedTeamCase, ThroughputBudget
from gymforge.reward.standard import StandardReward, StepCosts
from gymforge.tasks import AnswerTruth, IntKnob, ParamSpace, Split, TaskFamily, TaskSource
from gymforge.tasks.split import Region
from gymforge.tasks.trusted import trusted
from gymforge.verify import Verdict

_NUMBER = re.compile(r"\d{1,3}")


class SumFamily(TaskFamily[AnswerTruth]):
    """``a+b=`` with the answer ``a+b``; ``levels`` split on the size of the total."""

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        a, b = params["a"], params["b"]
        return f"{a}+{b}=", trusted(AnswerTruth, answer=str(a + b))  # a str it made


def _level(lo: int, hi: int) -> ParamSpace:
    return ParamSpace(
        {"a": IntKnob(0, 9), "b": IntKnob(0, 9)},
        constraint=lambda p: lo <= p["a"] + p["b"] <= hi,
    )


FAMILY = SumFamily("digits.sum", 1, {1: _level(0, 9), 2: _level(10, 18)})
HELDOUT: dict[str, Region] = {"first_operand_larger": lambda p: p["a"] > p["b"]}


@dataclass(frozen=True)
class DigitsReward:
    """``StandardReward`` plus ``format`` (+``format_weight`` for a bare number reply)."""

    base: StandardReward = field(default_factory=StandardReward)
    format_weight: float = 0.1

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        out = self.base(verdict, costs)
        if verdict is not None and verdict.facts.get("is_number") and self.format_weight:
            out["format"] = self.format_weight
        return out


def verify_sum(answer: str, reply: str) -> Verdict:
    """Exact match of the stripped reply against ``answer``; facts say what was seen."""
    text = reply.strip()
    is_number = bool(_NUMBER.fullmatch(text))
    passed = is_number and text == answer
    reason = None if passed else ("wrong_answer" if is_number else "not_a_number")
    return Verdict(
        passed=passed,
        reason=reason,
        facts={"is_number": is_number, "reply_chars": len(text)},
        verifier="digits.exact@1",
    )


def problem_ids(split: str, difficulty: int) -> list[str]:
    """Every distinct problem of ``split`` (``train`` or ``heldout``) at ``difficulty``, one
    task id each (explicit params, generation seed 0), in ``(a, b)`` order: the complete
    evaluation sets of the baseline."""
    level = FAMILY.levels[difficulty]
    ids = []
    for a in range(10):
        for b in range(10):
            params = {"a": a, "b": b}
            if not level.contains(params):
                continue
            held = any(pred(params) for pred in HELDOUT.values())
            if held == (split == "heldout"):
                ids.append(FAMILY.variant_id(params, 0))
    return ids


def _wrong_tail(text: str) -> str:
    return f"{text.strip()}{(int(text.strip()[-1]) + 1) % 10}"


class DigitsEnv(ToolEnv[AnswerTruth, dict[str, Any]]):
    """Single turn, no tools: the first reply is verified."""

    spec = EnvSpec(
        "digits",
        "1.0.0",
        renderer_version="1",
        description="Single-digit sums (a+b=) for tiny-model training baselines.",
    )
    tasks = TaskSource.of([FAMILY], Split(regions={FAMILY.name: HELDOUT}))
    budget = Budget(max_steps=2, max_tokens=64)
    reward = DigitsReward()
    qa = QAProfile(
        verifier_kinds=("match",),
        redteam=(
            RedTeamCase(
                "digits.extra_digit",
                lambda: CraftedReply(_wrong_tail),
                "the right answer with one more digit appended",
            ),
            RedTeamCase(
                "digits.expression_echo",
                lambda: CraftedReply(lambda text: f"={text.strip()}"),
                "the answer behind an echoed equals sign",
            ),
        ),
        throughput=ThroughputBudget(reset_p50_ms=5.0, steps_per_s=500.0),
        # a wrong bare number is paid the format bonus and nothing else, by design
        baselines=Baselines(bad_reward_max=DigitsReward().format_weight),
        # 100 problems in all, 55 trainable, by design; a generator collapsed to one or two
        # prompts still fails (over 98% duplicates in any sample of 200 or more)
        max_duplicate_rate=0.98,
    )

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        return verify_sum(self.truth_of(task).answer, reply)

    def oracle_plan(self, task: Task) -> list[Action]:
        return [Reply(text=self.truth_of(task).answer)]
