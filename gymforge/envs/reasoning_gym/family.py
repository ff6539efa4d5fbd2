"""One reasoning-gym dataset as a gymforge ``TaskFamily``.

Difficulty levels come from the dataset's own curriculum when it has one: level ``d`` is the
configuration reasoning-gym's curriculum produces with every attribute at global level
``d - 1``, in reasoning-gym's default (``INCLUSIVE``) mode: a range attribute spans
``[levels[0], levels[d]]``, so a level also holds easier items (the narrower upper bands make
countdown's own generator take seconds per item). Consecutive duplicates, and configurations
the dataset's own validation refuses, are dropped. A dataset without a curriculum has one
level, its default configuration. The top level of a multi-level dataset is held out for
evaluation.

Seeds are derived the gymforge way: ``TaskFamily.generate`` draws from
``derive_seed(family, version, params, seed)``, and the item seed handed to reasoning-gym
(a fresh one-item dataset per task) comes from that stream. reasoning-gym's own
``Random(seed + i)`` would make datasets at nearby seeds share most of their items.

The family version is derived from the installed reasoning-gym version (``0.1.25`` ->
``v125``): another reasoning-gym release may generate different items from the same seed,
so its task ids are refused with a clear error instead of silently resolving to other tasks.
"""

from __future__ import annotations

import dataclasses
import difflib
import random
from collections import OrderedDict
from collections.abc import Mapping
from importlib.metadata import version
from typing import Any

from pydantic import BaseModel, ConfigDict
from reasoning_gym.coaching.base_curriculum import DefaultCurriculumContext, RangeAttributeMode
from reasoning_gym.dataset import ProceduralDataset
from reasoning_gym.factory import CURRICULA, DATASETS

from gymforge.core.errors import UserError
from gymforge.envs.reasoning_gym.quiet import quiet
from gymforge.tasks import ChoiceKnob, ParamSpace, TaskFamily

RG_VERSION = version("reasoning-gym")

GENERATION_TRIES = 20
"""Some reasoning-gym generators give up on some seeds (countdown: "Failed to generate valid
expression"); the next item seed is drawn from the same task stream, so the retry is as
deterministic as the first try."""

ENTRY_CACHE = 4096
"""Raw reasoning-gym entries kept per family, so verifying right after ``reset`` does not
generate the item a second time."""


def package_version() -> int:
    """``MAJOR*10000 + MINOR*100 + PATCH`` of the installed reasoning-gym distribution
    (0.1.25 -> 125; its ``__version__`` attribute lags the release)."""
    parts = [int("".join(c for c in p if c.isdigit()) or 0) for p in RG_VERSION.split(".")]
    major, minor, patch = [*parts, 0, 0, 0][:3]
    return major * 10_000 + minor * 100 + patch


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data: tuples become lists, numpy scalars Python scalars,
    anything else its ``str``."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if value is None:
        return None
    if isinstance(value, bool | int | float | str):
        item = getattr(value, "item", None)  # a numpy scalar (numpy.float64 is a float)
        return item() if callable(item) else value
    if hasattr(value, "tolist"):  # numpy array or scalar
        return jsonable(value.tolist())
    return str(value)


def _config_dict(config: Any) -> dict[str, Any]:
    """The config's fields as reasoning-gym holds them (not JSON: some are objects)."""
    return {
        f.name: getattr(config, f.name)
        for f in dataclasses.fields(config)
        if f.name not in ("seed", "size")
    }


def curriculum_configs(name: str) -> list[dict[str, Any]]:
    """The configuration of every difficulty level, easiest first (see the module doc)."""
    _, config_cls = DATASETS[name]
    if name not in CURRICULA:
        return [_config_dict(config_cls())]
    curriculum = CURRICULA[name]()  # the registry stores classes
    top = max((len(a.levels) for a in curriculum.attributes.values()), default=1)
    context = DefaultCurriculumContext(mode=RangeAttributeMode.INCLUSIVE)
    configs: list[dict[str, Any]] = []
    for level in range(top):
        curriculum.set_global_level(level)
        try:
            made = curriculum.generate_configuration(context=context)
            if hasattr(made, "validate"):
                made.validate()
        except (AssertionError, ValueError, TypeError):
            continue  # its curriculum proposes a config its own validation refuses
        config = _config_dict(made)
        if not configs or jsonable(config) != jsonable(configs[-1]):
            configs.append(config)
    return configs or [_config_dict(config_cls())]


class RgTruth(BaseModel):
    """How to regenerate a reasoning-gym item (dataset, curriculum level and its config, the
    item's seed) plus its stored answer (None when the dataset stores none) and metadata."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset: str
    level: int
    item_seed: int
    config: dict[str, Any]
    answer: str | None
    metadata: dict[str, Any]


class ReasoningGymFamily(TaskFamily[RgTruth]):
    """Tasks of the reasoning-gym dataset ``dataset``; params are ``{"level": d}``."""

    def __init__(self, dataset: str) -> None:
        if dataset not in DATASETS:
            close = difflib.get_close_matches(dataset, list(DATASETS), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UserError(
                f"reasoning-gym has no dataset {dataset!r}{hint} "
                f"({len(DATASETS)} datasets: reasoning_gym.factory.DATASETS)"
            )
        fields = {f.name for f in dataclasses.fields(DATASETS[dataset][1])}
        if not {"seed", "size"} <= fields:
            raise UserError(f"reasoning-gym dataset {dataset!r} cannot be seeded per item")
        self.dataset = dataset
        self.configs = curriculum_configs(dataset)
        levels = {
            d: ParamSpace({"level": ChoiceKnob((d,))}) for d in range(1, len(self.configs) + 1)
        }
        super().__init__(f"reasoning_gym.{dataset}", package_version(), levels)
        self._entries: OrderedDict[tuple[int, int], dict[str, Any]] = OrderedDict()
        self._scorers: dict[int, ProceduralDataset] = {}

    @property
    def heldout_level(self) -> int | None:
        """The level reserved for evaluation, or None for a single-level dataset."""
        return len(self.configs) if len(self.configs) > 1 else None

    def classes(self) -> tuple[type, type]:
        """reasoning-gym's dataset class and configuration class of this dataset."""
        dataset_cls, config_cls = DATASETS[self.dataset]
        return dataset_cls, config_cls

    def make_dataset(self, level: int, item_seed: int) -> ProceduralDataset:
        dataset_cls, config_cls = DATASETS[self.dataset]
        config = config_cls(**{**self.configs[level - 1], "seed": item_seed, "size": 1})
        return dataset_cls(config=config)

    def entry(self, level: int, item_seed: int) -> dict[str, Any]:
        """reasoning-gym's raw item (exactly what its ``score_answer`` expects), cached."""
        key = (level, item_seed)
        found = self._entries.get(key)
        if found is None:
            with quiet():  # some generators print (tower_of_hanoi)
                found = self._entries[key] = self.make_dataset(level, item_seed)[0]
            while len(self._entries) > ENTRY_CACHE:
                self._entries.popitem(last=False)
        return found

    def scorer(self, level: int) -> ProceduralDataset:
        """The dataset instance whose ``score_answer`` judges this level's items (one per
        level: scoring reads the entry, not the instance's seed)."""
        found = self._scorers.get(level)
        if found is None:
            with quiet():
                found = self._scorers[level] = self.make_dataset(level, 0)
        return found

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, RgTruth]:
        level = int(params["level"])
        for _ in range(GENERATION_TRIES):
            item_seed = r.randrange(2**31)
            try:
                entry = self.entry(level, item_seed)
                break
            except (ValueError, RuntimeError, AssertionError):  # its generator gave up
                continue
        else:
            raise UserError(
                f"reasoning-gym's {self.dataset} generator failed {GENERATION_TRIES} times at "
                f"level {level} ({jsonable(self.configs[level - 1])})"
            )
        answer = entry.get("answer")
        truth = RgTruth(
            dataset=self.dataset,
            level=level,
            item_seed=item_seed,
            config=jsonable(self.configs[level - 1]),
            answer=None if answer is None else str(answer),
            metadata=jsonable(entry.get("metadata", {})),
        )
        truth.model_dump_json()  # fail loudly here, not in a trajectory writer
        return str(entry["question"]), truth
