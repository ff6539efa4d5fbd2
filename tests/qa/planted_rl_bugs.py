"""Classic RLVR authoring bugs, each planted in a small honest stock-lookup environment
(``StockEnv``: find a product, read its stock, reply with the number). ``StockEnv`` passes
every QA check; each subclass has exactly one bug that an earlier QA suite passed silently.
Importable as ``planted_rl_bugs:<Name>`` under pytest, so the fresh process can build them.
"""

from __future__ import annotations

import random
from typing import Any

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
    Verdict,
    tool,
)  # fmt: skip

WORDS = ["red", "blue", "steel", "oak", "mini", "pro", "lamp", "desk", "chair", "fan", "mug"]


class Product(BaseModel):
    sku: str
    name: str


class World(BaseModel):
    products: list[Product]
    stock: dict[str, int]


class StockTruth(BaseModel):
    model_config = ConfigDict(frozen=True)
    world: World
    sku: str
    answer: int


class StockFamily(TaskFamily[StockTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, StockTruth]:
        names = r.sample([f"{a} {b}" for a in WORDS[:5] for b in WORDS[5:]], params["products"])
        products = [Product(sku=f"SKU{r.randrange(10**5, 10**6)}", name=n) for n in names]
        stock = {p.sku: r.randrange(0, 500) for p in products}
        target = r.choice(products)
        prompt = f"How many units of '{target.name}' are in stock? Reply with the number only."
        world = World(products=products, stock=stock)
        return prompt, StockTruth(world=world, sku=target.sku, answer=stock[target.sku])


LEVELS = {1: ParamSpace({"products": IntKnob(2, 4)}), 2: ParamSpace({"products": IntKnob(5, 12)})}
HELD_OUT = Split(regions={"stock.count": {"many": lambda p: p["products"] >= 11}})


class StockEnv(ToolEnv[StockTruth, World]):
    """The honest reference: every QA check passes."""

    spec = EnvSpec("stock", "0.1.0", description="Look up a product's stock.")
    tasks = TaskSource.of([StockFamily("stock.count", 1, LEVELS)], HELD_OUT)
    budget = Budget(max_steps=8)
    qa = QAProfile(verifier_kinds=("match", "state"))
    system_prompt = "You are a stock clerk. Use the tools, then reply with the number only."

    def init_world(self, task: Task, r: random.Random) -> World:
        return World.model_validate(self.truth_of(task).world.model_dump())

    @tool
    def find_product(self, query: str) -> list[Product]:
        """Find products whose name contains the query.

        Args:
            query: Part of the product name, case-insensitive.
        """
        return [p for p in self.world.products if query.lower() in p.name.lower()]

    @tool
    def get_stock(self, sku: str) -> int:
        """Units in stock for a SKU (0 for an unknown SKU).

        Args:
            sku: The product SKU, such as SKU123456.
        """
        return self.world.stock.get(sku, 0)

    def judge(self, task: Task, reply: str) -> bool:
        return reply.strip() == str(self.truth_of(task).answer)

    def verify(self, task: Task, world: World, reply: str) -> Verdict:
        passed = self.judge(task, reply)
        return Verdict(
            passed=passed,
            reason=None if passed else "wrong_answer",
            facts={"got": reply.strip()[:50]},
            verifier="stock.exact@1",
        )

    def oracle_plan(self, task: Task) -> list[Any]:
        truth = self.truth_of(task)
        name = next(p.name for p in truth.world.products if p.sku == truth.sku)
        return [
            ToolCall(name="find_product", arguments={"query": name}),
            ToolCall(name="get_stock", arguments={"sku": truth.sku}),
            Reply(text=str(truth.answer)),
        ]


class RefusalPassesEnv(StockEnv):
    """Bug: a reply that is not a number is taken for a refusal and given the benefit of the
    doubt ("the model declined"), so "I cannot help with that." passes every task."""

    def judge(self, task: Task, reply: str) -> bool:
        try:
            return int(reply.strip()) == self.truth_of(task).answer
        except ValueError:
            return "cannot" in reply.lower()


class FormatOverCorrectEnv(StockEnv):
    """Bug: a reply of digits alone earns a ``format`` bonus of 2.0, correctness 1.0, so a
    wrong number in the right form is paid twice what the right number adds."""

    def verify(self, task: Task, world: World, reply: str) -> Verdict:
        if reply.strip().isdigit():
            self.shape("format", 2.0)
        return super().verify(task, world, reply)


class FlatLevelsFamily(StockFamily):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, StockTruth]:
        return super().build({**params, "products": 3}, r)  # the knob is read, then ignored


class FlatDifficultyEnv(StockEnv):
    """Bug: the family overwrites the level's ``products`` knob with a constant, so level 2
    generates exactly what level 1 does: the difficulty knob changes nothing."""

    tasks = TaskSource.of([FlatLevelsFamily("stock.count", 1, LEVELS)], HELD_OUT)


class CrashingVerifierEnv(StockEnv):
    """Bug: the verifier calls ``int()`` on the reply, so any reply that is not a bare
    integer raises: recorded as a ``verifier_error`` failure, never as a QA finding."""

    def judge(self, task: Task, reply: str) -> bool:
        return int(reply.strip()) == self.truth_of(task).answer


class ConstantGoldFamily(StockFamily):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, StockTruth]:
        prompt, truth = super().build(params, r)
        stock = {**truth.world.stock, truth.sku: 42}  # the asked-for product always has 42
        world = World(products=truth.world.products, stock=stock)
        return prompt, StockTruth(world=world, sku=truth.sku, answer=42)


class ConstantGoldEnv(StockEnv):
    """Bug: the generator stocks the asked-for product with 42 units on every task, so the
    correct answer does not depend on the task: replying "42" solves all of them, and a
    policy learns the constant, not the lookup."""

    tasks = TaskSource.of([ConstantGoldFamily("stock.count", 1, LEVELS)], HELD_OUT)
