"""``verifiers:MODULE``: a Verifiers (0.3.1, ``verifiers.legacy``) environment as a gymforge one.

``MODULE`` is what Verifiers itself loads: an importable module (an installed environment
package, or a module on the path) whose ``load_environment()`` returns the environment;
Verifiers' own ``load_environment(env_id)`` imports it (``-`` in an id reads as ``_``).

- **Tasks** are the environment's dataset rows (``rows.py``): ``get_dataset()`` is the training
  split, ``get_eval_dataset()`` the held-out one.
- **The episode** renders the row's ``prompt`` messages (system prompt and few-shot included,
  as Verifiers formats them); the first reply is the completion.
- **The verdict** is the environment's own rubric (``rubric.score_rollout``) on a state built by
  its own ``init_state``: its reward is the weighted sum of its reward functions, and it passes
  at the environment's ``pass_threshold``. Each weighted function is one reward component, so
  the scalar is the rubric's reward (zero-weight functions are kept as facts, not reward).

What the framework does not supply is declared not applicable with the reason, found by
probing, never assumed: an oracle (a Verifiers row's ``answer`` is the rubric's input, not a
reply; it is one only if the rubric gives a formatted ``answer`` full marks on every probed
row), and a held-out split (when the environment has no eval dataset). Multi-turn environments
(``env_response``) are refused with a clear error: only single-turn ones are adapted.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version
from typing import Any

import verifiers.legacy as vf
from verifiers.legacy.utils.env_utils import load_environment

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.errors import UserError
from gymforge.core.qa_profile import QAProfile, ThroughputBudget, not_supplied
from gymforge.core.types import Action, Message, Reply, Task
from gymforge.core.verdict import Verdict
from gymforge.envs.verifiers_adapter.rows import VfRowTruth, as_dataset
from gymforge.kit.tool_env import ToolEnv
from gymforge.reward.standard import StepCosts
from gymforge.tasks import Split, TaskSource

VF_VERSION = version("verifiers")
FRAMEWORK = f"Verifiers {VF_VERSION}"

ORACLE_CHECKS = ("scripted_baselines", "verifier_redteam", "error_paths")
"""The checks that need a known-good run (an oracle); without one they are not applicable."""

ORACLE_PROBES = 3
"""Training rows on which a candidate oracle reply must pass the rubric."""


@dataclass(frozen=True)
class RubricReward:
    """The rubric's weighted reward functions as components (their sum is its reward), plus
    the malformed-output penalty gymforge's policy adds."""

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        out: dict[str, float] = {}
        if costs.malformed_penalty:
            out["malformed"] = costs.malformed_penalty
        if verdict is not None:
            weighted = verdict.facts.get("weighted", {})
            out.update({f"rubric.{k}": float(v) for k, v in weighted.items()})
        return out


def _oracle_formats(env: vf.Environment) -> list[tuple[str, Callable[[str], str]]]:
    """Ways to turn a row's ``answer`` into a reply, in the order probed."""
    formats: list[tuple[str, Callable[[str], str]]] = [("answer", lambda a: a)]
    parser = env.parser
    if isinstance(parser, vf.XMLParser):
        formats.insert(0, ("parser.format(answer=...)", lambda a: parser.format(answer=a)))
    return formats


async def score(env: vf.Environment, row: dict[str, Any], reply: str) -> Verdict:
    """The rubric's verdict on ``reply`` as the completion of ``row``."""
    state = await env.init_state(row, client=vf.ClientConfig(), model="gymforge")
    state["completion"] = [{"role": "assistant", "content": reply}]
    await env.rubric.score_rollout(state)
    reward = float(state["reward"] or 0.0)
    metrics = {k: float(v) for k, v in (state["metrics"] or {}).items()}
    weights = dict(
        zip(env.rubric._get_reward_func_names(), env.rubric._get_reward_weights(), strict=True)
    )
    weighted = {k: w * metrics[k] for k, w in weights.items() if w and k in metrics}
    passed = reward >= env.pass_threshold
    return Verdict(
        passed=passed,
        reason=None if passed else "below_pass_threshold",
        facts={"reward": reward, "metrics": metrics, "weighted": weighted},
        verifier=f"verifiers:{type(env).__name__}@{VF_VERSION}",
    )


def _probe_oracle(
    env: vf.Environment, rows: list[dict[str, Any]], run: Callable[[Any], Any]
) -> tuple[str | None, str | None]:
    """(the oracle format that passes every probed row, None) or (None, why there is none)."""
    if not rows or any(not isinstance(r.get("answer"), str) or not r["answer"] for r in rows):
        return None, "its dataset rows have no answer to build a reply from"
    tried = []
    for label, fmt in _oracle_formats(env):
        verdicts = [run(score(env, r, fmt(r["answer"]))) for r in rows]
        if all(v.passed for v in verdicts):
            return label, None
        tried.append(f"{label}: reward {min(v.facts['reward'] for v in verdicts)}")
    return None, (
        "a row's answer column is the rubric's input, not a reference reply: as a reply "
        f"({'; '.join(tried)}) it does not reach the pass threshold {env.pass_threshold}"
    )


class VerifiersEnv(ToolEnv[VfRowTruth, dict[str, Any]]):
    """Base of the per-module classes ``env_class`` builds; not used directly."""

    vf_env: vf.Environment
    oracle_format: str | None = None
    budget = Budget(max_steps=1, max_tokens=32_768)
    reward = RubricReward()

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    def render_reset(self, task: Task) -> list[Message]:
        prompt = self.truth_of(task).row.get("prompt")
        if not isinstance(prompt, list):
            return super().render_reset(task)
        return [Message(role=m["role"], content=str(m.get("content") or "")) for m in prompt]

    async def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        return await score(self.vf_env, self.truth_of(task).row, reply)

    def oracle_plan(self, task: Task) -> list[Action] | None:
        answer = self.truth_of(task).row.get("answer")
        if self.oracle_format is None or not isinstance(answer, str):
            return None
        fmt = dict(_oracle_formats(self.vf_env))[self.oracle_format]
        return [Reply(text=fmt(answer))]


def _load(module: str) -> vf.Environment:
    try:
        with vf.log_level("CRITICAL"):  # its loader logs the failure too: one line is ours
            env = load_environment(module)
    except Exception as err:
        raise UserError(
            f"verifiers:{module}: Verifiers could not load it ({type(err).__name__}: {err}); "
            "give a module whose load_environment() returns a Verifiers environment"
        ) from err
    if not isinstance(env, vf.Environment):
        raise UserError(f"verifiers:{module}: load_environment() returned {type(env).__name__}")
    if not isinstance(env, vf.SingleTurnEnv):
        raise UserError(
            f"verifiers:{module}: {type(env).__name__} is multi-turn (env_response); only "
            "single-turn Verifiers environments (SingleTurnEnv) are adapted"
        )
    return env


@cache
def env_class(module: str) -> type[VerifiersEnv]:
    """The gymforge environment class of Verifiers environment ``module`` (built once)."""
    vf_env = _load(module)
    name = f"verifiers.{module}"
    train = as_dataset(f"{name}.train", vf_env.get_dataset(), "train")
    tasks = TaskSource({}, Split()).with_dataset(train)
    not_applicable: dict[str, str] = {}
    if vf_env.eval_dataset_source is not None or vf_env.eval_dataset is not None:
        held = as_dataset(f"{name}.eval", vf_env.get_eval_dataset(), "heldout")
        tasks = TaskSource({}, Split(families=frozenset({held.name}))).with_dataset(train)
        tasks = tasks.with_dataset(held)
    else:
        not_applicable["heldout_exclusion"] = not_supplied(
            FRAMEWORK, "the environment has no eval_dataset to hold out"
        )
    rows = [VfRowTruth.model_validate(t.truth).row for t in train.tasks[:ORACLE_PROBES]]
    oracle, gap = _probe_oracle(vf_env, rows, asyncio.run)
    if gap is not None:
        not_applicable.update(
            {c: not_supplied(FRAMEWORK, f"no oracle: {gap}") for c in ORACLE_CHECKS}
        )
    attrs: dict[str, Any] = {
        "vf_env": vf_env,
        "oracle_format": oracle,
        "spec": EnvSpec(
            f"verifiers:{module}",
            "1.0.0",
            renderer_version="1",
            description=f"{FRAMEWORK} environment {type(vf_env).__name__} from {module!r}.",
        ),
        "tasks": tasks,
        "qa": QAProfile(
            # the rubric is the environment's own code: no generic verifier kind applies
            throughput=ThroughputBudget(reset_p50_ms=50.0, steps_per_s=20.0, concurrency=4),
            not_applicable=not_applicable,
        ),
    }
    if oracle is None:
        attrs["oracle_action"] = None  # not SupportsOracle: QA and policies see no oracle
    return type(f"Verifiers_{module.replace('.', '_')}", (VerifiersEnv,), attrs)
