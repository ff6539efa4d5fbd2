"""``reasoning-gym:NAME``: any reasoning-gym dataset as a single-turn gymforge environment.

One environment class per dataset (``env_class(name)``, cached), so ``spec``, ``tasks`` and
``qa`` stay class-level declarations like every other environment's. The first reply is
judged behind the rules of ``scoring.py``: by gymforge's strict verifier where it has one for
the puzzle (``strict.py``: countdown, puzzle24, knights_knaves, sudoku, mini_sudoku,
sokoban), otherwise by the dataset's own
``score_answer`` run in the sandbox (``sandboxed.py``), so no model text is ever evaluated in
this process. ``env_class(name, strict=False)`` judges even those datasets with
reasoning-gym's own scorer (to show what QA finds in it). The oracle replies with
reasoning-gym's stored answer inside ``<answer>`` tags.

QA checks the adapter cannot supply are declared not applicable with the reason, found by
probing the dataset, never assumed:

- no oracle (the ``ORACLE_CHECKS`` need one) when reasoning-gym stores no answer. When it
  stores answers that the environment's verifier refuses on a probed item, the oracle stays,
  so QA fails (``scripted_baselines`` names the first refused task) instead of passing with
  the checks that would have shown it declared not applicable;
- ``heldout_exclusion`` when the dataset has no curriculum, hence no difficulty parameters
  to hold a region out by.
"""

from __future__ import annotations

import random
from functools import cache
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.types import Action, Reply, Task
from gymforge.envs.reasoning_gym.family import RG_VERSION, ReasoningGymFamily, RgTruth
from gymforge.envs.reasoning_gym.redteam import cases_for
from gymforge.envs.reasoning_gym.sandboxed import require_scorer_sandbox
from gymforge.envs.reasoning_gym.scoring import answer_chars, score, score_trusted
from gymforge.envs.reasoning_gym.strict import STRICT
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa_profile import QAProfile, ThroughputBudget
from gymforge.tasks import Split, TaskSource
from gymforge.verify import Verdict

PROBES = (3, 1)
"""Items probed for a working oracle when the environment class is built: at level 1, and
at every other level (reasoning-gym's generators can take a second per item)."""

DEFAULT_TOKENS = 32_768
"""The token budget of a reply (and, through ``answer_chars``, of the answer)."""

ORACLE_CHECKS = ("scripted_baselines", "verifier_redteam", "error_paths")
"""The checks that cannot run without an oracle. Without one the environment class has
``oracle_action = None`` (no ``SupportsOracle``), so the other checks drive their episodes
with the random policy instead."""

ENV_VERSION = "1.0.0"
"""The version of every dataset's environment, unless ``ENV_VERSIONS`` names another."""

ENV_VERSIONS = {"sokoban": "1.1.0"}
"""Datasets whose verdicts changed: sokoban 1.1.0 is judged by gymforge's strict checker
(``sokoban.py``; 1.0.0's scorer paid a random walk of moves)."""

SYSTEM_PROMPT = (
    "Reason as long as you need, then give your final answer inside <answer> and </answer> "
    "tags, in exactly the format the task asks for. Give one answer only."
)


def oracle_gap(family: ReasoningGymFamily, strict: bool = True) -> tuple[str | None, str | None]:
    """``(missing, refused)``: why there is no oracle at all (reasoning-gym stores no answer),
    and why the stored answers are not one the environment's verifier accepts (judged by the
    verifier the environment uses: strict, or reasoning-gym's own scorer); None when not."""
    for level in family.levels:
        for seed in range(PROBES[0] if level == 1 else PROBES[1]):
            task = family.task(level, seed)
            answer = family.truth_of(task).answer
            if answer is None:
                return "reasoning-gym stores no answer for this dataset's items", None
            entry = family.entry(level, family.truth_of(task).item_seed)
            try:
                outcome = score_trusted(family, level, entry, answer, strict)
            except Exception as err:  # its scorer fails on its own answer
                return None, f"the scorer raised {type(err).__name__} on its stored answer"
            if not outcome.passed:
                judge = (
                    "gymforge's strict verifier"
                    if strict and family.dataset in STRICT
                    else "reasoning-gym's own score_answer"
                )
                return None, (
                    f"{judge} does not accept the stored answer of {task.task_id} "
                    f"({outcome.reason}, score {outcome.facts.get('score', 0.0)})"
                )
    return None, None


def _profile(family: ReasoningGymFamily, gap: str | None) -> QAProfile:
    not_applicable: dict[str, str] = {}
    if gap is not None:
        not_applicable.update({name: f"no oracle: {gap}" for name in ORACLE_CHECKS})
    if family.heldout_level is None:
        not_applicable["heldout_exclusion"] = (
            "the dataset has no reasoning-gym curriculum, so no difficulty parameters to "
            "hold a region out by"
        )
    return QAProfile(
        verifier_kinds=(),  # the generic match attacks take the whole reply as the answer
        redteam=cases_for(family),
        # generation is reasoning-gym's own: 10 ms to 0.5 s per countdown or sudoku item on a
        # loaded 2-core machine; measured there: 26 to 2,600 steps/s
        throughput=ThroughputBudget(reset_p50_ms=100.0, steps_per_s=5.0, concurrency=4),
        not_applicable=not_applicable,
    )


class ReasoningGymEnv(ToolEnv[RgTruth, dict[str, Any]]):
    """Base of the per-dataset classes ``env_class`` builds; not used directly."""

    family: ReasoningGymFamily
    budget = Budget(max_steps=2, max_tokens=DEFAULT_TOKENS)
    system_prompt = SYSTEM_PROMPT

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    strict: bool = True
    """Judge with gymforge's strict verifier where ``strict.STRICT`` has one."""

    def preflight(self) -> None:
        """Refuse, in one line, a machine where this dataset's scorer cannot run sandboxed."""
        if not (self.strict and self.family.dataset in STRICT):
            require_scorer_sandbox()

    async def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        truth = self.truth_of(task)
        level, item_seed = truth.level, truth.item_seed
        entry = self.family.entry(level, item_seed)
        limit = answer_chars(self.budget.max_tokens or DEFAULT_TOKENS)
        outcome = await score(self.family, level, entry, reply, limit, self.strict)
        judge = outcome.facts.get("verifier")
        name = f"reasoning-gym:{self.family.dataset}@{RG_VERSION}"
        return Verdict(
            passed=outcome.passed,
            reason=outcome.reason,
            facts={"reason": outcome.reason, **outcome.facts},
            verifier=f"{judge} on {name}" if judge else name,
        )

    def oracle_plan(self, task: Task) -> list[Action] | None:
        answer = self.truth_of(task).answer
        return None if answer is None else [Reply(text=f"<answer>{answer}</answer>")]


@cache
def env_class(dataset: str, strict: bool = True) -> type[ReasoningGymEnv]:
    """The environment class of reasoning-gym dataset ``dataset`` (built once); with
    ``strict=False`` judged by reasoning-gym's own scorer even where gymforge has a strict
    verifier."""
    family = ReasoningGymFamily(dataset)
    gap, refused = oracle_gap(family, strict)
    about = f"reasoning-gym {RG_VERSION} dataset {dataset!r}."
    if refused is not None:  # the oracle stays: scripted_baselines fails, naming the task
        about += f" Its stored answers fail: {refused}."
    held = family.heldout_level
    regions = {} if held is None else {family.name: {"top_level": lambda p: p["level"] == held}}
    attrs: dict[str, Any] = {
        "family": family,
        "strict": strict,
        "spec": EnvSpec(
            f"reasoning-gym:{dataset}",
            ENV_VERSIONS.get(dataset, ENV_VERSION),
            renderer_version="1",
            description=about,
        ),
        "tasks": TaskSource.of([family], Split(regions=regions)),
        "qa": _profile(family, gap),
    }
    if gap is not None:
        attrs["oracle_action"] = None  # not SupportsOracle: QA and policies see no oracle
    return type(f"ReasoningGym_{dataset}", (ReasoningGymEnv,), attrs)


def make(dataset: str) -> ReasoningGymEnv:
    """A fresh environment for reasoning-gym dataset ``dataset``."""
    return env_class(dataset)()
