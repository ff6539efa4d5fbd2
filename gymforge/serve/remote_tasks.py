"""A ``TaskSource`` whose families live on the server.

Families are code (generators, parameter constraints, held-out predicates) and cannot
cross the wire, so the client gets proxies that answer from the server's real objects over
``POST /tasks/{op}``: ``sample`` and ``resolve`` (tasks arrive with their split stamped
by the server and their hidden truth replaced by its digest), ``Split.is_heldout`` and each
named region, and the family methods that curricula, mixtures and hard-negative pools call
(``params_for``, ``difficulty``, ``neighbors``, ``variant_id``, level ``contains``). Every
training path registered in ``TRAINING_PATHS`` therefore runs unchanged against a remote
source, and the held-out rules it is checked against are the server's own.

Answers are pure functions of their arguments, so they are cached per source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gymforge.core.errors import UnknownTaskError, UserError
from gymforge.core.seeding import canonical_json
from gymforge.core.types import Task
from gymforge.serve.http import HttpService
from gymforge.tasks.family import ChoiceKnob, IntKnob
from gymforge.tasks.source import SplitName, TaskSource
from gymforge.tasks.split import Split

CACHE_LIMIT = 200_000
PREFETCH_LIMIT = 2_000
"""Samples up to this size come back with their resolved tasks (one round trip, not n+1)."""


def _memo(cache: dict[Any, Any], key: Any, compute: Any) -> Any:
    if key in cache:
        return cache[key]
    if len(cache) >= CACHE_LIMIT:
        cache.clear()
    value = cache[key] = compute()
    return value


def _knob(data: dict[str, Any]) -> Any:
    if data.get("kind") == "int":
        return IntKnob(data["lo"], data["hi"])
    if data.get("kind") == "choice":
        return ChoiceKnob(tuple(data["values"]))
    return data


class RemoteParamSpace:
    """One difficulty level: its knobs (for display and ranges) and a remote ``contains``."""

    def __init__(self, family: RemoteFamily, level: int, data: dict[str, Any]) -> None:
        self.family = family
        self.level = level
        self.knobs = {k: _knob(v) for k, v in data.get("knobs", {}).items()}
        self.constrained = bool(data.get("constrained"))

    def __len__(self) -> int:
        return len(self.knobs)

    def contains(self, params: Mapping[str, Any]) -> bool:
        return bool(self.family._call("contains", difficulty=self.level, params=dict(params)))


class RemoteFamily:
    """A server-side ``TaskFamily`` seen through its name, version, levels and methods."""

    def __init__(self, source: RemoteTaskSource, data: dict[str, Any]) -> None:
        self.source = source
        self.name: str = data["name"]
        self.version: int = data["version"]
        self.levels: dict[int, RemoteParamSpace] = {
            int(level): RemoteParamSpace(self, int(level), space)
            for level, space in data.get("levels", {}).items()
        }

    def __repr__(self) -> str:
        return f"RemoteFamily({self.name!r}, v{self.version}, levels={sorted(self.levels)})"

    def _call(self, method: str, **args: Any) -> Any:
        key = (self.name, method, canonical_json(args))
        body = {"family": self.name, "method": method, **args}
        service = self.source.service
        assert service is not None
        return _memo(self.source._cache, key, lambda: service.post("/tasks/family", body))["result"]

    def task_id(self, difficulty: int, seed: int) -> str:
        return f"{self.name}/v{self.version}/d{difficulty}/s{seed}"

    def params_for(self, difficulty: int, seed: int) -> dict[str, Any]:
        if difficulty not in self.levels:
            raise UnknownTaskError(f"{self.name} has no difficulty level {difficulty}")
        return dict(self._call("params_for", difficulty=difficulty, seed=seed))

    def difficulty(self, params: Mapping[str, Any]) -> int:
        return int(self._call("difficulty", params=dict(params)))

    def neighbors(self, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [dict(p) for p in self._call("neighbors", params=dict(params))]

    def variant_id(self, params: Mapping[str, Any], seed: int) -> str:
        return str(self._call("variant_id", params=dict(params), seed=seed))

    def resolve(self, task_id: str) -> Task:
        return self.source.resolve(task_id)

    def task(self, difficulty: int, seed: int) -> Task:
        return self.resolve(self.task_id(difficulty, seed))

    def generate(self, *args: Any, **kwargs: Any) -> Task:
        raise NotImplementedError("tasks are generated on the server; use resolve(task_id)")


class RemoteRegion:
    """A named held-out region, evaluated by the server's predicate."""

    def __init__(self, split: RemoteSplit, family: str, name: str) -> None:
        self.split, self.family, self.name = split, family, name

    def __call__(self, params: Mapping[str, Any]) -> bool:
        return self.split._heldout(self.family, dict(params), self.name)


@dataclass(frozen=True)
class RemoteSplit(Split):
    """The server's split: family names and region names here, predicates over there."""

    service: HttpService | None = field(default=None, compare=False, repr=False)
    _cache: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def is_heldout(self, family: str, params: Mapping[str, Any]) -> bool:
        if family in self.families:
            return True
        return self._heldout(family, dict(params), None)

    def _heldout(self, family: str, params: dict[str, Any], region: str | None) -> bool:
        assert self.service is not None
        body = {"family": family, "params": params, "region": region}
        key = (family, canonical_json(params), region)
        return bool(
            _memo(self._cache, key, lambda: self.service.post("/tasks/heldout", body))["heldout"]
        )


@dataclass(frozen=True)
class RemoteDataset:
    """A dataset loaded on the server: its name, hash pin and size."""

    name: str
    pin: str
    size: int

    def __len__(self) -> int:
        return self.size


@dataclass(frozen=True)
class RemoteTaskSource(TaskSource):
    """``TaskSource`` over HTTP; see the module docstring."""

    service: HttpService | None = field(default=None, compare=False, repr=False)
    _cache: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_metadata(cls, data: dict[str, Any], service: HttpService) -> RemoteTaskSource:
        meta = data["split"]
        split = RemoteSplit(frozenset(meta["families"]), {}, service)
        regions = {
            fam: {name: RemoteRegion(split, fam, name) for name in names}
            for fam, names in meta["regions"].items()
        }
        object.__setattr__(split, "regions", regions)
        datasets = tuple(RemoteDataset(d["name"], d["pin"], d["size"]) for d in data["datasets"])
        source = cls({}, split, datasets, service)  # type: ignore[arg-type]
        families = {name: RemoteFamily(source, fam) for name, fam in data["families"].items()}
        object.__setattr__(source, "families", families)
        return source

    def with_dataset(self, dataset: Any) -> TaskSource:
        raise UserError("datasets of a served environment are loaded on the server")

    def resolve(self, task_id: str) -> Task:
        assert self.service is not None
        service = self.service
        data = _memo(
            self._cache,
            ("resolve", task_id),
            lambda: service.post("/tasks/resolve", {"task_id": task_id}),
        )
        return Task.model_validate(data["task"])

    def sample(
        self,
        n: int,
        seed: int,
        split: SplitName = "train",
        difficulties: Iterable[int] | None = None,
        families: Iterable[str] | None = None,
    ) -> list[str]:
        assert self.service is not None
        body = {
            "n": n,
            "seed": seed,
            "split": split,
            "difficulties": None if difficulties is None else sorted(set(difficulties)),
            "families": None if families is None else sorted(set(families)),
        }
        key = ("sample", canonical_json(body))
        if key in self._cache:
            return list(self._cache[key])
        reply = self.service.post("/tasks/sample", {**body, "with_tasks": n <= PREFETCH_LIMIT})
        for task_id, view in zip(reply["task_ids"], reply.get("tasks") or (), strict=False):
            _memo(self._cache, ("resolve", task_id), lambda view=view: {"task": view})
        ids = _memo(self._cache, key, lambda: list(reply["task_ids"]))
        return list(ids)
