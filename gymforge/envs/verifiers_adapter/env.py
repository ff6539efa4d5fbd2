"""``verifiers:MODULE``: a Verifiers (0.3.1, ``verifiers.legacy``) environment as a gymforge one.

``MODULE`` is what Verifiers itself loads: an importable module (an installed environment
package, or a module on the path) whose ``load_environment()`` returns the environment;
Verifiers' own ``load_environment(env_id)`` imports it (``-`` in an id reads as ``_``).

- **Tasks** are the environment's dataset rows (``rows.py``): ``get_dataset()`` is the training
  split, ``get_eval_dataset()`` the held-out one.
- **The episode** follows Verifiers' own rollout loop (``episode.py``): the row's ``prompt``
  messages as Verifiers formats them (system prompt and few-shot included), each reply a model
  turn, the environment's ``env_response`` after it, its stop conditions ending the episode. A
  multi-turn environment's ``max_turns`` truncates (gymforge's step budget); tool-calling
  environments are refused with a clear error (only text turns are adapted).
- **The verdict** is the environment's own rubric (``rubric.score_rollout``) on that state,
  run in the sandbox (``sandboxed.py``: the state as plain data in, plain floats out; a
  rubric that crashes, exits or times out is that episode's verifier error): its reward is
  the weighted sum of its reward functions, and it passes at the environment's
  ``pass_threshold``. Each weighted function is one reward component, so the scalar is the
  rubric's reward (zero-weight functions are kept as facts, not reward).

What the framework does not supply is declared not applicable with the reason, found by
probing, never assumed: an oracle (a Verifiers row's ``answer`` is the rubric's input, not a
reply; it is one only if the rubric passes it, written in the form the environment's parser
reads (``replies.py``), on every probed row; a multi-turn environment has none), and a
held-out split (when the environment has no eval dataset). With an oracle, the verifier red
team is ``redteam.py``'s cases, written in that same form.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import verifiers.legacy as vf
from verifiers.legacy.utils.env_utils import load_environment

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.errors import UserError
from gymforge.core.types import Action, Message, Reply, State, Task
from gymforge.core.verdict import Verdict
from gymforge.envs.verifiers_adapter.episode import VF_VERSION, VfEpisode, to_messages
from gymforge.envs.verifiers_adapter.redteam import cases_for, train_answers
from gymforge.envs.verifiers_adapter.replies import ReplyForm, reply_forms
from gymforge.envs.verifiers_adapter.rows import VfRowTruth, as_dataset
from gymforge.envs.verifiers_adapter.sandboxed import require
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa_profile import QAProfile, ThroughputBudget, not_supplied
from gymforge.reward.standard import StepCosts
from gymforge.tasks import Split, TaskSource

FRAMEWORK = f"Verifiers {VF_VERSION}"

ORACLE_CHECKS = ("scripted_baselines", "verifier_redteam", "error_paths")
"""The checks that need a known-good run (an oracle); without one they are not applicable."""

MAX_TURNS_UNSET = 64
"""The step budget of a multi-turn environment whose ``max_turns`` is unset (-1)."""

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


async def score_trusted(
    env: vf.Environment, module: str, row: dict[str, Any], reply: str
) -> Verdict:
    """The rubric's verdict, in this process, on a one-turn episode of ``row`` answered with
    ``reply``: only for the environment's own text (the oracle probe), never a policy's."""
    episode = await VfEpisode.start(env, module, row)
    await episode.reply(reply)
    return await episode.score_trusted()


def _probe_oracle(
    env: vf.Environment, module: str, rows: list[dict[str, Any]], run: Callable[[Any], Any]
) -> tuple[ReplyForm | None, str | None]:
    """(the reply form that passes every probed row, None) or (None, why there is none)."""
    if not rows or any(not isinstance(r.get("answer"), str) or not r["answer"] for r in rows):
        return None, "its dataset rows have no answer to build a reply from"
    forms = reply_forms(env.parser)
    if not forms:
        return None, (
            f"its {type(env.parser).__name__} reads its answer from no field it declares "
            f"(answer_field {getattr(env.parser, 'answer_field', None)!r})"
        )
    tried = []
    for form in forms:
        verdicts = [run(score_trusted(env, module, r, form.reply(r["answer"]))) for r in rows]
        if all(v.passed for v in verdicts):
            return form, None
        tried.append(f"{form.label}: reward {min(v.facts['reward'] for v in verdicts)}")
    return None, (
        "a row's answer column is the rubric's input, not a reference reply: as a reply "
        f"({'; '.join(tried)}) it does not reach the pass threshold {env.pass_threshold}"
    )


class VerifiersEnv(ToolEnv[VfRowTruth, dict[str, Any]]):
    """Base of the per-module classes ``env_class`` builds; not used directly."""

    vf_env: vf.Environment
    module: str
    oracle_form: ReplyForm | None = None
    budget = Budget(max_steps=1, max_tokens=32_768)
    reward = RubricReward()

    def __init__(self) -> None:
        super().__init__()
        self.episode: VfEpisode | None = None

    async def on_reset(self, task: Task) -> None:
        await self._end_episode()  # an episode left unfinished still gets Verifiers' cleanup
        self.episode = await VfEpisode.start(self.vf_env, self.module, self.truth_of(task).row)

    def preflight(self) -> None:
        """Refuse, in one line, a machine where the rubric cannot run sandboxed."""
        require(self.module)

    async def _end_episode(self) -> None:
        if self.episode is not None:
            await self.episode.cleanup()

    async def close(self) -> None:
        await self._end_episode()
        await super().close()

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    def state(self) -> State:
        return {"turns": self.episode.turns() if self.episode is not None else []}

    def render_reset(self, task: Task) -> list[Message]:
        assert self.episode is not None
        return to_messages(self.episode.prompt)

    async def on_reply(self, text: str) -> list[Message] | None:
        assert self.episode is not None
        return await self.episode.reply(text)

    async def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        assert self.episode is not None
        return await self.episode.score()

    def oracle_plan(self, task: Task) -> list[Action] | None:
        answer = self.truth_of(task).row.get("answer")
        if self.oracle_form is None or not isinstance(answer, str):
            return None
        return [Reply(text=self.oracle_form.reply(answer))]


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
    if not isinstance(env, vf.MultiTurnEnv):
        raise UserError(
            f"verifiers:{module}: {type(env).__name__} is not a MultiTurnEnv (nor a "
            "SingleTurnEnv), the rollout loop this adapter follows"
        )
    if env.tool_defs:
        raise UserError(
            f"verifiers:{module}: {type(env).__name__} has tools; tool calls are not adapted "
            "(only text turns)"
        )
    return env


def _budget(env: vf.Environment) -> Budget:
    """One turn for a single-turn environment; a multi-turn one's ``max_turns`` (or 64 when
    it sets none) as the step budget that truncates."""
    if isinstance(env, vf.SingleTurnEnv):
        return Budget(max_steps=1, max_tokens=32_768)
    turns = env.max_turns if env.max_turns > 0 else MAX_TURNS_UNSET
    return Budget(max_steps=turns, max_tokens=32_768)


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
    oracle: ReplyForm | None = None
    gap: str | None = "a multi-turn Verifiers environment has no reference solution path"
    if isinstance(vf_env, vf.SingleTurnEnv):
        oracle, gap = _probe_oracle(vf_env, module, rows, asyncio.run)
    if gap is not None:
        not_applicable.update(
            {c: not_supplied(FRAMEWORK, f"no oracle: {gap}") for c in ORACLE_CHECKS}
        )
    attrs: dict[str, Any] = {
        "vf_env": vf_env,
        "module": module,
        "oracle_form": oracle,
        "spec": EnvSpec(
            f"verifiers:{module}",
            "1.0.0",
            renderer_version="1",
            description=f"{FRAMEWORK} environment {type(vf_env).__name__} from {module!r}.",
        ),
        "tasks": tasks,
        "budget": _budget(vf_env),
        "qa": QAProfile(
            # the rubric is the environment's own code: no generic verifier kind applies
            # a reset is Verifiers' init_state and first prompt: 26 ms p50 for its GymEnv
            # over FrozenLake on a loaded 2-core machine; a scored step runs the rubric in a
            # sandbox job that loads the environment (1.8 s p50): 2 steps/s at concurrency 4
            # for ReasoningGymEnv there
            throughput=ThroughputBudget(reset_p50_ms=250.0, steps_per_s=1.0, concurrency=4),
            # the red team writes in the oracle's reply form (the generic match attacks
            # would take the whole reply for the answer)
            redteam=cases_for(oracle, train_answers(train)) if oracle is not None else (),
            not_applicable=not_applicable,
        ),
    }
    if oracle is None:
        attrs["oracle_action"] = None  # not SupportsOracle: QA and policies see no oracle
    return type(f"Verifiers_{module.replace('.', '_')}", (VerifiersEnv,), attrs)
