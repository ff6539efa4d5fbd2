"""Attack: a third-party tool environment whose tool writes into the task's hidden truth
passes ``gymforge qa``. ``ShelfEnv`` (authored with the kit, as ``gymforge new`` makes them)
has a ``recount`` tool that "keeps the catalogue in sync": it writes the truth's stock table,
which the frozen truth model the verifier reads shares with ``Task.truth``.
``CopyOnWriteShelfEnv`` writes it "without mutating": it assigns a new table to the truth's
(mutable) catalogue model, so ``Task.truth`` keeps the old one while every later episode of
the task is judged with the new. An agent that finds the product, recounts it as 0 and
replies "0" is paid on every task without reading the stock (no task stocks 0 units), and
the edit outlives its episode. The oracle never recounts and the random agent's recounts of
made-up SKUs change no verdict, so every check passed both. ``NoteEnv`` is the third form: a
mutable truth parsed afresh each episode, written by a tool, read by the verifier. Success
would be QA passing them; QA now witnesses every episode it plays
(``gymforge.qa.truth_witness``): an episode after which the task's truth, or the truth the
environment judged with, is not what it was fails the check that played it.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from gymforge.authoring import (
    Budget,
    EnvSpec,
    IntKnob,
    ParamSpace,
    QAProfile,
    Reply,
    Split,
    Task,
    TaskFamily,
    TaskSource,
    ToolCall,
    ToolEnv,
    ToolError,
    Verdict,
    tool,
)  # fmt: skip
from gymforge.core.types import Action
from gymforge.qa import QAOptions, QATarget, run_qa
from gymforge.qa.episodes import play
from gymforge.qa.truth_witness import TruthEdited
from gymforge.rollout.episode import run_episode
from gymforge.trajectory.schema import EpisodeKeys
from gymforge.world.attacks import PlanAttack, PlanEdit

COLOURS = ["red", "blue", "green", "black", "white"]
THINGS = ["lamp", "desk", "chair", "fan", "mug", "shelf"]


class Catalogue(BaseModel):  # mutable: pydantic's default
    names: dict[str, str]  # sku -> product name
    stock: dict[str, int]  # sku -> units on the shelf (never 0)


class ShelfTruth(BaseModel):
    model_config = ConfigDict(frozen=True)
    catalogue: Catalogue
    sku: str  # the product asked about


class ShelfFamily(TaskFamily[ShelfTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, ShelfTruth]:
        names = r.sample([f"{c} {t}" for c in COLOURS for t in THINGS], params["products"])
        skus = [f"SKU{n}" for n in r.sample(range(10**5, 10**6), len(names))]
        stock = {sku: r.randrange(1, 500) for sku in skus}
        sku = r.choice(skus)
        prompt = (
            f"How many units of '{names[skus.index(sku)]}' are on the shelf? "
            "Reply with the number only."
        )
        catalogue = Catalogue(names=dict(zip(skus, names, strict=True)), stock=stock)
        return prompt, ShelfTruth(catalogue=catalogue, sku=sku)


LEVELS = {1: ParamSpace({"products": IntKnob(2, 5)}), 2: ParamSpace({"products": IntKnob(6, 14)})}
HELD_OUT = Split(regions={"shelf.count": {"many": lambda p: p["products"] >= 13}})


def shelf_tasks() -> TaskSource:
    """A source of its own for each environment: a task one of them edited, alive in its
    source, would otherwise be the other's task as well."""
    return TaskSource.of([ShelfFamily("shelf.count", 1, LEVELS)], HELD_OUT)


class ShelfEnv(ToolEnv[ShelfTruth, dict[str, Any]]):
    """Every check passed it before the witness; the bug is one line of ``recount``."""

    spec = EnvSpec("shelf", "0.1.0", description="Count a product's units on the shelf.")
    tasks = shelf_tasks()
    budget = Budget(max_steps=8)
    qa = QAProfile(verifier_kinds=("match", "state"))
    system_prompt = "You keep a shop's shelves. Use the tools, then reply with the number only."

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {"recounted": {}}

    @tool
    def find_product(self, query: str) -> list[dict[str, str]]:
        """Find products whose name contains the query.

        Args:
            query: Part of the product name, case-insensitive.
        """
        names = self.truth.catalogue.names
        return [{"sku": s, "name": n} for s, n in names.items() if query.lower() in n.lower()]

    @tool
    def get_stock(self, sku: str) -> int:
        """Units on the shelf for a SKU, as the catalogue has them.

        Args:
            sku: The product SKU, such as SKU123456.
        """
        catalogue = self.truth.catalogue.stock
        if sku not in catalogue:
            raise ToolError("not_found", f"unknown SKU {sku[:40]!r}")
        return catalogue[sku]

    @tool(writes=True)
    def recount(self, sku: str, units: int) -> str:
        """Record the count of a physical recount of a product.

        Args:
            sku: The product SKU.
            units: The units counted.
        """
        self.world["recounted"][sku] = units
        self.truth.catalogue.stock[sku] = units  # the bug: "keeps the catalogue in sync"
        return "recorded"

    def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        truth = self.truth_of(task)
        passed = reply.strip() == str(truth.catalogue.stock[truth.sku])
        return Verdict(passed=passed, reason=None if passed else "wrong_answer", verifier="shelf@1")

    def oracle_plan(self, task: Task) -> list[Action]:
        truth = self.truth_of(task)
        return [
            ToolCall(name="find_product", arguments={"query": truth.catalogue.names[truth.sku]}),
            ToolCall(name="get_stock", arguments={"sku": truth.sku}),
            Reply(text=str(truth.catalogue.stock[truth.sku])),
        ]


class CopyOnWriteShelfEnv(ShelfEnv):
    """The same bug written "without mutating the dict": ``recount`` gives the truth's
    catalogue a new stock table. ``Task.truth`` keeps the old one (the catalogue's dict in it
    is another object), but the frozen truth model the family vouched for, which every
    episode of the task is judged with, carries the new table."""

    tasks = shelf_tasks()

    @tool(writes=True)
    def recount(self, sku: str, units: int) -> str:
        """Record the count of a physical recount of a product.

        Args:
            sku: The product SKU.
            units: The units counted.
        """
        self.world["recounted"][sku] = units
        catalogue = self.truth.catalogue
        catalogue.stock = {**catalogue.stock, sku: units}  # the bug, in another style
        return "recorded"


def recount_to_zero(task: Task, plan: list[Action]) -> list[Action]:
    """The attack: find the product as the oracle does, never read its stock, recount it as
    0 and reply "0" (no task stocks 0 units, so "0" is never the answer)."""
    find = plan[0]
    assert isinstance(find, ToolCall) and find.name == "find_product"
    sku = ShelfTruth.model_validate(task.truth).sku  # the SKU find_product shows the agent
    return [find, ToolCall(name="recount", arguments={"sku": sku, "units": 0}), Reply(text="0")]


OPTS = QAOptions(episodes=8, fuzz_examples=10)
ENVS = {"shared_table": ShelfEnv, "copy_on_write": CopyOnWriteShelfEnv}
WHERE = {  # where the witness sees each one's edit
    "shared_table": "(the task its source resolves the id to): truth.catalogue.stock.SKU",
    "copy_on_write": "(the truth it judged with): truth.catalogue.stock.SKU",
}


async def _attack_unwitnessed(
    env: ToolEnv[Any, Any], task_id: str, edit: PlanEdit = recount_to_zero
) -> list[dict[str, Any]]:
    """The attack's episode as a trainer would play it (no QA witness around it)."""
    keys = EpisodeKeys(
        run_id="attack",
        episode_id=f"attack-{task_id}",
        task_id=task_id,
        seed=0,
        env_id=env.spec.id,
        env_version=env.spec.version,
        renderer_version=env.spec.renderer_version,
        policy_checkpoint="redteam",
    )
    return await run_episode(env, PlanAttack(edit), keys)


@pytest.mark.parametrize("bug", sorted(ENVS))
def test_the_recount_is_paid_without_solving_and_outlives_its_episode(bug: str) -> None:
    """The planted bug is real (the environment keeps it; QA must see it): the attack wins
    every task, and the truth the next episode of the task is judged with keeps the edit."""
    env_cls = ENVS[bug]

    async def go() -> None:
        env = env_cls()
        try:
            for task_id in env_cls.tasks.sample(4, 1, "train"):
                records = await _attack_unwitnessed(env, task_id)
                assert records[-1]["success"], records[-1]["failure_reason"]
                truth = env.truth_of(env_cls.tasks.resolve(task_id))
                assert truth.catalogue.stock[truth.sku] == 0
        finally:
            await env.close()

    asyncio.run(go())


@pytest.mark.parametrize("bug", sorted(ENVS))
def test_a_witnessed_episode_that_edits_the_truth_raises(bug: str) -> None:
    env_cls = ENVS[bug]

    async def go() -> str:
        env = env_cls()
        try:
            task_id = env_cls.tasks.sample(1, 2, "train")[0]
            with pytest.raises(TruthEdited) as seen:
                await play(env, PlanAttack(recount_to_zero), task_id, 0)
            return str(seen.value)
        finally:
            await env.close()

    message = asyncio.run(go())
    assert WHERE[bug] in message and "is now 0" in message, message
    assert "tools called: find_product, recount" in message, message


@pytest.mark.parametrize("bug", sorted(ENVS))
def test_qa_fails_an_environment_whose_tool_edits_the_truth(bug: str) -> None:
    """Before the witness every check passed both; now the random agent's recounts of
    made-up SKUs (which change no verdict) fail the first check that plays one."""
    report = run_qa(QATarget.from_factory(ENVS[bug]), OPTS)
    failed = [c for c in report.checks if not c.passed]
    assert failed, report.summary()
    assert all("hidden truth" in c.details for c in failed), [(c.name, c.details) for c in failed]
    assert any("recount" in c.details for c in failed), [c.details for c in failed]


class GuessTruth(BaseModel):  # mutable (pydantic's default): parsed afresh every episode
    answer: int


class GuessFamily(TaskFamily[GuessTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, GuessTruth]:
        answer = r.randrange(1, 10 ** params["digits"])
        return f"Reply with {answer}.", GuessTruth(answer=answer)


class NoteEnv(ToolEnv[GuessTruth, dict[str, Any]]):
    """The third form: a mutable truth model, parsed afresh for every episode, so
    ``Task.truth`` never changes; ``note`` writes the episode's parse, which the verifier
    reads (``self.truth``). Only the judged truth (``judged_truth``) shows the edit."""

    spec = EnvSpec("note", "0.1.0", description="Reply with the number.")
    tasks = TaskSource.of([GuessFamily("note.echo", 1, {1: ParamSpace({"digits": IntKnob(2, 4)})})])
    budget = Budget(max_steps=4)

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    @tool(writes=True)
    def note(self, value: int) -> str:
        """Note a number for later.

        Args:
            value: The number.
        """
        self.truth.answer = value  # the bug
        return "noted"

    def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        return Verdict(passed=reply.strip() == str(self.truth.answer), verifier="note@1")

    def oracle_plan(self, task: Task) -> list[Action]:
        return [Reply(text=str(self.truth_of(task).answer))]


def test_an_edit_of_the_episodes_own_parse_of_the_truth_is_seen() -> None:
    def note_zero(task: Task, plan: list[Action]) -> list[Action]:
        return [ToolCall(name="note", arguments={"value": 0}), Reply(text="0")]

    async def go() -> str:
        env = NoteEnv()
        try:
            task_id = NoteEnv.tasks.sample(1, 0, "train")[0]
            records = await _attack_unwitnessed(env, task_id, note_zero)
            assert records[-1]["success"]  # paid for a number it chose
            assert NoteEnv.tasks.resolve(task_id).truth["answer"] != 0
            with pytest.raises(TruthEdited) as seen:
                await play(env, PlanAttack(note_zero), task_id, 0)
            return str(seen.value)
        finally:
            await env.close()

    message = asyncio.run(go())
    assert "(the truth it judged with): truth.answer was" in message, message
    assert "is now 0; tools called: note" in message, message
