"""Typed hidden truth: models bound through generic bases, the dict boundary that round-trips
exactly, memoised parsing that cannot leak between episodes, and mypy catching a mistyped
truth field (the point of the generics)."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, field_serializer

from gymforge.core import EnvSpec, Task
from gymforge.core.errors import EpisodeStateError
from gymforge.core.seeding import derive_seed
from gymforge.envs.code import CodeEnv
from gymforge.envs.code.agent import CodeAgentEnv
from gymforge.envs.code.truth import CodeTruth
from gymforge.envs.expenses import ExpensesEnv
from gymforge.envs.expenses.truth import ExpenseTruth
from gymforge.envs.ledger import LedgerEnv
from gymforge.envs.ledger.env import FAMILY as LEDGER
from gymforge.envs.ledger.env import LedgerTruth
from gymforge.envs.puzzles import countdown
from gymforge.envs.puzzles.countdown import CountdownTruth
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.envs.support_desk.truth import DeskTruth
from gymforge.kit import ToolEnv
from gymforge.registry.handle import task_source
from gymforge.registry.resolve import BUILTIN, make_env
from gymforge.tasks import IntKnob, ParamSpace, TaskFamily, UntypedTruth
from gymforge.tasks.truth import TruthCodec
from gymforge.tasks.truth_dump import dump_truth
from gymforge.verify import Verdict

ROOT = Path(__file__).resolve().parents[2]


class Opt(BaseModel):
    model_config = ConfigDict(frozen=True)

    a: int
    b: int | None = None


class Loose(BaseModel):
    a: int


class DictFamily(TaskFamily[Opt]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, Opt]:
        return "q", {"a": 1}  # type: ignore[return-value]  # the mistake under test


class BareEnv(ToolEnv):  # type: ignore[type-arg]  # an env that declares no truth model
    spec = EnvSpec("bare", "1.0.0")

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    def verify(self, task: Task, world: Any, reply: str) -> Verdict:
        return Verdict(passed=True)


def _task(truth: dict[str, Any]) -> Task:
    return Task(task_id="t/v1/d1/s0", family="t", prompt="q", truth=truth)


def test_truth_models_bind_through_generic_bases() -> None:
    assert LedgerEnv.truth_model() is LedgerTruth
    assert SupportDeskEnv.truth_model() is DeskTruth  # WorldToolEnv[DeskTruth] via DeskTools
    assert ExpensesEnv.truth_model() is ExpenseTruth
    assert CodeEnv.truth_model() is CodeAgentEnv.truth_model() is CodeTruth
    assert type(countdown.FAMILY).truth_model() is CountdownTruth  # PuzzleFamily[T] -> T
    assert BareEnv.truth_model() is UntypedTruth


def test_the_dict_boundary_keeps_unset_fields_absent_and_explicit_none() -> None:
    assert dump_truth(Opt(a=1)) == {"a": 1}
    assert dump_truth(Opt(a=1, b=None)) == {"a": 1, "b": None}
    for raw in ({"a": 1}, {"a": 1, "b": None}, {"a": 1, "b": 2}):
        assert dump_truth(Opt.model_validate(raw)) == raw
    task = LEDGER.task(2, 5)
    assert dump_truth(LEDGER.truth_of(task)) == task.truth
    assert "from" in task.truth["moves"][0]  # an alias, written under its wire name


class Custom(BaseModel):
    """Serialisation that only pydantic knows: dump_truth must hand it to pydantic."""

    model_config = ConfigDict(frozen=True)

    a: int
    hidden: int = Field(default=0, exclude=True)

    @field_serializer("a")
    def _twice(self, a: int) -> int:
        return 2 * a


class Outer(BaseModel):
    model_config = ConfigDict(frozen=True)

    inner: Opt
    many: list[Opt]
    keyed: dict[str, Opt | None]
    pair: tuple[Opt, int] | None = None
    custom: Custom | None = None
    note: Any = None


def test_dump_truth_walks_nested_models_exactly_as_model_dump() -> None:
    outer = Outer(
        inner=Opt(a=1),
        many=[Opt(a=2, b=None), Opt(a=3, b=4)],
        keyed={"x": Opt(a=5), "y": None},
        pair=(Opt(a=6), 7),
        custom=Custom(a=8, hidden=9),
    )
    want = outer.model_dump(by_alias=True, exclude_unset=True)
    assert dump_truth(outer) == want
    assert want["custom"] == {"a": 16} and "note" not in want
    assert dump_truth(Custom(a=1, hidden=2)) == {"a": 2}


class Renamed(BaseModel):
    """Plain fields, one written under another name: dump_truth's renamed path."""

    model_config = ConfigDict(frozen=True, validate_by_name=True)

    source: str = Field(validation_alias="from", serialization_alias="from")
    to: str
    note: str | None = None


def test_dump_truth_of_a_model_with_a_renamed_field_is_model_dump() -> None:
    for model in (
        Renamed(source="a", to="b", note=None),  # every field set: the renamed path
        Renamed(source="a", to="b"),  # not every field set: the general path
        Renamed.model_validate({"from": "a", "to": "b", "note": "n"}),
        Renamed.model_validate({"to": "b", "note": "n", "from": "a"}),  # input order
    ):
        want = model.model_dump(by_alias=True, exclude_unset=True)
        assert dump_truth(model) == want
        assert list(dump_truth(model)) == list(want)  # key order too
    assert list(dump_truth(Renamed(note="n", to="b", source="a"))) == ["from", "to", "note"]


class SubOpt(Opt):
    c: int = 0


def test_dump_truth_leaves_a_subclass_where_its_class_is_declared_to_pydantic() -> None:
    """dump_truth walks models of exactly their declared class itself; pydantic dumps a
    subclass instance as the declared class (its own fields dropped), and so must we."""
    outer = Outer(
        inner=SubOpt(a=1, c=2),
        many=[Opt(a=2), SubOpt(a=3, c=4)],
        keyed={"x": SubOpt(a=5, c=6), "y": Opt(a=7, b=None)},
    )
    want = outer.model_dump(by_alias=True, exclude_unset=True)
    assert dump_truth(outer) == want
    assert want["inner"] == {"a": 1} and want["many"][1] == {"a": 3}
    plain = Outer(inner=Opt(a=1), many=[Opt(a=2, b=3)], keyed={"k": None, "j": Opt(a=4)})
    assert dump_truth(plain) == plain.model_dump(by_alias=True, exclude_unset=True)


def test_dump_truth_of_every_builtin_family_equals_model_dump() -> None:
    """The fast path of ``dump_truth`` against pydantic's own dump, on what every built-in
    family really builds (one task per level)."""
    checked = 0
    for env_id in sorted(BUILTIN):
        tasks = task_source(make_env(env_id))
        for family in tasks.families.values() if tasks else ():
            for level in sorted(family.levels):
                params = family.params_for(level, 3)
                r = random.Random(
                    derive_seed(family.name, family.version, sorted(params.items()), 3)
                )
                _, truth = family.build(dict(params), r)
                assert dump_truth(truth) == truth.model_dump(by_alias=True, exclude_unset=True)
                assert dump_truth(truth) == family.task(level, 3).truth
                checked += 1
    assert checked >= 60


def test_a_family_returning_a_dict_fails_with_a_clear_error() -> None:
    family = DictFamily("dicts", 1, {1: ParamSpace({"n": IntKnob(1, 1)})})
    with pytest.raises(TypeError, match="hidden truth must be a pydantic model, not dict"):
        family.task(1, 0)


def test_frozen_truth_is_parsed_once_mutable_truth_every_time() -> None:
    task = _task({"a": 1})
    frozen = TruthCodec(Opt)
    assert frozen.parse(task) is frozen.parse(task)
    assert frozen.parse(_task({"a": 1})) is not frozen.parse(task)  # keyed on the task object
    loose = TruthCodec(Loose)
    first = loose.parse(task)
    first.a = 99  # an episode that edits its truth...
    assert loose.parse(task).a == 1  # ...cannot leak into the next


def test_truth_and_world_are_typed_after_reset_and_refused_before() -> None:
    env = LedgerEnv()
    with pytest.raises(EpisodeStateError, match="truth read before reset"):
        _ = env.truth
    with pytest.raises(EpisodeStateError, match="world read before reset"):
        _ = env.world
    task_id = LEDGER.task_id(1, 3)
    asyncio.run(env.reset(task_id, 0))
    assert isinstance(env.truth, LedgerTruth)
    assert env.world.accounts == env.truth.world.accounts
    env.world.accounts[0].balance_cents += 1  # the episode's world is a copy of the truth's
    assert env.world.accounts[0] != env.truth.world.accounts[0]


def test_an_env_without_a_truth_model_reads_untyped_truth() -> None:
    env = BareEnv()
    truth = env.truth_of(_task({"answer": "4"}))
    assert isinstance(truth, UntypedTruth) and truth.model_extra == {"answer": "4"}


@pytest.mark.xdist_group("mypy")  # with the typed-seam test: one mypy cache (conftest)
def test_mypy_catches_a_mistyped_truth_field(tmp_path: Path, mypy_cache: Path) -> None:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(
        "from gymforge.core.types import Task\n"
        "from gymforge.envs.ledger.env import LedgerEnv\n\n\n"
        "def amount(env: LedgerEnv, task: Task) -> int:\n"
        "    return env.truth_of(task).movez[0].amount\n"
    )
    cmd = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent"]
    cmd += ["--cache-dir", str(mypy_cache), str(snippet)]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert '"LedgerTruth" has no attribute "movez"' in out.stdout, out.stdout + out.stderr
