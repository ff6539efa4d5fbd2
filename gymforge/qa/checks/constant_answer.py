"""The constant-answer baseline of ``scripted_baselines``: is the correct answer the task's?

An environment whose correct answer does not depend on the task (every task's gold is 42,
one answer is right for a large share of the tasks) teaches a policy to emit that answer,
not to solve anything, and every other baseline passes it: the oracle solves each task,
and the random, no-op and near-miss agents answer wrong *for their own task*.

The baseline reuses the oracle episodes ``scripted_baselines`` already played. Each one's
answer is the action that ended it with a verdict: its final reply's text, or the call of a
tool that ends the episode (``@tool(ends_episode=True)``, a ``submit``: its name and
arguments), whose result is judged as the reply; an episode that ended otherwise answers
with its last reply. The most common answer over the sampled tasks (ties: the first in
sample order) is the constant, and its *donor* is the first task the oracle solved with
it. The donor's recorded oracle actions are then replayed, verbatim, on every other sampled
task (:class:`ReplayActions`: when they run out, the last reply is repeated). On a
single-turn environment that is exactly "reply with the most common answer"; on a tool
environment it is the analogue: another task's lookups and writes, then its reply. So an
environment judged on world state is not paid for the reply (the oracle's own path would
have made the state right: that would be a false positive), and one that judges only the
reply is paid exactly when the constant is right. The replays run on one instance right
after the donor's own task, replayed there first (it is the oracle's episode, solved), as
a trainer reuses instances: a verdict memo keyed by the reply that ``reset`` never clears
pays the donor's answer on every later task, which a fresh instance never showed. When the
rate is over the ceiling, the replays are played again on fresh instances to tell the two
apart (a leak between episodes when only the reused instance pays). Its success rate on
the other tasks must
stay at or below ``Baselines.constant_max`` (default 0.9: a constant right on (nearly) every
task, never one right by chance).

By chance a constant is right on the tasks whose gold it is: the report gives that share
(``constant_answer_share``). An answer space small by design (yes/no, multiple choice, a
verdict out of three, single-digit sums) is right by chance on up to about half of a small
sample, which the default leaves alone, as it does every public dataset of such answers the
adapters read; an environment whose answers should be diverse may declare a lower ceiling
(a little above its most common gold's share over its tasks) to be held to it.

Per family too (``scripted_baselines.family_constants``, two families or more): a family's
own most common answer, replayed on its other sampled tasks (``FAMILY_MIN`` at least), and
above the ceiling there, on ``FAMILY_CONFIRM`` fresh training tasks of the family, must stay
at or below ``constant_max``. A family whose answer is 42 on every task, one of four, is
right on a quarter of the pooled sample and passed; its prompts tell a policy when to say
42. A family whose answer is one by design and whose prompts look like another family's
(research's unanswerable questions) is declared in ``Baselines.constant_families``.

What it cannot catch: a constant that no sampled task's oracle gives (a verifier that also
accepts "42" on every task while each gold differs: ``verifier_redteam`` attacks that),
a constant right on too small a share for the sample to see (24 tasks see one right on a
third of the tasks, not one right on 2%; 8 tasks see less),
answers that are equal in meaning but not in text (the mode is counted on exact text, so
"0.5" and "1/2" split its share), a constant world change on an environment whose
donor's actions name entities the other tasks' worlds lack, a constant the verifier takes
only beside something copied from the task (its id, a name in the prompt) or after a
lookup the task names, and a gold drawn from a few values whatever the task says (two
answers each right on half the tasks stay under the ceiling, as a yes/no task's do).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.seeding import canonical_json
from gymforge.core.types import Action, Observation, Reply, ToolCall

ACTION: TypeAdapter[Action] = TypeAdapter(Action)


def oracle_actions(episode: Sequence[dict[str, Any]]) -> list[Action]:
    """The actions of an episode's step records, in order (step 0, the reset, has none)."""
    return [
        ACTION.validate_python(r["action"])
        for r in episode
        if r.get("record") == "step" and r.get("action") is not None
    ]


def final_answer(actions: Sequence[Action]) -> str | None:
    """The text of the last reply, stripped; None when the episode sent no reply."""
    replies = [a for a in actions if isinstance(a, Reply)]
    return replies[-1].text.strip() if replies else None


def episode_answer(episode: Sequence[dict[str, Any]]) -> str | None:
    """What an episode answered: the action of the step that ended it with a verdict (a
    reply's text, or a submitting tool call as ``name(arguments)``: with no reply at all,
    an environment answered through a ``submit`` tool had no answer to count, and its
    constant went unseen), else its last reply's text; None without either."""
    steps = [r for r in episode if r.get("record") == "step" and r.get("action") is not None]
    if steps and (steps[-1].get("info") or {}).get("end_reason") == "verdict":
        action = ACTION.validate_python(steps[-1]["action"])
        if isinstance(action, ToolCall):
            return f"{action.name}({canonical_json(action.arguments)})"
    return final_answer(oracle_actions(episode))


class ReplayActions:
    """Plays a fixed list of actions (another task's oracle path), then repeats its last
    reply (an empty one when it has none) for as long as the episode runs."""

    name = checkpoint = "constant_answer"

    def __init__(self, actions: Sequence[Action]) -> None:
        self.actions = list(actions)
        replies = [a for a in self.actions if isinstance(a, Reply)]
        self.last: Action = replies[-1] if replies else Reply(text="")

    async def start(self, ctx: EpisodeContext) -> None:
        self.i = 0

    async def act(self, observation: Observation) -> PolicyTurn:
        action = self.actions[self.i] if self.i < len(self.actions) else self.last
        self.i += 1
        return PolicyTurn(action)


@dataclass(frozen=True)
class Donor:
    """The constant answer, the task whose oracle actions carry it, and how often it is
    the oracle's answer over the sampled tasks."""

    answer: str
    index: int
    """The donor's position in the sampled (task_id, seed) pairs."""
    task_id: str
    actions: list[Action]
    count: int
    sampled: int

    @property
    def share(self) -> float:
        return self.count / self.sampled


def choose_donor(oracle_episodes: Sequence[Sequence[dict[str, Any]]]) -> Donor | None:
    """The most common answer of the oracle episodes (``episode_answer``) and its first
    solved episode; None when fewer than two episodes answered or the oracle solved none
    with that answer."""
    played = [(oracle_actions(e), e[-1]) for e in oracle_episodes]
    answers = [episode_answer(e) for e in oracle_episodes]
    counts = Counter(a for a in answers if a is not None)
    if sum(counts.values()) < 2:
        return None
    top = max(counts.values())
    answer = next(a for a in answers if a is not None and counts[a] == top)  # first in order
    for i, ((actions, closing), a) in enumerate(zip(played, answers, strict=True)):
        if a == answer and closing["success"]:
            return Donor(answer, i, str(closing["task_id"]), actions, top, len(answers))
    return None


def others(pairs: Sequence[tuple[str, int]], donor: Donor) -> list[tuple[str, int]]:
    """The sampled pairs the donor's actions are replayed on: all but the donor's task."""
    return [p for p in pairs if p[0] != donor.task_id]


FAMILY_MIN = 3
"""The fewest sampled tasks of one family its own constant is looked for on."""
FAMILY_CONFIRM = 12
"""Fresh training tasks of a family a suspected constant is replayed on before it fails: a
yes/no family's sampled tasks can all share one answer by chance (1 in 4 for three), twelve
more right too by chance 1 in 4096."""


@dataclass(frozen=True)
class FamilyConstant:
    """A family whose own most common answer solved more of its tasks than the ceiling."""

    family: str
    donor: Donor
    sampled_rate: float
    confirmed_rate: float
    confirmed_on: int


def by_family(
    families: Sequence[str], episodes: Sequence[Sequence[dict[str, Any]]]
) -> dict[str, list[int]]:
    """The positions of the sampled episodes, per family (``families[i]`` is episode i's)."""
    out: dict[str, list[int]] = {}
    for i, family in enumerate(families):
        out.setdefault(family, []).append(i)
    return out
