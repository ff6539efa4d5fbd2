"""Task families: seeded, parameterised task distributions with resolvable ids.

A family's ``task_id`` is ``{family}/v{version}/d{difficulty}/s{seed}``: the difficulty level
picks a region of the ``ParamSpace``, the seed draws params inside it (through a stable-hash
RNG stream) and then generates the task. A task with explicit params (a curriculum or
hard-negative variant) appends them: ``{family}/v{version}/d{difficulty}/s{seed}/k=v,k=v``
with JSON values (``gymforge.tasks.task_id`` parses and writes them). ``family.resolve(task_id)``
rebuilds the same task from the id alone, which is what makes replay work from a trajectory
file.

A family is generic over its hidden truth, a pydantic model: ``class Sums(TaskFamily[SumTruth])``
``build``s ``(prompt, SumTruth(...))``; ``generate`` dumps it into ``Task.truth`` (the JSON
boundary) and ``truth_of(task)`` parses it back (see ``gymforge.tasks.truth``).
"""

from __future__ import annotations

import json
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, cast

from gymforge.core.errors import UnknownTaskError
from gymforge.core.seeding import canonical_json, derive_seed, seed_of_canonical, seeded
from gymforge.core.types import Task, task_of
from gymforge.tasks.draws import choice, randint
from gymforge.tasks.task_id import TaskId, parse_task_id
from gymforge.tasks.trusted import validating
from gymforge.tasks.truth import TruthT, codec_for, declared_truth, vouch
from gymforge.tasks.truth_dump import dump_truth

_SCALARS = frozenset({str, int, bool, type(None)})
_MEMO = 4096  # params memoised per family before the memo starts again


@dataclass(frozen=True)
class IntKnob:
    """An integer knob, inclusive range."""

    lo: int
    hi: int

    def sample(self, r: random.Random) -> int:
        return randint(r, self.lo, self.hi)

    def contains(self, value: Any) -> bool:
        return (
            isinstance(value, int) and not isinstance(value, bool) and self.lo <= value <= self.hi
        )

    def neighbors(self, value: Any) -> list[Any]:
        return [v for v in (value - 1, value + 1) if self.lo <= v <= self.hi]


@dataclass(frozen=True)
class ChoiceKnob:
    """A knob over a fixed set of values."""

    values: tuple[Any, ...]

    def sample(self, r: random.Random) -> Any:
        return choice(r, self.values)

    def contains(self, value: Any) -> bool:
        return value in self.values

    def neighbors(self, value: Any) -> list[Any]:
        if value not in self.values:
            return []
        i = self.values.index(value)
        return [self.values[j] for j in (i - 1, i + 1) if 0 <= j < len(self.values)]


Knob = IntKnob | ChoiceKnob

_DRAWN_SCALARS = frozenset({str, int, float, bool, type(None)})


def _as_drawn(knobs: Mapping[str, Knob], params: Mapping[str, Any]) -> bool:
    """Whether every value of ``params`` is one its knob draws, of the very type it draws:
    ``10`` for ``ChoiceKnob((10,))``, not ``10.0`` or ``True`` (which it contains, as
    ``10.0 == 10``), nor an int subclass for an ``IntKnob``. Only such params may reach a
    family's ``trusted`` truth build (values of their declared types); any others build it
    validated."""
    for name, value in params.items():
        knob = knobs.get(name)
        kind = type(value)
        if type(knob) is IntKnob:
            drawn = kind is int
        else:
            drawn = (
                type(knob) is ChoiceKnob
                and kind in _DRAWN_SCALARS
                and any(type(v) is kind and v == value for v in knob.values)
            )
        if not drawn:
            return False
    return True


def _as_declared(knobs: Mapping[str, Knob], params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with each value a ``ChoiceKnob`` accepts as equal to one of its own
    (``3.0`` for ``3``) replaced by that value of the knob, of the same type where it has
    one: what ``build`` is handed for a task id's explicit params. The id and
    ``Task.params`` keep the values given (they seed the task)."""
    out = dict(params)
    for name, value in params.items():
        knob = knobs.get(name)
        if type(knob) is ChoiceKnob and value in knob.values:
            equal = [v for v in knob.values if v == value]
            out[name] = next((v for v in equal if type(v) is type(value)), equal[0])
    return out


@dataclass(frozen=True)
class ParamSpace:
    """What varies, over what ranges, under what constraint."""

    knobs: Mapping[str, Knob]
    constraint: Callable[[dict[str, Any]], bool] | None = None
    max_tries: int = 1000

    def sample(self, r: random.Random) -> dict[str, Any]:
        knobs = sorted(self.knobs.items())
        for _ in range(self.max_tries):
            params = {name: knob.sample(r) for name, knob in knobs}
            if self.constraint is None or self.constraint(params):
                return params
        raise ValueError("ParamSpace constraint rejected every sample")

    def contains(self, params: Mapping[str, Any]) -> bool:
        knobs = self.knobs
        if len(params) != len(knobs):  # with every knob in params below: the same key set
            return False
        for name, knob in knobs.items():
            if name not in params or not knob.contains(params[name]):
                return False
        return self.constraint is None or self.constraint(dict(params))


@dataclass
class TaskFamily(ABC, Generic[TruthT]):
    """Subclass and implement ``build``. ``levels`` maps difficulty level -> param region.
    ``TruthT`` is the pydantic model of the hidden truth ``build`` returns.

    ``older`` maps earlier version numbers to the family as it was then: their task ids
    still resolve, to the task exactly as that version generated it (so recorded runs
    replay), while new tasks are drawn from the current version only. ``at_version(n)``
    is the family as of version ``n`` (for judging an old task by its own rules)."""

    name: str
    version: int
    levels: Mapping[int, ParamSpace] = field(default_factory=dict)
    older: Mapping[int, TaskFamily[TruthT]] = field(default_factory=dict, kw_only=True)

    @abstractmethod
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, TruthT]:
        """Return ``(prompt, truth)`` for ``params``, drawing only from ``r``."""

    @classmethod
    def truth_model(cls) -> type[TruthT]:
        """The truth model this family is declared with (``UntypedTruth`` if it names none)."""
        return cast("type[TruthT]", declared_truth(cls, TaskFamily))

    def truth_of(self, task: Task) -> TruthT:
        """``task``'s hidden truth as this family's model."""
        return cast("TruthT", codec_for(type(self), TaskFamily).parse(task))

    def difficulty(self, params: Mapping[str, Any]) -> int:
        """The lowest level whose region contains ``params``."""
        for level in sorted(self.levels):
            if self.levels[level].contains(params):
                return level
        raise ValueError(f"{self.name}: params {dict(params)} lie in no difficulty level")

    def _known(
        self, params: Mapping[str, Any], items: list[tuple[str, Any]]
    ) -> tuple[int, str | None]:
        """``(difficulty(params), prefix)``, ``items`` being ``params``' sorted items:
        ``prefix`` is the canonical JSON of ``[name, version, items, seed]`` up to the seed
        (``'["name",version,[["k",v],...],'``), the text ``derive_seed(name, version,
        items, seed)`` hashes. Memoised per family for params of plain scalars under string
        keys (strings, ints, bools, None: each keyed with its type, so ``True`` is not
        ``1``) while ``levels`` is the same object and the name and version are the same:
        a family's param space is small, and every task drawn from it asks again. Params of
        other values answer ``(difficulty(params), None)``, unmemoised. The memo lives in
        the instance's ``__dict__`` (no field: equality, ``repr`` and ``replace`` ignore
        it)."""
        flat: list[Any] = []  # the key: (name, type, value) of each item, in one tuple
        for k, v in items:
            kind = type(v)
            if type(k) is not str or kind not in _SCALARS:
                return self.difficulty(params), None
            flat += (k, kind, v)
        key = tuple(flat)
        stamp = (self.name, type(self.version), self.version)
        memo = self.__dict__.get("_known_params")
        if memo is None or memo[0] is not self.levels or memo[1] != stamp:
            memo = self.__dict__["_known_params"] = (self.levels, stamp, {})
        known: dict[tuple[Any, ...], tuple[int, str]] = memo[2]
        found = known.get(key)
        if found is None:
            level = self.difficulty(params)
            found = (level, canonical_json([self.name, self.version, items, 0])[:-2])
            if len(known) >= _MEMO:
                known.clear()
            known[key] = found
        return found

    def task_id(self, difficulty: int, seed: int) -> str:
        return f"{self.name}/v{self.version}/d{difficulty}/s{seed}"

    def params_for(self, difficulty: int, seed: int) -> dict[str, Any]:
        if difficulty not in self.levels:
            raise UnknownTaskError(f"{self.name} has no difficulty level {difficulty}")
        return self.levels[difficulty].sample(seeded(self._params_seed(difficulty, seed)))

    def _params_seed(self, difficulty: int, seed: int) -> int:
        """``derive_seed(name, version, difficulty, seed, "params")``; for plain ints its
        canonical text is written here, after the family's ``["name",version,`` (kept in
        the instance's ``__dict__`` for the name and version it was made of)."""
        if type(difficulty) is not int or type(seed) is not int:
            return derive_seed(self.name, self.version, difficulty, seed, "params")
        key = (self.name, self.version)
        memo = self.__dict__.get("_seed_prefix")
        if memo is None or memo[0] != key:
            prefix = canonical_json([*key, 0])[:-2]  # '["name",version,'
            memo = self.__dict__["_seed_prefix"] = (key, prefix)
        return seed_of_canonical(f'{memo[1]}{difficulty},{seed},"params"]')

    def generate(self, params: dict[str, Any], seed: int, task_id: str | None = None) -> Task:
        """Deterministic: the same ``(params, seed)`` always gives the same task. Without
        ``task_id`` the task's id names ``params`` (:meth:`variant_id`), so resolving it
        regenerates this task whatever the seed would draw."""
        return self._generate(params, seed, task_id, False)

    def _generate(
        self, params: dict[str, Any], seed: int, task_id: str | None, drawn: bool
    ) -> Task:
        """``generate``; ``drawn`` when ``params`` are this family's own draw (``task``), so
        a truth built ``trusted`` needs no check of them; any others are checked
        (``_as_drawn``) and, unless they are as drawn, build the truth validated."""
        items = sorted(params.items())
        difficulty, prefix = self._known(params, items)
        if prefix is not None and type(seed) is int:
            r = seeded(seed_of_canonical(f"{prefix}{seed}]"))
        else:
            r = seeded(derive_seed(self.name, self.version, items, seed))
        if drawn or _as_drawn(self.levels[difficulty].knobs, params):
            prompt, truth = self.build(dict(params), r)
        else:  # values the family did not draw (a task id's): its trusted truth validated
            declared = _as_declared(self.levels[difficulty].knobs, params)
            with validating():
                prompt, truth = self.build(declared, r)
        if task_id is None:  # given params (``task`` names its draw): the id names them,
            # so it regenerates this task; no params, the plain id (a bare ``/`` won't parse)
            task_id = str(TaskId(self.name, self.version, difficulty, seed, dict(params) or None))
        task = task_of(task_id, self.name, prompt, dump_truth(truth), params, difficulty)
        vouch(task, truth)  # validated as it was built: parsing its dump again adds nothing
        return task

    def task(self, difficulty: int, seed: int) -> Task:
        return self._generate(
            self.params_for(difficulty, seed), seed, self.task_id(difficulty, seed), True
        )

    def at_version(self, version: int) -> TaskFamily[TruthT]:
        """This family as it was at ``version``; UnknownTaskError for a version never made."""
        if version == self.version:
            return self
        if version in self.older:
            return self.older[version]
        known = sorted({self.version, *self.older})
        raise UnknownTaskError(f"{self.name} has no version {version} (versions: {known})")

    def resolve(self, task_id: str) -> Task:
        tid = parse_task_id(task_id)
        if tid.family == self.name and tid.version != self.version:
            try:
                family = self.at_version(tid.version)
            except UnknownTaskError as err:
                raise UnknownTaskError(f"task id {task_id!r}: {err}") from None
            return family.resolve(task_id)
        if tid.family != self.name:
            raise UnknownTaskError(
                f"task id {task_id!r} is for {tid.family} v{tid.version}, "
                f"not {self.name} v{self.version}"
            )
        if tid.params is None:
            return self.task(tid.difficulty, tid.seed)
        try:
            level = self.difficulty(tid.params)
        except ValueError as err:
            raise UnknownTaskError(f"{task_id!r}: {err}") from err
        if level != tid.difficulty:
            raise UnknownTaskError(f"{task_id!r}: those params are difficulty {level}")
        return self.generate(dict(tid.params), tid.seed, task_id)

    def variant_id(self, params: Mapping[str, Any], seed: int) -> str:
        """The id of the task with these explicit ``params`` (they must lie in some level)."""
        return str(TaskId(self.name, self.version, self.difficulty(params), seed, dict(params)))

    def neighbors(self, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Params one knob step away that still lie in some difficulty level."""
        knobs: dict[str, Knob] = {}
        for space in self.levels.values():
            for name, knob in space.knobs.items():
                knobs.setdefault(name, knob)
        out: list[dict[str, Any]] = []
        for name in sorted(params):
            ranges = [s.knobs[name] for s in self.levels.values() if name in s.knobs]
            values = sorted({json.dumps(v) for k in ranges for v in k.neighbors(params[name])})
            for raw in values:
                candidate = {**params, name: json.loads(raw)}
                if candidate != dict(params) and any(
                    s.contains(candidate) for s in self.levels.values()
                ):
                    out.append(candidate)
        return out
